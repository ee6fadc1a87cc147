//! Every id layout the seed documents describe, by name: detection, time extraction,
//! lossless conversion, generation.

use core::fmt;
use core::str::FromStr;
use std::sync::OnceLock;

use crate::comb::Comb;
use crate::error::{Error, Kind as ErrKind};
use crate::locality::{LocalityFields, LocalityGenerator, LocalityMode};
use crate::rng::{RandomSource, ThreadRandom};
use crate::rtcomb::{RtCombLayout, rtcomb_sql_to_v7, v7_to_rtcomb_sql};
use crate::short_prefix::ShortPrefix;
use crate::time::Timestamp;
use crate::v1::{
    V1Generator, mysql_swap_to_v1, ticks_to_timestamp, v1_newsequentialid_swap, v1_ticks, v1_to_mysql_swap,
    v1_to_v6_like, v6_like_to_v1,
};

/// A kind of id: one layout from the seed documents.
///
/// | name | layout | seed |
/// | --- | --- | --- |
/// | `v7` | UUIDv7, Unix ms in bytes 0..5 (our default public form) | RFC 9562 |
/// | `short-prefix` | `(ms / 60 s) mod 2^16` in bytes 0..1, version 8 | 004 |
/// | `rtcomb-sql` | RT.Comb `Sql`: Unix ms in bytes 10..15 | 001 |
/// | `rtcomb-postgres` | RT.Comb `PostgreSql`: Unix ms in bytes 0..5, base version kept | 001 |
/// | `rtcomb-legacy` | RT.Comb `Legacy`: SQL `datetime` days and 1/300 s in bytes 10..15 | 001 |
/// | `newsequentialid` | SQL Server `NEWSEQUENTIALID()`: v1 with fields 1-3 byte-reversed | 000 |
/// | `v1` | RFC 9562 v1: 100-ns ticks since 1582, low bits first | 000, 003 |
/// | `v6` | RFC 9562 v6: the v1 ticks, high bits first | 000, 003 |
/// | `lambert-v13` | Lambert's CombsBuilder: the v6 order labelled version 13 (`d`) | 000 |
/// | `mysql-swap` | MySQL 8 `UUID_TO_BIN(u, 1)`, Percona's `ordered_uuid` | 003 |
/// | `locality` | Groupon's locality UUID, version `b` | 002 |
/// | `uc-prefix` | uuid-creator prefix COMB: Unix ms in bytes 0..5, version 4 | 004 |
/// | `uc-suffix` | uuid-creator suffix COMB: Unix ms in bytes 10..15, version 4 | 004 |
/// | `uc-short-prefix` | uuid-creator short prefix COMB: minute counter in bytes 0..1, v4 | 004 |
/// | `uc-short-suffix` | uuid-creator short suffix COMB: minute counter in bytes 10..11, v4 | 004 |
///
/// ```
/// use combid::{Comb, Kind};
///
/// // Seed 000: a NEWSEQUENTIALID() value is a v1 id in SQL Server's byte order.
/// let nsid: Comb = "B9586BD7-2062-E111-B36C-CC52AFC9F2ED".parse()?;
/// let v1 = Kind::convert(&nsid, Kind::NewSequentialId, Kind::V1)?;
/// assert_eq!(v1.to_string(), "d76b58b9-6220-11e1-b36c-cc52afc9f2ed");
/// assert_eq!(Kind::V1.timestamp(&v1)?.unwrap().to_string(), "2012-02-28T15:28:19.043Z");
/// # Ok::<(), combid::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// UUIDv7 prefix COMB, the default public form.
    V7,
    /// Short prefix COMB, default settings (2 bytes, one minute), version 8.
    ShortPrefix,
    /// RT.Comb `Sql` provider.
    RtCombSql,
    /// RT.Comb `PostgreSql` provider.
    RtCombPostgres,
    /// RT.Comb `Legacy` provider.
    RtCombLegacy,
    /// SQL Server `NEWSEQUENTIALID()`.
    NewSequentialId,
    /// RFC 9562 version 1.
    V1,
    /// RFC 9562 version 6.
    V6,
    /// Lambert's "version 13" re-ordered v1.
    LambertV13,
    /// MySQL 8 `UUID_TO_BIN(u, 1)`.
    MySqlSwap,
    /// Groupon's locality UUID (version `b`).
    Locality,
    /// uuid-creator prefix COMB.
    UcPrefix,
    /// uuid-creator suffix COMB.
    UcSuffix,
    /// uuid-creator short prefix COMB.
    UcShortPrefix,
    /// uuid-creator short suffix COMB.
    UcShortSuffix,
}

