# The pg_wait_sampling drop-in (extension/pg_wait_sampling/: an extension named
# pg_wait_sampling, version 1.1, served by pg_stat_waits), on a node of its
# own staged installation (stage_dropin in tools/lib/common.sh: the stage
# without Debian's pg_wait_sampling). Checks: make install never overwrites
# another pg_wait_sampling.control; pg_wait_sampling 1.1.4's own regression
# tests pass unchanged; catalog, signatures and privileges equal
# pg_wait_sampling_compat's (which 020_compat.pl compares with
# pg_wait_sampling's own); migration from pg_wait_sampling_compat; the reset
# empties only the drop-in's profile, also under concurrent readers, and
# pg_profile's collecting role (pg_read_all_stats + EXECUTE on the reset)
# may run it; the pg_wait_sampling.* settings; the history reads no slower
# than 1.5x pg_stat_waits_history.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use PswTest;

my $root = "$FindBin::RealBin/../..";
my $install = psw_dropin_install();
plan skip_all => 'no staged installation with the drop-in (./run test and ./run build make it: stage_dropin)'
  unless $install;

# ---- make install: the drop-in goes in unless another pg_wait_sampling is there
{
	my $pg_config = `pg_config --bindir`;
	chomp $pg_config;
	$pg_config .= '/pg_config';
	my $ext = `$pg_config --sharedir`;
	chomp $ext;
	$ext .= '/extension';
	my $dest = tempdir(CLEANUP => 1);
	my $make = sub {
		my ($out, $err) = ('', '');
		IPC::Run::run([ 'make', '-s', '-C', $root, 'install-dropin', "PG_CONFIG=$pg_config", "DESTDIR=$dest" ],
			'>', \$out, '2>', \$err);
		return $out . $err;
	};
	$make->();
	ok(-f "$dest$ext/pg_wait_sampling.control" && -f "$dest$ext/pg_wait_sampling--1.1.sql",
		'make install-dropin installs pg_wait_sampling.control and its script where there is none');
	PostgreSQL::Test::Utils::append_to_file("$dest$ext/pg_wait_sampling.control", "# updated\n");
	$make->();
	unlike(slurp_file("$dest$ext/pg_wait_sampling.control"), qr/# updated/, 'an earlier drop-in is updated');
	my $foreign = "# pg_wait_sampling extension\ndefault_version = '1.1'\nmodule_pathname = '\$libdir/pg_wait_sampling'\n";
	unlink "$dest$ext/pg_wait_sampling--1.1.sql";
	open my $fh, '>', "$dest$ext/pg_wait_sampling.control" or die $!;
	print $fh $foreign;
	close $fh;
	like($make->(), qr/drop-in NOT installed: .*pg_wait_sampling\.control is another/,
		'with pg_wait_sampling itself installed, make install says it leaves it');
	is(slurp_file("$dest$ext/pg_wait_sampling.control"), $foreign, '... and its control file is unchanged');
	ok(!-e "$dest$ext/pg_wait_sampling--1.1.sql", '... and no drop-in script is put next to it');
	# The normal stage keeps Debian's pg_wait_sampling, the reference of 020_compat.pl.
	my $libdir = `$pg_config --pkglibdir`;
	chomp $libdir;
	SKIP:
	{
		skip 'pg_wait_sampling itself is not installed for this server (Debian packages it for 15 only)', 1
		  unless -f "$libdir/pg_wait_sampling.so";
		unlike(slurp_file("$ext/pg_wait_sampling.control"), qr/pg_stat_waits/,
			"the test stage's own pg_wait_sampling was not replaced by make install");
	}
}

my $node = psw_node('dropin', install_path => $install,
	conf => [ 'pg_stat_waits.sample_period = 20', 'pg_stat_waits.timing = on' ]);
my $port = $node->port;
my $host = $node->host;

# ---- pg_wait_sampling's own regression tests, unchanged
my ($tests) = grep { -d $_ }
  ("$root/../shared/compat-tests/pg_wait_sampling", "$root/../../shared/compat-tests/pg_wait_sampling");
SKIP:
{
	skip 'pg_wait_sampling\'s tests (../shared/compat-tests/pg_wait_sampling) are not next to this checkout', 1
	  unless $tests;
	# They run CREATE EXTENSION pg_wait_sampling without CASCADE: pg_stat_waits
	# is there first, as pg_wait_sampling's library is for its own tests.
	$node->safe_psql('postgres', 'CREATE DATABASE contrib_regression');
	$node->safe_psql('contrib_regression', 'CREATE EXTENSION pg_stat_waits');
	my $out = PostgreSQL::Test::Utils::tempdir();
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run(
		[
			$ENV{PG_REGRESS}, "--bindir=$install/bin", "--inputdir=$tests", "--outputdir=$out",
			"--host=$host", "--port=$port", '--use-existing', '--dbname=contrib_regression', 'load', 'queries'
		],
		'>', \$stdout, '2>', \$stderr);
	ok($ok, "pg_wait_sampling 1.1.4's regression tests (load, queries) pass unchanged against the drop-in")
	  or diag($stdout . $stderr . (-f "$out/regression.diffs" ? slurp_file("$out/regression.diffs") : ''));
}

# ---- catalog as pg_wait_sampling_compat's (020_compat.pl: as pg_wait_sampling's)
$node->safe_psql('postgres', 'CREATE DATABASE compat; CREATE DATABASE kept');
$node->safe_psql('compat', 'CREATE EXTENSION pg_wait_sampling_compat CASCADE');
$node->safe_psql('kept', 'CREATE EXTENSION pg_wait_sampling_compat CASCADE');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_wait_sampling');
my $catalog = sub {
	my ($db) = @_;
	return $node->safe_psql($db, q{
		SELECT string_agg(format('%s(%s) -> %s strict=%s volatile=%s set=%s public=%s', p.proname,
		         pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.proisstrict, p.provolatile,
		         p.proretset, has_function_privilege('public', p.oid, 'EXECUTE')), E'\n' ORDER BY p.proname)
		  FROM pg_proc p WHERE p.proname IN ('pg_wait_sampling_get_current', 'pg_wait_sampling_get_history',
		                                     'pg_wait_sampling_get_profile', 'pg_wait_sampling_reset_profile')}) . "\n"
	  . $node->safe_psql($db, q{
		SELECT string_agg(format('%s.%s %s public_select=%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
		         has_table_privilege('public', c.oid, 'SELECT')), E'\n' ORDER BY c.relname, a.attnum)
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
		 WHERE c.relname IN ('pg_wait_sampling_current', 'pg_wait_sampling_history', 'pg_wait_sampling_profile')});
};
my $want = $catalog->('compat');
like($want, qr/pg_wait_sampling_reset_profile\(\) -> void .*public=f/, 'the reference catalog is read');
is($catalog->('postgres'), $want, 'views, columns, function signatures and privileges equal pg_wait_sampling 1.1\'s');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'pg_wait_sampling'"),
	'1.1', 'pg_extension shows pg_wait_sampling 1.1 (what pg_profile requires)');

