//! Short prefix COMBs (uuid-creator's "Short Prefix COMB", Tomas Vondra's sequential-uuids,
//! as the klokwrk article uses them): a time-interval counter in the first bytes, the rest
//! random.

use core::ops::Range;

use crate::bits;
use crate::clock::{Clock, CoarseClock};
use crate::comb::Comb;
use crate::error::Error;
use crate::rng::{RandomSource, ThreadRandom};
use crate::time::Timestamp;

/// The settings of a short prefix COMB: how long one prefix value lasts, how many bytes the
/// prefix takes, and which version nibble labels the id.
///
/// ```text
///  prefix = (unix_ms / interval) mod 2^(8 * width)
///
///  width 2, interval 60 s (the default), version 8:
///  0064xxxx-xxxx-8xxx-vxxx-xxxxxxxxxxxx    x = random, v = variant (8, 9, a or b)
///  └──┘ prefix 0x0064 = minute 100 of the current 65,536-minute (45.5-day) cycle
/// ```
///
/// The prefix is constant for one interval and wraps after `interval * 2^(8*width)`
/// (45.5 days by default), so inserts stay local in the index while the creation time is
/// hidden once the prefix has wrapped.
///
/// # Version label
///
/// Labelled version 8 by default: RFC 9562's slot for custom layouts. [`labelled_v4`]
/// labels it 4, as uuid-creator, klokwrk and sequential-uuids do, for ids that must match
/// theirs.
///
/// **MariaDB's `UUID` column type** (10.7 and later, measured on 10.11) stores versions 1-5
/// with their groups swapped, so a v4-labelled COMB loses its order there, and it rejects
/// version 8. Store short prefix COMBs in `BINARY(16)` on MySQL and MariaDB; only the default
/// v7 kind belongs in a MariaDB `UUID` column.
///
/// [`labelled_v4`]: ShortPrefix::labelled_v4
///
/// ```
/// use combkey::{ShortPrefix, Timestamp};
///
/// let sp = ShortPrefix::default();
/// let t: Timestamp = "2022-03-18T05:24:00Z".parse()?;
/// assert_eq!(sp.prefix_at(t), 0x0064); // uuid-creator's example
/// let id = sp.make(t, [0xff; 16]);
/// assert_eq!(id.to_string(), "0064ffff-ffff-8fff-bfff-ffffffffffff");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShortPrefix {
    interval_ms: u64,
    width: u8,
    version: u8,
}

impl Default for ShortPrefix {
    /// One-minute interval, 2-byte prefix, version 8.
    fn default() -> Self {
        ShortPrefix { interval_ms: 60_000, width: 2, version: 8 }
    }
}

impl ShortPrefix {
    /// Settings with `interval_ms` per prefix value and a `width`-byte prefix, version 8.
    ///
    /// `interval_ms` must be at least 1 and `width` 1 to 4.
    ///
    /// ```
    /// use combkey::{ErrorKind, ShortPrefix};
    ///
    /// assert!(ShortPrefix::new(30_000, 3).is_ok());
    /// let err = ShortPrefix::new(60_000, 5).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Config);
    /// assert_eq!(err.to_string(), "invalid short prefix width: expected 1 to 4 bytes, found 5");
    /// ```
    pub fn new(interval_ms: u64, width: u8) -> Result<Self, Error> {
        if interval_ms == 0 {
            return Err(Error::config("short prefix interval", "0 ms", "at least 1 ms"));
        }
        if !(1..=4).contains(&width) {
            return Err(Error::config("short prefix width", width, "1 to 4 bytes"));
        }
        Ok(ShortPrefix { interval_ms, width, version: 8 })
    }

