//! RT.Comb (Richard Tallent, <https://github.com/richardtallent/RT.Comb>): the .NET
//! library's three COMB layouts, its no-repeat timestamps, and the lossless conversion
//! between its `Sql` layout and our public form.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use crate::bits::{self, MS_PER_DAY};
use crate::clock::{Clock, saturating_ms};
use crate::comb::Comb;
use crate::error::Error;
use crate::time::Timestamp;

/// One of RT.Comb's providers: where the timestamp goes and how it is encoded.
///
/// All byte positions are *display* positions (the order of the GUID string):
///
/// ```text
///  00112233-4455-6677-8899-AABBCCDDEEFF
///  xxxxxxxx-xxxx-4xxx-vxxx-MMMMMMMMMMMM   Sql:        Unix ms (48 bits) in bytes 10..15
///  MMMMMMMM-MMMM-4xxx-vxxx-xxxxxxxxxxxx   PostgreSql: Unix ms (48 bits) in bytes 0..5
///  xxxxxxxx-xxxx-4xxx-vxxx-DDDDTTTTTTTT   Legacy:     SQL Server datetime: days since
///                                         1900-01-01 (16 bits), 1/300 s since midnight (32)
///  x = the base GUID's bits, 4 = its version, v = its variant
/// ```
///
/// The base GUID's other bits (its version and variant included) are kept.
///
/// ```
/// use combkey::Comb;
/// use combkey::layouts::RtCombLayout;
///
/// // RT.Comb's README: its T-SQL example's value decodes to 2002-01-10 23:40:35.000.
/// let id: Comb = "E25AFE33-DB2D-4502-9BF0-919001862CC4".parse()?;
/// assert_eq!(RtCombLayout::Legacy.timestamp(&id)?.to_string(), "2002-01-10T23:40:35.000Z");
/// let sql: Comb = "d01c25cc-63a7-47cc-b5ba-018e5f3bff48".parse()?;
/// assert_eq!(RtCombLayout::Sql.timestamp(&sql)?.to_string(), "2024-03-21T04:19:11.304Z");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RtCombLayout {
    /// `RT.Comb.Provider.Sql`: `SqlCombProvider` with `UnixDateTimeStrategy`.
    Sql,
    /// `RT.Comb.Provider.PostgreSql`: `PostgreSqlCombProvider` with `UnixDateTimeStrategy`.
    PostgreSql,
    /// `RT.Comb.Provider.Legacy`: `SqlCombProvider` with `SqlDateTimeStrategy`.
    Legacy,
}

/// 1900-01-01T00:00:00Z in Unix milliseconds.
const SQL_EPOCH_MS: i64 = -2_208_988_800_000;

impl RtCombLayout {
    /// The COMB RT.Comb's `Create(base, t)` returns: `base` with the timestamp written in.
    ///
    /// Fails when `t` cannot be encoded: before 1970 or past 2^48 ms for `Sql` and
    /// `PostgreSql`; outside 1900-01-01 to 2079-06-06 for `Legacy` (an error, never a wrap).
    pub fn create(self, t: Timestamp, base: Comb) -> Result<Comb, Error> {
        let mut b = base.into_bytes();
        match self {
            RtCombLayout::Sql => bits::write_u48(&mut b, 10, bits::unix_ms48(t)?),
            RtCombLayout::PostgreSql => bits::write_u48(&mut b, 0, bits::unix_ms48(t)?),
            RtCombLayout::Legacy => b[10..16].copy_from_slice(&legacy_bytes(t)?),
        }
        Ok(Comb::from_bytes(b))
    }

