#!/usr/bin/env bash
# CPU cost of the sampling process at a 10 ms period with N connected (idle)
# backends: pg_stat_waits' sampler vs pg_wait_sampling's collector, each in
# its own throwaway cluster with the same settings, measured the same way
# (utime + stime of the process from /proc over a fixed interval).
#
#   bench/sampler_cpu.sh [--backends "100 1000"] [--seconds 20] [--ext "pg_stat_waits pg_wait_sampling"]
#
# Prints one machine-readable line per measurement, e.g.
#   sampler_cpu_pct backends=1000 ext=pg_stat_waits value=0.12
# (percent of one core). Needs the staged build (./run build) and root or the
# cluster owner; callable standalone or from ./run bench.
set -euo pipefail
source "$(dirname "$0")/../tools/lib/common.sh"

BACKENDS="100 1000"
SECONDS_MEASURED=20
EXTS="pg_stat_waits pg_wait_sampling"
while [ $# -gt 0 ]; do
  case "$1" in
    --backends) BACKENDS=$2; shift 2 ;;
    --seconds) SECONDS_MEASURED=$2; shift 2 ;;
    --ext) EXTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

ensure_os_user
stage_postgres >/dev/null
HOLD_BIN=$PSW_BUILD/bench/hold_connections
mkdir -p "$PSW_BUILD/bench"
if [ ! -x "$HOLD_BIN" ] || [ "$PSW_ROOT/bench/hold_connections.cpp" -nt "$HOLD_BIN" ]; then
  g++ -O2 -o "$HOLD_BIN" "$PSW_ROOT/bench/hold_connections.cpp" -I"$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)" -lpq
fi

BENCH_DIRS=()
HOLD_FD_PID=""
bench_cleanup() {
  local d
  [ -n "$HOLD_FD_PID" ] && kill "$HOLD_FD_PID" 2>/dev/null || true
  for d in "${BENCH_DIRS[@]}"; do cluster_stop "$d"; rm -rf "$d"; done
}
trap bench_cleanup EXIT

proc_ticks() {  # utime + stime (clock ticks) of a pid
  awk '{print $14 + $15}' "/proc/$1/stat"
}
proc_cpu_ns() {  # time on CPU in ns (schedstat; finer than the 10 ms ticks)
  awk '{print $1}' "/proc/$1/schedstat" 2>/dev/null || echo 0
}

# The sampling process of the extension under test, by its process title,
# among the postmaster's children.
sampling_pid() {
  local dir=$1 ext=$2 pm title
  pm=$(head -1 "$dir/data/postmaster.pid")
  case "$ext" in
    pg_stat_waits) title="pg_stat_waits sampler" ;;
    pg_wait_sampling) title="pg_wait_sampling collector" ;;
  esac
  ps -o pid=,args= --ppid "$pm" | awk -v t="$title" 'index($0, t) {print $1; exit}'
}

measure() {  # measure EXT N
  local ext=$1 n=$2 dir port conf=()
  dir=$(mktemp -d /tmp/pgsw.XXXXXX); chmod 755 "$dir"; BENCH_DIRS+=("$dir")
  port=$(free_port 54500)
  conf=("max_connections = $((n + 20))" "shared_preload_libraries = '$ext'")
  if [ "$ext" = pg_wait_sampling ]; then
    conf+=("pg_wait_sampling.profile_period = 10" "pg_wait_sampling.history_period = 10")
  else
    conf+=("pg_stat_waits.sample_period = 10")
  fi
  cluster_create "$dir" "$port" "${conf[@]}"
  cluster_start "$dir"
  local fifo=$dir/hold.fifo
  mkfifo "$fifo"
  # The helper holds n connections until its stdin (the fifo) closes.
  "$HOLD_BIN" "$n" "host=$dir port=$port user=postgres dbname=postgres" <"$fifo" >"$dir/hold.out" 2>&1 &
  HOLD_FD_PID=$!
  exec 9>"$fifo"
  local tries=0
  until grep -q '^ready' "$dir/hold.out" 2>/dev/null; do
    sleep 0.5; tries=$((tries + 1))
    if [ $tries -gt 240 ] || ! kill -0 "$HOLD_FD_PID" 2>/dev/null; then
      echo "error: could not open $n connections: $(cat "$dir/hold.out")" >&2; exec 9>&-; return 1
    fi
  done
  sleep 2  # let start-up settle
  local pid t0 t1 hz
  pid=$(sampling_pid "$dir" "$ext")
  [ -n "$pid" ] || { echo "error: no sampling process for $ext" >&2; exec 9>&-; return 1; }
  hz=$(getconf CLK_TCK)
  local ns0 ns1
  t0=$(proc_ticks "$pid"); ns0=$(proc_cpu_ns "$pid")
  sleep "$SECONDS_MEASURED"
  t1=$(proc_ticks "$pid"); ns1=$(proc_cpu_ns "$pid")
  # value: utime+stime (clock ticks); sched_value: on-CPU time from schedstat.
  awk -v d=$((t1 - t0)) -v ns=$((ns1 - ns0)) -v hz="$hz" -v s="$SECONDS_MEASURED" -v n="$n" -v e="$ext" \
    'BEGIN {printf "sampler_cpu_pct backends=%d ext=%s value=%.3f sched_value=%.3f seconds=%d\n", n, e, 100.0 * d / hz / s, 100.0 * ns / 1e9 / s, s}'
  exec 9>&-
  wait "$HOLD_FD_PID" 2>/dev/null || true
  HOLD_FD_PID=""
  cluster_stop "$dir"
}

for n in $BACKENDS; do
  for ext in $EXTS; do measure "$ext" "$n"; done
done
