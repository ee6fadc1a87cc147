//! Other systems' id layouts, by name: detection, time extraction, lossless conversion and
//! generation, so ids made by .NET, Java and SQL Server services read as combkey ids.
//!
//! [`Layout`] is the registry. Each system's own knobs are beside it: [`RtCombLayout`] and
//! [`NoRepeatClock`] (RT.Comb), [`V1Generator`] (the v1 family), [`LocalityGenerator`] and
//! [`LocalityFields`] (Groupon's locality UUID). The sources, each the public description of
//! its system:
//!
//! - RFC 9562, "Universally Unique IDentifiers (UUIDs)": v1, v6, v7.
//! - RT.Comb (Richard Tallent, <https://github.com/richardtallent/RT.Comb>): the `Sql`,
//!   `PostgreSql` and `Legacy` providers and `UtcNoRepeatTimestampProvider`.
//! - Michael Lambert, "Custom UUID as primary key" (2012): SQL Server's `NEWSEQUENTIALID()`
//!   byte order and the CombsBuilder "version 13" re-ordered v1.
//! - Karthik Appigatla, "Store UUID in an optimized way" (Percona blog, 2014), and MySQL 8's
//!   `UUID_TO_BIN(u, 1)`: the swapped v1.
//! - Groupon's locality-uuid (<https://github.com/groupon/locality-uuid.java>): version `b`.
//! - uuid-creator (<https://github.com/f4b6a3/uuid-creator>), as the klokwrk article uses it:
//!   the prefix, suffix, short prefix and short suffix COMBs.
//! - The .NET generators that fill SQL Server tables ([`DotNetFields`]): Entity Framework
//!   Core's `SequentialGuidValueGenerator`, MassTransit's NewId (`NextGuid`,
//!   `NextSequentialGuid`), UUIDNext's `Uuid.NewDatabaseFriendly(Database.SqlServer)` and
//!   Medo.Uuid7's `NewMsSqlUniqueIdentifier()`.
//!
//! Every layout that carries a time has a v7 form with the same millisecond
//! ([`KeyMigration`] to `v7`): what `combkey doctor` converts a table's keys to, so they sort
//! with the ids the application makes next.
//!
//! This module is behind the `layouts` feature (off by default): an application that only
//! needs the public id and the adapters leaves it off and compiles less.

use core::fmt;
use core::str::FromStr;
use std::sync::OnceLock;

use crate::bits;
use crate::comb::Comb;
use crate::error::{Detail, Error};
use crate::rng::{RandomSource, ThreadRandom};
use crate::short_prefix::ShortPrefix;
use crate::time::Timestamp;

mod dotnet;
mod locality;
mod rtcomb;
mod sorted;
mod uuid_creator;
mod v1;

pub use dotnet::{DOTNET_TICKS_AT_UNIX_EPOCH, DotNetFields};

pub use locality::{
    LOCALITY_INCREMENT, LocalityFields, LocalityGenerator, LocalityMode, locality_sequential_seed, variable_bytes,
};
pub use rtcomb::{NoRepeatClock, RtCombLayout};
pub use v1::{GREGORIAN_TO_UNIX_100NS, V1Generator};

