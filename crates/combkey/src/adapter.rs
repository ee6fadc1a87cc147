//! For authors of adapter crates (`combkey-sqlx`, `combkey-diesel`, ...): the pieces every
//! column type shares, so all adapters decode, fail and describe themselves alike.
//!
//! An application does not need this module: it uses [`Comb`] and an adapter's
//! column type.
//!
//! **Adapter-only and exempt from semantic versioning**: hidden from the documentation, and
//! free to change in any release of `combkey`. The workspace's adapter crates depend on an
//! exact version of `combkey` for it (as sqlx's drivers do on `sqlx-core`'s hidden items).
//!
//! - [`column_newtype!`]: declares an adapter's column type (Rust's orphan rule puts the ORM's
//!   trait impls in the adapter crate, so each declares its own newtype).
//! - [`from_column`] with [`ColumnKind`]: the one decoding of a database value.
//! - [`unexpected_null`], [`wrong_column_type`]: the errors for a `NULL` and for a value of a
//!   type that cannot hold an id.
//! - [`sqlserver_cmp`]: SQL Server's comparison of `uniqueidentifier` values.
//! - [`SCHEMA_EXAMPLE`], [`SCHEMA_DESCRIPTION`]: what the API schemas say an id is.

use core::cmp::Ordering;
use core::fmt;

use crate::comb::Comb;
use crate::error::{Detail, Error};

pub use crate::__column_newtype as column_newtype;
pub use crate::schema::{DESCRIPTION as SCHEMA_DESCRIPTION, EXAMPLE as SCHEMA_EXAMPLE};

/// What kind of column a database value came from, for [`from_column`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColumnKind {
    /// `uuid` (binary wire format), `BINARY(16)`, `BLOB`: exactly 16 bytes.
    Binary,
    /// `CHAR(36)`, `TEXT`, PostgreSQL's text format: UUID text.
    Text,
    /// A column that may hold either, and does not say which: MySQL's result metadata flags
    /// MariaDB's `UUID` type (sent as 36 characters of text) as binary, like `BINARY(16)`.
    /// 16 bytes are the id's bytes; anything else must be UUID text.
    BinaryOrText,
}

/// The public id in a database column value (PostgreSQL, MySQL/MariaDB and SQLite store the
/// public bytes): 16 bytes from a binary column, any accepted UUID text from a text column.
/// The shared decoding of every adapter crate, so all give the same errors.
///
/// ```
/// use combkey::adapter::{ColumnKind, from_column};
/// use combkey::{Comb, ErrorKind};
///
/// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
/// assert_eq!(from_column(id.as_bytes(), ColumnKind::Binary)?, id);
/// assert_eq!(from_column(id.to_string().as_bytes(), ColumnKind::Text)?, id);
/// let err = from_column(id.to_string().as_bytes(), ColumnKind::Binary).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::ByteLength);
/// assert!(err.to_string().contains("looks like UUID text stored in a binary column"));
/// # Ok::<(), combkey::Error>(())
/// ```
pub fn from_column(value: &[u8], column: ColumnKind) -> Result<Comb, Error> {
    match column {
        ColumnKind::Binary => match value.len() {
            16 => Comb::from_slice(value),
            n @ (32 | 36 | 38 | 45)
                if value.is_ascii() && core::str::from_utf8(value).is_ok_and(|s| s.parse::<Comb>().is_ok()) =>
            {
                Err(Error(Detail::BinaryHoldsText { found: n }))
            }
            _ => Comb::from_slice(value),
        },
        ColumnKind::Text => core::str::from_utf8(value).map_err(|_| Error(Detail::TextNotUtf8))?.trim().parse(),
        ColumnKind::BinaryOrText => match value.len() {
            16 => Comb::from_slice(value),
            32 | 36 | 38 | 45 if value.is_ascii() => from_column(value, ColumnKind::Text),
            found => Err(Error(Detail::BinaryOrTextLength { found })),
        },
    }
}

/// The error for a database `NULL` read into a non-optional id, so every backend reports it
/// the same way.
///
/// ```
/// let e = combkey::adapter::unexpected_null();
/// assert_eq!(e.kind(), combkey::ErrorKind::Null);
/// ```
pub fn unexpected_null() -> Error {
    Error(Detail::UnexpectedNull)
}

/// The error for a database value of a type that cannot hold an id (`found` says what it
/// was), so every backend reports it the same way.
///
/// ```
/// let e = combkey::adapter::wrong_column_type("Int(42)");
/// assert_eq!(e.kind(), combkey::ErrorKind::ColumnType);
/// assert!(e.to_string().contains("found Int(42)"));
/// ```
pub fn wrong_column_type(found: impl fmt::Display) -> Error {
    Error(Detail::WrongColumnType { found: found.to_string() })
}

/// Compares two `uniqueidentifier` values (display byte order) the way SQL Server does.
///
/// Display bytes 10..15 first, then 8..9, then 7, 6, 5, 4, then 3, 2, 1, 0 (Microsoft,
/// "How are GUIDs compared in SQL Server 2005"; `SqlGuid.CompareTo`). Useful to sort in
/// memory as an `ORDER BY` on SQL Server would.
///
/// ```
/// use core::cmp::Ordering;
///
/// // Lambert's "Custom UUID as primary key": SQL Server ordered these two values this way round.
/// let a = uuid::Uuid::parse_str("0001ABD9-3F62-E111-B305-0FCE8C655371").unwrap();
/// let b = uuid::Uuid::parse_str("0001A3DB-3F62-E111-B305-0FCE8C655371").unwrap();
/// assert_eq!(combkey::adapter::sqlserver_cmp(a.as_bytes(), b.as_bytes()), Ordering::Less);
/// ```
pub fn sqlserver_cmp(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
    crate::backend::sqlserver::cmp(a, b)
}
