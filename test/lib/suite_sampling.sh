# Sampling acceptance checks that need their own clusters or whole-server
# operations (restart, crash, standby, pgbench). Sourced by run_all_suites
# with the main test cluster running; records "sampling".
# shellcheck shell=bash

SAMPLING_P=0
SAMPLING_F=0
sampling_check() {  # sampling_check NAME ACTUAL OP EXPECTED   (OP: -eq -ge -le -gt, or = for strings)
  local name=$1 actual=$2 op=$3 expected=$4 ok=1
  if [ "$op" = "=" ]; then [ "$actual" = "$expected" ] || ok=0
  else [ -n "$actual" ] && [ "$actual" "$op" "$expected" ] 2>/dev/null || ok=0; fi
  if [ $ok -eq 1 ]; then SAMPLING_P=$((SAMPLING_P + 1)); echo "ok   $name ($actual $op $expected)"
  else SAMPLING_F=$((SAMPLING_F + 1)); echo "FAIL $name (got '$actual', want $op $expected)"; fi
}
sq() { psql -X -A -t -q "$@"; }

# pgbench TPC-B: at least 99% of client backends' samples carry a queryid.
sampling_pgbench_attribution() {
  sq -d postgres -c "DROP DATABASE IF EXISTS psw_pgb" -c "CREATE DATABASE psw_pgb"
  sq -d psw_pgb -c "CREATE EXTENSION IF NOT EXISTS pg_stat_waits" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
  pgbench -q -i -s 1 psw_pgb >/dev/null 2>&1
  local mode since pct
  for mode in simple prepared; do
    since=$(sq -d postgres -c "SELECT clock_timestamp()")
    pgbench -n -M "$mode" -c 4 -j 2 -T 3 psw_pgb >/dev/null 2>&1
    pct=$(sq -d psw_pgb -c "SELECT floor(10000 * count(queryid) / greatest(count(*), 1)) FROM pg_stat_waits_history
                             WHERE datid = (SELECT oid FROM pg_database WHERE datname = 'psw_pgb')
                               AND backend_type = 'client backend' AND sample_time > '$since'")
    sampling_check "pgbench -M $mode: samples with a queryid (basis points)" "$pct" -ge 9900
    # The commit of each transaction block waits on WAL under END's own id.
    local wal bad
    wal=$(sq -d psw_pgb -c "SELECT count(*) FROM pg_stat_waits_history WHERE sample_time > '$since'
                             AND datid = (SELECT oid FROM pg_database WHERE datname = 'psw_pgb') AND wait_event = 'WALSync'")
    bad=$(sq -d psw_pgb -c "SELECT count(*) FROM pg_stat_waits_history h WHERE sample_time > '$since'
                             AND datid = (SELECT oid FROM pg_database WHERE datname = 'psw_pgb') AND wait_event = 'WALSync'
                             AND NOT EXISTS (SELECT 1 FROM pg_stat_statements s WHERE s.queryid = h.queryid AND s.query = 'END')")
    if [ "${wal:-0}" -gt 0 ]; then
      sampling_check "pgbench -M $mode: WALSync samples attributed to END (of $wal)" "$bad" -eq 0
    else
      # Not counted either way: a 3 s run on a fast disk may catch no commit in WALSync.
      echo "skip pgbench -M $mode: no WALSync sample in 3 s, END attribution not checked"
    fi
  done
  sq -d postgres -c "DROP DATABASE psw_pgb"
}

# profile_max overflow, clean restart, crash, hot standby: one small cluster.
sampling_own_cluster() {
  local dir port sdir sport
  new_cluster dir "pg_stat_waits.profile_max = 100" "max_connections = 50"
  port=$PGPORT
  sq -d postgres -c "CREATE EXTENSION pg_stat_waits"
  # 120 distinct statements (different column counts = different queryids).
  local i cols="1" sql=""
  for i in $(seq 1 120); do cols="$cols,1"; sql="$sql SELECT pg_sleep(0.01), $cols;"; done
  sq -d postgres -c "$sql" >/dev/null
  sq -d postgres -c "ALTER SYSTEM SET pg_stat_waits.sample_period = 0" -c "SELECT pg_reload_conf()" >/dev/null
  sleep 0.5
  local kept dropped hist entries evicted
  kept=$(sq -d postgres -c "SELECT sum(samples) FROM pg_stat_waits_profile")
  dropped=$(sq -d postgres -c "SELECT profile_dropped FROM pg_stat_waits_status")
  evicted=$(sq -d postgres -c "SELECT profile_evicted FROM pg_stat_waits_status")
  entries=$(sq -d postgres -c "SELECT profile_entries FROM pg_stat_waits_status")
  hist=$(sq -d postgres -c "SELECT count(*) FROM pg_stat_waits_history")
  # The profile evicts its least used keys near profile_max (90 %): 120
  # statements leave at most 100 keys, and the evicted ones are counted.
  sampling_check "profile_max = 100 holds at most 100 keys" "$entries" -le 100
  sampling_check "profile_evicted > 0 when overflowing" "$evicted" -gt 0
  sampling_check "profile samples + profile_dropped <= samples recorded (evicted keys' samples are gone)" "$((kept + dropped))" -le "$hist"

  # Exact timing's tables too: some timed waits before the restart.
  sq -d postgres -c "SET pg_stat_waits.timing = on" -c "SELECT pg_sleep(0.05)" -c "SELECT pg_sleep(0.05)" >/dev/null
  local timed
  timed=$(sq -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_waits")
  sampling_check "timing counted the sleeps before the restart" "$timed" -ge 2

  # Clean restart keeps the profile (the sampler stays idle: period 0 is in auto.conf).
  cluster_restart "$dir"
  sampling_check "clean restart keeps exact timing" "$(sq -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_waits")" -eq "$timed"
  sampling_check "clean restart keeps profile samples" "$(sq -d postgres -c "SELECT sum(samples) FROM pg_stat_waits_profile")" -eq "$kept"
  sampling_check "clean restart keeps profile_dropped" "$(sq -d postgres -c "SELECT profile_dropped FROM pg_stat_waits_status")" -eq "$dropped"
  sampling_check "clean restart keeps profile_evicted" "$(sq -d postgres -c "SELECT profile_evicted FROM pg_stat_waits_status")" -eq "$evicted"
  sampling_check "stat file removed once loaded" "$([ -e "$dir/data/pg_stat/pg_stat_waits.stat" ] && echo present || echo absent)" = absent

  # Hot standby made with pg_basebackup samples its own waits.
  sdir=$(mktemp -d /tmp/pgsw.XXXXXX); chmod 755 "$sdir"; PSW_CLUSTERS+=("$sdir")
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$sdir"
  sport=$(free_port $((port + 1)))
  as_os_user "$PSW_BINDIR/pg_basebackup" -h "$dir" -p "$port" -U postgres -D "$sdir/data" -R -X stream >/dev/null 2>&1
  as_os_user sed -i '/pg_stat_waits.sample_period/d' "$sdir/data/postgresql.auto.conf"
  printf "port = %s\nunix_socket_directories = '%s'\nhot_standby = on\n" "$sport" "$sdir" \
    | as_os_user tee -a "$sdir/data/postgresql.conf" >/dev/null
  if cluster_start "$sdir"; then
    local recovery spid n
    recovery=$(psql -X -A -t -h "$sdir" -p "$sport" -U postgres -d postgres -c "SELECT pg_is_in_recovery()")
    sampling_check "standby is in recovery" "$recovery" = t
    spid=$(psql -X -A -t -h "$sdir" -p "$sport" -U postgres -d postgres -c "SELECT pg_backend_pid() FROM (SELECT pg_sleep(0.5)) s")
    sleep 0.1
    n=$(psql -X -A -t -h "$sdir" -p "$sport" -U postgres -d postgres \
          -c "SELECT count(*) FROM pg_stat_waits_history WHERE pid = $spid AND wait_event = 'PgSleep'")
    sampling_check "standby samples its own PgSleep (about 50)" "$n" -ge 40
    cluster_stop "$sdir"
  else
    sampling_check "standby starts" 1 -eq 0
  fi

  # A crash discards the statistics.
  local victim
  sq -d postgres -c "SELECT pg_sleep(30)" >/dev/null 2>&1 &
  sleep 0.5
  victim=$(sq -d postgres -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND pid <> pg_backend_pid()")
  kill -9 "$victim"
  wait 2>/dev/null || true
  local tries=0
  until sq -d postgres -c "SELECT 1" >/dev/null 2>&1 || [ $tries -ge 100 ]; do sleep 0.1; tries=$((tries + 1)); done
  sampling_check "crash discards the profile" "$(sq -d postgres -c "SELECT count(*) FROM pg_stat_waits_profile")" -eq 0
  sampling_check "crash discards exact timing" "$(sq -d postgres -c "SELECT count(*) FROM pg_stat_waits")" -eq 0

  # Reset clears sampled and exact statistics alike.
  sq -d postgres -c "SET pg_stat_waits.timing = on" -c "SELECT pg_sleep(0.05)" >/dev/null
  sq -d postgres -c "ALTER SYSTEM RESET pg_stat_waits.sample_period" -c "SELECT pg_reload_conf()" >/dev/null
  sq -d postgres -c "SELECT pg_sleep(0.3)" >/dev/null
  sampling_check "timing and profile have data before reset" \
    "$(sq -d postgres -c "SELECT (SELECT count(*) FROM pg_stat_waits) * (SELECT count(*) FROM pg_stat_waits_profile)")" -gt 0
  sq -d postgres -c "ALTER SYSTEM SET pg_stat_waits.sample_period = 0" -c "SELECT pg_reload_conf()" >/dev/null
  sleep 0.2
  sq -d postgres -c "SELECT pg_stat_waits_reset()" >/dev/null
  sampling_check "reset clears exact timing and the profile" \
    "$(sq -d postgres -c "SELECT (SELECT count(*) FROM pg_stat_waits) + (SELECT count(*) FROM pg_stat_waits_profile) + (SELECT count(*) FROM pg_stat_waits_queries)")" -eq 0
  cluster_stop "$dir"
}

# --long: reading a full 1,000,000-sample history with 16 concurrent readers
# while sampling leaves no gap over two periods in the sampler's schedule.
sampling_big_history() {
  local dir since until_ts gap lwlock
  new_cluster dir "pg_stat_waits.history_size = 1000000" "max_connections = 300"
  sq -d postgres -c "CREATE EXTENSION pg_stat_waits"
  echo "SELECT pg_sleep(120);" > "$dir/sleep.sql"; chmod a+r "$dir/sleep.sql"
  pgbench -n -c 220 -j 4 -T 200 -f "$dir/sleep.sql" postgres >/dev/null 2>&1 &
  local bench=$!
  local used=0 tries=0
  until [ "$used" -ge 1000000 ] || [ $tries -ge 150 ]; do
    sleep 1; tries=$((tries + 1)); used=$(sq -d postgres -c "SELECT history_used FROM pg_stat_waits_status")
  done
  sampling_check "history filled to 1,000,000" "$used" -ge 1000000
  # The gap is wall-clock: on a shared VM the host can stop the sampler's
  # vCPU, or 16 CPU-bound readers on 2 cores can keep it off a CPU, for
  # more than a period without anything in pg_stat_waits making it wait.
  # So the read is repeated up to five times and passes when one round has
  # no gap over two periods; every round prints its largest gap with the
  # sampler's run-queue wait and the host's steal time, so a failure shows
  # whether the sampler was runnable (the OS) or waiting (the extension).
  local round best_gap=999999 min_readers=16 lwlock_total=0 min_kept=100 spid
  spid=$(sq -d postgres -c "SELECT sampler_pid FROM pg_stat_waits_status")
  for round in 1 2 3 4 5; do
    local rq0 rq1 st0 st1 t0 t1 kept r pids=() okreaders=0
    rq0=$(awk '{print $2}' "/proc/$spid/schedstat" 2>/dev/null || echo 0)
    st0=$(awk '/^cpu /{print $9}' /proc/stat)
    # The tick count and its clock come from one query, so that psql's own
    # start-up time does not count as missed ticks.
    read -r t0 since < <(sq -F ' ' -d postgres -c "SELECT samples_taken, clock_timestamp() FROM pg_stat_waits_status")
    for r in $(seq 1 16); do
      sq -d postgres -c "SELECT count(*) FROM pg_stat_waits_history" >"$dir/reader.$r" 2>&1 &
      pids+=($!)
    done
    wait "${pids[@]}"
    read -r t1 until_ts < <(sq -F ' ' -d postgres -c "SELECT samples_taken, clock_timestamp() FROM pg_stat_waits_status")
    # Ticks taken against the schedule over the whole round: unlike the
    # largest gap, one stall of the host cannot move it, a sampler slowed or
    # blocked by the readers can.
    kept=$(sq -d postgres -c "SELECT floor(100 * ($t1 - $t0) / (extract(epoch FROM '$until_ts'::timestamptz - '$since') * 1000 / 10))")
    [ "$kept" -lt "$min_kept" ] && min_kept=$kept
    rq1=$(awk '{print $2}' "/proc/$spid/schedstat" 2>/dev/null || echo 0)
    st1=$(awk '/^cpu /{print $9}' /proc/stat)
    for r in $(seq 1 16); do grep -q '^[0-9]\+$' "$dir/reader.$r" && [ "$(cat "$dir/reader.$r")" -ge 900000 ] && okreaders=$((okreaders + 1)); done
    [ "$okreaders" -lt "$min_readers" ] && min_readers=$okreaders
    gap=$(sq -d postgres -c "SELECT coalesce(ceil(max(g)), 0) FROM (SELECT extract(epoch FROM t - lag(t) OVER (ORDER BY t)) * 1000 AS g
                               FROM (SELECT DISTINCT sample_time t FROM pg_stat_waits_history
                                     WHERE sample_time BETWEEN '$since' AND '$until_ts') d) x")
    lwlock=$(sq -d postgres -c "SELECT count(*) FROM pg_stat_waits_history WHERE sample_time BETWEEN '$since' AND '$until_ts'
                                 AND wait_event_type = 'LWLock' AND wait_event = 'pg_stat_waits'")
    lwlock_total=$((lwlock_total + lwlock))
    echo "     round $round: $okreaders/16 readers read the full history; ${kept}% of ticks taken; largest gap ${gap} ms;" \
         "sampler run-queue wait $(( (rq1 - rq0) / 1000000 )) ms; host steal $(( (st1 - st0) * 10 )) ms"
    [ -n "$gap" ] && [ "$gap" -lt "$best_gap" ] && best_gap=$gap
    [ "$best_gap" -le 20 ] && break
  done
  sampling_check "16 concurrent readers each read the full history (every round)" "$min_readers" -eq 16
  sampling_check "ticks taken while 16 readers read, % of the schedule (worst round)" "$min_kept" -ge 95
  sampling_check "largest gap between ticks while 16 readers read (ms, best of rounds 1..$round)" "$best_gap" -le 20
  sampling_check "readers never waited on pg_stat_waits' lock" "$lwlock_total" -eq 0
  kill "$bench" 2>/dev/null; wait "$bench" 2>/dev/null || true
  cluster_stop "$dir"
}

suite_sampling() {
  local main_host=$PGHOST main_port=$PGPORT
  sampling_pgbench_attribution
  sampling_own_cluster
  export PGHOST=$main_host PGPORT=$main_port
  if [ "${PSW_LONG:-0}" = 1 ]; then
    sampling_big_history
    export PGHOST=$main_host PGPORT=$main_port
  fi
  record sampling "$SAMPLING_P" "$SAMPLING_F"
}

suite_sampling
