# Throughput: pgbench select-only and tpcb-like at 1 client and 2 x cores
# clients on one cluster per configuration, all running at once, measured
# in interleaved rounds (A B C D E, then B C D E A, ...) so drift of a shared
# machine spreads over every configuration; median and min..max per
# configuration. Plus 10,000 "SELECT 1" over one psql connection, timed by
# the backend's own CPU time (schedstat), which a noisy machine disturbs less
# than wall clock.
# shellcheck shell=bash

# tp_configs: configurations measurable here (timing only when it exists).
tp_configs() {
  local c
  for c in "${BENCH_CONFIGS[@]}"; do bench_cfg_available "$c" && echo "$c"; done
}

# select1_cpu NAME N -> "backend_cpu_ns_per_stmt wall_ns_per_stmt"
select1_cpu() {
  local name=$1 n=$2 f=$BENCH_TMP/select1_$2.sql c0 c1 t0 t1
  if [ ! -f "$f" ]; then
    {
      echo 'SELECT pg_backend_pid() AS bpid \gset'
      echo '\setenv BPID :bpid'
      echo "\\! cat /proc/\$BPID/schedstat > $BENCH_TMP/cpu0; date +%s%N >> $BENCH_TMP/cpu0"
      select1_lines "$n"
      echo "\\! cat /proc/\$BPID/schedstat > $BENCH_TMP/cpu1; date +%s%N >> $BENCH_TMP/cpu1"
    } >"$f"
  fi
  "$PSW_BINDIR/psql" -X -q -At -h "${BENCH_DIR[$name]}" -p "${BENCH_PORT[$name]}" -U postgres -d postgres \
    -f "$f" >/dev/null
  c0=$(awk 'NR==1 {print $1}' "$BENCH_TMP/cpu0"); t0=$(sed -n 2p "$BENCH_TMP/cpu0")
  c1=$(awk 'NR==1 {print $1}' "$BENCH_TMP/cpu1"); t1=$(sed -n 2p "$BENCH_TMP/cpu1")
  awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v n="$n" 'BEGIN { printf "%.0f %.0f\n", (b-a)/n, (e-s)/n }'
}

