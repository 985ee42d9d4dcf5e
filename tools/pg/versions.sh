# Reads tools/pg/versions.tsv, the one list of the PostgreSQL majors (how
# each is obtained, its tarball's sha256, what CI runs on it, whether tests
# use an assertion build). Sourced by tools/lib/common.sh (./run),
# tools/pg/build_postgres.sh and .ci/run; don't run it.
# shellcheck shell=bash

PSW_VERSIONS_TSV=${PSW_VERSIONS_TSV:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/versions.tsv}

# pg_majors: every major, one a line, in the table's order.
pg_majors() {
  awk -F'\t' '!/^#/ && NF { print $1 }' "$PSW_VERSIONS_TSV"
}

# pg_majors_text [SEP]: the majors joined by SEP (default "|"), for usage lines.
pg_majors_text() {
  pg_majors | awk -v sep="${1:-|}" 'NR > 1 { printf "%s", sep } { printf "%s", $0 } END { print "" }'
}

# pg_version_field MAJOR COLUMN: one column (source, sha256, ci, cassert,
# recreate) of a major's row; fails, printing nothing, for an unknown major.
pg_version_field() {
  local col
  case "$2" in
    source) col=2 ;; sha256) col=3 ;; ci) col=4 ;; cassert) col=5 ;; recreate) col=6 ;;
    *) echo "pg_version_field: no column $2" >&2; return 2 ;;
  esac
  awk -F'\t' -v m="$1" -v c="$col" '!/^#/ && $1 == m { print $c; found = 1 } END { exit !found }' \
    "$PSW_VERSIONS_TSV"
}

# pg_ci_rows: "MAJOR CI CASSERT SOURCE" for each major CI runs, in the order
# it runs them: the full suites first (the oldest and the newest, which
# fail first when something breaks), then the --quick ones, each group in
# the table's order.
pg_ci_rows() {
  awk -F'\t' '!/^#/ && NF && $4 ~ /^full/ { print $1, $4, $5, $2 }' "$PSW_VERSIONS_TSV"
  awk -F'\t' '!/^#/ && NF && $4 == "quick" { print $1, $4, $5, $2 }' "$PSW_VERSIONS_TSV"
}
