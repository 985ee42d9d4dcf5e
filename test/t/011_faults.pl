# Faults: kill -9 of a backend mid-query makes the postmaster crash-restart
# every process, and the extension re-initializes and keeps working; an ERROR
# inside the sampler (injected through the test module) restarts the sampler
# alone, with no crash-restart.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use PswTest;

my $node = psw_node('faults');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_waits_test;');

my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/sleeping/, "\\echo sleeping\nSELECT pg_sleep(30);\n");
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_waits_activity WHERE wait_event = 'PgSleep'");
my $victim = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_waits_activity WHERE wait_event = 'PgSleep' LIMIT 1");
ok($victim =~ /^\d+$/, 'sleeping backend visible before the crash');
my $log_offset = -s $node->logfile;
kill 'KILL', $victim;
eval { $bg->quit; };
# The postmaster restarts everything; wait until it accepts connections again.
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'server accepts connections after crash-restart');
ok($node->log_contains('all server processes terminated; reinitializing', $log_offset),
	'server log shows the crash-restart');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()'),
	1, 'activity view works after re-initialization');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_waits_status'), 1,
	'status view works after re-initialization');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_waits_activity WHERE pid = $victim"),
	0, 'killed pid is gone from the activity view');
my $since_crash = substr(slurp_file($node->logfile), $log_offset);
ok(!grep({ /pg_stat_waits/ && /ERROR|FATAL|PANIC/ } split /\n/, $since_crash),
	'no extension error in the server log');

# An ERROR inside the sampler: it exits alone, the postmaster starts a new
# one, no crash-restart, and other sessions keep running.
my $restarts_before = () = slurp_file($node->logfile) =~ /all server processes terminated; reinitializing/g;
my $bg2 = $node->background_psql('postgres');
$bg2->query_until(qr/started/, "\\echo started\nSELECT pg_sleep(2);\n\\echo finished\n");
my $old_sampler = $node->safe_psql('postgres', 'SELECT pg_stat_waits_inject_sampler_fault()');
ok($old_sampler =~ /^\d+$/, 'a sampler was running to fail');
my $new_sampler = '';
for (1 .. 30)
{
	$new_sampler = $node->safe_psql('postgres',
		"SELECT sampler_pid FROM pg_stat_waits_status WHERE sampler_pid <> " . ($old_sampler || 0));
	last if $new_sampler ne '';
	usleep(100_000);
}
ok($new_sampler ne '', 'a new sampler runs within 3 s of the injected error');
ok($node->log_contains('fault injected by pg_stat_waits_inject_sampler_fault'),
	'the injected error is in the server log');
my $restarts_after = () = slurp_file($node->logfile) =~ /all server processes terminated; reinitializing/g;
is($restarts_after, $restarts_before, "no crash-restart after the sampler's error");
ok(eval { $bg2->query_until(qr/finished/, ''); $bg2->quit; 1 }, 'a session running meanwhile finished normally');
my $taken1 = $node->safe_psql('postgres', 'SELECT samples_taken FROM pg_stat_waits_status');
usleep(300_000);
my $taken2 = $node->safe_psql('postgres', 'SELECT samples_taken FROM pg_stat_waits_status');
cmp_ok($taken2, '>', $taken1, 'the new sampler samples');
my ($rc, $out, $err) = $node->psql('postgres',
	'CREATE ROLE psw_fault_plain; SET ROLE psw_fault_plain; SELECT pg_stat_waits_inject_sampler_fault();');
ok($rc != 0 && $err =~ /permission denied|must be superuser/, 'plain users cannot inject faults');
$node->stop;
done_testing();
