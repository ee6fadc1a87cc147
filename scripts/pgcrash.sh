#!/usr/bin/env bash
# The PostgreSQL server of scripts/servers.sh's `pgcrash`, crashed and started again by a test:
# an immediate stop (no checkpoint: at the next start the server recovers from its WAL, and
# UNLOGGED tables come back empty, as after a power cut or a killed postmaster).
#
#   bash scripts/pgcrash.sh crash
#
# Needs COMBKEY_PGCRASH_DIR (exported by `source scripts/servers.sh pgcrash`).
set -euo pipefail
dir=${COMBKEY_PGCRASH_DIR:?source scripts/servers.sh pgcrash first}
bin=$(cat "$dir/bin")
as() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "${1:-}" in
  crash)
    as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 120 -o "$(cat "$dir/opts")" start >/dev/null
    ;;
  *) echo "usage: pgcrash.sh crash" >&2; exit 2 ;;
esac
