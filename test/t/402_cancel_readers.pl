# Readers can be cancelled: a SELECT over a 10,000,000-sample history (and
# pg_stat_waits_top / _timeline scanning it) stops within a fraction of a
# second when statement_timeout = '50ms' fires, instead of reading to the end.
#
# The history is filled by the sampler itself: 300 sessions sleeping in
# pg_sleep (pgbench), sampled every millisecond.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use Time::HiRes qw(time usleep);

my $history = 10_000_000;
my $sessions = 300;

my $node = psw_node('cancel',
	conf => [ "pg_stat_waits.history_size = $history", "pg_stat_waits.sample_period = 1", "max_connections = 350" ]);
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits');

my $script = $node->basedir . '/sleep.sql';
PostgreSQL::Test::Utils::append_to_file($script, "SELECT pg_sleep(600);\n");
my ($out, $err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', $sessions, '-j', '4', '-T', '600', '-f', $script, '-h', $node->host, '-p', $node->port,
		'postgres' ],
	'>', \$out, '2>', \$err);

my $used = 0;
my $deadline = time + 300;
while (time < $deadline)
{
	$used = $node->safe_psql('postgres', 'SELECT history_used FROM pg_stat_waits_status');
	last if $used >= $history;
	sleep 2;
}
is($used, $history, "the history holds $history samples");

# Quiet from here on: the sampler idles, the sleepers go.
$node->safe_psql('postgres', "ALTER SYSTEM SET pg_stat_waits.sample_period = 0; SELECT pg_reload_conf()");
$pgbench->kill_kill;
$node->safe_psql('postgres', "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600)%'");

sub timed
{
	my ($sql) = @_;
	my ($stdout, $stderr);
	my $t0 = time;
	$node->psql('postgres', $sql, stdout => \$stdout, stderr => \$stderr);
	return (time - $t0, $stdout // '', $stderr // '');
}

# The full read, for scale.
my ($full, $out_full) = timed(q{SELECT count(*) || '|' || min(sample_time) FROM pg_stat_waits_history});
my ($count, $oldest) = split /\|/, $out_full;
note sprintf('full read of the history: %.2f s, %s rows, oldest %s', $full, $count, $oldest);
# top and timeline read the history only for a window it covers (older
# windows come from the minute buckets, which are small): a window that
# starts a second after the oldest sample makes them scan nearly all of it.
my $since = "now() - (timestamptz '$oldest' + interval '1 second')";
cmp_ok($count, '>=', $history * 0.99, 'the full read returns the history');

for my $q ('SELECT count(*) FROM pg_stat_waits_history',
	"SELECT count(*) FROM pg_stat_waits_top($since)",
	"SELECT count(*) FROM pg_stat_waits_timeline($since, '1 second')")
{
	my ($secs, undef, $stderr) = timed("SET statement_timeout = '50ms'; $q");
	like($stderr, qr/canceling statement due to statement timeout/, "statement_timeout cancels: $q");
	note sprintf('cancelled after %.3f s: %s', $secs, $q);
	cmp_ok($secs, '<', 1.0, "cancelled within a second (a full history read takes ${\ sprintf('%.1f', $full)} s): $q");
}
# The history read above took several seconds: otherwise the check of the
# cancellation time would prove nothing.
cmp_ok($full, '>', 2.0, 'a full read of the history takes longer than the cancel bound');

$node->stop;
done_testing();
