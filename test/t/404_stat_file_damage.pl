# A damaged statistics file, in every way the file can be damaged: the
# server starts, the log names the problem at LOG, no view shows a value the
# workload did not produce (each shows what the intact file held, or
# nothing), a refused file is kept aside as pg_stat_waits.stat.bad as it
# was, and the next clean shutdown writes a file that loads without
# complaint. Flipped bytes in each section (caught by its CRC), values the
# server could not have produced in a file of the previous format (no CRCs:
# caught by the checks on each value), truncation, random bytes, an empty
# file; a directory in the file's place and a read-only pg_stat/ are named
# at start and at shutdown.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PswTest;
use PswStatFile;
use Time::HiRes qw(usleep);

my $node = psw_node('damage',
	conf => [
		'pg_stat_waits.timing = on', 'pg_stat_waits.track = all',
		'pg_stat_waits.sample_idle = on', 'pg_stat_waits.capture_min_duration = 100'
	],
	extensions => 1);

# A workload that fills every section: sampled waits (profile, minute
# buckets), exact timing rows, a slow execution.
$node->safe_psql('postgres', 'SELECT pg_sleep(0.3); SELECT count(*) FROM generate_series(1, 200000)');
ok( wait_until(
		sub {
			$node->safe_psql('postgres',
				"SELECT count(*) > 0 FROM pg_stat_waits_profile WHERE wait_event = 'PgSleep'") eq 't';
		}),
	'the sampler saw the sleep');
# After a restart the minute buckets answer pg_stat_waits_top from closed
# minutes only: let the sampler close this one (minutes count from
# PostgreSQL's epoch, 2000-01-01).
my $pg_minute = sub { return int((time() - 946684800) / 60); };
my $workload_minute = $pg_minute->();
ok(wait_until(sub { $pg_minute->() > $workload_minute }, 70), 'the minute of the workload ended');
usleep(300_000);

# From here on nothing adds to the statistics: the sampler idles and
# nothing is timed, so what the views show comes from the file alone.
$node->append_conf('postgresql.conf', "pg_stat_waits.sample_period = 0\npg_stat_waits.timing = off\n");
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_waits.stat';
my $good = read_bytes($file);
is(join(',', map { $_->{tag} } stat_sections($good)), 'profile,minutes,timing,execs',
	'a clean shutdown saves every section');

# Each view, and the section it comes from.
my %views = (
	profile => q{SELECT backend_type, datid, usesysid, queryid, wait_event_type, wait_event, samples, est_time
	               FROM pg_stat_waits_profile ORDER BY 1, 2, 3, 4, 5, 6},
	minutes => q{SELECT wait_event_type, wait_event, samples, pct FROM pg_stat_waits_top('1 day', 1000) ORDER BY 1, 2},
	timing => q{SELECT wait_event_type, wait_event, backend_type, calls, total_time, max_time
	              FROM pg_stat_waits ORDER BY 1, 2, 3},
	timing_queries => q{SELECT queryid, wait_event_type, wait_event, backend_type, calls, total_time
	                      FROM pg_stat_waits_queries ORDER BY 1, 2, 3, 4},
	execs => q{SELECT started, ended, pid, queryid, elapsed FROM pg_stat_waits_executions ORDER BY 1});
my %section_of = (profile => 'profile', minutes => 'minutes', timing => 'timing',
	timing_queries => 'timing', execs => 'execs');

sub snapshot
{
	return { map { $_ => $node->safe_psql('postgres', $views{$_}) } keys %views };
}

sub start_with
{
	my ($bytes) = @_;
	write_bytes($file, $bytes) if defined $bytes;
	unlink "$file.bad";
	my $offset = -s $node->logfile;
	$node->start;
	return $offset;
}

my $log_since = sub { return slurp_file($node->logfile, $_[0]); };

start_with($good);
my $ref = snapshot();
for my $v (sort keys %views)
{
	isnt($ref->{$v}, '', "the intact file shows $v rows");
}
$node->stop;

