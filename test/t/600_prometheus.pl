
# Copyright (c) pg_stat_waits developers

# The Prometheus exporter (`pg_stat_waits_report serve`) with real parts: two
# PostgreSQL servers, the exporter, and Debian's Prometheus scraping both
# through /probe?target= (the setup docs/exporters.md shows). Checks, through
# PromQL on Prometheus' HTTP API: exact row-lock wait time per target within
# 3% of what the waiting statements measured, histogram_quantile() in the
# right log2 bucket, `up` going to 0 for a stopped server while the other keeps
# reporting, and back to 1 after a restart without restarting the exporter.
# Also: every query of the Grafana dashboard names exported metrics and is
# accepted by Prometheus.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use Time::HiRes qw(sleep time);

my $prometheus_bin = $ENV{PROMETHEUS} // '/usr/bin/prometheus';
plan skip_all => "no Prometheus at $prometheus_bin (Debian package prometheus)"
  unless -x $prometheus_bin;
my $exporter_bin = psw_report_bin();
plan skip_all => 'pg_stat_waits_report not found in PATH (or $PSW_REPORT)'
  unless $exporter_bin && -x $exporter_bin;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my $tmp = PostgreSQL::Test::Utils::tempdir;

# Two servers, each with an unprivileged monitoring role.
my %node;
for my $name ('a', 'b')
{
	my $n = PostgreSQL::Test::Cluster->new("prom_$name");
	$n->init;
	$n->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'
pg_stat_waits.timing = on
# one lock wait = one timed sleep: no deadlock check wakes it at 1 s
deadlock_timeout = '60s'
});
	$n->start;
	$n->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_waits;
CREATE ROLE psw_monitor LOGIN;
GRANT pg_read_all_stats TO psw_monitor;
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t VALUES (1, 0);
GRANT ALL ON t TO PUBLIC;
-- The UPDATE's own elapsed time, measured around it on the server.
CREATE FUNCTION blocked_update() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  UPDATE t SET v = v + 1 WHERE id = 1;
  RETURN extract(epoch FROM clock_timestamp() - t0);
END $$;
});
	$node{$name} = $n;
}

# The exporter, configured by file, as the systemd unit runs it.
my $exporter_port = PostgreSQL::Test::Cluster::get_free_port();
my $config = "$tmp/targets.conf";
open my $cf, '>', $config or die;
for my $name ('a', 'b')
{
	printf $cf "%s = host=%s port=%d dbname=postgres user=psw_monitor\n",
	  $name, $node{$name}->host, $node{$name}->port;
}
# A third target: a database of server a without the extension.
printf $cf "c = host=%s port=%d dbname=template1 user=psw_monitor\n", $node{a}->host, $node{a}->port;
close $cf;
my ($ex_out, $ex_err) = ('', '');
my $exporter = IPC::Run::start(
	[ $exporter_bin, 'serve', '--listen', "127.0.0.1:$exporter_port", '--config', $config ],
	'>', \$ex_out, '2>', \$ex_err);

# Prometheus, scraping both targets through /probe every second.
my $prom_port = PostgreSQL::Test::Cluster::get_free_port();
mkdir "$tmp/tsdb";
open my $pf, '>', "$tmp/prometheus.yml" or die;
print $pf <<"EOF";
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: pg_stat_waits
    metrics_path: /probe
    static_configs:
      - targets: [a, b]
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: 127.0.0.1:$exporter_port
EOF
close $pf;
my ($p_out, $p_err) = ('', '');
my $prometheus = IPC::Run::start(
	[
		$prometheus_bin, "--config.file=$tmp/prometheus.yml",
		"--storage.tsdb.path=$tmp/tsdb", "--web.listen-address=127.0.0.1:$prom_port"
	],
	'>', \$p_out, '2>', \$p_err);

sub http_get
{
	my ($url, @data) = @_;
	my @cmd = ('curl', '-sS', '--max-time', '10', $url);
	push @cmd, ('-G', map { ('--data-urlencode', $_) } @data) if @data;
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	return $out;
}

# PromQL instant query: { "target" => value } (or the full result).
sub promql
{
	my ($q) = @_;
	my $body = http_get("http://127.0.0.1:$prom_port/api/v1/query", "query=$q");
	my $r = eval { decode_json($body) };
	return undef unless $r && $r->{status} eq 'success';
	my %v;
	for my $s (@{ $r->{data}{result} })
	{
		my $k = $s->{metric}{target} // $s->{metric}{instance} // '';
		$v{$k} = $s->{value}[1];
	}
	return \%v;
}

# Polls a PromQL condition until it holds (90 s at most).
sub wait_for
{
	my ($what, $cond) = @_;
	my $deadline = time + 90;
	while (time < $deadline)
	{
		return 1 if $cond->();
		sleep 0.5;
	}
	diag "timed out waiting for: $what";
	return 0;
}

