#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback, for the cluster tests and benchmark.
#
#   source scripts/galera.sh start   # starts it (or finds it running), exports COMBKEY_GALERA_URLS
#   bash scripts/galera.sh start     # the same, printing the URLs
#   bash scripts/galera.sh status    # each node's cluster size and state
#   bash scripts/galera.sh stop      # stops the nodes and deletes everything start made
#   bash scripts/galera.sh kill-node N [SIGNAL]   # default KILL; STOP/CONT to stall a node
#   bash scripts/galera.sh start-node N           # restart a node that was killed: it recovers
#                                                 # its position and rejoins (IST)
#   bash scripts/galera.sh heal                   # every node running and Synced again: a
#                                                 # stalled node continued, a dead one restarted
#                                                 # (what a test that failed mid-fault left)
#
# With COMBKEY_GALERA_DOCKER=1 the same commands drive docker-compose.yml's `galera` profile
# instead (same ports; not run on the project's machines, which have no Docker engine).
#
# Nodes 1-3 listen on 127.0.0.1:3311-3313 (root, empty password, database `test`); group
# communication on 4511/4521/4531, IST on 4512/4522/4532, rsync SST on 4514/4524/4534. Data
# in $COMBKEY_GALERA_DIR (default ${TMPDIR:-/tmp}/combkey-galera). COMBKEY_GALERA_PORT (the
# first node's SQL port; the others follow) and COMBKEY_GALERA_BASE_PORT (the first node's
# group port; 10 apart per node) move them: scripts/servers.sh, which the tests use, picks free
# ones. start keeps them in the directory, so the other commands find the nodes again. No
# database service of the machine is touched. Debian's galera-4 (a library) and rsync are
# installed where missing (root or sudo; otherwise it stops with the command to run).
#
# COMBKEY_GALERA_BUFFER_POOL sets innodb_buffer_pool_size (default 32M; the benchmark starts
# its own cluster with a small one). Galera needs binlog_format=ROW and
# innodb_autoinc_lock_mode=2; each node has its own base_port; the first node bootstraps
# with --wsrep-new-cluster, the others join it and receive a state snapshot by rsync.

