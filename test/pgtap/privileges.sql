-- Visibility of other users' queryids, as pg_stat_activity does it.
BEGIN;
SELECT plan(9);

CREATE ROLE psw_tap_plain LOGIN;
CREATE ROLE psw_tap_stats LOGIN IN ROLE pg_read_all_stats;

-- A superuser sees every queryid of active client backends, ours included.
SELECT ok((SELECT queryid IS NOT NULL FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()),
          'superuser sees its own queryid');

SET LOCAL ROLE psw_tap_plain;
SELECT ok((SELECT queryid IS NULL AND top_queryid IS NULL AND query_start IS NULL
             FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()),
          'plain user sees no queryid on a superuser''s row');
SELECT ok((SELECT wait_event_type IS NOT NULL FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()),
          'plain user still sees the wait of other users'' rows');
SELECT throws_ok('SET pg_stat_waits.timing = on', '42501', NULL,
                 'plain user cannot switch exact timing on');
SELECT throws_ok('SET pg_stat_waits.track = ''all''', '42501', NULL,
                 'plain user cannot change what is tracked');
SELECT throws_ok('SELECT pg_stat_waits_reset()', '42501', NULL,
                 'plain user cannot reset the statistics');
SELECT ok((SELECT count(*) FROM pg_stat_waits_history h
            WHERE h.usesysid <> (SELECT oid FROM pg_roles WHERE rolname = current_user)
              AND h.queryid IS NOT NULL) = 0,
          'plain user sees no queryid in other users'' history rows');
RESET ROLE;

SET LOCAL ROLE psw_tap_stats;
SELECT ok((SELECT queryid IS NOT NULL FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()),
          'pg_read_all_stats member sees queryids of other users');
RESET ROLE;

-- Every function of the extension runs with a fixed search_path.
SELECT is_empty($$
  SELECT p.oid::regprocedure::text FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
   WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')
     AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
     AND NOT coalesce(p.proconfig::text LIKE '%search_path=%', false)$$,
  'every extension function has a fixed search_path');

SELECT * FROM finish();
ROLLBACK;
