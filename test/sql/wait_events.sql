-- The wait-event catalog pg_stat_waits measured from the server at start:
-- every event it lists has a real, unique name (per-class counts differ by
-- release: wait_events.out is PostgreSQL 15's, wait_events_1.out 18's,
-- wait_events_2.out 19's, wait_events_3.out 16's, wait_events_4.out 17's).
-- (pg_stat_statements' LWLock tranche is left out: it is listed only when
-- that library is preloaded too.)
SELECT wait_event_type, count(*) AS events
  FROM pg_stat_waits_wait_events() WHERE wait_event <> 'pg_stat_statements' GROUP BY 1 ORDER BY 1;

SELECT count(*) AS unnamed FROM pg_stat_waits_wait_events()
 WHERE wait_event IN ('???', 'unknown wait event') OR wait_event_type IN ('???', '???');

SELECT count(*) = count(DISTINCT event_index) AS unique_indexes,
       count(*) = count(DISTINCT (wait_event_type, wait_event)) AS unique_names
  FROM pg_stat_waits_wait_events();

SELECT wait_event_type, wait_event FROM pg_stat_waits_wait_events()
 WHERE wait_event IN ('ClientRead', 'PgSleep', 'DataFileRead', 'WalWriterMain', 'transactionid', 'WALWrite', 'pread')
 ORDER BY 1, 2;
