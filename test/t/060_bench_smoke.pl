# The benchmarks at unit size, so that ./run bench cannot rot unnoticed:
# every bench/t/*.pl runs in smoke mode (each measuring primitive once)
# through a prove of its own, each file's result one assertion here; then
# bench/report.pl renders a report from what they wrote, and the README's
# table from it and from the committed reports.
use strict;
use warnings;
use File::Basename qw(basename dirname);
use File::Copy qw(copy);
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $root = dirname(dirname($FindBin::RealBin));
my @files = sort glob("$root/bench/t/*.pl");
ok(@files > 0, 'benchmark files found (' . scalar(@files) . ')');

# The same module paths as the prove running this file: PostgreSQL's test
# modules (where PostgreSQL::Test::Utils came from), bench/lib, test/perl.
my $pg_perl = dirname(dirname(dirname($INC{'PostgreSQL/Test/Utils.pm'})));
my @inc = map { ('-I', $_) } $pg_perl, "$root/bench/lib", "$root/test/perl";

my $scratch = PostgreSQL::Test::Utils::tempdir('bench_smoke');
local $ENV{PSW_BENCH_DIR} = $scratch;
local $ENV{PSW_BENCH_MODE} = 'smoke';
local $ENV{PSW_BENCH_ONLY} = '';
my $t0 = time;
for my $file (@files)
{
	my $name = basename($file);
	my $t = time;
	my $out = '';
	my $ran = IPC::Run::run([ 'prove', @inc, $file ], '>&', \$out, IPC::Run::timeout(300));
	my $skipped = $out =~ /skipped: (.*)/ ? " (skipped: $1)" : '';
	ok($ran, sprintf('bench/t/%s in smoke mode, %.1f s%s', $name, time - $t, $skipped))
	  ? note($out)
	  : diag($out);
}
note(sprintf('bench files: %.1f s', time - $t0));

# The report, from what the sections wrote: a smoke run's is not a latest one.
my $major = `pg_config --version` =~ /PostgreSQL (\d+)/ ? $1 : 15;
my $version = `pg_config --version` =~ /PostgreSQL (\S+)/ ? $1 : '';
my $name = 'quick' . ($major eq '15' ? '' : "-$major");
my $out = PostgreSQL::Test::Utils::tempdir('bench_report');
my ($stdout, $stderr) = ('', '');
ok( IPC::Run::run(
		[
			'perl', "$root/bench/report.pl", '--dir', $scratch, '--out', $out, '--pg', $major,
			'--command', '(smoke)', '--seconds', int(time - $t0), '--mode', 'smoke'
		],
		'>', \$stdout, '2>', \$stderr),
	'report.pl renders the report') or diag($stderr);
ok(!-e "$out/latest.md" && !-e "$out/latest-$major.md", 'a smoke report is not a latest one');
my $report = -f "$out/$name.md" ? slurp_file("$out/$name.md") : '';
ok($report ne '', "report written ($name.md)");
like($report, qr/^# pg_stat_waits benchmarks \(smoke mode\)$/m, 'report says its mode');
like($report, qr/Machine:\*\* \d+ cores.*\n- \*\*PostgreSQL:\*\* postgres \(PostgreSQL\) \Q$version\E/,
	'report names machine and PostgreSQL');
like($report, qr/^## Acceptance checks\n.*^\| check \| target \| baseline \(same run\) \| measured \| verdict \|$/ms,
	'report has the acceptance table');
like($report, qr/^## 6\. Scaling$/m, 'report has the scaling section');
for my $chunk (sort glob("$scratch/[0-9]*.md"))
{
	ok(index($report, slurp_file($chunk)) >= 0, 'report carries chunk ' . basename($chunk));
}
is(-f "$out/$name.tsv" ? slurp_file("$out/$name.tsv") : undef,
	-f "$scratch/metrics.tsv" ? slurp_file("$scratch/metrics.tsv") : '', 'raw figures copied as TSV');

# The README's table from this run's figures, taken as a major's latest
# report: headed by the report's version, replacing the old block only.
my $rdir = PostgreSQL::Test::Utils::tempdir('bench_readme');
mkdir "$rdir/results";
copy("$out/$name.md", "$rdir/results/latest.md");
copy("$out/$name.tsv", "$rdir/results/latest.tsv");
open my $fh, '>', "$rdir/README.md" or die "$rdir/README.md: $!";
print $fh "# t\n<!-- bench-table begin -->\nstale\n<!-- bench-table end -->\ntail\n";
close $fh;
ok(IPC::Run::run([ 'perl', "$root/bench/report.pl", '--out', "$rdir/results", '--readme', "$rdir/README.md" ], '2>', \$stderr),
	'README table rendered') or diag($stderr);
my $readme = slurp_file("$rdir/README.md");
like($readme, qr/^\| check \| target \| \Q$version\E \|$/m, "README table headed by the report's version ($version)");
like($readme, qr/\A# t\n<!-- bench-table begin -->\n(?!.*stale).*<!-- bench-table end -->\ntail\n\z/s,
	'README table replaces the old block, keeps the rest');
ok(!IPC::Run::run([ 'perl', "$root/bench/report.pl", '--out', "$rdir/results", '--readme', "$rdir/results/latest.tsv" ],
		'>', \$stdout, '2>', \$stderr),
	'a README without the markers is an error');

# The committed README holds exactly what the committed reports generate: a
# figure edited by hand, or a report not carried over, fails.
copy("$root/README.md", "$rdir/README.committed.md");
IPC::Run::run([ 'perl', "$root/bench/report.pl", '--out', "$root/bench/results", '--readme', "$rdir/README.committed.md" ],
	'2>', \$stderr);
is(slurp_file("$rdir/README.committed.md"), slurp_file("$root/README.md"),
	"README's benchmark table is the one bench/report.pl generates") or diag($stderr);
done_testing();
