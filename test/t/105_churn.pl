# Connection churn, short: 40 connections at a time (30 held open, 10
# reconnecting for every statement) for 3 seconds; 106_churn_long.pl runs
# 1000 for a minute.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswChurn;
use PswTest;
use Test::More;

my $node = psw_node('churn', conf => ['max_connections = 300'], extensions => 1);
subtest 'slots follow connections opening and closing' => sub {
	churn($node, 30, 10, 3);
};
$node->stop;
done_testing();
