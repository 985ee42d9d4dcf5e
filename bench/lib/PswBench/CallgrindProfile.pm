# Reading callgrind's profiles for section 1: a run's total, pg_stat_waits.so's
# self cost by function, every object's self cost, glibc's allocator's
# share, each as a slope between the profiles of N and 2N units.
package PswBench::CallgrindProfile;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PswBench;

our @EXPORT = qw(
  cg_slope cg_totals cg_self_rows cg_self_by_function cg_allocator
  cg_allocator_metrics cg_breakdown_files cg_self_by_object);

# cg_slope(I_N, I_2N, N, DECIMALS): the count per unit from runs of N and
# 2N of them, rounded as the report shows it (1 decimal unless told), or
# undef.
sub cg_slope
{
	my ($i1, $i2, $n, $d) = @_;
	my $s = slope($i1, $i2, $n);
	return defined $s ? sprintf('%.*f', $d // 1, $s) : undef;
}

# cg_totals(PROFILE): its instruction count, undef until the process has
# exited (callgrind writes the totals last).
sub cg_totals
{
	open my $fh, '<', $_[0] or return;
	my $t;
	while (<$fh>) { $t = $1 if /^totals: *(\d+)/; }
	return $t;
}

# cg_self_rows(PROFILE): [instructions, file:function, object] for every
# self-cost row. callgrind_annotate names the object only on a function's
# own lines; code inlined from another file (a header) comes on a row of
# its own without one, and a function's "[clone .part.0]" must not be taken
# for an object: such rows get "(inlined)", or pg_stat_waits.so when the
# file is this repository's source.
sub cg_self_rows
{
	my ($profile, @opt) = @_;
	my $out = '';
	IPC::Run::run([ 'callgrind_annotate', @opt, '--inclusive=no', '--threshold=100', '--auto=no', $profile ],
		'>', \$out, '2>', '/dev/null');
	return $out if @opt;
	my @rows;
	for my $l (split /\n/, $out)
	{
		next if $l =~ /PROGRAM TOTALS/;
		next unless $l =~ /^ *([0-9,]+) \([^)]*\) +(.*)$/;
		my ($c, $fn) = ($1, $2);
		$c =~ tr/,//d;
		my $obj;
		if ($fn =~ / \[([^\]]*\/[^\]]*)\]$/)
		{
			$obj = $1;
			$fn = substr($fn, 0, $-[0]);
		}
		else
		{
			$obj = $fn =~ /^src\// ? 'pg_stat_waits.so' : '(inlined)';
		}
		push @rows, [ $c, $fn, $obj ];
	}
	return @rows;
}

# cg_self_by_function(PROFILE): { function => instructions } of
# pg_stat_waits.so, its inlined rows summed into the function they were
# inlined into.
sub cg_self_by_function
{
	my %s;
	for my $r (cg_self_rows($_[0]))
	{
		next unless $r->[2] =~ /pg_stat_waits\.so$/;
		(my $fn = $r->[1]) =~ s/^[^:]*\.(?:cpp|h|c)://;
		$s{$fn} += $r->[0];
	}
	return \%s;
}

