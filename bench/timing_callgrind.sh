#!/usr/bin/env bash
# Instructions per `SELECT 1` (callgrind, `postgres --single` on a throwaway
# data directory): the slope between N and 2N statements, so start-up and
# shutdown cancel out. Configurations:
#   no_extension  - shared_preload_libraries = ''
#   queryid_only  - no extension, compute_query_id = on (what pg_stat_waits
#                   turns on, like pg_stat_statements: query jumbling)
#   timing_off    - pg_stat_waits preloaded, pg_stat_waits.timing = off
#   timing_on     - pg_stat_waits preloaded, pg_stat_waits.timing = on
# Prints machine-readable lines
#   instr_per_select1 config=<config> value=<instructions>
#   instr_overhead_pct config=<config> value=<% over no_extension>
# Usage: bench/timing_callgrind.sh [N]   (default 2000)
set -euo pipefail
N=${1:-2000}
source "$(dirname "$0")/../tools/lib/common.sh"
cd "$PSW_ROOT"
command -v valgrind >/dev/null || ensure_packages valgrind
ensure_os_user
stage_postgres
build_extension 2>/dev/null

work=$(mktemp -d /tmp/pgsw-cg.XXXXXX)
chmod 755 "$work"
[ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$work"
trap 'rm -rf "$work"' EXIT
as_os_user "$PSW_BINDIR/initdb" -D "$work/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C >/dev/null
for n in "$N" $((2 * N)); do
  for _ in $(seq "$n"); do echo "SELECT 1;"; done >"$work/in.$n"
done
chmod a+r "$work"/in.*

# instructions CONFIG N: total Ir of one single-user session running N statements.
instructions() {
  local conf=$1 n=$2 out=$work/cg.$1.$2
  as_os_user valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$PSW_BINDIR/postgres" --single -D "$work/data" $conf postgres <"$work/in.$n" >/dev/null 2>"$work/vg.log" \
    || { tail -20 "$work/vg.log" >&2; return 1; }
  sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$out" | head -1
}

declare -A slope
run_config() {  # run_config NAME "postgres options"
  local a b
  a=$(instructions "$2" "$N"); b=$(instructions "$2" $((2 * N)))
  slope[$1]=$(( (b - a) / N ))
  echo "instr_per_select1 config=$1 value=${slope[$1]}"
}
run_config no_extension "-c shared_preload_libraries="
run_config queryid_only "-c shared_preload_libraries= -c compute_query_id=on"
run_config timing_off "-c shared_preload_libraries=pg_stat_waits -c pg_stat_waits.timing=off"
run_config timing_on "-c shared_preload_libraries=pg_stat_waits -c pg_stat_waits.timing=on"
for c in queryid_only timing_off timing_on; do
  awk -v a="${slope[$c]}" -v b="${slope[no_extension]}" -v c="$c" \
    'BEGIN { printf "instr_overhead_pct config=%s value=%.3f\n", c, (a - b) * 100 / b }'
done
# What exact timing itself adds on top of the extension with timing off.
awk -v a="${slope[timing_on]}" -v b="${slope[timing_off]}" -v n="${slope[no_extension]}" \
  'BEGIN { printf "instr_timing_on_vs_off value=%d pct_of_no_extension=%.3f\n", a - b, (a - b) * 100 / n }'
awk -v a="${slope[timing_on]}" -v b="${slope[queryid_only]}" \
  'BEGIN { printf "instr_overhead_pct config=timing_on_vs_queryid_only value=%.3f\n", (a - b) * 100 / b }'
