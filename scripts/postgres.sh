#!/usr/bin/env bash
# `make postgres`: a throwaway PostgreSQL cluster with pgvector on 127.0.0.1, for development
# and for the tests' PostgreSQL store (docs/postgres.md). Idempotent: a second run finds the
# cluster running and prints the same URL. The URL is the last line printed (on stdout);
# everything else goes to stderr.
#
#   scripts/postgres.sh          install what is missing, start the cluster, print its URL
#   scripts/postgres.sh stop     stop the cluster (its data stays for the next start)
#   scripts/postgres.sh destroy  stop it and delete its data
#
# What it installs, only when missing, and only from Debian's package registry:
#   - PostgreSQL 15 or later (postgresql-15), when no server is on the machine;
#   - pgvector, built from Debian's source package (trixie's `pgvector`; bookworm has none)
#     against the headers of Debian's postgresql-server-dev package of the installed server,
#     unpacked privately: neither clang nor llvm is needed (no JIT bitcode is built).
# The cluster lives in $FLEETMEM_PG_DIR (default: .venv/postgres in the repository), listens
# on 127.0.0.1 only on a free port (kept for later runs), with no Unix socket, and a random
# password for the role `fleetmem`. It is for tests: fsync and synchronous commit are off.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STATE=${FLEETMEM_PG_DIR:-$ROOT/.venv/postgres}
MIN_MAJOR=15
# The Debian suite whose source package of pgvector is built (bookworm does not have one).
PGVECTOR_SUITE=${PGVECTOR_SUITE:-trixie}
ROLE=fleetmem
DATABASE=fleetmem

log() { echo "postgres: $*" >&2; }
die() {
  echo "postgres: error: $*" >&2
  exit 1
}

is_root() { [ "$(id -u)" = 0 ]; }

as_root() {
  if is_root; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    die "installing needs root (or sudo): $*"
  fi
}

# PostgreSQL refuses to run as root: as root, the cluster's processes run as `postgres`.
as_owner() {
  if is_root; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

apt_quiet() { DEBIAN_FRONTEND=noninteractive "$@" >&2; }

find_bindir() {
  local best="" best_major=0 dir major
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/postgres" ] || continue
    major=$(basename "$(dirname "$dir")")
    case $major in '' | *[!0-9]*) continue ;; esac
    if [ "$major" -ge "$MIN_MAJOR" ] && [ "$major" -gt "$best_major" ]; then
      best=$dir best_major=$major
    fi
  done
  echo "$best"
}

install_server() {
  log "no PostgreSQL $MIN_MAJOR or later found: installing postgresql-$MIN_MAJOR from Debian"
  # Debian's package would create and start a system cluster on port 5432: not wanted here.
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    as_root mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | as_root tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  apt_quiet as_root apt-get update -qq
  apt_quiet as_root apt-get install -y -qq -o Dpkg::Options::=--force-confold "postgresql-$MIN_MAJOR"
}

