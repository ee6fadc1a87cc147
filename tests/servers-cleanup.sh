#!/usr/bin/env bash
# scripts/servers.sh's servers end with the script that started them, whatever that script
# does with its own traps: one it had before sourcing still runs, one it sets afterwards
# (replacing the servers' EXIT trap) does not keep them alive, and `combkey_on_exit` adds to
# them. A port taken between its choice and the server's start is replaced by another, and a
# server that does not start stops the script with the server's own error. Starts private
# PostgreSQL and MariaDB servers a few times; run by scripts/test.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/combkey-servers-test.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# The commands that write the servers' directory and port to $work/NAME.env.
record() {
  echo "echo dir=\$COMBKEY_TEST_DIR > $work/$1.env; p=\${COMBKEY_PG_URL##*:}; echo port=\${p%%/*} >> $work/$1.env"
}

# Runs a script (in a bash of its own, with no server URL set, so it starts its own).
run() { # name, script
  env -u COMBKEY_PG_URL -u COMBKEY_MYSQL_URL -u COMBKEY_GALERA_URLS -u COMBKEY_SPIDER_URL \
    -u COMBKEY_TEST_DIR -u _COMBKEY_SERVERS_OWNER bash -c "cd '$here'; $2" >"$work/$1.out" 2>&1 \
    || { cat "$work/$1.out" >&2; echo "FAIL $1: the script failed" >&2; exit 1; }
}

# Waits (up to 60 s, polling) until the servers of run NAME are gone: their directory
# deleted and their port closed.
gone() {
  local dir port
  dir=$(sed -n 's/^dir=//p' "$work/$1.env")
  port=$(sed -n 's/^port=//p' "$work/$1.env")
  [ -n "$dir" ] && [ -n "$port" ] || { cat "$work/$1.out" >&2; echo "FAIL $1: it wrote no directory or port" >&2; exit 1; }
  for _ in $(seq 1 300); do
    if [ ! -d "$dir" ] && ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  echo "FAIL $1: the servers outlived the script ($dir, port $port)" >&2
  exit 1
}

# 1. A trap the script had before sourcing runs too, after the servers stop.
run before "trap 'echo mine > $work/before.mark' EXIT; source scripts/servers.sh pg; $(record before)"
[ "$(cat "$work/before.mark" 2>/dev/null)" = mine ] || { echo "FAIL before: the script's own EXIT trap did not run" >&2; exit 1; }
gone before
echo "ok: a trap set before sourcing still runs, and the servers stop"

# 2. A trap the script sets afterwards replaces the servers' one: they stop all the same.
run after "source scripts/servers.sh pg; $(record after); trap 'echo replaced > $work/after.mark' EXIT"
[ "$(cat "$work/after.mark" 2>/dev/null)" = replaced ] || { echo "FAIL after: the script's trap did not run" >&2; exit 1; }
gone after
echo "ok: a trap set after sourcing does not keep the servers alive"

# 3. combkey_on_exit adds to the servers' trap instead of replacing it.
run added "source scripts/servers.sh pg; $(record added); combkey_on_exit 'echo added > $work/added.mark'"
[ "$(cat "$work/added.mark" 2>/dev/null)" = added ] || { echo "FAIL added: combkey_on_exit's command did not run" >&2; exit 1; }
gone added
echo "ok: combkey_on_exit runs the script's command and the servers stop"

# 4. The recipe of servers.sh's header: a shell that sleeps in the background and waits. When
#    the sleep ends, `wait` returns (it does not wait for the watchdog) and the servers stop.
env -u COMBKEY_PG_URL -u COMBKEY_MYSQL_URL -u COMBKEY_GALERA_URLS -u COMBKEY_SPIDER_URL \
  -u COMBKEY_TEST_DIR -u _COMBKEY_SERVERS_OWNER \
  bash -c "cd '$here'; source scripts/servers.sh pg; $(record kept); sleep 600 & echo \$! > $work/kept.sleep; wait" \
  >"$work/kept.out" 2>&1 &
keeper=$!
for _ in $(seq 1 600); do [ -s "$work/kept.sleep" ] && break; sleep 0.2; done
[ -s "$work/kept.sleep" ] || { cat "$work/kept.out" >&2; echo "FAIL kept: the servers did not start" >&2; exit 1; }
kill "$(cat "$work/kept.sleep")"
for _ in $(seq 1 300); do kill -0 "$keeper" 2>/dev/null || break; sleep 0.2; done
kill -0 "$keeper" 2>/dev/null && { echo "FAIL kept: the shell still waits after its sleep ended" >&2; exit 1; }
gone kept
echo "ok: the header's keep-alive recipe ends when its sleep does, and the servers stop"

# 5. A port taken between its choice and the server's start (another test run, any outgoing
#    connection): the server starts on another one, and says so.
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(600)' > "$work/taken.port" &
holder=$!
for _ in $(seq 1 100); do [ -s "$work/taken.port" ] && break; sleep 0.1; done
taken=$(cat "$work/taken.port")
for kind in pg mysql; do
  run "taken_$kind" "export COMBKEY_TEST_TAKEN_PORT=$taken; source scripts/servers.sh $kind; \
    echo \"url=\${COMBKEY_PG_URL:-}\${COMBKEY_MYSQL_URL:-}\" > $work/taken_$kind.env"
  url=$(sed -n 's/^url=//p' "$work/taken_$kind.env")
  case "$url" in *":$taken/"*|"") cat "$work/taken_$kind.out" >&2; echo "FAIL taken_$kind: not started on another port ($url)" >&2; exit 1 ;; esac
  grep -q "port $taken was taken" "$work/taken_$kind.out" || { cat "$work/taken_$kind.out" >&2; echo "FAIL taken_$kind: no word of the taken port" >&2; exit 1; }
done
kill "$holder" 2>/dev/null || true
echo "ok: a port taken between its choice and the start: the servers start on others"

# 6. A server that does not start stops the script that sourced servers.sh (with no `set -e`)
#    with the server's own error, and nothing is left running.
if env -u COMBKEY_PG_URL -u COMBKEY_MYSQL_URL -u COMBKEY_TEST_DIR -u _COMBKEY_SERVERS_OWNER \
  COMBKEY_MYSQL_LOG_FILE_SIZE=nonsense bash -c "cd '$here'; source scripts/servers.sh mysql; echo went on > $work/failed.mark" \
  >"$work/failed.out" 2>&1; then
  cat "$work/failed.out" >&2; echo "FAIL failed: the script went on" >&2; exit 1
fi
[ ! -e "$work/failed.mark" ] || { echo "FAIL failed: the script went on after the server failed" >&2; exit 1; }
grep -q "nonsense" "$work/failed.out" && grep -q "did not start" "$work/failed.out" \
  || { cat "$work/failed.out" >&2; echo "FAIL failed: the server's own error is not shown" >&2; exit 1; }
echo "ok: a server that does not start stops the script, with its own error"
