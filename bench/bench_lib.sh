# Shared helpers of the benchmark harness: configurations compared, feature
# detection, throwaway clusters, metrics and small statistics. Sourced by
# bench/bench.sh and by bench/smoke.sh (after common.sh, with
# new_cluster from ./run in scope).
# shellcheck shell=bash

# The configurations compared side by side, in report order. Each is started
# only by settings, so a feature that has not landed yet shows up as "not
# available" instead of a number that would measure something else.
# shellcheck disable=SC2034  # read by bench_callgrind.sh and bench_throughput.sh
BENCH_CONFIGS=(none psw_sampling psw_timing pg_wait_sampling pg_stat_statements)

bench_cfg_label() {
  case $1 in
    none) echo "no extension" ;;
    none_qid) echo "no extension, compute_query_id = on (diagnostic)" ;;
    psw_sampling) echo "pg_stat_waits sampling (default, 10 ms)" ;;
    psw_timing) echo "pg_stat_waits sampling + timing = on" ;;
    pg_wait_sampling) echo "pg_wait_sampling (defaults, 10 ms)" ;;
    pg_stat_statements) echo "pg_stat_statements (defaults)" ;;
    *) echo "$1" ;;
  esac
}

# postgresql.conf lines of a configuration, one per line.
bench_cfg_conf() {
  case $1 in
    none) echo "shared_preload_libraries = ''" ;;
    none_qid) echo "shared_preload_libraries = ''"; echo "compute_query_id = on" ;;
    psw_sampling) echo "shared_preload_libraries = 'pg_stat_waits'"; echo "pg_stat_waits.sample_period = 10" ;;
    psw_timing)
      echo "shared_preload_libraries = 'pg_stat_waits'"; echo "pg_stat_waits.sample_period = 10"
      echo "pg_stat_waits.timing = on" ;;
    pg_wait_sampling) echo "shared_preload_libraries = 'pg_wait_sampling'" ;;
    pg_stat_statements) echo "shared_preload_libraries = 'pg_stat_statements'" ;;
    *) return 1 ;;
  esac
}

# Same, as "-c name=value" arguments for postgres --single.
bench_cfg_args() {
  bench_cfg_conf "$1" | sed -E "s/^([a-z_.]+) = '?([^']*)'?$/-c\n\1=\2/"
}

# ---------------------------------------------------------------- features
# BENCH_FEAT[x]=1 when feature x is present; BENCH_WHY[x] says why not.
declare -gA BENCH_FEAT=() BENCH_WHY=()

bench_lib_present() { [ -f "$PSW_STAGE$($PG_CONFIG --pkglibdir)/$1.so" ]; }

