#!/usr/bin/perl
# Checks src/ against the layers docs/architecture.md draws (its "layers"
# block): a file includes only files of its own layer or of layers listed
# before it; a file under src/core includes no PostgreSQL header; under
# src/pg only the doors include PostgreSQL headers (pg.h, and the compat
# layer's compat*.h/.cpp, which need the headers pg.h leaves out for one
# major only); no file is longer than PSW_MAX_LINES (500). Prints each
# violation; exits 1 if any.
#   tools/check_layers.pl [PG_INCLUDEDIR_SERVER]
# A quoted include that is no file of the tree counts as a PostgreSQL
# header; with the argument, so does an angle-bracket include that names a
# file in PostgreSQL's server include directory (<postgres.h>).
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Spec;

my $root = abs_path(dirname(abs_path($0)) . '/..');
chdir $root or die "cannot chdir to $root: $!\n";
my $pg_inc = $ARGV[0] // '';
my $max_lines = $ENV{PSW_MAX_LINES} || 500;

# The layers, lowest first: "name path..." lines between ```layers and ```.
my @layers;    # [name, [paths]]
{
	open my $fh, '<', 'docs/architecture.md' or die "docs/architecture.md: $!\n";
	my $in = 0;
	while (<$fh>)
	{
		chomp;
		if (!$in) { $in = 1 if $_ eq '```layers'; next; }
		last if $_ eq '```';
		next if /^#/ || !/\S/;
		my ($name, @paths) = split ' ';
		push @layers, [ $name, \@paths ];
	}
}
if (!@layers)
{
	print STDERR "docs/architecture.md has no layers block\n";
	exit 1;
}

# layer_of(FILE): the index of the layer whose path (a folder ending in /,
# or a file) covers FILE, the most specific path winning; -1 if none.
sub layer_of
{
	my ($f) = @_;
	my ($best, $best_len) = (-1, 0);
	for my $i (0 .. $#layers)
	{
		for my $p (@{ $layers[$i][1] })
		{
			my $covers = $p =~ m{/$} ? index($f, $p) == 0 : $f eq $p;
			($best, $best_len) = ($i, length $p) if $covers && length $p > $best_len;
		}
	}
	return $best;
}
sub layer_name { return $_[0] >= 0 ? $layers[ $_[0] ][0] : '(none)'; }

# "a/b/../c" to "a/c", as realpath -m does for paths under the root.
sub normalize
{
	my @out;
	for my $part (split m{/}, $_[0])
	{
		next if $part eq '' || $part eq '.';
		if ($part eq '..') { pop @out; }
		else { push @out, $part; }
	}
	return join '/', @out;
}

my @files = do
{
	open my $git, '-|', 'git', 'ls-files', 'src/*.h', 'src/*.cpp' or die "git ls-files: $!\n";
	map { chomp; $_ } <$git>;
};
die "git ls-files found no source under src/\n" unless @files;

my $bad = 0;
for my $f (@files)
{
	open my $fh, '<', $f or die "$f: $!\n";
	my @lines = <$fh>;
	if (@lines > $max_lines)
	{
		printf "%s: %d lines (at most %d: split it by operation)\n", $f, scalar @lines, $max_lines;
		$bad = 1;
	}
	my $own = layer_of($f);
	if ($own < 0) { print "$f: in no layer of docs/architecture.md\n"; $bad = 1; next; }
	my $core = $f =~ m{^src/core/};
	# Everything else of src/pg reaches PostgreSQL through pg.h, so that
	# its headers come in one order, inside extern "C".
	my $door = $f =~ m{^src/pg/(?:pg\.h|compat[^/]*\.(?:h|cpp))$};
	my $what = $core ? 'core is PostgreSQL-free' : 'PostgreSQL headers only through src/pg/pg.h';
	for (@lines)
	{
		if (/^\s*#\s*include\s*"([^"]*)"/)
		{
			my $inc = $1;
			my $target = normalize(dirname($f) . "/$inc");
			if (-e $target)
			{
				my $to = layer_of($target);
				if ($to > $own)
				{
					printf "%s (%s) includes %s (%s): against the layers\n",
					  $f, layer_name($own), $target, layer_name($to);
					$bad = 1;
				}
			}
			elsif (!$door)
			{
				print "$f (" . layer_name($own) . ") includes \"$inc\", which is not in the tree: $what\n";
				$bad = 1;
			}
		}
		elsif ($pg_inc ne '' && !$door && /^\s*#\s*include\s*<([^>]*)>/ && -e "$pg_inc/$1")
		{
			print "$f (" . layer_name($own) . ") includes <$1>, a PostgreSQL header: $what\n";
			$bad = 1;
		}
	}
}
exit $bad;
