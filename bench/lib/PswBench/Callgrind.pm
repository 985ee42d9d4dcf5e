# Section 1 of the report (bench/t/1x_callgrind*.pl): instructions counted
# by valgrind's callgrind instead of timed. What every file shares: how
# valgrind runs, the slope between runs of N and 2N units (start-up and
# shutdown cancel) and a postmaster under callgrind following its forks.
# The profiles are read by PswBench::CallgrindProfile, the section's
# markdown is written by PswBench::CallgrindRender.
#
# The figures are deterministic to a few instructions, so every setting
# below is part of the measurement: changing one makes the numbers
# incomparable with earlier reports.
package PswBench::Callgrind;

use strict;
use warnings;
use Exporter 'import';
use File::Path qw(make_path remove_tree);
use File::Temp;
use IPC::Run;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use PswBench;
use PswBench::CallgrindProfile;
use Test::More;

our @EXPORT = qw(
  cg_require cg_unusable cg_dir cg_initdb cg_input cg_pg_major cg_n_single cg_n_socket cg_wrapper_calls
  cg_single_slope cg_wrapper cg_postmaster_start cg_postmaster_stop
  cg_measure_configs cg_client_slope cg_objects cg_new_profiles cg_chunk_reset
  cg_bin cg_children cg_quiesce);

# How every count runs valgrind. PostgreSQL's statistics report
# (pgstat_report_stat, called before each wait for the next statement) is
# left out of the count: what it does depends on wall-clock time (it flushes
# at most once a second, and on 18 statistics are pending after every
# SELECT 1, so each statement compares timestamps first), which moved 18's
# single-user slope by up to 40 instructions between identical runs. Its
# work is PostgreSQL's own and the same in every configuration; no hook runs
# inside. (--toggle-collect turns collection off on entry and on again on
# exit; it would also make collection start off, hence --collect-atstart=yes
# after it.) For the same reason pg_stat_waits' own publishing of a
# backend's timed figures (psw::flush) is left out: it runs once a second
# while busy and once the client has kept the backend idle 10 ms, both
# wall-clock times. Under valgrind a statement takes milliseconds, so the
# once-a-second flush fell on one statement in a few hundred instead of one
# in thousands, and on a loaded machine a client delayed past 10 ms made the
# idle flush enter the count at random (+618 and +972 over the same library
# in two runs of the paused client). Its cost per second is bounded and
# independent of the statement rate; docs/bench.md says so.
my @VALGRIND = (
	qw(valgrind --tool=callgrind --toggle-collect=pgstat_report_stat),
	'--toggle-collect=psw::flush(long)',
	'--collect-atstart=yes');

# N of the single-user slope, and of the client slopes over a socket (at
# least 1000 statements, so that what a connection does now and then, such
# as PostgreSQL's own once-a-second statistics flush, is spread over many).
sub cg_n_single { return bench_size(full => 1500, quick => 300, smoke => 20); }
sub cg_wrapper_calls { return bench_size(full => 100000, quick => 100000, smoke => 1000); }
sub cg_n_socket { my $n = cg_n_single(); return bench_mode() eq 'smoke' ? $n : ($n < 1000 ? 1000 : $n); }

my $BINDIR;

sub cg_bin
{
	if (!defined $BINDIR)
	{
		$BINDIR = `pg_config --bindir`;
		chomp $BINDIR;
	}
	return "$BINDIR/$_[0]";
}

sub cg_pg_major
{
	my $v = `pg_config --version`;
	return $v =~ /PostgreSQL (\d+)/ ? $1 : 0;
}

# cg_require(): skips the file (and says so in the report) without valgrind.
sub cg_require
{
	my $why = cg_unusable() // return;
	cg_chunk_reset();
	md('10_callgrind', "## 1. Per-statement instructions\n\nnot available: $why\n\n");
	plan skip_all => $why;
}

# cg_unusable(): why valgrind cannot count this server here, or undef. Not
# installed; or it cannot run the server at all: on some CPUs PostgreSQL 19
# calibrates its TSC with RDTSCP at start (CPUID reports it, valgrind passes
# the bit on) and valgrind, which does not emulate RDTSCP, stops it with
# SIGILL before anything of ours runs. Probed once, with a data directory
# that does not exist (the server stops right after that start-up).
my $UNUSABLE;

