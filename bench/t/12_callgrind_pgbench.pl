# Section 1, per pgbench transaction: what each tool adds to a whole
# TPC-B-like transaction of a client over a Unix socket (BEGIN, three
# UPDATEs, a SELECT, an INSERT, END: seven round trips), counted instead of
# timed. The throughput section measures the same workload in transactions
# per second, but on a shared 2-core machine its rounds move by more than
# any of these tools costs; this count is deterministic enough to compare.
# Last file of the section: its render completes the chunk.
use strict;
use warnings;
use File::Path qw(make_path remove_tree);
use PswBench;
use PswBench::Callgrind;
use PswBench::CallgrindProfile;
use PswBench::CallgrindRender;
use Test::More;

bench_section('callgrind');
cg_require();

my $smoke = bench_mode() eq 'smoke';
my $n = bench_size(full => 500, quick => 250, smoke => 5);
my $dir = cg_dir();

# The same transactions in every run: pgbench's random account, teller and
# branch choices come from this seed.
my $seed = 7;

# A cluster initialized by pgbench -i (scale 1: 100,000 accounts) and shut
# down cleanly. Each configuration's run starts from a copy of it, so all
# see the same rows and the same cache state at the start.
my $template = cg_initdb('cg_pgbench');
{
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	system(cg_bin('pg_ctl'), '-D', $template, '-l', "$dir/init.log", '-w', '-t', '120', '-s', '-o',
		"-p $port -k $dir -c listen_addresses=", 'start') == 0
	  or BAIL_OUT('cannot start the pgbench template');
	my $out = `'${\ cg_bin('pgbench')}' -h '$dir' -p $port -U postgres -i -q -s 1 postgres 2>&1`;
	my $rc = $?;
	system(cg_bin('pg_ctl'), '-D', $template, '-m', 'fast', '-w', '-t', '120', '-s', 'stop');
	is($rc, 0, 'pgbench -i -s 1 for the template') or diag($out);
}

# (count, profile) of the client's backend among the profiles DIR gained
# since BEFORE. A profile is written when its process exits, so first every
# child of the postmaster but its background processes must be gone.
# pgbench also opens a short connection first (it reads the scale), so the
# client's is the largest.
sub client_profile
{
	my ($sock, $before, $pm) = @_;
	cg_quiesce($pm->{pid}, @{ $pm->{bg} });
	my ($best, $best_f);
	for my $f (cg_new_profiles($sock, @$before))
	{
		my $c;
		for (1 .. 20)
		{
			last if defined($c = cg_totals("$sock/$f"));
			select(undef, undef, undef, 0.5);
		}
		($best, $best_f) = ($c, "$sock/$f") if defined $c && (!defined $best || $c > $best);
	}
	return ($best, $best_f);
}

# Instructions per transaction of one pgbench client (tpcb-like, simple
# protocol), the slope between N and 2N transactions run one after the
# other on a fresh copy of the template.
sub pgbench_slope
{
	my ($cfg, $suffix) = @_;
	my $sock = "$dir/pgb_$cfg";
	remove_tree($sock);
	make_path($sock);
	system('cp', '-a', $template, "$sock/data") == 0 or die "cannot copy the template";
	# 18's default io_method hands reads to io workers, and how much of a
	# read the backend then does itself depends on when the worker finishes:
	# four identical runs spread over 1,200 instructions/transaction (60 with
	# sync).
	my @iom = cg_pg_major() >= 18 ? ('-c', 'io_method=sync') : ();
	# Each commit flushes its own WAL (synchronous_commit = on; fsync = off
	# leaves that a write): with an asynchronous commit, whether a later
	# visibility check may set a hint bit or must look the transaction up
	# again depends on how far the WAL writer has got, which moved the count
	# by up to 4,300 instructions/transaction between four identical runs on
	# 18.
	my $pm = cg_postmaster_start("$sock/data", $sock, $cfg, '-c', 'max_connections=100', '-c', 'synchronous_commit=on',
		'-c', 'fsync=off', @iom);
	my (%count, %file);
	for my $k ($n, 2 * $n)
	{
		my @before = cg_new_profiles($sock);
		system(cg_bin('pgbench') . " -h '$sock' -p $pm->{port} -U postgres -n -b tpcb-like -c 1 -t $k"
			  . " --random-seed=$seed postgres >'$sock/pgbench$k.out' 2>&1");
		($count{$k}, $file{$k}) = client_profile($sock, \@before, $pm);
	}
	cg_postmaster_stop("$sock/data");
	remove_tree("$sock/data");
	return undef unless defined $count{$n} && defined $count{ 2 * $n };
	cg_allocator_metrics('callgrind_pgbench', $cfg, $n, $file{$n}, $file{ 2 * $n }, $suffix);
	cg_breakdown_files('callgrind_pgbench_self', $cfg, $n, $file{$n}, $file{ 2 * $n }) if $cfg eq 'psw_timing';
	return cg_slope($count{$n}, $count{ 2 * $n }, $n);
}

note("instructions per pgbench transaction (callgrind, tpcb-like, N=$n and 2N)");
metric('callgrind_pgbench', 'none_qid', 'transactions', $n, 'count');
my %v;
if ($smoke)
{
	# The unit size: one configuration, timing (its breakdown included).
	my $cfg = cfg_available('psw_timing') ? 'psw_timing' : 'none_qid';
	$v{$cfg} = pgbench_slope($cfg, '');
	metric('callgrind_pgbench', $cfg, 'instr_per_tx', $v{$cfg}, 'instr');
}
else
{
	%v = %{ cg_measure_configs('callgrind_pgbench', 'instr_per_tx', \&pgbench_slope, @BENCH_CONFIGS[ 1 .. $#BENCH_CONFIGS ]) };
}
for my $cfg (sort keys %v)
{
	ok(defined $v{$cfg} && $v{$cfg} > 50000 && $v{$cfg} < 50000000,
		"$cfg: plausible instructions per transaction (" . ($v{$cfg} // 'none') . ')');
}

cg_render();
ok(-s bench_dir() . '/10_callgrind.md', 'section 1 written');
done_testing();
