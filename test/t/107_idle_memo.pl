# The sampler's idle memo (src/pg/sampling/idle_memo.cpp) keeps sampling
# exact: it skips exactly the idle client backends, and a remembered
# backend that turns active on the CPU (no wait event to give it away) is
# sampled from the next tick on, also when it is a new process in the PGPROC
# a gone one left, or under track_activities = off; with sample_idle on the
# idle ones are sampled at every tick. The tick marker is a session in
# pg_sleep, sampled at every tick: each of its samples is one tick.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;
use Time::HiRes qw(usleep);

# Few connections: from 17 on a gone backend's PGPROC goes to the tail of
# the free list, and the reused-PGPROC check below connects until one takes
# it.
my $node = psw_node('idle_memo', extensions => 1, conf => ['max_connections = 14']);
my $admin = psw_session($node, 'CREATE EXTENSION pg_stat_waits_test');
ok(wait_until(sub { sql($admin, 'SELECT sampler_pid IS NOT NULL FROM pg_stat_waits_status') eq 't' }),
	'a sampler is running');

sub memo_last { return sql($admin, 'SELECT last_tick FROM pg_stat_waits_idle_memo_stats()'); }

# Idle sessions, each after one statement (so PostgreSQL's entry says idle).
my @idle = map { psw_session($node, 'SELECT 1') } 1 .. 4;
my $n_idle = @idle + 1;    # and the admin session, idle between its queries

# Skips per tick: the idle client backends and nothing else (no checkpointer,
# WAL writer, autovacuum launcher, nor the sampler itself).
ok(wait_until(sub { memo_last() == $n_idle }), "the memo skips the $n_idle idle client backends");
my @seen = map { usleep(20_000); memo_last() } 1 .. 25;
my ($max) = sort { $b <=> $a } @seen;
cmp_ok($max, '<=', $n_idle, "never more than the idle client backends (max $max over 25 ticks)");

# A CPU-bound statement of about $secs s: no wait event, so only the
# changecount can tell the memo that the backend is at work.
my $secs = 1;
my $spin = "DO \$\$BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$secs s' LOOP END LOOP; END\$\$";

my $marker = psw_session($node);
my $marker_pid = backend_pid($marker);

# sampled_every_tick(NAME, PID, STATE, FROM, TO): every tick between FROM
# and TO (timestamptz expressions) has a sample of PID in STATE.
sub sampled_every_tick
{
	my ($name, $pid, $state, $from, $to) = @_;
	my ($ticks, $missed) = split /\|/, sql($admin, "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (
			SELECT 1 FROM pg_stat_waits_history s WHERE s.pid = $pid AND s.state = '$state' AND s.sample_time = m.sample_time))
		FROM pg_stat_waits_history m WHERE m.pid = $marker_pid AND m.sample_time > $from AND m.sample_time < $to");
	cmp_ok($ticks, '>=', 10, "$name: ticks in the window ($ticks)");
	is($missed, 0, "$name: sampled at each of them");
	return;
}

# run_spin(NAME, SESSION): the session, remembered idle, runs $spin while
# the marker sleeps; each tick from 5 ms after its start to 50 ms before its
# end has its sample.
sub run_spin
{
	my ($name, $s) = @_;
	my $pid = backend_pid($s);
	usleep(200_000);    # a few ticks idle: remembered
	send_sql($marker, 'SELECT pg_sleep(' . ($secs + 1) . ')');
	ok(wait_for_state($admin, $marker_pid, 'wait_event', 'PgSleep'), "$name: the marker sleeps");
	sql($s, $spin);
	finish_sql($marker);
	my $start = sql($admin, "SELECT max(query_start) FROM pg_stat_waits_history WHERE pid = $pid AND state = 'active'");
	return fail("$name: the statement has samples") if $start eq '';
	sampled_every_tick($name, $pid, 'active', "'$start'::timestamptz + interval '5 ms'",
		"'$start'::timestamptz + interval '" . ($secs * 1000 - 50) . " ms'");
	return;
}

run_spin('an idle backend turning active', $idle[0]);

# A new backend in the PGPROC a gone one left: it is connected until one
# takes that PGPROC (others are kept open meanwhile so that the next one
# cannot take the same free one again).
{
	my $old_pid = backend_pid($idle[1]);
	my $procno = sql($admin, "SELECT pg_stat_waits_procno($old_pid)");
	$idle[1]->quit;
	ok(wait_until(sub { sql($admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = $old_pid") == 0 }),
		'the old backend is gone');
	my $gone = sql($admin, 'SELECT clock_timestamp()');
	my ($new, @others);
	for (1 .. 20)
	{
		my $s = psw_session($node, 'SELECT 1');
		if (sql($admin, 'SELECT pg_stat_waits_procno(' . backend_pid($s) . ')') eq $procno)
		{
			$new = $s;
			last;
		}
		push @others, $s;
	}
	ok(defined $new, "a new backend took PGPROC $procno");
	run_spin('a new backend in a reused PGPROC', $new) if defined $new;
	is(sql($admin, "SELECT count(*) FROM pg_stat_waits_history WHERE pid = $old_pid AND sample_time > '$gone'"), 0,
		'nothing is sampled as the old backend once it is gone');
	$_->quit for grep { defined } $new, @others;
}

# track_activities = off: PostgreSQL's entry says disabled and no longer
# changes at statements, so it is never remembered.
{
	my $s = psw_session($node, 'SET track_activities = off', 'SELECT 1');
	is(sql($admin, 'SELECT state FROM pg_stat_activity WHERE pid = ' . backend_pid($s)), 'disabled',
		'track_activities = off: the entry says disabled');
	run_spin('track_activities = off', $s);
	$s->quit;
}

# sample_idle = on: every idle backend at every tick, whatever was remembered.
{
	my $pid = backend_pid($idle[2]);
	sql($admin, 'ALTER SYSTEM SET pg_stat_waits.sample_idle = on');
	sql($admin, 'SELECT pg_reload_conf()');
	ok(wait_until(sub { sql($admin, "SELECT count(*) FROM pg_stat_waits_history WHERE pid = $pid") > 0 }),
		'sample_idle = on: the idle backend is sampled');
	is(memo_last(), 0, 'sample_idle = on: the memo skips nothing');
	my $from = sql($admin, 'SELECT clock_timestamp()');
	send_sql($marker, 'SELECT pg_sleep(1)');
	finish_sql($marker);
	sampled_every_tick('sample_idle = on', $pid, 'idle', "'$from'::timestamptz + interval '50 ms'", 'clock_timestamp()');
	sql($admin, 'ALTER SYSTEM RESET pg_stat_waits.sample_idle');
	sql($admin, 'SELECT pg_reload_conf()');
	ok(wait_until(sub { memo_last() > 0 }), 'sample_idle back off: the memo skips again');
}

# The test build's switch: off, the sampler skips the same backends by the
# quick test alone.
is(sql($admin, 'SELECT pg_stat_waits_idle_memo(false)'), 't', 'the memo was on');
ok(wait_until(sub { memo_last() == 0 }), 'switched off, the memo skips nothing');
run_spin('memo off', $idle[3]);
is(sql($admin, 'SELECT pg_stat_waits_idle_memo(true)'), 'f', 'switched back on');

$_->quit for $marker, $idle[0], $idle[2], $idle[3];
$admin->quit;
$node->stop;
done_testing();
