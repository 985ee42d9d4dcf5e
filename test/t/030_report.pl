# pg_stat_waits_report: the terminal (`top` in tmux) and the HTML report
# (rendered by headless Chromium), driven by test/report/report_checks.sh
# against this node; each line it prints is one assertion here.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('report');
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGUSER} = scalar getpwuid($<);
my $free_port = PostgreSQL::Test::Cluster::get_free_port();
psw_run_checks([ 'bash', 'test/report/report_checks.sh', $free_port ], 60);
$node->stop;
done_testing();