    /// The time RT.Comb's `GetTimestamp` reads from `id`.
    ///
    /// `Legacy` fails, as RT.Comb does, when the time-of-day part exceeds 24 hours. Its time
    /// is the nearest whole millisecond, as SQL Server shows a `datetime` and as RT.Comb reads
    /// it on Mono, .NET Framework and .NET 6 and earlier, whose `DateTime.AddMilliseconds`
    /// rounds to a whole one. On .NET 7 and later that method keeps the fraction (Microsoft's
    /// ".NET 7 breaking change: DateTime addition methods precision"), so RT.Comb there
    /// returns `ticks * 10 / 3` ms to the 100 ns (2 ticks: 6.6667 ms, where this returns 7):
    /// never more than half a millisecond from this.
    ///
    /// ```
    /// use combkey::Comb;
    /// use combkey::layouts::RtCombLayout;
    ///
    /// // 1900-01-01 plus 0 days and 2 ticks of 1/300 s: SQL Server shows .007.
    /// let id: Comb = "00000000-0000-4000-8000-000000000002".parse()?;
    /// assert_eq!(RtCombLayout::Legacy.timestamp(&id)?.to_string(), "1900-01-01T00:00:00.007Z");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn timestamp(self, id: &Comb) -> Result<Timestamp, Error> {
        let b = id.as_bytes();
        match self {
            RtCombLayout::Sql => Ok(bits::read_unix_ms48(b, 10)),
            RtCombLayout::PostgreSql => Ok(bits::read_unix_ms48(b, 0)),
            RtCombLayout::Legacy => {
                let days = i64::from(u16::from_be_bytes([b[10], b[11]]));
                let ticks = u32::from_be_bytes([b[12], b[13], b[14], b[15]]);
                if ticks > 86_400 * 300 {
                    return Err(Error::out_of_range(
                        "RT.Comb legacy time of day",
                        format!("{ticks} ticks of 1/300 s"),
                        "at most 25,920,000 (24 hours)",
                    ));
                }
                // Nearest millisecond, as SQL Server shows datetime (2 ticks = .007).
                let ms = (i64::from(ticks) * 10 + 1) / 3;
                Ok(Timestamp::from_unix_ms(SQL_EPOCH_MS + days * MS_PER_DAY + ms))
            }
        }
    }
}

/// `base` with the `Legacy` time of `t` rounded to the nearest 1/300 s, where RT.Comb's
/// `Create` truncates: the inverse of [`RtCombLayout::timestamp`]'s nearest millisecond, so
/// a legacy key converted to v7 (at the millisecond it reads as) converts back to itself.
pub(crate) fn legacy_nearest(t: Timestamp, base: Comb) -> Result<Comb, Error> {
    let range_error = || Error::out_of_range("time for an RT.Comb legacy COMB", t, "1900-01-01 to 2079-06-06");
    let since = t.unix_ms().checked_sub(SQL_EPOCH_MS).filter(|s| *s >= 0).ok_or_else(range_error)?;
    let days = u16::try_from(since / MS_PER_DAY).map_err(|_| range_error())?.to_be_bytes();
    // A read gives ms = round(ticks * 10 / 3), within 1/3 ms, so round(ms * 3 / 10) is ticks.
    let ticks = u32::try_from(((since % MS_PER_DAY) * 3 + 5) / 10).map_err(|_| range_error())?.to_be_bytes();
    let mut b = base.into_bytes();
    b[10..16].copy_from_slice(&[days[0], days[1], ticks[0], ticks[1], ticks[2], ticks[3]]);
    Ok(Comb::from_bytes(b))
}

fn legacy_bytes(t: Timestamp) -> Result<[u8; 6], Error> {
    let range_error = || Error::out_of_range("time for an RT.Comb legacy COMB", t, "1900-01-01 to 2079-06-06");
    let since = t.unix_ms().checked_sub(SQL_EPOCH_MS).ok_or_else(range_error)?;
    if since < 0 {
        return Err(range_error());
    }
    // A day count of 16 bits: 1900-01-01 plus at most 65,535 days.
    let days = u16::try_from(since / MS_PER_DAY).map_err(|_| range_error())?.to_be_bytes();
    let ms_of_day = since % MS_PER_DAY;
    // RT.Comb (and SQL Server) compute the 1/300 s ticks in floating point and truncate:
    // (int)(TotalMilliseconds * (3d / 10d)). Do the same so ids match theirs to the bit.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss, clippy::cast_sign_loss)]
    // OK because ms_of_day < 86,400,000 is exact in f64 and the product fits in u32.
    let ticks = (ms_of_day as f64 * (3.0 / 10.0)) as u32;
    let t = ticks.to_be_bytes();
    Ok([days[0], days[1], t[0], t[1], t[2], t[3]])
}

