#!/usr/bin/env bash
# Private, throwaway database servers for the tests: PostgreSQL, MariaDB, a three-node MariaDB
# Galera cluster and a MariaDB Spider head with its backends, each in a temporary directory on
# free loopback ports, stopped and deleted when the shell that sourced this exits (also on
# failure or Ctrl-C). It never starts, stops or reconfigures a database service of the
# machine, nor touches its users, passwords or configuration files.
#
#   source scripts/servers.sh            # starts what is missing, exports the URLs below
#   source scripts/servers.sh pg mysql   # only these (pg, mysql, galera, spider, pgrepl, myrepl,
#                                        # pgbouncer: in front of pg, which it starts too; pgcrash)
#
# The servers go when the shell that started them ends, however it ends: its EXIT trap stops
# them (a trap the script had before sourcing this still runs after, and one it sets later
# replaces only its own part if it adds to ours with `combkey_on_exit CMD` instead of `trap`),
# and a watchdog process stops them too once that shell is gone, whatever became of the trap.
# To keep servers across shell commands, start them in a shell of their own that stays:
#
#   nohup bash -c 'source scripts/servers.sh pg; env | grep COMBKEY_ > urls; sleep 3600 & wait' &
#   set -a; source urls; set +a        # in each shell that uses them
#   kill %1                            # or let the hour pass: the servers stop with it
#
# (With `exec sleep 3600` the shell is replaced and its trap never runs: the watchdog still
# stops the servers once the sleep ends.)
#
# A URL set beforehand wins and nothing is started for it:
#   COMBKEY_PG_URL        postgres://postgres@127.0.0.1:PORT/test
#   COMBKEY_MYSQL_URL     mysql://root@127.0.0.1:PORT/test
#   COMBKEY_GALERA_URLS   three mysql:// URLs, comma separated (plus COMBKEY_GALERA_DIR,
#                         which scripts/galera.sh kill-node/start-node use)
#   COMBKEY_SPIDER_URL    the Spider head (plus COMBKEY_SPIDER_BACKEND_URLS)
#   COMBKEY_PGREPL_URLS   a PostgreSQL primary (wal_level=logical), its streaming standby
#                         (a physical slot, combkey_standby) and a logical subscriber, comma
#                         separated (plus COMBKEY_PGREPL_DIR, which scripts/pgrepl.sh uses to
#                         stop and start the standby)
#   COMBKEY_MYREPL_URLS   a MariaDB primary (binary log, GTID) and its replica, comma separated
#   COMBKEY_PGCRASH_URL   a PostgreSQL server that one test crashes and starts again (plus
#                         COMBKEY_PGCRASH_DIR, which scripts/pgcrash.sh uses)
#   COMBKEY_PGBOUNCER_URLS  PgBouncer in front of COMBKEY_PG_URL's database: the same database
#                         pooled in transaction, statement and session mode, and in
#                         transaction mode by a pool of two handed out in turn
#                         (server_round_robin), comma separated
#
# MariaDB's InnoDB reads its files past the OS cache (O_DIRECT): its buffer pool is all the
# cache it has. The tests' small one (64M, redo log 48M) can be set for a benchmark:
#   COMBKEY_MYSQL_BUFFER_POOL=1G COMBKEY_MYSQL_LOG_FILE_SIZE=512M source scripts/servers.sh mysql
#
# Server binaries come from Debian's packages: where one is missing this installs it when it
# can (root or sudo; it says so) and otherwise stops with the command to run. Installing a
# package never starts or configures a service here: PostgreSQL's and MariaDB's server
# packages are expected to be there already (scripts/deps.sh names them), galera-4 is a
# library, and the Spider plugin is unpacked into the temporary directory, not installed.

# shellcheck source=scripts/ports.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ports.sh"

