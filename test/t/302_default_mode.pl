# The default mode (track = top, timing off): client backends' statements
# are read from PostgreSQL's own backend status entry. Where PostgreSQL's
# report is not the statement's id, the hooks repair it; settings that need
# the statement tracker switch a session into it and back between
# statements (docs/architecture.md, "Two modes").
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;

my $node = psw_node('default_mode', extensions => 1);
my $admin = psw_session($node);
sql($admin,
	'CREATE FUNCTION dm_nested_sleep() RETURNS void LANGUAGE plpgsql AS '
	  . '$$ BEGIN PERFORM pg_sleep(1.0); END $$');
# pg_stat_statements learns the ids of the statements compared below.
sql($admin, "SET pg_stat_statements.track = 'all'");
sql($admin, 'SELECT pg_sleep(0.01)');
sql($admin, 'SELECT dm_nested_sleep()');

sub pgss_id
{
	my ($query) = @_;
	return sql($admin,
		"SELECT queryid FROM pg_stat_statements WHERE query = '$query' "
		  . "AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) LIMIT 1");
}
my $sleep_id = pgss_id('SELECT pg_sleep($1)');
my $call_id = pgss_id('SELECT dm_nested_sleep()');
my $inner_id = pgss_id('SELECT pg_sleep($1)');    # PERFORM pg_sleep(1.0) is the same query
isnt($sleep_id, '', 'pg_stat_statements has the sleep');
isnt($call_id, '', 'pg_stat_statements has the call');

sub activity_of
{
	my ($pid) = @_;
	return sql($admin,
		"SELECT state, queryid, top_queryid FROM pg_stat_waits_activity WHERE pid = $pid");
}

sub in_sleep
{
	my ($pid) = @_;
	return wait_until(
		sub {
			sql($admin, "SELECT wait_event FROM pg_stat_waits_activity WHERE pid = $pid") eq 'PgSleep';
		});
}

subtest 'later statements of a multi-statement query string carry their own id' => sub {
	my $s = psw_session($node);
	my $pid = backend_pid($s);
	# One Query message (psql's \; does not split it).
	send_sql($s, 'SELECT 1 AS first \; SELECT pg_sleep(1.5)');
	ok(in_sleep($pid), 'in the second statement\'s sleep');
	is(activity_of($pid), "active|$sleep_id|$sleep_id", 'the second statement\'s id, not the first one\'s');
	my (undef, $err) = finish_sql($s);
	is($err, '', 'the query string ran');
	ok(wait_until(sub { activity_of($pid) eq 'idle||' }), 'idle without ids afterwards');
	$s->quit;
};

subtest 'a session switches into the tracker and back between statements' => sub {
	my $s = psw_session($node);
	my $pid = backend_pid($s);
	# Into the tracker within one query string: the SET is the first statement.
	send_sql($s, "SET pg_stat_waits.track = 'all' \\; SELECT dm_nested_sleep()");
	ok(in_sleep($pid), 'track = all: in the nested sleep');
	is(activity_of($pid), "active|$inner_id|$call_id", 'track = all: the nested statement is the queryid');
	my (undef, $err) = finish_sql($s);
	is($err, '', 'track = all: the call ran');
	# And back to the default mode.
	sql($s, 'RESET pg_stat_waits.track');
	send_sql($s, 'SELECT dm_nested_sleep()');
	ok(in_sleep($pid), 'track = top: in the nested sleep');
	is(activity_of($pid), "active|$call_id|$call_id", 'track = top: the call is the queryid again');
	($_, $err) = finish_sql($s);
	is($err, '', 'track = top: the call ran');
	ok(wait_until(sub { activity_of($pid) eq 'idle||' }), 'idle without ids afterwards');
	$s->quit;
};

subtest 'track_activities = off: the tracker keeps the ids' => sub {
	my $s = psw_session($node, 'SET track_activities = off', 'SELECT 1');
	my $pid = backend_pid($s);
	send_sql($s, 'SELECT pg_sleep(1.5)');
	ok(in_sleep($pid), 'in the sleep');
	is(activity_of($pid), "active|$sleep_id|$sleep_id",
		'pg_stat_activity has no id, pg_stat_waits_activity has');
	my (undef, $err) = finish_sql($s);
	is($err, '', 'the sleep ran');
	$s->quit;
};

subtest 'EXECUTE runs under its prepared statement, as pg_stat_statements records it' => sub {
	my $s = psw_session($node, q{PREPARE dm_sleeper AS SELECT pg_sleep(1.5), 'prepared'});
	my $pid = backend_pid($s);
	send_sql($s, 'EXECUTE dm_sleeper');
	ok(in_sleep($pid), 'in the prepared statement\'s sleep');
	my $act = activity_of($pid);
	my (undef, $err) = finish_sql($s);
	is($err, '', 'the EXECUTE ran');
	my $prepared = sql($admin,
		"SELECT queryid FROM pg_stat_statements WHERE query LIKE 'PREPARE dm_sleeper AS %' "
		  . "AND toplevel LIMIT 1");
	isnt($prepared, '', 'pg_stat_statements has the prepared statement');
	is($act, "active|$prepared|$prepared", 'the EXECUTE is active under the prepared statement\'s id');
	# A later statement of the same query string is not the prepared one.
	send_sql($s, 'EXECUTE dm_sleeper \; SELECT pg_sleep(1.5)');
	ok(wait_until(sub { activity_of($pid) eq "active|$sleep_id|$sleep_id" }),
		'the next statement of the query string carries its own id');
	($_, $err) = finish_sql($s);
	is($err, '', 'the query string ran');
	$s->quit;
};

$admin->quit;
$node->stop;
done_testing();
