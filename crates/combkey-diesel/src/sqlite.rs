//! SQLite: `BLOB`; `TEXT` holding a UUID string reads too.

use combkey::ColumnKind;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Binary;
use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};

use crate::Comb;

impl ToSql<Binary, Sqlite> for Comb {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.as_comb().as_bytes().as_slice());
        Ok(IsNull::No)
    }
}

impl FromSql<Binary, Sqlite> for Comb {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let column = if value.value_type() == Some(SqliteType::Text) { ColumnKind::Text } else { ColumnKind::Binary };
        Ok(combkey::Comb::from_column(value.read_blob(), column)?.into())
    }

    fn from_nullable_sql(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<Self> {
        value.map_or_else(|| Err(combkey::Error::unexpected_null().into()), <Self as FromSql<Binary, Sqlite>>::from_sql)
    }
}
