# Exact timing against a real server: the wrappers installed in the
# executable's GOT time sleeps, lock waits, WAL flushes and contention; the
# per-query breakdown matches the server clock; timing off moves nothing.
#
# Counters are cumulative and shared by the whole cluster, so every check
# compares before/after deltas of its own work.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC usleep);

# fsync on: commits must really wait for the WAL flush.
# On 19 pg_stat_statements, compared with below, times on the system clock
# as pg_stat_waits does (timing_clock_source: 300_statement_attribution.pl).
my $node = psw_node('timing',
	conf => [ 'fsync = on', sub { shift->pg_version->major >= 19 ? ('timing_clock_source = system') : () } ],
	extensions => 1);
my $admin = psw_session($node);

# (calls, total ms) of pg_stat_waits rows matching WHERE.
sub totals
{
	my ($where) = @_;
	return split /\|/,
	  sql($admin,
		"SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_waits WHERE $where"
	  );
}

sub event
{
	my ($type, $name) = @_;
	return totals("wait_event_type = '$type' AND wait_event = '$name'");
}

# (calls, total ms) of one statement's row in pg_stat_waits_queries.
sub query_event
{
	my ($queryid, $type, $name) = @_;
	return split /\|/,
	  sql($admin,
		"SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_waits_queries "
		  . "WHERE queryid = $queryid AND wait_event_type = '$type' AND wait_event = '$name'");
}

# A session with exact timing on (SET by a superuser).
sub timed_session { return psw_session($node, 'SET pg_stat_waits.timing = on'); }

# Waits until only $n client backends besides $admin are alive, so that exit
# flushes of earlier sessions cannot land inside a measurement.
sub wait_for_quiet
{
	my ($n) = @_;
	return wait_until(
		sub {
			sql($admin,
				"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
				  . "AND pid <> pg_backend_pid()") == $n;
		});
}

# The client's clock, in seconds: CLOCK_MONOTONIC, the clock the wrappers
# read (or calibrate the TSC against). Wall-clock time can be stepped: a
# virtual machine's was once 1.2 ms ahead after one second, and the live
# wait time below, which grows with the monotonic clock, fell short of it.
sub now_s { return clock_gettime(CLOCK_MONOTONIC); }

# Runs $query on $s and returns how long the client waited for it, in ms.
sub timed_sql
{
	my ($s, $query) = @_;
	my $t0 = now_s();
	sql($s, $query);
	return (now_s() - $t0) * 1000;
}

subtest 'status lists the interposed calls' => sub {
	for my $call (qw(epoll_wait pread sem_wait fdatasync))
	{
		is(sql($admin, "SELECT '$call' = ANY(interposed) FROM pg_stat_waits_status"),
			't', "$call is interposed");
	}
};

subtest 'five pg_sleeps add up to one second' => sub {
	my $s = timed_session();
	my ($calls0, $ms0) = event('Timeout', 'PgSleep');
	my $client_ms = 0;
	$client_ms += timed_sql($s, 'SELECT pg_sleep(0.2)') for 1 .. 5;
	my ($calls1, $ms1) = event('Timeout', 'PgSleep');    # flushed at statement end
	cmp_ok($calls1 - $calls0, '>=', 5, 'five sleeps counted');
	my $ms = $ms1 - $ms0;
	cmp_ok($ms, '>=', 1000, 'at least 1000 ms');
	cmp_ok($ms, '<=', 1030, 'at most 1030 ms');

	# The same sleeps under the statement's queryid, with a small CPU row.
	my $qid = sql($admin,
		"SELECT queryid FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep' "
		  . 'ORDER BY total_time DESC LIMIT 1');
	isnt($qid, '', 'the sleeping statement has a row');
	my (undef, $sleep_ms) = query_event($qid, 'Timeout', 'PgSleep');
	cmp_ok($sleep_ms, '>=', 1000, 'its sleeps add up to 1000 ms');
	my ($cpu_calls, $cpu_ms) = query_event($qid, 'CPU', 'CPU');
	is($cpu_calls, 5, 'one CPU row call per statement');
	# The CPU row is the statement's elapsed time less its waits (0 if the
	# waits were larger): every statement spends some time outside pg_sleep.
	cmp_ok($cpu_ms, '>', 0, 'CPU time is not clamped away');
	cmp_ok($cpu_ms / 5, '<', 20, 'CPU per pg_sleep statement under 20 ms');
	# Elapsed = CPU + sleep lies between the executor time pg_stat_statements
	# measured and what the client waited.
	my $exec_ms = sql($admin,
		"SELECT total_exec_time FROM pg_stat_statements WHERE queryid = $qid");
	cmp_ok($cpu_ms + $sleep_ms, '>=', $exec_ms,
		"CPU + sleep at least the executor time ($exec_ms ms)");
	cmp_ok($cpu_ms + $sleep_ms, '<=', $client_ms,
		sprintf('CPU + sleep at most the client\'s %.1f ms', $client_ms));
	$s->quit;
};

