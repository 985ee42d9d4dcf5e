# Sampler cost: CPU time of the sampling process (pg_stat_waits' sampler,
# pg_wait_sampling's collector) per second of wall clock, at a 10 ms period,
# with K connected backends, idle and busy. CPU time comes from the kernel's
# scheduler accounting (/proc/PID/schedstat, ns) rather than utime+stime
# ticks: 0.3% of a core over a few seconds is only a handful of 10 ms ticks.
# Then issue 72's comparison over the same windows (sampler_same): both
# tools at once, 1,000 idle backends each, pg_stat_waits with timing off and
# on and its idle memo on and off; and the sampler's instructions per tick
# under callgrind (sampler_cg), the same four cases.
use strict;
use warnings;
use IPC::Run;
use POSIX ();
use Time::HiRes qw(sleep time clock_gettime CLOCK_MONOTONIC);
use PswBench;
use PswBench::Callgrind;
use PswBench::Holder;
use PswBench::SamplerCg;
use Test::More;

bench_section('sampler');
my $t_start = time();

my @KS = @{ bench_size(full => [ 100, 500, 1000 ], quick => [1000], smoke => [12]) };
my $W = bench_size(full => 6, quick => 2, smoke => 0.5);
# The same-window comparison: backends per cluster, windows and their length.
my $SAME_K = bench_size(full => 1000, quick => 1000, smoke => 12);
my ($SAME_W, $SAME_NW) = @{ bench_size(full => [ 4, 3 ], quick => [ 2, 3 ], smoke => [ 0.3, 3 ]) };
# The unmeasured warm-up (see fill_history) and the pause after it.
my ($WARM, $SETTLE) = @{ bench_size(full => [ 3, 5 ], quick => [ 3, 5 ], smoke => [ 0.5, 1 ]) };
# The pause between connecting the backends and the first idle window.
my $PAUSE = bench_size(full => 1, quick => 1, smoke => 0.2);
chomp(my $NCPU = `nproc`);
my $CLIENTS = 2 * $NCPU;
my $CHUNK = '20_sampler';

# bench_node puts PostgreSQL's defaults back (log_statement, WAL senders:
# ten PGPROCs more for the samplers to scan, as in production).
my @CONF = ('shared_buffers = 64MB');

sub now_ns { return int(clock_gettime(CLOCK_MONOTONIC) * 1e9); }

# sampler_pid(NODE, CONFIG): pid of the process doing the sampling, or ''
# (waits 5 s at most for it to show up after the start).
sub sampler_pid
{
	my ($node, $cfg) = @_;
	my $q = $cfg =~ /^psw_/
	  ? "SELECT coalesce(sampler_pid::text, '') FROM pg_stat_waits_status"
	  : "SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_wait_sampling collector'";
	my $pid = '';
	for (1 .. 25)
	{
		$pid = $node->safe_psql('postgres', $q);
		last if $pid ne '';
		sleep 0.2;
	}
	return $pid;
}

# cpu_pct_over(PID, SECONDS): % of one core the process used over the window.
sub cpu_pct_over
{
	my ($pid, $w) = @_;
	my ($c0, $t0) = (proc_cpu_ns($pid), now_ns());
	sleep $w;
	my ($c1, $t1) = (proc_cpu_ns($pid), now_ns());
	return sprintf('%.4f', 100 * ($c1 - $c0) / ($t1 - $t0));
}

sub count_backends
{
	my ($node, $where) = @_;
	return $node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND $where");
}

# held_backends_gone(NODE): waits (10 s at most) until the held backends
# have exited, so that the next step starts from an idle cluster.
sub held_backends_gone
{
	my ($node) = @_;
	for (1 .. 50)
	{
		last if count_backends($node, 'true') <= 1;
		sleep 0.2;
	}
	return;
}

sub samples_taken
{
	return $_[0]->safe_psql('postgres', 'SELECT samples_taken FROM pg_stat_waits_status');
}

