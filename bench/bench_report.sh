# The report: header naming the machine, PostgreSQL and the command, the
# acceptance checks computed from the raw figures, each section's table,
# scaling plots (gnuplot SVG) and the raw figures as TSV.
# shellcheck shell=bash

bench_machine() {
  local model mem
  model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
  mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
  echo "$(nproc) cores, ${model:-unknown CPU}, $mem RAM, Linux $(uname -r)"
}

# check_row NAME TARGET BASELINE MEASURED VERDICT
check_row() { md "| $1 | $2 | $3 | $4 | $5 |"; }

# verdict VALUE OP LIMIT: "met" when VALUE OP LIMIT (OP: <= or >=), else
# "**missed**".
verdict() {
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN { ok = (op == "<=") ? (v <= l) : (v >= l); print ok ? "met" : "**missed**" }'
}

have() { [ -n "$1" ] && [ "$1" != NA ]; }

# cg_check NAME SECTION PARAM CONFIG KIND LIMIT [WHY]: a callgrind row, the
# configuration's slope against the compute_query_id = on baseline measured
# in the same run on the same path. KIND pct: the target is a percentage
# over the baseline; abs: instructions over it.
cg_check() {
  local name=$1 section=$2 param=$3 cfg=$4 kind=$5 limit=$6 why=${7:-} b v d p t
  b=$(metric_get "$section" none_qid "$param"); v=$(metric_get "$section" "$cfg" "$param")
  if [ "$kind" = pct ]; then t="≤ +$limit %"; else t="≤ +$limit instructions"; fi
  if ! have "$b" || ! have "$v"; then
    check_row "$name" "$t" "$(have "$b" && echo "compute_query_id = on: $(fmt "$b")" || echo —)" "—" \
      "$(if [ "$cfg" = psw_timing ]; then echo "not available: ${why:-not measured}"; else echo "not measured"; fi)"
    return 0
  fi
  d=$(awk -v a="$v" -v b="$b" 'BEGIN{printf "%.1f", a-b}')
  p=$(awk -v a="$v" -v b="$b" 'BEGIN{printf "%.2f", 100*(a-b)/b}')
  check_row "$name" "$t" "compute_query_id = on: $(fmt "$b")" "$(awk -v d="$d" 'BEGIN{printf "%+.1f", d}') ($(awk -v p="$p" 'BEGIN{printf "%+.2f", p}') %)" \
    "$(if [ "$kind" = pct ]; then verdict "$p" "<=" "$limit"; else verdict "$d" "<=" "$limit"; fi)"
}

# paired_check NAME KEY LIMIT: a pair-run row (bench_paired.sh), the median
# ratio of tps with timing on to tps with timing off.
paired_check() {
  local r lo hi n
  read -r r lo hi n <<<"$(metric_get paired psw_timing "tps ratio $2")"
  if ! have "$r"; then
    check_row "$1" "≥ $3" "timing off, same pairs" "—" \
      "not available: ${BENCH_WHY[psw_timing]:-not measured}"
    return 0
  fi
  check_row "$1" "≥ $3" "timing off, same pairs" "$(fmt "$r" 3) [$(fmt "$lo" 3) – $(fmt "$hi" 3)], $n pairs" \
    "$(verdict "$r" ">=" "$3")"
}

