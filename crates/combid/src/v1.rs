//! Version 1 UUIDs and their re-ordered layouts (seeds 000 and 003): RFC 9562 v6, Lambert's
//! "version 13", MySQL 8's `UUID_TO_BIN(u, 1)` and SQL Server's `NEWSEQUENTIALID()` order.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::{Clock, SystemClock};
use crate::comb::Comb;
use crate::rng::{RandomSource, ThreadRandom};
use crate::stored::swap_guid_fields;
use crate::time::Timestamp;

/// 100-ns intervals from 1582-10-15 (the Gregorian reform, v1's epoch) to 1970-01-01.
pub const GREGORIAN_TO_UNIX_100NS: u64 = 0x01B2_1DD2_1381_4000;

/// The 60-bit timestamp of a v1 id: 100-ns intervals since 1582-10-15.
pub(crate) fn v1_ticks(b: &[u8; 16]) -> u64 {
    let time_low = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let time_mid = u64::from(u16::from_be_bytes([b[4], b[5]]));
    let time_hi = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
    (time_hi << 48) | (time_mid << 32) | time_low
}

/// A v1 id with `ticks` and bytes 8..15 of `rest`.
pub(crate) fn v1_with_ticks(ticks: u64, rest: &[u8; 16]) -> Comb {
    let t = ticks.to_be_bytes();
    let mut b = *rest;
    b[0..4].copy_from_slice(&t[4..8]); // time_low: bits 31..0
    b[4..6].copy_from_slice(&t[2..4]); // time_mid: bits 47..32
    b[6] = 0x10 | (t[0] & 0x0f); // version 1, then bits 59..56
    b[7] = t[1]; // bits 55..48
    Comb::from_bytes(b)
}

/// RFC 9562 v6: the same 60 bits, most significant first.
pub(crate) fn v1_to_v6_like(v1: &Comb, version: u8) -> Comb {
    let b = v1.as_bytes();
    let ticks = v1_ticks(b);
    let hi48 = (ticks >> 12).to_be_bytes(); // bits 59..12 in the low 48 bits
    let lo12 = ticks & 0x0fff;
    let mut out = *b;
    out[0..6].copy_from_slice(&hi48[2..8]);
    // OK because lo12 < 2^12.
    #[allow(clippy::cast_possible_truncation)]
    let lo = (lo12 as u16).to_be_bytes();
    out[6] = (version << 4) | (lo[0] & 0x0f);
    out[7] = lo[1];
    Comb::from_bytes(out)
}

/// The inverse of [`v1_to_v6_like`] (any version label).
pub(crate) fn v6_like_to_v1(id: &Comb) -> Comb {
    let b = id.as_bytes();
    let hi48 = u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]]);
    let lo12 = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
    v1_with_ticks((hi48 << 12) | lo12, b)
}

/// MySQL 8's `UUID_TO_BIN(u, 1)` (Percona's `ordered_uuid`): time_hi (with the version) and
/// time_low swap places.
pub(crate) fn v1_to_mysql_swap(v1: &Comb) -> Comb {
    let b = v1.as_bytes();
    Comb::from_bytes([
        b[6], b[7], b[4], b[5], b[0], b[1], b[2], b[3], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15],
    ])
}

/// MySQL 8's `BIN_TO_UUID(b, 1)`.
pub(crate) fn mysql_swap_to_v1(id: &Comb) -> Comb {
    let b = id.as_bytes();
    Comb::from_bytes([
        b[4], b[5], b[6], b[7], b[2], b[3], b[0], b[1], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15],
    ])
}

/// SQL Server's `NEWSEQUENTIALID()` shows a v1 id with its first three fields byte-reversed.
/// The swap is its own inverse.
pub(crate) fn v1_newsequentialid_swap(id: &Comb) -> Comb {
    Comb::from_bytes(swap_guid_fields(id.into_bytes()))
}

/// The instant of a v1 tick count, floored to the millisecond.
pub(crate) fn ticks_to_timestamp(ticks: u64) -> Timestamp {
    // OK because 60-bit values fit in i64 with room to spare.
    let since_unix = i64::try_from(ticks).unwrap_or(i64::MAX) - GREGORIAN_TO_UNIX_100NS.cast_signed();
    Timestamp::from_unix_ms(since_unix.div_euclid(10_000))
}

/// Makes version 1 UUIDs: the clock's time in 100-ns ticks since 1582-10-15, strictly
/// increasing per generator (ticks within one millisecond count up), a random clock sequence
/// and a random node id with the multicast bit set (RFC 9562 section 6.10), so no MAC
/// address is disclosed.
///
/// The source of the re-ordered kinds (v6, Lambert's version 13, MySQL's swapped form,
/// SQL Server's `NEWSEQUENTIALID` order), which are conversions of a v1 id.
///
/// ```
/// use combid::{FixedClock, Kind, SeededRandom, V1Generator};
///
/// let g = V1Generator::with_clock_and_random(FixedClock::new(1_330_442_899_043), SeededRandom::new(1));
/// let a = g.generate();
/// assert_eq!(a.version(), 1);
/// assert_eq!(Kind::V1.timestamp(&a)?.unwrap().to_string(), "2012-02-28T15:28:19.043Z");
/// let b = g.generate();
/// let v6 = |id| Kind::convert(&id, Kind::V1, Kind::V6);
/// assert!(v6(a)? < v6(b)?);
/// # Ok::<(), combid::Error>(())
/// ```
#[derive(Debug)]
pub struct V1Generator<C = SystemClock, R = ThreadRandom> {
    last: AtomicU64,
    clock: C,
    random: R,
}

impl V1Generator {
    /// A generator on the system clock and the thread-local CSPRNG.
    pub const fn new() -> Self {
        Self::with_clock_and_random(SystemClock, ThreadRandom)
    }
}

impl Default for V1Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock, R: RandomSource> V1Generator<C, R> {
    /// A generator on `clock` and `random`.
    pub const fn with_clock_and_random(clock: C, random: R) -> Self {
        V1Generator { last: AtomicU64::new(0), clock, random }
    }

    /// A new v1 id.
    pub fn generate(&self) -> Comb {
        let now =
            self.clock.now_unix_ms().saturating_mul(10_000).saturating_add(GREGORIAN_TO_UNIX_100NS).min((1 << 60) - 1);
        let mut last = self.last.load(Ordering::Relaxed);
        let ticks = loop {
            let next = if now > last { now } else { (last + 1).min((1 << 60) - 1) };
            match self.last.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break next,
                Err(actual) => last = actual,
            }
        };
        let mut rest = [0u8; 16];
        self.random.fill_bytes(&mut rest[8..16]);
        rest[8] = 0x80 | (rest[8] & 0x3f); // RFC variant, 14-bit random clock sequence
        rest[10] |= 0x01; // multicast bit: a random node, not a MAC address
        v1_with_ticks(ticks, &rest)
    }
}
