# DROP DATABASE of a database the sampler has seen is not held up by
# pg_stat_waits. PostgreSQL makes DROP DATABASE wait (up to 5 s, then fail)
# for every process connected to the database, and for every process to
# absorb its shared-memory barrier: the sampler connects to no database
# and absorbs barriers at every tick (on 19 it also sets
# BGWORKER_INTERRUPTIBLE). The control case, a session left connected, shows
# that the timing here tells a delayed DROP DATABASE from one that is not.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;
use Time::HiRes qw(time);

my $node = psw_node('drop_database',
	conf => [ "pg_stat_waits.timing = on", "pg_stat_waits.sample_period = 10", "pg_stat_waits.sample_idle = on" ],
	extensions => 1);
my $admin = psw_session($node);
my $sampler = sql($admin, 'SELECT sampler_pid FROM pg_stat_waits_status');
cmp_ok($sampler, '>', 0, 'the sampler runs');
is(sql($admin, "SELECT datid IS NULL FROM pg_stat_activity WHERE pid = $sampler"),
	't', 'the sampler is connected to no database');

# Drops a database and returns (seconds it took, error or '').
my $drop = sub {
	my ($db) = @_;
	my $t0 = time;
	$admin->{stderr} = '';
	$admin->query("DROP DATABASE $db");
	my $err = $admin->{stderr};
	$admin->{stderr} = '';
	return (time - $t0, $err);
};

for my $db ('seen_idle', 'seen_busy')
{
	sql($admin, "CREATE DATABASE $db");
	my $oid = sql($admin, "SELECT oid FROM pg_database WHERE datname = '$db'");
	# A session of that database works (and, for seen_idle, stays idle a
	# while) until the sampler has recorded it; it leaves before the drop.
	my $s = $node->background_psql($db, on_error_stop => 0);
	$s->query('CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g');
	$s->query('SELECT pg_sleep(0.5)') if $db eq 'seen_busy';
	ok( wait_until(
			sub {
				sql($admin, "SELECT count(*) > 0 FROM pg_stat_waits_history WHERE datid = $oid") eq 't';
			}),
		"$db: the sampler has seen a process of the database");
	$s->quit;
	ok( wait_until(sub { sql($admin, "SELECT count(*) FROM pg_stat_activity WHERE datid = $oid") eq '0' }),
		"$db: its session has left");
	my ($seconds, $err) = $drop->($db);
	is($err, '', "$db: DROP DATABASE succeeds");
	cmp_ok($seconds, '<', 2, "$db: DROP DATABASE is not held up (under 2 s; PostgreSQL waits 5 s for a process)");
}

# Control: a session still connected holds DROP DATABASE up, then fails it.
sql($admin, 'CREATE DATABASE still_used');
my $stay = $node->background_psql('still_used', on_error_stop => 0);
$stay->query('SELECT 1');
my ($seconds, $err) = $drop->('still_used');
like($err, qr/being accessed by other users/, 'control: a connected session makes DROP DATABASE fail');
cmp_ok($seconds, '>=', 4, 'control: ... after PostgreSQL waited for it');
$stay->quit;

is(sql($admin, 'SELECT sampler_pid FROM pg_stat_waits_status'), $sampler, 'the same sampler runs on');

$admin->quit;
$node->stop;
done_testing();
