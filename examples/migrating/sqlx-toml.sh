#!/usr/bin/env bash
# docs/migrating.md's claims about sqlx.toml, checked by compiling crates/combkey-sqlx-toml-test
# (whose sqlx.toml maps PostgreSQL's `UUID` to combkey_sqlx::Comb) two more ways. Its own
# tests (run by scripts/test) show the overrides at work and `.into()` binding a
# `uuid::Uuid` held by a test helper.
#   1. With the override, a `query!` parameter is a `Comb` in the whole package, tests too:
#      a helper that binds a `uuid::Uuid` stops compiling.
#   2. Without sqlx's `sqlx-toml` feature, sqlx 0.9 stops at the file with an error that
#      names the feature (it is not ignored without a word, as was reported before this was
#      checked: that happens to a sqlx.toml anywhere but next to the Cargo.toml of the crate
#      whose code calls the macros, sqlx's documented rule).
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "sqlx-toml: $*" >&2; exit 1; }

out=$(COMBKEY_COMPILE_FAIL_UUID_PARAM=1 cargo check -q -p combkey-sqlx-toml-test --tests 2>&1) \
  && fail "a uuid::Uuid bound to an overridden query! parameter compiled"
grep -q 'expected `Comb`, found `Uuid`' <<<"$out" || fail "not the expected error:
$out"
echo "ok: with the 'UUID' override, binding a uuid::Uuid to query! fails: expected \`Comb\`, found \`Uuid\`"

out=$(cargo check -q -p combkey-sqlx-toml-test --tests --no-default-features 2>&1) \
  && fail "the package compiled without sqlx's sqlx-toml feature"
grep -q 'found config file at .*sqlx.toml" but the `sqlx-toml` feature was not enabled' <<<"$out" || fail "not the expected error:
$out"
echo "ok: without sqlx's sqlx-toml feature, query! stops at sqlx.toml: the \`sqlx-toml\` feature was not enabled"
