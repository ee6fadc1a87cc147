//! Groupon's locality UUID, version `b` (Peter Bakkum and Michael Craig,
//! <https://github.com/groupon/locality-uuid.java>).

use std::sync::atomic::{AtomicU32, Ordering};

use md5::{Digest, Md5};

use crate::bits;
use crate::clock::{Clock, SystemClock};
use crate::comb::Comb;
use crate::error::{Detail, Error};
use crate::rng::{RandomSource, ThreadRandom};
use crate::time::Timestamp;

/// The step of the variable-mode counter: the prime Groupon's library adds per id.
pub const LOCALITY_INCREMENT: u32 = 198_491_317;

/// How a [`LocalityGenerator`] advances and writes its counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LocalityMode {
    /// The default: add [`LOCALITY_INCREMENT`] and write the counter nibble-reversed, so the
    /// first hex digit changes fastest and writes spread over a cluster's shards; written
    /// exactly as Groupon's `UUID.java` writes it ([`variable_bytes`]), including what its
    /// arithmetic shift does to the last byte when the counter's top bit is set.
    Variable,
    /// Add 1 and write the counter in order, starting from a value derived from the UTC date
    /// and time ([`locality_sequential_seed`]), so machines find similar values and writes
    /// with these keys stay together.
    Sequential,
}

/// The first group as Groupon's `UUID.java` writes a variable-mode counter `count`: the
/// counter's hex digits in reverse order, low digit first; except that the library builds the
/// last byte with `(count & 0xF0000000) >> 28` on a Java `int`, an arithmetic shift, so when
/// bit 31 of the count is set the sign fills that byte's high digit with `f` and bits 24-27 of
/// the count (which belonged there) are lost. Half of all counts have bit 31 set.
///
/// ```
/// use combkey::layouts::variable_bytes;
///
/// // A count that regenerates Groupon's README's variable-mode example sequence (its README
/// // names no count; bits 24-27 are lost here, so 0x9dec9c8c and 0x9eec9c8c do it too).
/// assert_eq!(variable_bytes(0x9fec_9c8c), [0xc8, 0xc9, 0xce, 0xf9]); // c8c9cef9-...
/// // Bit 31 clear: the plain nibble reversal.
/// assert_eq!(variable_bytes(0x1234_5678), [0x87, 0x65, 0x43, 0x21]);
/// ```
pub const fn variable_bytes(count: u32) -> [u8; 4] {
    let r = reverse_nibbles(count).to_be_bytes();
    // Java: ((count & 0xF000000) >> 20) | ((count & 0xF0000000) >> 28), the second shift
    // arithmetic on an int: with bit 31 set the high digit is all ones.
    let last = if count & 0x8000_0000 != 0 { 0xf0 | r[3] & 0x0f } else { r[3] };
    [r[0], r[1], r[2], last]
}

/// The fields of a locality UUID.
///
/// ```text
///  wwwwwwww-xxxx-byyy-yyyy-zzzzzzzzzzzz
///  w: counter  x: process id  b: version  y: last 28 bits of a MAC address
///  z: Unix time in milliseconds (48 bits)
///
///  20be0ffc-314a-bd53-7a50-013a65ca76d2
///  counter 3,488,672,514 (0xcff0eb02, written nibble-reversed), pid 12,618,
///  MAC __:__:_d:53:7a:50, time 1,350,327,498,450 = 2012-10-15T18:58:18.450Z
/// ```
///
/// A variable-mode id whose first group ends in `f8` to `ff` was written by Groupon's library
/// from a counter with bit 31 set ([`variable_bytes`]): its counter's bits 24-27 are not in the
/// id. [`counter_lost_bits`](Self::counter_lost_bits) says so, and [`counter`](Self::counter)
/// holds those bits as `f`, the one value that cannot be told from the others.
///
/// ```
/// let id: combkey::Comb = "20be0ffc-314a-bd53-7a50-013a65ca76d2".parse()?;
/// let f = combkey::layouts::LocalityFields::parse(&id)?;
/// assert_eq!(f.counter, 3_488_672_514);
/// assert_eq!(f.pid, 12_618);
/// assert_eq!(f.mac_fragment, [0, 0, 0x0d, 0x53, 0x7a, 0x50]);
/// assert_eq!(f.timestamp.to_string(), "2012-10-15T18:58:18.450Z");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LocalityFields {
    /// The counter as variable mode (the default) writes it: the first group nibble-reversed
    /// (bits 24-27 as `1111` where [`counter_lost_bits`](Self::counter_lost_bits) is set).
    pub counter: u32,
    /// Whether the id's first group cannot hold the variable-mode counter's bits 24-27: they
    /// were lost when Groupon's library wrote a counter with bit 31 set (any of 16 counters
    /// writes these same bytes).
    ///
    /// Like [`counter`](Self::counter) this reads the id as variable mode: an id does not say
    /// which mode made it, and for a sequential-mode id (whose counter is
    /// [`counter_sequential`](Self::counter_sequential), every bit kept) it means nothing.
    pub counter_lost_bits: bool,
    /// The first group read in order, as sequential mode writes the counter.
    pub counter_sequential: u32,
    /// The process id modulo 65,536.
    pub pid: u16,
    /// The MAC address fragment: six bytes with the first two and a half zero, as Groupon's
    /// `getMacFragment()` returns it.
    pub mac_fragment: [u8; 6],
    /// The creation time.
    pub timestamp: Timestamp,
}

