
# Copyright (c) pg_stat_waits developers

# `pg_stat_waits_report serve` on a network, with real clients: curl over
# TLS with a CA this test makes (openssl), Debian's Prometheus scraping over
# HTTPS with basic auth, wrong and missing passwords, the report page asked
# from a peer in a network namespace of its own (403 without a login, 200
# with one, no statement text ever), refused web configs, the installed
# program serving TLS where libssl.so and libcrypto.so do not exist (libssl3
# alone), and malformed requests and slow clients while /metrics keeps
# answering.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use File::Copy qw(copy);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use IO::Socket::INET;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use PswTest;
use Test::More;
use Time::HiRes qw(sleep time);

my $bin = psw_report_bin();
plan skip_all => 'pg_stat_waits_report not found in PATH (or $PSW_REPORT)' unless $bin && -x $bin;
for my $tool ('curl', 'openssl')
{
	plan skip_all => "$tool not found (Debian package $tool)" unless grep { -x "$_/$tool" } split /:/, $ENV{PATH};
}
my $t_start = time;
my $tmp = PostgreSQL::Test::Utils::tempdir;

my $node = psw_node('serve_sec', extensions => 1);
my $pg_user = $node->safe_psql('postgres', 'SELECT current_user');
my $dsn = sprintf('host=%s port=%d dbname=postgres user=%s', $node->host, $node->port, $pg_user);
# A statement whose text must never reach a remote peer without a login:
# sampled long enough to be in the page's top SQL.
my $marker = 'psw_secret_marker_' . int(rand(1e9));
$node->safe_psql('postgres', "SELECT /* $marker */ pg_sleep(1)") for 1 .. 2;

# --- Certificates: a CA, a server certificate for 127.0.0.1, a client one.
sub run_ok_quiet
{
	my @cmd = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err) or die "@cmd: $err";
	return $out;
}
chdir $tmp or die;
run_ok_quiet(qw(openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=psw-test-ca
	  -keyout ca.key -out ca.crt));
for my $who ('server', 'client')
{
	run_ok_quiet(qw(openssl req -newkey rsa:2048 -nodes -subj), "/CN=psw-$who", '-keyout', "$who.key", '-out', "$who.csr");
	open my $ext, '>', "$who.ext" or die;
	print $ext $who eq 'server'
	  ? "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
	  : "extendedKeyUsage=clientAuth\n";
	close $ext;
	run_ok_quiet(qw(openssl x509 -req -days 2 -CA ca.crt -CAkey ca.key -CAcreateserial), '-in', "$who.csr",
		'-extfile', "$who.ext", '-out', "$who.crt");
}
# Another key: one that does not match server.crt.
run_ok_quiet(qw(openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out other.key));

# bcrypt through the C library's crypt() (libxcrypt), as htpasswd -B would.
my $password = 'correct horse ' . int(rand(1e6));
my $hash = crypt($password, '$2b$08$' . join('', map { ('.', '/', 'A' .. 'Z', 'a' .. 'z', 0 .. 9)[ rand 64 ] } 1 .. 22));
like($hash, qr/^\$2b\$08\$.{53}$/, 'the C library makes bcrypt hashes');

sub write_file
{
	my ($name, $text) = @_;
	open my $f, '>', "$tmp/$name" or die;
	print $f $text;
	close $f;
	return "$tmp/$name";
}

my $tls_auth_yml = write_file('web-tls-auth.yml', <<"EOF");
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS12
basic_auth_users:
  prom: '$hash'
EOF

# --- Processes.
my @procs;
sub start_serve
{
	my ($port, @args) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start([ @args, 'serve', '--listen', "127.0.0.1:$port", '-d', $dsn ], '>', \$out, '2>', \$err);
	push @procs, $h;
	return ($h, \$err);
}

