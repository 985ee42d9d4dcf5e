
# Copyright (c) pg_stat_waits developers

# 17 changed the case of 41 wait event names (16's IO/WALSync is 17's
# IO/WalSync). A 16 and a 17 server, each preloading pg_stat_waits with
# timing on, commit transactions (fsync on: WAL is written and synced), and
# one `pg_stat_waits_report serve` scrapes both: /metrics must carry each
# server's spelling of the WAL sync wait with the same wait_series,
# "wal_sync", and postgres_exporter's query (queries.yaml) must label both
# alike too. The other major runs from its staged installation, which the
# runner names in PSW_STAGE_BINDIRS ("16=/bindir 17=/bindir"); when it is
# absent the test skips, naming it.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use Time::HiRes qw(sleep time);

my $report = psw_report_bin();
plan skip_all => 'pg_stat_waits_report not found in PATH (or $PSW_REPORT)'
  unless $report && -x $report;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
# The major under test is the pg_config in PATH; the other one comes from
# its stage.
my ($current) = `pg_config --version` =~ /PostgreSQL (\d+)/;
$current //= 0;
my %stage = map { split /=/, $_, 2 } split ' ', ($ENV{PSW_STAGE_BINDIRS} // '');
my %install;
for my $major (16, 17)
{
	next if $major == $current;
	my $bindir = $stage{$major} // '';
	plan skip_all => "PostgreSQL ${major}'s staged installation is absent "
	  . "(PSW_STAGE_BINDIRS='" . ($ENV{PSW_STAGE_BINDIRS} // '')
	  . "'; ./run build --pg $major stages it)"
	  unless $bindir ne '' && -x "$bindir/postgres";
	$install{$major} = dirname($bindir);
}

my %event = (16 => 'WALSync', 17 => 'WalSync');
my %node;
for my $major (16, 17)
{
	my $n = PostgreSQL::Test::Cluster->new("pg$major",
		$install{$major} ? (install_path => $install{$major}) : ());
	$n->init;
	# PostgreSQL::Test::Cluster turns fsync off: then no commit syncs WAL.
	$n->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_waits'
pg_stat_waits.timing = on
fsync = on
synchronous_commit = on
});
	$n->start;
	is(int($n->safe_psql('postgres', 'SHOW server_version_num') / 10000),
		$major, "node pg$major runs PostgreSQL $major");
	# 50 commits, each writing and syncing its WAL.
	$n->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_waits;
CREATE TABLE t (i int);
DO $$ BEGIN FOR i IN 1..50 LOOP INSERT INTO t VALUES (i); COMMIT; END LOOP; END $$;
});
	my $calls = $n->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_waits WHERE wait_event_type = 'IO' AND wait_event = '$event{$major}'");
	ok($calls > 0, "PostgreSQL $major reports WAL syncs as IO/$event{$major} ($calls timed)");
	$node{$major} = $n;
}

# One exporter for both servers.
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $config = "$tmp/targets.conf";
open my $cf, '>', $config or die "$config: $!";
printf $cf "pg%d = host=%s port=%d dbname=postgres\n", $_, $node{$_}->host, $node{$_}->port for (16, 17);
close $cf;
my $port = PostgreSQL::Test::Cluster::get_free_port();
my ($ex_out, $ex_err) = ('', '');
my $exporter = IPC::Run::start([ $report, 'serve', '--listen', "127.0.0.1:$port", '--config', $config ],
	'>', \$ex_out, '2>', \$ex_err);

# /metrics -> [ { label => value } ] of the exact wait-time family (a series
# per event and backend type).
sub wait_series_lines
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'curl', '-sS', '--max-time', '10', "http://127.0.0.1:$port/metrics" ], '>', \$out, '2>', \$err);
	my @rows;
	for (split /\n/, $out)
	{
		next unless /^pg_stat_waits_wait_seconds_total\{(.*)\} \S+$/;
		my %l = $1 =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
		push @rows, \%l;
	}
	return \@rows;
}
my $rows = [];
my $deadline = time + 60;
while (time < $deadline)
{
	$rows = wait_series_lines();
	last if (grep { $_->{target} eq 'pg16' } @$rows) && (grep { $_->{target} eq 'pg17' } @$rows);
	sleep 0.5;
}
for my $major (16, 17)
{
	my @sync = grep { $_->{target} eq "pg$major" && $_->{wait_event_type} eq 'IO' && $_->{wait_event} eq $event{$major} }
	  @$rows;
	ok(scalar(@sync) >= 1, "/metrics: target pg$major has IO/$event{$major} (" . scalar(@sync) . ' backend types)');
	my %series = map { ($_->{wait_series} // '(none)') => 1 } @sync;
	is(join(',', sort keys %series), 'wal_sync', "... with wait_series=\"wal_sync\" on every series");
	my $other = $event{ 33 - $major };
	ok(!grep({ $_->{target} eq "pg$major" && $_->{wait_event} eq $other } @$rows),
		"pg$major has no IO/$other: the two spellings are each server's own");
}
# Every renamed wait both servers report carries one series on both, under
# names that differ only by case; LWLock names (unchanged in 17) carry none.
my %by_series;
for my $r (grep { defined $_->{wait_series} } @$rows)
{
	push @{ $by_series{ $r->{wait_series} }{ $r->{target} } }, "$r->{wait_event_type}/$r->{wait_event}";
}
my @both = grep { $by_series{$_}{pg16} && $by_series{$_}{pg17} } sort keys %by_series;
ok(scalar(grep { $_ eq 'wal_sync' } @both), 'wal_sync is one series across both targets (all shared: '
	  . join(', ', @both) . ')');
my @mismatch = grep {
	my %lc = map { lc($_) => 1 } @{ $by_series{$_}{pg16} }, @{ $by_series{$_}{pg17} };
	keys(%lc) != 1
} @both;
is_deeply(\@mismatch, [], 'each shared series names one event, spelled by case per release');
is(scalar(grep { $_->{wait_event_type} eq 'LWLock' && defined $_->{wait_series} && $_->{wait_series} !~ /^buffer_/ } @$rows),
	0, 'no LWLock event carries a series of 17\'s renames');

# postgres_exporter's query from queries.yaml labels both spellings alike.
my ($query, $qerr) = ('', '');
IPC::Run::run([ '/usr/bin/python3', '-c',
	'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["pg_stat_waits_timed"]["query"])',
	"$root/exporters/postgres_exporter/queries.yaml" ], '>', \$query, '2>', \$qerr);
SKIP:
{
	skip("queries.yaml could not be read (python3-yaml): $qerr", 2) if $query !~ /SELECT/;
	for my $major (16, 17)
	{
		my $series = $node{$major}->safe_psql('postgres',
			"SELECT wait_series FROM ($query) q WHERE wait_event_type = 'IO' AND wait_event = '$event{$major}'");
		is($series, 'wal_sync', "queries.yaml on PostgreSQL $major: IO/$event{$major} has wait_series wal_sync");
	}
}

$exporter->signal('TERM');
$exporter->finish;
$node{$_}->stop for (16, 17);
done_testing();
