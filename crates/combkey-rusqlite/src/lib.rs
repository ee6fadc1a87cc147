//! [`combkey`] ids as a column type for [rusqlite]: `ToSql` and `FromSql` for [`Comb`], a
//! 16-byte `BLOB` of the public bytes. SQLite compares blobs with `memcmp`, so
//! `ORDER BY id` is creation order and a range of ids is a range of times.
//!
//! [`Comb`] is a thin newtype over [`combkey::Comb`] (Rust's orphan rule keeps the traits out
//! of both crates), converting to and from the core type for free.
//!
//! | SQLite value | reads as |
//! | --- | --- |
//! | `BLOB` of 16 bytes | the id |
//! | `TEXT` holding UUID text (any form combkey parses) | the id, so tables keyed by UUID text read too |
//! | `BLOB` of another length | `FromSqlError::InvalidBlobSize` |
//! | UUID text stored as a `BLOB`, text that is not a UUID | `FromSqlError::Other` with combkey's message |
//! | `NULL`, a number | `FromSqlError::InvalidType` (use `Option<Comb>` for a nullable column) |
//!
//! For a table keyed by UUID *text* (`TEXT` holding `017f22e2-...`), use [`CombText`]: it
//! reads the same and writes the text, so lookups by key match the stored values.
//!
//! Nothing panics on what the database holds.
//!
//! # Example
//!
//! ```
//! use combkey_rusqlite::Comb;
//! use rusqlite::{Connection, params};
//!
//! let db = Connection::open_in_memory()?;
//! db.execute_batch("CREATE TABLE orders (id BLOB PRIMARY KEY CHECK (length(id) = 16), note TEXT NOT NULL)")?;
//! let first = Comb::new();
//! let second = Comb::new();
//! db.execute("INSERT INTO orders (id, note) VALUES (?1, ?2)", params![second, "second"])?;
//! db.execute("INSERT INTO orders (id, note) VALUES (?1, ?2)", params![first, "first"])?;
//! let mut stmt = db.prepare("SELECT id, note FROM orders ORDER BY id")?;
//! let rows: Vec<(Comb, String)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
//! assert_eq!(rows, [(first, "first".to_string()), (second, "second".to_string())]);
//! # Ok::<(), rusqlite::Error>(())
//! ```
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas (a string, format `uuid`).
//!
//! [rusqlite]: https://github.com/rusqlite/rusqlite
//!
//! # Versions
//!
//! Minimum Rust version: 1.87 (rusqlite 0.43 itself needs 1.89). Public dependencies (their
//! types are in this crate's API): rusqlite, any release from 0.32 to 0.43 (its `ToSql` and
//! `FromSql`, the same in all of them; the ends and 0.37 are tested in CI), and `combkey` (an
//! exact version: this crate uses its adapter-only items). No feature selects the rusqlite
//! version: cargo takes the one your build has. A host's previous major line stays supported
//! for at least 12 months after its next one is released, and dropping one is a new release of
//! this crate that bumps its own version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod types;

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a rusqlite column type: a 16-byte `BLOB` of the public bytes,
    /// which SQLite compares with `memcmp`, so `ORDER BY id` is creation order.
    ///
    /// ```
    /// let id = combkey_rusqlite::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_rusqlite::Comb::from(core), id);
    /// ```
    pub struct Comb;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a `TEXT` key column (a table keyed by UUID text, as rusqlite
    /// writes `uuid::Uuid` with its `uuid` feature off or as applications store ids they
    /// print): written as the lowercase hyphenated text, read from any UUID text form (or a
    /// 16-byte `BLOB`). Text compares as text, so `ORDER BY id` on a v7 id is creation order
    /// too; it takes 36 bytes where [`Comb`] takes 16.
    ///
    /// ```
    /// use combkey_rusqlite::CombText;
    /// use rusqlite::{Connection, params};
    ///
    /// let db = Connection::open_in_memory()?;
    /// db.execute_batch("CREATE TABLE orders (id TEXT PRIMARY KEY)")?;
    /// let id = CombText::new();
    /// db.execute("INSERT INTO orders (id) VALUES (?1)", params![id])?;
    /// let text: String = db.query_row("SELECT id FROM orders", [], |r| r.get(0))?;
    /// assert_eq!(text, id.to_string());
    /// let back: CombText = db.query_row("SELECT id FROM orders WHERE id = ?1", [id], |r| r.get(0))?;
    /// assert_eq!(back, id);
    /// # Ok::<(), rusqlite::Error>(())
    /// ```
    pub struct CombText;
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