# Starts pg_stat_waits with timing on once and asks the extension what it has.
bench_detect_features() {
  local f
  for f in pg_wait_sampling pg_stat_statements; do
    if bench_lib_present "$f"; then BENCH_FEAT[$f]=1
    else BENCH_FEAT[$f]=0; BENCH_WHY[$f]="$f.so is not installed in the staged PostgreSQL"; fi
  done
  BENCH_FEAT[none]=1
  bench_start probe "$(bench_cfg_conf psw_timing)"
  bsql probe "CREATE EXTENSION pg_stat_waits" >/dev/null
  sleep 0.3
  local row sampler interposed
  row=$(bsql probe "SELECT coalesce(sampler_pid::text, ''), coalesce(array_to_string(interposed, ','), '') FROM pg_stat_waits_status")
  sampler=${row%%|*}; interposed=${row#*|}
  BENCH_FEAT[psw_hooks]=1
  if [ -n "$sampler" ]; then BENCH_FEAT[psw_sampler]=1
  else BENCH_FEAT[psw_sampler]=0; BENCH_WHY[psw_sampler]="pg_stat_waits_status.sampler_pid is NULL: the sampler is not in this build"; fi
  if [ -n "$(bsql probe "SELECT to_regclass('pg_stat_waits_profile')")" ]; then BENCH_FEAT[psw_profile]=1
  else BENCH_FEAT[psw_profile]=0; BENCH_WHY[psw_profile]="view pg_stat_waits_profile does not exist in this build"; fi
  if [ -n "$interposed" ] && [ -n "$(bsql probe "SELECT to_regclass('pg_stat_waits')")" ]; then
    # shellcheck disable=SC2034  # bench_report.sh names them in the report's header
    BENCH_FEAT[psw_timing]=1; BENCH_INTERPOSED=$interposed
  else
    BENCH_FEAT[psw_timing]=0
    BENCH_WHY[psw_timing]="pg_stat_waits_status.interposed is empty (or view pg_stat_waits is missing): exact timing is not in this build"
  fi
  # A configuration is measurable when what makes it different is there.
  BENCH_FEAT[psw_sampling]=1
  [ "${BENCH_FEAT[psw_sampler]:-0}" = 1 ] || BENCH_WHY[psw_sampling]="hooks only: ${BENCH_WHY[psw_sampler]:-}"
  bench_stop probe
}

bench_cfg_available() { [ "${BENCH_FEAT[$1]:-0}" = 1 ]; }

# ---------------------------------------------------------------- clusters
declare -gA BENCH_DIR=() BENCH_PORT=()

# bench_start NAME "conf lines" [more conf lines...]: a throwaway cluster
# (registered with ./run's cleanup, so it is stopped even on failure).
bench_start() {
  local name=$1; shift
  local lines=() l
  while IFS= read -r l; do [ -n "$l" ] && lines+=("$l"); done < <(printf '%s\n' "$@")
  local had=${PGHOST+x} save_host=${PGHOST:-} save_port=${PGPORT:-} dir
  # Other checkouts start clusters on this machine at the same time: start
  # from a random port and retry when someone takes it between check and bind.
  local ok=0
  for _ in 1 2 3 4; do
    if PSW_PORT=$((55000 + RANDOM % 3000)) new_cluster dir "client_connection_check_interval = 250ms" "${lines[@]}"; then
      ok=1; break
    fi
    cluster_stop "$dir"; rm -rf "$dir"
  done
  [ $ok = 1 ] || die "bench: cannot start a cluster for $name"
  BENCH_DIR[$name]=$dir
  BENCH_PORT[$name]=$PGPORT
  # new_cluster points PG* at the new cluster; give the caller's back.
  if [ -n "$had" ]; then export PGHOST=$save_host PGPORT=$save_port; else unset PGHOST PGPORT; fi
}

bench_stop() {
  local dir=${BENCH_DIR[$1]:-}
  [ -n "$dir" ] || return 0
  cluster_stop "$dir"
  rm -rf "$dir"
  unset "BENCH_DIR[$1]" "BENCH_PORT[$1]"
}

bench_conninfo() { echo "host=${BENCH_DIR[$1]} port=${BENCH_PORT[$1]} user=postgres dbname=${2:-postgres}"; }

# bsql NAME SQL [db]: one statement, unaligned tuples-only output.
bsql() {
  "$PSW_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "${BENCH_DIR[$1]}" -p "${BENCH_PORT[$1]}" \
    -U postgres -d "${3:-postgres}" -c "$2"
}

bpgbench() {
  local name=$1; shift
  "$PSW_BINDIR/pgbench" -h "${BENCH_DIR[$name]}" -p "${BENCH_PORT[$name]}" -U postgres "$@"
}

# ---------------------------------------------------------------- measuring
# CPU time a process has spent on a CPU, in ns (scheduler accounting, finer
# than the 10 ms ticks of utime+stime in /proc/PID/stat).
proc_cpu_ns() { awk '{print $1}' "/proc/$1/schedstat" 2>/dev/null || echo 0; }

# Median, min and max of numbers on stdin: "median min max n".
stats_mmm() {
  sort -g | awk '{v[NR]=$1} END {
    if (NR == 0) { print "NA NA NA 0"; exit }
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
    print m, v[1], v[NR], NR }'
}

# ---------------------------------------------------------------- metrics
# Raw results: tab-separated "section config param value unit note", one per
# line in $BENCH_METRICS; the report and the acceptance checks read them back.
metric() {  # metric SECTION CONFIG PARAM VALUE UNIT [NOTE]
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:-}" >>"$BENCH_METRICS"
}

metric_get() {  # metric_get SECTION CONFIG PARAM -> value (empty if none)
  awk -F'\t' -v s="$1" -v c="$2" -v p="$3" '$1==s && $2==c && $3==p {v=$4} END {print v}' "$BENCH_METRICS"
}

# Markdown chunk of a section, assembled into the report in file-name order.
# md ARGS...: arguments are joined with spaces into one line, except that an
# empty argument ends the line with a blank line and an argument starting
# with "|" (a table row) starts a new line.
md() {
  local line="" a started=0
  for a in "$@"; do
    if [ -z "$a" ]; then printf '%s\n\n' "$line"; line=""; started=0; continue; fi
    if [ $started = 1 ] && [ "${a:0:1}" = "|" ]; then printf '%s\n' "$line"; line=""; started=0; fi
    if [ $started = 1 ]; then line+=" $a"; else line=$a; started=1; fi
  done
  [ $started = 1 ] && printf '%s\n' "$line"
  return 0
} >>"$BENCH_MD_CHUNK"
md_section() { BENCH_MD_CHUNK=$BENCH_TMP/$1.md; : >"$BENCH_MD_CHUNK"; }

fmt() { awk -v v="$1" -v d="${2:-1}" 'BEGIN { if (v == "" || v == "NA") print "n/a"; else printf "%.*f\n", d, v }'; }

# pgbench's output on stdin -> its tps (excluding connection time), or nothing.
pgbench_tps() { sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p'; }

# N lines of "SELECT 1;" (not yes|head: SIGPIPE fails a pipefail pipeline).
select1_lines() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "SELECT 1;" }'; }
