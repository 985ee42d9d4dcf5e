# pg_stat_waits on a real Citus cluster: a coordinator and two workers, each
# preloading 'citus, pg_stat_statements, pg_stat_waits' (Citus first, as it
# requires), joined over TCP on 127.0.0.1 (citus_add_node connects by
# host). On the idle cluster Citus's maintenance daemon, a background worker
# that sleeps in its main loop in the Extension class with no transaction
# and no reported state, counts as idle (proc_reader.cpp,
# extension_worker_idle): over a minute the average active sessions stay
# below 0.05 on each node, and Extension/Extension is left with the few
# samples of the daemon's rounds (in a transaction, waiting for another
# node), under 5% of the ticks. Before that rule the daemon was one whole
# active session on every node: Extension/Extension at every tick (about
# 6,000 samples a minute), avg_active about 1. Its rounds are still sampled.
#
# Then the companion extension pg_stat_waits_citus (extension/citus/) on the
# same cluster: its views answer on the coordinator and on a worker with
# every node's rows and the right node ids; a distributed UPDATE blocked
# 5 s on a worker by another distributed transaction adds up, in the
# worker's Lock samples found by the blocked session's gpid after both
# sessions ended, to the time the client measured, and names the holder's
# gpid; a multi-shard query's coordinator backend waits in
# Remote/OtherServer while its shard queries run; timing turned on on one
# worker shows on that worker only; a stopped worker is a WARNING and a row
# that says it did not answer.
#
# First, on every major (Citus or not): without Citus loaded,
# CREATE EXTENSION pg_stat_waits_citus fails and says Citus is needed. The
# cluster part is skipped, saying why, on a major the pinned Citus
# (tools/citus/versions.tsv) does not support, or when Citus is not built
# for the server under test (tools/citus/build_citus.sh MAJOR; ./run test
# builds it).
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;
use Time::HiRes qw(time sleep);

# The server's major, and the pinned Citus that supports it (the row
# build_citus.sh builds), else the last row, to say what it supports.
my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/ or die 'pg_config --version';
my ($version, @majors);
{
	my $table = "$FindBin::RealBin/../../tools/citus/versions.tsv";
	open my $fh, '<', $table or die "$table: $!";
	while (my $line = <$fh>)
	{
		next if $line =~ /^#/ || $line !~ /\S/;
		chomp $line;
		my @f = split /\t/, $line;
		($version, @majors) = ($f[0], split / /, $f[3]) unless $version && grep { $_ == $major } @majors;
	}
}
die "no Citus row in tools/citus/versions.tsv" unless $version;
# "16–18" for a run of majors, else "16, 18".
my $supported =
  @majors > 1 && $majors[-1] - $majors[0] == $#majors ? "$majors[0]–$majors[-1]" : join(', ', @majors);
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
my $no_cluster =
    !grep({ $_ == $major } @majors) ? "Citus $version supports PostgreSQL $supported; this is $major"
  : !-e "$pkglibdir/citus.so"     ? "Citus is not built for this server: tools/citus/build_citus.sh $major"
  :                                 undef;

# pg_stat_waits_citus is installed with the extension, and needs Citus:
# without it loaded (not installed here on 15 and 19, installed but not
# preloaded on 16-18) CREATE EXTENSION fails, naming it.
{
	my $sharedir = `pg_config --sharedir`;
	chomp $sharedir;
	ok(-f "$sharedir/extension/pg_stat_waits_citus.control" && -f "$sharedir/extension/pg_stat_waits_citus--1.0.sql",
		'pg_stat_waits_citus is installed with the extension');
	my $plain = psw_node('no_citus', extensions => 1);
	my ($rc, $out, $err) = $plain->psql('postgres', 'CREATE EXTENSION pg_stat_waits_citus');
	ok($rc != 0 && $err =~ /required extension "citus" is not installed/,
		'without Citus, CREATE EXTENSION pg_stat_waits_citus fails: citus is required')
	  or diag("rc $rc: $err");
	($rc, $out, $err) = $plain->psql('postgres', 'CREATE EXTENSION pg_stat_waits_citus CASCADE');
	ok($rc != 0 && $err =~ /citus/i, 'and with CASCADE too, naming Citus (not available, or not preloaded)')
	  or diag("rc $rc: $err");
	note("CASCADE without Citus: " . join(' ', $err =~ /ERROR:\s*(.*)/));
	is($plain->safe_psql('postgres', q{SELECT count(*) FROM pg_extension WHERE extname IN ('citus', 'pg_stat_waits_citus')}),
		0, 'neither is left created');
	$plain->stop;
}

