# Section 1, over a Unix socket: the postmaster runs under callgrind, which
# follows its forks, and a client sends N and then 2N "SELECT 1;" in one
# connection each; the slope of its backend's own count is a client's
# statement in production, with the wait for the next message, its read and
# the result's send that postgres --single never makes (timed waits with
# timing on). Two clients: psql, which answers each result at once, and
# pgbench pausing 3 ms after each, as behind a network (the backend then
# really waits for every next message). Each configuration's allocator share
# and pg_stat_waits' self cost by function come from the same profiles.
use strict;
use warnings;
use PswBench;
use PswBench::Callgrind;
use PswBench::CallgrindRender;
use Test::More;

bench_section('callgrind');
cg_require();

my $smoke = bench_mode() eq 'smoke';
my $n = cg_n_socket();
my $data = cg_initdb('cg_socket');
my $dir = cg_dir();
cg_input($_) for ($n, 2 * $n);

# psql sends K "SELECT 1;" (one round trip each, as pgbench's simple
# protocol), answering each result at once.
my $psql = sub {
	my ($k, $sock, $port) = @_;
	system(cg_bin('psql') . " -XAtq -h '$sock' -p $port -U postgres -d postgres <'" . cg_input($k) . "' >/dev/null 2>&1");
};

# pgbench sends K "SELECT 1;", pausing 3 ms after each result (\sleep 3 ms),
# as a client behind a network does: the backend then really waits for
# every next message (ClientRead), which a client that answers at once may
# spare it.
my $pause = sub {
	my ($k, $sock, $port) = @_;
	open my $fh, '>', "$sock/pause.sql" or die "$sock/pause.sql: $!";
	print $fh "SELECT 1;\n\\sleep 3 ms\n";
	close $fh;
	system(cg_bin('pgbench') . " -n -h '$sock' -p $port -U postgres -f '$sock/pause.sql' -t $k postgres >/dev/null 2>&1");
};

# The unit size starts one postmaster (most of its time under valgrind):
# the paused client on the timing configuration, breakdown by function
# included.
my %plan = (
	callgrind_socket => [ $psql, @BENCH_CONFIGS[ 1 .. $#BENCH_CONFIGS ] ],
	callgrind_pause => [
		$pause, $smoke ? (cfg_available('psw_timing') ? 'psw_timing' : 'none_qid') : @BENCH_CONFIGS[ 1 .. $#BENCH_CONFIGS ]
	]);
for my $section ($smoke ? qw(callgrind_pause) : qw(callgrind_socket callgrind_pause))
{
	my ($client, @cfgs) = @{ $plan{$section} };
	note("$section: per-statement instructions of a client backend (callgrind, N=$n and 2N)");
	metric($section, 'none_qid', 'statements', $n, 'count');
	my $slope = sub { cg_client_slope($section, $client, $data, $n, @_) };
	my %v;
	if ($smoke)
	{
		my $cfg = $cfgs[0];
		$v{$cfg} = $slope->($cfg, '');
		metric($section, $cfg, 'instr_per_stmt', $v{$cfg}, 'instr');
	}
	else
	{
		%v = %{ cg_measure_configs($section, 'instr_per_stmt', $slope, @cfgs) };
	}
	for my $cfg (sort keys %v)
	{
		ok(defined $v{$cfg} && $v{$cfg} > 5000 && $v{$cfg} < 500000,
			"$section $cfg: plausible slope (" . ($v{$cfg} // 'none') . ')');
		my $calls = metric_get($section, $cfg =~ s/_repeat$//r, 'alloc_calls' . ($cfg =~ /_repeat$/ ? '_repeat' : ''));
		ok(defined $calls && $calls > 0, "$section $cfg: glibc's allocator called per statement (" . ($calls // 'none') . ')');
	}
}
if (cfg_available('psw_timing'))
{
	ok(grep({ $_->[0] eq 'callgrind_pause_self' && $_->[1] eq 'psw_timing' } metrics()),
		'timing over a socket: breakdown by function recorded');
}

cg_render();
ok(-s bench_dir() . '/10_callgrind.md', 'section 1 written');
done_testing();
