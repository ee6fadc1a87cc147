#!/usr/bin/env bash
# The streaming standby of scripts/servers.sh's `pgrepl` servers, stopped and started again by
# the tests (a standby that leaves pg_stat_replication while its slot holds WAL back).
#
#   bash scripts/pgrepl.sh stop-standby     # a fast shutdown; its slot on the primary stays
#   bash scripts/pgrepl.sh start-standby    # it reconnects and catches up
#
# Needs COMBKEY_PGREPL_DIR (exported by `source scripts/servers.sh pgrepl`).
set -euo pipefail
dir=${COMBKEY_PGREPL_DIR:?source scripts/servers.sh pgrepl first}
bin=$(cat "$dir/bin")
as() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "${1:-}" in
  stop-standby) as "$bin/pg_ctl" -D "$dir/standby/data" -m fast -w stop >/dev/null ;;
  start-standby) as "$bin/pg_ctl" -D "$dir/standby/data" -l "$dir/standby/log" -w -t 120 -o "$(cat "$dir/standby/opts")" start >/dev/null ;;
  *) echo "usage: pgrepl.sh stop-standby|start-standby" >&2; exit 2 ;;
esac
