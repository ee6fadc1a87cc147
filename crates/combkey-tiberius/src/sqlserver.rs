//! tiberius' conversion traits: `uniqueidentifier` in the suffix stored form; `binary(16)`
//! and UUID text read too.

use combkey::adapter::ColumnKind;
use tiberius::{ColumnData, FromSql, FromSqlOwned, IntoSql, ToSql};

use crate::{Comb, OptionalComb};

fn guid(id: Option<Comb>) -> ColumnData<'static> {
    ColumnData::Guid(id.map(Comb::to_stored_uuid))
}

impl ToSql for Comb {
    fn to_sql(&self) -> ColumnData<'_> {
        guid(Some(*self))
    }
}

impl<'a> IntoSql<'a> for Comb {
    fn into_sql(self) -> ColumnData<'a> {
        guid(Some(self))
    }
}

impl ToSql for OptionalComb {
    fn to_sql(&self) -> ColumnData<'_> {
        guid(self.0)
    }
}

impl<'a> IntoSql<'a> for OptionalComb {
    fn into_sql(self) -> ColumnData<'a> {
        guid(self.0)
    }
}

fn from_column(value: &ColumnData<'static>) -> tiberius::Result<Option<Comb>> {
    let decoded = match value {
        ColumnData::Guid(stored) => return Ok(stored.map(Comb::from_stored_uuid)),
        // binary(16) holds the public bytes, as BINARY(16) does on MySQL and BLOB on SQLite
        // (a table moved from there); nvarchar(36)/char(36) hold UUID text.
        ColumnData::Binary(bytes) => bytes.as_deref().map(|b| combkey::adapter::from_column(b, ColumnKind::Binary)),
        ColumnData::String(text) => {
            text.as_deref().map(|t| combkey::adapter::from_column(t.as_bytes(), ColumnKind::Text))
        }
        other => {
            // The variant's name (`I32`, `DateTime`, ...) without the value.
            let debug = format!("{other:?}");
            let found = debug.split_once('(').map_or(debug.as_str(), |(variant, _)| variant);
            return Err(tiberius::error::Error::Conversion(
                format!(
                    "cannot read a {found} column value as a combkey id: expected a uniqueidentifier, binary(16) or \
                     UUID text"
                )
                .into(),
            ));
        }
    };
    match decoded.transpose() {
        Ok(id) => Ok(id.map(Comb::from)),
        Err(e) => {
            Err(tiberius::error::Error::Conversion(format!("cannot read this value as a combkey id: {e}").into()))
        }
    }
}

impl<'a> FromSql<'a> for Comb {
    fn from_sql(value: &'a ColumnData<'static>) -> tiberius::Result<Option<Self>> {
        from_column(value)
    }
}

impl FromSqlOwned for Comb {
    fn from_sql_owned(value: ColumnData<'static>) -> tiberius::Result<Option<Self>> {
        from_column(&value)
    }
}
