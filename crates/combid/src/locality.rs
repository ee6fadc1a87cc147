//! Groupon's locality UUID, version `b` (seed 002).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::clock::{Clock, SystemClock};
use crate::comb::Comb;
use crate::error::{Error, Kind};
use crate::rng::{RandomSource, ThreadRandom};
use crate::time::Timestamp;

/// The step of the variable-mode counter: the prime Groupon's library adds per id.
pub const LOCALITY_INCREMENT: u32 = 198_491_317;

/// How a [`LocalityGenerator`] advances and writes its counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocalityMode {
    /// The default: add [`LOCALITY_INCREMENT`] and write the counter nibble-reversed, so the
    /// first hex digit changes fastest and writes spread over a cluster's shards.
    Variable,
    /// Add 1 and write the counter in order, starting from a value derived from the UTC date
    /// and time ([`locality_sequential_seed`]), so machines find similar values and writes
    /// with these keys stay together.
    Sequential,
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
/// ```
/// let id: combid::Comb = "20be0ffc-314a-bd53-7a50-013a65ca76d2".parse()?;
/// let f = combid::LocalityFields::parse(&id)?;
/// assert_eq!(f.counter, 3_488_672_514);
/// assert_eq!(f.pid, 12_618);
/// assert_eq!(f.mac_fragment, [0, 0, 0x0d, 0x53, 0x7a, 0x50]);
/// assert_eq!(f.timestamp.to_string(), "2012-10-15T18:58:18.450Z");
/// # Ok::<(), combid::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalityFields {
    /// The counter as variable mode (the default) writes it: the first group nibble-reversed.
    pub counter: u32,
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
            return Err(Error(Kind::Version { expected: 0xb, found: id.version() }));
        }
        let b = id.as_bytes();
        let first = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        Ok(LocalityFields {
            counter: reverse_nibbles(first),
            counter_sequential: first,
            pid: u16::from_be_bytes([b[4], b[5]]),
            mac_fragment: [0, 0, b[6] & 0x0f, b[7], b[8], b[9]],
            // OK because 48 bits always fit in i64.
            timestamp: Timestamp::from_unix_ms(b[10..16].iter().fold(0i64, |acc, &x| (acc << 8) | i64::from(x))),
        })
    }
}

/// The hex digits of `x` in reverse order (`0xcff0eb02` <-> `0x20be0ffc`).
fn reverse_nibbles(x: u32) -> u32 {
    let y = x.swap_bytes();
    ((y & 0x0f0f_0f0f) << 4) | ((y >> 4) & 0x0f0f_0f0f)
}

/// Makes locality UUIDs. Lock-free: one atomic add per id.
///
/// ```
/// use combid::{FixedClock, LocalityFields, LocalityGenerator, LocalityMode};
///
/// let g = LocalityGenerator::with_parts(LocalityMode::Sequential, 12_618, [0, 0, 0x0d, 0x53, 0x7a, 0x50], 41, FixedClock::new(1_350_327_498_450));
/// let id = g.generate();
/// assert_eq!(id.to_string(), "0000002a-314a-bd53-7a50-013a65ca76d2");
/// assert_eq!(LocalityFields::parse(&id)?.counter_sequential, 42);
/// # Ok::<(), combid::Error>(())
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
                // OK because we keep the low 32 bits of a random word.
                #[allow(clippy::cast_possible_truncation)]
                let r = ThreadRandom.next_u64() as u32;
                r
            }
            LocalityMode::Sequential => locality_sequential_seed(Timestamp::now()),
        };
        let pid = u16::try_from(std::process::id() % 65_536).unwrap_or(0);
        Self::with_parts(mode, pid, first_active_mac().unwrap_or([0; 6]), counter, SystemClock)
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
        let first = match self.mode {
            LocalityMode::Variable => reverse_nibbles(count),
            LocalityMode::Sequential => count,
        };
        let c = first.to_be_bytes();
        let p = self.pid.to_be_bytes();
        let t = self.clock.now_unix_ms().min((1 << 48) - 1).to_be_bytes();
        Comb::from_bytes([
            c[0],
            c[1],
            c[2],
            c[3],
            p[0],
            p[1],
            0xb0 | self.mac[0],
            self.mac[1],
            self.mac[2],
            self.mac[3],
            t[2],
            t[3],
            t[4],
            t[5],
            t[6],
            t[7],
        ])
    }
}

