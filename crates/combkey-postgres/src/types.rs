//! `postgres_types::ToSql` and `FromSql`: what tokio-postgres, postgres, deadpool-postgres
//! and the query builders on them use.

use std::error::Error;

use bytes::BytesMut;
use combkey::adapter::ColumnKind;
use postgres_types::{FromSql, IsNull, ToSql, Type, accepts, to_sql_checked};

use crate::{Comb, CombText};

impl ToSql for Comb {
    /// The 16 public bytes, PostgreSQL's binary `uuid` format.
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(self.as_comb().as_bytes());
        Ok(IsNull::No)
    }

    accepts!(UUID);
    to_sql_checked!();
}

impl<'a> FromSql<'a> for Comb {
    /// A `uuid` value (16 bytes), or UUID text from a `text`, `varchar`, `char` or `name`
    /// column (a table keyed by UUID text). Anything else is an error naming what was found.
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Comb, Box<dyn Error + Sync + Send>> {
        let kind = if *ty == Type::UUID { ColumnKind::Binary } else { ColumnKind::Text };
        Ok(combkey::adapter::from_column(raw, kind).map(Comb::from)?)
    }

    accepts!(UUID, TEXT, VARCHAR, BPCHAR, NAME, UNKNOWN);
}

impl ToSql for CombText {
    /// The lowercase hyphenated text, for a `text`, `varchar` or `char` column.
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        let mut buf = [0u8; 36];
        out.extend_from_slice(self.hyphenated().encode_lower(&mut buf).as_bytes());
        Ok(IsNull::No)
    }

    accepts!(TEXT, VARCHAR, BPCHAR, NAME, UNKNOWN);
    to_sql_checked!();
}

impl<'a> FromSql<'a> for CombText {
    /// As [`Comb`] reads: UUID text in any form, or a `uuid` value; the same errors.
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<CombText, Box<dyn Error + Sync + Send>> {
        Comb::from_sql(ty, raw).map(|id| CombText::from(id.to_comb()))
    }

    accepts!(UUID, TEXT, VARCHAR, BPCHAR, NAME, UNKNOWN);
}
