# Connection churn for pg_stat_waits' TAP tests (105_churn.pl, and
# 106_churn_long.pl at 1000 connections): slots must follow processes exactly
# — no leaked slots, no rows for exited pids, the same set of processes as
# pg_stat_activity — and exact timing must count every statement of every
# connection, short-lived or not.
package PswChurn;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use PswTest;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(churn);

my $marker =
  "SELECT queryid, 'psw-churn-marker' FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()";

# Starts pgbench in the background as application NAME with exact timing on,
# running SCRIPT (written to a file) with the given options.
sub start_pgbench
{
	my ($node, $name, $script, @options) = @_;
	my $file = $node->basedir . "/$name.sql";
	PostgreSQL::Test::Utils::append_to_file($file, $script);
	my %run = (out => '', err => '');
	local $ENV{PGAPPNAME} = $name;
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	$run{harness} = IPC::Run::start(
		[
			'pgbench', '-n', @options, '-f', $file, '-h', $node->host,
			'-p', $node->port, 'postgres'
		],
		'>', \$run{out}, '2>', \$run{err});
	return \%run;
}

# churn(NODE, HELD, CHURNING, SECONDS): HELD connections that each run the
# marker once and stay open, then for SECONDS, CHURNING pgbench clients that
# open a connection, run the marker, idle a moment and close it, over and
# over, while the views are compared every 200 ms.
sub churn
{
	my ($node, $held, $churning, $seconds) = @_;
	my $admin = psw_session($node);

	isnt(sql($admin, 'SELECT array_length(interposed, 1) FROM pg_stat_waits_status'),
		'', 'exact timing available');
	my ($marker_id) = split /\|/, sql($admin, $marker);
	my $count_markers = sub {
		return sql($admin,
			"SELECT coalesce(sum(calls), 0) FROM pg_stat_waits_queries WHERE queryid = $marker_id "
			  . "AND wait_event_type = 'CPU'");
	};
	my $before = $count_markers->();

	# (pgbench's \sleep counts microseconds in an int: 1000 s is near its limit.)
	my $holding = start_pgbench($node, 'psw_held', "$marker;\n\\sleep 1000 s\n",
		'-c', $held, '-j', '4', '-t', '1');
	ok( wait_until(
			sub {
				sql($admin,
					"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psw_held' "
					  . "AND state = 'idle' AND query LIKE '%psw-churn-marker%'") == $held;
			},
			300),
		"$held connections open, each after its marker")
	  or diag $holding->{err};

	my $churn = start_pgbench($node, 'psw_churn',
		"$marker;\n\\set idle random(0, 100)\n\\sleep :idle ms\n",
		'-C', '-c', $churning, '-j', '4', '-T', $seconds);
	# While churning, no pid may appear in our view that PostgreSQL does not
	# know, unless it started or exited between the two reads: then both
	# views must agree on it soon after (pg_stat_activity is a snapshot taken
	# at its first read in a statement, ours is live, so one recheck can
	# still straddle an exit). A stale row would disagree every time.
	my ($checks, @strays) = (0);
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		my %all = map { $_ => 1 } split /\n/, sql($admin, 'SELECT pid FROM pg_stat_activity');
		for my $pid (grep { !$all{$_} } split /\n/,
			sql($admin, 'SELECT pid FROM pg_stat_waits_activity'))
		{
			my $agree = 0;
			for my $try (1 .. 5)
			{
				my ($alive, $ours) = split /\|/,
				  sql($admin,
					"SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid = $pid), "
					  . "(SELECT count(*) FROM pg_stat_waits_activity WHERE pid = $pid)");
				if ($alive == $ours) { $agree = 1; last; }
				usleep(50_000);
			}
			push @strays, $pid unless $agree;
		}
		$checks++;
		usleep(200_000);
	}
	ok($churn->{harness}->finish, 'every churning connection and statement succeeded')
	  or diag $churn->{err};
	my ($opened) = $churn->{out} =~ /number of transactions actually processed: (\d+)/;
	$opened //= 0;
	cmp_ok($opened, '>', $churning, 'connections opened and closed (one per marker)');
	is_deeply(\@strays, [], "no pid of ours unknown to pg_stat_activity ($checks checks)");
	$holding->{harness}->kill_kill;

	# All connections are closed now: wait for their backends to exit, then
	# the two views must list exactly the same processes.
	ok( wait_until(
			sub {
				sql($admin,
					"SELECT count(*) FROM pg_stat_activity WHERE application_name IN ('psw_held', 'psw_churn')"
				) == 0;
			},
			60),
		'their backends gone');
	# Both lists in one statement, read again while they differ: a process
	# of the server's own (an autovacuum worker) may start or exit between
	# the two reads, while a stale or missing row of ours stays.
	my (@ours, @theirs);
	wait_until(
		sub {
			my ($o, $t) = split /\|/,
			  sql($admin,
				"SELECT (SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_waits_activity), "
				  . "(SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_activity)");
			@ours = split /,/, $o // '';
			@theirs = split /,/, $t // '';
			return "@ours" eq "@theirs";
		},
		10);
	is_deeply(\@ours, \@theirs, 'the same processes as pg_stat_activity');

	# No counter lost: exact timing counted every marker statement, each
	# flushed by its backend at statement end or exit.
	my $counted = $count_markers->() - $before;
	is($counted, $held + $opened, 'every marker statement counted by exact timing');
	note "churn: $held connections held, $opened opened and closed, "
	  . "$counted marker statements counted, $checks view checks, $seconds s";
	$admin->quit;
	return;
}

1;
