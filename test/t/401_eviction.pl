# Tables that never go blind: with a small profile_max, a workload of five
# times profile_max distinct statements, run one after another, still shows
# the newest ones in the sampled profile and in the exact per-query table,
# and pg_stat_waits_status counts what was evicted to make room.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use Time::HiRes;

my $profile_max = 100;
my $nqueries = 5 * $profile_max;

my $node = psw_node('eviction',
	conf => [ "pg_stat_waits.profile_max = $profile_max", "pg_stat_waits.sample_period = 5", "pg_stat_statements.max = 1000" ], extensions => 1);

# One table per statement: each SELECT below has its own queryid.
$node->safe_psql('postgres', qq{
DO \$\$ BEGIN
  FOR i IN 1..$nqueries LOOP
    EXECUTE format('CREATE TABLE t%s (x int)', i);
    EXECUTE format('INSERT INTO t%s VALUES (1)', i);
  END LOOP;
END \$\$;
});
$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset()');

# The statements, oldest first, each sleeping 30 ms (several samples) with
# exact timing on.
my $script = "SET pg_stat_waits.timing = on;\n";
$script .= "SELECT pg_sleep(0.03) FROM t$_;\n" for 1 .. $nqueries;
$node->safe_psql('postgres', $script);
sleep 1;  # a few more sampler ticks: eviction steps and the last flushes

my ($entries, $evicted, $dropped, $q_evicted, $q_dropped) = split /\|/, $node->safe_psql('postgres',
	'SELECT profile_entries, profile_evicted, profile_dropped, queries_evicted, queries_dropped FROM pg_stat_waits_status');
note "profile: $entries entries, $evicted evicted, $dropped samples dropped; queries: $q_evicted evicted, $q_dropped dropped";
cmp_ok($entries, '<=', $profile_max, 'the profile stays within profile_max');
cmp_ok($evicted, '>=', $nqueries - $profile_max, 'profile_evicted counts the keys let go (at least the overflow)');
cmp_ok($q_evicted, '>', 0, 'queries_evicted counts per-query rows let go');

# The ten newest statements: present in the profile with their samples and
# in the exact per-query table with their sleep, as a client backend's
# (pg_sleep may wait in more than one call: its latch timeout is in whole ms).
my $newest = $nqueries - 9;
my $pattern = "FROM t([0-9]+)\$";
my $found_profile = $node->safe_psql('postgres', qq{
SELECT count(DISTINCT s.queryid) FROM pg_stat_statements s
  JOIN pg_stat_waits_profile p USING (queryid)
 WHERE substring(s.query from '$pattern')::int >= $newest AND p.wait_event = 'PgSleep' AND p.samples > 0});
is($found_profile, 10, 'the ten newest statements are in the sampled profile');

my $found_exact = $node->safe_psql('postgres', qq{
SELECT count(DISTINCT s.queryid) FROM pg_stat_statements s
  JOIN pg_stat_waits_queries q USING (queryid)
 WHERE substring(s.query from '$pattern')::int >= $newest AND q.wait_event = 'PgSleep'
   AND q.calls >= 1 AND q.total_time >= 25 AND q.backend_type = 'client backend'});
is($found_exact, 10, 'the ten newest statements are in the exact per-query table, with their sleep')
  or diag($node->safe_psql('postgres', qq{
SELECT s.query, q.wait_event, q.calls, q.total_time, q.backend_type FROM pg_stat_statements s
  LEFT JOIN pg_stat_waits_queries q USING (queryid)
 WHERE substring(s.query from '$pattern')::int >= $newest ORDER BY 1, 2}));