# ---- migration from pg_wait_sampling_compat
my ($rc, $out, $err) = $node->psql('compat', 'CREATE EXTENSION pg_wait_sampling');
like($err, qr/pg_wait_sampling_compat is installed.*\n.*HINT:.*DROP EXTENSION pg_wait_sampling_compat/s,
	'refused next to pg_wait_sampling_compat, with a hint how to switch');
($rc, $out, $err) = $node->psql('compat', 'BEGIN; DROP EXTENSION pg_wait_sampling_compat; '
	  . 'CREATE EXTENSION pg_wait_sampling; COMMIT; SELECT count(*) > 0 FROM pg_wait_sampling_current');
is("$rc $out", '0 t', 'migration from pg_wait_sampling_compat: drop it and create pg_wait_sampling in one transaction')
  or diag($err);
is($node->safe_psql('kept', 'SELECT count(*) > 0 FROM pg_wait_sampling_current; SELECT pg_wait_sampling_reset_profile()'),
	"t\n", 'pg_wait_sampling_compat keeps working where it was created');
$node->safe_psql('kept', 'DROP EXTENSION pg_wait_sampling_compat');

# ---- functions with edge values
($rc, $out, $err) = $node->psql('postgres', 'SELECT * FROM pg_wait_sampling_get_current(-1)');
like($err, qr/backend with pid=-1 not found/, 'get_current(unknown pid): the error pg_wait_sampling gives');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_wait_sampling_get_current(pg_backend_pid())'),
	'1', 'get_current(own pid): one row');
