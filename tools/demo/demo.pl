#!/usr/bin/perl
# ./run demo: a throwaway node, a contended workload, and what the views and
# the report tool show of it. ./run runs it as the cluster user, with the
# staged bindir first in PATH and PostgreSQL's test modules in PERL5LIB
# (tools/lib/test_runner.sh, run_tool).
#   tools/demo/demo.pl OUT_DIR      the HTML report is written there
use strict;
use warnings;

# PostgreSQL::Test::Utils sends standard output and error to its log file
# when it loads; the demo speaks to the terminal, through copies made first.
my ($OUT, $ERR);
BEGIN
{
	open($OUT, '>&', \*STDOUT) or die "stdout: $!";
	open($ERR, '>&', \*STDERR) or die "stderr: $!";
	$OUT->autoflush(1);
	$ERR->autoflush(1);
}
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PswTest;
use Time::HiRes qw(sleep);

my $out_dir = shift // die "usage: $0 OUT_DIR\n";
my $db = 'psw_demo';

sub say_step { print $ERR "\033[1m==> @_\033[0m\n"; }

# psql on the demo's database, its tables on the terminal.
sub show
{
	IPC::Run::run([ 'psql', '-X', '-q', '-d', $db, @_ ], '>', $OUT, '2>', $ERR)
	  or print $ERR "psql failed\n";
}

sub quiet { return IPC::Run::run([@_], '>', \my $o, '2>', \my $e); }

# pg_stat_waits listed last (psw_node's default): its hooks run first and
# see every statement id before pg_stat_statements hides utility ids from
# the hooks after it. fsync on: the WAL's waits are part of the picture.
my $node = psw_node('demo', conf => ['fsync = on']);
$ENV{PGHOST} = $node->host;
$ENV{PGPORT} = $node->port;
say_step("node up at $ENV{PGHOST} port $ENV{PGPORT}");
$node->safe_psql('postgres', "CREATE DATABASE $db");
$node->safe_psql($db, 'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_statements');
say_step('exact timing on for every session (ALTER SYSTEM + reload)');
$node->safe_psql($db, 'ALTER SYSTEM SET pg_stat_waits.timing = on');
$node->reload;
say_step('pgbench -i -s 2');
quiet('pgbench', '-q', '-i', '-s', '2', $db) or die "pgbench -i failed\n";

say_step('workload: pgbench TPC-B with 4 clients for 12 s, plus two sessions fighting over one row');
my $pgbench_out = '';
my @workload = (IPC::Run::start([ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '12', $db ],
		'>', \$pgbench_out, '2>&1'));
# The holder takes the row lock for 3 s at a time; the waiter queues behind it.
push @workload,
  IPC::Run::start([ 'psql', '-X', '-q', '-d', $db,
		map { ('-c', 'BEGIN', '-c', 'UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1',
				'-c', 'SELECT pg_sleep(3)', '-c', 'COMMIT') } 1 .. 3 ],
	'>', \my $holder_out, '2>', \my $holder_err);
sleep 0.5;
push @workload,
  IPC::Run::start([ 'psql', '-X', '-q', '-d', $db,
		map { ('-c', 'UPDATE pgbench_tellers SET tbalance = tbalance - 1 WHERE tid = 1') } 1 .. 3 ],
	'>', \my $waiter_out, '2>', \my $waiter_err);

