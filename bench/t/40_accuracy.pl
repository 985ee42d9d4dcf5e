# Accuracy: waits of known length are injected and compared with what each
# tool reports: pg_stat_waits' exact time (view pg_stat_waits, when timing
# exists), its sampled estimate (pg_stat_waits_profile.est_time = samples x
# period) and pg_wait_sampling's (profile count x profile_period), against
# the time the waiting client measured around its statement (for the cold
# scan: PostgreSQL's own I/O timing of the same reads, track_io_timing).
use strict;
use warnings;
use IPC::Run;
use PswBench;
use Test::More;

bench_section('accuracy');

my @all_cases = ([ 'sleep', 'Timeout', 'PgSleep' ], [ 'rowlock', 'Lock', 'transactionid' ],
	[ 'advisory', 'Lock', 'advisory' ], [ 'io', 'IO', 'DataFileRead' ]);
my ($t, $reps, $rows, $which) = @{
	bench_size(
		full => [ 2, 2, 1500000, 'all' ],
		quick => [ 0.5, 1, 300000, 'all' ],
		# Unit size: a wait held by another session and the cold scan (the
		# EXPLAIN it parses), on a table just past a quarter of
		# shared_buffers so that the scan reads through a ring.
		smoke => [ 0.2, 1, 100000, 'smoke' ])
};
my @cases = $which eq 'all' ? @all_cases : grep { $_->[0] eq 'rowlock' || $_->[0] eq 'io' } @all_cases;
my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/ or die 'pg_config --version: no major version';
my $timing = feature('psw_timing');
my $sampled_psw = feature('psw_profile') && feature('psw_sampler');
my @tools;
push @tools, 'psw' if feature('psw_sampler') || $timing;
push @tools, 'pgws' if cfg_available('pg_wait_sampling');
note("accuracy (injected waits of $t s, $reps repetitions; tools @tools)");

my $exact_q = "SELECT coalesce(sum(total_time), 0) FROM pg_stat_waits WHERE wait_event_type = '%s' AND wait_event = '%s'";
my (%raw, @bg);

# Background sessions holding a lock: stopped even when the file dies.
END { $_->kill_kill for grep { $_->pumpable } @bg; }

# timed_ms(NODE, SQL, SETTINGS...): SQL's elapsed ms as the client (psql
# \timing) saw it, in a session that ran SETTINGS (untimed) first.
sub timed_ms
{
	my ($node, $sql, @settings) = @_;
	my $out = '';
	IPC::Run::run([ 'psql', '-X', '-At', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
		(map { ('-c', $_) } @settings), '-c', '\timing on', '-c', $sql ], '>&', \$out);
	my @t = $out =~ /^Time: ([0-9.]+) ms/mg;
	return @t ? $t[-1] + 0 : undef;
}

# holding(NODE, SQL, SUB): SUB's result while another session runs SQL,
# which takes a lock and then holds it in pg_sleep; SUB starts 0.4 s after
# SQL did, by the server's clock. Not a fixed 0.4 s after psql was
# started: on a loaded machine its connection can take longer than that,
# and SUB then took the lock first (or waited less than its nominal time).
# The holder is waited for in its pg_sleep (10 s at most).
sub holding
{
	my ($node, $sql, $sub) = @_;
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-h', $node->host,
		'-p', $node->port, '-d', 'postgres', '-c', $sql ], '>', \my $o, '2>', \my $e);
	push @bg, $h;
	(my $literal = $sql) =~ s/'/''/g;
	my $in = '';
	for (1 .. 200)
	{
		$in = $node->safe_psql('postgres',
			'SELECT extract(epoch FROM clock_timestamp() - query_start) FROM pg_stat_activity '
			  . "WHERE wait_event = 'PgSleep' AND query = '$literal'");
		last if $in ne '';
		select(undef, undef, undef, 0.05);
	}
	die "the lock holder did not reach its pg_sleep: $e" if $in eq '';
	select(undef, undef, undef, 0.4 - $in) if $in < 0.4;
	my $v = $sub->();
	$h->finish or die "lock holder failed: $e";
	return $v;
}

sub acc_reset
{
	my ($node, $tool) = @_;
	if ($tool eq 'psw')
	{
		$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()')
		  if $node->safe_psql('postgres', "SELECT to_regproc('pg_stat_waits_reset') IS NOT NULL") eq 't';
	}
	else
	{
		$node->safe_psql('postgres', 'SELECT pg_wait_sampling_reset_profile()');
	}
	return;
}