_combkey_galera() {
  local cmd=${1:-start}
  local dir=${COMBKEY_GALERA_DIR:-${TMPDIR:-/tmp}/combkey-galera}
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  local provider=/usr/lib/galera/libgalera_smm.so

  # The ports: given at start, kept in the directory for the other commands.
  local sql_port=${COMBKEY_GALERA_PORT:-} group_port=${COMBKEY_GALERA_BASE_PORT:-}
  if [ -z "$sql_port" ] && [ -f "$dir/ports" ]; then read -r sql_port group_port < "$dir/ports"; fi
  sql_port=${sql_port:-3311}
  group_port=${group_port:-4511}
  _g_port() { echo $((sql_port - 1 + $1)); }
  _g_base() { echo $((group_port - 10 + 10 * $1)); }
  _g_sql() { mariadb --protocol=tcp -h 127.0.0.1 -P "$(_g_port "$1")" -uroot -N -B -e "$2" 2>/dev/null; }
  _g_status() { _g_sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'; }
  _g_pid() { cat "$dir/node$1/mysqld.pid" 2>/dev/null; }

  _g_install() {
    local missing=()
    [ -e "$provider" ] || missing+=(galera-4)
    command -v mariadb >/dev/null 2>&1 || missing+=(mariadb-client)
    command -v rsync >/dev/null 2>&1 || missing+=(rsync)
    if ! command -v mariadbd >/dev/null 2>&1 && ! [ -x /usr/sbin/mariadbd ]; then
      echo "galera.sh: MariaDB's server is missing: sudo apt-get install mariadb-server" >&2
      return 1
    fi
    if [ ${#missing[@]} -gt 0 ]; then
      if [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
        echo "galera.sh: ${missing[*]} missing: sudo apt-get install ${missing[*]}" >&2
        return 1
      fi
      echo "galera.sh: installing ${missing[*]} (Debian packages; no service is started)" >&2
      $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null || return 1
    fi
  }

  _g_config() {
    local i=$1 base
    base=$(_g_base "$i")
    mkdir -p "$dir/node$i/data" "$dir/node$i/tmp"
    if [ "$(id -u)" -eq 0 ]; then chown -R mysql:mysql "$dir/node$i"; fi
    cat > "$dir/node$i.cnf" <<EOF
[mariadbd]
datadir=$dir/node$i/data
tmpdir=$dir/node$i/tmp
port=$(_g_port "$i")
socket=$dir/node$i/mysqld.sock
pid-file=$dir/node$i/mysqld.pid
log-error=$dir/node$i/error.log
bind-address=127.0.0.1
$( [ "$(id -u)" -eq 0 ] && echo user=mysql )
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
innodb_buffer_pool_size=${COMBKEY_GALERA_BUFFER_POOL:-32M}
innodb_log_file_size=48M
innodb_flush_log_at_trx_commit=2
performance_schema=OFF
max_connections=200
wsrep_on=ON
wsrep_provider=$provider
wsrep_cluster_name=combkey
wsrep_cluster_address=gcomm://127.0.0.1:$(_g_base 1),127.0.0.1:$(_g_base 2),127.0.0.1:$(_g_base 3)
wsrep_node_name=node$i
wsrep_node_address=127.0.0.1:$base
wsrep_provider_options="base_host=127.0.0.1;base_port=$base;gmcast.listen_addr=tcp://127.0.0.1:$base;ist.recv_addr=127.0.0.1:$((base + 1));gcache.size=256M;evs.suspect_timeout=PT5S;evs.inactive_timeout=PT10S"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((base + 3))
EOF
    if [ "$(id -u)" -eq 0 ]; then chown -R mysql:mysql "$dir/node$i"; fi
  }

  # Waits until node i answers and is Synced (up to 120 s).
  _g_wait_synced() {
    local i=$1
    for _ in $(seq 1 240); do
      if [ "$(_g_status "$i" wsrep_local_state_comment)" = "Synced" ]; then return 0; fi
      if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then break; fi
      sleep 0.5
    done
    echo "galera.sh: node $i did not reach Synced; its log:" >&2
    tail -n 30 "$dir/node$i/error.log" >&2
    return 1
  }

  # Starts node i in the background; extra arguments go to mariadbd.
  _g_launch() {
    local i=$1; shift
    setsid mariadbd --defaults-file="$dir/node$i.cnf" "$@" >>"$dir/node$i/console.log" 2>&1 < /dev/null &
    _g_wait_synced "$i" $! || return 1
  }

  _g_urls() {
    export COMBKEY_GALERA_DIR="$dir"
    export COMBKEY_GALERA_URLS="mysql://root@127.0.0.1:$(_g_port 1)/test,mysql://root@127.0.0.1:$(_g_port 2)/test,mysql://root@127.0.0.1:$(_g_port 3)/test"
  }

  _g_running() {
    local i
    for i in 1 2 3; do [ "$(_g_status "$i" wsrep_local_state_comment)" = "Synced" ] || return 1; done
    [ "$(_g_status 1 wsrep_cluster_size)" = "3" ]
  }

  if [ "${COMBKEY_GALERA_DOCKER:-}" = 1 ]; then
    local compose=(docker compose --profile galera)
    case "$cmd" in
      start) "${compose[@]}" up -d --wait galera1 galera2 galera3 || return 1; _g_urls ;;
      stop) "${compose[@]}" down -v ;;
      status) "${compose[@]}" ps ;;
      kill-node) "${compose[@]}" kill -s "SIG${3:-KILL}" "galera${2:?node number}" ;;
      start-node) "${compose[@]}" start "galera${2:?node number}" && _g_wait_synced "$2" ;;
      heal)
        "${compose[@]}" kill -s SIGCONT galera1 galera2 galera3 >/dev/null 2>&1 || true
        "${compose[@]}" start galera1 galera2 galera3 && _g_wait_synced 1 && _g_wait_synced 2 && _g_wait_synced 3 ;;
      *) echo "usage: galera.sh start|status|stop|kill-node N [SIGNAL]|start-node N|heal" >&2; return 2 ;;
    esac
    return
  fi

  case "$cmd" in
    start)
      if _g_running; then _g_urls; return 0; fi
      _g_install || return 1
      if [ -d "$dir" ]; then _combkey_galera stop >/dev/null 2>&1 || true; fi
      mkdir -p "$dir" && chmod 755 "$dir"
      echo "$sql_port $group_port" > "$dir/ports"
      local i
      for i in 1 2 3; do _g_config "$i"; done
      mariadb-install-db --no-defaults --datadir="$dir/node1/data" --tmpdir="$dir/node1/tmp" $( [ "$(id -u)" -eq 0 ] && echo --user=mysql ) \
        --auth-root-authentication-method=normal --skip-test-db >"$dir/node1/install.log" 2>&1 \
        || { cat "$dir/node1/install.log" >&2; return 1; }
      echo "galera.sh: bootstrapping node 1" >&2
      _g_launch 1 --wsrep-new-cluster || return 1
      _g_sql 1 "CREATE DATABASE IF NOT EXISTS test" || return 1
      for i in 2 3; do
        echo "galera.sh: node $i joins (state transfer by rsync)" >&2
        _g_launch "$i" || return 1
      done
      for _ in $(seq 1 60); do _g_running && break; sleep 0.5; done
      _g_running || { echo "galera.sh: the cluster did not reach 3 synced nodes" >&2; return 1; }
      _g_urls
      echo "galera.sh: 3 nodes synced: $COMBKEY_GALERA_URLS" >&2
      ;;
    status)
      local i
      for i in 1 2 3; do
        echo "node $i (127.0.0.1:$(_g_port "$i")): cluster size $(_g_status "$i" wsrep_cluster_size), $(_g_status "$i" wsrep_local_state_comment)"
      done
      ;;
    stop)
      local i pid
      for i in 3 2 1; do
        pid=$(_g_pid "$i")
        [ -n "$pid" ] || continue
        kill -CONT "$pid" 2>/dev/null || true
        mariadb-admin --protocol=tcp -h 127.0.0.1 -P "$(_g_port "$i")" -uroot shutdown >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$pid" 2>/dev/null || true
      done
      case "$dir" in */combkey-galera* | */combkey-test.*/galera) rm -rf "$dir" ;; *) echo "galera.sh: left $dir in place" >&2 ;; esac
      ;;
    kill-node)
      local i=${2:?node number} sig=${3:-KILL} pid
      pid=$(_g_pid "$i")
      [ -n "$pid" ] || { echo "galera.sh: node $i has no pid file" >&2; return 1; }
      kill -"$sig" "$pid"
      if [ "$sig" = KILL ]; then
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        rm -f "$dir/node$i/mysqld.pid"
      fi
      ;;
    start-node)
      local i=${2:?node number} pos
      # After a crash: recover the last committed position from InnoDB, so the node asks
      # its peers for the missing write sets only (IST) instead of a whole snapshot.
      mariadbd --defaults-file="$dir/node$i.cnf" --wsrep-recover --log-error="$dir/node$i/recover.log" >/dev/null 2>&1 || true
      pos=$(grep -o 'Recovered position: [^ ]*' "$dir/node$i/recover.log" 2>/dev/null | tail -n 1 | awk '{print $3}')
      rm -f "$dir/node$i/recover.log"
      if [ -n "$pos" ]; then
        _g_launch "$i" --wsrep-start-position="$pos" || return 1
      else
        _g_launch "$i" || return 1
      fi
      ;;
    heal)
      local i pid
      for i in 1 2 3; do
        pid=$(_g_pid "$i")
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
          kill -CONT "$pid" 2>/dev/null || true
        else
          echo "galera.sh: node $i is not running: restarting it" >&2
          rm -f "$dir/node$i/mysqld.pid"
          _combkey_galera start-node "$i" || return 1
        fi
      done
      for i in 1 2 3; do _g_wait_synced "$i" || return 1; done
      ;;
    *)
      echo "usage: galera.sh start|status|stop|kill-node N [SIGNAL]|start-node N|heal" >&2
      return 2
      ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  _combkey_galera "$@" || exit 1
  if [ "${1:-start}" = start ]; then echo "COMBKEY_GALERA_URLS=$COMBKEY_GALERA_URLS"; fi
else
  _combkey_galera "$@"
fi
