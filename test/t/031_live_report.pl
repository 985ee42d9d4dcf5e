# pg_stat_waits_report's live page (serve, /report/NAME) in a real headless
# Chromium at 1400 and 800 px, report --compare on a scripted lock storm,
# the last bucket's load against the activity view, and the sampled against
# the exact shares of the top statements: test/report/live_checks.sh
# against this node; each line it prints is one assertion here.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('live_report');
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGUSER} = scalar getpwuid($<);
my $http_port = PostgreSQL::Test::Cluster::get_free_port();
psw_run_checks([ 'bash', 'test/report/live_checks.sh', $http_port ], 17);
$node->stop;
done_testing();
