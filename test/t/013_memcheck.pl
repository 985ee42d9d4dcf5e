# valgrind memcheck of `postgres --single` with pg_stat_waits preloaded: no
# error may come from the extension's code. (Single-user mode loads
# shared_preload_libraries and runs every hook; bgworkers don't run there.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'valgrind is not installed' if system('valgrind --version >/dev/null 2>&1') != 0;

my $node = PostgreSQL::Test::Cluster->new('memcheck');
$node->init;
my $dir = $node->basedir;
my $log = "$dir/valgrind.log";
my ($out, $err) = ('', '');
IPC::Run::run(
	[ 'valgrind', '--quiet', '--error-limit=no', '--num-callers=40', '--suppressions=test/valgrind.supp',
	  "--log-file=$log", 'postgres', '--single', '-D', $node->data_dir,
	  '-c', 'shared_preload_libraries=pg_stat_waits', '-c', 'fsync=off', '-c', 'pg_stat_waits.timing=on', 'postgres' ],
	'<', 'test/memcheck.sql', '>', \$out, '2>', \$err);
my $vg = -e $log ? slurp_file($log) : '';
# Valgrind cannot run every server on every CPU: 19 calibrates its TSC with
# RDTSCP where CPUID reports it, and valgrind, which passes that bit on,
# does not emulate the instruction (SIGILL in PostgreSQL's own start-up,
# before any library is loaded). Then nothing of ours ran: skipped, and why.
if ($out !~ /memcheck_done/
	&& $vg =~ /signal 4 \(SIGILL\)\n==\d+==\s+Illegal opcode at address \S+\n==\d+==\s+at \S+: (\S+)/
	&& $vg !~ /pg_stat_waits/)
{
	plan skip_all => "valgrind cannot run this PostgreSQL on this CPU: SIGILL in its own $1, before any library loaded";
}
ok($out =~ /memcheck_done/ && $out =~ /memcheck_activity_rows = "t"/,
	'postgres --single ran the script under valgrind') or diag(substr($out . $err, -2000));
# Error blocks are separated by "==PID== " lines; count those naming our library.
my ($total, $ours, $blk) = (0, 0, '');
for my $line (split /\n/, $vg)
{
	$total++ if $line =~ /^==\d+== [A-Z][a-z]/;
	if ($line =~ /^==\d+== $/) { $ours++ if $blk =~ /pg_stat_waits/; $blk = ''; next; }
	$blk .= "$line\n";
}
$ours++ if $blk =~ /pg_stat_waits/;
note("memcheck: $total error line(s) reported, $ours block(s) involving pg_stat_waits");
is($ours, 0, 'no valgrind error in pg_stat_waits code') or diag(substr($vg, 0, 6000));
done_testing();
