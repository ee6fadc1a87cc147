//! Version 1 UUIDs and their re-ordered layouts: RFC 9562 v6, Lambert's "version 13"
//! (Michael Lambert, "Custom UUID as primary key", 2012), MySQL 8's `UUID_TO_BIN(u, 1)`
//! (Percona's "Store UUID in an optimized way") and SQL Server's `NEWSEQUENTIALID()` order.
//!
//! ```text
//!  v1               llllllll-mmmm-1hhh-vsss-nnnnnnnnnnnn   ticks low bits first
//!  v6 / lambert-v13 hhhmmmml-llll-6lll-vsss-nnnnnnnnnnnn   ticks high bits first (d for v13)
//!  mysql-swap       1hhhmmmm-llll-llll-vsss-nnnnnnnnnnnn   time_hi and time_low swapped
//!  newsequentialid  LLLLLLLL-MMMM-HHH1-vsss-nnnnnnnnnnnn   fields 1-3 byte-reversed
//!  l, m, h: v1's time_low, time_mid, time_hi; s: clock sequence; n: node
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::bits;
use crate::clock::{Clock, SystemClock};
use crate::comb::Comb;
use crate::rng::{RandomSource, ThreadRandom};

/// 100-ns intervals from 1582-10-15 (the Gregorian reform, v1's epoch) to 1970-01-01.
pub const GREGORIAN_TO_UNIX_100NS: u64 = bits::GREGORIAN_TO_UNIX_100NS;

/// RFC 9562 v6: the same 60 bits, most significant first, labelled `version`.
pub(crate) fn v1_to_v6_like(v1: &Comb, version: u8) -> Comb {
    let b = v1.as_bytes();
    let ticks = bits::v1_ticks(b);
    let mut out = *b;
    bits::write_u48(&mut out, 0, ticks >> 12); // bits 59..12
    let lo12 = ticks.to_be_bytes(); // bits 11..0 are the low nibble of [6] and all of [7]
    out[6] = (version << 4) | (lo12[6] & 0x0f);
    out[7] = lo12[7];
    Comb::from_bytes(out)
}

/// The inverse of [`v1_to_v6_like`] (any version label).
pub(crate) fn v6_like_to_v1(id: &Comb) -> Comb {
    let b = id.as_bytes();
    let lo12 = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
    Comb::from_bytes(bits::with_v1_ticks((bits::read_u48(b, 0) << 12) | lo12, *b))
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

/// SQL Server's `NEWSEQUENTIALID()` shows a v1 id with its first three fields byte-reversed:
/// Microsoft's mixed-endian GUID bytes read as display bytes (Lambert). The swap is its own
/// inverse.
pub(crate) fn newsequentialid_swap(id: &Comb) -> Comb {
    Comb::from_bytes(uuid::Uuid::from_bytes(id.into_bytes()).to_bytes_le())
}

/// Makes version 1 UUIDs: the clock's time in 100-ns ticks since 1582-10-15, strictly
/// increasing per generator (ticks within one millisecond count up), and a clock sequence and
/// node id drawn at random once per generator, the node with the multicast bit set (RFC 9562
/// section 6.10), so no MAC address is disclosed. A forked child draws its own at its first
/// id, so parent and child never share one.
///
/// The source of the re-ordered kinds (v6, Lambert's version 13, MySQL's swapped form,
/// SQL Server's `NEWSEQUENTIALID` order), which are conversions of a v1 id. One generator's
/// ids differ only in their time, as a machine's `NEWSEQUENTIALID()` values do (one node, one
/// clock sequence): SQL Server compares the node and the clock sequence first, so only then
/// does its order keep creation order.
///
/// ```
/// use combkey::{FixedClock, SeededRandom, Timestamp};
/// use combkey::layouts::{Layout, V1Generator};
///
/// let now = Timestamp::from_unix_ms(1_330_442_899_043);
/// let g = V1Generator::with_clock_and_random(FixedClock::new(now), SeededRandom::new(1));
/// let a = g.generate();
/// assert_eq!(a.version(), 1);
/// assert_eq!(Layout::V1.timestamp(&a)?.unwrap().to_string(), "2012-02-28T15:28:19.043Z");
/// let b = g.generate();
/// let v6 = |id| Layout::convert(&id, Layout::V1, Layout::V6);
/// assert!(v6(a)? < v6(b)?);
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Debug)]
pub struct V1Generator<C = SystemClock, R = ThreadRandom> {
    /// The last ticks given out, or [`NONE_YET`].
    last: AtomicU64,
    /// This generator's clock sequence (bits 48-61) and node (bits 0-47), with bit 63 set;
    /// 0 before it is drawn.
    identity: AtomicU64,
    /// The fork epoch `identity` was drawn in: a forked child draws its own.
    drawn_in: AtomicU64,
    clock: C,
    random: R,
}