# curl: (status, body, headers, seconds); status 0 when no HTTP answer.
sub curl
{
	my ($url, @opt) = @_;
	my ($out, $err) = ('', '');
	my $hdr = "$tmp/curl-headers";
	unlink $hdr;
	IPC::Run::run([ 'curl', '-sS', '--max-time', '10', '-D', $hdr, '-o', "$tmp/curl-body",
		'-w', '%{http_code} %{time_total}', @opt, $url ], '>', \$out, '2>', \$err);
	my ($code, $secs) = split ' ', $out;
	my $body = -e "$tmp/curl-body" ? PostgreSQL::Test::Utils::slurp_file("$tmp/curl-body") : '';
	my $headers = -e $hdr ? PostgreSQL::Test::Utils::slurp_file($hdr) : '';
	unlink "$tmp/curl-body";
	return (($code // 0) + 0, $body, $headers, $secs // 0, $err);
}

sub wait_port
{
	my ($port) = @_;
	for (1 .. 100)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1);
		return 1 if $s;
		sleep 0.1;
	}
	return 0;
}

# --- Refused web configs: exit 2, the field named, nothing listening.
{
	my %bad = (
		'cipher_suites' => [ "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
			  . "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", qr/tls_server_config\.cipher_suites: not supported/ ],
		'unknown field' => [ "basic_auth_user:\n  a: b\n", qr/basic_auth_user: unknown field/ ],
		'plain password' => [ "basic_auth_users:\n  prom: $password\n", qr/basic_auth_users\.prom: not a bcrypt hash/ ],
		'bad YAML' => [ "tls_server_config: [\n", qr/not valid YAML/ ],
		'key of another cert' => [ "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n",
			qr/tls_server_config\.key_file: \S*other\.key does not match the certificate/ ],
		'missing cert file' => [ "tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n",
			qr/tls_server_config\.cert_file: cannot load .*nope\.crt/ ],
	);
	for my $what (sort keys %bad)
	{
		my ($yml, $re) = @{ $bad{$what} };
		my $file = write_file('bad.yml', $yml);
		my $port = PostgreSQL::Test::Cluster::get_free_port();
		my ($out, $err) = ('', '');
		my $ok = IPC::Run::run([ $bin, 'serve', '--listen', "127.0.0.1:$port", '--web.config.file', $file, '-d', $dsn ],
			'>', \$out, '2>', \$err, IPC::Run::timeout(20));
		my $rc = $? >> 8;
		is($rc, 2, "web config with $what: exit status 2");
		like($err, $re, "web config with $what: the error names the field");
		ok(!IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1),
			"web config with $what: nothing listens");
	}
}

# --- TLS + basic auth: curl with the test's CA.
my $tls_port = PostgreSQL::Test::Cluster::get_free_port();
my ($tls_serve, $tls_err) = start_serve($tls_port, $bin, '--web.config.file', $tls_auth_yml);
ok(wait_port($tls_port), 'TLS exporter listens');
my $base = "https://127.0.0.1:$tls_port";
my @ca = ('--cacert', "$tmp/ca.crt");
for my $path ('/', '/metrics', '/probe?target=default', '/report/default', '/nothing')
{
	my ($code, $body, $headers) = curl("$base$path", @ca);
	is($code, 401, "TLS: $path without credentials is 401");
	like($headers, qr/^WWW-Authenticate: Basic /mi, "TLS: $path asks for basic auth") if $path eq '/metrics';
	unlike($body, qr/pg_stat_waits_|\Q$marker\E/, "TLS: $path without credentials shows nothing");
	($code) = curl("$base$path", @ca, '-u', 'prom:wrong');
	is($code, 401, "TLS: $path with a wrong password is 401");
}
is((curl("$base/metrics", @ca, '-u', "nobody:$password"))[0], 401, 'TLS: an unknown user is 401');
{
	my ($code, $body) = curl("$base/metrics", @ca, '-u', "prom:$password");
	is($code, 200, 'TLS: /metrics with the password is 200');
	like($body, qr/^pg_stat_waits_up\{target="default"\} 1$/m, 'TLS: /metrics carries the target');
	my $headers;
	($code, $body, $headers) = curl("$base/report/default", @ca, '-u', "prom:$password");
	is($code, 200, 'TLS: the report page with the password is 200');
	like($body, qr/\Q$marker\E/, 'TLS: the page shows the statement (what the 403 below withholds)');
	like($headers, qr/^Content-Security-Policy: default-src 'none'/mi, 'page: Content-Security-Policy');
	like($headers, qr/^X-Content-Type-Options: nosniff/mi, 'page: X-Content-Type-Options');
	like($headers, qr/^Referrer-Policy: no-referrer/mi, 'page: Referrer-Policy');
	($code) = curl("$base/metrics", @ca, '-u', "prom:$password", '-X', 'POST');
	is($code, 405, 'TLS: POST is 405');
	($code) = curl("$base/metrics", '-u', "prom:$password");
	is($code, 0, 'TLS: a client without the CA does not trust the server');
	($code) = curl("$base/metrics", @ca, '-u', "prom:$password", '--tls-max', '1.1');
	is($code, 0, 'TLS: TLS 1.1 is refused (min_version TLS12)');
	($code) = curl("http://127.0.0.1:$tls_port/metrics", '-u', "prom:$password");
	isnt($code, 200, 'TLS: plain HTTP on the TLS port gets nothing');
}

