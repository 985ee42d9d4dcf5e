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

# A reset clears the counters.
$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()');
is($node->safe_psql('postgres', 'SELECT profile_evicted + buckets_evicted + queries_evicted FROM pg_stat_waits_status'),
	0, 'reset clears the eviction counters');

$node->stop;
done_testing();
