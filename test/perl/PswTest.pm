# Shared helpers for pg_stat_waits' TAP tests (test/t/*.pl): a node that
# preloads the extension, psql sessions that keep a backend between
# statements and can leave a statement running, and polling.
#
# A test loads it with
#   use FindBin;
#   use lib "$FindBin::RealBin/../perl";
#   use PswTest;
package PswTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT =
  qw(psw_node psw_dropin_install psw_long psw_report_bin psw_session backend_pid lock_and_block sql send_sql finish_sql wait_until wait_for_state);

# psw_node(NAME, conf => [lines], preload => '...', init => {...},
#          start => 0|1, extensions => 0|1, install_path => DIR): a new node that preloads
# pg_stat_statements and pg_stat_waits (pg_stat_waits last: its hooks run
# first and see every statement id), started unless start => 0, with both
# extensions created in the database postgres when extensions => 1. conf
# lines may be subs that get the node (to ask its version) and return lines.
# install_path: another installation than the one in PATH (the drop-in's,
# psw_dropin_install()). The caller stops it.
sub psw_node
{
	my ($name, %opt) = @_;
	my $node =
	  PostgreSQL::Test::Cluster->new($name, $opt{install_path} ? (install_path => $opt{install_path}) : ());
	$node->init(%{ $opt{init} // {} });
	my $preload = $opt{preload} // 'pg_stat_statements, pg_stat_waits';
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$preload'\n"
		  . "pg_stat_statements.track = all\n"
		  . "max_connections = 100\n"
		  # PostgreSQL::Test::Cluster turns it off; the crash tests need the
		  # server's own recovery, as in production.
		  . "restart_after_crash = on\n"
		  . join('', map { "$_\n" } map { ref $_ eq 'CODE' ? $_->($node) : $_ } @{ $opt{conf} // [] }));
	return $node unless $opt{start} // 1;
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_statements')
	  if $opt{extensions};
	return $node;
}

# psw_dropin_install(): the prefix of the staged installation that has the
# pg_wait_sampling drop-in instead of pg_wait_sampling itself (stage_dropin
# in tools/lib/common.sh writes it to pg_stat_waits-dropin.path in the
# stage's sharedir), for psw_node(..., install_path => ...); undef if there
# is none.
sub psw_dropin_install
{
	my $share = `pg_config --sharedir`;
	chomp $share;
	open my $fh, '<', "$share/pg_stat_waits-dropin.path" or return undef;
	my $dir = <$fh> // '';
	chomp $dir;
	return -x "$dir/bin/postgres" ? $dir : undef;
}

# ./run test --long (CI) sets PSW_LONG=1: the long variants of the tests.
sub psw_long { return ($ENV{PSW_LONG} // '0') eq '1'; }

# psw_report_bin(): the pg_stat_waits_report program under test ($PSW_REPORT,
# else the first in PATH: the staged bindir), or undef.
sub psw_report_bin
{
	return $ENV{PSW_REPORT} if $ENV{PSW_REPORT};
	for my $d (split /:/, $ENV{PATH})
	{
		return "$d/pg_stat_waits_report" if -x "$d/pg_stat_waits_report";
	}
	return undef;
}

# psw_session(NODE, SQL...): a psql session (one backend for its whole life)
# on the database postgres, after running the given statements. Errors do
# not end it: sql() dies on them, finish_sql() returns them.
sub psw_session
{
	my ($node, @setup) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->set_query_timer_restart;
	sql($s, $_) for @setup;
	return $s;
}

sub backend_pid { return sql($_[0], 'SELECT pg_backend_pid()'); }

# lock_and_block(NODE, LOCK_SQL, SQL, SETUP...): a session that runs LOCK_SQL
# in an open transaction, and another (after its SETUP statements) that sends
# SQL, which is to wait for that lock. Returns both sessions and the pid of
# the second; the caller waits until it blocks, and commits the first.
sub lock_and_block
{
	my ($node, $lock_sql, $query, @setup) = @_;
	my $holder = psw_session($node, 'BEGIN', $lock_sql);
	my $blocked = psw_session($node, @setup);
	my $pid = backend_pid($blocked);
	send_sql($blocked, $query);
	return ($holder, $blocked, $pid);
}

# sql(SESSION, QUERY): runs QUERY and returns its output (unaligned, tuples
# only, '|' between columns); dies if the server reported an error.
sub sql
{
	my ($s, $query) = @_;
	$s->{stderr} = '';
	my $out = $s->query($query);
	die "query failed: $query\n$s->{stderr}" if $s->{stderr} =~ /ERROR|FATAL/;
	return $out;
}

# send_sql(SESSION, QUERY): sends QUERY and returns without waiting for it
# to finish (it may block or sleep); finish_sql() collects it.
sub send_sql
{
	my ($s, $query) = @_;
	$s->{stderr} = '';
	$s->query_until(qr/psw-sent\n/, "\\echo psw-sent\n$query;\n");
	return;
}

# finish_sql(SESSION): waits for the statement that send_sql() started and
# returns (its output, its error messages or '').
sub finish_sql
{
	my ($s) = @_;
	my $out = $s->query('\echo psw-finished');
	$out =~ s/\n?psw-finished$//;
	my $err = $s->{stderr};
	$s->{stderr} = '';
	return ($out, $err);
}

# wait_until(CODE, SECONDS): calls CODE every 10 ms until it returns true or
# SECONDS (default 10) pass; returns its last result.
sub wait_until
{
	my ($cond, $seconds) = @_;
	my $deadline = time + ($seconds // 10);
	while (time < $deadline)
	{
		my $r = $cond->();
		return $r if $r;
		usleep(10_000);
	}
	return $cond->();
}

# wait_for_state(SESSION, PID, COLUMN, VALUE, VIEW): waits (as wait_until,
# 10 s) until VIEW (pg_stat_activity unless given) shows COLUMN = VALUE for
# the process PID (NULL reads as ''); true if it did.
sub wait_for_state
{
	my ($s, $pid, $column, $value, $view) = @_;
	$view //= 'pg_stat_activity';
	return wait_until(sub { sql($s, "SELECT $column FROM $view WHERE pid = $pid") eq $value });
}

1;
