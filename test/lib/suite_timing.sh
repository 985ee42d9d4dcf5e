# Exact timing in a cluster of its own with small shared_buffers, so that a
# sequential scan of a modest table (2 x shared_buffers) must read from the
# kernel (IO/DataFileRead). Sourced by run_all_suites with the main cluster up.
# shellcheck shell=bash

suite_timing() {
  local main_host=$PGHOST main_port=$PGPORT dir out p f
  new_cluster dir "shared_buffers = 16MB"
  psql -q -X -d postgres -c "CREATE DATABASE psw_it" >/dev/null
  out=$(PSW_CONNINFO="host=$PGHOST port=$PGPORT user=postgres dbname=psw_it" \
        "$PSW_BUILD/cmake/psw_integration_tests" --gtest_color=no \
        --gtest_filter='Timing.SmallBuffers*:Timing.StatusListsTheInterposedCalls' 2>&1) || true
  echo "$out" | grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|Expected|Which is' | tail -20
  p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p')
  f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p')
  # A skip here means the small cluster was not small: count it as a failure.
  echo "$out" | grep -q '^\[  SKIPPED \]' && f=$(( ${f:-0} + 1 ))
  [ -n "$p$f" ] || f=1
  cluster_stop "$dir"
  export PGHOST=$main_host PGPORT=$main_port
  record timing-small "${p:-0}" "${f:-0}"
}

suite_timing
