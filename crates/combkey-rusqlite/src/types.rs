//! `rusqlite::types::ToSql` and `FromSql`.

use combkey::adapter::ColumnKind;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, Value, ValueRef};

use crate::{Comb, CombText};

impl ToSql for Comb {
    /// The 16 public bytes as a `BLOB`, lent to SQLite without a copy.
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Blob(self.as_comb().as_bytes())))
    }
}

impl FromSql for Comb {
    /// A 16-byte `BLOB`, or UUID text from a `TEXT` value (a table keyed by UUID text). A
    /// `BLOB` of another length is rusqlite's `InvalidBlobSize`; UUID text stored as a `BLOB`,
    /// or text that is not a UUID, is `Other` with combkey's message; `NULL` and numbers are
    /// `InvalidType` (read `Option<Comb>` for a nullable column).
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value {
            ValueRef::Blob(b) => match combkey::adapter::from_column(b, ColumnKind::Binary) {
                Ok(id) => Ok(Comb::from(id)),
                // UUID text in a BLOB: combkey's message says so.
                Err(e) if combkey::adapter::from_column(b, ColumnKind::Text).is_ok() => {
                    Err(FromSqlError::Other(Box::new(e)))
                }
                Err(_) => Err(FromSqlError::InvalidBlobSize { expected_size: 16, blob_size: b.len() }),
            },
            ValueRef::Text(t) => combkey::adapter::from_column(t, ColumnKind::Text)
                .map(Comb::from)
                .map_err(|e| FromSqlError::Other(Box::new(e))),
            ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_) => Err(FromSqlError::InvalidType),
        }
    }
}

impl From<Comb> for Value {
    /// The 16 public bytes as an owned `BLOB` value (for `params_from_iter` and the like).
    fn from(id: Comb) -> Self {
        Value::Blob(id.as_comb().as_bytes().to_vec())
    }
}

impl ToSql for CombText {
    /// The lowercase hyphenated text (`017f22e2-79b0-7cc3-98c4-dc0c0c07398f`), as `TEXT`.
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Owned(Value::Text(self.to_string())))
    }
}

impl FromSql for CombText {
    /// As [`Comb`] reads: UUID text in any form, or a 16-byte `BLOB`; the same errors.
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Comb::column_result(value).map(|id| CombText::from(id.to_comb()))
    }
}

impl From<CombText> for Value {
    /// The lowercase hyphenated text as an owned `TEXT` value.
    fn from(id: CombText) -> Self {
        Value::Text(id.to_string())
    }
}
