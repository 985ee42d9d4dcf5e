# pg_stat_waits_report against a node of its own: a little workload, `top`
# driven in tmux (its screen read, quit with q, then with Ctrl-C), plain mode,
# the HTML report (its sections, charts and tables; rendered by headless
# Chromium, its SVG laid out, its screenshot not blank and showing each chart
# colour) and the error paths.
use strict;
use warnings;
use Encode qw(decode);
use File::Path qw(rmtree);
use File::Temp qw(tempdir);
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use PswTest;

my $node = psw_node('report');
$ENV{PGHOST} = $node->host;
$ENV{PGPORT} = $node->port;
$ENV{PGUSER} = scalar getpwuid($<);
my $db = 'psw_report';

# What `make install DESTDIR=...` put in the bindir.
my $bin = $node->config_data('--bindir') . '/pg_stat_waits_report';
ok(-x $bin, 'make install DESTDIR=stage installed pg_stat_waits_report into the bindir')
  or do { $node->stop; done_testing(); exit; };
my $tmp = tempdir('psw_report.XXXXXX', TMPDIR => 1, CLEANUP => 0);
chmod 0755, $tmp;
$ENV{HOME} = $tmp;    # chromium writes its crash and config files under HOME

# cmd(CMD...): runs CMD; returns (exit status, standard output and error).
sub cmd
{
	my $out = '';
	IPC::Run::run([@_], '>', \$out, '2>&1');
	return ($? >> 8, $out);
}
# value(SQL): one value from the report's database.
sub value { my (undef, $out) = cmd('psql', '-X', '-At', '-d', $db, '-c', $_[0]); chomp $out; return $out; }
# bg(CMD...): CMD in the background, its output dropped.
sub bg { return IPC::Run::start([@_], '>', '/dev/null', '2>&1'); }
sub psql_cmds { my $d = shift; return ('psql', '-X', '-q', '-d', $d, map { ('-c', $_) } @_); }

cmd(psql_cmds('postgres', "DROP DATABASE IF EXISTS $db", "CREATE DATABASE $db",
		"DROP DATABASE IF EXISTS ${db}_noext", "CREATE DATABASE ${db}_noext"));
