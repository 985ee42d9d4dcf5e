# Long suites (./run test --long, which CI runs): 1000-connection churn for
# 60 s on its own cluster, and the sanitizer build of the unit and
# integration tests.
# shellcheck shell=bash

suite_churn_long() {
  local main_host=$PGHOST main_port=$PGPORT dir out p f
  new_cluster dir "max_connections = 1100" "pg_stat_waits.timing = on" "shared_buffers = 256MB"
  psql -X -q -d postgres -c "CREATE DATABASE psw_it" >/dev/null
  out=$(PSW_CHURN_CONNECTIONS=1000 PSW_CHURN_SECONDS=60 \
        PSW_CONNINFO="host=$PGHOST port=$PGPORT user=postgres dbname=psw_it" \
        "$PSW_BUILD/cmake/psw_integration_tests" --gtest_filter='Churn.*' --gtest_color=no 2>&1) || true
  echo "$out" | grep -E '^churn:|^\[ *(OK|FAILED|PASSED) *\]|Failure' | head -20
  p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p')
  f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p')
  [ -n "$p$f" ] || f=1
  record churn-1000 "${p:-0}" "${f:-0}"
  cluster_stop "$dir"
  export PGHOST=$main_host PGPORT=$main_port
}

suite_sanitizers() {
  local out p f
  log "building unit and integration tests with ASan + UBSan"
  cmake -S "$PSW_ROOT" -B "$PSW_BUILD/asan" -DCMAKE_BUILD_TYPE=Debug -DPSW_SANITIZE=ON >/dev/null
  cmake --build "$PSW_BUILD/asan" -j"$(nproc)" --target psw_unit_tests psw_integration_tests >/dev/null
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  out=$("$PSW_BUILD/asan/psw_unit_tests" --gtest_color=no 2>&1; \
        PSW_CONNINFO="host=$PGHOST port=$PGPORT user=postgres dbname=psw_it" \
        "$PSW_BUILD/asan/psw_integration_tests" --gtest_filter='Activity.*:Churn.*' --gtest_color=no 2>&1) || true
  unset ASAN_OPTIONS UBSAN_OPTIONS
  echo "$out" | grep -E 'ERROR: (Address|Undefined|Leak)|runtime error|^\[  (PASSED|FAILED)  \]' | head -20
  p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
  f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
  echo "$out" | grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' && f=$((f + 1))
  [ "$p" -gt 0 ] || f=$((f + 1))
  record sanitizers "$p" "$f"
}

if [ "${PSW_LONG:-0}" = 1 ]; then
  suite_churn_long
  suite_sanitizers
fi
