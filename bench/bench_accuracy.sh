# Accuracy: waits of known length are injected and compared with what each
# tool reports: pg_stat_waits' exact time (view pg_stat_waits, when timing
# exists), its sampled estimate (pg_stat_waits_profile.est_time = samples x
# period) and pg_wait_sampling's (profile count x profile_period), against
# the time the waiting client measured around its statement (for the cold
# scan: PostgreSQL's own I/O timing of the same reads, track_io_timing).
# shellcheck shell=bash

# timed_ms NAME SQL: runs SQL, prints the client-side elapsed ms.
timed_ms() {
  "$PSW_BINDIR/psql" -X -At -h "${BENCH_DIR[$1]}" -p "${BENCH_PORT[$1]}" -U postgres -d postgres \
    -c '\timing on' -c "$2" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

# acc_reset NAME TOOL / acc_read NAME TOOL TYPE EVENT -> "exact_ms sampled_ms"
acc_reset() {
  case $2 in
    psw)
      if [ -n "$(bsql "$1" "SELECT to_regproc('pg_stat_waits_reset')")" ]; then
        bsql "$1" "SELECT pg_stat_waits_reset()" >/dev/null
      fi ;;
    pgws) bsql "$1" "SELECT pg_wait_sampling_reset_profile()" >/dev/null ;;
  esac
}

acc_read() {
  local name=$1 tool=$2 t=$3 e=$4 exact=NA sampled=NA
  case $tool in
    psw)
      [ "${BENCH_FEAT[psw_timing]:-0}" = 1 ] && exact=$(bsql "$name" \
        "SELECT coalesce(sum(total_time), 0) FROM pg_stat_waits WHERE wait_event_type = '$t' AND wait_event = '$e'")
      [ "${BENCH_FEAT[psw_profile]:-0}" = 1 ] && [ "${BENCH_FEAT[psw_sampler]:-0}" = 1 ] && sampled=$(bsql "$name" \
        "SELECT coalesce(sum(est_time), 0) FROM pg_stat_waits_profile WHERE wait_event_type = '$t' AND wait_event = '$e'") ;;
    pgws)
      sampled=$(bsql "$name" "SELECT coalesce(sum(count), 0) * current_setting('pg_wait_sampling.profile_period')::int
                              FROM pg_wait_sampling_profile WHERE event_type = '$t' AND event = '$e'") ;;
  esac
  echo "${exact:-NA} ${sampled:-NA}"
}

