# Lock blockers and executions told apart, on a real chain of row-lock
# waits: A holds a row, B waits for A, C waits for B. The sampler's history,
# its blocked_by record in each slot and pg_stat_waits_activity must name
# each one's blocker; two runs of one statement must be told apart by
# query_start, with pg_stat_waits_execution_profile() returning each run.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;

my $node = psw_node('blockers', extensions => 1);
my $admin = psw_session($node);
sql($admin, 'CREATE EXTENSION pg_stat_waits_test');
sql($admin, 'CREATE TABLE chain_rows (id int PRIMARY KEY, v int)');
sql($admin, 'INSERT INTO chain_rows VALUES (1, 0)');

subtest 'chain A <- B <- C of row-lock waits' => sub {
	my $a = psw_session($node, 'BEGIN', 'UPDATE chain_rows SET v = v + 1 WHERE id = 1');
	my $apid = backend_pid($a);
	my $b = psw_session($node);
	my $bpid = backend_pid($b);
	my $c = psw_session($node);
	my $cpid = backend_pid($c);

	# What PostgreSQL's lock manager reports here: B finds the row locked
	# by A's transaction, takes the row's tuple lock and waits for A's
	# transactionid. C then finds the row locked too and queues for the
	# tuple lock, which B holds: C waits on Lock/tuple and is blocked by B
	# alone (A holds no tuple lock), B on Lock/transactionid by A.
	send_sql($b, 'UPDATE chain_rows SET v = v + 10 WHERE id = 1');
	ok( wait_until(
			sub {
				sql($admin, "SELECT wait_event FROM pg_stat_waits_activity WHERE pid = $bpid") eq
				  'transactionid';
			}),
		'B waits for A\'s transaction');
	send_sql($c, 'UPDATE chain_rows SET v = v + 100 WHERE id = 1');
	ok( wait_until(
			sub {
				sql($admin, "SELECT wait_event FROM pg_stat_waits_activity WHERE pid = $cpid") eq 'tuple';
			}),
		'C waits for the tuple lock B holds');

	# Live chain: the activity view computes it now.
	is(sql($admin, "SELECT blockers FROM pg_stat_waits_activity WHERE pid = $bpid"),
		"{$apid}", 'activity: B is blocked by A');
	is(sql($admin, "SELECT blockers FROM pg_stat_waits_activity WHERE pid = $cpid"),
		"{$bpid}", 'activity: C is blocked by B');
	is(sql($admin, "SELECT blockers IS NULL FROM pg_stat_waits_activity WHERE pid = $apid"),
		't', 'activity: A (not in a Lock wait) has no blockers');

	# Let the sampler look (it refreshes each blocked process every 100 ms).
	ok( wait_until(
			sub {
				sql($admin,
					"SELECT count(*) FILTER (WHERE pid = $bpid) >= 20 AND count(*) FILTER (WHERE pid = $cpid) >= 20 "
					  . "FROM pg_stat_waits_history WHERE wait_event_type = 'Lock' AND blockers IS NOT NULL") eq 't';
			},
			20),
		'history has blocked samples of B and C with blockers');

	# Every Lock sample of B names A, every one of C names B.
	is( sql($admin,
			"SELECT count(*) FILTER (WHERE blockers IS NOT NULL), "
			  . "count(*) FILTER (WHERE blockers = ARRAY[$apid]) FROM pg_stat_waits_history "
			  . "WHERE pid = $bpid AND wait_event = 'transactionid'") =~ /^(\d+)\|(\d+)$/ && $1 == $2 && $1 > 0,
		1, 'history: B\'s samples name A, and only A');
	is( sql($admin,
			"SELECT count(*) FILTER (WHERE blockers IS NOT NULL), "
			  . "count(*) FILTER (WHERE blockers = ARRAY[$bpid]) FROM pg_stat_waits_history "
			  . "WHERE pid = $cpid AND wait_event = 'tuple'") =~ /^(\d+)\|(\d+)$/ && $1 == $2 && $1 > 0,
		1, 'history: C\'s samples name B, and only B');

	# Each blocker's state, wait and queryid at that moment.
	my $a_qid = sql($admin, "SELECT query_id FROM pg_stat_activity WHERE pid = $apid");
	my $b_qid = sql($admin, "SELECT query_id FROM pg_stat_activity WHERE pid = $bpid");
	is( sql($admin,
			"SELECT d->>'state', d->>'wait_event_type', d->>'wait_event', d->>'queryid' "
			  . "FROM pg_stat_waits_history, jsonb_array_elements(blocker_details) d "
			  . "WHERE pid = $bpid AND wait_event = 'transactionid' ORDER BY sample_time DESC LIMIT 1"),
		"idle in transaction|Client|ClientRead|$a_qid",
		'history: A is idle in transaction, in ClientRead, with its UPDATE\'s queryid');
	is( sql($admin,
			"SELECT d->>'state', d->>'wait_event_type', d->>'wait_event', d->>'queryid' "
			  . "FROM pg_stat_waits_history, jsonb_array_elements(blocker_details) d "
			  . "WHERE pid = $cpid AND wait_event = 'tuple' ORDER BY sample_time DESC LIMIT 1"),
		"active|Lock|transactionid|$b_qid",
		'history: B is active, waiting for a transactionid, with its UPDATE\'s queryid');

	# The sampler's record in the slots (what slow-execution records read).
	my $b_start = sql($admin, "SELECT query_start FROM pg_stat_activity WHERE pid = $bpid");
	is( sql($admin,
			"SELECT blockers, query_start = '$b_start'::timestamptz, seen_at <= now() "
			  . "FROM pg_stat_waits_blocked_by($bpid)"),
		"{$apid}|t|t", 'blocked_by in B\'s slot: A, tagged with B\'s query_start');
	is(sql($admin, "SELECT blockers FROM pg_stat_waits_blocked_by($cpid)"),
		"{$bpid}", 'blocked_by in C\'s slot: B');
	is(sql($admin, "SELECT seen_at IS NULL FROM pg_stat_waits_blocked_by($apid)"),
		't', 'A was never looked up (never in a Lock wait)');

	# B's execution: its profile holds its Lock wait.
	cmp_ok(
		sql($admin,
			"SELECT samples FROM pg_stat_waits_execution_profile($bpid, '$b_start') "
			  . "WHERE wait_event = 'transactionid'"),
		'>=', 20, 'execution profile of B has its transactionid samples');

	sql($a, 'COMMIT');
	my (undef, $berr) = finish_sql($b);
	my (undef, $cerr) = finish_sql($c);
	is($berr . $cerr, '', 'B and C finish once A commits');
	$_->quit for $a, $b, $c;
};

