# The tools that read pg_wait_sampling, unchanged, on the drop-in (a node of
# the drop-in's staged installation, stage_dropin in tools/lib/common.sh):
# - PoWA's archivist 4.1 (Debian's postgresql-15-powa; 15 only): its own
#   detection registers the module at CREATE EXTENSION, two snapshots around
#   a row-lock wait fill powa_wait_sampling_history_current without a
#   snapshot error and with pg_stat_waits' Lock samples, DROP EXTENSION
#   unregisters it; and the migration from pg_wait_sampling itself (a node
#   of the normal stage, where Debian's pg_wait_sampling is, moved to the
#   drop-in's installation as a package swap does).
# - pg_profile 4.11 (the pinned tarball, 15-18) with its documented
#   non-superuser collecting role: take_sample() says OK, two sessions
#   blocked ~7.5 s on one row show their real time (15 s, +-20 %) of Lock
#   waits in its sample at pg_stat_waits.sample_period = 20ms, its HTML
#   report has its wait sections filled, and a sample lowers neither
#   pg_stat_waits_history's rows nor pg_stat_waits' calls.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use PswTest;

my $install = psw_dropin_install();
plan skip_all => 'no staged installation with the drop-in (./run test and ./run build make it: stage_dropin)'
  unless $install;
my $share = `$install/bin/pg_config --sharedir`;
chomp $share;
my $have = sub { -f "$share/extension/$_[0].control" };
my $powa = $have->('powa') && -f "$install/lib/powa.so";
my $pg_profile = $have->('pg_profile') && $have->('dblink');

my $node = psw_node('clients', install_path => $install, start => 0,
	preload => $powa ? 'pg_stat_statements, powa, pg_stat_waits' : 'pg_stat_statements, pg_stat_waits',
	conf => [ 'pg_stat_waits.sample_period = 20', 'pg_stat_waits.timing = on', $powa ? 'powa.frequency = -1' : () ]);
# pg_profile's collecting role connects through dblink, which wants a password
# from a non-superuser: password authentication for it, trust for the rest.
my $hba = $node->data_dir . '/pg_hba.conf';
my $rules = slurp_file($hba);
open my $fh, '>', $hba or die "$hba: $!";
print $fh "local all profile_collector scram-sha-256\n$rules";
close $fh;
$node->start;
$node->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)');

# Blocks COUNT sessions on row 1 for SECONDS; returns the seconds they were blocked, summed.
sub block_on_row
{
	my ($count, $seconds) = @_;
	my $holder = psw_session($node, 'BEGIN', 'SELECT * FROM t WHERE id = 1 FOR UPDATE');
	# Watched from outside the holder's transaction, whose view of
	# pg_stat_activity stays as its first read saw it.
	my $watch = psw_session($node);
	my (@blocked, @since);
	for (1 .. $count)
	{
		my $s = psw_session($node);
		my $pid = backend_pid($s);
		send_sql($s, 'UPDATE t SET v = v + 1 WHERE id = 1');
		wait_for_state($watch, $pid, 'wait_event_type', 'Lock') or die "session $pid did not block";
		push @blocked, $s;
		push @since, time;
	}
	usleep(1_000_000 * ($seconds - (time - $since[0]))) if time - $since[0] < $seconds;
	sql($holder, 'COMMIT');
	my $end = time;
	my $total = 0;
	$total += $end - $_ for @since;
	for my $s (@blocked)
	{
		my ($out, $err) = finish_sql($s);
		die "blocked update failed: $err" if $err =~ /ERROR/;
		$s->quit;
	}
	$holder->quit;
	$watch->quit;
	return $total;
}

