# PostgreSQL's own regression suite (installcheck-parallel of the server's
# build tree) against a server that preloads pg_stat_waits with exact timing
# on and track = 'all': the suite must pass unchanged, and afterwards what
# pg_stat_waits recorded must add up:
# - no statement's CPU row was clamped: its waits never exceed its elapsed
#   time (the backend charges each segment its elapsed time less its waits,
#   0 where waits were larger);
# - every queryid with a completed execution is one pg_stat_statements knows.
# Long mode only (./run test --long, CI), and only where the server's build
# tree is at hand (16 to 19, built by tools/pg/build_postgres.sh).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

plan skip_all => "PostgreSQL's regression suite runs only with PSW_LONG=1" unless psw_long();
my $dir = $ENV{PSW_PG_REGRESS_DIR} // '';
plan skip_all => "no built PostgreSQL regression suite (PSW_PG_REGRESS_DIR) for this server"
  unless $dir ne '' && -x "$dir/pg_regress" && -f "$dir/regress.so" && -f "$dir/parallel_schedule";

my $node = psw_node('pgregress',
	conf => [
		'pg_stat_waits.timing = on', "pg_stat_waits.track = 'all'", 'compute_query_id = regress',
		'pg_stat_statements.max = 100000', 'pg_stat_waits.profile_max = 100000',
		'max_prepared_transactions = 2', 'max_connections = 100'
	],
	extensions => 1);
my $version = $node->safe_psql('postgres', 'SHOW server_version_num');
my $tree_version = `"$dir/pg_regress" --version`;
plan skip_all => "the regression suite in $dir ($tree_version) is not this server's ($version)"
  unless $tree_version =~ /\b(\d+)(?:\.|devel|alpha|beta|rc)/ && $1 == int($version / 10000);    # 18.6, 19beta3

my $out = PostgreSQL::Test::Utils::tempdir;
my ($stdout, $stderr) = ('', '');
my $ok = IPC::Run::run(
	[
		"$dir/pg_regress", "--inputdir=$dir", "--outputdir=$out", "--dlpath=$dir",
		'--max-concurrent-tests=20', "--schedule=$dir/parallel_schedule",
		'--host=' . $node->host, '--port=' . $node->port, '--bindir='
	],
	'>', \$stdout, '2>', \$stderr);
