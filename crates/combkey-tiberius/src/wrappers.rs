//! Conversions of the column type beyond what `column_newtype!` gives.

use crate::{Comb, CombBinary, CombPublic, CombText};

impl Comb {
    /// The `uniqueidentifier` value SQL Server holds for this id, as a `uuid::Uuid` in
    /// display order (tiberius swaps the first three groups on the wire itself).
    ///
    /// ```
    /// let id: combkey_tiberius::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(id.to_stored_uuid().to_string(), "8f39070c-0cdc-c498-7cc3-017f22e279b0");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn to_stored_uuid(self) -> uuid::Uuid {
        uuid::Uuid::from_bytes(self.to_comb().to_sqlserver_bytes())
    }

    /// The public id of a `uniqueidentifier` value SQL Server holds.
    pub fn from_stored_uuid(stored: uuid::Uuid) -> Self {
        combkey::Comb::from_sqlserver_bytes(stored.into_bytes()).into()
    }
}

/// An optional id to bind as a parameter: tiberius' `ToSql` is not implemented for foreign
/// `Option<T>`, so bind `OptionalComb(None)` for a `NULL`. (Reading needs nothing special:
/// `row.try_get::<Comb, _>` already returns `Option<Comb>`.)
///
/// ```
/// use combkey_tiberius::{Comb, OptionalComb};
///
/// let parent: Option<Comb> = None;
/// let param = OptionalComb::from(parent);
/// assert_eq!(param.0, None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OptionalComb(pub Option<Comb>);

impl From<Option<Comb>> for OptionalComb {
    fn from(id: Option<Comb>) -> Self {
        OptionalComb(id)
    }
}

impl From<Comb> for OptionalComb {
    fn from(id: Comb) -> Self {
        OptionalComb(Some(id))
    }
}

/// An optional id of another column type, to bind as a parameter (see [`OptionalComb`]).
macro_rules! optional {
    ($(#[$meta:meta])* $name:ident, $t:ty) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub Option<$t>);

        impl From<Option<$t>> for $name {
            fn from(id: Option<$t>) -> Self {
                $name(id)
            }
        }

        impl From<$t> for $name {
            fn from(id: $t) -> Self {
                $name(Some(id))
            }
        }
    };
}

optional!(
    /// An optional [`CombPublic`] to bind (`NULL` for `None`).
    OptionalCombPublic,
    CombPublic
);
optional!(
    /// An optional [`CombBinary`] to bind (`NULL` for `None`).
    OptionalCombBinary,
    CombBinary
);
optional!(
    /// An optional [`CombText`] to bind (`NULL` for `None`).
    OptionalCombText,
    CombText
);
