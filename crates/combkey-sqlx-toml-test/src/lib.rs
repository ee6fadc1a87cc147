//! Not a library: tests that combkey-sqlx's column types work as `sqlx.toml` overrides for
//! sqlx's `query!` macros (`tests/overrides.rs`, with this crate's `sqlx.toml`). sqlx reads
//! `sqlx.toml` from the crate that invokes its macros, so the test needs a crate of its own.
