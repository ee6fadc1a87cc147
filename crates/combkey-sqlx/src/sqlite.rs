//! SQLite: `BLOB`; `TEXT` holding a UUID string decodes too, and is written through `CombText`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{Sqlite, SqliteArgumentsBuffer, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Type, TypeInfo, ValueRef};

use combkey::adapter::ColumnKind;

use crate::{Comb, CombText};

impl Type<Sqlite> for Comb {
    fn type_info() -> SqliteTypeInfo {
        <sqlx::types::Uuid as Type<Sqlite>>::type_info()
    }

    /// `BLOB` and `TEXT`.
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <sqlx::types::Uuid as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for Comb {
    fn encode_by_ref(&self, args: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <Vec<u8> as Encode<Sqlite>>::encode(self.to_comb().as_bytes().to_vec(), args)
    }
}

impl Decode<'_, Sqlite> for Comb {
    fn decode(value: SqliteValueRef<'_>) -> Result<Self, BoxDynError> {
        if value.is_null() {
            return Err(combkey::adapter::unexpected_null().into());
        }
        let column = if value.type_info().name() == "TEXT" { ColumnKind::Text } else { ColumnKind::Binary };
        let bytes = <&[u8] as Decode<Sqlite>>::decode(value)?;
        Ok(combkey::adapter::from_column(bytes, column)?.into())
    }
}

impl Type<Sqlite> for CombText {
    fn type_info() -> SqliteTypeInfo {
        <String as Type<Sqlite>>::type_info()
    }

    /// `TEXT`; a `BLOB` of 16 bytes (an id written by [`Comb`]) reads too.
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <String as Type<Sqlite>>::compatible(ty) || <Vec<u8> as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for CombText {
    fn encode_by_ref(&self, args: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <String as Encode<Sqlite>>::encode(self.to_comb().to_string(), args)
    }
}

impl Decode<'_, Sqlite> for CombText {
    fn decode(value: SqliteValueRef<'_>) -> Result<Self, BoxDynError> {
        if value.is_null() {
            return Err(combkey::adapter::unexpected_null().into());
        }
        let column = if value.type_info().name() == "BLOB" { ColumnKind::Binary } else { ColumnKind::Text };
        let bytes = <&[u8] as Decode<Sqlite>>::decode(value)?;
        Ok(combkey::adapter::from_column(bytes, column)?.into())
    }
}
