
# Copyright (c) pg_stat_waits developers

# `pg_stat_waits_report serve` under malformed HTTP: a few thousand request
# lines, headers, Authorization values and query strings, written byte for
# byte on raw sockets (so what no client would send really goes out), to an
# exporter without a web config and to one with basic auth, both on
# 127.0.0.1 and reading a real node. No answer may be a 5xx, and none may
# carry an exception's text (libstdc++'s, libpqxx's, PostgreSQL's). The
# cases come from a fixed seed (PSW_FUZZ_SEED overrides it): a failure names
# the request, which replays it. Also the named regression (Basic followed
# by spaces was a 500 with libstdc++'s message) through curl, and
# --web.listen-address, the Prometheus exporters' name of --listen.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use IO::Select;
use IO::Socket::INET;
use IPC::Run;
use MIME::Base64 qw(encode_base64);
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use PswTest;
use Test::More;
use Time::HiRes qw(sleep time);

my $bin = psw_report_bin();
plan skip_all => 'pg_stat_waits_report not found in PATH (or $PSW_REPORT)' unless $bin && -x $bin;
plan skip_all => 'curl not found (Debian package curl)' unless grep { -x "$_/curl" } split /:/, $ENV{PATH};
my $t_start = time;
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $seed = $ENV{PSW_FUZZ_SEED} // 20240501;
srand($seed);

my $node = psw_node('serve_fuzz', extensions => 1);
my $pg_user = $node->safe_psql('postgres', 'SELECT current_user');
my $dsn = sprintf('host=%s port=%d dbname=postgres user=%s', $node->host, $node->port, $pg_user);
$node->safe_psql('postgres', 'SELECT pg_sleep(0.3)');

# bcrypt at the lowest cost: a known user's check stays cheap. An unknown
# user costs the exporter's own cost-10 dummy hash, so the cases below send
# well-formed credentials of unknown users only a few dozen times.
my $password = 'fuzz ' . int(rand(1e6));
my $hash = crypt($password, '$2b$04$' . join('', map { ('.', '/', 'A' .. 'Z', 'a' .. 'z', 0 .. 9)[ rand 64 ] } 1 .. 22));
like($hash, qr/^\$2b\$04\$.{53}$/, 'the C library makes bcrypt hashes');
my $web_yml = "$tmp/web.yml";
open my $w, '>', $web_yml or die;
print $w "basic_auth_users:\n  prom: '$hash'\n";
close $w;
my $good_auth = 'Basic ' . encode_base64("prom:$password", '');

my @procs;
sub start_serve
{
	my ($name, @args) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	push @procs, IPC::Run::start([ $bin, 'serve', @args, "127.0.0.1:$port", '-d', $dsn ],
		'>', '/dev/null', '2>', "$tmp/$name.log");
	for (1 .. 100)
	{
		return $port if IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1);
		sleep 0.1;
	}
	die "serve ($name) does not listen: " . PostgreSQL::Test::Utils::slurp_file("$tmp/$name.log");
}
my $open_port = start_serve('open', '--listen');
# The auth exporter is started by the Prometheus exporters' option name.
my $auth_port = start_serve('auth', '--web.config.file', $web_yml, '--web.listen-address');
END { $_->kill_kill for grep { $_->pumpable } @procs; }

# curl: (status, body).
sub curl
{
	my ($url, @opt) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'curl', '-sS', '--max-time', '10', '-o', "$tmp/curl-body", '-w', '%{http_code}', @opt, $url ],
		'>', \$out, '2>', \$err);
	my $body = -e "$tmp/curl-body" ? PostgreSQL::Test::Utils::slurp_file("$tmp/curl-body") : '';
	unlink "$tmp/curl-body";
	return (($out || 0) + 0, $body);
}

