# Connection churn, long: 1000 connections at a time (960 held open, 40
# reconnecting for every statement) for 60 seconds, with exact timing on for
# the whole server. Runs only with PSW_LONG=1
# (./run test --long).
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswChurn;
use PswTest;
use Test::More;

plan skip_all => '1000-connection churn runs only with PSW_LONG=1'
  unless $ENV{PSW_LONG};

my $node = psw_node('churn_long',
	conf => [
		'max_connections = 1100', 'pg_stat_waits.timing = on', 'shared_buffers = 256MB',
		'log_statement = none', 'log_connections = off', 'log_disconnections = off'
	],
	extensions => 1);
subtest 'slots follow connections opening and closing' => sub {
	churn($node, 960, 40, 60);
};
$node->stop;
done_testing();
