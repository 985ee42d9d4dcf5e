# Reading a bench run's raw figures: metrics.tsv (one figure a line:
# section, config, param, value, unit, note) and features.tsv (feature,
# 1|0, why not), and formatting a figure. Free of PostgreSQL's test modules,
# so that both the sections (through PswBench, under prove) and
# bench/report.pl (run as root outside prove) read them the same way.
package PswBench::Figures;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(slurp read_metrics read_features figure have fmt);

# slurp(FILE): its text, '' when it cannot be read.
sub slurp
{
	my ($file) = @_;
	open my $fh, '<', $file or return '';
	local $/;
	my $text = <$fh>;
	return $text // '';
}

# read_metrics(FILE): its rows, [section, config, param, value, unit, note].
sub read_metrics
{
	my @rows;
	for my $line (grep { $_ ne '' } split /\n/, slurp($_[0]))
	{
		my @f = split /\t/, $line, 6;
		push @f, '' while @f < 6;
		push @rows, \@f;
	}
	return \@rows;
}

# read_features(FILE): (value by feature, why not by feature), empty when
# the file is missing.
sub read_features
{
	my (%feat, %why);
	for my $line (split /\n/, slurp($_[0]))
	{
		my ($f, $v, $why) = split /\t/, $line, 3;
		$feat{$f} = $v;
		$why{$f} = $why if defined $why && $why ne '';
	}
	return (\%feat, \%why);
}

# figure(ROWS, SECTION, CONFIG, PARAM): the last value recorded, as written
# ("NA" included), '' when none.
sub figure
{
	my ($rows, $section, $cfg, $param) = @_;
	my $v = '';
	for my $m (@$rows)
	{
		$v = $m->[3] if $m->[0] eq $section && $m->[1] eq $cfg && $m->[2] eq $param;
	}
	return $v;
}

# have(VALUE): a measured figure (not undef, empty or NA).
sub have { return defined $_[0] && $_[0] ne '' && $_[0] ne 'NA'; }

# fmt(VALUE, DECIMALS): the number rounded, "n/a" for none.
sub fmt
{
	my ($v, $d) = @_;
	return 'n/a' unless have($v);
	return sprintf('%.*f', $d // 1, $v);
}

1;
