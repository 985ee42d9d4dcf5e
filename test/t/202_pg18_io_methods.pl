# PostgreSQL 18's (and 19's) asynchronous I/O under exact timing: a cold sequential
# scan larger than shared_buffers under io_method = sync, worker and
# io_uring. What docs/timing.md says each number means is checked here:
# - sync: the query reads itself; its rows hold IO/DataFileRead.
# - worker: io workers do the bulk reads (IO/DataFileRead, timed in the io
#   workers, under backend type 'io worker' where the view shows backend
#   types); the query's own DataFileRead rows hold only the few reads it
#   still makes itself, and what it waited for the workers is its
#   IO/AioIoCompletion row.
# - io_uring: the query submits and waits inside liburing, which is
#   interposed: IO/AioIoUringSubmit (and AioIoUringExecution when it had to
#   wait for the kernel) in its rows, not CPU.
# In every mode a query's waits never exceed its elapsed time.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('io_methods');
plan skip_all => 'io_method is PostgreSQL 18+' if $node->pg_version < 18;
$node->init;
# 19 sizes the io worker pool itself, between io_min_workers and
# io_max_workers (18: a fixed io_workers).
my $workers = $node->pg_version->major >= 19 ? 'io_min_workers = 3' : 'io_workers = 3';
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'
pg_stat_waits.timing = on
shared_buffers = 16MB
$workers
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_waits;
CREATE EXTENSION pg_stat_statements;
CREATE TABLE big AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 120000) g;
VACUUM big;
CHECKPOINT;
});
my $blocks = $node->safe_psql('postgres', q{SELECT pg_relation_size('big') / 8192});
cmp_ok($blocks * 8192, '>', 3 * 16 * 1024 * 1024, 'table is larger than shared_buffers');

my $has_backend_type = $node->safe_psql('postgres', q{
SELECT count(*) FROM information_schema.columns
 WHERE table_name = 'pg_stat_waits' AND column_name = 'backend_type'});

for my $method ('sync', 'worker', 'io_uring')
{
    $node->append_conf('postgresql.conf', "io_method = $method");    # the last setting wins
    # Restart: io_method needs it, and shared buffers start cold.
    $node->stop;
    unless ($node->start(fail_ok => 1))
    {
        like(slurp_file($node->logfile), qr/io_uring/, "$method: server refuses io_uring here")
          if $method eq 'io_uring';
        next;
    }
    is($node->safe_psql('postgres', 'SHOW io_method'), $method, "$method: active");
    $node->safe_psql('postgres', 'SELECT pg_stat_statements_reset(); SELECT pg_stat_waits_reset();');
    is($node->safe_psql('postgres', 'SELECT count(*) FROM big'), '120000', "$method: cold scan");
    sleep 2;    # io workers and the backend flush within a second

    my $qid = $node->safe_psql('postgres',
        q{SELECT queryid FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM big'});
    my $elapsed = $node->safe_psql('postgres',
        qq{SELECT total_exec_time + total_plan_time FROM pg_stat_statements WHERE queryid = $qid});
    my %q = map { my ($e, $c, $t) = split /\|/; ($e => { calls => $c, ms => $t }) }
      split /\n/, $node->safe_psql('postgres', qq{
SELECT wait_event_type || '/' || wait_event, sum(calls), sum(total_time)
  FROM pg_stat_waits_queries WHERE queryid = $qid GROUP BY 1});
    my $io_ms = 0;
    $io_ms += $q{$_}{ms} for grep { m{^IO/} } keys %q;
    my $wait_ms = 0;
    $wait_ms += $q{$_}{ms} for grep { $_ ne 'CPU/CPU' } keys %q;
    note "$method: query rows: " . join(', ', map { "$_ $q{$_}{calls} calls $q{$_}{ms} ms" } sort keys %q);
    ok(exists $q{'CPU/CPU'}, "$method: the query has its CPU row");
    cmp_ok($wait_ms, '<=', $elapsed * 1.05 + 1, "$method: its waits ($wait_ms ms) fit in its elapsed time ($elapsed ms)");
    is(scalar(grep { m{^Unreported/(io_uring|preadv|pread)} } keys %q), 0,
        "$method: its reads are never Unreported");

    my $all_reads = $node->safe_psql('postgres',
        q{SELECT coalesce(sum(calls), 0) FROM pg_stat_waits WHERE wait_event_type = 'IO' AND wait_event = 'DataFileRead'});
    if ($method eq 'sync')
    {
        # Reads are combined up to io_combine_limit (128kB, 16 blocks).
        cmp_ok($q{'IO/DataFileRead'}{calls} // 0, '>=', $blocks / 16, 'sync: the query reads itself (IO/DataFileRead)');
        cmp_ok($io_ms, '>', 0, 'sync: its I/O time is a wait, not CPU');
    }
    elsif ($method eq 'worker')
    {
        my $own = $q{'IO/DataFileRead'}{calls} // 0;
        cmp_ok($own, '<', $blocks / 160, "worker: the query itself makes few reads ($own)");
        cmp_ok($all_reads - $own, '>=', $blocks / 16, 'worker: io workers\' reads are timed');
        ok(exists $q{'IO/AioIoCompletion'}, 'worker: the query waited for the workers under IO/AioIoCompletion');
      SKIP: {
            skip 'pg_stat_waits has no backend_type column in this build', 1 unless $has_backend_type;
            cmp_ok($node->safe_psql('postgres', q{
SELECT coalesce(sum(calls), 0) FROM pg_stat_waits
 WHERE backend_type = 'io worker' AND wait_event = 'DataFileRead'}), '>', 0,
                'worker: the reads appear under backend type io worker');
        }
    }
    else
    {
        my $interposed = $node->safe_psql('postgres',
            q{SELECT 'io_uring_submit' = ANY(interposed) AND 'io_uring_wait_cqes' = ANY(interposed) FROM pg_stat_waits_status});
        is($interposed, 't', 'io_uring: liburing\'s submit and wait are interposed');
        cmp_ok($q{'IO/AioIoUringSubmit'}{calls} // 0, '>', 0, 'io_uring: the query submits under IO/AioIoUringSubmit');
        cmp_ok($io_ms, '>', 0, 'io_uring: its I/O time is a wait, not CPU');
    }
}

$node->stop;
done_testing();
