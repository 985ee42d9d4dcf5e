-- The PG 15 wait-event catalog compiled into pg_stat_waits matches the server:
-- every event it knows has a real, unique name.
SELECT wait_event_type, count(*) AS events
  FROM pg_stat_waits_wait_events() GROUP BY 1 ORDER BY 1;

SELECT count(*) AS unnamed FROM pg_stat_waits_wait_events()
 WHERE wait_event IN ('???', 'unknown wait event') OR wait_event_type IN ('???', '???');

SELECT count(*) = count(DISTINCT event_index) AS unique_indexes,
       count(*) = count(DISTINCT (wait_event_type, wait_event)) AS unique_names
  FROM pg_stat_waits_wait_events();

SELECT wait_event_type, wait_event FROM pg_stat_waits_wait_events()
 WHERE wait_event IN ('ClientRead', 'PgSleep', 'DataFileRead', 'WALSync', 'transactionid', 'WALWrite', 'pread')
 ORDER BY 1, 2;
