-- pg_stat_waits_activity and pg_stat_waits_status: columns and live rows.
CREATE EXTENSION pg_stat_waits;

SELECT attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'pg_stat_waits_activity'::regclass AND attnum > 0 ORDER BY attnum;

-- This session: active, on CPU, with the id pg_stat_activity shows.
SELECT a.state, a.wait_event_type, a.wait_event, a.backend_type,
       a.queryid = s.query_id AS same_queryid, a.top_queryid = a.queryid AS top_is_self,
       a.datid = s.datid AS same_db, a.usesysid = s.usesysid AS same_user,
       a.query_start IS NOT NULL AS has_start, a.leader_pid IS NULL AS no_leader
  FROM pg_stat_waits_activity a JOIN pg_stat_activity s USING (pid)
 WHERE a.pid = pg_backend_pid();

-- Background processes are listed with their type; no pid twice.
SELECT count(*) FILTER (WHERE backend_type = 'checkpointer') AS checkpointers,
       count(*) = count(DISTINCT pid) AS unique_pids
  FROM pg_stat_waits_activity;

-- Every live pg_stat_activity process is in the view.
SELECT count(*) AS missing FROM pg_stat_activity s
 WHERE NOT EXISTS (SELECT 1 FROM pg_stat_waits_activity a WHERE a.pid = s.pid);

SELECT attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'pg_stat_waits_status'::regclass AND attnum > 0 ORDER BY attnum;

SELECT sample_period_ms, history_size, profile_max, timing, shmem_bytes > 0 AS has_shmem,
       stats_reset <= now() AS reset_in_past
  FROM pg_stat_waits_status;