/// `last` before the first id: above every 60-bit tick count, so tick 0 (1582-10-15T00:00Z)
/// is a time like any other, as uuid-creator treats it.
const NONE_YET: u64 = u64::MAX;

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
        V1Generator {
            last: AtomicU64::new(NONE_YET),
            identity: AtomicU64::new(0),
            drawn_in: AtomicU64::new(0),
            clock,
            random,
        }
    }

    /// The clock sequence and node of this generator's ids: drawn at the first id, and again at
    /// the first in a forked child.
    fn identity(&self) -> u64 {
        let epoch = crate::rng::fork::epoch();
        // The epoch first: a thread that sees the one a draw stored sees that draw's identity.
        let seen = self.drawn_in.load(Ordering::Acquire);
        let id = self.identity.load(Ordering::Acquire);
        if id != 0 && seen == epoch {
            return id;
        }
        let mut b = [0u8; 8];
        self.random.fill_bytes(&mut b);
        let fresh = (1 << 63) | (u64::from_be_bytes(b) & ((1 << 62) - 1));
        // Threads drawing at once agree on one: the first to swap it in.
        let id = match self.identity.compare_exchange(id, fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => fresh,
            Err(theirs) => theirs,
        };
        self.drawn_in.store(epoch, Ordering::Release);
        id
    }

    /// A new v1 id.
    pub fn generate(&self) -> Comb {
        let now = bits::unix_ms_to_ticks(self.clock.now());
        let mut last = self.last.load(Ordering::Relaxed);
        let ticks = loop {
            let next = if last == NONE_YET || now > last { now } else { (last + 1).min(bits::TICKS_60_MAX) };
            match self.last.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break next,
                Err(actual) => last = actual,
            }
        };
        let mut rest = [0u8; 16];
        rest[8..16].copy_from_slice(&self.identity().to_be_bytes());
        rest[8] = 0x80 | (rest[8] & 0x3f); // RFC variant, 14-bit random clock sequence
        rest[10] |= 0x01; // multicast bit: a random node, not a MAC address
        Comb::from_bytes(bits::with_v1_ticks(ticks, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FixedClock, SeededRandom, Timestamp};

    #[test]
    fn the_first_tick_of_the_gregorian_calendar_is_an_ordinary_time() {
        // uuid-creator's TimeBasedFactory gives tick 0 at 1582-10-15T00:00:00Z; so do we, then
        // counts up from it.
        let g = V1Generator::with_clock_and_random(
            FixedClock::new(Timestamp::from_unix_ms(-12_219_292_800_000)),
            SeededRandom::new(7),
        );
        let ticks = |id: Comb| crate::layouts::Layout::V1.gregorian_ticks(&id);
        assert_eq!(ticks(g.generate()), Ok(0));
        assert_eq!(ticks(g.generate()), Ok(1));
    }

    #[test]
    fn one_generator_one_node_and_clock_sequence_so_sql_server_keeps_newsequentialid_order() {
        use crate::layouts::Layout;
        use std::sync::Arc;
        use std::time::Duration;
        let clock = Arc::new(FixedClock::new(Timestamp::from_unix_ms(1_700_000_000_000)));
        let g = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(5));
        let mut made = Vec::new();
        for i in 0..2000u64 {
            // Some ids in the same millisecond (the ticks count up), some across milliseconds.
            if i % 3 == 0 {
                clock.advance(Duration::from_micros(1 + (i * 7919) % 5000));
            }
            made.push(g.generate());
        }
        let tail = |id: &Comb| id.as_bytes()[8..16].to_vec();
        assert!(made.iter().all(|id| tail(id) == tail(&made[0])), "one clock sequence and node");
        assert_eq!(made[0].as_bytes()[8] & 0xc0, 0x80, "RFC variant");
        assert_eq!(made[0].as_bytes()[10] & 0x01, 0x01, "multicast bit");
        // SQL Server's order (node, clock sequence, then the time fields) is creation order.
        let shown: Vec<Comb> =
            made.iter().map(|id| Layout::convert(id, Layout::V1, Layout::NewSequentialId).unwrap()).collect();
        let mut sorted = shown.clone();
        sorted.sort_by(|a, b| crate::backend::sqlserver::cmp(a.as_bytes(), b.as_bytes()));
        assert_eq!(sorted, shown);
        // Another generator draws its own.
        let other = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(6));
        assert_ne!(tail(&other.generate()), tail(&made[0]));
    }
}