# --- Prometheus scraping over HTTPS with basic_auth (and a job with a wrong password).
SKIP:
{
	my $prometheus_bin = $ENV{PROMETHEUS} // '/usr/bin/prometheus';
	skip "no Prometheus at $prometheus_bin (Debian package prometheus)", 3 unless -x $prometheus_bin;
	write_file('pw', $password);
	write_file('pw-wrong', 'wrong');
	my $prom_port = PostgreSQL::Test::Cluster::get_free_port();
	mkdir "$tmp/tsdb";
	my $job = sub {
		my ($name, $pwfile) = @_;
		return <<"EOF";
  - job_name: $name
    scheme: https
    tls_config:
      ca_file: $tmp/ca.crt
    basic_auth:
      username: prom
      password_file: $tmp/$pwfile
    static_configs:
      - targets: ['127.0.0.1:$tls_port']
EOF
	};
	write_file('prometheus.yml',
		"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
		  . $job->('psw_tls', 'pw') . $job->('psw_wrong', 'pw-wrong'));
	my ($p_out, $p_err) = ('', '');
	my $prom = IPC::Run::start(
		[ $prometheus_bin, "--config.file=$tmp/prometheus.yml", "--storage.tsdb.path=$tmp/tsdb",
		  "--web.listen-address=127.0.0.1:$prom_port" ], '>', \$p_out, '2>', \$p_err);
	push @procs, $prom;
	my $query = sub {
		my ($q) = @_;
		my ($code, $body) = curl("http://127.0.0.1:$prom_port/api/v1/query", '-G', '--data-urlencode', "query=$q");
		my $r = eval { decode_json($body) };
		return undef unless $r && $r->{status} eq 'success' && @{ $r->{data}{result} };
		return $r->{data}{result}[0]{value}[1];
	};
	my %got;
	my $deadline = time + 40;
	while (time < $deadline)
	{
		$got{ok} = $query->('pg_stat_waits_up{job="psw_tls",target="default"}');
		$got{wrong} = $query->('up{job="psw_wrong"}');
		last if defined $got{ok} && defined $got{wrong};
		sleep 0.5;
	}
	is($got{ok}, '1', 'Prometheus scrapes /metrics over HTTPS with basic_auth: pg_stat_waits_up 1');
	is($got{wrong}, '0', 'Prometheus with a wrong password: up 0');
	my ($code, $body) = curl("http://127.0.0.1:$prom_port/api/v1/targets");
	like($body, qr/server returned HTTP status 401/, 'Prometheus saw the 401');
	$prom->signal('TERM');
	$prom->finish;
}

# --- Mutual TLS: client certificates verified against the test's CA.
{
	my $yml = write_file('web-mtls.yml', <<"EOF");
tls_server_config:
  cert_file: $tmp/server.crt
  key_file: $tmp/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $tmp/ca.crt
EOF
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($h) = start_serve($port, $bin, '--web.config.file', $yml);
	ok(wait_port($port), 'mTLS exporter listens');
	my ($code) = curl("https://127.0.0.1:$port/metrics", @ca);
	is($code, 0, 'mTLS: no client certificate, no answer');
	($code) = curl("https://127.0.0.1:$port/metrics", @ca, '--cert', "$tmp/server.crt", '--key', "$tmp/server.key");
	is($code, 0, 'mTLS: a certificate for another purpose (serverAuth) is refused');
	my $body;
	($code, $body) = curl("https://127.0.0.1:$port/report/default", @ca, '--cert', "$tmp/client.crt", '--key',
		"$tmp/client.key");
	is($code, 200, 'mTLS: the client certificate opens the page');
	$h->signal('TERM');
	$h->finish;
}

