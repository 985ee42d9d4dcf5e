# Per-statement instructions: valgrind's callgrind counts the instructions
# postgres --single executes for N and for 2N "SELECT 1;" lines; the slope
# (I(2N) - I(N)) / N is the cost of one statement, start-up and shutdown
# cancel. Deterministic to a few instructions, unlike any timing.
# Single-user mode loads shared_preload_libraries (hooks, shared memory) but
# starts no background worker, so the sampler's cost is measured elsewhere.
# shellcheck shell=bash

# shellcheck source=bench/bench_cg_breakdown.sh
source "${BASH_SOURCE[0]%/*}/bench_cg_breakdown.sh"
# shellcheck source=bench/bench_cg_pgbench.sh
source "${BASH_SOURCE[0]%/*}/bench_cg_pgbench.sh"

# How every count here runs valgrind. PostgreSQL's statistics report
# (pgstat_report_stat, called before each wait for the next statement) is
# left out of the count: what it does depends on wall-clock time (it flushes
# at most once a second, and on 18 statistics are pending after every
# SELECT 1, so each statement compares timestamps first), which moved 18's single-user
# slope by up to 40 instructions between identical runs. Its work is
# PostgreSQL's own and the same in every configuration; no hook runs inside.
# (--toggle-collect turns collection off on entry and on again on exit; it
# would also make collection start off, hence --collect-atstart=yes after it.)
CG_VALGRIND=(valgrind --tool=callgrind --toggle-collect=pgstat_report_stat --collect-atstart=yes)

# callgrind_count DATADIR INPUT OUTFILE [-c name=value ...]: instructions
# executed; the profile goes to OUTFILE (/dev/null to drop it).
callgrind_count() {
  local datadir=$1 input=$2 outfile=$3; shift 3
  local out
  # LD_BIND_NOW: the dynamic linker resolves every symbol at start-up (which
  # cancels in the slope) instead of at a function's first call, which came
  # at different statements in identical runs and moved the slope by ~10.
  # What remains (a few instructions/statement, more on a loaded machine)
  # is time-dependent work; the full run shows it by repeating the baseline.
  # Every run starts without pg_stat_waits' saved statistics: otherwise the
  # 2N run would load (once, at start) what the N run saved at shutdown and
  # the N run would not, and that one-off start-up work would be divided
  # into the per-statement slope.
  rm -f "$datadir/pg_stat/pg_stat_waits.stat"
  out=$(as_os_user env LD_BIND_NOW=1 "${CG_VALGRIND[@]}" --callgrind-out-file="$outfile" \
        "$PSW_BINDIR/postgres" --single -D "$datadir" "$@" postgres <"$input" 2>&1 >/dev/null)
  echo "$out" | sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' | tail -1
}

# callgrind_slope DATADIR N CONFIG [extra -c args...]: instructions/statement.
# With CG_KEEP=1 the two profiles stay as $BENCH_CG_DIR/cg_CONFIG.{N,2N}.out.
callgrind_slope() {
  local datadir=$1 n=$2 cfg=$3; shift 3
  local args=() a i1="" i2="" o1=/dev/null o2=/dev/null
  while IFS= read -r a; do args+=("$a"); done < <(bench_cfg_args "$cfg")
  # Without this, PostgreSQL flushes pending table statistics at most once
  # a second: the number of flushes follows wall-clock time (slow under
  # valgrind, slower on a loaded machine), which made the slope wander by
  # ~40 instructions/statement between identical runs.
  args+=(-c track_counts=off)
  if [ "${CG_KEEP:-0}" = 1 ]; then o1=$BENCH_CG_DIR/cg_$cfg.$n.out; o2=$BENCH_CG_DIR/cg_$cfg.$((2 * n)).out; fi
  # CG_REPS > 1: the least count of several runs. What still varies between
  # identical runs (a few instructions/statement) is work added by timing or
  # layout; the least count is closest to the statement's own cost.
  local c
  for _ in $(seq "${CG_REPS:-1}"); do
    c=$(callgrind_count "$datadir" "$BENCH_CG_DIR/in$n.sql" "$o1" "${args[@]}" "$@")
    { [ -z "${i1:-}" ] || { [ -n "$c" ] && [ "$c" -lt "$i1" ]; }; } && i1=$c
    c=$(callgrind_count "$datadir" "$BENCH_CG_DIR/in$((2 * n)).sql" "$o2" "${args[@]}" "$@")
    { [ -z "${i2:-}" ] || { [ -n "$c" ] && [ "$c" -lt "$i2" ]; }; } && i2=$c
  done
  if [ -z "$i1" ] || [ -z "$i2" ]; then echo NA; return 0; fi
  cg_slope "$i1" "$i2" "$n"
}

