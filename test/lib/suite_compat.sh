# extension/compat/pg_wait_sampling_compat.sql: the objects it creates have
# exactly the columns and types of the real pg_wait_sampling (read from its
# Debian package's extension, created in a scratch database), serve
# pg_stat_waits data, and objects whose source this build lacks are skipped.
# shellcheck shell=bash

suite_compat() {
  # Failing commands are what this suite checks: no errexit inside (./run sets -e).
  local _errexit=$-
  set +e
  local p=0 f=0 db=psw_compat ref=psw_compat_ref script=$PSW_ROOT/extension/compat/pg_wait_sampling_compat.sql
  local installed
  installed=$($PG_CONFIG --sharedir)/extension/pg_wait_sampling_compat.sql
  ok()  { p=$((p + 1)); echo "ok - $*"; }
  bad() { f=$((f + 1)); echo "not ok - $*"; }
  expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
  q() { psql -X -At -v ON_ERROR_STOP=1 "$@"; }

  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" \
       -c "DROP DATABASE IF EXISTS $ref" -c "CREATE DATABASE $ref" >/dev/null
  # The reference: pg_wait_sampling's own catalog entries (it need not be
  # preloaded to be created; its views are only read from the catalog).
  if ! q -d $ref -c "CREATE EXTENSION pg_wait_sampling" >/dev/null 2>&1; then
    bad "pg_wait_sampling (Debian postgresql-15-pg-wait-sampling) can be created for reference"
    record compat "$p" "$f"; [[ $_errexit == *e* ]] && set -e; return 0
  fi
  expect "the compat script is installed with the extension" test -f "$PSW_STAGE$installed"
  q -d $db -c "CREATE EXTENSION pg_stat_waits" >/dev/null
  local out
  out=$(psql -X -q -v ON_ERROR_STOP=1 -d $db -f "$script" 2>&1)
  expect "the script runs" test $? -eq 0
  out=$(psql -X -q -v ON_ERROR_STOP=1 -d $db -f "$script" 2>&1)
  expect "the script can be run again" test $? -eq 0

  cols() {  # cols DB RELATION: "name type" per column
    q -d "$1" -c "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
                  WHERE attrelid = to_regclass('$2') AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
  }
  exists_in() { [ "$(q -d "$1" -c "SELECT to_regclass('$2') IS NOT NULL")" = t ]; }
  local v src
  for v in current:pg_stat_waits_activity history:pg_stat_waits_history profile:pg_stat_waits_profile; do
    src=${v#*:}; v=pg_wait_sampling_${v%%:*}
    if exists_in $db "$src"; then
      expect "$v exists (from $src)" exists_in $db "$v"
      expect "$v has pg_wait_sampling's columns and types: $(cols $ref "$v" | tr '\n' ',')" \
             test "$(cols $db "$v")" = "$(cols $ref "$v")"
      expect "$v is readable by PUBLIC, as in pg_wait_sampling" \
             test "$(q -d $db -c "SELECT has_table_privilege('public', '$v', 'SELECT')")" = t
      expect "$v can be read" bash -c "psql -X -At -v ON_ERROR_STOP=1 -d $db -c 'SELECT count(*) FROM $v' >/dev/null"
    else
      expect "$v is skipped: $src is not available in this server's pg_stat_waits" \
             bash -c "! psql -X -At -d $db -c \"SELECT to_regclass('$v')\" | grep -q ."
      expect "the script said it skipped $v" grep -q "skipped:.*$v" <<<"$out"
    fi
  done

  # Data: this session is seen running (pg_wait_sampling shows NULL events
  # while not waiting) with its real queryid; other processes are listed.
  expect "current: own backend on CPU shows NULL event_type/event, like pg_wait_sampling" \
         test "$(q -d $db -c "SELECT event_type IS NULL AND event IS NULL FROM pg_wait_sampling_current WHERE pid = pg_backend_pid()")" = t
  expect "current: lists every process pg_stat_waits_activity lists" \
         test "$(q -d $db -c "SELECT (SELECT count(*) FROM pg_wait_sampling_current) >= (SELECT count(*) FROM pg_stat_waits_activity) - 1")" = t
  expect "current: background processes keep their wait events" \
         test "$(q -d $db -c "SELECT count(*) > 0 FROM pg_wait_sampling_current WHERE event_type = 'Activity'")" = t
  if exists_in $db pg_stat_waits_profile; then
    expect "profile: total count equals pg_stat_waits_profile's samples (within a second's sampling)" \
           test "$(q -d $db -c "SELECT abs((SELECT sum(count) FROM pg_wait_sampling_profile) -
                                            (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile)) <= 200")" = t
  fi
  if [ "$(q -d $db -c "SELECT to_regprocedure('pg_stat_waits_reset()') IS NOT NULL")" = t ]; then
    expect "pg_wait_sampling_reset_profile() exists, returns void, not for PUBLIC" \
           test "$(q -d $db -c "SELECT prorettype = 'void'::regtype AND NOT has_function_privilege('public', oid, 'EXECUTE')
                                  FROM pg_proc WHERE proname = 'pg_wait_sampling_reset_profile'")" = t
    expect "pg_wait_sampling_reset_profile() runs" \
           bash -c "psql -X -At -v ON_ERROR_STOP=1 -d $db -c 'SELECT pg_wait_sampling_reset_profile()' >/dev/null"
  else
    expect "pg_wait_sampling_reset_profile() is skipped without pg_stat_waits_reset()" \
           test "$(q -d $db -c "SELECT count(*) FROM pg_proc WHERE proname = 'pg_wait_sampling_reset_profile'")" = 0
  fi
  # Refusals: next to the real pg_wait_sampling, and without pg_stat_waits.
  out=$(psql -X -q -v ON_ERROR_STOP=1 -d $ref -f "$script" 2>&1)
  expect "refuses a database where pg_wait_sampling is installed" grep -q "pg_wait_sampling is installed" <<<"$out"
  q -d $ref -c "DROP EXTENSION pg_wait_sampling" >/dev/null
  out=$(psql -X -q -v ON_ERROR_STOP=1 -d $ref -f "$script" 2>&1)
  expect "refuses a database without pg_stat_waits" grep -q "pg_stat_waits is not installed" <<<"$out"

  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $ref" >/dev/null
  record compat "$p" "$f"
  [[ $_errexit == *e* ]] && set -e
  return 0
}

suite_compat