    /// The same settings, labelled version 4 (as uuid-creator's `ShortPrefixCombFactory`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{ShortPrefix, Timestamp};
    ///
    /// let sp = ShortPrefix::default().labelled_v4();
    /// assert_eq!(sp.version(), 4);
    /// let id = sp.make(Timestamp::UNIX_EPOCH, [0xff; 16]);
    /// assert_eq!(id.to_string(), "0000ffff-ffff-4fff-bfff-ffffffffffff");
    /// ```
    pub const fn labelled_v4(self) -> Self {
        ShortPrefix { version: 4, ..self }
    }

    /// How long one prefix value lasts, in milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::ShortPrefix;
    ///
    /// assert_eq!(ShortPrefix::default().interval_ms(), 60_000);
    /// assert_eq!(ShortPrefix::new(1_000, 2)?.interval_ms(), 1_000);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// How many bytes the prefix takes.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::ShortPrefix;
    ///
    /// assert_eq!(ShortPrefix::default().width(), 2);
    /// assert_eq!(ShortPrefix::new(60_000, 3)?.width(), 3);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn width(&self) -> u8 {
        self.width
    }

    /// The version nibble the ids carry (8, or 4 with [`labelled_v4`](Self::labelled_v4)).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::ShortPrefix;
    ///
    /// assert_eq!(ShortPrefix::default().version(), 8);
    /// assert_eq!(ShortPrefix::default().labelled_v4().version(), 4);
    /// ```
    pub const fn version(&self) -> u8 {
        self.version
    }

    /// How many distinct prefix values there are: `2^(8 * width)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::ShortPrefix;
    ///
    /// let sp = ShortPrefix::default();
    /// assert_eq!(sp.modulus(), 65_536);
    /// // How long before a prefix comes round again: 65,536 minutes, about 45.5 days.
    /// assert_eq!(sp.modulus() * sp.interval_ms(), 3_932_160_000);
    /// assert_eq!(ShortPrefix::new(60_000, 1)?.modulus(), 256);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn modulus(&self) -> u64 {
        1 << (8 * self.width as u32)
    }

    /// The interval number (not yet wrapped) of instant `t`.
    pub(crate) fn interval_index(&self, unix_ms: i64) -> i64 {
        match i64::try_from(self.interval_ms) {
            // interval_ms >= 1 (checked by `new`), so this cannot divide by zero.
            Ok(interval) => unix_ms.div_euclid(interval),
            // An interval longer than i64::MAX ms: every instant from 1970 on is in interval
            // 0 and every earlier one in interval -1, exactly as the division would say.
            Err(_) => {
                if unix_ms < 0 {
                    -1
                } else {
                    0
                }
            }
        }
    }

    /// The prefix of ids made at `t`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{ShortPrefix, Timestamp};
    ///
    /// let sp = ShortPrefix::default();
    /// // The klokwrk article's clock: 2022-03-18T03:44:00Z starts a cycle.
    /// assert_eq!(sp.prefix_at("2022-03-18T03:44:00Z".parse()?), 0x0000);
    /// assert_eq!(sp.prefix_at("2022-03-18T03:44:59Z".parse()?), 0x0000);
    /// assert_eq!(sp.prefix_at("2022-03-18T03:45:00Z".parse()?), 0x0001);
    /// // One minute earlier, the end of the previous cycle.
    /// assert_eq!(sp.prefix_at("2022-03-18T03:43:00Z".parse::<Timestamp>()?), 0xffff);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn prefix_at(&self, t: Timestamp) -> u32 {
        self.wrap(self.interval_index(t.unix_ms()))
    }

    /// `index mod 2^(8 * width)`.
    pub(crate) fn wrap(&self, index: i64) -> u32 {
        bits::low_bytes_u32(i128::from(index), self.width)
    }

    /// The prefix an id carries (its first `width` bytes, big-endian).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ShortPrefix};
    ///
    /// let id: Comb = "00648f3b-1c2d-8e5f-9a6b-7c8d9e0f1a2b".parse()?;
    /// assert_eq!(ShortPrefix::default().prefix_of(&id), 0x0064);
    /// assert_eq!(ShortPrefix::new(60_000, 3)?.prefix_of(&id), 0x00648f);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn prefix_of(&self, id: &Comb) -> u32 {
        id.as_bytes()[..usize::from(self.width)].iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b))
    }

    /// The id for instant `t` with these 16 random bytes (bytes 0..width are replaced by the
    /// prefix, then the version and variant are set).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{ShortPrefix, Timestamp};
    ///
    /// let sp = ShortPrefix::default();
    /// let t: Timestamp = "2022-03-18T05:24:00Z".parse()?;
    /// let id = sp.make(t, [0; 16]);
    /// assert_eq!(id.to_string(), "00640000-0000-8000-8000-000000000000");
    /// assert_eq!(sp.prefix_of(&id), sp.prefix_at(t));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn make(&self, t: Timestamp, random: [u8; 16]) -> Comb {
        let mut bytes = random;
        let prefix = self.prefix_at(t).to_be_bytes();
        let w = usize::from(self.width);
        bytes[..w].copy_from_slice(&prefix[4 - w..]);
        Comb::from_bytes(bytes).with_version(self.version)
    }

    /// The interval the id's prefix stands for that lies nearest to `near`: the candidate
    /// creation instants `[start, end)`.
    ///
    /// A prefix names one interval in every cycle of `interval * 2^(8*width)`; this picks the
    /// one closest to a time you know the id is near (the server's clock, a row's
    /// `created_at`).
    ///
    /// ```
    /// use combkey::{Comb, ShortPrefix, Timestamp};
    ///
    /// let sp = ShortPrefix::default();
    /// let id: Comb = "0064ffff-ffff-8fff-bfff-ffffffffffff".parse()?;
    /// let near: Timestamp = "2022-03-18T06:00:00Z".parse()?;
    /// let range = sp.interval_near(&id, near);
    /// assert_eq!(range.start.to_string(), "2022-03-18T05:24:00.000Z");
    /// assert_eq!(range.end.to_string(), "2022-03-18T05:25:00.000Z");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn interval_near(&self, id: &Comb, near: Timestamp) -> Range<Timestamp> {
        let index = self.interval_index(near.unix_ms()) + self.signed_distance(self.prefix_of(id), near);
        let interval = i128::from(self.interval_ms);
        let start = i128::from(index) * interval;
        Timestamp::saturating_from_i128(start)..Timestamp::saturating_from_i128(start + interval)
    }

    /// How many intervals `prefix` lies ahead of (positive) or behind (negative) the prefix
    /// of `near`, taking the nearer way round the cycle.
    pub(crate) fn signed_distance(&self, prefix: u32, near: Timestamp) -> i64 {
        let m = 1i64 << (8 * u32::from(self.width));
        let d = (i64::from(prefix) - i64::from(self.prefix_at(near))).rem_euclid(m);
        if d > m / 2 { d - m } else { d }
    }
}

