# The SQL surface and privileges, in pgTAP (test/pgtap/*.sql): every pgTAP
# assertion becomes one assertion of this test.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;

my $node = psw_node('pgtap');
$node->safe_psql('postgres', 'CREATE DATABASE psw_tap');
$node->safe_psql('psw_tap', 'CREATE EXTENSION pgtap; CREATE EXTENSION pg_stat_waits;');

for my $file (sort glob('test/pgtap/*.sql'))
{
	my ($rc, $out, $err) = (0, '', '');
	$rc = $node->psql('psw_tap', slurp_file($file),
		stdout => \$out, stderr => \$err, on_error_stop => 1);
	my ($planned, $seen) = (undef, 0);
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^1\.\.(\d+)/) { $planned = $1; next; }
		if ($line =~ /^(not )?ok \d+(?: - )?(.*)$/)
		{
			$seen++;
			ok(!defined $1, "$file: $2");
			next;
		}
		diag($line) if $line =~ /^#/;
	}
	ok($rc == 0 && defined $planned && $seen == $planned,
		"$file ran all its planned assertions ($seen of " . ($planned // '?') . ")")
	  or diag("psql exit $rc: $err");
}

$node->stop;
done_testing();
