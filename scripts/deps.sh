#!/usr/bin/env bash
# What the builds and tests need from the system, as Debian packages: the C client libraries
# diesel's connections link, the database servers' binaries (the tests run their own private
# servers from them, scripts/servers.sh), Galera's library, the clients the shell tests use,
# and Mono (SQL Server's order oracle, SqlGuid). Where something is missing it is installed
# when this runs as root or with sudo (it says so); otherwise it stops with the command to
# run. Installing never starts, stops or reconfigures a service of the machine beyond what
# Debian's own package scripts do on first install (PostgreSQL's creates a cluster of its
# own; the tests never use it).
#
#   source scripts/deps.sh    or    bash scripts/deps.sh

_combkey_missing() {
  missing=()
  pkg-config --exists libpq 2>/dev/null || missing+=(pkg-config libpq-dev)
  pkg-config --exists libmariadb 2>/dev/null || missing+=(libmariadb-dev libmariadb-dev-compat)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
  command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
  command -v mariadb >/dev/null 2>&1 || missing+=(mariadb-client)
  [ -e /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4)
  command -v rsync >/dev/null 2>&1 || missing+=(rsync)
  command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
  { command -v mono >/dev/null 2>&1 && command -v mcs >/dev/null 2>&1; } || missing+=(mono-runtime mono-mcs libmono-system-data4.0-cil)
  # The peers and load generator of the benchmark beside them (scripts/bench-peers.sh sets
  # COMBKEY_DEPS_PEERS=1): pg_repack for the server's major version, pt-online-schema-change,
  # pgbench (PostgreSQL's own package).
  if [ -n "${COMBKEY_DEPS_PEERS:-}" ]; then
    local major
    major=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
    command -v pg_repack >/dev/null 2>&1 || missing+=("postgresql-${major:-15}-repack")
    command -v pt-online-schema-change >/dev/null 2>&1 || missing+=(percona-toolkit)
    command -v pgbench >/dev/null 2>&1 || missing+=(postgresql-client)
  fi
}

_combkey_deps() {
  local missing
  _combkey_missing
  [ ${#missing[@]} -gt 0 ] || return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo=sudo; else
      echo "deps.sh: missing: ${missing[*]}; install them with:" >&2
      echo "  sudo apt-get install ${missing[*]}" >&2
      return 1
    fi
  fi
  # Another copy of this script (a second checkout's test run) may be installing the same
  # packages: one installs at a time, and each looks again at what is missing once it is its
  # turn. apt's own locks are waited for too (an unattended upgrade), for up to 10 minutes.
  local lock="${TMPDIR:-/tmp}/combkey-deps.lock"
  (
    flock -w 1200 9 || { echo "deps.sh: another install still holds $lock after 20 minutes" >&2; exit 1; }
    _combkey_missing
    [ ${#missing[@]} -gt 0 ] || exit 0
    echo "deps.sh: installing ${missing[*]} (Debian packages)" >&2
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null \
      && DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
  ) 9>>"$lock"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _combkey_deps || exit 1
else
  _combkey_deps
fi
