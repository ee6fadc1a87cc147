#!/usr/bin/env bash
# `combkey doctor` beside the tools DBAs already trust for the job (pg_repack on PostgreSQL,
# pt-online-schema-change on MariaDB), on the same tables, under the same open-loop writers, in
# one run: each run's time, the writers' p50/p99/max latency and errors during it, the primary
# key's size and leaf density after, and checks of the tables (docs/benchmarks.md).
#
#   scripts/bench-peers.sh                          # 300,000 parents, both databases
#   scripts/bench-peers.sh --parents 300000,3000000 --backends postgres
#
# Arguments go to `combkey-bench peers` (--rate, --writers, --runs, ...; `--help`). The peers
# come from Debian's packages (scripts/deps.sh installs them); the servers are private and
# throwaway (scripts/servers.sh), MariaDB's buffer pool sized to the data as a DBA would
# (COMBKEY_MYSQL_BUFFER_POOL, default 1G here: its leaf density is read from the pages in it).
# Results in $OUT (default target/combkey-bench/peers): summary-peers.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export COMBKEY_DEPS_PEERS=1
source scripts/deps.sh
export COMBKEY_MYSQL_BUFFER_POOL="${COMBKEY_MYSQL_BUFFER_POOL:-1G}"
export COMBKEY_MYSQL_LOG_FILE_SIZE="${COMBKEY_MYSQL_LOG_FILE_SIZE:-512M}"
source scripts/servers.sh pg mysql
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p combkey-cli -p combkey-bench
export COMBKEY_BENCH_NOTE="${COMBKEY_BENCH_NOTE:-$(date -u +%F), $(nproc) cores, PostgreSQL $(psql --version | awk '{print $3}'), MariaDB $(mariadbd --version | awk '{print $3}')}"
"$target/release/combkey-bench" --out "${OUT:-target/combkey-bench/peers}" peers --combkey "$target/release/combkey" "$@"