# cg_allocator(PROFILE): (instructions, calls) of glibc's allocator in a
# profile: the self cost of every function of libc's malloc/malloc.c, and
# the calls that enter it through malloc, calloc or realloc from outside
# it. Why: over a socket the same allocations per statement took 96
# instructions each in one configuration and 295 in another (18.6, sampling
# against no extension), as the heap's free chunks lay after start-up; the
# client tables give each configuration's allocator share so that such a
# difference is not read as a tool's cost. (Debian's valgrind depends on
# libc6-dbg, which names these functions.)
sub cg_allocator
{
	my ($profile) = @_;
	my $instr = 0;
	for my $r (cg_self_rows($profile))
	{
		$instr += $r->[0] if $r->[2] =~ /\/libc\.so/ && $r->[1] =~ /\/malloc\/malloc\.c:/;
	}
	# Caller tree: each function's block lists its callers ("<", with call
	# counts) and then the function itself ("*").
	my ($n, $calls) = (0, 0);
	for my $l (split /\n/, cg_self_rows($profile, '--tree=caller'))
	{
		if ($l =~ /^ *$/) { $n = 0; next; }
		if ($l =~ / < /)
		{
			if ($l !~ /\/malloc\/malloc\.c:/ && $l =~ /\(([0-9,]+)x\) \[/)
			{
				(my $c = $1) =~ tr/,//d;
				$n += $c;
			}
			next;
		}
		if ($l =~ / \* /)
		{
			$calls += $n if $l =~ /\/malloc\/malloc\.c:(?:malloc|calloc|realloc) \[/;
			$n = 0;
		}
	}
	return ($instr, $calls);
}

# cg_allocator_metrics(SECTION, CONFIG, N, PROFILE_N, PROFILE_2N, SUFFIX):
# records the allocator's instructions and calls per unit (the slope between
# the two profiles, as the headline figure) as alloc_instr and alloc_calls,
# with SUFFIX appended (the baseline's repeat).
sub cg_allocator_metrics
{
	my ($section, $cfg, $n, $p1, $p2, $suffix) = @_;
	my @a = cg_allocator($p1);
	my @b = cg_allocator($p2);
	metric($section, $cfg, 'alloc_instr' . ($suffix // ''), cg_slope($a[0], $b[0], $n), 'instr');
	metric($section, $cfg, 'alloc_calls' . ($suffix // ''), cg_slope($a[1], $b[1], $n, 2), 'count');
	return;
}

# cg_breakdown_files(SECTION, CONFIG, N, PROFILE_N, PROFILE_2N): the
# library's self instructions per unit by function, the slope between two
# profiles (the twelve largest), as metrics of SECTION. Only the library's
# own code is counted (what it calls inside postgres or libc is not), so
# the sum is a lower bound of its Δ; it tells a developer which hook to trim.
sub cg_breakdown_files
{
	my ($section, $cfg, $n, $p1, $p2) = @_;
	return unless -s $p1 && -s $p2;
	my $f1 = cg_self_by_function($p1);
	my $f2 = cg_self_by_function($p2);
	my @rows;
	for my $fn (keys %$f2)
	{
		my $d = ($f2->{$fn} - ($f1->{$fn} // 0)) / $n;
		push @rows, [ sprintf('%.1f', $d), $fn ] if $d >= 0.5;
	}
	@rows = sort { $b->[0] <=> $a->[0] || "$a->[0]\t$a->[1]" cmp "$b->[0]\t$b->[1]" } @rows;
	metric($section, $cfg, $_->[1], $_->[0], 'instr') for grep { defined } @rows[ 0 .. 11 ];
	return;
}

# cg_self_by_object(PROFILE): { object => self instructions } (postgres,
# libc, pg_stat_waits.so, ...), read from the profile itself rather than
# from callgrind_annotate's rows, which leave code inlined from headers
# without an object and can merge functions of the same file and name in
# two objects (ld.so has its own copies of some of libc's string
# functions): 36-115 instructions per statement moved between libc and
# ld.so from one run to the next. In the profile every cost line belongs to
# the last "ob=" before it; the line after a "calls=" is the callee's
# inclusive cost, not self cost. The objects' sums equal the profile's
# "summary:".
sub cg_self_by_object
{
	my ($profile) = @_;
	my (%names, %self);
	my ($cur, $skip) = ('', 0);
	my $obname = sub {
		my ($s) = @_;
		return $s unless $s =~ /^\((\d+)\)(?: (.*))?$/;
		$names{$1} = $2 if defined $2 && $2 ne '';
		return $names{$1} // '';
	};
	open my $fh, '<', $profile or return {};
	while (my $l = <$fh>)
	{
		chomp $l;
		if ($l =~ /^ob=(.*)/) { $cur = $obname->($1); next; }
		if ($l =~ /^cob=(.*)/) { $obname->($1); next; }
		if ($l =~ /^calls=/) { $skip = 1; next; }
		next unless $l =~ /^[-+*0-9]/;
		if ($skip) { $skip = 0; next; }
		$self{$cur} += (split ' ', $l)[1] // 0;
	}
	close $fh;
	my %by;
	for my $o (keys %self)
	{
		my $name = (split m{/}, $o)[-1] // '';
		$name = '(code with no object name)' if $name eq '???';
		$by{$name} += $self{$o};
	}
	return \%by;
}

1;
