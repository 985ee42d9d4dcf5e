# Sampler cost: CPU time of the sampling process (pg_stat_waits' sampler,
# pg_wait_sampling's collector) per second of wall clock, at a 10 ms period,
# with K connected backends, idle and busy. CPU time comes from the kernel's
# scheduler accounting (/proc/PID/schedstat, ns) rather than utime+stime
# ticks: 0.3% of a core over a few seconds is only a handful of 10 ms ticks.
# shellcheck shell=bash

BENCH_HOLDER=${PSW_BUILD}/bench/hold_conns

build_holder() {
  local src=$PSW_ROOT/bench/bench_hold_conns.cpp
  mkdir -p "$(dirname "$BENCH_HOLDER")"
  if [ ! -x "$BENCH_HOLDER" ] || [ "$src" -nt "$BENCH_HOLDER" ]; then
    # shellcheck disable=SC2046  # pkg-config's flags, split on purpose
    g++ -std=c++17 -O2 -Wall -Werror $(pkg-config --cflags libpq) "$src" -o "$BENCH_HOLDER" \
      $(pkg-config --libs libpq) || die "cannot build $BENCH_HOLDER"
  fi
}

# sampler_pid NAME CONFIG: pid of the process doing the sampling, or empty.
sampler_pid() {
  case $2 in
    psw_*) bsql "$1" "SELECT coalesce(sampler_pid::text, '') FROM pg_stat_waits_status" ;;
    pg_wait_sampling) bsql "$1" "SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_wait_sampling collector'" ;;
  esac
}

# cpu_pct_over PID SECONDS: % of one core the process used over the window.
cpu_pct_over() {
  local pid=$1 w=$2 c0 c1 t0 t1
  c0=$(proc_cpu_ns "$pid"); t0=$(date +%s%N)
  sleep "$w"
  c1=$(proc_cpu_ns "$pid"); t1=$(date +%s%N)
  awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.4f\n", 100 * (b - a) / (e - s) }'
}

# The holder (bench_hold_conns.cpp) runs as coproc HOLD; HOLD_LINE is its
# last reply. holder_start NAME K connects K backends: false, with the reason
# in HOLD_LINE, when it did not.
holder_start() {
  coproc HOLD { "$BENCH_HOLDER" "$(bench_conninfo "$1")" "$2" 2>&1; }
  read -r HOLD_LINE <&"${HOLD[0]}" || HOLD_LINE=""
  [ "${HOLD_LINE%% *}" = ready ]
}

# holder_busy SECONDS: every held backend starts SELECT pg_sleep(SECONDS).
holder_busy() {
  echo "busy $1" >&"${HOLD[1]}"
  read -r HOLD_LINE <&"${HOLD[0]}" || HOLD_LINE=""
}

# holder_quit: closes the held connections.
holder_quit() {
  { echo quit >&"${HOLD[1]}"; } 2>/dev/null || true
  wait "$HOLD_PID" 2>/dev/null || true
}

# held_backends_gone NAME: waits (10 s at most) until the held backends have
# exited, so that the next step starts from an idle cluster.
held_backends_gone() {
  for _ in $(seq 50); do
    [ "$(bsql "$1" "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")" -le 1 ] && break
    sleep 0.2
  done
}

# sampler_measure NAME CONFIG K WINDOW: records idle and busy figures.
sampler_measure() {
  local name=$1 cfg=$2 k=$3 w=$4 pid pct n0 n1
  pid=$(sampler_pid "$name" "$cfg")
  if ! holder_start "$name" "$k"; then
    metric sampler "$cfg" "idle backends=$k" NA pct_core "holder failed: $HOLD_LINE"
    holder_quit
    return 0
  fi
  sleep 1
  n0=$( [ "$cfg" = psw_sampling ] && bsql "$name" "SELECT samples_taken FROM pg_stat_waits_status" || echo 0)
  pct=$(cpu_pct_over "$pid" "$w")
  metric sampler "$cfg" "idle backends=$k" "$pct" pct_core
  holder_busy "$((w + 30))"
  # Busy: every held backend active in a wait, plus pgbench select-only.
  bpgbench "$name" -n -S -c "$((2 * $(nproc)))" -j 2 -T "$((w + 1))" bench >/dev/null 2>&1 &
  local pgb=$!
  sleep 0.5
  pct=$(cpu_pct_over "$pid" "$w")
  metric sampler "$cfg" "busy backends=$k" "$pct" pct_core "$HOLD_LINE"
  wait "$pgb" || true
  if [ "$cfg" = psw_sampling ]; then
    n1=$(bsql "$name" "SELECT samples_taken FROM pg_stat_waits_status")
    metric sampler "$cfg" "samples_taken_delta backends=$k" "$((n1 - n0))" samples
  fi
  holder_quit
  held_backends_gone "$name"
}

