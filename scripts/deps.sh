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

_combkey_deps() {
  local missing=()
  pkg-config --exists libpq 2>/dev/null || missing+=(pkg-config libpq-dev)
  pkg-config --exists libmariadb 2>/dev/null || missing+=(libmariadb-dev libmariadb-dev-compat)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
  command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
  command -v mariadb >/dev/null 2>&1 || missing+=(mariadb-client)
  [ -e /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4)
  command -v rsync >/dev/null 2>&1 || missing+=(rsync)
  command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
  { command -v mono >/dev/null 2>&1 && command -v mcs >/dev/null 2>&1; } || missing+=(mono-runtime mono-mcs libmono-system-data4.0-cil)
  [ ${#missing[@]} -gt 0 ] || return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo=sudo; else
      echo "deps.sh: missing: ${missing[*]}; install them with:" >&2
      echo "  sudo apt-get install ${missing[*]}" >&2
      return 1
    fi
  fi
  echo "deps.sh: installing ${missing[*]} (Debian packages)" >&2
  $sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _combkey_deps || exit 1
else
  _combkey_deps
fi
