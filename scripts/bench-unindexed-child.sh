#!/usr/bin/env bash
# An application writing to a referencing table without an index while `combkey doctor --apply`
# converts its parent's keys (PostgreSQL): 30,000 parents, 60,000 children referencing them
# through an unindexed column, 10,000 more children the run never touches, which two pgbench
# clients update as fast as they can. Prints the run's time and the writers' longest wait.
# docs/doctor.md ("An unindexed referencing column") has the results.
#
#   source scripts/servers.sh pg
#   scripts/bench-unindexed-child.sh [path/to/combkey]     # default: target/release/combkey
set -euo pipefail
url=${COMBKEY_PG_URL:?source scripts/servers.sh pg first}
bin=${1:-${CARGO_TARGET_DIR:-target}/release/combkey}
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbench" ] || pgbench=$(command -v pgbench)
work=$(mktemp -d "${TMPDIR:-/tmp}/combkey-unindexed.XXXXXX")
trap 'rm -rf "$work"' EXIT
psql "$url" -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_unindexed_items; DROP TABLE IF EXISTS bench_unindexed;
DROP TABLE IF EXISTS combkey_keymap_bench_unindexed;
CREATE TABLE bench_unindexed (id uuid PRIMARY KEY, seq int NOT NULL);
CREATE TABLE bench_unindexed_items (n int PRIMARY KEY, parent uuid REFERENCES bench_unindexed (id), v int DEFAULT 0);
-- Version 1 keys (a time field from the counter), each parent referenced by two children.
INSERT INTO bench_unindexed
  SELECT (lpad(to_hex(g), 8, '0') || '-0000-11ee-8000-' || lpad(to_hex(g), 12, '0'))::uuid, g FROM generate_series(1, 30000) g;
INSERT INTO bench_unindexed_items SELECT g, b.id FROM generate_series(1, 60000) g JOIN bench_unindexed b ON b.seq = 1 + g % 30000;
INSERT INTO bench_unindexed_items SELECT g, NULL FROM generate_series(60001, 70000) g;
VACUUM ANALYZE bench_unindexed; VACUUM ANALYZE bench_unindexed_items;
SQL
printf '%s\n' '\set r random(60001, 70000)' 'UPDATE bench_unindexed_items SET v = v + 1 WHERE n = :r;' >"$work/w.sql"
bin=$(realpath "$bin")
cd "$work"
# One-second pgbench runs one after another until the run ends (each ends cleanly, its log
# written, after its last update: one that waits is logged with its whole wait).
( i=0; while [ ! -e done ]; do i=$((i + 1)); "$pgbench" "$url" -n -f w.sql -c 2 -T 1 -l --log-prefix="w$i" >>pgbench.out 2>&1; done ) &
writers=$!
# The writers at work first (their first log lines).
for _ in $(seq 1 100); do compgen -G "$work/w1.*" >/dev/null && break; sleep 0.1; done
start=$(date +%s.%N)
"$bin" doctor --url "$url" --table bench_unindexed --apply --lock-timeout 3600s >"$work/doctor.out" 2>&1 \
  || { touch done; wait "$writers" || true; cat "$work/doctor.out" >&2; exit 1; }
end=$(date +%s.%N)
touch done
wait "$writers" || true
cd - >/dev/null
awk -v s="$start" -v e="$end" 'BEGIN { printf "combkey doctor --apply: %.2f s\n", e - s }'
# pgbench's log: the third field is each transaction's latency in microseconds.
cat "$work"/w[0-9]*.* | awk '{ if ($3 > m) m = $3; n++ } END { printf "writers: %d updates, the longest took %.1f ms\n", n, m / 1000 }'