sleep 2;
say_step('pg_stat_waits_activity (client backends, now)');
show('-c', "SELECT pid, state, wait_event_type, wait_event, queryid, top_queryid,
                   round(extract(epoch FROM now() - query_start)::numeric, 3) AS running_s, blockers
              FROM pg_stat_waits_activity WHERE backend_type = 'client backend'
             ORDER BY state, wait_event_type NULLS LAST, pid");
say_step('the same sessions, by wait event');
show('-c', "SELECT wait_event_type, wait_event, count(*) AS sessions
              FROM pg_stat_waits_activity WHERE state <> 'idle'
             GROUP BY 1, 2 ORDER BY 3 DESC");
say_step('background processes');
show('-c', "SELECT pid, backend_type, wait_event_type, wait_event
              FROM pg_stat_waits_activity WHERE backend_type <> 'client backend' ORDER BY backend_type");

# What the 10 ms sampler saw, a few more seconds into the workload.
sleep 3;
say_step("pg_stat_waits_top('5 minutes'): the top waits of the workload (sampled every 10 ms)");
show('-c', "SELECT wait_event_type, wait_event, samples, round(pct::numeric, 1) AS pct
              FROM pg_stat_waits_top('5 minutes', 10)");
say_step('pg_stat_waits_timeline: per-minute timeline (average active sessions per wait event)');
show('-c', "SELECT to_char(bucket_start, 'HH24:MI') AS minute, wait_event_type, wait_event, samples,
                   round(avg_active::numeric, 3) AS avg_active
              FROM pg_stat_waits_timeline('1 hour', '1 minute')
             WHERE samples >= 5 ORDER BY bucket_start, samples DESC");
say_step("pg_stat_waits_timeline('1 minute', '5 seconds'): the last minute in 5-second buckets");
show('-c', "SELECT to_char(bucket_start, 'HH24:MI:SS') AS bucket, wait_event_type, wait_event, samples
              FROM pg_stat_waits_timeline('1 minute', '5 seconds')
             WHERE samples >= 10 ORDER BY bucket_start, samples DESC");
say_step('pg_stat_waits_profile: sampled time by query and wait event (est_time ms = samples x period)');
show('-c', "SELECT p.queryid, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 48) AS query,
                   p.wait_event_type, p.wait_event, p.samples, p.est_time
              FROM pg_stat_waits_profile p
              LEFT JOIN (SELECT DISTINCT ON (queryid) queryid, query FROM pg_stat_statements) s USING (queryid)
             WHERE p.backend_type = 'client backend'
             ORDER BY p.samples DESC LIMIT 12");

# The HTML report while the workload still runs: its "sessions now" shows
# the sessions at work, and its last bucket is one still filling.
my $bin = psw_report_bin();
my $html;
if (!$bin)
{
	print $ERR "pg_stat_waits_report is not built\n";
}
else
{
	say_step('HTML report of the workload, written while it runs (pg_stat_waits_report report --since 2min)');
	$html = "$out_dir/pg_stat_waits_report.html";
	my $err = '';
	if (!IPC::Run::run([ $bin, 'report', '--since', '2min', '--html', $html, '-d', $db ], '>', \my $o, '2>', \$err))
	{
		print $ERR $err;
		undef $html;
	}
	else
	{
		chmod 0644, $html;
	}
}

$_->finish for @workload;
my ($tps) = $pgbench_out =~ /^(tps.*)$/m;
say_step('pgbench: ' . ($tps // 'no tps line'));
say_step('pg_stat_waits: exact wait times of the whole demo (ms)');
show('-c', "SELECT wait_event_type, wait_event, calls, round(total_time::numeric, 1) AS total_ms,
                   round(mean_time::numeric, 3) AS mean_ms, round(max_time::numeric, 1) AS max_ms,
                   backend_type
              FROM pg_stat_waits WHERE wait_event_type NOT IN ('Activity')
             ORDER BY total_time DESC LIMIT 12");
say_step("pg_stat_waits_queries: where the blocked UPDATE's time went");
show('-c', "SELECT q.wait_event_type, q.wait_event, q.calls, round(q.total_time::numeric, 1) AS total_ms
              FROM pg_stat_waits_queries q
             WHERE q.queryid = (SELECT queryid FROM pg_stat_statements
                                 WHERE query LIKE 'UPDATE pgbench_tellers SET tbalance = tbalance - %' LIMIT 1)
             ORDER BY q.total_time DESC");
say_step('pg_stat_waits_executions: the slowest runs (capture_min_duration, 1 s by default), their waits and blockers');
show('-c', "SELECT pid, round(elapsed::numeric) AS elapsed_ms, round(cpu::numeric, 1) AS cpu_ms,
                   (SELECT string_agg(w->>'wait_event' || ' ' || round((w->>'time_ms')::numeric) || ' ms', ', ')
                      FROM jsonb_array_elements(waits) w) AS waits,
                   (SELECT string_agg((b->>'pid') || ' (' || (b->>'state') || ')', ', ')
                      FROM jsonb_array_elements(blockers) b) AS blocked_by,
                   left(query, 60) AS query
              FROM pg_stat_waits_executions ORDER BY elapsed DESC LIMIT 6");
say_step('pg_stat_waits_status');
show('-x', '-c', 'SELECT * FROM pg_stat_waits_status');
$node->stop;

if ($html)
{
	print $OUT "report: $html\n";
	# The demo's node goes away with the demo; this is for a server of one's own.
	print $OUT "live:   pg_stat_waits_report serve -d DBNAME, then open http://localhost:9866/report/default\n";
	print $OUT "        (the same report, generated on request; window, slice and comparison on the page)\n";
}
