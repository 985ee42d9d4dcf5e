# exporters/: every postgres_exporter query runs against the main test
# cluster and returns the columns its metrics promise (queries whose objects
# this build lacks are skipped and listed), the Grafana dashboard only uses
# metrics the query file produces, and the real postgres_exporter (Debian's
# binary, unpacked into build/ without installing the service) exports them.
# shellcheck shell=bash

suite_exporters() {
  # Failing commands are what this suite checks: no errexit inside (./run sets -e).
  local _errexit=$-
  set +e
  local out db=psw_exporters exporter="" dir=$PSW_BUILD/exporter
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  psql -X -q -d $db -c "CREATE EXTENSION pg_stat_waits" >/dev/null
  # Some activity so that the queries return rows.
  psql -X -q -d $db -c "SELECT pg_sleep(1)" >/dev/null &
  local sleeper=$!
  if [ ! -x "$dir/root/usr/bin/prometheus-postgres-exporter" ]; then
    mkdir -p "$dir" && chmod 777 "$dir"
    ( cd "$dir" && apt-get download -qq prometheus-postgres-exporter >/dev/null 2>&1 \
        && dpkg -x prometheus-postgres-exporter_*.deb root ) || echo "  (postgres_exporter not available: checked with psql only)"
  fi
  [ -x "$dir/root/usr/bin/prometheus-postgres-exporter" ] && exporter="--exporter $dir/root/usr/bin/prometheus-postgres-exporter"
  sleep 0.3
  # shellcheck disable=SC2086
  out=$(/usr/bin/python3 "$PSW_ROOT/test/lib/check_exporters.py" $exporter \
        "$PSW_ROOT/exporters/postgres_exporter/queries.yaml" "$PSW_ROOT/exporters/postgres_exporter/grafana_dashboard.json" $db 2>&1)
  wait "$sleeper" 2>/dev/null
  echo "$out"
  record exporters "$(grep -c '^ok ' <<<"$out")" "$(grep -c '^not ok ' <<<"$out")"
  grep -q '^# [0-9]* ok' <<<"$out" || record exporters 0 1   # the checker itself failed
  [[ $_errexit == *e* ]] && set -e
  return 0
}

suite_exporters
