# Cost of the sampler's lock-blocker lookups (docs/sampling.md): pgbench on
# one hot row (every client updates the same row, so most are in a Lock wait
# at any time), with the lookups on and off in the same cluster (switched
# through the test module, pg_stat_waits_blocker_lookup()), alternating
# rounds. Per round: TPS, the sampler's CPU (schedstat of its pid), lookups
# per second, their wall time (waiting for the lock-manager partition LWLock
# included) and the time that LWLock was held (what backends may wait for).
#
# Opt-in: not part of a plain ./run bench, only of
#   ./run bench --only blockers [--quick]
# (and of the test suite's unit-size run, so that it cannot rot). Needs the
# test module, which ./run build installs into the stage.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use PswBench;
use Test::More;

bench_section('blockers');
my $only = $ENV{PSW_BENCH_ONLY} // '';
plan skip_all => 'opt-in: ./run bench --only blockers'
  unless bench_mode() eq 'smoke' || grep { $_ eq 'blockers' } split /,/, $only;
my $t_start = time();

my ($CLIENTS, $SECS, $ROUNDS) = @{ bench_size(full => [ 8, 15, 2 ], quick => [ 8, 5, 1 ], smoke => [ 4, 1, 1 ]) };
my $CHUNK = '80_blockers';
# What a round reports, in table order: name, unit, decimals, column title.
my @FIELDS = (
	[ tps => 'tps', 0, 'TPS' ],
	[ sampler_cpu_pct => 'pct_core', 2, 'sampler CPU (% of a core)' ],
	[ lookups_per_s => 'per_s', 1, 'lookups/s' ],
	[ us_per_lookup => 'us', 2, 'µs per lookup' ],
	[ us_held => 'us', 2, 'µs LWLock held per lookup' ],
	[ held_ms_per_s => 'ms_per_s', 4, 'ms held per s' ],
	[ lock_samples => 'samples', 0, 'Lock samples' ]);

my $node = bench_node('blk', 'psw_sampling', conf => [ 'max_connections = ' . ($CLIENTS + 20) ]);
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_waits_test');
$node->safe_psql('postgres', 'CREATE TABLE hot (id int PRIMARY KEY, v bigint); INSERT INTO hot VALUES (1, 0)');
my $script = $node->basedir . '/hot.sql';
open my $fh, '>', $script or die "$script: $!";
print $fh "UPDATE hot SET v = v + 1 WHERE id = 1;\n";
close $fh;
my $sampler = $node->safe_psql('postgres', 'SELECT sampler_pid FROM pg_stat_waits_status');
ok($sampler ne '', "sampler running ($sampler)");
die 'no sampler running' if $sampler eq '';

sub blocker_stats
{
	return split /\|/, $node->safe_psql('postgres', 'SELECT lookups, lookup_ms, hold_ms FROM pg_stat_waits_blocker_stats()');
}

# round(MODE, I): one pgbench run with the lookups MODE (on|off); records
# its figures and returns them by name.
sub round
{
	my ($mode, $i) = @_;
	$node->safe_psql('postgres', 'SELECT pg_stat_waits_blocker_lookup(' . ($mode eq 'on' ? 'true' : 'false') . ')');
	$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()');
	my ($l0, $ms0, $h0) = blocker_stats();
	my $ns0 = proc_cpu_ns($sampler);
	my $out = bench_pgbench($node, '-n', '-f', $script, '-c', $CLIENTS, '-j', 2, '-T', $SECS, 'postgres');
	my $ns1 = proc_cpu_ns($sampler);
	my ($l1, $ms1, $h1) = blocker_stats();
	my $locks = $node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_waits_history WHERE wait_event_type = 'Lock'");
	my $l = $l1 - $l0;
	my %r = (
		tps => pgbench_tps($out) // ($out =~ /^tps = ([0-9.]+)/m ? $1 : undef),
		sampler_cpu_pct => 100 * ($ns1 - $ns0) / 1e9 / $SECS,
		lookups_per_s => $l / $SECS,
		us_per_lookup => $l > 0 ? ($ms1 - $ms0) * 1000 / $l : 0,
		us_held => $l > 0 ? ($h1 - $h0) * 1000 / $l : 0,
		held_ms_per_s => ($h1 - $h0) / $SECS,
		lock_samples => $locks);
	note(sprintf('blockers lookups=%s tps=%.1f sampler_cpu_pct=%.3f lookups_per_s=%.1f us_per_lookup=%.2f us_held=%.2f held_ms_per_s=%.4f lock_samples=%d',
		$mode, map { $r{ $_->[0] } // 0 } @FIELDS));
	for my $f (@FIELDS)
	{
		my $v = $r{ $f->[0] };
		metric('blockers_raw', 'psw_sampling', "$f->[0] lookups=$mode round=$i", defined $v ? 0 + sprintf('%.4f', $v) : undef, $f->[1]);
	}
	ok(defined $r{tps} && $r{tps} > 0, "lookups $mode, round $i: pgbench on the hot row ran (" . ($r{tps} // 'no tps') . ' tps)');
	cmp_ok($r{lock_samples}, '>', 0, "lookups $mode, round $i: the sampler saw Lock waits ($r{lock_samples})");
	if ($mode eq 'on')
	{
		cmp_ok($l, '>', 0, "lookups on, round $i: blockers looked up ($l)");
	}
	else
	{
		is($l, 0, "lookups off, round $i: no lookup");
	}
	return \%r;
}

my %rounds = (on => [], off => []);
for my $i (1 .. $ROUNDS)
{
	push @{ $rounds{$_} }, round($_, $i) for qw(on off);
}
$node->safe_psql('postgres', 'SELECT pg_stat_waits_blocker_lookup(true)');
$node->stop;

md($CHUNK, "## Lock-blocker lookups (`./run bench --only blockers`)\n\n",
	"pgbench with $CLIENTS clients updating one row (most of them in a Lock wait at any time), ",
	"$ROUNDS round(s) of $SECS s with the sampler's blocker lookups on, then off, in one cluster ",
	"(switched through the test module); medians per mode. µs per lookup is its wall time, waiting for ",
	"the lock-manager partition LWLock included; held is the time that LWLock was held, what backends ",
	"may wait for.\n\n",
	'| lookups | ' . join(' | ', map { $_->[3] } @FIELDS) . " |\n",
	'|---|' . join('', map { '---:|' } @FIELDS) . "\n");
for my $mode (qw(on off))
{
	my @cells;
	for my $f (@FIELDS)
	{
		my $m = median(map { $_->{ $f->[0] } } @{ $rounds{$mode} });
		metric('blockers', 'psw_sampling', "$f->[0] lookups=$mode", defined $m ? 0 + sprintf('%.4f', $m) : undef,
			$f->[1], "median of $ROUNDS round(s) of $SECS s");
		push @cells, fmt($m, $f->[2]);
	}
	md($CHUNK, "| $mode | " . join(' | ', @cells) . " |\n");
}
md($CHUNK, "\n");

metric('elapsed', 'harness', 'blockers', int(time() - $t_start), 's');
done_testing();