/// A layout of a 16-byte id: the default public form, and every other system's.
///
/// Positions are display positions (the order of the canonical string), `t` time, `v` the
/// variant, `x` random or the base GUID's bits:
///
/// | name | layout | what |
/// | --- | --- | --- |
/// | `v7` | `tttttttt-tttt-7ccc-vcxx-xxxxxxxxxxxx` | UUIDv7, Unix ms in bytes 0..5, counter `c` (the default public form; RFC 9562) |
/// | `short-prefix` | `ppppxxxx-xxxx-8xxx-vxxx-xxxxxxxxxxxx` | `(ms / 60 s) mod 2^16` in bytes 0..1, version 8 (uuid-creator, klokwrk) |
/// | `rtcomb-sql` | `xxxxxxxx-xxxx-4xxx-vxxx-tttttttttttt` | RT.Comb `Sql`: Unix ms in bytes 10..15 |
/// | `rtcomb-postgres` | `tttttttt-tttt-4xxx-vxxx-xxxxxxxxxxxx` | RT.Comb `PostgreSql`: Unix ms in bytes 0..5, base version kept |
/// | `rtcomb-legacy` | `xxxxxxxx-xxxx-4xxx-vxxx-ddddssssssss` | RT.Comb `Legacy`: SQL `datetime` days `d` and 1/300 s `s` in bytes 10..15 |
/// | `newsequentialid` | `LLLLLLLL-MMMM-HHH1-vsss-nnnnnnnnnnnn` | SQL Server `NEWSEQUENTIALID()`: v1 with fields 1-3 byte-reversed (Lambert) |
/// | `v1` | `llllllll-mmmm-1hhh-vsss-nnnnnnnnnnnn` | RFC 9562 v1: 100-ns ticks since 1582, low bits first |
/// | `v6` | `hhhmmmml-llll-6lll-vsss-nnnnnnnnnnnn` | RFC 9562 v6: the v1 ticks, high bits first |
/// | `lambert-v13` | `hhhmmmml-llll-dlll-vsss-nnnnnnnnnnnn` | Lambert's CombsBuilder: the v6 order labelled version 13 (`d`) |
/// | `mysql-swap` | `1hhhmmmm-llll-llll-vsss-nnnnnnnnnnnn` | MySQL 8 `UUID_TO_BIN(u, 1)`, Percona's `ordered_uuid` |
/// | `locality` | `wwwwwwww-pppp-bmmm-mmmm-tttttttttttt` | Groupon's locality UUID, version `b`: counter, pid, MAC, ms |
/// | `uc-prefix` | `tttttttt-tttt-4xxx-vxxx-xxxxxxxxxxxx` | uuid-creator prefix COMB: Unix ms in bytes 0..5, version 4 |
/// | `uc-suffix` | `xxxxxxxx-xxxx-4xxx-vxxx-tttttttttttt` | uuid-creator suffix COMB: Unix ms in bytes 10..15, version 4 |
/// | `uc-short-prefix` | `ppppxxxx-xxxx-4xxx-vxxx-xxxxxxxxxxxx` | uuid-creator short prefix COMB: minute counter in bytes 0..1, v4 |
/// | `uc-short-suffix` | `xxxxxxxx-xxxx-4xxx-vxxx-ppppxxxxxxxx` | uuid-creator short suffix COMB: minute counter in bytes 10..11, v4 |
/// | `efcore` | `rrrrrrrr-rrrr-4rrr-CCCC-CCCCCCCCCCCC` | EF Core `SequentialGuidValueGenerator`: a counter of .NET ticks, bits 15..0 in 8..9, 63..16 in 10..15 |
/// | `newid` | `WWWWsSss-WWWW-WWWW-TTTT-TTTTTTTTTTTT` | NewId `NextGuid()`: .NET ticks as efcore's counter, worker id `W`, sequence `s` |
/// | `newid-sequential` | `TTTTTTTT-TTTT-TTTT-WWWW-WWWWWWWWsSss` | NewId `NextSequentialGuid()`: .NET ticks big-endian first |
/// | `uuidnext-sqlserver` | `rrrrrrrr-rrrr-8rrr-vSSS-MMMMMMMMMMMM` | UUIDNext for SQL Server: Unix ms `M` in 10..15, 14-bit sequence `S`, version 8 |
/// | `medo-sqlserver` | `RRRRRRRR-RRRR-KK7K-vKKK-MMMMMMMMMMMM` | Medo.Uuid7 `NewMsSqlUniqueIdentifier()`: Unix ms `M` in 10..15, a 26-bit counter `K` where SQL Server compares next |
///
/// (`l`, `m`, `h`: v1's `time_low`, `time_mid`, `time_hi`; capitals byte-reversed; `s` the
/// clock sequence, `n` the node.)
///
/// ```
/// use combkey::Comb;
/// use combkey::layouts::Layout;
///
/// // Lambert: a NEWSEQUENTIALID() value is a v1 id in SQL Server's byte order.
/// let nsid: Comb = "B9586BD7-2062-E111-B36C-CC52AFC9F2ED".parse()?;
/// let v1 = Layout::convert(&nsid, Layout::NewSequentialId, Layout::V1)?;
/// assert_eq!(v1.to_string(), "d76b58b9-6220-11e1-b36c-cc52afc9f2ed");
/// assert_eq!(Layout::V1.timestamp(&v1)?.unwrap().to_string(), "2012-02-28T15:28:19.043Z");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Layout {
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
    /// Entity Framework Core's `SequentialGuidValueGenerator`.
    EfCore,
    /// MassTransit NewId's `NextGuid()` / `ToGuid()`.
    NewId,
    /// MassTransit NewId's `NextSequentialGuid()`.
    NewIdSequential,
    /// UUIDNext's `Uuid.NewDatabaseFriendly(Database.SqlServer)`.
    UuidNextSqlServer,
    /// Medo.Uuid7's `NewMsSqlUniqueIdentifier()`.
    MedoSqlServer,
}