# acc_read(NODE, TOOL, TYPE, EVENT): (exact ms, sampled ms), undef when
# the tool or build has no such figure.
sub acc_read
{
	my ($node, $tool, $ty, $ev) = @_;
	return (undef, $node->safe_psql('postgres',
		"SELECT coalesce(sum(count), 0) * current_setting('pg_wait_sampling.profile_period')::int
		 FROM pg_wait_sampling_profile WHERE event_type = '$ty' AND event = '$ev'"))
	  if $tool eq 'pgws';
	my $exact = $timing ? $node->safe_psql('postgres', sprintf($exact_q, $ty, $ev)) : undef;
	my $sampled = $sampled_psw
	  ? $node->safe_psql('postgres',
		"SELECT coalesce(sum(est_time), 0) FROM pg_stat_waits_profile WHERE wait_event_type = '$ty' AND wait_event = '$ev'")
	  : undef;
	return ($exact, $sampled);
}

# io_read_ms(EXPLAIN output): the read time track_io_timing gives the scan:
# the top plan node's (its children's included) plus planning's reads.
sub io_read_ms
{
	my ($top, $planning, $s);
	for (split /\n/, $_[0])
	{
		if (/I\/O Timings:.*?read=([0-9.]+)/)
		{
			if (!$top) { $top = 1; $s += $1; }
			elsif ($planning) { $s += $1; $planning = 0; }
		}
		$planning = 1 if /^\s*Planning:/;
	}
	return $top ? sprintf('%.3f', $s) : undef;
}

# cold_scan(NODE, WITH_EXACT): (truth ms, exact ms) of a scan of "big" with
# its pages dropped from the OS page cache. The pages are clean after
# CHECKPOINT, then dropped (dd's nocache: posix_fadvise DONTNEED);
# shared_buffers is small and a big seq scan uses a ring, so every page is
# read from the file. The truth is PostgreSQL's own timing of the same
# reads (track_io_timing, as EXPLAIN (ANALYZE, BUFFERS) reports it for the
# top plan node), not the statement's elapsed time, which also holds the
# scan's CPU. No parallel workers: one process, one clock. Planning's reads
# (catalog pages) count on both sides: EXPLAIN lists them under
# "Planning:". The exact side is this backend's own DataFileRead time
# during the statement, read before and after in the same session (new
# connections read catalog pages too).
sub cold_scan
{
	my ($node, $with_exact) = @_;
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $rel = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('big')");
	system('dd', "if=$_", 'iflag=nocache', 'count=0', 'status=none') for grep { -f } glob("$rel*");
	my $q = sprintf($exact_q, 'IO', 'DataFileRead');
	my $explain = 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) SELECT count(*) FROM big';
	my $out = $node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0;\n" . ($with_exact ? "$q;\n$explain;\n$q;" : "$explain;"));
	my @l = split /\n/, $out;
	return (io_read_ms($out), $with_exact ? sprintf('%.3f', $l[-1] - $l[0]) : undef);
}

sub record_raw
{
	my ($tool, $kase, $r, $truth, $exact, $sampled) = @_;
	$raw{$tool}{$kase}{$_->[0]}[ $r - 1 ] = $_->[1] for [ truth => $truth ], [ exact => $exact ], [ sampled => $sampled ];
	metric('accuracy_raw', $tool, "$kase truth r=$r", $truth, 'ms');
	metric('accuracy_raw', $tool, "$kase exact r=$r", $exact, 'ms');
	metric('accuracy_raw', $tool, "$kase sampled r=$r", $sampled, 'ms');
	return;
}

# The table "big" of ROWS rows on node NAME of CONFIG (track_io_timing on,
# synchronous reads on 18+, so that DataFileRead is the read itself).
sub acc_node
{
	my ($name, $cfg, $ext, %o) = @_;
	my $node = bench_node($name, $cfg, init => $o{init},
		conf => [ 'shared_buffers = 16MB', 'autovacuum = off', 'track_io_timing = on',
			($major >= 18 ? 'io_method = sync' : ()), @{ $o{conf} // [] } ]);
	$node->safe_psql('postgres', "CREATE EXTENSION $ext");
	$node->safe_psql('postgres', "CREATE TABLE acc (id int PRIMARY KEY, v int); INSERT INTO acc VALUES (1, 0);
		CREATE TABLE big AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, $rows) g");
	$node->safe_psql('postgres', 'VACUUM ANALYZE big');
	return $node;
}

my $hold = $t + 0.4;
for my $tool (@tools)
{
	my $node = $tool eq 'psw'
	  ? acc_node('acc', 'psw_timing', 'pg_stat_waits')
	  : acc_node('acc', 'pg_wait_sampling', 'pg_wait_sampling');
	for my $c (@cases)
	{
		my ($kase, $ty, $ev) = @$c;
		for my $r (1 .. $reps)
		{
			acc_reset($node, $tool);
			my ($truth, $io_exact);
			if ($kase eq 'sleep') { $truth = timed_ms($node, "SELECT pg_sleep($t)"); }
			elsif ($kase eq 'rowlock')
			{
				$truth = holding($node, "BEGIN; SELECT 1 FROM acc WHERE id = 1 FOR UPDATE; SELECT pg_sleep($hold); COMMIT;",
					# Its commit does not wait for the WAL flush: that is no part
					# of the lock wait, yet the client's elapsed time held it (an
					# 11 % miss on a loaded machine, with a 0.2 s wait).
					sub { timed_ms($node, 'UPDATE acc SET v = v + 1 WHERE id = 1', 'SET synchronous_commit = off') });
			}
			elsif ($kase eq 'advisory')
			{
				$truth = holding($node, "SELECT pg_advisory_lock(4242); SELECT pg_sleep($hold); SELECT pg_advisory_unlock(4242);",
					sub { timed_ms($node, 'SELECT pg_advisory_lock(4242); SELECT pg_advisory_unlock(4242)') });
			}
			else { ($truth, $io_exact) = cold_scan($node, $tool eq 'psw' && $timing); }
			select(undef, undef, undef, 0.15);    # let the sampler's last period land in the profile
			my ($exact, $sampled) = acc_read($node, $tool, $ty, $ev);
			$exact = $io_exact if $kase eq 'io' && defined $io_exact;
			record_raw($tool, $kase, $r, $truth, $exact, $sampled);
		}
	}
	$node->stop;
}

# Two more cold scans on 18. 18's initdb turns data checksums on (15's
# leaves them off), and 18's read timing (track_io_timing) also covers
# verifying the pages read, after the read itself: an 18 cluster without
# checksums compares like with like. And a page dropped from this machine's
# cache may still come from the host's at memory speed (the scan of a file
# with nothing cached then runs 5-10 times faster than the first), which
# makes that verification a large share of PostgreSQL's read time: with
# direct I/O (debug_io_direct, 16+) no cache of this machine is involved and
# every read reaches the storage, as a cold scan does on a server.
my @variants;
if ($major >= 18 && grep({ $_ eq 'psw' } @tools) && $timing)
{
	@variants = ([ 'io_nocsum', 'IO', 'DataFileRead', { extra => [ '--no-data-checksums' ] }, [] ],
		[ 'io_direct', 'IO', 'DataFileRead', {}, [ 'debug_io_direct = data' ] ]);
	@variants = ($variants[1]) if bench_mode() eq 'smoke';
	for my $v (@variants)
	{
		my $node = acc_node("acc_$v->[0]", 'psw_timing', 'pg_stat_waits', init => $v->[3], conf => $v->[4]);
		for my $r (1 .. $reps)
		{
			acc_reset($node, 'psw');
			record_raw('psw', $v->[0], $r, cold_scan($node, 1), undef);
		}
		$node->stop;
	}
}

# acc_sum(TOOL, CASE, KIND): the sum over repetitions, undef if any is NA.
sub acc_sum
{
	my ($tool, $kase, $kind) = @_;
	my $v = $raw{$tool}{$kase}{$kind} or return undef;
	return undef if !@$v || grep { !defined || $_ eq '' } @$v;
	my $s = 0;
	$s += $_ for @$v;
	return sprintf('%.1f', $s);
}

# acc_cell(VALUE, TRUTH): "1234 (+1.2 %)" or "not available".
sub acc_cell
{
	my ($v, $tr) = @_;
	return 'not available' unless defined $v;
	return sprintf('%.0f', $v) unless defined $tr && $tr > 0;
	return sprintf('%.0f (%+.1f %%)', $v, 100 * ($v - $tr) / $tr);
}

my $chunk = '40_accuracy';
md($chunk, "## 4. Accuracy\n\n",
	"Waits of known length injected one at a time (nominal $t s, $reps repetitions each, figures summed\n",
	"over repetitions): `pg_sleep`, a row lock held by another session (Lock/transactionid), an advisory\n",
	"lock held by another session (Lock/advisory), and a cold sequential scan of a $rows-row table with\n",
	"its pages dropped from the OS cache, without parallel workers (IO/DataFileRead; `io_method = sync` on 18).\n",
	($which eq 'all' ? '' : "This run (unit size) injects only: " . join(', ', map { $_->[0] } @cases) . ".\n"),
	"*truth*: elapsed time of the waiting statement measured by the client; for I/O, PostgreSQL's own\n",
	"timing of the same reads (`track_io_timing = on`, the read time EXPLAIN (ANALYZE, BUFFERS) reports\n",
	"for the scan, planning's reads included). *exact*: `pg_stat_waits.total_time` (for I/O the scanning\n",
	"backend's own, read before and after the statement in its session); *sampled*: `pg_stat_waits_profile.est_time` and pg_wait_sampling's profile\n",
	"count × profile_period. Error = (reported − truth) / truth.\n\n",
	"| wait | truth ms (pg_stat_waits run) | pg_stat_waits exact | pg_stat_waits sampled | truth ms (pg_wait_sampling run) | pg_wait_sampling sampled |\n",
	"|---|---:|---:|---:|---:|---:|\n");
my %label = (
	io => $major >= 18 ? "io, data checksums on: 18's initdb default" : 'io',
	io_nocsum => "io, `initdb --no-data-checksums`, as 15's default",
	io_direct => 'io, `debug_io_direct = data`: every read reaches the storage; checksums on');
for my $c (@cases, @variants)
{
	my ($kase, $ty, $ev) = @$c;
	my ($tr, $ex, $sa) = map { acc_sum('psw', $kase, $_) } qw(truth exact sampled);
	my ($tr2, $sa2) = map { acc_sum('pgws', $kase, $_) } qw(truth sampled);
	metric('accuracy', 'psw', $kase, join(' ', map { $_ // 'NA' } $tr, $ex, $sa), 'truth exact sampled ms');
	metric('accuracy', 'pgws', $kase, join(' ', map { $_ // 'NA' } $tr2, undef, $sa2), 'truth exact sampled ms');
	md($chunk, "| $ty/$ev (" . ($label{$kase} // $kase) . ') | ' . fmt($tr, 0) . ' | ' . acc_cell($ex, $tr) . ' | '
		  . acc_cell($sa, $tr) . ' | ' . fmt($tr2, 0) . ' | ' . acc_cell($sa2, $tr2) . " |\n");

	# What can fail: a truth for every case, an exact figure where the
	# build times, and for the waits of known length (not the I/O, whose
	# reads the host's cache makes short) an error a tool has no reason
	# to exceed.
	for my $tool (@tools)
	{
		my $tt = acc_sum($tool, $kase, 'truth');
		ok(defined $tt && $tt > 0, "$tool, $kase: truth measured") or next;
		# Half its nominal length at least: the holder's and the waiter's
		# connection times shift a lock wait by a few tens of ms.
		ok($tt >= 0.5 * $t * 1000 * $reps, "$tool, $kase: the wait lasted about its nominal $t s (truth $tt ms)")
		  if $kase !~ /^io/;
		next unless $tool eq 'psw' && $timing;
		ok(defined $ex && $ex > 0, "psw, $kase: exact time measured");
		ok(abs($ex - $tt) <= 0.1 * $tt, "psw, $kase: exact within 10 % of the truth ($ex of $tt ms)")
		  if $kase !~ /^io/ && defined $ex;
	}
}
if (@variants)
{
	md($chunk, "\nOn 18, PostgreSQL's read time (`track_io_timing`) runs from staging the read to the end of its\n",
		"completion callbacks, which verify every page read (its checksum too, when the cluster has\n",
		"checksums); `DataFileRead` is the wait for the read alone. That verification is CPU time of a\n",
		"fixed size per page: a small share of a read that reaches the storage (direct I/O), a large one\n",
		"of a read this virtual machine's host serves from its own cache, which dropping the pages from\n",
		"this machine's cache does not prevent. With checksums off the two measure nearly the same thing.\n");
}
my @io_reps;
for my $c (grep { $_->[0] =~ /^io/ } @cases, @variants)
{
	for my $r (1 .. $reps)
	{
		my ($tr, $ex) = map { $raw{psw}{ $c->[0] }{$_}[ $r - 1 ] } qw(truth exact);
		push @io_reps, "$c->[0] r$r " . acc_cell($ex, $tr // 0) . ' of ' . fmt($tr, 0) . ' ms';
	}
}
md($chunk, "\nCold scans one by one (pg_stat_waits exact, and its error, of the truth): " . join('; ', @io_reps) . ".\n")
  if @io_reps && $raw{psw};
md($chunk, "\npg_stat_waits exact: not available — " . feature_why('psw_timing') . ".\n") unless $timing;
md($chunk, "\npg_stat_waits sampled: not available — " . (feature_why('psw_sampler') || feature_why('psw_profile')) . ".\n")
  unless $sampled_psw;
md($chunk, "\n");

done_testing();
