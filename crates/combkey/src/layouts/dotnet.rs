//! The .NET generators that fill SQL Server tables, by the names the CLI gives them:
//!
//! - `efcore`: Entity Framework Core's `SequentialGuidValueGenerator`, the default for a `Guid`
//!   key on SQL Server (dotnet/efcore, `src/EFCore/ValueGeneration/SequentialGuidValueGenerator.cs`).
//! - `newid` and `newid-sequential`: MassTransit's NewId (phatboyg/NewId), `NewId.NextGuid()`
//!   (= `NewId.Next().ToGuid()`) and `NewId.NextSequentialGuid()`.
//! - `uuidnext-sqlserver`: UUIDNext (mareek/UUIDNext), `Uuid.NewDatabaseFriendly(Database.SqlServer)`.
//! - `medo-sqlserver`: Medo.Uuid7 (medo64/Medo.Uuid7), `Uuid7.NewMsSqlUniqueIdentifier()`.
//!
//! Byte positions are display positions (the order of the GUID string), as everywhere in
//! [`crate::layouts`]:
//!
//! ```text
//!  00112233-4455-6677-8899-aabbccddeeff
//!  rrrrrrrr-rrrr-4rrr-CCCC-CCCCCCCCCCCC   efcore:   counter C (.NET ticks) bits 15..0 in 8..9, bits 63..16 in 10..15
//!  WWWWsSss-WWWW-WWWW-TTTT-TTTTTTTTTTTT   newid:    ticks T bits 15..0 in 8..9, 63..16 in 10..15; worker W; sequence s (little-endian)
//!  TTTTTTTT-TTTT-TTTT-WWWW-WWWWWWWWsSss   newid-sequential: ticks T big-endian in 0..7; worker W; sequence s (little-endian)
//!  rrrrrrrr-rrrr-8rrr-vSSS-MMMMMMMMMMMM   uuidnext-sqlserver: Unix ms M in 10..15, 14-bit sequence S, version 8
//!  RRRRRRRR-RRRR-KK7K-vKKK-MMMMMMMMMMMM   medo-sqlserver: Unix ms M in 10..15, 26-bit counter K in 8, 9, 7, 6 (SQL
//!                                         Server's order), its version 7 in byte 7 and variant in byte 8
//! ```
//!
//! Each keeps SQL Server's order (it compares display bytes 10..15 first, then 8..9, 7..6,
//! 5..4, 3..0): the time comes first there. Only `newid-sequential` sorts by time in a
//! database that compares bytes left to right (PostgreSQL, MySQL's `BINARY(16)`, SQLite).

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::bits;
use crate::comb::Comb;
use crate::error::{Detail, Error};
use crate::layouts::Layout;
use crate::rng::{RandomSource, ThreadRandom};
use crate::time::Timestamp;

/// .NET ticks (100-ns intervals since 0001-01-01T00:00:00Z, `DateTime.Ticks`) at the Unix epoch.
pub const DOTNET_TICKS_AT_UNIX_EPOCH: i64 = 621_355_968_000_000_000;

/// .NET ticks in a millisecond.
const TICKS_PER_MS: i64 = 10_000;

/// What an id made by one of the .NET generators holds, read as the generator wrote it.
///
/// ```
/// use combkey::Comb;
/// use combkey::layouts::{DotNetFields, Layout};
///
/// // NewId.NextGuid() at 2024-03-21T04:19:11.304Z, worker 02:42:ac:11:00:02, sequence 258.
/// let f = DotNetFields::newid(638_465_915_513_040_000, [0x02, 0x42, 0xac, 0x11, 0x00, 0x02], 258);
/// let id = f.to_id(Layout::NewId)?;
/// assert_eq!(id.to_string(), "00020201-ac11-0242-6c80-08dc495e0f59");
/// let back = DotNetFields::parse(&id, Layout::NewId)?;
/// assert_eq!(back, f);
/// assert_eq!(back.timestamp().to_string(), "2024-03-21T04:19:11.304Z");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DotNetFields {
    /// The time in .NET ticks (100-ns intervals since 0001-01-01T00:00:00Z). For EF Core the
    /// generator's counter: the clock when the generator was made, plus one for every id it
    /// made since (not each id's own time). For UUIDNext and Medo.Uuid7 whole milliseconds.
    pub ticks: i64,
    /// NewId's 16-bit sequence within one tick, UUIDNext's 14-bit sequence and Medo.Uuid7's
    /// 26-bit counter within one millisecond; 0 for EF Core.
    pub sequence: u32,
    /// NewId's worker id: a MAC address or a hash of the host name (the last two bytes the
    /// process id where a process id provider is set); zeros for the others.
    pub worker: [u8; 6],
    /// EF Core's and UUIDNext's random base: display bytes 0..7 of the id, big-endian,
    /// the version nibble included; Medo.Uuid7's random bytes, display bytes 0..5; 0 for
    /// NewId.
    pub random: u64,
}

