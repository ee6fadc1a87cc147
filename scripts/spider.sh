#!/usr/bin/env bash
# A sharded MariaDB on loopback: a Spider head node and N backend nodes (default 3), private
# mariadbd instances for the Spider tests and benchmark.
#
#   source scripts/spider.sh start     # starts it, exports COMBKEY_SPIDER_URL and friends
#   bash scripts/spider.sh start       # the same, printing the URLs
#   bash scripts/spider.sh status      # each node and the servers the head knows
#   bash scripts/spider.sh stop        # stops the nodes and deletes everything start made
#   bash scripts/spider.sh stop-backend N     # stop backend N (a failed shard), and
#   bash scripts/spider.sh start-backend N    # start it again on the same port and data
#
# With COMBKEY_SPIDER_DOCKER=1 the same commands drive docker-compose.yml's `spider` profile
# (same topology; not run on the project's machines, which have no Docker engine).
#
# The head runs the Spider storage engine (`INSTALL SONAME 'ha_spider'`) and knows backend i
# as the server `b<i>` (`CREATE SERVER b<i> FOREIGN DATA WRAPPER mysql ...`): a Spider table
# `PARTITION BY RANGE COLUMNS(id)` puts each partition on one of them (`COMMENT = 'srv "b1"'`);
# `combkey sql mysql shards` prints such DDL. Every node: root with an empty password,
# database `test`, free loopback ports, data in $COMBKEY_SPIDER_DIR (default a new temporary
# directory). Nothing of the machine's own MariaDB is used or touched.
#
# Spider ships in Debian's mariadb-plugin-spider (the same version as the server). Where the
# server's plugin directory lacks ha_spider.so, the package is downloaded (`apt-get
# download`, no root needed) and unpacked into the data directory, and the head loads it from
# there: nothing is installed on the machine, and no configuration file changes.
#
# Exports: COMBKEY_SPIDER_URL (the head), COMBKEY_SPIDER_BACKEND_URLS (comma separated, in
# order), COMBKEY_SPIDER_SERVERS (b1,b2,...), COMBKEY_SPIDER_DIR.

