# The pg_wait_sampling_compat extension: its objects have exactly the columns,
# types and signatures of the real pg_wait_sampling (read from its Debian
# package's extension, created in a scratch database), serve pg_stat_waits
# data, and refuse a database where pg_wait_sampling is installed; then the
# pg_regress tests test/sql/pg_wait_sampling_*.sql (pg_wait_sampling's own
# regression queries, and the switch: settings, DROP of either extension).
# shellcheck shell=bash

suite_compat() {
  # Failing commands are what this suite checks: no errexit inside (./run sets -e).
  local _errexit=$-
  set +e
  local p=0 f=0 db=psw_compat ref=psw_compat_ref
  local extdir
  extdir=$($PG_CONFIG --sharedir)/extension
  ok()  { p=$((p + 1)); echo "ok - $*"; }
  bad() { f=$((f + 1)); echo "not ok - $*"; }
  expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
  q() { psql -X -At -v ON_ERROR_STOP=1 "$@"; }

  expect "pg_wait_sampling_compat is installed with the extension" \
         test -f "$PSW_STAGE$extdir/pg_wait_sampling_compat.control" -a -f "$PSW_STAGE$extdir/pg_wait_sampling_compat--1.1.sql"

  # The committed copies of pg_wait_sampling's tests are its release's files
  # with only the CREATE/DROP EXTENSION lines replaced.
  # (kept next to the checkout, in ../shared; from a worktree, one level up)
  local shared
  for shared in "$PSW_ROOT/../shared" "$PSW_ROOT/../../shared" ""; do
    [ -d "$shared/compat-tests/pg_wait_sampling" ] && break
  done
  shared=${shared:+$shared/compat-tests/pg_wait_sampling}
  if [ -n "$shared" ]; then
    expect "test/sql/pg_wait_sampling_{load,queries} are pg_wait_sampling's tests, CREATE/DROP lines aside" \
           "$PSW_ROOT/test/pg_wait_sampling_tests.sh" --check "$shared"
  fi

  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" \
       -c "DROP DATABASE IF EXISTS $ref" -c "CREATE DATABASE $ref" >/dev/null
  # The reference: pg_wait_sampling's own catalog entries (it need not be
  # preloaded to be created; its objects are only read from the catalog).
  if ! q -d $ref -c "CREATE EXTENSION pg_wait_sampling" >/dev/null 2>&1; then
    echo "# pg_wait_sampling (Debian postgresql-15-pg-wait-sampling) is not available here: no reference comparison"
  else
    local out
    out=$(q -d $db -c "CREATE EXTENSION pg_wait_sampling_compat CASCADE" 2>&1)
    expect "CREATE EXTENSION pg_wait_sampling_compat CASCADE runs" test $? -eq 0

    cols() {  # cols DB RELATION: "name type" per column
      q -d "$1" -c "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
                    WHERE attrelid = to_regclass('$2') AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
    }
    sig() {  # sig DB FUNCTION: arguments, result, strict, volatility, set-returning
      q -d "$1" -c "SELECT format('(%s) -> %s strict=%s volatile=%s set=%s', pg_get_function_arguments(oid),
                                  pg_get_function_result(oid), proisstrict, provolatile, proretset)
                      FROM pg_proc WHERE proname = '$2'"
    }
    local v fn
    for v in pg_wait_sampling_current pg_wait_sampling_history pg_wait_sampling_profile; do
      expect "$v has pg_wait_sampling's columns and types: $(cols $ref "$v" | tr '\n' ',')" \
             test "$(cols $db "$v")" = "$(cols $ref "$v")"
      expect "$v is readable by PUBLIC, as in pg_wait_sampling" \
             test "$(q -d $db -c "SELECT has_table_privilege('public', '$v', 'SELECT')")" = t
      expect "$v can be read" bash -c "psql -X -At -v ON_ERROR_STOP=1 -d $db -c 'SELECT count(*) FROM $v' >/dev/null"
    done
    for fn in pg_wait_sampling_get_current pg_wait_sampling_get_history pg_wait_sampling_get_profile \
              pg_wait_sampling_reset_profile; do
      expect "$fn has pg_wait_sampling's signature: $(sig $ref $fn)" test -n "$(sig $ref $fn)" -a "$(sig $db $fn)" = "$(sig $ref $fn)"
      expect "$fn has pg_wait_sampling's EXECUTE privilege for PUBLIC" \
             test "$(q -d $db -c "SELECT has_function_privilege('public', oid, 'EXECUTE') FROM pg_proc WHERE proname = '$fn'")" = \
                  "$(q -d $ref -c "SELECT has_function_privilege('public', oid, 'EXECUTE') FROM pg_proc WHERE proname = '$fn'")"
    done

    # Data: this session is seen running (pg_wait_sampling shows NULL events
    # while not waiting) with its real queryid; other processes are listed.
    expect "current: own backend on CPU shows NULL event_type/event, like pg_wait_sampling" \
           test "$(q -d $db -c "SELECT event_type IS NULL AND event IS NULL FROM pg_wait_sampling_current WHERE pid = pg_backend_pid()")" = t
    expect "current: lists every process pg_stat_waits_activity lists" \
           test "$(q -d $db -c "SELECT (SELECT count(*) FROM pg_wait_sampling_current) >= (SELECT count(*) FROM pg_stat_waits_activity) - 1")" = t
    expect "current: background processes keep their wait events" \
           test "$(q -d $db -c "SELECT count(*) > 0 FROM pg_wait_sampling_current WHERE event_type = 'Activity'")" = t
    expect "profile: total count equals pg_stat_waits_profile's samples (within a second's sampling)" \
           test "$(q -d $db -c "SELECT abs((SELECT sum(count) FROM pg_wait_sampling_profile) -
                                          (SELECT coalesce(sum(samples), 0) FROM pg_stat_waits_profile)) <= 200")" = t
    expect "pg_wait_sampling_reset_profile() runs" \
           bash -c "psql -X -At -v ON_ERROR_STOP=1 -d $db -c 'SELECT pg_wait_sampling_reset_profile()' >/dev/null"

    # Refusals: next to the real pg_wait_sampling, and without pg_stat_waits.
    out=$(psql -X -q -v ON_ERROR_STOP=1 -d $ref -c "CREATE EXTENSION pg_wait_sampling_compat CASCADE" 2>&1)
    expect "refuses a database where pg_wait_sampling is installed" grep -q "pg_wait_sampling is installed" <<<"$out"
    q -d $ref -c "DROP EXTENSION pg_wait_sampling" >/dev/null
    out=$(psql -X -q -v ON_ERROR_STOP=1 -d $ref -c "CREATE EXTENSION pg_wait_sampling_compat" 2>&1)
    expect "refuses a database without pg_stat_waits (no CASCADE)" \
           grep -q 'required extension "pg_stat_waits" is not installed' <<<"$out"
  fi
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $ref" -c "DROP DATABASE IF EXISTS $db" >/dev/null
  record compat "$p" "$f"

  # pg_regress: pg_wait_sampling's own tests against pg_wait_sampling_compat,
  # and the switch (settings, DROP of either extension); with them
  # sampled_wait_names (no blank wait names in the sampled views), until the
  # harness runs test/sql itself.
  local outdir rout rp rf
  outdir=$(mktemp -d /tmp/psw_compat_regress.XXXXXX)
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS psw_compat_regress" -c "CREATE DATABASE psw_compat_regress" >/dev/null
  rout=$("$($PG_CONFIG --pkglibdir)/pgxs/src/test/regress/pg_regress" --inputdir="$PSW_ROOT/test" \
         --outputdir="$outdir" --use-existing --host="$PGHOST" --port="$PGPORT" --user=postgres \
         --dbname=psw_compat_regress pg_wait_sampling_load pg_wait_sampling_queries pg_wait_sampling_compat \
         sampled_wait_names 2>&1)
  echo "$rout" | grep -E '^(ok|not ok|test) '
  rp=$(echo "$rout" | grep -cE '^test .*\.\.\. ok|^ok [0-9]')
  rf=$(echo "$rout" | grep -cE '^test .*\.\.\. FAILED|^not ok [0-9]')
  [ "$rp" -eq 0 ] && [ "$rf" -eq 0 ] && { echo "$rout" | tail -20; rf=1; }
  [ -f "$outdir/regression.diffs" ] && head -80 "$outdir/regression.diffs"
  rm -rf "$outdir"
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS psw_compat_regress" >/dev/null
  record compat-regress "$rp" "$rf"
  [[ $_errexit == *e* ]] && set -e
  return 0
}

suite_compat