/// A clock that never repeats: each reading is at least `increment_ms` after the last one
/// (RT.Comb's `UtcNoRepeatTimestampProvider`), so COMBs made from it sort in creation order
/// even when the real clock is coarser than the insert rate. Thread-safe without a lock.
///
/// The price is a time slip: at high rates the readings run ahead of the real clock by up
/// to `increment_ms` per call.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use combkey::{Clock, FixedClock, Timestamp};
/// use combkey::layouts::NoRepeatClock;
///
/// let real = Arc::new(FixedClock::new(Timestamp::from_unix_ms(613)));
/// let clock = NoRepeatClock::new(Arc::clone(&real), Duration::from_millis(4));
/// let ms = || clock.now().unix_ms();
/// assert_eq!([ms(), ms(), ms()], [613, 617, 621]);
/// ```
#[derive(Debug)]
pub struct NoRepeatClock<C> {
    inner: C,
    increment_ms: i64,
    /// The last reading handed out; `i64::MIN` before the first.
    last: AtomicI64,
}

impl<C: Clock> NoRepeatClock<C> {
    /// Wraps `inner`; RT.Comb's default increment is 4 ms (enough for the 1/300 s legacy
    /// layout); 1 ms suffices for the Unix-ms layouts.
    pub fn new(inner: C, increment: Duration) -> Self {
        NoRepeatClock { inner, increment_ms: saturating_ms(increment), last: AtomicI64::new(i64::MIN) }
    }
}

impl<C: Clock> Clock for NoRepeatClock<C> {
    fn now(&self) -> Timestamp {
        let now = self.inner.now().unix_ms();
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            // "If now is less than IncrementMs after the last value, use last + IncrementMs."
            let next = if last != i64::MIN && now.saturating_sub(last) < self.increment_ms {
                last.saturating_add(self.increment_ms)
            } else {
                now
            };
            match self.last.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Timestamp::from_unix_ms(next),
                Err(actual) => last = actual,
            }
        }
    }
}

/// Our public v7 id as an RT.Comb `Sql` COMB, and back: a bijection between UUIDv7s and
/// `Sql` COMBs on a version-4, RFC-variant base (what `Guid.NewGuid()` makes).
///
/// The milliseconds move to display bytes 10..15; the 74 other bits that are neither version
/// nor variant keep their order, laid into the positions SQL Server compares next (8, 9, 7,
/// 6, 5..0). So the result is a well-formed RT.Comb COMB that RT.Comb reads the time from,
/// and SQL Server sorts converted ids in the same order as the public ids.
pub(crate) fn v7_to_rtcomb_sql(id: &Comb) -> Comb {
    let p = id.as_bytes();
    let mut s = [0u8; 16];
    bits::write_u48(&mut s, 10, bits::read_u48(p, 0));
    let f = free_bits_v7(p);
    // The 74 bits in SQL Server's comparison order: 8 (low 6), 9, 7, 6 (low 4), 5, 4, 3, 2, 1, 0.
    s[8] = 0x80 | take(f, 68, 0x3f);
    s[9] = take(f, 60, 0xff);
    s[7] = take(f, 52, 0xff);
    s[6] = 0x40 | take(f, 48, 0x0f);
    for (shift, i) in [(40u32, 5usize), (32, 4), (24, 3), (16, 2), (8, 1), (0, 0)] {
        s[i] = take(f, shift, 0xff);
    }
    Comb::from_bytes(s)
}

