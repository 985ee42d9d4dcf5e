# ./run screenshots: the live report page of a demo workload, photographed
# by headless Chromium at 1400 and 800 px into docs/img/ (docs/report.md
# shows them). A throwaway cluster, the demo's kind of workload (pgbench,
# a session holding a row lock others wait for), serve's /report/NAME.
# shellcheck shell=bash

run_screenshots() {
  local main port bin=$PSW_BINDIR/pg_stat_waits_report out=$PSW_ROOT/docs/img w
  new_cluster main "max_connections = 100" "shared_preload_libraries = 'pg_stat_statements, pg_stat_waits'" \
    "pg_stat_waits.timing = on"
  psql -X -q -d postgres -c "CREATE DATABASE psw_demo"
  psql -X -q -d psw_demo -c "CREATE EXTENSION pg_stat_waits" -c "CREATE EXTENSION pg_stat_statements"
  pgbench -q -i -s 2 psw_demo >/dev/null 2>&1
  log "workload: pgbench, 4 clients, and a session holding a teller's row lock (30 s)"
  pgbench -n -c 4 -j 2 -T 30 psw_demo >/dev/null 2>&1 &
  local bench=$!
  ( for _ in 1 2 3 4 5; do
      psql -X -q -d psw_demo -c "BEGIN" -c "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1" \
           -c "SELECT pg_sleep(4)" -c "COMMIT" >/dev/null 2>&1
    done ) &
  local holder=$!
  port=$(free_port 19866)
  "$bin" serve --listen "127.0.0.1:$port" -d psw_demo >"$main/serve.log" 2>&1 &
  local serve=$!
  sleep 25
  mkdir -p "$out"
  for w in 1400 800; do
    log "docs/img/report-$w.png"
    python3 "$PSW_ROOT/test/report/cdp_page.py" "http://127.0.0.1:$port/report/default?window=5min" "$w" \
      --shot "$out/report-$w.png" >/dev/null || { kill "$serve"; return 1; }
  done
  kill "$serve"
  wait "$bench" "$holder" "$serve" 2>/dev/null || true
}
