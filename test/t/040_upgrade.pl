# The upgrade path. The current version's install script is one source,
# sql/pg_stat_waits.sql, which make copies to pg_stat_waits--<default>.sql;
# extension/ keeps 1.0's released script and the upgrade steps. Installing
# 1.0 (and 1.1 and 1.2, which install through 1.0 and its steps) and running ALTER
# EXTENSION UPDATE must give, object by object, the catalog a fresh install
# of that source gives: each function with its definition, result,
# volatility, strictness, parallel safety, settings, privileges and comment;
# each view with its definition, privileges and comment; each relation's
# columns; and the extension's members. The fresh install must really be the
# source (not 1.0 and the same steps, which would make the comparison
# vacuous): the installed script is compared with sql/pg_stat_waits.sql and
# the catalog must hold exactly the functions and views the source creates.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib "$FindBin::RealBin/../perl";
use PswTest;

my $root = "$FindBin::RealBin/../..";
my $node = psw_node('upgrade');
$node->safe_psql('postgres', 'CREATE DATABASE psw_from10; CREATE DATABASE psw_from11; CREATE DATABASE psw_from12; '
	  . 'CREATE DATABASE psw_new;');
my $default = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'pg_stat_waits'");
is($default, '1.3', 'the default version is 1.3 (the Citus global pid in activity, history, executions)');

# The fresh install runs the one source: PostgreSQL takes a version's own
# script when there is one, and the installed one is the source's copy.
my $source = slurp_file("$root/sql/pg_stat_waits.sql");
my $extdir = $node->config_data('--sharedir') . '/extension';
ok(-f "$extdir/pg_stat_waits--$default.sql", "the install script of $default is installed");
ok(slurp_file("$extdir/pg_stat_waits--$default.sql") eq $source,
	"the installed pg_stat_waits--$default.sql is sql/pg_stat_waits.sql");

# Every older version installs and updates to the default one.
my %from = ('1.0' => 'psw_from10', '1.1' => 'psw_from11', '1.2' => 'psw_from12');
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

# Each query returns one row per object: its name, then what must match.
my $member_of = q{
	SELECT objid FROM pg_depend
	 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e' AND classid = '%s'::regclass
	   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')};
my %catalog = (
	'member' => q{
		SELECT pg_describe_object(classid, objid, objsubid), 'member' FROM pg_depend
		 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')},
	'function' => q{
		SELECT p.oid::regprocedure::text,
		       concat_ws(' | ', pg_get_functiondef(p.oid), pg_get_function_result(p.oid), p.prokind,
		                 p.provolatile, p.proisstrict, p.proparallel, p.prosecdef, p.prosrc, p.probin,
		                 p.proconfig::text, coalesce(p.proacl::text, 'default'),
		                 obj_description(p.oid, 'pg_proc'))
		  FROM pg_proc p WHERE p.oid IN (} . sprintf($member_of, 'pg_proc') . ')',
	'view' => q{
		SELECT c.relname, concat_ws(' | ', c.relkind, pg_get_viewdef(c.oid), coalesce(c.relacl::text, 'default'),
		                            obj_description(c.oid, 'pg_class'))
		  FROM pg_class c WHERE c.oid IN (} . sprintf($member_of, 'pg_class') . ')',
	'columns of' => q{
		SELECT c.relname, string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
		                             || coalesce(' ' || a.attacl::text, ''), ', ' ORDER BY a.attnum)
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		 WHERE c.oid IN (} . sprintf($member_of, 'pg_class') . ') GROUP BY c.relname',);

# name => description, from one database.
sub objects
{
	my ($db, $query) = @_;
	my %o;
	for my $row (split /\x1e\n?/, $node->safe_psql($db, $query, extra_params => [ '-F', "\x1f", '-R', "\x1e" ]))
	{
		my ($name, $what) = split /\x1f/, $row, 2;
		$o{$name} = $what;
	}
	return \%o;
}

for my $what (sort keys %catalog)
{
	my $new = objects('psw_new', $catalog{$what});
	for my $version (sort keys %from)
	{
		my $old = objects($from{$version}, $catalog{$what});
		is_deeply([ sort keys %$old ], [ sort keys %$new ],
			"after the update from $version: the same ${what}s as a fresh install");
		for my $name (sort keys %$new)
		{
			next unless exists $old->{$name};
			is($old->{$name}, $new->{$name}, "$what $name: the same after the update from $version");
		}
	}
}

# Not vacuous: the fresh install holds exactly the functions and views the
# source creates.
my $new_functions = objects('psw_new', $catalog{function});
my $new_views = objects('psw_new', $catalog{view});
my @src_functions = $source =~ /^CREATE FUNCTION (\w+)\(/mg;
my @src_views = $source =~ /^CREATE VIEW (\w+)/mg;
cmp_ok(scalar(@src_functions), '>=', 10, 'the source creates functions');
is_deeply([ sort { $a cmp $b } keys %$new_views ], [ sort @src_views ],
	'the fresh install has exactly the views sql/pg_stat_waits.sql creates');
is_deeply([ sort map { s/\(.*//r } keys %$new_functions ], [ sort @src_functions ],
	'the fresh install has exactly the functions sql/pg_stat_waits.sql creates');

# The updated extensions work, report the server's CPUs (1.2) and have the
# gpid columns (1.3; NULL without Citus).
for my $version (sort keys %from)
{
	is($node->safe_psql($from{$version}, 'SELECT count(*) > 0 FROM pg_stat_waits_activity'), 't',
		"the extension updated from $version serves its views");
	cmp_ok($node->safe_psql($from{$version}, 'SELECT cpu_count FROM pg_stat_waits_status'), '>=', 1,
		"the extension updated from $version reports cpu_count");
	is($node->safe_psql($from{$version}, 'SELECT count(gpid) FROM pg_stat_waits_activity'), '0',
		"the extension updated from $version has pg_stat_waits_activity.gpid, NULL without Citus");
}
# A catalog still at 1.2 reads the 1.3 library's rows without the gpid column.
$node->safe_psql('postgres', "CREATE EXTENSION pg_stat_waits VERSION '1.2'");
for my $view (qw(pg_stat_waits_activity pg_stat_waits_history pg_stat_waits_executions))
{
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_attribute WHERE attrelid = '$view'::regclass "
		. "AND attnum > 0 AND attname = 'gpid'"), '0', "a 1.2 catalog's $view has no gpid");
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) >= 0 FROM $view");
	is("$rc $out", '0 t', "the 1.3 library serves a 1.2 catalog's $view") or diag($err);
}
$node->safe_psql('postgres', 'DROP EXTENSION pg_stat_waits');
# A catalog still at 1.1 reads the 1.2 library's status row without the new column.
$node->safe_psql('postgres', "CREATE EXTENSION pg_stat_waits VERSION '1.1'");
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_attribute WHERE attrelid = '
	. "'pg_stat_waits_status'::regclass AND attnum > 0"), '18', 'a 1.1 catalog keeps its 18 status columns');
is($node->safe_psql('postgres', 'SELECT samples_taken >= 0 FROM pg_stat_waits_status'), 't',
	'the 1.2 library serves a 1.1 catalog\'s status view');
$node->stop;
done_testing();
