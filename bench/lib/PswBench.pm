# Shared code of the benchmarks (bench/t/*.pl, run by prove through
# ./run bench, and at unit size by test/t/060_bench_smoke.pl): the
# configurations compared, what this build has, nodes on
# PostgreSQL::Test::Cluster, raw figures, report chunks and the statistics.
#
# A run's scratch directory ($PSW_BENCH_DIR) collects, from every section:
#   metrics.tsv   one figure a line: section, config, param, value, unit, note
#   features.tsv  what this build has (feature, 1|0, why not)
#   NN_name.md    a section's part of the report, assembled in name order
# bench/report.pl renders bench/results/*.md from them.
#
# Size: $PSW_BENCH_MODE is full (./run bench), quick (--quick) or smoke (the
# test suite's unit size); bench_size() picks a section's numbers by it.
# $PSW_BENCH_ONLY (comma list) names the sections to run; bench_section()
# skips the others.
package PswBench;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use List::Util qw(sum);
use PostgreSQL::Test::Cluster;
use PswBench::Figures qw(read_metrics read_features figure have fmt);
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(
  bench_mode bench_size bench_section bench_dir
  @BENCH_CONFIGS cfg_label cfg_conf cfg_args
  feature feature_why cfg_available
  bench_node bench_pgbench pgbench_tps proc_cpu_ns
  metric metric_get metrics md fmt
  median stats_mmm slope);

# --------------------------------------------------------------- the run

sub bench_dir
{
	my $d = $ENV{PSW_BENCH_DIR} or die "PSW_BENCH_DIR is not set (run the benchmarks with ./run bench)";
	return $d;
}