# --- The named regressions, with a real client.
{
	my ($code, $body) = curl("http://127.0.0.1:$auth_port/metrics", '-H', 'Authorization: Basic    ');
	is($code, 401, "'Authorization: Basic' followed by spaces is 401");
	unlike($body, qr/basic_string|substr|__pos/, '... and its body carries no exception text');
	($code) = curl("http://127.0.0.1:$auth_port/metrics", '-H', "Authorization: $good_auth");
	is($code, 200, '--web.listen-address: the exporter listens there, and the password opens /metrics');
	($code, $body) = curl("http://127.0.0.1:$open_port/report/default?from=not-a-time");
	is($code, 400, 'a /report/ time PostgreSQL cannot read is 400');
	unlike($body, qr/ERROR|invalid input syntax/, '... without PostgreSQL\'s error text');
	my ($rc, $out) = (0, '');
	IPC::Run::run([ $bin, 'serve', '--web.listen-address' ], '>', \$out, '2>&1');
	like($out, qr/--web\.listen-address needs/, '--web.listen-address without a value is refused by its name');
}

# --- The cases.
sub pick { return $_[ int(rand(@_)) ]; }
my @bytes = map { chr } 0 .. 255;
sub junk { my ($n) = @_; return join('', map { pick(@bytes) } 1 .. $n); }
my $b64 = sub { encode_base64($_[0], '') };
my @methods = ('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PATCH', 'get', 'GeT', '',
	'G ET', "G\x00T", 'A' x 300, "\xd0\x93\xd0\x95\xd0\xa2", 'PRI', '*', 'GET GET');
my @paths = ('/', '/metrics', '/probe', '/probe?target=default', '/report/default', '/report/', '/report', '/nothing',
	'*', '', 'metrics', 'http://127.0.0.1/metrics', '//metrics', '/%', '/%zz', '/%00', '/%2e%2e/%2e%2e/etc/passwd',
	'/report/%2e%2e/default', '/report/default/../../metrics', '/report/' . ('a' x 2000), '/' . ('x' x 7000),
	'/' . ('y' x 20000), "/r\xc3\xa9p\xc3\xb2rt", "/report/\xff\xfe", '/metrics?' . ('&' x 500), '/metrics#frag',
	'/probe?target=', '/probe?target', '/probe?target=%', '/probe?target=%zz', '/probe?target=default&target=x',
	'/probe?target=' . ('t' x 300), '/probe?target=%00', '/probe?=&=&', '/probe?target=d%65fault', '/report/nobody',
	'/report/default%00', '/REPORT/default', '/report/default?', '/report/default?&&&=&');
my @report_queries = ('window=', 'window=-1', 'window=0', 'window=1e308', 'window=399y', 'window=9999999999999d',
	'window=.', 'window=1.2.3min', 'window=5%', 'window=5min&window=1h', 'from=', 'from=1.2.3', 'from=..',
	'from=99999999999999999999999', 'from=-1', 'from=abc', 'from=now', 'from=2024-02-30', 'from=%27;select',
	'from=1&to=0', 'from=0&to=1', 'from=1&to=abc', 'to=5', 'slice=', 'slice=%00', 'slice=nope', 'slice=sql',
	'compare=', 'compare=prev', 'compare=..', 'compare=1..', 'compare=..1', 'compare=x..y', 'compare=1d',
	'compare=-1d', 'compare=9999999d', 'compare=1....2', 'queryid=', 'queryid=-', 'queryid=99999999999999999999',
	'queryid=-9223372036854775809', 'queryid=abc', 'queryid=1%00', 'x=' . ('%41' x 1000), '%' x 10, '=',
	"window=\xff", 'window=%E2%80%8B5min');
my @versions = ('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1x', '', 'HTTP/', 'FOO/1.1', 'HTTP/1.1 extra',
	'http/1.1', 'HTTP/01.1', 'HTTP/1.' . ('1' x 100));