sub cg_unusable
{
	return $UNUSABLE if defined $UNUSABLE;
	if (system('sh', '-c', 'command -v valgrind >/dev/null') != 0)
	{
		$UNUSABLE = 'valgrind is not installed';
	}
	else
	{
		my $err = '';
		IPC::Run::run([ 'valgrind', '--tool=none', cg_bin('postgres'), '--single', '-D', cg_dir() . '/no-such-dir' ],
			'<', \'', '>', \my $out, '2>', \$err);
		$UNUSABLE = $err =~ /signal 4 \(SIGILL\)\n==\d+==\s+Illegal opcode at address \S+\n==\d+==\s+at \S+: (\S+)/
		  ? "valgrind cannot run this PostgreSQL on this CPU (SIGILL in its own $1 at start-up)"
		  : '';
	}
	return $UNUSABLE eq '' ? undef : $UNUSABLE;
}

# cg_chunk_reset(): empties the section's chunk before it is written anew
# (every file renders the whole section from the figures recorded so far).
sub cg_chunk_reset
{
	unlink bench_dir() . '/10_callgrind.md';
	return;
}

# cg_dir(): this file's scratch directory, short (the postmasters' sockets
# live below it) and removed at exit.
my $DIR;

sub cg_dir
{
	$DIR //= File::Temp::tempdir('/tmp/pgsw-cg.XXXXXX', CLEANUP => 1);
	chmod 0755, $DIR;
	return $DIR;
}

# cg_initdb(NAME): a fresh data directory, as initdb leaves it. Not
# bench_node: PostgreSQL::Test::Cluster's settings (log_statement = all,
# wal_level = minimal, fsync = off) and the bench nodes' (a connection check
# timer) would each be counted in every statement, so postgresql.conf is cut
# back to initdb's and every setting a run needs is given on its command line.
sub cg_initdb
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(extra => [ '-U', 'postgres', '-E', 'UTF8', '--locale=C' ]);
	my $conf = $node->data_dir . '/postgresql.conf';
	my $text = slurp_file($conf);
	$text =~ s/\n# Added by PostgreSQL::Test::Cluster\.pm\n.*\z/\n/s
	  or die "cannot find PostgreSQL::Test::Cluster's settings in $conf";
	open my $fh, '>', $conf or die "$conf: $!";
	print $fh $text;
	close $fh;
	return $node->data_dir;
}

# cg_input(N): a file of N lines "SELECT 1;" in the scratch directory.
sub cg_input
{
	my ($n) = @_;
	my $f = cg_dir() . "/in$n.sql";
	return $f if -f $f;
	open my $fh, '>', $f or die "$f: $!";
	print $fh "SELECT 1;\n" x $n;
	close $fh;
	return $f;
}

# cg_env(): the whole environment of a measured postgres, the same for
# whoever launches the harness. The environment sits at the top of the
# stack, so its size shifts where everything below it lands, and
# alignment-dependent libc routines take other paths: while porting the
# harness, a timed pgbench transaction measured between +1,650 and +3,800
# instructions over the baseline as the launching environment changed. A
# fixed, small environment (like a service manager's) takes that out of
# the comparison between runs. LD_BIND_NOW: see cg_count.
sub cg_env
{
	return (PATH => $ENV{PATH}, LANG => 'C', LD_BIND_NOW => 1);
}

