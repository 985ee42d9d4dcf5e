#!/usr/bin/env bash
# Smoke run of the benchmark harness at unit size (a few seconds), so
# ./run bench cannot rot unnoticed: every measuring primitive runs once
# against a running server and the report is written from what it measured.
# test/t/031_bench_smoke.pl starts the server (PGHOST, PGPORT, PGDATA; a
# superuser role "postgres"), runs this script and counts its TAP lines.
# shellcheck source-path=SCRIPTDIR/..
set -u
PSW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=$(command -v pg_config)
PSW_BINDIR=$("$PG_CONFIG" --bindir)
PSW_STAGE=""
PSW_PG_MAJOR=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
PSW_BUILD=$(mktemp -d /tmp/pgsw-bsmoke-build.XXXXXX)
export PSW_ROOT PG_CONFIG PSW_BINDIR PSW_STAGE PSW_BUILD PSW_PG_MAJOR
# shellcheck source=tools/lib/common.sh
source "$PSW_ROOT/tools/lib/common.sh"
PSW_OS_USER=$(id -un)
# shellcheck source=bench/bench.sh
source "$PSW_ROOT/bench/bench.sh"

bench_smoke() {
  local p=0 f=0
  bsmoke_check() {  # bsmoke_check NAME CMD...: one TAP line
    local name=$1; shift
    if "$@"; then p=$((p + 1)); echo "ok - $name"; else f=$((f + 1)); echo "not ok - $name"; fi
  }
  BENCH_QUICK=1
  BENCH_TMP=$(mktemp -d /tmp/pgsw-bsmoke.XXXXXX); chmod 755 "$BENCH_TMP"
  BENCH_OUT=$BENCH_TMP/out; mkdir -p "$BENCH_OUT"
  BENCH_METRICS=$BENCH_TMP/metrics.tsv; : >"$BENCH_METRICS"
  BENCH_T0=$(date +%s); BENCH_CMD="(smoke)"; BENCH_INTERPOSED=""
  BENCH_DIR[main]=$PGHOST; BENCH_PORT[main]=$PGPORT
  bsql main "CREATE EXTENSION IF NOT EXISTS pg_stat_waits" >/dev/null
  BENCH_FEAT[none]=1; BENCH_FEAT[pg_stat_statements]=1

  # Every harness file parses.
  local s ok=1
  for s in "$PSW_ROOT"/bench/bench*.sh; do bash -n "$s" || ok=0; done
  bsmoke_check "bench scripts parse" [ $ok = 1 ]

  # Statistics and the contributed-metric parser.
  bsmoke_check "median of 3 1 2" [ "$(printf '3\n1\n2\n' | stats_mmm)" = "2 1 3 3" ]
  bsmoke_check "median of 4 1 2 3" [ "$(printf '4\n1\n2\n3\n' | stats_mmm)" = "2.5 1 4 4" ]
  bsmoke_check "contrib line parsed" [ "$(echo 'sampler_cpu_pct backends=1000 ext=pg_stat_waits value=0.12' |
    contrib_parse)" = "$(printf 'sampler_cpu_pct\tbackends=1000 ext=pg_stat_waits\t0.12')" ]
  bsmoke_check "non-metric line ignored" [ -z "$(printf 'hello world\nx k=v value=abc\n' | contrib_parse)" ]

  # A contributed script runs as ./run bench --quick runs it, and its metric
  # lines, with labels and without, become rows of the report's section 7.
  local cdir=$BENCH_TMP/contrib
  mkdir -p "$cdir"
  # shellcheck disable=SC2016  # the probe script's own text
  printf '%s\n' 'echo "probe_ns mode=a value=1.5"' 'echo "probe_args value=$#"' \
    '[ "${1:-}" = --quick ] && echo "probe_quick value=1"' 'echo "not a metric"' >"$cdir/probe.sh"
  BENCH_CONTRIB_DIR=$cdir bench_contrib 1 2>/dev/null
  bsmoke_check "contributed metric with labels" [ "$(metric_get contrib probe "probe_ns mode=a")" = 1.5 ]
  bsmoke_check "contributed metric without labels" [ "$(metric_get contrib probe probe_args)" = 1 ]
  bsmoke_check "contributed script given --quick" [ "$(metric_get contrib probe probe_quick)" = 1 ]
  bsmoke_check "contributed rows in the report" \
    grep -qxF "| probe.sh | probe_args |  | 1 |" "$BENCH_TMP/70_contrib.md"
  # shellcheck disable=SC2016  # the report's Markdown backticks, literally
  bsmoke_check "report says how contributed scripts ran" \
    grep -qF 'Each script ran as `bash bench/NAME.sh --quick`' "$BENCH_TMP/70_contrib.md"

  # Instructions per statement: a tiny N still gives a plausible slope.
  if command -v valgrind >/dev/null; then
    BENCH_CG_DIR=$BENCH_TMP/cg; mkdir -p "$BENCH_CG_DIR"; chmod 755 "$BENCH_CG_DIR"
    [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$BENCH_CG_DIR"
    as_os_user "$PSW_BINDIR/initdb" -D "$BENCH_CG_DIR/data" -U postgres --auth=trust --no-sync -E UTF8 \
      --locale=C >/dev/null
    select1_lines 20 >"$BENCH_CG_DIR/in20.sql"; select1_lines 40 >"$BENCH_CG_DIR/in40.sql"
    chmod a+r "$BENCH_CG_DIR"/*.sql
    local slope
    slope=$(CG_KEEP=1 callgrind_slope "$BENCH_CG_DIR/data" 20 none)
    metric callgrind none instr_per_stmt "$slope" instr
    bsmoke_check "callgrind slope plausible ($slope)" \
      awk -v s="$slope" 'BEGIN { exit !(s > 5000 && s < 500000) }'
    # The allocator's share, read from a kept profile: a backend's start-up
    # alone allocates (its memory contexts' first blocks).
    local alloc_i="" alloc_c=""
    read -r alloc_i alloc_c < <(cg_allocator "$BENCH_CG_DIR/cg_none.40.out") || true
    bsmoke_check "glibc allocator found in a profile (${alloc_i:-none} instructions, ${alloc_c:-no} calls)" \
      awk -v i="$alloc_i" -v c="$alloc_c" 'BEGIN { exit !(i > 1000 && c > 10 && i > c) }'
  fi

  # Backend CPU time of SELECT 1 over one connection.
  local cpu wall
  read -r cpu wall < <(select1_cpu main 300)
  bsmoke_check "select1 backend CPU measured ($cpu ns)" awk -v c="$cpu" -v w="$wall" 'BEGIN { exit !(c > 0 && w >= c / 4) }'

  # Holding connections, making them busy, and reading a process's CPU time.
  build_holder
  local line n_idle n_busy
  coproc SMOKE_HOLD { "$BENCH_HOLDER" "$(bench_conninfo main)" 12 2>&1; }
  read -r line <&"${SMOKE_HOLD[0]}" || line=""
  bsmoke_check "holder connects ($line)" [ "$line" = "ready 12" ]
  n_idle=$(bsql main "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' AND backend_type = 'client backend'")
  echo "busy 5" >&"${SMOKE_HOLD[1]}"; read -r line <&"${SMOKE_HOLD[0]}" || line=""
  sleep 0.3
  n_busy=$(bsql main "SELECT count(*) FROM pg_stat_waits_activity WHERE wait_event = 'PgSleep'")
  echo quit >&"${SMOKE_HOLD[1]}"; wait "$SMOKE_HOLD_PID" 2>/dev/null || true
  bsmoke_check "12 held backends idle ($n_idle)" [ "$n_idle" -ge 12 ]
  bsmoke_check "12 held backends busy in pg_stat_waits_activity ($n_busy)" [ "$n_busy" -ge 12 ]
  local pm
  pm=$(head -1 "$PGDATA/postmaster.pid" 2>/dev/null || true)
  bsmoke_check "process CPU time readable" [ "$(proc_cpu_ns "${pm:-1}")" -gt 0 ]

  # A known wait measured by the client.
  local ms
  ms=$(timed_ms main "SELECT pg_sleep(0.2)")
  bsmoke_check "injected 200 ms sleep measured ($ms ms)" awk -v m="$ms" 'BEGIN { exit !(m >= 199 && m < 1000) }'

  # The report is written from these figures, names the machine, and says
  # "not available" rather than inventing the missing rows.
  metric select1 none cpu "$cpu $cpu $cpu 1" "ns median min max n"
  callgrind_render 1 20
  bench_write_report
  bsmoke_check "report written" [ -s "$BENCH_REPORT" ]
  bsmoke_check "report names machine and PostgreSQL" \
    grep -q "Machine:.*$(nproc) cores.*PostgreSQL.*$("$PG_CONFIG" --version | cut -d' ' -f2)" <(tr '\n' ' ' <"$BENCH_REPORT")
  # shellcheck disable=SC2016  # the report's Markdown backticks, literally
  bsmoke_check "report marks timing not available" \
    grep -qF '| timing on: `postgres --single`, `SELECT 1` | ≤ +0.3 % | — | — | not available' "$BENCH_REPORT"
  if command -v valgrind >/dev/null; then
    bsmoke_check "report carries the measured slope" grep -q "^| no extension | $(fmt "$slope") |" "$BENCH_REPORT"
  fi

  bsmoke_check "a quick report is not a latest one ($(basename "$BENCH_REPORT"))" \
    [ "$(basename "$BENCH_REPORT")" = "quick$([ "$PSW_PG_MAJOR" = 15 ] || echo "-$PSW_PG_MAJOR").md" ]

  # The README's table is generated: from this run's figures, taken as a
  # major's latest report, it shows their verdicts under the version ...
  local rdir=$BENCH_TMP/readme ver
  mkdir -p "$rdir/results"
  cp "$BENCH_REPORT" "$rdir/results/latest.md"; cp "${BENCH_REPORT%.md}.tsv" "$rdir/results/latest.tsv"
  printf '%s\n' '# t' '<!-- bench-table begin -->' 'stale' '<!-- bench-table end -->' 'tail' >"$rdir/README.md"
  ver=$("$PG_CONFIG" --version | cut -d' ' -f2)
  bash "$PSW_ROOT/bench/readme_table.sh" "$rdir/README.md" "$rdir/results" 2>&1
  bsmoke_check "README table headed by the report's version ($ver)" grep -qxF "| check | target | $ver |" "$rdir/README.md"
  # shellcheck disable=SC2016  # the report's Markdown backticks, literally
  bsmoke_check "README table marks timing not available" \
    grep -qF '| timing on: `postgres --single`, `SELECT 1` | ≤ +0.3 % | not available' "$rdir/README.md"
  bsmoke_check "README table replaces the old block, keeps the rest" \
    [ "$(grep -c -e stale -e '^# t$' -e '^tail$' "$rdir/README.md")" = 2 ]
  # ... and the committed README holds exactly what the committed reports
  # generate: a figure edited by hand, or a report not carried over, fails.
  cp "$PSW_ROOT/README.md" "$rdir/README.committed.md"
  bash "$PSW_ROOT/bench/readme_table.sh" "$rdir/README.committed.md" "$PSW_ROOT/bench/results" 2>&1
  bsmoke_check "README's benchmark table is the generated one" cmp -s "$PSW_ROOT/README.md" "$rdir/README.committed.md"

  unset "BENCH_DIR[main]" "BENCH_PORT[main]"
  rm -rf "$BENCH_TMP" "$PSW_BUILD"
  echo "# bench smoke: $p passed, $f failed"
  [ "$f" -eq 0 ]
}

bench_smoke
