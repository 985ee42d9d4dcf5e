#!/usr/bin/perl
# `make && make install`, as a DBA runs it on a database server, where
# pg_stat_waits_report's libraries are missing: the extension and the
# pg_wait_sampling drop-in must build and install all the same, and make
# must name the packages that would add the report tool. Three cases, each
# in a mount namespace of its own (root: unshare -m), from a copy of the
# sources in SCRATCH_DIR built with -j2:
#   none       the headers and .pc files of libpqxx, prometheus-cpp,
#              yaml-cpp, civetweb and libxcrypt are hidden;
#   some       only yaml-cpp's and civetweb's are hidden (libpqxx and
#              prometheus-cpp found: the case that failed on a fresh server);
#   all        nothing hidden: both are built and installed.
# Hidden means absent: an overlay over each directory that holds them, with
# a whiteout per file or folder. The extension's objects do not depend on
# those libraries and stay in SCRATCH_DIR between cases and runs (one build
# of each, as step_release_symbols keeps its own); every case installs into
# an empty DESTDIR. Prints one line per check and "N passed, N failed".
#   tools/check_make_install.pl PG_CONFIG SCRATCH_DIR
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Path qw(make_path remove_tree);

my ($pg_config, $dir) = @ARGV;
die "usage: $0 PG_CONFIG SCRATCH_DIR\n" unless $pg_config && $dir;
die "$0: needs root (mount namespaces)\n" unless $> == 0;
my $root = dirname(dirname(abs_path($0)));
my %pg = map { chomp(my $v = `'$pg_config' --$_`); ($_ => $v) } qw(pkglibdir sharedir bindir);
die "$0: $pg_config does not answer\n" unless $pg{pkglibdir};

# Each library: what it puts into an include directory and a pkg-config
# directory (Debian's and RPM's layouts; globs for prometheus-cpp's .pc files).
my %lib_files = (
	libpqxx => [ 'pqxx', 'libpqxx.pc' ],
	'prometheus-cpp' => [ 'prometheus', 'prometheus-cpp-*.pc' ],
	'yaml-cpp' => [ 'yaml-cpp', 'yaml-cpp.pc' ],
	civetweb => [ 'CivetServer.h', 'civetweb.h', 'civetweb.pc' ],
	libxcrypt => [ 'crypt.h', 'libxcrypt.pc', 'libcrypt.pc' ],
);
chomp(my $pc_path = `pkg-config --variable pc_path pkg-config`);
my @search = ('/usr/include', '/usr/local/include', split(/:/, $pc_path));

# parent directory => [names present there] for the given libraries.
sub files_of
{
	my %by_dir;
	for my $lib (@_)
	{
		for my $pattern (@{ $lib_files{$lib} })
		{
			for my $d (@search)
			{
				for my $path (glob("$d/$pattern"))
				{
					push @{ $by_dir{$d} }, substr($path, length($d) + 1) if -e $path || -l $path;
				}
			}
		}
	}
	return \%by_dir;
}

# The shell run inside the namespace: hide, check it is hidden, build, install.
sub case_script
{
	my ($by_dir, $destdir) = @_;
	my $s = "set -e\nt=\$(mktemp -d)\nmount -t tmpfs tmpfs \"\$t\"\n";
	my $i = 0;
	for my $d (sort keys %$by_dir)
	{
		$i++;
		$s .= "mkdir \"\$t/u$i\" \"\$t/w$i\"\n";
		$s .= "mknod \"\$t/u$i/$_\" c 0 0\n" for @{ $by_dir->{$d} };
		$s .= "mount -t overlay overlay -o \"lowerdir=$d,upperdir=\$t/u$i,workdir=\$t/w$i\" '$d'\n";
		$s .= "test ! -e '$d/$_'\n" for @{ $by_dir->{$d} };
	}
	$s .= "cd '$dir/src'\nmake -j2 PG_CONFIG='$pg_config'\nmake install PG_CONFIG='$pg_config' DESTDIR='$destdir'\n";
	return $s;
}