bench_acceptance() {
  md_section 05_acceptance
  md "## Acceptance checks" ""
  md "Issue 56's targets first, each on the path it names, against its baseline from the same run" \
     "(callgrind rows: \`compute_query_id = on\` without a preloaded library, which pg_stat_waits and" \
     "pg_stat_statements switch on themselves); then the earlier checks that still stand. Sections 1–4" \
     "below show how each figure was measured." ""
  md "| check | target | baseline (same run) | measured | verdict |" "|---|---|---:|---|---|"
  local why=${BENCH_WHY[psw_timing]:-}
  local sock="client's \`SELECT 1\` over a Unix socket, client pausing 3 ms (callgrind, client backend)"
  cg_check "timing on: $sock" callgrind_pause instr_per_stmt psw_timing pct 0.5 "$why"
  cg_check "timing on by default allowed: $sock" callgrind_pause instr_per_stmt psw_timing pct 1 "$why"
  cg_check "timing on: pgbench tpcb-like, per transaction (callgrind, client backend)" \
    callgrind_pgbench instr_per_tx psw_timing pct 0.5 "$why"
  cg_check "timing on: \`postgres --single\`, \`SELECT 1\`" callgrind instr_per_stmt psw_timing pct 0.3 "$why"
  cg_check "sampling (default): \`postgres --single\`, \`SELECT 1\`" callgrind instr_per_stmt psw_sampling abs 40
  cg_check "sampling (default): $sock" callgrind_pause instr_per_stmt psw_sampling abs 60
  paired_check "timing on / off: pgbench select-only, 4 clients, interleaved pairs, median tps ratio" select-only_c4 0.99
  paired_check "timing on / off: pgbench tpcb-like, scale 1, 16 clients (wait-heavy), interleaved pairs, median tps ratio" \
    tpcb-like_s1_c16 0.98
  local a b r
  a=$(metric_get sampler_same psw_sampling "idle backends=500"); b=$(metric_get sampler_same pg_wait_sampling "idle backends=500")
  r=$(metric_get sampler_same psw_sampling "ratio idle backends=500")
  local sname="sampler CPU, 500 idle backends: pg_stat_waits sampler / pg_wait_sampling collector, same windows"
  if ! have "$a" || ! have "$b" || ! have "$r"; then
    check_row "$sname" "≤ 0.9×" "—" "—" \
      "$(awk -F'\t' '$1=="sampler_same" && $4=="NA" && $6!="" {n=$6} END {print (n == "" ? "not measured" : "not available: " n)}' "$BENCH_METRICS")"
  else
    check_row "$sname" "≤ 0.9×" "collector $(fmt "$b" 3) % of a core" "$(fmt "$r" 3)× ($(fmt "$a" 3) % of a core)" \
      "$(verdict "$r" "<=" 0.9)"
  fi

  # Earlier checks that issue 56 does not restate.
  local none pgws psw d
  none=$(metric_get callgrind none instr_per_stmt); pgws=$(metric_get callgrind pg_wait_sampling instr_per_stmt)
  psw=$(metric_get callgrind psw_sampling instr_per_stmt); b=$(metric_get callgrind none_qid instr_per_stmt)
  local hname="sampling vs pg_wait_sampling: hooks' instructions / statement (\`postgres --single\`, each over the server it runs on)"
  if have "$pgws" && have "$none" && have "$psw" && have "$b"; then
    # pg_wait_sampling's hooks, over the server it runs on (it turns no query ids on).
    d=$(awk -v a="$psw" -v b="$b" 'BEGIN{printf "%.1f", a-b}')
    check_row "$hname" "≤ pg_wait_sampling" "pg_stat_waits over compute_query_id = on, pg_wait_sampling over no extension" \
      "+$d vs +$(awk -v a="$pgws" -v b="$none" 'BEGIN{printf "%.1f", a-b}')" \
      "$(awk -v a="$d" -v b="$pgws" -v c="$none" 'BEGIN{print (a <= b - c) ? "met" : "**missed**"}')"
  else
    check_row "$hname" "≤ pg_wait_sampling" "—" "—" \
      "$(if [ -n "${BENCH_WHY[pg_wait_sampling]:-}" ]; then echo "not available: ${BENCH_WHY[pg_wait_sampling]}"; else echo "not measured"; fi)"
  fi
  # The cold scan: with direct I/O where the run has it (18: every read
  # reaches the storage), and the scan of pages dropped from this machine's
  # cache (which its host may still serve from memory) as its own row.
  local io_case io_label v
  for io_case in io_direct io; do
    v=$(metric_get accuracy psw "$io_case")
    [ -n "$v" ] || continue
    io_label="exact DataFileRead vs track_io_timing (cold scan$([ "$io_case" = io_direct ] && echo ", direct I/O" || echo ", OS cache dropped"))"
    local tr ex
    read -r tr ex _ <<<"$v"
    if [ "$tr" = NA ] || [ "$ex" = NA ] || [ -z "$ex" ]; then
      check_row "$io_label" "±5 %" "track_io_timing" "—" "not available"
    else
      d=$(awk -v a="$ex" -v b="$tr" 'BEGIN{printf "%+.1f", 100*(a-b)/b}')
      check_row "$io_label" "±5 %" "track_io_timing $(fmt "$tr" 1) ms" "$d %" \
        "$(awk -v d="$d" 'BEGIN{print (d <= 5 && d >= -5) ? "met" : "**missed**"}')"
    fi
  done
  local ai
  ai=$(metric_get sampler psw_sampling "idle backends=1000"); a=$(metric_get sampler psw_sampling "busy backends=1000")
  if ! have "$a" || ! have "$ai"; then
    check_row "sampler CPU at 1000 backends (worse of idle, busy)" "≤ 0.3 % of one core" "—" "—" \
      "$(if [ -n "${BENCH_WHY[psw_sampler]:-}" ]; then echo "not available: ${BENCH_WHY[psw_sampler]}"; else echo "not measured"; fi)"
  else
    v=$(awk -v x="$a" -v y="$ai" 'BEGIN{print (x > y) ? x : y}')
    check_row "sampler CPU at 1000 backends (worse of idle, busy)" "≤ 0.3 % of one core" "—" "$(fmt "$v" 3) %" \
      "$(verdict "$v" "<=" 0.3)"
  fi
  md ""
}