# A statement's CPU row holds its CPU time, computed by the backend that ran
# it, so it stays true when eviction lets go of the same statement's wait
# rows (or of an earlier CPU row of it): every sleeping statement's CPU row
# is its small CPU time, never the 30 ms sleep (a CPU row holding elapsed
# time whose sleep row was evicted) and never 0 (waits subtracted that were
# not this row's).
my $cpu_rows = $node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE q.total_time <= 0 OR q.total_time / q.calls >= 20) || ' of ' || count(*)
  FROM pg_stat_statements s JOIN pg_stat_waits_queries q USING (queryid)
 WHERE s.query ~ '$pattern' AND q.wait_event_type = 'CPU' AND q.calls > 0});
like($cpu_rows, qr/^0 of [1-9]/, "CPU rows stay their statements' CPU time through eviction ($cpu_rows wrong)")
  or diag($node->safe_psql('postgres', qq{
SELECT s.query, q.wait_event, q.calls, q.total_time FROM pg_stat_statements s
  JOIN pg_stat_waits_queries q USING (queryid)
 WHERE s.query ~ '$pattern' AND queryid IN (SELECT queryid FROM pg_stat_waits_queries
   WHERE wait_event_type = 'CPU' AND (total_time <= 0 OR total_time / calls >= 20)) ORDER BY 1, 2 LIMIT 40}));

# And most of the oldest ones made room.
my $oldest_left = $node->safe_psql('postgres', qq{
SELECT count(DISTINCT s.queryid) FROM pg_stat_statements s
  JOIN pg_stat_waits_profile p USING (queryid)
 WHERE substring(s.query from '$pattern')::int <= 100});
cmp_ok($oldest_left, '<', 50, 'most of the 100 oldest statements were evicted from the profile');

# The exact event totals are per backend type: the sleeps are a client
# backend's, and the histogram still answers for the event as a whole.
my $sleep_calls = $node->safe_psql('postgres',
	"SELECT sum(calls) FROM pg_stat_waits WHERE wait_event = 'PgSleep' AND backend_type = 'client backend'");
cmp_ok($sleep_calls, '>=', $nqueries, 'pg_stat_waits shows the sleeps under backend_type client backend');
my $hist = $node->safe_psql('postgres', "SELECT sum(count) FROM pg_stat_waits_histogram('Timeout', 'PgSleep')");
is($hist, $node->safe_psql('postgres', "SELECT sum(calls) FROM pg_stat_waits WHERE wait_event = 'PgSleep'"),
	'pg_stat_waits_histogram sums every backend type');

# A reset while a statement runs clears the waits it has flushed so far
# (once a second); its CPU row, written when it ends, is still its CPU time
# alone and not its elapsed time less the waits that are left.
my $s = psw_session($node, 'SET pg_stat_waits.timing = on');
send_sql($s, 'SELECT count(pg_sleep(0.1)) AS reset_midway FROM generate_series(1, 25)');
Time::HiRes::sleep(1.6);
$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()');
my ($out, $err) = finish_sql($s);
is($err, '', 'the statement reset midway ran to its end');
$s->quit;
my ($cpu_ms, $sleep_ms) = split /\|/, $node->safe_psql('postgres', q{
SELECT sum(q.total_time) FILTER (WHERE q.wait_event_type = 'CPU'),
       sum(q.total_time) FILTER (WHERE q.wait_event = 'PgSleep')
  FROM pg_stat_statements s JOIN pg_stat_waits_queries q USING (queryid)
 WHERE s.query LIKE '%reset_midway%' AND q.backend_type = 'client backend'});
note "after a reset midway: CPU $cpu_ms ms, PgSleep $sleep_ms ms";
cmp_ok($sleep_ms, '<', 2300, 'the reset cleared the sleeps flushed before it');
cmp_ok($cpu_ms, '<', 300, 'the CPU row is the CPU time, not elapsed less the waits left after the reset');

# A reset clears the counters.
$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()');
is($node->safe_psql('postgres', 'SELECT profile_evicted + buckets_evicted + queries_evicted FROM pg_stat_waits_status'),
	0, 'reset clears the eviction counters');

$node->stop;
done_testing();
