# Waits before a statement begins: a client's statement queued behind
# another session's lock (a migration's ACCESS EXCLUSIVE) waits while parse
# analysis opens its table (simple protocol, and a Parse message), or while
# a Bind takes its cached plan's locks (a prepared statement), before any
# hook of the statement has run. With timing on, that wait is the
# statement's own: attributed to its queryid, nothing of it left outside
# any statement, and a slow run's elapsed time starts with it (its blocker
# named). The sampler sees the wait too, and its samples end under the
# statement's id as well: PostgreSQL reports a prepared statement's at Bind;
# samples taken in parse analysis, before any id, get it once the statement
# shows one.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Utils;
use PswTest;
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;

my $node = psw_node('bind', extensions => 1);
my $admin = psw_session($node);
sql($admin, 'CREATE TABLE lk (id int); INSERT INTO lk VALUES (1)');

for my $track ('top', 'all')
{
	for my $mode ('simple', 'extended', 'prepared')
	{
		sql($admin, 'SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset()');
		my $probe = "lk_probe_${track}_$mode";
		my $script = $node->basedir . "/$probe.sql";
		# Two runs: the first prepares (in -M prepared), the second finds the
		# table locked.
		append_to_file($script, "SELECT count(*) AS $probe FROM lk;\n\\sleep 2000 ms\n");
		# Connected before, so that the lock is taken well within the pause.
		my $holder = psw_session($node);
		my $holder_pid = backend_pid($holder);
		my ($out, $err) = ('', '');
		my $bench;
		{
			local $ENV{PGOPTIONS} =
			  "-c pg_stat_waits.track=$track -c pg_stat_waits.timing=on -c pg_stat_waits.capture_min_duration=300";
			$bench = IPC::Run::start(
				[ 'pgbench', '-n', '-t', '2', '-M', $mode, '-f', $script, '-h', $node->host, '-p', $node->port, 'postgres' ],
				'>', \$out, '2>', \$err);
		}
		my $qid = '';
		ok( wait_until(
				sub {
					$qid = sql($admin, "SELECT queryid FROM pg_stat_statements WHERE query ~ '$probe' AND calls = 1");
					return $qid ne '';
				}),
			"track = $track, -M $mode: the first run is over");
		sql($holder, 'BEGIN; LOCK TABLE lk IN ACCESS EXCLUSIVE MODE');
		ok( wait_until(
				sub { sql($admin, "SELECT count(*) FROM pg_locks WHERE relation = 'lk'::regclass AND NOT granted") == 1 }),
			"track = $track, -M $mode: the second waits for the table's lock");
		usleep(700_000);
		sql($holder, 'COMMIT');
		$holder->quit;
		ok($bench->finish, "track = $track, -M $mode: pgbench ran") or diag "$out\n$err";

		my ($all_ms, $mine_ms) = split /\|/, sql(
			$admin, qq{
			SELECT round((SELECT sum(total_time) FROM pg_stat_waits WHERE wait_event_type = 'Lock' AND wait_event = 'relation')),
			       round((SELECT coalesce(sum(total_time), 0) FROM pg_stat_waits_queries
			               WHERE queryid = $qid AND wait_event_type = 'Lock' AND wait_event = 'relation'))});
		cmp_ok($mine_ms, '>=', 600, "track = $track, -M $mode: the lock wait is the statement's ($mine_ms ms)");
		is($mine_ms, $all_ms, "track = $track, -M $mode: none of it outside the statement");
		my ($run_ms, $run_lock_ms) = split /\|/, sql(
			$admin, qq{
			SELECT round(elapsed), round((SELECT sum(w.time_ms) FROM jsonb_to_recordset(e.waits)
			                               AS w(wait_event_type text, wait_event text, time_ms float8)
			                              WHERE w.wait_event = 'relation'))
			  FROM pg_stat_waits_executions e WHERE queryid = $qid});
		cmp_ok($run_lock_ms // 0, '>=', 600, "track = $track, -M $mode: its slow run lists the wait");
		cmp_ok($run_ms || 0, '>=', $run_lock_ms // 1e9, "track = $track, -M $mode: and its elapsed time holds it ($run_ms ms)");
		is( sql(
				$admin, qq{
			SELECT extract(epoch FROM ended - started) * 1000 >= elapsed - 1
			       AND EXISTS (SELECT FROM jsonb_array_elements(blockers) b WHERE (b->>'pid')::int = $holder_pid)
			  FROM pg_stat_waits_executions WHERE queryid = $qid}),
			't', "track = $track, -M $mode: it starts before its wait, and names the session that blocked it");
		# Sampled: under the statement's id, whatever the protocol. During
		# a Bind PostgreSQL reports the prepared statement's id already; in
		# parse analysis there is none yet, and the sampler gives the
		# samples the id once the statement shows it (the same start, or a
		# Parse's text run by the Bind and Execute that follow).
		my ($prof_own, $prof_null, $hist_own, $hist_null) = split /\|/, sql(
			$admin, qq{
			SELECT (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid = $qid AND wait_event = 'relation'),
			       (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid IS NULL AND wait_event = 'relation'),
			       (SELECT count(*) FROM pg_stat_waits_history WHERE queryid = $qid AND wait_event = 'relation'),
			       (SELECT count(*) FROM pg_stat_waits_history WHERE queryid IS NULL AND wait_event = 'relation')});
		cmp_ok($prof_own, '>', 30, "track = $track, -M $mode: sampled under the statement's id ($prof_own samples)");
		is($prof_null, 0, "track = $track, -M $mode: no sample of the wait left without an id in the profile");
		is($hist_own, $prof_own, "track = $track, -M $mode: the history agrees, sample for sample");
		is($hist_null, 0, "track = $track, -M $mode: no sample of the wait left without an id in the history");
	}
}

# The default mode (no timing, PostgreSQL's own entry read for the ids):
# the sampler gives the samples of parse analysis their statement's id alike,
# eight sessions released from the same lock at once.
for my $mode ('simple', 'extended')
{
	sql($admin, 'SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset()');
	my $probe = "lk_probe_default_$mode";
	my $script = $node->basedir . "/$probe.sql";
	append_to_file($script, "SELECT count(*) AS $probe FROM lk;\n\\sleep 2000 ms\n");
	my $holder = psw_session($node, 'BEGIN', 'LOCK TABLE lk IN ACCESS EXCLUSIVE MODE');
	my ($out, $err) = ('', '');
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-t', '1', '-c', '8', '-j', '2', '-M', $mode, '-f', $script, '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	ok( wait_until(
			sub { sql($admin, "SELECT count(*) FROM pg_locks WHERE relation = 'lk'::regclass AND NOT granted") == 8 }),
		"default mode, -M $mode: eight statements wait for the table's lock");
	usleep(500_000);
	sql($holder, 'COMMIT');
	$holder->quit;
	ok($bench->finish, "default mode, -M $mode: pgbench ran") or diag "$out\n$err";
	my $qid = sql($admin, "SELECT queryid FROM pg_stat_statements WHERE query ~ '$probe'");
	my ($own, $null, $prof_own, $prof_null) = split /\|/, sql(
		$admin, qq{
		SELECT (SELECT count(*) FROM pg_stat_waits_history WHERE queryid = $qid AND wait_event = 'relation'),
		       (SELECT count(*) FROM pg_stat_waits_history WHERE queryid IS NULL AND wait_event = 'relation'),
		       (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid = $qid AND wait_event = 'relation'),
		       (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid IS NULL AND wait_event = 'relation')});
	cmp_ok($own, '>', 8 * 20, "default mode, -M $mode: sampled under the statement's id ($own samples)");
	is($null, 0, "default mode, -M $mode: none left without an id");
	is("$prof_own/$prof_null", "$own/0", "default mode, -M $mode: the profile agrees");
}

# A statement that fails in its wait (lock_timeout in parse analysis) never
# began: timed, its wait counts outside any statement, and the same text
# run again afterwards does not take it. Sampled, the wait was that query's
# (the text makes the queryid): its samples get the id when the same text
# next runs with one, whatever ran in between, and keep none when it does
# not run before the session ends.
my %then = (
	'the same text' => { timeouts => 1, other => 0, retry => 1 },
	'another text, then the same' => { timeouts => 1, other => 1, retry => 1 },
	'a second timeout, then the same text' => { timeouts => 2, other => 0, retry => 1 },
	'another text only' => { timeouts => 1, other => 1, retry => 0 });
for my $then (sort keys %then)
{
	my $c = $then{$then};
	sql($admin, 'SELECT pg_stat_waits_reset()');
	my $holder = psw_session($node, 'BEGIN', 'LOCK TABLE lk IN ACCESS EXCLUSIVE MODE');
	my $s = psw_session($node, 'SET pg_stat_waits.timing = on', "SET lock_timeout = '300ms'");
	my $s_pid = backend_pid($s);
	for my $n (1 .. $c->{timeouts})
	{
		$s->{stderr} = '';
		$s->query('SELECT count(*) AS lt_probe FROM lk');
		like($s->{stderr}, qr/lock timeout/, "$then: lock_timeout $n ends the statement in its parse analysis");
	}
	sql($holder, 'COMMIT');
	if ($c->{other})
	{
		sql($s, 'SELECT 2 AS lt_other');
		usleep(50_000);    # ticks see the session idle with the other text
	}
	sql($s, 'SELECT count(*) AS lt_probe FROM lk') if $c->{retry};
	usleep(100_000);    # a tick or more sees the session idle after it
	# PostgreSQL's id of the query last run, as the idle session shows it.
	my $qid = sql($admin, "SELECT query_id FROM pg_stat_activity WHERE pid = $s_pid");
	$_->quit for $holder, $s;
	my ($all_ms, $attributed_ms) = split /\|/, sql(
		$admin, q{
		SELECT round((SELECT sum(total_time) FROM pg_stat_waits WHERE wait_event_type = 'Lock' AND wait_event = 'relation')),
		       round((SELECT coalesce(sum(total_time), 0) FROM pg_stat_waits_queries
		               WHERE wait_event_type = 'Lock' AND wait_event = 'relation'))});
	cmp_ok($all_ms, '>=', 290 * $c->{timeouts}, "$then: the timed-out waits are counted ($all_ms ms)");
	is($attributed_ms, 0, "$then: timed, outside any statement" . ($c->{retry} ? ", the retry of the same text included" : ""));
	my ($null_samples, $own_samples, $other_samples, $hist_null, $hist_own) = split /\|/, sql(
		$admin, qq{
		SELECT (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid IS NULL AND wait_event = 'relation'),
		       (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid = $qid AND wait_event = 'relation'),
		       (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE queryid <> $qid AND wait_event = 'relation'),
		       (SELECT count(*) FROM pg_stat_waits_history WHERE queryid IS NULL AND wait_event = 'relation'),
		       (SELECT count(*) FROM pg_stat_waits_history WHERE queryid = $qid AND wait_event = 'relation')});
	is($other_samples, 0, "$then: no samples under any other id");
	if ($c->{retry})
	{
		cmp_ok($own_samples, '>=', 10 * $c->{timeouts}, "$then: sampled under the query's id ($own_samples samples)");
		is($null_samples, 0, "$then: none left without an id");
	}
	else
	{
		cmp_ok($null_samples, '>=', 10, "$then: sampled with no id ($null_samples samples)");
		is($own_samples, 0, "$then: none given to the other text's query");
	}
	is("$hist_own/$hist_null", "$own_samples/$null_samples", "$then: the history agrees with the profile");
}

$admin->quit;
$node->stop;
done_testing();
