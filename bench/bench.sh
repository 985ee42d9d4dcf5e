# Benchmark harness: ./run bench [--quick] [--only SECTION[,SECTION...]]
# Runs every section side by side over the configurations of bench_lib.sh,
# writes bench/results/latest.md for PostgreSQL 15, latest-NN.md for another
# major (+ .tsv with the raw figures, plots), prints the report and rewrites
# the README's table from it (bench/readme_table.sh). Sections: callgrind
# sampler throughput paired accuracy memory contrib. See docs/bench.md.
# shellcheck shell=bash

BENCH_HERE=$PSW_ROOT/bench
# shellcheck source=bench/bench_lib.sh
source "$BENCH_HERE/bench_lib.sh"
# shellcheck source=bench/bench_callgrind.sh
source "$BENCH_HERE/bench_callgrind.sh"
# shellcheck source=bench/bench_sampler.sh
source "$BENCH_HERE/bench_sampler.sh"
# shellcheck source=bench/bench_throughput.sh
source "$BENCH_HERE/bench_throughput.sh"
# shellcheck source=bench/bench_paired.sh
source "$BENCH_HERE/bench_paired.sh"
# shellcheck source=bench/bench_accuracy.sh
source "$BENCH_HERE/bench_accuracy.sh"
# shellcheck source=bench/bench_memory.sh
source "$BENCH_HERE/bench_memory.sh"
# shellcheck source=bench/bench_contrib.sh
source "$BENCH_HERE/bench_contrib.sh"
# shellcheck source=bench/bench_report.sh
source "$BENCH_HERE/bench_report.sh"

BENCH_SECTIONS=(callgrind sampler throughput paired accuracy memory contrib)

run_bench() {
  local quick=0 only="" a
  while [ $# -gt 0 ]; do
    a=$1; shift
    case $a in
      --quick) quick=1 ;;
      --only) only=${1:-}; shift ;;
      --only=*) only=${a#--only=} ;;
      *) die "usage: ./run bench [--quick] [--only SECTION,...]" ;;
    esac
  done
  BENCH_QUICK=$quick BENCH_ONLY=$only
  BENCH_OUT=${BENCH_OUT:-$BENCH_HERE/results}
  mkdir -p "$BENCH_OUT"
  BENCH_TMP=$(mktemp -d /tmp/pgsw-bench.XXXXXX)
  chmod 755 "$BENCH_TMP"
  # Scratch files go even when a section fails, and the clusters stop.
  trap 'rm -rf "$BENCH_TMP" "${BENCH_CG_DIR:-}"; psw_cleanup_clusters' EXIT
  BENCH_METRICS=$BENCH_TMP/metrics.tsv
  : >"$BENCH_METRICS"
  BENCH_T0=$(date +%s)
  BENCH_INTERPOSED=""
  BENCH_CMD="./run bench"
  [ "$PSW_PG_MAJOR" = 15 ] || BENCH_CMD+=" --pg $PSW_PG_MAJOR"
  [ "$quick" = 1 ] && BENCH_CMD+=" --quick"
  [ -n "$only" ] && BENCH_CMD+=" --only $only"
  build_holder

  bench_detect_features
  local s
  for s in "${BENCH_SECTIONS[@]}"; do
    if [ -n "$only" ] && [[ ",$only," != *",$s,"* ]]; then continue; fi
    local t
    t=$(date +%s)
    "bench_$s" "$quick"
    metric elapsed harness "$s" "$(( $(date +%s) - t ))" s
  done
  bench_write_report
  cat "$BENCH_REPORT"
  # A full run's figures are the README's too: its table is generated.
  case $BENCH_REPORT in
    "$BENCH_HERE"/results/latest*) bash "$BENCH_HERE/readme_table.sh" "$PSW_ROOT/README.md" "$BENCH_HERE/results" ;;
  esac
  log "bench: report in ${BENCH_REPORT#"$PSW_ROOT"/} ($(( $(date +%s) - BENCH_T0 )) s)"
  rm -rf "$BENCH_TMP"
}
