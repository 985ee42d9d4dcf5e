#!/usr/bin/perl
# Checks that the tests list themselves without ambiguity: every TAP file
# of test/t (NNN_name.pl) and every benchmark of bench/t (NN_name.pl) has a
# number no other file of its folder has (the numbers name the files in
# docs, commits and the schedule); and test/quick_schedule (./run test
# --quick's list) names only files of test/t, each once. Prints each
# violation; exits 1 if any.
#   tools/check_tests.pl
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname basename);

my $root = abs_path(dirname(abs_path($0)) . '/..');
chdir $root or die "cannot chdir to $root: $!\n";
my $bad = 0;

for my $dir ('test/t', 'bench/t')
{
	my %by_number;
	for my $f (sort glob("$dir/*.pl"))
	{
		my ($n) = basename($f) =~ /^(\d+)_/;
		if (!defined $n) { print "$f: no number (NNN_name.pl)\n"; $bad = 1; next; }
		push @{ $by_number{$n} }, $f;
	}
	for my $n (sort keys %by_number)
	{
		next if @{ $by_number{$n} } == 1;
		print "number $n is taken by " . join(' and ', @{ $by_number{$n} }) . ": renumber all but one\n";
		$bad = 1;
	}
}

my $schedule = 'test/quick_schedule';
if (open my $fh, '<', $schedule)
{
	my (%seen, $n);
	while (my $line = <$fh>)
	{
		$line =~ s/#.*//;
		$line =~ s/^\s+|\s+$//g;
		next if $line eq '';
		$n++;
		if ($line =~ m{/} || !-f "test/t/$line")
		{
			print "$schedule:$.: $line is not a file of test/t\n";
			$bad = 1;
		}
		if ($seen{$line}++)
		{
			print "$schedule:$.: $line is listed twice\n";
			$bad = 1;
		}
	}
	if (!$n) { print "$schedule lists no test\n"; $bad = 1; }
}
else
{
	print "$schedule: $!\n";
	$bad = 1;
}
exit $bad;
