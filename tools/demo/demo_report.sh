# ./run demo, the report step: the HTML report of the demo's workload.
# Sourced while the workload runs; run_demo calls demo_report_write before
# the workload ends (so "sessions now" shows sessions at work) and
# demo_report_show as its last step, so the report's path is the last output.
# shellcheck shell=bash

demo_report_write() {
  local out_dir=$PSW_BUILD/demo bin=$PSW_BINDIR/pg_stat_waits_report
  [ -x "$bin" ] || { echo "pg_stat_waits_report is not built" >&2; return 0; }
  mkdir -p "$out_dir"
  PSW_DEMO_HTML=$out_dir/pg_stat_waits_report.html
  log "HTML report of the workload, written while it runs (pg_stat_waits_report report --since 2min)"
  if ! "$bin" report --since 2min --html "$PSW_DEMO_HTML" -d psw_demo 2>"$out_dir/report.err"; then
    cat "$out_dir/report.err" >&2
    PSW_DEMO_HTML=""
    return 0
  fi
  chmod a+r "$PSW_DEMO_HTML"
}

demo_report_show() {
  [ -n "${PSW_DEMO_HTML:-}" ] || return 0
  echo "report: $PSW_DEMO_HTML"
  # The demo's cluster goes away with the demo; this is for a server of one's own.
  echo "live:   pg_stat_waits_report serve -d DBNAME, then open http://localhost:9866/report/default"
  echo "        (the same report, generated on request; window, slice and comparison on the page)"
}
