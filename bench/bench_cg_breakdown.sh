# Where pg_stat_waits' per-statement instructions go: callgrind's self cost
# of each function in pg_stat_waits.so, at N and 2N statements, differenced
# and divided by N like the headline slope. Only the library's own code is
# counted (what it calls inside postgres or libc is not), so the sum is a
# lower bound of the Δ in section 1; it tells a developer which hook to trim.
# The counting helpers every callgrind section shares live here too: the
# slope (cg_slope) and glibc's allocator's share of a profile (cg_allocator).
# shellcheck shell=bash

# cg_slope A B N [DECIMALS]: (B - A) / N, the count per statement, call or
# transaction from runs of N and 2N of them (start-up and shutdown cancel).
cg_slope() {
  awk -v a="$1" -v b="$2" -v n="$3" -v d="${4:-1}" 'BEGIN { printf "%.*f\n", d, (b - a) / n }'
}

# cg_self_rows OUTFILE: "instructions<TAB>file:function<TAB>object" for every
# self-cost row. callgrind_annotate names the object only on a function's
# own lines; code inlined from another file (a header) comes on a row of its
# own without one, and a function's "[clone .part.0]" must not be taken for
# an object: such rows get "(inlined)", or pg_stat_waits.so when the file is
# this repository's source.
cg_self_rows() {
  callgrind_annotate --inclusive=no --threshold=100 --auto=no "$1" 2>/dev/null |
    grep -v 'PROGRAM TOTALS' |
    sed -nE 's/^ *([0-9,]+) \([^)]*\) +(.*)$/\1\t\2/p' |
    awk -F'\t' -v OFS='\t' '{
      gsub(",", "", $1); fn = $2; obj = ""
      if (match(fn, / \[[^]]*\/[^]]*\]$/)) { obj = substr(fn, RSTART + 2, RLENGTH - 3); fn = substr(fn, 1, RSTART - 1) }
      else if (fn ~ /^src\//) obj = "pg_stat_waits.so"
      else obj = "(inlined)"
      print $1, fn, obj }'
}

# cg_self_by_function OUTFILE: "instructions<TAB>function" of pg_stat_waits.so,
# its inlined rows summed into the function they were inlined into.
cg_self_by_function() {
  cg_self_rows "$1" |
    awk -F'\t' '$3 ~ /pg_stat_waits\.so$/ { fn = $2; sub(/^[^:]*\.(cpp|h|c):/, "", fn); s[fn] += $1 }
      END { for (f in s) printf "%d\t%s\n", s[f], f }'
}