# The CPU row against a measured truth: a statement without waits spends
# all its time in CPU, at least its executor time and at most what the client
# waited for it.
subtest 'CPU row of a CPU-bound statement is its elapsed time' => sub {
	my $s = timed_session();
	my $q = 'SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 2000) b';
	my $client_ms = timed_sql($s, $q);
	my ($qid, $exec_ms) = split /\|/,
	  sql($admin,
		"SELECT queryid, total_exec_time FROM pg_stat_statements WHERE query LIKE "
		  . "'SELECT count(*) FROM generate_series(\$1, \$2) a, generate_series(\$3, \$4) b'");
	my ($calls, $cpu_ms) = query_event($qid, 'CPU', 'CPU');
	my (undef, $waits_ms) = split /\|/,
	  sql($admin,
		"SELECT count(*), coalesce(sum(total_time), 0) FROM pg_stat_waits_queries "
		  . "WHERE queryid = $qid AND wait_event_type <> 'CPU'");
	is($calls, 1, 'one statement');
	cmp_ok($exec_ms, '>', 20, "a statement that takes time ($exec_ms ms executing)");
	cmp_ok($cpu_ms + $waits_ms, '>=', $exec_ms,
		"CPU $cpu_ms ms + waits $waits_ms ms at least the executor time");
	cmp_ok($cpu_ms, '<=', $client_ms,
		sprintf('CPU at most the client\'s %.1f ms', $client_ms));
	cmp_ok($waits_ms, '<', $exec_ms * 0.1, 'hardly any of it waiting');
	$s->quit;
};

