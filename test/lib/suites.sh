# Every test suite, each printing its own total; sourced by ./run test.
# shellcheck shell=bash

TOTAL_PASSED=0
TOTAL_FAILED=0
SUITE_LINES=()

record() {  # record SUITE PASSED FAILED
  TOTAL_PASSED=$((TOTAL_PASSED + $2)); TOTAL_FAILED=$((TOTAL_FAILED + $3))
  SUITE_LINES+=("$(printf '%-14s %4d passed, %d failed' "$1:" "$2" "$3")")
  log "$1: $2 passed, $3 failed"
}

# Extra server settings for the test cluster.
TEST_CONF=(
  "shared_preload_libraries = 'pg_stat_waits, pg_stat_statements'"
  "pg_stat_statements.track = all"
  "max_connections = 300"
  "max_prepared_transactions = 10"
)

suite_unit() {
  local out p=0 f=0
  out=$(cd "$PSW_BUILD/cmake" && ctest -L unit --output-on-failure 2>&1) || true
  echo "$out" | tail -5
  p=$(echo "$out" | sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' | awk '{print $1-$2}')
  f=$(echo "$out" | sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p')
  record unit "${p:-0}" "${f:-1}"
}

# pg_regress against the running cluster; parses its summary.
regress_run() {  # regress_run NAME TESTS...
  local name=$1; shift
  local out p f
  out=$(make -s -C "$PSW_ROOT" installcheck PG_CONFIG="$PG_CONFIG" REGRESS="$*" \
        REGRESS_OPTS="--host=$PGHOST --port=$PGPORT --user=postgres --dbname=psw_regression" 2>&1) || true
  echo "$out" | grep -E '^(ok|not ok|test |     )|tests (passed|failed)' | tail -40
  if echo "$out" | grep -q 'All [0-9]* tests passed'; then
    p=$(echo "$out" | sed -n 's/.*All \([0-9]*\) tests passed.*/\1/p'); f=0
  else
    f=$(echo "$out" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) tests failed.*/\1/p')
    p=$(echo "$out" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) tests failed.*/\2 \1/p' | awk '{print $1-$2}')
    [ -n "$f" ] || { f=1; p=0; echo "$out" | tail -30; }
    [ -f "$PSW_ROOT/regression.diffs" ] && head -80 "$PSW_ROOT/regression.diffs"
  fi
  record "$name" "${p:-0}" "${f:-1}"
}

suite_regress() {
  local tests
  tests=$(cd "$PSW_ROOT/sql" && ls -- *.sql | sed 's/\.sql$//' | grep -v '^nopreload$' | tr '\n' ' ')
  # shellcheck disable=SC2086
  regress_run regress $tests
}

suite_regress_nopreload() {
  local main_host=$PGHOST main_port=$PGPORT dir
  new_cluster dir "shared_preload_libraries = ''"
  regress_run regress-nopreload nopreload
  cluster_stop "$dir"
  export PGHOST=$main_host PGPORT=$main_port
}

suite_pgtap() {
  local out p f
  psql -q -X -d postgres -c "DROP DATABASE IF EXISTS psw_tap" -c "CREATE DATABASE psw_tap" >/dev/null
  psql -q -X -d psw_tap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION pg_stat_waits" >/dev/null
  out=$(pg_prove -d psw_tap -U postgres -h "$PGHOST" -p "$PGPORT" "$PSW_ROOT"/test/pgtap/*.sql 2>&1) || true
  echo "$out" | tail -15
  p=$(echo "$out" | sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p')
  f=$(echo "$out" | sed -n 's/.*Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' | awk '{s+=$1} END {print s+0}')
  echo "$out" | grep -q '^Result: PASS' || [ "${f:-0}" -gt 0 ] || f=1
  record pgtap "$(( ${p:-0} - ${f:-0} ))" "${f:-1}"
}

suite_integration() {
  local out p f
  psql -q -X -d postgres -c "DROP DATABASE IF EXISTS psw_it" -c "CREATE DATABASE psw_it" >/dev/null
  export PSW_CONNINFO="host=$PGHOST port=$PGPORT user=postgres dbname=psw_it"
  out=$("$PSW_BUILD/cmake/psw_integration_tests" --gtest_color=no 2>&1) || true
  echo "$out" | grep -E '^\[ *(OK|FAILED|PASSED) *\]|Failure|Expected|Which is|actual|error|exception|ERROR' | tail -60
  p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p')
  f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p')
  [ -n "$p$f" ] || f=1
  record integration "${p:-0}" "${f:-0}"
}

run_all_suites() {
  local long=0
  [ "${1:-}" = "--long" ] && long=1
  export PSW_LONG=$long
  local main
  suite_unit
  new_cluster main "${TEST_CONF[@]}"
  suite_regress
  suite_pgtap
  suite_integration
  local extra
  for extra in "$PSW_ROOT"/test/lib/suite_*.sh; do
    [ -f "$extra" ] || continue
    # shellcheck disable=SC1090
    source "$extra"
  done
  suite_regress_nopreload
  echo
  printf '%s\n' "${SUITE_LINES[@]}"
  echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
  [ "$TOTAL_FAILED" -eq 0 ]
}
