# ./run test: every test, each step counted, one closing line
# "N passed, N failed, N skipped"; ./run bench, the benchmarks through the
# same prove (run_bench); ./run demo and ./run screenshots (run_tool).
# Sourced by ./run after setup. No errexit here: a failing step is counted
# and the run goes on to its summary.
#
# Every step writes its counts to a file of its own in PSW_RESULTS
# ($PSW_STAGE/results unless set; .ci/run sets it): "NN-STEP" holding
# "PASSED FAILED SKIPPED", NN its order in the run. The closing lines are
# summed from those files, and written to PSW_RESULTS/summary too, so that
# nothing has to read the counts back from the log.
# shellcheck shell=bash

PSW_RESULTS=${PSW_RESULTS:-}
PSW_STEPS_RUN=0

record() {  # record STEP PASSED FAILED [SKIPPED]
  local s=${4:-0}
  PSW_STEPS_RUN=$((PSW_STEPS_RUN + 1))
  printf '%d %d %d\n' "$2" "$3" "$s" >"$PSW_RESULTS/$(printf '%02d' "$PSW_STEPS_RUN")-$1"
  log "$1: $2 passed, $3 failed$([ "$s" -gt 0 ] && echo ", $s skipped")"
}

# The steps' lines and the closing line, from the files record() wrote; a
# file that does not hold three counts is a failure of its step.
summarize_results() {
  local f step p x s rest sp=0 sf=0 ss=0
  for f in "$PSW_RESULTS"/[0-9][0-9]-*; do
    [ -e "$f" ] || continue
    step=${f##*/}; step=${step#*-}
    p="" x="" s="" rest=""
    read -r p x s rest <"$f"
    if ! [[ "$p" =~ ^[0-9]+$ && "$x" =~ ^[0-9]+$ && "$s" =~ ^[0-9]+$ && -z "$rest" ]]; then
      echo "$f: not three counts"; p=0 x=1 s=0
    fi
    printf '%-22s %4d passed, %d failed%s\n' "$step:" "$p" "$x" "$([ "$s" -gt 0 ] && echo ", $s skipped")"
    sp=$((sp + p)); sf=$((sf + x)); ss=$((ss + s))
  done
  [ "$PSW_STEPS_RUN" -gt 0 ] || sf=$((sf + 1))
  echo "$sp passed, $sf failed, $ss skipped" >"$PSW_RESULTS/summary"
  log "PostgreSQL $PSW_PG_MAJOR, $((SECONDS - ${1:-0})) s"
  cat "$PSW_RESULTS/summary"
  [ "$sf" -eq 0 ]
}

# GoogleTest unit tests of the core and the report tool (one count per
# case), counted from ctest's JUnit report: a case that did not run (a
# binary that crashed before it) is a failure, a disabled one skipped.
step_unit() {
  local out junit=$PSW_RESULTS/unit.junit.xml p f s
  rm -f "$junit"
  out=$(cd "$PSW_BUILD/cmake" && ctest -L unit --output-on-failure --output-junit "$junit" 2>&1)
  echo "$out" | tail -5
  # ctest marks a case GTEST_SKIP skipped (gtest_discover_tests' skip
  # expression) as "notrun" with that reason; any other "notrun" (its
  # executable missing) is a failure, as ctest's own summary counts it.
  read -r p f s < <(perl -0777 -ne 'my ($p, $f, $s) = (0, 0, 0);
      while (/<testcase\b([^>]*?)(?:\/>|>(.*?)<\/testcase>)/sg) {
        my ($attrs, $body) = ($1, $2 // "");
        my ($st) = $attrs =~ /\bstatus="([^"]*)"/; $st //= "";
        if ($st eq "run") { $p++ }
        elsif ($st eq "disabled" || ($st eq "notrun" && $body =~ /<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/)) { $s++ }
        else { $f++ }
      }
      printf "%d %d %d\n", $p, $f, $s' "$junit" 2>/dev/null)
  # No report, or one without a case: ctest itself failed.
  [ "${p:-0}" -gt 0 ] || [ "${f:-0}" -gt 0 ] || f=1
  record unit "${p:-0}" "${f:-1}" "${s:-0}"
}

# The ASan + UBSan build of the unit tests (--long).
step_sanitizers() {
  local out p f s
  log "building the unit tests with ASan + UBSan"
  if ! { cmake -S "$PSW_ROOT" -B "$PSW_BUILD/asan" -DCMAKE_BUILD_TYPE=Debug -DPSW_SANITIZE=ON >/dev/null &&
         cmake --build "$PSW_BUILD/asan" -j2 --target psw_unit_tests >/dev/null; }; then
    record sanitizers 0 1; return
  fi
  # The counts come from GoogleTest's JSON report; the sanitizers' own
  # reports, which no test case owns, are one failure more.
  local json=$PSW_RESULTS/sanitizers.json
  rm -f "$json"
  out=$(ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$PSW_BUILD/asan/psw_unit_tests" --gtest_color=no --gtest_output="json:$json" 2>&1)
  echo "$out" | grep -E 'ERROR: (Address|Undefined|Leak)|runtime error|^\[  (PASSED|FAILED)  \]' | head -20
  read -r p f s < <(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); my ($p, $f, $s) = (0, 0, 0);
      for my $c (map { @{ $_->{testsuite} } } @{ $j->{testsuites} }) {
        if (@{ $c->{failures} // [] }) { $f++ } elsif (($c->{result} // "") eq "COMPLETED" && ($c->{status} // "") eq "RUN") { $p++ } else { $s++ }
      }
      printf "%d %d %d\n", $p, $f, $s' <"$json" 2>/dev/null)
  f=${f:-0}
  echo "$out" | grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' && f=$((f + 1))
  [ -n "$p" ] || f=$((f + 1))
  record sanitizers "${p:-0}" "$f" "${s:-0}"
}

# The PGXS test targets run as the cluster user in a copy of the test tree
# that it owns (the checkout may be unreadable for it, e.g. under /root),
# with the staged pg_config: its PGXS, pg_regress and bindir are the stage's.
PSW_WORK=""
prepare_work_tree() {
  PSW_WORK=$PSW_STAGE/checkout
  mkdir -p "$PSW_WORK"
  rsync -a --delete --exclude /build --exclude /.git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
        --exclude /results --exclude /tmp_check --exclude /log "$PSW_ROOT/" "$PSW_WORK/"
  [ "$(id -u)" -eq 0 ] && chown -R "$PSW_OS_USER" "$PSW_WORK"
  # pg_wait_sampling's own tests, kept as data next to the checkout
  # (../shared, or ../../shared from a worktree), go next to the copy too,
  # where 020_compat.pl looks (the cluster user may not read the originals).
  # An earlier run's copy goes first: without the originals the test skips
  # rather than checking against a copy of tests no longer there.
  rm -rf "$PSW_STAGE/shared/compat-tests"
  local d
  for d in "${PSW_SHARED_CANDIDATES[@]}"; do
    [ -d "$d/compat-tests/pg_wait_sampling" ] || continue
    mkdir -p "$PSW_STAGE/shared/compat-tests"
    rsync -a --delete "$d/compat-tests/pg_wait_sampling/" "$PSW_STAGE/shared/compat-tests/pg_wait_sampling/"
    [ "$(id -u)" -eq 0 ] && chown -R "$PSW_OS_USER" "$PSW_STAGE/shared"
    break
  done
  return 0
}

# Debian's postgres_exporter binary, unpacked into the stage without
# installing the service (021_exporters.pl uses it when present).
PSW_EXPORTER=""
fetch_exporter() {
  local dir=$PSW_STAGE/exporter
  if [ ! -x "$dir/root/usr/bin/prometheus-postgres-exporter" ]; then
    mkdir -p "$dir"
    ( cd "$dir" && apt-get download -qq prometheus-postgres-exporter >/dev/null 2>&1 \
        && dpkg -x prometheus-postgres-exporter_*.deb root ) || log "postgres_exporter not available: exporters checked with psql only"
    chmod -R a+rX "$dir"
  fi
  [ -x "$dir/root/usr/bin/prometheus-postgres-exporter" ] && PSW_EXPORTER=$dir/root/usr/bin/prometheus-postgres-exporter
  return 0
}

# PSW_STAGE_BINDIRS="16=/bindir 17=/bindir ...": the staged installations of
# the other majors (each with pg_stat_waits installed by its own ./run), for
# the tests that run two majors side by side (205_renamed_wait_series.pl);
# a major never staged here is absent and those tests skip, naming it.
psw_other_stages() {
  local f cfg major dirs=()
  for f in "$PSW_BUILD"/stage-*.pg_config; do
    if [ ! -e "$f" ] || [ "$f" = "$PSW_BUILD/$PSW_STAGE_NAME.pg_config" ]; then continue; fi
    cfg=$(cat "$f")
    if [ ! -x "$cfg" ] || [ ! -e "$("$cfg" --pkglibdir)/pg_stat_waits.so" ]; then continue; fi
    major=$("$cfg" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
    [ "$major" != "$PSW_PG_MAJOR" ] && dirs+=("$major=$("$cfg" --bindir)")
  done
  PSW_STAGE_BINDIRS=${dirs[*]+"${dirs[*]}"}
  export PSW_STAGE_BINDIRS
}

work_make() {  # work_make ARGS...: make in the work tree as the cluster user
  # PERL5LIB: prove itself loads the TAP formatter from test/perl.
  as_os_user env PSW_LONG="${PSW_LONG:-0}" PSW_EXPORTER="$PSW_EXPORTER" PSW_STAGE_BINDIRS="${PSW_STAGE_BINDIRS:-}" \
    PSW_PG_REGRESS_DIR="${PSW_PG_REGRESS_DIR:-}" PERL5LIB="$PSW_WORK/test/perl${PERL5LIB:+:$PERL5LIB}" \
    PSW_BENCH_DIR="${PSW_BENCH_DIR:-}" PSW_BENCH_MODE="${PSW_BENCH_MODE:-}" PSW_BENCH_ONLY="${PSW_BENCH_ONLY:-}" \
    make -C "$PSW_WORK" --no-print-directory PG_CONFIG="$PSW_STAGED_PG_CONFIG" "$@"
}

# Counts pg_regress/pg_isolation_regress results. From 16 on they print
# TAP, read by prove's parser (make's own lines are not TAP and are passed
# over; a plan not met is a failure). 15 prints "test NAME ... ok": counted
# from the text.
count_regress() {  # count_regress STEP RC OUTPUT
  local p f
  if [ "$PSW_PG_MAJOR" -ge 16 ]; then
    read -r p f < <(perl -MTAP::Parser -e 'my $t = TAP::Parser->new({ tap => join("", <STDIN>) });
      my ($p, $f) = (0, 0);
      while (my $r = $t->next) { $r->is_test and ($r->is_ok ? $p++ : $f++) }
      $f++ if !$f && ($t->parse_errors || !$t->plan);
      print "$p $f\n"' <<<"$3")
  else
    p=$(grep -cE '^(test +| +)?[^ ]+ +\.\.\. ok' <<<"$3")
    f=$(grep -cE '\.\.\. FAILED' <<<"$3")
  fi
  [ "$2" -ne 0 ] && [ "${f:-0}" -eq 0 ] && f=1
  record "$1" "${p:-0}" "${f:-1}"
}

step_installcheck() {
  local out rc
  out=$(work_make installcheck ISOLATION= TAP_TESTS= 2>&1); rc=$?
  echo "$out" | grep -E '^(test |     |ok |not ok |# )|tests (passed|failed)|^\+' | tail -40
  [ $rc -ne 0 ] && [ -f "$PSW_WORK/regression.diffs" ] && head -100 "$PSW_WORK/regression.diffs"
  count_regress regress $rc "$out"
  out=$(work_make installcheck REGRESS= TAP_TESTS= 2>&1); rc=$?
  echo "$out" | grep -E '^(test |     |ok |not ok |# )|tests (passed|failed)' | tail -20
  [ $rc -ne 0 ] && [ -f "$PSW_WORK/output_iso/regression.diffs" ] && head -100 "$PSW_WORK/output_iso/regression.diffs"
  count_regress isolation $rc "$out"
  out=$(work_make installcheck-nopreload 2>&1); rc=$?
  echo "$out" | grep -E '^(test |     |ok |not ok |# )|tests (passed|failed)' | tail -5
  [ $rc -ne 0 ] && [ -f "$PSW_WORK/regression.diffs" ] && head -60 "$PSW_WORK/regression.diffs"
  count_regress regress-nopreload $rc "$out"
}

# TAP tests (test/t/*.pl), read as TAP by prove's parser: the formatter
# test/perl/PswTapFormatter.pm prints one line per file with its result and,
# under a failing one, its failed assertions (their diagnostics come just
# before, on the tests' standard error; notes stay in the logs), and writes
# the counts (top-level assertions; skipped ones apart; a file that dies or
# plans wrongly one failure more) to a file read here.
step_prove() {
  local rc counts=$PSW_WORK/tap_counts p="" f="" s="" only=()
  rm -f "$counts"
  if [ "$PSW_QUICK" = 1 ]; then
    local quick=()
    mapfile -t quick < <(quick_schedule)
    [ ${#quick[@]} -gt 0 ] || { echo "test/quick_schedule lists no test"; record tap 0 1; return; }
    only=(PROVE_TESTS="${quick[*]/#/test/t/}")
  fi
  work_make -s prove_installcheck PROVE_FLAGS="--formatter PswTapFormatter" "${only[@]+"${only[@]}"}" \
    PSW_TAP_COUNTS="$counts" 2>&1 | grep --line-buffered -vE '^(# )?[+]{3} tap install-check'
  rc=${PIPESTATUS[0]}
  [ -f "$counts" ] && read -r p f s <"$counts"
  # No counts: prove or the formatter itself failed before the summary.
  [ -n "$p" ] || { p=0; f=1; s=0; }
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  if [ "$rc" -ne 0 ] && [ -d "$PSW_WORK/tmp_check/log" ]; then
    echo "TAP logs kept in $PSW_WORK/tmp_check/log"
  fi
  # Skipped assertions and files are counted apart, never as passed.
  record tap "$p" "$f" "$s"
}

shellcheck_step() {  # the shell that remains: clean under shellcheck
  command -v shellcheck >/dev/null || return 0
  local out files
  mapfile -t files < <(cd "$PSW_ROOT" && git ls-files 'test/*.sh' 'tools/*.sh' 'bench/*.sh' run .ci/run 2>/dev/null)
  out=$(cd "$PSW_ROOT" && shellcheck -x "${files[@]}" 2>&1)
  if [ -z "$out" ]; then record shellcheck 1 0; else echo "$out" | head -40; record shellcheck 0 1; fi
}

# Test files numbered once each, and a --quick schedule that names only
# test files (tools/check_tests.pl).
test_files_step() {
  local out
  if out=$("$PSW_ROOT/tools/check_tests.pl" 2>&1); then
    record test-files 1 0
  else
    echo "$out" | head -40; record test-files 0 1
  fi
}

layers_step() {  # includes along docs/architecture.md's layers, a PostgreSQL-free core, short files
  local out
  if out=$("$PSW_ROOT/tools/check_layers.pl" "$("$PG_CONFIG" --includedir-server)" 2>&1); then
    record layers 1 0
  else
    echo "$out" | head -40; record layers 0 1
  fi
}

# The release library (make without PSW_TEST_HOOKS, as packages build it)
# exports no test entry point (tools/check_exports.pl): built from a copy of
# the sources in build/release-NN, whose objects stay for the next run.
step_release_symbols() {
  local dir=$PSW_BUILD/release-${PSW_STAGE_NAME#stage-} out
  mkdir -p "$dir"
  log "building the release library (no PSW_TEST_HOOKS) in $dir"
  if ! { rsync -a --delete --exclude '*.o' --exclude '*.bc' --exclude '*.d' --exclude '*.so' \
           "$PSW_ROOT"/{Makefile,sources.mk,pg_stat_waits.control,extension,sql,src} "$dir/" &&
         make -s -C "$dir" -j2 PG_CONFIG="$PG_CONFIG" PSW_WERROR=1 PSW_TEST_HOOKS= WITH_REPORT=no \
           pg_stat_waits.so >/dev/null; }; then
    record release-symbols 0 1; return
  fi
  if out=$("$PSW_ROOT/tools/check_exports.pl" "$dir/pg_stat_waits.so" 2>&1); then
    record release-symbols 1 0
  else
    echo "$out" | head -40; record release-symbols 0 1
  fi
}

# make && make install where the report tool's libraries are missing (all
# of them, or yaml-cpp's and civetweb's): the extension still builds and
# installs and make names the packages (tools/check_make_install.pl: root,
# for its mount namespaces; its scratch build stays in build/make-install-NN).
step_make_install() {
  local out p f
  if [ "$(id -u)" -ne 0 ]; then
    log "make-install: needs root (mount namespaces): skipped"; PSW_SKIPPED=$((PSW_SKIPPED + 1)); return
  fi
  log "make && make install without the report tool's libraries (build/make-install-${PSW_STAGE_NAME#stage-})"
  out=$("$PSW_ROOT/tools/check_make_install.pl" "$PG_CONFIG" "$PSW_BUILD/make-install-${PSW_STAGE_NAME#stage-}" 2>&1)
  echo "$out" | grep -v '^ok ' | grep -v 'passed, .* failed$'
  read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' <<<"$out")
  record make-install "${p:-0}" "${f:-1}"
}

# ./run test --quick: what differs between majors, for the majors CI runs
# between the oldest and the newest (CONTRIBUTING.md): the release and test
# builds, the layers against this major's headers, pg_regress and the
# isolation specs, and the TAP files test/quick_schedule lists (one a line,
# each group saying why it differs between majors).
quick_schedule() {
  sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$PSW_ROOT/test/quick_schedule"
}

run_all_tests() {
  local t0=$SECONDS
  PSW_RESULTS=${PSW_RESULTS:-$PSW_STAGE/results}
  mkdir -p "$PSW_RESULTS" || die "cannot make $PSW_RESULTS"
  rm -f "$PSW_RESULTS"/[0-9][0-9]-* "$PSW_RESULTS/summary"
  PSW_LONG=0 PSW_QUICK=0
  case "${1:-}" in
    --long) PSW_LONG=1 ;;
    --quick) PSW_QUICK=1 ;;
    "") ;;
    *) die "usage: ./run test [--long|--quick]" ;;
  esac
  export PSW_LONG
  [ "$PSW_QUICK" = 1 ] || { step_unit; shellcheck_step; }
  test_files_step
  layers_step
  step_release_symbols
  [ "$PSW_QUICK" = 1 ] || step_make_install
  fetch_exporter
  psw_other_stages
  if prepare_work_tree; then
    step_installcheck
    step_prove
  else
    record work-tree 0 1
  fi
  [ "$PSW_LONG" = 1 ] && step_sanitizers
  echo
  summarize_results "$t0"
}

# ./run bench [--quick] [--only SECTION,...]: the benchmarks (bench/t/*.pl,
# sections named by their files) through prove as the cluster user in the
# work tree; bench/report.pl renders bench/results/ (and the README's table)
# from what they wrote into PSW_BENCH_DIR.
run_bench() {
  local a rc t0=$SECONDS cmd="./run bench"
  PSW_BENCH_MODE=full PSW_BENCH_ONLY=""
  while [ $# -gt 0 ]; do
    a=$1; shift
    case $a in
      --quick) PSW_BENCH_MODE=quick ;;
      --only) PSW_BENCH_ONLY=${1:-}; shift ;;
      --only=*) PSW_BENCH_ONLY=${a#--only=} ;;
      *) die "usage: ./run bench [--quick] [--only SECTION,...]" ;;
    esac
  done
  [ "$PSW_PG_MAJOR" = 15 ] || cmd+=" --pg $PSW_PG_MAJOR"
  [ "$PSW_BENCH_MODE" = quick ] && cmd+=" --quick"
  [ -n "$PSW_BENCH_ONLY" ] && cmd+=" --only $PSW_BENCH_ONLY"
  prepare_work_tree || die "cannot copy the tree for the benchmarks"
  PSW_BENCH_DIR=$(mktemp -d /tmp/pgsw-bench.XXXXXX)
  chmod 755 "$PSW_BENCH_DIR"
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$PSW_BENCH_DIR"
  export PSW_BENCH_DIR PSW_BENCH_MODE PSW_BENCH_ONLY
  work_make prove_installcheck PROVE_TESTS='bench/t/*.pl' PROVE_FLAGS="-I bench/lib"
  rc=$?
  # A run with a failed section is rendered, but never as a latest report.
  local failed=()
  [ "$rc" -eq 0 ] || failed=(--failed)
  perl "$PSW_ROOT/bench/report.pl" --dir "$PSW_BENCH_DIR" --out "$PSW_ROOT/bench/results" \
    --pg "$PSW_PG_MAJOR" --command "$cmd" --seconds $((SECONDS - t0)) --mode "$PSW_BENCH_MODE" \
    --only "$PSW_BENCH_ONLY" "${failed[@]+"${failed[@]}"}" --readme "$PSW_ROOT/README.md" || rc=1
  # PSW_BENCH_KEEP=1 keeps the raw figures and chunks for a look.
  if [ -n "${PSW_BENCH_KEEP:-}" ]; then log "bench: scratch kept in $PSW_BENCH_DIR"; else rm -rf "$PSW_BENCH_DIR"; fi
  return $rc
}

# run_tool SCRIPT [ARGS...]: ./run demo and ./run screenshots, Perl on
# PostgreSQL::Test::Cluster (tools/demo/), run like the tests: from the work
# tree as the cluster user, the staged bindir first in PATH, PostgreSQL's
# test modules and pg_regress (next to the staged PGXS) as PGXS gives them to
# the tests, test/perl in PERL5LIB. Its first argument is a directory of its
# own, $PSW_STAGE/demo (emptied first): the node, its log and what the tool
# writes.
run_tool() {
  local dir=$PSW_STAGE/demo script=$1 src; shift
  prepare_work_tree || die "cannot copy the tree for $script"
  rm -rf "$dir"; mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$dir"
  src=$(dirname "$(dirname "$("$PSW_STAGED_PG_CONFIG" --pgxs)")")   # .../lib/pgxs/src
  (cd "$dir" && as_os_user env PATH="$PSW_BINDIR:$PATH" TESTDIR="$dir" PG_REGRESS="$src/test/regress/pg_regress" \
     PERL5LIB="$src/test/perl:$PSW_WORK/test/perl" perl "$PSW_WORK/$script" "$dir" "$@")
}
