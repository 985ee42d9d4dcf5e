# Load for the throughput sections (30_throughput, 35_paired): a pgbench run
# of a built-in workload, and N "SELECT 1" over one psql connection timed by
# the backend's own CPU time.
package PswBench::Load;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use PswBench;

our @EXPORT = qw(pgbench_builtin select1_cpu);

# pgbench_builtin(NODE, DB, MODE, CLIENTS, SECONDS): the tps of a run of
# the built-in script MODE (select-only, tpcb-like), simple protocol, or
# undef when pgbench failed. PGOPTIONS comes from the caller's %ENV.
sub pgbench_builtin
{
	my ($node, $db, $mode, $clients, $seconds) = @_;
	my $out = bench_pgbench($node, '-n', '-b', $mode, '-c', $clients,
		'-j', ($clients < 2 ? $clients : 2), '-T', $seconds, $db);
	my $tps = pgbench_tps($out);
	Test::More::diag("pgbench $mode -c $clients: no tps in its output:\n$out") unless defined $tps;
	return $tps;
}

# select1_cpu(NODE, N): N "SELECT 1;" sent by one psql (reading a pipe, as
# a script) over the Unix socket; returns the backend's CPU ns per statement
# (schedstat: kernel time and what a noisy machine steals from others do
# not blur it as they do wall clock) and the wall-clock ns per statement.
# Both are read once the backend is connected and once it has answered the
# last statement, so connection start-up and exit are left out. PGOPTIONS
# comes from the caller's %ENV.
sub select1_cpu
{
	my ($node, $n) = @_;
	my ($in, $out, $err) = ('SELECT pg_backend_pid();' . "\n", '', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port, '-d', 'postgres' ],
		'<', \$in, '>', \$out, '2>', \$err,
		IPC::Run::timeout(600));
	$h->pump until $out =~ /^(\d+)\n/;
	my $pid = $1;
	$out = '';
	my ($c0, $t0) = (proc_cpu_ns($pid), clock_gettime(CLOCK_MONOTONIC));
	# The answers go to /dev/null, and only the marker after them comes
	# back: it arrives once the backend has answered the last statement.
	$in .= "\\o /dev/null\n" . ("SELECT 1;\n" x $n) . "\\o\nSELECT 'select1 done';\n";
	$h->pump until $out =~ /select1 done\n/;
	my ($c1, $t1) = (proc_cpu_ns($pid), clock_gettime(CLOCK_MONOTONIC));
	$in .= "\\q\n";
	$h->finish or die "psql (select1) failed: $err";
	return (sprintf('%.0f', ($c1 - $c0) / $n), sprintf('%.0f', ($t1 - $t0) * 1e9 / $n));
}

1;
