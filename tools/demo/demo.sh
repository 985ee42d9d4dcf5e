# ./run demo: a throwaway cluster, a contended workload, and what the views show.
# shellcheck shell=bash

demo_psql() { psql -X -q -d psw_demo "$@"; }

run_demo() {
  local main
  # pg_stat_waits listed last: its hooks run first and see every statement id
  # before pg_stat_statements hides utility ids from the hooks after it.
  new_cluster main "max_connections = 100" "shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'"
  log "cluster up at $PGHOST port $PGPORT"
  psql -X -q -d postgres -c "CREATE DATABASE psw_demo"
  demo_psql -c "CREATE EXTENSION pg_stat_waits" -c "CREATE EXTENSION pg_stat_statements"
  log "exact timing on for every session (ALTER SYSTEM + reload)"
  demo_psql -c "ALTER SYSTEM SET pg_stat_waits.timing = on" -c "SELECT pg_reload_conf()" >/dev/null
  log "pgbench -i -s 2"
  pgbench -q -i -s 2 psw_demo >/dev/null 2>&1

  log "workload: pgbench TPC-B with 4 clients for 12 s, plus two sessions fighting over one row"
  pgbench -n -c 4 -j 2 -T 12 psw_demo >"$main/pgbench.out" 2>&1 &
  local bench=$!
  # Holder takes the row lock for 3 s at a time; the waiter queues behind it.
  ( for _ in 1 2 3; do
      demo_psql -c "BEGIN" -c "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1" \
                -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null 2>&1
    done ) &
  local holder=$!
  sleep 0.5
  ( for _ in 1 2 3; do
      demo_psql -c "UPDATE pgbench_tellers SET tbalance = tbalance - 1 WHERE tid = 1" >/dev/null 2>&1
    done ) &
  local waiter=$!

  sleep 2
  log "pg_stat_waits_activity (client backends, now)"
  demo_psql -c "SELECT pid, state, wait_event_type, wait_event, queryid, top_queryid,
                       round(extract(epoch FROM now() - query_start)::numeric, 3) AS running_s, blockers
                  FROM pg_stat_waits_activity WHERE backend_type = 'client backend'
                 ORDER BY state, wait_event_type NULLS LAST, pid"
  log "the same sessions, by wait event"
  demo_psql -c "SELECT wait_event_type, wait_event, count(*) AS sessions
                  FROM pg_stat_waits_activity WHERE state <> 'idle'
                 GROUP BY 1, 2 ORDER BY 3 DESC"
  log "background processes"
  demo_psql -c "SELECT pid, backend_type, wait_event_type, wait_event
                  FROM pg_stat_waits_activity WHERE backend_type <> 'client backend' ORDER BY backend_type"
  local extra
  for extra in "$PSW_ROOT"/tools/demo/demo_*.sh; do
    [ -f "$extra" ] || continue
    # shellcheck disable=SC1090
    source "$extra"
  done
  # The report while the workload still runs: its "sessions now" shows the
  # sessions at work, and its last bucket is one still filling.
  if declare -F demo_report_write >/dev/null; then demo_report_write; fi
  wait "$bench" "$holder" "$waiter" 2>/dev/null || true
  log "pgbench: $(grep -E '^tps' "$main/pgbench.out" | head -1)"
  log "pg_stat_waits: exact wait times of the whole demo (ms)"
  demo_psql -c "SELECT wait_event_type, wait_event, calls, round(total_time::numeric, 1) AS total_ms,
                       round(mean_time::numeric, 3) AS mean_ms, round(max_time::numeric, 1) AS max_ms,
                       backend_type
                  FROM pg_stat_waits WHERE wait_event_type NOT IN ('Activity')
                 ORDER BY total_time DESC LIMIT 12"
  log "pg_stat_waits_queries: where the blocked UPDATE's time went"
  demo_psql -c "SELECT q.wait_event_type, q.wait_event, q.calls, round(q.total_time::numeric, 1) AS total_ms
                  FROM pg_stat_waits_queries q
                 WHERE q.queryid = (SELECT queryid FROM pg_stat_statements
                                     WHERE query LIKE 'UPDATE pgbench_tellers SET tbalance = tbalance - %' LIMIT 1)
                 ORDER BY q.total_time DESC" 2>/dev/null || true
  log "pg_stat_waits_executions: the slowest runs (capture_min_duration, 1 s by default), their waits and blockers"
  demo_psql -c "SELECT pid, round(elapsed::numeric) AS elapsed_ms, round(cpu::numeric, 1) AS cpu_ms,
                       (SELECT string_agg(w->>'wait_event' || ' ' || round((w->>'time_ms')::numeric) || ' ms', ', ')
                          FROM jsonb_array_elements(waits) w) AS waits,
                       (SELECT string_agg((b->>'pid') || ' (' || (b->>'state') || ')', ', ')
                          FROM jsonb_array_elements(blockers) b) AS blocked_by,
                       left(query, 60) AS query
                  FROM pg_stat_waits_executions ORDER BY elapsed DESC LIMIT 6"
  log "pg_stat_waits_status"
  demo_psql -x -c "SELECT * FROM pg_stat_waits_status"
  if declare -F demo_report_show >/dev/null; then demo_report_show; fi
}
