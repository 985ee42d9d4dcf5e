# Every SQL function of pg_stat_waits and of pg_wait_sampling_compat, found
# in the catalog (so a function added later is covered without editing this
# file), called with every combination of edge values of its argument types
# (NULL, zero, negatives, the type's extremes, infinities, empty, very long
# and odd text), by a plain role and by a superuser, with exact timing on:
# each call returns or raises a clean error (never an internal error,
# SQLSTATE class XX, nor a system error, class 58) of less than 1 kB that,
# from pg_stat_waits, names the function (privilege errors aside; the
# compatibility functions keep pg_wait_sampling's wording), no process
# crashes, the
# sampler is not restarted, and each function accepts at least one call of
# the superuser's. An argument type without values here fails the test.
# The hand-picked cases with their exact messages are test/sql/bad_input.sql.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('function_inputs', conf => ['pg_stat_waits.timing = on']);
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_wait_sampling_compat CASCADE; CREATE ROLE psw_plain LOGIN');

# Something in every table: statements timed, waits sampled and timed, a
# slow run captured (the threshold, 1 s by default, lowered for it).
$node->safe_psql('postgres',
	"SET pg_stat_waits.capture_min_duration = '100ms'; SELECT pg_sleep(0.3); "
	  . 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g; SELECT count(*) FROM t;');
my $sampler_before = $node->safe_psql('postgres', 'SELECT sampler_pid FROM pg_stat_waits_status');
ok($sampler_before =~ /^\d+$/, 'the sampler runs before the calls');
is($node->safe_psql('postgres', "SELECT count(*) > 0 FROM pg_stat_waits_executions WHERE query LIKE '%pg_sleep%'"),
	't', 'a slow run is captured');
# The sleep's execution as the history has it: a pid and a start that
# pg_stat_waits_execution_profile finds.
my ($pid, $started) = split /\|/, $node->safe_psql('postgres',
	"SELECT pid, query_start FROM pg_stat_waits_history WHERE wait_event = 'PgSleep' LIMIT 1");
ok($pid && $started, 'the history holds the sleep');
is($node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM pg_stat_waits_execution_profile($pid, '$started')"),
	't', 'its execution has a profile');

# Edge values by argument type (format_type's spelling). The sleep's pid and
# start are among them, so that lookups find something too.
my $long = "repeat('a', 20000)";
my %values = (
	# The smallest values quoted: -2147483648::integer is -(2147483648::integer),
	# an error of the cast before the function is called.
	'integer' => [ 'NULL', '0', '-1', '1', $pid, '2147483647', "'-2147483648'" ],
	'bigint' => [ 'NULL', '0', '-1', '1', '9223372036854775807', "'-9223372036854775808'" ],
	'smallint' => [ 'NULL', '0', '-1', '32767', "'-32768'" ],
	'double precision' => [ 'NULL', '0', '-1', '0.5', '1e308', "'NaN'", "'Infinity'", "'-Infinity'" ],
	'numeric' => [ 'NULL', '0', '-1', "'NaN'", '1e100' ],
	'boolean' => [ 'NULL', 'true', 'false' ],
	'text' => [
		'NULL', "''", "'x'", "'Timeout'", "'PgSleep'", "'IO'", "'DataFileRead'", "'%s%n'", "E'\\u00e9\\t'", $long
	],
	'name' => [ 'NULL', "''", "'x'", "'pg_stat_waits.timing'" ],
	'interval' => [
		'NULL', "'0'", "'-1 hour'", "'1 microsecond'", "'5 min'", "'1 month'", "'1000000 years'",
		"'-178000000 years'", ($node->pg_version >= 17 ? ("'infinity'", "'-infinity'") : ())
	],
	'timestamp with time zone' => [
		'NULL', "'infinity'", "'-infinity'", "'$started'", 'now()', "'4713-01-01 00:00+00 BC'",
		"'294276-12-31 00:00+00'"
	],
);

my @functions = split /\n/, $node->safe_psql(
	'postgres', q{
	SELECT e.extname || '|' || p.oid::regprocedure || '|' || p.proname || '|'
	       || coalesce(array_to_string(array(SELECT format_type(t, NULL)
	                                         FROM unnest(p.proargtypes) t), ','), '')
	  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid JOIN pg_extension e ON e.oid = d.refobjid
	 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	   AND e.extname IN ('pg_stat_waits', 'pg_wait_sampling_compat')
	 ORDER BY 1});
cmp_ok(scalar(grep { /^pg_stat_waits\|/ } @functions), '>=', 10, 'the catalog lists pg_stat_waits functions');
ok(scalar(grep { /^pg_wait_sampling_compat\|/ } @functions), 'and pg_wait_sampling_compat functions');

# The calls: the product of the argument types' values. A product of more
# than 500 keeps every k-th combination, k coprime to the last type's count,
# so that every value of that type still appears.
sub gcd { my ($x, $y) = @_; ($x, $y) = ($y, $x % $y) while $y; return $x; }
my @calls;
my %calls_of;
for my $f (@functions)
{
	my (undef, $sig, $name, $types) = split /\|/, $f, 4;
	my @types = grep { $_ ne '' } split /,/, $types;
	my @missing = grep { !exists $values{$_} } @types;
	ok(!@missing, "$sig: every argument type has edge values" . (@missing ? " (not: @missing)" : ''));
	next if @missing;
	my @combos = ([]);
	for my $t (@types)
	{
		@combos = map {
			my $c = $_;
			map { [ @$c, "$_\::$t" ] } @{ $values{$t} }
		} @combos;
	}
	if (@combos > 500)
	{
		my $k = int(@combos / 500) + 1;
		$k++ while gcd($k, scalar(@{ $values{ $types[-1] } })) != 1;
		@combos = @combos[ grep { $_ % $k == 0 } 0 .. $#combos ];
	}
	for my $c (@combos)
	{
		push @calls, [ $sig, "$name(" . join(', ', @$c) . ')' ];
		$calls_of{$sig}++;
	}
}
note(scalar(@calls) . ' calls of ' . scalar(keys %calls_of) . ' functions');

# One session per role: a table of the calls, then a DO block that runs each
# in its own subtransaction and keeps the SQLSTATE of its error (or 00000).
my $call_rows = join(",\n", map { '(' . join(', ', map { "\$psw\$$_\$psw\$" } @$_) . ')' } @calls);
sub run_calls
{
	my ($role) = @_;
	my ($out, $err) = ('', '');
	$node->psql(
		'postgres', qq{
		SET statement_timeout = '120s';
		CREATE TEMP TABLE calls (sig text, call text);
		INSERT INTO calls VALUES $call_rows;
		CREATE TEMP TABLE results (sig text, call text, state text, message text, len int);
		DO \$do\$
		DECLARE c record; st text; msg text;
		BEGIN
		  FOR c IN SELECT * FROM calls LOOP
		    BEGIN
		      EXECUTE 'SELECT count(*) FROM (SELECT * FROM ' || c.call || ') s';
		      st := '00000'; msg := '';
		    EXCEPTION WHEN OTHERS THEN
		      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
		    END;
		    INSERT INTO results VALUES (c.sig, c.call, st, left(msg, 200), octet_length(msg));
		  END LOOP;
		END \$do\$;
		SELECT 'calls ' || count(*) FROM results;
		SELECT 'bad ' || state || ' ' || left(call, 120) || ': ' || message
		  FROM results WHERE left(state, 2) IN ('XX', '58') ORDER BY 1;
		SELECT 'long ' || left(call, 120) || ': ' || len || ' bytes' FROM results WHERE len >= 1024 ORDER BY 1;
		SELECT 'unnamed ' || state || ' ' || left(call, 120) || ': ' || message
		  FROM results WHERE state NOT IN ('00000', '42501') AND sig LIKE 'pg\\_stat\\_waits\\_%'
		   AND position(split_part(sig, '(', 1) in message) = 0
		 ORDER BY 1;
		SELECT 'accepted ' || sig FROM results GROUP BY sig HAVING bool_or(state = '00000') ORDER BY 1;
		SELECT 'refused ' || sig FROM results GROUP BY sig HAVING bool_and(state = '42501') ORDER BY 1;
		SELECT 'errors ' || state || ' ' || count(*) FROM results WHERE state <> '00000' GROUP BY state ORDER BY 1;
		},
		stdout => \$out,
		stderr => \$err,
		extra_params => [ '-U', $role ]);
	is($err, '', "$role: the calls ran to the end");
	my @lines = split /\n/, $out;
	my %accepted = map { /^accepted (.*)$/ ? ($1 => 1) : () } @lines;
	my %refused = map { /^refused (.*)$/ ? ($1 => 1) : () } @lines;
	my @bad = grep { /^bad / } @lines;
	my ($n) = $out =~ /^calls (\d+)$/m;
	is($n, scalar(@calls), "$role: every call made");
	is(join("\n", @bad), '', "$role: no internal or system error");
	# PostgreSQL quotes a value, not a megabyte of it; and an argument error
	# says whose argument it is.
	is(join("\n", grep { /^long / } @lines), '', "$role: every error message is under 1 kB");
	is(join("\n", grep { /^unnamed / } @lines), '', "$role: every error names its function");
	note($_) for grep { /^errors / } @lines;
	return (\%accepted, \%refused);
}

my ($plain, $plain_refused) = run_calls('psw_plain');
my ($super) = run_calls($node->safe_psql('postgres', 'SELECT current_user'));
for my $sig (sort keys %calls_of)
{
	ok($super->{$sig}, "$sig: accepted at least one of the superuser's calls");
	ok($plain->{$sig} || $plain_refused->{$sig},
		"$sig: accepted one of the plain role's calls, or refused them all for privileges");
}
# The ones a plain role may not call: what resets statistics, and the
# check CREATE EXTENSION runs that the library is preloaded.
is(join(' ', sort keys %$plain_refused),
	'pg_stat_waits_require_preload() pg_stat_waits_reset() pg_wait_sampling_reset_profile()',
	'the plain role is refused exactly the reset functions and the preload check');

# Nothing crashed, and the sampler was not restarted.
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server answers');
is($node->safe_psql('postgres', 'SELECT sampler_pid FROM pg_stat_waits_status'),
	$sampler_before, 'the same sampler runs');
my $log = slurp_file($node->logfile);
ok($log !~ /terminated by signal|was terminated|PANIC|server process .* exited with exit code/,
	'no process crashed or was terminated');

$node->stop;
done_testing();
