# Contributed measurements: any bench/*.sh that is not part of the harness
# (bench.sh, bench_*.sh, and smoke.sh, the harness's own test that
# ./run test drives) is a feature's own benchmark, e.g. the timing
# wrapper's ns/call script. Each runs as
#   bash bench/NAME.sh [--quick]
# in its own process, with PSW_ROOT, PSW_BINDIR, PSW_BUILD, PSW_STAGE,
# PSW_OS_USER and PG_CONFIG exported (it may source tools/lib/common.sh),
# under a time limit. Every stdout line of the form
#   metric_name key=value ... value=NUMBER
# becomes a row of the report; everything else goes to the log only.
# BENCH_CONTRIB_DIR, when set, is looked in instead of bench/ (the smoke
# suite runs a script of its own through this section).
# shellcheck shell=bash

contrib_scripts() {
  local f
  for f in "${BENCH_CONTRIB_DIR:-$PSW_ROOT/bench}"/*.sh; do
    [ -f "$f" ] || continue
    case $(basename "$f") in bench.sh | bench_*.sh | smoke.sh) continue ;; esac
    echo "$f"
  done
}

# contrib_parse: metric lines on stdin -> "name<TAB>labels<TAB>value".
contrib_parse() {
  sed -nE 's/^([a-z][a-z0-9_]*)((( [A-Za-z0-9_.]+=[^ =]+)*)) value=([-+0-9.eE]+|NA)[[:space:]]*$/\1\t\2\t\5/p' |
    sed -E 's/\t /\t/'
}

bench_contrib() {
  local quick=$1 cap f name rc out
  cap=$([ "$quick" = 1 ] && echo 25 || echo 180)
  md_section 70_contrib
  md "## 7. Contributed measurements (features' own benchmark scripts)" ""
  local scripts=()
  while IFS= read -r f; do scripts+=("$f"); done < <(contrib_scripts)
  if [ ${#scripts[@]} -eq 0 ]; then
    md "None in this build: no \`bench/*.sh\` besides the harness." ""
    return 0
  fi
  export PSW_ROOT PSW_BINDIR PSW_BUILD PSW_STAGE PSW_OS_USER PG_CONFIG
  local opts=()
  if [ "$quick" = 1 ]; then opts=(--quick); fi
  md "Each script ran as \`bash bench/NAME.sh${opts[*]:+ ${opts[*]}}\` (limit ${cap} s)." ""
  md "| script | metric | labels | value |" "|---|---|---|---:|"
  for f in "${scripts[@]}"; do
    name=$(basename "$f" .sh)
    log "bench: contributed script bench/$name.sh"
    out=$BENCH_TMP/contrib_$name.log
    rc=0
    (cd "$PSW_ROOT" && timeout -k 10 "$cap" bash "$f" "${opts[@]}") >"$out" 2>&1 || rc=$?
    local n=0 row m l v
    while IFS= read -r row; do
      # Split by hand: read with IFS=$'\t' would take the tab after empty
      # labels together with the next one (a tab is whitespace to read) and
      # put the value under labels.
      m=${row%%$'\t'*} v=${row##*$'\t'} l=${row#*$'\t'}
      l=${l%$'\t'*}
      metric contrib "$name" "$m${l:+ $l}" "$v" ""
      md "| $name.sh | $m | $l | $v |"
      n=$((n + 1))
    done < <(contrib_parse <"$out")
    if [ "$rc" -ne 0 ] || [ "$n" -eq 0 ]; then
      local why="exit status $rc"; [ "$rc" = 124 ] && why="timed out after ${cap} s"
      metric contrib "$name" status NA "" "$why, $n metric lines"
      md "| $name.sh | (run) | $why | $n metric lines |"
      tail -5 "$out" | sed 's/^/    /' >&2
    fi
  done
  md ""
}