sub bench_mode { return $ENV{PSW_BENCH_MODE} // 'full'; }

# bench_size(full => X, quick => Y, smoke => Z): this run's size.
sub bench_size
{
	my %by = @_;
	return $by{ bench_mode() } // $by{full};
}

# bench_section(NAME): plan skip_all unless NAME is to run (every section
# unless PSW_BENCH_ONLY lists some).
sub bench_section
{
	my ($name) = @_;
	my $only = $ENV{PSW_BENCH_ONLY} // '';
	plan skip_all => "section $name not selected (--only $only)"
	  if $only ne '' && !grep { $_ eq $name } split /,/, $only;
	return;
}

# --------------------------------------------------------- configurations

# The configurations compared side by side, in report order. Each is started
# only by settings, so a feature missing from the build shows up as "not
# available" instead of a number that would measure something else.
our @BENCH_CONFIGS = qw(none psw_sampling psw_timing pg_wait_sampling pg_stat_statements);

my %LABEL = (
	none => 'no extension',
	none_qid => 'no extension, compute_query_id = on (diagnostic)',
	psw_sampling => 'pg_stat_waits sampling (default, 10 ms)',
	psw_timing => 'pg_stat_waits sampling + timing = on',
	pg_wait_sampling => 'pg_wait_sampling (defaults, 10 ms)',
	pg_stat_statements => 'pg_stat_statements (defaults)');

my %CONF = (
	none => { shared_preload_libraries => '' },
	none_qid => { shared_preload_libraries => '', compute_query_id => 'on' },
	psw_sampling => { shared_preload_libraries => 'pg_stat_waits', 'pg_stat_waits.sample_period' => '10' },
	psw_timing => {
		shared_preload_libraries => 'pg_stat_waits',
		'pg_stat_waits.sample_period' => '10',
		'pg_stat_waits.timing' => 'on'
	},
	pg_wait_sampling => { shared_preload_libraries => 'pg_wait_sampling' },
	pg_stat_statements => { shared_preload_libraries => 'pg_stat_statements' });

sub cfg_label { return $LABEL{ $_[0] } // $_[0]; }

sub _settings
{
	my ($cfg) = @_;
	my $s = $CONF{$cfg} or die "unknown configuration $cfg";
	return map { [ $_, $s->{$_} ] } sort { ($a ne 'shared_preload_libraries') <=> ($b ne 'shared_preload_libraries') || $a cmp $b } keys %$s;
}

# cfg_conf(CONFIG): its postgresql.conf lines, one string.
sub cfg_conf
{
	return join '', map { "$_->[0] = '$_->[1]'\n" } _settings($_[0]);
}

# cfg_args(CONFIG): the same as "-c name=value" arguments (postgres --single,
# a postmaster started by hand).
sub cfg_args
{
	return map { ('-c', "$_->[0]=$_->[1]") } _settings($_[0]);
}

# ---------------------------------------------------------------- features

# What this build and the installation have, found once per run (the first
# section to ask starts pg_stat_waits with timing on and asks it) and kept
# in features.tsv for the others and the report.
my %FEAT;
my %WHY;

sub _detect_features
{
	my $pkglibdir = `pg_config --pkglibdir`;
	chomp $pkglibdir;
	for my $lib (qw(pg_wait_sampling pg_stat_statements))
	{
		$FEAT{$lib} = -f "$pkglibdir/$lib.so" ? 1 : 0;
		$WHY{$lib} = "$lib.so is not installed in the staged PostgreSQL" unless $FEAT{$lib};
	}
	$FEAT{none} = 1;
	$FEAT{psw_hooks} = 1;
	# ./run bench measures release builds; the test suite's smoke run of the
	# benchmarks may meet 19's assertion-enabled build, whose instruction
	# counts (memory-context checks, clobbered frees) are no figures.
	$FEAT{release_build} = `pg_config --configure` =~ /--enable-cassert/ ? 0 : 1;
	$WHY{release_build} = 'PostgreSQL is built with --enable-cassert: its instruction counts are no figures'
	  unless $FEAT{release_build};
	my $node = bench_node('probe', 'psw_timing');
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits');
	my $row = '';
	for (1 .. 50)
	{
		$row = $node->safe_psql('postgres',
			"SELECT coalesce(sampler_pid::text, '') || '|' || coalesce(array_to_string(interposed, ','), '') FROM pg_stat_waits_status");
		last if $row !~ /^\|/;
		select(undef, undef, undef, 0.1);
	}
	my ($sampler, $interposed) = split /\|/, $row, 2;
	$FEAT{psw_sampler} = $sampler ne '' ? 1 : 0;
	$WHY{psw_sampler} = 'pg_stat_waits_status.sampler_pid is NULL: the sampler is not in this build'
	  unless $FEAT{psw_sampler};
	$FEAT{psw_profile} = $node->safe_psql('postgres', "SELECT to_regclass('pg_stat_waits_profile') IS NOT NULL") eq 't' ? 1 : 0;
	$WHY{psw_profile} = 'view pg_stat_waits_profile does not exist in this build' unless $FEAT{psw_profile};
	my $view = $node->safe_psql('postgres', "SELECT to_regclass('pg_stat_waits') IS NOT NULL") eq 't';
	$FEAT{psw_timing} = ($interposed // '') ne '' && $view ? 1 : 0;
	$WHY{psw_timing} = 'pg_stat_waits_status.interposed is empty (or view pg_stat_waits is missing): exact timing is not in this build'
	  unless $FEAT{psw_timing};
	$FEAT{interposed} = $interposed // '';
	# EXPLAIN (ANALYZE, WAITS): an option only a server that lets an
	# extension add EXPLAIN options has (PostgreSQL 18 and later).
	my ($rc, $out, $err) = $node->psql('postgres', 'EXPLAIN (ANALYZE, WAITS) SELECT 1');
	$FEAT{psw_explain_waits} = $rc == 0 ? 1 : 0;
	$err =~ s/^psql:[^\n]*?ERROR:\s*//;
	$WHY{psw_explain_waits} = "EXPLAIN (ANALYZE, WAITS) is refused (" . ($err =~ s/\n.*//sr)
	  . '): the option needs PostgreSQL 18 or later'
	  unless $FEAT{psw_explain_waits};
	$FEAT{psw_sampling} = 1;
	$WHY{psw_sampling} = "hooks only: $WHY{psw_sampler}" unless $FEAT{psw_sampler};
	$node->stop;
	$node->clean_node;
	return;
}

sub _features
{
	return if %FEAT;
	my $file = bench_dir() . '/features.tsv';
	if (-f $file)
	{
		my ($feat, $why) = read_features($file);
		%FEAT = %$feat;
		%WHY = %$why;
		return;
	}
	_detect_features();
	open my $fh, '>', "$file.tmp" or die "cannot write $file: $!";
	print $fh join("\t", $_, $FEAT{$_}, $WHY{$_} // '') . "\n" for sort keys %FEAT;
	close $fh;
	rename "$file.tmp", $file or die "cannot rename $file: $!";
	return;
}

# feature(NAME): 1 when the build has it (psw_sampler, psw_profile,
# psw_timing, psw_explain_waits, pg_wait_sampling, pg_stat_statements,
# release_build: PostgreSQL without assertions; "interposed" is the list
# of wrapped calls); feature_why(NAME): why not.
sub feature { _features(); return $FEAT{ $_[0] } // 0; }
sub feature_why { _features(); return $WHY{ $_[0] } // ''; }

# cfg_available(CONFIG): what makes the configuration different is there.
sub cfg_available
{
	my ($cfg) = @_;
	return 1 if $cfg eq 'none' || $cfg eq 'none_qid' || $cfg eq 'psw_sampling';
	return feature($cfg) ? 1 : 0;
}

# ------------------------------------------------------------------- nodes

# What every benchmark server runs with besides its configuration.
# PostgreSQL::Test::Cluster's init writes test settings a measurement must
# not carry: log_statement = all (a log line per statement: thousands of
# instructions, and I/O), fsync = off, and wal_level = minimal with
# max_wal_senders = 0 (fewer process slots, so less shared memory). They go
# back to PostgreSQL's defaults; a postgres started by hand on the node's
# data directory (postgres --single, a postmaster under valgrind) reads the
# same file.
our $SERVER_CONF = <<'EOC';
fsync = on
log_statement = none
log_replication_commands = off
wal_level = replica
max_wal_senders = 10
max_connections = 200
client_connection_check_interval = 250ms
EOC

# bench_node(NAME, CONFIG, conf => [lines], init => {initdb options},
# start => 0|1): a node of CONFIG, started unless start => 0. The caller
# stops it (PostgreSQL::Test::Cluster stops what is left at exit).
sub bench_node
{
	my ($name, $cfg, %o) = @_;
	my $node = PostgreSQL::Test::Cluster->new("${name}_$cfg");
	$node->init(%{ $o{init} // {} });
	$node->append_conf('postgresql.conf',
		$SERVER_CONF . cfg_conf($cfg) . join('', map { "$_\n" } @{ $o{conf} // [] }));
	$node->start unless defined $o{start} && !$o{start};
	return $node;
}

# bench_pgbench(NODE, ARGS...): runs pgbench against NODE; returns its
# standard output and error together. PGOPTIONS from the caller's %ENV.
sub bench_pgbench
{
	my ($node, @args) = @_;
	my $out = '';
	IPC::Run::run([ 'pgbench', '-h', $node->host, '-p', $node->port, @args ], '>&', \$out);
	return $out;
}

# pgbench_tps(OUTPUT): its tps without initial connection time, or undef.
sub pgbench_tps
{
	return $_[0] =~ /^tps = ([0-9.]+) \(without initial connection time\)/m ? $1 + 0 : undef;
}

# proc_cpu_ns(PID): CPU time the process has spent on a CPU, in ns
# (scheduler accounting, finer than the 10 ms ticks of /proc/PID/stat).
sub proc_cpu_ns
{
	open my $fh, '<', "/proc/$_[0]/schedstat" or return 0;
	my $line = <$fh>;
	return (split ' ', $line // '0')[0] + 0;
}

# ------------------------------------------------------------ raw figures

# metric(SECTION, CONFIG, PARAM, VALUE, UNIT, NOTE): one raw figure; VALUE
# undef is written NA (not measured; NOTE says why).
sub metric
{
	my ($section, $cfg, $param, $value, $unit, $note) = @_;
	open my $fh, '>>', bench_dir() . '/metrics.tsv' or die "metrics.tsv: $!";
	print $fh join("\t", $section, $cfg, $param, $value // 'NA', $unit // '', $note // '') . "\n";
	close $fh;
	return;
}

# metrics(): every raw figure so far, as [section, config, param, value,
# unit, note] rows.
sub metrics
{
	return @{ read_metrics(bench_dir() . '/metrics.tsv') };
}

# metric_get(SECTION, CONFIG, PARAM): the last value recorded, or undef
# (also for NA).
sub metric_get
{
	my $v = figure(read_metrics(bench_dir() . '/metrics.tsv'), @_);
	return have($v) ? $v : undef;
}

# md(CHUNK, TEXT...): appends markdown to the report chunk CHUNK (e.g.
# "10_callgrind"); chunks are assembled in name order.
sub md
{
	my ($chunk, @text) = @_;
	open my $fh, '>>', bench_dir() . "/$chunk.md" or die "$chunk.md: $!";
	print $fh @text;
	close $fh;
	return;
}

# -------------------------------------------------------------- statistics

sub median
{
	my @v = sort { $a <=> $b } grep { defined } @_;
	return undef unless @v;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

# stats_mmm(VALUES...): (median, min, max, n); undefs for none.
sub stats_mmm
{
	my @v = sort { $a <=> $b } grep { defined } @_;
	return (undef, undef, undef, 0) unless @v;
	return (median(@v), $v[0], $v[-1], scalar @v);
}

# slope(I_N, I_2N, N): the cost of one unit between a run of N and one of
# 2N (start-up and shutdown cancel), or undef.
sub slope
{
	my ($a, $b, $n) = @_;
	return undef unless defined $a && defined $b && $n;
	return ($b - $a) / $n;
}

1;