build_pgvector() {
  local bindir=$1 major=$2 build="$STATE/build" version
  log "pgvector is missing: building it from Debian's source package ($PGVECTOR_SUITE)"
  for tool in gcc make; do
    command -v "$tool" >/dev/null || apt_quiet as_root apt-get install -y -qq "$tool"
  done
  rm -rf "$build"
  mkdir -p "$build/apt/lists/partial" "$build/apt/cache/archives/partial" "$build/apt/sources"
  cat >"$build/apt/sources/pgvector.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $PGVECTOR_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # A private source list, package lists and cache: the machine's apt setup is not touched.
  local apt_opts=(
    -o "APT::Sandbox::User=$(id -un)"
    -o "Dir::Etc::SourceList=/dev/null"
    -o "Dir::Etc::SourceParts=$build/apt/sources"
    -o "Dir::State::Lists=$build/apt/lists"
    -o "Dir::Cache=$build/apt/cache"
  )
  (
    cd "$build"
    apt_quiet apt-get "${apt_opts[@]}" update -qq
    apt_quiet apt-get "${apt_opts[@]}" source --download-only pgvector
    # The server headers of the running server's exact version when Debian still serves it.
    version=$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null || true)
    local sandbox=(-o "APT::Sandbox::User=$(id -un)")
    apt_quiet apt-get "${sandbox[@]}" download "postgresql-server-dev-$major${version:+=$version}" ||
      apt_quiet apt-get "${sandbox[@]}" download "postgresql-server-dev-$major"
    dpkg-deb -x postgresql-server-dev-"$major"_*.deb dev
    tar xf pgvector_*.orig.tar.*
  )
  local src
  src=$(find "$build" -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
  [ -n "$src" ] || die "the pgvector source package did not unpack"
  local make_opts=(
    PG_CONFIG="$bindir/pg_config"
    with_llvm=no
    OPTFLAGS=
    includedir_server="$build/dev/usr/include/postgresql/$major/server"
    includedir_internal="$build/dev/usr/include/postgresql/internal"
  )
  make -s -C "$src" -j"$(nproc 2>/dev/null || echo 1)" "${make_opts[@]}" >&2
  as_root make -s -C "$src" "${make_opts[@]}" install >&2
  rm -rf "$build"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port_free() {
  python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

url() { echo "postgresql://$ROLE:$(cat "$STATE/password")@127.0.0.1:$(cat "$STATE/port")/$DATABASE"; }

psql_admin() {
  PGOPTIONS="-c client_min_messages=warning" PGPASSWORD=$(cat "$STATE/password") "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -At \
    -h 127.0.0.1 -p "$(cat "$STATE/port")" -U "$ROLE" "$@"
}

running() { [ -f "$STATE/data/postmaster.pid" ] && as_owner "$BINDIR/pg_ctl" -D "$STATE/data" status >/dev/null 2>&1; }

init_cluster() {
  log "creating a cluster in $STATE/data"
  mkdir -p "$STATE"
  umask 077
  python3 -c 'import secrets; print(secrets.token_hex(16))' >"$STATE/password"
  umask 022
  mkdir -p "$STATE/run"
  local pwfile="$STATE/run/initdb.pw"
  cp "$STATE/password" "$pwfile"
  mkdir -m 700 "$STATE/data"
  if is_root; then chown -R postgres: "$STATE/run" "$STATE/data"; fi
  as_owner "$BINDIR/initdb" -D "$STATE/data" -U "$ROLE" --pwfile="$pwfile" \
    --auth=scram-sha-256 -E UTF8 --locale=C >/dev/null
  rm -f "$pwfile"
}

start_cluster() {
  local port
  port=$(cat "$STATE/port" 2>/dev/null || true)
  if [ -z "$port" ] || ! port_free "$port"; then
    port=$(free_port)
    echo "$port" >"$STATE/port"
  fi
  mkdir -p "$STATE/run"
  if is_root; then chown postgres: "$STATE/run"; fi
  log "starting on 127.0.0.1:$port"
  as_owner "$BINDIR/pg_ctl" -D "$STATE/data" -l "$STATE/run/server.log" -w -t 60 -s \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories= \
        -c max_connections=300 -c fsync=off -c synchronous_commit=off \
        -c full_page_writes=off" start >&2 ||
    die "the server did not start; see $STATE/run/server.log"
}

ensure_database() {
  # Every database created later (the tests make one per worker) gets pgvector from
  # template1, so the store's role never needs to create the extension itself.
  psql_admin -d template1 -c "CREATE EXTENSION IF NOT EXISTS vector"
  if [ "$(psql_admin -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" != 1 ]; then
    psql_admin -d postgres -c "CREATE DATABASE $DATABASE"
  fi
  psql_admin -d "$DATABASE" -c "CREATE EXTENSION IF NOT EXISTS vector"
}

BINDIR=$(find_bindir)

case ${1:-start} in
  stop)
    [ -n "$BINDIR" ] && [ -d "$STATE/data" ] || exit 0
    if running; then as_owner "$BINDIR/pg_ctl" -D "$STATE/data" -m fast -w -s stop >&2; fi
    exit 0
    ;;
  destroy)
    if [ -n "$BINDIR" ] && [ -d "$STATE/data" ] && running; then
      as_owner "$BINDIR/pg_ctl" -D "$STATE/data" -m immediate -w -s stop >&2
    fi
    rm -rf "$STATE"
    exit 0
    ;;
  start) ;;
  *) die "usage: $0 [start|stop|destroy]" ;;
esac

if [ -z "$BINDIR" ]; then
  install_server
  BINDIR=$(find_bindir)
  [ -n "$BINDIR" ] || die "PostgreSQL $MIN_MAJOR is still not installed"
fi
MAJOR=$(basename "$(dirname "$BINDIR")")
if [ ! -f "$("$BINDIR/pg_config" --sharedir)/extension/vector.control" ]; then
  build_pgvector "$BINDIR" "$MAJOR"
fi
[ -f "$STATE/data/PG_VERSION" ] || init_cluster
running || start_cluster
ensure_database
(umask 077 && url >"$STATE/url")
url
