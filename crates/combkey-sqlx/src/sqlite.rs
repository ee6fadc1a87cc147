//! SQLite: `BLOB`; `TEXT` holding a UUID string decodes too, and is written through `CombText`.
//!
//! The same impls for each sqlx line (features `sqlite` and `sqlx-0-8-sqlite`), written once:
//! the lines differ only in the type of `Encode`'s argument buffer (sqlx 0.9's
//! `SqliteArgumentsBuffer`, sqlx 0.8's `Vec<SqliteArgumentValue<'q>>`), which the macro is
//! given.

macro_rules! impls {
    ($sqlx:ident, $q:lifetime, $buffer:ty) => {
        use $sqlx::encode::IsNull;
        use $sqlx::error::BoxDynError;
        use $sqlx::sqlite::{Sqlite, SqliteTypeInfo, SqliteValueRef};
        use $sqlx::{Decode, Encode, Type, TypeInfo, ValueRef};

        use combkey::adapter::ColumnKind;

        use crate::{Comb, CombText};

        impl Type<Sqlite> for Comb {
            // sqlx's own for `uuid::Uuid` (a `BLOB`, compatible with `BLOB` and `TEXT`), as
            // `[u8]` has it, the same in both lines: sqlx 0.8's `uuid` feature stays off (Cargo.toml says
            // why).
            fn type_info() -> SqliteTypeInfo {
                <[u8] as Type<Sqlite>>::type_info()
            }

            /// `BLOB` and `TEXT`.
            fn compatible(ty: &SqliteTypeInfo) -> bool {
                <[u8] as Type<Sqlite>>::compatible(ty)
            }
        }

        impl<$q> Encode<$q, Sqlite> for Comb {
            fn encode_by_ref(&self, args: &mut $buffer) -> Result<IsNull, BoxDynError> {
                <Vec<u8> as Encode<$q, Sqlite>>::encode(self.to_comb().as_bytes().to_vec(), args)
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

        impl<$q> Encode<$q, Sqlite> for CombText {
            fn encode_by_ref(&self, args: &mut $buffer) -> Result<IsNull, BoxDynError> {
                <String as Encode<$q, Sqlite>>::encode(self.to_comb().to_string(), args)
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
    };
}

#[cfg(feature = "sqlite")]
mod sqlx_0_9 {
    use sqlx::sqlite::SqliteArgumentsBuffer;

    impls!(sqlx, 'q, SqliteArgumentsBuffer);
}

#[cfg(feature = "sqlx-0-8-sqlite")]
mod sqlx_0_8 {
    use sqlx08::sqlite::SqliteArgumentValue;

    impls!(sqlx08, 'q, Vec<SqliteArgumentValue<'q>>);
}
