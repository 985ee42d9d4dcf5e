#!/usr/bin/perl
# Checks what a release build of pg_stat_waits.so exports (nm -D
# --defined-only): only what PostgreSQL looks up in it, which is _PG_init,
# Pg_magic_func, the background-worker entry the sampler registers
# (bgw_function_name in src/), and each C function that sql/pg_stat_waits.sql
# (the current version), extension/*.sql (1.0 and the upgrade steps) or
# extension/*/*.sql (the pg_wait_sampling drop-in) names with its pg_finfo_
# record. Prints every other exported symbol (a test entry point, say) and
# every named function missing; exits 1 if any.
#   tools/check_exports.pl LIBRARY
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Find;

my $root = abs_path(dirname(abs_path($0)) . '/..');
my $lib = $ARGV[0] // die "usage: tools/check_exports.pl LIBRARY\n";

sub slurp
{
	open my $fh, '<', $_[0] or die "$_[0]: $!\n";
	local $/;
	return <$fh>;
}

my (%sql, %workers);
for my $f (glob "$root/sql/pg_stat_waits.sql $root/extension/*.sql $root/extension/*/*.sql")
{
	my $text = slurp($f);
	$sql{$1} = 1 while $text =~ /'MODULE_PATHNAME', *'([A-Za-z0-9_]*)'/g;
}
find(
	sub {
		return unless /\.cpp$/ && -f;
		my $text = slurp($_);
		$workers{$1} = 1 while $text =~ /bgw_function_name, "([A-Za-z0-9_]+)"/g;
	},
	"$root/src");
if (!%sql || !%workers)
{
	print STDERR "no SQL function or no worker entry found\n";
	exit 1;
}
my %allowed = map { $_ => 1 } '_PG_init', 'Pg_magic_func', keys %workers, keys %sql, map { "pg_finfo_$_" } keys %sql;

open my $nm, '-|', 'nm', '-D', '--defined-only', $lib or die "nm: $!\n";
my %exported = map { my @f = split; @f ? ($f[-1] => 1) : () } <$nm>;
close $nm;
if (!%exported)
{
	print STDERR "$lib: no exported symbol (not a library?)\n";
	exit 1;
}

my $bad = 0;
for my $s (sort grep { !$allowed{$_} } keys %exported)
{
	print "$lib exports $s: not a function of extension/*.sql nor one PostgreSQL looks up\n";
	$bad = 1;
}
for my $s (sort grep { !$exported{$_} } keys %allowed)
{
	print "$lib lacks $s, which extension/*.sql or the sampler's registration names\n";
	$bad = 1;
}
exit $bad;
