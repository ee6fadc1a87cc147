//! [`combkey`] ids as [sqlx](https://docs.rs/sqlx) column types.
//!
//! [`Comb`] is a thin newtype over [`combkey::Comb`]: Rust's orphan rule keeps the sqlx trait
//! impls out of the core crate and out of sqlx, so they live here. It converts to and from
//! the core type for free, so a program that also uses the diesel or sea-orm adapters moves
//! ids between them without cost.
//!
//! # What it stores
//!
//! | backend | column | stored | also decodes |
//! | --- | --- | --- | --- |
//! | PostgreSQL | `uuid` (`uuid[]` for arrays) | the public bytes | the text wire format |
//! | MySQL / MariaDB | `BINARY(16)` | the public bytes | MariaDB's `UUID` type (v7 ids only belong there), `CHAR(36)` text |
//! | SQLite | `BLOB` | the public bytes | `TEXT` holding a UUID string |
//!
//! The stored bytes are the public bytes, so `ORDER BY id` returns creation order and the id
//! a client sees is the id in the row. Bad data (a `BLOB` of 15 bytes, UUID text in a
//! binary column, text that is not a UUID, `NULL` into a non-`Option` field) is a decode
//! error that says what was found, never a panic.
//!
//! [`CombText`] is the same id in a text column (`CHAR(36)`, `VARCHAR`, `TEXT`): it binds the
//! canonical 36-character text, so tables keyed by UUID text are read *and written* until
//! they are migrated to binary keys (`Comb` reads such columns but binds 16 bytes).
//!
//! # Features
//!
//! - `postgres`, `mysql`, `sqlite`: the backends on sqlx 0.9, forwarded to sqlx's features of
//!   those names.
//! - `sqlx-0-8-postgres`, `sqlx-0-8-mysql`, `sqlx-0-8-sqlite`: the same on sqlx 0.8 (see
//!   [Versions](#versions)).
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas for the column types (`schemars::JsonSchema`,
//!   `utoipa::ToSchema`: a string, format `uuid`, with an example).
//!
//! # Example
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio_test(async {
//! use combkey_sqlx::Comb;
//!
//! #[derive(sqlx::FromRow)]
//! struct Order {
//!     id: Comb,
//!     note: String,
//! }
//!
//! let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
//! sqlx::query("CREATE TABLE orders (id BLOB PRIMARY KEY, note TEXT NOT NULL)").execute(&pool).await?;
//! let id = Comb::new();
//! sqlx::query("INSERT INTO orders (id, note) VALUES (?, ?)").bind(id).bind("first").execute(&pool).await?;
//! let order: Order = sqlx::query_as("SELECT id, note FROM orders WHERE id = ?").bind(id).fetch_one(&pool).await?;
//! assert_eq!(order.id, id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! # #[cfg(feature = "sqlite")]
//! # fn tokio_test<F: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>>(f: F) {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f).unwrap()
//! # }
//! ```
//!
//! # Rows created between two times
//!
//! The creation time is in the key, and it is what every database compares first, so "rows
//! created in this hour" is a range of the primary key with two binds, answered from its
//! index with no `created_at` column ([`combkey::KeyRange`], half-open):
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio_test(async {
//! use combkey::{Timestamp, V7Generator};
//! use combkey_sqlx::Comb;
//!
//! let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
//! sqlx::query("CREATE TABLE orders (id BLOB PRIMARY KEY, note TEXT NOT NULL)").execute(&pool).await?;
//! let g = V7Generator::new();
//! for at in ["2026-01-01T09:59:59.999Z", "2026-01-01T10:00:00Z", "2026-01-01T10:59:59.999Z", "2026-01-01T11:00:00Z"] {
//!     let id = Comb::from(g.generate_at(at.parse()?));
//!     sqlx::query("INSERT INTO orders (id, note) VALUES (?, ?)").bind(id).bind(at).execute(&pool).await?;
//! }
//! let (from, to): (Timestamp, Timestamp) = ("2026-01-01T10:00:00Z".parse()?, "2026-01-01T11:00:00Z".parse()?);
//! let hour = combkey::Comb::range(from..to)?;
//! let notes: Vec<String> = sqlx::query_scalar("SELECT note FROM orders WHERE id >= ? AND id < ? ORDER BY id")
//!     .bind(Comb::from(hour.start()))
//!     .bind(Comb::from(hour.end()))
//!     .fetch_all(&pool)
//!     .await?;
//! assert_eq!(notes, ["2026-01-01T10:00:00Z", "2026-01-01T10:59:59.999Z"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! # #[cfg(feature = "sqlite")]
//! # fn tokio_test<F: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>>(f: F) {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f).unwrap()
//! # }
//! ```
//!
//! The same on PostgreSQL is `WHERE id >= $1 AND id < $2`. To partition a table by time
//! through its key, see [`combkey::sql::Partitioning`] and the repository's
//! [partitioned migrations example](https://github.com/combkey/combkey/blob/main/examples/partitioned-migrations).
//!
//! # Retries that cannot duplicate
//!
//! A client-made id makes a write safe to send twice: the `combkey-idempotent` crate's
//! `insert_or_verify` inserts a batch or finds it already there with the same content, and
//! its `Failover` sends it to the next server (a MariaDB Galera node, say) when one fails or
//! stalls.
//!
//! # With `query!` and `query_as!`
//!
//! The macros see a `uuid`/`BINARY(16)`/`BLOB` column and pick their default type for it;
//! override it per column with sqlx's type-override syntax:
//!
//! ```ignore
//! let order = sqlx::query_as!(Order, r#"SELECT id AS "id: Comb", note FROM orders WHERE id = $1"#, id as Comb)
//!     .fetch_one(&pool)
//!     .await?;
//! ```
//!
//! or once for the whole crate in sqlx 0.9's `sqlx.toml` (beside the `Cargo.toml` of the
//! crate that uses the macros; sqlx reads it only with its `sqlx-toml` feature on):
//!
//! ```toml
//! [macros.type-overrides]
//! # PostgreSQL. The key is the type's name as the driver spells it, upper case: `UUID`
//! # ('uuid' matches nothing and the macros silently keep uuid::Uuid), and `UUID[]` for arrays.
//! 'UUID' = "combkey_sqlx::Comb"
//! 'UUID[]' = "Vec<combkey_sqlx::Comb>"
//!
//! # MySQL / MariaDB: name the columns, since BINARY(16) also holds other data. sqlx names a
//! # column's table `database.table` here, so the key is the qualified name.
//! [macros.table-overrides.'shop.orders']
//! 'id' = "combkey_sqlx::Comb"
//! 'legacy_id' = "combkey_sqlx::CombText"
//!
//! # SQLite (the table's name alone; `db.table` for an attached database) and PostgreSQL text
//! # columns (the name as the search path shows it, `schema.table` outside it).
//! [macros.table-overrides.'orders']
//! 'id' = "combkey_sqlx::Comb"
//! 'legacy_id' = "combkey_sqlx::CombText"
//! ```
//!
//! (Those blocks need a database, or sqlx's offline query data, at compile time, so they are
//! shown here, not compiled. This crate's tests compile and run the per-query form against
//! PostgreSQL, and the type (also `UUID[]`) and table overrides of a `sqlx.toml` like the one
//! above; they read the block above and check that each table override matches the table name
//! sqlx reports for such a column on MariaDB, SQLite and PostgreSQL, the name the macros look
//! up: [the tests](https://github.com/combkey/combkey/blob/main/crates/combkey-sqlx-toml-test).)
//!
//! # `sqlx::Any`
//!
//! Not supported, on purpose. sqlx's `Any` driver carries values as a handful of kinds
//! (integers, floats, text, blob) with no UUID kind, so an id could only travel as a blob or
//! as text; PostgreSQL refuses either for a `uuid` column without a cast written in the
//! SQL, and the same `Any` code would store 16 bytes in one database and 36 characters in
//! another. Use the concrete drivers' types (`PgPool`, `MySqlPool`, `SqlitePool`), which this
//! crate supports, or bind `id.to_string()` with an explicit `CAST(... AS uuid)` if a query
//! must go through `Any`.
//!
//! # Migrations
//!
//! The core crate's [`combkey::sql`] and [`combkey::Backend`] (add `combkey` to your
//! dependencies; this crate does not repeat them) give
//! the column DDL per dialect, database-side `combkey_v7()`, `combkey_unix_ms(id)` and
//! `combkey_time(id)` functions for PostgreSQL and MySQL/MariaDB, and the conversion of a
//! MySQL `CHAR(36)` key to `BINARY(16)`. Put them in a `sqlx::migrate!` file with
//! `combkey sql postgres --up > "migrations/$(date -u +%Y%m%d%H%M%S)_combkey.sql"` (named by date, after
//! the app's own migrations, as `sqlx migrate add` names them), or run them directly:
//!
//! ```no_run
//! # #[cfg(feature = "postgres")]
//! # async fn f(pool: sqlx::PgPool) -> Result<(), sqlx::Error> {
//! use combkey::Backend;
//!
//! sqlx::raw_sql(Backend::Postgres.install_functions()).execute(&pool).await?;
//! sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE TABLE orders ({}, note text)", Backend::Postgres.primary_key("id"))))
//!     .execute(&pool)
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Versions
//!
//! Minimum Rust version: 1.87 on sqlx 0.8, 1.94 on sqlx 0.9 (sqlx 0.9's own). Public dependencies (their types are in this crate's API):
//! sqlx (its `Type`, `Encode` and `Decode` traits are implemented here) and `combkey` (an
//! exact version: this crate uses its adapter-only items). sqlx 0.10 is supported in a new
//! release of this crate that bumps its own version (0.x: the minor).
//!
//! | sqlx | features |
//! | --- | --- |
//! | 0.9 | `postgres`, `mysql`, `sqlite` |
//! | 0.8.6 and later 0.8 | `sqlx-0-8-postgres`, `sqlx-0-8-mysql`, `sqlx-0-8-sqlite` |
//!
//! An app on sqlx 0.8 adds this crate without upgrading sqlx first, on Rust 1.87 or later:
//!
//! ```toml
//! combkey-sqlx = { version = "0.1", features = ["sqlx-0-8-postgres"] }
//! ```
//!
//! (on sqlx 0.8.0 to 0.8.5, cargo moves it to 0.8.6 by itself when this crate is added; an
//! exact pin is raised by hand). The types, their stored forms and their errors are the same on
//! both lines, and so is the code that implements them. What sqlx 0.8 cannot carry: `sqlx.toml`, new in sqlx 0.9, so on 0.8 the
//! `query!` macros need the per-query override, `SELECT id AS "id: Comb"`, and `id as Comb` for
//! a parameter on PostgreSQL and MySQL (shown above). On SQLite, sqlx 0.8's `query!` fails on
//! any `expr as Type` parameter ("temporary value dropped while borrowed", with `uuid::Uuid`
//! too) and does not check a parameter's type: bind the variable as it is. SQL built at run
//! time goes to `sqlx::raw_sql(&sql)` or `sqlx::query(&sql)` on 0.8 (`AssertSqlSafe`, used in
//! the Migrations example, is sqlx 0.9's). `combkey-idempotent` and `combkey doctor` stay on
//! sqlx 0.9.
//!
//! One SQLite library per program: sqlx 0.8 with its default features (`macros`, `migrate`)
//! puts its SQLite driver and libsqlite3-sys 0.30 in the app's lockfile even for PostgreSQL
//! alone, so such an app can add rusqlite 0.32 at most (sqlx 0.8's own limit, with or without
//! this crate); with `default-features = false` it locks no SQLite library, and neither does
//! `sqlx-0-8-postgres`.
//!
//! A host's previous major line stays supported for at least 12 months after its next one is
//! released, and dropping one is a new release of this crate that bumps its own version (0.x:
//! the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(feature = "postgres", feature = "sqlx-0-8-postgres"))]
pub mod copy;

#[cfg(any(feature = "mysql", feature = "sqlx-0-8-mysql"))]
mod mysql;
#[cfg(any(feature = "postgres", feature = "sqlx-0-8-postgres"))]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "sqlx-0-8-sqlite"))]
mod sqlite;

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a sqlx column type.
    ///
    /// Stored as the public bytes in every sqlx backend: PostgreSQL `uuid`, MySQL/MariaDB
    /// `BINARY(16)`, SQLite `BLOB`; so `ORDER BY id` is creation order. Converts to and from
    /// [`combkey::Comb`] for free.
    ///
    /// ```
    /// let id = combkey_sqlx::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_sqlx::Comb::from(core), id);
    /// assert_eq!(id.to_string().parse::<combkey_sqlx::Comb>()?, id);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub struct Comb;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a text column: `CHAR(36)`, `VARCHAR`, `TEXT` (what
    /// `uuid::fmt::Hyphenated` is to sqlx's `Uuid`), for tables keyed by UUID text until
    /// they are migrated to binary keys (`combkey sql mysql` prints the conversion).
    ///
    /// Binds the canonical 36-character lowercase text, so `WHERE char36_id = ?` matches ids
    /// written the same way (on MySQL and MariaDB also uppercase ones: their default
    /// collations compare case-insensitively; SQLite and PostgreSQL compare text exactly).
    /// Reads any UUID text form (hyphenated, 32 hex digits, braced, URN; any case); bad text
    /// is a decode error that says what was found.
    ///
    /// ```
    /// let id = combkey_sqlx::CombText::new();
    /// assert_eq!(combkey_sqlx::CombText::from(id.to_comb()), id);
    /// assert_eq!(combkey_sqlx::Comb::from(id.to_comb()).to_string(), id.to_string());
    /// ```
    pub struct CombText;
}

/// The README's examples, compiled and run as doc tests (on SQLite, as the README shows).
#[cfg(all(doctest, feature = "sqlite"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