# acc_inject NAME CASE T TOOL -> client-measured ms of the waiting statement
# (io: PostgreSQL's own read time of it; the exact side goes to acc_io_exact)
acc_inject() {
  local name=$1 kase=$2 t=$3 hold ms
  hold=$(awk -v t="$t" 'BEGIN { print t + 0.4 }')
  case $kase in
    sleep) ms=$(timed_ms "$name" "SELECT pg_sleep($t)") ;;
    rowlock)
      bsql "$name" "BEGIN; SELECT 1 FROM acc WHERE id = 1 FOR UPDATE; SELECT pg_sleep($hold); COMMIT;" >/dev/null &
      sleep 0.4
      ms=$(timed_ms "$name" "UPDATE acc SET v = v + 1 WHERE id = 1")
      wait ;;
    advisory)
      bsql "$name" "SELECT pg_advisory_lock(4242); SELECT pg_sleep($hold); SELECT pg_advisory_unlock(4242);" >/dev/null &
      sleep 0.4
      ms=$(timed_ms "$name" "SELECT pg_advisory_lock(4242); SELECT pg_advisory_unlock(4242)")
      wait ;;
    io)
      # Cold read: the table's pages are clean after CHECKPOINT, then dropped
      # from the OS page cache; shared_buffers is small and a big seq scan
      # uses a ring, so every page is read from the file. The client time is
      # an upper bound of the I/O time (the scan's CPU is in it too).
      bsql "$name" "CHECKPOINT" >/dev/null
      local f
      for f in "${BENCH_DIR[$name]}/data/$(bsql "$name" "SELECT pg_relation_filepath('big')")"*; do
        dd if="$f" iflag=nocache count=0 status=none 2>/dev/null || true
      done
      # The truth is PostgreSQL's own timing of the same reads
      # (track_io_timing, as EXPLAIN (ANALYZE, BUFFERS) reports it for the
      # top plan node), not the statement's elapsed time, which also holds
      # the scan's CPU. No parallel workers: one process, one clock.
      # Planning's reads (catalog pages) count on both sides: EXPLAIN lists
      # them under "Planning:". The exact side is this backend's own
      # DataFileRead time during the statement (read before and after in the
      # same session: new connections read catalog pages too).
      local out q
      q="SELECT coalesce(sum(total_time), 0) FROM pg_stat_waits WHERE wait_event_type = 'IO' AND wait_event = 'DataFileRead'"
      rm -f "$BENCH_TMP/acc_io_exact"
      if [ "${4:-}" = psw ] && [ "${BENCH_FEAT[psw_timing]:-0}" = 1 ]; then
        out=$(bsql "$name" "SET max_parallel_workers_per_gather = 0; $q;
                            EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) SELECT count(*) FROM big; $q")
        awk 'NR == 1 { b = $1 } { l = $1 } END { printf "%.3f\n", l - b }' <<<"$out" >"$BENCH_TMP/acc_io_exact"
      else
        out=$(bsql "$name" "SET max_parallel_workers_per_gather = 0;
                            EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) SELECT count(*) FROM big")
      fi
      ms=$(awk '/I\/O Timings:/ && match($0, /read=[0-9.]+/) {
                  v = substr($0, RSTART + 5, RLENGTH - 5) + 0
                  if (!top) { top = 1; s += v } else if (planning) { s += v; planning = 0 } }
                /^ *Planning:/ { planning = 1 }
                END { if (top) printf "%.3f\n", s }' <<<"$out") ;;
  esac
  echo "${ms:-NA}"
}