/// Makes short prefix COMBs with a clock and a random source.
///
/// ```
/// use combkey::{FixedClock, SeededRandom, ShortPrefix, ShortPrefixGenerator, Timestamp};
///
/// // 2022-03-18T03:44:00Z: prefix 0x0000 (the klokwrk article's example).
/// let now = Timestamp::from_unix_ms(1_647_575_040_000);
/// let g = ShortPrefixGenerator::with_clock_and_random(ShortPrefix::default(), FixedClock::new(now), SeededRandom::new(1));
/// let id = g.generate();
/// assert!(id.to_string().starts_with("0000"));
/// assert_eq!((id.version(), id.is_rfc_variant()), (8, true));
/// ```
#[derive(Debug)]
pub struct ShortPrefixGenerator<C = CoarseClock, R = ThreadRandom> {
    config: ShortPrefix,
    clock: C,
    random: R,
}

impl ShortPrefixGenerator {
    /// A generator with these settings on the [`CoarseClock`] and the thread-local CSPRNG.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{ShortPrefix, ShortPrefixGenerator, Timestamp};
    ///
    /// let generator = ShortPrefixGenerator::new(ShortPrefix::default());
    /// let id = generator.generate();
    /// assert_eq!((id.version(), id.is_rfc_variant()), (8, true));
    /// // Its prefix names the current minute (the coarse clock may be a tick behind).
    /// let minute = generator.config().interval_near(&id, Timestamp::now());
    /// assert!(Timestamp::now().unix_ms() - minute.start.unix_ms() < 120_000);
    /// ```
    pub const fn new(config: ShortPrefix) -> Self {
        Self::with_clock_and_random(config, CoarseClock, ThreadRandom)
    }
}

