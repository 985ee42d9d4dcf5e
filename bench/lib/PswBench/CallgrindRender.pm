# The markdown of section 1 (chunk 10_callgrind), rendered from the figures
# the callgrind files recorded. Every file of the section calls cg_render()
# last and the chunk is rewritten each time, so it reads in the same order
# whichever of them ran (single-user table, breakdowns, objects, the
# wrapper, the socket and paused-client tables, pgbench, then determinism
# and max_connections scaling) and holds what was measured so far.
package PswBench::CallgrindRender;

use strict;
use warnings;
use Exporter 'import';
use PswBench;
use PswBench::Callgrind;
use PswBench::CallgrindFigures;

our @EXPORT = qw(cg_render);

my $CHUNK = '10_callgrind';

sub _md { md($CHUNK, map { "$_\n" } @_); return; }

sub _rows
{
	my ($section, $cfg) = @_;
	return grep { $_->[0] eq $section && $_->[1] eq $cfg } metrics();
}

sub _note
{
	my ($section, $cfg, $param) = @_;
	my $note = '';
	$note = $_->[5] // '' for grep { $_->[2] eq $param } _rows($section, $cfg);
	return $note;
}

# _breakdown(CONFIG, SECTION, UNIT, PATH): the table of the rows
# cg_breakdown_files recorded (default: single-user, per statement).
sub _breakdown
{
	my ($cfg, $section, $unit, $path) = @_;
	$section //= 'callgrind_self';
	$unit //= 'statement';
	my @rows = _rows($section, $cfg);
	return unless @rows;
	_md('Self instructions per ' . $unit . ' inside pg_stat_waits.so, by function (' . cfg_label($cfg)
		  . (defined $path ? ", $path" : '')
		  . '; what the library calls in postgres/libc is not included, so the sum is a lower bound of its Δ):',
		'', "| instructions / $unit | function |", '|---:|---|');
	my $sum = 0;
	for my $r (@rows)
	{
		(my $fn = $r->[2]) =~ s/\|/\\|/g;
		$fn = substr($fn, 0, 107) . '...' if length($fn) > 110;
		_md("| $r->[3] | `$fn` |");
		$sum += $r->[3];
	}
	_md(sprintf('| %.1f | (sum of the rows above) |', $sum), '');
	return;
}

# _objects(BASE, CONFIG...): per-statement self cost by object, and the
# difference from BASE.
sub _objects
{
	my ($base, @cfgs) = @_;
	my %objs;
	$objs{ $_->[2] } = 1 for grep { $_->[0] eq 'callgrind_object' && abs($_->[3]) >= 0.5 } metrics();
	return unless %objs;
	_md('Instructions per statement by object (self cost), and the difference from ' . cfg_label($base) . ':', '');
	_md('| object | ' . cfg_label($base) . ' |' . join('', map { ' ' . cfg_label($_) . ' | Δ |' } @cfgs));
	_md('|---|---:|' . ('---:|---:|' x @cfgs));
	for my $o (sort keys %objs)
	{
		my $bv = metric_get('callgrind_object', $base, $o) // 0;
		my $row = "| $o | " . fmt($bv) . ' |';
		for my $cfg (@cfgs)
		{
			my $v = metric_get('callgrind_object', $cfg, $o) // 0;
			$row .= ' ' . fmt($v) . ' | ' . fmt($v - $bv) . ' |';
		}
		_md($row);
	}
	_md('');
	return;
}

sub _alloc_cell
{
	my ($section, $cfg) = @_;
	return fmt(metric_get($section, $cfg, 'alloc_instr')) . ' (' . fmt(metric_get($section, $cfg, 'alloc_calls'), 2) . ')';
}

# _repeat_alloc(SECTION): ", glibc's allocator X of them" for the
# baseline's repeat, where it was measured.
sub _repeat_alloc
{
	my $i = metric_get($_[0], 'none_qid', 'alloc_instr_repeat');
	return defined $i ? ", glibc's allocator " . fmt($i) . ' of them' : '';
}

