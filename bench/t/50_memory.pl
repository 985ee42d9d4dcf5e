# Memory: shared memory at max_connections 100 and 1000. pg_stat_waits says
# what it allocated (pg_stat_waits_status.shmem_bytes); for every
# configuration the total of pg_shmem_allocations minus the no-extension
# total at the same max_connections is the extension's whole footprint
# (its structs plus anything it makes PostgreSQL allocate, e.g. LWLocks).
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use PswBench;
use Test::More;

bench_section('memory');
my $t_start = time();

my @CFGS = @{ bench_size(full => [qw(none psw_sampling pg_wait_sampling pg_stat_statements)], quick => [qw(none psw_sampling)], smoke => [qw(none psw_sampling)]) };
my @MCS = (100, 1000);
my $CHUNK = '50_memory';

# One data directory for every configuration: shared memory depends on the
# settings only, so each (configuration, max_connections) is a restart with
# a rewritten postgresql.conf rather than a new initdb (bench_node's
# defaults included: max_wal_senders = 0 would take ten backends' worth of
# shared memory off every total).
my $node = bench_node('mem', 'none', start => 0);
my $conf_file = $node->data_dir . '/postgresql.conf';
my $base_conf = slurp_file($conf_file);

for my $cfg (@CFGS)
{
	next unless cfg_available($cfg);
	for my $mc (@MCS)
	{
		open my $fh, '>', $conf_file or die "$conf_file: $!";
		print $fh $base_conf, cfg_conf($cfg), "max_connections = $mc\n";
		close $fh;
		$node->start;
		my $tot = $node->safe_psql('postgres', 'SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name IS NOT NULL');
		metric('memory', $cfg, "shmem_total max_connections=$mc", $tot, 'bytes');
		cmp_ok($tot, '>', 0, "$cfg: shared memory total at max_connections $mc read ($tot)");
		if ($cfg eq 'psw_sampling')
		{
			$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits');
			my $own = $node->safe_psql('postgres', 'SELECT shmem_bytes FROM pg_stat_waits_status');
			metric('memory', $cfg, "shmem_bytes max_connections=$mc", $own, 'bytes');
			cmp_ok($own, '>', 0, "pg_stat_waits_status.shmem_bytes at max_connections $mc read ($own)");
			# The extension lives in the database: the next configuration
			# starts without it.
			$node->safe_psql('postgres', 'DROP EXTENSION pg_stat_waits');
		}
		$node->stop;
	}
}
$node->clean_node;

sub bytes_h
{
	my ($b) = @_;
	return '' unless defined $b;
	return $b >= 1048576 ? sprintf('%.2f MiB', $b / 1048576) : sprintf('%.1f KiB', $b / 1024);
}

md($CHUNK, "## 5. Shared memory\n\n",
	"Extension footprint = sum of `pg_shmem_allocations.allocated_size` minus the same sum with no\n",
	"extension at the same max_connections; per backend = (footprint at 1000 − at 100) / 900.\n",
	"pg_stat_waits' own count is `pg_stat_waits_status.shmem_bytes`.\n\n",
	'| configuration | footprint @100 | footprint @1000 | per backend | shmem_bytes @100 | shmem_bytes @1000 |' . "\n",
	"|---|---:|---:|---:|---:|---:|\n");
my $b100 = metric_get('memory', 'none', 'shmem_total max_connections=100');
my $b1000 = metric_get('memory', 'none', 'shmem_total max_connections=1000');
for my $cfg (@CFGS[ 1 .. $#CFGS ])
{
	my $f100 = metric_get('memory', $cfg, 'shmem_total max_connections=100');
	my $f1000 = metric_get('memory', $cfg, 'shmem_total max_connections=1000');
	if (!defined $f100)
	{
		md($CHUNK, '| ' . cfg_label($cfg) . " | not available | | | | |\n");
		next;
	}
	$f100 -= $b100;
	$f1000 -= $b1000;
	my $per = int(($f1000 - $f100) / 900);
	metric('memory', $cfg, 'footprint_100', $f100, 'bytes');
	metric('memory', $cfg, 'footprint_1000', $f1000, 'bytes');
	metric('memory', $cfg, 'per_backend', $per, 'bytes');
	my $s100 = metric_get('memory', $cfg, 'shmem_bytes max_connections=100');
	my $s1000 = metric_get('memory', $cfg, 'shmem_bytes max_connections=1000');
	md($CHUNK, '| ' . cfg_label($cfg) . ' | ' . bytes_h($f100) . ' | ' . bytes_h($f1000) . " | $per B | "
		  . bytes_h($s100) . ' | ' . bytes_h($s1000) . " |\n");
	cmp_ok($f1000, '>=', $f100, "$cfg: footprint does not shrink with more connections ($f100, $f1000)");
	# What pg_stat_waits counts is part of what PostgreSQL allocated for it.
	cmp_ok($f100, '>=', $s100, "pg_stat_waits' own count within its footprint ($s100 <= $f100)")
	  if defined $s100;
}
md($CHUNK, "\n");

metric('elapsed', 'harness', 'memory', int(time() - $t_start), 's');
done_testing();
