# Bridge while the libpqxx GoogleTest integration programs (test/integration)
# exist: runs them against nodes of this test, one assertion per test case,
# as ./run test ran them before (main node; a small-shared_buffers node for
# the Timing.SmallBuffers cases; --long: 1000-connection churn). Remove this
# file with test/integration once its TAP replacements (1xx_*.pl) are in.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $bin = 'build-tests/psw_integration_tests';
plan skip_all => 'no integration programs in this checkout' unless -x $bin;

sub run_gtest
{
	my ($node, $what, $filter, %env) = @_;
	$node->safe_psql('postgres', 'CREATE DATABASE psw_it');
	local %ENV = (%ENV, %env,
		PSW_BINDIR => scalar(`pg_config --bindir` =~ s/\s+$//r),
		PSW_CONNINFO => 'host=' . $node->host . ' port=' . $node->port . ' user=postgres dbname=psw_it');
	my ($out, $err) = ('', '');
	IPC::Run::run([ $bin, '--gtest_color=no', ($filter ? ("--gtest_filter=$filter") : ()) ],
		'>', \$out, '2>&1');
	my $n = 0;
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+) \(/)
		{
			my ($res, $name) = ($1, $2);
			$n++;
			if ($res eq 'SKIPPED' && $what eq 'main') { note("$name skipped on the main node"); next; }
			ok($res eq 'OK', "$what: $name") or diag(join("\n", grep { /Failure|Expected|Which is|actual|error/i } split /\n/, $out));
		}
		elsif ($line =~ /^churn:/) { note($line); }
	}
	ok($n > 0, "$what: the program ran its cases") or diag($out);
}

my $main = psw_node('main', conf => [ 'max_connections = 300', 'max_prepared_transactions = 10', 'fsync = on' ]);
$main->safe_psql('postgres', 'CREATE ROLE postgres SUPERUSER LOGIN');
run_gtest($main, 'main', '');
$main->stop;

my $small = psw_node('small', conf => ['shared_buffers = 16MB']);
$small->safe_psql('postgres', 'CREATE ROLE postgres SUPERUSER LOGIN');
run_gtest($small, 'small-buffers', 'Timing.SmallBuffers*:Timing.StatusListsTheInterposedCalls');
$small->stop;

if (psw_long())
{
	my $churn = psw_node('churn',
		conf => [ 'max_connections = 1100', 'pg_stat_waits.timing = on', 'shared_buffers = 256MB' ]);
	$churn->safe_psql('postgres', 'CREATE ROLE postgres SUPERUSER LOGIN');
	run_gtest($churn, 'churn-1000', 'Churn.*', PSW_CHURN_CONNECTIONS => 1000, PSW_CHURN_SECONDS => 60);
	$churn->stop;
}
done_testing();