# --- A peer that is not this host: a network namespace of the test's own,
# linked to the exporter's by a veth pair. ip netns needs root and the TAP
# tests run as the cluster's user: both namespaces are made with unshare
# (a user namespace that owns them), the same kernel objects.
SKIP:
{
	my ($probe_out, $probe_err) = ('', '');
	my $can = IPC::Run::run([ 'unshare', '-rn', 'sh', '-c', 'ip link add v0 type veth peer name v1' ],
		'>', \$probe_out, '2>', \$probe_err);
	skip "cannot create a network namespace with a veth pair here (unshare -rn: $probe_err)", 8 unless $can;
	my $auth_yml = write_file('web-auth.yml', "basic_auth_users:\n  prom: '$hash'\n");
	my @paths = ('/report/default', '/report/default?window=1h&slice=sql', '/report', '/report/', '/%72eport/default',
		'/report/../report/default', '/x/../report/default', '//report/default', '/REPORT/default',
		'/report/default/', '/report/default%00', '/', '/metrics', '/probe?target=default');
	my $paths = join(' ', map { "'$_'" } @paths);
	# Prints "exporter path status" per request, bodies under $tmp/ns/.
	mkdir "$tmp/ns";
	my $script = <<"EOF";
set -e
ip link set lo up
unshare -n sleep 60 & peer=\$!
while [ "\$(readlink /proc/\$peer/ns/net)" = "\$(readlink /proc/self/ns/net)" ]; do sleep 0.05; done
ip link add vh type veth peer name vp netns \$peer
ip addr add 198.51.100.1/24 dev vh
ip link set vh up
nsenter -t \$peer -n sh -c 'ip link set lo up; ip addr add 198.51.100.2/24 dev vp; ip link set vp up'
'$bin' serve --listen 0.0.0.0:9866 -d '$dsn' 2>'$tmp/ns/open.log' & open=\$!
'$bin' serve --listen 0.0.0.0:9867 --web.config.file '$auth_yml' -d '$dsn' 2>'$tmp/ns/auth.log' & auth=\$!
for i in \$(seq 100); do
  nsenter -t \$peer -n curl -s -o /dev/null http://198.51.100.1:9866/metrics && \\
  nsenter -t \$peer -n curl -s -o /dev/null -u 'prom:$password' http://198.51.100.1:9867/metrics && break
  sleep 0.1
done
n=0
for p in $paths; do
  n=\$((n+1))
  echo "open \$p \$(nsenter -t \$peer -n curl -s --path-as-is -o '$tmp/ns/open-'\$n -w '%{http_code}' "http://198.51.100.1:9866\$p")"
  echo "auth-none \$p \$(nsenter -t \$peer -n curl -s --path-as-is -o /dev/null -w '%{http_code}' "http://198.51.100.1:9867\$p")"
  echo "auth \$p \$(nsenter -t \$peer -n curl -s --path-as-is -u 'prom:$password' -o '$tmp/ns/auth-'\$n -w '%{http_code}' "http://198.51.100.1:9867\$p")"
done
echo "loopback /report/default \$(curl -s -o '$tmp/ns/loopback' -w '%{http_code}' http://127.0.0.1:9866/report/default)"
kill \$open \$auth \$peer
wait
EOF
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'unshare', '-rn', 'sh', '-c', $script ], '>', \$out, '2>', \$err, IPC::Run::timeout(60));
	my %code;
	for (split /\n/, $out)
	{
		my ($who, $p, $c) = split / /;
		$code{$who}{$p} = $c;
	}
	diag("namespace script: $err") unless %code;
	is($code{open}{'/report/default'}, '403', 'remote peer, no login: /report/default is 403');
	my $reason = PostgreSQL::Test::Utils::slurp_file("$tmp/ns/open-1");
	like($reason, qr/^[^\n]*statement texts[^\n]*\n\z/, 'the 403 gives a one-line reason');
	is($code{open}{'/metrics'}, '200', 'remote peer, no login: /metrics stays open');
	is($code{open}{'/probe?target=default'}, '200', 'remote peer, no login: /probe stays open');
	my @leaks;
	for my $i (1 .. @paths)
	{
		my $b = -e "$tmp/ns/open-$i" ? PostgreSQL::Test::Utils::slurp_file("$tmp/ns/open-$i") : '';
		push @leaks, $paths[ $i - 1 ] if $b =~ /\Q$marker\E/;
	}
	is("@leaks", '', 'remote peer, no login: no path returns a statement text (' . scalar(@paths) . ' paths)');
	is($code{loopback}{'/report/default'}, '200', 'loopback, no login: the page is served');
	like(PostgreSQL::Test::Utils::slurp_file("$tmp/ns/loopback"), qr/\Q$marker\E/,
		'loopback: the page shows the statement');
	my @not401 = grep { ($code{'auth-none'}{$_} // '') ne '401' } @paths;
	is("@not401", '', 'remote peer, login configured, no password: 401 on every path');
	is($code{auth}{'/report/default'}, '200', 'remote peer with the password: the page is 200');
	like(PostgreSQL::Test::Utils::slurp_file("$tmp/ns/auth-1"), qr/\Q$marker\E/,
		'remote peer with the password: the page shows the statement');
}

# --- TLS with libssl3 alone: the installed program in a mount namespace
# where libssl.so and libcrypto.so (libssl-dev's names, which civetweb
# dlopens) are whited out of the library directory; the same binary copied
# away from its own lib/pg_stat_waits_report cannot start TLS there (the
# check can fail).
SKIP:
{
	my $links = dirname(dirname($bin)) . '/lib/pg_stat_waits_report';
	my $target = readlink("$links/libcrypto.so");
	skip "no $links/libcrypto.so link (install-report makes it)", 4 unless $target && -f "$links/libssl.so";
	my $libdir = dirname($target);
	my $hide = <<"EOF";
set -e
d=\$(mktemp -d)
mount -t tmpfs tmpfs "\$d"
mkdir "\$d/up" "\$d/work"
mknod "\$d/up/libssl.so" c 0 0
mknod "\$d/up/libcrypto.so" c 0 0
mount -t overlay overlay -o "lowerdir=$libdir,upperdir=\$d/up,workdir=\$d/work" "$libdir"
test ! -e "$libdir/libssl.so" && test ! -e "$libdir/libcrypto.so" && test -e "$libdir/libssl.so.3"
exec "\$@"
EOF
	my ($o, $e) = ('', '');
	skip "cannot hide files in a mount namespace here: $e", 4
	  unless IPC::Run::run([ 'unshare', '-rm', 'sh', '-c', $hide, 'sh', 'true' ], '>', \$o, '2>', \$e);
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($h) = start_serve($port, 'unshare', '-rm', 'sh', '-c', $hide, 'sh', $bin, '--web.config.file', $tls_auth_yml);
	ok(wait_port($port), 'libssl3 alone: the installed program listens with TLS');
	my ($code) = curl("https://127.0.0.1:$port/metrics", @ca, '-u', "prom:$password");
	is($code, 200, 'libssl3 alone: /metrics over TLS is 200');
	$h->signal('TERM');
	$h->finish;
	mkdir "$tmp/bin";
	copy($bin, "$tmp/bin/pg_stat_waits_report") or die;
	chmod 0755, "$tmp/bin/pg_stat_waits_report";
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'unshare', '-rm', 'sh', '-c', $hide, 'sh', "$tmp/bin/pg_stat_waits_report", 'serve',
		'--listen', "127.0.0.1:$port", '--web.config.file', $tls_auth_yml, '-d', $dsn ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(20));
	is($? >> 8, 1, 'control: without its links the program cannot start TLS there');
	like($err, qr/libssl\.so|libcrypto\.so/, 'control: civetweb names the library it could not load');
}