/// Which ids convert into which without loss: within a family only, through its hub.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// 48-bit Unix milliseconds. Hub: v7.
    UnixMs,
    /// A wrapping interval counter. Hub: short-prefix.
    Short,
    /// v1's 60-bit Gregorian ticks. Hub: v1.
    Gregorian,
    /// Converts to nothing else.
    Alone,
}

impl Family {
    /// The families that convert, in the order error messages list them.
    const CONVERTING: [Family; 3] = [Family::UnixMs, Family::Short, Family::Gregorian];
}

impl Layout {
    /// Every layout, in the order of the table above.
    pub const ALL: [Layout; 20] = [
        Layout::V7,
        Layout::ShortPrefix,
        Layout::RtCombSql,
        Layout::RtCombPostgres,
        Layout::RtCombLegacy,
        Layout::NewSequentialId,
        Layout::V1,
        Layout::V6,
        Layout::LambertV13,
        Layout::MySqlSwap,
        Layout::Locality,
        Layout::UcPrefix,
        Layout::UcSuffix,
        Layout::UcShortPrefix,
        Layout::UcShortSuffix,
        Layout::EfCore,
        Layout::NewId,
        Layout::NewIdSequential,
        Layout::UuidNextSqlServer,
        Layout::MedoSqlServer,
    ];

