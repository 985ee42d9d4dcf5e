# valgrind memcheck of `postgres --single` with pg_stat_waits preloaded: no
# error may come from the extension's code. (Single-user mode loads
# shared_preload_libraries and runs every hook; bgworkers don't run there.)
# shellcheck shell=bash

suite_memcheck() {
  local p=0 f=0 dir ours total
  dir=$(mktemp -d /tmp/pgsw.vg.XXXXXX)
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$dir"
  as_os_user "$PSW_BINDIR/initdb" -D "$dir/data" -U postgres --no-sync >/dev/null 2>&1
  cp "$PSW_ROOT/test/lib/memcheck.sql" "$PSW_ROOT/test/valgrind.supp" "$dir/" && chmod a+r "$dir/memcheck.sql" "$dir/valgrind.supp"
  as_os_user valgrind --quiet --error-limit=no --num-callers=40 --suppressions="$dir/valgrind.supp" \
    --log-file="$dir/valgrind.log" "$PSW_BINDIR/postgres" --single -D "$dir/data" \
    -c shared_preload_libraries=pg_stat_waits -c fsync=off -c pg_stat_waits.timing=on postgres \
    <"$dir/memcheck.sql" >"$dir/out.txt" 2>&1 || true
  if grep -q 'memcheck_done' "$dir/out.txt" && grep -q 'memcheck_activity_rows = "t"' "$dir/out.txt"; then
    p=$((p + 1))
  else
    f=$((f + 1)); echo "FAILED: postgres --single did not run the script under valgrind" >&2; tail -20 "$dir/out.txt" >&2
  fi
  # Error blocks are separated by "==PID== " blank lines; count those naming our library.
  total=$(grep -cE '^==[0-9]+== [A-Z][a-z]' "$dir/valgrind.log" || true)
  ours=$(awk '/^==[0-9]+== $/ { if (blk ~ /pg_stat_waits/) n++; blk=""; next } { blk = blk $0 "\n" }
              END { if (blk ~ /pg_stat_waits/) n++; print n+0 }' "$dir/valgrind.log")
  echo "memcheck: $total error(s) reported, $ours involving pg_stat_waits"
  if [ "$ours" -eq 0 ]; then p=$((p + 1)); else
    f=$((f + 1)); echo "FAILED: valgrind errors in pg_stat_waits code:" >&2; head -80 "$dir/valgrind.log" >&2
  fi
  rm -rf "$dir"
  record memcheck "$p" "$f"
}

suite_memcheck