if ($no_cluster)
{
  SKIP: { skip $no_cluster, 1; }
	done_testing();
	exit 0;
}

# A node of the cluster: TCP on 127.0.0.1, trusted; no SSL between the nodes
# (the test servers are built without it) and no statistics sent home.
# Autovacuum off: its rounds after the set-up are work, not the idle
# cluster the minute below is to measure.
sub citus_node
{
	my ($name) = @_;
	my $node = psw_node(
		$name,
		start => 0,
		preload => 'citus, pg_stat_statements, pg_stat_waits',
		conf => [
			"listen_addresses = '127.0.0.1'", "citus.node_conninfo = 'sslmode=disable'",
			'citus.enable_statistics_collection = off', 'autovacuum = off'
		]);
	$node->append_conf('pg_hba.conf', "host all all 127.0.0.1/32 trust\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus; CREATE EXTENSION pg_stat_waits');
	return $node;
}

my $coord = citus_node('coordinator');
my @workers = map { citus_node("worker$_") } 1 .. 2;
my %name_of = ($coord->port => 'coordinator', map { ($workers[$_]->port => 'worker' . ($_ + 1)) } 0 .. 1);

$coord->safe_psql('postgres', "SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
$coord->safe_psql('postgres', "SELECT citus_add_node('127.0.0.1', " . $_->port . ')') for @workers;
is($coord->safe_psql('postgres', 'SELECT count(*) FROM pg_dist_node WHERE isactive'), 3, 'a 3-node cluster');

# A distributed table with shards on both workers, read through the
# coordinator: the nodes really talk to each other.
$coord->safe_psql('postgres', q{
	CREATE TABLE items (id int PRIMARY KEY, v int);
	SELECT create_distributed_table('items', 'id');
	INSERT INTO items SELECT g, g FROM generate_series(1, 1000) g});
is($coord->safe_psql('postgres', 'SELECT sum(v) FROM items'), 500500, 'a distributed table answers');
is(
	$coord->safe_psql('postgres',
		'SELECT string_agg(DISTINCT nodeport::text, \',\' ORDER BY nodeport::text) FROM citus_shards'),
	join(',', sort map { $_->port } @workers),
	'its shards are on both workers');

# Every node has a maintenance daemon, a background worker of Citus (its
# connections to the other nodes carry its name too: client backends there).
# It reports no state in its status entry, which the rule relies on, and
# pg_stat_waits_activity shows it idle while it sleeps.
my $daemon_where = q{application_name = 'Citus Maintenance Daemon' AND backend_type <> 'client backend'};
my %daemon_pid;
for my $node ($coord, @workers)
{
	my $name = $name_of{ $node->port };
	ok( wait_until(sub { $node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE $daemon_where") == 1 }),
		"$name: the maintenance daemon runs");
	my ($pid, $state) =
	  split /\|/, $node->safe_psql('postgres', "SELECT pid, coalesce(state, 'none') FROM pg_stat_activity WHERE $daemon_where");
	$daemon_pid{$name} = $pid;
	is($state, 'none', "$name: the maintenance daemon reports no state");
	ok( wait_until(
			sub {
				$node->safe_psql('postgres', "SELECT state = 'idle' AND wait_event = 'Extension' FROM pg_stat_waits_activity WHERE pid = $pid") eq 't';
			}),
		"$name: pg_stat_waits_activity shows it idle in its Extension wait");
}

# A minute of the idle cluster, from a reset on each node.
my $idle_seconds = 60;
$_->safe_psql('postgres', 'SELECT pg_stat_waits_reset()') for ($coord, @workers);
sleep $idle_seconds;

# Each node's figures in one query (one connection, so the reading itself
# adds as little as it can to the window it reads).
my $daemon_work = 0;
for my $node ($coord, @workers)
{
	my $name = $name_of{ $node->port };
	my ($samples, $top, $daemon, $n, $ext, $ticks, $active, $ext_others, $daemon_client) =
	  split /\|/, $node->safe_psql('postgres', qq{
		WITH top AS (SELECT * FROM pg_stat_waits_top('1 day', 1000)),
		daemon AS (
			SELECT coalesce(wait_event_type, '-') w, coalesce(wait_event, '-') e, count(*) n
			FROM pg_stat_waits_history WHERE pid = $daemon_pid{$name}
			  AND sample_time >= (SELECT stats_reset FROM pg_stat_waits_status) GROUP BY 1, 2),
		-- One bucket from the reset on (two if midnight passed), each
		-- averaged over the part of it since the reset.
		buckets AS (
			SELECT bucket_start, sum(avg_active) active FROM pg_stat_waits_timeline('1 day', '1 day') GROUP BY 1)
		SELECT (SELECT coalesce(sum(samples), 0) FROM top),
		       (SELECT coalesce(string_agg(format('%s/%s %s (%s%%)', wait_event_type, wait_event, samples,
		                                          round(pct::numeric, 1)), ', ' ORDER BY samples DESC), '') FROM top),
		       (SELECT coalesce(string_agg(format('%s/%s %s', w, e, n), ', ' ORDER BY n DESC), 'none') FROM daemon),
		       (SELECT coalesce(sum(n), 0) FROM daemon),
		       (SELECT coalesce(sum(samples), 0) FROM top WHERE wait_event_type = 'Extension' AND wait_event = 'Extension'),
		       (SELECT samples_taken FROM pg_stat_waits_status),
		       (SELECT coalesce(max(active), 0) FROM buckets),
		       (SELECT count(*) FROM pg_stat_waits_history
		         WHERE wait_event_type = 'Extension' AND wait_event = 'Extension' AND pid <> $daemon_pid{$name}
		           AND sample_time >= (SELECT stats_reset FROM pg_stat_waits_status)),
		       (SELECT coalesce(sum(n), 0) FROM daemon WHERE w = 'Client' AND e = 'ClientRead')});
	$daemon_work += $n;
	diag("$name: $samples samples in $idle_seconds s: $top; the maintenance daemon's: $daemon");
	# The daemon's sleep is gone; what stays of Extension/Extension is its
	# rounds waiting for the other nodes inside their transaction
	# (remote_commands.c waits on a node's socket in the Extension class):
	# a few samples a minute where the sleep was one at every tick. A loaded
	# machine stretches the rounds (2.8% of the ticks on 16 at a load of 14
	# on two cores), hence 5%.
	cmp_ok($ticks, '>', 1000, "$name: the sampler ticked over the idle minute ($ticks)");
	cmp_ok($ext, '<', $ticks / 20,
		"$name: Extension/Extension in under 5% of the ticks over the idle minute ($ext of $ticks)");
	cmp_ok($active, '<', 0.05, "$name: average active sessions over the idle minute below 0.05 ($active)");
	# The Extension/Extension rows left are the daemon's rounds, nobody
	# else's: the acceptance's "the daemon's deadlock-detection rounds may
	# appear".
	is($ext_others, 0, "$name: every Extension/Extension sample of the idle minute is the maintenance daemon's");
	# A background worker has no client: its ClientRead waits for another
	# node, and shows as Remote/OtherServer.
	is($daemon_client, 0, "$name: none of the daemon's samples is in Client/ClientRead");
}

# Its work is still sampled: its rounds (distributed deadlock detection
# every 2 s on every node, 2PC recovery every minute) run in a
# transaction, on the CPU and waiting for the other nodes' answers
# (Remote/OtherServer: its ClientRead, which a background worker with no
# client of its own waits only for another server; and Extension/Extension
# on a node's socket).
cmp_ok($daemon_work, '>', 0, "the maintenance daemons' work is sampled ($daemon_work samples over the nodes)");

# ---------------------------------------------------------------------------
# pg_stat_waits_citus: created on the coordinator, Citus creates it on every
# node (in the same schema, which the views' commands rely on).
$coord->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits_citus');
my %id_of = map { my ($port, $id) = split /\|/; ($name_of{$port} => $id) }
  split /\n/, $coord->safe_psql('postgres', 'SELECT nodeport, nodeid FROM pg_dist_node');
my %node_of = ('coordinator' => $coord, worker1 => $workers[0], worker2 => $workers[1]);
my @ids = sort { $a <=> $b } values %id_of;
my $gpid_base = 10_000_000_000;
for my $name (sort keys %node_of)
{
	my $node = $node_of{$name};
	is( $node->safe_psql('postgres',
			q{SELECT extversion || ' ' || extnamespace::regnamespace FROM pg_extension WHERE extname = 'pg_stat_waits_citus'}),
		'1.0 public',
		"$name: pg_stat_waits_citus is there, in the coordinator's schema");
	# Citus's own gpids say which node id it gives this node.
	is( $node->safe_psql('postgres',
			"SELECT pg_stat_waits_citus_local_nodeid() || ' ' || citus_backend_gpid() / $gpid_base"),
		"$id_of{$name} $id_of{$name}",
		"$name: pg_stat_waits_citus_local_nodeid() is its pg_dist_node id and its gpids' node id");
}

# A session on each node that sleeps a second: samples whose pid and
# node are known, found by the gpid Citus gives a session there.
my %probe;
{
	my %s = map { ($_ => psw_session($node_of{$_})) } sort keys %node_of;
	for my $name (sort keys %s)
	{
		my ($pid, $gpid) = split /\|/, sql($s{$name}, 'SELECT pg_backend_pid(), citus_backend_gpid()');
		$probe{$name} = { pid => $pid, gpid => $gpid };
		send_sql($s{$name}, 'SELECT pg_sleep(1)');
	}
	for my $name (sort keys %s)
	{
		finish_sql($s{$name});
		$s{$name}->quit;
	}
}

# A parallel worker's rows are its leader's session's: the leader's gpid.
# debug_parallel_query runs the sleep in a parallel worker under a Gather.
{
	my $s = psw_session($coord, 'SET debug_parallel_query = on');
	my ($pid, $gpid) = split /\|/, sql($s, 'SELECT pg_backend_pid(), citus_backend_gpid()');
	sql($s, 'SELECT pg_sleep(0.5)');
	$s->quit;
	my ($n, $in_worker) = split / /, $coord->safe_psql('postgres', qq{
		SELECT count(*) || ' ' || count(*) FILTER (WHERE pid <> $pid AND leader_pid = $pid)
		  FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid) WHERE wait_event = 'PgSleep'});
	ok($n >= 20 && $in_worker == $n, "a parallel worker's samples carry its leader's gpid ($in_worker of $n in PgSleep)");
}

# Each node's own figures, to compare with what the views bring from it.
my %own;
for my $name (sort keys %node_of)
{
	$own{$name} = $node_of{$name}->safe_psql('postgres',
		q{SELECT sampler_pid || '|' || sample_period_ms || '|' || (SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_waits')
		    FROM pg_stat_waits_status});
}

for my $reader ('coordinator', 'worker1')
{
	my $node = $node_of{$reader};
	my $q = sub { my ($sql) = @_; return $node->safe_psql('postgres', $sql); };

	is($q->('SELECT string_agg(DISTINCT nodeid::text, \',\' ORDER BY nodeid::text) FROM pg_stat_waits_cluster_activity'),
		join(',', sort @ids), "on the $reader: pg_stat_waits_cluster_activity has rows of the 3 nodes");
	for my $name (sort keys %node_of)
	{
		my $pid = $daemon_pid{$name};
		is( $q->("SELECT nodeid || ' ' || gpid FROM pg_stat_waits_cluster_activity WHERE pid = $pid"),
			"$id_of{$name} " . ($id_of{$name} * $gpid_base + $pid),
			"on the $reader: the $name\'s maintenance daemon is one row, with its node id and gpid");

		my ($gpid, $ppid) = @{ $probe{$name} }{qw(gpid pid)};
		my ($n, $right, $sleep) = split /\|/, $q->(qq{
			SELECT count(*), count(*) FILTER (WHERE nodeid = $id_of{$name} AND pid = $ppid),
			       count(*) FILTER (WHERE wait_event = 'PgSleep')
			  FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid)});
		ok($n >= 10 && $right == $n && $sleep >= 10,
			"on the $reader: pg_stat_waits_cluster_history(gpid => the $name probe's) is its samples, on its node ($n, $right, $sleep in PgSleep)");
	}
	is($q->("SELECT string_agg(DISTINCT nodeid::text, ',' ORDER BY nodeid::text) FROM pg_stat_waits_cluster_history('5 min')"),
		join(',', sort @ids), "on the $reader: pg_stat_waits_cluster_history has rows of the 3 nodes");

	# n is per node: one row a node with n => 1; and each node's top 10 of
	# the last minute count its probe's sleep.
	is($q->(q{SELECT string_agg(nodeid::text, ',' ORDER BY nodeid) FROM pg_stat_waits_cluster_top('5 min', 1)}),
		join(',', @ids), "on the $reader: pg_stat_waits_cluster_top(n => 1) is one row a node");
	is( $q->(q{SELECT string_agg(nodeid::text, ',' ORDER BY nodeid) FROM pg_stat_waits_cluster_top('1 min', 10)
		        WHERE wait_event = 'PgSleep' AND samples >= 100}),
		join(',', @ids), "on the $reader: pg_stat_waits_cluster_top counts each node's probe in that node's PgSleep");
	cmp_ok($q->(q{SELECT max(s) FROM (SELECT sum(pct) s FROM pg_stat_waits_cluster_top('5 min', 1000) GROUP BY nodeid) t}),
		'<=', 100.001, "on the $reader: pg_stat_waits_cluster_top's pct adds up to at most 100 per node");

	is( $q->(q{SELECT string_agg(concat_ws('|', nodeid, answered, timing, sampler_pid, sample_period_ms, version,
		                                    samples_taken > 0, error IS NULL), ',' ORDER BY nodeid)
		         FROM pg_stat_waits_cluster_status}),
		join(',', map { my $n = $_; my ($name) = grep { $id_of{$_} == $n } keys %id_of; "$n|t|f|$own{$name}|t|t" } @ids),
		"on the $reader: pg_stat_waits_cluster_status: every node answered, timing off, its sampler, period and version");
}

# A role with no privilege of its own reads them too (granted to PUBLIC, as
# pg_stat_waits' views), through its own connections to every node, each
# of which hides other users' queryids from it, as pg_stat_activity does.
$coord->safe_psql('postgres', 'CREATE ROLE psw_reader LOGIN');    # Citus creates it on every node
{
	my $sql = "SELECT count(*) || ' ' || count(queryid) FROM pg_stat_waits_cluster_history('5 min', gpid => $probe{worker1}{gpid})";
	my ($all, $with_id) = split / /, $coord->safe_psql('postgres', $sql);
	my ($r_all, $r_with_id) = split / /, $coord->safe_psql('postgres', $sql, extra_params => [ '-U', 'psw_reader' ]);
	ok($all >= 100 && $with_id == $all && $r_all == $all && $r_with_id == 0,
		"a plain role reads the worker1 probe's samples ($r_all of $all) without their queryids ($r_with_id, superuser $with_id)");
	is( $coord->safe_psql('postgres', 'SELECT string_agg(nodeid || \':\' || answered, \',\' ORDER BY nodeid) FROM pg_stat_waits_cluster_status',
			extra_params => [ '-U', 'psw_reader' ]),
		join(',', map { "$_:true" } @ids), 'and the status of every node');
}

# Bad arguments are refused before any node is asked.
for my $bad ("pg_stat_waits_cluster_history('-1 min')", "pg_stat_waits_cluster_history(NULL)",
	"pg_stat_waits_cluster_top('0')", "pg_stat_waits_cluster_top('1 min', 0)")
{
	my ($rc, $out, $err) = $coord->psql('postgres', "SELECT * FROM $bad");
	ok($rc != 0 && $err =~ /must (?:be (?:a )?positive|not be NULL)/, "$bad is refused") or diag($err);
}

# ---------------------------------------------------------------------------
# Exact timing turned on on one node (ALTER SYSTEM and a reload there): the
# status shows it on there and nowhere else. Then on every node the way
# docs/citus.md says to turn it on across the cluster, through
# run_command_on_all_nodes, and off again.
my $timing_of = sub {
	return $coord->safe_psql('postgres',
		q{SELECT string_agg(nodeid || ':' || coalesce(timing::text, '-'), ',' ORDER BY nodeid) FROM pg_stat_waits_cluster_status});
};
my $timing_on = sub { my %on = map { ($id_of{$_} => 1) } @_; join(',', map { "$_:" . ($on{$_} ? 'true' : 'false') } @ids) };
$workers[1]->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_waits.timing = on; SELECT pg_reload_conf()');
ok(wait_until(sub { $timing_of->() eq $timing_on->('worker2') }), 'timing on on worker2 only: ' . $timing_of->());
$workers[1]->safe_psql('postgres', 'ALTER SYSTEM RESET pg_stat_waits.timing; SELECT pg_reload_conf()');
ok(wait_until(sub { $timing_of->() eq $timing_on->() }), 'and off everywhere after RESET there: ' . $timing_of->());
$coord->safe_psql('postgres', q{
	SELECT * FROM run_command_on_all_nodes('ALTER SYSTEM SET pg_stat_waits.timing = on');
	SELECT * FROM run_command_on_all_nodes('SELECT pg_reload_conf()')});
ok(wait_until(sub { $timing_of->() eq $timing_on->(keys %node_of) }), 'on everywhere through run_command_on_all_nodes: ' . $timing_of->());
$coord->safe_psql('postgres', q{
	SELECT * FROM run_command_on_all_nodes('ALTER SYSTEM RESET pg_stat_waits.timing');
	SELECT * FROM run_command_on_all_nodes('SELECT pg_reload_conf()')});
ok(wait_until(sub { $timing_of->() eq $timing_on->() }), 'and off again: ' . $timing_of->());

# ---------------------------------------------------------------------------
# One distributed UPDATE blocked on a worker by another distributed
# transaction: A updates row 1 in an open transaction, B (its gpid taken
# first) updates the same row and waits on the shard's worker, in its
# citus_internal connection, on A's transaction id; A commits 5 s after B
# sent its UPDATE. B's wait is measured by the client.
my $shard_id = $coord->safe_psql('postgres', q{
	SELECT n.nodeid FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid)
	 WHERE p.shardid = get_shard_id_for_distribution_column('items', 1)});
my ($shard_name) = grep { $id_of{$_} == $shard_id } keys %id_of;
my $shard_node = $node_of{$shard_name};
my $sa = psw_session($coord, 'BEGIN', 'UPDATE items SET v = v + 1 WHERE id = 1');
my $gpid_a = sql($sa, 'SELECT citus_backend_gpid()');
my $sb = psw_session($coord);
my $gpid_b = sql($sb, 'SELECT citus_backend_gpid()');
my $t0 = time;
send_sql($sb, 'UPDATE items SET v = v + 1 WHERE id = 1');
ok( wait_until(
		sub {
			$shard_node->safe_psql('postgres',
				"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'citus_internal gpid=$gpid_b' AND wait_event = 'transactionid'"
			) == 1;
		}),
	"B's UPDATE waits on $shard_name, behind A");
sleep($t0 + 5 - time) if $t0 + 5 > time;
sql($sa, 'COMMIT');
my (undef, $b_err) = finish_sql($sb);
my $blocked = time - $t0;
is($b_err, '', "B's UPDATE went through once A committed");
$_->quit for ($sa, $sb);
ok( wait_until(
		sub {
			$shard_node->safe_psql('postgres',
				"SELECT count(*) FROM pg_stat_activity WHERE application_name IN ('citus_internal gpid=$gpid_a', 'citus_internal gpid=$gpid_b')"
			) == 0;
		},
		30),
	"A's and B's backends on $shard_name have exited");
sleep 5;
my ($samples, $period, $detailed, $naming_a) = split /\|/, $coord->safe_psql('postgres', qq{
	SELECT count(*), (SELECT sample_period_ms FROM pg_stat_waits_cluster_status WHERE nodeid = $shard_id),
	       count(blocker_details), count(*) FILTER (WHERE blocker_details \@> '[{"gpid": $gpid_a}]')
	  FROM pg_stat_waits_cluster_history('10 min', gpid => $gpid_b)
	 WHERE nodeid = $shard_id AND wait_event_type = 'Lock' AND wait_event = 'transactionid'});
my $sampled = $samples * $period / 1000;
diag(sprintf('B blocked %.3f s (client); %d Lock/transactionid samples x %d ms on %s = %.3f s (%+.1f%%)',
		$blocked, $samples, $period, $shard_name, $sampled, 100 * ($sampled - $blocked) / $blocked));
cmp_ok(abs($sampled - $blocked), '<=', 0.15 * $blocked,
	"B's Lock/transactionid samples on $shard_name, by its gpid after it ended, add up to its blocked time within 15%");
ok($detailed > 0 && $detailed >= 0.9 * $samples && $naming_a == $detailed,
	"and their blocker_details name A's gpid ($naming_a of $detailed with details, of $samples)");

# ---------------------------------------------------------------------------
# A multi-shard query that sleeps 3 s in each shard, on the workers: one
# row in each of 4 shards, so each shard query sleeps once.
$coord->safe_psql('postgres', q{
	SET citus.shard_count = 4;
	CREATE TABLE sleepy (id int);
	SELECT create_distributed_table('sleepy', 'id');
	INSERT INTO sleepy SELECT min(g) FROM generate_series(1, 1000) g
	 GROUP BY get_shard_id_for_distribution_column('sleepy', g)});
is($coord->safe_psql('postgres', q{SELECT count(*) || ' ' || count(DISTINCT get_shard_id_for_distribution_column('sleepy', id)) FROM sleepy}),
	'4 4', 'sleepy: one row in each of its 4 shards');
my $sleepy = 'SELECT count(pg_sleep(3)) FROM sleepy';
my $plan = $coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $sleepy");
ok($plan =~ /Task Count: 4/ && $plan =~ /Query: SELECT count\(pg_sleep/, 'its count(pg_sleep()) runs in the shard queries')
  or diag($plan);
my $sc = psw_session($coord);
my ($pid_c, $gpid_c) = split /\|/, sql($sc, 'SELECT pg_backend_pid(), citus_backend_gpid()');
my $c0 = time;
send_sql($sc, $sleepy);
# When its shard queries sleep on both workers, the coordinator's backend
# waits for them.
my $seen;
ok( wait_until(
		sub {
			$seen = $coord->safe_psql('postgres', qq{
				SELECT (SELECT count(DISTINCT nodeid) FROM pg_stat_waits_cluster_activity a
				         WHERE a.gpid = $gpid_c AND a.wait_event = 'PgSleep' AND a.nodeid <> $id_of{coordinator})
				    || '|' || coalesce((SELECT a.wait_event_type || '/' || a.wait_event FROM pg_stat_waits_cluster_activity a
				                         WHERE a.gpid = $gpid_c AND a.nodeid = $id_of{coordinator} AND a.pid = $pid_c), '-')});
			$seen =~ /^2\|/;
		}),
	"C's shard queries sleep on both workers ($seen)");
is((split /\|/, $seen)[1], 'Remote/OtherServer',
	"meanwhile pg_stat_waits_cluster_activity shows C on the coordinator waiting in Remote/OtherServer");
my (undef, $c_err) = finish_sql($sc);
my $c_time = time - $c0;
is($c_err, '', sprintf('C ran %.2f s', $c_time));
$sc->quit;
my ($c_n, $c_remote, $c_clientread, $c_events) = split /\|/, $coord->safe_psql('postgres', qq{
	SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Remote' AND wait_event = 'OtherServer'),
	       count(*) FILTER (WHERE wait_event_type = 'Client' AND wait_event = 'ClientRead'),
	       (SELECT string_agg(e || ' ' || n, ', ' ORDER BY n DESC) FROM (
	          SELECT wait_event_type || '/' || wait_event e, count(*) n FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid_c)
	           WHERE nodeid = $id_of{coordinator} GROUP BY 1) t)
	  FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid_c)
	 WHERE nodeid = $id_of{coordinator}});
diag(sprintf('C on the coordinator: %d samples, %.1f%% Remote/OtherServer (%s)', $c_n, 100 * $c_remote / ($c_n || 1), $c_events));
ok($c_n >= 100 && $c_remote >= 0.8 * $c_n,
	"C's samples on the coordinator, by its gpid: mostly Remote/OtherServer ($c_remote of $c_n)");
# One run on 16 had 1 of 314 in Client/ClientRead: probably a sample taken
# as the backend turns from reading its client's message to running it,
# pairing the new state with the old wait (the sampler reads them
# lock-free); the offsets below say where, if it comes again. The Remote
# rule broken would leave nearly all of them in Client/ClientRead.
cmp_ok($c_clientread, '<=', 0.02 * $c_n, "at most 2% in Client/ClientRead ($c_clientread)");
diag('  C in Client/ClientRead, from its query_start: ' . $coord->safe_psql('postgres', qq{
	SELECT string_agg(format('%s (%s)', sample_time - query_start, state), ', ' ORDER BY sample_time)
	  FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid_c)
	 WHERE nodeid = $id_of{coordinator} AND wait_event_type = 'Client' AND wait_event = 'ClientRead'}))
  if $c_clientread;
