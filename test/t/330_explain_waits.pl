# EXPLAIN (ANALYZE, WAITS) on real waits: a row lock on the Update node as a
# plain user with timing off, parallel workers' sleeps on the Parallel Seq
# Scan, the workers' shutdown on the Gather, the workers' waits on their own
# nodes in a plan of 70 scans, and (timing on) the nodes and the waits outside them adding up to
# the statement's row in pg_stat_waits_queries; JSON carries the same
# figures. Before PostgreSQL 18 the option does not exist: the error says so.
# (test/sql/explain_waits.sql checks the output's shape in every format.)
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use JSON::PP;
use PswTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = psw_node('explain', extensions => 1,
	conf => [ 'max_worker_processes = 8', 'max_parallel_workers = 4', 'max_parallel_workers_per_gather = 2' ]);
my $admin = psw_session($node);

if ($node->pg_version < 18)
{
	my ($out, $err) = ('', '');
	$node->psql('postgres', 'EXPLAIN (ANALYZE, WAITS) SELECT 1', stdout => \$out, stderr => \$err);
	like($err, qr/unrecognized EXPLAIN option "waits"/, 'before 18 the option is refused by name');
	$node->stop;
	done_testing();
	exit 0;
}

# Every node of a JSON plan (depth first), with its parent's "Node Type".
sub nodes_of
{
	my ($plan, $out) = @_;
	push @$out, $plan;
	nodes_of($_, $out) for @{ $plan->{Plans} // [] };
	return $out;
}

sub waits_ms
{
	my ($list, $event) = @_;
	my ($ms, $calls) = (0, 0);
	for my $w (@{ $list // [] })
	{
		next if defined $event && $w->{'Wait Event'} ne $event;
		$ms += $w->{Time};
		$calls += $w->{Calls};
	}
	return ($ms, $calls);
}

sub explain_json
{
	my ($s, $query) = @_;
	my $doc = sql($s, "EXPLAIN (ANALYZE, WAITS, FORMAT JSON, COSTS OFF, BUFFERS OFF) $query");
	my $j = eval { decode_json($doc) };
	return $j ? $j->[0] : undef;
}

sub within
{
	my ($got, $want, $frac, $name) = @_;
	ok(abs($got - $want) <= $frac * $want, "$name (got $got, want $want ± " . ($frac * 100) . '%)');
}

# ---- a row lock, plain user, timing off ------------------------------------------
subtest 'Lock/transactionid on the Update node' => sub {
	sql($admin, 'CREATE TABLE acc (id int PRIMARY KEY, v int)');
	sql($admin, 'INSERT INTO acc VALUES (1, 0)');
	sql($admin, 'CREATE ROLE explain_plain');
	sql($admin, 'GRANT SELECT, UPDATE ON acc TO explain_plain');
	my $holder = psw_session($node, 'BEGIN', 'UPDATE acc SET v = v + 1 WHERE id = 1');
	my $blocked = psw_session($node, 'SET ROLE explain_plain');
	is(sql($blocked, "SELECT current_setting('pg_stat_waits.timing') || '/' || rolsuper FROM pg_roles WHERE rolname = current_user"),
		'off/false', 'the EXPLAIN runs as a plain user with timing off');
	my $pid = backend_pid($blocked);
	send_sql($blocked, 'EXPLAIN (ANALYZE, WAITS, COSTS OFF) UPDATE acc SET v = v + 10 WHERE id = 1');
	ok(wait_for_state($admin, $pid, 'wait_event', 'transactionid'), 'the UPDATE waits for the holder');
	my $t0 = time;
	usleep(2_500_000);
	sql($holder, 'COMMIT');
	my $blocked_ms = (time - $t0) * 1000;
	my ($out, $err) = finish_sql($blocked);
	is($err, '', 'EXPLAIN ran');
	# The Update node's lines come before its child's "->".
	my ($update) = $out =~ /^(Update on acc.*?)^\s+->/ms;
	ok(defined $update, 'the plan has an Update node') or diag($out);
	my ($ms) = ($update // '') =~ m{Waits: .*?Lock/transactionid ([0-9.]+) ms};
	ok(defined $ms, 'the Update node shows Lock/transactionid') or diag($out);
	within($ms // 0, $blocked_ms, 0.10, 'its time is the time blocked');
	unlike($out =~ s/^Update on acc.*?^\s+->//msr, qr/transactionid/, 'no other node shows it');
};

# ---- parallel workers --------------------------------------------------------------
sql($admin, 'CREATE TABLE p AS SELECT g AS x FROM generate_series(1, 300) g');
sql($admin, 'ALTER TABLE p SET (parallel_workers = 2)');
sql($admin, 'ANALYZE p');
sql($admin, 'CREATE FUNCTION slow(int) RETURNS bool LANGUAGE sql PARALLEL SAFE AS $$ SELECT pg_sleep(0.001) IS NOT NULL $$');
my $par = psw_session($node, 'SET parallel_setup_cost = 0', 'SET parallel_tuple_cost = 0',
	'SET min_parallel_table_scan_size = 0');

for my $leader (qw(on off))
{
	subtest "Timeout/PgSleep on the Parallel Seq Scan, leader participation $leader" => sub {
		sql($par, "SET parallel_leader_participation = $leader");
		my $plan = explain_json($par, 'SELECT count(*) FROM p WHERE slow(x)');
		ok($plan, 'EXPLAIN (FORMAT JSON) parses as JSON') or return;
		my @nodes = @{ nodes_of($plan->{Plan}, []) };
		my ($gather) = grep { $_->{'Node Type'} eq 'Gather' } @nodes;
		my ($scan) = grep { $_->{'Node Type'} eq 'Seq Scan' && $_->{'Parallel Aware'} } @nodes;
		ok($gather && $gather->{'Workers Launched'} > 0, 'workers were launched') or return;
		ok($scan, 'the plan has a Parallel Seq Scan') or return;
		my ($ms, $calls) = waits_ms($scan->{Waits}, 'PgSleep');
		cmp_ok($calls, '>=', 300, 'one sleep a row at least, in every process');
		# The node's time in all processes (its total per loop times its
		# loops) is its sleeps and a little CPU: the reference, measured by
		# EXPLAIN's own clock.
		my $node_ms = $scan->{'Actual Total Time'} * $scan->{'Actual Loops'};
		within($ms, $node_ms, 0.15, 'PgSleep time is the leader\'s and the workers\' sleeps');
		my ($other) = (0);
		for my $n (@nodes) { $other += (waits_ms($n->{Waits}, 'PgSleep'))[0] if $n != $scan; }
		is($other, 0, 'no other node has the sleeps');
	};
}

subtest 'text format: the same figures' => sub {
	sql($par, 'SET parallel_leader_participation = on');
	my $out = sql($par, 'EXPLAIN (ANALYZE, WAITS, COSTS OFF, BUFFERS OFF) SELECT count(*) FROM p WHERE slow(x)');
	my ($scan) = $out =~ /(Parallel Seq Scan on p.*?)(?:^\s+->|^Planning|\z)/ms;
	my ($total, $loops) = ($scan // '') =~ /actual time=[0-9.]+\.\.([0-9.]+) rows=[0-9.]+ loops=(\d+)/;
	my ($ms, $calls) = ($scan // '') =~ m{Waits: .*?Timeout/PgSleep ([0-9.]+) ms \((\d+) calls?\)};
	ok(defined $ms && defined $total, 'the Parallel Seq Scan shows Timeout/PgSleep') or diag($out) or return;
	cmp_ok($calls, '>=', 300, 'one sleep a row at least');
	within($ms, $total * $loops, 0.15, 'PgSleep time is the node\'s time in all processes');
};

# ---- parallel workers' waits stay on their nodes -----------------------------------
# A Gather waits for its workers to exit (IPC/BgworkerShutdown) once it has
# returned its last row: that wait is the Gather's, as EXPLAIN charges its
# time to it, never one outside nodes. Several runs: the wait happens only
# when a worker has not exited yet.
subtest 'the workers\' shutdown wait is on the Gather' => sub {
	sql($par, 'SET parallel_leader_participation = on');
	my ($outside, $on_gather, $runs) = (0, 0, 8);
	for (1 .. $runs)
	{
		my $plan = explain_json($par, 'SELECT count(*) FROM p');
		ok($plan, 'EXPLAIN (FORMAT JSON) parses as JSON') or return;
		my @nodes = @{ nodes_of($plan->{Plan}, []) };
		my ($gather) = grep { $_->{'Node Type'} eq 'Gather' } @nodes;
		ok($gather && $gather->{'Workers Launched'} > 0, 'workers were launched') or return;
		$outside += (waits_ms($plan->{'Waits Outside Nodes'}, 'BgworkerShutdown'))[1];
		$on_gather += (waits_ms($gather->{Waits}, 'BgworkerShutdown'))[1];
		for my $n (grep { $_ != $gather } @nodes)
		{
			is((waits_ms($n->{Waits}, 'BgworkerShutdown'))[1], 0, "$n->{'Node Type'} does not show it");
		}
	}
	is($outside, 0, "no IPC/BgworkerShutdown outside nodes in $runs runs");
	cmp_ok($on_gather, '>', 0, "the Gather shows IPC/BgworkerShutdown in some of $runs runs ($on_gather calls)");
};

# More nodes run by workers than the leader's slot used to have rows for
# (64 node and event pairs): 70 partitions scanned by the workers alone,
# each row a sleep. Every partition's scan keeps its sleeps.
subtest 'workers\' waits stay on their nodes in a 70-node plan' => sub {
	sql($admin, 'CREATE TABLE parts (x int) PARTITION BY LIST (x)');
	sql($admin, "DO \$\$ BEGIN FOR i IN 1..70 LOOP
		EXECUTE format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES IN (%s)', i, i);
		EXECUTE format('ALTER TABLE parts_%s SET (parallel_workers = 2)', i); END LOOP; END \$\$");
	sql($admin, 'INSERT INTO parts SELECT i FROM generate_series(1, 70) i, generate_series(1, 2)');
	sql($admin, 'ANALYZE parts');
	sql($par, 'SET parallel_leader_participation = off');
	my $plan = explain_json($par, 'SELECT count(*) FROM parts WHERE slow(x)');
	ok($plan, 'EXPLAIN (FORMAT JSON) parses as JSON') or return;
	my @nodes = @{ nodes_of($plan->{Plan}, []) };
	my ($gather) = grep { $_->{'Node Type'} =~ /^Gather/ } @nodes;
	ok($gather && $gather->{'Workers Launched'} > 0, 'workers were launched') or return;
	my @scans = grep { $_->{'Node Type'} eq 'Seq Scan' } @nodes;
	is(scalar(@scans), 70, 'one scan a partition');
	my @sleepers = grep { (waits_ms($_->{Waits}, 'PgSleep'))[1] >= 2 } @scans;
	is(scalar(@sleepers), 70, 'every scan shows its two sleeps at least');
	is((waits_ms($plan->{'Waits Outside Nodes'}, 'PgSleep'))[1], 0, 'no sleep outside nodes');
	my @other = grep { $_->{'Wait Event'} eq 'other events' } @{ $plan->{'Waits Outside Nodes'} // [] };
	is(scalar(@other), 0, 'no "other events" outside nodes');
	sql($par, 'SET parallel_leader_participation = on');
};

# ---- timing on: the nodes and the outside add up to the statement ------------------
subtest 'nodes + outside = pg_stat_waits_queries' => sub {
	my $s = psw_session($node, 'SET pg_stat_waits.timing = on', 'SET max_parallel_workers_per_gather = 0');
	sql($s, 'CREATE TABLE two_a AS SELECT g FROM generate_series(1, 6) g');
	sql($s, 'CREATE TABLE two_b AS SELECT g FROM generate_series(1, 6) g');
	sql($s, 'SELECT pg_stat_waits_reset()');
	my $plan = explain_json($s,
		'SELECT count(*) FROM (SELECT g FROM two_a WHERE pg_sleep(0.1) IS NOT NULL '
		  . 'UNION ALL SELECT g FROM two_b WHERE pg_sleep(0.1) IS NOT NULL) u');
	ok($plan, 'EXPLAIN (FORMAT JSON) parses as JSON') or return;
	my @nodes = @{ nodes_of($plan->{Plan}, []) };
	my @sleepers = grep { (waits_ms($_->{Waits}, 'PgSleep'))[0] > 0 } @nodes;
	is(scalar(@sleepers), 2, 'the sleeps are on two nodes');
	my $sum = (waits_ms($plan->{'Waits Outside Nodes'}))[0];
	$sum += (waits_ms($_->{Waits}))[0] for @nodes;
	cmp_ok($sum, '>=', 1000, 'at least a second of waits');
	my $row = sql($s,
		"SELECT sum(total_time) FROM pg_stat_waits_queries w JOIN pg_stat_statements s USING (queryid)
		  WHERE s.query LIKE 'EXPLAIN (ANALYZE, WAITS, FORMAT JSON%two_a%' AND w.wait_event_type <> 'CPU'");
	within($sum, $row || 0, 0.01, 'the EXPLAIN\'s waits in pg_stat_waits_queries');
};

$node->stop;
done_testing();