# callgrind_wrapper DATADIR: instructions per call of an exact-timing wrapper
# around a no-op (the test module's wrapper benchmark, called 100,000 and
# 200,000 times inside one statement; the slope, as above). What every timed
# wait costs on top of the call itself, with no syscall in the count.
callgrind_wrapper() {
  local datadir=$1 mode n c1 c2
  local args=(-c track_counts=off -c shared_preload_libraries=pg_stat_waits -c pg_stat_waits.timing=on)
  printf 'CREATE EXTENSION pg_stat_waits;\nCREATE EXTENSION pg_stat_waits_test;\n' |
    as_os_user "$PSW_BINDIR/postgres" --single -D "$datadir" -c shared_preload_libraries=pg_stat_waits \
      postgres >/dev/null 2>&1 || return 0
  for mode in noop_direct noop_off noop_on; do
    for n in 100000 200000; do
      echo "SELECT pg_stat_waits_bench_wrapper('$mode', $n);" >"$BENCH_CG_DIR/wrap$n.sql"
      chmod a+r "$BENCH_CG_DIR/wrap$n.sql"
    done
    c1=$(callgrind_count "$datadir" "$BENCH_CG_DIR/wrap100000.sql" /dev/null "${args[@]}")
    c2=$(callgrind_count "$datadir" "$BENCH_CG_DIR/wrap200000.sql" /dev/null "${args[@]}")
    if [ -z "$c1" ] || [ -z "$c2" ]; then continue; fi
    metric callgrind_wrapper "$mode" instr_per_call "$(cg_slope "$c1" "$c2" 100000)" instr
  done
}

# cg_postmaster_start DATADIR DIR CONFIG [-c ...]: a postmaster of CONFIG on
# DATADIR under callgrind, which follows its forks: one profile per process,
# DIR/cg.PID, written when the process exits. Its socket is in DIR, its port
# in CG_PORT. Every run sets compute_query_id = on (the baseline, see the
# render) and starts without pg_stat_waits' saved statistics.
cg_postmaster_start() {
  local datadir=$1 dir=$2 cfg=$3 args=() a; shift 3
  while IFS= read -r a; do args+=("$a"); done < <(bench_cfg_args "$cfg")
  mkdir -p "$dir"; chmod 755 "$dir"
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$dir"
  CG_PORT=$(free_port 55700)
  rm -f "$datadir/pg_stat/pg_stat_waits.stat"
  as_os_user env LD_BIND_NOW=1 "${CG_VALGRIND[@]}" --callgrind-out-file="$dir/cg.%p" \
    "$PSW_BINDIR/postgres" -D "$datadir" -p "$CG_PORT" -k "$dir" -c listen_addresses= -c autovacuum=off \
    -c track_counts=off "$@" "${args[@]}" -c compute_query_id=on >"$dir/log" 2>&1 &
  for _ in $(seq 240); do
    "$PSW_BINDIR/pg_isready" -q -h "$dir" -p "$CG_PORT" && break
    sleep 0.5
  done
}

