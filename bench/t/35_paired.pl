# Timing on against off in pairs on one cluster: what exact timing costs a
# busy server, measured so that the machine's drift cancels. Section 3 runs
# one cluster per configuration at once and compares medians against the
# no-extension spread; on a shared 2-core VM that spread is ±25 %, wider
# than the cost. Here one cluster with pg_stat_waits loaded runs both modes,
# switched per connection (PGOPTIONS: timing is a superuser GUC), in short
# back-to-back pairs whose order alternates, and the figure is the median of
# the pairs' ratios (or differences). Two pgbench workloads, those of issue
# 56's acceptance: select-only with 4 clients (one-row statements, the
# timed path's worst share) and tpcb-like at scale 1 with 16 clients (every
# transaction updates the one branch row: most of the time goes to lock and
# LWLock waits, each of them timed).
use strict;
use warnings;
use PswBench;
use PswBench::Load;
use Test::More;

bench_section('paired');

my ($pairs, $rounds, $t, $n1, $scale_so) = @{
	bench_size(
		full => [ 12, 40, 3, 5000, 4 ],
		quick => [ 4, 6, 2, 2000, 4 ],
		# Unit size: select-only at scale 1 spares a second pgbench -i.
		smoke => [ 1, 1, 1, 300, 1 ])
};
# The workloads: key (names the metrics), mode, scale, clients.
my @workloads = ([ 'select-only_c4', 'select-only', $scale_so, 4 ], [ 'tpcb-like_s1_c16', 'tpcb-like', 1, 16 ]);
my $chunk = '35_paired';

if (!cfg_available('psw_timing'))
{
	md($chunk, "## 3b. Timing on against off, in pairs\n\n",
		'not available: ' . (feature_why('psw_timing') || 'exact timing is not in this build') . "\n\n");
	plan skip_all => 'exact timing is not in this build';
}
note("timing on/off in pairs on one cluster ($pairs pairs of $t s per workload, $rounds rounds of $n1 SELECT 1)");

my $node = bench_node('paired', 'psw_sampling', conf => [ 'synchronous_commit = off', 'autovacuum = off' ]);
my %db;
for my $wl (@workloads)
{
	my $scale = $wl->[2];
	next if $db{$scale};
	$db{$scale} = "bench_s$scale";
	$node->safe_psql('postgres', "CREATE DATABASE $db{$scale}");
	my $out = bench_pgbench($node, '-i', '-q', '-s', $scale, $db{$scale});
	$node->safe_psql($db{$scale}, "SELECT to_regclass('pgbench_branches') IS NOT NULL") eq 't'
	  or die "pgbench -i failed:\n$out";
}

# paired_run(I, FN): FN's measurement with timing on and with timing off,
# on first in odd pairs; returns (on, off).
sub paired_run
{
	my ($i, $fn) = @_;
	my %v;
	for my $mode ($i % 2 ? qw(on off) : qw(off on))
	{
		local $ENV{PGOPTIONS} = "-c pg_stat_waits.timing=$mode";
		$v{$mode} = $fn->();
	}
	return @v{qw(on off)};
}

my %st;
for my $wl (@workloads)
{
	my ($key, $mode, $scale, $clients) = @$wl;
	my @r;
	for my $i (1 .. $pairs)
	{
		my ($on, $off) = paired_run($i, sub { pgbench_builtin($node, $db{$scale}, $mode, $clients, $t) });
		next unless defined $on && defined $off && $off > 0;
		push @r, sprintf('%.6g', $on / $off);
		metric('paired_raw', 'psw_timing', "tps ratio $key pair=$i", $r[-1], 'ratio');
	}
	$st{$key} = [ stats_mmm(@r) ];
}
my (@diff, @off);
for my $i (1 .. $rounds)
{
	my ($on, $off) = paired_run($i, sub { (select1_cpu($node, $n1))[0] });
	push @diff, $on - $off;
	push @off, $off;
	metric('paired_raw', 'psw_timing', "cpu diff round=$i", $on - $off, 'ns');
	metric('paired_raw', 'psw_timing', "cpu off round=$i", $off, 'ns');
}
# Timing really was switched per connection: the GUC as a connection sees it.
{
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	is($node->safe_psql('postgres', 'SHOW pg_stat_waits.timing'), 'on', 'PGOPTIONS turns timing on for a connection');
}
$node->stop;

$st{cpu_diff} = [ stats_mmm(@diff) ];
$st{cpu_off} = [ stats_mmm(@off) ];
for my $wl (@workloads)
{
	metric('paired', 'psw_timing', "tps ratio $wl->[0]", join(' ', map { $_ // 'NA' } @{ $st{ $wl->[0] } }),
		'median min max n');
}
metric('paired', 'psw_timing', 'cpu diff', join(' ', map { $_ // 'NA' } @{ $st{cpu_diff} }), 'median min max n');
metric('paired', 'psw_timing', 'cpu off', join(' ', map { $_ // 'NA' } @{ $st{cpu_off} }), 'median min max n');
for my $wl (@workloads)
{
	my ($key, $mode, $scale, $clients) = @$wl;
	metric('paired', 'psw_timing', "workload $key", "$mode scale=$scale clients=$clients seconds=$t", 'text');
	is($st{$key}[3], $pairs, "$key: a tps ratio for every pair");
	ok(defined $st{$key}[0] && $st{$key}[1] > 0 && $st{$key}[2] < 100, "$key: ratios finite and positive");
}
ok(($st{cpu_off}[1] // 0) > 0, 'SELECT 1 with timing off: backend CPU ns > 0');

my ($d, $dlo, $dhi) = @{ $st{cpu_diff} };
my $base = $st{cpu_off}[0];
md($chunk, "## 3b. Timing on against off, in pairs\n\n",
	"One cluster with pg_stat_waits loaded (sampling on, `synchronous_commit = off`); exact timing switched\n",
	"per connection (`PGOPTIONS=-c pg_stat_waits.timing=on|off`), each pair run back to back with the order\n",
	"alternating, so the machine's drift between runs falls mostly inside a pair. Figures: median [min – max]\n",
	"over the pairs. Targets (issue 56): select-only with 4 clients ≥ 0.99, tpcb-like at scale 1 with 16\n",
	"clients (every transaction updates the one branch row: a wait-heavy workload) ≥ 0.98.\n\n",
	"| measurement | timing on against off |\n", "|---|---:|\n");
for my $wl (@workloads)
{
	my ($key, $mode, $scale, $clients) = @$wl;
	my ($r, $lo, $hi, $n) = @{ $st{$key} };
	md($chunk, "| pgbench $mode, scale $scale, $clients clients, $n pairs of $t s: tps on / off | "
		  . fmt($r, 3) . ' [' . fmt($lo, 3) . ' – ' . fmt($hi, 3) . "] |\n");
}
md($chunk, "| $n1 × `SELECT 1` over one psql connection, $rounds pairs: backend CPU ns / statement, on − off | "
	  . fmt($d, 0) . ' [' . fmt($dlo, 0) . ' – ' . fmt($dhi, 0) . '] ('
	  . fmt(defined $d && $base ? 100 * $d / $base : undef, 1) . ' % of ' . fmt($base, 0) . " with timing off) |\n\n",
	"The backend CPU time is the backend's own (schedstat), kernel time included: the clock readings and\n",
	"cache misses of the timed calls count here, which section 1's instruction counts do not.\n\n");

done_testing();
