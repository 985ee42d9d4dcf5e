# Load plus readers: pgbench at 2 x cores clients while another session loops
# over every reader (and reset): no error, no deadlock, and no backend ever
# waits on the extension (its LWLock tranche never shows in their waits).
# 5 s by default; 60 s under --long.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use PswTest;

my $secs = psw_long() ? 60 : 5;
chomp(my $cores = `nproc`);
my $clients = 2 * $cores;
my $node = psw_node('load');
$node->safe_psql('postgres', 'CREATE DATABASE psw_load');
$node->safe_psql('psw_load', 'CREATE EXTENSION pg_stat_waits');
$node->command_ok([ 'pgbench', '-q', '-i', '-s', '2', '-h', $node->host, '-p', $node->port, 'psw_load' ], 'pgbench -i');

# Every view and function of the extension, plus reset.
my $readers = join(";\n",
	'SELECT count(*) FROM pg_stat_waits_activity',
	'SELECT count(*) FROM pg_stat_waits_status',
	'SELECT count(*) FROM pg_stat_waits_history',
	'SELECT count(*) FROM pg_stat_waits_profile',
	'SELECT count(*) FROM pg_stat_waits',
	'SELECT count(*) FROM pg_stat_waits_queries',
	"SELECT count(*) FROM pg_stat_waits_top('1 minute')",
	"SELECT count(*) FROM pg_stat_waits_timeline('5 minutes', '10 seconds')",
	'SELECT pg_stat_waits_reset()') . ";\n";

my ($bench_out, $bench_err) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', $clients, '-j', $cores, '-T', $secs, '-h', $node->host, '-p', $node->port, 'psw_load' ],
	'>', \$bench_out, '2>', \$bench_err);
my ($loops, $reader_errors, $ext_waits, $polls, $first_error) = (0, 0, 0, 0, '');
my $end = time() + $secs;
while (time() < $end)
{
	my ($rc, $out, $err) = $node->psql('psw_load', $readers);
	if ($rc != 0) { $reader_errors++; $first_error ||= $err; }
	$loops++;
	# Any client backend waiting on the extension's LWLock tranche?
	$ext_waits += $node->safe_psql('psw_load',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND wait_event = 'pg_stat_waits'");
	$polls++;
}
my $bench_ok = eval { $bench->finish; 1 };
my ($tps) = $bench_out =~ /^tps = ([0-9.]+)/m;
note("load+readers: ${secs}s, $clients clients, tps=" . ($tps // '?') . ", $loops reader loops, $polls wait polls");
ok($bench_ok && defined $tps && "$bench_out$bench_err" !~ /error|aborted/i, 'pgbench ran without errors under the readers')
  or diag($bench_out . $bench_err);
is($reader_errors, 0, 'readers ran without errors') or diag($first_error);
cmp_ok($loops, '>=', 3, 'readers kept looping (not stuck)');
is($ext_waits, 0, 'no backend ever waited on the pg_stat_waits LWLock');
$node->stop;
done_testing();