impl DotNetFields {
    /// EF Core: its counter (.NET ticks) and the `Guid.NewGuid()` it wrote the counter into
    /// (display bytes 0..7 are kept).
    pub fn efcore(counter: i64, base: Comb) -> Self {
        let r = base.as_bytes();
        let random = u64::from_be_bytes([r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]]);
        DotNetFields { ticks: counter, sequence: 0, worker: [0; 6], random }
    }

    /// NewId: ticks, worker id and sequence.
    pub const fn newid(ticks: i64, worker: [u8; 6], sequence: u16) -> Self {
        DotNetFields { ticks, sequence: sequence as u32, worker, random: 0 }
    }

    /// Medo.Uuid7's SQL Server layout: Unix milliseconds, the 26-bit counter, and 48 random
    /// bits (display bytes 0..5).
    pub fn medo_sqlserver(t: Timestamp, counter: u32, random: u64) -> Result<Self, Error> {
        let ms = bits::unix_ms48(t)?.cast_signed();
        if counter >= 1 << 26 {
            return Err(Error::out_of_range("Medo.Uuid7 counter", counter, "0 to 2^26-1 (26 bits)"));
        }
        Ok(DotNetFields {
            ticks: ms * TICKS_PER_MS + DOTNET_TICKS_AT_UNIX_EPOCH,
            sequence: counter,
            worker: [0; 6],
            random: random & 0xffff_ffff_ffff,
        })
    }

    /// UUIDNext's SQL Server layout: Unix milliseconds, the 14-bit sequence, and the random
    /// base whose display bytes 0..7 it keeps (its version nibble becomes 8).
    pub fn uuidnext_sqlserver(t: Timestamp, sequence: u16, base: Comb) -> Result<Self, Error> {
        let ms = bits::unix_ms48(t)?.cast_signed();
        if sequence > 0x3fff {
            return Err(Error::out_of_range("UUIDNext sequence", sequence, "0 to 16383 (14 bits)"));
        }
        let r = base.as_bytes();
        let mut head = [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]];
        head[6] = 0x80 | (head[6] & 0x0f);
        Ok(DotNetFields {
            ticks: ms * TICKS_PER_MS + DOTNET_TICKS_AT_UNIX_EPOCH,
            sequence: u32::from(sequence),
            worker: [0; 6],
            random: u64::from_be_bytes(head),
        })
    }

    /// The fields of `id` read as `layout` (one of the .NET layouts); an error where the id
    /// cannot be one (EF Core's base carries version 4, UUIDNext's ids version 8 and the RFC
    /// variant).
    pub fn parse(id: &Comb, layout: Layout) -> Result<Self, Error> {
        layout.check(id)?;
        let b = id.as_bytes();
        let be64 =
            |i: usize| u64::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
        // The 64 bits of .NET ticks, high 48 in 10..15 and low 16 in 8..9.
        let sql_ticks = || ((bits::read_u48(b, 10) << 16) | u64::from(u16::from_be_bytes([b[8], b[9]]))).cast_signed();
        Ok(match layout {
            Layout::EfCore => DotNetFields { ticks: sql_ticks(), sequence: 0, worker: [0; 6], random: be64(0) },
            Layout::NewId => DotNetFields {
                ticks: sql_ticks(),
                sequence: u32::from(u16::from_le_bytes([b[2], b[3]])),
                worker: [b[6], b[7], b[4], b[5], b[0], b[1]],
                random: 0,
            },
            Layout::NewIdSequential => DotNetFields {
                ticks: be64(0).cast_signed(),
                sequence: u32::from(u16::from_le_bytes([b[14], b[15]])),
                worker: [b[8], b[9], b[10], b[11], b[12], b[13]],
                random: 0,
            },
            Layout::UuidNextSqlServer => DotNetFields {
                ticks: bits::read_u48(b, 10).cast_signed() * TICKS_PER_MS + DOTNET_TICKS_AT_UNIX_EPOCH,
                sequence: u32::from(u16::from_be_bytes([b[8], b[9]]) & 0x3fff),
                worker: [0; 6],
                random: be64(0),
            },
            Layout::MedoSqlServer => DotNetFields {
                ticks: bits::read_u48(b, 10).cast_signed() * TICKS_PER_MS + DOTNET_TICKS_AT_UNIX_EPOCH,
                sequence: (u32::from(b[8] & 0x3f) << 20)
                    | (u32::from(b[9]) << 12)
                    | (u32::from(b[7] & 0x0f) << 8)
                    | u32::from(b[6]),
                worker: [0; 6],
                random: bits::read_u48(b, 0),
            },
            other => return Err(not_dotnet(other)),
        })
    }

    /// The id `layout` makes of these fields, byte for byte as its .NET code writes it.
    pub fn to_id(&self, layout: Layout) -> Result<Comb, Error> {
        let t = self.ticks.cast_unsigned().to_be_bytes();
        let w = self.worker;
        let q = self.sequence.to_le_bytes();
        let s = [q[0], q[1]];
        let r = self.random.to_be_bytes();
        let id = match layout {
            // guidBytes[8..16] = counterBytes[1, 0, 7, 6, 5, 4, 3, 2] (little-endian counter), in
            // Guid.ToByteArray() order, which for bytes 8..15 is the display order.
            Layout::EfCore => {
                [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], t[6], t[7], t[0], t[1], t[2], t[3], t[4], t[5]]
            }
            // new Guid(a, b, c, d..k) with a = _d (worker 4..5, the sequence byte-swapped),
            // b = worker 2..3, c = worker 0..1, d e = ticks bits 15..0, f..k = bits 63..16.
            Layout::NewId => {
                [w[4], w[5], s[0], s[1], w[2], w[3], w[0], w[1], t[6], t[7], t[0], t[1], t[2], t[3], t[4], t[5]]
            }
            // new Guid(a, b, c, d..k) with a b c = ticks big-endian, d..g = worker 0..3, h..k =
            // worker 4..5 and the sequence byte-swapped.
            Layout::NewIdSequential => {
                [t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], w[0], w[1], w[2], w[3], w[4], w[5], s[0], s[1]]
            }
            Layout::UuidNextSqlServer => {
                let ms = bits::unix_ms48(self.timestamp())?;
                let mut b = [0u8; 16];
                b[..8].copy_from_slice(&r);
                b[6] = 0x80 | (b[6] & 0x0f);
                let q = (self.sequence & 0x3fff).to_be_bytes();
                b[8] = 0x80 | q[2];
                b[9] = q[3];
                bits::write_u48(&mut b, 10, ms);
                b
            }
            Layout::MedoSqlServer => {
                let ms = bits::unix_ms48(self.timestamp())?;
                let k = (self.sequence & 0x3ff_ffff).to_be_bytes();
                let mut b = [0u8; 16];
                bits::write_u48(&mut b, 0, self.random);
                b[6] = k[3];
                b[7] = 0x70 | (k[2] & 0x0f);
                b[8] = 0x80 | ((k[0] << 4) | (k[1] >> 4)) & 0x3f;
                b[9] = (k[1] << 4) | (k[2] >> 4);
                bits::write_u48(&mut b, 10, ms);
                b
            }
            other => return Err(not_dotnet(other)),
        };
        Ok(Comb::from_bytes(id))
    }

    /// The time: `ticks` as a Unix millisecond instant, floored.
    pub const fn timestamp(&self) -> Timestamp {
        // In i128: ticks read from any 8 bytes may be far below the epoch.
        let unix = self.ticks as i128 - DOTNET_TICKS_AT_UNIX_EPOCH as i128;
        Timestamp::saturating_from_i128(unix.div_euclid(TICKS_PER_MS as i128))
    }
}

