//! sea-orm's value traits: what the column binds and how it reads back.

use std::sync::Arc;

use combkey::adapter::ColumnKind;
use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, Value, ValueType, ValueTypeErr};
use sea_orm::{ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryFromU64, TryGetError, TryGetable};

use crate::{CombTextUuid, CombUuid};

/// Bound as a UUID value, which sqlx sends as the public bytes on every backend
/// (`uuid` on PostgreSQL, 16 bytes for `BINARY(16)` and `BLOB`).
impl From<CombUuid> for Value {
    fn from(id: CombUuid) -> Value {
        Value::Uuid(Some(uuid::Uuid::from(id.to_comb())))
    }
}

impl Nullable for CombUuid {
    fn null() -> Value {
        Value::Uuid(None)
    }
}

impl ValueType for CombUuid {
    fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
        match v {
            Value::Uuid(Some(u)) => Ok(CombUuid::from(combkey::Comb::from(u))),
            Value::Bytes(Some(b)) => combkey::Comb::from_slice(&b).map(CombUuid::from).map_err(|_| ValueTypeErr),
            Value::String(Some(s)) => s.parse().map_err(|_| ValueTypeErr),
            _ => Err(ValueTypeErr),
        }
    }

    fn type_name() -> String {
        "CombUuid".to_string()
    }

    fn array_type() -> ArrayType {
        ArrayType::Uuid
    }

    /// `uuid` on PostgreSQL, `binary(16)` on MySQL/MariaDB. On SQLite sea-query declares a
    /// UUID column `uuid_text`; [`create_table_from_entity`](crate::create_table_from_entity)
    /// declares it `blob` instead.
    fn column_type() -> ColumnType {
        ColumnType::Uuid
    }
}

impl TryGetable for CombUuid {
    fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Self, TryGetError> {
        // Decode with combkey-sqlx's codecs: the same rules and errors as raw sqlx (MariaDB's
        // UUID type and CHAR(36) text included), the sqlx error kept as the source.
        #[cfg(feature = "postgres")]
        if let Some(row) = res.try_as_pg_row() {
            return from_sqlx::<_, combkey_sqlx::Comb>(sqlx::Row::try_get(row, idx.as_sqlx_postgres_index()), idx);
        }
        #[cfg(feature = "mysql")]
        if let Some(row) = res.try_as_mysql_row() {
            return from_sqlx::<_, combkey_sqlx::Comb>(sqlx::Row::try_get(row, idx.as_sqlx_mysql_index()), idx);
        }
        #[cfg(feature = "sqlite")]
        if let Some(row) = res.try_as_sqlite_row() {
            return from_sqlx::<_, combkey_sqlx::Comb>(sqlx::Row::try_get(row, idx.as_sqlx_sqlite_index()), idx);
        }
        from_any_driver(res, idx)
    }
}

/// A value combkey-sqlx decoded: `NULL` is sea-orm's `Null` (what `Option` fields need), a
/// decode error keeps the sqlx error (and its `combkey::Error` source).
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub(crate) fn from_sqlx<I: ColIdx, T: Into<combkey::Comb>>(
    decoded: Result<Option<T>, sqlx::Error>,
    idx: I,
) -> Result<CombUuid, TryGetError> {
    match decoded {
        Ok(Some(id)) => Ok(CombUuid::from(id.into())),
        Ok(None) => Err(TryGetError::Null(format!("{idx:?}"))),
        Err(e) => Err(TryGetError::DbErr(DbErr::Query(sea_orm::RuntimeErr::SqlxError(Arc::new(e))))),
    }
}

/// A driver combkey-sqlx does not decode here (a backend whose feature is off, a mock or a
/// proxy connection): read the value as sea-orm reads a UUID, bytes or text, and decode it
/// with combkey's rules, so the same values are accepted and the same errors given.
fn from_any_driver<I: ColIdx>(res: &QueryResult, idx: I) -> Result<CombUuid, TryGetError> {
    // Each attempt may fail as "NULL" without the value being NULL (sea-orm's mock and proxy
    // drivers report any conversion failure so), so all three are tried before giving up.
    if let Ok(u) = uuid::Uuid::try_get_by(res, idx) {
        return Ok(CombUuid::from(combkey::Comb::from(u)));
    }
    let decoded = match Vec::<u8>::try_get_by(res, idx) {
        Ok(bytes) => combkey::adapter::from_column(&bytes, ColumnKind::BinaryOrText),
        Err(_) => {
            let text = String::try_get_by(res, idx)?;
            combkey::adapter::from_column(text.as_bytes(), ColumnKind::Text)
        }
    };
    decoded.map(CombUuid::from).map_err(|e| {
        TryGetError::DbErr(DbErr::TryIntoErr { from: "database value", into: "CombUuid", source: Arc::new(e) })
    })
}

impl TryFromU64 for CombUuid {
    fn try_from_u64(_: u64) -> Result<Self, DbErr> {
        Err(DbErr::ConvertFromU64("CombUuid"))
    }
}

impl IntoActiveValue<CombUuid> for CombUuid {
    fn into_active_value(self) -> ActiveValue<CombUuid> {
        ActiveValue::Set(self)
    }
}

/// Bound as text (the lowercase hyphenated form), what a `CHAR(36)`/`TEXT` key column holds.
impl From<CombTextUuid> for Value {
    fn from(id: CombTextUuid) -> Value {
        Value::String(Some(id.to_string()))
    }
}

impl Nullable for CombTextUuid {
    fn null() -> Value {
        Value::String(None)
    }
}

impl ValueType for CombTextUuid {
    fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
        <CombUuid as ValueType>::try_from(v).map(|id| CombTextUuid::from(id.to_comb()))
    }

    fn type_name() -> String {
        "CombTextUuid".to_string()
    }

    fn array_type() -> ArrayType {
        ArrayType::String
    }

    /// A string column, as sea-orm's `TextUuid` declares.
    fn column_type() -> ColumnType {
        <String as ValueType>::column_type()
    }
}

impl TryGetable for CombTextUuid {
    fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Self, TryGetError> {
        #[cfg(feature = "postgres")]
        if let Some(row) = res.try_as_pg_row() {
            return from_sqlx::<_, combkey_sqlx::CombText>(sqlx::Row::try_get(row, idx.as_sqlx_postgres_index()), idx)
                .map(|id| CombTextUuid::from(id.to_comb()));
        }
        #[cfg(feature = "mysql")]
        if let Some(row) = res.try_as_mysql_row() {
            return from_sqlx::<_, combkey_sqlx::CombText>(sqlx::Row::try_get(row, idx.as_sqlx_mysql_index()), idx)
                .map(|id| CombTextUuid::from(id.to_comb()));
        }
        #[cfg(feature = "sqlite")]
        if let Some(row) = res.try_as_sqlite_row() {
            return from_sqlx::<_, combkey_sqlx::CombText>(sqlx::Row::try_get(row, idx.as_sqlx_sqlite_index()), idx)
                .map(|id| CombTextUuid::from(id.to_comb()));
        }
        from_any_driver(res, idx).map(|id| CombTextUuid::from(id.to_comb()))
    }
}

impl TryFromU64 for CombTextUuid {
    fn try_from_u64(_: u64) -> Result<Self, DbErr> {
        Err(DbErr::ConvertFromU64("CombTextUuid"))
    }
}

impl IntoActiveValue<CombTextUuid> for CombTextUuid {
    fn into_active_value(self) -> ActiveValue<CombTextUuid> {
        ActiveValue::Set(self)
    }
}
