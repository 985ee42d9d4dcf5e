# What EXPLAIN (ANALYZE, WAITS) costs over EXPLAIN ANALYZE (issue 69): a
# scan and aggregate of a 1,000,000-row table, both with TIMING on and
# BUFFERS off, in pairs run back to back in one psql session, the order
# alternating, so that the machine's drift falls mostly inside a pair. The
# figure is the median over the pairs of the ratio of the two statements'
# wall clock as the client sees it (psql's \timing: from sending the
# statement to the last row of the plan, planning and printing included);
# EXPLAIN's own "Execution Time" is recorded beside it. pg_stat_waits is
# loaded with timing off, its default: the option then arms the timing of
# waits and the per-node wrappers for that one statement, which is all it
# costs. The table is cached in shared buffers and the plan serial, so the
# ratio is the per-row cost of the wrappers, not the I/O or the scheduling
# of parallel workers on a shared machine. Only servers that have the
# option (PostgreSQL 18 and later) run it.
use strict;
use warnings;
use PswBench;
use Test::More;

bench_section('explain');

my ($pairs, $rows) = @{
	bench_size(
		full => [ 50, 1_000_000 ],
		quick => [ 15, 1_000_000 ],
		# Unit size: every path once, a table that scans in milliseconds.
		smoke => [ 2, 10_000 ])
};
my $chunk = '36_explain';
my $head = "## 3c. EXPLAIN (ANALYZE, WAITS) against EXPLAIN ANALYZE, in pairs\n\n";
my $cfg = 'psw_sampling';

if (!feature('psw_explain_waits'))
{
	my $why = feature_why('psw_explain_waits');
	metric('explain_waits', $cfg, 'wall ratio', undef, 'ratio', $why);
	md($chunk, $head, "not available: $why\n\n");
	plan skip_all => $why;
}
my $query = 'SELECT count(*), sum(x) FROM t';
my %opts = (plain => 'ANALYZE, TIMING ON, BUFFERS OFF', waits => 'ANALYZE, TIMING ON, BUFFERS OFF, WAITS');
note("EXPLAIN ($opts{waits}) against ($opts{plain}): $pairs pairs over $rows rows");

# shared_buffers holds the table (a scan of more than a quarter of them
# would read through a small ring from the OS cache); no JIT, no workers.
my $node = bench_node('explain', $cfg,
	conf => [ 'shared_buffers = 256MB', 'jit = off', 'max_parallel_workers_per_gather = 0', 'autovacuum = off' ]);
$node->safe_psql('postgres', "CREATE TABLE t AS SELECT g AS x FROM generate_series(1, $rows) g; VACUUM ANALYZE t");
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows, "table of $rows rows");

# The option is armed: a wait inside the explained query shows on its node.
my $probe = $node->safe_psql('postgres', 'EXPLAIN (ANALYZE, WAITS, COSTS OFF) SELECT pg_sleep(0.01)');
like($probe, qr/^\s*Waits: Timeout\/PgSleep [0-9.]+ ms \(1 call\)$/m, 'EXPLAIN (ANALYZE, WAITS) shows a sleep on its node');

# One session: each kind once to warm the cache and the session, then the
# pairs. psql prints each statement's plan and then its "Time:".
my @order;
my $script = "\\timing on\n";
for my $kind (qw(plain waits), map { $_ % 2 ? qw(waits plain) : qw(plain waits) } 1 .. $pairs)
{
	push @order, $kind;
	$script .= "EXPLAIN ($opts{$kind}) $query;\n";
}
my ($out, $err) = ('', '');
my $rc = $node->psql('postgres', $script, stdout => \$out, stderr => \$err);
$node->stop;
is($rc, 0, 'every EXPLAIN ran') or diag($err);