_combkey_servers() {
  local want=("$@")
  [ ${#want[@]} -gt 0 ] || want=(pg mysql galera spider pgrepl myrepl pgbouncer pgcrash)
  local root_dir="${COMBKEY_TEST_DIR:-}"
  if [ -z "$root_dir" ]; then
    root_dir=$(mktemp -d "${TMPDIR:-/tmp}/combkey-test.XXXXXX") || return 1
    chmod 755 "$root_dir"
    export COMBKEY_TEST_DIR="$root_dir"
    export _COMBKEY_SERVERS_OWNER=$$
  fi

  # The user the servers run as: the caller, or (as root, which PostgreSQL refuses to run as)
  # the packages' own service users.
  local pg_user="" my_user=""
  if [ "$(id -u)" -eq 0 ]; then
    pg_user=postgres
    my_user=mysql
  fi

  local w
  for w in "${want[@]}"; do
    case "$w" in
      pg) [ -n "${COMBKEY_PG_URL:-}" ] || _combkey_pg_start || return 1 ;;
      mysql) [ -n "${COMBKEY_MYSQL_URL:-}" ] || _combkey_mysql_start || return 1 ;;
      galera) [ -n "${COMBKEY_GALERA_URLS:-}" ] || _combkey_galera_start || return 1 ;;
      spider) [ -n "${COMBKEY_SPIDER_URL:-}" ] || _combkey_spider_start || return 1 ;;
      pgrepl) [ -n "${COMBKEY_PGREPL_URLS:-}" ] || _combkey_pgrepl_start || return 1 ;;
      myrepl) [ -n "${COMBKEY_MYREPL_URLS:-}" ] || _combkey_myrepl_start || return 1 ;;
      pgcrash) [ -n "${COMBKEY_PGCRASH_URL:-}" ] || _combkey_pgcrash_start || return 1 ;;
      pgbouncer)
        [ -n "${COMBKEY_PG_URL:-}" ] || _combkey_pg_start || return 1
        [ -n "${COMBKEY_PGBOUNCER_URLS:-}" ] || _combkey_pgbouncer_start || return 1
        ;;
      *) echo "servers.sh: unknown server $w (pg, mysql, galera, spider, pgrepl, myrepl, pgbouncer, pgcrash)" >&2; return 2 ;;
    esac
  done
}

# Polls a command until it succeeds: up to 120 s, 0.2 s apart (a readiness probe, not a wait).
_combkey_wait_for() {
  local what=$1; shift
  for _ in $(seq 1 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "servers.sh: $what did not become ready" >&2
  return 1
}

_combkey_as() { # user, command...
  local u=$1; shift
  if [ -n "$u" ]; then runuser -u "$u" -- "$@"; else "$@"; fi
}

_combkey_need() { # what, test command, packages
  local what=$1 check=$2; shift 2
  eval "$check" && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo="sudo"; else
      echo "servers.sh: $what is missing; install it with: sudo apt-get install $*" >&2
      return 1
    fi
  fi
  echo "servers.sh: $what is missing: installing Debian's $* (packages only; no service is started)" >&2
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null || return 1
  eval "$check"
}

_combkey_pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -n "$d" ]; then echo "$d"; elif command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; fi
}

_combkey_pg_start() {
  local dir="$COMBKEY_TEST_DIR/pg" bin port
  if [ -z "$(_combkey_pg_bin)" ]; then
    echo "servers.sh: PostgreSQL's server binaries (initdb, pg_ctl) are missing: sudo apt-get install postgresql" >&2
    echo "            (Debian's package also creates and starts a cluster of its own; the tests never use it)" >&2
    return 1
  fi
  bin=$(_combkey_pg_bin)
  port=$(_combkey_free_port) || return 1
  _combkey_pg_cluster "$dir" "$port" primary full_page_writes=off max_connections=300 shared_buffers=64MB || return 1
  port=$_combkey_port
  echo "$bin" >"$COMBKEY_TEST_DIR/pg.bin"
  psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE test" || return 1
  # The group whose members' logins need a password (pg_hba.conf above); tests make members.
  psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE ROLE combkey_password NOLOGIN" || return 1
  export COMBKEY_PG_URL="postgres://postgres@127.0.0.1:$port/test"
  echo "servers.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)" >&2
}

