# Section 1, single-user: valgrind's callgrind counts the instructions
# postgres --single executes for N and for 2N "SELECT 1;" lines; the slope
# (I(2N) - I(N)) / N is the cost of one statement, start-up and shutdown
# cancel. Deterministic to a few instructions, unlike any timing.
# Single-user mode loads shared_preload_libraries (hooks, shared memory) but
# starts no background worker, so the sampler's cost is measured elsewhere.
# Also: where pg_stat_waits' instructions go (by function, by object), the
# cost of one timed wait (the exact-timing wrapper) and, in the full run,
# the baseline repeated and the slope against max_connections.
use strict;
use warnings;
use PswBench;
use PswBench::Callgrind;
use PswBench::CallgrindProfile;
use PswBench::CallgrindRender;
use Test::More;

bench_section('callgrind');
cg_require();

my $smoke = bench_mode() eq 'smoke';
my $n = cg_n_single();
note("per-statement instructions (callgrind, N=$n and 2N SELECT 1)");
my $data = cg_initdb('cg');

# The unit size measures one configuration, the one with most to count.
my @cfgs = $smoke ? qw(psw_timing) : ('none', 'none_qid', @BENCH_CONFIGS[ 1 .. $#BENCH_CONFIGS ]);
for my $cfg (@cfgs)
{
	if ($cfg ne 'none_qid' && !cfg_available($cfg))
	{
		metric('callgrind', $cfg, 'instr_per_stmt', undef, 'instr', feature_why($cfg));
		next;
	}
	my $v = cg_single_slope($data, $n, $cfg, keep => 1, args => [ '-c', 'max_connections=100' ]);
	metric('callgrind', $cfg, 'instr_per_stmt', $v, 'instr', feature_why($cfg));
	ok(defined $v && $v > 5000 && $v < 500000, "$cfg: plausible single-user slope (" . ($v // 'none') . ')');
}

# Where the extension's instructions go (from the profiles just kept).
my $dir = cg_dir();
for my $cfg (grep { cfg_available($_) } qw(psw_sampling psw_timing))
{
	cg_breakdown_files('callgrind_self', $cfg, $n, "$dir/cg_$cfg.$n.out", "$dir/cg_$cfg." . (2 * $n) . '.out');
}
cg_objects($n, grep { -s "$dir/cg_$_.$n.out" } qw(none none_qid psw_sampling psw_timing));
# glibc's allocator per statement, as over a socket: the acceptance checks
# price its calls at the baseline's cost per call (PswBench::CallgrindFigures).
for my $cfg (grep { -s "$dir/cg_$_.$n.out" } 'none_qid', @BENCH_CONFIGS)
{
	cg_allocator_metrics('callgrind', $cfg, $n, "$dir/cg_$cfg.$n.out", "$dir/cg_$cfg." . (2 * $n) . '.out', '');
}
if (cfg_available('psw_timing'))
{
	ok(metric_get('callgrind_self', 'psw_timing', 'psw::timing_statement_start(unsigned long)'),
		'timing: its statement start found in the breakdown by function');
	ok(metric_get('callgrind_object', 'psw_timing', 'pg_stat_waits.so') > 0,
		'timing: pg_stat_waits.so has instructions in the breakdown by object');
}

# The allocator's share, read from a kept profile: a backend's start-up
# alone allocates (its memory contexts' first blocks).
my ($ai, $ac) = cg_allocator("$dir/cg_$cfgs[-1]." . (2 * $n) . '.out');
ok($ai > 1000 && $ac > 10 && $ai > $ac, "glibc's allocator found in a profile ($ai instructions, $ac calls)");

if (bench_mode() eq 'full')
{
	# Determinism: the baseline measured again, single runs.
	metric('callgrind', 'none', 'instr_per_stmt_repeat',
		cg_single_slope($data, $n, 'none', args => [ '-c', 'max_connections=100' ]), 'instr');
	# Scaling: per-statement cost against the number of backend slots.
	for my $mc (100, 500, 1000)
	{
		for my $cfg (qw(none psw_sampling))
		{
			metric('callgrind_scaling', $cfg, "max_connections=$mc",
				cg_single_slope($data, $n, $cfg, args => [ '-c', "max_connections=$mc" ]), 'instr');
		}
	}
	ok(defined metric_get('callgrind_scaling', 'psw_sampling', 'max_connections=1000'), 'max_connections scaling measured');
}

# What one timed wait costs: the test module's no-op behind the wrapper.
# The unit size calls it fewer times, with timing on only.
if (cfg_available('psw_timing'))
{
	cg_wrapper($data, cg_wrapper_calls(),
		$smoke ? qw(noop_on) : qw(noop_direct noop_off noop_on));
	my $w = metric_get('callgrind_wrapper', 'noop_on', 'instr_per_call');
  SKIP:
	{
		skip feature_why('release_build'), 1 unless feature('release_build');
		ok(defined $w && $w > 0, 'instructions per call of the timing wrapper (' . ($w // 'none') . ')');
	}
}

cg_render();
ok(-s bench_dir() . '/10_callgrind.md', 'section 1 written');
done_testing();
