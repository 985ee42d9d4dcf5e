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
  for k in "${ks[@]}"; do
    a=$(metric_get sampler psw_sampling "samples_taken_delta backends=$k")
    [ -n "$a" ] && md "" "pg_stat_waits samples_taken grew by $a during the K=$k idle+busy windows (~$((2 * w + 1)) s)."
  done
  md ""
}