# A PostgreSQL server of its own that one test crashes (an immediate stop, as a power cut
# leaves it: UNLOGGED tables come back empty) and starts again, with scripts/pgcrash.sh.
_combkey_pgcrash_start() {
  local dir="$COMBKEY_TEST_DIR/pgcrash" bin port
  bin=$(_combkey_pg_bin)
  [ -n "$bin" ] || { echo "servers.sh: PostgreSQL's server binaries are missing: sudo apt-get install postgresql" >&2; return 1; }
  port=$(_combkey_free_port) || return 1
  _combkey_pg_cluster "$dir" "$port" primary || return 1
  port=$_combkey_port
  echo "$bin" >"$dir/bin"
  psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE test" || return 1
  export COMBKEY_PGCRASH_URL="postgres://postgres@127.0.0.1:$port/test"
  export COMBKEY_PGCRASH_DIR="$dir"
  echo "servers.sh: PostgreSQL to crash on 127.0.0.1:$port ($dir)" >&2
}

# A private mariadbd in $1 on port $2 (another free one if that is taken meanwhile: the port
# it listens on is left in $_combkey_port); extra arguments go to mariadbd.
_combkey_mariadbd() {
  local dir=$1 port=$2; shift 2
  # Each server's temporary files in its own directory, never the machine's /tmp: two test
  # runs that initialise servers at once lost each other's temporary tables there.
  mkdir -p "$dir/tmp"
  [ -z "$my_user" ] || chown "$my_user" "$dir" "$dir/tmp"
  mariadb-install-db --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" ${my_user:+--user=$my_user} \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log" >&2; return 1; }
  local attempt
  for attempt in 1 2 3 4 5; do
    rm -f "$dir/error.log"
    setsid mariadbd --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" --port="$port" --bind-address=127.0.0.1 \
      --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
      ${my_user:+--user=$my_user} --innodb-buffer-pool-size="${COMBKEY_MYSQL_BUFFER_POOL:-64M}" \
      --innodb-log-file-size="${COMBKEY_MYSQL_LOG_FILE_SIZE:-48M}" \
      --innodb-flush-log-at-trx-commit=2 --max-connections=500 --performance-schema=OFF \
      --skip-name-resolve "$@" >"$dir/console.log" 2>&1 </dev/null &
    local pid=$!
    # Ready, or the server gone (its port taken, or another failure): whichever comes first.
    for _ in $(seq 1 600); do
      kill -0 "$pid" 2>/dev/null || break
      mariadb-admin --connect-timeout=2 --protocol=tcp -h 127.0.0.1 -P "$port" -uroot ping >/dev/null 2>&1 && break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null && mariadb-admin --connect-timeout=2 --protocol=tcp -h 127.0.0.1 -P "$port" -uroot ping >/dev/null 2>&1; then
      mariadb --protocol=tcp -h 127.0.0.1 -P "$port" -uroot -e "CREATE DATABASE IF NOT EXISTS test" || return 1
      _combkey_port=$port
      return 0
    fi
    kill "$pid" 2>/dev/null || true
    if _combkey_port_taken "$dir/error.log" && [ "$attempt" -lt 5 ]; then
      echo "servers.sh: port $port was taken before MariaDB could bind it; trying another" >&2
      port=$(_combkey_free_port) || return 1
      continue
    fi
    echo "servers.sh: MariaDB on $port did not start; its log:" >&2
    tail -n 30 "$dir/error.log" "$dir/console.log" >&2
    return 1
  done
}

_combkey_mysql_start() {
  _combkey_need "MariaDB's server (mariadbd)" "command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]" mariadb-server || return 1
  local port
  port=$(_combkey_free_port) || return 1
  _combkey_mariadbd "$COMBKEY_TEST_DIR/mysql" "$port" || return 1
  port=$_combkey_port
  export COMBKEY_MYSQL_URL="mysql://root@127.0.0.1:$port/test"
  echo "servers.sh: MariaDB $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$port ($COMBKEY_TEST_DIR/mysql)" >&2
}

