# Shared shell helpers for ./run: which PostgreSQL, packages, the staged
# installation, the build. Servers are started by pg_regress and
# PostgreSQL::Test::Cluster (the tests, the benchmarks, the demo). Source it;
# don't run it.
# shellcheck shell=bash

PSW_ROOT=${PSW_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PSW_BUILD=${PSW_BUILD:-$PSW_ROOT/build}
PSW_OS_USER=${PSW_OS_USER:-pgsw}
# The majors, how each is obtained and what CI runs on it: tools/pg/versions.tsv.
# shellcheck source=tools/pg/versions.sh
source "$PSW_ROOT/tools/pg/versions.sh"
# The pinned Citus and its majors: tools/citus/versions.tsv.
# shellcheck source=tools/citus/versions.sh
source "$PSW_ROOT/tools/citus/versions.sh"
PSW_PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PG_CONFIG=${PG_CONFIG:-$PSW_PG15_CONFIG}

# Packages, by what a command needs (on every server version: pgTAP and
# pg_wait_sampling are packaged for Debian's 15 only; pgTAP is SQL only and
# its files are staged into other versions too, pg_wait_sampling, a C
# library, runs on 15 only). ./run demo builds and installs the extension and
# the report tool, copies the tree for the cluster user (rsync) and drives
# psql and pgbench from Perl (IPC::Run): the base list alone.
PSW_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-contrib clang-14 llvm-14 g++ make
  pkg-config libpqxx-dev prometheus-cpp-dev libyaml-cpp-dev libssl-dev libcrypt-dev procps rsync libipc-run-perl)
# ./run build and ./run test add the unit tests (CMake, GoogleTest), the TAP
# and pgTAP harness, valgrind, the compat test's pg_wait_sampling, and what
# the report, exporter and browser checks drive.
# shellcheck disable=SC2034  # ./run picks the list
# PoWA's archivist (15 only) is a client of the pg_wait_sampling drop-in's test.
PSW_PACKAGES_TEST=(cmake libgtest-dev postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
  libipc-run-perl valgrind postgresql-15-pg-wait-sampling postgresql-15-powa rsync chromium tmux python3
  python3-yaml jq prometheus gnuplot-nox sqlsmith curl openssl iproute2)
# ./run bench adds callgrind, its peer pg_wait_sampling, the plots and the TAP harness.
# shellcheck disable=SC2034  # ./run picks the list
PSW_PACKAGES_BENCH=(valgrind postgresql-15-pg-wait-sampling gnuplot-nox libipc-run-perl rsync)
# What building PostgreSQL 16 to 19 from source needs (tools/pg/build_postgres.sh).
# Release tarballs since 17 ship no generated parser or scanner: bison and flex make them.
# Citus, built into the majors it supports (tools/citus/build_citus.sh), adds
# its compression and HTTP libraries and autoconf.
PSW_PACKAGES_PGSRC=(bzip2 gcc make bison flex perl libicu-dev liburing-dev zlib1g-dev pkg-config
  liblz4-dev libzstd-dev libcurl4-openssl-dev autoconf)

