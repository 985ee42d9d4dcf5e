# Memory: shared memory at max_connections 100 and 1000. pg_stat_waits says
# what it allocated (pg_stat_waits_status.shmem_bytes); for every
# configuration the total of pg_shmem_allocations minus the no-extension
# total at the same max_connections is the extension's whole footprint
# (its structs plus anything it makes PostgreSQL allocate, e.g. LWLocks).
# shellcheck shell=bash

bench_memory() {
  local quick=$1 cfgs cfg mc tot
  if [ "$quick" = 1 ]; then cfgs=(none psw_sampling); else cfgs=(none psw_sampling pg_wait_sampling pg_stat_statements); fi
  log "bench: shared memory at max_connections 100 and 1000"
  md_section 50_memory
  for cfg in "${cfgs[@]}"; do
    bench_cfg_available "$cfg" || continue
    for mc in 100 1000; do
      bench_start mem "$(bench_cfg_conf "$cfg")" "max_connections = $mc"
      tot=$(bsql mem "SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name IS NOT NULL")
      metric memory "$cfg" "shmem_total max_connections=$mc" "$tot" bytes
      if [ "$cfg" = psw_sampling ]; then
        bsql mem "CREATE EXTENSION pg_stat_waits" >/dev/null
        metric memory "$cfg" "shmem_bytes max_connections=$mc" \
          "$(bsql mem "SELECT shmem_bytes FROM pg_stat_waits_status")" bytes
      fi
      bench_stop mem
    done
  done

  md "## 5. Shared memory" ""
  md "Extension footprint = sum of \`pg_shmem_allocations.allocated_size\` minus the same sum with no"
  md "extension at the same max_connections; per backend = (footprint at 1000 − at 100) / 900."
  md "pg_stat_waits' own count is \`pg_stat_waits_status.shmem_bytes\`." ""
  md "| configuration | footprint @100 | footprint @1000 | per backend | shmem_bytes @100 | shmem_bytes @1000 |"
  md "|---|---:|---:|---:|---:|---:|"
  local b100 b1000 f100 f1000 s100 s1000
  b100=$(metric_get memory none "shmem_total max_connections=100")
  b1000=$(metric_get memory none "shmem_total max_connections=1000")
  for cfg in "${cfgs[@]:1}"; do
    f100=$(metric_get memory "$cfg" "shmem_total max_connections=100")
    f1000=$(metric_get memory "$cfg" "shmem_total max_connections=1000")
    if [ -z "$f100" ]; then md "| $(bench_cfg_label "$cfg") | not available | | | | |"; continue; fi
    f100=$((f100 - b100)); f1000=$((f1000 - b1000))
    metric memory "$cfg" footprint_100 "$f100" bytes
    metric memory "$cfg" footprint_1000 "$f1000" bytes
    metric memory "$cfg" per_backend "$(( (f1000 - f100) / 900 ))" bytes
    s100=$(metric_get memory "$cfg" "shmem_bytes max_connections=100")
    s1000=$(metric_get memory "$cfg" "shmem_bytes max_connections=1000")
    md "| $(bench_cfg_label "$cfg") | $(bytes_h "$f100") | $(bytes_h "$f1000") | $(( (f1000 - f100) / 900 )) B |" \
       "$( [ -n "$s100" ] && bytes_h "$s100") | $( [ -n "$s1000" ] && bytes_h "$s1000") |"
  done
  md ""
}

bytes_h() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.2f MiB\n", b / 1048576; else printf "%.1f KiB\n", b / 1024 }'; }