# _client_table(SECTION, PARAM, UNIT): the compute_query_id = on baseline's
# row, then one per configuration measured (label, figure, Δ and % over the
# baseline). Where the allocator's share was measured, two more columns:
# its instructions (calls) per UNIT, and the Δ with its calls at the
# baseline's cost per call, which the acceptance checks read
# (PswBench::CallgrindFigures).
sub _client_table
{
	my ($section, $param, $unit) = @_;
	my $rows = [ metrics() ];
	my $base = metric_get($section, 'none_qid', $param);
	my $balloc = metric_get($section, 'none_qid', 'alloc_instr');
	if (defined $balloc)
	{
		_md("| configuration | instructions / $unit | Δ vs compute_query_id = on | % | of which glibc's allocator (calls) | Δ, allocator at the baseline's cost per call |",
			'|---|---:|---:|---:|---:|---:|',
			'| no extension, compute_query_id = on | ' . fmt($base) . ' | | | ' . _alloc_cell($section, 'none_qid') . ' | |');
	}
	else
	{
		_md("| configuration | instructions / $unit | Δ vs compute_query_id = on | % |", '|---|---:|---:|---:|',
			'| no extension, compute_query_id = on | ' . fmt($base) . ' | | |');
	}
	for my $cfg (@BENCH_CONFIGS[ 1 .. $#BENCH_CONFIGS ])
	{
		my $v = metric_get($section, $cfg, $param);
		next unless defined $v;
		my $c = cg_compare($rows, $section, $param, $cfg);
		my $more = '';
		$more = ' ' . _alloc_cell($section, $cfg) . ' | ' . ($c && $c->{alloc} ? fmt($c->{like}) : 'n/a') . ' |'
		  if defined $balloc;
		_md('| ' . cfg_label($cfg) . ' | ' . fmt($v) . ' | ' . ($c ? fmt($c->{delta}) : 'n/a') . ' | '
			  . ($c ? fmt($c->{pct}, 2) . ' %' : 'n/a') . " |$more");
	}
	return;
}

sub _single_user
{
	my $base = metric_get('callgrind', 'none', 'instr_per_stmt');
	my $basq = metric_get('callgrind', 'none_qid', 'instr_per_stmt');
	_md('## 1. Per-statement instructions (callgrind)', '',
		'valgrind --tool=callgrind on `postgres --single` running N=' . cg_n_single() . ' and 2N `SELECT 1;`; instructions per',
		'statement = (I(2N) − I(N)) / N, so start-up and shutdown cancel. Every run has `track_counts = off`',
		'(the once-a-second statistics flush follows wall-clock time, slow under valgrind), `LD_BIND_NOW=1`',
		"(lazy symbol binding happened at different statements in identical runs), and leaves PostgreSQL's",
		'statistics report (`pgstat_report_stat`, the same in every configuration) out of the count: on 18',
		'what it does per statement follows wall-clock time too. With these, identical runs agree to within a',
		'few instructions/statement (see the repeated baseline below).',
		'Single-user mode loads shared_preload_libraries but runs no background worker: this is the cost a',
		"backend pays per statement; the sampler's own cost is section 2.", '');
	# The honest baseline is compute_query_id = on: pg_stat_waits turns
	# query ids on itself, and so does anyone who runs pg_stat_statements.
	# The allocator's columns where the run measured it (as over a socket).
	my $alloc = defined metric_get('callgrind', 'none_qid', 'alloc_instr');
	my $rows = [ metrics() ];
	_md('| configuration | instructions / statement | compute_query_id = on (same run) | Δ vs compute_query_id = on | % over compute_query_id = on | Δ vs no extension |'
		  . ($alloc ? " of which glibc's allocator (calls) | Δ, allocator at the baseline's cost per call |" : '') . ' note |',
		'|---|---:|---:|---:|---:|---:|' . ($alloc ? '---:|---:|' : '') . '---|');
	for my $cfg ('none', 'none_qid', @BENCH_CONFIGS[ 1 .. $#BENCH_CONFIGS ])
	{
		my @rows = grep { $_->[2] eq 'instr_per_stmt' } _rows('callgrind', $cfg);
		next unless @rows;
		my $v = metric_get('callgrind', $cfg, 'instr_per_stmt');
		my $note = _note('callgrind', $cfg, 'instr_per_stmt');
		if (!defined $v)
		{
			_md('| ' . cfg_label($cfg) . ' | not available | ' . fmt($basq) . ' | | | |' . ($alloc ? ' | |' : '') . " $note |");
			next;
		}
		my $c = $cfg eq 'none_qid' ? undef : cg_compare($rows, 'callgrind', 'instr_per_stmt', $cfg);
		_md('| ' . cfg_label($cfg) . ' | ' . fmt($v) . ' | ' . fmt($basq) . ' | '
			  . (defined $basq ? fmt($v - $basq) . ' | ' . fmt(100 * ($v - $basq) / $basq, 2) . ' % | ' : 'n/a | n/a | ')
			  . (defined $base ? fmt($v - $base) : 'n/a') . ' |'
			  . ($alloc ? ' ' . _alloc_cell('callgrind', $cfg) . ' | ' . ($c && $c->{alloc} ? fmt($c->{like}) : '') . ' |' : '')
			  . " $note |");
	}
	_md('', 'pg_stat_waits turns on query-id computation itself (`EnableQueryId()`, so its ids match',
		'pg_stat_statements), as does pg_stat_statements: the compute_query_id = on run is the baseline,',
		'and the "Δ vs compute_query_id = on" column is what each tool adds (hooks, slot writes, timing).',
		'Targets (issue 56): sampling (default) at most +40 instructions, timing on at most +0.3 %.', '');
	_breakdown('psw_sampling');
	_breakdown('psw_timing');
	# Against no extension; a run without it (the unit size) against the
	# first configuration it has.
	my @shown = grep { defined metric_get('callgrind_object', $_, 'postgres') }
	  qw(none none_qid psw_sampling psw_timing pg_wait_sampling pg_stat_statements);
	my $against = $shown[0] eq 'none' ? shift @shown : $shown[0] if @shown;
	_objects($against, @shown) if @shown;
	return;
}

sub _thousands { my $s = reverse $_[0]; $s =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $s; }

sub _wrapper
{
	my ($wd, $wf, $wn) = map { metric_get('callgrind_wrapper', $_, 'instr_per_call') } qw(noop_direct noop_off noop_on);
	return unless defined $wn;
	my $delta = sub { defined $_[0] && defined $wd ? fmt($_[0] - $wd) : 'n/a' };
	my $calls = cg_wrapper_calls();
	_md('Per timed wait: an exact-timing wrapper around a no-op, called ' . _thousands($calls) . ' and '
		  . _thousands(2 * $calls) . ' times inside one',
		"statement (the test module's wrapper benchmark; slope as above). Under valgrind `clock_gettime` is",
		"libc's wrapper and a system call (no vDSO), so the two clock readings count about 20 instructions of libc",
		"and the kernel's share not at all.", '',
		'| the no-op called | instructions / call | Δ |', '|---|---:|---:|',
		'| through a pointer (not interposed) | ' . fmt($wd) . ' | |',
		'| through the wrapper, timing off | ' . fmt($wf) . ' | ' . $delta->($wf) . ' |',
		'| through the wrapper, timing on | ' . fmt($wn) . ' | ' . $delta->($wn) . ' |', '');
	return;
}

# _measured(SECTION, PARAM): a configuration of SECTION has a figure.
sub _measured
{
	my ($section, $param) = @_;
	return grep { $_->[0] eq $section && $_->[2] eq $param && $_->[3] ne 'NA' } metrics();
}

sub _socket
{
	return unless _measured('callgrind_socket', 'instr_per_stmt');
	_md('Over a Unix socket: N=' . metric_get('callgrind_socket', 'none_qid', 'statements')
		  . " and 2N `SELECT 1;` sent by psql (one round trip each, as pgbench's",
		"simple protocol) to a postmaster running under callgrind; the backend's own count, slope as above.",
		"This is a client's statement in production: the backend also waits for the client's next message,",
		'reads it and sends the result, which `postgres --single` never does; with timing on those are',
		'timed waits. Every run sets compute_query_id = on, so the first row is the baseline (pg_stat_waits',
		"and pg_stat_statements turn it on themselves; pg_wait_sampling's backend, left to itself over a",
		'socket, was measured about 1,070 instructions below it: no query ids).', '');
	_client_table('callgrind_socket', 'instr_per_stmt', 'statement');
	_md('', 'The baseline measured again after the others: '
		  . fmt(metric_get('callgrind_socket', 'none_qid', 'instr_per_stmt_repeat')),
		'instructions/statement' . _repeat_alloc('callgrind_socket')
		  . ". Identical runs agree closely, but a configuration's figure here also moves",
		"with what it does not do per statement. The largest such part is glibc's allocator: a statement",
		'makes the same allocations in every configuration (the calls in parentheses), yet each costs more',
		"or fewer instructions as the heap's free chunks happen to lie, which what is loaded changes (any",
		'preloaded library alike). The last column counts the calls at the baseline\'s cost per call, as the',
		'acceptance checks do.',
		"The single-user table above is the precise one; this one shows what a client's statement adds on top.", '');
	return;
}

sub _pause
{
	return unless _measured('callgrind_pause', 'instr_per_stmt');
	_md('A client that pauses: pgbench sends N=' . metric_get('callgrind_pause', 'none_qid', 'statements')
		  . ' and 2N `SELECT 1;`, pausing 3 ms after each result',
		'(`\sleep 3 ms`), so the backend waits for every next message as behind a network; same slope.',
		"This is the path of issue 56's socket targets: timing on at most +0.5 %, sampling at most +60",
		'instructions per statement; and of issue 72\'s: timing on by default once it adds at most +340',
		'instructions per statement on every major.', '');
	_client_table('callgrind_pause', 'instr_per_stmt', 'statement');
	_md('');
	_breakdown('psw_timing', 'callgrind_pause_self', 'statement', "the paused client's backend");
	_breakdown('psw_sampling', 'callgrind_pause_self', 'statement', "the paused client's backend");
	return;
}

sub _pgbench
{
	return unless _measured('callgrind_pgbench', 'instr_per_tx');
	_md('Per pgbench transaction: one pgbench client (`-b tpcb-like`, simple protocol, the same seed in every',
		"run; synchronous_commit = on with fsync = off, so that each commit's WAL is written before the next",
		"transaction's visibility checks, which an asynchronous commit left to the WAL writer's timing;",
		'io_method = sync from 18 on) runs N=' . metric_get('callgrind_pgbench', 'none_qid', 'transactions')
		  . ' and then 2N transactions against a',
		'postmaster under callgrind, each configuration on a fresh copy of one `pgbench -i -s 1` cluster;',
		"instructions per transaction of the client's backend = the slope. A transaction is seven statements",
		'and seven round trips (BEGIN, three UPDATEs, a SELECT, an INSERT, END), with real reads of table',
		"pages: the per-transaction cost that section 3's transactions per second cannot resolve on a",
		'noisy machine. Every run sets compute_query_id = on, so the first row is the baseline.', '');
	_client_table('callgrind_pgbench', 'instr_per_tx', 'transaction');
	_md('', 'The baseline measured again after the others: '
		  . fmt(metric_get('callgrind_pgbench', 'none_qid', 'instr_per_tx_repeat')),
		'instructions/transaction' . _repeat_alloc('callgrind_pgbench')
		  . '. As over a socket above, a configuration\'s figure also moves by a few',
		"hundred instructions with PostgreSQL's and libc's own state (the allocator, split out as there,",
		'and catalog-cache paths that differ with what is loaded), so only differences well above that',
		"are a tool's own cost. Target with timing on (issue 56): at most +0.5 % per transaction.", '');
	_breakdown('psw_timing', 'callgrind_pgbench_self', 'transaction', "the pgbench client's backend");
	return;
}

# Determinism and scaling: measured by the full run only.
sub _full_only
{
	my $rep = metric_get('callgrind', 'none', 'instr_per_stmt_repeat');
	if (defined $rep)
	{
		_md('Determinism: the no-extension slope measured a second time: ' . fmt($rep)
			  . ' instructions/statement (table: ' . fmt(metric_get('callgrind', 'none', 'instr_per_stmt')) . ').', '');
	}
	return unless defined metric_get('callgrind_scaling', 'none', 'max_connections=100');
	_md('Per-statement cost against max_connections (number of backend slots in shared memory):', '',
		'| max_connections | no extension | pg_stat_waits | Δ |', '|---:|---:|---:|---:|');
	for my $mc (100, 500, 1000)
	{
		my $x0 = metric_get('callgrind_scaling', 'none', "max_connections=$mc");
		my $x1 = metric_get('callgrind_scaling', 'psw_sampling', "max_connections=$mc");
		_md("| $mc | " . fmt($x0) . ' | ' . fmt($x1) . ' | ' . (defined $x0 && defined $x1 ? fmt($x1 - $x0) : 'n/a') . ' |');
	}
	_md('');
	return;
}

# cg_render(): the whole section from the figures recorded so far.
sub cg_render
{
	cg_chunk_reset();
	_single_user();
	_wrapper();
	_socket();
	_pause();
	_pgbench();
	_full_only();
	return;
}

1;