/// The sequential-mode start value Groupon's library derives from the time, so machines
/// started near the same time agree: the first four bytes (little-endian) of the MD5 of the
/// UTC time formatted `yyyyMMddHHmm` cut to 11 characters (10-minute precision).
///
/// (Seed 002 says "a hash of the current date and hour"; the library's code hashes to the
/// ten minutes, which is what this follows so the values match.)
pub fn locality_sequential_seed(t: Timestamp) -> u32 {
    let s = t.to_string(); // 2012-10-15T18:58:18.450Z
    let b = s.as_bytes();
    // yyyy MM dd HH m
    let key: Vec<u8> = [&b[0..4], &b[5..7], &b[8..10], &b[11..13], &b[14..15]].concat();
    let d = md5(&key);
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

/// MD5 (RFC 1321), for [`locality_sequential_seed`] only: no security rests on it.
fn md5(input: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14,
        20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6,
        10, 15, 21,
    ];
    let k: [u32; 64] = core::array::from_fn(|i| {
        // K[i] = floor(2^32 * |sin(i + 1)|), as RFC 1321 defines it.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        // OK because |sin| < 1, so the product is below 2^32.
        let v = ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32;
        v
    });
    let mut h: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let mut msg = input.to_vec();
    let bit_len = (input.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    for block in msg.chunks_exact(64) {
        let m: [u32; 16] = core::array::from_fn(|i| {
            u32::from_le_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]])
        });
        let [mut a, mut b, mut c, mut d] = h;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let rotated = a.wrapping_add(f).wrapping_add(k[i]).wrapping_add(m[g]).rotate_left(S[i]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(rotated);
        }
        h = [h[0].wrapping_add(a), h[1].wrapping_add(b), h[2].wrapping_add(c), h[3].wrapping_add(d)];
    }
    let mut out = [0u8; 16];
    for (i, w) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::FixedClock;

    #[test]
    fn seed_vector() {
        let id: Comb = "20be0ffc-314a-bd53-7a50-013a65ca76d2".parse().unwrap();
        let f = LocalityFields::parse(&id).unwrap();
        assert_eq!(f.counter, 3_488_672_514);
        assert_eq!(f.pid, 12_618);
        assert_eq!(f.mac_fragment, [0, 0, 0x0d, 0x53, 0x7a, 0x50]);
        assert_eq!(f.timestamp.unix_ms(), 1_350_327_498_450);
        assert_eq!(LocalityFields::parse(&Comb::new()).unwrap_err().kind(), crate::ErrorKind::Version);
    }

    #[test]
    fn generator_reproduces_the_seed_vector() {
        // The counter before the id was 3,488,672,514 - the increment.
        let g = LocalityGenerator::with_parts(
            LocalityMode::Variable,
            12_618,
            [0xaa, 0xbb, 0x0d, 0x53, 0x7a, 0x50],
            3_488_672_514u32.wrapping_sub(LOCALITY_INCREMENT),
            FixedClock::new(1_350_327_498_450),
        );
        assert_eq!(g.generate().to_string(), "20be0ffc-314a-bd53-7a50-013a65ca76d2");
    }

    #[test]
    fn seed_sequences_of_both_modes() {
        // Seed 002's variable-mode sequence: successive counters differ by the increment.
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
        // Those ids parse, and their first hex digits vary from one to the next. (Their counters
        // do not follow one constant step: the differences are 265,600,181 mostly, but not
        // always, so the sample cannot be regenerated; the library's step is 198,491,317.)
        let fields: Vec<LocalityFields> =
            variable.iter().map(|s| LocalityFields::parse(&s.parse().unwrap()).unwrap()).collect();
        assert!(fields.iter().all(|f| f.pid == 0x7a7f && f.mac_fragment == [0, 0, 0x0d, 0x53, 0x7a, 0x50]));
        // Our variable-mode ids: counters one step apart, first hex digit changing fastest.
        let g = LocalityGenerator::with_parts(
            LocalityMode::Variable,
            0x7a7f,
            [0, 0, 0x0d, 0x53, 0x7a, 0x50],
            fields[0].counter,
            FixedClock::new(0x013e_4e2a_fbde),
        );
        let ours: Vec<Comb> = (0..8).map(|_| g.generate()).collect();
        let ours_fields: Vec<LocalityFields> = ours.iter().map(|id| LocalityFields::parse(id).unwrap()).collect();
        for w in ours_fields.windows(2) {
            assert_eq!(w[1].counter.wrapping_sub(w[0].counter), LOCALITY_INCREMENT);
        }
        for w in ours.windows(2) {
            assert_ne!(w[0].to_string()[..1], w[1].to_string()[..1], "{} then {}", w[0], w[1]);
        }
        assert!(ours.iter().all(|id| id.to_string().ends_with("-7a7f-bd53-7a50-013e4e2afbde")));
        // Sequential mode: +1, written in order.
        let g = LocalityGenerator::with_parts(
            LocalityMode::Sequential,
            0x7a7f,
            [0, 0, 0x0d, 0x53, 0x7a, 0x50],
            0xf516_6776,
            FixedClock::new(0x013e_4e2a_fc26),
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
    fn md5_rfc1321_vectors() {
        let hex = |d: [u8; 16]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(hex(md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(hex(md5(b"message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
        assert_eq!(
            hex(md5(b"12345678901234567890123456789012345678901234567890123456789012345678901234567890")),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }

    #[test]
    fn sequential_seed_changes_every_ten_minutes() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let a = locality_sequential_seed(t("2012-10-15T18:50:00Z"));
        assert_eq!(a, locality_sequential_seed(t("2012-10-15T18:59:59.999Z")));
        assert_ne!(a, locality_sequential_seed(t("2012-10-15T19:00:00Z")));
        // The key for 18:50-18:59 is "20121015185", its MD5 read little-endian.
        let d = md5(b"20121015185");
        assert_eq!(a, u32::from_le_bytes([d[0], d[1], d[2], d[3]]));
    }
}
