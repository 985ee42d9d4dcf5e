#!/usr/bin/env bash
# Cost of the exact-timing wrapper in ns per call, measured inside a backend
# with pg_stat_waits_bench_wrapper(): a tight loop of fsync(-1) (a cheap
# interposed call, fails with EBADF) called
#   direct      - the libc function itself (not interposed)
#   timing_off  - through the wrapper, pg_stat_waits.timing = off
#   timing_on   - through the wrapper, timed
#   clock_pair  - the two clock_gettime(CLOCK_MONOTONIC) alone
# Each figure is the median of 5 runs of N calls. Prints machine-readable
#   wrapper_ns mode=<mode> value=<ns>
# plus the wrapper's added cost (mode - direct). Standalone: makes and drops
# its own throwaway cluster. Usage: bench/timing_wrapper.sh [N]
set -euo pipefail
N=${1:-2000000}
source "$(dirname "$0")/../test/lib/common.sh"
cd "$PSW_ROOT"
ensure_os_user
stage_postgres
build_extension 2>/dev/null

dir=$(mktemp -d /tmp/pgsw-bench.XXXXXX)
chmod 755 "$dir"
trap 'cluster_stop "$dir"; rm -rf "$dir"' EXIT
port=$(free_port 54460)
cluster_create "$dir" "$port" >/dev/null
cluster_start "$dir"
q() { "$PSW_BINDIR/psql" -X -q -At -h "$dir" -p "$port" -U postgres -d postgres -c "$1"; }
q "CREATE EXTENSION pg_stat_waits" >/dev/null
q "SELECT 1 FROM pg_stat_waits_status WHERE 'fsync' = ANY(interposed)" | grep -q 1 \
  || echo "# warning: fsync is not interposed in this postgres; off/on measure the wrapper called directly" >&2

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A val
for mode in direct off on clock; do
  v=$(for _ in 1 2 3 4 5; do q "SELECT pg_stat_waits_bench_wrapper('$mode', $N)"; done | median)
  val[$mode]=$v
done
printf 'wrapper_ns mode=direct value=%.2f\n' "${val[direct]}"
printf 'wrapper_ns mode=timing_off value=%.2f\n' "${val[off]}"
printf 'wrapper_ns mode=timing_on value=%.2f\n' "${val[on]}"
printf 'wrapper_ns mode=clock_pair value=%.2f\n' "${val[clock]}"
awk -v d="${val[direct]}" -v off="${val[off]}" -v on="${val[on]}" -v c="${val[clock]}" 'BEGIN {
  printf "wrapper_overhead_ns mode=timing_off value=%.2f\n", off - d
  printf "wrapper_overhead_ns mode=timing_on value=%.2f\n", on - d
  printf "wrapper_overhead_ns mode=timing_on_minus_clock value=%.2f\n", on - d - c }'
