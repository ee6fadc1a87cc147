//! MySQL and MariaDB: `BINARY(16)`; MariaDB's `UUID` type and `CHAR(36)` text read too;
//! `CHAR(36)` written through `CombText`.

use std::io::Write;

use combkey::adapter::ColumnKind;
use diesel::deserialize::{self, FromSql};
use diesel::mysql::{Mysql, MysqlValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Binary, Text};

use crate::{Comb, CombText};

impl ToSql<Binary, Mysql> for Comb {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Mysql>) -> serialize::Result {
        out.write_all(self.to_comb().as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<Binary, Mysql> for Comb {
    fn from_sql(value: MysqlValue<'_>) -> deserialize::Result<Self> {
        // diesel reports BINARY(16), CHAR(36) and MariaDB's UUID alike (`MysqlType::String`):
        // 16 bytes are an id's bytes, anything else must be UUID text.
        Ok(combkey::adapter::from_column(value.as_bytes(), ColumnKind::BinaryOrText)?.into())
    }
}

impl ToSql<Text, Mysql> for CombText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Mysql>) -> serialize::Result {
        write!(out, "{}", self.to_comb())?;
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Mysql> for CombText {
    fn from_sql(value: MysqlValue<'_>) -> deserialize::Result<Self> {
        Ok(combkey::adapter::from_column(value.as_bytes(), ColumnKind::Text)?.into())
    }
}