# cg_count(DATADIR, INPUT, OUTFILE, ARGS...): instructions postgres --single
# executes reading INPUT; the profile goes to OUTFILE (/dev/null drops it).
sub cg_count
{
	my ($datadir, $input, $outfile, @args) = @_;
	# Every run starts without pg_stat_waits' saved statistics: otherwise
	# the 2N run would load (once, at start) what the N run saved at
	# shutdown and the N run would not, and that one-off start-up work would
	# be divided into the per-statement slope.
	unlink "$datadir/pg_stat/pg_stat_waits.stat";
	# LD_BIND_NOW: the dynamic linker resolves every symbol at start-up
	# (which cancels in the slope) instead of at a function's first call,
	# which came at different statements in identical runs and moved the
	# slope by ~10. What remains (a few instructions/statement, more on a
	# loaded machine) is time-dependent work; the full run shows it by
	# repeating the baseline.
	my $err = '';
	local %ENV = cg_env();
	IPC::Run::run([ @VALGRIND, "--callgrind-out-file=$outfile", cg_bin('postgres'), '--single', '-D', $datadir, @args,
			'postgres' ],
		'<', $input, '>', '/dev/null', '2>', \$err);
	my @c = $err =~ /^==\d+== Collected : (\d+)$/mg;
	return $c[-1];
}