fn not_dotnet(layout: Layout) -> Error {
    Error::config(
        "layout for DotNetFields",
        layout,
        "one of efcore, newid, newid-sequential, uuidnext-sqlserver, medo-sqlserver",
    )
}

/// The version nibble each .NET layout's ids carry, where they carry one: EF Core's base is a
/// `Guid.NewGuid()` (version 4); UUIDNext writes version 8; NewId writes its worker id there;
/// Medo.Uuid7 writes version 7 into display byte 7 and the RFC variant into byte 8.
pub(crate) fn check(layout: Layout, id: &Comb) -> Result<(), Error> {
    let b = id.as_bytes();
    if layout == Layout::MedoSqlServer {
        if b[7] >> 4 != 7 {
            return Err(Error(Detail::Version { expected: 7, found: b[7] >> 4 }));
        }
        if b[8] >> 6 != 0b10 {
            return Err(Error(Detail::Variant { found: b[8] }));
        }
        return Ok(());
    }
    let expected = match layout {
        Layout::EfCore => 4,
        Layout::UuidNextSqlServer => {
            if !id.is_rfc_variant() {
                return Err(Error(Detail::Variant { found: id.as_bytes()[8] }));
            }
            8
        }
        _ => return Ok(()),
    };
    if id.version() == expected { Ok(()) } else { Err(Error(Detail::Version { expected, found: id.version() })) }
}