impl<C: Clock, R: RandomSource> ShortPrefixGenerator<C, R> {
    /// A generator with these settings, clock and random source.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{FixedClock, SeededRandom, ShortPrefix, ShortPrefixGenerator, Timestamp};
    ///
    /// let now = FixedClock::new("2022-03-18T05:24:00Z".parse()?);
    /// let generator = ShortPrefixGenerator::with_clock_and_random(ShortPrefix::default(), now, SeededRandom::new(1));
    /// assert!(generator.generate().to_string().starts_with("0064"));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn with_clock_and_random(config: ShortPrefix, clock: C, random: R) -> Self {
        ShortPrefixGenerator { config, clock, random }
    }

    /// The settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{ShortPrefix, ShortPrefixGenerator};
    ///
    /// let generator = ShortPrefixGenerator::new(ShortPrefix::new(30_000, 3)?);
    /// assert_eq!(generator.config().width(), 3);
    /// assert_eq!(generator.config().interval_ms(), 30_000);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn config(&self) -> &ShortPrefix {
        &self.config
    }

    /// A new id for the clock's current time.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{FixedClock, ShortPrefix, ShortPrefixGenerator, Timestamp};
    ///
    /// let now = FixedClock::new("2022-03-18T05:24:00Z".parse()?);
    /// let generator = ShortPrefixGenerator::with_clock_and_random(ShortPrefix::default(), now, combkey::ThreadRandom);
    /// let (a, b) = (generator.generate(), generator.generate());
    /// // Same minute, same prefix; the other bits are random, so no order within it.
    /// assert_eq!(&a.as_bytes()[..2], &[0x00, 0x64]);
    /// assert_eq!(&b.as_bytes()[..2], &[0x00, 0x64]);
    /// assert_ne!(a, b);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn generate(&self) -> Comb {
        let mut random = [0u8; 16];
        self.random.fill_bytes(&mut random);
        self.config.make(self.clock.now(), random)
    }

    /// Fills `out` with new ids for the clock's current time (one clock read; the random
    /// bytes drawn 64 ids at a time).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, FixedClock, SeededRandom, ShortPrefix, ShortPrefixGenerator};
    ///
    /// let now = FixedClock::new("2022-03-18T03:44:00Z".parse()?);
    /// let generator = ShortPrefixGenerator::with_clock_and_random(ShortPrefix::default(), now, SeededRandom::new(3));
    /// let mut ids = vec![Comb::NIL; 100];
    /// generator.fill(&mut ids);
    /// assert!(ids.iter().all(|id| id.to_string().starts_with("0000") && id.version() == 8));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn fill(&self, out: &mut [Comb]) {
        let now = self.clock.now();
        let mut bytes = [0u8; 16 * 64];
        for chunk in out.chunks_mut(64) {
            let random = &mut bytes[..16 * chunk.len()];
            self.random.fill_bytes(random);
            for (slot, r) in chunk.iter_mut().zip(random.chunks_exact(16)) {
                let mut b = [0u8; 16];
                b.copy_from_slice(r);
                *slot = self.config.make(now, b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FixedClock, SeededRandom};

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn uuid_creator_and_klokwrk_prefixes() {
        let sp = ShortPrefix::default();
        // The klokwrk article: at 2022-03-18T03:44:00Z the 2-byte minute prefix is 0x0000, so
        // 100 minutes later (uuid-creator's example) it is 0x0064.
        assert_eq!(sp.prefix_at(t("2022-03-18T03:44:00Z")), 0x0000);
        assert_eq!(sp.prefix_at(t("2022-03-18T03:43:59.999Z")), 0xffff);
        assert_eq!(sp.prefix_at(t("2022-03-18T05:24:00Z")), 0x0064);
        assert_eq!(sp.prefix_at(t("2022-03-18T05:24:59.999Z")), 0x0064);
    }

    #[test]
    fn widths_and_intervals() {
        let at = t("2022-03-18T05:24:00Z").unix_ms();
        for width in 1..=4u8 {
            for interval in [1u64, 1000, 15_000, 60_000, 3_600_000] {
                let sp = ShortPrefix::new(interval, width).unwrap();
                let want = (at / i64::try_from(interval).unwrap()).rem_euclid(1 << (8 * u32::from(width)));
                let id = sp.make(Timestamp::from_unix_ms(at), [0xa5; 16]);
                assert_eq!(i64::from(sp.prefix_of(&id)), want, "width {width} interval {interval}");
                assert_eq!(id.version(), 8);
                assert!(id.is_rfc_variant());
                // Bytes after the prefix are the random ones (but for version/variant).
                assert!(id.as_bytes()[usize::from(width)..6].iter().all(|&b| b == 0xa5));
            }
        }
    }

    #[test]
    fn v4_label() {
        let sp = ShortPrefix::default().labelled_v4();
        let id = sp.make(Timestamp::UNIX_EPOCH, [0; 16]);
        assert_eq!(id.to_string(), "00000000-0000-4000-8000-000000000000");
        assert_eq!(uuid::Uuid::from(id).get_version_num(), 4);
    }

    #[test]
    fn rejects_bad_settings() {
        assert_eq!(
            ShortPrefix::new(0, 2).unwrap_err().to_string(),
            "invalid short prefix interval: expected at least 1 ms, found 0 ms"
        );
        assert!(ShortPrefix::new(1, 0).is_err());
        assert!(ShortPrefix::new(u64::MAX, 4).is_ok());
    }

    #[test]
    fn interval_near_wraps_the_cycle() {
        let sp = ShortPrefix::default();
        let near = t("2022-03-18T03:44:30Z"); // prefix 0x0000
        let behind: Comb = "fff6ffff-ffff-8fff-bfff-ffffffffffff".parse().unwrap();
        let r = sp.interval_near(&behind, near);
        assert_eq!(r.start, t("2022-03-18T03:34:00Z"));
        let ahead: Comb = "000affff-ffff-8fff-bfff-ffffffffffff".parse().unwrap();
        assert_eq!(sp.interval_near(&ahead, near).start, t("2022-03-18T03:54:00Z"));
        // Extreme settings do not panic.
        let huge = ShortPrefix::new(u64::MAX, 4).unwrap();
        let _ = huge.interval_near(&Comb::MAX, Timestamp::from_unix_ms(i64::MIN));
        let _ = huge.interval_near(&Comb::MAX, Timestamp::from_unix_ms(i64::MAX));
    }

    #[test]
    fn generator_uses_clock_and_fills() {
        let clock = std::sync::Arc::new(FixedClock::new(Timestamp::from_unix_ms(1_647_575_040_000 + 100 * 60_000)));
        let g = ShortPrefixGenerator::with_clock_and_random(
            ShortPrefix::default(),
            std::sync::Arc::clone(&clock),
            SeededRandom::new(3),
        );
        let mut ids = [Comb::NIL; 50];
        g.fill(&mut ids);
        assert!(ids.iter().all(|id| id.to_string().starts_with("0064") && id.version() == 8));
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 50);
        clock.advance(std::time::Duration::from_secs(60));
        assert!(g.generate().to_string().starts_with("0065"));
    }
}
