//! Time-ordered UUIDs ("COMBs") as primary keys, with the right stored form per database.
//!
//! A [`Comb`] is the **public** id: what the application, its API, its logs and its clients
//! see. By default it is a valid RFC 9562 UUIDv7 (Unix milliseconds first, then a counter and
//! CSPRNG bits), strictly increasing per generator, so new rows land at the right edge of a
//! B-tree index the way an auto-increment key does, while any client can make ids without a
//! round trip.
//!
//! Each database compares 16-byte ids its own way, so each has a **stored** form
//! ([`Backend`]): PostgreSQL `uuid`, MySQL/MariaDB `BINARY(16)` and SQLite `BLOB` hold the
//! public bytes; SQL Server's `uniqueidentifier` holds them permuted so that its own
//! comparison keeps creation order ([`Comb::to_sqlserver_bytes`]). The adapter crates
//! (`combkey-sqlx`, `combkey-diesel`, `combkey-sea-orm`, `combkey-tiberius`,
//! `combkey-postgres`, `combkey-rusqlite`, `combkey-mysql`) convert both ways. The
//! [design notes](https://github.com/combkey/combkey/blob/main/docs/design.md) explain every layout and stored form.
//!
//! ```
//! use combkey::Comb;
//!
//! let a = Comb::new();
//! let b = Comb::new();
//! assert!(a < b && a.to_string() < b.to_string());
//! assert_eq!(a.version(), 7);
//! let same: Comb = a.to_string().parse()?;
//! assert_eq!(same, a);
//! # Ok::<(), combkey::Error>(())
//! ```
//!
//! # What is here
//!
//! - The id: [`Comb`], its text forms, [`Timestamp`] (the time it carries), and
//!   [`KeyRange`] ([`Comb::range`]): a time range as key bounds, for "rows created between
//!   a and b" through the primary key.
//! - Generators: [`V7Generator`] (the default, [`Comb::new`]; UUIDv7, strictly increasing)
//!   and [`ShortPrefixGenerator`] (uuid-creator's short prefix COMB: a wrapping minute
//!   counter in the first two bytes, the rest random; hides the creation time once the
//!   prefix wraps). Both take a [`Clock`] and a [`RandomSource`], so tests and batch jobs
//!   choose "now".
//! - Client-made ids: [`Validator`] checks version, variant, and the time an id carries
//!   within a window around a clock you choose.
//! - Databases: [`Backend`] (column type, stored form, literals, quoting, DDL and
//!   database-side functions); [`sql`]: migration SQL beyond that (time partitions and
//!   shards through the key, conversions of existing key columns, `GO` batches).
//! - `layouts` (feature `layouts`): every other system's layout by name (RT.Comb's
//!   three providers, SQL Server's `NEWSEQUENTIALID`, v1 and its re-ordered forms, Groupon's
//!   locality UUID, uuid-creator's COMBs), with time extraction, lossless conversion and
//!   generation.
//!
//! # Features
//!
//! None by default: a build of `combkey` alone compiles about what `uuid` with its `v4` and
//! `v7` features does.
//!
//! - `layouts`: the `combkey::layouts` module (adds MD5, for Groupon's sequential counter seed).
//! - `serde`: `Serialize`/`Deserialize` for [`Comb`] (the string in human-readable formats,
//!   16 bytes otherwise), and for every adapter's column type.
//! - `schemars`, `utoipa`: API schemas for [`Comb`] and every adapter's column type (a
//!   string, format `uuid`).
//!
//! # Versions
//!
//! Minimum Rust version: 1.87. Public dependencies (their types are in this crate's API):
//! `uuid` 1 (`Comb` converts to and from `uuid::Uuid` and derefs to it), and with their
//! features `serde` 1, `schemars` 1 and `utoipa` 6 (trait impls). A new major of one of them is
//! supported in a new release of this crate that bumps its own version (0.x: the minor), since
//! their types are part of this crate's API.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Rustdoc lists a type's inherent methods in the order their modules are
// declared: `Comb`'s constructors (comb, parse, range) come before the
// stored forms (backend), so a newcomer meets them first.
mod comb;
mod parse;
mod range;

// What only the adapter crates need (the column newtype macro, the shared decoding of column
// values): public for them, hidden from the docs and exempt from semantic versioning (each
// adapter depends on exactly its own release of this crate).
#[doc(hidden)]
pub mod adapter;
mod backend;
mod bits;
mod clock;
mod error;
mod macros;
mod rng;
mod schema;
mod short_prefix;
pub mod sql;
mod time;
mod v7;
mod validate;

#[cfg(feature = "face")]
mod face;
#[cfg(feature = "layouts")]
pub mod layouts;
#[cfg(feature = "serde")]
mod serde;

pub use backend::Backend;
pub use clock::{Clock, CoarseClock, FixedClock, SystemClock};
pub use comb::Comb;
pub use error::{Error, ErrorKind};
#[cfg(feature = "face")]
#[cfg_attr(docsrs, doc(cfg(feature = "face")))]
pub use face::FaceKey;
#[cfg(all(feature = "face", feature = "serde"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "face", feature = "serde"))))]
pub use face::FaceScope;
pub use range::KeyRange;
pub use rng::{RandomSource, SeededRandom, ThreadRandom};
pub use short_prefix::{ShortPrefix, ShortPrefixGenerator};
pub use time::Timestamp;
pub use v7::V7Generator;
pub use validate::{Expected, Validator};

/// Re-exports for the macros adapter crates expand (not public API).
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "schemars")]
    pub use schemars;
    #[cfg(feature = "serde")]
    pub use serde;
    #[cfg(feature = "utoipa")]
    pub use utoipa;
    pub use uuid;
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
