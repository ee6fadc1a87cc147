//! PostgreSQL: native `uuid`, binary and text wire formats, `uuid[]`; text columns through
//! `CombText`.
//!
//! The same impls for each sqlx line this crate supports (features `postgres` and
//! `sqlx-0-8-postgres`): written once, for the crate the macro is given; the trait surface used
//! here is the same in both lines.

macro_rules! impls {
    ($sqlx:ident) => {
        use $sqlx::encode::IsNull;
        use $sqlx::error::BoxDynError;
        use $sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueFormat, PgValueRef, Postgres};
        use $sqlx::{Decode, Encode, Type, ValueRef};

        use combkey::adapter::ColumnKind;

        use crate::{Comb, CombText};

        impl Type<Postgres> for Comb {
            fn type_info() -> PgTypeInfo {
                <$sqlx::types::Uuid as Type<Postgres>>::type_info()
            }

            fn compatible(ty: &PgTypeInfo) -> bool {
                <$sqlx::types::Uuid as Type<Postgres>>::compatible(ty)
            }
        }

        impl PgHasArrayType for Comb {
            fn array_type_info() -> PgTypeInfo {
                <$sqlx::types::Uuid as PgHasArrayType>::array_type_info()
            }
        }

        impl Encode<'_, Postgres> for Comb {
            fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
                buf.extend_from_slice(self.to_comb().as_bytes());
                Ok(IsNull::No)
            }

            fn size_hint(&self) -> usize {
                16
            }
        }

        impl Decode<'_, Postgres> for Comb {
            fn decode(value: PgValueRef<'_>) -> Result<Self, BoxDynError> {
                if value.is_null() {
                    return Err(combkey::adapter::unexpected_null().into());
                }
                let id = match value.format() {
                    PgValueFormat::Binary => combkey::Comb::from_slice(value.as_bytes()?)?,
                    PgValueFormat::Text => value.as_str()?.parse()?,
                };
                Ok(id.into())
            }
        }

        impl Type<Postgres> for CombText {
            fn type_info() -> PgTypeInfo {
                <String as Type<Postgres>>::type_info()
            }

            /// `text`, `varchar`, `char(n)`, `name`, `citext`.
            fn compatible(ty: &PgTypeInfo) -> bool {
                <String as Type<Postgres>>::compatible(ty)
            }
        }

        impl PgHasArrayType for CombText {
            fn array_type_info() -> PgTypeInfo {
                <String as PgHasArrayType>::array_type_info()
            }
        }

        impl Encode<'_, Postgres> for CombText {
            fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
                <String as Encode<Postgres>>::encode(self.to_comb().to_string(), buf)
            }

            fn size_hint(&self) -> usize {
                36
            }
        }

        impl Decode<'_, Postgres> for CombText {
            fn decode(value: PgValueRef<'_>) -> Result<Self, BoxDynError> {
                if value.is_null() {
                    return Err(combkey::adapter::unexpected_null().into());
                }
                // Text arrives as its UTF-8 bytes in both wire formats.
                Ok(combkey::adapter::from_column(value.as_bytes()?, ColumnKind::Text)?.into())
            }
        }
    };
}

#[cfg(feature = "postgres")]
mod sqlx_0_9 {
    impls!(sqlx);
}

#[cfg(feature = "sqlx-0-8-postgres")]
mod sqlx_0_8 {
    impls!(sqlx08);
}
