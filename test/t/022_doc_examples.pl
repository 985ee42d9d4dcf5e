# The SQL examples of README.md and docs/*.md run as written: every ```sql
# block, and every inline `...` span that is a complete statement (ends with
# ';', or is a SET / ALTER SYSTEM SET / SHOW / RESET), each in a fresh
# database as a superuser with ON_ERROR_STOP, against a preloading server.
# pg_stat_waits is created first unless the example creates it itself.
# Settings an example changes with ALTER SYSTEM are reset afterwards.
# Blocks fenced ```sql citus need a Citus cluster: 800_citus_cluster.pl runs
# them (the fence does not match here).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $root = "$FindBin::RealBin/../..";

# examples(FILE, NAME): [where, sql] for each example of a Markdown file.
# Inline spans are looked for on every line outside ```sql blocks.
sub examples
{
	my ($file, $name) = @_;
	my (@found, $block, $where);
	my $nr = 0;
	for my $line (split /\n/, slurp_file($file))
	{
		$nr++;
		if (!defined $block && $line =~ /^```sql[ \t]*$/)
		{
			($block, $where) = ('', sprintf('%s:%d (sql block)', $name, $nr + 1));
			next;
		}
		if (defined $block)
		{
			if ($line =~ /^```/) { push @found, [ $where, $block ]; undef $block; }
			else { $block .= "$line\n"; }
			next;
		}
		while ($line =~ /`([^`]+)`/g)
		{
			my $span = $1;
			next unless $span =~ /;$/ || $span =~ /^(SET|ALTER SYSTEM SET|SHOW|RESET) [a-z_.]+( (=|TO) .+)?$/;
			push @found, [ "$name:$nr (inline)", $span . ($span =~ /;$/ ? '' : ';') . "\n" ];
		}
	}
	push @found, [ $where, $block ] if defined $block;    # an unclosed block runs to the end
	return @found;
}

my @examples = map { examples("$root/$_", $_) } 'README.md', map { s{^\Q$root\E/}{}r } sort glob("$root/docs/*.md");
cmp_ok(scalar @examples, '>', 0, 'found SQL examples to run');

my $node = psw_node('doc_examples');
my $db = 'psw_doc_examples';
for my $ex (@examples)
{
	my ($where, $sql) = @$ex;
	$node->safe_psql('postgres', "DROP DATABASE IF EXISTS $db");
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION pg_stat_waits') unless $sql =~ /CREATE EXTENSION pg_stat_waits/i;
	my ($rc, $out, $err) = $node->psql($db, $sql, on_error_stop => 1);
	is($rc, 0, "$where runs") or diag("$sql$err");
	my %settings = map { $_ => 1 } $sql =~ /ALTER SYSTEM SET ([a-z_.]+)/gi;
	next unless %settings;
	$node->safe_psql('postgres', join('', map { "ALTER SYSTEM RESET $_;\n" } sort keys %settings)
		  . 'SELECT pg_reload_conf();');
}
is($node->safe_psql('postgres',
		"SELECT string_agg(name, ', ') FROM pg_file_settings WHERE sourcefile LIKE '%/postgresql.auto.conf'"),
	'', 'the settings the examples set with ALTER SYSTEM are reset');
$node->safe_psql('postgres', "DROP DATABASE IF EXISTS $db");
$node->stop;
done_testing();
