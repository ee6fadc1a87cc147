#!/usr/bin/env bash
# Makes sure the test databases are up and exports their URLs. Idempotent.
#
#   source scripts/db.sh      # in a shell or script: starts what is needed, exports the URLs
#   bash scripts/db.sh        # just check/start and print the URLs
#
# - PostgreSQL on 127.0.0.1:5432 (trust auth), database `test`   -> COMBKEY_PG_URL
# - MariaDB on 127.0.0.1:3306 (root, empty password), database `test` -> COMBKEY_MYSQL_URL
# Where a server is installed but stopped it is started; where it is absent (a Debian or
# Ubuntu machine with root), Debian's package is installed first and set up for those URLs.
# Set COMBKEY_PG_URL / COMBKEY_MYSQL_URL beforehand to use other servers (nothing is started then).
# Fails loudly: a database test must never skip silently.

_combkey_db() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  local apt_updated=0
  _apt() {
    if [ "$apt_updated" -eq 0 ]; then $sudo apt-get update -qq >/dev/null; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
  }
  # A readiness probe, bounded: up to 60 tries 0.5 s apart.
  _wait_for() {
    local what=$1; shift
    for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
    echo "db.sh: $what did not become ready" >&2; return 1
  }

  # ---- PostgreSQL ----
  if [ -z "${COMBKEY_PG_URL:-}" ]; then
    if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
      if ! command -v pg_ctlcluster >/dev/null 2>&1; then
        echo "db.sh: installing PostgreSQL (Debian package)" >&2
        _apt postgresql postgresql-contrib || return 1
        local hba
        for hba in /etc/postgresql/*/main/pg_hba.conf; do
          $sudo sed -i -E 's/^(local|host)(\s+all\s+all\s+.*\s)(peer|scram-sha-256|md5)\s*$/\1\2trust/' "$hba"
        done
      fi
      local v
      v=$(ls /etc/postgresql | sort -V | tail -n 1)
      $sudo pg_ctlcluster --skip-systemctl-redirect "$v" main start 2>/dev/null || $sudo pg_ctlcluster "$v" main start || true
      _wait_for PostgreSQL pg_isready -h 127.0.0.1 -p 5432 || return 1
    fi
    if ! psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test" || return 1
    fi
    export COMBKEY_PG_URL="postgres://postgres@127.0.0.1:5432/test"
  fi

  # ---- MariaDB ----
  if [ -z "${COMBKEY_MYSQL_URL:-}" ]; then
    if ! mariadb-admin -h 127.0.0.1 -P 3306 -uroot ping >/dev/null 2>&1; then
      local fresh=0
      if ! [ -x /usr/sbin/mariadbd ]; then
        echo "db.sh: installing MariaDB (Debian package)" >&2
        _apt mariadb-server mariadb-client || return 1
        fresh=1
      fi
      $sudo mkdir -p /run/mysqld && $sudo chown mysql:mysql /run/mysqld 2>/dev/null || true
      $sudo start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
      _wait_for "MariaDB (socket)" $sudo mariadb-admin ping || return 1
      if [ "$fresh" -eq 1 ] || ! mariadb -h 127.0.0.1 -uroot -e 'SELECT 1' >/dev/null 2>&1; then
        # Root with an empty password over TCP, as the tests' URL says (a test machine only).
        $sudo mariadb -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket;
          CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
          GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; FLUSH PRIVILEGES;" || return 1
      fi
      _wait_for "MariaDB (TCP)" mariadb-admin -h 127.0.0.1 -P 3306 -uroot ping || return 1
    fi
    mariadb -h 127.0.0.1 -P 3306 -uroot -e 'CREATE DATABASE IF NOT EXISTS test' || return 1
    export COMBKEY_MYSQL_URL="mysql://root@127.0.0.1:3306/test"
  fi

  # SQLite is embedded in the Rust tests; the command-line client is for the shell tests.
  if ! command -v sqlite3 >/dev/null 2>&1; then _apt sqlite3 || return 1; fi
  # SQL Server cannot run here: its uniqueidentifier order is checked against .NET's SqlGuid
  # (Mono's System.Data), an implementation that is not ours.
  if ! command -v mono >/dev/null 2>&1 || ! command -v mcs >/dev/null 2>&1; then
    echo "db.sh: installing Mono (SQL Server's order oracle, SqlGuid)" >&2
    _apt mono-runtime mono-mcs libmono-system-data4.0-cil || return 1
  fi
  # diesel's synchronous connections link the C client libraries (libpq, MariaDB's).
  if ! pkg-config --exists libpq libmariadb 2>/dev/null; then
    echo "db.sh: installing the PostgreSQL and MariaDB client libraries for diesel" >&2
    _apt pkg-config libpq-dev libmariadb-dev libmariadb-dev-compat || return 1
  fi
  return 0
}

if _combkey_db; then
  unset -f _combkey_db
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "COMBKEY_PG_URL=$COMBKEY_PG_URL"
    echo "COMBKEY_MYSQL_URL=$COMBKEY_MYSQL_URL"
  fi
else
  unset -f _combkey_db
  echo "db.sh: the test databases are not available" >&2
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then exit 1; else return 1; fi
fi