subtest 'row lock wait matches the server clock and its query' => sub {
	sql($admin, 'CREATE TABLE tim_rows (id int PRIMARY KEY, v int)');
	sql($admin, 'INSERT INTO tim_rows VALUES (1, 0)');
	my ($calls0, $ms0) = event('Lock', 'transactionid');
	# One uninterrupted wait: no deadlock check wakes it after a second.
	my ($holder, $waiter, $pid) = lock_and_block(
		$node,
		'UPDATE tim_rows SET v = 1 WHERE id = 1',
		'UPDATE tim_rows SET v = v + 10 WHERE id = 1',
		'SET pg_stat_waits.timing = on',
		"SET deadlock_timeout = '1min'");
	my $qid;
	ok( wait_until(
			sub {
				$qid = sql($admin,
					"SELECT query_id FROM pg_stat_activity WHERE wait_event = 'transactionid' AND pid = $pid"
				);
				$qid ne '';
			}),
		'the waiter blocks');

	# While blocked, the live wait time is shown: no longer than the
	# statement has run, and it grows with the clock.
	my $live = sub {
		my $t0 = now_s();
		my ($ms, $since_start) = split /\|/,
		  sql($admin,
			"SELECT wait_time, extract(epoch FROM clock_timestamp() - query_start) * 1000 "
			  . "FROM pg_stat_waits_activity WHERE pid = $pid");
		return ($ms, $since_start, $t0, now_s());
	};
	my ($live1, $since1, $a0, $a1) = $live->();
	isnt($live1, '', 'wait_time shown during a timed wait');
	cmp_ok($live1, '>', 0, 'wait_time positive');
	cmp_ok($live1, '<=', $since1 + 1,
		"wait_time at most the statement's age ($since1 ms)");
	cmp_ok($live1, '<', 2000, 'wait_time under 2 s');
	my ($q_calls0, $q_ms0) = query_event($qid, 'Lock', 'transactionid');
	usleep(1_000_000);
	my ($live2, undef, $b0, $b1) = $live->();
	my ($min_ms, $max_ms) = (($b0 - $a1) * 1000, ($b1 - $a0) * 1000);
	cmp_ok($live2 - $live1, '>=', $min_ms - 1,
		sprintf('wait_time grew at least the %.1f ms between the reads', $min_ms));
	cmp_ok($live2 - $live1, '<=', $max_ms + 1,
		sprintf('and at most %.1f ms', $max_ms));

	sql($holder, 'COMMIT');
	my (undef, $err) = finish_sql($waiter);
	is($err, '', 'the update went through');

	# The server's own clock: pg_stat_statements' executor time of the
	# blocked UPDATE, which holds the whole wait.
	my ($exec_calls, $exec_ms) = split /\|/,
	  sql($admin, "SELECT calls, total_exec_time FROM pg_stat_statements WHERE queryid = $qid");
	is($exec_calls, 1, 'one blocked UPDATE');
	cmp_ok($exec_ms, '>=', 900, 'blocked for about a second');
	my ($calls1, $ms1) = event('Lock', 'transactionid');
	my $lock_ms = $ms1 - $ms0;
	cmp_ok(abs($lock_ms - $exec_ms), '<=', $exec_ms * 0.03,
		"Lock/transactionid $lock_ms ms within 3% of the server clock's $exec_ms ms");
	my ($q_calls1, $q_ms1) = query_event($qid, 'Lock', 'transactionid');
	cmp_ok(abs($q_ms1 - $q_ms0 - $lock_ms), '<=', 0.01 + $lock_ms * 1e-6,
		'the statement\'s own breakdown has the same wait');
	# The waiter publishes its CPU row when it next waits for its client,
	# which may come after the reads above on a busy machine.
	ok( wait_until(
			sub {
				sql($admin,
					"SELECT coalesce(sum(calls), 0) >= 1 FROM pg_stat_waits_queries WHERE wait_event_type = 'CPU' "
					  . "AND queryid = $qid") eq 't';
			}),
		'a CPU row next to the lock wait');
	$_->quit for $holder, $waiter;
};

subtest 'commits with fsync yield WAL time' => sub {
	is(sql($admin, 'SHOW fsync'), 'on', 'fsync on');
	sql($admin, 'CREATE TABLE tim_wal (v int)');
	my $s = timed_session();
	# PostgreSQL 17 renamed them WalSync and WalWrite.
	my $wal = "wait_event_type = 'IO' AND lower(wait_event) IN ('walsync', 'walwrite')";
	my ($calls0, $ms0) = totals($wal);
	sql($s, "INSERT INTO tim_wal VALUES ($_)") for 1 .. 20;
	my ($calls1, $ms1) = totals($wal);
	cmp_ok($calls1 - $calls0, '>=', 20, 'a WAL write or sync per commit');
	cmp_ok($ms1 - $ms0, '>', 0, 'with time');

	# The commit of an explicit block belongs to its COMMIT statement, even
	# though pg_stat_statements hides utility ids from later hooks.
	sql($s, 'BEGIN');
	sql($s, 'INSERT INTO tim_wal VALUES (-1)');
	sql($s, 'COMMIT');
	my $commit_id = sql($admin,
		"SELECT queryid FROM pg_stat_statements WHERE query = 'COMMIT' "
		  . 'AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())');
	isnt($commit_id, '', 'pg_stat_statements knows COMMIT');
	my ($calls, $ms) = query_event($commit_id, 'IO', $node->pg_version >= 17 ? 'WalSync' : 'WALSync');
	cmp_ok($calls, '>=', 1, 'the WALSync of the commit is under COMMIT\'s queryid');
	cmp_ok($ms, '>', 0, 'with time');
	$s->quit;
};

