# Exact timing of data file reads: with shared_buffers smaller than a table,
# a sequential scan must read it from the kernel (IO/DataFileRead), and every
# read is timed.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;

# One read call per page, by the backend itself, as in PostgreSQL 15: later
# versions combine reads (io_combine_limit, 17) and may hand them to I/O
# workers (io_method, 18).
my $node = psw_node(
	'small_buffers',
	conf => [
		'shared_buffers = 16MB',
		sub {
			my $v = shift->pg_version;
			return ($v >= 17 ? 'io_combine_limit = 1' : (),
				$v >= 18 ? "io_method = 'sync'" : ());
		}
	],
	extensions => 1);
my $admin = psw_session($node);

is( sql($admin,
		"SELECT 'pread' = ANY(interposed) AND 'epoll_wait' = ANY(interposed) FROM pg_stat_waits_status"
	),
	't',
	'reads and latch waits are interposed');

my $sb = sql($admin,
	"SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'");
cmp_ok($sb, '<=', 32 * 1024 * 1024, 'shared_buffers is small');

# ~15 rows of ~500 bytes a page: twice shared_buffers.
my $rows = $sb / 8192 * 2 * 15;
sql($admin,
	"CREATE TABLE tim_big AS SELECT g, repeat('x', 480) AS pad FROM generate_series(1, $rows) g");
my $pages = sql($admin, "SELECT pg_relation_size('tim_big') / 8192");
cmp_ok($pages * 8192, '>', $sb, "the table ($pages pages) is larger than shared_buffers");

sub data_file_reads
{
	return split /\|/,
	  sql($admin,
		"SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_waits "
		  . "WHERE wait_event_type = 'IO' AND wait_event = 'DataFileRead'");
}

my $s = psw_session($node, 'SET pg_stat_waits.timing = on');
my ($calls0, $ms0) = data_file_reads();
sql($s, 'SELECT count(*) FROM tim_big');
my ($calls1, $ms1) = data_file_reads();
cmp_ok($calls1 - $calls0, '>', $pages / 4, "timed reads of a scan of $pages pages");
cmp_ok($ms1 - $ms0, '>', 0, 'with time');

$_->quit for $s, $admin;
$node->stop;
done_testing();
