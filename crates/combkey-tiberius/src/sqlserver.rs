//! tiberius' conversion traits: `uniqueidentifier` in the suffix stored form; `binary(16)`
//! and UUID text read too. Compiled once per driver a feature turns on (tiberius, the
//! tiberius-ng fork): `super::tds` names it.

use combkey::adapter::ColumnKind;

use super::tds::{ColumnData, FromSql, FromSqlOwned, IntoSql, ToSql};

use std::borrow::Cow;

use crate::{
    Comb, CombBinary, CombPublic, CombText, OptionalComb, OptionalCombBinary, OptionalCombPublic, OptionalCombText,
};

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

/// How a `uniqueidentifier` value is read: combkey's stored form, or the id as is.
#[derive(Clone, Copy)]
enum Guid {
    Stored,
    Public,
}

fn from_column(value: &ColumnData<'static>, guid: Guid) -> super::tds::Result<Option<Comb>> {
    let decoded = match value {
        ColumnData::Guid(stored) => {
            return Ok(stored.map(|u| match guid {
                Guid::Stored => Comb::from_stored_uuid(u),
                Guid::Public => Comb::from(combkey::Comb::from(u)),
            }));
        }
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
            return Err(super::tds::error::Error::Conversion(
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
            Err(super::tds::error::Error::Conversion(format!("cannot read this value as a combkey id: {e}").into()))
        }
    }
}

/// `FromSql` and `FromSqlOwned` for a column type, reading `uniqueidentifier`s as `guid`.
macro_rules! reads {
    ($t:ty, $guid:expr) => {
        impl<'a> FromSql<'a> for $t {
            fn from_sql(value: &'a ColumnData<'static>) -> super::tds::Result<Option<Self>> {
                Ok(from_column(value, $guid)?.map(|id| <$t>::from(id.to_comb())))
            }
        }

        impl FromSqlOwned for $t {
            fn from_sql_owned(value: ColumnData<'static>) -> super::tds::Result<Option<Self>> {
                Ok(from_column(&value, $guid)?.map(|id| <$t>::from(id.to_comb())))
            }
        }
    };
}

reads!(Comb, Guid::Stored);
// binary(16) and text columns read the same whatever the type; a uniqueidentifier read as
// one of these is taken as it is (what uuid::Uuid reads).
reads!(CombPublic, Guid::Public);
reads!(CombBinary, Guid::Public);
reads!(CombText, Guid::Public);

fn public_guid(id: Option<combkey::Comb>) -> ColumnData<'static> {
    ColumnData::Guid(id.map(uuid::Uuid::from))
}

fn binary(id: Option<combkey::Comb>) -> ColumnData<'static> {
    ColumnData::Binary(id.map(|id| Cow::Owned(id.as_bytes().to_vec())))
}

fn text(id: Option<combkey::Comb>) -> ColumnData<'static> {
    ColumnData::String(id.map(|id| Cow::Owned(id.to_string())))
}

/// `ToSql`/`IntoSql` for a column type and its optional form, writing with `$write`.
macro_rules! writes {
    ($t:ty, $opt:ty, $write:ident) => {
        impl ToSql for $t {
            fn to_sql(&self) -> ColumnData<'_> {
                $write(Some(self.to_comb()))
            }
        }

        impl<'a> IntoSql<'a> for $t {
            fn into_sql(self) -> ColumnData<'a> {
                $write(Some(self.to_comb()))
            }
        }

        impl ToSql for $opt {
            fn to_sql(&self) -> ColumnData<'_> {
                $write(self.0.map(|id| id.to_comb()))
            }
        }

        impl<'a> IntoSql<'a> for $opt {
            fn into_sql(self) -> ColumnData<'a> {
                $write(self.0.map(|id| id.to_comb()))
            }
        }
    };
}

writes!(CombPublic, OptionalCombPublic, public_guid);
writes!(CombBinary, OptionalCombBinary, binary);
writes!(CombText, OptionalCombText, text);
