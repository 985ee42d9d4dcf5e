# Persistence with the per-backend-type exact tables: a clean restart keeps
# pg_stat_waits / pg_stat_waits_queries rows with their backend_type and the
# eviction counters; a statistics file of the previous format (1) is ignored
# with a LOG line and removed, and the server starts with empty statistics.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('statfile',
	conf => [ "pg_stat_waits.profile_max = 100" ]);
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits');
$node->safe_psql('postgres', 'SET pg_stat_waits.timing = on; SELECT pg_sleep(0.05); SELECT pg_sleep(0.05)');
my $rows_sql = "SELECT wait_event, backend_type, calls FROM pg_stat_waits WHERE wait_event = 'PgSleep' ORDER BY 2";
my $before = $node->safe_psql('postgres', $rows_sql);
like($before, qr/^PgSleep\|client backend\|[0-9]+$/, 'the sleeps are a client backend\'s');
my $q_before = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep' AND backend_type = 'client backend'");
cmp_ok($q_before, '>=', 1, 'the per-query rows carry the backend type');

$node->restart;
is($node->safe_psql('postgres', $rows_sql), $before, 'a clean restart keeps exact rows per backend type');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep' AND backend_type = 'client backend'"),
	$q_before, 'and the per-query rows with their backend type');

# A file of format 1: same layout of the file header, version 1.
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_waits.stat';
ok(-e $file, 'a clean shutdown writes the statistics file');
open(my $fh, '+<:raw', $file) or die "open $file: $!";
seek($fh, 8, 0);
print $fh pack('V', 1);
close($fh);
my $log_offset = -s $node->logfile;
$node->start;
ok(!-e $file, 'the old file is removed at start');
like(slurp_file($node->logfile, $log_offset), qr/ignoring "pg_stat\/pg_stat_waits.stat": statistics file format version 1 is not supported/,
	'the server says why it ignored the file');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_waits"), 0, 'and starts with empty exact tables');

$node->stop;
done_testing();