# A private PostgreSQL cluster in $1 on port $2 (initdb'd unless $3 is "standby", whose data
# directory pg_basebackup made; another free port if that one is taken meanwhile: the port it
# listens on is left in $_combkey_port); extra settings follow.
_combkey_pg_cluster() {
  local dir=$1 port=$2 kind=$3; shift 3
  local bin
  bin=$(_combkey_pg_bin)
  mkdir -p "$dir" && chmod 700 "$dir"
  [ -z "$pg_user" ] || chown "$pg_user" "$dir"
  if [ "$kind" != standby ]; then
    _combkey_as "$pg_user" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; return 1; }
    # Every login is trusted but those of the members of combkey_password (made below), who
    # must give their password (SCRAM): the tests of passwords (PGPASSWORD, .pgpass, a
    # password in the URL) need a server that checks one. Lines are read first to last.
    { printf 'host all +combkey_password 127.0.0.1/32 scram-sha-256\n'
      printf 'local all +combkey_password scram-sha-256\n'
      cat "$dir/data/pg_hba.conf"; } >"$dir/data/pg_hba.conf.new" && mv "$dir/data/pg_hba.conf.new" "$dir/data/pg_hba.conf"
    [ -z "$pg_user" ] || chown "$pg_user" "$dir/data/pg_hba.conf"
  fi
  local attempt opts o
  for attempt in 1 2 3 4 5; do
    opts="-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c max_connections=100 -c shared_buffers=32MB"
    for o in "$@"; do opts="$opts -c $o"; done
    rm -f "$dir/log"
    if _combkey_as "$pg_user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 120 -o "$opts" start >/dev/null; then
      echo "$opts" >"$dir/opts"
      _combkey_wait_for "PostgreSQL on $port" "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" || { cat "$dir/log" >&2; return 1; }
      _combkey_port=$port
      return 0
    fi
    if _combkey_port_taken "$dir/log" && [ "$attempt" -lt 5 ]; then
      echo "servers.sh: port $port was taken before PostgreSQL could bind it; trying another" >&2
      port=$(_combkey_free_port) || return 1
      continue
    fi
    echo "servers.sh: PostgreSQL on $port did not start; its log:" >&2
    cat "$dir/log" >&2
    return 1
  done
}

# A PostgreSQL primary with logical decoding, a streaming standby behind a physical slot, and
# a logical subscriber: what doctor must stay safe for.
_combkey_pgrepl_start() {
  local dir="$COMBKEY_TEST_DIR/pgrepl" bin p1 p2 p3
  bin=$(_combkey_pg_bin)
  [ -n "$bin" ] || { echo "servers.sh: PostgreSQL's server binaries are missing: sudo apt-get install postgresql" >&2; return 1; }
  p1=$(_combkey_free_port) && p2=$(_combkey_free_port) && p3=$(_combkey_free_port) || return 1
  mkdir -p "$dir" && chmod 755 "$dir"
  _combkey_pg_cluster "$dir/primary" "$p1" primary wal_level=logical max_wal_senders=10 max_replication_slots=10 || return 1
  p1=$_combkey_port
  psql -h 127.0.0.1 -p "$p1" -U postgres -d postgres -qc "CREATE DATABASE test" || return 1
  mkdir -p "$dir/standby" && chmod 700 "$dir/standby"
  [ -z "$pg_user" ] || chown "$pg_user" "$dir/standby"
  _combkey_as "$pg_user" "$bin/pg_basebackup" -h 127.0.0.1 -p "$p1" -U postgres -D "$dir/standby/data" -R -X stream -c fast \
    -C -S combkey_standby >"$dir/standby/basebackup.log" 2>&1 || { cat "$dir/standby/basebackup.log" >&2; return 1; }
  _combkey_pg_cluster "$dir/standby" "$p2" standby hot_standby=on || return 1
  p2=$_combkey_port
  _combkey_pg_cluster "$dir/subscriber" "$p3" subscriber || return 1
  p3=$_combkey_port
  psql -h 127.0.0.1 -p "$p3" -U postgres -d postgres -qc "CREATE DATABASE test" || return 1
  echo "$bin" >"$dir/bin"
  export COMBKEY_PGREPL_DIR="$dir"
  export COMBKEY_PGREPL_URLS="postgres://postgres@127.0.0.1:$p1/test,postgres://postgres@127.0.0.1:$p2/test,postgres://postgres@127.0.0.1:$p3/test"
  echo "servers.sh: PostgreSQL primary, standby and subscriber on 127.0.0.1:$p1, $p2, $p3 ($dir)" >&2
}

