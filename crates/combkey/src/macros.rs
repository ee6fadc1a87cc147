//! The column-type newtype every adapter crate declares ([`crate::adapter::column_newtype`]).

/// Declares a newtype over [`Comb`](crate::Comb) for an adapter crate: Rust's orphan rule
/// keeps an ORM's traits for the core type out of both crates, so each adapter declares its
/// own column type, and this macro keeps them identical: the full derive set, `new()`,
/// `to_comb()`, `as_comb()`, `From` both ways with [`Comb`](crate::Comb) and `uuid::Uuid`,
/// `Deref` to [`Comb`](crate::Comb) (and so every method of `uuid::Uuid`), `uuid::Uuid`'s
/// associated functions (`nil`, `max`, `now_v7`, `new_v4`, `parse_str`, ...), `Debug` as
/// `uuid::Uuid` prints, `Display`, `FromStr`, `TryFrom<&str>`, and whatever the core
/// type implements through the core crate's features: `serde` (feature `serde`) and the API
/// schemas (`schemars::JsonSchema`, `utoipa::ToSchema`; features `schemars`, `utoipa`). One
/// rule decides all three: the *core* crate's features, so an adapter's type supports exactly
/// what [`Comb`](crate::Comb) supports in the same build (an adapter's own `serde` feature
/// only turns the core's on). On docs.rs (`--cfg docsrs`) those impls carry the badge of the
/// adapter's feature of the same name, so the adapter has `serde`, `schemars` and `utoipa`
/// features and `#![cfg_attr(docsrs, feature(doc_cfg))]`.
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
        #[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis struct $name($crate::Comb);

        /// As `uuid::Uuid` prints: the hyphenated id, no type name around it.
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&self.0, f)
            }
        }

        /// 32 lowercase hex digits, as [`Comb`]'s.
        impl ::core::fmt::LowerHex for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::LowerHex::fmt(&self.0, f)
            }
        }

        /// 32 uppercase hex digits, as [`Comb`]'s.
        impl ::core::fmt::UpperHex for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::UpperHex::fmt(&self.0, f)
            }
        }

        impl ::core::convert::AsRef<$crate::__private::uuid::Uuid> for $name {
            fn as_ref(&self) -> &$crate::__private::uuid::Uuid {
                &self.0
            }
        }

        /// A map keyed by this type is looked up by a `uuid::Uuid` too (same hash, same order).
        impl ::core::borrow::Borrow<$crate::__private::uuid::Uuid> for $name {
            fn borrow(&self) -> &$crate::__private::uuid::Uuid {
                &self.0
            }
        }

        impl ::core::cmp::PartialOrd<$crate::__private::uuid::Uuid> for $name {
            fn partial_cmp(&self, other: &$crate::__private::uuid::Uuid) -> ::core::option::Option<::core::cmp::Ordering> {
                self.0.partial_cmp(other)
            }
        }

        impl ::core::cmp::PartialOrd<$name> for $crate::__private::uuid::Uuid {
            fn partial_cmp(&self, other: &$name) -> ::core::option::Option<::core::cmp::Ordering> {
                self.partial_cmp(&other.0)
            }
        }

        impl ::core::convert::From<$name> for ::std::string::String {
            fn from(id: $name) -> Self {
                id.to_string()
            }
        }

        /// The core id's methods, and through it every method of `uuid::Uuid`.
        impl ::core::ops::Deref for $name {
            type Target = $crate::Comb;

            fn deref(&self) -> &$crate::Comb {
                &self.0
            }
        }

        impl ::core::convert::AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                self.0.as_bytes()
            }
        }

        impl ::core::convert::From<$crate::__private::uuid::Uuid> for $name {
            fn from(id: $crate::__private::uuid::Uuid) -> Self {
                $name(id.into())
            }
        }

        impl ::core::convert::From<$name> for $crate::__private::uuid::Uuid {
            fn from(id: $name) -> Self {
                id.0.into()
            }
        }

        impl ::core::convert::From<[u8; 16]> for $name {
            fn from(bytes: [u8; 16]) -> Self {
                $name($crate::Comb::from_bytes(bytes))
            }
        }

        impl ::core::convert::TryFrom<&str> for $name {
            type Error = $crate::Error;

            fn try_from(s: &str) -> ::core::result::Result<Self, $crate::Error> {
                s.parse()
            }
        }

        impl ::core::convert::TryFrom<::std::string::String> for $name {
            type Error = $crate::Error;

            fn try_from(s: ::std::string::String) -> ::core::result::Result<Self, $crate::Error> {
                s.parse()
            }
        }

        impl ::core::cmp::PartialEq<$crate::__private::uuid::Uuid> for $name {
            fn eq(&self, other: &$crate::__private::uuid::Uuid) -> bool {
                self.0 == *other
            }
        }

        impl ::core::cmp::PartialEq<$name> for $crate::__private::uuid::Uuid {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl ::core::cmp::PartialEq<$crate::Comb> for $name {
            fn eq(&self, other: &$crate::Comb) -> bool {
                self.0 == *other
            }
        }

        impl ::core::cmp::PartialEq<$name> for $crate::Comb {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        /// The associated functions of `uuid::Uuid` that code written for it calls.
        impl $name {
            /// The nil id (`uuid::Uuid::nil`).
            pub const fn nil() -> Self {
                $name($crate::Comb::NIL)
            }

            /// The max id, all ones (`uuid::Uuid::max`).
            pub const fn max() -> Self {
                $name($crate::Comb::MAX)
            }

            /// A fresh UUIDv7 COMB on the exact clock, as `uuid::Uuid::now_v7` reads it
            /// (`combkey::Comb::now_v7`; `new()` reads the coarse clock).
            pub fn now_v7() -> Self {
                $name($crate::Comb::now_v7())
            }

            /// A random (version 4) UUID (`uuid::Uuid::new_v4`); it does not sort by time:
            /// for a new key use `new()`.
            pub fn new_v4() -> Self {
                $name($crate::Comb::new_v4())
            }

            /// The id with these 16 bytes, in public (RFC 9562) order (`uuid::Uuid::from_bytes`).
            pub const fn from_bytes(bytes: [u8; 16]) -> Self {
                $name($crate::Comb::from_bytes(bytes))
            }

            /// The id of this number (`uuid::Uuid::from_u128`).
            pub const fn from_u128(v: u128) -> Self {
                $name($crate::Comb::from_u128(v))
            }

            /// The id of exactly 16 bytes (`uuid::Uuid::from_slice`).
            pub fn from_slice(bytes: &[u8]) -> ::core::result::Result<Self, $crate::Error> {
                $crate::Comb::from_slice(bytes).map($name)
            }

            /// Parses any of the usual text forms (`uuid::Uuid::parse_str`).
            pub fn parse_str(input: &str) -> ::core::result::Result<Self, $crate::Error> {
                input.parse()
            }

            /// Parses any of the usual text forms (`uuid::Uuid::try_parse`).
            pub fn try_parse(input: &str) -> ::core::result::Result<Self, $crate::Error> {
                input.parse()
            }

            /// The 16 bytes (`uuid::Uuid::into_bytes`).
            pub const fn into_bytes(self) -> [u8; 16] {
                self.0.into_bytes()
            }

            /// The id as a `uuid::Uuid`.
            pub const fn to_uuid(self) -> $crate::__private::uuid::Uuid {
                self.0.to_uuid()
            }
        }

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
        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                $crate::__private::serde::Serialize::serialize(&self.0, serializer)
            }
        }

        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
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
