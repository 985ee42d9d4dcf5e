# pg_stat_waits_activity against real sessions: lock waits, cancel, idle in
# transaction, nested statements, caught errors, savepoints, and the first
# statement of a session.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;

my $node = psw_node('activity', extensions => 1);
my $admin = psw_session($node);
sql($admin, 'CREATE TABLE act_rows (id int PRIMARY KEY, v int)');
sql($admin, 'INSERT INTO act_rows VALUES (1, 0)');

# The pg_stat_waits_activity row of a pid, as a hash (NULL reads as ''), with
# the number of rows the view had for it.
sub activity_of
{
	my ($pid) = @_;
	my @rows = split /\n/,
	  sql($admin,
		"SELECT state, wait_event_type, wait_event, queryid, top_queryid "
		  . "FROM pg_stat_waits_activity WHERE pid = $pid");
	my %row;
	@row{qw(state wait_event_type wait_event queryid top_queryid)} =
	  map { $_ // '' } split /\|/, ($rows[0] // ''), -1;
	$row{rows} = scalar @rows;
	return \%row;
}

# pg_stat_activity's query_id of a pid ('' when NULL).
sub pgsa_queryid
{
	my ($pid) = @_;
	return sql($admin, "SELECT query_id FROM pg_stat_activity WHERE pid = $pid");
}

sub wait_for_event
{
	my ($pid, $column, $value) = @_;
	return wait_for_state($admin, $pid, $column, $value, 'pg_stat_waits_activity');
}

subtest 'row lock wait shows Lock/transactionid, state and queryid' => sub {
	my ($holder, $blocked, $pid) = lock_and_block(
		$node,
		'UPDATE act_rows SET v = v + 1 WHERE id = 1',
		'UPDATE act_rows SET v = v + 10 WHERE id = 1');
	ok(wait_for_event($pid, 'wait_event_type', 'Lock'),
		'blocked session shows a Lock wait');

	my $row = activity_of($pid);
	is($row->{rows}, 1, 'one activity row for the blocked pid');
	is($row->{state}, 'active', 'state active');
	is($row->{wait_event}, 'transactionid', 'wait_event transactionid');
	my $id = pgsa_queryid($pid);
	isnt($id, '', 'pg_stat_activity has a query_id');
	is($row->{queryid}, $id, 'queryid is the query_id of pg_stat_activity');
	is($row->{top_queryid}, $id, 'top_queryid too');

	sql($admin, "SELECT pg_cancel_backend($pid)");
	my (undef, $err) = finish_sql($blocked);
	like($err, qr/canceling statement/, 'the blocked statement was canceled');
	my $after = activity_of($pid);
	is($after->{state}, 'idle', 'idle after the cancel');
	is($after->{queryid}, '', 'no stale queryid after the cancel');
	is($after->{top_queryid}, '', 'no stale top_queryid after the cancel');
	sql($holder, 'ROLLBACK');
	$_->quit for $holder, $blocked;
};

subtest 'idle in transaction keeps the last statement id' => sub {
	my $s = psw_session($node);
	my $pid = backend_pid($s);
	sql($s, 'BEGIN');
	sql($s, 'SELECT count(*) FROM act_rows');
	# The backend sends ReadyForQuery just before it starts waiting for
	# the next command: give it a moment to enter the ClientRead wait.
	ok(wait_for_event($pid, 'wait_event', 'ClientRead'),
		'idle in transaction waits in ClientRead');
	my $row = activity_of($pid);
	is($row->{state}, 'idle in transaction', 'state idle in transaction');
	isnt($row->{queryid}, '', 'queryid kept');
	is($row->{queryid}, pgsa_queryid($pid), 'the last statement\'s id');
	sql($s, 'ROLLBACK');
	ok(wait_for_event($pid, 'state', 'idle'), 'idle after ROLLBACK');
	$s->quit;
};

# A PL/pgSQL function: the outer call is the top-level statement; under
# track = all the inner statement is the queryid, as pg_stat_statements
# sees it.
sql($admin,
	'CREATE FUNCTION act_nested_sleep() RETURNS void LANGUAGE plpgsql AS '
	  . '$$ BEGIN PERFORM pg_sleep(1.0); END $$');
for my $track ('all', 'top')
{
	subtest "nested statement under pg_stat_waits.track = $track" => sub {
		my $s = psw_session($node, "SET pg_stat_waits.track = '$track'",
			"SET pg_stat_statements.track = 'all'");
		my $pid = backend_pid($s);
		send_sql($s, 'SELECT act_nested_sleep()');
		ok(wait_for_event($pid, 'wait_event', 'PgSleep'), 'in the sleep');
		my $row = activity_of($pid);
		my $top = pgsa_queryid($pid);
		isnt($top, '', 'pg_stat_activity has the outer query_id');
		is($row->{top_queryid}, $top, 'top_queryid is the outer call');
		my (undef, $err) = finish_sql($s);
		is($err, '', 'the call succeeded');
		if ($track eq 'all')
		{
			isnt($row->{queryid}, $top, 'queryid is not the outer call');
			is( sql($admin,
					"SELECT count(*) FROM pg_stat_statements WHERE queryid = $row->{queryid} "
					  . "AND query ILIKE '%pg_sleep%' AND query NOT ILIKE '%act_nested_sleep%' "
					  . "AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
				),
				1,
				'queryid is the inner statement of pg_stat_statements');
		}
		else
		{
			is($row->{queryid}, $top, 'queryid is the outer call');
		}
		$s->quit;
	};
}

# Errors that PL/pgSQL catches must not disturb the outer statement's ids,
# and an error inside a savepoint must not leave stale ids behind.
subtest 'caught errors and savepoints keep the ids right' => sub {
	sql($admin,
		'CREATE FUNCTION act_caught_then_sleep() RETURNS void LANGUAGE plpgsql AS $$ '
		  . 'BEGIN BEGIN PERFORM 1/0; EXCEPTION WHEN division_by_zero THEN NULL; END; '
		  . 'PERFORM pg_sleep(1.0); END $$');
	my $s = psw_session($node);
	my $pid = backend_pid($s);

	send_sql($s, 'SELECT act_caught_then_sleep()');
	ok(wait_for_event($pid, 'wait_event', 'PgSleep'),
		'in the sleep after the caught error');
	my $row = activity_of($pid);
	my $top = pgsa_queryid($pid);
	is($row->{state}, 'active', 'state active');
	is($row->{top_queryid}, $top, 'top_queryid is the call');
	is($row->{queryid}, $top, 'queryid is the call');
	my (undef, $err) = finish_sql($s);
	is($err, '', 'the call succeeded');

	# A failed statement inside a savepoint: aborted transaction, no ids.
	sql($s, 'BEGIN');
	sql($s, 'SAVEPOINT s1');
	ok(!eval { sql($s, 'SELECT 1/0'); 1 }, 'the statement in the savepoint fails');
	my $failed = activity_of($pid);
	is($failed->{state}, 'idle in transaction', 'idle in (aborted) transaction');
	is($failed->{queryid}, '', 'no stale queryid after an error in a savepoint');
	sql($s, 'ROLLBACK TO SAVEPOINT s1');

	send_sql($s, 'SELECT pg_sleep(1.0)');
	ok(wait_for_event($pid, 'wait_event', 'PgSleep'),
		'sleeping after ROLLBACK TO SAVEPOINT');
	$row = activity_of($pid);
	is($row->{state}, 'active', 'state active');
	isnt($row->{queryid}, '', 'queryid set');
	is($row->{queryid}, pgsa_queryid($pid), 'queryid is the sleep');
	finish_sql($s);
	sql($s, 'COMMIT');
	is(activity_of($pid)->{state}, 'idle', 'idle after COMMIT');
	$s->quit;
};

# The very first statement of a new session is attributed like any other.
subtest 'first statement of a session is attributed' => sub {
	my $s = psw_session($node);
	send_sql($s, "SELECT pg_sleep(0.8), 'psw-first-statement'");
	my $pid;
	ok( wait_until(
			sub {
				$pid = sql($admin,
					"SELECT pid FROM pg_stat_activity WHERE query LIKE '%psw-first-statement%' "
					  . "AND pid <> pg_backend_pid() AND wait_event = 'PgSleep'");
				$pid ne '';
			}),
		'the first statement sleeps');
	my $row = activity_of($pid);
	is($row->{state}, 'active', 'state active');
	isnt($row->{queryid}, '', 'the first statement has a queryid');
	is($row->{queryid}, pgsa_queryid($pid), 'its own');
	finish_sql($s);
	$s->quit;
};

$admin->quit;
$node->stop;
done_testing();
