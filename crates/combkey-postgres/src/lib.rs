//! [`combkey`] ids as a column type for [rust-postgres]: `postgres_types::ToSql` and
//! `FromSql`, so [`Comb`] binds and reads as a PostgreSQL `uuid` through `tokio-postgres`,
//! `postgres`, `deadpool-postgres`, `bb8-postgres` and the query builders on them.
//!
//! [`Comb`] is a thin newtype over [`combkey::Comb`] (Rust's orphan rule keeps the traits out
//! of both crates), converting to and from the core type for free.
//!
//! | PostgreSQL | Rust |
//! | --- | --- |
//! | `uuid` | `Comb` (`Option<Comb>` for `NULL`) |
//! | `uuid[]` | `Vec<Comb>`, `&[Comb]` |
//! | `text`, `varchar`, `char(36)` holding UUID text | [`CombText`] (reads and writes the text); `Comb` reads it too |
//!
//! Bad data is an error that says what was found, never a panic: a value of another length
//! than 16 bytes, text that is not a UUID, `NULL` into a `Comb` (rust-postgres' `WasNull`).
//!
//! # Example
//!
//! ```no_run
//! # async fn f() -> Result<(), tokio_postgres::Error> {
//! use combkey_postgres::Comb;
//!
//! let (client, connection) = tokio_postgres::connect("host=127.0.0.1 user=postgres dbname=test", tokio_postgres::NoTls).await?;
//! tokio::spawn(connection);
//! client.batch_execute("CREATE TABLE orders (id uuid PRIMARY KEY, note text NOT NULL)").await?;
//! let id = Comb::new();
//! client.execute("INSERT INTO orders (id, note) VALUES ($1, $2)", &[&id, &"first"]).await?;
//! let row = client.query_one("SELECT id FROM orders WHERE id = $1", &[&id]).await?;
//! let back: Comb = row.try_get(0)?;
//! assert_eq!(back, id);
//! # Ok(()) }
//! ```
//!
//! The same conversion without a server (what the driver does with the bytes):
//!
//! ```
//! use bytes::BytesMut;
//! use combkey_postgres::Comb;
//! use postgres_types::{FromSql, ToSql, Type};
//!
//! let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
//! let mut wire = BytesMut::new();
//! id.to_sql_checked(&Type::UUID, &mut wire)?;
//! assert_eq!(&wire[..], id.to_comb().as_bytes());
//! assert_eq!(Comb::from_sql(&Type::UUID, &wire)?, id);
//! let err = Comb::from_sql(&Type::UUID, &wire[..15]).unwrap_err();
//! assert!(err.to_string().contains("15"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! ```
//!
//! # Bulk loading
//!
//! `COPY ... FROM STDIN (FORMAT binary)` through tokio-postgres' `BinaryCopyInWriter` takes
//! [`Comb`] for a `uuid` column like any `ToSql` value ([the tests](https://github.com/combkey/combkey/blob/main/crates/combkey-postgres/tests/postgres.rs)
//! load 100,000 rows that way).
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas (a string, format `uuid`).
//!
//! [rust-postgres]: https://github.com/sfackler/rust-postgres
//!
//! # Versions
//!
//! Minimum Rust version: 1.87. Public dependencies (their types are in this crate's API):
//! postgres-types 0.2 (its `ToSql` and `FromSql`, which tokio-postgres 0.7, postgres 0.19 and
//! deadpool-postgres use) and `combkey` (an exact version: this crate uses its adapter-only
//! items). postgres-types 0.3 is supported in a new release of this crate that bumps its own
//! version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod types;

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a rust-postgres column type: PostgreSQL `uuid` (and `uuid[]`
    /// as `Vec<Comb>`), the public bytes, so `ORDER BY id` is creation order.
    ///
    /// ```
    /// let id = combkey_postgres::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_postgres::Comb::from(core), id);
    /// ```
    pub struct Comb;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a `text`, `varchar` or `char(36)` key column (a table keyed by
    /// UUID text): bound as the lowercase hyphenated text, read from any UUID text form (or a
    /// `uuid` value). `WHERE id = $1` then compares text with text; a v7 id's text sorts in
    /// creation order too. Such a table can move to `uuid` with `combkey doctor`.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use combkey_postgres::CombText;
    /// use postgres_types::{FromSql, ToSql, Type};
    ///
    /// let id: CombText = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse()?;
    /// let mut wire = BytesMut::new();
    /// id.to_sql_checked(&Type::TEXT, &mut wire)?;
    /// assert_eq!(&wire[..], b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// assert_eq!(CombText::from_sql(&Type::BPCHAR, &wire)?, id);
    /// assert!(id.to_sql_checked(&Type::UUID, &mut wire).is_err(), "a uuid column takes Comb");
    /// # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    /// ```
    pub struct CombText;
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