impl LocalityFields {
    /// The fields of a version-`b` id; an error for any other version.
    pub fn parse(id: &Comb) -> Result<Self, Error> {
        if id.version() != 0xb {
            return Err(Error(Detail::Version { expected: 0xb, found: id.version() }));
        }
        let b = id.as_bytes();
        let first = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        Ok(LocalityFields {
            counter: reverse_nibbles(first),
            counter_lost_bits: b[3] >= 0xf8,
            counter_sequential: first,
            pid: u16::from_be_bytes([b[4], b[5]]),
            mac_fragment: [0, 0, b[6] & 0x0f, b[7], b[8], b[9]],
            timestamp: bits::read_unix_ms48(b, 10),
        })
    }

    /// Whether Groupon's variable mode can have written this id's first group. With the
    /// counter's bit 31 set its code writes the last byte's high digit as `f`
    /// ([`variable_bytes`]), so a last byte whose low digit is 8 to f and high digit is not
    /// (`...78`, `...9a`) comes from sequential mode or from another library: then
    /// [`counter`](Self::counter) means nothing and
    /// [`counter_sequential`](Self::counter_sequential) is the counter.
    ///
    /// ```
    /// use combkey::layouts::LocalityFields;
    ///
    /// let f = |s: &str| LocalityFields::parse(&s.parse().unwrap()).unwrap();
    /// assert!(f("20be0ffc-314a-bd53-7a50-013a65ca76d2").could_be_variable_mode());
    /// assert!(!f("00000078-62a6-b000-0000-01a21810c984").could_be_variable_mode());
    /// ```
    pub const fn could_be_variable_mode(&self) -> bool {
        let last = self.counter_sequential & 0xff;
        last & 0x08 == 0 || last & 0xf0 == 0xf0
    }
}

/// The hex digits of `x` in reverse order (`0xcff0eb02` <-> `0x20be0ffc`).
const fn reverse_nibbles(x: u32) -> u32 {
    let y = x.swap_bytes();
    ((y & 0x0f0f_0f0f) << 4) | ((y >> 4) & 0x0f0f_0f0f)
}

/// Makes locality UUIDs. Lock-free: one atomic add per id.
///
/// ```
/// use combkey::{FixedClock, Timestamp};
/// use combkey::layouts::{LocalityFields, LocalityGenerator, LocalityMode};
///
/// let now = FixedClock::new(Timestamp::from_unix_ms(1_350_327_498_450));
/// let g = LocalityGenerator::with_parts(LocalityMode::Sequential, 12_618, [0, 0, 0x0d, 0x53, 0x7a, 0x50], 41, now);
/// let id = g.generate();
/// assert_eq!(id.to_string(), "0000002a-314a-bd53-7a50-013a65ca76d2");
/// assert_eq!(LocalityFields::parse(&id)?.counter_sequential, 42);
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Debug)]
pub struct LocalityGenerator<C = SystemClock> {
    counter: AtomicU32,
    mode: LocalityMode,
    pid: u16,
    mac: [u8; 4],
    clock: C,
}

impl LocalityGenerator {
    /// A generator for this process: pid modulo 65,536, the first active MAC address, the
    /// system clock, and the counter started at a random value (variable mode) or at
    /// [`locality_sequential_seed`] of now (sequential mode).
    pub fn new(mode: LocalityMode) -> Self {
        let counter = match mode {
            LocalityMode::Variable => {
                let mut r = [0u8; 4];
                ThreadRandom.fill_bytes(&mut r);
                u32::from_be_bytes(r)
            }
            LocalityMode::Sequential => locality_sequential_seed(Timestamp::now()),
        };
        // The pid modulo 65,536: its low 16 bits.
        let pid = std::process::id().to_be_bytes();
        let pid = u16::from_be_bytes([pid[2], pid[3]]);
        // Groupon: "If no active MAC address is found, this is filled in with zeroes."
        let mac = first_active_mac().unwrap_or([0; 6]);
        Self::with_parts(mode, pid, mac, counter, SystemClock)
    }
}

