//! MySQL and MariaDB: `BINARY(16)`; also reads MariaDB's `UUID` type and `CHAR(36)` text;
//! `CHAR(36)` written through `CombText`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::mysql::{MySql, MySqlTypeInfo, MySqlValueRef};
use sqlx::{Decode, Encode, Type, TypeInfo, ValueRef};

use combkey::adapter::ColumnKind;

use crate::{Comb, CombText};

impl Type<MySql> for Comb {
    fn type_info() -> MySqlTypeInfo {
        <sqlx::types::Uuid as Type<MySql>>::type_info()
    }

    /// Binary and string columns: `BINARY(16)`, MariaDB `UUID`, `CHAR(36)`.
    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <sqlx::types::Uuid as Type<MySql>>::compatible(ty)
    }
}

impl Encode<'_, MySql> for Comb {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        <&[u8] as Encode<MySql>>::encode(self.to_comb().as_bytes().as_slice(), buf)
    }

    fn size_hint(&self) -> usize {
        17
    }
}

impl Decode<'_, MySql> for Comb {
    fn decode(value: MySqlValueRef<'_>) -> Result<Self, BoxDynError> {
        if value.is_null() {
            return Err(combkey::adapter::unexpected_null().into());
        }
        let column = {
            let info = value.type_info();
            let name = info.name();
            // MariaDB's UUID type arrives flagged binary, as 36 characters of text.
            if name.contains("BINARY") || name.contains("BLOB") { ColumnKind::BinaryOrText } else { ColumnKind::Text }
        };
        let bytes = <&[u8] as Decode<MySql>>::decode(value)?;
        Ok(combkey::adapter::from_column(bytes, column)?.into())
    }
}

impl Type<MySql> for CombText {
    fn type_info() -> MySqlTypeInfo {
        <&str as Type<MySql>>::type_info()
    }

    /// `CHAR`, `VARCHAR`, `TEXT` (and MariaDB's `UUID`, which arrives as text).
    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <&str as Type<MySql>>::compatible(ty)
    }
}

impl Encode<'_, MySql> for CombText {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        <String as Encode<MySql>>::encode(self.to_comb().to_string(), buf)
    }

    fn size_hint(&self) -> usize {
        37
    }
}

impl Decode<'_, MySql> for CombText {
    fn decode(value: MySqlValueRef<'_>) -> Result<Self, BoxDynError> {
        if value.is_null() {
            return Err(combkey::adapter::unexpected_null().into());
        }
        let bytes = <&[u8] as Decode<MySql>>::decode(value)?;
        Ok(combkey::adapter::from_column(bytes, ColumnKind::Text)?.into())
    }
}
