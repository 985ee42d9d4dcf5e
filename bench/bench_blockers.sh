#!/usr/bin/env bash
# Cost of the sampler's lock-blocker lookups: pgbench on one hot row (every
# client updates the same row, so most are in a Lock wait at any time), with
# the lookups on and off in the same cluster (switched through the test
# module, pg_stat_waits_blocker_lookup()), alternating rounds. Per round:
# TPS, the sampler's CPU (schedstat of its pid), lookups per second, their
# wall time (waiting for the lock-manager partition LWLock included) and the
# time that LWLock was held (what backends may wait for).
#
#   bench/bench_blockers.sh [--clients 8] [--seconds 15] [--rounds 2]
#
# Prints one machine-readable line per round, e.g.
#   blockers lookups=on tps=812.3 sampler_cpu_pct=1.21 lookups_per_s=70.1 us_per_lookup=9.8 us_held=1.2 ...
# then a Markdown table of the medians. Needs the staged build (./run build
# installs the extension and the test module into the stage).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../tools/lib/common.sh
source "$(dirname "$0")/../tools/lib/common.sh"

CLIENTS=8
SECS=15
ROUNDS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --clients) CLIENTS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

ensure_os_user
stage_postgres >/dev/null
trap psw_cleanup_clusters EXIT
new_cluster DIR "pg_stat_waits.sample_period = 10" "max_connections = $((CLIENTS + 20))"

q() { as_os_user env PGHOST="$PGHOST" PGPORT="$PGPORT" "$PSW_BINDIR/psql" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION pg_stat_waits; CREATE EXTENSION pg_stat_waits_test"
q "CREATE TABLE hot (id int PRIMARY KEY, v bigint); INSERT INTO hot VALUES (1, 0)"
SCRIPT=$DIR/hot.sql
echo 'UPDATE hot SET v = v + 1 WHERE id = 1;' | as_os_user tee "$SCRIPT" >/dev/null
SAMPLER=$(q "SELECT sampler_pid FROM pg_stat_waits_status")
[ -n "$SAMPLER" ] || die "no sampler running"

cpu_ns() { awk '{print $1}' "/proc/$SAMPLER/schedstat"; }

RESULTS=$DIR/results.txt
: >"$RESULTS"
round() {  # round on|off
  local mode=$1 ns0 ns1 l0 l1 ms0 ms1 h0 h1 tps locks
  q "SELECT pg_stat_waits_blocker_lookup($([ "$mode" = on ] && echo true || echo false))" >/dev/null
  q "SELECT pg_stat_waits_reset()" >/dev/null
  IFS='|' read -r l0 ms0 h0 < <(q "SELECT lookups, lookup_ms, hold_ms FROM pg_stat_waits_blocker_stats()")
  ns0=$(cpu_ns)
  tps=$(as_os_user env PGHOST="$PGHOST" PGPORT="$PGPORT" "$PSW_BINDIR/pgbench" -U postgres -n -f "$SCRIPT" \
          -c "$CLIENTS" -j 2 -T "$SECS" postgres 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
  ns1=$(cpu_ns)
  IFS='|' read -r l1 ms1 h1 < <(q "SELECT lookups, lookup_ms, hold_ms FROM pg_stat_waits_blocker_stats()")
  locks=$(q "SELECT count(*) FROM pg_stat_waits_history WHERE wait_event_type = 'Lock'")
  awk -v m="$mode" -v tps="$tps" -v ns=$((ns1 - ns0)) -v s="$SECS" -v l=$((l1 - l0)) -v ms0="$ms0" -v ms1="$ms1" \
      -v h0="$h0" -v h1="$h1" -v locks="$locks" 'BEGIN {
        us = (l > 0) ? (ms1 - ms0) * 1000 / l : 0
        held = (l > 0) ? (h1 - h0) * 1000 / l : 0
        printf "blockers lookups=%s tps=%.1f sampler_cpu_pct=%.3f lookups_per_s=%.1f us_per_lookup=%.2f us_held=%.2f held_ms_per_s=%.4f lock_samples=%d\n",
               m, tps, 100.0 * ns / 1e9 / s, l / s, us, held, (h1 - h0) / s, locks }' | tee -a "$RESULTS"
}

for _ in $(seq "$ROUNDS"); do round on; round off; done

# Medians per mode, as a Markdown table.
echo
echo "| lookups | TPS | sampler CPU (% of a core) | lookups/s | µs per lookup | µs LWLock held per lookup | ms held per s |"
echo "|---|---|---|---|---|---|---|"
for mode in on off; do
  grep "lookups=$mode " "$RESULTS" | awk -v m="$mode" '
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1], NR] = kv[2] } n = NR }
    function med(k,   a, i, j, t) { for (i = 1; i <= n; i++) a[i] = v[k, i]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END { printf "| %s | %.0f | %.2f | %.1f | %.2f | %.2f | %.4f |\n", m, med("tps"), med("sampler_cpu_pct"),
          med("lookups_per_s"), med("us_per_lookup"), med("us_held"), med("held_ms_per_s") }'
done
