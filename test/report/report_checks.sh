#!/usr/bin/env bash
# pg_stat_waits_report against a running server (PGHOST/PGPORT/PGUSER from
# the environment; test/t/030_report.pl starts it and runs this script): a
# little workload, the HTML report rendered in headless Chromium, `top`
# driven in tmux, plain mode and the error paths. Prints one TAP line per
# check ("ok - ..." / "not ok - ..."); 030_report.pl counts them.
#   test/report/report_checks.sh FREE_PORT
# FREE_PORT: a port where no server listens (the unreachable-server check).
set -u

main() {
  local p=0 f=0 bin tmp db=psw_report sock obj html out rc free_port=${1:?free port}
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  ok()   { p=$((p + 1)); echo "ok - $*"; }
  bad()  { f=$((f + 1)); echo "not ok - $*"; }
  expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

  bin=$(pg_config --bindir)/pg_stat_waits_report   # what `make install DESTDIR=...` put in the bindir
  expect "make install DESTDIR=stage installed pg_stat_waits_report into the bindir" test -x "$bin"
  [ -x "$bin" ] || return 1
  tmp=$(mktemp -d /tmp/psw_report.XXXXXX)
  chmod 755 "$tmp"
  export HOME=$tmp   # chromium writes its crash and config files under HOME

  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" \
       -c "DROP DATABASE IF EXISTS ${db}_noext" -c "CREATE DATABASE ${db}_noext" >/dev/null
  psql -X -q -d $db -c "CREATE EXTENSION pg_stat_waits" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
  pgbench -q -i -s 1 $db >/dev/null 2>&1

  # Slow runs for the slowest-runs section: a statement blocked about 1.2 s
  # on a row lock (its blocker to be named), and the holder's 1.5 s sleep.
  psql -X -q -d $db -c "CREATE TABLE psw_slow (id int PRIMARY KEY)" -c "INSERT INTO psw_slow VALUES (1)" >/dev/null
  local slow_opts="-c pg_stat_waits.timing=on -c pg_stat_waits.capture_min_duration=500"
  PGOPTIONS=$slow_opts psql -X -q -d $db -c "BEGIN" -c "UPDATE psw_slow SET id = id WHERE id = 1" \
       -c "SELECT pg_sleep(1.5)" -c "COMMIT" >/dev/null 2>&1 &
  local slow_holder=$!
  sleep 0.3
  PGOPTIONS=$slow_opts psql -X -q -d $db -c "UPDATE psw_slow SET id = id + 0 WHERE id = 1" >/dev/null 2>&1
  wait "$slow_holder"


  # Workload, timed exactly where the build supports it (the GUC exists from
  # the foundation on): pgbench, one session holding a row lock for 8 s while another
  # waits for it, and one sleeping session.
  export PGOPTIONS="-c pg_stat_waits.timing=on"
  pgbench -n -c 3 -j 1 -T 7 $db >"$tmp/pgbench.out" 2>&1 &
  local bench=$!
  psql -X -q -d $db -c "BEGIN" -c "UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1" \
       -c "SELECT pg_sleep(8)" -c "COMMIT" >/dev/null 2>&1 &
  local holder=$!
  psql -X -q -d $db -c "SET application_name = 'psw_report_sleeper'" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
  local sleeper=$!
  sleep 0.5
  psql -X -q -d $db -c "UPDATE pgbench_branches SET bbalance = bbalance + 0 WHERE bid = 1" >/dev/null 2>&1 &
  local waiter=$!
  sleep 1.5
  unset PGOPTIONS
  local sleeper_pid
  sleeper_pid=$(psql -X -At -d $db -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'psw_report_sleeper'")

  # --- top in tmux: read the screen, quit with q, then again with Ctrl-C.
  sock=psw_report_$$
  local env="PGHOST='$PGHOST' PGPORT='$PGPORT' PGUSER='${PGUSER:-$(id -un)}'"
  tmux -L "$sock" -f /dev/null new-session -d -s top -x 150 -y 40 \
       "env $env '$bin' top -d $db; echo EXIT=\$? > '$tmp/top1.exit'; sleep 60"
  sleep 2.5
  tmux -L "$sock" capture-pane -p -t top >"$tmp/top1.screen"
  expect "top draws its header" grep -q "pg_stat_waits top" "$tmp/top1.screen"
  expect "top shows the sleeping session with Timeout:PgSleep" \
         grep -Eq "^${sleeper_pid:-none} .*Timeout:PgSleep" "$tmp/top1.screen"
  expect "top shows the blocked session waiting on Lock" grep -Eq "Lock:(transactionid|tuple)" "$tmp/top1.screen"
  # Whoever holds the row's tuple lock waits for the holder's transaction:
  # its line names the holder under BLOCKED BY.
  local holder_pid
  holder_pid=$(psql -X -At -d $db -c "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(8)'")
  expect "top names the row lock's holder as a blocker" grep -qF "←${holder_pid:-none}" "$tmp/top1.screen"
  expect "top lists the last minute's waits" \
         bash -c "sed -n '/TOP WAITS/,/^PID/p' '$tmp/top1.screen' | grep -q '%'"
  tmux -L "$sock" send-keys -t top q
  for _ in $(seq 30); do [ -f "$tmp/top1.exit" ] && break; sleep 0.1; done
  expect "q quits top with status 0" grep -qx "EXIT=0" "$tmp/top1.exit"
  tmux -L "$sock" capture-pane -p -t top >"$tmp/top1.after"
  expect "the terminal is restored after q (alternate screen left)" \
         bash -c "! grep -q 'pg_stat_waits top' '$tmp/top1.after'"
  tmux -L "$sock" kill-session -t top 2>/dev/null
  tmux -L "$sock" -f /dev/null new-session -d -s top2 -x 100 -y 20 \
       "env $env '$bin' top -d $db; echo EXIT=\$? > '$tmp/top2.exit'; sleep 60"
  # Until it has drawn (a machine shared with other builds may take more
  # than a second to start it).
  for _ in $(seq 50); do
    sleep 0.2
    tmux -L "$sock" capture-pane -p -t top2 >"$tmp/top2.screen"
    grep -q 'pg_stat_waits top' "$tmp/top2.screen" && break
  done
  expect "top fits a 100x20 terminal" \
         bash -c "[ \$(wc -L < '$tmp/top2.screen') -le 100 ] && grep -q 'pg_stat_waits top' '$tmp/top2.screen'"
  tmux -L "$sock" send-keys -t top2 C-c
  for _ in $(seq 30); do [ -f "$tmp/top2.exit" ] && break; sleep 0.1; done
  expect "Ctrl-C quits top cleanly" grep -qx "EXIT=0" "$tmp/top2.exit"
  tmux -L "$sock" kill-server 2>/dev/null

  # --- plain mode when stdout is not a terminal.
  "$bin" top --once -d $db >"$tmp/plain.out" 2>&1
  expect "top --once exits 0" test $? -eq 0
  expect "plain mode has no escape sequences" bash -c "! grep -q $'\x1b' '$tmp/plain.out'"
  expect "plain mode prints the sessions table" grep -q "^PID .*WAIT" "$tmp/plain.out"
  "$bin" top --count 2 --interval 200ms -d $db 2>&1 | cat >"$tmp/plain2.out"
  expect "top --count 2 prints two snapshots" test "$(grep -c 'pg_stat_waits top' "$tmp/plain2.out")" -eq 2

  # --- the HTML report, written while the sleeper still sleeps.
  html=$tmp/report.html
  "$bin" report --since 5min --html "$html" -d $db >"$tmp/report.log" 2>&1
  rc=$?
  psql -X -q -d $db -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE application_name = 'psw_report_sleeper'" >/dev/null
  wait "$bench" "$holder" "$waiter" "$sleeper" 2>/dev/null
  expect "report exits 0" test "$rc" -eq 0
  expect "report wrote an HTML document" grep -q '^<!DOCTYPE html>' "$html"
  expect "report is self-contained (no script, link, src=, url(), no URL but the SVG namespace)" \
         bash -c "! grep -Eq '<script|<link|src=|url\\(|@import' '$html' && \
                  ! grep -o 'https\\?://[^\"]*' '$html' | grep -vqx 'http://www.w3.org/2000/svg'"
  for obj in load topsql blocking sessions top exact queries slowruns histograms status; do
    expect "report has the $obj section" grep -q "<section id=\"$obj\">" "$html"
  done
  # Each section: data when the object exists, "not available" when not.
  section_of() { sed -n "/<section id=\"$1\">/,/<\/section>/p" "$html"; }
  local s o
  for s in sessions:pg_stat_waits_activity load:pg_stat_waits_history top:pg_stat_waits_top exact:pg_stat_waits \
           queries:pg_stat_waits_profile queries:pg_stat_waits_queries histograms:pg_stat_waits_histogram \
           slowruns:pg_stat_waits_executions status:pg_stat_waits_status; do
    o=${s#*:}; s=${s%%:*}
    expect "section $s reads $o" bash -c "! grep -q 'no <code>$o</code>' <<<\"\$0\"" "$(section_of "$s")"
  done
  expect "no section failed to read" bash -c "! grep -q 'could not read this section' '$html'"
  expect "status section lists sampler_pid and samples_taken" \
         bash -c "grep -q '<th>sampler_pid</th>' '$html' && grep -q '<th>samples_taken</th>' '$html'"
  local areas
  areas=$(grep -c '<polygon class="area"' "$html")
  expect "timeline chart has areas after the workload ($areas)" test "$areas" -ge 1
  expect "timeline chart shows CPU or Lock time" grep -Eq 'class="area" data-type="(CPU|Lock)"' "$html"
  expect "sessions-now chart shows the sleeping session (Timeout)" \
         grep -q '<rect class="bar" data-type="Timeout"' <(section_of sessions)
  expect "top wait events table has rows" grep -q '<table class="top">' "$html"
  expect "sampled top queries table has rows" grep -q '<table class="queries">' <(section_of queries)
  expect "exact wait events table has rows (workload ran with timing on)" grep -q '<table class="exact">' "$html"
  expect "histograms are drawn" grep -q '<svg [^>]*class="chart histogram"' "$html"
  expect "slowest runs list the blocked UPDATE with a bar" \
         bash -c "grep -q 'UPDATE psw_slow SET id = id + 0' <<<\"\$0\" && grep -q '<svg [^>]*class=\"bar run\"' <<<\"\$0\"" \
         "$(section_of slowruns)"
  expect "the blocked UPDATE's Lock wait is a segment of its bar" \
         grep -q '<rect class="seg" data-type="Lock"' <(section_of slowruns)
  # Needs the sampler's lock-blocker lookup (it fills what this reads).
  expect "the blocked UPDATE names its blocker" \
         bash -c "grep 'UPDATE psw_slow SET id = id + 0' <<<\"\$0\" | grep -q 'class=\"blocker\">pid [0-9]'" \
         "$(section_of slowruns)"
  expect "exact top queries table has rows" \
         bash -c "sed -n '/<h3>exact/,/<\/section>/p' '$html' | grep -q '<table class=\"queries\">'"

  # --- rendered by Chromium: SVG elements laid out, screenshot not blank.
  local chrome_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars)
  # A copy with a probe script (the report itself has none) that records
  # what the browser built from the SVG.
  sed 's#</body>#<script>(function(){var s=document.querySelectorAll("svg");var a=document.querySelectorAll("svg.timeline polygon.area");var w=0;a.forEach(function(e){if(e instanceof SVGPolygonElement){var b=e.getBBox();w+=b.width*b.height;}});var r=document.querySelectorAll("svg.events rect.bar");var rb=0;r.forEach(function(e){if(e instanceof SVGRectElement\&\&e.getBBox().width>0)rb++;});var g=document.querySelectorAll("svg.run rect.seg");var gb=0;g.forEach(function(e){if(e instanceof SVGRectElement\&\&e.getBBox().width>0)gb++;});document.body.setAttribute("data-probe","svgs="+s.length+" areas="+a.length+" area_px="+Math.round(w)+" bars="+rb+" runsegs="+gb);})();</script></body>#' \
      "$html" >"$tmp/probe.html"
  chmod a+r "$tmp"/*.html
  timeout 90 chromium "${chrome_flags[@]}" --user-data-dir="$tmp/chromium-dom" \
      --dump-dom "file://$tmp/probe.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
  local probe
  probe=$(grep -o 'data-probe="[^"]*"' "$tmp/dom.html")
  echo "  chromium probe: ${probe:-none}"
  expect "chromium parsed the report's SVG charts" grep -Eq 'svgs=[1-9]' <<<"$probe"
  expect "chromium laid out the sessions-now bars" grep -Eq 'bars=[1-9]' <<<"$probe"
  expect "chromium laid out the slowest runs' bars" grep -Eq 'runsegs=[1-9]' <<<"$probe"
  expect "chromium laid out the chart's areas with non-zero size" \
         grep -Eq "areas=$areas area_px=[1-9]" <<<"$probe"
  timeout 90 chromium "${chrome_flags[@]}" --user-data-dir="$tmp/chromium-shot" \
      --window-size=1200,1400 --screenshot="$tmp/report.png" "file://$html" >>"$tmp/chromium.log" 2>&1
  expect "chromium wrote a screenshot" test -s "$tmp/report.png"
  if [ -s "$tmp/report.png" ]; then
    local colours stats
    colours=$(grep -Eo 'class="(area|bar)" data-type="[^"]*"[^>]* fill="#[0-9a-f]*"' "$html" | sed 's/.*fill="//; s/"//' | sort -u)
    # shellcheck disable=SC2086
    stats=$(/usr/bin/python3 "$here/png_stats.py" "$tmp/report.png" $colours)
    echo "  screenshot: $(head -1 <<<"$stats")"
    # shellcheck disable=SC2016
    expect "screenshot is not blank (>2% non-white, >20 colours)" \
           awk 'NR==1 { exit !($3 > 0.02 && $4 > 20) }' <<<"$stats"
    # The colours the charts use follow the wait types the workload happened
    # to show; the sessions-now bar (Timeout) and a timeline area (CPU or
    # Lock, both asserted above) make at least two. One check covers them
    # all, so the suite's count of checks does not follow the workload.
    expect "screenshot is checked for at least two chart colours" \
           test "$(tail -n +2 <<<"$stats" | grep -c .)" -ge 2
    local c n faint=""
    while read -r c n; do
      echo "  chart colour $c: $n px"
      [ "$n" -ge 30 ] || faint+=" $c ($n px)"
    done < <(tail -n +2 <<<"$stats")
    expect "screenshot shows every chart colour on at least 30 px${faint:+ (not:$faint)}" test -z "$faint"
  fi

  # --- errors are clear.
  out=$("$bin" top --once -h 127.0.0.1 -p "$free_port" 2>&1); rc=$?
  expect "unreachable server: exit 1 and a clear message" \
         bash -c "[ $rc -eq 1 ] && grep -q 'cannot connect to the server' <<<\"\$0\"" "$out"
  out=$("$bin" report --html "$tmp/x.html" -d ${db}_noext 2>&1); rc=$?
  expect "database without the extension: exit 1 and says CREATE EXTENSION" \
         bash -c "[ $rc -eq 1 ] && grep -q 'not installed in database \"${db}_noext\".*CREATE EXTENSION pg_stat_waits' <<<\"\$0\"" "$out"
  expect "no report file written on error" test ! -e "$tmp/x.html"
  out=$("$bin" report --since 5 parsecs --html x 2>&1); rc=$?
  expect "bad duration is a usage error (exit 2)" test "$rc" -eq 2
  out=$("$bin" top --once -d "host=$PGHOST port=$PGPORT dbname=$db" 2>&1); rc=$?
  expect "-d accepts a connection string" test "$rc" -eq 0
  out=$(PGDATABASE=$db "$bin" top --once 2>&1); rc=$?
  expect "PGDATABASE and friends are honoured" test "$rc" -eq 0

  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS ${db}_noext" >/dev/null
  if [ "$f" -eq 0 ]; then rm -rf "$tmp"; else echo "  report suite files kept in $tmp"; fi
  echo "# report checks: $p passed, $f failed"
  [ "$f" -eq 0 ]
}

main "$@"