# cg_single_slope(DATADIR, N, CONFIG, keep => 0|1, reps => R, ARGS...):
# instructions per statement of postgres --single in CONFIG, or undef. keep
# leaves the two profiles as cg_CONFIG.N.out and cg_CONFIG.2N.out in the
# scratch directory; reps > 1 takes the least count of several runs (what
# still varies between identical runs is work added by timing or layout;
# the least count is closest to the statement's own cost).
sub cg_single_slope
{
	my ($datadir, $n, $cfg, %o) = @_;
	my @extra = @{ $o{args} // [] };
	# Without track_counts = off PostgreSQL flushes pending table statistics
	# at most once a second: the number of flushes follows wall-clock time
	# (slow under valgrind, slower on a loaded machine), which made the
	# slope wander by ~40 instructions/statement between identical runs.
	my @args = (cfg_args($cfg), '-c', 'track_counts=off', @extra);
	my $dir = cg_dir();
	my ($i1, $i2);
	for (1 .. ($o{reps} // 1))
	{
		for my $k ($n, 2 * $n)
		{
			my $out = $o{keep} ? "$dir/cg_$cfg.$k.out" : '/dev/null';
			my $c = cg_count($datadir, cg_input($k), $out, @args);
			next unless defined $c;
			if ($k == $n) { $i1 = $c if !defined $i1 || $c < $i1; }
			else { $i2 = $c if !defined $i2 || $c < $i2; }
		}
	}
	return cg_slope($i1, $i2, $n);
}

# cg_wrapper(DATADIR, CALLS): instructions per call of an exact-timing
# wrapper around a no-op (the test module's wrapper benchmark, called CALLS
# and 2 CALLS times inside one statement; the slope, as above), recorded as
# callgrind_wrapper MODE instr_per_call. What every timed wait costs on top
# of the call itself, with no syscall in the count.
sub cg_wrapper
{
	my ($datadir, $calls, @modes) = @_;
	my @args = ('-c', 'track_counts=off', '-c', 'shared_preload_libraries=pg_stat_waits', '-c', 'pg_stat_waits.timing=on');
	my $dir = cg_dir();
	my $setup = "CREATE EXTENSION pg_stat_waits;\nCREATE EXTENSION pg_stat_waits_test;\n";
	my $out;
	IPC::Run::run([ cg_bin('postgres'), '--single', '-D', $datadir, '-c', 'shared_preload_libraries=pg_stat_waits', 'postgres' ],
		'<', \$setup, '>&', \$out)
	  or return;
	for my $mode (@modes)
	{
		my %c;
		for my $k ($calls, 2 * $calls)
		{
			my $f = "$dir/wrap$k.sql";
			open my $fh, '>', $f or die "$f: $!";
			print $fh "SELECT pg_stat_waits_bench_wrapper('$mode', $k);\n";
			close $fh;
			$c{$k} = cg_count($datadir, $f, '/dev/null', @args);
		}
		next unless defined $c{$calls} && defined $c{ 2 * $calls };
		metric('callgrind_wrapper', $mode, 'instr_per_call', cg_slope($c{$calls}, $c{ 2 * $calls }, $calls), 'instr');
	}
	return;
}

# ------------------------------------------------ a postmaster under callgrind

my %POSTMASTER;    # pid => data directory, stopped at exit whatever happens

END
{
	local $?;
	cg_postmaster_stop($_) for values %POSTMASTER;
}

# cg_postmaster_start(DATADIR, DIR, CONFIG, ARGS...): a postmaster of CONFIG
# on DATADIR under callgrind, which follows its forks: one profile per
# process, DIR/cg.PID, written when the process exits. Its socket is in
# DIR. Returns { port, pid, bg => [its background processes] }. Every run sets compute_query_id = on (the
# baseline, see the render) and starts without pg_stat_waits' saved
# statistics.
sub cg_postmaster_start
{
	my ($datadir, $dir, $cfg, @extra) = @_;
	make_path($dir);
	chmod 0755, $dir;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	unlink "$datadir/pg_stat/pg_stat_waits.stat";
	my @cmd = (
		@VALGRIND, "--callgrind-out-file=$dir/cg.%p", cg_bin('postgres'), '-D', $datadir, '-p', $port, '-k', $dir,
		'-c', 'listen_addresses=', '-c', 'autovacuum=off', '-c', 'track_counts=off', @extra, cfg_args($cfg),
		'-c', 'compute_query_id=on');
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open STDIN, '<', '/dev/null';
		open STDOUT, '>', "$dir/log";
		open STDERR, '>&', \*STDOUT;
		%ENV = cg_env();
		# not exit: the parent's END blocks must not run in the child
		exec { $cmd[0] } @cmd or POSIX::_exit(127);
	}
	$POSTMASTER{$pid} = $datadir;
	# Ready as the clients connect (user and database postgres): the first
	# such backend builds the database's relcache init file, removed at
	# every start (12 million instructions), which the client's N run would
	# otherwise build instead, taking it out of the slope.
	for (1 .. 240)
	{
		last if system(cg_bin('pg_isready'), '-q', '-h', $dir, '-p', $port, '-U', 'postgres', '-d', 'postgres') == 0;
		select(undef, undef, undef, 0.5);
	}
	# Then until every backend so far (pg_isready's, this query's) has
	# exited and written its profile: a measuring run takes the profiles
	# that appear during it, and at unit size a late one of these would be
	# the largest.
	my $bg = `'${\ cg_bin('psql')}' -XAtq -h '$dir' -p $port -U postgres -d postgres -c "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE backend_type <> 'client backend'"`;
	my @bg = split ' ', $bg // '';
	cg_quiesce($pid, @bg);
	return { port => $port, pid => $pid, bg => \@bg };
}

# cg_children(PID): the pids of PID's children.
sub cg_children
{
	my ($pid) = @_;
	my @kids;
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh> // next;
		push @kids, $1 if $line =~ /^(\d+) \(.*\) \S+ (\d+)/s && $2 == $pid;
	}
	return sort { $a <=> $b } @kids;
}

# cg_quiesce(POSTMASTER, KIDS): waits until every child of POSTMASTER that
# KIDS (its background processes) does not list has exited; a process under
# callgrind writes its profile before it exits.
sub cg_quiesce
{
	my ($pm, @kids) = @_;
	my %kid = map { $_ => 1 } @kids;
	for (1 .. 240)
	{
		return unless grep { !$kid{$_} } cg_children($pm);
		select(undef, undef, undef, 0.5);
	}
	return;
}

# cg_postmaster_stop(DATADIR): stops the postmaster started on DATADIR (its
# processes write their profiles as they exit).
sub cg_postmaster_stop
{
	my ($datadir) = @_;
	system(cg_bin('pg_ctl'), '-D', $datadir, '-m', 'fast', '-w', '-t', '300', 'stop', '-s');
	for my $pid (grep { $POSTMASTER{$_} eq $datadir } keys %POSTMASTER)
	{
		kill 'TERM', $pid if waitpid($pid, POSIX::WNOHANG()) == 0;
		waitpid($pid, 0);
		delete $POSTMASTER{$pid};
	}
	return;
}

# cg_profiles(DIR): the profiles in DIR (cg.PID), by name.
sub cg_profiles
{
	opendir my $dh, $_[0] or return ();
	return sort grep { /^cg\./ } readdir $dh;
}

# cg_new_profiles(DIR, BEFORE): profiles of DIR not in the list BEFORE.
sub cg_new_profiles
{
	my ($dir, @before) = @_;
	my %seen = map { $_ => 1 } @before;
	return grep { !$seen{$_} } cg_profiles($dir);
}

# cg_measure_configs(SECTION, PARAM, SLOPE, CONFIGS): SLOPE->(CONFIG,
# SUFFIX) for the baseline (compute_query_id = on, no extension), each
# configuration of CONFIGS this build has, and the baseline again last
# (PARAM_repeat): how far the measurement moves between identical runs,
# which the render reports. SUFFIX is '' or '_repeat', for the metrics a
# slope records itself (the allocator's share).
sub cg_measure_configs
{
	my ($section, $param, $slope, @cfgs) = @_;
	my %v;
	for my $cfg ('none_qid', grep { $_ ne 'none_qid' && cfg_available($_) } @cfgs)
	{
		$v{$cfg} = $slope->($cfg, '');
		metric($section, $cfg, $param, $v{$cfg}, 'instr');
	}
	$v{none_qid_repeat} = $slope->('none_qid', '_repeat');
	metric($section, 'none_qid', "${param}_repeat", $v{none_qid_repeat}, 'instr');
	return \%v;
}

# cg_client_slope(SECTION, CLIENT, DATADIR, N, CONFIG, SUFFIX): instructions
# per statement of a client backend over a Unix socket, the path a client's
# statement takes in production. The postmaster runs under callgrind;
# CLIENT->(K, DIR, PORT) sends K statements in one connection, once with N
# and once with 2N, and each backend's count is read from its own profile,
# written when it exits: the largest profile that appeared during the
# client's run (the client's backend; nothing else runs statements). A
# forked backend's count includes what the postmaster had executed before
# the fork; the slope cancels that with connection start-up. Here the wait
# for the client's next message, its recv and the send of the result are
# real calls, which postgres --single never makes.
sub cg_client_slope
{
	my ($section, $client, $datadir, $n, $cfg, $suffix) = @_;
	my $dir = cg_dir() . "/${section}_$cfg";
	remove_tree($dir);
	my $pm = cg_postmaster_start($datadir, $dir, $cfg, '-c', 'max_connections=100');
	my (%count, %file);
	for my $k ($n, 2 * $n)
	{
		my @before = cg_profiles($dir);
		$client->($k, $dir, $pm->{port});
		# The profile is written when the backend has exited.
		cg_quiesce($pm->{pid}, @{ $pm->{bg} });
		for my $x (cg_new_profiles($dir, @before))
		{
			my $t = cg_totals("$dir/$x");
			($count{$k}, $file{$k}) = ($t, "$dir/$x") if defined $t && $t > ($count{$k} // 0);
		}
	}
	cg_postmaster_stop($datadir);
	return undef unless defined $count{$n} && defined $count{ 2 * $n };
	cg_allocator_metrics($section, $cfg, $n, $file{$n}, $file{ 2 * $n }, $suffix);
	# What remains of each mode's cost on this path, by function.
	cg_breakdown_files("${section}_self", $cfg, $n, $file{$n}, $file{ 2 * $n }) if $cfg =~ /^psw_/ && $suffix eq '';
	return cg_slope($count{$n}, $count{ 2 * $n }, $n);
}

# cg_objects(N, CONFIG...): per-statement self cost by object, from the
# single-user profiles cg_single_slope kept, as callgrind_object rows.
sub cg_objects
{
	my ($n, @cfgs) = @_;
	my $dir = cg_dir();
	for my $cfg (@cfgs)
	{
		my ($p1, $p2) = ("$dir/cg_$cfg.$n.out", "$dir/cg_$cfg." . (2 * $n) . '.out');
		next unless -s $p1 && -s $p2;
		my $o1 = cg_self_by_object($p1);
		my $o2 = cg_self_by_object($p2);
		metric('callgrind_object', $cfg, $_, sprintf('%.1f', ($o2->{$_} - ($o1->{$_} // 0)) / $n), 'instr')
		  for sort keys %$o2;
	}
	return;
}

1;