# sampler_fill_history NAME K: K backends busy for 3 s, not measured, so that
# every window measures the steady cost: a new cluster's history ring is
# written for the first time over its first samples, and on a virtual machine
# a page's first write is slow in the writer (docs/bench.md). pg_wait_sampling
# gets the same warm-up.
sampler_fill_history() {
  if holder_start "$1" "$2"; then
    holder_busy 60
    sleep 3
  fi
  holder_quit
  held_backends_gone "$1"
}

# A holder that is not the coproc (two run at once below): stdin from a
# FIFO this shell keeps open on an fd, stdout to a file. holder_bg_start
# NAME K DIR: false, with its output in DIR/out, when it did not connect
# within 120 s (it is then gone). Sets HOLD_BG_FD and HOLD_BG_PID.
holder_bg_start() {
  local name=$1 k=$2 dir=$3
  mkdir -p "$dir"; rm -f "$dir/in" "$dir/out"; mkfifo "$dir/in"
  "$BENCH_HOLDER" "$(bench_conninfo "$name")" "$k" <"$dir/in" >"$dir/out" 2>&1 &
  HOLD_BG_PID=$!
  exec {HOLD_BG_FD}>"$dir/in"
  for _ in $(seq 240); do
    grep -q '^ready ' "$dir/out" 2>/dev/null && return 0
    kill -0 "$HOLD_BG_PID" 2>/dev/null || break
    sleep 0.5
  done
  holder_bg_quit "$HOLD_BG_FD" "$HOLD_BG_PID"
  return 1
}

# holder_bg_quit FD PID: closes the held connections.
holder_bg_quit() {
  local fd=$1
  { echo quit >&"$fd"; } 2>/dev/null || true
  exec {fd}>&-
  wait "$2" 2>/dev/null || true
}