my ($failed) = $stdout =~ /(\d+) of \d+ tests failed/;
my ($passed) = $stdout =~ /All (\d+) tests passed/;
note "pg_regress: " . ($passed ? "all $passed tests passed" : ($failed // '?') . ' tests failed');
ok($ok, "PostgreSQL's regression suite passes with pg_stat_waits preloaded (timing on, track = 'all')")
  or diag(substr((-f "$out/regression.diffs" ? slurp_file("$out/regression.diffs") : $stdout . $stderr), 0, 4000));

# What pg_stat_waits recorded of it, in the regression database.
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_waits_queries');
cmp_ok($rows, '>', 1000, "pg_stat_waits_queries has rows of the suite ($rows)");
my $clamped = $node->safe_psql('postgres', q{
	WITH s AS (
	  SELECT queryid, datid, usesysid, backend_type,
	         sum(total_time) FILTER (WHERE wait_event_type <> 'CPU') AS waits,
	         sum(total_time) FILTER (WHERE wait_event_type = 'CPU') AS cpu
	    FROM pg_stat_waits_queries GROUP BY 1, 2, 3, 4)
	SELECT count(*) || ' of ' || (SELECT count(*) FROM s WHERE cpu IS NOT NULL)
	  FROM s WHERE cpu = 0 AND waits > 0.01});
like($clamped, qr/^0 of [1-9]/, "waits + CPU = elapsed: no statement's waits exceed its elapsed time ($clamped clamped)");
# Queryids pg_stat_statements does not know. It records a statement when an
# execution completes, under the id pg_stat_waits uses too (EXECUTE as its
# prepared statement, PREPARE under none): every id with a completed
# execution (a counted call) must be there. A statement whose every
# execution failed (the suite runs thousands on purpose) is never in
# pg_stat_statements; pg_stat_waits keeps its waits with calls = 0, and the
# count of those is noted.
my $ids = $node->safe_psql('postgres', q{
	CREATE TEMP TABLE ids AS
	  SELECT queryid, sum(calls) FILTER (WHERE wait_event_type = 'CPU') AS completed
	    FROM pg_stat_waits_queries WHERE queryid IS NOT NULL AND queryid <> 0 GROUP BY 1;
	SELECT count(*) FILTER (WHERE coalesce(completed, 0) > 0) || ' ' || count(*) FROM ids;
	SELECT count(*) FILTER (WHERE coalesce(completed, 0) > 0) || ' ' || count(*)
	  FROM ids WHERE NOT EXISTS (SELECT FROM pg_stat_statements s WHERE s.queryid = ids.queryid)});
my ($all_line, $missing_line) = split /\n/, $ids;
my ($completed_ids, $all_ids) = split / /, $all_line;
my ($missing_completed, $missing_all) = split / /, $missing_line;
cmp_ok($completed_ids, '>', 1000, "ids with a completed execution ($completed_ids of $all_ids)");
is($missing_completed, 0,
	"every queryid with a completed execution is in pg_stat_statements ($missing_completed of $completed_ids missing)");
note "ids whose every execution failed (never in pg_stat_statements): " . ($missing_all - $missing_completed);
# (pg_stat_statements.max is large enough that it evicted nothing, so a
# missing id is not an evicted one.)
is($node->safe_psql('postgres', 'SELECT dealloc FROM pg_stat_statements_info'), 0,
	'pg_stat_statements evicted nothing');
my $missing_profile = $node->safe_psql('postgres', q{
	WITH ids AS (SELECT DISTINCT queryid FROM pg_stat_waits_profile WHERE queryid IS NOT NULL AND queryid <> 0
	               AND queryid <> (SELECT query_id FROM pg_stat_activity WHERE pid = pg_backend_pid()))
	SELECT count(*) || ' of ' || (SELECT count(*) FROM ids)
	  FROM ids WHERE NOT EXISTS (SELECT FROM pg_stat_statements s WHERE s.queryid = ids.queryid)});
note "sampled queryids unknown to pg_stat_statements: $missing_profile";
# Where those come from, by what exact timing knows of the same id: a
# statement whose every execution failed, one with a completed execution
# (none, by the check above), or one exact timing never saw. (Both counts
# leave out the counting statement itself: sampled while it runs, it is
# neither in pg_stat_statements nor timed yet.)
note "of those, by exact timing: " . $node->safe_psql('postgres', q{
	WITH p AS (SELECT DISTINCT queryid FROM pg_stat_waits_profile WHERE queryid IS NOT NULL AND queryid <> 0
	             AND queryid <> (SELECT query_id FROM pg_stat_activity WHERE pid = pg_backend_pid())),
	     ids AS (SELECT queryid, sum(calls) FILTER (WHERE wait_event_type = 'CPU') AS completed
	               FROM pg_stat_waits_queries WHERE queryid IS NOT NULL AND queryid <> 0 GROUP BY 1),
	     u AS (SELECT p.queryid, ids.completed, ids.queryid IS NOT NULL AS timed FROM p LEFT JOIN ids USING (queryid)
	            WHERE NOT EXISTS (SELECT FROM pg_stat_statements s WHERE s.queryid = p.queryid))
	SELECT count(*) FILTER (WHERE timed AND coalesce(completed, 0) = 0) || ' only failed, '
	    || count(*) FILTER (WHERE coalesce(completed, 0) > 0) || ' completed, '
	    || count(*) FILTER (WHERE NOT timed) || ' not timed'
	    || coalesce(' (' || (SELECT string_agg(DISTINCT pr.backend_type || ' ' || pr.wait_event_type || '/' || pr.wait_event, ', ')
	                           FROM pg_stat_waits_profile pr JOIN u USING (queryid) WHERE NOT u.timed) || ')', '')
	  FROM u});

$node->stop;
done_testing();