my @auth_values = ('', 'Basic', 'Basic ', 'Basic    ', 'basic    ', "Basic \t ", "Basic\t", 'Basic ====', 'Basic =',
	'Basic a', 'Basic ab', 'Basic abc', 'Basic !!!!', 'Basic ' . $b64->('nocolon'), 'Basic ' . $b64->(':'),
	'Basic ' . $b64->('prom:'), 'Basic ' . $b64->(':pw'), 'Basic ' . $b64->("prom\x00:x"),
	'Basic ' . $b64->(junk(48)), 'Basic ' . $b64->("\xe2\x82\xac:\xe2\x82\xac"), 'Basic ' . ('QUFB' x 1200),
	'Basic ' . ('QUFB' x 1025), 'Basic YWJj ZGVm', 'Basic YW Jj', 'Bearer x', 'Digest username="prom"',
	'Basic ' x 100, 'Basic ' . $b64->('prom:wrong'), "Basic YWJj\x00ZGVm", 'Basic ' . ' ' x 5000,
	'Basic ' . $b64->("prom:$password") . '=', 'Basic ' . $b64->("prom:$password") . ' trailing', 'BASIC ' . $b64->('a:b'),
	'Basic ' . junk(16), junk(40));
my @headers = ('', 'NoColonHere', ': empty-name', 'X: ' . ('h' x 7000), 'X-Big: ' . ('h' x 20000),
	join("\r\n", map { "X-$_: $_" } 1 .. 200), "X-Bin: " . junk(30), " folded continuation", "\tfolded",
	'Content-Length: -1', 'Content-Length: abc', 'Content-Length: 99999999999999999999', "Content-Length: 5\r\nContent-Length: 6",
	'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked', 'Host:', 'Host: ' . ('h' x 300), 'Connection: keep-alive',
	'Expect: 100-continue', 'Accept-Encoding: gzip', 'Accept-Encoding: ' . ('gzip,' x 300), 'Range: bytes=0-1',
	"X-Unicode: \xe2\x98\x83", "X-Nul: a\x00b", "Authorization: Basic    \r\nAuthorization: $good_auth", 'Cookie: ' . ('c=1; ' x 200));

# One request's bytes: a request line of the lists' parts (now and then raw
# junk instead), some headers, maybe an Authorization value; with
# $with_auth, the real password often, so that routes behind the login are
# fuzzed too. Line ends vary (CRLF, LF, CR alone, none at the end).
sub make_request
{
	my ($with_auth, $i) = @_;
	my $path = pick(@paths);
	$path = '/report/default?' . join('&', map { pick(@report_queries) } 1 .. 1 + int(rand(3))) if rand() < 0.15;
	my $line = rand() < 0.05 ? junk(1 + int(rand(200))) : join(' ', pick(@methods), $path, pick(@versions));
	$line = pick('GET', 'HEAD') . " $path HTTP/1.1" if rand() < 0.4;
	my @h = map { pick(@headers) } 1 .. int(rand(3));
	my $auth;
	if ($with_auth && rand() < 0.4) { $auth = $good_auth }
	elsif (rand() < 0.5) { $auth = pick(@auth_values) }
	# Well-formed unknown users cost a cost-10 bcrypt: a few of them only.
	$auth = 'Basic ' . $b64->("u$i:p") if $i % 100 == 7;
	push @h, "Authorization:$auth" if defined $auth;
	my $eol = pick("\r\n", "\r\n", "\r\n", "\n", "\r");
	my $req = join($eol, $line, @h) . $eol . $eol;
	$req = substr($req, 0, int(rand(length $req))) if rand() < 0.05;    # cut anywhere
	return $req;
}

# What an exception's text looks like: libstdc++'s (basic_string::substr:
# __pos ..., stoi, vector::_M_range_check), libpqxx's, PostgreSQL's.
my $exception_text = qr/basic_string|__pos|this->size\(\)|_M_\w|std::|stoi|stol|stod|out_of_range|invalid_argument|
	bad_alloc|terminate|what\(\)|pqxx|ERROR:|FATAL:|invalid input syntax|syntax error at|out of range for type/x;

# Sends the request on a raw socket, half-closes, reads the answer (at most
# 5 s); returns (status or 'closed', the whole answer).
sub send_raw
{
	my ($port, $req) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 5)
	  or return ('connect failed', "$!");
	local $SIG{PIPE} = 'IGNORE';
	my $off = 0;
	while ($off < length $req)
	{
		my $n = syswrite($s, $req, length($req) - $off, $off);
		last unless $n;    # the server answered and closed early
		$off += $n;
	}
	shutdown($s, 1);
	my ($answer, $sel, $deadline) = ('', IO::Select->new($s), time + 5);
	while (time < $deadline && $sel->can_read($deadline - time))
	{
		my $n = sysread($s, my $buf, 65536);
		last unless $n;
		$answer .= $buf;
	}
	close $s;
	my ($status) = $answer =~ m{\AHTTP/\d\.\d (\d{3})};
	return ($status // 'closed', $answer);
}

