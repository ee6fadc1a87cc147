#!/usr/bin/env bash
# The `combkey` command against real databases: ids made by the CLI, inserted in shuffled
# order through each database's own client, come back from ORDER BY in generation order,
# and the database's own functions read the same milliseconds the CLI reports.
#
# Needs COMBKEY_PG_URL and COMBKEY_MYSQL_URL (scripts/db.sh exports them) and the combkey binary
# (COMBKEY_BIN, default target/debug/combkey). Prints 'N passed, N failed'; exits non-zero on
# any failure or when a database is unreachable (a database test never skips silently).
set -uo pipefail

bin=${COMBKEY_BIN:-target/debug/combkey}
n=${COMBKEY_DB_ROWS:-2000}
passed=0
failed=0
work=$(mktemp -d)
table="combkey_cli_$$_$RANDOM"
trap 'rm -rf "$work"' EXIT

check() { # name, expected file, actual file
  if cmp -s "$2" "$3"; then
    passed=$((passed + 1)); echo "ok   $1"
  else
    failed=$((failed + 1)); echo "FAIL $1"; diff "$2" "$3" | head -n 5
  fi
}
check_eq() { # name, expected, actual
  if [ "$2" = "$3" ]; then
    passed=$((passed + 1)); echo "ok   $1"
  else
    failed=$((failed + 1)); echo "FAIL $1: expected '$2', got '$3'"
  fi
}