my $c_workers = $coord->safe_psql('postgres', qq{
	SELECT string_agg(nodeid || ':' || n, ',' ORDER BY nodeid) FROM (
	  SELECT nodeid, count(*) n FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid_c)
	   WHERE wait_event = 'PgSleep' GROUP BY 1 HAVING count(*) >= 100) t});
is($c_workers =~ s/:\d+//gr, join(',', sort { $a <=> $b } map { $id_of{$_} } 'worker1', 'worker2'),
	"and its shard queries' samples on both workers carry its gpid, in PgSleep ($c_workers)");

# On 16 and 17 the query id of a shard query covers its shard table's oid:
# each shard's query on a node has its own (and two nodes' shards may share
# one, their oids being each server's own); 18 jumbles the table's name as
# the query names it, and Citus names each shard table by the distributed
# table's name: one query id a node.
my $shards_per_node = $coord->safe_psql('postgres', q{
	SELECT string_agg(n::text, ',' ORDER BY nodeid) FROM (
	  SELECT n.nodeid, count(*) n FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
	   WHERE s.logicalrelid = 'sleepy'::regclass GROUP BY 1) t});
my $qids_per_node = $coord->safe_psql('postgres', qq{
	SELECT string_agg(n::text, ',' ORDER BY nodeid) FROM (
	  SELECT nodeid, count(DISTINCT queryid) n FROM pg_stat_waits_cluster_history('5 min', gpid => $gpid_c)
	   WHERE wait_event = 'PgSleep' GROUP BY 1) t});