impl<C: Clock> LocalityGenerator<C> {
    /// A generator from explicit parts: for tests and for reproducing another machine's ids.
    /// `counter` is the value before the first id (the first id adds the mode's step).
    pub fn with_parts(mode: LocalityMode, pid: u16, mac: [u8; 6], counter: u32, clock: C) -> Self {
        LocalityGenerator {
            counter: AtomicU32::new(counter),
            mode,
            pid,
            mac: [mac[2] & 0x0f, mac[3], mac[4], mac[5]],
            clock,
        }
    }

    /// A new id.
    pub fn generate(&self) -> Comb {
        let step = match self.mode {
            LocalityMode::Variable => LOCALITY_INCREMENT,
            LocalityMode::Sequential => 1,
        };
        let count = self.counter.fetch_add(step, Ordering::Relaxed).wrapping_add(step);
        let c = match self.mode {
            LocalityMode::Variable => variable_bytes(count),
            LocalityMode::Sequential => count.to_be_bytes(),
        };
        let p = self.pid.to_be_bytes();
        let m = self.mac;
        let mut b = [c[0], c[1], c[2], c[3], p[0], p[1], 0xb0 | m[0], m[1], m[2], m[3], 0, 0, 0, 0, 0, 0];
        bits::write_u48(&mut b, 10, bits::clamp_unix_ms48(self.clock.now()));
        Comb::from_bytes(b)
    }
}

/// The sequential-mode start value Groupon's library derives from the time, so machines
/// started near the same time agree: the first four bytes (little-endian) of the MD5 of the
/// UTC time formatted `yyyyMMddHHmm` cut to 11 characters (10-minute precision).
///
/// (Groupon's README says "a hash of the current date and hour"; the library's code hashes to
/// the ten minutes, which is what this follows so the values match.)
pub fn locality_sequential_seed(t: Timestamp) -> u32 {
    let s = t.to_string(); // 2012-10-15T18:58:18.450Z
    let b = s.as_bytes();
    // yyyy MM dd HH m
    let key: Vec<u8> = [&b[0..4], &b[5..7], &b[8..10], &b[11..13], &b[14..15]].concat();
    let d = Md5::digest(&key);
    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
}

