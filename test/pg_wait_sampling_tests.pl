#!/usr/bin/perl
# pg_wait_sampling's own regression tests, as a user switching to pg_stat_waits
# runs them: test/sql/pg_wait_sampling_{load,queries}.sql and their expected
# output are pg_wait_sampling's sql/ and expected/ files with only the
# CREATE/DROP EXTENSION pg_wait_sampling lines replaced by creating and dropping
# pg_wait_sampling_compat; every query in between is theirs, unchanged.
#
#   test/pg_wait_sampling_tests.pl DIR          regenerate from DIR (a release's sql/, expected/)
#   test/pg_wait_sampling_tests.pl --check DIR  exit 1 if the committed files differ from DIR's
# DIR here: ../shared/compat-tests/pg_wait_sampling (pg_wait_sampling 1.1.4's tests, kept as data).
# Exit 2: DIR's files lack the lines to replace.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);

my $check = @ARGV && $ARGV[0] eq '--check';
shift @ARGV if $check;
my $src = $ARGV[0] // die "usage: $0 [--check] DIR\n";
my $here = dirname(abs_path($0));

sub slurp
{
	open my $fh, '<:raw', $_[0] or die "$_[0]: $!\n";
	local $/;
	return <$fh>;
}

# The two lines that change; the rest passes through byte for byte.
# CASCADE creates pg_stat_waits where it is missing; its NOTICE depends on
# that, so notices are quiet for this one statement.
sub swap
{
	my ($text) = @_;
	$text =~ s/^CREATE EXTENSION pg_wait_sampling;$/SET client_min_messages = warning;\nCREATE EXTENSION pg_wait_sampling_compat CASCADE;\nRESET client_min_messages;/mg;
	$text =~ s/^DROP EXTENSION pg_wait_sampling;$/DROP EXTENSION pg_wait_sampling_compat;/mg;
	return $text;
}

my $status = 0;
# load_1.out is the expected output of psql 10 and later (load.out: 9.x).
for my $pair ([ 'sql/load.sql', 'sql/pg_wait_sampling_load.sql' ],
	[ 'expected/load_1.out', 'expected/pg_wait_sampling_load.out' ],
	[ 'sql/queries.sql', 'sql/pg_wait_sampling_queries.sql' ],
	[ 'expected/queries.out', 'expected/pg_wait_sampling_queries.out' ])
{
	my ($from, $to) = ("$src/$pair->[0]", "$here/$pair->[1]");
	my $text = slurp($from);
	if ($text !~ /^CREATE EXTENSION pg_wait_sampling;$/m || $text !~ /^DROP EXTENSION pg_wait_sampling;$/m)
	{
		print STDERR "$from: no CREATE/DROP EXTENSION pg_wait_sampling line\n";
		exit 2;
	}
	my $want = swap($text);
	if (!$check)
	{
		open my $fh, '>:raw', $to or die "$to: $!\n";
		print $fh $want;
		close $fh or die "$to: $!\n";
		next;
	}
	next if -e $to && slurp($to) eq $want;
	# Where they differ, diff -u shows how.
	open my $diff, '|-', 'diff', '-u', $to, '-' or die "diff: $!\n";
	print $diff $want;
	close $diff;
	print STDERR "$to differs from $from\n";
	$status = 1;
}
exit $status;