bench_plots() {
  md_section 60_scaling
  md "## 6. Scaling" ""
  if ! command -v gnuplot >/dev/null; then md "Plots not drawn: gnuplot is not installed." ""; return 0; fi
  local pfx=$1 dat=$BENCH_TMP/sampler.dat k plotted=0
  : >"$dat"
  for k in 100 500 1000; do
    local r="$k" cfg st v any=0
    for cfg in psw_sampling pg_wait_sampling; do
      for st in idle busy; do
        v=$(metric_get sampler "$cfg" "$st backends=$k")
        [ -n "$v" ] && [ "$v" != NA ] && any=1
        r="$r ${v:-NaN}"; r=${r//NA/NaN}
      done
    done
    [ $any = 1 ] && echo "$r" >>"$dat"
  done
  if [ -s "$dat" ]; then
    gnuplot <<EOF
set terminal svg size 720,420 dynamic font "sans,11"
set output "$BENCH_OUT/${pfx}scaling_sampler.svg"
set title "Sampler CPU at 10 ms vs connected backends\n$(bench_machine | sed 's/"//g')"
set xlabel "connected backends"; set ylabel "% of one core"
set key top left; set grid; set xrange [0:1100]; set yrange [0:*]
plot "$dat" using 1:2 with linespoints title "pg_stat_waits idle", \
     "" using 1:3 with linespoints title "pg_stat_waits busy", \
     "" using 1:4 with linespoints title "pg_wait_sampling idle", \
     "" using 1:5 with linespoints title "pg_wait_sampling busy", \
     0.3 with lines dashtype 2 title "target 0.3 %"
EOF
    md "![sampler CPU vs backends](${pfx}scaling_sampler.svg)" ""
    plotted=1
  fi
  dat=$BENCH_TMP/stmt.dat
  : >"$dat"
  for k in 100 500 1000; do
    local a b
    a=$(metric_get callgrind_scaling none "max_connections=$k"); b=$(metric_get callgrind_scaling psw_sampling "max_connections=$k")
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" != NA ] && [ "$b" != NA ] && echo "$k $a $b" >>"$dat"
  done
  if [ -s "$dat" ]; then
    gnuplot <<EOF
set terminal svg size 720,420 dynamic font "sans,11"
set output "$BENCH_OUT/${pfx}scaling_statement.svg"
set title "Instructions per SELECT 1 (callgrind) vs max_connections\n$(bench_machine | sed 's/"//g')"
set xlabel "max_connections (backend slots)"; set ylabel "instructions / statement"
set key bottom right; set grid; set xrange [0:1100]
plot "$dat" using 1:2 with linespoints title "no extension", "" using 1:3 with linespoints title "pg_stat_waits"
EOF
    md "![instructions per statement vs max_connections](${pfx}scaling_statement.svg)" ""
    plotted=1
  fi
  [ $plotted = 1 ] || md "No scaling data in this run (quick mode measures only 1000 backends)." ""
}

# The report's name: one per PostgreSQL major, rewritten by every run (git
# keeps the history): latest.md for the default 15, latest-NN.md for the
# others. A quick run or one of some sections (--only) writes quick*.md
# instead, which is not committed: a latest report is always a full run.
bench_report_name() {
  local name=latest
  [ "$BENCH_QUICK" = 1 ] || [ -n "${BENCH_ONLY:-}" ] && name=quick
  [ "$PSW_PG_MAJOR" = 15 ] || name+="-$PSW_PG_MAJOR"
  echo "$name"
}

bench_write_report() {
  local name
  name=$(bench_report_name)
  bench_acceptance
  bench_plots "$name-"
  local pgv pgwsv commit f
  pgv=$("$PSW_BINDIR/postgres" --version)
  pgwsv=$(dpkg-query -W -f='${Version}' "postgresql-$PSW_PG_MAJOR-pg-wait-sampling" 2>/dev/null ||
    echo "not installed for $PSW_PG_MAJOR")
  commit=$(git -C "$PSW_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  git -C "$PSW_ROOT" diff --quiet HEAD -- . ':!bench/results' 2>/dev/null || commit="$commit + uncommitted changes"
  {
    echo "# pg_stat_waits benchmarks$([ "$BENCH_QUICK" = 1 ] && echo ' (quick mode)')"
    echo
    echo "- **Machine:** $(bench_machine)"
    echo "- **PostgreSQL:** $pgv; pg_wait_sampling $pgwsv; pg_stat_statements from the same contrib"
    echo "- **pg_stat_waits:** commit $commit"
    echo "- **Reproduce:** \`$BENCH_CMD\` (as root, in the repository; takes $(( $(date +%s) - BENCH_T0 )) s here)"
    echo "- **Date:** $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- **Features found in this build:** sampler $(yn psw_sampler), profile view $(yn psw_profile)," \
      "exact timing $(yn psw_timing)${BENCH_INTERPOSED:+ (interposed: $BENCH_INTERPOSED)}, pg_wait_sampling" \
      "$(yn pg_wait_sampling), pg_stat_statements $(yn pg_stat_statements)"
    echo
    echo "Figures from a shared, noisy virtual machine are provisional; instruction counts (section 1) are"
    echo "the deterministic ones. \"not available\" means the feature is not in the build that was measured."
    echo "Raw figures: \`${name}.tsv\` next to this file."
    echo
    for f in "$BENCH_TMP"/[0-9]*.md; do [ -f "$f" ] && cat "$f"; done
  } >"$BENCH_OUT/$name.md"
  cp "$BENCH_METRICS" "$BENCH_OUT/$name.tsv"
  # shellcheck disable=SC2034  # bench.sh prints it, smoke.sh checks it
  BENCH_REPORT=$BENCH_OUT/$name.md
}

yn() { [ "${BENCH_FEAT[$1]:-0}" = 1 ] && echo yes || echo no; }
