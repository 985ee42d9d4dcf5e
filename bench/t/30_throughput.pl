# Throughput: pgbench select-only and tpcb-like at 1 client and 2 x cores
# clients on one cluster per configuration, all running at once, measured
# in interleaved rounds (A B C D E, then B C D E A, ...) so that drift of a
# shared machine spreads over every configuration; median and min..max per
# configuration. Plus N "SELECT 1" over one psql connection, timed by the
# backend's own CPU time (schedstat), which a noisy machine disturbs less
# than wall clock.
use strict;
use warnings;
use PswBench;
use PswBench::Load;
use Test::More;

bench_section('throughput');

my $cores = `nproc`;
chomp $cores;
my $hi = 2 * $cores;
my ($rounds, $t, $scale, $n1, @workloads) = @{
	bench_size(
		full => [ 5, undef, 4, 10000, [ 'select-only', 1 ], [ 'select-only', $hi ], [ 'tpcb-like', 1 ], [ 'tpcb-like', $hi ] ],
		quick => [ 2, 2, 1, 10000, [ 'select-only', 1 ], [ 'tpcb-like', $hi ] ],
		smoke => [ 1, 1, 1, 300, [ 'select-only', 1 ] ])
};
# Every configuration measurable here; at unit size the baseline and the
# one that adds the most, which exercises every path of the section.
my @cfgs = grep { cfg_available($_) } @BENCH_CONFIGS;
@cfgs = grep { $_ eq 'none' || $_ eq 'psw_timing' } @cfgs if bench_mode() eq 'smoke';
# Keep the full run inside its time budget as configurations land.
$t //= int(320 / (@workloads * @cfgs * $rounds));
$t = 2 if $t < 2 && bench_mode() ne 'smoke';
note("throughput (@cfgs; $rounds rounds x $t s)");

my %node;
for my $c (@cfgs)
{
	$node{$c} = bench_node('tp', $c, conf => [ 'synchronous_commit = off', 'autovacuum = off' ]);
	$node{$c}->safe_psql('postgres', 'CREATE DATABASE bench');
	my $out = bench_pgbench($node{$c}, '-i', '-q', '-s', $scale, 'bench');
	$node{$c}->safe_psql('bench', "SELECT to_regclass('pgbench_branches') IS NOT NULL") eq 't'
	  or die "pgbench -i failed:\n$out";
}

my (%tps, %cpu, %wall);
for my $r (1 .. $rounds)
{
	# The round's order: the list rotated by one more each round.
	my @order = map { $cfgs[ ($_ + $r - 1) % @cfgs ] } 0 .. $#cfgs;
	for my $wl (@workloads)
	{
		my ($mode, $clients) = @$wl;
		for my $c (@order)
		{
			my $v = pgbench_builtin($node{$c}, 'bench', $mode, $clients, $t);
			push @{ $tps{$c}{"$mode c=$clients"} }, $v if defined $v;
			metric('throughput_raw', $c, "$mode c=$clients round=$r", $v, 'tps');
		}
	}
	for my $c (@order)
	{
		my ($cpu, $wall) = select1_cpu($node{$c}, $n1);
		push @{ $cpu{$c} }, $cpu;
		push @{ $wall{$c} }, $wall;
		metric('select1_raw', $c, "cpu round=$r", $cpu, 'ns');
		metric('select1_raw', $c, "wall round=$r", $wall, 'ns');
	}
}
$node{$_}->stop for @cfgs;

# Summaries: "median min max n" in one value, as the report reads them.
my (%st_tps, %st_sel);
for my $c (@cfgs)
{
	for my $wl (@workloads)
	{
		my $p = "$wl->[0] c=$wl->[1]";
		my @st = stats_mmm(@{ $tps{$c}{$p} // [] });
		$st_tps{$c}{$p} = \@st;
		metric('throughput', $c, $p, join(' ', map { $_ // 'NA' } @st), 'tps median min max n');
		ok($st[3] == $rounds, "$c, $p: tps of every round ($st[3] of $rounds)");
		ok(($st[1] // 0) > 0, "$c, $p: tps > 0");
	}
	for my $k ([ cpu => \%cpu ], [ wall => \%wall ])
	{
		my @st = stats_mmm(@{ $k->[1]{$c} });
		$st_sel{$c}{ $k->[0] } = \@st;
		metric('select1', $c, $k->[0], join(' ', map { $_ // 'NA' } @st), 'ns median min max n');
		ok(($st[1] // 0) > 0, "$c, SELECT 1: backend $k->[0] ns per statement > 0");
	}
}

my $chunk = '30_throughput';
md($chunk, "## 3. Throughput\n\n",
	"pgbench (simple protocol, scale $scale, synchronous_commit = off, autovacuum = off) on one cluster per\n",
	"configuration, all running at once, $rounds interleaved rounds of $t s (the order rotates each round).\n",
	"tps: median [min – max]; Δ = median vs no extension. \"within spread\": the median lies inside the\n",
	"no-extension min–max range. Configurations not listed are not available in this build.\n\n",
	"| workload | clients | configuration | tps median [min – max] | Δ vs no extension | within spread |\n",
	"|---|---:|---|---:|---:|---|\n");
for my $wl (@workloads)
{
	my ($mode, $clients) = @$wl;
	my $p = "$mode c=$clients";
	my ($base, $bmin, $bmax) = @{ $st_tps{none}{$p} };
	for my $c (@cfgs)
	{
		my ($m, $lo, $hi2) = @{ $st_tps{$c}{$p} };
		my ($pct, $inside) = ('—', '—');
		if ($c ne 'none')
		{
			$pct = defined $m && $base ? fmt(100 * ($m - $base) / $base, 1) . ' %' : 'n/a';
			$inside = !defined $m || !defined $bmin ? 'n/a' : $m >= $bmin && $m <= $bmax ? 'yes' : 'no';
		}
		md($chunk, "| $mode | $clients | " . cfg_label($c) . ' | '
			  . fmt($m, 0) . ' [' . fmt($lo, 0) . ' – ' . fmt($hi2, 0) . "] | $pct | $inside |\n");
	}
}
md($chunk, "\n**$n1 × `SELECT 1` over one psql connection** (Unix socket): the backend's CPU time per statement\n",
	"(schedstat of the backend process) and wall clock per statement; median [min – max] of $rounds rounds.\n\n",
	"| configuration | backend CPU ns / statement | Δ vs no extension | wall ns / statement |\n",
	"|---|---:|---:|---:|\n");
my $base = $st_sel{none}{cpu}[0];
for my $c (@cfgs)
{
	my ($m, $lo, $hi2) = @{ $st_sel{$c}{cpu} };
	my ($w, $wlo, $whi) = @{ $st_sel{$c}{wall} };
	my $pct = $c eq 'none' ? '—' : defined $m && $base ? fmt(100 * ($m - $base) / $base, 1) . ' %' : 'n/a';
	md($chunk, '| ' . cfg_label($c) . ' | ' . fmt($m, 0) . ' [' . fmt($lo, 0) . ' – ' . fmt($hi2, 0) . "] | $pct | "
		  . fmt($w, 0) . ' [' . fmt($wlo, 0) . ' – ' . fmt($whi, 0) . "] |\n");
}
md($chunk, "\n");

done_testing();
