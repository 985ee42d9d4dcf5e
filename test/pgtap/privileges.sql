-- Visibility of other users' queryids, as pg_stat_activity does it.
BEGIN;
SELECT plan(4);

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
RESET ROLE;

SET LOCAL ROLE psw_tap_stats;
SELECT ok((SELECT queryid IS NOT NULL FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()),
          'pg_read_all_stats member sees queryids of other users');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