subtest 'hot row under pgbench yields lock waits' => sub {
	sql($admin, 'CREATE TABLE tim_hot (id int PRIMARY KEY, v int)');
	sql($admin, 'INSERT INTO tim_hot VALUES (1, 0)');
	my $locks = "wait_event_type IN ('Lock', 'LWLock')";
	my ($calls0, $ms0) = totals($locks);
	my $script = $node->basedir . '/hot.sql';
	PostgreSQL::Test::Utils::append_to_file($script,
		"UPDATE tim_hot SET v = v + 1 WHERE id = 1;\n");
	{
		local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
		$node->command_ok(
			[ 'pgbench', '-n', '-c', '8', '-j', '2', '-t', '150', '-f', $script, 'postgres' ],
			'pgbench on one row');
	}
	ok(wait_for_quiet(0), 'pgbench sessions gone (flushed at exit)');
	my ($calls1, $ms1) = totals($locks);
	cmp_ok($calls1 - $calls0, '>', 0, 'lock waits counted');
	cmp_ok($ms1 - $ms0, '>', 0, 'with time');
};

# A pipelining client: pgbench sends all its statements at once, so the
# backend finds the next one already buffered and never waits for the
# client, never goes idle and never sleeps. Its CPU rows (held in the
# backend between flushes) must still reach the shared table once a second
# while it runs, not only when it stops.
subtest 'a pipelining client that never goes idle publishes its CPU rows while it runs' => sub {
	ok(wait_for_quiet(0), 'no other sessions');
	my $n = 400;
	my $script = $node->basedir . '/pipeline.sql';
	PostgreSQL::Test::Utils::append_to_file($script,
		"\\startpipeline\n"
		  . ("SELECT count(*) /* pipelined */ FROM generate_series(1, 100000);\n" x $n)
		  . "\\endpipeline\n");
	my $cpu_calls = "SELECT coalesce(sum(q.calls), 0) FROM pg_stat_waits_queries q "
	  . "WHERE q.wait_event_type = 'CPU' AND q.queryid IN "
	  . "(SELECT queryid FROM pg_stat_statements WHERE query LIKE '%pipelined%')";
	my $running = "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pipelined%' "
	  . "AND pid <> pg_backend_pid()";
	my $bench;
	{
		local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
		$bench = IPC::Run::start(
			[ 'pgbench', '-n', '-M', 'extended', '-c', '1', '-t', '1', '-f', $script,
			  '-h', $node->host, '-p', $node->port, 'postgres' ],
			'>', '/dev/null', '2>', '/dev/null');
	}
	# Polled while the pipeline runs: its calls as published, and whether
	# it was still running after that reading.
	my ($seen, $seen_running) = (0, 0);
	my $started = wait_until(sub { sql($admin, $running) == 1 });
	while ($started && sql($admin, $running) == 1)
	{
		my $calls = sql($admin, $cpu_calls);
		if ($calls > 0 && sql($admin, $running) == 1)
		{
			($seen, $seen_running) = ($calls, 1);
			last;
		}
		usleep(100_000);
	}
	$bench->finish;
	ok($started, 'the pipeline ran');
	ok($seen_running, "its CPU rows were published while it still ran ($seen of $n calls)");
	cmp_ok($seen, '<', $n, 'before its last statement');
	ok(wait_for_quiet(0), 'pgbench gone');
	is(sql($admin, $cpu_calls), $n, 'in the end every call is counted once');
};

