//! PostgreSQL only: `uuid[]` columns (`Vec<CombUuid>` fields) and array binds
//! (`Column::eq_any`, `Vec<CombUuid>` as one `uuid[]` value), as sea-orm's `DeriveValueType`
//! gives a wrapper of `Uuid` under its `postgres-array` feature.

use super::orm::{ColIdx, QueryResult, TryGetError, TryGetable, TryGetableArray};
use super::orm_sqlx::postgres::{PgHasArrayType, PgTypeInfo};
use super::{NotU8, orm_sqlx, query_error};
use crate::{CombTextUuid, CombUuid};

/// Raw sqlx queries bind and read `Vec<CombUuid>` as `uuid[]` (and `Vec<CombTextUuid>` as
/// `text[]`), as combkey-sqlx's types do.
impl PgHasArrayType for CombUuid {
    fn array_type_info() -> PgTypeInfo {
        <combkey_sqlx::Comb as PgHasArrayType>::array_type_info()
    }
}

impl PgHasArrayType for CombTextUuid {
    fn array_type_info() -> PgTypeInfo {
        <combkey_sqlx::CombText as PgHasArrayType>::array_type_info()
    }
}

/// `Vec<CombUuid>` converts to one array value (`uuid[]`), not to bytes.
impl NotU8 for CombUuid {}

impl TryGetableArray for CombUuid {
    fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Vec<Self>, TryGetError> {
        if let Some(row) = res.try_as_pg_row() {
            let decoded: Result<Option<Vec<combkey_sqlx::Comb>>, orm_sqlx::Error> =
                orm_sqlx::Row::try_get(row, idx.as_sqlx_postgres_index());
            return match decoded {
                Ok(Some(ids)) => Ok(ids.into_iter().map(CombUuid::from).collect()),
                Ok(None) => Err(TryGetError::Null(format!("{idx:?}"))),
                Err(e) => Err(TryGetError::DbErr(query_error(e))),
            };
        }
        // Another driver (mock, proxy): sea-orm's own reading of a uuid[].
        <Vec<uuid::Uuid> as TryGetable>::try_get_by(res, idx)
            .map(|ids| ids.into_iter().map(|u| CombUuid::from(combkey::Comb::from(u))).collect())
    }
}
