# exporters/: every postgres_exporter query runs against a preloading server
# and returns the columns its metrics promise, the Grafana dashboard only
# uses metrics the query file produces, and the real postgres_exporter
# (Debian's binary, unpacked into the stage by ./run, when present) exports
# them. test/lib/check_exporters.py does the checking; each of its lines is
# one assertion here (a query skipped for a missing object is a failure).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('exporters');
my $db = 'psw_exporters';
$node->safe_psql('postgres', "CREATE DATABASE $db");
$node->safe_psql($db, 'CREATE EXTENSION pg_stat_waits');
# Some activity so that every query returns rows: a statement timed and
# captured as a slow run (exact waits, per-query rows, executions), then a
# session sleeping while the checker runs (sessions, the sampled profile).
$node->safe_psql($db,
	"SET pg_stat_waits.timing = on; SET pg_stat_waits.capture_min_duration = '10ms'; SELECT pg_sleep(0.2)");
my $bg = $node->background_psql($db);
$bg->query_until(qr/sleeping/, "\\echo sleeping\nSELECT pg_sleep(1);\n");

my @exporter;
my $bin = $ENV{PSW_EXPORTER} // '';
if ($bin ne '' && -x $bin) { @exporter = ('--exporter', $bin); }
else
{
	# Counted as skipped (./run test fetches Debian's exporter; offline it may not).
  SKIP: { skip('postgres_exporter not available: queries checked with psql only, no scrape', 1); }
}

local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGUSER} = scalar getpwuid($<);
my ($out, $err) = ('', '');
IPC::Run::run([ '/usr/bin/python3', 'test/lib/check_exporters.py', @exporter,
		'exporters/postgres_exporter/queries.yaml', 'exporters/postgres_exporter/grafana_dashboard.json', $db ],
	'>', \$out, '2>', \$err);
for my $line (split /\n/, $out)
{
	if ($line =~ /^(ok|not ok|skip) - (.*)$/) { ok($1 eq 'ok', $2); }
	else { note($line); }
}
ok($out =~ /^# \d+ ok/m, 'the checker ran to its end') or diag($err);
unlike($out, qr/\(0 rows\)/, 'every query returned rows, so what the exporter makes of each is checked');
eval { $bg->quit; };
$node->stop;
done_testing();
