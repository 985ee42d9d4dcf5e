# ./run demo, last step: the HTML report of the demo's workload.
# Sourced while the workload runs; run_demo calls demo_report_write as its
# last step, so the report covers the whole workload and is the last output.
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