$_->signal('TERM') for grep { $_->pumpable } @procs;
$_->finish for @procs;
@procs = ();

# --- Malformed requests, then slow clients, against a plain exporter:
# /metrics answers within 1 s throughout and the RSS stays within 2x idle.
# About 15 s, most of it waiting out the 10 s request timeout; the HTTP
# server does not depend on the server's major, so it runs on one: 15,
# Debian's own and the default of ./run test.
SKIP:
{
	skip 'the malformed and slow clients run on PostgreSQL 15 only (the HTTP side is the same for every major)', 6
	  unless $node->pg_version->major == 15;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($h) = start_serve($port, $bin);
	ok(wait_port($port), 'plain exporter listens');
	my $pid = $h->{KIDS}[0]{PID};
	my $rss = sub {
		open my $f, '<', "/proc/$pid/status" or return 0;
		while (<$f>) { return $1 if /^VmRSS:\s+(\d+)/ }
		return 0;
	};
	curl("http://127.0.0.1:$port/metrics") for 1 .. 3;    # warm: connection, first scrapes
	my $idle = $rss->();
	my $peak = $idle;
	my $worst = 0;
	my $scrape = sub {
		my ($code, $body, undef, $secs) = curl("http://127.0.0.1:$port/metrics", '--max-time', '5');
		$worst = $secs if $code ne '200' || $secs > $worst;
		$worst = 99 if $code ne '200';
		my $r = $rss->();
		$peak = $r if $r > $peak;
	};
	my $junk = 'x' x 20000;
	my @kinds = (
		"GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET /metrics HTTP/1.1\r\nNoColonHere\r\n\r\n",
		"GET /$junk HTTP/1.1\r\n\r\n", "GET /metrics HTTP/1.1\r\nX-Big: $junk\r\n\r\n",
		"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "DELETE /report/default HTTP/1.1\r\n\r\n",
		"\x00\x01\x02\xff\r\n\r\n", "GET /probe?target=%ZZ HTTP/1.1\r\n\r\n", "GET /report/%00 HTTP/1.1\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
	);
	my %answers;
	my $t0 = time;
	for my $i (1 .. 1000)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 5) or die "connect: $!";
		print $s $kinds[ $i % @kinds ];
		shutdown($s, 1);
		my $line = <$s> // '';
		my ($status) = $line =~ m{^HTTP/1\.[01] (\d{3})};
		$answers{ $status // 'closed' }++;
		close $s;
		$scrape->() if $i % 100 == 0;
	}
	my $malformed_s = time - $t0;
	my @ok = grep { $_ =~ /^2/ } keys %answers;
	is("@ok", '', '1000 malformed requests: none is answered 2xx');
	ok(($answers{405} // 0) > 0 && ($answers{413} // 0) + ($answers{400} // 0) > 0,
		'malformed requests: 405 for other methods, 400/413 for bad or oversized requests');
	diag(sprintf('1000 malformed requests in %.1f s: %s', $malformed_s,
		join(', ', map { "$_ x$answers{$_}" } sort keys %answers)));

	# 50 clients sending one byte of a header each second.
	my @slow;
	for (1 .. 50)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 5) or die "connect: $!";
		$s->blocking(0);
		syswrite($s, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ");
		push @slow, $s;
	}
	my $t_slow = time;
	my $open = scalar @slow;
	my $cut_at;
	while (time - $t_slow < 12)
	{
		my $tick = time;
		$open = 0;
		for my $s (@slow)
		{
			next unless $s;
			my $w = syswrite($s, 'a');
			my $buf;
			my $r = sysread($s, $buf, 4096);
			if (!defined $w || (defined $r && $r == 0) || (defined $r && $r > 0))
			{
				close $s;
				$s = undef;    # the server answered or closed it
				next;
			}
			$open++;
		}
		$cut_at //= time - $t_slow if $open == 0;
		$scrape->();
		my $left = 1 - (time - $tick);
		sleep $left if $left > 0;
	}
	ok($worst < 1, sprintf('/metrics answered within 1 s throughout (slowest %.3f s)', $worst));
	ok(defined $cut_at && $cut_at < 12,
		sprintf('the slow clients are cut by the 10 s request timeout (all gone after %.1f s)', $cut_at // -1));
	ok($peak <= 2 * $idle, "RSS stays within 2x idle (idle $idle kB, peak $peak kB)");
	$h->signal('TERM');
	$h->finish;
}

$_->signal('TERM') for grep { $_->pumpable } @procs;
$_->finish for @procs;
$node->stop;
diag(sprintf('032_serve_security: %.1f s', time - $t_start));
done_testing();
