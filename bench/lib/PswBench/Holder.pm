# Connections held open for the sampler's benchmark (bench/t/20_sampler.pl):
# bench/bench_hold_conns.cpp, a small libpq program, holds K connections so
# that the sampler has K backends to look at. One process instead of K psql
# clients keeps the client side cheap on a 2-core machine. It is compiled
# once per run into the scratch directory and driven here through pipes:
#
#   my $h = PswBench::Holder->start($node, $k);   # connects K backends
#   $h->ready or die $h->line;                     # "ready K", or why not
#   $h->busy($seconds);                            # all K in pg_sleep
#   $h->quit;                                      # closes them
#
# Holders still running when the file ends (it died) are killed at exit;
# their backends then exit through client_connection_check_interval.
package PswBench::Holder;

use strict;
use warnings;
use File::Basename qw(dirname);
use IPC::Run;
use Time::HiRes qw(time usleep);
use PswBench;

my %LIVE;

# binary(): the holder's path, compiled from the source next to this
# module's directory unless this run has it already.
sub binary
{
	my $bin = bench_dir() . '/hold_conns';
	my $src = dirname(__FILE__) . '/../../bench_hold_conns.cpp';
	return $bin if -x $bin && -M $bin <= -M $src;
	# libpq's flags from pkg-config, as for any libpq client; the staged
	# pg_config's directories when pkg-config does not know libpq.
	my $cflags = `pkg-config --cflags libpq 2>/dev/null`;
	my $libs = `pkg-config --libs libpq 2>/dev/null`;
	if ($? != 0)
	{
		chomp(my $inc = `pg_config --includedir`);
		chomp(my $lib = `pg_config --libdir`);
		($cflags, $libs) = ("-I$inc", "-L$lib -Wl,-rpath,$lib -lpq");
	}
	my $tmp = "$bin.tmp.$$";
	my $out = '';
	IPC::Run::run([ 'g++', '-std=c++17', '-O2', '-Wall', '-Werror', split(' ', $cflags), $src, '-o', $tmp, split(' ', $libs) ],
		'>&', \$out)
	  or die "cannot build the connection holder from $src:\n$out";
	rename $tmp, $bin or die "cannot rename $tmp: $!";
	return $bin;
}

# start(NODE, K): a holder connecting K backends to NODE's postgres
# database; waits (120 s at most) for its first reply.
sub start
{
	my ($class, $node, $k) = @_;
	my $self = bless { in => '', out => '', line => '', k => $k }, $class;
	my $conninfo = sprintf('host=%s port=%d dbname=postgres', $node->host, $node->port);
	$self->{h} = IPC::Run::start([ binary(), $conninfo, $k ], '<', \$self->{in}, '>&', \$self->{out});
	$LIVE{"$self"} = $self;
	$self->_reply(120);
	return $self;
}

# ready(): the K connections are open. line(): the holder's last reply (on
# failure, what libpq said).
sub ready { return $_[0]{line} =~ /^ready / ? 1 : 0; }
sub line { return $_[0]{line}; }

# Reads the holder's next line: its reply, or, when it exited, the first
# line it wrote (why it failed).
sub _reply
{
	my ($self, $timeout) = @_;
	my $deadline = time() + $timeout;
	while ($self->{out} !~ /\n/ && $self->{h}->pumpable && time() < $deadline)
	{
		$self->{h}->pump_nb;
		usleep(20_000) unless $self->{out} =~ /\n/;
	}
	if ($self->{out} =~ s/^([^\n]*)\n//)
	{
		$self->{line} = $1;
	}
	else
	{
		$self->{line} = $self->{out} ne '' ? $self->{out} : "no reply from the holder within $timeout s";
		$self->{out} = '';
	}
	return $self->{line};
}

# busy(SECONDS): every held backend starts SELECT pg_sleep(SECONDS), active
# and waiting (the sampler's worst case: every backend sampled). Returns the
# reply, "busy K" when all were sent.
sub busy
{
	my ($self, $seconds) = @_;
	$self->{in} .= "busy $seconds\n";
	return $self->_reply(30);
}

# quit(): closes the held connections (backends still sleeping exit
# through client_connection_check_interval).
sub quit
{
	my ($self) = @_;
	return unless $LIVE{"$self"};
	delete $LIVE{"$self"};
	$self->{in} .= "quit\n";
	eval {
		$self->{h}->finish;
		1;
	} or $self->{h}->kill_kill(grace => 5);
	return;
}

END
{
	local $?;
	for my $self (values %LIVE)
	{
		eval { $self->{h}->kill_kill(grace => 2) };
	}
	%LIVE = ();
}

1;
