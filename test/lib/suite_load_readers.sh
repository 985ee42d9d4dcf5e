# Load plus readers: pgbench at 2 x cores clients while another session loops
# over every reader (and reset): no error, no deadlock, and no backend ever
# waits on the extension (its LWLock tranche never shows in their waits).
# Short by default; 60 s under ./run test --long.
# shellcheck shell=bash

suite_load_readers() {
  local p=0 f=0 secs=5 clients dir
  [ "${PSW_LONG:-0}" = 1 ] && secs=60
  clients=$((2 * $(nproc)))
  local q="psql -X -A -t -q -d psw_load"
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS psw_load" -c "CREATE DATABASE psw_load" >/dev/null
  $q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_waits" >/dev/null
  pgbench -q -i -s 2 psw_load >/dev/null 2>&1
  dir=$(mktemp -d /tmp/pgsw.load.XXXXXX)

  # The readers: every view/function that exists in this build, plus reset.
  local readers=(
    "SELECT count(*) FROM pg_stat_waits_activity"
    "SELECT count(*) FROM pg_stat_waits_status"
  )
  local obj
  for obj in pg_stat_waits_history pg_stat_waits_profile pg_stat_waits pg_stat_waits_queries; do
    [ "$($q -c "SELECT to_regclass('$obj') IS NOT NULL")" = t ] && readers+=("SELECT count(*) FROM $obj")
  done
  [ "$($q -c "SELECT to_regproc('pg_stat_waits_top') IS NOT NULL")" = t ] && readers+=("SELECT count(*) FROM pg_stat_waits_top('1 minute')")
  [ "$($q -c "SELECT to_regproc('pg_stat_waits_timeline') IS NOT NULL")" = t ] && readers+=("SELECT count(*) FROM pg_stat_waits_timeline('5 minutes', '10 seconds')")
  [ "$($q -c "SELECT to_regproc('pg_stat_waits_reset') IS NOT NULL")" = t ] && readers+=("SELECT pg_stat_waits_reset()")
  printf '%s;\n' "${readers[@]}" >"$dir/readers.sql"

  pgbench -n -c "$clients" -j "$(nproc)" -T "$secs" psw_load >"$dir/pgbench.out" 2>&1 &
  local bench=$!
  local loops=0 reader_errors=0 ext_waits=0 polls=0 end=$((SECONDS + secs))
  while [ $SECONDS -lt $end ]; do
    $q -f "$dir/readers.sql" >/dev/null 2>>"$dir/reader.err" || reader_errors=$((reader_errors + 1))
    loops=$((loops + 1))
    # Any client backend waiting on the extension's LWLock tranche?
    ext_waits=$((ext_waits + $($q -c "SELECT count(*) FROM pg_stat_activity
                                       WHERE backend_type = 'client backend' AND wait_event = 'pg_stat_waits'")))
    polls=$((polls + 1))
  done
  if ! timeout 60 bash -c "wait $bench" 2>/dev/null; then wait "$bench" || true; fi
  local tps errors
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$dir/pgbench.out" | head -1)
  errors=$(grep -ciE 'error|aborted' "$dir/pgbench.out" || true)
  echo "load+readers: ${secs}s, $clients clients, tps=${tps:-?}, $loops reader loops over ${#readers[@]} readers, $polls wait polls"
  if [ -n "$tps" ] && [ "$errors" -eq 0 ]; then p=$((p + 1)); else f=$((f + 1)); echo "FAILED: pgbench under readers" >&2; tail "$dir/pgbench.out" >&2; fi
  if [ "$reader_errors" -eq 0 ]; then p=$((p + 1)); else f=$((f + 1)); echo "FAILED: reader errors" >&2; head "$dir/reader.err" >&2; fi
  if [ "$loops" -ge 3 ]; then p=$((p + 1)); else f=$((f + 1)); echo "FAILED: readers made only $loops loops (stuck?)" >&2; fi
  if [ "$ext_waits" -eq 0 ]; then p=$((p + 1)); else f=$((f + 1)); echo "FAILED: $ext_waits backend waits on the pg_stat_waits LWLock" >&2; fi
  rm -rf "$dir"
  record load-readers "$p" "$f"
}

suite_load_readers
