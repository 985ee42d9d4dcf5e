# extension/compat/pg_wait_sampling_compat.sql: the objects it creates have
# exactly the columns and types of the real pg_wait_sampling (read from its
# Debian package's extension, created in a scratch database), serve
# pg_stat_waits data, and the script refuses the wrong databases.
# pg_wait_sampling is packaged for PostgreSQL 15 only.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('compat');
my $script = 'extension/compat/pg_wait_sampling_compat.sql';
my ($db, $ref) = ('psw_compat', 'psw_compat_ref');
$node->safe_psql('postgres', "CREATE DATABASE $db; CREATE DATABASE $ref;");

# The reference: pg_wait_sampling's own catalog entries (it need not be
# preloaded to be created; its views are only read from the catalog).
my ($rc) = $node->psql($ref, 'CREATE EXTENSION pg_wait_sampling');
if ($rc != 0)
{
	$node->stop;
	plan skip_all => 'pg_wait_sampling is not installed for this server (Debian packages it for 15 only)';
}

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
ok(-f "$sharedir/extension/pg_wait_sampling_compat.sql", 'the compat script is installed with the extension');
$node->safe_psql($db, 'CREATE EXTENSION pg_stat_waits');
my $sql = slurp_file($script);
my ($out, $err);
($rc, $out, $err) = $node->psql($db, $sql, on_error_stop => 1);
is($rc, 0, 'the script runs') or diag($err);
($rc, $out, $err) = $node->psql($db, $sql, on_error_stop => 1);
is($rc, 0, 'the script can be run again') or diag($err);

sub cols
{
	my ($d, $rel) = @_;
	return $node->safe_psql($d,
		"SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
		  WHERE attrelid = to_regclass('$rel') AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
}

for my $v (qw(current history profile))
{
	my $name = "pg_wait_sampling_$v";
	is($node->safe_psql($db, "SELECT to_regclass('$name') IS NOT NULL"), 't', "$name exists");
	my $want = cols($ref, $name);
	(my $show = $want) =~ s/\n/,/g;
	is(cols($db, $name), $want, "$name has pg_wait_sampling's columns and types: $show");
	is($node->safe_psql($db, "SELECT has_table_privilege('public', '$name', 'SELECT')"), 't',
		"$name is readable by PUBLIC, as in pg_wait_sampling");
	($rc) = $node->psql($db, "SELECT count(*) FROM $name");
	is($rc, 0, "$name can be read");
}

# Data: this session is seen running (pg_wait_sampling shows NULL events
# while not waiting) with its real queryid; other processes are listed.
is($node->safe_psql($db,
		'SELECT event_type IS NULL AND event IS NULL FROM pg_wait_sampling_current WHERE pid = pg_backend_pid()'),
	't', 'current: own backend on CPU shows NULL event_type/event, like pg_wait_sampling');
is($node->safe_psql($db,
		'SELECT (SELECT count(*) FROM pg_wait_sampling_current) >= (SELECT count(*) FROM pg_stat_waits_activity) - 1'),
	't', 'current: lists every process pg_stat_waits_activity lists');
is($node->safe_psql($db, "SELECT count(*) > 0 FROM pg_wait_sampling_current WHERE event_type = 'Activity'"),
	't', 'current: background processes keep their wait events');
is($node->safe_psql($db,
		'SELECT abs((SELECT sum(count) FROM pg_wait_sampling_profile) -
		            (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile)) <= 200'),
	't', "profile: total count equals pg_stat_waits_profile's samples (within a second's sampling)");
is($node->safe_psql($db,
		"SELECT prorettype = 'void'::regtype AND NOT has_function_privilege('public', oid, 'EXECUTE')
		   FROM pg_proc WHERE proname = 'pg_wait_sampling_reset_profile'"),
	't', 'pg_wait_sampling_reset_profile() exists, returns void, not for PUBLIC');
($rc) = $node->psql($db, 'SELECT pg_wait_sampling_reset_profile()');
is($rc, 0, 'pg_wait_sampling_reset_profile() runs');

# Refusals: next to the real pg_wait_sampling, and without pg_stat_waits.
($rc, $out, $err) = $node->psql($ref, $sql, on_error_stop => 1);
like($err, qr/pg_wait_sampling is installed/, 'refuses a database where pg_wait_sampling is installed');
$node->safe_psql($ref, 'DROP EXTENSION pg_wait_sampling');
($rc, $out, $err) = $node->psql($ref, $sql, on_error_stop => 1);
like($err, qr/pg_stat_waits is not installed/, 'refuses a database without pg_stat_waits');
$node->stop;
done_testing();