my $powa_rows = q{SELECT count(*) FROM powa_functions WHERE module = 'pg_wait_sampling'};
my $snapshot = q{SELECT powa_take_snapshot(0) || ' ' || coalesce((SELECT errors::text FROM powa_snapshot_metas WHERE srvid = 0), 'none')};
SKIP:
{
	skip 'PoWA is not installed for this server (Debian packages postgresql-15-powa for 15 only)', 1 unless $powa;
	$node->safe_psql('postgres', 'CREATE EXTENSION powa CASCADE; CREATE EXTENSION pg_wait_sampling CASCADE');
	is($node->safe_psql('postgres', $powa_rows), '5', "CREATE EXTENSION pg_wait_sampling: PoWA's own detection registers it");
	is($node->safe_psql('postgres', $snapshot), '0 none', 'a first PoWA snapshot, without error');
	my $blocked = block_on_row(1, 1);
	is($node->safe_psql('postgres', $snapshot), '0 none', 'a second snapshot after a row-lock wait, without error');
	# PoWA stores the drop-in's counters as they are; nothing reset them,
	# so the Lock samples equal pg_stat_waits' own.
	my ($powa_lock, $native_lock) = split /\|/, $node->safe_psql('postgres', q{
		SELECT (SELECT sum((h.record).count) FROM powa_wait_sampling_history_current h
		         WHERE h.event_type = 'Lock' AND (h.record).ts = (SELECT max((record).ts) FROM powa_wait_sampling_history_current)),
		       (SELECT sum(samples) FROM pg_stat_waits_profile WHERE wait_event_type = 'Lock')});
	cmp_ok($powa_lock // 0, '>', 0.8 * $blocked * 1000 / 20,
		sprintf('powa_wait_sampling_history_current holds the row-lock wait: %s samples for %.2f s', $powa_lock // 0, $blocked));
	is($powa_lock, $native_lock, "PoWA's Lock samples equal pg_stat_waits_profile's");
	$node->safe_psql('postgres', 'DROP EXTENSION pg_wait_sampling');
	is($node->safe_psql('postgres', $powa_rows), '0', 'DROP EXTENSION pg_wait_sampling: PoWA unregisters it');
	is($node->safe_psql('postgres', $snapshot), '0 none', 'and its snapshots go on without error');
}

SKIP:
{
	skip 'pg_profile or dblink is not installed in the drop-in\'s stage (stage_dropin installs them where it can)', 1
	  unless $pg_profile;
	# Its take_sample() refuses 19's pg_stat_statements ("Unsupported
	# pg_stat_statements extension version").
	skip 'pg_profile 4.11 predates PostgreSQL 19', 1 if $node->pg_version->major >= 19;
	my ($host, $port) = ($node->host, $node->port);
	# pg_profile's documentation, "The collecting role" (without pg_stat_kcache).
	$node->safe_psql('postgres', q{
		CREATE DATABASE pgp;
		CREATE USER profile_collector PASSWORD 'collector_pwd';
		GRANT pg_read_all_stats TO profile_collector;});
	$node->safe_psql('pgp', q{
		CREATE SCHEMA pgss;
		CREATE SCHEMA pgws;
		CREATE EXTENSION pg_stat_statements SCHEMA pgss;
		CREATE EXTENSION pg_stat_waits;
		CREATE EXTENSION pg_wait_sampling SCHEMA pgws;
		GRANT USAGE ON SCHEMA pgss TO profile_collector;
		GRANT USAGE ON SCHEMA pgws TO profile_collector;
		GRANT EXECUTE ON FUNCTION pgss.pg_stat_statements_reset TO profile_collector;
		GRANT EXECUTE ON FUNCTION pgws.pg_wait_sampling_reset_profile TO profile_collector;
		CREATE EXTENSION dblink;
		CREATE SCHEMA profile;
		CREATE EXTENSION pg_profile SCHEMA profile;});
	$node->safe_psql('pgp', "SELECT profile.set_server_connstr('local', "
		  . "'dbname=pgp host=$host port=$port user=profile_collector password=collector_pwd')");
	my $take = q{SELECT string_agg(server || ' ' || result, ', ') FROM profile.take_sample()};
	is($node->safe_psql('pgp', $take), 'local OK', 'take_sample() with the non-superuser collecting role: OK');
	my $blocked = block_on_row(2, 7.5);
	my $native = q{SELECT (SELECT count(*) FROM pg_stat_waits_history) || ' ' || (SELECT sum(calls) FROM pg_stat_waits)};
	my ($rows0, $calls0) = split / /, $node->safe_psql('pgp', $native);
	is($node->safe_psql('pgp', $take), 'local OK', 'take_sample() after two sessions blocked on a row: OK');
	my ($rows1, $calls1) = split / /, $node->safe_psql('pgp', $native);
	cmp_ok($rows1, '>=', $rows0, "a pg_profile sample does not lower pg_stat_waits_history's rows ($rows0 -> $rows1)");
	cmp_ok($calls1, '>=', $calls0, "... nor pg_stat_waits' calls ($calls0 -> $calls1)");
	my $lock_ms = $node->safe_psql('pgp', q{
		SELECT coalesce(sum(tot_waited), 0) FROM profile.wait_sampling_total
		 WHERE event_type = 'Lock' AND sample_id = (SELECT max(sample_id) FROM profile.samples)});
	my $real_ms = $blocked * 1000;
	cmp_ok(abs($lock_ms - $real_ms), '<=', 0.2 * $real_ms,
		sprintf("pg_profile's sample: %d ms of Lock waits for %.0f ms blocked (+-20 %%, at sample_period = 20ms)",
			$lock_ms, $real_ms));
	my $html = $node->safe_psql('pgp', q{
		SELECT profile.get_report('local', (SELECT max(sample_id) - 1 FROM profile.samples),
		                          (SELECT max(sample_id) FROM profile.samples))});
	my ($events) = $html =~ /"wait_sampling_events":\s*(\[.*?\])/s;
	my ($totals) = $html =~ /"wait_sampling_total_stats":\s*(\[.*?\])/s;
	like($totals // '', qr/"event_type":\s*"Lock"/, "pg_profile's HTML report: its wait totals section has the Lock waits")
	  or diag(substr($html, 0, 2000));
	like($events // '', qr/"event":\s*"(tuple|transactionid)"/, '... and its top wait events section the row lock');
}

# ---- migration from pg_wait_sampling itself (the normal stage has Debian's)
my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
SKIP:
{
	skip 'needs PoWA and pg_wait_sampling itself in the test stage (Debian packages both for 15 only)', 1
	  unless $powa && -f "$libdir/pg_wait_sampling.so" && -f "$libdir/powa.so";
	my $old = PostgreSQL::Test::Cluster->new('from_pgws');
	$old->init;
	$old->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, powa, pg_wait_sampling'
powa.frequency = -1
pg_wait_sampling.profile_period = 10
});
	$old->start;
	$old->safe_psql('postgres', 'CREATE EXTENSION powa CASCADE; CREATE EXTENSION pg_wait_sampling');
	is($old->safe_psql('postgres', $powa_rows), '5', 'before: PoWA registered pg_wait_sampling itself');
	$old->stop;
	# What installing the drop-in's package does (it replaces Debian's
	# pg_wait_sampling): the same data directory, the drop-in's installation.
	$old->{_install_path} = $install;
	$old->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_stat_statements, powa, pg_stat_waits'\n");
	$old->start;
	my ($rc, $out, $err) = $old->psql('postgres', 'DROP EXTENSION pg_wait_sampling', on_error_stop => 1);
	is($rc, 0, 'migration: DROP EXTENSION pg_wait_sampling (its library gone) works') or diag($err);
	is($old->safe_psql('postgres', $powa_rows), '0', '... and PoWA unregisters it');
	$old->safe_psql('postgres', 'CREATE EXTENSION pg_wait_sampling CASCADE');
	is($old->safe_psql('postgres', $powa_rows), '5', 'CREATE EXTENSION pg_wait_sampling CASCADE: PoWA registers the drop-in');
	is($old->safe_psql('postgres', "$snapshot; $snapshot"), "0 none\n0 none", 'PoWA snapshots work after the migration');
	is($old->safe_psql('postgres', "SELECT current_setting('pg_wait_sampling.profile_period')"), '10',
		"pg_wait_sampling's settings left in postgresql.conf are still accepted");
	$old->stop;
}

$node->stop;
done_testing();
