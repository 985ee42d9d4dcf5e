# Connection churn for pg_stat_waits' TAP tests (105_churn.pl, and
# 106_churn_long.pl at 1000 connections): slots must follow processes exactly
# — no leaked slots, no rows for exited pids, the same set of processes as
# pg_stat_activity — and exact timing must count every statement of every
# short-lived connection.
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

# churn(NODE, CONNECTIONS, SECONDS): CONNECTIONS pgbench clients, each
# opening a connection, running the marker once, idling a moment and closing,
# over and over for SECONDS, while the views are compared every 200 ms.
sub churn
{
	my ($node, $connections, $seconds) = @_;
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

	my $script = $node->basedir . '/churn.sql';
	PostgreSQL::Test::Utils::append_to_file($script,
		"$marker;\n\\set idle random(0, 100)\n\\sleep :idle ms\n");
	my ($out, $err) = ('', '');
	local $ENV{PGAPPNAME} = 'psw_churn';
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-C', '-c', $connections, '-j', '4', '-T', $seconds,
			'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);

	# While churning, no pid may appear in our view that PostgreSQL does not
	# know, unless it exited between the two reads (then it must be gone from
	# both now).
	my ($checks, @strays) = (0);
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		my %all = map { $_ => 1 } split /\n/, sql($admin, 'SELECT pid FROM pg_stat_activity');
		for my $pid (grep { !$all{$_} } split /\n/,
			sql($admin, 'SELECT pid FROM pg_stat_waits_activity'))
		{
			my ($alive, $ours) = split /\|/,
			  sql($admin,
				"SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid = $pid), "
				  . "(SELECT count(*) FROM pg_stat_waits_activity WHERE pid = $pid)");
			push @strays, $pid if $alive != $ours;
		}
		$checks++;
		usleep(200_000);
	}
	ok($pgbench->finish, 'every connection and statement succeeded') or diag $err;
	my ($opened) = $out =~ /number of transactions actually processed: (\d+)/;
	$opened //= 0;
	cmp_ok($opened, '>', $connections, 'connections opened (one per marker)');
	is_deeply(\@strays, [], "no pid of ours unknown to pg_stat_activity ($checks checks)");

	# All churn connections are closed now: wait for their backends to exit,
	# then the two views must list exactly the same processes.
	ok( wait_until(
			sub {
				sql($admin,
					"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psw_churn'")
				  == 0;
			},
			30),
		'churn backends gone');
	my @ours = sort { $a <=> $b } split /\n/, sql($admin, 'SELECT pid FROM pg_stat_waits_activity');
	my @theirs = sort { $a <=> $b } split /\n/, sql($admin, 'SELECT pid FROM pg_stat_activity');
	is_deeply(\@ours, \@theirs, 'the same processes as pg_stat_activity');

	# No counter lost: exact timing counted every marker statement, each
	# flushed by its backend at statement end or exit.
	my $counted = $count_markers->() - $before;
	is($counted, $opened, 'every marker statement counted by exact timing');
	note "churn: $opened connections opened and marker statements run, $counted counted, "
	  . "$checks view checks, $seconds s";
	$admin->quit;
	return;
}

1;
