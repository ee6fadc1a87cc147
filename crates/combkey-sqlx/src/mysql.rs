//! MySQL and MariaDB: `BINARY(16)`; also reads MariaDB's `UUID` type and `CHAR(36)` text;
//! `CHAR(36)` written through `CombText`.
//!
//! The same impls for each sqlx line this crate supports (features `mysql` and
//! `sqlx-0-8-mysql`): written once, for the crate the macro is given; the trait surface used
//! here is the same in both lines.

macro_rules! impls {
    ($sqlx:ident) => {
        use $sqlx::encode::IsNull;
        use $sqlx::error::BoxDynError;
        use $sqlx::mysql::{MySql, MySqlTypeInfo, MySqlValueRef};
        use $sqlx::{Decode, Encode, Type, TypeInfo, ValueRef};

        use combkey::adapter::ColumnKind;

        use crate::{Comb, CombText};

        impl Type<MySql> for Comb {
            // As sqlx's own for `uuid::Uuid` (the same in both lines).
            fn type_info() -> MySqlTypeInfo {
                <&[u8] as Type<MySql>>::type_info()
            }

            /// Binary and string columns: `BINARY(16)`, MariaDB `UUID`, `CHAR(36)`.
            fn compatible(ty: &MySqlTypeInfo) -> bool {
                <&[u8] as Type<MySql>>::compatible(ty)
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
                    if name.contains("BINARY") || name.contains("BLOB") {
                        ColumnKind::BinaryOrText
                    } else {
                        ColumnKind::Text
                    }
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
    };
}

#[cfg(feature = "mysql")]
mod sqlx_0_9 {
    impls!(sqlx);
}

#[cfg(feature = "sqlx-0-8-mysql")]
mod sqlx_0_8 {
    impls!(sqlx08);
}