subtest 'two runs of one statement are told apart by query_start' => sub {
	my $s = psw_session($node);
	my $pid = backend_pid($s);
	sql($s, 'SELECT pg_sleep(0.4)');
	sql($s, 'SELECT pg_sleep(0.4)');
	my @starts = split /\n/,
	  sql($admin,
		"SELECT query_start FROM pg_stat_waits_history WHERE pid = $pid AND wait_event = 'PgSleep' "
		  . "GROUP BY query_start ORDER BY query_start");
	is(scalar @starts, 2, 'the samples of the two runs carry two query_starts');
	my $qid = sql($admin,
		"SELECT count(DISTINCT queryid) FROM pg_stat_waits_history WHERE pid = $pid AND wait_event = 'PgSleep'");
	is($qid, 1, 'both runs have the same queryid');
	for my $i (0 .. $#starts)
	{
		my $in_history = sql($admin,
			"SELECT count(*) FROM pg_stat_waits_history WHERE pid = $pid AND query_start = '$starts[$i]'");
		my $profile = sql($admin,
			"SELECT sum(samples), bool_and(est_time = samples * (SELECT sample_period_ms FROM pg_stat_waits_status)) "
			  . "FROM pg_stat_waits_execution_profile($pid, '$starts[$i]')");
		is($profile, "$in_history|t", "run " . ($i + 1) . ": the profile has exactly its samples");
		# 0.4 s at 10 ms: about 40 samples of PgSleep, not 80.
		my $sleep = sql($admin,
			"SELECT samples FROM pg_stat_waits_execution_profile($pid, '$starts[$i]') WHERE wait_event = 'PgSleep'");
		ok($sleep >= 10 && $sleep <= 50, "run " . ($i + 1) . ": $sleep PgSleep samples (one run's, not both)");
	}
	$s->quit;
};

subtest 'lookups switched off: Lock samples carry no blockers' => sub {
	is(sql($admin, 'SELECT pg_stat_waits_blocker_lookup(false)'), 't', 'lookups were on');
	my ($holder, $blocked, $pid) =
	  lock_and_block($node, 'UPDATE chain_rows SET v = v + 1 WHERE id = 1',
		'UPDATE chain_rows SET v = v + 10 WHERE id = 1');
	my $before = sql($admin, 'SELECT lookups FROM pg_stat_waits_blocker_stats()');
	ok( wait_until(
			sub {
				sql($admin,
					"SELECT count(*) >= 20 FROM pg_stat_waits_history WHERE pid = $pid AND wait_event_type = 'Lock'")
				  eq 't';
			}),
		'the blocked session is sampled');
	is(sql($admin, 'SELECT lookups FROM pg_stat_waits_blocker_stats()'), $before, 'no lookup made');
	is( sql($admin,
			"SELECT count(blockers) FROM pg_stat_waits_history WHERE pid = $pid AND wait_event_type = 'Lock'"),
		0, 'no blockers recorded');
	sql($holder, 'COMMIT');
	finish_sql($blocked);
	is(sql($admin, 'SELECT pg_stat_waits_blocker_lookup(true)'), 'f', 'switched back on');
	$_->quit for $holder, $blocked;
};

$node->stop;
done_testing();
