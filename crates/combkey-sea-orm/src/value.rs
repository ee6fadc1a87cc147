//! sea-orm's value traits: what the column binds and how it reads back.

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, Value, ValueType, ValueTypeErr};
use sea_orm::{ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryFromU64, TryGetError, TryGetable};

use crate::CombUuid;

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

    /// `uuid` on PostgreSQL, `binary(16)` on MySQL/MariaDB; on SQLite sea-query declares a
    /// UUID column `uuid_text`, which still stores the bound values as BLOBs (use
    /// `migration::comb_column` to declare it `BLOB`).
    fn column_type() -> ColumnType {
        ColumnType::Uuid
    }
}

impl TryGetable for CombUuid {
    fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Self, TryGetError> {
        // Decode with combkey-sqlx's codecs: the same errors everywhere, MariaDB's UUID type
        // and CHAR(36) text included.
        let decoded: Option<Result<Option<combkey_sqlx::Comb>, sqlx::Error>> = {
            #[allow(unused_mut)]
            let mut decoded = None;
            #[cfg(feature = "postgres")]
            if let Some(row) = res.try_as_pg_row() {
                decoded = Some(sqlx::Row::try_get(row, idx.as_sqlx_postgres_index()));
            }
            #[cfg(feature = "mysql")]
            if let Some(row) = res.try_as_mysql_row() {
                decoded = Some(sqlx::Row::try_get(row, idx.as_sqlx_mysql_index()));
            }
            #[cfg(feature = "sqlite")]
            if let Some(row) = res.try_as_sqlite_row() {
                decoded = Some(sqlx::Row::try_get(row, idx.as_sqlx_sqlite_index()));
            }
            decoded
        };
        match decoded {
            Some(Ok(Some(id))) => Ok(id.into()),
            Some(Ok(None)) => Err(TryGetError::Null(format!("{idx:?}"))),
            Some(Err(e)) => Err(TryGetError::DbErr(DbErr::Type(e.to_string()))),
            // Other drivers (mock, proxy): sea-orm's own UUID decoding.
            None => uuid::Uuid::try_get_by(res, idx).map(|u| CombUuid::from(combkey::Comb::from(u))),
        }
    }
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

/// A fresh id as an `ActiveValue`, for `ActiveModelBehavior::new` so every new ActiveModel
/// has its id before insert:
///
/// ```
/// use sea_orm::entity::prelude::*;
/// use combkey_sea_orm::CombUuid;
///
/// #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
/// #[sea_orm(table_name = "orders")]
/// pub struct Model {
///     #[sea_orm(primary_key)]
///     pub id: CombUuid,
///     pub note: String,
/// }
///
/// #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
/// pub enum Relation {}
///
/// impl ActiveModelBehavior for ActiveModel {
///     fn new() -> Self {
///         Self { id: combkey_sea_orm::new_id(), ..ActiveModelTrait::default() }
///     }
/// }
///
/// let order = ActiveModel::new();
/// assert!(order.id.is_set());
/// ```
pub fn new_id() -> ActiveValue<CombUuid> {
    ActiveValue::Set(CombUuid::new())
}
