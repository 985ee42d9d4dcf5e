# Buffer waits under the names each release gives them, in every view.
# PostgreSQL 19 moved buffer content locks out of LWLock/BufferContent into
# the Buffer class (the class byte that was BufferPin), next to the pin
# wait, now Buffer/BufferCleanup:
#   15-18: LWLock/BufferContent and BufferPin/BufferPin
#   19:    Buffer/BufferShared, BufferShareExclusive, BufferExclusive and
#          Buffer/BufferCleanup
# - A cleanup-lock wait, made on purpose: a cursor keeps a pin on a table's
#   only page and VACUUM (FREEZE) must wait for it. Live in
#   pg_stat_waits_activity as in pg_stat_activity, then timed (pg_stat_waits,
#   per query, histogram) and sampled (profile) under the release's name.
# - Content-lock waits, from many sessions updating rows of one page: on 19
#   they are timed as Buffer/Buffer* (not 'other', not LWLock), before 19 as
#   LWLock/BufferContent.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;
use Time::HiRes qw(time);

my $node = psw_node('buffer_waits',
	conf => [ "pg_stat_waits.timing = on", "pg_stat_waits.sample_period = 10", 'autovacuum = off' ],
	extensions => 1);
my $v19 = $node->pg_version->major >= 19;
my ($pin_type, $pin_event) = $v19 ? ('Buffer', 'BufferCleanup') : ('BufferPin', 'BufferPin');

my $admin = psw_session($node);
sql($admin, 'CREATE TABLE pinned (id int, t name)');
sql($admin, q{INSERT INTO pinned SELECT g, 'x' FROM generate_series(1, 20) g});
sql($admin, 'SELECT pg_stat_waits_reset()');

# The cursor's transaction starts after the rows' one committed: their xmin
# is older than any snapshot, so VACUUM (FREEZE), aggressive, must freeze
# them and waits for the page's cleanup lock.
my $holder = psw_session($node, 'BEGIN', 'DECLARE c CURSOR FOR SELECT * FROM pinned', 'FETCH 1 FROM c');
my $vacuum = psw_session($node);
my $vpid = backend_pid($vacuum);
send_sql($vacuum, 'VACUUM (FREEZE) pinned');
ok(wait_for_state($admin, $vpid, 'wait_event', $pin_event), "VACUUM waits for the pin: $pin_event");
is(sql($admin, "SELECT wait_event_type || '/' || wait_event FROM pg_stat_waits_activity WHERE pid = $vpid"),
	sql($admin, "SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity WHERE pid = $vpid"),
	'pg_stat_waits_activity names the wait as pg_stat_activity does');
my $held_from = time;
sleep 1;
ok( wait_until(
		sub {
			sql($admin,
				"SELECT count(*) >= 20 FROM pg_stat_waits_history WHERE pid = $vpid "
				  . "AND wait_event_type = '$pin_type' AND wait_event = '$pin_event'") eq 't';
		}),
	'the sampler records it under its name');
sql($holder, 'COMMIT');
my ($out, $err) = finish_sql($vacuum);
is($err, '', 'VACUUM finishes once the pin is gone');
my $held_ms = (time - $held_from) * 1000;

# Each process flushes its exact counters within a second.
ok( wait_until(
		sub {
			sql($admin,
				"SELECT count(*) FROM pg_stat_waits WHERE wait_event_type = '$pin_type' "
				  . "AND wait_event = '$pin_event' AND calls >= 1") >= 1;
		}),
	"pg_stat_waits: a row $pin_type/$pin_event");
cmp_ok(
	sql($admin,
		"SELECT sum(total_time) FROM pg_stat_waits WHERE wait_event_type = '$pin_type' AND wait_event = '$pin_event'"),
	'>=', $held_ms * 0.9,
	'its time is the time the pin was held');
is( sql($admin,
		"SELECT count(*) > 0 FROM pg_stat_waits_queries q JOIN pg_stat_statements s USING (queryid) "
		  . "WHERE s.query LIKE 'VACUUM%pinned%' AND q.wait_event_type = '$pin_type' AND q.wait_event = '$pin_event'"),
	't', 'pg_stat_waits_queries: the VACUUM statement holds it');
is(sql($admin, "SELECT sum(count) > 0 FROM pg_stat_waits_histogram('$pin_type', '$pin_event')"),
	't', 'pg_stat_waits_histogram counts it');
is( sql($admin,
		"SELECT sum(samples) > 0 FROM pg_stat_waits_profile WHERE wait_event_type = '$pin_type' "
		  . "AND wait_event = '$pin_event'"),
	't', 'pg_stat_waits_profile samples it');
is( sql($admin,
		"SELECT count(*) FROM pg_stat_waits_wait_events() WHERE wait_event_type = '$pin_type'"),
	$v19 ? 4 : 1, "pg_stat_waits_wait_events(): the $pin_type class has " . ($v19 ? 4 : 1) . ' events');

# Content-lock waits: 8 sessions update 20 rows of one page. A wait happens
# when a session is descheduled while it holds the page's content lock,
# which on a busy 2-core machine takes a few seconds at most.
my ($content_type, $content_re) = $v19 ? ('Buffer', '^Buffer(Shared|ShareExclusive|Exclusive)$') : ('LWLock', '^BufferContent$');
sql($admin, 'CREATE TABLE hot (id int PRIMARY KEY, v int) WITH (fillfactor = 10)');
sql($admin, 'INSERT INTO hot SELECT g, 0 FROM generate_series(1, 20) g');
my $script = $node->basedir . '/hot.sql';
open(my $fh, '>', $script) or die "cannot write $script: $!";
print $fh "\\set id random(1, 20)\nUPDATE hot SET v = v + 1 WHERE id = :id;\nSELECT sum(v) FROM hot;\n";
close $fh;
my $content_rows = sub {
	sql($admin,
		"SELECT string_agg(wait_event, ',' ORDER BY wait_event) FROM pg_stat_waits "
		  . "WHERE wait_event_type = '$content_type' AND wait_event ~ '$content_re' AND calls > 0");
};
my $found = '';
for my $round (1 .. 6)
{
	$node->command_ok([ 'pgbench', '-n', '-f', $script, '-c', '8', '-j', '2', '-T', '5', 'postgres' ],
		"pgbench on one page, round $round");
	sleep 1.5;
	$found = $content_rows->();
	last if $found ne '';
}
isnt($found, '', "content-lock waits are timed as $content_type/$found");
is( sql($admin,
		q{SELECT string_agg(DISTINCT wait_event_type || '/' || wait_event, ', ') FROM (
  SELECT wait_event_type, wait_event FROM pg_stat_waits
  UNION ALL SELECT wait_event_type, wait_event FROM pg_stat_waits_queries
  UNION ALL SELECT wait_event_type, wait_event FROM pg_stat_waits_profile) r
 WHERE wait_event = 'other' OR wait_event_type IN ('Other', '???')}),
	'', "no 'other' row after buffer waits");
SKIP: {
	skip 'LWLock/BufferContent exists before 19 only', 1 unless $v19;
	is(sql($admin, "SELECT count(*) FROM pg_stat_waits WHERE wait_event = 'BufferContent'"),
		'0', '19: no LWLock/BufferContent row');
}

$_->quit for ($holder, $vacuum, $admin);
$node->stop;
done_testing();