    /// The layout's name, as the CLI spells it (`rtcomb-sql`, `lambert-v13`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Layout::V7 => "v7",
            Layout::ShortPrefix => "short-prefix",
            Layout::RtCombSql => "rtcomb-sql",
            Layout::RtCombPostgres => "rtcomb-postgres",
            Layout::RtCombLegacy => "rtcomb-legacy",
            Layout::NewSequentialId => "newsequentialid",
            Layout::V1 => "v1",
            Layout::V6 => "v6",
            Layout::LambertV13 => "lambert-v13",
            Layout::MySqlSwap => "mysql-swap",
            Layout::Locality => "locality",
            Layout::UcPrefix => "uc-prefix",
            Layout::UcSuffix => "uc-suffix",
            Layout::UcShortPrefix => "uc-short-prefix",
            Layout::UcShortSuffix => "uc-short-suffix",
            Layout::EfCore => "efcore",
            Layout::NewId => "newid",
            Layout::NewIdSequential => "newid-sequential",
            Layout::UuidNextSqlServer => "uuidnext-sqlserver",
            Layout::MedoSqlServer => "medo-sqlserver",
        }
    }

    const fn family(self) -> Family {
        match self {
            Layout::V7 | Layout::RtCombSql | Layout::RtCombPostgres | Layout::UcPrefix | Layout::UcSuffix => {
                Family::UnixMs
            }
            Layout::ShortPrefix | Layout::UcShortPrefix | Layout::UcShortSuffix => Family::Short,
            Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId => {
                Family::Gregorian
            }
            Layout::RtCombLegacy
            | Layout::Locality
            | Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer => Family::Alone,
        }
    }

    /// The names of `layouts`, joined with `sep`: error messages list names from here, so
    /// they never drift from the registry.
    fn names(layouts: impl Iterator<Item = Layout>, sep: &str) -> String {
        layouts.map(Layout::name).collect::<Vec<_>>().join(sep)
    }

    fn family_names(family: Family, sep: &str) -> String {
        Self::names(Self::ALL.into_iter().filter(|l| l.family() == family), sep)
    }

    /// The layout an id says it is by its version nibble, where that is unambiguous:
    /// 7 `v7`, 8 `short-prefix`, 1 `v1`, 6 `v6`, `b` `locality`, `d` `lambert-v13`.
    /// Version 4 ids (RT.Comb, uuid-creator, random) do not say: `None`.
    pub fn detect(id: &Comb) -> Option<Layout> {
        match id.version() {
            7 => Some(Layout::V7),
            8 => Some(Layout::ShortPrefix),
            1 => Some(Layout::V1),
            6 => Some(Layout::V6),
            0xb => Some(Layout::Locality),
            0xd => Some(Layout::LambertV13),
            _ => None,
        }
    }

    /// Checks the version label an id of this layout carries. RT.Comb ids carry their base
    /// GUID's version, so any version passes for them.
    pub fn check(self, id: &Comb) -> Result<(), Error> {
        let b = id.as_bytes();
        let (expected, found) = match self {
            Layout::V7 => (7, id.version()),
            Layout::ShortPrefix => (8, id.version()),
            Layout::V1 => (1, id.version()),
            Layout::V6 => (6, id.version()),
            Layout::LambertV13 => (0xd, id.version()),
            Layout::Locality => (0xb, id.version()),
            // The version nibble moved with its field: to byte 7 and to byte 0.
            Layout::NewSequentialId => (1, b[7] >> 4),
            Layout::MySqlSwap => (1, b[0] >> 4),
            Layout::UcPrefix | Layout::UcSuffix | Layout::UcShortPrefix | Layout::UcShortSuffix => (4, id.version()),
            Layout::RtCombSql | Layout::RtCombPostgres | Layout::RtCombLegacy => return Ok(()),
            Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer => return dotnet::check(self, id),
        };
        if expected == found { Ok(()) } else { Err(Error(Detail::Version { expected, found })) }
    }

    /// The time an id of this layout carries (to the millisecond; v1 ticks are floored).
    /// `Ok(None)` for the short prefix layouts, which carry an interval, not an instant
    /// ([`ShortPrefix::interval_near`]). An error when the id is not of this layout.
    pub fn timestamp(self, id: &Comb) -> Result<Option<Timestamp>, Error> {
        self.check(id)?;
        let b = id.as_bytes();
        Ok(match self {
            Layout::V7 | Layout::UcPrefix | Layout::RtCombPostgres => Some(bits::read_unix_ms48(b, 0)),
            Layout::UcSuffix | Layout::RtCombSql => Some(bits::read_unix_ms48(b, 10)),
            Layout::RtCombLegacy => Some(RtCombLayout::Legacy.timestamp(id)?),
            Layout::ShortPrefix | Layout::UcShortPrefix | Layout::UcShortSuffix => None,
            Layout::Locality => Some(LocalityFields::parse(id)?.timestamp),
            Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId => {
                Some(Timestamp::from_unix_ms(bits::ticks_to_unix_ms(bits::v1_ticks(self.to_hub(id)?.as_bytes()))))
            }
            Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer => Some(DotNetFields::parse(id, self)?.timestamp()),
        })
    }

    /// The 60-bit v1 timestamp (100-ns intervals since 1582-10-15) of an id of the v1 family.
    pub fn gregorian_ticks(self, id: &Comb) -> Result<u64, Error> {
        if self.family() != Family::Gregorian {
            let expected = Self::family_names(Family::Gregorian, ", ");
            return Err(Error::config("layout for v1 ticks", self, format!("one of {expected}")));
        }
        self.check(id)?;
        Ok(bits::v1_ticks(self.to_hub(id)?.as_bytes()))
    }

    /// Converts `id` from layout `from` to layout `to`, where that loses nothing: within the
    /// Unix-ms COMBs (v7, rtcomb-sql, rtcomb-postgres, uc-prefix, uc-suffix; the RT.Comb and
    /// uuid-creator ids must have a version 4, RFC-variant base), within the short COMBs
    /// (short-prefix, uc-short-prefix, uc-short-suffix), and within the v1 family
    /// (newsequentialid, v1, v6, lambert-v13, mysql-swap). Anything else is an
    /// [`ErrorKind::Conversion`](crate::ErrorKind::Conversion) error.
    ///
    /// ```
    /// use combkey::Comb;
    /// use combkey::layouts::Layout;
    ///
    /// // Percona's post: MySQL's UUID_TO_BIN(u, 1).
    /// let v1: Comb = "58e0a7d7-eebc-11d8-9669-0800200c9a66".parse()?;
    /// let swapped = Layout::convert(&v1, Layout::V1, Layout::MySqlSwap)?;
    /// assert_eq!(format!("{swapped:x}"), "11d8eebc58e0a7d796690800200c9a66");
    /// // RFC 9562's v1 and v6 examples.
    /// let v1: Comb = "c232ab00-9414-11ec-b3c8-9f6bdeced846".parse()?;
    /// assert_eq!(Layout::convert(&v1, Layout::V1, Layout::V6)?.to_string(), "1ec9414c-232a-6b00-b3c8-9f6bdeced846");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn convert(id: &Comb, from: Layout, to: Layout) -> Result<Comb, Error> {
        from.check(id)?;
        if from == to {
            return Ok(*id);
        }
        if from.family() != to.family() || from.family() == Family::Alone {
            let families: Vec<String> =
                Family::CONVERTING.iter().map(|&f| format!("within {}", Self::family_names(f, "/"))).collect();
            let within = match families.split_last() {
                Some((last, rest)) => format!("{}, and {last}", rest.join(", ")),
                None => String::new(),
            };
            return Err(Error(Detail::NotLossless { from: from.name(), to: to.name(), within }));
        }
        // The Unix-ms and short COMB conversions rewrite the variant bits (or move the bits
        // around them): only an RFC-variant id comes back unchanged. And a version label means
        // something only under the RFC variant: an id of another variant with a 1 where v1's
        // version goes is no v1 id (uuid-creator refuses to convert it too).
        if !id.is_rfc_variant() {
            return Err(Error(Detail::Variant { found: id.as_bytes()[8] }));
        }
        let hub = from.to_hub(id)?;
        Ok(to.out_of_hub(&hub))
    }

    /// `id` (already checked to be of this layout) as its family's hub layout.
    fn to_hub(self, id: &Comb) -> Result<Comb, Error> {
        let v4_base = || {
            if id.version() == 4 && id.is_rfc_variant() {
                Ok(())
            } else {
                Err(Error(Detail::NotLosslessBase { layout: self.name(), version: id.version() }))
            }
        };
        Ok(match self {
            Layout::V7
            | Layout::ShortPrefix
            | Layout::V1
            | Layout::RtCombLegacy
            | Layout::Locality
            | Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer => *id,
            Layout::RtCombSql | Layout::UcSuffix => {
                v4_base()?;
                rtcomb::rtcomb_sql_to_v7(id)
            }
            Layout::RtCombPostgres | Layout::UcPrefix => {
                v4_base()?;
                id.with_version(7)
            }
            Layout::UcShortPrefix => id.with_version(8),
            Layout::UcShortSuffix => uuid_creator::swap_short_suffix(id).with_version(8),
            Layout::V6 | Layout::LambertV13 => v1::v6_like_to_v1(id),
            Layout::MySqlSwap => v1::mysql_swap_to_v1(id),
            Layout::NewSequentialId => v1::newsequentialid_swap(id),
        })
    }

    /// The hub id `hub` as this layout.
    fn out_of_hub(self, hub: &Comb) -> Comb {
        match self {
            Layout::V7
            | Layout::ShortPrefix
            | Layout::V1
            | Layout::RtCombLegacy
            | Layout::Locality
            | Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer => *hub,
            Layout::RtCombSql | Layout::UcSuffix => rtcomb::v7_to_rtcomb_sql(hub),
            Layout::RtCombPostgres | Layout::UcPrefix => hub.with_version(4),
            Layout::UcShortPrefix => hub.with_version(4),
            Layout::UcShortSuffix => uuid_creator::swap_short_suffix(&hub.with_version(4)),
            Layout::V6 => v1::v1_to_v6_like(hub, 6),
            Layout::LambertV13 => v1::v1_to_v6_like(hub, 0xd),
            Layout::MySqlSwap => v1::v1_to_mysql_swap(hub),
            Layout::NewSequentialId => v1::newsequentialid_swap(hub),
        }
    }

    /// A new id of this layout, for now, from process-wide generators.
    ///
    /// Fails only where the layout cannot hold the current time: RT.Comb's `Legacy` layout
    /// ends on 2079-06-06.
    ///
    /// ```
    /// use combkey::layouts::Layout;
    ///
    /// for layout in Layout::ALL {
    ///     let id = layout.generate()?;
    ///     layout.check(&id)?;
    /// }
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn generate(self) -> Result<Comb, Error> {
        static V1: V1Generator = V1Generator::new();
        static LOCALITY: OnceLock<LocalityGenerator> = OnceLock::new();
        let now = Timestamp::now();
        let random_v4 = || {
            let mut b = [0u8; 16];
            ThreadRandom.fill_bytes(&mut b);
            Comb::from_bytes(b).with_version(4)
        };
        Ok(match self {
            Layout::V7 => Comb::new(),
            Layout::ShortPrefix => ShortPrefix::default().make(now, random_v4().into_bytes()),
            Layout::UcShortPrefix | Layout::UcShortSuffix => {
                self.out_of_hub(&ShortPrefix::default().make(now, random_v4().into_bytes()))
            }
            Layout::RtCombSql | Layout::UcSuffix => RtCombLayout::Sql.create(now, random_v4())?,
            Layout::RtCombPostgres | Layout::UcPrefix => RtCombLayout::PostgreSql.create(now, random_v4())?,
            Layout::RtCombLegacy => RtCombLayout::Legacy.create(now, random_v4())?,
            Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId => {
                self.out_of_hub(&V1.generate())
            }
            Layout::Locality => LOCALITY.get_or_init(|| LocalityGenerator::new(LocalityMode::Variable)).generate(),
            Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer => dotnet::generate(self, now)?,
        })
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Layout {
    type Err = Error;

    /// Parses a layout name (`v7`, `rtcomb-sql`, ...; see [`Layout::name`]).
    fn from_str(s: &str) -> Result<Self, Error> {
        Layout::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let names = Self::names(Layout::ALL.into_iter(), ", ");
            Error::config("layout", format!("{s:?}"), format!("one of {names}"))
        })
    }
}