: "${COMBKEY_PG_URL:?set COMBKEY_PG_URL (source scripts/db.sh)}"
: "${COMBKEY_MYSQL_URL:?set COMBKEY_MYSQL_URL (source scripts/db.sh)}"
if ! [[ $COMBKEY_MYSQL_URL =~ ^mysql://([^:@/]+)(:([^@/]*))?@([^:/]+)(:([0-9]+))?/([^?]+) ]]; then
  echo "db-cli.sh: cannot read COMBKEY_MYSQL_URL=$COMBKEY_MYSQL_URL" >&2; exit 1
fi
my_user=${BASH_REMATCH[1]} my_pass=${BASH_REMATCH[3]} my_host=${BASH_REMATCH[4]} my_port=${BASH_REMATCH[6]:-3306} my_db=${BASH_REMATCH[7]}
pg() { psql "$COMBKEY_PG_URL" -v ON_ERROR_STOP=1 -qtA "$@"; }
my() { MYSQL_PWD="$my_pass" mariadb -h "$my_host" -P "$my_port" -u "$my_user" "$my_db" -N -B "$@"; }

pg -c 'SELECT 1' >/dev/null || { echo "db-cli.sh: PostgreSQL unreachable at $COMBKEY_PG_URL" >&2; exit 1; }
my -e 'SELECT 1' >/dev/null || { echo "db-cli.sh: MariaDB unreachable at $COMBKEY_MYSQL_URL" >&2; exit 1; }
cleanup_tables() {
  pg -c "DROP TABLE IF EXISTS $table" >/dev/null 2>&1
  my -e "DROP TABLE IF EXISTS $table; DROP TABLE IF EXISTS ${table}_u" >/dev/null 2>&1
}
trap 'cleanup_tables; rm -rf "$work"' EXIT

"$bin" new -n "$n" > "$work/ids"
shuf "$work/ids" > "$work/shuffled"
first=$(head -n 1 "$work/ids")
first_ms=$("$bin" inspect --json "$first" | sed -E 's/.*"unix_ms":([0-9]+).*/\1/')

# PostgreSQL uuid: the public bytes, compared left to right.
pg -c "CREATE TABLE $table (id uuid PRIMARY KEY, n int)"
pg -c "COPY $table (id) FROM STDIN" < "$work/shuffled"
pg -c "SELECT id FROM $table ORDER BY id" > "$work/pg"
check "PostgreSQL uuid: ORDER BY id is generation order ($n ids)" "$work/ids" "$work/pg"
pg_ms=$(pg -c "SELECT ('x' || lpad(substr(replace(id::text, '-', ''), 1, 12), 16, '0'))::bit(64)::bigint FROM $table WHERE id = '$first'")
check_eq "PostgreSQL reads the CLI's milliseconds" "$first_ms" "$pg_ms"

# MariaDB BINARY(16): the public bytes; HEX() shows the CLI's mysql form.
"$bin" convert --from canonical --to mysql < "$work/shuffled" | sed -E "s/^(.*)$/INSERT INTO $table (id) VALUES (UNHEX('\1'));/" > "$work/my.sql"
my -e "CREATE TABLE $table (id BINARY(16) PRIMARY KEY, n int)"
my < "$work/my.sql"
my -e "SELECT HEX(id) FROM $table ORDER BY id" | "$bin" convert --from mysql --to canonical > "$work/my"
check "MariaDB BINARY(16): ORDER BY id is generation order" "$work/ids" "$work/my"
my_ms=$(my -e "SELECT CONV(LEFT(HEX(id), 12), 16, 10) FROM $table ORDER BY id LIMIT 1")
check_eq "MariaDB reads the CLI's milliseconds" "$first_ms" "$my_ms"

# MariaDB UUID type (10.7+): v7 ids are stored as given and sort bytewise.
if my -e "CREATE TABLE ${table}_u (id UUID PRIMARY KEY)" 2>/dev/null; then
  sed -E "s/^(.*)$/INSERT INTO ${table}_u (id) VALUES ('\1');/" "$work/shuffled" | my
  my -e "SELECT id FROM ${table}_u ORDER BY id" > "$work/myu"
  check "MariaDB UUID type: v7 ids ORDER BY id in generation order" "$work/ids" "$work/myu"
else
  echo "note: this MariaDB has no UUID type (before 10.7): that leg does not apply"
fi

# `combkey sql DIALECT --up` installs the database-side functions as printed; their ids are
# v7 ids the CLI reads, carrying the database's clock.
"$bin" sql postgres --up | pg >/dev/null
pg_id=$(pg -c "SELECT combkey_v7()")
pg_layout=$("$bin" inspect --json "$pg_id" | sed -E 's/.*"layout":"([^"]+)".*/\1/')
check_eq "PostgreSQL combkey_v7() makes a v7 id" "v7" "$pg_layout"
pg_gap=$(pg -c "SELECT abs(combkey_unix_ms('$pg_id') - (extract(epoch FROM clock_timestamp()) * 1000)::bigint) < 5000")
check_eq "PostgreSQL combkey_unix_ms reads its time" "t" "$pg_gap"
"$bin" sql mysql --down | my
"$bin" sql mysql --up | my
my_id=$(my -e "SELECT HEX(combkey_v7())" | "$bin" convert --from mysql --to canonical)
my_layout=$("$bin" inspect --json "$my_id" | sed -E 's/.*"layout":"([^"]+)".*/\1/')
check_eq "MariaDB combkey_v7() makes a v7 id" "v7" "$my_layout"
my_ms=$("$bin" inspect --json "$my_id" | sed -E 's/.*"unix_ms":([0-9]+).*/\1/')
check_eq "MariaDB combkey_unix_ms agrees with the CLI" "$my_ms" "$(my -e "SELECT combkey_unix_ms(UNHEX('$("$bin" convert --from canonical --to mysql "$my_id")'))")"

# SQLite BLOB (the command-line client; the Rust adapters test it embedded).
if command -v sqlite3 >/dev/null 2>&1; then
  { echo "CREATE TABLE t (id BLOB PRIMARY KEY);"
    "$bin" convert --from canonical --to mysql < "$work/shuffled" | sed -E "s/^(.*)$/INSERT INTO t VALUES (X'\1');/"
    echo "SELECT hex(id) FROM t ORDER BY id;"; } | sqlite3 ":memory:" | "$bin" convert --from mysql --to canonical > "$work/sqlite"
  check "SQLite BLOB: ORDER BY id is generation order" "$work/ids" "$work/sqlite"
else
  failed=$((failed + 1)); echo "FAIL sqlite3 client missing (scripts/db.sh installs it)"
fi

echo "db-cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
