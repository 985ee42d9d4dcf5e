# Slow executions (pg_stat_waits_executions): a run blocked on a row lock
# and then sleeping is kept once, with its elapsed time, its lock and sleep
# waits timed exactly, its CPU as the rest and the session that blocked it;
# runs under the threshold add nothing; other users' runs hide text and
# queryid; the text is cut like pg_stat_activity's; reset clears the view.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Utils;
use PswTest;
use Test::More;
use Time::HiRes qw(time usleep);

# track_activity_query_size at its minimum: the kept text is cut to it.
my $node = psw_node('executions', conf => ['track_activity_query_size = 100'], extensions => 1);
my $admin = psw_session($node);
sql($admin, 'CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)');
# An UPDATE of t makes its transaction's COMMIT take 0.3 s (a deferred
# trigger sleeps), its row locks still held.
sql($admin,
	"CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END';
	 CREATE CONSTRAINT TRIGGER slow_commit AFTER UPDATE ON t DEFERRABLE INITIALLY DEFERRED
	   FOR EACH ROW EXECUTE FUNCTION slow_commit()");

is(sql($admin, 'SHOW pg_stat_waits.capture_min_duration'), '1s', 'capture_min_duration defaults to 1 s');

# Rows of the view for one pid.
sub runs_of
{
	my ($pid) = @_;
	return sql($admin, "SELECT count(*) FROM pg_stat_waits_executions WHERE pid = $pid");
}

# ---- a run blocked 2 s on a row lock, then sleeping 0.5 s -------------------

# The UPDATE is the holder's last statement: its id is the holder's while it
# sits idle in the transaction.
my $holder = psw_session($node);
my $holder_pid = backend_pid($holder);
sql($holder, 'BEGIN');
sql($holder, 'UPDATE t SET v = v + 1 WHERE id = 1');
my $holder_qid = sql($admin,
	"SELECT queryid FROM pg_stat_statements WHERE query = 'UPDATE t SET v = v + \$1 WHERE id = \$2'");
like($holder_qid, qr/^-?\d+$/, 'the holder\'s UPDATE has a queryid');

# This session also writes its slow runs to the server log (capture_log).
my $log_start = -s $node->logfile;
my $blocked = psw_session($node, 'SET pg_stat_waits.timing = on; SET pg_stat_waits.capture_log = on');
my $bpid = backend_pid($blocked);
my $query = 'SELECT pg_sleep(0.5) FROM (SELECT id FROM t WHERE id = 1 FOR UPDATE) s';
send_sql($blocked, $query);
# Server clock readings (epoch seconds) that bracket the truth: the wait is
# seen after it began; the lock is released between the readings around
# the holder's COMMIT; the run is over when its result has come back.
my $now = "SELECT extract(epoch FROM clock_timestamp())";
my $seen;
ok( wait_until(
		sub {
			($seen) = split /\|/,
			  sql($admin, "$now, wait_event_type FROM pg_stat_activity WHERE pid = $bpid AND wait_event_type = 'Lock'");
			return defined $seen && $seen ne '';
		}),
	'the statement waits for the row lock');
# The holder stays idle in its transaction (its UPDATE's queryid is what
# the sampler records for it) for 2 s, then commits; the lock is released
# 0.3 s into the COMMIT.
usleep(2_000_000);
my $release_lo = sql($admin, $now);
sql($holder, 'COMMIT');
my $release_hi = sql($admin, $now);
my (undef, $err) = finish_sql($blocked);
my $done = sql($admin, $now);
is($err, '', 'the blocked statement completed');

is(runs_of($bpid), 1, 'the run appears once');
my ($started, $elapsed, $cpu, $lock_ms, $sleep_ms, $all_waits, $qid, $text) = split /\|/, sql(
	$admin, "SELECT extract(epoch FROM started), elapsed, cpu,
	    (SELECT coalesce(sum((w->>'time_ms')::float8), 0) FROM jsonb_array_elements(waits) w
	      WHERE w->>'wait_event_type' = 'Lock'),
	    (SELECT coalesce(sum((w->>'time_ms')::float8), 0) FROM jsonb_array_elements(waits) w
	      WHERE w->>'wait_event' = 'PgSleep'),
	    (SELECT coalesce(sum((w->>'time_ms')::float8), 0) FROM jsonb_array_elements(waits) w),
	    queryid, query
	  FROM pg_stat_waits_executions WHERE pid = $bpid");
# ms between two readings.
sub ms { return ($_[1] - $_[0]) * 1000; }
# The truth, bracketed: the lock wait lasted at least from when it was seen
# to the last reading before the release, at most from the statement's
# start to the first reading after it; the sleep at least 0.5 s, at most
# from the release to the end; the run from its start to its end. On a
# quiet machine each bracket is a few ms wide; 3% is allowed on either side.
my ($lock_lo, $lock_hi) = (ms($seen, $release_lo), ms($started, $release_hi));
cmp_ok($lock_lo, '>', 1990, "the lock was held about 2 s ($lock_lo .. $lock_hi ms)");
cmp_ok($lock_ms, '>=', 0.97 * $lock_lo, "Lock wait $lock_ms ms >= 97% of $lock_lo ms");
cmp_ok($lock_ms, '<=', 1.03 * $lock_hi, "Lock wait $lock_ms ms <= 103% of $lock_hi ms");
my $sleep_hi = ms($release_lo, $done);
cmp_ok($sleep_ms, '>=', 0.97 * 500, "PgSleep $sleep_ms ms >= 97% of 500 ms");
cmp_ok($sleep_ms, '<=', 1.03 * $sleep_hi, "PgSleep $sleep_ms ms <= 103% of $sleep_hi ms");
my ($run_lo, $run_hi) = (ms($started, $release_lo) + 500, ms($started, $done));
cmp_ok($elapsed, '>=', 0.97 * $run_lo, "elapsed $elapsed ms >= 97% of $run_lo ms");
cmp_ok($elapsed, '<=', 1.03 * $run_hi, "elapsed $elapsed ms <= 103% of $run_hi ms");
cmp_ok(abs($cpu - ($elapsed - $all_waits)), '<', 0.01, "cpu ($cpu ms) is elapsed minus the waits");
cmp_ok($cpu, '<', 250, 'the run spent little CPU');
is($qid,
	sql($admin, "SELECT queryid FROM pg_stat_statements WHERE query LIKE 'SELECT pg_sleep(\$1) FROM (SELECT id%'"),
	'its queryid is pg_stat_statements\'');
is($text, "$query;", 'its text, as the client sent it');
# The blocker as the sampler saw it: the holder, idle in its transaction
# after its UPDATE (filled by the sampler's lock-blocker lookup). The
# sampler also saw it in its COMMIT, the lock still held; the run keeps
# what the holder did during the wait, not the COMMIT that ended it.
is( sql($admin,
		"SELECT count(*) FROM pg_stat_waits_executions, jsonb_array_elements(blockers) b
		  WHERE pid = $bpid AND (b->>'pid')::int = $holder_pid AND (b->>'queryid')::bigint = $holder_qid"),
	1,
	'the blocker\'s pid and queryid are recorded')
  or diag(sql($admin, "SELECT blockers FROM pg_stat_waits_executions WHERE pid = $bpid"));
cmp_ok(
	sql($admin,
		"SELECT count(*) FROM pg_stat_waits_history, jsonb_array_elements(blocker_details) b
		  WHERE pid = $bpid AND (b->>'pid')::int = $holder_pid AND b->>'state' = 'active'
		    AND (b->>'queryid')::bigint <> $holder_qid"),
	'>', 0, 'the sampler saw the holder in its COMMIT too');
$holder->quit;

# ---- the same run as one LOG line (capture_log) ------------------------------------

# Written once the run is over (at the latest when the session waits for
# its next command): capture happens inside the run's commit, where
# logging is not safe.
my $line_re = qr/LOG:  pg_stat_waits: slow run: duration: ([0-9.]+) ms  cpu: ([0-9.]+) ms  started: [^ ]+ [^ ]+  queryid: (-?\d+)  waits: (.*?)  blocked by: (.*?)  statement: (.*)$/m;
my $log = '';
ok( wait_until(
		sub {
			$log = slurp_file($node->logfile, $log_start);
			return $log =~ $line_re;
		}),
	'the run is in the server log');
my ($l_elapsed, $l_cpu, $l_qid, $l_waits, $l_blockers, $l_text) = $log =~ $line_re;
cmp_ok(abs($l_elapsed - $elapsed), '<', 0.002, "the line's duration is the view's ($l_elapsed ms)");
cmp_ok(abs($l_cpu - $cpu), '<', 0.002, "and its CPU ($l_cpu ms)");
is($l_qid, $qid, 'and its queryid');
like($l_waits, qr/^Lock\/transactionid [0-9.]+ ms \(\d+ calls?\), Timeout\/PgSleep [0-9.]+ ms \(1 call\)/,
	"its waits, heaviest first ($l_waits)");
like($l_blockers, qr/^pid $holder_pid \(idle in transaction, [^,]+, queryid $holder_qid\)$/,
	"its blocker ($l_blockers)");
is($l_text, "$query;", 'and its text');
my $lines = sub { my @m = slurp_file($node->logfile, $log_start) =~ /pg_stat_waits: slow run:/g; return scalar @m; };

# ---- 100,000 statements under the threshold add nothing ----------------------

my $before = sql($admin, 'SELECT count(*) FROM pg_stat_waits_executions');
my $script = "SET pg_stat_waits.timing = on;\nSELECT pg_backend_pid();\n" . ("SELECT 1;\n" x 100_000);
my $fast_pid = $node->safe_psql('postgres', $script);
($fast_pid) = $fast_pid =~ /^(\d+)/;
is(sql($admin, 'SELECT count(*) FROM pg_stat_waits_executions'), $before, '100,000 fast statements add no rows');
is(sql($admin, "SELECT calls >= 100000 FROM pg_stat_statements WHERE query = 'SELECT \$1'"),
	't', 'they ran (pg_stat_statements counted them)');
# The same kind of session keeps a statement over the threshold.
$node->safe_psql('postgres', "SET pg_stat_waits.timing = on; SET pg_stat_waits.capture_min_duration = 200;\n"
	  . "SELECT pg_sleep(0.3);");
is(sql($admin, 'SELECT count(*) FROM pg_stat_waits_executions'), $before + 1, 'a slow one is kept');
is($lines->(), 1, 'without capture_log it is not logged');
$node->safe_psql('postgres', "SET pg_stat_waits.timing = on; SET pg_stat_waits.capture_min_duration = 200;\n"
	  . "SET pg_stat_waits.capture_log = on; SELECT pg_sleep(0.3); SELECT pg_sleep(0.25);");
ok(wait_until(sub { $lines->() >= 3 }), 'with it, each slow run is logged, a session that ends right away included');
is($lines->(), 3, 'once');

# ---- other users' runs: no text, no queryid; the text cut like pg_stat_activity

sql($admin, 'CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN');
sql($admin, 'ALTER ROLE alice SET pg_stat_waits.timing = on');
sql($admin, 'ALTER ROLE alice SET pg_stat_waits.capture_min_duration = 200');
my $long = 'SELECT pg_sleep(0.3) /* ' . ('x' x 200) . ' */';
$node->safe_psql('postgres', $long, extra_params => ['-U', 'alice']);
my $of_alice = "SELECT count(*), count(query), count(queryid), max(length(query)) FROM pg_stat_waits_executions "
  . "WHERE usesysid = 'alice'::regrole";
is($node->safe_psql('postgres', $of_alice, extra_params => ['-U', 'alice']),
	'1|1|1|99', 'alice sees her run with its text, cut to track_activity_query_size - 1 bytes');
is($node->safe_psql('postgres', $of_alice, extra_params => ['-U', 'bob']),
	'1|0|0|', 'bob sees it without text and queryid');
# A run is its session's, as pg_stat_activity and the history have it: a
# superuser's session under SET ROLE bob keeps its role, and its text stays
# hidden from bob.
my $session_role = sql($admin, 'SELECT session_user::regrole::oid');
$node->safe_psql('postgres',
	"SET pg_stat_waits.timing = on; SET pg_stat_waits.capture_min_duration = 200; SET ROLE bob;\n"
	  . 'SELECT pg_sleep(0.3) AS set_role_probe');
my ($probe_pid, $probe_role) = split /\|/,
  sql($admin, "SELECT pid, usesysid FROM pg_stat_waits_executions WHERE query LIKE '%set_role_probe%'");
is($probe_role, $session_role, 'a run under SET ROLE is kept under the session role');
is( $node->safe_psql('postgres',
		"SELECT count(*), count(query), count(queryid) FROM pg_stat_waits_executions WHERE pid = $probe_pid",
		extra_params => ['-U', 'bob']),
	'1|0|0', 'bob sees that run without its text and queryid');
# A blocker's queryid is hidden like its owner's statements (the holder is
# a superuser's session here); its pid stays visible, as pg_blocking_pids().
my $blocker_seen = "SELECT count(*) FILTER (WHERE b->>'queryid' IS NULL) || '|' || count(*) "
  . "FROM pg_stat_waits_executions, jsonb_array_elements(blockers) b WHERE pid = $bpid AND (b->>'pid')::int = $holder_pid";
is($node->safe_psql('postgres', $blocker_seen, extra_params => ['-U', 'bob']),
	'1|1', "bob sees the blocker's pid without its queryid");
sql($admin, 'GRANT pg_read_all_stats TO bob');
is($node->safe_psql('postgres', $blocker_seen, extra_params => ['-U', 'bob']),
	'0|1', "with pg_read_all_stats bob sees the blocker's queryid");
is($node->safe_psql('postgres', $of_alice, extra_params => ['-U', 'bob']),
	'1|1|1|99', 'pg_read_all_stats members see all of it');
my ($rc, $out, $stderr) = $node->psql('postgres', 'SET pg_stat_waits.capture_min_duration = 0',
	extra_params => ['-U', 'bob']);
like($stderr, qr/permission denied to set parameter/, 'a plain user cannot change the threshold');

# ---- the extended protocol: the text its status entry shows -----------------
# An autocommit run ends at Sync's commit, a run inside a block when the
# backend waits for the client: both after its Execute message is over.
my $ext = $node->basedir . '/slow_ext.sql';
PostgreSQL::Test::Utils::append_to_file($ext,
	"SELECT pg_sleep(0.25) AS ext_probe;\nBEGIN;\nSELECT pg_sleep(0.25) AS ext_block_probe;\nEND;\n");
for my $mode ('extended', 'prepared')
{
	$node->command_ok([ 'pgbench', '-n', '-t', '1', '-M', $mode, '-U', 'alice', '-f', $ext, 'postgres' ],
		"pgbench -M $mode: two slow runs");
}
is( sql(
		$admin, q{
	SELECT string_agg(regexp_replace(query, ';$', ''), ' / ' ORDER BY started) FROM pg_stat_waits_executions
	 WHERE usesysid = 'alice'::regrole AND started > now() - interval '1 min'
	   AND coalesce(query, '') !~ '^SELECT pg_sleep\(0.3\)'}),
	join(' / ', ('SELECT pg_sleep(0.25) AS ext_probe', 'SELECT pg_sleep(0.25) AS ext_block_probe') x 2),
	'extended-protocol runs keep their own text, in and out of a block');
# A pipeline inside a block: the next statement's messages follow without a
# Sync, so the run's end is seen only when that statement begins. Its text
# is gone from everywhere by then: the run is kept without one, never with
# the next statement's.
my $pipe = $node->basedir . '/slow_pipe.sql';
PostgreSQL::Test::Utils::append_to_file($pipe,
	"BEGIN;\n\\startpipeline\nSELECT pg_sleep(0.25) AS pipe_probe;\nSELECT 1 AS pipe_next;\n\\endpipeline\nEND;\n");
# With -M prepared no Parse comes in between: the run's portal is dropped
# by the next statement's Bind, which has put its own text in place.
for my $mode ('extended', 'prepared')
{
	$node->command_ok([ 'pgbench', '-n', '-t', '1', '-M', $mode, '-U', 'alice', '-f', $pipe, 'postgres' ],
		"pgbench -M $mode pipeline: a slow run");
}
my ($pipe_runs, $pipe_texts) = split /\|/, sql(
	$admin, q{
	SELECT count(*), coalesce(string_agg(query, ' / '), '') FROM pg_stat_waits_executions
	 WHERE usesysid = 'alice'::regrole AND started > now() - interval '1 min' AND query !~ '(ext_probe|ext_block_probe|sleep\(0.3\))'});
is($pipe_runs, 2, 'the pipelined runs are kept');
unlike($pipe_texts, qr/pipe_next/, "never with the next statement's text ($pipe_texts)");

# ---- a clean restart keeps them ----------------------------------------------------

my $all = "SELECT count(*), sum(elapsed)::numeric(20, 3), string_agg(query, ',' ORDER BY started) "
  . "FROM pg_stat_waits_executions";
my $saved = sql($admin, $all);
$admin->quit;
$blocked->quit;
$node->restart;
$admin = psw_session($node);
is(sql($admin, $all), $saved, 'a clean restart keeps the runs');

# ---- reset ----------------------------------------------------------------------

sql($admin, 'SELECT pg_stat_waits_reset()');
is(sql($admin, 'SELECT count(*) FROM pg_stat_waits_executions'), 0, 'pg_stat_waits_reset() clears it');
$node->safe_psql('postgres', 'SELECT pg_sleep(0.3)', extra_params => ['-U', 'alice']);
is(sql($admin, 'SELECT count(*) FROM pg_stat_waits_executions'), 1, 'and it fills again');

$admin->quit;
$node->stop;
done_testing();