# Runs the cases in 4 client processes (the exporter serves 64 at once);
# each writes "port status request(hex)" for every bad answer, and counts.
my $per_server = $ENV{PSW_FUZZ_CASES} // 1200;
my @jobs;
for my $port ($open_port, $auth_port)
{
	my $with_auth = $port == $auth_port;
	push @jobs, map { [ $port, make_request($with_auth, $_) ] } 1 .. $per_server;
}
my $workers = 4;
my $t_fuzz = time;
my @kids;
for my $k (0 .. $workers - 1)
{
	my $pid = fork // die "fork: $!";
	if (!$pid)
	{
		open my $out, '>', "$tmp/fuzz-$k" or die;
		my %count;
		for (my $j = $k; $j < @jobs; $j += $workers)
		{
			my ($port, $req) = @{ $jobs[$j] };
			my ($status, $answer) = send_raw($port, $req);
			$count{$status}++;
			my $why = $status =~ /^5/ ? "status $status" : $answer =~ $exception_text ? "exception text ($&)" : '';
			$why = 'cannot connect' if $status eq 'connect failed';
			printf $out "BAD %s %d %s %s\n", $port == $auth_port ? 'auth' : 'open', $j, $why, unpack('H*', $req)
			  if $why;
		}
		print $out join(' ', 'COUNT', map { "$_=$count{$_}" } sort keys %count), "\n";
		close $out;
		POSIX::_exit(0);
	}
	push @kids, $pid;
}
waitpid($_, 0) for @kids;
$t_fuzz = time - $t_fuzz;
my (%count, @bad);
for my $k (0 .. $workers - 1)
{
	for (split /\n/, PostgreSQL::Test::Utils::slurp_file("$tmp/fuzz-$k"))
	{
		if (/^COUNT (.*)/) { for (split / /, $1) { my ($s, $n) = split /=/; $count{$s} += $n } }
		elsif (/^BAD (\S+) (\d+) (.*) ([0-9a-f]*)$/) { push @bad, "$1 #$2: $3: " . substr(pack('H*', $4), 0, 200) }
	}
}
my $sent = 0;
$sent += $_ for values %count;
is($sent, scalar @jobs, sprintf('%d malformed requests sent (seed %s)', scalar @jobs, $seed));
my @fivexx = grep { /^5/ } keys %count;
is("@fivexx", '', 'no request is answered 5xx');
# Up to three examples of each kind of bad answer.
my %kind;
push @{ $kind{ ($_ =~ /^\S+ #\d+: ([^:]*)/)[0] } }, $_ for @bad;
is(scalar(@bad), 0, 'no answer is a 5xx or carries an exception\'s text')
  or diag(join("\n", map { scalar(@{ $kind{$_} }) . " x $_:\n" . join("\n", @{ $kind{$_} }[ 0 .. ($#{ $kind{$_} } < 2 ? $#{ $kind{$_} } : 2) ]) } sort keys %kind));
ok(($count{401} // 0) > 0 && ($count{200} // 0) > 0 && ($count{400} // 0) > 0,
	'the cases reach the login (401), the routes (200) and the request parser (400)');
diag(sprintf('%d requests in %.1f s: ', $sent, $t_fuzz) . join(', ', map { "$_ x$count{$_}" } sort keys %count));

# Both exporters still serve after it all.
is((curl("http://127.0.0.1:$open_port/metrics"))[0], 200, 'the open exporter still answers /metrics');
is((curl("http://127.0.0.1:$auth_port/metrics", '-H', "Authorization: $good_auth"))[0], 200,
	'the auth exporter still answers /metrics');

$_->signal('TERM') for grep { $_->pumpable } @procs;
$_->finish for @procs;
@procs = ();
$node->stop;
diag(sprintf('034_serve_fuzz: %.1f s', time - $t_start));
done_testing();
