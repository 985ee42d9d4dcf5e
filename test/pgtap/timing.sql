-- Exact timing objects: columns and types, privileges, errors.
BEGIN;
SELECT plan(38);

SELECT has_view('pg_stat_waits');
SELECT columns_are('pg_stat_waits', ARRAY['wait_event_type', 'wait_event', 'calls', 'total_time', 'mean_time', 'max_time', 'backend_type']);
SELECT col_type_is('pg_stat_waits', 'wait_event_type', 'text');
SELECT col_type_is('pg_stat_waits', 'wait_event', 'text');
SELECT col_type_is('pg_stat_waits', 'calls', 'bigint');
SELECT col_type_is('pg_stat_waits', 'total_time', 'double precision');
SELECT col_type_is('pg_stat_waits', 'mean_time', 'double precision');
SELECT col_type_is('pg_stat_waits', 'max_time', 'double precision');

SELECT has_view('pg_stat_waits_queries');
SELECT columns_are('pg_stat_waits_queries', ARRAY['queryid', 'datid', 'usesysid', 'wait_event_type', 'wait_event', 'calls', 'total_time', 'backend_type']);
SELECT col_type_is('pg_stat_waits_queries', 'queryid', 'bigint');
SELECT col_type_is('pg_stat_waits_queries', 'datid', 'oid');
SELECT col_type_is('pg_stat_waits_queries', 'usesysid', 'oid');
SELECT col_type_is('pg_stat_waits_queries', 'calls', 'bigint');
SELECT col_type_is('pg_stat_waits_queries', 'total_time', 'double precision');

SELECT has_view('pg_stat_waits_executions');
SELECT columns_are('pg_stat_waits_executions', ARRAY['started', 'ended', 'pid', 'datid', 'usesysid', 'queryid', 'query', 'elapsed', 'cpu', 'waits', 'blockers', 'gpid']);
SELECT col_type_is('pg_stat_waits_executions', 'gpid', 'bigint');
SELECT col_type_is('pg_stat_waits_executions', 'started', 'timestamp with time zone');
SELECT col_type_is('pg_stat_waits_executions', 'pid', 'integer');
SELECT col_type_is('pg_stat_waits_executions', 'queryid', 'bigint');
SELECT col_type_is('pg_stat_waits_executions', 'elapsed', 'double precision');
SELECT col_type_is('pg_stat_waits_executions', 'cpu', 'double precision');
SELECT col_type_is('pg_stat_waits_executions', 'waits', 'jsonb');
SELECT col_type_is('pg_stat_waits_executions', 'blockers', 'jsonb');
SELECT ok(has_table_privilege('public', 'pg_stat_waits_executions', 'SELECT'), 'pg_stat_waits_executions readable by everyone');

SELECT function_returns('pg_stat_waits_histogram', ARRAY['text', 'text'], 'setof record');
SELECT is((SELECT count(*) FROM pg_stat_waits_histogram('IO', 'DataFileRead')), 32::bigint, 'histogram has 32 buckets');
SELECT is((SELECT upper_ms FROM pg_stat_waits_histogram('IO', 'DataFileRead') ORDER BY lower_ms DESC LIMIT 1),
          'Infinity'::float8, 'last bucket is open-ended');
SELECT is((SELECT count(*) FROM pg_stat_waits_histogram('Unreported', 'pread')), 32::bigint, 'Unreported/<call> is a name');
SELECT throws_ok($$SELECT * FROM pg_stat_waits_histogram('IO', 'NoSuchEvent')$$, '22023', NULL, 'unknown event is an error');
SELECT is((SELECT count(*) FROM pg_stat_waits_histogram(NULL, 'x')), 0::bigint, 'NULL name: empty (strict)');

SELECT ok(has_table_privilege('public', 'pg_stat_waits', 'SELECT'), 'pg_stat_waits readable by everyone');
-- Test-only functions are not in the product; the test module's are
-- superuser only.
SELECT hasnt_function('pg_stat_waits_bench_wrapper', ARRAY['text', 'bigint'], 'the product has no wrapper benchmark');
SELECT hasnt_function('pg_stat_waits_inject_sampler_fault', ARRAY[]::text[], 'the product has no fault injector');
CREATE EXTENSION pg_stat_waits_test;
SELECT ok(NOT has_function_privilege('public', 'pg_stat_waits_bench_wrapper(text, bigint)', 'EXECUTE'),
          'test module: benchmark function revoked from PUBLIC');
SELECT ok(NOT has_function_privilege('public', 'pg_stat_waits_inject_sampler_fault()', 'EXECUTE'),
          'test module: fault injector revoked from PUBLIC');
SELECT throws_ok($$SET pg_stat_waits.timing = nonsense$$, '22023', NULL, 'bad timing value refused');

SELECT * FROM finish();
ROLLBACK;
