# The upgrade path, the pg_stat_statements way: install 1.0, ALTER EXTENSION
# UPDATE, and the catalog (functions, views with their definitions, privileges,
# members) is the same as a fresh install of the current version.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('upgrade');
$node->safe_psql('postgres', 'CREATE DATABASE psw_old; CREATE DATABASE psw_new;');
my $default = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'pg_stat_waits'");

my ($rc, $out, $err) = $node->psql('psw_old', "CREATE EXTENSION pg_stat_waits VERSION '1.0'");
is($rc, 0, 'version 1.0 installs') or diag($err);
($rc, $out, $err) = $node->psql('psw_old', 'ALTER EXTENSION pg_stat_waits UPDATE');
is($rc, 0, "ALTER EXTENSION UPDATE from 1.0 to $default") or diag($err);
is($node->safe_psql('psw_old', "SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_waits'"),
	$default, "the updated extension is at $default");
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
	my $old = $node->safe_psql('psw_old', $catalog{$what});
	my $new = $node->safe_psql('psw_new', $catalog{$what});
	isnt($new, '', "fresh install has $what");
	is($old, $new, "$what after the update equal a fresh install's");
}

# The updated extension works.
is($node->safe_psql('psw_old', 'SELECT count(*) > 0 FROM pg_stat_waits_activity'), 't',
	'the updated extension serves its views');
$node->stop;
done_testing();
