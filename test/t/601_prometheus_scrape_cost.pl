
# Copyright (c) pg_stat_waits developers

# What one exporter scrape costs the server: CPU time (utime + stime from
# /proc/PID/stat) of the backend serving the exporter over many scrapes, on a
# server with a handful of profile keys and again with the profile full
# (10,000 keys, the default profile_max), at the default history size. The
# figures are printed (note) for docs/exporters.md; the test fails when a
# scrape costs more than 100 ms of server CPU at 10,000 keys (measured: about
# 30 ms on a loaded 2-core machine), which would mean it reads far more than
# the profile once.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use Time::HiRes qw(sleep time);

plan skip_all => 'needs Linux /proc' unless -r "/proc/$$/stat";
my $exporter_bin = psw_report_bin();
plan skip_all => 'pg_stat_waits_report not found in PATH (or $PSW_REPORT)'
  unless $exporter_bin && -x $exporter_bin;
my $scrapes = $ENV{PSW_SCRAPES} // 100;

my $node = PostgreSQL::Test::Cluster->new('scrape_cost');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'
pg_stat_waits.timing = on
max_connections = 60
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits; CREATE ROLE psw_monitor LOGIN; GRANT pg_read_all_stats TO psw_monitor;');

my $port = PostgreSQL::Test::Cluster::get_free_port();
my ($out, $err) = ('', '');
my $exporter;

# An exporter of its own for each measurement: --slow-interval 1s makes
# every scrape read everything (the per-query table included); the default
# (1min) reads that table once here and serves it from the cache after.
sub start_exporter
{
	my ($slow) = @_;
	$exporter = IPC::Run::start(
		[
			$exporter_bin, 'serve', '--listen', "127.0.0.1:$port", '--slow-interval', $slow, '--target',
			sprintf('db=host=%s port=%d dbname=postgres user=psw_monitor', $node->host, $node->port)
		],
		'>', \$out, '2>', \$err);
}

sub stop_exporter
{
	$exporter->signal('TERM');
	$exporter->finish;
	$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'psw_monitor'");
}

sub scrape
{
	my ($o, $e) = ('', '');
	IPC::Run::run([ 'curl', '-sS', '--max-time', '30', "http://127.0.0.1:$port/probe?target=db" ],
		'>', \$o, '2>', \$e);
	return $o;
}

sub backend_cpu_seconds
{
	my ($pid) = @_;
	open my $f, '<', "/proc/$pid/stat" or die "/proc/$pid/stat: $!";
	my $line = <$f>;
	close $f;
	$line =~ s/^.*\) //;    # after "pid (comm) "
	my @f = split / /, $line;
	# fields 14 and 15 of stat(5), here 11 and 12 (0-based after the comm)
	return ($f[11] + $f[12]) / 100.0;    # USER_HZ is 100 on Linux
}

# Measures $scrapes scrapes; returns (CPU ms per scrape, wall ms per scrape).
sub measure
{
	my ($label) = @_;
	my $first = '';
	for (1 .. 50) { $first = scrape(); last if $first =~ /pg_stat_waits_up\{target="db"\} 1/; sleep 0.2; }
	like($first, qr/pg_stat_waits_up\{target="db"\} 1/, "$label: the target is up");
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE usename = 'psw_monitor'");
	ok($pid > 0, "$label: the exporter's backend is $pid");
	my $series = () = $first =~ /^pg_stat_waits_/mg;
	my $c0 = backend_cpu_seconds($pid);
	my $t0 = time;
	# one curl for all scrapes, so the client's start-up stays out of the wall time
	my ($o, $e) = ('', '');
	IPC::Run::run([ 'curl', '-sS', '--max-time', '600',
		("http://127.0.0.1:$port/probe?target=db") x $scrapes ], '>', \$o, '2>', \$e);
	my $wall = (time - $t0) * 1000 / $scrapes;
	my $answered = () = $o =~ /^pg_stat_waits_up\{target="db"\} 1$/mg;
	is($answered, $scrapes, "$label: every scrape answered with up 1");
	my $cpu = (backend_cpu_seconds($pid) - $c0) * 1000 / $scrapes;
	my $st = $node->safe_psql('postgres',
		'SELECT history_used || \'/\' || history_size, profile_entries FROM pg_stat_waits_status');
	note sprintf('%s: %.2f ms backend CPU per scrape, %.1f ms wall per scrape (exporter + server) (%d scrapes, %d series, history %s, profile keys %s)',
		$label, $cpu, $wall, $scrapes, $series, split /\|/, $st);
	return ($cpu, $wall);
}

start_exporter('1s');
my ($cpu_small) = measure('few profile keys, every scrape reads all');
stop_exporter();

# Fill the profile: 100 roles x 100 distinct statements (queryids differ by
# their column count), each sleeping long enough to be sampled.
$node->safe_psql('postgres',
	join '', map { "CREATE ROLE psw_u$_ LOGIN; " } 1 .. 100);
my $cols = '';
my $sql = '';
for my $i (1 .. 100) { $cols .= ',1'; $sql .= "SELECT pg_sleep(0.025)$cols;\n"; }
my $sqlfile = PostgreSQL::Test::Utils::tempdir . '/distinct.sql';
open my $sf, '>', $sqlfile or die;
print $sf $sql;
close $sf;
for my $batch (0 .. 4)
{
	my @h;
	for my $u (1 + 20 * $batch .. 20 + 20 * $batch)
	{
		my ($o, $e) = ('', '');
		push @h, IPC::Run::start(
			[ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres') . " user=psw_u$u", '-f', $sqlfile ],
			'>', \$o, '2>', \$e);
	}
	$_->finish for @h;
}
my $keys = $node->safe_psql('postgres', 'SELECT profile_entries FROM pg_stat_waits_status');
note "profile keys after the fill: $keys";
cmp_ok($keys, '>=', 9000, 'the profile is (nearly) full');

my $qrows = $node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_waits_queries');
note "per-query timing rows: $qrows";
start_exporter('1s');
my ($cpu_all) = measure("$keys profile keys, every scrape reads all");
stop_exporter();
start_exporter('1min');
my ($cpu_cached) = measure("$keys profile keys, per-query table cached");
stop_exporter();
note sprintf('at a 15 s scrape interval with the default --slow-interval 1min: %.1f ms per scrape on average',
	$cpu_cached + ($cpu_all - $cpu_cached) / 4);
# Bound: a scrape reads the profile once (its reader dominates) and little
# else. Generous, because CPU time on a machine shared with builds varies by
# 2x between runs; the figures above are what to compare.
cmp_ok($cpu_cached, '<', 100, 'a scrape at a full profile costs the server under 100 ms of CPU');

$node->stop;
done_testing();