# A MariaDB primary writing a binary log (GTID) and its replica.
_combkey_myrepl_start() {
  _combkey_need "MariaDB's server (mariadbd)" "command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]" mariadb-server || return 1
  local dir="$COMBKEY_TEST_DIR/myrepl" p1 p2
  p1=$(_combkey_free_port) && p2=$(_combkey_free_port) || return 1
  mkdir -p "$dir"
  _combkey_mariadbd "$dir/primary" "$p1" --server-id=1 --log-bin=primary-bin --binlog-format=MIXED || return 1
  p1=$_combkey_port
  _combkey_mariadbd "$dir/replica" "$p2" --server-id=2 --log-bin=replica-bin --relay-log=relay-bin || return 1
  p2=$_combkey_port
  mariadb --protocol=tcp -h 127.0.0.1 -P "$p2" -uroot -e \
    "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$p1, MASTER_USER='root', MASTER_USE_GTID=slave_pos; START SLAVE" \
    || return 1
  export COMBKEY_MYREPL_URLS="mysql://root@127.0.0.1:$p1/test,mysql://root@127.0.0.1:$p2/test"
  echo "servers.sh: MariaDB primary and replica on 127.0.0.1:$p1, $p2 ($dir)" >&2
}

# PgBouncer (Debian's package; its own service is never used) in front of COMBKEY_PG_URL's
# server and database, which it reaches as that URL's user: three pools of the same database,
# test_tx (pool_mode = transaction), test_stmt (statement) and test_session (session); and a
# second PgBouncer with one transaction pool of two server sessions handed out in turn
# (server_round_robin = 1), test_tx_rr.
_combkey_pgbouncer_start() {
  _combkey_need "PgBouncer" "command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]" pgbouncer || return 1
  local rest host pgport user db main rr
  rest=${COMBKEY_PG_URL#*://}
  user=${rest%%@*}; user=${user%%:*}
  rest=${rest#*@}
  host=${rest%%/*}; pgport=${host##*:}; host=${host%:*}
  db=${rest#*/}; db=${db%%\?*}
  _combkey_pgbouncer "$COMBKEY_TEST_DIR/pgbouncer" test_session "test_tx = host=$host port=$pgport dbname=$db user=$user pool_mode=transaction
test_stmt = host=$host port=$pgport dbname=$db user=$user pool_mode=statement
test_session = host=$host port=$pgport dbname=$db user=$user pool_mode=session" "default_pool_size = 5" || return 1
  main=$_combkey_port
  _combkey_pgbouncer "$COMBKEY_TEST_DIR/pgbouncer-rr" test_tx_rr \
    "test_tx_rr = host=$host port=$pgport dbname=$db user=$user pool_mode=transaction" \
    "default_pool_size = 2
server_round_robin = 1" || return 1
  rr=$_combkey_port
  export COMBKEY_PGBOUNCER_URLS="postgres://$user@127.0.0.1:$main/test_tx,postgres://$user@127.0.0.1:$main/test_stmt,postgres://$user@127.0.0.1:$main/test_session,postgres://$user@127.0.0.1:$rr/test_tx_rr"
}

# One PgBouncer in $1 (its databases $3, extra settings $4; ready once $2 answers), on a free
# port left in $_combkey_port.
_combkey_pgbouncer() {
  local dir=$1 probe=$2 databases=$3 extra=$4 bin port attempt
  bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  mkdir -p "$dir" && chmod 755 "$dir"
  printf '"%s" ""\n' "$user" >"$dir/users.txt"
  for attempt in 1 2 3 4 5; do
    port=$(_combkey_free_port) || return 1
    cat >"$dir/pgbouncer.ini" <<INI
[databases]
$databases
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = session
max_client_conn = 200
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
# Idle server sessions go after a few seconds (they keep the name of the last client).
server_idle_timeout = 5
$extra
INI
    [ -z "$pg_user" ] || chown -R "$pg_user" "$dir"
    rm -f "$dir/pgbouncer.log"
    _combkey_as "$pg_user" "$bin" -d "$dir/pgbouncer.ini" >"$dir/console.log" 2>&1 || true
    local ready=""
    # Ready, or failed (its log says FATAL: the port taken, a bad setting): whichever first.
    for _ in $(seq 1 600); do
      if psql -h 127.0.0.1 -p "$port" -U "$user" -d "$probe" -qAtc "SELECT 1" >/dev/null 2>&1; then ready=1; break; fi
      grep -qs FATAL "$dir/pgbouncer.log" "$dir/console.log" && break
      sleep 0.2
    done
    if [ -n "$ready" ]; then
      _combkey_port=$port
      echo "servers.sh: PgBouncer $("$bin" --version | head -n 1 | awk '{print $2}') on 127.0.0.1:$port ($dir)" >&2
      return 0
    fi
    [ -f "$dir/pgbouncer.pid" ] && kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null
    if grep -q "Address already in use" "$dir/pgbouncer.log" "$dir/console.log" 2>/dev/null && [ "$attempt" -lt 5 ]; then
      echo "servers.sh: port $port was taken before PgBouncer could bind it; trying another" >&2
      continue
    fi
    echo "servers.sh: PgBouncer on $port did not start; its log:" >&2
    tail -n 30 "$dir/pgbouncer.log" "$dir/console.log" >&2
    return 1
  done
}

_combkey_galera_start() {
  local here attempt
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  for attempt in 1 2 3; do
    COMBKEY_GALERA_DIR="$COMBKEY_TEST_DIR/galera" COMBKEY_GALERA_PORT=$(_combkey_free_port 3) \
      COMBKEY_GALERA_BASE_PORT=$(_combkey_free_port 25) source "$here/galera.sh" start && return 0
    # A port taken between its choice and a node's start: the cluster again, on other ports.
    _combkey_port_taken "$COMBKEY_TEST_DIR"/galera/node*/error.log && [ "$attempt" -lt 3 ] || return 1
    echo "servers.sh: a port was taken before a Galera node could bind it; starting the cluster on others" >&2
    COMBKEY_GALERA_DIR="$COMBKEY_TEST_DIR/galera" bash "$here/galera.sh" stop >/dev/null 2>&1 || true
    rm -rf "$COMBKEY_TEST_DIR/galera"
    unset COMBKEY_GALERA_URLS COMBKEY_GALERA_DIR
  done
  return 1
}

_combkey_spider_start() {
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  COMBKEY_SPIDER_DIR="$COMBKEY_TEST_DIR/spider" source "$here/spider.sh" start || return 1
}

# Stops every server this shell started and deletes their directory.
combkey_servers_stop() {
  local dir="${COMBKEY_TEST_DIR:-}"
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  [ "${_COMBKEY_SERVERS_OWNER:-}" = "$$" ] || return 0
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  if [ -d "$dir/spider" ]; then COMBKEY_SPIDER_DIR="$dir/spider" bash "$here/spider.sh" stop >/dev/null 2>&1 || true; fi
  if [ -d "$dir/galera" ]; then COMBKEY_GALERA_DIR="$dir/galera" bash "$here/galera.sh" stop >/dev/null 2>&1 || true; fi
  if [ -d "$dir/pg/data" ]; then
    local bin
    bin=$(cat "$dir/pg.bin" 2>/dev/null || _combkey_pg_bin)
    _combkey_as "$( [ "$(id -u)" -eq 0 ] && echo postgres)" "$bin/pg_ctl" -D "$dir/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -d "$dir/pgcrash/data" ]; then
    _combkey_as "$( [ "$(id -u)" -eq 0 ] && echo postgres)" "$(cat "$dir/pgcrash/bin" 2>/dev/null || _combkey_pg_bin)/pg_ctl" \
      -D "$dir/pgcrash/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  local c
  for c in "$dir"/pgrepl/standby "$dir"/pgrepl/primary "$dir"/pgrepl/subscriber; do
    [ -d "$c/data" ] || continue
    _combkey_as "$( [ "$(id -u)" -eq 0 ] && echo postgres)" "$(cat "$dir/pgrepl/bin" 2>/dev/null || _combkey_pg_bin)/pg_ctl" \
      -D "$c/data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  local pidfile pid
  for pidfile in "$dir"/pgbouncer/pgbouncer.pid "$dir"/pgbouncer-rr/pgbouncer.pid "$dir"/mysql/mysqld.pid "$dir"/myrepl/replica/mysqld.pid "$dir"/myrepl/primary/mysqld.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
  unset COMBKEY_TEST_DIR _COMBKEY_SERVERS_OWNER
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "source this file (source scripts/servers.sh): the servers live as long as your shell" >&2
  exit 2
fi
# The command a trap of this shell runs now (empty where none): `trap -p` prints it quoted
# for the shell to read back.
_combkey_trap_of() {
  local printed
  printed=$(trap -p "$1")
  [ -n "$printed" ] || return 0
  eval "set -- $printed"
  printf '%s' "$3"
}

# Adds CMD to what this shell runs when it exits, after what it runs already.
combkey_on_exit() {
  local before
  before=$(_combkey_trap_of EXIT)
  # shellcheck disable=SC2064 # expanded now, on purpose
  trap "${before:+$before; }$1" EXIT
}

# Stops this shell's servers once the shell (pid $1) is gone, whatever happened to its traps
# (replaced by the caller, or never run because the shell was replaced by `exec`).
_combkey_watchdog() {
  local owner=$1
  # Started twice removed (a subshell that starts it and ends at once), so the shell's own
  # `wait` never waits for it.
  (
    (
      trap '' INT TERM HUP
      tail --pid="$owner" -f /dev/null
      combkey_servers_stop
    ) >/dev/null 2>&1 </dev/null &
  )
}

_combkey_owned_before=${_COMBKEY_SERVERS_OWNER:-}
_combkey_exit_before=$(_combkey_trap_of EXIT)
# Stops the servers first, then runs the trap the script had (its own clean-up).
# shellcheck disable=SC2064 # expanded now, on purpose
trap "combkey_servers_stop${_combkey_exit_before:+; $_combkey_exit_before}" EXIT
_combkey_int_before=$(_combkey_trap_of INT)
_combkey_term_before=$(_combkey_trap_of TERM)
# shellcheck disable=SC2064
trap "${_combkey_int_before:+$_combkey_int_before; }exit 130" INT
# shellcheck disable=SC2064
trap "${_combkey_term_before:+$_combkey_term_before; }exit 143" TERM
unset _combkey_exit_before _combkey_int_before _combkey_term_before
_combkey_servers "$@"
_combkey_status=$?
# A server that did not start stops a script that sourced this (its error is above): the
# tests would otherwise go on without it and fail for another reason. An interactive shell
# gets the status back instead of being closed.
if [ "$_combkey_status" -ne 0 ] && [[ $- != *i* ]]; then
  echo "servers.sh: the private servers did not start (exit $_combkey_status); stopping here" >&2
  exit "$_combkey_status"
fi
if [ -z "$_combkey_owned_before" ] && [ "${_COMBKEY_SERVERS_OWNER:-}" = "$$" ]; then
  _combkey_watchdog "$$"
fi
unset _combkey_owned_before
( exit $_combkey_status )
