//! mysql_common's `Value` conversions, which mysql_async and mysql use for parameters
//! (`From<T> for Value`) and for reading rows (`FromValue`).

use combkey::adapter::ColumnKind;
use mysql_common::value::Value;
use mysql_common::value::convert::{FromValue, FromValueError};

use crate::{Comb, CombText};

impl From<Comb> for Value {
    /// The 16 public bytes.
    fn from(id: Comb) -> Self {
        Value::Bytes(id.as_comb().as_bytes().to_vec())
    }
}

impl Comb {
    /// The id in a value, with combkey's message when it is not one: 16 bytes (`BINARY(16)`),
    /// or UUID text (MariaDB's `UUID` type, `CHAR(36)`). [`FromValue`] (what `row.get` uses)
    /// calls this and, as mysql_common's errors carry only the value, returns
    /// `FromValueError(value)` instead of the message.
    ///
    /// ```
    /// use mysql_common::value::Value;
    ///
    /// let id = combkey_mysql::Comb::new();
    /// assert_eq!(combkey_mysql::Comb::from_value_checked(&Value::from(id))?, id);
    /// assert_eq!(combkey_mysql::Comb::from_value_checked(&Value::Bytes(id.to_string().into_bytes()))?, id);
    /// let err = combkey_mysql::Comb::from_value_checked(&Value::Bytes(vec![0; 15])).unwrap_err();
    /// assert!(err.to_string().contains("15"), "{err}");
    /// let err = combkey_mysql::Comb::from_value_checked(&Value::NULL).unwrap_err();
    /// assert!(err.to_string().contains("NULL"), "{err}");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn from_value_checked(value: &Value) -> Result<Comb, combkey::Error> {
        match value {
            Value::Bytes(b) => combkey::adapter::from_column(b, ColumnKind::BinaryOrText).map(Comb::from),
            Value::NULL => Err(combkey::adapter::unexpected_null()),
            other => Err(combkey::adapter::wrong_column_type(format!("{other:?}"))),
        }
    }
}

/// The intermediate of [`FromValue`]: the id, and the value it came from (mysql_common's
/// row conversion can take it back).
#[derive(Clone, Debug, PartialEq)]
pub struct CombIr(Comb, Value);

impl TryFrom<Value> for CombIr {
    type Error = FromValueError;

    fn try_from(value: Value) -> Result<Self, FromValueError> {
        match Comb::from_value_checked(&value) {
            Ok(id) => Ok(CombIr(id, value)),
            Err(_) => Err(FromValueError(value)),
        }
    }
}

impl From<CombIr> for Comb {
    fn from(ir: CombIr) -> Self {
        ir.0
    }
}

impl From<CombIr> for Value {
    fn from(ir: CombIr) -> Self {
        ir.1
    }
}

impl FromValue for Comb {
    type Intermediate = CombIr;
}

impl From<CombText> for Value {
    /// The lowercase hyphenated text, for a `CHAR(36)`, `VARCHAR` or `TEXT` key column.
    fn from(id: CombText) -> Self {
        Value::Bytes(id.to_string().into_bytes())
    }
}

impl From<CombIr> for CombText {
    fn from(ir: CombIr) -> Self {
        CombText::from(ir.0.to_comb())
    }
}

impl FromValue for CombText {
    /// Reads what [`Comb`] reads (UUID text, or 16 bytes).
    type Intermediate = CombIr;
}

impl CombText {
    /// As [`Comb::from_value_checked`]: the id in a value, with combkey's message when it is
    /// not one.
    pub fn from_value_checked(value: &Value) -> Result<CombText, combkey::Error> {
        Comb::from_value_checked(value).map(|id| CombText::from(id.to_comb()))
    }
}
