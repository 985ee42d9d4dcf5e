# A timeline asked of a server younger than its window, whose workload
# crossed a minute boundary, still comes in the buckets asked for: the
# history holds every sample since the start, so it answers, not the minute
# buckets. (The first `./run demo` of a fresh clone printed minute buckets
# under a 5-second heading: the buckets' start and the history's were two
# clock readings microseconds apart, and once the start's minute closed the
# history looked as if it had lost samples the buckets held.)
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;
use Time::HiRes qw(time usleep);

# Started late in a wall-clock minute (second 50 to 53), so that a short
# workload crosses into the next one.
my $node = psw_node('young', start => 0);
my $sec = time() - int(time() / 60) * 60;
usleep(1e6 * ($sec < 50 ? 50 - $sec : $sec > 53 ? 110 - $sec : 0));
$node->start;
my $start = $node->safe_psql('postgres', 'SELECT extract(epoch FROM pg_postmaster_start_time())');
note(sprintf('started at second %.1f of its minute', $start - int($start / 60) * 60));
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits');

# Sleep into the next minute, 3 s past its start, then a little more so the
# sampler has closed the start's minute.
my $until = int($start / 60) * 60 + 63;
$node->safe_psql('postgres', sprintf('SELECT pg_sleep(%.3f)', $until - time()));
usleep(500_000);
cmp_ok(time() - $start, '<', 60, 'the server is younger than the window');

my $rows = $node->safe_psql('postgres', q{SELECT extract(epoch FROM bucket_start)::numeric
	FROM pg_stat_waits_timeline('1 minute', '5 seconds') WHERE wait_event = 'PgSleep' ORDER BY 1});
my @starts = split /\n/, $rows;
note("PgSleep buckets: @starts");
cmp_ok(scalar @starts, '>=', 2, 'the sleep spans several buckets');
my @off = grep { $_ != int($_ / 5) * 5 } @starts;
is(scalar @off, 0, 'every bucket starts on a multiple of 5 s');
my @gaps = map { $starts[$_] - $starts[ $_ - 1 ] } 1 .. $#starts;
is_deeply([ grep { $_ != 5 } @gaps ], [], 'consecutive buckets are 5 s apart, not a minute');
ok((grep { $_ != int($_ / 60) * 60 } @starts) > 0, 'buckets inside the minute, not only at its start');

$node->stop;
done_testing();
