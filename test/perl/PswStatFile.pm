# Surgery on pg_stat/pg_stat_waits.stat for the persistence tests
# (403_stat_file.pl, 404_stat_file_damage.pl). The layout is
# src/core/stat_file.h's:
#   "PSWSTAT\0" | u32 format | u32 0
#   per section: char tag[8] | u32 version | u32 CRC-32C | u64 length | payload
#   "END\0\0\0\0\0" | u32 0 | u32 0 | u64 bytes before the trailer
package PswStatFile;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';

our @EXPORT = qw(stat_sections stat_section stat_as_format2 read_bytes write_bytes);

# stat_sections(BYTES): the sections in file order, each a hash of tag,
# version, head (offset of its header), off (of its payload) and len.
sub stat_sections
{
	my ($bytes) = @_;
	die "not a statistics file" unless substr($bytes, 0, 8) eq "PSWSTAT\0";
	my ($pos, @s) = (16);
	while (1)
	{
		my ($tag, $version, $crc, $len) = unpack('Z8 V V Q<', substr($bytes, $pos, 24));
		last if $tag eq 'END';
		push @s, { tag => $tag, version => $version, head => $pos, off => $pos + 24, len => $len };
		$pos += 24 + $len;
	}
	return @s;
}

sub stat_section
{
	my ($bytes, $tag) = @_;
	my ($s) = grep { $_->{tag} eq $tag } stat_sections($bytes);
	die "no section $tag" unless $s;
	return $s;
}

# stat_as_format2(BYTES): the same statistics as the previous format wrote
# them: format 2, no CRCs (zeros in their place).
sub stat_as_format2
{
	my ($bytes) = @_;
	substr($bytes, 8, 4) = pack('V', 2);
	substr($bytes, $_->{head} + 12, 4) = pack('V', 0) for stat_sections($bytes);
	return $bytes;
}

sub read_bytes
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "open $path: $!";
	local $/;
	my $b = <$fh>;
	close($fh);
	return $b;
}

sub write_bytes
{
	my ($path, $bytes) = @_;
	open(my $fh, '>:raw', $path) or die "open $path: $!";
	print $fh $bytes;
	close($fh) or die "close $path: $!";
	return;
}

1;