for my $pid (0, 2147483647, -2147483648)
{
	($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM pg_wait_sampling_get_current($pid)");
	like($err, qr/backend with pid=-?\d+ not found/, "get_current($pid): an error, no crash");
}

# ---- reset: only the drop-in's profile
$node->safe_psql('postgres', q{
	CREATE ROLE collector LOGIN IN ROLE pg_read_all_stats;
	GRANT EXECUTE ON FUNCTION pg_wait_sampling_reset_profile() TO collector;
	CREATE ROLE plain LOGIN;
	SELECT pg_sleep(0.3);});
my $native = q{
	SELECT format('%s|%s|%s|%s|%s', (SELECT sum(samples) FROM pg_stat_waits_profile),
	       (SELECT count(*) FROM pg_stat_waits_history), (SELECT sum(calls) FROM pg_stat_waits),
	       (SELECT sum(samples) FROM pg_stat_waits_top('1 hour')), (SELECT stats_reset FROM pg_stat_waits_status))};
my $sleep = q{SELECT coalesce(sum(count), 0) FROM pg_wait_sampling_profile WHERE event = 'PgSleep'};
my $native_sleep = q{SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE wait_event = 'PgSleep'};
cmp_ok($node->safe_psql('postgres', $sleep), '>', 5, 'before a reset, the profile has the sleep');
my @before = split /\|/, $node->safe_psql('postgres', $native);
my $slept_before = $node->safe_psql('postgres', $native_sleep);
($rc, $out, $err) = $node->psql('postgres', 'SELECT pg_wait_sampling_reset_profile()', extra_params => [ '-U', 'collector' ]);
is($rc, 0, "pg_profile's collecting role (pg_read_all_stats + EXECUTE) resets the profile") or diag($err);
my @after = split /\|/, $node->safe_psql('postgres', $native);
is($node->safe_psql('postgres', $sleep), '0', 'after the reset, the drop-in\'s profile has no sleep left');
cmp_ok($node->safe_psql('postgres', 'SELECT coalesce(sum(count), 0) FROM pg_wait_sampling_profile'),
	'<', 200, '... and only what was sampled since');
my @what = ('pg_stat_waits_profile samples', 'pg_stat_waits_history rows', 'pg_stat_waits calls',
	'minute buckets (pg_stat_waits_top) samples');
for my $i (0 .. 3)
{
	cmp_ok($after[$i], '>=', $before[$i], "the reset does not lower $what[$i] ($before[$i] -> $after[$i])");
}
is($after[4], $before[4], 'the reset leaves pg_stat_waits_status.stats_reset');
$node->safe_psql('postgres', 'SELECT pg_sleep(0.4)');
is($node->safe_psql('postgres', $sleep),
	$node->safe_psql('postgres', $native_sleep) - $slept_before,
	'what is sampled after the reset is counted from it: drop-in = native minus the baseline, exactly');
($rc, $out, $err) = $node->psql('postgres', 'SELECT pg_wait_sampling_reset_profile()', extra_params => [ '-U', 'plain' ]);
like($err, qr/permission denied for function pg_wait_sampling_reset_profile/, 'other roles may not reset');
is($node->safe_psql('postgres', 'SELECT count(*) > 0 FROM pg_wait_sampling_history', extra_params => [ '-U', 'plain' ]),
	't', 'every role reads the views');

# pg_stat_waits_reset() after a drop-in reset: the drop-in's profile counts
# from the later of the two. Compared on the sleep, which is over when the
# two are read: the reading session itself is sampled (CPU) while it reads,
# and a tick between the two reads of one statement made them differ.
$node->safe_psql('postgres', 'SELECT pg_stat_waits_reset(); SELECT pg_sleep(0.2)');
my ($ws_sleep, $psw_sleep) = split /\|/, $node->safe_psql('postgres',
	"SELECT (SELECT coalesce(sum(count), 0) FROM pg_wait_sampling_profile WHERE event = 'PgSleep'), "
	  . "(SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile WHERE wait_event = 'PgSleep')");
ok($psw_sleep > 0 && $ws_sleep == $psw_sleep,
	"after pg_stat_waits_reset(), the drop-in's profile equals the native one (an older baseline is not used): "
	  . "PgSleep $ws_sleep and $psw_sleep samples");

# Readers and resets at once: never an error, never more than the native profile.
my $script = PostgreSQL::Test::Utils::tempdir() . '/race.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
SELECT pg_wait_sampling_reset_profile();
SELECT 1 / (CASE WHEN (SELECT coalesce(sum(count), 0) FROM pg_wait_sampling_profile)
                   <= (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile) THEN 1 ELSE 0 END);
});
my $t0 = time;
$node->command_ok([ 'pgbench', '-n', '-c', '3', '-T', '2', '-f', $script, '-h', $host, '-p', $port, 'postgres' ],
	'3 clients resetting and reading the profile for 2 s: no error, the drop-in never above the native profile');