cg_postmaster_stop() { as_os_user "$PSW_BINDIR/pg_ctl" -D "$1" -m fast -w -t 300 stop >/dev/null 2>&1 || true; }

# cg_totals PROFILE: its instruction count, empty until the process has exited.
cg_totals() { sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$1" 2>/dev/null; }

# cg_measure_configs SECTION PARAM SLOPE DATA N: "SLOPE DATA N CONFIG" for
# the baseline (compute_query_id = on, no extension), each configuration
# this build has, and the baseline again last (PARAM_repeat): how far the
# measurement moves between identical runs, which the render reports.
# Metrics a slope function records itself (the allocator's share) take the
# repeat's suffix from CG_PARAM_SUFFIX.
cg_measure_configs() {
  local section=$1 param=$2 slope=$3 data=$4 n=$5 cfg
  for cfg in none_qid "${BENCH_CONFIGS[@]:1}"; do
    [ "$cfg" != none_qid ] && ! bench_cfg_available "$cfg" && continue
    metric "$section" "$cfg" "$param" "$("$slope" "$data" "$n" "$cfg")" instr
  done
  metric "$section" none_qid "${param}_repeat" "$(CG_PARAM_SUFFIX=_repeat "$slope" "$data" "$n" none_qid)" instr
}

# cg_client_slope SECTION CLIENT DATADIR N CONFIG: instructions per
# statement of a client backend over a Unix socket, the path a client's
# statement takes in production. The postmaster runs under callgrind, which
# follows its forks; CLIENT K DIR sends K statements in one connection, once
# with N and once with 2N, and each backend's count is read from its own
# profile, written when it exits: the largest profile that appeared during
# the client's run (the client's backend; nothing else runs statements). A
# forked backend's count includes what the postmaster had executed before
# the fork; the slope cancels that with connection start-up. Here the wait
# for the client's next message, its recv and the send of the result are
# real calls, which postgres --single never makes.
cg_client_slope() {
  local section=$1 client=$2 datadir=$3 n=$4 cfg=$5 dir k f x t best i1="" i2="" f1="" before
  dir=$BENCH_CG_DIR/${section}_$cfg
  cg_postmaster_start "$datadir" "$dir" "$cfg" -c max_connections=100
  for k in "$n" "$((2 * n))"; do
    before=$(cd "$dir" && printf '%s\n' cg.*)
    "$client" "$k" "$dir"
    f="" best=0
    sleep 2  # the profile is written when the backend has exited
    for _ in $(seq 240); do
      for x in $(comm -13 <(echo "$before" | sort) <(cd "$dir" && printf '%s\n' cg.* | sort)); do
        t=$(cg_totals "$dir/$x")
        if [ -n "$t" ] && [ "$t" -gt "$best" ]; then best=$t f=$dir/$x; fi
      done
      [ -n "$f" ] && break
      sleep 0.5
    done
    if [ "$k" = "$n" ]; then i1=${f:+$best} f1=$f; else i2=${f:+$best}; fi
  done
  cg_postmaster_stop "$datadir"
  if [ -z "$i1" ] || [ -z "$i2" ]; then echo NA; return 0; fi
  cg_allocator_metrics "$section" "$cfg" "$n" "$f1" "$f"
  # What remains of each mode's cost on this path, by function.
  case $cfg in psw_*) cg_breakdown_files "${section}_self" "$cfg" "$n" "$f1" "$f" ;; esac
  cg_slope "$i1" "$i2" "$n"
}

# psql sends K "SELECT 1;" (one round trip each, as pgbench's simple
# protocol), answering each result at once.
cg_psql_client() {
  "$PSW_BINDIR/psql" -XAtq -h "$2" -p "$CG_PORT" -U postgres -d postgres <"$BENCH_CG_DIR/in$1.sql" \
    >/dev/null 2>&1 || true
}

