# The tables at their largest: pg_stat_waits.profile_max at its maximum
# (10,000,000 keys; the per-query table twice that, rounded up to 2^25
# rows, 1.3 GB) with exact timing on. Every view over them answers: a
# reader's private copy of such a table is over palloc's 1 GB limit and
# must be a huge allocation. A reset empties them and a clean restart
# saves and loads them. About 3 GB of shared memory, zeroed at start.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Utils;
use PswTest;
use Test::More;

my $node = psw_node('largest_tables',
	conf => [ 'pg_stat_waits.profile_max = 10000000', 'pg_stat_waits.timing = on' ],
	extensions => 1);

is($node->safe_psql('postgres', 'SELECT profile_max FROM pg_stat_waits_status'),
	'10000000', 'the server runs with profile_max at its maximum');
is($node->safe_psql('postgres', 'SELECT query_max FROM pg_stat_waits_timing_info()'),
	33554432, 'the per-query table has 2^25 rows');

# Something in every table: a sleep is sampled and timed.
$node->safe_psql('postgres', 'SELECT pg_sleep(0.3) AS largest_probe');
ok( wait_until(
		sub {
			$node->safe_psql('postgres', "SELECT count(*) > 0 FROM pg_stat_waits_profile WHERE wait_event = 'PgSleep'")
			  eq 't';
		}),
	'the profile answers, with the sleep sampled');
my $timed = "SELECT count(*) FROM pg_stat_waits_queries q JOIN pg_stat_statements s USING (queryid) "
  . "WHERE s.query LIKE '%largest_probe%' AND q.wait_event = 'PgSleep' AND q.total_time >= 290";
ok(wait_until(sub { $node->safe_psql('postgres', $timed) eq '1' }), 'pg_stat_waits_queries answers, with the sleep timed');
for my $view (qw(pg_stat_waits pg_stat_waits_history pg_stat_waits_activity))
{
	cmp_ok($node->safe_psql('postgres', "SELECT count(*) FROM $view"), '>', 0, "$view answers");
}

# A clean restart saves the tables and loads them back.
$node->restart;
is($node->safe_psql('postgres', $timed), 1, 'a clean restart keeps the timed sleep');

$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset()');
is( $node->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep') + "
		  . "(SELECT count(*) FROM pg_stat_waits_profile WHERE wait_event = 'PgSleep')"),
	0, 'pg_stat_waits_reset() empties them');

$node->stop;
done_testing();