# damaged(NAME, BYTES, LOG_RE, REFUSED...): starts on BYTES; the log matches
# LOG_RE; the views of the REFUSED sections ('all': every one) are empty,
# the others as the intact file had them; the file is kept aside; the file
# the next shutdown writes loads without a complaint and shows the same.
sub damaged
{
	my ($name, $bytes, $log_re, @refused) = @_;
	my $all = grep { $_ eq 'all' } @refused;
	my $offset = start_with($bytes);
	like($log_since->($offset), $log_re, "$name: the log says what is wrong, at LOG");
	my $now = snapshot();
	for my $v (sort keys %views)
	{
		my $gone = $all || grep { $_ eq $section_of{$v} } @refused;
		is($now->{$v}, $gone ? '' : $ref->{$v}, "$name: $v " . ($gone ? 'shows nothing' : 'as saved'));
	}
	ok(-e "$file.bad" && read_bytes("$file.bad") eq $bytes, "$name: the refused file is kept aside as it was");
	$node->stop;
	$offset = start_with(undef);
	unlike($log_since->($offset), qr/pg_stat_waits: .*(not loaded|could not)/,
		"$name: the file the next shutdown wrote loads");
	is_deeply(snapshot(), $now, "$name: and shows the same");
	$node->stop;
	return;
}

# ---- flipped bytes in each section: its CRC --------------------------------
for my $s (stat_sections($good))
{
	my $bad = $good;
	my $at = $s->{off} + int($s->{len} / 2);
	substr($bad, $at, 8) = substr($bad, $at, 8) ^ ("\x5a" x 8);
	damaged("8 bytes flipped in $s->{tag}", $bad,
		qr/LOG:  pg_stat_waits: section "$s->{tag}" of "pg_stat\/pg_stat_waits.stat" not loaded: its checksum does not match \(the file was changed\); loaded: /,
		$s->{tag});
}

# ---- the whole file ----------------------------------------------------------
damaged('truncated', substr($good, 0, int(length($good) / 2)),
	qr/LOG:  pg_stat_waits: statistics file "pg_stat\/pg_stat_waits.stat" not loaded: statistics file is truncated; statistics start empty/,
	'all');
srand(58);
damaged('random bytes', join('', map { chr(int(rand(256))) } 1 .. 4096),
	qr/not loaded: not a pg_stat_waits statistics file; statistics start empty/, 'all');
damaged('zero length', '', qr/LOG:  pg_stat_waits: statistics file "pg_stat\/pg_stat_waits.stat" not loaded: the file is empty/,
	'all');

# ---- the previous format (no CRCs): every value is checked --------------------
my $old = stat_as_format2($good);
my $offset = start_with($old);
like($log_since->($offset),
	qr/LOG:  pg_stat_waits: "pg_stat\/pg_stat_waits.stat" is of format 2, without checksums: loaded profile, minutes, timing, execs after checking its values/,
	'a file of format 2 loads, once');
is_deeply(snapshot(), $ref, 'with every view as saved');
ok(!-e $file && !-e "$file.bad", 'and is removed');
$node->stop;
is(unpack('V', substr(read_bytes($file), 8, 4)), 3, 'the next shutdown writes format 3');

# ---- slow runs saved by 1.2: the execs section's version 1 ------------------
# Its records had no Citus global pids (ExecRecordV1 in
# src/core/exec_record_v1.h: 1416 bytes; today's 1456 add 8 after queryid
# and 8 after each of the 4 blockers). The file of format 2 (no CRCs to
# recompute) with the section written back in version 1's layout loads
# every slow run as saved, and the next shutdown writes version 2.
{
	my $x = stat_section($old, 'execs');
	my ($size, $index_count, $pad, $records) = unpack('V v v Q<', substr($old, $x->{off}, 16));
	is($size, 1456, 'the execs records are of the size this test converts');
	my $payload = pack('V v v Q<', 1416, $index_count, $pad, $records);
	for my $i (0 .. $records - 1)
	{
		my $r = substr($old, $x->{off} + 16 + $i * $size, $size);
		$payload .= substr($r, 0, 40) . substr($r, 48, 224) . substr($r, 272, 24)
		  . join('', map { substr($r, 296 + 32 * $_, 24) } 0 .. 3) . substr($r, 424, 1032);
	}
	my $v1 = $old;
	substr($v1, $x->{head}, 24 + $x->{len}) = pack('Z8 V V Q<', 'execs', 1, 0, length($payload)) . $payload;
	# The trailer (the last 24 bytes) holds the length of what precedes it.
	substr($v1, -8, 8) = pack('Q<', length($v1) - 24);
	my $offset = start_with($v1);
	like($log_since->($offset),
		qr/is of format 2, without checksums: loaded profile, minutes, timing, execs after checking its values/,
		'slow runs saved by 1.2 (execs version 1) load');
	is_deeply(snapshot(), $ref, 'with every view as saved');
	is($node->safe_psql('postgres', 'SELECT count(*), count(gpid) FROM pg_stat_waits_executions'),
		"$records|0", 'every slow run, without a gpid');
	$node->stop;
	is(stat_section(read_bytes($file), 'execs')->{version}, 2, 'the next shutdown writes execs version 2');
}