# sampler_measure(NODE, CONFIG, PID, K): records the idle and busy figures.
sub sampler_measure
{
	my ($node, $cfg, $pid, $k) = @_;
	my $h = PswBench::Holder->start($node, $k);
	ok($h->ready, "$cfg: holder connects $k backends (" . $h->line . ')');
	if (!$h->ready)
	{
		metric('sampler', $cfg, "idle backends=$k", undef, 'pct_core', 'holder failed: ' . $h->line);
		$h->quit;
		return;
	}
	sleep $PAUSE;
	my $n0 = $cfg eq 'psw_sampling' ? samples_taken($node) : 0;
	my $pct = cpu_pct_over($pid, $W);
	metric('sampler', $cfg, "idle backends=$k", $pct, 'pct_core');
	cmp_ok(count_backends($node, "state = 'idle'"), '>=', $k, "$cfg: $k held backends idle");
	my $busy = $h->busy($W + 30);
	# Busy: every held backend active in a wait, plus pgbench select-only.
	my $pgb_out = '';
	my $pgb = IPC::Run::start(
		[ 'pgbench', '-h', $node->host, '-p', $node->port, '-n', '-S', '-c', $CLIENTS, '-j', 2, '-T', int($W + 1), 'bench' ],
		'>&', \$pgb_out);
	sleep 0.5;
	my $pct_busy = cpu_pct_over($pid, $W);
	metric('sampler', $cfg, "busy backends=$k", $pct_busy, 'pct_core', $busy);
	# At least 99%: a pg_sleep wakes at a latch set (a sinval catch-up
	# signal, say), so with 1,000 of them one can be between two waits at
	# the instant of the count (999 of 1000 seen once on a loaded machine).
	cmp_ok(count_backends($node, "wait_event = 'PgSleep'"), '>=', $k - int($k / 100),
		"$cfg: $k held backends busy in pg_sleep, 99% at least ($busy)");
	$pgb->finish;
	like($pgb_out, qr/^tps = /m, "$cfg: pgbench select-only ran beside the busy backends");
	for ([ idle => $pct ], [ busy => $pct_busy ])
	{
		ok($_->[1] > 0 && $_->[1] < 100, "$cfg: sampling process CPU with $k $_->[0] backends measured ($_->[1] % of a core)");
	}
	if ($cfg eq 'psw_sampling')
	{
		my $delta = samples_taken($node) - $n0;
		metric('sampler', $cfg, "samples_taken_delta backends=$k", $delta, 'samples');
		cmp_ok($delta, '>', 0, "pg_stat_waits took samples during the windows ($delta)");
	}
	$h->quit;
	held_backends_gone($node);
	return;
}

# fill_history(NODE, K): K backends busy for 3 s, not measured, so that
# every window measures the steady cost: a new cluster's history ring is
# written for the first time over its first samples, and on a virtual
# machine a page's first write is slow in the writer (docs/bench.md).
# pg_wait_sampling gets the same warm-up.
sub fill_history
{
	my ($node, $k) = @_;
	my $h = PswBench::Holder->start($node, $k);
	if ($h->ready)
	{
		$h->busy(60);
		sleep $WARM;
	}
	$h->quit;
	held_backends_gone($node);
	return;
}

# Why CONFIG cannot be measured here, or ''.
sub unavailable
{
	my ($cfg) = @_;
	return feature('psw_sampler') ? '' : feature_why('psw_sampler') if $cfg eq 'psw_sampling';
	return cfg_available($cfg) ? '' : feature_why($cfg);
}

# ------------------------------------------------------ the table: K backends

# At unit size the table runs on pg_stat_waits only: the same-window part
# below finds and measures pg_wait_sampling's collector.
for my $cfg (bench_mode() eq 'smoke' ? qw(psw_sampling) : qw(psw_sampling pg_wait_sampling))
{
	if (my $why = unavailable($cfg))
	{
		for my $k (@KS)
		{
			metric('sampler', $cfg, "$_ backends=$k", undef, 'pct_core', $why) for qw(idle busy);
		}
		next;
	}
	my $ext = $cfg eq 'psw_sampling' ? 'pg_stat_waits' : $cfg;
	my $node = bench_node('smp', $cfg, conf => [ @CONF, 'max_connections = 1010' ]);
	$node->safe_psql('postgres', "CREATE EXTENSION $ext");
	$node->safe_psql('postgres', 'CREATE DATABASE bench');
	bench_pgbench($node, '-i', '-q', '-s', 1, 'bench');
	my $pid = sampler_pid($node, $cfg);
	ok($pid ne '', "$cfg: sampling process found ($pid)");
	if ($pid eq '')
	{
		metric('sampler', $cfg, "idle backends=$_", undef, 'pct_core', 'sampling process not found') for @KS;
	}
	else
	{
		fill_history($node, $KS[-1]);
		sampler_measure($node, $cfg, $pid, $_) for @KS;
	}
	$node->stop;
	$node->clean_node;
}