# sampler_same_window QUICK: issue 56's comparison, pg_stat_waits' sampler
# against pg_wait_sampling's collector with 500 idle backends each, both
# read over the same windows: two clusters run at once (one per tool, so
# neither process reads the other's PGPROCs into a shared cache), each
# with 500 idle connections, and both processes' schedstat is read at the
# same instants. What the machine does meanwhile falls on both alike, which
# the sequential windows of the table above cannot promise. The figure is
# the ratio of the CPU time summed over the windows.
sampler_same_window() {
  local quick=$1 k=500 w nw c
  if [ "$quick" = 1 ]; then w=2; nw=3; else w=4; nw=5; fi
  for c in psw_sampling pg_wait_sampling; do
    if [ "$c" = psw_sampling ] && [ "${BENCH_FEAT[psw_sampler]:-0}" != 1 ]; then
      metric sampler_same psw_sampling "idle backends=$k" NA pct_core "${BENCH_WHY[psw_sampler]:-}"; return 0
    fi
    if [ "$c" = pg_wait_sampling ] && ! bench_cfg_available pg_wait_sampling; then
      metric sampler_same pg_wait_sampling "idle backends=$k" NA pct_core "${BENCH_WHY[pg_wait_sampling]:-}"; return 0
    fi
  done
  log "bench: sampler against collector, $k idle backends each, the same $nw windows of ${w} s"
  local d=$BENCH_TMP/same_window
  bench_start sw_psw "$(bench_cfg_conf psw_sampling)" "max_connections = $((k + 10))" "shared_buffers = 64MB"
  bench_start sw_pgws "$(bench_cfg_conf pg_wait_sampling)" "max_connections = $((k + 10))" "shared_buffers = 64MB"
  bsql sw_psw "CREATE EXTENSION pg_stat_waits" >/dev/null
  bsql sw_pgws "CREATE EXTENSION pg_wait_sampling" >/dev/null
  local pa pb fa fb pida pidb why=""
  pa=$(sampler_pid sw_psw psw_sampling); pb=$(sampler_pid sw_pgws pg_wait_sampling)
  if [ -z "$pa" ] || [ -z "$pb" ]; then
    why="sampling process not found"
  elif ! holder_bg_start sw_psw "$k" "$d/psw"; then
    why="holder failed: $(tail -1 "$d/psw/out" 2>/dev/null)"
  else
    fa=$HOLD_BG_FD pida=$HOLD_BG_PID
    if ! holder_bg_start sw_pgws "$k" "$d/pgws"; then
      why="holder failed: $(tail -1 "$d/pgws/out" 2>/dev/null)"
    else
      fb=$HOLD_BG_FD pidb=$HOLD_BG_PID
      # The warm-up of sampler_fill_history, for both: the backends busy
      # for 3 s (a new history ring's pages are slow to write the first
      # time), then idle again before the first window.
      echo "busy 3" >&"$fa"; echo "busy 3" >&"$fb"
      sleep 5
      local i a0 b0 t0 a1 b1 t1
      for i in $(seq "$nw"); do
        a0=$(proc_cpu_ns "$pa"); b0=$(proc_cpu_ns "$pb"); t0=$(date +%s%N)
        sleep "$w"
        a1=$(proc_cpu_ns "$pa"); b1=$(proc_cpu_ns "$pb"); t1=$(date +%s%N)
        metric sampler_same_raw psw_sampling "idle backends=$k window=$i" "$((a1 - a0)) $((t1 - t0))" "cpu_ns wall_ns"
        metric sampler_same_raw pg_wait_sampling "idle backends=$k window=$i" "$((b1 - b0)) $((t1 - t0))" "cpu_ns wall_ns"
      done
      holder_bg_quit "$fb" "$pidb"
    fi
    holder_bg_quit "$fa" "$pida"
  fi
  bench_stop sw_psw; bench_stop sw_pgws
  if [ -n "$why" ]; then
    metric sampler_same psw_sampling "idle backends=$k" NA pct_core "$why"
    metric sampler_same pg_wait_sampling "idle backends=$k" NA pct_core "$why"
    return 0
  fi
  for c in psw_sampling pg_wait_sampling; do
    metric sampler_same "$c" "idle backends=$k" "$(awk -F'\t' -v c="$c" \
      '$1=="sampler_same_raw" && $2==c { split($4, v, " "); cpu += v[1]; wall += v[2] }
       END { printf "%.4f\n", 100 * cpu / wall }' "$BENCH_METRICS")" pct_core "$nw windows of ${w} s"
  done
  metric sampler_same psw_sampling "ratio idle backends=$k" "$(awk -F'\t' \
    '$1=="sampler_same_raw" { split($4, v, " "); cpu[$2] += v[1] }
     END { if (cpu["pg_wait_sampling"] > 0) printf "%.3f\n", cpu["psw_sampling"] / cpu["pg_wait_sampling"]; else print "NA" }' \
    "$BENCH_METRICS")" ratio "pg_stat_waits / pg_wait_sampling, $nw windows of ${w} s"
}

