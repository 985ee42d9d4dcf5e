# The pg_wait_sampling_compat extension (extension/compat/): installed with
# pg_stat_waits, created with CASCADE, its views readable by PUBLIC and
# serving pg_stat_waits data, and refused without pg_stat_waits: on every
# version. Where the real pg_wait_sampling is installed for this server
# (Debian packages it for PostgreSQL 15 only), every view's columns and types
# and every function's signature and PUBLIC EXECUTE privilege equal its own
# (read from its extension, created in a scratch database: it need not be
# preloaded for that), and the compat extension refuses a database where it
# is installed. test/pg_wait_sampling_tests.pl --check: the committed copies
# of pg_wait_sampling's regression tests (test/sql/pg_wait_sampling_*, run by
# make installcheck) are its release's files, CREATE/DROP lines aside.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $root = "$FindBin::RealBin/../..";
my $node = psw_node('compat');
my ($db, $ref, $bare) = ('psw_compat', 'psw_compat_ref', 'psw_compat_bare');
$node->safe_psql('postgres', "CREATE DATABASE $db; CREATE DATABASE $ref; CREATE DATABASE $bare;");

my $extdir = $node->config_data('--sharedir') . '/extension';
ok(-f "$extdir/pg_wait_sampling_compat.control" && -f "$extdir/pg_wait_sampling_compat--1.1.sql",
	"pg_wait_sampling_compat is installed with the extension ($extdir)");

# pg_wait_sampling 1.1.4's tests, kept as data next to the checkout (../shared,
# or ../../shared from a worktree); the test runner puts a copy next to the
# copy of the checkout the tests run in.
my ($tests) = grep { -d $_ }
  ("$root/../shared/compat-tests/pg_wait_sampling", "$root/../../shared/compat-tests/pg_wait_sampling");
SKIP:
{
	skip 'pg_wait_sampling\'s tests (../shared/compat-tests/pg_wait_sampling) are not next to this checkout', 1
	  unless $tests;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ $^X, "$root/test/pg_wait_sampling_tests.pl", '--check', $tests ], '>', \$out, '2>', \$err);
	ok($ok, "test/sql/pg_wait_sampling_{load,queries} are pg_wait_sampling's tests, CREATE/DROP lines aside")
	  or diag("$out$err");
}

my ($rc, $out, $err) = $node->psql($db, 'CREATE EXTENSION pg_wait_sampling_compat CASCADE', on_error_stop => 1);
is($rc, 0, 'CREATE EXTENSION pg_wait_sampling_compat CASCADE runs (and creates pg_stat_waits)') or diag($err);

my @views = qw(pg_wait_sampling_current pg_wait_sampling_history pg_wait_sampling_profile);
for my $v (@views)
{
	is($node->safe_psql($db, "SELECT has_table_privilege('public', '$v', 'SELECT')"),
		't', "$v is readable by PUBLIC, as in pg_wait_sampling");
	($rc, $out, $err) = $node->psql($db, "SELECT count(*) FROM $v");
	is($rc, 0, "$v can be read") or diag($err);
}

# Data: this session is seen running (pg_wait_sampling shows NULL events
# while not waiting); other processes are listed with their wait events.
is($node->safe_psql($db,
		'SELECT event_type IS NULL AND event IS NULL FROM pg_wait_sampling_current WHERE pid = pg_backend_pid()'),
	't', 'current: own backend on CPU shows NULL event_type/event, like pg_wait_sampling');
is($node->safe_psql($db,
		'SELECT (SELECT count(*) FROM pg_wait_sampling_current) >= (SELECT count(*) FROM pg_stat_waits_activity) - 1'),
	't', 'current: lists every process pg_stat_waits_activity lists');
is($node->safe_psql($db, "SELECT count(*) > 0 FROM pg_wait_sampling_current WHERE event_type = 'Activity'"),
	't', 'current: background processes keep their wait events');
is($node->safe_psql($db,
		'SELECT abs((SELECT sum(count) FROM pg_wait_sampling_profile) -
		            (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile)) <= 200'),
	't', "profile: total count equals pg_stat_waits_profile's samples (within a second's sampling)");
($rc, $out, $err) = $node->psql($db, 'SELECT pg_wait_sampling_reset_profile()');
is($rc, 0, 'pg_wait_sampling_reset_profile() runs') or diag($err);

# Refused without pg_stat_waits (no CASCADE): the control file requires it.
($rc, $out, $err) = $node->psql($bare, 'CREATE EXTENSION pg_wait_sampling_compat', on_error_stop => 1);
like($err, qr/required extension "pg_stat_waits" is not installed/,
	'refuses a database without pg_stat_waits (no CASCADE)');

# The reference: pg_wait_sampling's own catalog entries.
($rc, $out, $err) = $node->psql($ref, 'CREATE EXTENSION pg_wait_sampling');
SKIP:
{
	# One skip line, not one per check: ./run test counts "ok" lines as passed.
	skip 'pg_wait_sampling is not installed for this server (Debian packages it for 15 only): '
	  . 'no reference comparison (19 checks)', 1
	  if $rc != 0;

	# "name type" per column.
	my $cols = sub {
		my ($d, $rel) = @_;
		return $node->safe_psql($d,
			"SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
			  WHERE attrelid = to_regclass('$rel') AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
	};
	# Arguments, result, strictness, volatility, set-returning.
	my $sig = sub {
		my ($d, $fn) = @_;
		return $node->safe_psql($d,
			"SELECT format('(%s) -> %s strict=%s volatile=%s set=%s', pg_get_function_arguments(oid),
			               pg_get_function_result(oid), proisstrict, provolatile, proretset)
			   FROM pg_proc WHERE proname = '$fn'");
	};
	my $execute = sub {
		my ($d, $fn) = @_;
		return $node->safe_psql($d,
			"SELECT has_function_privilege('public', oid, 'EXECUTE') FROM pg_proc WHERE proname = '$fn'");
	};
	for my $v (@views)
	{
		my $want = $cols->($ref, $v);
		(my $show = $want) =~ s/\n/,/g;
		isnt($want, '', "pg_wait_sampling has $v");
		is($cols->($db, $v), $want, "$v has pg_wait_sampling's columns and types: $show");
	}
	for my $fn (qw(pg_wait_sampling_get_current pg_wait_sampling_get_history pg_wait_sampling_get_profile
		pg_wait_sampling_reset_profile))
	{
		my $want = $sig->($ref, $fn);
		isnt($want, '', "pg_wait_sampling has $fn()");
		is($sig->($db, $fn), $want, "$fn has pg_wait_sampling's signature: $want");
		is($execute->($db, $fn), $execute->($ref, $fn), "$fn has pg_wait_sampling's EXECUTE privilege for PUBLIC");
	}

	($rc, $out, $err) = $node->psql($ref, 'CREATE EXTENSION pg_wait_sampling_compat CASCADE', on_error_stop => 1);
	like($err, qr/pg_wait_sampling is installed/, 'refuses a database where pg_wait_sampling is installed');
}

$node->stop;
done_testing();
