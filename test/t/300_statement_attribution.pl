# Statement identity follows what the server reports: statements that run
# transactions of their own (CREATE INDEX CONCURRENTLY, procedures that
# COMMIT) keep their ids until they are over; under track = all nested
# statements carry their own ids and time; exact timing's per-query rows add
# up (waits + CPU = elapsed) and count one call per execution.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $node = PostgreSQL::Test::Cluster->new('attribution');
$node->init;
# 19 times pg_stat_statements with the TSC at the rate the CPU or hypervisor
# reports (timing_clock_source = auto), pg_stat_waits at a rate calibrated
# against CLOCK_MONOTONIC: a few parts in 10,000 apart here. The sums compared
# below are exact on one clock only (docs/timing.md).
my $clock = $node->pg_version->major >= 19 ? 'timing_clock_source = system' : '';
$node->append_conf(
	'postgresql.conf', qq{
$clock
shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'
pg_stat_waits.sample_period = 10
pg_stat_statements.track = all
max_connections = 20
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql('CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_statements;');

# ---------------------------------------------------------------------------
# CREATE INDEX CONCURRENTLY waiting for an old snapshot: it commits
# internally before that wait, yet stays active under its own queryid.
sql('CREATE TABLE cic_t AS SELECT g AS id FROM generate_series(1, 1000) g');
sql('SELECT pg_stat_waits_reset()');
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM pg_class');    # takes the snapshot
my $cic = $node->background_psql('postgres');
$cic->query_safe('SET pg_stat_waits.timing = on');
my $cic_pid = $cic->query_safe('SELECT pg_backend_pid()');
$cic->query_until(qr/cic_started/,
	"\\echo cic_started\nCREATE INDEX CONCURRENTLY cic_t_id ON cic_t (id);\n");
ok( $node->poll_query_until(
		'postgres',
		"SELECT wait_event = 'virtualxid' FROM pg_stat_activity WHERE pid = $cic_pid"),
	'CIC waits for the old snapshot');
my $cic_qid = sql("SELECT query_id FROM pg_stat_activity WHERE pid = $cic_pid");
my $act = sql(
	"SELECT state, queryid, top_queryid, wait_event FROM pg_stat_waits_activity WHERE pid = $cic_pid");
is($act, "active|$cic_qid|$cic_qid|virtualxid",
	'CIC waiting for old snapshots: active under its queryid in pg_stat_waits_activity');
usleep(1_200_000);
$holder->query_safe('COMMIT');
$cic->query_safe('SELECT 1');    # returns once the index is built
my ($samples, $attributed) = split /\|/, sql(
	"SELECT count(*), count(*) FILTER (WHERE queryid = $cic_qid AND top_queryid = $cic_qid)
	   FROM pg_stat_waits_history WHERE pid = $cic_pid AND wait_event = 'virtualxid'");
cmp_ok($samples, '>=', 30, 'CIC snapshot wait sampled');
is($attributed, $samples, 'every sample of the CIC snapshot wait carries its queryid');
my $all_ms = sql("SELECT total_time FROM pg_stat_waits WHERE wait_event = 'virtualxid'");
my $q_ms = sql(
	"SELECT coalesce(sum(total_time), 0) FROM pg_stat_waits_queries
	  WHERE queryid = $cic_qid AND wait_event = 'virtualxid'");
cmp_ok($all_ms, '>=', 1000, 'CIC waited more than a second (exact timing)');
cmp_ok(abs($q_ms - $all_ms), '<=', 0.01, "CIC's exact virtualxid wait is in its per-query rows ($q_ms of $all_ms ms)");
my ($rows_ms, $cpu_calls) = split /\|/, sql(
	"SELECT sum(total_time), sum(calls) FILTER (WHERE wait_event_type = 'CPU')
	   FROM pg_stat_waits_queries WHERE queryid = $cic_qid");
my $pgss_ms = sql(
	"SELECT total_exec_time FROM pg_stat_statements WHERE queryid = $cic_qid AND toplevel");
is($cpu_calls, 1, 'CIC: one call');
cmp_ok($rows_ms, '>=', $pgss_ms, "CIC: waits + CPU ($rows_ms ms) cover pg_stat_statements' time ($pgss_ms ms)");
cmp_ok($rows_ms, '<=', $pgss_ms + 50, 'CIC: waits + CPU no more than its elapsed time');
$cic->quit;
$holder->quit;

# ---------------------------------------------------------------------------
# VACUUM of several tables runs one transaction per table: waiting for the
# second table's lock, after the first table's commit, it is still active.
sql('CREATE TABLE vac_a (i int); CREATE TABLE vac_b (i int);');
{
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('BEGIN');
	$locker->query_safe('LOCK TABLE vac_b IN SHARE UPDATE EXCLUSIVE MODE');
	my $v = $node->background_psql('postgres');
	my $pid = $v->query_safe('SELECT pg_backend_pid()');
	$v->query_until(qr/vac_started/, "\\echo vac_started\nVACUUM vac_a, vac_b;\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT wait_event = 'relation' FROM pg_stat_activity WHERE pid = $pid"),
		'VACUUM waits for its second table');
	my ($vac_qid, $ids) = split /\|/, sql(
		"SELECT a.query_id, w.state || ',' || w.queryid || ',' || w.top_queryid
		   FROM pg_stat_activity a JOIN pg_stat_waits_activity w USING (pid) WHERE pid = $pid");
	is($ids, "active,$vac_qid,$vac_qid", 'VACUUM after its first table: active under its queryid');
	$locker->query_safe('COMMIT');
	$v->query_safe('SELECT 1');
	$v->quit;
	$locker->quit;
}

# ---------------------------------------------------------------------------
# A procedure that commits between two waits: the CALL stays the top-level
# statement for both (track = top: also the queryid; track = all: the nested
# SELECTs are the queryids, the CALL their top_queryid). The second wait is
# on an advisory lock this test holds, so it is caught while it lasts.
sql(q{CREATE TABLE proc_marks (t timestamptz)});
sql(q{CREATE PROCEDURE sleep_commit_lock() LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_sleep(0.6);
	COMMIT;
	INSERT INTO proc_marks VALUES (clock_timestamp());
	COMMIT;
	PERFORM pg_advisory_lock(4242);
	PERFORM pg_advisory_unlock(4242);
END $$});
for my $track (qw(top all))
{
	sql('SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset();');
	sql('TRUNCATE proc_marks');
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('SELECT pg_advisory_lock(4242)');
	my $s = $node->background_psql('postgres');
	$s->query_safe("SET pg_stat_waits.track = '$track'");
	$s->query_safe('SET pg_stat_waits.timing = on');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_until(qr/call_started/, "\\echo call_started\nCALL sleep_commit_lock();\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $pid"),
		"track = $track: procedure committed and waits for the lock");
	my $call_qid = sql("SELECT query_id FROM pg_stat_activity WHERE pid = $pid");
	my $lock_qid = sql(
		q{SELECT queryid FROM pg_stat_statements WHERE query = 'SELECT pg_advisory_lock($1)' AND NOT toplevel});
	my ($state, $qid, $top) = split /\|/,
	  sql("SELECT state, queryid, top_queryid FROM pg_stat_waits_activity WHERE pid = $pid");
	is("$state|$top", "active|$call_qid",
		"track = $track: after the COMMIT the CALL is still the top-level statement");
	# pg_stat_statements records a nested statement when it ends.
	is($qid, $track eq 'top' ? $call_qid : ($lock_qid eq '' ? $qid : $lock_qid),
		"track = $track: queryid after the COMMIT");
	usleep(800_000);
	$locker->query_safe('SELECT pg_advisory_unlock(4242)');
	$s->query_safe('SELECT 1');
	$lock_qid = sql(
		q{SELECT queryid FROM pg_stat_statements WHERE query = 'SELECT pg_advisory_lock($1)' AND NOT toplevel});
	my $sleep_qid = sql(
		q{SELECT queryid FROM pg_stat_statements WHERE query = 'SELECT pg_sleep($1)' AND NOT toplevel});
	is($qid, $lock_qid, "track = all: the nested statement was the queryid") if $track eq 'all';
	my ($sleep_id, $lock_id) = $track eq 'top' ? ($call_qid, $call_qid) : ($sleep_qid, $lock_qid);
	my ($sleeps, $bad_sleeps, $locks, $bad_locks) = split /\|/, sql(
		"SELECT count(*) FILTER (WHERE wait_event = 'PgSleep'),
		        count(*) FILTER (WHERE wait_event = 'PgSleep'
		                           AND (top_queryid IS DISTINCT FROM $call_qid OR queryid IS DISTINCT FROM $sleep_id)),
		        count(*) FILTER (WHERE wait_event = 'advisory'),
		        count(*) FILTER (WHERE wait_event = 'advisory'
		                           AND (top_queryid IS DISTINCT FROM $call_qid OR queryid IS DISTINCT FROM $lock_id))
		   FROM pg_stat_waits_history WHERE pid = $pid");
	cmp_ok($sleeps, '>=', 20, "track = $track: the sleep before the COMMIT sampled");
	cmp_ok($locks, '>=', 20, "track = $track: the lock wait after the COMMIT sampled");
	is("$bad_sleeps|$bad_locks", '0|0', "track = $track: both waits sampled under the CALL");
	my ($sleep_ms, $lock_ms) = split /\|/, sql(
		"SELECT coalesce(sum(total_time) FILTER (WHERE queryid = $sleep_id AND wait_event = 'PgSleep'), 0),
		        coalesce(sum(total_time) FILTER (WHERE queryid = $lock_id AND wait_event = 'advisory'), 0)
		   FROM pg_stat_waits_queries");
	cmp_ok($sleep_ms, '>=', 600, "track = $track: the sleep timed under its statement ($sleep_ms ms)");
	cmp_ok($lock_ms, '>=', 700, "track = $track: the lock wait timed under its statement ($lock_ms ms)");
	is( sql(
			"SELECT calls FROM pg_stat_waits_queries WHERE queryid = $call_qid AND wait_event_type = 'CPU'"),
		1,
		"track = $track: CALL counted once");
	$s->quit;
	$locker->quit;
}

# ---------------------------------------------------------------------------
# track = all: a DO block that only sleeps has almost no CPU of its own; the
# nested SELECT carries the waits; CPU rows match the process's CPU time.
sub proc_cpu_ns
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/schedstat" or return (undef, undef);
	my ($run, $queued) = split ' ', scalar <$fh>;
	close $fh;
	return ($run, $queued);
}
sql('SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset();');
{
	my $s = $node->background_psql('postgres');
	$s->query_safe("SET pg_stat_waits.track = 'all'");
	$s->query_safe('SET pg_stat_waits.timing = on');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	my ($run0, $q0) = proc_cpu_ns($pid);
	$s->query_safe(q{DO $$ BEGIN FOR i IN 1..5 LOOP PERFORM pg_sleep(0.2); END LOOP; END $$});
	my ($run1, $q1) = proc_cpu_ns($pid);
	$s->quit;
	my $do_qid = sql(q{SELECT queryid FROM pg_stat_statements WHERE query LIKE 'DO $$%' AND toplevel});
	my $sleep_qid = sql(
		q{SELECT queryid FROM pg_stat_statements WHERE query = 'SELECT pg_sleep($1)' AND NOT toplevel});
	my $do_cpu = sql(
		"SELECT total_time FROM pg_stat_waits_queries WHERE queryid = $do_qid AND wait_event_type = 'CPU'");
	my ($nested_wait, $nested_cpu, $nested_calls) = split /\|/, sql(
		"SELECT sum(total_time) FILTER (WHERE wait_event = 'PgSleep'),
		        sum(total_time) FILTER (WHERE wait_event_type = 'CPU'),
		        sum(calls) FILTER (WHERE wait_event_type = 'CPU')
		   FROM pg_stat_waits_queries WHERE queryid = $sleep_qid");
	my $real_cpu_ms = defined $run1 ? ($run1 - $run0) / 1e6 : 0;
	my $queued_ms = defined $q1 ? ($q1 - $q0) / 1e6 : 0;
	note "DO: real CPU $real_cpu_ms ms (queued $queued_ms ms); DO CPU row $do_cpu, nested CPU $nested_cpu, nested wait $nested_wait";
	# Time queued for a core on a busy machine is in a CPU row too (see
	# below); the nested sleeps (1000 ms) must not be.
	cmp_ok($do_cpu, '<', 20 + $queued_ms, 'track = all: the DO block that only sleeps has ~0 CPU of its own');
	cmp_ok($nested_wait, '>=', 1000, 'track = all: the nested SELECT carries the sleeps');
	cmp_ok($nested_wait, '<', 1100, 'track = all: and only them');
	is($nested_calls, 5, 'track = all: the nested SELECT ran 5 times');
	my $ours = $do_cpu + $nested_cpu;
  SKIP:
	{
		skip 'no /proc/<pid>/schedstat on this kernel', 2 unless defined $run0 && defined $run1;
		# Our CPU is wall time outside waits, so time spent runnable but
		# queued (on a busy machine) is in it; the kernel says how much.
		cmp_ok($ours, '>=', $real_cpu_ms - 5,
			"track = all: CPU rows ($ours ms) not below the real CPU ($real_cpu_ms ms)");
		cmp_ok($ours, '<=', $real_cpu_ms + $queued_ms + 5, 'track = all: CPU rows not above real CPU + time queued');
	}
}

# ---------------------------------------------------------------------------
# track = all: an error caught by PL/pgSQL gives the block's statement its id
# back (here a wait outside any nested statement: a simple expression that
# waits for an advisory lock this test holds).
{
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('SELECT pg_advisory_lock(4243)');
	my $s = $node->background_psql('postgres');
	$s->query_safe("SET pg_stat_waits.track = 'all'");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_until(qr/do_started/, q{\echo do_started
DO $$ DECLARE v text; BEGIN
	BEGIN PERFORM 1/0; EXCEPTION WHEN division_by_zero THEN NULL; END;
	v := pg_advisory_lock(4243)::text;
END $$;
});
	ok( $node->poll_query_until(
			'postgres', "SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $pid"),
		'caught error: then waiting');
	my ($top, $ids) = split /\|/, sql(
		"SELECT a.query_id, w.queryid || ',' || w.top_queryid
		   FROM pg_stat_activity a JOIN pg_stat_waits_activity w USING (pid) WHERE pid = $pid");
	is($ids, "$top,$top", 'track = all: after a caught error the DO block is the statement again');
	$locker->query_safe('SELECT pg_advisory_unlock(4243)');
	$s->query_safe('SELECT 1');
	$s->quit;
	$locker->quit;
}

# ---------------------------------------------------------------------------
# An error caught while the statement is planned (a "safe cast" function with
# an exception block, folded to a constant; its handler sleeps 0.1 s) does
# not end the statement: the rest of its planning, its 0.15 s sleep and its
# call stay its own, under both tracks (under track = all the handler's
# sleep is its nested statement's), and a slow run stays one run.
sql(q{CREATE FUNCTION try_int(t text) RETURNS int IMMUTABLE LANGUAGE plpgsql
	AS 'BEGIN RETURN t::int; EXCEPTION WHEN others THEN PERFORM pg_sleep(0.1); RETURN NULL; END'});
for my $track ('top', 'all')
{
	my $own_sleep = $track eq 'top' ? 500 : 300;
	sql('SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset();');
	my $s = $node->background_psql('postgres');
	$s->query_safe("SET pg_stat_waits.timing = on; SET pg_stat_waits.track = '$track'; "
		  . "SET pg_stat_waits.capture_min_duration = 100");
	$s->query_safe(q{SELECT pg_sleep(0.15), try_int('x') AS caught_in_planning}) for 1 .. 2;
	$s->quit;
	my ($calls, $sleep, $cpu_calls) = split /\|/, sql(q{
		SELECT s.calls, coalesce(round(w.total_time), -1), coalesce(c.calls, -1)
		  FROM pg_stat_statements s
		  LEFT JOIN pg_stat_waits_queries w ON w.queryid = s.queryid AND w.wait_event = 'PgSleep'
		  LEFT JOIN pg_stat_waits_queries c ON c.queryid = s.queryid AND c.wait_event_type = 'CPU'
		 WHERE s.query LIKE '%caught_in_planning%' AND s.toplevel});
	is($calls, 2, "track = $track: the statement ran twice");
	ok($sleep >= $own_sleep - 5 && $sleep < $own_sleep + 150, "track = $track: its sleeps are its own ($sleep ms)");
	is($cpu_calls, 2, "track = $track: its CPU row counts its two calls");
	is( sql(q{SELECT count(*) FILTER (WHERE elapsed >= 245) || '/' || count(*) FROM pg_stat_waits_executions
		 WHERE query LIKE '%caught_in_planning%'}),
		'2/2', "track = $track: each run is kept whole, once");
}

# ---------------------------------------------------------------------------
# Calls: one per execution, for utility statements too, as pg_stat_statements.
sql('SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset();');
{
	my $s = $node->background_psql('postgres');
	$s->query_safe('SET pg_stat_waits.timing = on');
	for (1 .. 3)
	{
		$s->query_safe(q{SET work_mem = '8MB'});
		$s->query_safe(q{DO $$ BEGIN PERFORM 1; END $$});
		$s->query_safe('BEGIN');
		$s->query_safe('SELECT count(*) FROM pg_class');
		$s->query_safe('COMMIT');
		$s->query_safe('VACUUM cic_t');
	}
	$s->quit;
}
my $mismatch = sql(q{
	SELECT string_agg(s.query || ': ' || s.calls || ' vs ' || coalesce(q.calls::text, 'none'), '; ')
	  FROM pg_stat_statements s
	  LEFT JOIN pg_stat_waits_queries q
	    ON q.queryid = s.queryid AND q.datid = s.dbid AND q.usesysid = s.userid AND q.wait_event_type = 'CPU'
	 WHERE s.toplevel AND s.query ~ '^(SET work_mem|DO|BEGIN|COMMIT|SELECT count|VACUUM)'
	   AND s.calls <> coalesce(q.calls, 0)});
my $checked = sql(q{SELECT count(*) FROM pg_stat_statements
	 WHERE toplevel AND query ~ '^(SET work_mem|DO|BEGIN|COMMIT|SELECT count|VACUUM)'});
is($checked, 6, 'six statements to compare');
is($mismatch, '', 'CPU row calls equal pg_stat_statements calls');

# ---------------------------------------------------------------------------
# PREPARE / EXECUTE / DEALLOCATE: pg_stat_statements records an EXECUTE as
# the prepared statement it runs and never records PREPARE (nor DEALLOCATE
# before 17). Every id pg_stat_waits_queries shows is one pg_stat_statements
# knows, and the prepared statement's calls and waits are all there.
for my $track ('top', 'all')
{
	sql('SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset();');
	my $s = $node->background_psql('postgres');
	$s->query_safe("SET pg_stat_waits.timing = on; SET pg_stat_waits.track = '$track'");
	for (1 .. 3)
	{
		$s->query_safe('PREPARE sleeper AS SELECT pg_sleep(0.02)');
		$s->query_safe('EXECUTE sleeper');
		$s->query_safe('EXECUTE sleeper');
		$s->query_safe('DEALLOCATE sleeper');
	}
	$s->quit;
	my $unknown = sql(q{
		SELECT count(DISTINCT queryid) FROM pg_stat_waits_queries q
		 WHERE queryid <> 0 AND datid = (SELECT oid FROM pg_database WHERE datname = 'postgres')
		   AND NOT EXISTS (SELECT FROM pg_stat_statements s WHERE s.queryid = q.queryid)});
	is($unknown, 0, "track = $track: every queryid of the prepared statements' rows is in pg_stat_statements");
	my $row = sql(q{
		SELECT s.calls || ' ' || coalesce(c.calls::text, 'none') || ' ' || coalesce(round(w.total_time)::text, 'none')
		  FROM pg_stat_statements s
		  LEFT JOIN pg_stat_waits_queries c ON c.queryid = s.queryid AND c.wait_event_type = 'CPU'
		  LEFT JOIN pg_stat_waits_queries w ON w.queryid = s.queryid AND w.wait_event = 'PgSleep'
		 WHERE s.query LIKE 'PREPARE sleeper AS SELECT pg_sleep%' AND s.toplevel});
	my ($pgss_calls, $calls, $sleep) = split / /, $row;
	is($pgss_calls, 6, "track = $track: pg_stat_statements counts six executions of the prepared statement");
	is($calls, 6, "track = $track: its CPU row counts six calls");
	ok($sleep ne 'none' && $sleep >= 115 && $sleep < 400,
		"track = $track: its PgSleep time is its six 20 ms sleeps ($sleep ms)");
}

# ---------------------------------------------------------------------------
# Timed server mode (track = top with timing on: no nesting level of its own)
# counts one call per top-level execution, as pg_stat_statements does, and
# none for what runs nested: a SQL function evaluated while planning, a
# foreign-key check, the query inside COPY, EXPLAIN ANALYZE and CREATE TABLE
# AS; and the extended protocol's portals dropped at commit or at the next
# Bind (in and outside a transaction block, with and without a Parse per
# statement).
sql(q{CREATE FUNCTION class_count() RETURNS bigint IMMUTABLE LANGUAGE sql AS 'SELECT count(*) FROM pg_class';
	  CREATE TABLE fk_parent (id int PRIMARY KEY);
	  INSERT INTO fk_parent SELECT generate_series(1, 100);
	  CREATE TABLE fk_child (id int REFERENCES fk_parent);});
my $script = $node->basedir . '/calls.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{\set x 50
SELECT 1 + :x;
BEGIN;
SELECT count(*) FROM fk_parent WHERE id < :x;
UPDATE fk_parent SET id = id WHERE id = 1;
END;
});
sql('SELECT pg_stat_waits_reset(); SELECT pg_stat_statements_reset();');
{
	my $s = $node->background_psql('postgres');
	$s->query_safe('SET pg_stat_waits.timing = on');
	for my $i (1 .. 3)
	{
		$s->query_safe('SELECT class_count() + 1');
		$s->query_safe("INSERT INTO fk_child VALUES ($i)");
		$s->query_safe('EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM fk_parent');
		$s->query_safe('COPY (SELECT id FROM fk_parent WHERE id < 3) TO STDOUT');
	}
	$s->query_safe('CREATE TEMP TABLE ctas_t AS SELECT id FROM fk_parent');
	$s->quit;
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	for my $mode ('extended', 'prepared')
	{
		$node->command_ok([ 'pgbench', '-n', '-t', '4', '-M', $mode, '-f', $script, 'postgres' ],
			"pgbench -M $mode with timing on");
	}
}
# Two differences from pg_stat_statements, both its own: with
# track_planning off it counts what runs during planning as top level (the
# function's SELECT), and a cached utility statement of the extended protocol
# (pgbench -M prepared's BEGIN and END) only at its first execution.
my $skip = q{'^SET |pg_stat_statements|pg_stat_waits|FROM pg_class$|^(BEGIN|END)$'};
my $compared = sql(qq{SELECT count(*) FROM pg_stat_statements WHERE toplevel AND query !~ $skip});
cmp_ok($compared, '>=', 8, "timed server mode: $compared top-level statements to compare");
$mismatch = sql(qq{
	SELECT string_agg(s.query || ': ' || s.calls || ' vs ' || coalesce(q.calls::text, 'none'), '; ')
	  FROM pg_stat_statements s
	  LEFT JOIN pg_stat_waits_queries q
	    ON q.queryid = s.queryid AND q.datid = s.dbid AND q.usesysid = s.userid AND q.wait_event_type = 'CPU'
	 WHERE s.toplevel AND s.query !~ $skip AND s.calls <> coalesce(q.calls, 0)});
is($mismatch, '', 'timed server mode: CPU row calls equal pg_stat_statements calls');
is( sql(q{
	SELECT string_agg(s.query || ' ' || q.calls, ', ' ORDER BY s.query) FROM pg_stat_statements s
	  JOIN pg_stat_waits_queries q ON q.queryid = s.queryid AND q.wait_event_type = 'CPU'
	 WHERE s.query IN ('BEGIN', 'END') AND s.toplevel}),
	'BEGIN 8, END 8', 'timed server mode: BEGIN and END, 4 calls each in either protocol');
is( sql(q{
	SELECT count(*) FROM pg_stat_waits_queries q JOIN pg_stat_statements s ON s.queryid = q.queryid
	 WHERE s.query = 'SELECT count(*) FROM pg_class' AND q.calls > 0}),
	'0', 'timed server mode: the SQL function run while planning is not a call of its own');
is( sql(q{
	SELECT string_agg(DISTINCT s.query, '; ') FROM pg_stat_waits_queries q
	  JOIN pg_stat_statements s ON s.queryid = q.queryid
	 WHERE q.wait_event_type = 'CPU' AND q.calls > 0
	   AND NOT EXISTS (SELECT FROM pg_stat_statements t WHERE t.queryid = q.queryid AND t.toplevel)}),
	'', 'timed server mode: no call for a nested statement');

# Inside a transaction block an extended-protocol portal is dropped only at
# the next statement's Bind: the statement ends when the backend waits for
# the client, so the client's think time (\sleep) is not its ClientRead, and
# its one call still comes when the portal is dropped, also when the next
# statement is a utility statement (END) timed from its parse analysis.
my $think = $node->basedir . '/think.sql';
PostgreSQL::Test::Utils::append_to_file($think, "BEGIN;\nSELECT 42 AS think_probe;\n\\sleep 100 ms\nEND;\n");
# The same in tracker mode (track = all).
for my $case (map { my $t = $_; map { [ $t, $_ ] } ('simple', 'extended', 'prepared') } ('top', 'all'))
{
	my ($track, $mode) = @$case;
	my $what = $track eq 'top' ? 'timed server mode' : 'track = all';
	sql('SELECT pg_stat_waits_reset()');
	local $ENV{PGOPTIONS} = "-c pg_stat_waits.timing=on -c pg_stat_waits.track=$track";
	$node->command_ok([ 'pgbench', '-n', '-t', '3', '-M', $mode, '-f', $think, 'postgres' ],
		"$what: pgbench -M $mode with think time in a block");
	my ($calls, $client_ms) = split /\|/, sql(q{
		SELECT coalesce(sum(q.calls) FILTER (WHERE q.wait_event_type = 'CPU'), 0) || '|'
		       || round(coalesce(sum(q.total_time) FILTER (WHERE q.wait_event_type = 'Client'), 0))
		  FROM pg_stat_waits_queries q
		 WHERE q.queryid = (SELECT queryid FROM pg_stat_statements WHERE query ~ 'think_probe' LIMIT 1)});
	is($calls, 3, "$what, -M $mode: three calls of the statement before the think time");
	cmp_ok($client_ms, '<', 50, "$what, -M $mode: the client's think time is not its wait ($client_ms ms)");
}

# A cursor's query runs in its FETCHes, timed under its own id, and counts
# one call, at the FETCH that first runs it, whether the cursor is closed
# or left to the commit (pg_stat_statements counts it only in the latter
# case, at the commit). Where the cursor's query has no id of its own (15
# jumbles only the DECLARE), the FETCHes carry the time, one call each.
sql('SELECT pg_stat_waits_reset()');
{
	my $s = $node->background_psql('postgres');
	$s->query_safe('SET pg_stat_waits.timing = on');
	$s->query_safe('BEGIN');
	$s->query_safe('DECLARE cur_a CURSOR FOR SELECT pg_sleep(0.02) FROM generate_series(1, 6)');
	$s->query_safe('FETCH 3 FROM cur_a');
	$s->query_safe('FETCH 3 FROM cur_a');
	$s->query_safe('CLOSE cur_a');
	$s->query_safe('COMMIT');
	$s->query_safe('BEGIN');
	$s->query_safe(q{DECLARE cur_b CURSOR FOR SELECT pg_sleep(0.03), 'b' FROM generate_series(1, 4)});
	$s->query_safe('FETCH 2 FROM cur_b');
	$s->query_safe('COMMIT');
	$s->quit;
}
my @cursor_rows = split /\n/, sql(q{
	SELECT round(w.total_time) || '|' || coalesce(c.calls, 0) || '|'
	       || coalesce((SELECT bool_or(s.query ~ '^FETCH') FROM pg_stat_statements s WHERE s.queryid = w.queryid), false)
	  FROM pg_stat_waits_queries w
	  LEFT JOIN pg_stat_waits_queries c ON c.queryid = w.queryid AND c.wait_event_type = 'CPU'
	 WHERE w.wait_event = 'PgSleep' ORDER BY w.total_time DESC});
is(scalar @cursor_rows, 2, 'timed server mode: the two cursors\' sleeps under two ids');
my ($slept_a, $calls_a, $fetch_a) = split /\|/, $cursor_rows[0] // '';
my ($slept_b, $calls_b, $fetch_b) = split /\|/, $cursor_rows[1] // '';
ok($slept_a >= 115 && $slept_a < 250 && $slept_b >= 55 && $slept_b < 150,
	"timed server mode: each cursor's sleeps under its query ($slept_a and $slept_b ms)");
is( "$calls_a,$calls_b",
	$fetch_a eq 'true' ? '2,1' : '1,1',
	$fetch_a eq 'true'
	? 'timed server mode: the cursor\'s query has no id; each FETCH is one call'
	: 'timed server mode: a cursor\'s query counts one call, closed or left to the commit');

$node->stop;
done_testing();
