//! PostgreSQL: what combkey knows about it.
//!
//! - Column type `uuid`, holding the public bytes: PostgreSQL compares `uuid` values as
//!   bytes 0..15 left to right (`memcmp` of RFC order), so `ORDER BY id` is creation order.
//! - An id as a literal: `'017f22e2-79b0-7cc3-98c4-dc0c0c07398f'` (a string PostgreSQL casts
//!   to `uuid` where the context asks for one).
//! - Identifiers: double quotes, at most 63 bytes (`NAMEDATALEN - 1`); unquoted names fold to
//!   lower case.
//! - Database-side functions in PL/pgSQL (no C extension): `combkey_v7()`,
//!   `combkey_unix_ms(id)`, `combkey_time(id)`, installed by [`Backend::install_functions`].
//! - Partitions: declarative `PARTITION BY RANGE (id)` with one `PARTITION OF ... FOR
//!   VALUES FROM ... TO ...` per interval ([`crate::sql::Partitioning`]).

use crate::backend::{Backend, Dialect, functions_text, quote_with};
use crate::error::Error;
use crate::sql::partitions::{Part, PartitionDdl, Partitioning};
use crate::time::Timestamp;

/// PostgreSQL's module (see [`Backend::Postgres`]).
pub(crate) struct Postgres;

impl Dialect for Postgres {
    fn names(&self) -> &'static [&'static str] {
        &["postgres", "postgresql", "pg"]
    }

    fn column_type(&self) -> &'static str {
        "uuid"
    }

    fn stored_text(&self, stored: [u8; 16]) -> String {
        uuid::Uuid::from_bytes(stored).hyphenated().to_string()
    }

    fn literal(&self, stored: [u8; 16]) -> String {
        format!("'{}'", self.stored_text(stored))
    }

    fn quote(&self, name: &str) -> String {
        quote_with(name, '"', '"')
    }

    fn max_identifier_len(&self) -> usize {
        63
    }

    fn primary_key(&self, name: &str) -> String {
        format!("{name} uuid PRIMARY KEY DEFAULT combkey_v7()")
    }

    fn install_functions(&self) -> &'static str {
        include_str!("postgres.up.sql")
    }

    fn drop_functions(&self) -> &'static str {
        include_str!("postgres.down.sql")
    }

    fn unix_ms_expr(&self, column: &str) -> String {
        format!("combkey_unix_ms({column})")
    }

    fn migration_notes(&self) -> String {
        functions_text(self)
    }

    fn partitions(&self) -> Result<&'static dyn PartitionDdl, Error> {
        Ok(&Postgres)
    }
}

impl Postgres {
    /// A partition is a table of its own: `orders_2026_01`.
    fn name(p: &Partitioning, part: &Part) -> String {
        format!("{}_{}", p.table(), part.suffix)
    }

    fn partition(p: &Partitioning, part: &Part) -> Result<String, Error> {
        Ok(format!(
            "CREATE TABLE IF NOT EXISTS {name} PARTITION OF {t} FOR VALUES FROM ({lo}) TO ({hi});\n",
            name = Self::name(p, part),
            t = p.table(),
            lo = Partitioning::bound(Backend::Postgres, part.start)?,
            hi = Partitioning::bound(Backend::Postgres, part.end)?,
        ))
    }
}

impl PartitionDdl for Postgres {
    fn create(&self, p: &Partitioning, parts: &[Part], default: bool) -> Result<String, Error> {
        let (t, k) = (p.table(), p.key());
        let mut s = format!(
            "-- The table must be partitioned by its key, e.g.:\n\
             --   CREATE TABLE {t} ({k} uuid NOT NULL, ..., PRIMARY KEY ({k})) PARTITION BY RANGE ({k});\n"
        );
        for part in parts {
            s.push_str(&Self::partition(p, part)?);
        }
        if default {
            s.push_str(&format!("CREATE TABLE {t}_default PARTITION OF {t} DEFAULT;\n"));
        }
        Ok(s)
    }

    fn drop_before(&self, p: &Partitioning, parts: &[Part], _edge: Timestamp) -> Result<String, Error> {
        Ok(parts.iter().map(|part| format!("DROP TABLE IF EXISTS {};\n", Self::name(p, part))).collect())
    }

    fn add(&self, p: &Partitioning, parts: &[Part], _default: bool) -> Result<String, Error> {
        parts.iter().map(|part| Self::partition(p, part)).collect()
    }
}
