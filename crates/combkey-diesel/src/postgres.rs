//! PostgreSQL: native `uuid`.

use std::io::Write;

use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Uuid;

use crate::Comb;

impl ToSql<Uuid, Pg> for Comb {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(self.to_comb().as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<Uuid, Pg> for Comb {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        Ok(combkey::Comb::from_slice(value.as_bytes())?.into())
    }

    fn from_nullable_sql(value: Option<PgValue<'_>>) -> deserialize::Result<Self> {
        value.map_or_else(|| Err(combkey::Error::unexpected_null().into()), <Self as FromSql<Uuid, Pg>>::from_sql)
    }
}
