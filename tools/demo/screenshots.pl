#!/usr/bin/perl
# ./run screenshots: the live report page of a demo workload, photographed
# by headless Chromium at 1400 and 800 px (docs/report.md shows them). A
# throwaway node, the demo's kind of workload (pgbench, a session holding a
# row lock others wait for), serve's /report/NAME. ./run runs it as the
# cluster user (tools/lib/test_runner.sh, run_tool) and copies the pictures
# into docs/img/.
#   tools/demo/screenshots.pl OUT_DIR     report-1400.png and report-800.png go there
use strict;
use warnings;

# PostgreSQL::Test::Utils sends standard error to its log file when it
# loads; the progress lines go to the terminal, through a copy made first.
my $ERR;
BEGIN
{
	open($ERR, '>&', \*STDERR) or die "stderr: $!";
	$ERR->autoflush(1);
}
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PswTest;

my $out_dir = shift // die "usage: $0 OUT_DIR\n";
my $db = 'psw_demo';
my $cdp = "$FindBin::RealBin/../../test/report/cdp_page.py";

sub say_step { print $ERR "\033[1m==> @_\033[0m\n"; }

my $node = psw_node('screenshots', conf => ['pg_stat_waits.timing = on']);
$ENV{PGHOST} = $node->host;
$ENV{PGPORT} = $node->port;
$node->safe_psql('postgres', "CREATE DATABASE $db");
$node->safe_psql($db, 'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_statements');
my ($o, $e);
IPC::Run::run([ 'pgbench', '-q', '-i', '-s', '2', $db ], '>', \$o, '2>', \$e)
  or die "pgbench -i failed: $e";
say_step('workload: pgbench, 4 clients, and a session holding a teller\'s row lock (30 s)');
my @procs = (IPC::Run::start([ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '30', $db ],
		'>', \my $bench_out, '2>&1'));
push @procs,
  IPC::Run::start([ 'psql', '-X', '-q', '-d', $db,
		map { ('-c', 'BEGIN', '-c', 'UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1',
				'-c', 'SELECT pg_sleep(4)', '-c', 'COMMIT') } 1 .. 5 ],
	'>', \my $holder_out, '2>&1');
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $serve = IPC::Run::start([ psw_report_bin(), 'serve', '--listen', "127.0.0.1:$port", '-d', $db ],
	'>', "$out_dir/serve.log", '2>&1');
# The serving process goes even when a picture fails.
END { local $?; $serve->kill_kill if $serve && $serve->pumpable; }
sleep 25;
for my $w (1400, 800)
{
	say_step("report-$w.png");
	my ($cdp_out, $cdp_err);
	IPC::Run::run([ 'python3', $cdp, "http://127.0.0.1:$port/report/default?window=5min", $w,
			'--shot', "$out_dir/report-$w.png" ], '>', \$cdp_out, '2>', \$cdp_err)
	  or die "cdp_page.py at $w px failed:\n$cdp_err";
}
$serve->kill_kill;
$_->finish for @procs;
$node->stop;
