#!/usr/bin/env bash
# Builds the pinned Citus (tools/citus/versions.tsv) against the cached
# PostgreSQL of a major and installs it into that PostgreSQL's prefix, so
# the stage ./run test copies from it (stage_postgres in tools/lib/common.sh)
# holds Citus too; prints that PostgreSQL's pg_config.
#   tools/citus/build_citus.sh MAJOR [SRC_DIR]
# MAJOR must be one of the majors the Citus row supports (exit 2 otherwise)
# and a major that tools/pg/build_postgres.sh builds (the one ./run test
# uses: the assertion build where versions.tsv says so). SRC_DIR holds the
# tarball (default: $PSW_CITUS_SRC, else ../shared/citus-src next to the
# checkout or, in a linked git worktree, next to its main checkout); exit 3
# when it is not there. The tarball's sha256 is checked against the row
# before anything is unpacked. The build lives inside the PostgreSQL's cache
# entry, keyed by the Citus version and sha256 (a new tarball builds again;
# a rebuilt PostgreSQL drops it), with a lock and a .done marker like
# build_postgres.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
major=${1:?usage: build_citus.sh MAJOR [SRC_DIR]}
src_dir=${2:-${PSW_CITUS_SRC:-$root/../shared/citus-src}}
# A linked git worktree looks next to its main checkout too.
if [ ! -d "$src_dir" ] && common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
  [ -d "$(dirname "$common")/../shared/citus-src" ] && src_dir=$(dirname "$common")/../shared/citus-src
fi

# shellcheck source=tools/citus/versions.sh
source "$root/tools/citus/versions.sh"
if ! row=$(citus_row "$major"); then
  echo "no Citus in tools/citus/versions.tsv supports PostgreSQL $major" >&2; exit 2
fi
IFS=$'\t' read -r version name want <<<"$row"
tarball=$src_dir/$name
if [ ! -f "$tarball" ]; then echo "no Citus $version source ($name) in $src_dir" >&2; exit 3; fi
have=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$want" != "$have" ]; then
  echo "sha256 of $tarball is $have, tools/citus/versions.tsv says '$want'" >&2; exit 1
fi

# shellcheck source=tools/pg/versions.sh
source "$root/tools/pg/versions.sh"
pg_args=()
[ "$(pg_version_field "$major" cassert)" = yes ] && pg_args=(--cassert)
pg_config=$("$root/tools/pg/build_postgres.sh" "${pg_args[@]+"${pg_args[@]}"}" "$major")
# The PostgreSQL's cache entry: <cache>/<pg key>/install/bin/pg_config.
entry=$(dirname "$(dirname "$(dirname "$pg_config")")")
key=citus-$version-${have:0:12}
dir=$entry/$key
if [ -f "$dir/.done" ]; then echo "$pg_config"; exit 0; fi

# One build at a time: a second caller waits for the first and reuses it.
exec 9>"$entry/$key.lock"
if ! flock -n 9; then
  echo "waiting for another build of Citus $version for PostgreSQL $major to finish" >&2
  flock 9
fi
if [ -f "$dir/.done" ]; then echo "$pg_config"; exit 0; fi

echo "building Citus $version into $(dirname "$(dirname "$pg_config")") (once; cached)" >&2
rm -rf "$dir"
mkdir -p "$dir/src"
tar -xzf "$tarball" -C "$dir/src" --strip-components=1
cd "$dir/src"
./configure PG_CONFIG="$pg_config" >"$dir/configure.log" 2>&1 \
  || { tail -30 "$dir/configure.log" >&2; exit 1; }
{
  make -j"$(nproc)" -s
  make -s install
} >"$dir/build.log" 2>&1 || { tail -40 "$dir/build.log" >&2; exit 1; }
touch "$dir/.done"
echo "$pg_config"