my $now_minute = $pg_minute->();
my %implausible = (
	# the first entry's count: more than every sample recorded
	profile => [ 48 + 24, pack('Q<', 9223372036854775807), 'its entries count more samples than were recorded' ],
	# the current minute (Header: nbuckets, pad, evicted, then the current
	# bucket: seq, nrows, minute), a day ahead
	minutes => [ 24, pack('q<', $now_minute + 1440), "a minute lies outside the clock's range" ],
	# the first event's calls (magic, 6 header words, 2 counters)
	timing => [ 48, pack('Q<', 2**63), "an event's calls or time are out of range" ],
	# the first record's pid (header of 16 bytes; started, ended, pid)
	execs => [ 16 + 16, pack('l<', -1), "a slow execution's process or times are impossible" ]);
my $m = stat_section($old, 'minutes');
my $saved_minute = unpack('q<', substr($old, $m->{off} + 24, 8));
ok($saved_minute > $now_minute - 60 && $saved_minute <= $now_minute, 'the current minute is where the test expects it');
for my $tag (sort keys %implausible)
{
	my ($at, $value, $why) = @{ $implausible{$tag} };
	my $bad = $old;
	substr($bad, stat_section($old, $tag)->{off} + $at, length($value)) = $value;
	damaged("format 2, an impossible value in $tag", $bad,
		qr/LOG:  pg_stat_waits: section "$tag" of "pg_stat\/pg_stat_waits.stat" not loaded: \Q$why\E; loaded: /, $tag);
}

# ---- a path that cannot be written ---------------------------------------------
unlink $file;
mkdir $file or die "mkdir $file: $!";
$offset = start_with(undef);
like($log_since->($offset),
	qr/LOG:  pg_stat_waits: "pg_stat\/pg_stat_waits.stat" is a directory, not a statistics file: nothing loaded, and no statistics can be saved until it is removed/,
	'a directory in the file\'s place is named at start');
is_deeply(snapshot(), { map { $_ => '' } keys %views }, 'and nothing is shown');
$offset = -s $node->logfile;
$node->stop;
like($log_since->($offset),
	qr/LOG:  could not (open|rename) file "pg_stat\/pg_stat_waits.stat[^"]*"[^\n]*: Is a directory/,
	'and at shutdown, with the OS error');
ok(!-e "$file.tmp", 'the temp file is removed');
rmdir $file or die "rmdir $file: $!";

SKIP:
{
	skip 'a read-only directory does not stop root', 5 if $> == 0;
	my $dir = $node->data_dir . '/pg_stat';
	write_bytes($file, $good);
	chmod 0500, $dir or die "chmod $dir: $!";
	$offset = start_with(undef);
	like($log_since->($offset),
		qr/LOG:  pg_stat_waits: cannot create "pg_stat\/pg_stat_waits.stat.tmp": Permission denied; statistics will not be saved at shutdown/,
		'a read-only pg_stat/ is named at start');
	is_deeply(snapshot(), $ref, 'the file is still read');
	$offset = -s $node->logfile;
	$node->stop;
	like($log_since->($offset),
		qr/LOG:  pg_stat_waits: could not create "pg_stat\/pg_stat_waits.stat.tmp": Permission denied; the statistics of this run are not saved/,
		'and at shutdown, with the OS error');
	chmod 0700, $dir or die "chmod $dir: $!";
	$offset = start_with(undef);
	is_deeply(snapshot(), $ref, 'writable again, the file left in place loads');
	$node->stop;
	ok(-e $file, 'and is saved at shutdown');
}

done_testing();
