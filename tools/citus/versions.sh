# Reads tools/citus/versions.tsv, the pinned Citus and the PostgreSQL majors
# it supports. Sourced by tools/citus/build_citus.sh, tools/lib/common.sh
# (./run test builds Citus for those majors) and .ci/run; don't run it.
# shellcheck shell=bash

PSW_CITUS_TSV=${PSW_CITUS_TSV:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/versions.tsv}

# citus_row MAJOR: "VERSION<tab>FILE<tab>SHA256" of the Citus that supports
# PostgreSQL MAJOR; fails, printing nothing, when none does.
citus_row() {
  awk -F'\t' -v m="$1" '!/^#/ && NF {
      n = split($4, a, " ")
      for (i = 1; i <= n; i++) if (a[i] == m) { print $1 "\t" $2 "\t" $3; found = 1; exit }
    } END { exit !found }' "$PSW_CITUS_TSV"
}