/// How a table's keys were converted (what `combkey doctor` reports as `rtcomb-sql -> v7`): the
/// key a row has now for an id a client kept from before.
///
/// Converted keys change the ids users have in URLs, caches and other systems. An old id
/// maps to exactly one new key, computed from the old id alone: look the id up as it is first
/// (a key the conversion left alone, or a new one), and where that finds nothing, look up
/// [`new_key`](Self::new_key).
///
/// Every layout that carries a time converts to `v7` (see [`Layout`]); within a family
/// (`newsequentialid -> v6`, `uc-short-prefix -> short-prefix`) the conversions of
/// [`Layout::convert`] apply. Where the v7 form cannot hold every bit of the old key (the v1
/// family, NewId's, Groupon's: [`keeps_every_bit`](Self::keeps_every_bit) is false),
/// [`old_key`](Self::old_key) has no answer and `combkey doctor` keeps a table of old and new
/// keys instead.
///
/// ```
/// use combkey::Comb;
/// use combkey::layouts::KeyMigration;
///
/// let migration: KeyMigration = "rtcomb-sql -> v7".parse()?;
/// let old: Comb = "d01c25cc-63a7-47cc-b5ba-018e5f3bff48".parse()?; // kept by a client
/// let new = migration.new_key(&old).expect("an RT.Comb Sql id");
/// assert_eq!(new.to_string(), "018e5f3b-ff48-7d6e-acc7-a763cc251cd0");
/// assert_eq!(migration.old_key(&new), Some(old));
/// // A v7 id is no RT.Comb id: it was never converted.
/// assert_eq!(migration.new_key(&new), None);
///
/// // PostgreSQL's uuid_generate_v1(): the same millisecond, the 100-ns ticks after it.
/// let v1: KeyMigration = "v1 -> v7".parse()?;
/// let old: Comb = "c232ab00-9414-11ec-b3c8-9f6bdeced846".parse()?; // RFC 9562's v1 example
/// let new = v1.new_key(&old).expect("a v1 id");
/// assert_eq!(new.to_string(), "017f22e2-79b0-7000-8cf2-276bdeced846");
/// assert_eq!(new.timestamp().unwrap().to_string(), "2022-02-22T19:22:22.000Z");
/// assert!(!v1.keeps_every_bit());
/// assert_eq!(v1.old_key(&new), None);
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyMigration {
    from: Layout,
    to: Layout,
}