ok( wait_for(
		'both targets up',
		sub {
			my $v = promql('pg_stat_waits_up');
			return $v && ($v->{a} // 0) == 1 && ($v->{b} // 0) == 1;
		}),
	'Prometheus scrapes both targets through /probe and both are up');

my $c_body = http_get("http://127.0.0.1:$exporter_port/probe?target=c");
like($c_body, qr/^pg_stat_waits_up\{target="c"\} 0$/m, 'a database without the extension: up is 0');
like($c_body, qr/^pg_stat_waits_down\{reason="no_extension",target="c"\} 1$/m, '... and down says no_extension');
like(http_get("http://127.0.0.1:$exporter_port/probe?target=nosuch"), qr/unknown target/,
	'/probe refuses targets that are not configured');

# Known workload: a row lock held for 0.8 s while another session waits on it,
# repeated (3 times on a, 2 on b). Each wait is about 1 s (0.8 s plus the time
# it takes to see the waiter wait and to commit, longer on a loaded machine).
my (%measured, %each);
for my $name ('a', 'a', 'a', 'b', 'b')
{
	my $n = $node{$name};
	my $holder = $n->background_psql('postgres');
	$holder->query_safe('BEGIN; SELECT v FROM t WHERE id = 1 FOR UPDATE;');
	my ($w_out, $w_err) = ('', '');
	my $waiter = IPC::Run::start(
		[ $n->installed_command('psql'), '-XAtq', '-d', $n->connstr('postgres'), '-c', 'SELECT blocked_update()' ],
		'>', \$w_out, '2>', \$w_err);
	$n->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'transactionid'")
	  or die 'the waiter never waited';
	sleep 0.8;
	$holder->query_safe('COMMIT');
	$waiter->finish;
	$holder->quit;
	chomp $w_out;
	$measured{$name} += $w_out;
	push @{ $each{$name} }, $w_out;
}
my %server;
for my $name ('a', 'b')
{
	$server{$name} = $node{$name}->safe_psql('postgres',
		"SELECT total_time / 1000 FROM pg_stat_waits WHERE wait_event = 'transactionid'");
	note sprintf('%s: blocked UPDATEs took %.4f s, pg_stat_waits says %.4f s of Lock/transactionid',
		$name, $measured{$name}, $server{$name});
}

# Prometheus catches up with the last scrape after the workload.
my $wait_q = 'pg_stat_waits_wait_seconds_total{wait_event_type="Lock",wait_event="transactionid"}';
wait_for(
	'the lock waits in Prometheus',
	sub {
		my $v = promql($wait_q);
		return $v && defined $v->{a} && defined $v->{b}
		  && abs($v->{a} - $server{a}) < 1e-6 && abs($v->{b} - $server{b}) < 1e-6;
	});
my $wait = promql($wait_q);
for my $name ('a', 'b')
{
	my $got = $wait->{$name} // 0;
	ok(abs($got - $measured{$name}) <= 0.03 * $measured{$name},
		sprintf('%s: PromQL wait time %.4f s is within 3%% of the measured %.4f s',
			$name, $got, $measured{$name}));
}
my $calls = promql('pg_stat_waits_wait_calls_total{wait_event="transactionid"}');
is($calls->{a}, 3, 'a: 3 lock waits counted');
is($calls->{b}, 2, 'b: 2 lock waits counted');
my $p50 = promql(
	'histogram_quantile(0.5, pg_stat_waits_wait_duration_seconds_bucket{wait_event_type="Lock",wait_event="transactionid"})');
# The bucket the median must fall in, from the measured waits: Prometheus
# takes rank 0.5 x n and returns a value inside the bucket where the
# cumulative count reaches it, i.e. the bucket of the ceil(n/2)-th smallest
# wait. Buckets are (1.024 us x 2^(b-1), 1.024 us x 2^b]. A wait measured
# within 2% of a bound may lie on either side of it (the statement's time
# includes a little more than the wait).
sub buckets_of
{
	my ($x) = @_;
	my @b;
	for my $y ($x * 0.98, $x * 1.02)
	{
		my $up = 1.024e-6;
		$up *= 2 while $up < $y;
		push @b, $up unless grep { $_ == $up } @b;
	}
	return @b;
}
for my $name ('a', 'b')
{
	my $q = $p50->{$name};
	my @sorted = sort { $a <=> $b } @{ $each{$name} };
	my $nth = $sorted[ int((@sorted + 1) / 2) - 1 ];
	my @ok = buckets_of($nth);
	my $in = defined $q && grep { $q > $_ / 2 && $q <= $_ * (1 + 1e-9) } @ok;
	ok($in,
		sprintf('%s: histogram_quantile(0.5) = %s lies in the bucket of the median wait (%.4f s: le %s; waits %s)',
			$name, $q // 'none', $nth, join('|', @ok), join(', ', map { sprintf '%.3f', $_ } @sorted)));
}
my $count = promql('pg_stat_waits_wait_duration_seconds_count{wait_event="transactionid"}');
is($count->{a}, 3, 'a: histogram count equals the waits');

# A sampled-time series and the rate of the sampler's rounds, per target.
my $sampled = promql('sum by (target) (pg_stat_waits_sampled_seconds_total{wait_event="transactionid"})');
ok(($sampled->{a} // 0) > 1.5, 'a: sampled lock time is there (' . ($sampled->{a} // 'none') . ' s)');

# Stop b: its up goes to 0 while a keeps reporting.
$node{b}->stop;
ok(wait_for('b down', sub { my $v = promql('pg_stat_waits_up'); $v && ($v->{b} // 1) == 0 }),
	'stopped server: pg_stat_waits_up{target="b"} is 0');
my $down = promql('pg_stat_waits_down');
is($down->{b}, 1, 'b: pg_stat_waits_down says why');
my $s1 = promql('pg_stat_waits_samples_taken_total');
sleep 3;
my $s2 = promql('pg_stat_waits_samples_taken_total');
is(promql('pg_stat_waits_up')->{a}, 1, 'a is still up');
ok(($s2->{a} // 0) > ($s1->{a} // 0), 'a keeps reporting (samples_taken grows)');
ok(!defined $s2->{b}, 'b reports no stale samples_taken while down');

# Restart b: the exporter reconnects on its own.
$node{b}->start;
ok( wait_for(
		'b up again',
		sub { my $v = promql('pg_stat_waits_up'); $v && ($v->{b} // 0) == 1 }),
	'restarted server: up{target="b"} is 1 again');
ok(promql('pg_stat_waits_connects_total')->{b} >= 2, 'b: the exporter reconnected');
ok($exporter->pumpable, 'the exporter ran throughout (not restarted)');
ok( wait_for(
		'b metrics back',
		sub { my $v = promql($wait_q); $v && defined $v->{b} }),
	'b: its wait metrics are back (kept over the clean restart)');

# The dashboard: every panel's query names exported metrics, and Prometheus
# accepts every query (Grafana variables substituted).
my %exported;
for my $target ('a', 'b')
{
	for (split /\n/, http_get("http://127.0.0.1:$exporter_port/probe?target=$target"))
	{
		next unless /^# TYPE (\S+) (\S+)/;
		my ($name, $type) = ($1, $2);
		$exported{$name} = 1;
		if ($type eq 'histogram') { $exported{"${name}_$_"} = 1 for qw(bucket sum count); }
	}
}
ok(scalar(keys %exported) > 20, 'the exporter lists its metric families');
open my $df, '<', "$root/exporters/grafana/pg_stat_waits.json" or die "dashboard: $!";
my $dash = decode_json(do { local $/; <$df> });
close $df;
my @panels;
my @todo = @{ $dash->{panels} };
while (my $p = shift @todo)
{
	push @todo, @{ $p->{panels} } if $p->{panels};
	push @panels, $p if $p->{targets};
}
ok(@panels >= 8, 'the dashboard has panels with queries (' . scalar(@panels) . ')');
my ($bad_names, $bad_queries, $heat) = (0, 0, 0);
for my $p (@panels)
{
	$heat++ if $p->{type} eq 'heatmap' || (($p->{targets}[0]{expr} // '') =~ /histogram_quantile/);
	for my $t (@{ $p->{targets} })
	{
		my $expr = $t->{expr} // '';
		my @names = $expr =~ /\b(pg_stat_waits_[a-z0-9_]+)/g;
		if (!@names) { diag "panel \"$p->{title}\": query names no pg_stat_waits metric: $expr"; $bad_names++; }
		for (@names)
		{
			next if $exported{$_};
			diag "panel \"$p->{title}\": $_ is not exported";
			$bad_names++;
		}
		(my $q = $expr) =~ s/\$__rate_interval|\$__interval|\$__range/1m/g;
		$q =~ s/\$\{?(target|instance|job)\}?/.*/g;
		$q =~ s/\$\{?\w+\}?/.*/g;
		my $r = eval { decode_json(http_get("http://127.0.0.1:$prom_port/api/v1/query", "query=$q")) };
		if (!$r || $r->{status} ne 'success')
		{
			diag "panel \"$p->{title}\": Prometheus refuses $q: " . ($r ? $r->{error} : 'no answer');
			$bad_queries++;
		}
	}
}
is($bad_names, 0, 'every dashboard query names only exported metrics');
is($bad_queries, 0, 'Prometheus accepts every dashboard query');
ok($heat >= 1, 'the dashboard has heatmap or quantile panels from the histograms');

$prometheus->signal('TERM');
$prometheus->finish;
$exporter->signal('TERM');
$exporter->finish;
like($ex_err, qr/stopping on SIGTERM/, 'the exporter stops cleanly on SIGTERM');
$node{$_}->stop for ('a', 'b');
done_testing();