note(sprintf('race: %.1f s', time - $t0));

# ---- settings
is($node->safe_psql('postgres', 'SELECT current_setting(\'pg_wait_sampling.profile_period\') || \' \' || '
	  . 'current_setting(\'pg_wait_sampling.history_period\')'), '20 20',
	'profile_period and history_period show pg_stat_waits.sample_period');
($rc, $out, $err) = $node->psql('postgres', 'SET pg_wait_sampling.profile_period = 10');
like($err, qr/invalid value for parameter "pg_wait_sampling.profile_period".*HINT:.*pg_stat_waits\.sample_period/s,
	'another profile_period is refused, with a hint naming pg_stat_waits.sample_period');
($rc, $out, $err) = $node->psql('postgres', 'SET pg_wait_sampling.history_period = 100');
like($err, qr/invalid value for parameter "pg_wait_sampling.history_period"/, 'so is another history_period');
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_waits.sample_period = 30; SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres', "SELECT current_setting('pg_wait_sampling.profile_period') = '30'"),
	'after pg_stat_waits.sample_period = 30 and a reload, profile_period shows 30');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET pg_stat_waits.sample_period; SELECT pg_reload_conf()');
for my $v ('on', 'off', 'true', 'all', 'top', 'none')
{
	($rc, $out, $err) = $node->psql('postgres', "SET pg_wait_sampling.profile_queries = '$v'; SHOW pg_wait_sampling.profile_queries");
	is($rc, 0, "a superuser sets profile_queries = $v") or diag($err);
}
($rc, $out, $err) = $node->psql('postgres', 'SET pg_wait_sampling.profile_queries = none', extra_params => [ '-U', 'plain' ]);
like($err, qr/permission denied to set parameter/, 'other roles may not');
is($node->safe_psql('postgres', 'SET pg_wait_sampling.profile_queries = none; '
	  . 'SELECT count(*) FILTER (WHERE queryid <> 0) FROM pg_wait_sampling_current'), '0',
	'profile_queries = none set in the session: queryid 0');
is($node->safe_psql('postgres', 'SET pg_wait_sampling.sample_cpu = off; '
	  . 'SELECT count(*) FILTER (WHERE event IS NULL) FROM pg_wait_sampling_current; '
	  . 'SELECT count(*) FILTER (WHERE event IS NULL) FROM pg_wait_sampling_history; '
	  . 'SELECT count(*) FILTER (WHERE event IS NULL) FROM pg_wait_sampling_profile'), "0\n0\n0",
	'sample_cpu = off set in the session: no process outside a wait in current, history, profile');

# ---- profile_pid: the profile per process, as pg_wait_sampling keeps it
my $pid_sleep = sub {
	$node->safe_psql('postgres',
		"SELECT coalesce(sum(count), 0) FROM pg_wait_sampling_profile WHERE pid = $_[0] AND event = 'PgSleep'");
};
my $sleeper = psw_session($node);
my $sleeper_pid = backend_pid($sleeper);
sql($sleeper, 'SELECT pg_sleep(0.5)');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_wait_sampling_profile WHERE pid <> 0'), '0',
	'profile_pid = off (the default here): the profile has pid 0 only');
($rc, $out, $err) = $node->psql('postgres',
	'ALTER SYSTEM SET pg_wait_sampling.profile_pid = on; SELECT pg_reload_conf()');
