#!/usr/bin/env bash
# Cost of the exact-timing wrapper in ns per call, measured inside a backend
# with pg_stat_waits_bench_wrapper() (median of 5 runs of N calls each;
# process CPU time, so other load on the machine does not count).
#
# The wrapper's own cost, around a no-op function (no syscall noise):
#   wrapper_ns mode=not_interposed  the no-op called through a pointer
#   wrapper_ns mode=timing_off      the no-op through the wrapper, timing off
#   wrapper_ns mode=timing_on       the no-op through the wrapper, timed
#   wrapper_overhead_ns mode=timing_off|timing_on   (minus not_interposed)
# Around a real interposed call, fsync(-1) (fails with EBADF: a cheap syscall):
#   syscall_ns mode=direct|timing_off|timing_on
#   clock_pair_ns value=   the two clock_gettime(CLOCK_MONOTONIC) alone
# Standalone: makes and drops its own throwaway cluster.
# Usage: bench/timing_wrapper.sh [N | --quick]   (--quick, as ./run bench --quick
# passes it: N = 200,000, so the script fits that run's time limit)
set -euo pipefail
case ${1:-} in
  "") N=2000000 ;;
  --quick) N=200000 ;;
  *[!0-9]* | ?????????????*) N=0 ;;  # not digits, or 13 and more (wrapping bash arithmetic)
  *) N=$((10#$1)) ;;  # base 10: 010 is ten, 00 is zero
esac
if [ "$N" -le 0 ]; then
  echo "usage: bench/timing_wrapper.sh [N | --quick], N a positive number of calls, at most 12 digits" >&2
  exit 2
fi
# shellcheck source=SCRIPTDIR/../tools/lib/common.sh
source "$(dirname "$0")/../tools/lib/common.sh"
cd "$PSW_ROOT"
ensure_os_user
stage_postgres
PSW_TEST_HOOKS=1 build_extension 2>/dev/null  # the test module's wrapper benchmark

dir=$(mktemp -d /tmp/pgsw-bench.XXXXXX)
chmod 755 "$dir"
trap 'cluster_stop "$dir"; rm -rf "$dir"' EXIT
port=$(free_port 54460)
cluster_create "$dir" "$port" >/dev/null
cluster_start "$dir"
q() { "$PSW_BINDIR/psql" -X -q -At -h "$dir" -p "$port" -U postgres -d postgres -c "$1"; }
q "CREATE EXTENSION pg_stat_waits" >/dev/null
q "CREATE EXTENSION pg_stat_waits_test" >/dev/null   # pg_stat_waits_bench_wrapper
q "SELECT 1 FROM pg_stat_waits_status WHERE 'fsync' = ANY(interposed)" | grep -q 1 \
  || echo "# warning: fsync is not interposed in this postgres; off/on measure the wrapper called directly" >&2

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A val
for mode in noop_direct noop_off noop_on direct off on clock; do
  val[$mode]=$(for _ in 1 2 3 4 5; do q "SELECT pg_stat_waits_bench_wrapper('$mode', $N)"; done | median)
done
printf 'wrapper_ns mode=not_interposed value=%.2f\n' "${val[noop_direct]}"
printf 'wrapper_ns mode=timing_off value=%.2f\n' "${val[noop_off]}"
printf 'wrapper_ns mode=timing_on value=%.2f\n' "${val[noop_on]}"
awk -v d="${val[noop_direct]}" -v off="${val[noop_off]}" -v on="${val[noop_on]}" 'BEGIN {
  printf "wrapper_overhead_ns mode=timing_off value=%.2f\n", off - d
  printf "wrapper_overhead_ns mode=timing_on value=%.2f\n", on - d }'
printf 'syscall_ns mode=direct value=%.2f\n' "${val[direct]}"
printf 'syscall_ns mode=timing_off value=%.2f\n' "${val[off]}"
printf 'syscall_ns mode=timing_on value=%.2f\n' "${val[on]}"
printf 'clock_pair_ns value=%.2f\n' "${val[clock]}"