bench_accuracy() {
  local quick=$1 t reps rows
  if [ "$quick" = 1 ]; then t=0.5; reps=1; rows=300000; else t=2; reps=2; rows=1500000; fi
  log "bench: accuracy (injected waits of ${t} s, $reps repetitions)"
  md_section 40_accuracy
  local cases=("sleep Timeout PgSleep" "rowlock Lock transactionid" "advisory Lock advisory" "io IO DataFileRead")
  local tools=() tool cfg
  if [ "${BENCH_FEAT[psw_sampler]:-0}" = 1 ] || [ "${BENCH_FEAT[psw_timing]:-0}" = 1 ]; then tools+=(psw); fi
  bench_cfg_available pg_wait_sampling && tools+=(pgws)
  for tool in "${tools[@]}"; do
    cfg=$([ "$tool" = psw ] && echo psw_timing || echo pg_wait_sampling)
    local iom=()
    [ "$PSW_PG_MAJOR" -ge 18 ] && iom=("io_method = sync")  # synchronous reads: DataFileRead is the read
    bench_start acc "$(bench_cfg_conf "$cfg")" "shared_buffers = 16MB" "autovacuum = off" "track_io_timing = on" \
      "${iom[@]}"
    bsql acc "CREATE EXTENSION $([ "$tool" = psw ] && echo pg_stat_waits || echo pg_wait_sampling)" >/dev/null
    bsql acc "CREATE TABLE acc (id int PRIMARY KEY, v int); INSERT INTO acc VALUES (1, 0);
              CREATE TABLE big AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, $rows) g" >/dev/null
    bsql acc "VACUUM ANALYZE big" >/dev/null
    local c kase ty ev r truth vals
    for c in "${cases[@]}"; do
      read -r kase ty ev <<<"$c"
      for r in $(seq "$reps"); do
        acc_reset acc "$tool"
        truth=$(acc_inject acc "$kase" "$t" "$tool")
        sleep 0.15   # let the sampler's last period land in the profile
        vals=$(acc_read acc "$tool" "$ty" "$ev")
        if [ "$kase" = io ] && [ -s "$BENCH_TMP/acc_io_exact" ]; then vals="$(cat "$BENCH_TMP/acc_io_exact") ${vals#* }"; fi
        metric accuracy_raw "$tool" "$kase truth r=$r" "$truth" ms
        metric accuracy_raw "$tool" "$kase exact r=$r" "${vals% *}" ms
        metric accuracy_raw "$tool" "$kase sampled r=$r" "${vals#* }" ms
      done
    done
    bench_stop acc
  done
  # Two more cold scans on 18. 18's initdb turns data checksums on (15's
  # leaves them off), and 18's read timing (track_io_timing) also covers
  # verifying the pages read, after the read itself: an 18 cluster without
  # checksums compares like with like. And a page dropped from this
  # machine's cache may still come from the host's at memory speed (the
  # scan of a file with nothing cached then runs 5-10 times faster than the
  # first), which makes that verification a large share of PostgreSQL's
  # read time: with direct I/O (debug_io_direct, 16+) no cache of this
  # machine is involved and every read reaches the storage, as a cold scan
  # does on a server.
  local csum_cases=()
  if [ "$PSW_PG_MAJOR" -ge 18 ] && [[ " ${tools[*]} " == *" psw "* ]] && [ "${BENCH_FEAT[psw_timing]:-0}" = 1 ]; then
    acc_io_variant io_nocsum "$rows" "$t" "$reps" --no-data-checksums
    acc_io_variant io_direct "$rows" "$t" "$reps" "" "debug_io_direct = data"
    csum_cases=("io_nocsum IO DataFileRead" "io_direct IO DataFileRead")
  fi

  md "## 4. Accuracy" ""
  md "Waits of known length injected one at a time (nominal ${t} s, $reps repetitions each, figures summed"
  md "over repetitions): \`pg_sleep\`, a row lock held by another session (Lock/transactionid), an advisory"
  md "lock held by another session (Lock/advisory), and a cold sequential scan of a ${rows}-row table with"
  md "its pages dropped from the OS cache, without parallel workers (IO/DataFileRead; \`io_method = sync\` on 18)."
  md "*truth*: elapsed time of the waiting statement measured by the client; for I/O, PostgreSQL's own"
  md "timing of the same reads (\`track_io_timing = on\`, the read time EXPLAIN (ANALYZE, BUFFERS) reports"
  md "for the scan, planning's reads included). *exact*: \`pg_stat_waits.total_time\` (for I/O the scanning"
  md "backend's own, read before and after the statement in its session); *sampled*: \`pg_stat_waits_profile.est_time\` and pg_wait_sampling's profile"
  md "count × profile_period. Error = (reported − truth) / truth." ""
  md "| wait | truth ms (pg_stat_waits run) | pg_stat_waits exact | pg_stat_waits sampled | truth ms (pg_wait_sampling run) | pg_wait_sampling sampled |"
  md "|---|---:|---:|---:|---:|---:|"
  local tr ex sa tr2 sa2 label
  for c in "${cases[@]}" "${csum_cases[@]}"; do
    read -r kase ty ev <<<"$c"
    tr=$(acc_sum psw "$kase truth"); ex=$(acc_sum psw "$kase exact"); sa=$(acc_sum psw "$kase sampled")
    tr2=$(acc_sum pgws "$kase truth"); sa2=$(acc_sum pgws "$kase sampled")
    metric accuracy psw "$kase" "$tr $ex $sa" "truth exact sampled ms"
    metric accuracy pgws "$kase" "$tr2 NA $sa2" "truth exact sampled ms"
    label="$ty/$ev ($kase)"
    [ "$kase" = io ] && [ "$PSW_PG_MAJOR" -ge 18 ] && label="$ty/$ev (io, data checksums on: 18's initdb default)"
    [ "$kase" = io_nocsum ] && label="$ty/$ev (io, \`initdb --no-data-checksums\`, as 15's default)"
    [ "$kase" = io_direct ] && label="$ty/$ev (io, \`debug_io_direct = data\`: every read reaches the storage; checksums on)"
    md "| $label | $(fmt "$tr" 0) | $(acc_cell "$ex" "$tr") | $(acc_cell "$sa" "$tr") |" \
       "$(fmt "$tr2" 0) | $(acc_cell "$sa2" "$tr2") |"
  done
  if [ ${#csum_cases[@]} -gt 0 ]; then
    md "" "On 18, PostgreSQL's read time (\`track_io_timing\`) runs from staging the read to the end of its"
    md "completion callbacks, which verify every page read (its checksum too, when the cluster has"
    md "checksums); \`DataFileRead\` is the wait for the read alone. That verification is CPU time of a"
    md "fixed size per page: a small share of a read that reaches the storage (direct I/O), a large one"
    md "of a read this virtual machine's host serves from its own cache, which dropping the pages from"
    md "this machine's cache does not prevent. With checksums off the two measure nearly the same thing."
  fi
  local io_reps=""
  for c in io "${csum_cases[@]}"; do
    read -r kase _ <<<"$c"
    for r in $(seq "$reps"); do
      tr=$(metric_get accuracy_raw psw "$kase truth r=$r"); ex=$(metric_get accuracy_raw psw "$kase exact r=$r")
      io_reps+="$kase r$r $(acc_cell "${ex:-NA}" "${tr:-0}") of $(fmt "${tr:-NA}" 0) ms; "
    done
  done
  [ -n "$io_reps" ] && md "" "Cold scans one by one (pg_stat_waits exact, and its error, of the truth): ${io_reps%; }."

  [ "${BENCH_FEAT[psw_timing]:-0}" = 1 ] || md "" "pg_stat_waits exact: not available — ${BENCH_WHY[psw_timing]:-}."
  { [ "${BENCH_FEAT[psw_sampler]:-0}" = 1 ] && [ "${BENCH_FEAT[psw_profile]:-0}" = 1 ]; } || \
    md "" "pg_stat_waits sampled: not available — ${BENCH_WHY[psw_sampler]:-${BENCH_WHY[psw_profile]:-}}."
  md ""
}

# acc_io_variant CASE ROWS T REPS INITDB_OPTS [CONF...]: the cold scan on a
# cluster of its own (pg_stat_waits with timing), recorded under CASE.
acc_io_variant() {
  local kase=$1 rows=$2 t=$3 reps=$4 initdb_opts=$5 r truth
  shift 5
  PSW_INITDB_OPTS=$initdb_opts bench_start acc "$(bench_cfg_conf psw_timing)" "shared_buffers = 16MB" \
    "autovacuum = off" "track_io_timing = on" "io_method = sync" "$@"
  bsql acc "CREATE EXTENSION pg_stat_waits" >/dev/null
  bsql acc "CREATE TABLE big AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, $rows) g" >/dev/null
  bsql acc "VACUUM ANALYZE big" >/dev/null
  for r in $(seq "$reps"); do
    acc_reset acc psw
    truth=$(acc_inject acc io "$t" psw)
    metric accuracy_raw psw "$kase truth r=$r" "$truth" ms
    metric accuracy_raw psw "$kase exact r=$r" "$(cat "$BENCH_TMP/acc_io_exact" 2>/dev/null || echo NA)" ms
    metric accuracy_raw psw "$kase sampled r=$r" NA ms
  done
  bench_stop acc
}

acc_sum() {  # acc_sum TOOL "CASE KIND" -> sum over repetitions or NA
  awk -F'\t' -v t="$1" -v p="$2 r=" '$1=="accuracy_raw" && $2==t && index($3,p)==1 {
      if ($4 == "NA" || $4 == "") na = 1; else s += $4; n++ }
    END { if (n == 0 || na) print "NA"; else printf "%.1f\n", s }' "$BENCH_METRICS"
}

acc_cell() {  # acc_cell VALUE TRUTH -> "1234 (+1.2 %)" or "not available"
  if [ "$1" = NA ] || [ -z "$1" ]; then echo "not available"; return; fi
  awk -v v="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.0f (%+.1f %%)\n", v, 100 * (v - t) / t; else printf "%.0f\n", v }'
}