is($qids_per_node, $major >= 18 ? join(',', map { 1 } split /,/, $shards_per_node) : $shards_per_node,
	"the shard queries' query ids on each worker: "
	  . ($major >= 18 ? 'one' : 'one a shard') . " ($qids_per_node; shards $shards_per_node)");

# ---------------------------------------------------------------------------
# docs/citus.md's examples for a cluster (its ```sql citus blocks, which
# test/t/022_doc_examples.pl leaves out: it runs the docs on a server
# without Citus) run as written on the coordinator; the timing they turn
# on is turned off again.
{
	my $doc = "$FindBin::RealBin/../../docs/citus.md";
	open my $fh, '<', $doc or die "$doc: $!";
	my (@blocks, $block);
	while (my $line = <$fh>)
	{
		if (!defined $block && $line =~ /^```sql citus[ \t]*$/) { $block = ''; next; }
		next unless defined $block;
		if ($line =~ /^```/) { push @blocks, $block; undef $block; }
		else { $block .= $line; }
	}
	close $fh;
	cmp_ok(scalar @blocks, '>=', 2, 'docs/citus.md has examples for a cluster');
	for my $i (0 .. $#blocks)
	{
		my ($rc, $out, $err) = $coord->psql('postgres', $blocks[$i], on_error_stop => 1);
		is($rc, 0, 'docs/citus.md: cluster example ' . ($i + 1) . ' runs') or diag($err);
	}
	$coord->safe_psql('postgres', q{SELECT * FROM run_command_on_all_nodes('ALTER SYSTEM RESET pg_stat_waits.timing')});
	$coord->safe_psql('postgres', q{SELECT * FROM run_command_on_all_nodes('SELECT pg_reload_conf()')});
}

# ---------------------------------------------------------------------------
# A node that does not answer: worker2 stopped. The status says so, with a
# WARNING naming its node id; the other nodes' rows still come.
$workers[1]->stop;
my ($rc, $out, $err) = $coord->psql('postgres', q{
	SELECT string_agg(nodeid || ':' || answered || ':' || (error IS NOT NULL), ',' ORDER BY nodeid) FROM pg_stat_waits_cluster_status});
is($out, join(',', map { "$_:" . ($_ == $id_of{worker2} ? 'false:true' : 'true:false') } @ids),
	'with worker2 stopped, pg_stat_waits_cluster_status says it did not answer, and why');
like($err, qr/WARNING:.*node id $id_of{worker2}\b/, 'with a WARNING naming its node id');
($rc, $out, $err) = $coord->psql('postgres',
	q{SELECT string_agg(DISTINCT nodeid::text, ',' ORDER BY nodeid::text) FROM pg_stat_waits_cluster_activity});
is($out, join(',', sort grep { $_ != $id_of{worker2} } @ids), 'pg_stat_waits_cluster_activity has the other nodes\' rows');
like($err, qr/WARNING:.*node id $id_of{worker2}\b/, 'and the same WARNING');

# pg_stat_waits older than 1.3 (no gpid column) is refused, by name; once
# updated, the companion is created. A database of its own on the
# coordinator, with Citus and pg_stat_waits 1.2.
$coord->safe_psql('postgres', 'CREATE DATABASE old_psw');
$coord->safe_psql('old_psw', q{CREATE EXTENSION citus; CREATE EXTENSION pg_stat_waits VERSION '1.2'});
($rc, $out, $err) = $coord->psql('old_psw', 'CREATE EXTENSION pg_stat_waits_citus');
ok($rc != 0 && $err =~ /needs pg_stat_waits 1\.3 or later/, 'over pg_stat_waits 1.2, CREATE EXTENSION pg_stat_waits_citus fails: it needs 1.3')
  or diag("rc $rc: $err");
($rc, $out, $err) = $coord->psql('old_psw', 'ALTER EXTENSION pg_stat_waits UPDATE; CREATE EXTENSION pg_stat_waits_citus');
is($rc, 0, 'after ALTER EXTENSION pg_stat_waits UPDATE it is created') or diag($err);

$_->stop for (@workers, $coord);
done_testing();
