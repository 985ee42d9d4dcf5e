# The benchmark harness at unit size (bench/smoke.sh) against this node, so
# that ./run bench cannot rot unnoticed; each line it prints is one assertion.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('bench');
# The harness connects as "postgres", like its own clusters.
$node->safe_psql('postgres', 'CREATE ROLE postgres SUPERUSER LOGIN');
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATA} = $node->data_dir;
psw_run_checks([ 'bash', 'bench/smoke.sh' ], 25);
$node->stop;
done_testing();
