# The sampler's instructions per tick (bench/t/20_sampler.pl): a postmaster
# under callgrind that counts inside the sampler only, the dumps' parsing,
# and a connection point for PswBench::Holder on it.
package PswBench::SamplerCg;

use strict;
use warnings;
use Exporter 'import';
use POSIX ();
use Time::HiRes qw(sleep);
use PostgreSQL::Test::Cluster;
use PswBench;
use PswBench::Callgrind;

our @EXPORT = qw(cg_dump_ticks cg_sampler_start $CG_BB);

# Basic blocks per dump part: the sampler's start-up fits in one.
our $CG_BB = 500_000;
my $BB = $CG_BB;

# A connection point for PswBench::Holder: a postmaster started by hand.
package PswBench::Endpoint {
	sub new { my ($class, %o) = @_; return bless {%o}, $class; }
	sub host { return $_[0]{host}; }
	sub port { return $_[0]{port}; }
}

# cg_dump_ticks(FILE): (instructions, ticks, whether the process started
# or ended in it) of a callgrind dump.
sub cg_dump_ticks
{
	my ($file) = @_;
	open my $fh, '<', $file or return;
	my (%name, $ir, $ticks, $target, $edge);
	while (my $line = <$fh>)
	{
		if ($line =~ /^(c?)fn=\((\d+)\)(?: (.*))?$/)
		{
			my ($call, $id) = ($1, $2);
			$name{$id} = $3 if defined $3;
			$target = $call eq 'c' && ($name{$id} // '') =~ /idle_memo_tick_end/;
		}
		elsif ($target && $line =~ /^calls=(\d+)/)
		{
			$ticks += $1;
			$target = 0;
		}
		# summary: the process's own count ("totals" also holds what the
		# postmaster had counted before the fork).
		$ir = $1 if $line =~ /^summary: (\d+)/;
		$edge = 1 if $line =~ /\b(?:InitPostgres|proc_exit)\b/;
	}
	return ($ir, $ticks, $edge);
}

# cg_sampler_start(DATADIR, DIR, ARGS...): a postmaster on DATADIR under
# callgrind that counts inside the sampler's main function only (so what
# the postmaster counted before its fork stays out of the sampler's
# profile), its socket in DIR. Returns (port, pid).
sub cg_sampler_start
{
	my ($datadir, $dir, @extra) = @_;
	mkdir $dir;
	chmod 0755, $dir;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my @cmd = (
		qw(valgrind --tool=callgrind --collect-atstart=no --toggle-collect=pg_stat_waits_sampler_main*),
		"--dump-every-bb=$BB",
		"--callgrind-out-file=$dir/cg.%p", cg_bin('postgres'), '-D', $datadir, '-p', $port, '-k', $dir,
		'-c', 'listen_addresses=', '-c', 'autovacuum=off', cfg_args('psw_sampling'), @extra);
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open STDIN, '<', '/dev/null';
		open STDOUT, '>', "$dir/log";
		open STDERR, '>&', \*STDOUT;
		exec { $cmd[0] } @cmd or POSIX::_exit(127);
	}
	for (1 .. 240)
	{
		last if system(cg_bin('pg_isready'), '-q', '-h', $dir, '-p', $port, '-U', 'postgres', '-d', 'postgres') == 0;
		sleep 0.5;
	}
	return ($port, $pid);
}


1;