# Each statement's (Execution Time, Time) in the script's order.
my (@runs, $exec);
for my $line (split /\n/, $out)
{
	$exec = $1 if $line =~ /^\s*Execution Time: ([0-9.]+) ms$/;
	if ($line =~ /^Time: ([0-9.]+) ms/)
	{
		push @runs, [ $exec, $1 ];
		$exec = undef;
	}
}
is(scalar @runs, scalar @order, 'a wall clock and an execution time for every EXPLAIN');
# What the WAITS plans printed: a scan of cached pages waits rarely.
my @waits_lines = $out =~ /^\s*(Waits[^:]*: .*)$/mg;
note("waits printed: $_") for @waits_lines;
my (%wall, %execs, @wall_ratio, @exec_ratio);
splice @order, 0, 2;
splice @runs, 0, 2;
for my $i (1 .. $pairs)
{
	my %r = map { $order[ 2 * ($i - 1) + $_ ] => $runs[ 2 * ($i - 1) + $_ ] } 0, 1;
	next unless $r{plain} && $r{waits} && defined $r{plain}[0] && defined $r{waits}[0] && $r{plain}[1] > 0;
	for my $k (qw(plain waits))
	{
		push @{ $execs{$k} }, $r{$k}[0];
		push @{ $wall{$k} }, $r{$k}[1];
	}
	push @wall_ratio, sprintf('%.6g', $r{waits}[1] / $r{plain}[1]);
	push @exec_ratio, sprintf('%.6g', $r{waits}[0] / $r{plain}[0]);
	metric('explain_waits_raw', $cfg, "wall ratio pair=$i", $wall_ratio[-1], 'ratio');
	metric('explain_waits_raw', $cfg, "execution ratio pair=$i", $exec_ratio[-1], 'ratio');
}
my %st = (
	'wall ratio' => [ stats_mmm(@wall_ratio) ],
	'execution ratio' => [ stats_mmm(@exec_ratio) ],
	map { ("wall $_" => [ stats_mmm(@{ $wall{$_} // [] }) ], "execution $_" => [ stats_mmm(@{ $execs{$_} // [] }) ]) }
	  qw(plain waits));
metric('explain_waits', $cfg, $_, join(' ', map { $_ // 'NA' } @{ $st{$_} }), /ratio/ ? 'median min max n' : 'ms median min max n')
  for sort keys %st;
metric('explain_waits', $cfg, 'rows', $rows, 'count');
is($st{'wall ratio'}[3], $pairs, 'a wall-clock ratio for every pair');
ok(($st{'wall ratio'}[1] // 0) > 0 && ($st{'execution ratio'}[1] // 0) > 0, 'ratios finite and positive');

(my $nrows = reverse $rows) =~ s/(\d{3})(?=\d)/$1,/g;
$nrows = reverse $nrows;
my $ms = sub { my $s = $st{ $_[0] }; fmt($s->[0], 1) . ' [' . fmt($s->[1], 1) . ' – ' . fmt($s->[2], 1) . ']' };
my $ratio = sub { my $s = $st{ $_[0] }; fmt($s->[0], 3) . ' [' . fmt($s->[1], 3) . ' – ' . fmt($s->[2], 3) . ']' };
md($chunk, $head,
	"`EXPLAIN ($opts{plain}) $query` against the same with `WAITS`, over a table of $nrows rows held in\n",
	"shared buffers (`shared_buffers = 256MB`, serial plan, no JIT), on one cluster with pg_stat_waits loaded and\n",
	"timing off: the option arms the timing of waits and the per-node wrappers for its statement alone.\n",
	"$pairs pairs in one psql session after one unmeasured run of each, back to back, the order alternating.\n",
	"Wall clock: psql's `\\timing` (sending the statement to the plan's last line); execution: EXPLAIN's own\n",
	"`Execution Time`. Figures: median [min – max] over the pairs. Target (issue 69): wall clock\n",
	"WAITS / plain ≤ 1.05.\n\n",
	"| measurement | EXPLAIN ANALYZE | EXPLAIN (ANALYZE, WAITS) | WAITS / plain |\n", "|---|---:|---:|---:|\n",
	'| wall clock, ms | ' . $ms->('wall plain') . ' | ' . $ms->('wall waits') . ' | ' . $ratio->('wall ratio') . " |\n",
	'| Execution Time, ms | ' . $ms->('execution plain') . ' | ' . $ms->('execution waits') . ' | '
	  . $ratio->('execution ratio') . " |\n\n",
	'Lines of waits the WAITS plans printed: ' . scalar(@waits_lines) . ' over ' . ($pairs + 1)
	  . " plans: a scan of cached pages waits rarely, so the ratio is the cost of the wrappers themselves.\n\n");

done_testing();