/// The last 28 bits of the first active network interface's MAC address (Linux:
/// `/sys/class/net`, by interface index, skipping loopback and all-zero addresses).
fn first_active_mac() -> Option<[u8; 6]> {
    let mut found: Vec<(u32, [u8; 6])> = Vec::new();
    for entry in std::fs::read_dir("/sys/class/net").ok()?.flatten() {
        let dir = entry.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).map(|s| s.trim().to_string()).ok();
        if entry.file_name() == "lo" || read("operstate").as_deref() != Some("up") {
            continue;
        }
        let (Some(addr), Some(index)) = (read("address"), read("ifindex")) else { continue };
        let bytes: Vec<u8> = addr.split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
        if let (Ok(mac), Ok(index)) = (<[u8; 6]>::try_from(bytes.as_slice()), index.parse::<u32>())
            && mac != [0; 6]
        {
            found.push((index, mac));
        }
    }
    found.into_iter().min_by_key(|(i, _)| *i).map(|(_, mac)| mac)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::FixedClock;

    fn at(ms: i64) -> FixedClock {
        FixedClock::new(Timestamp::from_unix_ms(ms))
    }

    #[test]
    fn could_be_variable_mode_is_every_last_byte_variable_bytes_writes() {
        // Every last byte the variable-mode writer makes, from every top byte of the count
        // (the last byte depends on bits 24-31 only), against the method, for all 256 bytes.
        let written: std::collections::BTreeSet<u8> = (0..=255u32).map(|top| variable_bytes(top << 24)[3]).collect();
        assert_eq!(written.len(), 128 + 8);
        for last in 0..=255u8 {
            let id: Comb = format!("000000{last:02x}-62a6-b000-0000-01a21810c984").parse().unwrap();
            let f = LocalityFields::parse(&id).unwrap();
            assert_eq!(f.could_be_variable_mode(), written.contains(&last), "{last:02x}");
        }
    }

    #[test]
    fn readme_vector() {
        let id: Comb = "20be0ffc-314a-bd53-7a50-013a65ca76d2".parse().unwrap();
        let f = LocalityFields::parse(&id).unwrap();
        assert_eq!(f.counter, 3_488_672_514);
        assert_eq!(f.pid, 12_618);
        assert_eq!(f.mac_fragment, [0, 0, 0x0d, 0x53, 0x7a, 0x50]);
        assert_eq!(f.timestamp.unix_ms(), 1_350_327_498_450);
        assert_eq!(LocalityFields::parse(&Comb::new()).unwrap_err().kind(), crate::ErrorKind::Version);
    }

    #[test]
    fn generator_reproduces_the_readme_vector() {
        // The counter before the id was 3,488,672,514 - the increment.
        let g = LocalityGenerator::with_parts(
            LocalityMode::Variable,
            12_618,
            [0xaa, 0xbb, 0x0d, 0x53, 0x7a, 0x50],
            3_488_672_514u32.wrapping_sub(LOCALITY_INCREMENT),
            at(1_350_327_498_450),
        );
        assert_eq!(g.generate().to_string(), "20be0ffc-314a-bd53-7a50-013a65ca76d2");
    }

    #[test]
    fn readme_sequences_of_both_modes() {
        // Groupon's README's variable-mode sequence, regenerated bit for bit: the library's
        // counter, from 0x9fec9c8c, stepping by its prime, written as its code writes it (an
        // arithmetic shift fills the last byte's high digit when bit 31 is set, as in all eight).
        let variable = [
            "c8c9cef9-7a7f-bd53-7a50-013e4e2afbde",
            "14951cfa-7a7f-bd53-7a50-013e4e2afbde",
            "6f5169fb-7a7f-bd53-7a50-013e4e2afbde",
            "ba2da6fc-7a7f-bd53-7a50-013e4e2afbde",
            "06f8f3fc-7a7f-bd53-7a50-013e4e2afbde",
            "51c441fd-7a7f-bd53-7a50-013e4e2afbde",
            "ac809efe-7a7f-bd53-7a50-013e4e2afbde",
            "f75cdbff-7a7f-bd53-7a50-013e4e2afbde",
        ];
        let g = LocalityGenerator::with_parts(
            LocalityMode::Variable,
            0x7a7f,
            [0, 0, 0x0d, 0x53, 0x7a, 0x50],
            0x9fec_9c8c_u32.wrapping_sub(LOCALITY_INCREMENT),
            at(0x013e_4e2a_fbde),
        );
        let ours: Vec<String> = (0..8).map(|_| g.generate().to_string()).collect();
        assert_eq!(ours, variable);
        // Every one of them lost its counter's bits 24-27, and says so.
        for s in variable {
            let f = LocalityFields::parse(&s.parse().unwrap()).unwrap();
            assert!(f.counter_lost_bits, "{s}");
            assert_eq!((f.pid, f.mac_fragment), (0x7a7f, [0, 0, 0x0d, 0x53, 0x7a, 0x50]));
        }
        // A counter with bit 31 clear loses nothing and reads back exactly.
        let g = LocalityGenerator::with_parts(LocalityMode::Variable, 1, [0; 6], 0x1234_5678, at(0));
        let f = LocalityFields::parse(&g.generate()).unwrap();
        assert_eq!((f.counter, f.counter_lost_bits), (0x1234_5678_u32.wrapping_add(LOCALITY_INCREMENT), false));
        // Sequential mode: +1, written in order.
        let g = LocalityGenerator::with_parts(
            LocalityMode::Sequential,
            0x7a7f,
            [0, 0, 0x0d, 0x53, 0x7a, 0x50],
            0xf516_6776,
            at(0x013e_4e2a_fc26),
        );
        for want in ["f5166777-7a7f-bd53-7a50-013e4e2afc26", "f5166778-7a7f-bd53-7a50-013e4e2afc26"] {
            assert_eq!(g.generate().to_string(), want);
        }
    }

    #[test]
    fn lock_free_generator_has_no_duplicates_across_threads() {
        let g = Arc::new(LocalityGenerator::new(LocalityMode::Variable));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let g = Arc::clone(&g);
                std::thread::spawn(move || (0..20_000).map(|_| g.generate()).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<Comb> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 80_000);
        assert!(all.iter().all(|id| id.version() == 0xb));
    }

    #[test]
    fn sequential_seed_changes_every_ten_minutes() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let a = locality_sequential_seed(t("2012-10-15T18:50:00Z"));
        assert_eq!(a, locality_sequential_seed(t("2012-10-15T18:59:59.999Z")));
        assert_ne!(a, locality_sequential_seed(t("2012-10-15T19:00:00Z")));
        // The key for 18:50-18:59 is "20121015185"; `printf 20121015185 | md5sum` gives
        // 3f54b801 2b0d421b..., whose first four bytes read little-endian are 0x01b8543f.
        assert_eq!(a, 0x01b8_543f);
    }
}