impl KeyMigration {
    /// Keys of layout `from` converted to `to`: to `v7` from every layout that carries a time,
    /// or within a family; an error otherwise.
    pub fn new(from: Layout, to: Layout) -> Result<Self, Error> {
        if to == Layout::V7 {
            return match sorted::keeps_every_bit(from) {
                Some(_) => Ok(KeyMigration { from, to }),
                None => Err(Error(Detail::NoV7Form { layout: from.name() })),
            };
        }
        // A conversion exists for some id exactly where the two are in one family.
        let probe = from.generate()?;
        Layout::convert(&probe, from, to)?;
        Ok(KeyMigration { from, to })
    }

    /// The layout the keys had.
    pub const fn from(&self) -> Layout {
        self.from
    }

    /// The layout they have now.
    pub const fn to(&self) -> Layout {
        self.to
    }

    /// Whether the new key holds every bit of the old one, so that
    /// [`old_key`](Self::old_key) answers for every converted key.
    pub const fn keeps_every_bit(&self) -> bool {
        self.to as u8 != Layout::V7 as u8 || matches!(sorted::keeps_every_bit(self.from), Some(true))
    }

    /// The key `old` becomes, or why it cannot (`old` is not of the old layout, or its time
    /// is outside what the new layout holds).
    pub fn convert(&self, old: &Comb) -> Result<Comb, Error> {
        if self.to == Layout::V7 { sorted::to_v7(self.from, old) } else { Layout::convert(old, self.from, self.to) }
    }

