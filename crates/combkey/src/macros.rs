//! The column-type newtype every adapter crate declares.

/// Declares a newtype over [`Comb`](crate::Comb) for an adapter crate: Rust's orphan rule
/// keeps an ORM's traits for the core type out of both crates, so each adapter declares its
/// own column type, and this macro keeps them identical: the full derive set, `new()`,
/// `to_comb()`, `as_comb()`, `From` both ways, `Display`, `FromStr`, `serde` (when the *calling*
/// crate has a `serde` feature and dependency) delegating to the core type, and the API
/// schemas (`schemars::JsonSchema`, `utoipa::ToSchema`) when the *core* crate's `schemars` or
/// `utoipa` feature is on.
///
/// ```
/// combkey::column_newtype! {
///     /// My ORM's id column.
///     pub struct Id;
/// }
///
/// let id = Id::new();
/// let core: combkey::Comb = id.into();
/// assert_eq!(Id::from(core), id);
/// assert_eq!(id.to_string().parse::<Id>()?, id);
/// # Ok::<(), combkey::Error>(())
/// ```
#[macro_export]
macro_rules! column_newtype {
    ($(#[$meta:meta])* $vis:vis struct $name:ident;) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis struct $name($crate::Comb);

        impl $name {
            /// A fresh id from the process-wide default generator ([`combkey::Comb::new`]).
            #[allow(clippy::new_without_default)] // `Default` is the nil id, as for the core type.
            pub fn new() -> Self {
                $name($crate::Comb::new())
            }

            /// The core id.
            pub const fn to_comb(self) -> $crate::Comb {
                self.0
            }

            /// The core id, by reference (for codecs that lend the 16 bytes to the driver).
            pub const fn as_comb(&self) -> &$crate::Comb {
                &self.0
            }
        }

        impl ::core::convert::From<$crate::Comb> for $name {
            fn from(id: $crate::Comb) -> Self {
                $name(id)
            }
        }

        impl ::core::convert::From<$name> for $crate::Comb {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Display::fmt(&self.0, f)
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::Error;

            fn from_str(s: &str) -> ::core::result::Result<Self, $crate::Error> {
                s.parse().map($name)
            }
        }

        $crate::__column_newtype_schemas!($name);

        #[cfg(feature = "serde")]
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
                ::serde::Serialize::serialize(&self.0, serializer)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::core::result::Result<Self, D::Error> {
                <$crate::Comb as ::serde::Deserialize<'de>>::deserialize(deserializer).map($name)
            }
        }
    };
}
