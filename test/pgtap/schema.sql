-- Schema of pg_stat_waits objects: columns, types, privileges.
BEGIN;
SELECT plan(39);

SELECT has_view('pg_stat_waits_activity');
SELECT columns_are('pg_stat_waits_activity', ARRAY['pid', 'leader_pid', 'backend_type', 'datid', 'usesysid',
  'state', 'wait_event_type', 'wait_event', 'wait_time', 'queryid', 'top_queryid', 'query_start', 'blockers',
  'gpid']);
SELECT col_type_is('pg_stat_waits_activity', 'gpid', 'bigint');
-- Without Citus preloaded nothing reads Citus's names: a client calling
-- itself a Citus connection carries no gpid.
SET application_name = 'citus_internal gpid=10000000042';
SELECT is((SELECT gpid FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()), NULL,
          'gpid is NULL without Citus, whatever application_name says');
RESET application_name;
SELECT col_type_is('pg_stat_waits_activity', 'pid', 'integer');
SELECT col_type_is('pg_stat_waits_activity', 'leader_pid', 'integer');
SELECT col_type_is('pg_stat_waits_activity', 'backend_type', 'text');
SELECT col_type_is('pg_stat_waits_activity', 'datid', 'oid');
SELECT col_type_is('pg_stat_waits_activity', 'usesysid', 'oid');
SELECT col_type_is('pg_stat_waits_activity', 'state', 'text');
SELECT col_type_is('pg_stat_waits_activity', 'wait_event_type', 'text');
SELECT col_type_is('pg_stat_waits_activity', 'wait_event', 'text');
SELECT col_type_is('pg_stat_waits_activity', 'wait_time', 'double precision');
SELECT col_type_is('pg_stat_waits_activity', 'queryid', 'bigint');
SELECT col_type_is('pg_stat_waits_activity', 'top_queryid', 'bigint');
SELECT col_type_is('pg_stat_waits_activity', 'query_start', 'timestamp with time zone');
SELECT col_type_is('pg_stat_waits_activity', 'blockers', 'integer[]');

SELECT has_view('pg_stat_waits_status');
SELECT col_type_is('pg_stat_waits_status', 'sampler_pid', 'integer');
SELECT col_type_is('pg_stat_waits_status', 'sample_period_ms', 'integer');
SELECT col_type_is('pg_stat_waits_status', 'samples_taken', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'last_sample_time', 'timestamp with time zone');
SELECT col_type_is('pg_stat_waits_status', 'history_size', 'integer');
SELECT col_type_is('pg_stat_waits_status', 'history_used', 'integer');
SELECT col_type_is('pg_stat_waits_status', 'profile_entries', 'integer');
SELECT col_type_is('pg_stat_waits_status', 'profile_max', 'integer');
SELECT col_type_is('pg_stat_waits_status', 'profile_dropped', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'profile_evicted', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'buckets_evicted', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'queries_evicted', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'queries_dropped', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'timing', 'boolean');
SELECT col_type_is('pg_stat_waits_status', 'interposed', 'text[]');
SELECT col_type_is('pg_stat_waits_status', 'shmem_bytes', 'bigint');
SELECT col_type_is('pg_stat_waits_status', 'stats_reset', 'timestamp with time zone');
SELECT col_type_is('pg_stat_waits_status', 'cpu_count', 'integer');

-- Readable by everyone, like pg_stat_activity.
SELECT ok(has_table_privilege('public', 'pg_stat_waits_activity', 'SELECT'), 'PUBLIC may read activity');
SELECT ok(has_table_privilege('public', 'pg_stat_waits_status', 'SELECT'), 'PUBLIC may read status');
SELECT ok(NOT has_function_privilege('public', 'pg_stat_waits_require_preload()', 'EXECUTE'),
          'internal preload check is not for PUBLIC');

SELECT * FROM finish();
ROLLBACK;
