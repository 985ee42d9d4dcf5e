# pg_stat_waits_report's live page (serve, /report/NAME) and report
# --compare, against a node of its own: the demo's workload (pgbench, one
# session holding a row others want), then a lock storm (one session idle in
# transaction on a row, four blocked behind it). A real headless Chromium
# (test/report/cdp_page.py) loads the page, clicks its own slice and window
# links, and measures it at 1400 and 800 px. Also the last bucket's load
# against the activity view, and the sampled against the exact shares of the
# top statements.
use strict;
use warnings;
use File::Path qw(rmtree);
use File::Temp qw(tempdir);
use FindBin;
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use POSIX qw(fmod);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use PswTest;

my $node = psw_node('live_report');
$ENV{PGHOST} = $node->host;
$ENV{PGPORT} = $node->port;
$ENV{PGUSER} = scalar getpwuid($<);
my $db = 'psw_live';
my $bin = $node->config_data('--bindir') . '/pg_stat_waits_report';
my $tmp = tempdir('psw_live.XXXXXX', TMPDIR => 1, CLEANUP => 0);
chmod 0755, $tmp;

# cmd(CMD...): runs CMD; returns (exit status, standard output and error).
sub cmd
{
	my $out = '';
	IPC::Run::run([@_], '>', \$out, '2>&1');
	return ($? >> 8, $out);
}
sub psql_cmds { my $d = shift; return ('psql', '-X', '-q', '-d', $d, map { ('-c', $_) } @_); }
# value(SQL): what SQL returns in the test's database ('|' between columns,
# a line per row).
sub value { my (undef, $out) = cmd('psql', '-X', '-At', '-d', $db, '-c', $_[0]); chomp $out; return $out; }
# bg(CMD...): CMD in the background, its output dropped.
sub bg { return IPC::Run::start([@_], '>', '/dev/null', '2>&1'); }
sub report { my ($rc, $out) = cmd($bin, 'report', @_, '-d', $db); note($out) if $rc; return $rc; }
sub mean { my $t = 0; $t += $_ for @_; return @_ ? $t / @_ : 0; }

cmd(psql_cmds('postgres', "DROP DATABASE IF EXISTS $db", "CREATE DATABASE $db"));
cmd(psql_cmds($db, 'CREATE EXTENSION pg_stat_waits', 'CREATE EXTENSION pg_stat_statements',
		'CREATE TABLE psw_hold (id int PRIMARY KEY, v int)', 'INSERT INTO psw_hold VALUES (1, 0)',
		'CREATE TABLE psw_polls (t float8, n int)'));
cmd('pgbench', '-q', '-i', '-s', '2', $db);

my $port = PostgreSQL::Test::Cluster::get_free_port();
my @procs;
my $serve = IPC::Run::start([ $bin, 'serve', '--listen', "127.0.0.1:$port",
		'--target', "live=host=$ENV{PGHOST} port=$ENV{PGPORT} dbname=$db user=$ENV{PGUSER}" ],
	'>', "$tmp/serve.log", '2>&1');
# Background processes go even when the test dies.
END { local $?; $_->kill_kill for grep { $_->pumpable } grep { defined } $serve, @procs; }
my $base = "http://127.0.0.1:$port/report/live";

# --- the demo's workload (tools/demo/demo.pl: pgbench, a session holding a
# teller's row 3 s at a time, another queued behind it), timed exactly,
# from a reset on. pgbench runs through the storm and the browser checks.
value('SELECT pg_stat_waits_reset()');
my $t0 = value('SELECT extract(epoch FROM now())');
my ($pgbench, $demo_holder, $demo_waiter);
{
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	push @procs, $pgbench = bg('pgbench', '-n', '-c', '4', '-j', '2', '-T', '400', $db);
	push @procs, $demo_holder = bg(psql_cmds($db,
			map { ('BEGIN', 'UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1',
					'SELECT pg_sleep(3)', 'COMMIT') } 1 .. 3));
	sleep 0.5;
	push @procs, $demo_waiter =
	  bg(psql_cmds($db, ('UPDATE pgbench_tellers SET tbalance = tbalance - 1 WHERE tid = 1') x 3));
}