# Where the shared folder (pinned sources, client tarballs, pg_wait_sampling's
# tests) may be: next to the checkout, or next to a worktree's parent.
PSW_SHARED_CANDIDATES=("$PSW_ROOT/../shared" "$PSW_ROOT/../../shared")

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# psw_select_pg [--pg N] [args...]: sets PG_CONFIG from --pg MAJOR (a major
# of tools/pg/versions.tsv) or the environment (PG_CONFIG=...; default:
# Debian's 15); the remaining arguments are left in PSW_ARGS. A debian:
# major is the installed package's server; the others are built once from
# their pinned sources into a cache. A major marked cassert (19) is built
# with assertions (--enable-cassert) for every command but ./run bench
# (PSW_PG_CASSERT=0 there), which measures the release build: a misuse of
# PostgreSQL's APIs then fails a test, not a server in production.
psw_select_pg() {
  PSW_ARGS=()
  PSW_PG_PINNED=""
  local want="" build_args=() source
  while [ $# -gt 0 ]; do
    case "$1" in
      --pg) want=${2:?--pg needs a version}; shift 2 ;;
      --pg=*) want=${1#--pg=}; shift ;;
      *) PSW_ARGS+=("$1"); shift ;;
    esac
  done
  if [ -n "$want" ]; then
    source=$(pg_version_field "$want" source) ||
      die "--pg takes $(pg_majors_text ', ') (tools/pg/versions.tsv; or set PG_CONFIG=/path/to/pg_config for another installation)"
    case "$source" in
      debian:*) PG_CONFIG=/usr/lib/postgresql/$want/bin/pg_config ;;
      *) ensure_packages "${PSW_PACKAGES_PGSRC[@]}"
        [ "$(pg_version_field "$want" cassert)" = yes ] && [ "${PSW_PG_CASSERT:-1}" = 1 ] && build_args=(--cassert)
        PG_CONFIG=$("$PSW_ROOT/tools/pg/build_postgres.sh" "${build_args[@]+"${build_args[@]}"}" "$want") \
          || die "PostgreSQL $want could not be built"
        # Its build tree keeps PostgreSQL's own regression suite (built), which
        # test/t/700_postgres_regress.pl runs against a preloading server.
        PSW_PG_REGRESS_DIR=$(dirname "$(dirname "$(dirname "$PG_CONFIG")")")/src/src/test/regress
        export PSW_PG_REGRESS_DIR
        PSW_PG_PINNED=$want ;;
    esac
  fi
  [ -x "$PG_CONFIG" ] || die "no pg_config at $PG_CONFIG"
  PSW_PG_MAJOR=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
  # The assertion build stages apart from the release build of its major.
  PSW_STAGE_NAME=stage-$PSW_PG_MAJOR
  grep -q -- '--enable-cassert' <<<"$("$PG_CONFIG" --configure)" && PSW_STAGE_NAME+=-cassert
  PSW_STAGE=$PSW_BUILD/$PSW_STAGE_NAME
  export PG_CONFIG PSW_PG_MAJOR PSW_STAGE PSW_STAGE_NAME
  log "PostgreSQL $("$PG_CONFIG" --version | cut -d' ' -f2) ($PG_CONFIG)"
}

# ensure_packages [PACKAGE...]: installs what is missing of the base list
# and the given packages from Debian's archive (root only).
ensure_packages() {
  local missing=() p
  for p in "${PSW_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages (run as root or install them): ${missing[*]}"
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local try
  for try in 1 2 3 4 5 6 7 8 9 10; do   # another apt may hold the lock
    apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null && break
    [ "$try" -eq 10 ] && die "apt-get install ${missing[*]} failed"
    sleep 30
  done
  # Debian starts a default cluster on install; the project never uses it.
  # pg_ctlcluster says "Cluster is not running." on stdout when it is
  # already stopped (a second install after the first stopped it).
  pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
}

# An unprivileged OS user to own test clusters (PostgreSQL refuses root).
ensure_os_user() {
  if [ "$(id -u)" -ne 0 ]; then PSW_OS_USER=$(id -un); return 0; fi
  id "$PSW_OS_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/bash "$PSW_OS_USER"
}

as_os_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PSW_OS_USER" -- "$@"; else "$@"; fi
}

# ensure_citus: Citus (tools/citus/versions.tsv) built into the PostgreSQL
# of --pg MAJOR when the pinned Citus supports it and that PostgreSQL was
# built from its pinned source (PSW_PG_PINNED, set by psw_select_pg): once,
# cached with it, before stage_postgres copies it (test/t/800_citus_cluster.pl
# preloads it there; it skips, saying why, where Citus is not). A build
# already under way (CI's background builder) is waited for. No Citus source
# next to the checkout is a line in the log; a failed build fails the setup.
ensure_citus() {
  local got rc=0
  [ -n "${PSW_PG_PINNED:-}" ] && citus_row "$PSW_PG_PINNED" >/dev/null || return 0
  got=$("$PSW_ROOT/tools/citus/build_citus.sh" "$PSW_PG_PINNED") || rc=$?
  case $rc in
    0) [ "$got" = "$PG_CONFIG" ] || log "Citus went into $got, not $PG_CONFIG: 800_citus_cluster.pl will skip" ;;
    3) log "no Citus source next to the checkout: 800_citus_cluster.pl will skip" ;;
    *) log "Citus could not be built for PostgreSQL $PSW_PG_PINNED (tools/citus/build_citus.sh)"; return 1 ;;
  esac
}