/// The .NET ticks `t` is, clamped to 0 before 0001-01-01.
fn ticks_of(t: Timestamp) -> i64 {
    t.unix_ms().saturating_mul(TICKS_PER_MS).saturating_add(DOTNET_TICKS_AT_UNIX_EPOCH).max(0)
}

/// A new id of a .NET layout, for now, from process-wide generators that keep each one's
/// rule: EF Core's counter starts at the clock's ticks and counts one per id; NewId's
/// sequence counts within a tick and starts again at 0 when the tick moves; UUIDNext's
/// sequence counts within a millisecond.
pub(crate) fn generate(layout: Layout, now: Timestamp) -> Result<Comb, Error> {
    static EFCORE: AtomicI64 = AtomicI64::new(i64::MIN);
    static NEWID: Mutex<(i64, u16)> = Mutex::new((i64::MIN, 0));
    static UUIDNEXT: Mutex<(i64, u16)> = Mutex::new((i64::MIN, 0));
    static MEDO: Mutex<(i64, u32)> = Mutex::new((i64::MIN, 0));
    static WORKER: std::sync::OnceLock<[u8; 6]> = std::sync::OnceLock::new();
    let random_v4 = || {
        let mut b = [0u8; 16];
        ThreadRandom.fill_bytes(&mut b);
        Comb::from_bytes(b).with_version(4)
    };
    match layout {
        Layout::EfCore => {
            // `private long _counter = DateTime.UtcNow.Ticks;` then Interlocked.Increment.
            let _ = EFCORE.compare_exchange(i64::MIN, ticks_of(now), Ordering::Relaxed, Ordering::Relaxed);
            let counter = EFCORE.fetch_add(1, Ordering::Relaxed).saturating_add(1);
            DotNetFields::efcore(counter, random_v4()).to_id(layout)
        }
        Layout::NewId | Layout::NewIdSequential => {
            let worker = *WORKER.get_or_init(|| {
                let mut w = [0u8; 6];
                ThreadRandom.fill_bytes(&mut w);
                w
            });
            let now = ticks_of(now);
            // A poisoned lock only means another thread panicked between two plain writes.
            let mut state = NEWID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let (last, seq) = *state;
            let (ticks, seq) = if now > last {
                (now, 0)
            } else if seq == u16::MAX {
                (last + 1, 0)
            } else {
                (last, seq + 1)
            };
            *state = (ticks, seq);
            drop(state);
            DotNetFields::newid(ticks, worker, seq).to_id(layout)
        }
        Layout::UuidNextSqlServer => {
            let ms = now.unix_ms();
            let mut state = UUIDNEXT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let (last, seq) = *state;
            let (ms, seq) = if ms > last {
                (ms, 0)
            } else if seq >= 0x3fff {
                (last + 1, 0)
            } else {
                (last, seq + 1)
            };
            *state = (ms, seq);
            drop(state);
            DotNetFields::uuidnext_sqlserver(Timestamp::from_unix_ms(ms), seq, random_v4())?.to_id(layout)
        }
        Layout::MedoSqlServer => {
            // A new millisecond seeds the counter with 25 random bits; within one it counts up.
            let ms = now.unix_ms();
            let mut state = MEDO.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let (last, k) = *state;
            let (ms, k) = if ms > last {
                (ms, u32::try_from(ThreadRandom.next_u64() & 0x1ff_ffff).unwrap_or(0))
            } else if k >= 0x3ff_ffff {
                (last + 1, 0)
            } else {
                (last, k + 1)
            };
            *state = (ms, k);
            drop(state);
            DotNetFields::medo_sqlserver(Timestamp::from_unix_ms(ms), k, ThreadRandom.next_u64())?.to_id(layout)
        }
        other => Err(not_dotnet(other)),
    }
}
