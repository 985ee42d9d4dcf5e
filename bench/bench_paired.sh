# Timing on against off in pairs on one cluster: what exact timing costs a
# busy server, measured so that the machine's drift cancels. Section 3 runs
# one cluster per configuration at once and compares medians against the
# no-extension spread; on a shared 2-core VM that spread is ±25 %, wider
# than the cost. Here one cluster with pg_stat_waits loaded runs both modes,
# switched per connection (PGOPTIONS: timing is a superuser GUC), in short
# back-to-back pairs whose order alternates, and the figure is the median of
# the pairs' ratios (or differences). Two pgbench workloads, those of issue
# 56's acceptance: select-only with 4 clients (one-row statements, the
# timed path's worst share) and tpcb-like at scale 1 with 16 clients (every
# transaction updates the one branch row: most of the time goes to lock and
# LWLock waits, each of them timed).
# shellcheck shell=bash

# The workloads: "key mode scale clients" (key names the metrics).
PAIRED_WORKLOADS=("select-only_c4 select-only 4 4" "tpcb-like_s1_c16 tpcb-like 1 16")

bench_paired() {
  local quick=$1 pairs rounds t n1
  if [ "$quick" = 1 ]; then pairs=4; rounds=6; t=2; n1=2000; else pairs=12; rounds=40; t=3; n1=5000; fi
  md_section 35_paired
  if ! bench_cfg_available psw_timing; then
    md "## 3b. Timing on against off, in pairs" "" "not available: ${BENCH_WHY[psw_timing]:-exact timing is not in this build}" ""
    return 0
  fi
  log "bench: timing on/off in pairs on one cluster ($pairs pairs of ${t} s per workload, $rounds rounds of $n1 SELECT 1)"
  bench_start paired "$(bench_cfg_conf psw_sampling)" "synchronous_commit = off" "autovacuum = off"
  local wl key mode scale clients
  for wl in "${PAIRED_WORKLOADS[@]}"; do
    read -r key mode scale clients <<<"$wl"
    bsql paired "CREATE DATABASE bench_s$scale" >/dev/null 2>&1 || true
    [ -n "$(bsql paired "SELECT to_regclass('pgbench_accounts')" "bench_s$scale")" ] ||
      bpgbench paired -i -q -s "$scale" "bench_s$scale" >/dev/null 2>&1
  done

  # One measurement in a mode (on / off): tps of a pgbench run, or the
  # backend's CPU ns per SELECT 1. Both are called through paired_run.
  # shellcheck disable=SC2317
  paired_tps() {
    PGOPTIONS="-c pg_stat_waits.timing=$1" bpgbench paired -n -b "$mode" -c "$clients" \
      -j "$((clients < 2 ? clients : 2))" -T "$t" "bench_s$scale" 2>&1 | pgbench_tps
  }
  # shellcheck disable=SC2317
  paired_cpu() { PGOPTIONS="-c pg_stat_waits.timing=$1" select1_cpu paired "$n1" | awk '{print $1}'; }
  # paired_run I FN: FN on and FN off into on / off, on first in odd pairs.
  local i on off
  paired_run() {
    if [ $(($1 % 2)) = 1 ]; then on=$($2 on); off=$($2 off); else off=$($2 off); on=$($2 on); fi
  }
  for wl in "${PAIRED_WORKLOADS[@]}"; do
    read -r key mode scale clients <<<"$wl"
    for i in $(seq "$pairs"); do
      paired_run "$i" paired_tps
      if [ -n "$on" ] && [ -n "$off" ]; then
        metric paired_raw psw_timing "tps ratio $key pair=$i" "$(awk -v a="$on" -v b="$off" 'BEGIN{print a/b}')" ratio
      fi
    done
  done
  for i in $(seq "$rounds"); do
    paired_run "$i" paired_cpu
    metric paired_raw psw_timing "cpu diff round=$i" "$((on - off))" ns
    metric paired_raw psw_timing "cpu off round=$i" "$off" ns
  done
  bench_stop paired

  local p st
  for p in "${PAIRED_WORKLOADS[@]}" "cpu diff round=" "cpu off round="; do
    case $p in cpu*) ;; *) p="tps ratio ${p%% *} pair=" ;; esac
    st=$(awk -F'\t' -v p="$p" '$1=="paired_raw" && index($3,p)==1 {print $4}' "$BENCH_METRICS" | stats_mmm)
    metric paired psw_timing "${p% *}" "$st" "median min max n"
  done
  for wl in "${PAIRED_WORKLOADS[@]}"; do
    read -r key mode scale clients <<<"$wl"
    metric paired psw_timing "workload $key" "$mode scale=$scale clients=$clients seconds=$t" text
  done
  local r lo hi n d dlo dhi base
  read -r d dlo dhi _ <<<"$(metric_get paired psw_timing "cpu diff")"
  read -r base _ <<<"$(metric_get paired psw_timing "cpu off")"

  md "## 3b. Timing on against off, in pairs" ""
  md "One cluster with pg_stat_waits loaded (sampling on, \`synchronous_commit = off\`); exact timing switched"
  md "per connection (\`PGOPTIONS=-c pg_stat_waits.timing=on|off\`), each pair run back to back with the order"
  md "alternating, so the machine's drift between runs falls mostly inside a pair. Figures: median [min – max]"
  md "over the pairs. Targets (issue 56): select-only with 4 clients ≥ 0.99, tpcb-like at scale 1 with 16"
  md "clients (every transaction updates the one branch row: a wait-heavy workload) ≥ 0.98." ""
  md "| measurement | timing on against off |" "|---|---:|"
  for wl in "${PAIRED_WORKLOADS[@]}"; do
    read -r key mode scale clients <<<"$wl"
    read -r r lo hi n <<<"$(metric_get paired psw_timing "tps ratio $key")"
    md "| pgbench $mode, scale $scale, $clients clients, $n pairs of ${t} s: tps on / off |" \
       "$(fmt "$r" 3) [$(fmt "$lo" 3) – $(fmt "$hi" 3)] |"
  done
  md "| $n1 × \`SELECT 1\` over one psql connection, $rounds pairs: backend CPU ns / statement, on − off |" \
     "$(fmt "$d" 0) [$(fmt "$dlo" 0) – $(fmt "$dhi" 0)] ($(fmt "$(awk -v a="$d" -v b="$base" 'BEGIN{print 100*a/b}')" 1) % of $(fmt "$base" 0) with timing off) |"
  md ""
  md "The backend CPU time is the backend's own (schedstat), kernel time included: the clock readings and"
  md "cache misses of the timed calls count here, which section 1's instruction counts do not."
  md ""
}