    /// The old key whose conversion is `new`, or why there is none (the conversion drops
    /// bits, or no old key converts to `new`).
    pub fn revert(&self, new: &Comb) -> Result<Comb, Error> {
        if self.to == Layout::V7 { sorted::from_v7(self.from, new) } else { Layout::convert(new, self.to, self.from) }
    }

    /// The key a row with old key `old` has now; `None` where `old` is not of the old layout
    /// (an id the conversion left as it was).
    pub fn new_key(&self, old: &Comb) -> Option<Comb> {
        if Layout::detect(old).is_some_and(|l| l == self.to) {
            return None;
        }
        self.convert(old).ok()
    }

    /// The old key of a converted one (what a client that still speaks the old layout
    /// expects); `None` where the conversion does not keep every bit.
    pub fn old_key(&self, new: &Comb) -> Option<Comb> {
        self.revert(new).ok()
    }
}

impl fmt::Display for KeyMigration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.from, self.to)
    }
}

impl FromStr for KeyMigration {
    type Err = Error;

    /// `from -> to`, as `combkey doctor` reports it (`rtcomb-sql -> v7`).
    fn from_str(s: &str) -> Result<Self, Error> {
        let (from, to) = s
            .split_once("->")
            .ok_or_else(|| Error::config("key migration", format!("{s:?}"), "FROM -> TO, e.g. rtcomb-sql -> v7"))?;
        KeyMigration::new(from.trim().parse()?, to.trim().parse()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_list_the_registry() {
        let e = "v9".parse::<Layout>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid layout: expected one of v7, short-prefix, rtcomb-sql, rtcomb-postgres, rtcomb-legacy, \
             newsequentialid, v1, v6, lambert-v13, mysql-swap, locality, uc-prefix, uc-suffix, uc-short-prefix, \
             uc-short-suffix, efcore, newid, newid-sequential, uuidnext-sqlserver, medo-sqlserver, found \"v9\""
        );
        let locality: Comb = "20be0ffc-314a-bd53-7a50-013a65ca76d2".parse().unwrap();
        let e = Layout::convert(&locality, Layout::Locality, Layout::V7).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no lossless conversion from locality to v7: conversions exist within \
             v7/rtcomb-sql/rtcomb-postgres/uc-prefix/uc-suffix, within short-prefix/uc-short-prefix/uc-short-suffix, \
             and within newsequentialid/v1/v6/lambert-v13/mysql-swap"
        );
        let e = Layout::V7.gregorian_ticks(&Comb::new()).unwrap_err();
        assert!(e.to_string().contains("one of newsequentialid, v1, v6, lambert-v13, mysql-swap"), "{e}");
    }

    #[test]
    fn every_name_parses_back() {
        for l in Layout::ALL {
            assert_eq!(l.name().parse::<Layout>(), Ok(l));
            assert_eq!(l.to_string(), l.name());
        }
    }
}