my ($passed, $failed) = (0, 0);
sub check
{
	my ($ok, $what) = @_;
	print(($ok ? 'ok' : 'not ok') . " - $what\n");
	$ok ? $passed++ : $failed++;
	return $ok;
}

make_path("$dir/src/tools");
system('rsync', '-a', '--delete', '--exclude', '*.o', '--exclude', '*.d', '--exclude', '*.bc', '--exclude', '*.so',
	'--exclude', 'pg_stat_waits_report', '--exclude', '.psw-build-kind',
	map({ "$root/$_" } qw(Makefile sources.mk pg_stat_waits.control extension sql src)), "$dir/src/") == 0
  or die "$0: cannot copy the sources\n";
system('rsync', '-a', '--delete', '--exclude', '*.o', '--exclude', '*.d', '--exclude', '*.so',
	'--exclude', 'pg_stat_waits_report', "$root/tools/report", "$dir/src/tools/") == 0
  or die "$0: cannot copy the report tool's sources\n";

my @all_libs = sort keys %lib_files;
my @cases = (
	[ none => \@all_libs, [qw(libpqxx-dev prometheus-cpp-dev libyaml-cpp-dev libcivetweb-dev libcrypt-dev)],
		[qw(libpqxx-devel prometheus-cpp-devel yaml-cpp-devel civetweb-devel libxcrypt-devel)] ],
	[ some => [ 'yaml-cpp', 'civetweb' ], [qw(libyaml-cpp-dev libcivetweb-dev)], [qw(yaml-cpp-devel civetweb-devel)] ],
	[ all => [], [], [] ],
);
for my $case (@cases)
{
	my ($name, $hide, $deb, $rpm) = @$case;
	my $destdir = "$dir/destdir-$name";
	remove_tree($destdir);
	my $by_dir = files_of(@$hide);
	my $t0 = time;
	my $out = `unshare -m --propagation private sh -c '@{[ case_script($by_dir, $destdir) =~ s/'/'\\''/gr ]}' 2>&1`;
	my $rc = $? >> 8;
	my $hidden = join(', ', map { my $d = $_; map { "$d/$_" } @{ $by_dir->{$d} } } sort keys %$by_dir);
	check($rc == 0, sprintf("%s: make && make install exit 0 (%d s; hidden: %s)", $name, time - $t0, $hidden || 'nothing'))
	  or print map { "#   $_\n" } grep { defined } (split /\n/, $out)[-30 .. -1];
	check(-f "$destdir$pg{pkglibdir}/pg_stat_waits.so" && -f "$destdir$pg{sharedir}/extension/pg_stat_waits.control",
		"$name: the extension is installed");
	check(-f "$destdir$pg{sharedir}/extension/pg_wait_sampling.control", "$name: the pg_wait_sampling drop-in is installed");
	check(-f "$destdir$pg{sharedir}/extension/pg_stat_waits_citus.control"
		  && -f "$destdir$pg{sharedir}/extension/pg_stat_waits_citus--1.0.sql",
		"$name: pg_stat_waits_citus is installed");
	my $report = "$destdir$pg{bindir}/pg_stat_waits_report";
	if (@$hide)
	{
		check(!-e $report, "$name: pg_stat_waits_report is not installed");
		my @named = grep { $out =~ /\Q$_\E/ } @$deb, @$rpm;
		check(@named == @$deb + @$rpm && $out =~ /pg_stat_waits_report .* is not built/,
			"$name: make names the packages that add it (@$deb; @$rpm)")
		  or print "#   named only: @named\n";
		my @extra = grep { $out =~ /\Q$_\E/ } qw(libpqxx-dev prometheus-cpp-dev libcrypt-dev);
		@extra = grep { my $p = $_; !grep { $_ eq $p } @$deb } @extra;
		check(!@extra, "$name: and no package that is installed") or print "#   also named: @extra\n";
	}
	else
	{
		check(-x $report && `'$report' --version` =~ /^pg_stat_waits_report /, "$name: pg_stat_waits_report is built and runs");
		check($out !~ /is not built/, "$name: make names no missing package");
	}
}
print "$passed passed, $failed failed\n";
exit($failed ? 1 : 0);