# --- pg_stat_waits_timeline's last bucket (10 s, still filling) against
# the activity view polled during it: from the bucket's start (multiples
# of 10 s), for about 5 s of its 10, so a bucket divided by its full width
# would read about half and fail. The same sessions on both sides: not
# idle, not in a background process's main-loop wait (Activity), not the
# sampler (which does not sample itself). One session polls every 50 ms,
# committing between polls so each reads the live state: pgbench's
# sessions go idle between statements, and a few polls of that are noise
# of 10% and more. The polling session is active through the window and
# counts on both sides. The sampler's ticks in the window are noted: a
# sampler starved of CPU skips ticks, and the bucket reads low by as much.
sleep value('SELECT 10.05 - extract(epoch FROM clock_timestamp())::numeric % 10');
my $ticks0 = value('SELECT samples_taken FROM pg_stat_waits_status');
my ($poll_rc, $poll_out) = cmd(psql_cmds($db, 'SET synchronous_commit = off', q{DO $$ BEGIN FOR i IN 1 .. 100 LOOP
		INSERT INTO psw_polls SELECT extract(epoch FROM clock_timestamp()), count(*) FILTER (WHERE state
		IS DISTINCT FROM 'idle' AND wait_event_type IS DISTINCT FROM 'Activity'
		AND pid IS DISTINCT FROM (SELECT sampler_pid FROM pg_stat_waits_status)) FROM pg_stat_waits_activity;
		COMMIT; PERFORM pg_sleep(0.05); END LOOP; END $$}));
