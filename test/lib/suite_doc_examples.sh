# The SQL examples of README.md and docs/*.md run as written: every ```sql
# block, and every inline `...` span that is a complete statement (ends with
# ';', or is a SET / ALTER SYSTEM SET / SHOW / RESET), each in a fresh
# database as a superuser with ON_ERROR_STOP. pg_stat_waits is created first
# unless the example creates it itself. Settings an example changes with
# ALTER SYSTEM are reset afterwards.
# shellcheck shell=bash

suite_doc_examples() {
  local _errexit=$-
  set +e
  local p=0 f=0 db=psw_doc_examples n=0 file tmp
  tmp=$(mktemp -d /tmp/psw_doc_examples.XXXXXX)
  # One file per example: NAME.sql, first line a comment saying where it is.
  for file in "$PSW_ROOT"/README.md "$PSW_ROOT"/docs/*.md; do
    local rel=${file#"$PSW_ROOT"/}
    awk -v src="$rel" -v base="${rel//\//_}" -v dir="$tmp" '
      /^```sql[ \t]*$/ { inblock = 1; n++; out = sprintf("%s/%s.block%02d.sql", dir, base, n);
                         printf "-- %s:%d (sql block)\n", src, NR + 1 > out; next }
      /^```/ && inblock { inblock = 0; close(out); next }
      inblock { print > out; next }
      {
        line = $0
        while (match(line, /`[^`]+`/)) {
          span = substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH)
          if (span ~ /;$/ || span ~ /^(SET|ALTER SYSTEM SET|SHOW|RESET) [a-z_.]+( (=|TO) .+)?$/) {
            m++; out2 = sprintf("%s/%s.inline%02d.sql", dir, base, m)
            printf "-- %s:%d (inline)\n%s%s\n", src, NR, span, (span ~ /;$/ ? "" : ";") > out2; close(out2)
          }
        }
      }' "$file"
  done

  local ex where out settings s
  for ex in "$tmp"/*.sql; do
    [ -f "$ex" ] || continue
    n=$((n + 1))
    where=$(head -1 "$ex" | sed 's/^-- //')
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1
    grep -qi 'CREATE EXTENSION pg_stat_waits' "$ex" || psql -X -q -d $db -c "CREATE EXTENSION pg_stat_waits" >/dev/null
    out=$(psql -X -q -v ON_ERROR_STOP=1 -d $db -f "$ex" 2>&1 >/dev/null)
    if [ $? -eq 0 ]; then
      p=$((p + 1)); echo "ok - $where runs"
    else
      f=$((f + 1)); echo "not ok - $where runs"; sed 's/^/#   /' "$ex"; echo "$out" | sed 's/^/#   /'
    fi
    settings=$(grep -oiE 'ALTER SYSTEM SET [a-z_.]+' "$ex" | awk '{print $4}' | sort -u)
    for s in $settings; do psql -X -q -d postgres -c "ALTER SYSTEM RESET $s" >/dev/null; done
    [ -n "$settings" ] && psql -X -q -d postgres -c "SELECT pg_reload_conf()" >/dev/null
  done
  if [ $n -eq 0 ]; then f=$((f + 1)); echo "not ok - found SQL examples to run"; fi
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
  rm -rf "$tmp"
  record doc-examples "$p" "$f"
  [[ $_errexit == *e* ]] && set -e
  return 0
}

suite_doc_examples
