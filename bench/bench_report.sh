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

# check_row NAME TARGET MEASURED VERDICT
check_row() { md "| $1 | $2 | $3 | $4 |"; }

bench_acceptance() {
  md_section 05_acceptance
  md "## Acceptance checks" ""
  md "| check | target | measured | verdict |" "|---|---|---|---|"
  # Issue 13's targets, over the same server with compute_query_id = on
  # (pg_stat_waits turns query ids on itself, as pg_stat_statements does):
  # sampling at most +40 instructions, timing on at most +0.5 %.
  local none qid psw pgws tim v d
  none=$(metric_get callgrind none instr_per_stmt)
  qid=$(metric_get callgrind none_qid instr_per_stmt)
  psw=$(metric_get callgrind psw_sampling instr_per_stmt)
  pgws=$(metric_get callgrind pg_wait_sampling instr_per_stmt)
  tim=$(metric_get callgrind psw_timing instr_per_stmt)
  if [ -z "$qid" ] || [ "$qid" = NA ] || [ -z "$psw" ] || [ "$psw" = NA ]; then
    check_row "sampling: extra instructions / statement over compute_query_id = on" "≤ 40" "not measured" "not available"
  else
    d=$(awk -v a="$psw" -v b="$qid" 'BEGIN{printf "%.1f", a-b}')
    check_row "sampling: extra instructions / statement over compute_query_id = on" "≤ 40" "$d" \
      "$(awk -v d="$d" 'BEGIN{print (d <= 40) ? "met" : "**missed**"}')"
    if [ -n "$pgws" ] && [ "$pgws" != NA ] && [ -n "$none" ] && [ "$none" != NA ]; then
      # pg_wait_sampling's hooks, over the server it runs on (it turns no query ids on).
      check_row "sampling vs pg_wait_sampling, hooks' instructions / statement" "≤ pg_wait_sampling" \
        "$d vs $(awk -v a="$pgws" -v b="$none" 'BEGIN{printf "%.1f", a-b}')" \
        "$(awk -v a="$d" -v b="$pgws" -v c="$none" 'BEGIN{print (a <= b - c) ? "met" : "**missed**"}')"
    else
      check_row "sampling vs pg_wait_sampling, hooks' instructions / statement" "≤ pg_wait_sampling" "—" "not available"
    fi
  fi
  if [ -z "$tim" ] || [ "$tim" = NA ] || [ -z "$qid" ] || [ "$qid" = NA ]; then
    check_row "timing on: extra instructions / statement over compute_query_id = on" "≤ 0.5 %" "—" "not available: ${BENCH_WHY[psw_timing]:-not measured}"
  else
    d=$(awk -v a="$tim" -v b="$qid" 'BEGIN{printf "%.2f", 100*(a-b)/b}')
    check_row "timing on: extra instructions / statement over compute_query_id = on" "≤ 0.5 %" "$d %" \
      "$(awk -v d="$d" 'BEGIN{print (d <= 0.5) ? "met" : "**missed**"}')"
  fi
  # The cold scan: with direct I/O where the run has it (18: every read
  # reaches the storage), and the scan of pages dropped from this machine's
  # cache (which its host may still serve from memory) as its own row.
  local io_case io_label
  for io_case in io_direct io; do
    v=$(metric_get accuracy psw "$io_case")
    [ -n "$v" ] || continue
    io_label="exact DataFileRead vs track_io_timing (cold scan$([ "$io_case" = io_direct ] && echo ", direct I/O" || echo ", OS cache dropped"))"
    local tr ex
    read -r tr ex _ <<<"$v"
    if [ "$tr" = NA ] || [ "$ex" = NA ] || [ -z "$ex" ]; then
      check_row "$io_label" "±5 %" "—" "not available"
    else
      d=$(awk -v a="$ex" -v b="$tr" 'BEGIN{printf "%+.1f", 100*(a-b)/b}')
      check_row "$io_label" "±5 %" "$d %" \
        "$(awk -v d="$d" 'BEGIN{print (d <= 5 && d >= -5) ? "met" : "**missed**"}')"
    fi
  done
  local a b ai bi
  ai=$(metric_get sampler psw_sampling "idle backends=1000"); a=$(metric_get sampler psw_sampling "busy backends=1000")
  bi=$(metric_get sampler pg_wait_sampling "idle backends=1000"); b=$(metric_get sampler pg_wait_sampling "busy backends=1000")
  if [ -z "$a" ] || [ "$a" = NA ] || [ -z "$ai" ] || [ "$ai" = NA ]; then
    check_row "sampler CPU at 1000 backends" "≤ 0.3 % of one core" "—" "not available: ${BENCH_WHY[psw_sampler]:-not measured}"
    check_row "sampler CPU vs pg_wait_sampling collector" "less" "—" "not available"
  else
    v=$(awk -v x="$a" -v y="$ai" 'BEGIN{print (x > y) ? x : y}')
    check_row "sampler CPU at 1000 backends (worse of idle, busy)" "≤ 0.3 % of one core" "$(fmt "$v" 3) %" \
      "$(awk -v v="$v" 'BEGIN{print (v <= 0.3) ? "met" : "**missed**"}')"
    if [ -n "$b" ] && [ "$b" != NA ]; then
      check_row "sampler CPU vs pg_wait_sampling collector (1000 backends, idle / busy)" "less" \
        "$(fmt "$ai" 3) / $(fmt "$a" 3) % vs $(fmt "$bi" 3) / $(fmt "$b" 3) %" \
        "$(awk -v a="$a" -v b="$b" -v c="$ai" -v d="$bi" 'BEGIN{print (a < b && c < d) ? "met" : "**missed**"}')"
    fi
  fi
  # Both modes against the same no-extension spread, one row each.
  local cfg label wl n_in n_all m lo hi
  for cfg in psw_sampling psw_timing; do
    label=sampling; [ "$cfg" = psw_timing ] && label="timing on"
    n_in=0; n_all=0
    while IFS=$'\t' read -r _ _ wl _; do
      read -r m _ <<<"$(metric_get throughput "$cfg" "$wl")"
      read -r _ lo hi _ <<<"$(metric_get throughput none "$wl")"
      if [ -z "$m" ] || [ "$m" = NA ]; then continue; fi
      n_all=$((n_all + 1))
      awk -v m="$m" -v l="$lo" -v h="$hi" 'BEGIN{exit !(m >= l && m <= h)}' && n_in=$((n_in + 1))
    done < <(awk -F'\t' '$1=="throughput" && $2=="none"' "$BENCH_METRICS")
    if [ "$n_all" -eq 0 ]; then
      check_row "$label: throughput within run-to-run spread" "median inside no-extension min–max" "—" "not measured"
    else
      check_row "$label: throughput within run-to-run spread" "median inside no-extension min–max" \
        "$n_in of $n_all workloads" "$([ "$n_in" -eq "$n_all" ] && echo met || echo '**missed**')"
    fi
  done
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