/// Which ids convert into which without loss: within a family only.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Hub: v7.
    UnixMs,
    /// Hub: short-prefix.
    Short,
    /// Hub: v1.
    Gregorian,
    Alone,
}

impl Kind {
    /// Every kind, in the order of the table above.
    pub const ALL: [Kind; 15] = [
        Kind::V7,
        Kind::ShortPrefix,
        Kind::RtCombSql,
        Kind::RtCombPostgres,
        Kind::RtCombLegacy,
        Kind::NewSequentialId,
        Kind::V1,
        Kind::V6,
        Kind::LambertV13,
        Kind::MySqlSwap,
        Kind::Locality,
        Kind::UcPrefix,
        Kind::UcSuffix,
        Kind::UcShortPrefix,
        Kind::UcShortSuffix,
    ];

    /// The kind's name, as the CLI spells it (`rtcomb-sql`, `lambert-v13`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Kind::V7 => "v7",
            Kind::ShortPrefix => "short-prefix",
            Kind::RtCombSql => "rtcomb-sql",
            Kind::RtCombPostgres => "rtcomb-postgres",
            Kind::RtCombLegacy => "rtcomb-legacy",
            Kind::NewSequentialId => "newsequentialid",
            Kind::V1 => "v1",
            Kind::V6 => "v6",
            Kind::LambertV13 => "lambert-v13",
            Kind::MySqlSwap => "mysql-swap",
            Kind::Locality => "locality",
            Kind::UcPrefix => "uc-prefix",
            Kind::UcSuffix => "uc-suffix",
            Kind::UcShortPrefix => "uc-short-prefix",
            Kind::UcShortSuffix => "uc-short-suffix",
        }
    }

    fn family(self) -> Family {
        match self {
            Kind::V7 | Kind::RtCombSql | Kind::RtCombPostgres | Kind::UcPrefix | Kind::UcSuffix => Family::UnixMs,
            Kind::ShortPrefix | Kind::UcShortPrefix | Kind::UcShortSuffix => Family::Short,
            Kind::V1 | Kind::V6 | Kind::LambertV13 | Kind::MySqlSwap | Kind::NewSequentialId => Family::Gregorian,
            Kind::RtCombLegacy | Kind::Locality => Family::Alone,
        }
    }

    /// The kind an id says it is by its version nibble, where that is unambiguous:
    /// 7 `v7`, 8 `short-prefix`, 1 `v1`, 6 `v6`, `b` `locality`, `d` `lambert-v13`.
    /// Version 4 ids (RT.Comb, uuid-creator, random) do not say: `None`.
    pub fn detect(id: &Comb) -> Option<Kind> {
        match id.version() {
            7 => Some(Kind::V7),
            8 => Some(Kind::ShortPrefix),
            1 => Some(Kind::V1),
            6 => Some(Kind::V6),
            0xb => Some(Kind::Locality),
            0xd => Some(Kind::LambertV13),
            _ => None,
        }
    }

    /// Checks the version label an id of this kind carries. RT.Comb ids carry their base
    /// GUID's version, so any version passes for them.
    pub fn check(self, id: &Comb) -> Result<(), Error> {
        let b = id.as_bytes();
        let (expected, found) = match self {
            Kind::V7 => (7, id.version()),
            Kind::ShortPrefix => (8, id.version()),
            Kind::V1 => (1, id.version()),
            Kind::V6 => (6, id.version()),
            Kind::LambertV13 => (0xd, id.version()),
            Kind::Locality => (0xb, id.version()),
            // The version nibble moved with its field: to byte 7 and to byte 0.
            Kind::NewSequentialId => (1, b[7] >> 4),
            Kind::MySqlSwap => (1, b[0] >> 4),
            Kind::UcPrefix | Kind::UcSuffix | Kind::UcShortPrefix | Kind::UcShortSuffix => (4, id.version()),
            Kind::RtCombSql | Kind::RtCombPostgres | Kind::RtCombLegacy => return Ok(()),
        };
        if expected == found { Ok(()) } else { Err(Error(ErrKind::Version { expected, found })) }
    }

    /// The time an id of this kind carries (to the millisecond; v1 ticks are floored).
    /// `Ok(None)` for the short prefix kinds, which carry an interval, not an instant
    /// ([`ShortPrefix::interval_near`]). An error when the id is not of this kind.
    pub fn timestamp(self, id: &Comb) -> Result<Option<Timestamp>, Error> {
        self.check(id)?;
        let b = id.as_bytes();
        let ms = |r: core::ops::Range<usize>| {
            // OK because 48 bits always fit in i64.
            Timestamp::from_unix_ms(b[r].iter().fold(0i64, |acc, &x| (acc << 8) | i64::from(x)))
        };
        Ok(match self {
            Kind::V7 | Kind::UcPrefix | Kind::RtCombPostgres => Some(ms(0..6)),
            Kind::UcSuffix | Kind::RtCombSql => Some(ms(10..16)),
            Kind::RtCombLegacy => Some(RtCombLayout::Legacy.timestamp(id)?),
            Kind::ShortPrefix | Kind::UcShortPrefix | Kind::UcShortSuffix => None,
            Kind::Locality => Some(LocalityFields::parse(id)?.timestamp),
            Kind::V1 | Kind::V6 | Kind::LambertV13 | Kind::MySqlSwap | Kind::NewSequentialId => {
                Some(ticks_to_timestamp(v1_ticks(self.to_hub(id)?.as_bytes())))
            }
        })
    }

    /// The 60-bit v1 timestamp (100-ns intervals since 1582-10-15) of an id of the v1 family.
    pub fn gregorian_ticks(self, id: &Comb) -> Result<u64, Error> {
        if self.family() != Family::Gregorian {
            return Err(Error::config("kind for v1 ticks", self, "v1, v6, lambert-v13, mysql-swap or newsequentialid"));
        }
        self.check(id)?;
        Ok(v1_ticks(self.to_hub(id)?.as_bytes()))
    }

    /// Converts `id` from kind `from` to kind `to`, where that loses nothing: within the v1
    /// family (v1, v6, lambert-v13, mysql-swap, newsequentialid), within the Unix-ms COMBs
    /// (v7, rtcomb-sql, rtcomb-postgres, uc-prefix, uc-suffix; the RT.Comb and uuid-creator
    /// ids must have a version 4, RFC-variant base), and within the short COMBs
    /// (short-prefix, uc-short-prefix, uc-short-suffix). Anything else is an
    /// [`ErrorKind::Conversion`](crate::ErrorKind::Conversion) error.
    ///
    /// ```
    /// use combid::{Comb, Kind};
    ///
    /// // Seed 003: MySQL's UUID_TO_BIN(u, 1).
    /// let v1: Comb = "58e0a7d7-eebc-11d8-9669-0800200c9a66".parse()?;
    /// let swapped = Kind::convert(&v1, Kind::V1, Kind::MySqlSwap)?;
    /// assert_eq!(format!("{swapped:x}"), "11d8eebc58e0a7d796690800200c9a66");
    /// // RFC 9562's v1 and v6 examples.
    /// let v1: Comb = "c232ab00-9414-11ec-b3c8-9f6bdeced846".parse()?;
    /// assert_eq!(Kind::convert(&v1, Kind::V1, Kind::V6)?.to_string(), "1ec9414c-232a-6b00-b3c8-9f6bdeced846");
    /// # Ok::<(), combid::Error>(())
    /// ```
    pub fn convert(id: &Comb, from: Kind, to: Kind) -> Result<Comb, Error> {
        from.check(id)?;
        if from == to {
            return Ok(*id);
        }
        if from.family() != to.family() || from.family() == Family::Alone {
            return Err(Error(ErrKind::NotLossless { from: from.name(), to: to.name() }));
        }
        // The Unix-ms and short COMB conversions rewrite the variant bits (or move the bits
        // around them): only an RFC-variant id comes back unchanged.
        if from.family() != Family::Gregorian && !id.is_rfc_variant() {
            return Err(Error(ErrKind::Variant { found: id.as_bytes()[8] }));
        }
        let hub = from.to_hub(id)?;
        Ok(to.out_of_hub(&hub))
    }

    /// `id` (already checked to be of this kind) in its family's hub kind.
    fn to_hub(self, id: &Comb) -> Result<Comb, Error> {
        let v4_base = || {
            if id.version() == 4 && id.is_rfc_variant() {
                Ok(())
            } else {
                Err(Error(ErrKind::NotLosslessBase { kind: self.name(), version: id.version() }))
            }
        };
        Ok(match self {
            Kind::V7 | Kind::ShortPrefix | Kind::V1 | Kind::RtCombLegacy | Kind::Locality => *id,
            Kind::RtCombSql | Kind::UcSuffix => {
                v4_base()?;
                rtcomb_sql_to_v7(id)
            }
            Kind::RtCombPostgres | Kind::UcPrefix => {
                v4_base()?;
                id.with_version(7)
            }
            Kind::UcShortPrefix => id.with_version(8),
            Kind::UcShortSuffix => swap_short_suffix(id).with_version(8),
            Kind::V6 | Kind::LambertV13 => v6_like_to_v1(id),
            Kind::MySqlSwap => mysql_swap_to_v1(id),
            Kind::NewSequentialId => v1_newsequentialid_swap(id),
        })
    }

    /// The hub id `hub` as this kind.
    fn out_of_hub(self, hub: &Comb) -> Comb {
        match self {
            Kind::V7 | Kind::ShortPrefix | Kind::V1 | Kind::RtCombLegacy | Kind::Locality => *hub,
            Kind::RtCombSql | Kind::UcSuffix => v7_to_rtcomb_sql(hub),
            Kind::RtCombPostgres | Kind::UcPrefix => hub.with_version(4),
            Kind::UcShortPrefix => hub.with_version(4),
            Kind::UcShortSuffix => swap_short_suffix(&hub.with_version(4)),
            Kind::V6 => v1_to_v6_like(hub, 6),
            Kind::LambertV13 => v1_to_v6_like(hub, 0xd),
            Kind::MySqlSwap => v1_to_mysql_swap(hub),
            Kind::NewSequentialId => v1_newsequentialid_swap(hub),
        }
    }

    /// A new id of this kind, for now, from process-wide generators.
    pub fn generate(self) -> Comb {
        static V1: V1Generator = V1Generator::new();
        static LOCALITY: OnceLock<LocalityGenerator> = OnceLock::new();
        let now = Timestamp::now();
        let random_v4 = || {
            let mut b = [0u8; 16];
            ThreadRandom.fill_bytes(&mut b);
            Comb::from_bytes(b).with_version(4)
        };
        let rtcomb = |layout: RtCombLayout| {
            // OK because "now" is within every layout's range until 2079 (legacy) / 10889.
            layout.create(now, random_v4()).unwrap_or_else(|_| random_v4())
        };
        match self {
            Kind::V7 => Comb::new(),
            Kind::ShortPrefix => ShortPrefix::default().make(now, random_v4().into_bytes()),
            Kind::UcShortPrefix | Kind::UcShortSuffix => {
                self.out_of_hub(&ShortPrefix::default().make(now, random_v4().into_bytes()))
            }
            Kind::RtCombSql | Kind::UcSuffix => rtcomb(RtCombLayout::Sql),
            Kind::RtCombPostgres | Kind::UcPrefix => rtcomb(RtCombLayout::PostgreSql),
            Kind::RtCombLegacy => rtcomb(RtCombLayout::Legacy),
            Kind::V1 | Kind::V6 | Kind::LambertV13 | Kind::MySqlSwap | Kind::NewSequentialId => {
                self.out_of_hub(&V1.generate())
            }
            Kind::Locality => LOCALITY.get_or_init(|| LocalityGenerator::new(LocalityMode::Variable)).generate(),
        }
    }
}

/// Swaps bytes 0..1 and 10..11: uuid-creator's short suffix <-> short prefix position.
fn swap_short_suffix(id: &Comb) -> Comb {
    let mut b = id.into_bytes();
    b.swap(0, 10);
    b.swap(1, 11);
    Comb::from_bytes(b)
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Kind {
    type Err = Error;

    /// Parses a kind name (`v7`, `rtcomb-sql`, ...; see [`Kind::name`]).
    fn from_str(s: &str) -> Result<Self, Error> {
        Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            Error::config(
                "kind",
                format!("{s:?}"),
                "one of v7, short-prefix, rtcomb-sql, rtcomb-postgres, rtcomb-legacy, newsequentialid, v1, v6, \
                 lambert-v13, mysql-swap, locality, uc-prefix, uc-suffix, uc-short-prefix, uc-short-suffix",
            )
        })
    }
}
