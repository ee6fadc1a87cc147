//! tiberius' conversion traits: `uniqueidentifier` in the suffix stored form.

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
    match value {
        ColumnData::Guid(stored) => Ok(stored.map(Comb::from_stored_uuid)),
        other => {
            // The variant's name (`I32`, `String`, ...) without the value.
            let debug = format!("{other:?}");
            let found = debug.split_once('(').map_or(debug.as_str(), |(variant, _)| variant);
            Err(tiberius::error::Error::Conversion(
                format!("cannot read a {found} column value as a combkey id: expected a uniqueidentifier").into(),
            ))
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