cmd(psql_cmds($db, 'CREATE EXTENSION pg_stat_waits', 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
cmd('pgbench', '-q', '-i', '-s', '1', $db);

# Slow runs for the slowest-runs section: a statement blocked about 1.2 s
# on a row lock (its blocker to be named), and the holder's 1.5 s sleep.
cmd(psql_cmds($db, 'CREATE TABLE psw_slow (id int PRIMARY KEY)', 'INSERT INTO psw_slow VALUES (1)'));
{
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on -c pg_stat_waits.capture_min_duration=500';
	my $slow_holder = bg(psql_cmds($db, 'BEGIN', 'UPDATE psw_slow SET id = id WHERE id = 1',
			'SELECT pg_sleep(1.5)', 'COMMIT'));
	sleep 0.3;
	cmd(psql_cmds($db, 'UPDATE psw_slow SET id = id + 0 WHERE id = 1'));
	$slow_holder->finish;
}

# Workload, timed exactly: pgbench, one session holding a row lock for 8 s
# while another waits for it, and one sleeping session.
my @workload;
{
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	push @workload, bg('pgbench', '-n', '-c', '3', '-j', '1', '-T', '7', $db);
	push @workload, bg(psql_cmds($db, 'BEGIN', 'UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1',
			'SELECT pg_sleep(8)', 'COMMIT'));
	push @workload, bg(psql_cmds($db, "SET application_name = 'psw_report_sleeper'", 'SELECT pg_sleep(60)'));
	sleep 0.5;
	push @workload, bg(psql_cmds($db, 'UPDATE pgbench_branches SET bbalance = bbalance + 0 WHERE bid = 1'));
}
sleep 1.5;
my $sleeper_pid = value("SELECT pid FROM pg_stat_activity WHERE application_name = 'psw_report_sleeper'") || 'none';

# --- top in tmux: read the screen, quit with q, then again with Ctrl-C.
my $sock = "psw_report_$$";
my @tmux = ('tmux', '-L', $sock);
# The tmux server goes even when the test dies before it is killed below.
END { local $?; IPC::Run::run([ 'tmux', '-L', $sock, 'kill-server' ], '>', '/dev/null', '2>&1') if $sock; }
my $env = "PGHOST='$ENV{PGHOST}' PGPORT='$ENV{PGPORT}' PGUSER='$ENV{PGUSER}'";
sub screen { return decode('UTF-8', (cmd(@tmux, 'capture-pane', '-p', '-t', $_[0]))[1], Encode::FB_DEFAULT); }
# wait_exit(FILE): the exit line top's shell wrote, waiting up to 10 s for
# it (a shared machine once took more than 3 s to let top act on its key;
# the check is the exit status, not how fast).
sub wait_exit
{
	my $f = shift;
	my $text = '';
	for (1 .. 100)
	{
		# The shell creates the file before it writes the line: wait for the
		# whole line, not for the file.
		$text = -f $f ? slurp_file($f) : '';
		last if $text =~ /^EXIT=\d+\n/m;
		sleep 0.1;
	}
	return $text;
}
cmd(@tmux, '-f', '/dev/null', 'new-session', '-d', '-s', 'top', '-x', '150', '-y', '40',
	"env $env '$bin' top -d $db; echo EXIT=\$? > '$tmp/top1.exit'; sleep 60");
sleep 2.5;
my $screen = screen('top');
like($screen, qr/pg_stat_waits top/, 'top draws its header');
like($screen, qr/^$sleeper_pid .*Timeout:PgSleep/m, 'top shows the sleeping session with Timeout:PgSleep');
like($screen, qr/Lock:(transactionid|tuple)/, 'top shows the blocked session waiting on Lock');
# Whoever holds the row's tuple lock waits for the holder's transaction:
# its line names the holder under BLOCKED BY.
my $holder_pid = value("SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(8)'") || 'none';
like($screen, qr/\x{2190}\Q$holder_pid\E/, "top names the row lock's holder as a blocker");
my ($top_waits) = $screen =~ /(TOP WAITS.*?(?:^PID|\z))/ms;
like($top_waits // '', qr/%/, "top lists the last minute's waits");
cmd(@tmux, 'send-keys', '-t', 'top', 'q');
like(wait_exit("$tmp/top1.exit"), qr/^EXIT=0$/m, 'q quits top with status 0');
unlike(screen('top'), qr/pg_stat_waits top/, 'the terminal is restored after q (alternate screen left)');
cmd(@tmux, 'kill-session', '-t', 'top');
cmd(@tmux, '-f', '/dev/null', 'new-session', '-d', '-s', 'top2', '-x', '100', '-y', '20',
	"env $env '$bin' top -d $db; echo EXIT=\$? > '$tmp/top2.exit'; sleep 60");
# Until it has drawn (a machine shared with other builds may take more
# than a second to start it).
for (1 .. 50)
{
	sleep 0.2;
	$screen = screen('top2');
	last if $screen =~ /pg_stat_waits top/;
}
my ($widest) = sort { $b <=> $a } map { length } split /\n/, $screen;
ok($screen =~ /pg_stat_waits top/ && ($widest // 0) <= 100, 'top fits a 100x20 terminal')
  or diag($screen);
cmd(@tmux, 'send-keys', '-t', 'top2', 'C-c');
like(wait_exit("$tmp/top2.exit"), qr/^EXIT=0$/m, 'Ctrl-C quits top cleanly');
cmd(@tmux, 'kill-server');

# --- plain mode when stdout is not a terminal.
my ($rc, $out) = cmd($bin, 'top', '--once', '-d', $db);
is($rc, 0, 'top --once exits 0');
unlike($out, qr/\x1b/, 'plain mode has no escape sequences');
like($out, qr/^PID .*WAIT/m, 'plain mode prints the sessions table');
($rc, $out) = cmd($bin, 'top', '--count', '2', '--interval', '200ms', '-d', $db);
is(scalar(() = $out =~ /pg_stat_waits top/g), 2, 'top --count 2 prints two snapshots');

# --- the HTML report, written while the sleeper still sleeps.
my $html_file = "$tmp/report.html";
($rc, $out) = cmd($bin, 'report', '--since', '5min', '--html', $html_file, '-d', $db);
value("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'psw_report_sleeper'");
$_->finish for @workload;
is($rc, 0, 'report exits 0') or diag($out);
my $html = -f $html_file ? slurp_file($html_file) : '';
like($html, qr/^<!DOCTYPE html>/m, 'report wrote an HTML document');
my @urls = grep { $_ ne 'http://www.w3.org/2000/svg' } $html =~ m{(https?://[^"\n]*)}g;
ok($html !~ /<script|<link|src=|url\(|\@import/ && !@urls,
	'report is self-contained (no script, link, src=, url(), no URL but the SVG namespace)')
  or diag("URLs: @urls");
for my $obj (qw(load topsql blocking sessions top exact queries slowruns histograms status))
{
	like($html, qr/<section id="$obj">/, "report has the $obj section");
}

# section_of(ID): the lines from the one opening the section to the first
# closing one after it.
sub section_of
{
	my ($id) = @_;
	my ($in, @lines) = (0);
	for (split /\n/, $html)
	{
		if (!$in) { next if index($_, qq{<section id="$id">}) < 0; $in = 1; push @lines, $_; next; }
		push @lines, $_;
		$in = 0 if index($_, '</section>') >= 0;
	}
	return join("\n", @lines);
}
# Each section: data when the object exists, "not available" when not.
for (qw(sessions:pg_stat_waits_activity load:pg_stat_waits_history top:pg_stat_waits_top exact:pg_stat_waits
	queries:pg_stat_waits_profile queries:pg_stat_waits_queries histograms:pg_stat_waits_histogram
	slowruns:pg_stat_waits_executions status:pg_stat_waits_status))
{
	my ($s, $o) = split /:/;
	unlike(section_of($s), qr{no <code>$o</code>}, "section $s reads $o");
}
unlike($html, qr/could not read this section/, 'no section failed to read');
ok($html =~ m{<th>sampler_pid</th>} && $html =~ m{<th>samples_taken</th>},
	'status section lists sampler_pid and samples_taken');
my $areas = () = $html =~ /<polygon class="area"/g;
cmp_ok($areas, '>=', 1, "timeline chart has areas after the workload ($areas)");
like($html, qr/class="area" data-type="(CPU|Lock)"/, 'timeline chart shows CPU or Lock time');
like(section_of('sessions'), qr/<rect class="bar" data-type="Timeout"/,
	'sessions-now chart shows the sleeping session (Timeout)');
like($html, qr/<table class="top">/, 'top wait events table has rows');
like(section_of('queries'), qr/<table class="queries">/, 'sampled top queries table has rows');
like($html, qr/<table class="exact">/, 'exact wait events table has rows (workload ran with timing on)');
like($html, qr/<svg [^>]*class="chart histogram"/, 'histograms are drawn');
my $slowruns = section_of('slowruns');
ok($slowruns =~ /UPDATE psw_slow SET id = id \+ 0/ && $slowruns =~ /<svg [^>]*class="bar run"/,
	'slowest runs list the blocked UPDATE with a bar');
like($slowruns, qr/<rect class="seg" data-type="Lock"/, "the blocked UPDATE's Lock wait is a segment of its bar");
# Needs the sampler's lock-blocker lookup (it fills what this reads).
like($slowruns, qr/UPDATE psw_slow SET id = id \+ 0.*class="blocker">pid [0-9]/,
	'the blocked UPDATE names its blocker');
like($html, qr{<h3>exact(?:(?!</section>).)*<table class="queries">}s, 'exact top queries table has rows');

# --- rendered by Chromium: SVG elements laid out, screenshot not blank.
my @chrome = ('timeout', '90', 'chromium', '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
	'--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
	'--hide-scrollbars');
# A copy with a probe script (the report itself has none) that records
# what the browser built from the SVG.
my $probe_js = <<'JS';
<script>(function(){var s=document.querySelectorAll("svg");var a=document.querySelectorAll("svg.timeline polygon.area");var w=0;a.forEach(function(e){if(e instanceof SVGPolygonElement){var b=e.getBBox();w+=b.width*b.height;}});var r=document.querySelectorAll("svg.events rect.bar");var rb=0;r.forEach(function(e){if(e instanceof SVGRectElement&&e.getBBox().width>0)rb++;});var g=document.querySelectorAll("svg.run rect.seg");var gb=0;g.forEach(function(e){if(e instanceof SVGRectElement&&e.getBBox().width>0)gb++;});document.body.setAttribute("data-probe","svgs="+s.length+" areas="+a.length+" area_px="+Math.round(w)+" bars="+rb+" runsegs="+gb);})();</script></body>
JS
chomp $probe_js;
(my $probe_html = $html) =~ s{</body>}{$probe_js};
PostgreSQL::Test::Utils::append_to_file("$tmp/probe.html", $probe_html);
chmod 0644, "$tmp/probe.html", $html_file;
my $dom = '';
IPC::Run::run([ @chrome, "--user-data-dir=$tmp/chromium-dom", '--dump-dom', "file://$tmp/probe.html" ],
	'>', \$dom, '2>', "$tmp/chromium.log");
my ($probe) = $dom =~ /data-probe="([^"]*)"/;
$probe //= 'none';
note("chromium probe: $probe");
like($probe, qr/svgs=[1-9]/, "chromium parsed the report's SVG charts");
like($probe, qr/bars=[1-9]/, 'chromium laid out the sessions-now bars');
like($probe, qr/runsegs=[1-9]/, "chromium laid out the slowest runs' bars");
like($probe, qr/areas=$areas area_px=[1-9]/, "chromium laid out the chart's areas with non-zero size");
IPC::Run::run([ @chrome, "--user-data-dir=$tmp/chromium-shot", '--window-size=1200,1400',
		"--screenshot=$tmp/report.png", "file://$html_file" ], '>>', "$tmp/chromium.log", '2>&1');
ok(-s "$tmp/report.png", 'chromium wrote a screenshot');
if (-s "$tmp/report.png")
{
	my %colours;
	$colours{$1} = 1 while $html =~ /class="(?:area|bar)" data-type="[^"]*"[^>]* fill="(#[0-9a-f]*)"/g;
	my (undef, $stats) = cmd('/usr/bin/python3', "$FindBin::RealBin/../report/png_stats.py", "$tmp/report.png",
		sort keys %colours);
	my ($first, @per_colour) = grep { /\S/ } split /\n/, $stats;
	note("screenshot: " . ($first // ''));
	my (undef, undef, $nonwhite, $distinct) = split ' ', $first // '';
	ok(($nonwhite // 0) > 0.02 && ($distinct // 0) > 20, 'screenshot is not blank (>2% non-white, >20 colours)');
	# The colours the charts use follow the wait types the workload happened
	# to show; the sessions-now bar (Timeout) and a timeline area (CPU or
	# Lock, both asserted above) make at least two. One check covers them
	# all, so the suite's count of checks does not follow the workload.
	cmp_ok(scalar @per_colour, '>=', 2, 'screenshot is checked for at least two chart colours');
	my @faint;
	for (@per_colour)
	{
		my ($c, $n) = split ' ';
		note("chart colour $c: $n px");
		push @faint, "$c ($n px)" if $n < 30;
	}
	ok(!@faint, 'screenshot shows every chart colour on at least 30 px' . (@faint ? " (not: @faint)" : ''));
}

# --- errors are clear.
($rc, $out) = cmd($bin, 'top', '--once', '-h', '127.0.0.1', '-p', PostgreSQL::Test::Cluster::get_free_port());
ok($rc == 1 && $out =~ /cannot connect to the server/, 'unreachable server: exit 1 and a clear message')
  or diag("exit $rc: $out");
($rc, $out) = cmd($bin, 'report', '--html', "$tmp/x.html", '-d', "${db}_noext");
ok($rc == 1 && $out =~ /not installed in database "${db}_noext".*CREATE EXTENSION pg_stat_waits/,
	'database without the extension: exit 1 and says CREATE EXTENSION')
  or diag("exit $rc: $out");
ok(!-e "$tmp/x.html", 'no report file written on error');
($rc, $out) = cmd($bin, 'report', '--since', '5', 'parsecs', '--html', "$tmp/y.html");
is($rc, 2, 'bad duration is a usage error (exit 2)');
($rc, $out) = cmd($bin, 'top', '--once', '-d', "host=$ENV{PGHOST} port=$ENV{PGPORT} dbname=$db");
is($rc, 0, '-d accepts a connection string') or diag($out);
{
	local $ENV{PGDATABASE} = $db;
	($rc, $out) = cmd($bin, 'top', '--once');
	is($rc, 0, 'PGDATABASE and friends are honoured') or diag($out);
}

cmd(psql_cmds('postgres', "DROP DATABASE IF EXISTS ${db}_noext"));
if (Test::More->builder->is_passing) { rmtree($tmp); }
else { diag("report suite files kept in $tmp"); }
$node->stop;
done_testing();
