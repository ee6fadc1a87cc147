#!/usr/bin/env bash
# docs/migrating.md, run: each app as written for uuid::Uuid (feature `before`), then the same
# app with only its id type changed to combkey's, on the same database. The new version reads
# and changes the rows the old one wrote, the old one reads the new one's rows, and the list
# is in creation order either way. PostgreSQL (diesel) from COMBKEY_PG_URL (scripts/servers.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bins=(sqlx_todos sea_orm_posts sea_orm_generated diesel_posts)
# Built and copied under a lock: another checkout's run sharing the target directory builds
# the same binaries' paths.
mkdir -p "$target"
(
  flock 9
  cargo build -q -p migrating --features before --bins
  for b in "${bins[@]}"; do cp "$target/debug/$b" "$tmp/$b-before"; done
  cargo build -q -p migrating --bins
  for b in "${bins[@]}"; do cp "$target/debug/$b" "$tmp/$b-after"; done
) 9>>"$target/combkey-bins.lock"

fail() { echo "migrating: $*" >&2; exit 1; }
expect() { # expect NAME OUTPUT LINE...
  local name=$1 out=$2; shift 2
  local want; want=$(printf '%s\n' "$@")
  [ "$out" = "$want" ] || fail "$name: expected
$want
got
$out"
}

# sqlx on SQLite (BLOB keys).
export DATABASE_URL="sqlite:$tmp/todos.db?mode=rwc"
old=$("$tmp/sqlx_todos-before" add "written by the uuid app" | awk '{print $NF}')
new=$("$tmp/sqlx_todos-after" add "written by the combkey app" | awk '{print $NF}')
"$tmp/sqlx_todos-after" done "$old" | grep -qx "Todo $old is marked as done" || fail "sqlx: done on the old row"
expect sqlx "$("$tmp/sqlx_todos-before" list)" "- [x] $old: written by the uuid app" "- [ ] $new: written by the combkey app"
expect sqlx "$("$tmp/sqlx_todos-after" list)" "- [x] $old: written by the uuid app" "- [ ] $new: written by the combkey app"

# sea-orm on SQLite.
export DATABASE_URL="sqlite:$tmp/posts.db?mode=rwc"
old=$("$tmp/sea_orm_posts-before" add "old" | awk '{print $NF}')
new=$("$tmp/sea_orm_posts-after" add "new" | awk '{print $NF}')
"$tmp/sea_orm_posts-after" rename "$old" "old, renamed by the combkey app" >/dev/null
expect sea-orm "$("$tmp/sea_orm_posts-before" list)" "- $old: old, renamed by the combkey app" "- $new: new"
expect sea-orm "$("$tmp/sea_orm_posts-after" list)" "- $old: old, renamed by the combkey app" "- $new: new"
# The entities derive serde: the same JSON from both (combkey-sea-orm's `serde` feature).
expect sea-orm "$("$tmp/sea_orm_posts-after" json)" "$("$tmp/sea_orm_posts-before" json)"

# sea-orm with generated entities (Uuid kept) and the id made in before_save: the combkey
# version makes v7 ids, in creation order, in the table the old version filled.
export DATABASE_URL="sqlite:$tmp/notes.db?mode=rwc"
"$tmp/sea_orm_generated-before" add "random" >/dev/null
"$tmp/sea_orm_generated-after" list | grep -q ' v4: random$' || fail "sea-orm generated: the old row, read by the new version"
made=()
for n in 1 2 3 4 5; do
  made+=("$("$tmp/sea_orm_generated-after" add "note $n" | sed 's/.*"id":"\([^"]*\)".*/\1/')")
done
listed=$("$tmp/sea_orm_generated-after" list | grep -v ': random$')
want=$(for n in 1 2 3 4 5; do echo "- ${made[$((n-1))]} v7: note $n"; done)
[ "$listed" = "$want" ] || fail "sea-orm generated: expected the combkey ids in creation order:
$want
got
$listed"

# diesel on PostgreSQL (uuid keys).
if [ -z "${COMBKEY_PG_URL:-}" ]; then
  echo "migrating: diesel SKIPPED (no COMBKEY_PG_URL; source scripts/servers.sh)"
else
  export DATABASE_URL="$COMBKEY_PG_URL"
  "$tmp/diesel_posts-after" drop
  old=$("$tmp/diesel_posts-before" add "old" | awk '{print $NF}')
  new=$("$tmp/diesel_posts-after" add "new" | awk '{print $NF}')
  "$tmp/diesel_posts-after" publish "$old" | grep -qx "Published 1 post $old" || fail "diesel: publish the old row"
  expect diesel "$("$tmp/diesel_posts-before" list)" "- [x] $old: old" "- [ ] $new: new"
  expect diesel "$("$tmp/diesel_posts-after" list)" "- [x] $old: old" "- [ ] $new: new"
  "$tmp/diesel_posts-after" drop
fi
echo "migrating: the uuid::Uuid apps and their combkey versions share their databases"