# A private copy of the PostgreSQL installation with pg_stat_waits installed
# into it (like PostgreSQL's own temp-install): no writes to system
# directories, and several checkouts can test side by side. The copy is
# relocatable: its pg_config reports the staged paths, so PGXS test targets
# run with PG_CONFIG=$PSW_STAGED_PG_CONFIG find the staged extension.
stage_postgres() {
  local bindir libdir sharedir d
  PSW_PG_MAJOR=${PSW_PG_MAJOR:-$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')}
  PSW_STAGE_NAME=${PSW_STAGE_NAME:-stage-$PSW_PG_MAJOR}
  PSW_STAGE=${PSW_STAGE:-$PSW_BUILD/$PSW_STAGE_NAME}
  bindir=$("$PG_CONFIG" --bindir); libdir=$("$PG_CONFIG" --pkglibdir); sharedir=$("$PG_CONFIG" --sharedir)
  # The cluster user must reach the staged binaries: a checkout under a
  # private directory (e.g. /root) gets its stage under /var/tmp instead.
  mkdir -p "$PSW_STAGE"
  if [ "$(id -u)" -eq 0 ] && ! runuser -u "$PSW_OS_USER" -- test -x "$PSW_STAGE" 2>/dev/null; then
    PSW_STAGE=/var/tmp/pg_stat_waits-$PSW_STAGE_NAME-$(printf '%s' "$PSW_ROOT" | md5sum | cut -c1-12)
    mkdir -p "$PSW_STAGE"
    log "checkout not readable by $PSW_OS_USER: staging PostgreSQL in $PSW_STAGE"
  fi
  chmod 755 "$PSW_STAGE"
  for d in "$bindir" "$libdir" "$sharedir"; do
    mkdir -p "$PSW_STAGE$d"
    cp -a -u "$d/." "$PSW_STAGE$d/" || return 1
  done
  # pgTAP is SQL only; Debian packages it for 15: stage its files elsewhere.
  if [ ! -e "$PSW_STAGE$sharedir/extension/pgtap.control" ] && [ -e /usr/share/postgresql/15/extension/pgtap.control ]; then
    cp /usr/share/postgresql/15/extension/pgtap* "$PSW_STAGE$sharedir/extension/"
  fi
  PSW_BINDIR=$PSW_STAGE$bindir
  PSW_STAGED_PG_CONFIG=$PSW_BINDIR/pg_config
  export PSW_BINDIR PSW_STAGE PSW_STAGED_PG_CONFIG
  # Where this stage's pg_config is, for tests that start a node of another
  # major beside their own (psw_other_stages in test_runner.sh).
  echo "$PSW_STAGED_PG_CONFIG" >"$PSW_BUILD/$PSW_STAGE_NAME.pg_config"
  chmod -R a+rX "$PSW_STAGE"
  chmod a+rX "$PSW_BUILD" 2>/dev/null || true
}

# Builds with the given server's PGXS (warnings are errors here, not in
# release builds) and installs into the stage: the extension, the report
# tool and, with PSW_TEST_HOOKS=1 (a test build: ./run test, ./run bench),
# the test module. Objects of another server version are cleaned.
build_extension() {
  local mk=(make -s PG_CONFIG="$PG_CONFIG" PSW_WERROR=1 PSW_TEST_HOOKS="${PSW_TEST_HOOKS:-}") stamp=$PSW_BUILD/.pg_config
  mkdir -p "$PSW_BUILD"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$PG_CONFIG" ]; then
    "${mk[@]}" -C "$PSW_ROOT" clean >/dev/null 2>&1 || true
    "${mk[@]}" -C "$PSW_ROOT/test/modules/pg_stat_waits_test" clean >/dev/null 2>&1 || true
    echo "$PG_CONFIG" >"$stamp"
  fi
  log "building pg_stat_waits (PGXS, $PG_CONFIG${PSW_TEST_HOOKS:+, test build})"
  "${mk[@]}" -C "$PSW_ROOT" -j2 >/dev/null || return 1
  "${mk[@]}" -C "$PSW_ROOT" install DESTDIR="$PSW_STAGE" >/dev/null || return 1
  [ -n "${PSW_TEST_HOOKS:-}" ] || { chmod -R a+rX "$PSW_STAGE"; return 0; }
  log "building the test module (test/modules/pg_stat_waits_test)"
  "${mk[@]}" -C "$PSW_ROOT/test/modules/pg_stat_waits_test" >/dev/null || return 1
  "${mk[@]}" -C "$PSW_ROOT/test/modules/pg_stat_waits_test" install DESTDIR="$PSW_STAGE" >/dev/null || return 1
  chmod -R a+rX "$PSW_STAGE"
}

# The pg_wait_sampling drop-in's own staged installation, $PSW_STAGE-dropin:
# a copy of the stage above without Debian's pg_wait_sampling (which stays
# there, the reference of the compatibility tests and the bench) and with the
# drop-in (extension/pg_wait_sampling/) and pg_profile, from the pinned tarball in
# ../shared/clients (dblink, which pg_profile needs, from the server's
# source tree where it is not installed). Its installation prefix, for
# PostgreSQL::Test::Cluster's install_path, is written to
# pg_stat_waits-dropin.path in the stage's sharedir, where the drop-in's
# tests (test/t/025_*, 026_*) look: by ./run test and by hand alike.
stage_dropin() {
  local dst=$PSW_STAGE-dropin d sharedir tarball src
  sharedir=$("$PG_CONFIG" --sharedir)
  log "staging the pg_wait_sampling drop-in in $dst"
  for d in "$("$PG_CONFIG" --bindir)" "$("$PG_CONFIG" --pkglibdir)" "$sharedir"; do
    mkdir -p "$dst$d"
    rsync -a --delete --delete-excluded --exclude pg_wait_sampling.so --exclude pg_wait_sampling.control \
      --exclude 'pg_wait_sampling--*.sql' --exclude pg_wait_sampling.index.bc --exclude bitcode/pg_wait_sampling/ \
      --exclude pg_stat_waits-dropin.path "$PSW_STAGE$d/" "$dst$d/" || return 1
  done
  make -s -C "$PSW_ROOT" install-dropin PG_CONFIG="$PG_CONFIG" DESTDIR="$dst" >/dev/null || return 1
  src=$(dirname "$(dirname "$(dirname "$PG_CONFIG")")")/src/contrib/dblink
  if [ ! -e "$dst$sharedir/extension/dblink.control" ] && [ -d "$src" ]; then
    if ! { rm -rf "$PSW_BUILD/dblink" && cp -a "$src" "$PSW_BUILD/dblink" &&
           make -s -C "$PSW_BUILD/dblink" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" install DESTDIR="$dst" >/dev/null 2>&1; }; then
      log "dblink could not be built from $src: pg_profile's checks will skip"
    fi
  fi
  for d in "${PSW_SHARED_CANDIDATES[@]}"; do
    for tarball in "$d"/clients/pg_profile-*.tar.gz; do [ -f "$tarball" ] && break 2; done
  done
  if [ -f "$tarball" ] && ! { rm -rf "$PSW_BUILD/pg_profile" && tar -xzf "$tarball" -C "$PSW_BUILD" &&
       make -s -C "$PSW_BUILD/pg_profile" USE_PGXS=y PG_CONFIG="$PG_CONFIG" install DESTDIR="$dst" >/dev/null; }; then
    log "pg_profile could not be installed from $tarball: its checks will skip"
  fi
  (cd "$dst$(dirname "$("$PG_CONFIG" --bindir)")" && pwd) >"$PSW_STAGE$sharedir/pg_stat_waits-dropin.path"
  chmod -R a+rX "$dst"
  chmod a+r "$PSW_STAGE$sharedir/pg_stat_waits-dropin.path"
}

# The core's unit tests and the report tool (CMake); arguments go to cmake.
# shellcheck disable=SC2120
build_cmake() {
  log "building unit tests and the report tool (CMake)"
  cmake -S "$PSW_ROOT" -B "$PSW_BUILD/cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPSW_WERROR=ON "$@" >/dev/null || return 1
  cmake --build "$PSW_BUILD/cmake" -j2 >/dev/null || return 1
}
