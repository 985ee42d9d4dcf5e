#!/usr/bin/env bash
# The live report page of `pg_stat_waits_report serve` and `report
# --compare`, against a running server (PGHOST/PGPORT/PGUSER from the
# environment; test/t/031_live_report.pl starts it): the demo's workload
# (pgbench, one session holding a row others want), then a lock storm (one
# session idle in transaction on a row, four blocked behind it). A real
# headless Chromium loads the page, clicks its own slice and window links,
# and measures it at 1400 and 800 px. Prints one TAP line per check.
#   test/report/live_checks.sh HTTP_PORT
set -u

main() {
  local p=0 f=0 port=${1:?port for serve} db=psw_live here bin tmp
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  ok()   { p=$((p + 1)); echo "ok - $*"; }
  bad()  { f=$((f + 1)); echo "not ok - $*"; }
  expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
  # jq over one JSON line: jqok WHAT FILTER FILE (the filter yields true).
  jqok() { expect "$1" bash -c "jq -e '$2' >/dev/null <<<\"\$0\"" "$3"; }
  q() { psql -X -At -d $db -c "$1"; }

  bin=$(pg_config --bindir)/pg_stat_waits_report
  tmp=$(mktemp -d /tmp/psw_live.XXXXXX)
  chmod 755 "$tmp"
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  psql -X -q -d $db -c "CREATE EXTENSION pg_stat_waits" -c "CREATE EXTENSION pg_stat_statements" \
       -c "CREATE TABLE psw_hold (id int PRIMARY KEY, v int)" -c "INSERT INTO psw_hold VALUES (1, 0)" >/dev/null
  pgbench -q -i -s 2 $db >/dev/null 2>&1

  "$bin" serve --listen "127.0.0.1:$port" --target "live=host=$PGHOST port=$PGPORT dbname=$db user=$PGUSER" \
      >"$tmp/serve.log" 2>&1 &
  local serve=$!
  local base="http://127.0.0.1:$port/report/live"

  # --- the demo's workload (tools/demo/demo.sh: pgbench, a session holding a
  # teller's row 3 s at a time, another queued behind it), timed exactly,
  # from a reset on. pgbench runs through the storm and the browser checks.
  q "SELECT pg_stat_waits_reset()" >/dev/null
  local t0 t2
  t0=$(q "SELECT extract(epoch FROM now())")
  export PGOPTIONS="-c pg_stat_waits.timing=on"
  pgbench -n -c 4 -j 2 -T 400 $db >"$tmp/pgbench.out" 2>&1 &
  local bench=$!
  ( for _ in 1 2 3; do
      psql -X -q -d $db -c "BEGIN" -c "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1" \
           -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null 2>&1
    done ) &
  local demo_holder=$!
  sleep 0.5
  ( for _ in 1 2 3; do
      psql -X -q -d $db -c "UPDATE pgbench_tellers SET tbalance = tbalance - 1 WHERE tid = 1" >/dev/null 2>&1
    done ) &
  local demo_waiter=$!

  # --- pg_stat_waits_timeline's last bucket (10 s, still filling) against
  # the activity view polled during it: from the bucket's start (multiples
  # of 10 s), for about 6 s of its 10, so a bucket divided by its full width
  # would read about 60% and fail. The same sessions on both sides: not
  # idle, not in a background process's main-loop wait (Activity), not this
  # script's own, not the sampler (which does not sample itself).
  local polls=() tl_line tl_start tl_aas act_avg
  sleep "$(q "SELECT 10.05 - extract(epoch FROM clock_timestamp())::numeric % 10")"
  for _ in $(seq 10); do
    polls+=("$(q "SELECT extract(epoch FROM clock_timestamp()), count(*) FILTER (WHERE state IS DISTINCT FROM 'idle'
                  AND wait_event_type IS DISTINCT FROM 'Activity' AND pid <> pg_backend_pid()
                  AND pid IS DISTINCT FROM (SELECT sampler_pid FROM pg_stat_waits_status))
                  FROM pg_stat_waits_activity")")
    sleep 0.5
  done
  tl_line=$(q "SELECT extract(epoch FROM bucket_start), sum(avg_active), max(extract(epoch FROM clock_timestamp() - bucket_start))
                 FROM pg_stat_waits_timeline('1 min', '10 s') WHERE wait_event_type IS DISTINCT FROM 'Activity'
                GROUP BY 1 ORDER BY 1 DESC LIMIT 1")
  tl_start=${tl_line%%|*}; tl_aas=$(cut -d'|' -f2 <<<"$tl_line")
  # shellcheck disable=SC2016  # awk's fields
  act_avg=$(printf '%s\n' "${polls[@]}" | awk -F'|' -v s="${tl_start:-0}" '$1 >= s { t += $2; n++ }
            END { if (n) printf "%.2f %d", t / n, n; else print "0 0" }')
  echo "  timeline's last bucket ($(cut -d'|' -f3 <<<"$tl_line" | cut -c1-4) s of 10 s): ${tl_aas:-none} sessions;" \
       "activity view during it: ${act_avg% *} (${act_avg#* } polls: $(printf '%s ' "${polls[@]}" | sed 's/[0-9.]*|//g'))"
  expect "pg_stat_waits_timeline's last (partial) bucket is within 20% of the sessions the activity view showed" \
         awk -v a="${tl_aas:-0}" -v b="${act_avg% *}" -v n="${act_avg#* }" \
             'BEGIN { exit !(n >= 6 && b > 0 && a >= 0.8 * b && a <= 1.2 * b) }'

  # --- sampled and exact shares of each of the demo workload's top 5
  # statements, both since the reset (exact times count from it; the window
  # starts there). A share from fewer than 100 samples (1 s of session time)
  # is noise of +-10 points or more: the workload runs until each of the top
  # 5 has 100 (at most 90 s; pgbench's lighter statements take longest).
  local shares rows n5 waited=0
  while :; do
    "$bin" report --from "$t0" --top 5 --html "$tmp/demo.html" -d $db 2>>"$tmp/report.log"
    rows=$(grep -o '<tr class="topsql"[^>]*>' "$tmp/demo.html")
    shares=$(grep -o 'data-samples="[0-9]*" data-load="[0-9.]*" data-cpu-sampled="[0-9.]*" data-cpu-exact="[0-9.]*"' \
               <<<"$rows" | sed 's/[^0-9. ]//g' | awk '{ print $1, $3, $4 }')
    n5=$(awk '$1 >= 100' <<<"$shares" | grep -c .)
    if [ "$n5" -ge 5 ] || [ $waited -ge 90 ]; then break; fi
    sleep 10; waited=$((waited + 10))
  done
  echo "  after $(q "SELECT round(extract(epoch FROM now()) - $t0)") s, top 5 statements' samples, CPU share sampled / exact:" \
       "$(tr '\n' ';' <<<"$shares")"
  expect "each of the top 5 statements has 100 samples and both shares ($(grep -c . <<<"$rows") rows, $n5 with both)" \
         test "$n5" -eq 5
  # shellcheck disable=SC2016  # awk's fields
  expect "their sampled and exact CPU shares agree within 15 points" \
         awk 'NF == 3 { n++; d = $2 - $3; if (d < 0) d = -d; if (d > 15) bad = 1 } END { exit bad || n != 5 }' <<<"$shares"

  # --- a calm window (pgbench alone) to compare the storm with.
  wait "$demo_holder" "$demo_waiter"
  local calm_from calm_to storm_from
  calm_from=$(q "SELECT extract(epoch FROM now())")
  sleep 8
  calm_to=$(q "SELECT extract(epoch FROM now())")

  # --- the lock storm: a holder idle in transaction, four sessions behind it.
  # The holder reads its statements from a FIFO kept open on fd 7; closing
  # it ends the session (nothing left behind holding the script's output).
  mkfifo "$tmp/hold"
  psql -X -q -d $db <"$tmp/hold" >/dev/null 2>&1 &
  local storm_holder=$!
  storm_from=$(q "SELECT extract(epoch FROM now() + interval '2 seconds')")
  exec 7>"$tmp/hold"
  echo "BEGIN; UPDATE psw_hold SET v = v + 1 WHERE id = 1;" >&7
  sleep 1
  local waiters=() i
  for i in 1 2 3 4; do
    psql -X -q -d $db -c "UPDATE psw_hold SET v = v + $i WHERE id = 1" >/dev/null 2>&1 &
    waiters+=($!)
  done
  unset PGOPTIONS
  local holder_pid
  holder_pid=$(q "SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%psw_hold%'")
  # Sessions in the activity view while the last 10 s bucket fills (the
  # same rule as load: active, not idle, client backends).
  local counts=() n
  sleep 10
  for _ in $(seq 12); do
    n=$(q "SELECT count(*) FROM pg_stat_waits_activity WHERE backend_type = 'client backend'
           AND state = 'active' AND pid <> pg_backend_pid()")
    counts+=("$n"); sleep 0.5
  done
  t2=$(q "SELECT extract(epoch FROM now())")
  "$bin" report --since 2min --bucket 10s --html "$tmp/storm.html" -d $db 2>>"$tmp/report.log"
  local last active_avg
  last=$(grep -o 'class="last-bucket">[0-9.]*' "$tmp/storm.html" | sed 's/.*>//')
  active_avg=$(printf '%s\n' "${counts[@]}" | awk '{ s += $1 } END { printf "%.2f", s / NR }')
  echo "  last bucket: ${last:-none} sessions; activity view during it: $active_avg (${counts[*]})"
  expect "the last (partial) bucket's load is within 20% of the sessions the activity view showed" \
         awk -v a="${last:-0}" -v b="$active_avg" 'BEGIN { exit !(b > 0 && a >= 0.8 * b && a <= 1.2 * b) }'

  # --- the live page in a real browser, while the storm lasts.
  local s1400=$tmp/states1400.json s800=$tmp/states800.json
  python3 "$here/cdp_page.py" "$base?window=5min" 1400 --click 'a.slice[data-slice="sql"]' \
      --click 'a.window[href*="window=1h"]' --click 'a.compare[href*="compare=prev"]' >"$s1400" 2>"$tmp/cdp.log"
  python3 "$here/cdp_page.py" "$base?window=5min&slice=event" 800 --click 'a.slice[data-slice="user"]' \
      >"$s800" 2>>"$tmp/cdp.log"
  local first at8 cpus
  first=$(sed -n 1p "$s1400"); at8=$(sed -n 1p "$s800")
  cpus=$(q "SELECT cpu_count FROM pg_stat_waits_status")
  jqok "the live page draws the CPU line" '.cpu_line' "$first"
  jqok "the CPU line is at the server's cpu_count ($cpus)" ".cpu_count == \"$cpus\"" "$first"
  jqok "the load chart has areas" '.areas >= 1' "$first"
  jqok "top SQL has a statement with non-zero load" '[.topsql[] | select(.load > 0)] | length > 0' "$first"
  # shellcheck disable=SC2016  # $1 and $2 are the statement's parameters
  jqok "top SQL's pgbench UPDATE is there with its full text" \
       '[.topsql[] | select(.text == "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2")] | length == 1' \
       "$first"
  jqok "the blocking session (pid ${holder_pid:-?}, idle in transaction) is listed" \
       "[.blockers[] | select(. == ${holder_pid:-0})] | length == 1" "$first"
  for f8 in "$first" "$at8"; do
    local w
    w=$(jq -r .width <<<"$f8")
    jqok "no element wider than the viewport at $w px ($(jq -c .overflow <<<"$f8"))" \
         '(.overflow | length) == 0 and .scroll_width <= .client_width' "$f8"
  done
  jqok "clicking the SQL slice link slices the load by SQL" \
       '.slice == "SQL" and (.url | test("slice=sql")) and .areas >= 1' "$(sed -n 2p "$s1400")"
  jqok "clicking the 1h window link switches the window and keeps the slice" \
       '.window == "last 1h" and (.url | test("window=1h")) and .slice == "SQL"' "$(sed -n 3p "$s1400")"
  jqok "clicking compare shows the window against the one before" '(.compare | length) > 0' "$(sed -n 4p "$s1400")"
  jqok "the user slice at 800 px fits too" \
       '.slice == "user" and (.overflow | length) == 0 and .scroll_width <= .client_width' "$(sed -n 2p "$s800")"

  # --- report --compare: the storm window against the calm one before it.
  "$bin" report --from "$storm_from" --to "$t2" --compare "$calm_from..$calm_to" --html "$tmp/compare.html" \
      -d $db 2>>"$tmp/report.log"
  local top_delta
  top_delta=$(sed -n '/<section id="compare">/,/<\/section>/p' "$tmp/compare.html" | grep -o 'data-key="[^"]*" data-delta="[^"]*"' | head -1)
  echo "  compare, first row: $top_delta"
  expect "report --compare puts the lock wait's rise at the top" \
         bash -c "grep -Eq 'data-key=\"Lock:[a-z]+\" data-delta=\"[0-9]' <<<\"\$0\"" "$top_delta"
  local code
  code=$(python3 -c "import urllib.request, urllib.error, sys
try: urllib.request.urlopen(sys.argv[1]); print(200)
except urllib.error.HTTPError as e: print(e.code)" "http://127.0.0.1:$port/report/nosuch")
  expect "an unknown target's page is a 404" test "$code" = 404

  exec 7>&-
  q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%psw_hold%' AND pid <> pg_backend_pid()" >/dev/null
  kill "$serve" "$bench" 2>/dev/null
  wait "$serve" "$bench" "$demo_holder" "$demo_waiter" "$storm_holder" "${waiters[@]}" 2>/dev/null
  if [ "$f" -eq 0 ]; then rm -rf "$tmp"; else echo "  live suite files kept in $tmp"; fi
  echo "# live checks: $p passed, $f failed"
  [ "$f" -eq 0 ]
}

main "$@"
