# Persistence with the per-backend-type exact tables: a clean restart keeps
# pg_stat_waits / pg_stat_waits_queries rows with their backend_type and the
# eviction counters and each statement's CPU row; the exact tables' block of
# format 2 (CPU rows holding elapsed time) is converted as it loads; a
# statistics file of an older file format (1) is ignored with a LOG line
# and kept aside, and the server starts with empty statistics.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use PswStatFile;

my $node = psw_node('statfile',
	conf => [ "pg_stat_waits.profile_max = 100" ]);
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits');
$node->safe_psql('postgres', 'SET pg_stat_waits.timing = on; SELECT pg_sleep(0.05); SELECT pg_sleep(0.05)');
$node->safe_psql('postgres',
	'SET pg_stat_waits.timing = on; SET work_mem = \'256MB\'; '
	  . 'SELECT pg_sleep(0.02), count(*) AS cpu_and_sleep FROM generate_series(1, 2000000)');
my $rows_sql = "SELECT wait_event, backend_type, calls FROM pg_stat_waits WHERE wait_event = 'PgSleep' ORDER BY 2";
my $before = $node->safe_psql('postgres', $rows_sql);
like($before, qr/^PgSleep\|client backend\|[0-9]+$/, 'the sleeps are a client backend\'s');
my $q_before = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep' AND backend_type = 'client backend'");
cmp_ok($q_before, '>=', 1, 'the per-query rows carry the backend type');

# A statement with more CPU than waits (its sleep the shortest): its CPU row
# and the sum of its wait rows, as saved.
my $stmt_sql = q{
SELECT round(sum(total_time) FILTER (WHERE wait_event_type = 'CPU')::numeric, 6) || '|'
    || round(sum(total_time) FILTER (WHERE wait_event_type <> 'CPU')::numeric, 6)
  FROM pg_stat_waits_queries
 WHERE queryid = (SELECT queryid FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep'
                   ORDER BY total_time LIMIT 1) AND backend_type = 'client backend'};
my $stmt_before = $node->safe_psql('postgres', $stmt_sql);
my ($cpu_before, $waits_before) = split /\|/, $stmt_before;
cmp_ok($cpu_before, '>', $waits_before, "the statement's CPU row ($cpu_before ms) is above its waits ($waits_before ms)");

$node->restart;
is($node->safe_psql('postgres', $rows_sql), $before, 'a clean restart keeps exact rows per backend type');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep' AND backend_type = 'client backend'"),
	$q_before, 'and the per-query rows with their backend type');
is($node->safe_psql('postgres', $stmt_sql), $stmt_before, 'and a CPU row as it was');

# The exact tables' block of format 2, whose CPU rows held elapsed time
# (CPU + waits): the same file with that format word loads with each CPU
# row less its statement's waits. Such blocks came in files of format 2,
# without checksums, which is how the file is rewritten here.
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_waits.stat';
my $contents = read_bytes($file);
my $block = index($contents, "PSWTIME\0");
cmp_ok($block, '>', 0, 'the statistics file has the exact tables\' block');
is(unpack('V', substr($contents, $block + 8, 4)), 3, 'of format 3');
substr($contents, $block + 8, 4) = pack('V', 2);
write_bytes($file, stat_as_format2($contents));
$node->start;
my ($cpu_after, $waits_after) = split /\|/, $node->safe_psql('postgres', $stmt_sql);
is($waits_after, $waits_before, 'a block of format 2 loads its wait rows as they were');
cmp_ok(abs($cpu_after - ($cpu_before - $waits_before)), '<', 0.00001,
	"and its CPU rows less the same statement's waits ($cpu_after ms)");

# A file of format 1: same layout of the file header, version 1.
$node->stop;
ok(-e $file, 'a clean shutdown writes the statistics file');
open(my $fh, '+<:raw', $file) or die "open $file: $!";
seek($fh, 8, 0);
print $fh pack('V', 1);
close($fh);
my $log_offset = -s $node->logfile;
$node->start;
ok(!-e $file, 'the old file is moved away at start');
ok(-e "$file.bad", 'and kept aside for inspection');
like(slurp_file($node->logfile, $log_offset),
	qr/LOG:  pg_stat_waits: statistics file "pg_stat\/pg_stat_waits.stat" not loaded: statistics file format version 1 is not supported; statistics start empty/,
	'the server says why it ignored the file');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_waits"), 0, 'and starts with empty exact tables');

$node->stop;
done_testing();