subtest 'timing off moves nothing, and off stops at once' => sub {
	ok(wait_for_quiet(0), 'no other sessions');
	my $s = psw_session($node);
	my $snapshot = sub {
		return sql($admin,
			'SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_waits), '
			  . '(SELECT coalesce(sum(calls), 0) FROM pg_stat_waits_queries)');
	};
	my ($waits0, $queries0) = split /\|/, $snapshot->();
	sql($s, 'SELECT pg_sleep(0.1)');
	sql($s, 'CREATE TEMP TABLE tim_off AS SELECT g FROM generate_series(1, 1000) g');
	sql($s, 'SELECT count(*) FROM tim_off');
	my ($waits1, $queries1) = split /\|/, $snapshot->();
	is($waits1, $waits0, 'pg_stat_waits did not move with timing off');
	is($queries1, $queries0, 'pg_stat_waits_queries did not move with timing off');
	my $pid = backend_pid($s);
	is(sql($admin, "SELECT wait_time IS NULL FROM pg_stat_waits_activity WHERE pid = $pid"),
		't', 'no live wait time with timing off');

	# On, then off: only the first sleep is counted.
	my ($calls0, $ms0) = event('Timeout', 'PgSleep');
	sql($s, 'SET pg_stat_waits.timing = on');
	sql($s, 'SELECT pg_sleep(0.05)');
	sql($s, 'SET pg_stat_waits.timing = off');
	sql($s, 'SELECT pg_sleep(0.3)');
	my ($calls1, $ms1) = event('Timeout', 'PgSleep');
	is($calls1 - $calls0, 1, 'one sleep counted');
	cmp_ok($ms1 - $ms0, '>=', 50, 'the 50 ms one');
	cmp_ok($ms1 - $ms0, '<', 300, 'not the 300 ms one');
	$s->quit;
};