is($rc, 0, 'pg_wait_sampling.profile_pid = on is accepted') or diag($err);
$node->poll_query_until('postgres', "SELECT current_setting('pg_wait_sampling.profile_pid') = 'on'")
  or diag('the reload was not seen');
sql($sleeper, 'SELECT pg_sleep(0.5)');
my $per_process = $pid_sleep->($sleeper_pid);
cmp_ok($per_process, '>=', 5,
	"profile_pid = on: a per-process query finds the sleeping session's PgSleep samples ($per_process at 20 ms)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_wait_sampling_profile WHERE pid = 0'), '0',
	'... and no row is left without its pid');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_wait_sampling_profile p JOIN pg_stat_activity a USING (pid) "
	  . "WHERE a.pid = $sleeper_pid"), $node->safe_psql('postgres',
		"SELECT count(DISTINCT (event_type, event, queryid)) FROM pg_wait_sampling_profile WHERE pid = $sleeper_pid"),
	'one row per process, wait and query');
$node->safe_psql('postgres', 'SELECT pg_wait_sampling_reset_profile()');
is($pid_sleep->($sleeper_pid), '0', 'pg_wait_sampling_reset_profile() empties the per-process profile');
sql($sleeper, 'SELECT pg_sleep(0.3)');
cmp_ok($pid_sleep->($sleeper_pid), '>', 0, '... which counts again after it');
$sleeper->quit;

# ---- the history reads as fast as pg_stat_waits_history (within 1.5x)
# A full history at 1 ms with idle processes sampled too, then the sampler idle.
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_waits.sample_period = 1; '
	  . 'ALTER SYSTEM SET pg_stat_waits.sample_idle = on; SELECT pg_reload_conf(); SELECT pg_sleep(2); '
	  . 'ALTER SYSTEM SET pg_stat_waits.sample_period = 0; SELECT pg_reload_conf(); SELECT pg_sleep(0.2)');
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_waits_history');
my $timing = sub {
	my ($view) = @_;
	my $best;
	for (1 .. 5)
	{
		my $plan = $node->safe_psql('postgres', "EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM $view");
		my ($ms) = $plan =~ /Execution Time: ([\d.]+) ms/;
		$best = $ms if !defined $best || $ms < $best;
	}
	return $best;
};
my ($native_ms, $dropin_ms) = ($timing->('pg_stat_waits_history'), $timing->('pg_wait_sampling_history'));
cmp_ok($rows, '>=', 5000, "the history holds $rows samples to read");
cmp_ok($dropin_ms, '<=', 1.5 * $native_ms,
	"pg_wait_sampling_history within 1.5x of pg_stat_waits_history over $rows rows ($dropin_ms vs $native_ms ms, best of 5)");

# ---- the per-process profile stays within profile_max
# A new process a few milliseconds apart, each sleeping: every one a new
# key. The table keeps room for the newest (least used keys evicted).
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_waits.sample_period = 5; ALTER SYSTEM RESET pg_stat_waits.sample_idle');
$node->append_conf('postgresql.conf', "pg_stat_waits.profile_max = 100\n");
$node->restart;
my $churn = PostgreSQL::Test::Utils::tempdir() . '/churn.sql';
PostgreSQL::Test::Utils::append_to_file($churn, "SELECT pg_sleep(0.02);\n");
$node->command_ok([ 'pgbench', '-n', '-C', '-c', '2', '-t', '75', '-f', $churn, '-h', $host, '-p', $port, 'postgres' ],
	'150 connections, each sleeping 20 ms');
my ($keys, $pids) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*) || \'|\' || count(DISTINCT pid) FROM pg_wait_sampling_profile');
cmp_ok($keys, '<=', 100, "the per-process profile holds at most profile_max = 100 keys ($keys, $pids pids)");
cmp_ok($keys, '>=', 20, "... and keeps counting new processes once full ($keys keys)");
my $newest = psw_session($node);
my $newest_pid = backend_pid($newest);
sql($newest, 'SELECT pg_sleep(0.3)');
cmp_ok($pid_sleep->($newest_pid), '>', 0, 'a process that comes after the table filled is counted');
$newest->quit;

$node->stop;
done_testing();
