# pgbench TPC-B with exact timing on, in the simple and the extended
# (prepared) protocol: every event the server names keeps its own row (no
# 'other' row in any view), and every non-zero query id in any view is one
# pg_stat_statements shows, utility statements (BEGIN, END) included. The
# prepared END reaches the hooks with its id zeroed by pg_stat_statements:
# its id is recomputed as the release's parse analysis computes it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('pgbench_ids',
	conf => [ "pg_stat_waits.timing = on", "pg_stat_waits.sample_period = 10", "pg_stat_statements.track_utility = on" ], extensions => 1);
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', 'postgres' ], 'pgbench -i');

for my $mode ('simple', 'prepared')
{
    $node->safe_psql('postgres', 'SELECT pg_stat_statements_reset(); SELECT pg_stat_waits_reset();');
    $node->command_ok([ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '5', '-M', $mode, 'postgres' ],
        "pgbench -M $mode");
    # Let every process flush (at most a second) and the sampler tick.
    sleep 2;

    # 'other' rows stand for ids the catalog has no row for.
    is($node->safe_psql('postgres', q{
SELECT string_agg(DISTINCT wait_event_type || '/' || wait_event, ', ') FROM (
  SELECT wait_event_type, wait_event FROM pg_stat_waits
  UNION ALL SELECT wait_event_type, wait_event FROM pg_stat_waits_queries
  UNION ALL SELECT wait_event_type, wait_event FROM pg_stat_waits_profile) r
 WHERE wait_event = 'other' OR wait_event_type = 'Other'}), '', "$mode: no 'other' row");

    # Snapshot the ids first, so statements still running while they are
    # read are finished (and stored by pg_stat_statements) when compared.
    $node->safe_psql('postgres', q{
DROP TABLE IF EXISTS seen_ids;
CREATE TABLE seen_ids AS
SELECT DISTINCT id FROM (
  SELECT queryid AS id FROM pg_stat_waits_queries
  UNION ALL SELECT queryid FROM pg_stat_waits_profile
  UNION ALL SELECT queryid FROM pg_stat_waits_history
  UNION ALL SELECT top_queryid FROM pg_stat_waits_history) ids
 WHERE id IS NOT NULL AND id <> 0;});
    cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM seen_ids'), '>=', 5, "$mode: ids seen");
    is($node->safe_psql('postgres', q{
SELECT count(*) FROM seen_ids WHERE id NOT IN (SELECT queryid FROM pg_stat_statements)}),
       '0', "$mode: every query id is one pg_stat_statements knows");
    # BEGIN and END in particular, with their time and calls.
    is($node->safe_psql('postgres', q{
SELECT string_agg(s.query, ', ' ORDER BY s.query) FROM pg_stat_statements s
 WHERE s.query IN ('BEGIN', 'END')
   AND EXISTS (SELECT 1 FROM pg_stat_waits_queries q WHERE q.queryid = s.queryid AND q.calls > 0)}),
       'BEGIN, END', "$mode: BEGIN and END have per-query rows under pg_stat_statements' ids");
}

$node->stop;
done_testing();
