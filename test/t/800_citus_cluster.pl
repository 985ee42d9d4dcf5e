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
# Skips, saying why, on a major the pinned Citus (tools/citus/versions.tsv)
# does not support, or when Citus is not built for the server under test
# (tools/citus/build_citus.sh MAJOR; ./run test builds it).
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PswTest;
use Test::More;

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
plan skip_all => "Citus $version supports PostgreSQL $supported; this is $major"
  unless grep { $_ == $major } @majors;
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
plan skip_all => "Citus is not built for this server: tools/citus/build_citus.sh $major"
  unless -e "$pkglibdir/citus.so";

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
	my ($samples, $top, $daemon, $n, $ext, $ticks, $active) = split /\|/, $node->safe_psql('postgres', qq{
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
		       (SELECT coalesce(max(active), 0) FROM buckets)});
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
}

# Its work is still sampled: its rounds (distributed deadlock detection
# every 2 s on every node, 2PC recovery every minute) run in a
# transaction, on the CPU and waiting for the other nodes' answers
# (Client/ClientRead, and Extension/Extension on a node's socket).
cmp_ok($daemon_work, '>', 0, "the maintenance daemons' work is sampled ($daemon_work samples over the nodes)");

$_->stop for (@workers, $coord);
done_testing();