# ------------------------------------------------- the same windows (issue 72)

# Both clusters run at once (one per tool, so neither process reads the
# other's PGPROCs into a shared cache), each with K idle connections, and
# both processes' schedstat is read at the same instants. What the machine
# does meanwhile falls on both alike, which the sequential windows of the
# table cannot promise. Per case (pg_stat_waits' timing off or on, its idle
# memo on or off through the test module) three windows, each a ratio of
# the two CPU times; the figure is their median.
sub same_window
{
	my $k = $SAME_K;
	my @cases = map { my $t = $_; map { [ $t, $_ ] } qw(on off) } qw(off on);    # [timing, memo]
	my $case_name = sub { "timing $_[0][0], memo $_[0][1]" };
	my $fail = sub {
		my ($why) = @_;
		metric('sampler_same', 'psw_sampling', "ratio idle backends=$k " . $case_name->($_), undef, 'ratio', $why) for @cases;
		return;
	};
	for my $cfg (qw(psw_sampling pg_wait_sampling))
	{
		if (my $why = unavailable($cfg))
		{
			return $fail->($why);
		}
	}
	note("sampler against collector, $k idle backends each, $SAME_NW windows of $SAME_W s per case");
	my %node;
	my %pid;
	for my $cfg (qw(psw_sampling pg_wait_sampling))
	{
		my $ext = $cfg eq 'psw_sampling' ? 'pg_stat_waits' : $cfg;
		$node{$cfg} = bench_node('sw', $cfg, conf => [ @CONF, 'max_connections = ' . ($k + 10) ]);
		$node{$cfg}->safe_psql('postgres', "CREATE EXTENSION $ext");
		$pid{$cfg} = sampler_pid($node{$cfg}, $cfg);
		ok($pid{$cfg} ne '', "same windows: $cfg sampling process found ($pid{$cfg})");
	}
	my $psw = $node{psw_sampling};
	$psw->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits_test');
	my $why = '';
	my @held;
	if (grep { $_ eq '' } values %pid)
	{
		$why = 'sampling process not found';
	}
	else
	{
		for my $cfg (qw(psw_sampling pg_wait_sampling))
		{
			my $h = PswBench::Holder->start($node{$cfg}, $k);
			ok($h->ready, "same windows: holder connects $k backends to $cfg (" . $h->line . ')');
			push @held, $h;
			next if $h->ready;
			$why = 'holder failed: ' . $h->line;
			last;
		}
	}
	if ($why eq '')
	{
		# The warm-up of fill_history, for both: the backends busy for 3 s
		# (a new history ring's pages are slow to write the first time),
		# then idle again before the first window.
		$_->busy($WARM) for @held;
		sleep $SETTLE;
		my ($pa, $pb) = ($pid{psw_sampling}, $pid{pg_wait_sampling});
		for my $c (@cases)
		{
			my ($timing, $memo) = @$c;
			$psw->safe_psql('postgres', "ALTER SYSTEM SET pg_stat_waits.timing = $timing; SELECT pg_reload_conf();"
				  . "SELECT pg_stat_waits_idle_memo('$memo')");
			sleep 1;
			my $name = $case_name->($c);
			my @ratios;
			for my $i (1 .. $SAME_NW)
			{
				my ($a0, $b0, $t0) = (proc_cpu_ns($pa), proc_cpu_ns($pb), now_ns());
				sleep $SAME_W;
				my ($a1, $b1, $t1) = (proc_cpu_ns($pa), proc_cpu_ns($pb), now_ns());
				metric('sampler_same_raw', 'both', "idle backends=$k $name window=$i",
					($a1 - $a0) . ' ' . ($b1 - $b0) . ' ' . ($t1 - $t0), 'psw_cpu_ns pgws_cpu_ns wall_ns');
				my $pct = sprintf('%.4f', 100 * ($a1 - $a0) / ($t1 - $t0));
				metric('sampler_same_window', 'psw_sampling', "idle backends=$k $name window=$i", $pct, 'pct_core');
				metric('sampler_same_window', 'pg_wait_sampling', "idle backends=$k $name window=$i",
					sprintf('%.4f', 100 * ($b1 - $b0) / ($t1 - $t0)), 'pct_core');
				push @ratios, ($a1 - $a0) / ($b1 - $b0) if $b1 > $b0;
			}
			my $ratio = @ratios == $SAME_NW ? sprintf('%.3f', median(@ratios)) : undef;
			metric('sampler_same', 'psw_sampling', "ratio idle backends=$k $name", $ratio, 'ratio',
				"median of $SAME_NW windows of $SAME_W s: " . join(' ', map { sprintf('%.3f', $_) } @ratios));
			ok(defined $ratio && $ratio > 0, "same windows, $name: ratio pg_stat_waits / pg_wait_sampling (" . ($ratio // 'NA') . ')');
		}
		$psw->safe_psql('postgres', 'ALTER SYSTEM RESET pg_stat_waits.timing; SELECT pg_reload_conf()');
	}
	$_->quit for reverse @held;
	$_->stop for values %node;
	$fail->($why) if $why ne '';
	return;
}

same_window();

# ----------------------------------------------- instructions per tick (issue 72)

# The sampler's instructions per tick, counted by callgrind: a postmaster
# under callgrind (which follows its forks, so every backend runs under it
# too: about 30 MB each, which rules out 1,000 of them on 24 GiB), with K1
# and then K2 idle backends (K2 far from K1: the slope per backend, a few
# dozen instructions, is read over hundreds of backends, not tens). Per
# case (timing off or on, the idle memo on or off) two samplers' lives, of
# 1 s and 1 + W s (pg_terminate_backend ends one, the postmaster starts the
# next, which writes its profile as it exits): the difference of their
# counts over the difference of their ticks (the calls of
# idle_memo_tick_end(), once per tick in a test build) leaves start-up and
# exit out. (callgrind_control cannot reach a forked child: vgdb lists the
# postmaster only.) A tick is linear in the idle backends (the same
# max_connections, so the same PGPROCs to scan): the figure at 1,000 is the
# line through K1 and K2.
my ($CG_K1, $CG_K2) = @{ bench_size(full => [ 10, 300 ], quick => [ 10, 300 ], smoke => [ 2, 4 ]) };
my $CG_W = bench_size(full => 14, quick => 10, smoke => 3);
my $CG_AT = bench_size(full => 1000, quick => 1000, smoke => 12);

sub callgrind_per_tick
{
	my @cases = map { my $t = $_; map { [ $t, $_ ] } qw(on off) } qw(off on);
	my $case_name = sub { "timing $_[0][0], memo $_[0][1]" };
	my $fail = sub {
		metric('sampler_cg', 'psw_sampling', 'instr_per_tick ' . $case_name->($_), undef, 'instr', $_[0]) for @cases;
		return;
	};
	return $fail->(cg_unusable()) if defined cg_unusable();
	return $fail->(feature_why('psw_sampler')) unless feature('psw_sampler');
	my $datadir = cg_initdb('cg_sampler');
	my $dir = cg_dir() . '/sampler';
	my ($port, $pm) = cg_sampler_start($datadir, $dir, '-c', 'max_connections=' . ($CG_AT + 10));
	my @psql = (cg_bin('psql'), '-XAtq', '-h', $dir, '-p', $port, '-U', 'postgres', '-d', 'postgres');
	my $sql = sub { my $out = ''; IPC::Run::run([ @psql, '-c', $_[0] ], '>', \$out, '2>', \$out); chomp $out; return $out; };
	$sql->('CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_waits_test');
	my $spid = $sql->('SELECT sampler_pid FROM pg_stat_waits_status');
	ok($spid =~ /^\d+$/, "callgrind: the sampler runs ($spid)");
	my $ep = PswBench::Endpoint->new(host => $dir, port => $port);
	# life(SECONDS): ends the sampler running now, lets the next one run for
	# SECONDS and ends it; (instructions, ticks) of the parts of its profile
	# (dumped every $CG_BB basic blocks) in which it neither started nor
	# ended: its steady ticks only.
	my $life = sub {
		my ($secs) = @_;
		my $old = $sql->('SELECT sampler_pid FROM pg_stat_waits_status');
		$sql->("SELECT pg_terminate_backend($old)") if $old =~ /^\d+$/;
		my $new = '';
		for (1 .. 150)
		{
			$new = $sql->('SELECT sampler_pid FROM pg_stat_waits_status');
			last if $new =~ /^\d+$/ && $new ne $old;
			sleep 0.2;
		}
		if ($new !~ /^\d+$/ || $new eq $old)
		{
			note("callgrind: no new sampler after $old ($new)");
			return ();
		}
		sleep $secs;
		$sql->("SELECT pg_terminate_backend($new)");
		for (1 .. 150)
		{
			last if !kill(0, $new) && -s "$dir/cg.$new";
			sleep 0.2;
		}
		my ($ir, $ticks, $parts) = (0, 0, 0);
		for my $f (glob "$dir/cg.$new.* $dir/cg.$new")
		{
			my ($i, $t, $edge) = cg_dump_ticks($f);
			next if $edge || !$i || !$t;
			($ir, $ticks, $parts) = ($ir + $i, $ticks + $t, $parts + 1);
		}
		note("callgrind: sampler $new, $secs s: $parts steady parts, $ir instructions, $ticks ticks");
		return $parts ? ($ir, $ticks) : ();
	};
	my %fig;
	my @held;
	for my $k ($CG_K1, $CG_K2)
	{
		last unless $spid =~ /^\d+$/;
		local $ENV{PGUSER} = 'postgres';    # cg_initdb's superuser
		my $h = PswBench::Holder->start($ep, $k - (@held ? $CG_K1 : 0));
		push @held, $h;
		ok($h->ready, "callgrind: holder connects up to $k backends (" . $h->line . ')');
		last unless $h->ready;
		for my $c (@cases)
		{
			my ($timing, $memo) = @$c;
			# One statement per call: psql -c sends its string as one
			# transaction, where ALTER SYSTEM fails and takes the rest
			# with it (every case then measured the defaults).
			$sql->("ALTER SYSTEM SET pg_stat_waits.timing = $timing");
			$sql->('SELECT pg_reload_conf()');
			$sql->("SELECT pg_stat_waits_idle_memo('$memo')");
			my $now = '';
			for (1 .. 50)
			{
				$now = $sql->('SHOW pg_stat_waits.timing');
				last if $now eq $timing;
				sleep 0.1;
			}
			is($now, $timing, "callgrind: timing is $timing for the case " . $case_name->($c));
			my ($ir, $ticks) = $life->($CG_W);
			# The next sampler's skips: the switch took (none with it off).
			my $skips = '';
			for (1 .. 50)
			{
				$skips = $sql->('SELECT last_tick FROM pg_stat_waits_idle_memo_stats()');
				last if $skips =~ /^\d+$/ && ($memo eq 'off' || $skips > 0);
				sleep 0.2;
			}
			ok($memo eq 'on' ? $skips =~ /^\d+$/ && $skips > 0 : $skips eq '0',
				"callgrind: the memo is $memo for the case " . $case_name->($c) . " ($skips skipped in a tick)");
			my $per = $ir && $ticks ? $ir / $ticks : undef;
			metric('sampler_cg_raw', 'psw_sampling', "idle backends=$k " . $case_name->($c), ($ir // 'NA') . ' ' . ($ticks // 'NA'), 'instr ticks');
			$fig{$k}{ $case_name->($c) } = $per;
		}
	}
	$_->quit for reverse @held;
	system(cg_bin('pg_ctl'), '-D', $datadir, '-m', 'fast', '-w', '-t', '300', 'stop', '-s');
	waitpid($pm, 0);
	for my $c (@cases)
	{
		my $name = $case_name->($c);
		my ($y1, $y2) = ($fig{$CG_K1}{$name}, $fig{$CG_K2}{$name});
		if (!defined $y1 || !defined $y2)
		{
			metric('sampler_cg', 'psw_sampling', "instr_per_tick $name", undef, 'instr', 'not measured: see the raw figures');
			next;
		}
		my $b = ($y2 - $y1) / ($CG_K2 - $CG_K1);
		my $at = sprintf('%.0f', $y1 + $b * ($CG_AT - $CG_K1));
		metric('sampler_cg', 'psw_sampling', "instr_per_tick $name", $at, 'instr',
			sprintf('%.0f at %d, %.0f at %d idle backends: %.1f per backend', $y1, $CG_K1, $y2, $CG_K2, $b));
		ok($at > 0, "callgrind, $name: $at instructions per tick at $CG_AT idle backends");
	}
	return;
}

callgrind_per_tick();

# ------------------------------------------------------------------ report

sub note_of
{
	my ($section, $cfg, $param) = @_;
	my $n = '';
	$n = $_->[5] for grep { $_->[0] eq $section && $_->[1] eq $cfg && $_->[2] eq $param } metrics();
	return $n;
}

sub pct_cell
{
	my $v = metric_get(@_);
	return defined $v ? fmt($v, 3) . ' %' : 'not available';
}

md($CHUNK, "## 2. Sampler cost\n\n",
	"CPU time of the sampling process per second of wall clock (% of one core) at a 10 ms period, from\n",
	"`/proc/PID/schedstat`, over $W s windows with K connections held open by\n",
	"`bench/bench_hold_conns.cpp`. *idle*: the K backends are idle. *busy*: all K backends active\n",
	"in `SELECT pg_sleep(...)` (so every one is sampled) while pgbench select-only runs with\n",
	"$CLIENTS clients. pg_wait_sampling's collector runs with its defaults (history and profile\n",
	"every 10 ms; it also samples idle backends waiting on ClientRead).\n\n",
	"| backends | state | pg_stat_waits sampler | pg_wait_sampling collector |\n|---:|---|---:|---:|\n");
for my $k (@KS)
{
	for my $st (qw(idle busy))
	{
		md($CHUNK, "| $k | $st | " . pct_cell('sampler', 'psw_sampling', "$st backends=$k") . ' | '
			  . pct_cell('sampler', 'pg_wait_sampling', "$st backends=$k") . " |\n");
	}
}
md($CHUNK, "\npg_stat_waits: " . feature_why('psw_sampler') . ".\n") unless feature('psw_sampler');

my @CASES = map { my $t = $_; map { "timing $t, memo $_" } qw(on off) } qw(off on);
md($CHUNK, "\nOver the same windows: two clusters running at once, one per tool, each with $SAME_K idle\n",
	"connections; both processes' CPU time read at the same instants, $SAME_NW windows of $SAME_W s per case, the\n",
	"figure the median of the windows' ratios. pg_stat_waits runs with exact timing off or on (with timing on,\n",
	"the sampler's own latch wait goes through the timing wrappers) and its idle memo on (the product) or\n",
	"off (switched through the test module, the sampler as it was before the memo). Target: at most 0.75×\n",
	"the collector with the memo on.\n\n",
	"| case | pg_stat_waits / pg_wait_sampling (median) | windows |\n|---|---:|---|\n");
for my $c (@CASES)
{
	my $r = metric_get('sampler_same', 'psw_sampling', "ratio idle backends=$SAME_K $c");
	md($CHUNK, "| $c | " . (defined $r ? fmt($r, 3) . '×' : 'not available') . ' | '
		  . note_of('sampler_same', 'psw_sampling', "ratio idle backends=$SAME_K $c") . " |\n");
}
md($CHUNK, "\nInstructions per sampler tick at $CG_AT idle backends (callgrind, the line through $CG_K1 and $CG_K2 idle\n",
	"backends under a postmaster that runs under callgrind; the memo switched in the same run). Target: memo\n",
	"on at most 0.6× memo off.\n\n",
	"| timing | memo off | memo on | on / off | per backend (off; on) |\n|---|---:|---:|---:|---|\n");
for my $t (qw(off on))
{
	my ($off, $on) = map { metric_get('sampler_cg', 'psw_sampling', "instr_per_tick timing $t, memo $_") } qw(off on);
	my $r = defined $off && defined $on && $off > 0 ? sprintf('%.3f', $on / $off) : undef;
	metric('sampler_cg', 'psw_sampling', "instr_per_tick ratio timing $t", $r, 'ratio', 'memo on / memo off');
	md($CHUNK, "| $t | " . join(' | ', map { defined $_ ? fmt($_, 0) : 'not available' } $off, $on) . ' | '
		  . (defined $r ? "$r×" : '—') . ' | '
		  . join('; ', map { note_of('sampler_cg', 'psw_sampling', "instr_per_tick timing $t, memo $_") } qw(off on)) . " |\n");
}
for my $k (@KS)
{
	my $n = metric_get('sampler', 'psw_sampling', "samples_taken_delta backends=$k");
	md($CHUNK, "\npg_stat_waits samples_taken grew by $n during the K=$k idle+busy windows (~" . (2 * $W + 1) . " s).\n")
	  if defined $n;
}
md($CHUNK, "\n");

metric('elapsed', 'harness', 'sampler', int(time() - $t_start), 's');
done_testing();