# cg_allocator OUTFILE: "instructions calls" of glibc's allocator in a
# profile: the self cost of every function of libc's malloc/malloc.c, and
# the calls that enter it through malloc, calloc or realloc from outside
# it. Why: over a socket the same allocations per statement took 96
# instructions each in one configuration and 295 in another (18.6, sampling
# against no extension), as the heap's free chunks lay after start-up; the
# client tables give each configuration's allocator share so that such a
# difference is not read as a tool's cost. (Debian's valgrind depends on
# libc6-dbg, which names these functions.)
cg_allocator() {
  local instr calls
  instr=$(cg_self_rows "$1" |
    awk -F'\t' '$3 ~ /\/libc\.so/ && $2 ~ /\/malloc\/malloc\.c:/ { s += $1 } END { printf "%d\n", s }')
  # Caller tree: each function's block lists its callers ("<", with call
  # counts) and then the function itself ("*").
  calls=$(callgrind_annotate --tree=caller --inclusive=no --threshold=100 --auto=no "$1" 2>/dev/null |
    awk '/^ *$/ { n = 0; next }
      / < / {
        if ($0 !~ /\/malloc\/malloc\.c:/ && match($0, /\([0-9,]+x\) \[/)) {
          c = substr($0, RSTART + 1, RLENGTH - 5); gsub(",", "", c); n += c
        }
        next
      }
      / \* / { if ($0 ~ /\/malloc\/malloc\.c:(malloc|calloc|realloc) \[/) t += n; n = 0 }
      END { printf "%d\n", t }')
  echo "$instr $calls"
}

# cg_allocator_metrics SECTION CONFIG N OUTFILE_N OUTFILE_2N: records the
# allocator's instructions and calls per unit (the slope between the two
# profiles, as the headline figure) as alloc_instr and alloc_calls, with
# CG_PARAM_SUFFIX appended (the baseline's repeat).
cg_allocator_metrics() {
  local section=$1 cfg=$2 n=$3 a=() b=()
  command -v callgrind_annotate >/dev/null || return 0
  read -r -a a < <(cg_allocator "$4") || true
  read -r -a b < <(cg_allocator "$5") || true
  [ "${#a[@]}" = 2 ] && [ "${#b[@]}" = 2 ] || return 0
  metric "$section" "$cfg" "alloc_instr${CG_PARAM_SUFFIX:-}" \
    "$(cg_slope "${a[0]}" "${b[0]}" "$n")" instr
  metric "$section" "$cfg" "alloc_calls${CG_PARAM_SUFFIX:-}" \
    "$(cg_slope "${a[1]}" "${b[1]}" "$n" 2)" count
}

# callgrind_breakdown N CONFIG: records callgrind_self rows from the two
# profiles callgrind_slope kept (CG_KEEP=1).
callgrind_breakdown() {
  cg_breakdown_files callgrind_self "$2" "$1" "$BENCH_CG_DIR/cg_$2.$1.out" "$BENCH_CG_DIR/cg_$2.$(($1 * 2)).out"
}

# cg_breakdown_files SECTION CONFIG N PROFILE_N PROFILE_2N: the library's
# self instructions per unit by function, the slope between two profiles
# (the twelve largest), as metrics of SECTION. The client runs
# (cg_client_slope, callgrind_pgbench_slope) call it with their backends'
# profiles: what remains of timing's cost on the path the targets name.
cg_breakdown_files() {
  local section=$1 cfg=$2 n=$3 p1=$4 p2=$5
  command -v callgrind_annotate >/dev/null || return 0
  [ -s "$p1" ] && [ -s "$p2" ] || return 0
  join -t $'\t' -1 2 -2 2 -a 2 -e 0 -o 0,1.1,2.1 \
    <(cg_self_by_function "$p1" | sort -t $'\t' -k2,2) \
    <(cg_self_by_function "$p2" | sort -t $'\t' -k2,2) |
    awk -F'\t' -v n="$n" '{ d = ($3 - $2) / n; if (d >= 0.5) printf "%.1f\t%s\n", d, $1 }' |
    sort -t $'\t' -k1,1gr | head -12 |
    while IFS=$'\t' read -r d fn; do metric "$section" "$cfg" "$fn" "$d" instr; done
}

# callgrind_breakdown_render CONFIG [SECTION UNIT PATH]: the table of the
# rows cg_breakdown_files recorded (default: single-user, per statement).
callgrind_breakdown_render() {
  local cfg=$1 section=${2:-callgrind_self} unit=${3:-statement} path=${4:-} rows
  rows=$(awk -F'\t' -v s="$section" -v c="$cfg" '$1==s && $2==c' "$BENCH_METRICS")
  [ -n "$rows" ] || return 0
  md "Self instructions per $unit inside pg_stat_waits.so, by function ($(bench_cfg_label "$cfg")${path:+, $path};" \
     "what the library calls in postgres/libc is not included, so the sum is a lower bound of its Δ):" ""
  md "| instructions / $unit | function |" "|---:|---|"
  local d fn
  while IFS=$'\t' read -r _ _ fn d _; do
    fn=${fn//|/\\|}
    [ ${#fn} -gt 110 ] && fn="${fn:0:107}..."
    md "| $d | \`$fn\` |"
  done <<<"$rows"
  md "| $(awk -F'\t' -v s="$section" -v c="$cfg" '$1==s && $2==c {t+=$4} END {printf "%.1f", t}' "$BENCH_METRICS") | (sum of the rows above) |" ""
}

# cg_self_by_object OUTFILE: "instructions<TAB>object" (self cost summed per
# shared object: postgres, libc, pg_stat_waits.so, ...), read from the
# profile itself rather than from callgrind_annotate's rows, which leave
# code inlined from headers without an object and can merge functions of
# the same file and name in two objects (ld.so has its own copies of some
# of libc's string functions): 36-115 instructions per statement moved
# between libc and ld.so from one run to the next. In the
# profile every cost line belongs to the last "ob=" before it; the line
# after a "calls=" is the callee's inclusive cost, not self cost. The
# objects' sums equal the profile's "summary:".
cg_self_by_object() {
  awk '
    function obname(s,   id, nm) {
      if (match(s, /^\([0-9]+\)/)) {
        id = substr(s, 2, RLENGTH - 2); nm = substr(s, RLENGTH + 2)
        if (nm != "") names[id] = nm
        return names[id]
      }
      return s
    }
    /^ob=/ { cur = obname(substr($0, 4)); next }
    /^cob=/ { obname(substr($0, 5)); next }
    /^calls=/ { skip = 1; next }
    /^[-+*0-9]/ { if (skip) { skip = 0; next } self[cur] += $2; next }
    END {
      for (o in self) {
        n = split(o, p, "/"); name = p[n] == "???" ? "(code with no object name)" : p[n]
        printf "%d\t%s\n", self[o], name
      }
    }' "$1"
}

# callgrind_objects N CONFIG...: per-statement self cost by object, from the
# out files callgrind_breakdown kept.
callgrind_objects() {
  local n=$1 cfg; shift
  for cfg in "$@"; do
    [ -s "$BENCH_CG_DIR/cg_$cfg.$n.out" ] || continue
    join -t $'\t' -1 2 -2 2 -a 2 -e 0 -o 0,1.1,2.1 \
      <(cg_self_by_object "$BENCH_CG_DIR/cg_$cfg.$n.out" | sort -t $'\t' -k2,2) \
      <(cg_self_by_object "$BENCH_CG_DIR/cg_$cfg.$((2 * n)).out" | sort -t $'\t' -k2,2) |
      awk -F'\t' -v n="$n" '{ printf "%.1f\t%s\n", ($3 - $2) / n, $1 }' |
      while IFS=$'\t' read -r d obj; do metric callgrind_object "$cfg" "$obj" "$d" instr; done
  done
}

callgrind_objects_render() {
  local base=$1; shift
  local objs cfg o row
  objs=$(awk -F'\t' '$1=="callgrind_object" && ($4 >= 0.5 || $4 <= -0.5) {print $3}' "$BENCH_METRICS" | sort -u)
  [ -n "$objs" ] || return 0
  md "Instructions per statement by object (self cost), and the difference from $(bench_cfg_label "$base"):" ""
  row="| object | $(bench_cfg_label "$base") |"
  for cfg in "$@"; do row+=" $(bench_cfg_label "$cfg") | Δ |"; done
  md "$row"
  row="|---|---:|"; for cfg in "$@"; do row+="---:|---:|"; done
  md "$row"
  local b v
  while IFS= read -r o; do
    b=$(metric_get callgrind_object "$base" "$o")
    row="| $o | $(fmt "${b:-0}") |"
    for cfg in "$@"; do
      v=$(metric_get callgrind_object "$cfg" "$o")
      row+=" $(fmt "${v:-0}") | $(fmt "$(awk -v a="${v:-0}" -v b="${b:-0}" 'BEGIN{print a-b}')") |"
    done
    md "$row"
  done <<<"$objs"
  md ""
}
