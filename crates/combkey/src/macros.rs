//! The column-type newtype every adapter crate declares ([`crate::adapter::column_newtype`]).

/// Declares a newtype over [`Comb`](crate::Comb) for an adapter crate: Rust's orphan rule
/// keeps an ORM's traits for the core type out of both crates, so each adapter declares its
/// own column type, and this macro keeps them identical: the full derive set, `new()`,
/// `to_comb()`, `as_comb()`, `From` both ways, `Display`, `FromStr`, and whatever the core
/// type implements through the core crate's features: `serde` (feature `serde`) and the API
/// schemas (`schemars::JsonSchema`, `utoipa::ToSchema`; features `schemars`, `utoipa`). One
/// rule decides all three: the *core* crate's features, so an adapter's type supports exactly
/// what [`Comb`](crate::Comb) supports in the same build (an adapter's own `serde` feature
/// only turns the core's on).
///
/// ```
/// combkey::adapter::column_newtype! {
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
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype {
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
        $crate::__column_newtype_serde!($name);
    };
}

/// `serde` for a column newtype, delegating to [`Comb`](crate::Comb)'s; nothing without the
/// core's `serde` feature.
#[cfg(feature = "serde")]
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_serde {
    ($name:ident) => {
        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                $crate::__private::serde::Serialize::serialize(&self.0, serializer)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                <$crate::Comb as $crate::__private::serde::Deserialize<'de>>::deserialize(deserializer).map($name)
            }
        }
    };
}

#[cfg(not(feature = "serde"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_serde {
    ($name:ident) => {};
}