# A busy client's next statement comes before its backend would sleep, so
# the backend publishes its per-query rows before it waits for the client,
# and the event totals of the waits outside any statement (the wait for the
# client itself, its recv and send) once it has waited 10 ms, a second has
# passed, or it exits; a session reading the views flushes its own first;
# turning timing off flushes everything then and there.
subtest 'an idle session publishes its waits for the client, a reader sees its own at once, off holds nothing' => sub {
	ok(wait_for_quiet(0), 'no other sessions');
	my $client_reads = "SELECT coalesce(sum(calls), 0) FROM pg_stat_waits "
	  . "WHERE wait_event_type = 'Client' AND wait_event = 'ClientRead'";
	my $probe_calls = "SELECT coalesce(sum(q.calls), 0) FROM pg_stat_waits_queries q "
	  . "WHERE q.wait_event_type = 'CPU' AND q.queryid IN "
	  . "(SELECT queryid FROM pg_stat_statements WHERE query LIKE '%idle_flush_probe%')";
	my $reads0 = sql($admin, $client_reads);
	my $s = timed_session();
	my $pid = sql($admin,
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
	# A wait for the client is one only if the backend blocks: a message
	# already there when it reads is no wait (PostgreSQL reports none
	# either), and on a loaded machine the next statement can arrive before
	# the backend reads. So each statement below is sent once the backend
	# waits for it, and every one adds one wait for the client.
	my $all_awaited = 1;
	my $send = sub {
		my ($query) = @_;
		$all_awaited &&= wait_for_state($admin, $pid, 'wait_event', 'ClientRead');
		return sql($s, $query);
	};
	# Three waits for the client timed: before each probe.
	$send->('SELECT 4242 AS idle_flush_probe') for 1 .. 3;
	is(sql($admin, $probe_calls), 3, 'the per-query rows are published before the session waits for its client');
	# $s stays open and idle: only its idle flush can publish these.
	my $t0 = time;
	ok(wait_until(sub { sql($admin, $client_reads) >= $reads0 + 3 }, 5),
		'another session sees its waits for the client while it idles');
	my $waited_ms = (time - $t0) * 1000;
	cmp_ok($waited_ms, '<', 2000, sprintf('within moments (%.0f ms)', $waited_ms));

	# Three more waits (before two probes and the read), published by the
	# read itself.
	$send->('SELECT 4242 AS idle_flush_probe') for 1 .. 2;
	cmp_ok($send->($client_reads), '>=', $reads0 + 6, 'the session itself reads its own waits at once');
	ok($all_awaited, 'each of those statements was sent while the backend waited for it (ClientRead)');

	sql($s, 'SET pg_stat_waits.timing = off');
	my $everything = 'SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_waits), '
	  . '(SELECT coalesce(sum(calls), 0) FROM pg_stat_waits_queries)';
	my $after_off = sql($admin, $everything);
	$s->quit;
	ok(wait_for_quiet(0), 'the session is gone');
	is(sql($admin, $everything), $after_off, 'its exit added nothing: turning timing off had published all');
};

subtest 'histogram counts sum to calls' => sub {
	my $s = timed_session();
	sql($s, 'SELECT pg_sleep(0.01)') for 1 .. 3;
	$s->quit;
	ok(wait_for_quiet(0), 'the session exited');
	my @rows = split /\n/,
	  sql($admin,
		"SELECT w.wait_event_type || '/' || w.wait_event, w.calls, "
		  . '(SELECT sum(count) FROM pg_stat_waits_histogram(w.wait_event_type, w.wait_event)) '
		  . 'FROM pg_stat_waits w');
	cmp_ok(scalar @rows, '>', 0, 'timed events');
	for (@rows)
	{
		my ($event, $calls, $in_buckets) = split /\|/;
		is($in_buckets, $calls, "$event: buckets add up to calls");
	}
	my @b = map { [ split /\|/ ] } split /\n/,
	  sql($admin, "SELECT lower_ms, upper_ms FROM pg_stat_waits_histogram('Timeout', 'PgSleep')");
	is(scalar @b, 32, '32 buckets');
	is($b[0][0], 0, 'the first from 0');
	is((grep { $b[$_][0] != $b[ $_ - 1 ][1] } 1 .. $#b), 0, 'each starting where the last ended');
	ok(!eval { sql($admin, "SELECT * FROM pg_stat_waits_histogram('Timeout', 'NoSuchEvent')"); 1 },
		'an unknown event is refused');
};

subtest 'ALTER SYSTEM and reload time every session' => sub {
	my $s = psw_session($node);    # never SETs timing itself
	# A statement that reports its own queryid, so its sleep can be found in
	# pg_stat_waits_queries even if other sessions sleep meanwhile (with
	# timing on for the whole server, every process is timed).
	my $stmt = 'SELECT (SELECT queryid FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()), '
	  . 'pg_sleep(0.05)';
	my ($qid) = split /\|/, sql($admin, $stmt);    # timing is off here: not counted
	my ($calls0, $ms0) = query_event($qid, 'Timeout', 'PgSleep');
	sql($admin, 'ALTER SYSTEM SET pg_stat_waits.timing = on');
	sql($admin, 'SELECT pg_reload_conf()');
	my $on = wait_until(sub { sql($s, 'SHOW pg_stat_waits.timing') eq 'on' });
	my $client_ms = $on ? timed_sql($s, $stmt) : 0;
	sql($admin, 'ALTER SYSTEM RESET pg_stat_waits.timing');
	sql($admin, 'SELECT pg_reload_conf()');
	ok($on, 'the reload reached the session');
	my ($calls1, $ms1) = query_event($qid, 'Timeout', 'PgSleep');
	# pg_sleep waits again when its latch wakes it early (seen once here
	# right after a reload: two calls adding up to the 50 ms), so count the
	# calls as at least one and bound the time.
	cmp_ok($calls1 - $calls0, '>=', 1, 'its sleep was counted');
	cmp_ok($ms1 - $ms0, '>=', 50, 'with its time');
	cmp_ok($ms1 - $ms0, '<=', $client_ms,
		sprintf('no more than the client\'s %.1f ms', $client_ms));
	ok(wait_until(sub { sql($s, 'SHOW pg_stat_waits.timing') eq 'off' }),
		'and the reset reached it too');
	$s->quit;
};

$admin->quit;
$node->stop;
done_testing();
