# The upgrade path, the pg_stat_statements way: install 1.0 and 1.1, ALTER EXTENSION
# UPDATE, and the catalog (functions, views with their definitions, privileges,
# members) is the same as a fresh install of the current version.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('upgrade');
$node->safe_psql('postgres', 'CREATE DATABASE psw_from10; CREATE DATABASE psw_from11; CREATE DATABASE psw_new;');
my $default = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'pg_stat_waits'");
is($default, '1.2', 'the default version is 1.2 (pg_stat_waits_status.cpu_count)');

# Every older version updates to the default one.
my %from = ('1.0' => 'psw_from10', '1.1' => 'psw_from11');
for my $version (sort keys %from)
{
	my $db = $from{$version};
	my ($rc, $out, $err) = $node->psql($db, "CREATE EXTENSION pg_stat_waits VERSION '$version'");
	is($rc, 0, "version $version installs") or diag($err);
	($rc, $out, $err) = $node->psql($db, 'ALTER EXTENSION pg_stat_waits UPDATE');
	is($rc, 0, "ALTER EXTENSION UPDATE from $version to $default") or diag($err);
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_waits'"),
		$default, "the extension updated from $version is at $default");
}
$node->safe_psql('psw_new', 'CREATE EXTENSION pg_stat_waits');

my %catalog = (
	'members' => q{
		SELECT pg_describe_object(classid, objid, objsubid) FROM pg_depend
		 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')
		 ORDER BY 1},
	'functions' => q{
		SELECT p.oid::regprocedure::text, pg_get_function_result(p.oid), p.prokind, p.provolatile,
		       p.proisstrict, p.proparallel, p.prosecdef, p.prosrc, p.probin, p.proconfig,
		       coalesce(p.proacl::text, 'default'), obj_description(p.oid, 'pg_proc')
		  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
		 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')
		 ORDER BY 1},
	'relations' => q{
		SELECT c.relname, c.relkind, pg_get_viewdef(c.oid), coalesce(c.relacl::text, 'default'),
		       obj_description(c.oid, 'pg_class')
		  FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
		 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')
		 ORDER BY 1},
	'columns' => q{
		SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		  JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
		 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')
		 ORDER BY 1, 2},);

for my $what (sort keys %catalog)
{
	my $new = $node->safe_psql('psw_new', $catalog{$what});
	isnt($new, '', "fresh install has $what");
	for my $version (sort keys %from)
	{
		my $old = $node->safe_psql($from{$version}, $catalog{$what});
		is($old, $new, "$what after the update from $version equal a fresh install's");
	}
}

# The updated extensions work, and report the server's CPUs (1.2).
for my $version (sort keys %from)
{
	is($node->safe_psql($from{$version}, 'SELECT count(*) > 0 FROM pg_stat_waits_activity'), 't',
		"the extension updated from $version serves its views");
	cmp_ok($node->safe_psql($from{$version}, 'SELECT cpu_count FROM pg_stat_waits_status'), '>=', 1,
		"the extension updated from $version reports cpu_count");
}
# A catalog still at 1.1 reads the 1.2 library's status row without the new column.
$node->safe_psql('postgres', "CREATE EXTENSION pg_stat_waits VERSION '1.1'");
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_attribute WHERE attrelid = '
	. "'pg_stat_waits_status'::regclass AND attnum > 0"), '18', 'a 1.1 catalog keeps its 18 status columns');
is($node->safe_psql('postgres', 'SELECT samples_taken >= 0 FROM pg_stat_waits_status'), 't',
	'the 1.2 library serves a 1.1 catalog\'s status view');
$node->stop;
done_testing();
