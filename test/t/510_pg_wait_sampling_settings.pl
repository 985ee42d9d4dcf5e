# The pg_wait_sampling.* settings across server starts: a postgresql.conf
# written for pg_wait_sampling keeps working after switching its
# shared_preload_libraries entry to pg_stat_waits (values read, the ones
# that map honoured by pg_wait_sampling_compat, profile_pid = on taken (the
# drop-in's per-process profile: 025_pg_wait_sampling_dropin.pl), the periods shown as pg_stat_waits.sample_period and another
# value refused with a WARNING), and pg_wait_sampling itself can stay preloaded next to
# pg_stat_waits in either order (it then defines the settings).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('pgws_settings');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'
pg_stat_waits.sample_period = 20
# as left from pg_wait_sampling
pg_wait_sampling.history_size = 20000
pg_wait_sampling.history_period = 20
pg_wait_sampling.profile_period = 50
pg_wait_sampling.profile_queries = none
pg_wait_sampling.sample_cpu = off
pg_wait_sampling.profile_pid = on
});
$node->start;

is($node->safe_psql('postgres',
		"SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE name LIKE 'pg_wait_sampling.%'"),
	'pg_wait_sampling.history_period=20 pg_wait_sampling.history_size=20000 pg_wait_sampling.profile_period=20 '
	  . 'pg_wait_sampling.profile_pid=on pg_wait_sampling.profile_queries=none pg_wait_sampling.sample_cpu=off',
	"pg_wait_sampling's settings from postgresql.conf are read; the periods are sample_period's");
unlike(slurp_file($node->logfile), qr/invalid value for parameter "pg_wait_sampling.profile_pid"/,
	'profile_pid = on is taken without a WARNING');
like(slurp_file($node->logfile),
	qr/WARNING:  invalid value for parameter "pg_wait_sampling.profile_period": 50\n.*\n.*HINT:  Set pg_stat_waits.sample_period instead/,
	'profile_period = 50 (sample_period 20) is refused with a WARNING naming pg_stat_waits.sample_period');

$node->safe_psql('postgres', 'CREATE EXTENSION pg_wait_sampling_compat CASCADE');
is($node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE event IS NULL) || ' ' || count(*) FILTER (WHERE queryid <> 0)
		  FROM pg_wait_sampling_current}),
	'0 0', 'sample_cpu = off and profile_queries = none from postgresql.conf are honoured');
$node->safe_psql('postgres', 'SELECT pg_sleep(0.2)');
is($node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE event IS NULL) || ' ' || count(*) FILTER (WHERE queryid <> 0)
		  FROM pg_wait_sampling_profile}),
	'0 0', 'the profile honours them too');

# A reload that turns profile_pid off and sample_cpu back on.
$node->append_conf('postgresql.conf', qq{
pg_wait_sampling.profile_pid = off
pg_wait_sampling.sample_cpu = on
pg_wait_sampling.profile_queries = top
});
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('pg_wait_sampling.sample_cpu') = 'on'")
  or die 'reload not seen';
is($node->safe_psql('postgres', q{
		SELECT event IS NULL AND queryid <> 0 FROM pg_wait_sampling_current WHERE pid = pg_backend_pid()}),
	't', 'after a reload: a running backend is shown, with its queryid');

# pg_wait_sampling next to pg_stat_waits, in either order: it defines its
# settings itself (1.1.4: profile_queries is a boolean), and the server starts.
my $libdir = $node->config_data('--pkglibdir');
SKIP:
{
	skip 'pg_wait_sampling itself is not installed for this server (Debian packages it for 15 only)', 4 unless -f "$libdir/pg_wait_sampling.so";
	for my $order ('pg_stat_waits, pg_wait_sampling', 'pg_wait_sampling, pg_stat_waits')
	{
		$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, $order'
pg_wait_sampling.profile_queries = on
});
		$node->restart;
		is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
			"pg_stat_statements, $order", "starts with $order");
		is($node->safe_psql('postgres',
				"SELECT vartype FROM pg_settings WHERE name = 'pg_wait_sampling.profile_queries'"),
			'bool', "with $order, pg_wait_sampling's own definition is in force");
	}
}

$node->stop;
done_testing();
