//! [`combkey`] ids as a value type for [mysql_common], the conversions under [mysql_async]
//! and [mysql]: [`Comb`] binds as a parameter (`From<Comb> for Value`) and reads from rows
//! (`FromValue`), so `row.get::<Comb, _>("id")`, `params! { "id" => id }` and `FromRow`
//! derives work with it.
//!
//! [`Comb`] is a thin newtype over [`combkey::Comb`] (Rust's orphan rule keeps the traits out
//! of both crates), converting to and from the core type for free.
//!
//! | MySQL/MariaDB column | reads as |
//! | --- | --- |
//! | `BINARY(16)` (what to key a table by) | the id: the 16 public bytes, so `ORDER BY id` is creation order |
//! | MariaDB `UUID` | the id (the server sends it as text) |
//! | `CHAR(36)`, `VARCHAR`, `TEXT` with UUID text | the id (a legacy text key); bind [`CombText`] to write and look up such keys |
//! | `NULL` | an error; read `Option<Comb>` for a nullable column |
//! | other lengths, other types | an error |
//!
//! mysql_common's conversion errors carry only the value (`FromValueError(value)`);
//! [`Comb::from_value_checked`] gives combkey's message for the same cases. Reading a row
//! straight into a type (`exec_first::<Comb, ..>`, `row.get`, `from_row`) **panics** on a
//! value that does not convert (mysql_async's design, the same for `uuid::Uuid`): for data you
//! do not trust, read `Row`s and take the column with `take_opt`, which returns the error.
//!
//! # Example
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use combkey_mysql::Comb;
//! use mysql_async::Row;
//! use mysql_async::prelude::*;
//!
//! let pool = mysql_async::Pool::new("mysql://root@127.0.0.1:3306/test");
//! let mut conn = pool.get_conn().await?;
//! conn.query_drop("CREATE TABLE orders (id BINARY(16) PRIMARY KEY, note TEXT NOT NULL)").await?;
//! let id = Comb::new();
//! conn.exec_drop("INSERT INTO orders (id, note) VALUES (?, ?)", (id, "first")).await?;
//! // Never panics: a value that is no id is an error with combkey's message.
//! let row: Option<Row> = conn.exec_first("SELECT id FROM orders WHERE id = ?", (id,)).await?;
//! let back = match row.and_then(|mut r| r.take_opt::<Comb, _>(0)) {
//!     Some(Ok(back)) => Some(back),
//!     Some(Err(e)) => return Err(Comb::from_value_checked(&e.0).unwrap_err().into()),
//!     None => None,
//! };
//! assert_eq!(back, Some(id));
//! # Ok(()) }
//! ```
//!
//! The conversions themselves, without a server:
//!
//! ```
//! use combkey_mysql::Comb;
//! use mysql_common::value::Value;
//! use mysql_common::value::convert::{from_value_opt, FromValue};
//!
//! let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
//! let value = Value::from(id);
//! assert_eq!(value, Value::Bytes(id.to_comb().as_bytes().to_vec()));
//! assert_eq!(from_value_opt::<Comb>(value).unwrap(), id);
//! // MariaDB's UUID type arrives as text.
//! assert_eq!(Comb::from_value(Value::Bytes(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f".to_vec())), id);
//! assert!(from_value_opt::<Comb>(Value::Bytes(vec![1; 15])).is_err());
//! assert_eq!(from_value_opt::<Option<Comb>>(Value::NULL).unwrap(), None);
//! # Ok::<(), combkey::Error>(())
//! ```
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas (a string, format `uuid`).
//!
//! [mysql_common]: https://github.com/blackbeam/rust_mysql_common
//! [mysql_async]: https://github.com/blackbeam/mysql_async
//! [mysql]: https://github.com/blackbeam/rust-mysql-simple
//!
//! # Versions
//!
//! Minimum Rust version: 1.87. Public dependencies (their types are in this crate's API):
//! mysql_common, any release from 0.35 to 0.37 (its `Value`, `FromValue` and `ToValue`, the
//! same in all of them: mysql_async 0.36 and mysql 26 use 0.35, mysql 27 0.36, mysql_async
//! 0.37 and mysql 28 0.37; both ends are tested in CI with both drivers) and `combkey` (an
//! exact version: this crate uses its adapter-only items). Your build must hold one
//! mysql_common: if `cargo tree -d` shows two (cargo resolved this crate to the newest while
//! your driver holds an older one), `cargo update -p mysql_common@0.37.3 --precise 0.35.5`
//! (with your versions) makes them one. A host's previous major line stays supported for at
//! least 12 months after its next one is released, and dropping one is a new release of this
//! crate that bumps its own version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod value;

pub use value::CombIr;

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a mysql_common value: sent as the 16 public bytes (a
    /// `BINARY(16)` key, which MySQL and MariaDB compare with `memcmp`, so `ORDER BY id` is
    /// creation order); read from `BINARY(16)`, MariaDB's `UUID` type and UUID text.
    ///
    /// ```
    /// let id = combkey_mysql::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_mysql::Comb::from(core), id);
    /// ```
    pub struct Comb;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a `CHAR(36)`, `VARCHAR` or `TEXT` key column (a table keyed by
    /// UUID text): bound as the lowercase hyphenated text, read from any UUID text form (or 16
    /// bytes). Such a table can move to `BINARY(16)` with `combkey doctor`.
    ///
    /// ```
    /// use combkey_mysql::CombText;
    /// use mysql_common::value::Value;
    /// use mysql_common::value::convert::from_value_opt;
    ///
    /// let id: CombText = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse()?;
    /// assert_eq!(Value::from(id), Value::Bytes(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f".to_vec()));
    /// assert_eq!(from_value_opt::<CombText>(Value::from(id)).unwrap(), id);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub struct CombText;
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