bench_sampler() {
  local quick=$1 ks w cfg k
  if [ "$quick" = 1 ]; then ks=(1000); w=2; else ks=(100 500 1000); w=6; fi
  log "bench: sampler cost (backends ${ks[*]}, ${w} s windows)"
  md_section 20_sampler
  for cfg in psw_sampling pg_wait_sampling; do
    local avail=1 why=""
    if [ "$cfg" = psw_sampling ]; then
      [ "${BENCH_FEAT[psw_sampler]:-0}" = 1 ] || { avail=0; why=${BENCH_WHY[psw_sampler]:-}; }
    else
      bench_cfg_available "$cfg" || { avail=0; why=${BENCH_WHY[$cfg]:-}; }
    fi
    if [ $avail = 0 ]; then
      for k in "${ks[@]}"; do
        metric sampler "$cfg" "idle backends=$k" NA pct_core "$why"
        metric sampler "$cfg" "busy backends=$k" NA pct_core "$why"
      done
      continue
    fi
    bench_start smp "$(bench_cfg_conf "$cfg")" "max_connections = 1010" "shared_buffers = 64MB"
    [ "$cfg" = pg_wait_sampling ] && bsql smp "CREATE EXTENSION pg_wait_sampling" >/dev/null
    [ "$cfg" = psw_sampling ] && bsql smp "CREATE EXTENSION pg_stat_waits" >/dev/null
    bsql smp "CREATE DATABASE bench" >/dev/null
    bpgbench smp -i -q -s 1 bench >/dev/null 2>&1
    if [ -z "$(sampler_pid smp "$cfg")" ]; then
      for k in "${ks[@]}"; do metric sampler "$cfg" "idle backends=$k" NA pct_core "sampling process not found"; done
    else
      sampler_fill_history smp "${ks[-1]}"
      for k in "${ks[@]}"; do sampler_measure smp "$cfg" "$k" "$w"; done
    fi
    bench_stop smp
  done

  md "## 2. Sampler cost" ""
  md "CPU time of the sampling process per second of wall clock (% of one core) at a 10 ms period, from"
  md "\`/proc/PID/schedstat\`, over ${w} s windows with K connections held open by"
  md "\`bench/bench_hold_conns.cpp\`. *idle*: the K backends are idle. *busy*: all K backends active"
  md "in \`SELECT pg_sleep(...)\` (so every one is sampled) while pgbench select-only runs with"
  md "$((2 * $(nproc))) clients. pg_wait_sampling's collector runs with its defaults (history and profile"
  md "every 10 ms; it also samples idle backends waiting on ClientRead)." ""
  md "| backends | state | pg_stat_waits sampler | pg_wait_sampling collector |" "|---:|---|---:|---:|"
  local st a b
  for k in "${ks[@]}"; do
    for st in idle busy; do
      a=$(metric_get sampler psw_sampling "$st backends=$k"); b=$(metric_get sampler pg_wait_sampling "$st backends=$k")
      md "| $k | $st | $( [ "$a" = NA ] && echo "not available" || echo "$(fmt "$a" 3) %") |" \
         "$( [ "$b" = NA ] && echo "not available" || echo "$(fmt "$b" 3) %") |"
    done
  done
  if [ "${BENCH_FEAT[psw_sampler]:-0}" != 1 ]; then md "" "pg_stat_waits: ${BENCH_WHY[psw_sampler]:-}."; fi
  sampler_same_window "$quick"
  a=$(metric_get sampler_same psw_sampling "idle backends=500"); b=$(metric_get sampler_same pg_wait_sampling "idle backends=500")
  md "" "Over the same windows (issue 56's comparison): two clusters running at once, one per tool, each with 500"
  md "idle connections; both processes' CPU time read at the same instants, summed over the windows"
  md "($(awk -F'\t' '$1=="sampler_same" && $3=="ratio idle backends=500" {print $6}' "$BENCH_METRICS")). Target: at most 0.9× the collector." ""
  md "| backends | state | pg_stat_waits sampler | pg_wait_sampling collector | ratio |" "|---:|---|---:|---:|---:|"
  if [ -z "$a" ] || [ "$a" = NA ] || [ -z "$b" ] || [ "$b" = NA ]; then
    md "| 500 | idle | not available | not available | $(awk -F'\t' '$1=="sampler_same" && $2=="psw_sampling" {n=$6} END {print n}' "$BENCH_METRICS") |"
  else
    md "| 500 | idle | $(fmt "$a" 3) % | $(fmt "$b" 3) % | $(fmt "$(metric_get sampler_same psw_sampling "ratio idle backends=500")" 3)× |"
  fi
  for k in "${ks[@]}"; do
    a=$(metric_get sampler psw_sampling "samples_taken_delta backends=$k")
    [ -n "$a" ] && md "" "pg_stat_waits samples_taken grew by $a during the K=$k idle+busy windows (~$((2 * w + 1)) s)."
  done
  md ""
}
