# A bounded fuzz run (./run test --long, or any run that sets
# PSW_SQLSMITH_SECONDS, as CI does on the assertion-enabled 19): sqlsmith sends random queries over
# the whole catalog, the functions and views of pg_stat_waits and
# pg_wait_sampling_compat included, to a server that samples and times
# everything (timing on, track = all, sample_idle on) while pgbench runs
# beside it: first as a plain role, then as a superuser. It fails on any
# crash: a process ended by a signal, a PANIC or a failed assertion in the
# log, a reinitialized or dead postmaster.
#
# Budget, split 60/40 between the plain role and the superuser, whichever
# ends first: PSW_SQLSMITH_SECONDS (default 600) and PSW_SQLSMITH_QUERIES
# (default 50000).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use PswTest;

plan skip_all => 'the sqlsmith fuzz run runs only with PSW_LONG=1 or PSW_SQLSMITH_SECONDS set'
  unless psw_long() || $ENV{PSW_SQLSMITH_SECONDS};

my $seconds = $ENV{PSW_SQLSMITH_SECONDS} // 600;
my $queries = $ENV{PSW_SQLSMITH_QUERIES} // 50000;
my ($sqlsmith) = grep { -x $_ } map { "$_/sqlsmith" } split /:/, $ENV{PATH};
ok($sqlsmith, 'sqlsmith is installed (Debian package sqlsmith)') or BAIL_OUT('no sqlsmith');

my $node = psw_node('sqlsmith',
	conf => [
		'pg_stat_waits.timing = on', 'pg_stat_waits.track = all', 'pg_stat_waits.sample_idle = on',
		'pg_stat_waits.capture_min_duration = 100',
		# sqlsmith's queries may run long or wait; they are cut, not waited for.
		"statement_timeout = '2s'", "lock_timeout = '1s'"
	]);
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pg_wait_sampling_compat CASCADE; '
	  . 'CREATE ROLE psw_fuzz LOGIN; '
	  . 'CREATE TABLE fuzz_t AS SELECT g AS a, md5(g::text) AS b, now() AS c FROM generate_series(1, 1000) g; '
	  . 'GRANT SELECT ON fuzz_t TO psw_fuzz');
$node->command_ok([ 'pgbench', '-q', '-i', '-s', '1', '-h', $node->host, '-p', $node->port, 'postgres' ],
	'pgbench -i');
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
# sqlsmith prints a character per query it ran ('.' ok, 'e' error, 't'
# timeout, ...), 80 to a line.
my $queries_in = sub {
	my ($out) = @_;
	return length(join('', grep { /^[.A-Za-z]+$/ } split /\n/, $out));
};

# pgbench beside the fuzzer for the whole run: lock and I/O waits to sample
# and time while sqlsmith's queries read the views.
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-T', $seconds + 30, '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);

# sqlsmith's own output goes next to the server log (kept after the run).
my $log = $PostgreSQL::Test::Utils::log_path;
my $total = 0;
for my $run ([ 'psw_fuzz', 0.6, 'a plain role' ], [ $node->safe_psql('postgres', 'SELECT current_user'), 0.4, 'a superuser' ])
{
	my ($role, $share, $who) = @$run;
	my $t0 = time();
	# timeout(1) ends a run that reaches its time first (exit code 124).
	my $rc = IPC::Run::run(
		[
			'timeout', '-s', 'TERM', int($seconds * $share), $sqlsmith,
			'--target=' . $node->connstr('postgres') . " user=$role",
			'--max-queries=' . int($queries * $share), '--seed=58', '--verbose'
		],
		'>', "$log/050_sqlsmith_$role.out", '2>&1');
	my $code = $? >> 8;
	my $out = slurp_file("$log/050_sqlsmith_$role.out");
	my $ran = $queries_in->($out);
	$total += $ran;
	note("sqlsmith as $who: $ran queries in " . (time() - $t0) . " s, exit code $code");
	ok($code == 0 || $code == 124, "sqlsmith as $who ran to its budget (exit code $code)")
	  or diag($out =~ s/^.*((?:\n.*){20})$/$1/sr);
	cmp_ok($ran, '>', 100, "sqlsmith as $who sent queries");
}
$pgbench->kill_kill;
note("sqlsmith: $total queries in all");

is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_time,
	'the postmaster is the one that started');
my $server_log = slurp_file($node->logfile);
my @crashes = $server_log =~ /^.*(?:terminated by signal|PANIC:|TRAP:|was terminated|reinitializing|exited with exit code [2-9]).*$/mg;
is(join("\n", @crashes[0 .. ($#crashes < 9 ? $#crashes : 9)]), '', 'no crash, PANIC or failed assertion in the server log');
is($node->safe_psql('postgres', "SELECT count(*) > 0 FROM pg_stat_waits_profile"), 't',
	'and the sampler kept sampling');

$node->stop;
done_testing();
