# tools/pg/versions.tsv is the one list of the PostgreSQL majors; what cannot
# read it at run time must agree with it: debian/pgversions (pg_buildext's
# list), debian/control (pg_buildext updatecontrol's packages, one pair per
# major) and the README's paragraph on what is tested where, which this test
# writes from the table and compares. Each row must be complete, and a pinned
# tarball found next to the checkout must have its row's sha256.
use strict;
use warnings;
use FindBin;
use Digest::SHA;
use Test::More;

my $root = "$FindBin::RealBin/../..";

sub slurp
{
	open my $fh, '<', $_[0] or die "$_[0]: $!\n";
	local $/;
	return <$fh>;
}

my @rows;
for my $line (split /\n/, slurp("$root/tools/pg/versions.tsv"))
{
	next if $line =~ /^#/ || $line !~ /\S/;
	my %r;
	@r{qw(major source sha256 ci cassert recreate)} = split /\t/, $line;
	push @rows, \%r;
}
my @majors = map { $_->{major} } @rows;
cmp_ok(scalar(@rows), '>=', 2, 'versions.tsv lists the majors');

for my $r (@rows)
{
	my $m = $r->{major};
	like($m, qr/^\d+$/, "major $m is a number");
	like($r->{ci}, qr/^(full|full\+sqlsmith|quick|none)$/, "$m: ci is full, full+sqlsmith, quick or none");
	like($r->{cassert}, qr/^(yes|no)$/, "$m: cassert is yes or no");
	if ($r->{source} =~ /^debian:/)
	{
		is($r->{sha256}, '-', "$m: a Debian package has no sha256");
		next;
	}
	like($r->{source}, qr/^postgresql-$m(?!\d)\S*\.tar\.bz2$/, "$m: the tarball's name names the major");
	like($r->{sha256}, qr/^[0-9a-f]{64}$/, "$m: a sha256");
	like($r->{recreate} // '', qr/\Q$r->{source}\E|apt-get source/, "$m: the command that recreates the tarball");
	my ($file) = grep { -f $_ } map { "$_/pg-src/$r->{source}" } ("$root/../shared", "$root/../../shared");
	SKIP:
	{
		skip "$r->{source} is not next to this checkout", 1 unless $file;
		is(Digest::SHA->new(256)->addfile($file)->hexdigest, $r->{sha256}, "$m: the pinned tarball's sha256");
	}
}

is_deeply([ grep { /\S/ } split /\n/, slurp("$root/debian/pgversions") ], \@majors,
	'debian/pgversions lists the majors of versions.tsv');
my @control = slurp("$root/debian/control") =~ /^Package: postgresql-(\d+)-pg-stat-waits$/mg;
is_deeply(\@control, \@majors, 'debian/control has a package per major (pg_buildext updatecontrol)');
my @dropin = slurp("$root/debian/control") =~ /^Package: postgresql-(\d+)-pg-wait-sampling-dropin$/mg;
is_deeply(\@dropin, \@majors, 'debian/control has a pg_wait_sampling drop-in package per major');

# The README's paragraph, as the table says it.
sub list_text
{
	my @l = @_;
	return $l[0] if @l == 1;
	return join(', ', @l[ 0 .. $#l - 1 ]) . " and $l[-1]";
}

sub describe
{
	my ($r) = @_;
	my $what;
	if ($r->{source} =~ /^debian:/) { $what = "Debian's package" }
	elsif ($r->{source} =~ /^postgresql-(\S+?)-[0-9a-f]+\.src\.tar\.bz2$/) { $what = "REL_$r->{major}_STABLE at $1" }
	elsif ($r->{source} =~ /^postgresql-\d+_(\S+)\.orig\.tar\.bz2$/) { $what = $1 }
	$what .= ', assertions on' if $r->{cassert} eq 'yes';
	$what .= ', plus a bounded sqlsmith run' if $r->{ci} eq 'full+sqlsmith';
	return "$r->{major} ($what)";
}
my @full = map { describe($_) } grep { $_->{ci} =~ /^full/ } @rows;
my @quick = map { describe($_) } grep { $_->{ci} eq 'quick' } @rows;
my $text = "PostgreSQL $majors[0] to $majors[-1] build from one source tree. CI runs the whole suite on "
  . list_text(@full);
$text .= ', and `./run test --quick` (the builds, pg_regress, the isolation specs and the TAP files '
  . 'that differ between majors) on ' . list_text(@quick) if @quick;
$text .= '. The majors and their sources: [tools/pg/versions.tsv](tools/pg/versions.tsv).';
my ($readme) = slurp("$root/README.md") =~ /<!-- tested-where begin -->\n(.*?)\n<!-- tested-where end -->/s;
$readme =~ s/\s+/ /g if defined $readme;
is($readme, $text, 'the README says what is tested where as versions.tsv does');
done_testing();