_combkey_spider() {
  local cmd=${1:-start}
  local n=${COMBKEY_SPIDER_BACKENDS:-3}
  local dir=${COMBKEY_SPIDER_DIR:-}
  if [ -z "$dir" ]; then
    if [ "$cmd" = start ]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/combkey-spider.XXXXXX") || return 1; else
      echo "spider.sh: COMBKEY_SPIDER_DIR names the directory start made" >&2; return 1
    fi
  fi
  local user=""
  [ "$(id -u)" -eq 0 ] && user=mysql

  _s_ports() { cat "$dir/ports" 2>/dev/null; }            # head b1 b2 ...
  _s_port() { _s_ports | awk -v i="$(( $1 + 1 ))" '{print $i}'; }  # 0 = head
  _s_sql() { mariadb --protocol=tcp -h 127.0.0.1 -P "$1" -uroot -N -B -e "$2"; }
  _s_node_dir() { if [ "$1" = 0 ]; then echo "$dir/head"; else echo "$dir/b$1"; fi; }

  # shellcheck source=scripts/ports.sh
  source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ports.sh"
  _s_free_port() { _combkey_free_port 1 "$dir/ports"; }

  _s_wait() { # port, pid
    for _ in $(seq 1 600); do
      mariadb-admin --connect-timeout=2 --protocol=tcp -h 127.0.0.1 -P "$1" -uroot ping >/dev/null 2>&1 && return 0
      kill -0 "$2" 2>/dev/null || break
      sleep 0.2
    done
    return 1
  }

  # The plugin directory holding ha_spider.so: the server's own, or one made here with the
  # package unpacked into it beside links to the server's plugins.
  _s_plugin_dir() {
    local sys
    sys=$(mariadb_config --plugindir 2>/dev/null || echo /usr/lib/mysql/plugin)
    if [ -e "$sys/ha_spider.so" ]; then echo "$sys"; return 0; fi
    local own="$dir/plugin" version
    if [ ! -e "$own/ha_spider.so" ]; then
      version=$(dpkg-query -W -f='${Version}' mariadb-server-core 2>/dev/null || dpkg-query -W -f='${Version}' mariadb-server 2>/dev/null)
      [ -n "$version" ] || { echo "spider.sh: no Debian mariadb-server package to match a Spider plugin to" >&2; return 1; }
      mkdir -p "$dir/pkg" "$own"
      echo "spider.sh: fetching mariadb-plugin-spider $version (unpacked into $dir, not installed)" >&2
      (cd "$dir/pkg" && apt-get download -qq "mariadb-plugin-spider=$version" >/dev/null 2>&1) \
        || { echo "spider.sh: apt-get download mariadb-plugin-spider=$version failed; install it with: sudo apt-get install mariadb-plugin-spider" >&2; return 1; }
      dpkg -x "$dir"/pkg/mariadb-plugin-spider_*.deb "$dir/pkg/root" || return 1
      local f
      for f in "$sys"/*; do ln -sf "$f" "$own/"; done
      cp "$dir"/pkg/root/usr/lib/mysql/plugin/ha_spider.so "$own/"
    fi
    echo "$own"
  }

  # Starts node i (0 = head) on its port; initialises its data directory the first time.
  _s_launch() {
    local i=$1 port d extra=()
    port=$(_s_port "$i")
    d=$(_s_node_dir "$i")
    # Temporary files in the node's own directory, not the machine's /tmp (see servers.sh).
    mkdir -p "$d/tmp"
    [ -z "$user" ] || chown "$user" "$d" "$d/tmp"
    if [ ! -d "$d/data/mysql" ]; then
      mariadb-install-db --no-defaults --datadir="$d/data" --tmpdir="$d/tmp" ${user:+--user=$user} \
        --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 \
        || { cat "$d/install.log" >&2; return 1; }
    fi
    if [ "$i" = 0 ]; then extra=(--plugin-dir="$(_s_plugin_dir)") || return 1; fi
    local attempt
    for attempt in 1 2 3 4 5; do
      rm -f "$d/error.log"
      setsid mariadbd --no-defaults --datadir="$d/data" --tmpdir="$d/tmp" --port="$port" --bind-address=127.0.0.1 \
        --socket="$d/mysqld.sock" --pid-file="$d/mysqld.pid" --log-error="$d/error.log" \
        ${user:+--user=$user} --innodb-buffer-pool-size=${COMBKEY_SPIDER_BUFFER_POOL:-32M} \
        --innodb-log-file-size=48M --innodb-flush-log-at-trx-commit=2 --max-connections=500 \
        --performance-schema=OFF --skip-name-resolve "${extra[@]}" >"$d/console.log" 2>&1 </dev/null &
      _s_wait "$port" $! && break
      # A port taken between its choice and the start (not on a restart, which keeps its port):
      # another one, written where the other commands read it.
      if [ "${2:-}" = fresh ] && _combkey_port_taken "$d/error.log" && [ "$attempt" -lt 5 ]; then
        echo "spider.sh: port $port was taken before node $i could bind it; trying another" >&2
        local ports
        read -r -a ports < "$dir/ports"
        port=$(_s_free_port) || return 1
        ports[i]=$port
        echo "${ports[*]}" > "$dir/ports"
        continue
      fi
      echo "spider.sh: node $i did not start; its log:" >&2; tail -n 30 "$d/error.log" >&2; return 1
    done
    _s_sql "$port" "CREATE DATABASE IF NOT EXISTS test" || return 1
  }

  _s_stop_node() {
    local i=$1 d pid
    d=$(_s_node_dir "$i")
    pid=$(cat "$d/mysqld.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$d/mysqld.pid"
  }

  _s_export() {
    local i urls=() servers=()
    for ((i = 1; i <= n; i++)); do
      urls+=("mysql://root@127.0.0.1:$(_s_port "$i")/test")
      servers+=("b$i")
    done
    export COMBKEY_SPIDER_DIR="$dir"
    export COMBKEY_SPIDER_URL="mysql://root@127.0.0.1:$(_s_port 0)/test"
    export COMBKEY_SPIDER_BACKEND_URLS
    COMBKEY_SPIDER_BACKEND_URLS=$(IFS=,; echo "${urls[*]}")
    export COMBKEY_SPIDER_SERVERS
    COMBKEY_SPIDER_SERVERS=$(IFS=,; echo "${servers[*]}")
  }

  if [ "${COMBKEY_SPIDER_DOCKER:-}" = 1 ]; then
    local compose=(docker compose --profile spider)
    case "$cmd" in
      start)
        "${compose[@]}" up -d --wait spider-head spider-b1 spider-b2 spider-b3 || return 1
        export COMBKEY_SPIDER_URL="mysql://root@127.0.0.1:53320/test"
        export COMBKEY_SPIDER_BACKEND_URLS="mysql://root@127.0.0.1:53321/test,mysql://root@127.0.0.1:53322/test,mysql://root@127.0.0.1:53323/test"
        export COMBKEY_SPIDER_SERVERS="b1,b2,b3"
        ;;
      stop) "${compose[@]}" down -v ;;
      status) "${compose[@]}" ps ;;
      stop-backend) "${compose[@]}" stop "spider-b${2:?backend number}" ;;
      start-backend) "${compose[@]}" start "spider-b${2:?backend number}" ;;
      *) echo "usage: spider.sh start|status|stop|stop-backend N|start-backend N" >&2; return 2 ;;
    esac
    return
  fi

  case "$cmd" in
    start)
      if [ -f "$dir/ports" ] && mariadb-admin --protocol=tcp -h 127.0.0.1 -P "$(_s_port 0)" -uroot ping >/dev/null 2>&1; then
        _s_export; return 0
      fi
      command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] \
        || { echo "spider.sh: MariaDB's server is missing: sudo apt-get install mariadb-server" >&2; return 1; }
      mkdir -p "$dir" && chmod 755 "$dir"
      : > "$dir/ports"
      local i ports=()
      for ((i = 0; i <= n; i++)); do
        ports+=("$(_s_free_port)") || return 1
        echo "${ports[*]}" > "$dir/ports"
      done
      for ((i = 1; i <= n; i++)); do _s_launch "$i" fresh || return 1; done
      _s_launch 0 fresh || return 1
      _s_sql "$(_s_port 0)" "INSTALL SONAME 'ha_spider'" || return 1
      for ((i = 1; i <= n; i++)); do
        _s_sql "$(_s_port 0)" "CREATE OR REPLACE SERVER b$i FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', PORT $(_s_port "$i"), USER 'root', PASSWORD '', DATABASE 'test')" || return 1
      done
      _s_export
      echo "spider.sh: head on 127.0.0.1:$(_s_port 0), backends $COMBKEY_SPIDER_SERVERS on $(_s_ports | cut -d' ' -f2-) ($dir)" >&2
      ;;
    status)
      local i
      for ((i = 0; i <= n; i++)); do
        if mariadb-admin --protocol=tcp -h 127.0.0.1 -P "$(_s_port "$i")" -uroot ping >/dev/null 2>&1; then
          echo "node $i (127.0.0.1:$(_s_port "$i")): up"
        else
          echo "node $i (127.0.0.1:$(_s_port "$i")): down"
        fi
      done
      _s_sql "$(_s_port 0)" "SELECT Server_name, Host, Port FROM mysql.servers ORDER BY Server_name" 2>/dev/null
      ;;
    stop)
      local i
      for ((i = 0; i <= n; i++)); do _s_stop_node "$i"; done
      case "$dir" in */combkey-spider.* | */combkey-test.*/spider) rm -rf "$dir" ;; *) echo "spider.sh: left $dir in place" >&2 ;; esac
      ;;
    stop-backend) _s_stop_node "${2:?backend number}" ;;
    start-backend) _s_launch "${2:?backend number}" ;;
    *)
      echo "usage: spider.sh start|status|stop|stop-backend N|start-backend N" >&2
      return 2
      ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  _combkey_spider "$@" || exit 1
  if [ "${1:-start}" = start ]; then
    echo "COMBKEY_SPIDER_DIR=$COMBKEY_SPIDER_DIR"
    echo "COMBKEY_SPIDER_URL=$COMBKEY_SPIDER_URL"
    echo "COMBKEY_SPIDER_BACKEND_URLS=$COMBKEY_SPIDER_BACKEND_URLS"
    echo "COMBKEY_SPIDER_SERVERS=$COMBKEY_SPIDER_SERVERS"
  fi
else
  _combkey_spider "$@"
fi
