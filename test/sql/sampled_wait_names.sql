-- Every row of the sampled views names its wait. A backend that is idle to
-- pg_stat_waits but outside any wait event (here: parsing and analysing a
-- long statement, before the statement starts) is running: 'CPU', not a row
-- with blank names in pg_stat_waits_top.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_waits;
RESET client_min_messages;
ALTER SYSTEM SET pg_stat_waits.sample_idle = on;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW pg_stat_waits.sample_idle;
SELECT clock_timestamp() AS t0 \gset
SELECT format('SELECT count(*) FROM (VALUES (1)) v(x) WHERE x IN (%s)', string_agg(i::text, ','))
  FROM generate_series(1, 300000) i \gexec
SELECT pg_sleep(0.05);
-- The case happened: this backend was sampled idle, outside any wait event.
SELECT count(*) > 0 AS idle_outside_wait_sampled
  FROM pg_stat_waits_history
 WHERE pid = pg_backend_pid() AND sample_time >= :'t0' AND state = 'idle' AND wait_event_type = 'CPU'
   AND wait_event = 'CPU';
-- And no sampled row has blank names.
SELECT count(*) AS blank_rows FROM pg_stat_waits_top('1 hour', 100000)
 WHERE wait_event_type IS NULL OR wait_event IS NULL;
SELECT count(*) AS blank_rows FROM pg_stat_waits_timeline('1 hour', '1 min')
 WHERE wait_event_type IS NULL OR wait_event IS NULL;
SELECT count(*) AS blank_rows FROM pg_stat_waits_profile
 WHERE wait_event_type IS NULL OR wait_event IS NULL;
SELECT count(*) AS blank_rows FROM pg_stat_waits_history
 WHERE sample_time >= :'t0' AND (wait_event_type IS NULL OR wait_event IS NULL);
ALTER SYSTEM RESET pg_stat_waits.sample_idle;
SELECT pg_reload_conf();
