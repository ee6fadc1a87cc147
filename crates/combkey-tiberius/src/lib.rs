//! [`combkey`] ids for SQL Server through [tiberius](https://docs.rs/tiberius).
//!
//! tiberius is the open-source way from Rust to SQL Server (sqlx dropped it; diesel and
//! open-source sea-orm never had it), and SQL Server is the database where the stored form
//! of an id differs from the public one. [`Comb`] is a newtype over [`combkey::Comb`] (the
//! orphan rule keeps tiberius' traits for the core type here) that converts both ways for
//! free.
//!
//! # What it stores
//!
//! | backend | column | stored | also reads |
//! | --- | --- | --- | --- |
//! | SQL Server | `uniqueidentifier` | the public bytes permuted into the suffix layout | `binary(16)` holding the public bytes (as on MySQL and SQLite), `char(36)`/`nvarchar(36)` UUID text |
//!
//! SQL Server compares `uniqueidentifier`s by display bytes 10..15 first, then 8..9, 7..6,
//! 5..4, 3..0. [`Comb`] sends the permutation of the public id for which that order *is*
//! the public order ([`combkey::Comb::to_sqlserver_bytes`]), with the Unix milliseconds in
//! bytes 10..15 (so `SUBSTRING(CAST(id AS BINARY(16)), 11, 6)` reads them, as RT.Comb's
//! T-SQL does), and converts back on read. The application only ever sees public ids; an
//! `ORDER BY id` on SQL Server returns them in creation order, ids from one millisecond
//! included.
//!
//! ```text
//!  public                     017f22e2-79b0-7cc3-98c4-dc0c0c07398f
//!  SQL Server shows           8F39070C-0CDC-C498-7CC3-017F22E279B0
//!  CAST(id AS BINARY(16))     0x0C07398FDC0C98C47CC3017F22E279B0
//! ```
//!
//! # Existing tables: read this first
//!
//! [`Comb`] stores an id in a `uniqueidentifier` **permuted** (the stored form that SQL Server
//! sorts in creation order). A `uniqueidentifier` written before, by `NEWID()`, .NET's `Guid`,
//! `uuid::Uuid` through tiberius or any other client, holds its id **unpermuted**: read as
//! [`Comb`] it comes back as a *different* id (`6f9619ff-8b86-d011-b42d-00c04fc964ff` reads as
//! `00c04fc9-64ff-b42d-11d0-868bff19966f`), and a lookup by the id the application already
//! published misses. Nothing can tell the two apart in a column. So:
//!
//! | the column | use | order of new ids in SQL Server |
//! | --- | --- | --- |
//! | new, or converted to the stored form | [`Comb`] | creation order |
//! | `uniqueidentifier` with existing ids that must not change | [`CombPublic`]: reads and writes as `uuid::Uuid` did | not creation order (SQL Server compares bytes 10..15 first); convert the table to use [`Comb`] |
//! | `binary(16)` (the public bytes, as on MySQL/SQLite) | [`CombBinary`] | creation order (bytes compare in order) |
//! | `nvarchar(36)`/`char(36)` UUID text | [`CombText`] | creation order for v7 text (with a binary collation) |
//!
//! To move an existing `uniqueidentifier` column to [`Comb`]'s stored form, convert every
//! value and every referencing column in one transaction:
//! [`combkey::sql::sqlserver_convert_table`] (`combkey sql sqlserver convert --table
//! dbo.orders --from public --ref dbo.items.order_id:fk_items_orders` prints it) does, for
//! ids as `uuid::Uuid` wrote them (`public`: they keep their ids), RT.Comb `Sql` keys (to
//! v7) and `NEWSEQUENTIALID()` values (to v7 of the same millisecond, keeping a table of old
//! and new keys), and records the conversion so that a second run
//! changes nothing. The T-SQL's byte arithmetic is checked against combkey's conversions and
//! the result's order against .NET's `SqlGuid` in this crate's tests.
//!
//! NULL: bind [`OptionalComb`] (and [`OptionalCombPublic`], [`OptionalCombBinary`],
//! [`OptionalCombText`] for the other column types) (tiberius takes no foreign `Option<T>` impl); read with
//! `row.try_get::<Comb, _>(..)`, which is already an `Option`. Reading a column of another
//! type, or a `binary` of another length, or text that is not a UUID, as a [`Comb`] is a
//! conversion error that says what was found, never a panic (use `try_get`: tiberius'
//! `Row::get` panics on any conversion error).
//!
//! In ad-hoc T-SQL, `dbo.combkey_stored('017f22e2-...')` turns a public id literal into the
//! stored form (`WHERE id = dbo.combkey_stored(...)`) and `dbo.combkey_public(id)` shows the
//! public id; both are installed with the other functions below.
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas for the column types (`schemars::JsonSchema`,
//!   `utoipa::ToSchema`: a string, format `uuid`, with an example).
//!
//! tiberius is used with no TLS feature; turn on the one you need (`rustls`,
//! `native-tls`, `vendored-openssl`) on your own tiberius dependency.
//!
//! # Example
//!
//! ```no_run
//! # async fn f(client: &mut tiberius::Client<tokio_util::compat::Compat<tokio::net::TcpStream>>) -> tiberius::Result<()> {
//! use combkey_tiberius::Comb;
//!
//! let id = Comb::new();
//! client.execute("INSERT INTO orders (id, note) VALUES (@P1, @P2)", &[&id, &"first"]).await?;
//! let row = client.query("SELECT id FROM orders WHERE id = @P1", &[&id]).await?.into_row().await?;
//! // try_get: a column of another type is an error, not a panic (`Row::get` panics).
//! let back: Option<Comb> = match row {
//!     Some(r) => r.try_get(0)?,
//!     None => None,
//! };
//! assert_eq!(back, Some(id));
//! # Ok(()) }
//! ```
//!
//! # Bulk insert
//!
//! [`Comb`] is `IntoSql`, so tuples holding it are `IntoRow` for `Client::bulk_insert`. Ids
//! from one generator arrive in SQL Server's own order, so the `ORDER (id ASC)` hint of
//! `bulk_insert_with_options` holds and SQL Server can skip its sort.
//!
//! # T-SQL
//!
//! The core crate's [`combkey::sql`] and [`combkey::Backend`] (add `combkey` to your
//! dependencies; `combkey sql sqlserver` prints the same): `Backend::SqlServer` has the
//! column DDL, `dbo.combkey_v7()` (ids in the same stored form and order as the Rust side,
//! usable in a `DEFAULT` constraint; `NEWID()` comes through a view, since functions may
//! not call it), `dbo.combkey_unix_ms(id)`, `dbo.combkey_time(id)`, and
//! `dbo.combkey_from_rtcomb_sql(id)` with [`combkey::sql::sqlserver_convert_rtcomb_sql`] to convert a
//! column RT.Comb's `Sql` provider filled, and `dbo.combkey_stored`/`dbo.combkey_public`. SQL Server runs each `CREATE FUNCTION` in a batch
//! of its own:
//!
//! ```no_run
//! # async fn f(client: &mut tiberius::Client<tokio_util::compat::Compat<tokio::net::TcpStream>>) -> tiberius::Result<()> {
//! use combkey::{Backend, sql::batches};
//!
//! for batch in batches(Backend::SqlServer.install_functions()) {
//!     client.simple_query(batch).await?.into_results().await?;
//! }
//! # Ok(()) }
//! ```
//!
//! # Testing against SQL Server
//!
//! No SQL Server runs on this project's CI machines. The tests that need one run where
//! `COMBKEY_SQLSERVER_URL` is set (an ADO.NET connection string): start the docker-compose
//! service with `docker compose up --wait sqlserver` and set the variable from `.env.sample`.
//! Without it they print that they skipped; the byte-order and comparison-order tests run
//! everywhere.
//!
//! # Versions
//!
//! Minimum Rust version: 1.87. Public dependencies (their types are in this crate's API):
//! tiberius 0.12 or 0.13 (its `ToSql`, `FromSql` and `IntoSql` are implemented here, the same
//! traits in both; both are tested in CI) and `combkey` (an exact version: this crate uses its
//! adapter-only items). The tiberius-ng fork (0.13.1 and later 0.13, its library also named
//! `tiberius`) takes the `tiberius-ng` feature with the default features off:
//! `combkey-tiberius = { version = "0.1", default-features = false, features = ["tiberius-ng"] }`
//! (its stored-form tests run on it in CI). Your build must hold one tiberius: if `cargo tree -d` shows two,
//! `cargo update -p tiberius@0.13.0 --precise 0.12.3` makes them one. A host's previous major
//! line stays supported for at least 12 months after its next one is released, and dropping
//! one is a new release of this crate that bumps its own version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The conversions are written once (src/sqlserver.rs) and compiled for each driver a feature
// turns on: tiberius (default) and its fork tiberius-ng, whose library is also named
// `tiberius` (so it comes in here under another name).
#[cfg(feature = "tiberius")]
mod on_tiberius;
#[cfg(feature = "tiberius-ng")]
mod on_tiberius_ng;
mod wrappers;

pub use wrappers::{OptionalComb, OptionalCombBinary, OptionalCombPublic, OptionalCombText};

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a SQL Server `uniqueidentifier` column type for tiberius.
    ///
    /// Sent and read in the suffix stored form ([`combkey::Comb::to_sqlserver_bytes`]), so
    /// SQL Server's `ORDER BY id` is creation order and the application only ever sees the
    /// public id.
    ///
    /// ```
    /// let id = combkey_tiberius::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_tiberius::Comb::from(core), id);
    /// ```
    pub struct Comb;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a `uniqueidentifier` column holding ids **as they are**: the
    /// same bytes `uuid::Uuid` (and .NET's `Guid`, `NEWID()`) give, so an existing table's
    /// published ids read and match unchanged. SQL Server does not sort new ids of this type
    /// in creation order; see the crate docs for moving such a table to [`Comb`].
    ///
    /// ```
    /// use tiberius::{ColumnData, FromSql, IntoSql};
    ///
    /// let known: uuid::Uuid = "6f9619ff-8b86-d011-b42d-00c04fc964ff".parse().unwrap();
    /// let id = combkey_tiberius::CombPublic::from(known);
    /// assert_eq!(id.into_sql(), known.into_sql(), "the value uuid::Uuid sends");
    /// let read = combkey_tiberius::CombPublic::from_sql(&ColumnData::Guid(Some(known)))?;
    /// assert_eq!(read, Some(id));
    /// # Ok::<(), tiberius::error::Error>(())
    /// ```
    pub struct CombPublic;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a `binary(16)` column: the 16 public bytes, as MySQL's
    /// `BINARY(16)` and SQLite's `BLOB` hold them (bytes compare in order, so `ORDER BY id` is
    /// creation order).
    ///
    /// ```
    /// use tiberius::{ColumnData, IntoSql};
    ///
    /// let id: combkey_tiberius::CombBinary = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert!(matches!(id.into_sql(), ColumnData::Binary(Some(b)) if b[..] == id.as_bytes()[..]));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub struct CombBinary;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in an `nvarchar(36)`/`char(36)` column: written as the lowercase
    /// hyphenated text, read from any UUID text form.
    ///
    /// ```
    /// use tiberius::{ColumnData, IntoSql};
    ///
    /// let id: combkey_tiberius::CombText = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse()?;
    /// assert!(matches!(id.into_sql(), ColumnData::String(Some(t)) if t == "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub struct CombText;
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
