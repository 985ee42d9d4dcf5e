# The wait-event catalog on every release: what pg_stat_waits_wait_events()
# lists is what the server names, every listed row (and every 'other' row)
# goes through pg_stat_waits_histogram() as a plain user without an error
# or a crash (17+ leaves unused built-in LWLock ids without a name), every
# SQL function and view answers a plain user, and the sampler's own sleep
# stays out of the exact-timing tables.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('catalog',
	conf => [ "pg_stat_waits.timing = on", "pg_stat_waits.sample_period = 10" ]);
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_waits;
CREATE EXTENSION pg_stat_statements;
CREATE ROLE plain LOGIN;
});
my $version = $node->safe_psql('postgres', 'SHOW server_version_num');

# Some waits of several classes, so the rows read below hold data.
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g;
CHECKPOINT;
SELECT pg_sleep(0.3);
SELECT count(*) FROM t;
});

# Every listed event has a real, unique name.
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_waits_wait_events()
 WHERE wait_event IS NULL OR wait_event IN ('', '???', 'unknown wait event', 'other')
    OR wait_event_type IS NULL OR wait_event_type = '???'}), '0', 'every listed event is named');
is($node->safe_psql('postgres', q{
SELECT count(*) - count(DISTINCT (wait_event_type, wait_event)) FROM pg_stat_waits_wait_events()}),
   '0', 'names are unique');
# Events every release has under the same name, by their real names (with
# 15's class sizes, 17/18's Activity/WalWriterMain landed in 'other').
is($node->safe_psql('postgres', q{
SELECT string_agg(wait_event_type || '/' || wait_event, ' ' ORDER BY wait_event_type, wait_event) FROM pg_stat_waits_wait_events()
 WHERE (wait_event_type, wait_event) IN (('IO', 'DataFileRead'), ('Activity', 'WalWriterMain'),
       ('LWLock', 'pg_stat_statements'), ('Lock', 'transactionid'), ('Unreported', 'pread'))}),
   'Activity/WalWriterMain IO/DataFileRead LWLock/pg_stat_statements Lock/transactionid Unreported/pread',
   'well-known events are listed under their own names');

# 17+: the server's own list (pg_get_wait_events) is contained in ours.
SKIP: {
    skip 'pg_get_wait_events() is 17+', 2 if $version < 170000;
    is($node->safe_psql('postgres', q{
SELECT string_agg(type || '/' || name, ', ') FROM
  (SELECT type, name FROM pg_get_wait_events()
   EXCEPT SELECT wait_event_type, wait_event FROM pg_stat_waits_wait_events()) missing}),
       '', 'every event the server names is listed');
    # (Polled: between its sleeps the sampler works, with no wait event.)
    ok($node->poll_query_until('postgres', q{
SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity
 WHERE backend_type = 'pg_stat_waits sampler'}, 'Extension/PgStatWaitsSampler'),
       'the sampler sleeps under its own wait event');
}

# Every row through the histogram, as a plain user: listed events, each
# class's 'other' row, and on 17+ the built-in LWLock ids without a name.
my ($rows, $bad) = split /\|/, $node->safe_psql('postgres', q{
SELECT count(*), count(*) FILTER (WHERE h.n <> 32)
  FROM (SELECT wait_event_type, wait_event FROM pg_stat_waits_wait_events()
        UNION SELECT DISTINCT wait_event_type, 'other' FROM pg_stat_waits_wait_events()
         WHERE wait_event_type NOT IN ('CPU')) w
 CROSS JOIN LATERAL (SELECT count(*) AS n FROM pg_stat_waits_histogram(w.wait_event_type, w.wait_event)) h},
    extra_params => [ '-U', 'plain' ]);
cmp_ok($rows, '>', 250, "histogram read for $rows events");
is($bad, '0', 'each histogram has its 32 buckets');

# Every view and SQL function answers a plain user with every row.
for my $sql (
    'SELECT count(*) >= 0 FROM pg_stat_waits',
    'SELECT count(*) >= 0 FROM pg_stat_waits_queries',
    'SELECT count(*) >= 0 FROM pg_stat_waits_activity',
    'SELECT count(*) >= 0 FROM pg_stat_waits_history',
    'SELECT count(*) >= 0 FROM pg_stat_waits_profile',
    'SELECT count(*) >= 0 FROM pg_stat_waits_status',
    q{SELECT count(*) >= 0 FROM pg_stat_waits_top('1 hour', 1000)},
    q{SELECT count(*) >= 0 FROM pg_stat_waits_timeline('1 hour', '1 min')})
{
    my ($ret, $out, $err) = $node->psql('postgres', $sql, extra_params => [ '-U', 'plain' ]);
    is($ret, 0, "plain user: $sql") or diag($err);
}
# Names shown by the exact view are all histogram keys.
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_waits p
 WHERE NOT EXISTS (SELECT 1 FROM pg_stat_waits_histogram(p.wait_event_type, p.wait_event) h WHERE h.count > 0)},
    extra_params => [ '-U', 'plain' ]), '0', 'every exact row has a non-empty histogram');

# The sampler's own sleep (timing on in the configuration) is not in the
# exact tables; nothing else in this test waits under Extension.
$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()');
sleep 2;
is($node->safe_psql('postgres', q{
SELECT coalesce(sum(calls), 0) FROM pg_stat_waits WHERE wait_event_type = 'Extension'}),
   '0', 'the sampler\'s waits are not timed');
ok($node->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_waits WHERE wait_event_type = 'Activity'}) > 0,
   'other background processes are timed');

# The server still runs (a crash would have restarted every session).
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'checkpointer'}),
   '1', 'no crash');
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'no backend crashed');

$node->stop;
done_testing();
