//! SQLite: what combkey knows about it.
//!
//! - Column type `BLOB`, holding the public bytes: SQLite compares blobs with `memcmp`, so
//!   `ORDER BY id` is creation order. A `CHECK (length(id) = 16)` keeps other values out
//!   (SQLite's columns take any type of value otherwise).
//! - An id as a literal: `X'017F22E279B07CC398C4DC0C0C07398F'`.
//! - Identifiers: double quotes; no length limit of SQLite's own; names compare without
//!   regard to ASCII case.
//! - No stored functions: ids are made in the application; the milliseconds of an id are an
//!   expression ([`Backend::unix_ms_expr`]).
//! - No table partitioning.

use crate::backend::{Backend, Dialect, hex_upper, quote_with};
use crate::error::Error;
use crate::sql::partitions::PartitionDdl;

/// SQLite's module (see [`Backend::Sqlite`]).
pub(crate) struct Sqlite;

impl Dialect for Sqlite {
    fn names(&self) -> &'static [&'static str] {
        &["sqlite", "sqlite3"]
    }

    fn column_type(&self) -> &'static str {
        "BLOB"
    }

    fn stored_text(&self, stored: [u8; 16]) -> String {
        hex_upper(&stored)
    }

    fn literal(&self, stored: [u8; 16]) -> String {
        format!("X'{}'", hex_upper(&stored))
    }

    fn quote(&self, name: &str) -> String {
        quote_with(name, '"', '"')
    }

    fn max_identifier_len(&self) -> usize {
        // SQLite sets none; this bounds what a name may cost in a statement.
        1024
    }

    fn primary_key(&self, name: &str) -> String {
        format!("{name} BLOB NOT NULL PRIMARY KEY CHECK (length({name}) = 16)")
    }

    fn unix_ms_expr(&self, column: &str) -> String {
        let digits: Vec<String> = (0..12)
            .map(|i| {
                format!("((instr('0123456789ABCDEF', substr(hex({column}), {}, 1)) - 1) << {})", i + 1, 4 * (11 - i))
            })
            .collect();
        format!("({})", digits.join(" | "))
    }

    fn migration_notes(&self) -> String {
        format!(
            "-- SQLite has no stored functions: make ids in the application.\n-- Milliseconds of an id: {}\n",
            self.unix_ms_expr("id")
        )
    }

    fn partitions(&self) -> Result<&'static dyn PartitionDdl, Error> {
        Err(Error::config(
            "backend for partitions",
            Backend::Sqlite,
            "postgres, mysql or sqlserver (SQLite has no table partitioning)",
        ))
    }
}
