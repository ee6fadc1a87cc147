//! [`combkey`] ids as a [diesel](https://docs.rs/diesel) column type.
//!
//! diesel supports UUIDs only on PostgreSQL and points MySQL and SQLite users to
//! third-party crates: this is that crate, for all three. [`Comb`] is a newtype over
//! [`combkey::Comb`] (the orphan rule keeps diesel's traits for the core type here) that
//! converts both ways for free, so ids move between this and the other adapters at no cost.
//!
//! # What it stores
//!
//! | backend | SQL column | `table!` type | stored |
//! | --- | --- | --- | --- |
//! | PostgreSQL | `uuid` | `diesel::sql_types::Uuid` | the public bytes |
//! | MySQL / MariaDB | `BINARY(16)` | `diesel::sql_types::Binary` | the public bytes |
//! | SQLite | `BLOB` | `diesel::sql_types::Binary` | the public bytes |
//!
//! `.order(id.asc())` is creation order on all three. `Option<Comb>` goes with
//! `Nullable<Uuid>`/`Nullable<Binary>` as usual, and the nullable side of a `LEFT JOIN`
//! (`(a, b).nullable()`, `Option::<T>::as_select()`) reads as `None`. Reading also accepts
//! MariaDB's `UUID` type and `CHAR(36)`/`TEXT` holding UUID strings. A value of the wrong
//! length or text that is not a UUID is a deserialization error that says what was found; a
//! `NULL` in a non-`Option` field is diesel's own `UnexpectedNullError` (which its nullable
//! tuples rely on); never a panic.
//!
//! [`CombText`] is the same id in a text column (`Text`, which `Char` and `VarChar` alias):
//! it writes the canonical 36-character text, so tables keyed by `CHAR(36)` are read *and
//! written* (and `WHERE id = ?` matches) until they are migrated to binary keys.
//!
//! `diesel print-schema` maps a PostgreSQL `uuid` column to `Uuid` and a MySQL `BINARY(16)` to
//! `Binary`. On SQLite declare the column `BLOB`, not `UUID`: print-schema cannot map a
//! `UUID` column there.
//!
//! diesel-async uses diesel's `ToSql`/`FromSql`, so the same impls serve it: its
//! `AsyncPgConnection` and `AsyncMysqlConnection` are tested on the real servers
//! ([the tests](https://github.com/combkey/combkey/blob/main/crates/combkey-diesel/tests/async.rs)).
//!
//! # Features
//!
//! - `postgres`, `mysql`, `sqlite`: the backends (`postgres_backend`, `mysql_backend` and
//!   `sqlite` of diesel; the connection features, with their C client libraries, are the
//!   application's choice).
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas for the column types (`schemars::JsonSchema`,
//!   `utoipa::ToSchema`: a string, format `uuid`, with an example).
//!
//! # Example
//!
//! ```
//! # #[cfg(feature = "sqlite")] {
//! use combkey_diesel::Comb;
//! use diesel::prelude::*;
//!
//! diesel::table! {
//!     orders (id) {
//!         id -> Binary,             // PostgreSQL: Uuid
//!         parent -> Nullable<Binary>,
//!         note -> Text,
//!     }
//! }
//!
//! #[derive(Queryable, Selectable, Insertable, AsChangeset, Identifiable, Debug, PartialEq)]
//! #[diesel(table_name = orders)]
//! struct Order {
//!     id: Comb,
//!     parent: Option<Comb>,
//!     note: String,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:").unwrap();
//! diesel::sql_query("CREATE TABLE orders (id BLOB PRIMARY KEY NOT NULL, parent BLOB, note TEXT NOT NULL)")
//!     .execute(&mut conn)
//!     .unwrap();
//! let first = Order { id: Comb::new(), parent: None, note: "first".into() };
//! let second = Order { id: Comb::new(), parent: Some(first.id), note: "second".into() };
//! diesel::insert_into(orders::table).values([&second, &first]).execute(&mut conn).unwrap();
//! let rows: Vec<Order> = orders::table.order(orders::id.asc()).select(Order::as_select()).load(&mut conn).unwrap();
//! assert_eq!(rows, [first, second]);
//! # }
//! ```
//!
//! # Migrations
//!
//! The core crate's [`combkey::sql`] and [`combkey::Backend`] (add `combkey` to your
//! dependencies; `combkey sql DIALECT` prints the same) have the column DDL, the database-side `combkey_v7()`,
//! `combkey_unix_ms(id)` and `combkey_time(id)` functions, and the MySQL `CHAR(36)` to
//! `BINARY(16)` conversion, ready for a `diesel migration`'s `up.sql` and `down.sql`:
//!
//! ```sh
//! combkey sql postgres --up   > migrations/2026-01-01-000000_combkey/up.sql
//! combkey sql postgres --down > migrations/2026-01-01-000000_combkey/down.sql
//! ```
//!
//! # Versions
//!
//! Minimum Rust version: 1.87. Public dependencies (their types are in this crate's API):
//! diesel, any release from 2.2.8 to 2.3 (its `ToSql`, `FromSql` and `AsExpression` are
//! implemented here, the same in all of them; `diesel = ">=2.2.8, <2.4"`), and `combkey` (an
//! exact version: this crate uses its adapter-only items). No feature selects the diesel
//! version: add this crate beside the diesel you have (diesel-async 0.5 and 0.6 pin 2.2, 0.7 and
//! later 2.3). CI runs this crate's tests on diesel 2.2.8 with diesel-async 0.6 and on diesel
//! 2.3 with diesel-async 0.9. diesel 3 is supported in a new release of this crate that bumps
//! its own version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod expression;

#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use expression::CreatedInExpressionMethods;

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a diesel column type.
    ///
    /// `ToSql`/`FromSql` for `diesel::sql_types::Uuid` on PostgreSQL and for
    /// `diesel::sql_types::Binary` on MySQL/MariaDB (`BINARY(16)`) and SQLite (`BLOB`); an
    /// `Option<Comb>` goes with `Nullable<_>`. Stored as the public bytes, so
    /// `.order(id.asc())` is creation order. Converts to and from [`combkey::Comb`] for free.
    ///
    /// ```
    /// let id = combkey_diesel::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_diesel::Comb::from(core), id);
    /// ```
    #[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
    #[cfg_attr(feature = "postgres", diesel(sql_type = diesel::sql_types::Uuid))]
    #[diesel(sql_type = diesel::sql_types::Binary)]
    pub struct Comb;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a text column: `CHAR(36)`, `VARCHAR`, `TEXT`
    /// (`diesel::sql_types::Text`, which `Char` and `VarChar` alias), for tables keyed by UUID
    /// text until they are migrated to binary keys (`combkey sql mysql` prints the conversion).
    ///
    /// Writes the canonical 36-character lowercase text, so `WHERE char36_id = ?` matches
    /// ids written the same way (on MySQL and MariaDB also uppercase ones: their default
    /// collations compare case-insensitively; SQLite and PostgreSQL compare text exactly).
    /// Reads any UUID text form (hyphenated, 32 hex digits, braced, URN; any case). Text
    /// keys sort in creation order as strings only while every row is written in the same
    /// case; `Comb` in a binary column is the form to migrate to.
    ///
    /// ```
    /// let id = combkey_diesel::CombText::new();
    /// assert_eq!(combkey_diesel::CombText::from(id.to_comb()), id);
    /// ```
    #[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub struct CombText;
}

/// The README's examples, compiled and run as doc tests (on SQLite, as the README shows).
#[cfg(all(doctest, feature = "sqlite"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