/// The inverse of [`v7_to_rtcomb_sql`].
pub(crate) fn rtcomb_sql_to_v7(id: &Comb) -> Comb {
    let s = id.as_bytes();
    let mut f: u128 = u128::from(s[8] & 0x3f);
    f = (f << 8) | u128::from(s[9]);
    f = (f << 8) | u128::from(s[7]);
    f = (f << 4) | u128::from(s[6] & 0x0f);
    for i in [5usize, 4, 3, 2, 1, 0] {
        f = (f << 8) | u128::from(s[i]);
    }
    let mut p = [0u8; 16];
    bits::write_u48(&mut p, 0, bits::read_u48(s, 10));
    p[6] = 0x70 | take(f, 70, 0x0f);
    p[7] = take(f, 62, 0xff);
    p[8] = 0x80 | take(f, 56, 0x3f);
    for (byte, shift) in p[9..16].iter_mut().zip([48u32, 40, 32, 24, 16, 8, 0]) {
        *byte = take(f, shift, 0xff);
    }
    Comb::from_bytes(p)
}

/// The 74 bits of a v7 id after the timestamp that are neither version nor variant, in order.
fn free_bits_v7(p: &[u8; 16]) -> u128 {
    let mut f = u128::from(p[6] & 0x0f);
    f = (f << 8) | u128::from(p[7]);
    f = (f << 6) | u128::from(p[8] & 0x3f);
    for &b in &p[9..16] {
        f = (f << 8) | u128::from(b);
    }
    f
}