note("polling: $poll_out") if $poll_rc;
my ($tl_start, $tl_aas, $tl_age, $ticks) = split /\|/, value("SELECT extract(epoch FROM bucket_start), sum(avg_active),
	max(extract(epoch FROM clock_timestamp() - bucket_start)), (SELECT samples_taken - $ticks0 FROM pg_stat_waits_status)
	FROM pg_stat_waits_timeline('1 min', '10 s') WHERE wait_event_type IS DISTINCT FROM 'Activity' GROUP BY 1 ORDER BY 1 DESC LIMIT 1");
my @polls = map { [ split /\|/ ] } split /\n/, value('SELECT t, n FROM psw_polls ORDER BY t');
my @during = map { $_->[1] } grep { $_->[0] >= ($tl_start // 0) } @polls;
my $act_avg = mean(@during);
note(sprintf("timeline's last bucket (at second %.1f, %.1f s old, %s sampler ticks): %s sessions; activity view"
		. " during it: %.2f (%d polls from second %.1f: %s)", fmod($tl_start // 0, 60), $tl_age // 0, $ticks // '?',
		$tl_aas // 'none', $act_avg, scalar @during, @polls ? fmod($polls[0][0], 60) : -1,
		join(' ', map { $_->[1] } @polls)));
ok(@during >= 60 && $act_avg > 0 && ($tl_aas // 0) >= 0.8 * $act_avg && ($tl_aas // 0) <= 1.2 * $act_avg,
	"pg_stat_waits_timeline's last (partial) bucket is within 20% of the sessions the activity view showed");

# --- sampled and exact shares of each of the demo workload's top 5
# statements, both since the reset (exact times count from it; the window
# starts there). A share from fewer than 100 samples (1 s of session time)
# is noise of +-10 points or more: the workload runs until each of the top
# 5 has 100 (at most 90 s; pgbench's lighter statements take longest).
my (@rows, @shares, $n5);
for (my $waited = 0;; $waited += 10)
{
	report('--from', $t0, '--top', '5', '--html', "$tmp/demo.html");
	my $page = -f "$tmp/demo.html" ? slurp_file("$tmp/demo.html") : '';
	@rows = $page =~ /(<tr class="topsql"[^>]*>)/g;
	# [samples, CPU share sampled, CPU share exact] of each row with all three.
	@shares = map {
		/data-samples="([0-9]+)" data-load="[0-9.]*" data-cpu-sampled="([0-9.]+)" data-cpu-exact="([0-9.]+)"/
		  ? [ $1, $2, $3 ] : ()
	} @rows;
	$n5 = grep { $_->[0] >= 100 } @shares;
	last if $n5 >= 5 || $waited >= 90;
	sleep 10;
}
note(sprintf('after %d s, top 5 statements\' samples, CPU share sampled / exact: %s',
		value("SELECT round(extract(epoch FROM now()) - $t0)"), join(';', map { "@$_" } @shares)));
is($n5, 5, sprintf('each of the top 5 statements has 100 samples and both shares (%d rows, %d with both)',
		scalar @rows, $n5));
ok(@shares == 5 && !(grep { abs($_->[1] - $_->[2]) > 15 } @shares),
	'their sampled and exact CPU shares agree within 15 points');

# --- a calm window (pgbench alone) to compare the storm with.
$_->finish for $demo_holder, $demo_waiter;
my $calm_from = value('SELECT extract(epoch FROM now())');
sleep 8;
my $calm_to = value('SELECT extract(epoch FROM now())');

# --- the lock storm: a holder idle in transaction, four sessions behind it.
my ($storm_holder, $storm_pid, $storm_from, @waiters);
{
	local $ENV{PGOPTIONS} = '-c pg_stat_waits.timing=on';
	$storm_holder = $node->background_psql($db, on_error_stop => 0);
	$storm_pid = $storm_holder->query_safe('SELECT pg_backend_pid()');
	$storm_from = value("SELECT extract(epoch FROM now() + interval '2 seconds')");
	$storm_holder->query_safe('BEGIN; UPDATE psw_hold SET v = v + 1 WHERE id = 1;');
	sleep 1;
	push @procs, @waiters = map { bg(psql_cmds($db, "UPDATE psw_hold SET v = v + $_ WHERE id = 1")) } 1 .. 4;
}
my $holder_pid = value("SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' AND pid = $storm_pid");
# Sessions in the activity view while the last 10 s bucket fills (the
# same rule as load: active, not idle, client backends).
my @counts;
sleep 10;
for (1 .. 12)
{
	push @counts, value("SELECT count(*) FROM pg_stat_waits_activity WHERE backend_type = 'client backend'
		AND state = 'active' AND pid <> pg_backend_pid()");
	sleep 0.5;
}
my $t2 = value('SELECT extract(epoch FROM now())');
report('--since', '2min', '--bucket', '10s', '--html', "$tmp/storm.html");
my ($last) = (-f "$tmp/storm.html" ? slurp_file("$tmp/storm.html") : '') =~ /class="last-bucket">([0-9.]*)/;
my $active_avg = mean(@counts);
note(sprintf('last bucket: %s sessions; activity view during it: %.2f (%s)', $last // 'none', $active_avg, "@counts"));
ok($active_avg > 0 && ($last || 0) >= 0.8 * $active_avg && ($last || 0) <= 1.2 * $active_avg,
	"the last (partial) bucket's load is within 20% of the sessions the activity view showed");

# --- the live page in a real browser, while the storm lasts: one JSON line
# per state (the page loaded, then after each click).
sub page_states
{
	my ($out, @args) = @_;
	IPC::Run::run([ 'python3', "$FindBin::RealBin/../report/cdp_page.py", @args ],
		'>', $out, '2>>', "$tmp/cdp.log");
	return map { my $s = eval { decode_json($_) }; $s // {} } split /\n/, slurp_file($out);
}
my @s1400 = page_states("$tmp/states1400.json", "$base?window=5min", 1400,
	'--click', 'a.slice[data-slice="sql"]', '--click', 'a.window[href*="window=1h"]',
	'--click', 'a.compare[href*="compare=prev"]');
my @s800 = page_states("$tmp/states800.json", "$base?window=5min&slice=event", 800,
	'--click', 'a.slice[data-slice="user"]');
my ($first, $at8) = ($s1400[0] // {}, $s800[0] // {});
my $cpus = value('SELECT cpu_count FROM pg_stat_waits_status');
my @topsql = @{ $first->{topsql} // [] };
ok($first->{cpu_line}, 'the live page draws the CPU line');
is($first->{cpu_count}, $cpus, "the CPU line is at the server's cpu_count ($cpus)");
cmp_ok($first->{areas} // 0, '>=', 1, 'the load chart has areas');
ok(scalar(grep { ($_->{load} // 0) > 0 } @topsql), 'top SQL has a statement with non-zero load');
is(scalar(grep { ($_->{text} // '') eq 'UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2' } @topsql),
	1, "top SQL's pgbench UPDATE is there with its full text");
is(scalar(grep { $_ eq ($holder_pid || 0) } @{ $first->{blockers} // [] }),
	1, "the blocking session (pid $holder_pid, idle in transaction) is listed");
# fits(STATE): no element wider than the viewport, no horizontal scroll.
sub fits
{
	my ($s) = @_;
	return defined $s->{scroll_width} && !@{ $s->{overflow} // [] } && $s->{scroll_width} <= $s->{client_width};
}
for my $s ($first, $at8)
{
	ok(fits($s), sprintf('no element wider than the viewport at %s px (%s)',
			$s->{width} // '?', JSON::PP->new->canonical->encode($s->{overflow} // [])));
}
my ($sliced, $hour, $compared) = map { $_ // {} } @s1400[ 1 .. 3 ];
ok(($sliced->{slice} // '') eq 'SQL' && ($sliced->{url} // '') =~ /slice=sql/ && ($sliced->{areas} // 0) >= 1,
	'clicking the SQL slice link slices the load by SQL');
ok(($hour->{window} // '') eq 'last 1h' && ($hour->{url} // '') =~ /window=1h/ && ($hour->{slice} // '') eq 'SQL',
	'clicking the 1h window link switches the window and keeps the slice');
my $cmp = $compared->{compare};
ok(ref $cmp eq 'ARRAY' ? scalar(@$cmp) : ref $cmp eq 'HASH' ? scalar(%$cmp) : length($cmp // ''),
	'clicking compare shows the window against the one before');
my $user = $s800[1] // {};
ok(($user->{slice} // '') eq 'user' && fits($user), 'the user slice at 800 px fits too');

# --- report --compare: the storm window against the calm one before it.
report('--from', $storm_from, '--to', $t2, '--compare', "$calm_from..$calm_to", '--html', "$tmp/compare.html");
my ($compare_section) = (-f "$tmp/compare.html" ? slurp_file("$tmp/compare.html") : '')
  =~ m{(<section id="compare">.*?</section>)}s;
my ($top_delta) = ($compare_section // '') =~ /(data-key="[^"]*" data-delta="[^"]*")/;
note('compare, first row: ' . ($top_delta // 'none'));
like($top_delta // '', qr/data-key="Lock:[a-z]+" data-delta="[0-9]/,
	"report --compare puts the lock wait's rise at the top");
is(HTTP::Tiny->new(timeout => 30)->get("http://127.0.0.1:$port/report/nosuch")->{status},
	404, "an unknown target's page is a 404");

$storm_holder->quit;
value("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%psw_hold%' AND pid <> pg_backend_pid()");
$_->kill_kill for $serve, $pgbench;
$_->finish for @waiters;
if (Test::More->builder->is_passing) { rmtree($tmp); }
else { diag("live suite files kept in $tmp"); }
$node->stop;
done_testing();
