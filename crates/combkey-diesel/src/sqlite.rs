//! SQLite: `BLOB`; `TEXT` holding a UUID string reads too, and is written through `CombText`.

use combkey::adapter::ColumnKind;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Binary, Text};
use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};

use crate::{Comb, CombText};

impl ToSql<Binary, Sqlite> for Comb {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.as_comb().as_bytes().as_slice());
        Ok(IsNull::No)
    }
}

impl FromSql<Binary, Sqlite> for Comb {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let column = if value.value_type() == Some(SqliteType::Text) { ColumnKind::Text } else { ColumnKind::Binary };
        Ok(combkey::adapter::from_column(value.read_blob(), column)?.into())
    }
}

impl ToSql<Text, Sqlite> for CombText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.to_comb().to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Sqlite> for CombText {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        // A BLOB in a text column: 16 bytes are the id's bytes, anything else an error.
        let column = if value.value_type() == Some(SqliteType::Binary) { ColumnKind::Binary } else { ColumnKind::Text };
        Ok(combkey::adapter::from_column(value.read_blob(), column)?.into())
    }
}
