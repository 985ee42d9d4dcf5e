-- Sampling objects: privileges and visibility of other users' queryids in
-- history and profile (by the sampled usesysid).
BEGIN;
SELECT plan(15);

SELECT has_view('pg_stat_waits_history');
SELECT has_view('pg_stat_waits_profile');
SELECT columns_are('pg_stat_waits_history', ARRAY['sample_time', 'pid', 'leader_pid', 'backend_type', 'datid',
  'usesysid', 'state', 'wait_event_type', 'wait_event', 'queryid', 'top_queryid', 'query_start', 'blockers',
  'blocker_details', 'gpid']);
SELECT col_type_is('pg_stat_waits_history', 'gpid', 'bigint');
SELECT ok(NOT has_function_privilege('public', 'pg_stat_waits_reset()', 'EXECUTE'),
          'pg_stat_waits_reset() is revoked from PUBLIC');
SELECT ok(has_table_privilege('public', 'pg_stat_waits_history', 'SELECT')
          AND has_table_privilege('public', 'pg_stat_waits_profile', 'SELECT'),
          'history and profile are readable by everyone');

-- Make sure the superuser has sampled rows with a queryid (this very session).
SELECT pg_sleep(0.1::float8);

CREATE ROLE psw_tap_s_plain LOGIN;
CREATE ROLE psw_tap_s_stats LOGIN IN ROLE pg_read_all_stats;

SELECT ok((SELECT count(*) > 0 FROM pg_stat_waits_history WHERE pid = pg_backend_pid() AND queryid IS NOT NULL),
          'superuser sees queryids of its own samples');
-- The pg_sleep above: one execution, found again by pid and query_start.
SELECT set_config('psw_tap.sleep_start',
                  (SELECT max(query_start)::text FROM pg_stat_waits_history
                    WHERE pid = pg_backend_pid() AND wait_event = 'PgSleep'), true);
SELECT ok((SELECT samples > 0 FROM pg_stat_waits_execution_profile(pg_backend_pid(),
                                     current_setting('psw_tap.sleep_start')::timestamptz)
            WHERE wait_event = 'PgSleep'),
          'the execution profile of the pg_sleep has its PgSleep samples');
SET LOCAL ROLE psw_tap_s_plain;
SELECT ok((SELECT count(*) > 0 AND count(queryid) = 0 FROM pg_stat_waits_history WHERE pid = pg_backend_pid()),
          'plain user sees samples of a superuser without queryids');
SELECT ok((SELECT count(queryid) = 0 FROM pg_stat_waits_profile
            WHERE usesysid = (SELECT oid FROM pg_roles WHERE rolname = session_user)),
          'plain user sees no queryid in profile rows of other users');
SELECT throws_ok('SELECT pg_stat_waits_reset()', '42501', NULL, 'plain user may not reset');
SELECT ok((SELECT count(*) > 0 AND count(query_start) = 0 FROM pg_stat_waits_history WHERE pid = pg_backend_pid()),
          'plain user sees no query_start on samples of a superuser');
SELECT is_empty($$SELECT * FROM pg_stat_waits_execution_profile(pg_backend_pid(),
                    current_setting('psw_tap.sleep_start')::timestamptz)$$,
                'plain user gets no execution profile of a superuser''s statement');
RESET ROLE;
SET LOCAL ROLE psw_tap_s_stats;
SELECT ok((SELECT count(queryid) > 0 FROM pg_stat_waits_history WHERE pid = pg_backend_pid()),
          'pg_read_all_stats member sees queryids of other users'' samples');
SELECT isnt_empty($$SELECT * FROM pg_stat_waits_execution_profile(pg_backend_pid(),
                    current_setting('psw_tap.sleep_start')::timestamptz)$$,
                  'pg_read_all_stats member gets execution profiles of other users');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
