#!/usr/bin/env bash
# pg_wait_sampling's own regression tests, as a user switching to pg_stat_waits
# runs them: test/sql/pg_wait_sampling_{load,queries}.sql and their expected
# output are pg_wait_sampling's sql/ and expected/ files with only the
# CREATE/DROP EXTENSION pg_wait_sampling lines replaced by creating and dropping
# pg_wait_sampling_compat; every query in between is theirs, unchanged.
#
#   test/pg_wait_sampling_tests.sh DIR          regenerate from DIR (a release's sql/, expected/)
#   test/pg_wait_sampling_tests.sh --check DIR  exit 1 if the committed files differ from DIR's
# DIR here: ../shared/compat-tests/pg_wait_sampling (pg_wait_sampling 1.1.4's tests, kept as data).
set -euo pipefail
check=no
if [ "${1:-}" = --check ]; then check=yes; shift; fi
src=${1:?usage: $0 [--check] DIR}
here=$(cd "$(dirname "$0")" && pwd)

swap() {  # the two lines that change; the rest passes through byte for byte
  # CASCADE creates pg_stat_waits where it is missing; its NOTICE depends on
  # that, so notices are quiet for this one statement.
  sed -e 's/^CREATE EXTENSION pg_wait_sampling;$/SET client_min_messages = warning;\nCREATE EXTENSION pg_wait_sampling_compat CASCADE;\nRESET client_min_messages;/' \
      -e 's/^DROP EXTENSION pg_wait_sampling;$/DROP EXTENSION pg_wait_sampling_compat;/' "$1"
}

status=0
# load_1.out is the expected output of psql 10 and later (load.out: 9.x).
for pair in sql/load.sql:sql/pg_wait_sampling_load.sql expected/load_1.out:expected/pg_wait_sampling_load.out \
            sql/queries.sql:sql/pg_wait_sampling_queries.sql expected/queries.out:expected/pg_wait_sampling_queries.out; do
  from=$src/${pair%%:*}; to=$here/${pair#*:}
  if ! grep -q '^CREATE EXTENSION pg_wait_sampling;$' "$from" || ! grep -q '^DROP EXTENSION pg_wait_sampling;$' "$from"; then
    echo "$from: no CREATE/DROP EXTENSION pg_wait_sampling line" >&2; exit 2
  fi
  if [ $check = yes ]; then
    if ! diff -u "$to" <(swap "$from"); then echo "$to differs from $from" >&2; status=1; fi
  else
    swap "$from" >"$to"
  fi
done
exit $status