# pgbench sends K "SELECT 1;", pausing 3 ms after each result (\sleep 3 ms),
# as a client behind a network does: the backend then really waits for every
# next message (ClientRead), which a client that answers at once may spare it.
cg_pause_client() {
  printf 'SELECT 1;\n\\sleep 3 ms\n' >"$2/pause.sql"
  chmod a+r "$2/pause.sql"
  "$PSW_BINDIR/pgbench" -n -h "$2" -p "$CG_PORT" -U postgres -f "$2/pause.sql" -t "$1" postgres \
    >/dev/null 2>&1 || true
}

callgrind_socket_slope() { cg_client_slope callgrind_socket cg_psql_client "$@"; }
callgrind_pause_slope() { cg_client_slope callgrind_pause cg_pause_client "$@"; }

bench_callgrind() {
  local quick=$1 n
  n=$([ "$quick" = 1 ] && echo 300 || echo 1500)
  md_section 10_callgrind
  log "bench: per-statement instructions (callgrind, N=$n and 2N SELECT 1)"
  if ! command -v valgrind >/dev/null; then
    md "## 1. Per-statement instructions" "" "not available: valgrind is not installed"; return 0
  fi
  BENCH_CG_DIR=$(mktemp -d /tmp/pgsw-cg.XXXXXX)
  chmod 755 "$BENCH_CG_DIR"
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$BENCH_CG_DIR"
  as_os_user "$PSW_BINDIR/initdb" -D "$BENCH_CG_DIR/data" -U postgres --auth=trust --no-sync -E UTF8 \
    --locale=C >/dev/null
  local k
  for k in "$n" "$((2 * n))"; do select1_lines "$k" >"$BENCH_CG_DIR/in$k.sql"; done
  chmod a+r "$BENCH_CG_DIR"/*.sql

  local cfg v base basq
  for cfg in none none_qid "${BENCH_CONFIGS[@]:1}"; do
    if [ "$cfg" != none_qid ] && ! bench_cfg_available "$cfg"; then
      metric callgrind "$cfg" instr_per_stmt NA instr "${BENCH_WHY[$cfg]:-}"; continue
    fi
    v=$(CG_KEEP=1 callgrind_slope "$BENCH_CG_DIR/data" "$n" "$cfg" -c max_connections=100)
    metric callgrind "$cfg" instr_per_stmt "$v" instr "${BENCH_WHY[$cfg]:-}"
  done
  # Where the extension's instructions go (from the profiles just taken).
  for cfg in psw_sampling psw_timing; do
    bench_cfg_available "$cfg" && callgrind_breakdown "$n" "$cfg"
  done
  local present=()
  for cfg in none_qid psw_sampling psw_timing; do [ -s "$BENCH_CG_DIR/cg_$cfg.$n.out" ] && present+=("$cfg"); done
  callgrind_objects "$n" none "${present[@]}"
  if [ "$quick" != 1 ]; then
    # Determinism: the baseline measured again, single runs.
    metric callgrind none instr_per_stmt_repeat "$(callgrind_slope "$BENCH_CG_DIR/data" "$n" none \
      -c max_connections=100)" instr
    # Scaling: per-statement cost against the number of backend slots.
    local mc
    for mc in 100 500 1000; do
      for cfg in none psw_sampling; do
        metric callgrind_scaling "$cfg" "max_connections=$mc" \
          "$(callgrind_slope "$BENCH_CG_DIR/data" "$n" "$cfg" -c max_connections="$mc")" instr
      done
    done
  fi
  bench_cfg_available psw_timing && callgrind_wrapper "$BENCH_CG_DIR/data"
  # At least 1000 statements, so that what a connection does now and then
  # (PostgreSQL's own statistics flush, at most once a second) is spread
  # over many.
  local sn=$((n < 1000 ? 1000 : n))
  for k in "$sn" "$((2 * sn))"; do
    [ -f "$BENCH_CG_DIR/in$k.sql" ] || select1_lines "$k" >"$BENCH_CG_DIR/in$k.sql"
  done
  chmod a+r "$BENCH_CG_DIR"/*.sql
  log "bench: per-statement instructions of a client backend over a socket (callgrind, N=$sn and 2N)"
  metric callgrind_socket none_qid statements "$sn" count
  cg_measure_configs callgrind_socket instr_per_stmt callgrind_socket_slope "$BENCH_CG_DIR/data" "$sn"
  log "bench: the same with the client pausing 3 ms after each result (pgbench, N=$sn and 2N)"
  metric callgrind_pause none_qid statements "$sn" count
  cg_measure_configs callgrind_pause instr_per_stmt callgrind_pause_slope "$BENCH_CG_DIR/data" "$sn"
  bench_cg_pgbench "$quick"
  rm -rf "$BENCH_CG_DIR"
  callgrind_render "$quick" "$n"
}

# cg_alloc_cell SECTION CONFIG: "instructions (calls)" of glibc's allocator
# per unit, as cg_allocator_metrics recorded them.
cg_alloc_cell() {
  local i c
  i=$(metric_get "$1" "$2" alloc_instr); c=$(metric_get "$1" "$2" alloc_calls)
  echo "$(fmt "$i") ($(fmt "$c" 2))"
}

# cg_repeat_alloc SECTION: ", glibc's allocator X of them" for the
# baseline's repeat, where it was measured.
cg_repeat_alloc() {
  local i
  i=$(metric_get "$1" none_qid alloc_instr_repeat)
  if [ -n "$i" ]; then echo ", glibc's allocator $(fmt "$i") of them"; fi
}

# cg_client_table SECTION PARAM UNIT: a client table: the compute_query_id =
# on baseline's row, then one per configuration measured (label, figure, Δ
# and % over the baseline). Where the allocator's share was measured, two
# more columns: its instructions (calls) per UNIT, and the Δ without it.
cg_client_table() {
  local section=$1 param=$2 unit=$3 base balloc cfg v a d
  base=$(metric_get "$section" none_qid "$param")
  balloc=$(metric_get "$section" none_qid alloc_instr)
  if [ -n "$balloc" ]; then
    md "| configuration | instructions / $unit | Δ vs compute_query_id = on | % | of which glibc's allocator (calls) | Δ outside the allocator |" \
       "|---|---:|---:|---:|---:|---:|"
    md "| no extension, compute_query_id = on | $(fmt "$base") | | | $(cg_alloc_cell "$section" none_qid) | |"
  else
    md "| configuration | instructions / $unit | Δ vs compute_query_id = on | % |" "|---|---:|---:|---:|"
    md "| no extension, compute_query_id = on | $(fmt "$base") | | |"
  fi
  for cfg in "${BENCH_CONFIGS[@]:1}"; do
    v=$(metric_get "$section" "$cfg" "$param")
    if [ -z "$v" ] || [ "$v" = NA ]; then continue; fi
    d=$(awk -v a="$v" -v b="$base" 'BEGIN{print a-b}')
    a=""
    if [ -n "$balloc" ]; then
      a=" $(cg_alloc_cell "$section" "$cfg") | $(fmt "$(awk -v d="$d" -v x="$(metric_get "$section" "$cfg" alloc_instr)" \
        -v y="$balloc" 'BEGIN{ if (x == "") print "NA"; else print d - (x - y) }')") |"
    fi
    md "| $(bench_cfg_label "$cfg") | $(fmt "$v") | $(fmt "$d") |" \
       "$(fmt "$(awk -v d="$d" -v b="$base" 'BEGIN{print 100*d/b}')" 2) % |$a"
  done
}

# callgrind_render QUICK N: the section's markdown from the recorded figures.
callgrind_render() {
  local quick=$1 n=$2 cfg v base basq
  md_section 10_callgrind
  base=$(metric_get callgrind none instr_per_stmt)
  basq=$(metric_get callgrind none_qid instr_per_stmt)
  md "## 1. Per-statement instructions (callgrind)" ""
  md "valgrind --tool=callgrind on \`postgres --single\` running N=$n and 2N \`SELECT 1;\`; instructions per"
  md "statement = (I(2N) − I(N)) / N, so start-up and shutdown cancel. Every run has \`track_counts = off\`"
  md "(the once-a-second statistics flush follows wall-clock time, slow under valgrind), \`LD_BIND_NOW=1\`"
  md "(lazy symbol binding happened at different statements in identical runs), and leaves PostgreSQL's"
  md "statistics report (\`pgstat_report_stat\`, the same in every configuration) out of the count: on 18"
  md "what it does per statement follows wall-clock time too. With these, identical runs agree to within a"
  md "few instructions/statement (see the repeated baseline below)."
  md "Single-user mode loads shared_preload_libraries but runs no background worker: this is the cost a"
  md "backend pays per statement; the sampler's own cost is section 2." ""
  # The honest baseline is compute_query_id = on: pg_stat_waits turns query
  # ids on itself, and so does anyone who runs pg_stat_statements.
  md "| configuration | instructions / statement | compute_query_id = on (same run) | Δ vs compute_query_id = on | % over compute_query_id = on | Δ vs no extension | note |"
  md "|---|---:|---:|---:|---:|---:|---|"
  for cfg in none none_qid "${BENCH_CONFIGS[@]:1}"; do
    v=$(metric_get callgrind "$cfg" instr_per_stmt)
    local note
    note=$(awk -F'\t' -v c="$cfg" '$1=="callgrind" && $2==c && $3=="instr_per_stmt" {n=$6} END {print n}' "$BENCH_METRICS")
    if [ "$v" = NA ] || [ -z "$v" ]; then
      md "| $(bench_cfg_label "$cfg") | not available | $(fmt "$basq") | | | | $note |"; continue
    fi
    md "| $(bench_cfg_label "$cfg") | $(fmt "$v") | $(fmt "$basq") |" \
       "$(fmt "$(awk -v a="$v" -v b="$basq" 'BEGIN{print a-b}')") |" \
       "$(fmt "$(awk -v a="$v" -v b="$basq" 'BEGIN{print 100*(a-b)/b}')" 2) % |" \
       "$(fmt "$(awk -v a="$v" -v b="$base" 'BEGIN{print a-b}')") | $note |"
  done
  md ""
  md "pg_stat_waits turns on query-id computation itself (\`EnableQueryId()\`, so its ids match"
  md "pg_stat_statements), as does pg_stat_statements: the compute_query_id = on run is the baseline,"
  md "and the \"Δ vs compute_query_id = on\" column is what each tool adds (hooks, slot writes, timing)."
  md "Targets (issue 56): sampling (default) at most +40 instructions, timing on at most +0.3 %." ""
  callgrind_breakdown_render psw_sampling
  callgrind_breakdown_render psw_timing
  local shown=() c2
  for c2 in none_qid psw_sampling psw_timing pg_wait_sampling pg_stat_statements; do
    [ -n "$(metric_get callgrind_object "$c2" postgres)" ] && shown+=("$c2")
  done
  [ ${#shown[@]} -gt 0 ] && callgrind_objects_render none "${shown[@]}"
  local wd wf wn
  wd=$(metric_get callgrind_wrapper noop_direct instr_per_call)
  wf=$(metric_get callgrind_wrapper noop_off instr_per_call)
  wn=$(metric_get callgrind_wrapper noop_on instr_per_call)
  if [ -n "$wn" ]; then
    md "" "Per timed wait: an exact-timing wrapper around a no-op, called 100,000 and 200,000 times inside one"
    md "statement (the test module's wrapper benchmark; slope as above). Under valgrind \`clock_gettime\` is"
    md "libc's wrapper and a system call (no vDSO), so the two clock readings count about 20 instructions of libc"
    md "and the kernel's share not at all." ""
    md "| the no-op called | instructions / call | Δ |" "|---|---:|---:|"
    md "| through a pointer (not interposed) | $(fmt "$wd") | |"
    md "| through the wrapper, timing off | $(fmt "$wf") | $(fmt "$(awk -v a="$wf" -v b="$wd" 'BEGIN{print a-b}')") |"
    md "| through the wrapper, timing on | $(fmt "$wn") | $(fmt "$(awk -v a="$wn" -v b="$wd" 'BEGIN{print a-b}')") |"
  fi
  local sq
  sq=$(metric_get callgrind_socket none_qid instr_per_stmt)
  if [ -n "$sq" ] && [ "$sq" != NA ]; then
    md "" "Over a Unix socket: N=$(metric_get callgrind_socket none_qid statements) and 2N \`SELECT 1;\` sent by psql (one round trip each, as pgbench's"
    md "simple protocol) to a postmaster running under callgrind; the backend's own count, slope as above."
    md "This is a client's statement in production: the backend also waits for the client's next message,"
    md "reads it and sends the result, which \`postgres --single\` never does; with timing on those are"
    md "timed waits. Every run sets compute_query_id = on, so the first row is the baseline (pg_stat_waits"
    md "and pg_stat_statements turn it on themselves; pg_wait_sampling's backend, left to itself over a"
    md "socket, was measured about 1,070 instructions below it: no query ids)." ""
    cg_client_table callgrind_socket instr_per_stmt statement
    md "" "The baseline measured again after the others: $(fmt "$(metric_get callgrind_socket none_qid instr_per_stmt_repeat)")"
    md "instructions/statement$(cg_repeat_alloc callgrind_socket). Identical runs agree closely, but a configuration's figure here also moves"
    md "with what it does not do per statement. The largest such part is glibc's allocator: a statement"
    md "makes the same allocations in every configuration (the calls in parentheses), yet each costs more"
    md "or fewer instructions as the heap's free chunks happen to lie, which what is loaded changes (any"
    md "preloaded library alike) and which can differ between identical runs. The last column leaves it out."
    md "The single-user table above is the precise one; this one shows what a client's statement adds on top."
  fi
  sq=$(metric_get callgrind_pause none_qid instr_per_stmt)
  if [ -n "$sq" ] && [ "$sq" != NA ]; then
    md "" "A client that pauses: pgbench sends N=$(metric_get callgrind_pause none_qid statements) and 2N \`SELECT 1;\`, pausing 3 ms after each result"
    md "(\`\\sleep 3 ms\`), so the backend waits for every next message as behind a network; same slope."
    md "This is the path of issue 56's socket targets: timing on at most +0.5 % (and at most +1 % for timing"
    md "to be on by default), sampling at most +60 instructions per statement." ""
    cg_client_table callgrind_pause instr_per_stmt statement
    md ""
    callgrind_breakdown_render psw_timing callgrind_pause_self statement "the paused client's backend"
    callgrind_breakdown_render psw_sampling callgrind_pause_self statement "the paused client's backend"
  fi
  bench_cg_pgbench_render
  if [ "$quick" != 1 ]; then
    md "" "Determinism: the no-extension slope measured a second time:" \
       "$(fmt "$(metric_get callgrind none instr_per_stmt_repeat)") instructions/statement (table: $(fmt "$base"))." ""
    md "Per-statement cost against max_connections (number of backend slots in shared memory):" ""
    md "| max_connections | no extension | pg_stat_waits | Δ |" "|---:|---:|---:|---:|"
    local mc a b
    for mc in 100 500 1000; do
      a=$(metric_get callgrind_scaling none "max_connections=$mc")
      b=$(metric_get callgrind_scaling psw_sampling "max_connections=$mc")
      md "| $mc | $(fmt "$a") | $(fmt "$b") | $(fmt "$(awk -v a="$a" -v b="$b" 'BEGIN{print b-a}')") |"
    done
  fi
  md ""
}
