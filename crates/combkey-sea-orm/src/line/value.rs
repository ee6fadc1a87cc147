//! sea-orm's value traits: what the column binds and how it reads back. Compiled once per
//! sea-orm line (`super` names its crates and the few calls whose forms differ).

use combkey::adapter::ColumnKind;

use super::orm::sea_query::{ArrayType, ColumnType, Nullable, Value, ValueType, ValueTypeErr};
use super::orm::{ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryFromU64, TryGetError, TryGetable};
use super::{conversion_error, held, string_value, uuid_value};
use crate::{CombTextUuid, CombUuid};

/// What a sea-query value holds, of the kinds a COMB id is read from.
pub(crate) enum Held {
    Uuid(uuid::Uuid),
    Bytes(Vec<u8>),
    String(String),
    Other,
}

/// Bound as a UUID value, which sqlx sends as the public bytes on every backend
/// (`uuid` on PostgreSQL, 16 bytes for `BINARY(16)` and `BLOB`).
impl From<CombUuid> for Value {
    fn from(id: CombUuid) -> Value {
        uuid_value(Some(uuid::Uuid::from(id.to_comb())))
    }
}

impl Nullable for CombUuid {
    fn null() -> Value {
        uuid_value(None)
    }
}

impl ValueType for CombUuid {
    fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
        match held(v) {
            Held::Uuid(u) => Ok(CombUuid::from(combkey::Comb::from(u))),
            Held::Bytes(b) => combkey::Comb::from_slice(&b).map(CombUuid::from).map_err(|_| ValueTypeErr),
            Held::String(s) => s.parse().map_err(|_| ValueTypeErr),
            Held::Other => Err(ValueTypeErr),
        }
    }

    fn type_name() -> String {
        "CombUuid".to_string()
    }

    fn array_type() -> ArrayType {
        ArrayType::Uuid
    }

    /// `uuid` on PostgreSQL, `binary(16)` on MySQL/MariaDB. On SQLite sea-query declares a
    /// UUID column `uuid_text`; `create_table_from_entity` declares it `blob` instead.
    fn column_type() -> ColumnType {
        ColumnType::Uuid
    }
}

impl TryGetable for CombUuid {
    fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Self, TryGetError> {
        // Decode with combkey-sqlx's codecs: the same rules and errors as raw sqlx (MariaDB's
        // UUID type and CHAR(36) text included), the sqlx error kept as the source.
        match super::sqlx_read!(res, idx, combkey_sqlx::Comb) {
            Some(decoded) => from_sqlx(decoded, idx),
            None => from_any_driver(res, idx, "CombUuid"),
        }
    }
}

/// A value combkey-sqlx decoded: `NULL` is sea-orm's `Null` (what `Option` fields need), a
/// decode error keeps the sqlx error (and its `combkey::Error` source).
fn from_sqlx<I: ColIdx, T: Into<combkey::Comb>>(
    decoded: Result<Option<T>, DbErr>,
    idx: I,
) -> Result<CombUuid, TryGetError> {
    match decoded {
        Ok(Some(id)) => Ok(CombUuid::from(id.into())),
        Ok(None) => Err(TryGetError::Null(format!("{idx:?}"))),
        Err(e) => Err(TryGetError::DbErr(e)),
    }
}

/// A driver combkey-sqlx does not decode here (a backend whose feature is off, a mock or a
/// proxy connection): read the value as sea-orm reads a UUID, bytes or text, and decode it
/// with combkey's rules, so the same values are accepted and the same errors given.
fn from_any_driver<I: ColIdx>(res: &QueryResult, idx: I, into: &'static str) -> Result<CombUuid, TryGetError> {
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
    decoded.map(CombUuid::from).map_err(|e| TryGetError::DbErr(conversion_error(e, into)))
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
        string_value(Some(id.to_string()))
    }
}

impl Nullable for CombTextUuid {
    fn null() -> Value {
        string_value(None)
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
        let id = match super::sqlx_read!(res, idx, combkey_sqlx::CombText) {
            Some(decoded) => from_sqlx(decoded, idx),
            None => from_any_driver(res, idx, "CombTextUuid"),
        };
        id.map(|id| CombTextUuid::from(id.to_comb()))
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
