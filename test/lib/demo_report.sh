# ./run demo, last step: the HTML report of the demo's workload.
# Sourced while the workload runs; the report is written when the demo ends
# (chained in front of ./run's EXIT trap, which stops the cluster), so it
# covers the whole workload and is the demo's last output.
# shellcheck shell=bash

demo_report_write() {
  local out_dir=$PSW_BUILD/demo html bin=$PSW_BINDIR/pg_stat_waits_report
  [ -x "$bin" ] || { echo "pg_stat_waits_report is not built" >&2; return 0; }
  mkdir -p "$out_dir"
  html=$out_dir/pg_stat_waits_report.html
  log "HTML report of the workload (pg_stat_waits_report report --since 2min)"
  if "$bin" report --since 2min --html "$html" -d psw_demo 2>/dev/null; then
    chmod a+r "$html"
    echo "report: $html"
  else
    "$bin" report --since 2min --html "$html" -d psw_demo || true
  fi
}

# Once: run the report, then ./run's own cleanup.
if [ -z "${PSW_DEMO_REPORT_TRAPPED:-}" ]; then
  PSW_DEMO_REPORT_TRAPPED=1
  trap 'rc=$?; [ "$rc" -eq 0 ] && demo_report_write; cleanup; exit $rc' EXIT
fi
