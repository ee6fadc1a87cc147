//! PostgreSQL: native `uuid`; text columns through `CombText`.

use std::io::Write;

use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Text, Uuid};

use combkey::adapter::ColumnKind;

use crate::{Comb, CombText};

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
}

impl ToSql<Text, Pg> for CombText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        write!(out, "{}", self.to_comb())?;
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Pg> for CombText {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        Ok(combkey::adapter::from_column(value.as_bytes(), ColumnKind::Text)?.into())
    }
}
