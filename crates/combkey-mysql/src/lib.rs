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
//! | `CHAR(36)`, `VARCHAR`, `TEXT` with UUID text | the id (a legacy text key) |
//! | `NULL` | an error; read `Option<Comb>` for a nullable column |
//! | other lengths, other types | an error |
//!
//! mysql_common's conversion errors carry only the value (`FromValueError(value)`);
//! [`Comb::from_value_checked`] gives combkey's message for the same cases. `row.get`
//! panics on a conversion error (mysql's design); use `row.get_opt` or `take_opt` for data
//! you do not trust.
//!
//! # Example
//!
//! ```no_run
//! # async fn f() -> Result<(), mysql_async::Error> {
//! use combkey_mysql::Comb;
//! use mysql_async::prelude::*;
//!
//! let pool = mysql_async::Pool::new("mysql://root@127.0.0.1:3306/test");
//! let mut conn = pool.get_conn().await?;
//! conn.query_drop("CREATE TABLE orders (id BINARY(16) PRIMARY KEY, note TEXT NOT NULL)").await?;
//! let id = Comb::new();
//! conn.exec_drop("INSERT INTO orders (id, note) VALUES (?, ?)", (id, "first")).await?;
//! let back: Option<Comb> = conn.exec_first("SELECT id FROM orders WHERE id = ?", (id,)).await?;
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

#![deny(missing_docs)]

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
