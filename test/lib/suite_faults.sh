# Faults: kill -9 of a backend mid-query makes the postmaster crash-restart
# every process; the extension must re-initialize and keep working.
# Sourced by run_all_suites with the main test cluster up.
# shellcheck shell=bash

faults_q() { psql -X -A -t -q -d postgres -c "$1"; }

suite_faults() {
  local p=0 f=0 victim log_before
  check() {  # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then p=$((p + 1)); else f=$((f + 1)); echo "FAILED: $what" >&2; fi
  }
  faults_q "CREATE EXTENSION IF NOT EXISTS pg_stat_waits" >/dev/null
  psql -X -q -d postgres -c "SELECT pg_sleep(30)" >/dev/null 2>&1 &
  local sleeper=$!
  sleep 0.5
  victim=$(faults_q "SELECT pid FROM pg_stat_waits_activity WHERE wait_event = 'PgSleep' LIMIT 1")
  check "sleeping backend visible before the crash" test -n "$victim"
  log_before=$(wc -l <"$PGHOST/server.log")
  [ -n "$victim" ] && kill -9 "$victim"
  wait "$sleeper" 2>/dev/null || true
  # The postmaster restarts everything; wait until it accepts connections again.
  local i
  for i in $(seq 1 100); do faults_q "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
  check "server accepts connections after crash-restart" faults_q "SELECT 1"
  check "server log shows the crash-restart" \
    bash -c "tail -n +$((log_before + 1)) '$PGHOST/server.log' | grep -q 'all server processes terminated; reinitializing'"
  check "activity view works after re-initialization" \
    test "$(faults_q "SELECT count(*) FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()")" = 1
  check "status view works after re-initialization" \
    test "$(faults_q "SELECT count(*) FROM pg_stat_waits_status")" = 1
  check "killed pid is gone from the activity view" \
    test "$(faults_q "SELECT count(*) FROM pg_stat_waits_activity WHERE pid = ${victim:-0}")" = 0
  check "no extension error in the server log" \
    bash -c "! tail -n +$((log_before + 1)) '$PGHOST/server.log' | grep -i 'pg_stat_waits' | grep -E 'ERROR|FATAL|PANIC'"

  # An ERROR inside the sampler: it exits alone, the postmaster starts a new
  # one, no crash-restart, and other sessions keep running.
  local old_sampler new_sampler restarts_before sleeper2
  restarts_before=$(grep -c 'all server processes terminated; reinitializing' "$PGHOST/server.log" || true)
  psql -X -q -d postgres -c "SELECT pg_sleep(2)" >/dev/null 2>&1 &
  sleeper2=$!
  old_sampler=$(faults_q "SELECT pg_stat_waits_inject_sampler_fault()")
  check "a sampler was running to fail" test -n "$old_sampler"
  new_sampler=""
  for i in $(seq 1 30); do
    new_sampler=$(faults_q "SELECT sampler_pid FROM pg_stat_waits_status WHERE sampler_pid <> ${old_sampler:-0}")
    [ -n "$new_sampler" ] && break
    sleep 0.1
  done
  check "a new sampler runs within 3 s of the injected error" test -n "$new_sampler"
  check "the injected error is in the server log" grep -q 'fault injected by pg_stat_waits_inject_sampler_fault' "$PGHOST/server.log"
  check "no crash-restart after the sampler's error" \
    test "$(grep -c 'all server processes terminated; reinitializing' "$PGHOST/server.log" || true)" = "$restarts_before"
  check "a session running meanwhile finished normally" wait "$sleeper2"
  local taken1 taken2
  taken1=$(faults_q "SELECT samples_taken FROM pg_stat_waits_status"); sleep 0.3
  taken2=$(faults_q "SELECT samples_taken FROM pg_stat_waits_status")
  check "the new sampler samples" test "$taken2" -gt "$taken1"
  check "plain users cannot inject faults" bash -c "! psql -X -q -d postgres -c 'CREATE ROLE psw_fault_plain' -c 'SET ROLE psw_fault_plain' -c 'SELECT pg_stat_waits_inject_sampler_fault()' >/dev/null 2>&1"
  faults_q "DROP ROLE IF EXISTS psw_fault_plain" >/dev/null
  record faults "$p" "$f"
}

suite_faults
