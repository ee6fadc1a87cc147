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
//! (`combid-sqlx`, `combid-diesel`, `combid-sea-orm`, `combid-tiberius`) convert both ways.
//!
//! ```
//! use combid::Comb;
//!
//! let a = Comb::new();
//! let b = Comb::new();
//! assert!(a < b && a.to_string() < b.to_string());
//! assert_eq!(a.version(), 7);
//! let same: Comb = a.to_string().parse()?;
//! assert_eq!(same, a);
//! # Ok::<(), combid::Error>(())
//! ```
//!
//! # Kinds of id
//!
//! - [`V7Generator`] (default, [`Comb::new`]): prefix COMB, UUIDv7, strictly increasing.
//! - [`ShortPrefixGenerator`]: short prefix COMB (seed 004): a wrapping minute counter in
//!   the first two bytes, the rest random; hides the creation time once the prefix wraps.
//!
//! - [`Kind`]: every layout of the seed documents by name (RT.Comb's three providers, SQL
//!   Server's `NEWSEQUENTIALID`, v1 and its re-ordered forms v6, Lambert's version 13 and
//!   MySQL's swap, Groupon's locality UUID, uuid-creator's four COMBs): detection, time
//!   extraction, lossless conversion and generation. [`RtCombLayout`], [`V1Generator`],
//!   [`LocalityGenerator`] and [`NoRepeatClock`] give each system's own knobs.
//!
//! # Client-made ids
//!
//! [`Validator`] checks an id a client made: version, variant, and its time within a window
//! around a clock you choose.
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for [`Comb`] (the string in human-readable formats,
//!   16 bytes otherwise).

#![deny(missing_docs)]

mod clock;
mod comb;
mod error;
mod kind;
mod locality;
mod macros;
mod parse;
mod rng;
mod rtcomb;
mod short_prefix;
pub mod sql;
mod stored;
mod time;
mod v1;
mod v7;
mod validate;

#[cfg(feature = "serde")]
mod serde;

pub use clock::{Clock, CoarseClock, FixedClock, SystemClock};
pub use comb::Comb;
pub use error::{Error, ErrorKind};
pub use kind::Kind;
pub use locality::{LOCALITY_INCREMENT, LocalityFields, LocalityGenerator, LocalityMode, locality_sequential_seed};
pub use rng::{RandomSource, SeededRandom, ThreadRandom};
pub use rtcomb::{NoRepeatClock, RtCombLayout};
pub use short_prefix::{ShortPrefix, ShortPrefixGenerator};
pub use stored::{Backend, ColumnKind, sqlserver_cmp};
pub use time::Timestamp;
pub use v1::{GREGORIAN_TO_UNIX_100NS, V1Generator};
pub use v7::V7Generator;
pub use validate::{Expected, Validator};