/// The byte of `f` starting at bit `shift`, masked.
fn take(f: u128, shift: u32, mask: u8) -> u8 {
    (f >> shift).to_le_bytes()[0] & mask
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{FixedClock, RandomSource, SeededRandom};

    fn ms(v: i64) -> Timestamp {
        Timestamp::from_unix_ms(v)
    }

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn rtcomb_readme_vectors() {
        let legacy: Comb = "E25AFE33-DB2D-4502-9BF0-919001862CC4".parse().unwrap();
        assert_eq!(RtCombLayout::Legacy.timestamp(&legacy), Ok(t("2002-01-10T23:40:35Z")));
        let sql: Comb = "d01c25cc-63a7-47cc-b5ba-018e5f3bff48".parse().unwrap();
        assert_eq!(RtCombLayout::Sql.timestamp(&sql), Ok(t("2024-03-21T04:19:11.304Z")));
        // Writing the README's times into its ids' bases gives its ids back.
        assert_eq!(RtCombLayout::Legacy.create(t("2002-01-10T23:40:35Z"), legacy), Ok(legacy));
        assert_eq!(RtCombLayout::Sql.create(t("2024-03-21T04:19:11.304Z"), sql), Ok(sql));
    }

    #[test]
    fn postgres_layout_writes_the_first_six_bytes_and_keeps_the_version() {
        let base: Comb = "e25afe33-db2d-4502-9bf0-919001862cc4".parse().unwrap();
        let id = RtCombLayout::PostgreSql.create(t("2024-03-21T04:19:11.304Z"), base).unwrap();
        assert_eq!(id.to_string(), "018e5f3b-ff48-4502-9bf0-919001862cc4");
        assert_eq!(RtCombLayout::PostgreSql.timestamp(&id), Ok(t("2024-03-21T04:19:11.304Z")));
    }

    #[test]
    fn legacy_ticks_match_sql_server_rounding() {
        let base = Comb::NIL;
        // SQL Server stores datetime in 1/300 s: .007 is 2 ticks and reads back as .007.
        let id = RtCombLayout::Legacy.create(t("2000-01-01T00:00:00.007Z"), base).unwrap();
        assert_eq!(&id.as_bytes()[12..16], &[0, 0, 0, 2]);
        assert_eq!(RtCombLayout::Legacy.timestamp(&id), Ok(t("2000-01-01T00:00:00.007Z")));
        // .010 is exactly 3 ticks.
        let id = RtCombLayout::Legacy.create(t("2000-01-01T00:00:00.010Z"), base).unwrap();
        assert_eq!(&id.as_bytes()[12..16], &[0, 0, 0, 3]);
    }

    #[test]
    fn legacy_range_is_an_error_not_a_wrap() {
        for (at, ok) in [
            ("1899-12-31T23:59:59.999Z", false),
            ("1900-01-01T00:00:00Z", true),
            ("2079-06-06T23:59:59.999Z", true),
            ("2079-06-07T00:00:00Z", false),
        ] {
            let r = RtCombLayout::Legacy.create(t(at), Comb::NIL);
            assert_eq!(r.is_ok(), ok, "{at}: {r:?}");
            if let Err(e) = r {
                assert!(e.to_string().contains("1900-01-01 to 2079-06-06"), "{e}");
            }
        }
        assert!(RtCombLayout::Legacy.create(Timestamp::from_unix_ms(i64::MIN), Comb::NIL).is_err());
        assert!(RtCombLayout::Legacy.create(Timestamp::from_unix_ms(i64::MAX), Comb::NIL).is_err());
        let bad: Comb = "00000000-0000-4000-8000-0000ffffffff".parse().unwrap();
        assert!(RtCombLayout::Legacy.timestamp(&bad).unwrap_err().to_string().contains("24 hours"));
        assert!(RtCombLayout::Sql.create(t("1969-12-31T23:59:59Z"), Comb::NIL).is_err());
    }

    #[test]
    fn no_repeat_table_from_rtcomb_readme() {
        // RT.Comb's README table: DateTime.UtcNow in a tight loop vs. what the provider returns.
        let real = Arc::new(FixedClock::new(ms(0)));
        let clock = NoRepeatClock::new(Arc::clone(&real), Duration::from_millis(4));
        let base = 7_730_613i64; // 02:08:50.613 as ms of the day
        let readings = [613i64, 613, 613, 617, 617, 617];
        let expected = [613i64, 617, 621, 625, 629, 633];
        // (The README prints .632 for the last row, which contradicts its own rule
        // "the previous value plus IncrementMs": .629 + 4 ms = .633.)
        for (r, e) in readings.iter().zip(expected) {
            real.set(ms(base - 613 + r));
            assert_eq!(clock.now().unix_ms(), base - 613 + e, "reading .{r}");
        }
        // Once the real clock is 4 ms past the last value, it is used again.
        real.set(ms(base - 613 + 640));
        assert_eq!(clock.now().unix_ms(), base - 613 + 640);
    }

    #[test]
    fn no_repeat_is_strictly_increasing_across_threads() {
        let clock = Arc::new(NoRepeatClock::new(FixedClock::new(ms(1_000_000)), Duration::from_millis(1)));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = Arc::clone(&clock);
                std::thread::spawn(move || (0..10_000).map(|_| c.now().unix_ms()).collect::<Vec<_>>())
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            let v = h.join().unwrap();
            assert!(v.windows(2).all(|w| w[0] < w[1]));
            all.extend(v);
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 40_000);
    }

    #[test]
    fn v7_and_rtcomb_sql_are_a_bijection_that_keeps_sql_server_order() {
        let r = SeededRandom::new(11);
        let mut pairs = Vec::new();
        for _ in 0..20_000 {
            let v7 = Comb::from_v7_parts(r.next_u64() >> 16, 0, 0).with_version(7);
            let mut b = v7.into_bytes();
            let tail = r.next_u64().to_be_bytes();
            b[6] = (b[6] & 0xf0) | (tail[0] & 0x0f);
            b[7] = tail[1];
            b[8] = 0x80 | (tail[2] & 0x3f);
            b[9..15].copy_from_slice(&tail[2..8]);
            b[15] = tail[3];
            let v7 = Comb::from_bytes(b);
            let rt = v7_to_rtcomb_sql(&v7);
            assert_eq!((rt.version(), rt.is_rfc_variant()), (4, true), "{rt}");
            assert_eq!(RtCombLayout::Sql.timestamp(&rt).ok(), v7.timestamp());
            assert_eq!(rtcomb_sql_to_v7(&rt), v7);
            pairs.push((v7, rt));
        }
        for w in pairs.windows(2) {
            let ((a, ra), (b, rb)) = (w[0], w[1]);
            assert_eq!(crate::adapter::sqlserver_cmp(ra.as_bytes(), rb.as_bytes()), a.cmp(&b), "{a} {b}");
        }
    }
}
