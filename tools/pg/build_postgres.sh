#!/usr/bin/env bash
# Builds a PostgreSQL major from its pinned source tarball into a cache
# outside the checkout and prints the path of its pg_config.
#   tools/pg/build_postgres.sh [--cassert] MAJOR [SRC_DIR]
# MAJOR is a major whose row in tools/pg/versions.tsv names a pinned tarball
# (git exports of a REL_NN_STABLE commit, or Debian's orig tarball: how each
# was made is in that row and in tools/pg/README.md).
# --cassert builds with --enable-cassert (assertions on, as PostgreSQL's
# buildfarm runs), into a cache key of its own. SRC_DIR holds the tarballs
# (default: $PSW_PG_SRC, else ../shared/pg-src next to the checkout or, in a
# linked git worktree, next to its main checkout). The tarball's sha256 is
# checked against its row in tools/pg/versions.tsv before anything is unpacked. The
# cache key is version and sha256, so a new tarball builds a new prefix and an
# interrupted build is redone. Cache root: $PSW_PG_CACHE (default
# /var/cache/pg_stat_waits).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cassert=""
if [ "${1:-}" = --cassert ]; then cassert=--enable-cassert; shift; fi
major=${1:?usage: build_postgres.sh [--cassert] MAJOR [SRC_DIR]}
src_dir=${2:-${PSW_PG_SRC:-$root/../shared/pg-src}}
# A linked git worktree looks next to its main checkout too.
if [ ! -d "$src_dir" ] && common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
  [ -d "$(dirname "$common")/../shared/pg-src" ] && src_dir=$(dirname "$common")/../shared/pg-src
fi
cache=${PSW_PG_CACHE:-/var/cache/pg_stat_waits}

# shellcheck source=tools/pg/versions.sh
source "$root/tools/pg/versions.sh"
name=$(pg_version_field "$major" source) || name=""
case "$name" in
  ""|debian:*) echo "no pinned source for PostgreSQL $major in tools/pg/versions.tsv" >&2; exit 1 ;;
esac
tarball=$src_dir/$name
if [ ! -f "$tarball" ]; then echo "no PostgreSQL $major source ($name) in $src_dir" >&2; exit 1; fi
want=$(pg_version_field "$major" sha256)
have=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$want" != "$have" ]; then
  echo "sha256 of $tarball is $have, tools/pg/versions.tsv says '$want'" >&2; exit 1
fi

version=$(printf '%s' "$name" | sed -e 's/^postgresql-[0-9]*_\(.*\)\.orig\.tar\.bz2$/\1/' \
  -e 's/^postgresql-\(.*\)\.src\.tar\.bz2$/\1/')
key=pg-$version-${have:0:12}${cassert:+-cassert}
prefix=$cache/$key/install
build=$cache/$key/src
if [ -f "$cache/$key/.done" ]; then echo "$prefix/bin/pg_config"; exit 0; fi

# One build at a time: a second caller waits for the first and reuses it.
mkdir -p "$cache"
exec 9>"$cache/$key.lock"
if ! flock -n 9; then
  echo "waiting for another build of PostgreSQL $version to finish" >&2
  flock 9
fi
if [ -f "$cache/$key/.done" ]; then echo "$prefix/bin/pg_config"; exit 0; fi

echo "building PostgreSQL $version into $prefix (once; cached)" >&2
rm -rf "${cache:?}/$key"
mkdir -p "$build"
tar -xjf "$tarball" -C "$build" --strip-components=1
cd "$build"
# --enable-tap-tests installs PostgreSQL::Test::Cluster into PGXS;
# liburing (18 and later) gives io_method=io_uring. No -z now: like any
# from-source build the binary is lazily bound with partial RELRO.
opts=(--enable-debug --enable-tap-tests --with-icu --without-readline)
[ "$major" -ge 18 ] && opts+=(--with-liburing)
[ -n "$cassert" ] && opts+=("$cassert")
./configure --prefix="$prefix" "${opts[@]}" \
  CFLAGS='-O2 -g' >"$cache/$key/configure.log" 2>&1 \
  || { tail -30 "$cache/$key/configure.log" >&2; exit 1; }
jobs=$(nproc)
{
  make -j"$jobs" -s
  make -s install
  make -s -C contrib/pg_stat_statements install
  make -s -C src/test/isolation install
  make -s -C src/test/regress
} >"$cache/$key/build.log" 2>&1 || { tail -40 "$cache/$key/build.log" >&2; exit 1; }
touch "$cache/$key/.done"
echo "$prefix/bin/pg_config"
