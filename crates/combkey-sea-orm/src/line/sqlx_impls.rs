//! The sqlx traits, delegated to combkey-sqlx's (sea-orm 2.0 sits on sqlx 0.9, sea-orm 1.1 on sqlx 0.8): a
//! sea-orm user binds and reads the same type in raw sqlx queries.

use super::orm_sqlx::encode::IsNull;
use super::orm_sqlx::error::BoxDynError;
use super::orm_sqlx::{Database, Decode, Encode, Type};

use crate::{CombTextUuid, CombUuid};

impl<DB: Database> Type<DB> for CombUuid
where
    combkey_sqlx::Comb: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <combkey_sqlx::Comb as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <combkey_sqlx::Comb as Type<DB>>::compatible(ty)
    }
}

impl<'q, DB: Database> Encode<'q, DB> for CombUuid
where
    combkey_sqlx::Comb: Encode<'q, DB>,
{
    fn encode_by_ref(&self, buf: &mut super::argument_buffer!(DB, 'q)) -> Result<IsNull, BoxDynError> {
        combkey_sqlx::Comb::from(*self).encode_by_ref(buf)
    }
}

impl<'r, DB: Database> Decode<'r, DB> for CombUuid
where
    combkey_sqlx::Comb: Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
        combkey_sqlx::Comb::decode(value).map(CombUuid::from)
    }
}

impl<DB: Database> Type<DB> for CombTextUuid
where
    combkey_sqlx::CombText: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <combkey_sqlx::CombText as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <combkey_sqlx::CombText as Type<DB>>::compatible(ty)
    }
}

impl<'q, DB: Database> Encode<'q, DB> for CombTextUuid
where
    combkey_sqlx::CombText: Encode<'q, DB>,
{
    fn encode_by_ref(&self, buf: &mut super::argument_buffer!(DB, 'q)) -> Result<IsNull, BoxDynError> {
        combkey_sqlx::CombText::from(self.to_comb()).encode_by_ref(buf)
    }
}

impl<'r, DB: Database> Decode<'r, DB> for CombTextUuid
where
    combkey_sqlx::CombText: Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
        combkey_sqlx::CombText::decode(value).map(|id| CombTextUuid::from(id.to_comb()))
    }
}