bench_throughput() {
  local quick=$1 rounds t scale n1
  local hi=$((2 * $(nproc)))
  local workloads
  if [ "$quick" = 1 ]; then
    rounds=2; t=2; scale=1; n1=10000; workloads=("select-only 1" "tpcb-like $hi")
  else
    rounds=5; t=4; scale=4; n1=10000
    workloads=("select-only 1" "select-only $hi" "tpcb-like 1" "tpcb-like $hi")
  fi
  local cfgs=() c
  while IFS= read -r c; do cfgs+=("$c"); done < <(tp_configs)
  # Keep the full run inside its time budget as configurations land.
  [ "$quick" = 1 ] || t=$(( 320 / (${#workloads[@]} * ${#cfgs[@]} * rounds) ))
  [ "$t" -ge 2 ] || t=2
  log "bench: throughput (${cfgs[*]}; $rounds rounds x ${t} s)"
  md_section 30_throughput
  for c in "${cfgs[@]}"; do
    bench_start "tp_$c" "$(bench_cfg_conf "$c")" "synchronous_commit = off" "autovacuum = off"
    bsql "tp_$c" "CREATE DATABASE bench" >/dev/null
    bpgbench "tp_$c" -i -q -s "$scale" bench >/dev/null 2>&1
  done
  local r i wl mode clients tps out
  for r in $(seq "$rounds"); do
    for wl in "${workloads[@]}"; do
      mode=${wl% *}; clients=${wl#* }
      for i in "${!cfgs[@]}"; do
        c=${cfgs[$(( (i + r - 1) % ${#cfgs[@]} ))]}
        out=$(bpgbench "tp_$c" -n -b "$mode" -c "$clients" -j "$(( clients < 2 ? clients : 2 ))" -T "$t" bench 2>&1) || true
        tps=$(pgbench_tps <<<"$out")
        metric throughput_raw "$c" "$mode c=$clients round=$r" "${tps:-NA}" tps
      done
    done
    for i in "${!cfgs[@]}"; do
      c=${cfgs[$(( (i + r - 1) % ${#cfgs[@]} ))]}
      read -r cpu wall < <(select1_cpu "tp_$c" "$n1")
      metric select1_raw "$c" "cpu round=$r" "$cpu" ns
      metric select1_raw "$c" "wall round=$r" "$wall" ns
    done
  done
  for c in "${cfgs[@]}"; do bench_stop "tp_$c"; done

  # Summaries.
  local st
  for c in "${cfgs[@]}"; do
    for wl in "${workloads[@]}"; do
      mode=${wl% *}; clients=${wl#* }
      st=$(awk -F'\t' -v c="$c" -v p="$mode c=$clients round=" '$1=="throughput_raw" && $2==c && index($3,p)==1 && $4!="NA" {print $4}' \
           "$BENCH_METRICS" | stats_mmm)
      metric throughput "$c" "$mode c=$clients" "$st" "tps median min max n"
    done
    for wl in cpu wall; do
      st=$(awk -F'\t' -v c="$c" -v p="$wl round=" '$1=="select1_raw" && $2==c && index($3,p)==1 {print $4}' \
           "$BENCH_METRICS" | stats_mmm)
      metric select1 "$c" "$wl" "$st" "ns median min max n"
    done
  done

  md "## 3. Throughput" ""
  md "pgbench (simple protocol, scale $scale, synchronous_commit = off, autovacuum = off) on one cluster per"
  md "configuration, all running at once, $rounds interleaved rounds of ${t} s (the order rotates each round)."
  md "tps: median [min – max]; Δ = median vs no extension. \"within spread\": the median lies inside the"
  md "no-extension min–max range. Configurations not listed are not available in this build." ""
  md "| workload | clients | configuration | tps median [min – max] | Δ vs no extension | within spread |"
  md "|---|---:|---|---:|---:|---|"
  local base bmin bmax m lo hi2 pct inside
  for wl in "${workloads[@]}"; do
    mode=${wl% *}; clients=${wl#* }
    read -r base bmin bmax _ <<<"$(metric_get throughput none "$mode c=$clients")"
    for c in "${cfgs[@]}"; do
      read -r m lo hi2 _ <<<"$(metric_get throughput "$c" "$mode c=$clients")"
      pct="—" inside="—"
      if [ "$c" != none ]; then
        pct="$(fmt "$(awk -v a="$m" -v b="$base" 'BEGIN{print 100*(a-b)/b}')" 1) %"
        inside=$(awk -v m="$m" -v l="$bmin" -v h="$bmax" 'BEGIN{print (m>=l && m<=h) ? "yes" : "no"}')
      fi
      md "| $mode | $clients | $(bench_cfg_label "$c") | $(fmt "$m" 0) [$(fmt "$lo" 0) – $(fmt "$hi2" 0)] |" \
         "$pct |" "$inside |"
    done
  done
  md "" "**$n1 × \`SELECT 1\` over one psql connection** (Unix socket): the backend's CPU time per statement"
  md "(schedstat of the backend process) and wall clock per statement; median [min – max] of $rounds rounds." ""
  md "| configuration | backend CPU ns / statement | Δ vs no extension | wall ns / statement |" "|---|---:|---:|---:|"
  read -r base _ <<<"$(metric_get select1 none cpu)"
  for c in "${cfgs[@]}"; do
    read -r m lo hi2 _ <<<"$(metric_get select1 "$c" cpu)"
    local w wl2 wh
    read -r w wl2 wh _ <<<"$(metric_get select1 "$c" wall)"
    md "| $(bench_cfg_label "$c") | $(fmt "$m" 0) [$(fmt "$lo" 0) – $(fmt "$hi2" 0)] |" \
       "$( [ "$c" = none ] && echo "—" || echo "$(fmt "$(awk -v a="$m" -v b="$base" 'BEGIN{print 100*(a-b)/b}')" 1) %") |" \
       "$(fmt "$w" 0) [$(fmt "$wl2" 0) – $(fmt "$wh" 0)] |"
  done
  md ""
}
