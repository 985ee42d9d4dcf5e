# The exact-timing wrapper's cost in ns per call, measured inside a backend
# with pg_stat_waits_bench_wrapper() of the test module (median of 5 runs
# of N calls each; the process's CPU time, so that other load on the
# machine does not count). Section "contrib" (and its metric rows) keeps
# the name of the mechanism that ran it as a feature's own script.
#
# The wrapper's own cost, around a no-op function (no syscall noise):
#   wrapper_ns mode=not_interposed  the no-op called through a pointer
#   wrapper_ns mode=timing_off      the no-op through the wrapper, timing off
#   wrapper_ns mode=timing_on       the no-op through the wrapper, timed
#   wrapper_overhead_ns mode=timing_off|timing_on   (minus not_interposed)
# Around a real interposed call, fsync(-1) (fails with EBADF: a cheap
# syscall):
#   syscall_ns mode=direct|timing_off|timing_on
#   clock_pair_ns    the two clock_gettime(CLOCK_MONOTONIC) alone
use strict;
use warnings;
use PswBench;
use Test::More;

bench_section('contrib');

my ($n, $runs) = @{ bench_size(full => [ 2000000, 5 ], quick => [ 200000, 5 ], smoke => [ 20000, 1 ]) };
note("timing wrapper: median of $runs runs of $n calls per mode");

my $node = bench_node('wrapper', 'psw_sampling');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_waits_test');
my $fsync = $node->safe_psql('postgres', "SELECT 'fsync' = ANY(interposed) FROM pg_stat_waits_status") eq 't';
diag('fsync is not interposed in this postgres; syscall_ns off/on measure the wrapper called directly')
  unless $fsync;

my %ns;
for my $mode (qw(noop_direct noop_off noop_on direct off on clock))
{
	$ns{$mode} = median(map { $node->safe_psql('postgres', "SELECT pg_stat_waits_bench_wrapper('$mode', $n)") } 1 .. $runs);
}
$node->stop;

# The rows, as the script's "name labels value=" lines made them.
my @rows = (
	[ 'wrapper_ns', 'mode=not_interposed', $ns{noop_direct}, 'a no-op called through a pointer, as the GOT calls it' ],
	[ 'wrapper_ns', 'mode=timing_off', $ns{noop_off}, 'the no-op through the wrapper, timing off' ],
	[ 'wrapper_ns', 'mode=timing_on', $ns{noop_on}, 'the no-op through the wrapper, timed' ],
	[ 'wrapper_overhead_ns', 'mode=timing_off', $ns{noop_off} - $ns{noop_direct}, 'what the wrapper adds, timing off' ],
	[ 'wrapper_overhead_ns', 'mode=timing_on', $ns{noop_on} - $ns{noop_direct}, 'what the wrapper adds, timed' ],
	[ 'syscall_ns', 'mode=direct', $ns{direct}, '`fsync(-1)` (fails with EBADF: a cheap syscall) called directly' ],
	[ 'syscall_ns', 'mode=timing_off', $ns{off}, '`fsync(-1)` through its wrapper, timing off' ],
	[ 'syscall_ns', 'mode=timing_on', $ns{on}, '`fsync(-1)` through its wrapper, timed' ],
	[ 'clock_pair_ns', '', $ns{clock}, 'the two clock readings of a timed call alone' ]);

my $chunk = '70_contrib';
md($chunk, "## 7. The timing wrapper's cost per call\n\n",
	"CPU time per call of `pg_stat_waits_bench_wrapper()` (test module) inside one backend: median of\n",
	"$runs runs of $n calls each per mode, the backend's own CPU time, so other load on the machine\n",
	"does not count. Timing off, a wrapper is one branch and a tail jump; timed, it adds the two clock\n",
	"readings and the bookkeeping of the wait.\n\n",
	"| call | metric | ns per call |\n", "|---|---|---:|\n");
for my $r (@rows)
{
	my ($name, $labels, $v, $what) = @$r;
	my $value = sprintf('%.2f', $v);
	metric('contrib', 'timing_wrapper', $name . ($labels ne '' ? " $labels" : ''), $value, '');
	md($chunk, "| $what | $name" . ($labels ne '' ? " $labels" : '') . " | $value |\n");
	ok($v > 0, "$name $labels: > 0 ns ($value)") unless $name eq 'wrapper_overhead_ns';
}
md($chunk, "\n");
ok($ns{noop_on} > $ns{noop_off}, 'a timed call costs more than one with timing off');
ok($ns{on} > $ns{direct}, 'a timed fsync costs more than a direct one') if $fsync;

done_testing();
