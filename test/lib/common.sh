# Shared shell helpers for ./run, tests and benchmarks: packages, the staged
# PostgreSQL installation, and throwaway clusters. Source it; don't run it.
# shellcheck shell=bash

PSW_ROOT=${PSW_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PSW_BUILD=${PSW_BUILD:-$PSW_ROOT/build}
PSW_STAGE=$PSW_BUILD/stage
PSW_OS_USER=${PSW_OS_USER:-pgsw}

PSW_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-contrib clang-14 llvm-14 libpqxx-dev
  postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl libgtest-dev cmake g++ make valgrind
  postgresql-15-pg-wait-sampling pkg-config gnuplot-nox procps chromium tmux python3 python3-yaml jq
  prometheus-cpp-dev prometheus libipc-run-perl)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Installs what is missing from Debian's archive (root only).
ensure_packages() {
  local missing=() p
  for p in "${PSW_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages (run as root or install them): ${missing[*]}"
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts a default cluster on install; the project never uses it.
  pg_ctlcluster 15 main stop 2>/dev/null || true
}

# An unprivileged OS user to own test clusters (PostgreSQL refuses root).
ensure_os_user() {
  if [ "$(id -u)" -ne 0 ]; then PSW_OS_USER=$(id -un); return 0; fi
  id "$PSW_OS_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/bash "$PSW_OS_USER"
}

as_os_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PSW_OS_USER" -- "$@"; else "$@"; fi
}

# A private copy of the PostgreSQL installation with pg_stat_waits installed
# into it (like PostgreSQL's own temp-install): no writes to system
# directories, and several checkouts can test side by side.
stage_postgres() {
  local bindir libdir sharedir
  bindir=$($PG_CONFIG --bindir); libdir=$($PG_CONFIG --pkglibdir); sharedir=$($PG_CONFIG --sharedir)
  mkdir -p "$PSW_STAGE"
  # The cluster user must reach the staged binaries: a checkout under a
  # private directory (e.g. /root) gets its stage under /var/tmp instead.
  if [ "$(id -u)" -eq 0 ] && ! runuser -u "$PSW_OS_USER" -- test -x "$PSW_STAGE" 2>/dev/null; then
    PSW_STAGE=/var/tmp/pg_stat_waits-stage-$(printf '%s' "$PSW_ROOT" | md5sum | cut -c1-12)
    mkdir -p "$PSW_STAGE"
    chmod 755 "$PSW_STAGE"
    log "checkout not readable by $PSW_OS_USER: staging PostgreSQL in $PSW_STAGE"
  fi
  for d in "$bindir" "$libdir" "$sharedir"; do
    mkdir -p "$PSW_STAGE$d"
    cp -a -u "$d/." "$PSW_STAGE$d/"
  done
  PSW_BINDIR=$PSW_STAGE$bindir
  export PSW_BINDIR PSW_STAGE
  chmod -R a+rX "$PSW_STAGE"
  chmod a+rX "$PSW_BUILD" 2>/dev/null || true
}

build_extension() {
  log "building pg_stat_waits (PGXS)"
  make -C "$PSW_ROOT" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >/dev/null
  make -C "$PSW_ROOT" -s install PG_CONFIG="$PG_CONFIG" DESTDIR="$PSW_STAGE" >/dev/null
}

build_cmake() {
  log "building unit and integration tests (CMake)"
  cmake -S "$PSW_ROOT" -B "$PSW_BUILD/cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$PSW_BUILD/cmake" -j"$(nproc)" >/dev/null
}

# Picks a free TCP port from $1 upwards.
free_port() {
  local p=${1:-54329}
  while (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# cluster_create DIR PORT [postgresql.conf lines...]: initdb + config.
cluster_create() {
  local dir=$1 port=$2; shift 2
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$dir"
  as_os_user "$PSW_BINDIR/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C >/dev/null
  {
    echo "port = $port"
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$dir'"
    echo "shared_preload_libraries = 'pg_stat_waits'"
    echo "max_connections = 200"
    echo "fsync = on"
    echo "logging_collector = off"
    printf '%s\n' "$@"
  } | as_os_user tee -a "$dir/data/postgresql.conf" >/dev/null
}

cluster_start() {
  local dir=$1
  as_os_user "$PSW_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null \
    || { tail -20 "$dir/server.log" >&2; return 1; }
}

cluster_stop() {
  local dir=$1
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_os_user "$PSW_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 \
    || as_os_user "$PSW_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
}

cluster_restart() {
  local dir=$1
  as_os_user "$PSW_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null
}
