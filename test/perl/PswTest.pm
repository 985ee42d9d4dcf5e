# Helpers shared by pg_stat_waits' TAP tests (test/t/*.pl).
package PswTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(psw_node psw_long psw_run_checks);

# psw_node(NAME, conf => [lines], preload => '...', start => 0|1): a new node
# that preloads pg_stat_statements and pg_stat_waits (pg_stat_waits last: its
# hooks run first and see every statement id), started unless start => 0.
sub psw_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opt{init} // {} });
	my $preload = $opt{preload} // 'pg_stat_statements, pg_stat_waits';
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$preload'\n"
		  . "pg_stat_statements.track = all\n"
		  . "max_connections = 100\n"
		  # PostgreSQL::Test::Cluster turns it off; the crash tests need the
		  # server's own recovery, as in production.
		  . "restart_after_crash = on\n"
		  . join('', map { "$_\n" } @{ $opt{conf} // [] }));
	$node->start if $opt{start} // 1;
	return $node;
}

# ./run test --long (CI) sets PSW_LONG=1: the long variants of the tests.
sub psw_long { return ($ENV{PSW_LONG} // '0') eq '1'; }

# psw_run_checks([command...], MIN): runs a checking script that prints one
# TAP line per check ("ok - ..." / "not ok - ..."); each becomes an assertion
# here, and one more asserts that it ran at least MIN checks.
sub psw_run_checks
{
	my ($cmd, $min) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run($cmd, '>', \$out, '2>', \$err);
	my $n = 0;
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^(ok|not ok) - (.*)$/) { ok($1 eq 'ok', $2); $n++; }
		else { note($line); }
	}
	cmp_ok($n, '>=', $min, "@$cmd ran its checks ($n)") or diag($err);
	return $n;
}

1;
