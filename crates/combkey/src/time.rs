//! A millisecond instant, with RFC 3339 text in and out.

use core::fmt;
use core::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::bits::MS_PER_DAY;
use crate::error::Error;

/// An instant in UTC with millisecond precision: milliseconds since the Unix epoch.
///
/// This is the time a COMB carries. It prints as RFC 3339 (`2022-03-18T03:44:00.000Z`) and
/// parses RFC 3339 with any offset and up to nine fraction digits (truncated to ms).
///
/// ```
/// use combkey::Timestamp;
///
/// let t: Timestamp = "2022-02-22T19:22:22Z".parse()?;
/// assert_eq!(t.unix_ms(), 1_645_557_742_000);
/// assert_eq!(t.to_string(), "2022-02-22T19:22:22.000Z");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The Unix epoch, 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: Timestamp = Timestamp(0);

    /// The earliest instant a `Timestamp` holds (`i64::MIN` ms, 292 million years before 1970).
    pub const MIN: Timestamp = Timestamp(i64::MIN);

    /// The latest instant a `Timestamp` holds (`i64::MAX` ms, 292 million years after 1970).
    pub const MAX: Timestamp = Timestamp(i64::MAX);

    /// The instant `ms` milliseconds after (negative: before) the Unix epoch.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// assert_eq!(Timestamp::from_unix_ms(0), Timestamp::UNIX_EPOCH);
    /// assert_eq!(Timestamp::from_unix_ms(1_645_557_742_000).to_string(), "2022-02-22T19:22:22.000Z");
    /// assert_eq!(Timestamp::from_unix_ms(-1).to_string(), "1969-12-31T23:59:59.999Z");
    /// ```
    pub const fn from_unix_ms(ms: i64) -> Self {
        Timestamp(ms)
    }

    /// Milliseconds since the Unix epoch (negative before 1970).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// let t: Timestamp = "2022-02-22T14:22:22-05:00".parse()?;
    /// assert_eq!(t.unix_ms(), 1_645_557_742_000);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn unix_ms(self) -> i64 {
        self.0
    }

    /// The current time from the system's real-time clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::SystemTime;
    /// use combkey::Timestamp;
    ///
    /// let before = Timestamp::from_system_time(SystemTime::now())?;
    /// let now = Timestamp::now();
    /// assert!(before <= now);
    /// assert!(now > "2024-01-01T00:00:00Z".parse()?);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn now() -> Self {
        Self::saturating_from_system_time(SystemTime::now())
    }

    /// Converts from [`SystemTime`] to the millisecond that holds it (rounding towards the
    /// past, before 1970 as after: one nanosecond before 1970 is -1 ms).
    ///
    /// Fails only for instants more than 292 million years from 1970.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use combkey::Timestamp;
    ///
    /// let t = Timestamp::from_system_time(UNIX_EPOCH + Duration::from_micros(1_500_999))?;
    /// assert_eq!(t.unix_ms(), 1_500);
    /// // Before 1970 too the instant lands in the millisecond that holds it.
    /// let t = Timestamp::from_system_time(UNIX_EPOCH - Duration::from_nanos(1))?;
    /// assert_eq!(t.unix_ms(), -1);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn from_system_time(t: SystemTime) -> Result<Self, Error> {
        let ms = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()),
            // Before 1970: round towards negative infinity, so the instant is never moved later.
            Err(e) => i64::try_from(e.duration().as_nanos().div_ceil(1_000_000)).map(|ms| -ms),
        };
        ms.map(Timestamp).map_err(|_| Error::out_of_range("time", format!("{t:?}"), "within 292 million years of 1970"))
    }

    /// Converts from [`SystemTime`] to the millisecond that holds it (towards the past, before
    /// 1970 too: 1 ns before the epoch is millisecond -1), saturating at
    /// [`Timestamp::MIN`] and [`Timestamp::MAX`] (292 million years from 1970).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use combkey::Timestamp;
    ///
    /// let t = Timestamp::saturating_from_system_time(UNIX_EPOCH + Duration::from_millis(1_645_557_742_123));
    /// assert_eq!(t.to_string(), "2022-02-22T19:22:22.123Z");
    /// assert_eq!(Timestamp::saturating_from_system_time(UNIX_EPOCH), Timestamp::UNIX_EPOCH);
    /// ```
    pub fn saturating_from_system_time(t: SystemTime) -> Self {
        match Self::from_system_time(t) {
            Ok(ts) => ts,
            Err(_) if t < UNIX_EPOCH => Timestamp::MIN,
            Err(_) => Timestamp::MAX,
        }
    }

    /// Converts to [`SystemTime`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, SystemTime, UNIX_EPOCH};
    /// use combkey::Timestamp;
    ///
    /// let t = Timestamp::from_unix_ms(1_500);
    /// assert_eq!(t.to_system_time(), UNIX_EPOCH + Duration::from_millis(1_500));
    /// assert_eq!(Timestamp::from_unix_ms(-1_500).to_system_time(), UNIX_EPOCH - Duration::from_millis(1_500));
    /// assert_eq!(SystemTime::from(t), t.to_system_time());
    /// ```
    pub fn to_system_time(self) -> SystemTime {
        let d = Duration::from_millis(self.0.unsigned_abs());
        if self.0 >= 0 { UNIX_EPOCH + d } else { UNIX_EPOCH - d }
    }

    /// `self + ms`, or `None` on overflow.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// let t: Timestamp = "2024-02-28T12:00:00Z".parse()?;
    /// let next_day = t.checked_add_ms(86_400_000).unwrap();
    /// assert_eq!(next_day.to_string(), "2024-02-29T12:00:00.000Z");
    /// assert_eq!(Timestamp::MAX.checked_add_ms(1), None);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn checked_add_ms(self, ms: i64) -> Option<Self> {
        match self.0.checked_add(ms) {
            Some(v) => Some(Timestamp(v)),
            None => None,
        }
    }

    /// `self + ms`, saturating at [`Timestamp::MIN`] and [`Timestamp::MAX`].
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// let t: Timestamp = "2022-02-22T19:22:22Z".parse()?;
    /// assert_eq!(t.saturating_add_ms(-1).to_string(), "2022-02-22T19:22:21.999Z");
    /// assert_eq!(Timestamp::MAX.saturating_add_ms(1), Timestamp::MAX);
    /// assert_eq!(Timestamp::MIN.saturating_add_ms(-1), Timestamp::MIN);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn saturating_add_ms(self, ms: i64) -> Self {
        Timestamp(self.0.saturating_add(ms))
    }

    /// The instant `ms` milliseconds after the epoch, saturating at [`Timestamp::MIN`] and
    /// [`Timestamp::MAX`]: for arithmetic done in a wider type.
    pub(crate) const fn saturating_from_i128(ms: i128) -> Self {
        if ms < i64::MIN as i128 {
            Timestamp::MIN
        } else if ms > i64::MAX as i128 {
            Timestamp::MAX
        } else {
            // In range, checked on the two lines above.
            #[allow(clippy::cast_possible_truncation)]
            Timestamp(ms as i64)
        }
    }

    /// Builds a time from a civil UTC date and time of day; `None` when a field is out of range.
    pub(crate) fn from_civil(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> Option<Self> {
        if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60 || ms > 999 {
            return None;
        }
        let days = days_from_civil(y, mo, d);
        let tod = i64::from(h) * 3_600_000 + i64::from(mi) * 60_000 + i64::from(s) * 1000 + i64::from(ms);
        days.checked_mul(MS_PER_DAY)?.checked_add(tod).map(Timestamp)
    }
}

/// Calendar arithmetic in UTC, for intervals of days, weeks, months and years.
impl Timestamp {
    /// Midnight UTC of a calendar date; `None` for a date that does not exist.
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// assert_eq!(Timestamp::from_date(2026, 1, 31).unwrap().to_string(), "2026-01-31T00:00:00.000Z");
    /// assert!(Timestamp::from_date(2026, 2, 29).is_none());
    /// ```
    pub fn from_date(year: i64, month: u32, day: u32) -> Option<Self> {
        Self::from_civil(year, month, day, 0, 0, 0, 0)
    }

    /// The UTC calendar date `(year, month, day)` of this instant.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// let t: Timestamp = "2022-02-22T19:22:22Z".parse()?;
    /// assert_eq!(t.date(), (2022, 2, 22));
    /// assert_eq!(Timestamp::from_unix_ms(-1).date(), (1969, 12, 31));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn date(self) -> (i64, u32, u32) {
        civil_from_days(self.0.div_euclid(MS_PER_DAY))
    }

    /// Days since 1970-01-01 (negative before), of the UTC date.
    pub(crate) fn days(self) -> i64 {
        self.0.div_euclid(MS_PER_DAY)
    }

    /// Midnight UTC of day `days` since 1970-01-01, saturating.
    pub(crate) fn from_days(days: i64) -> Self {
        Timestamp(days.saturating_mul(MS_PER_DAY))
    }
}

impl From<Timestamp> for SystemTime {
    fn from(t: Timestamp) -> SystemTime {
        t.to_system_time()
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    // The day of the 400-year era is in 0..146_097, so its low 32 bits are all of it.
    let doe = crate::bits::low_bytes_u32(i128::from(z.rem_euclid(146_097)), 4);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (i64::from(yoe) + era * 400 + i64::from(m <= 2), m, d)
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds: `2022-03-18T03:44:00.000Z`. RFC 3339 has four-digit
    /// years only: a year past 9999 (a v7 id holds times to 10889) or before 0 is written in
    /// ISO 8601's expanded form, a sign and six digits, as JavaScript's `toISOString` writes
    /// it: `+010000-01-01T00:00:00.000Z`. [`FromStr`] reads both.
    ///
    /// ```
    /// use combkey::Timestamp;
    ///
    /// assert_eq!(Timestamp::from_unix_ms(253_402_300_799_999).to_string(), "9999-12-31T23:59:59.999Z");
    /// assert_eq!(Timestamp::from_unix_ms(253_402_300_800_000).to_string(), "+010000-01-01T00:00:00.000Z");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(MS_PER_DAY);
        let tod = self.0.rem_euclid(MS_PER_DAY);
        let (y, m, d) = civil_from_days(days);
        if (0..=9999).contains(&y) {
            write!(f, "{y:04}")?;
        } else {
            write!(f, "{}{:06}", if y < 0 { '-' } else { '+' }, y.unsigned_abs())?;
        }
        write!(
            f,
            "-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            tod / 3_600_000,
            tod / 60_000 % 60,
            tod / 1000 % 60,
            tod % 1000
        )
    }
}

impl FromStr for Timestamp {
    type Err = Error;

    /// Parses RFC 3339: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `t`, `z` and a space for
    /// `T` are accepted too, and ISO 8601's expanded year as [`Display`](fmt::Display) writes
    /// one past 9999: `+010000-01-01T00:00:00Z`.
    fn from_str(s: &str) -> Result<Self, Error> {
        parse_rfc3339(s)
            .ok_or_else(|| Error::config("RFC 3339 time", format!("{s:?}"), "YYYY-MM-DDTHH:MM:SS[.fff](Z|+HH:MM)"))
    }
}

fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    // ISO 8601's expanded year: a sign and six digits. The last four digits stay in place as
    // the year the rest of the parse skips over.
    let (year, s) = match s.as_bytes().first() {
        Some(&sign @ (b'+' | b'-')) => {
            let digits = s.get(1..7)?;
            if !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let y: i64 = digits.parse().ok()?;
            (Some(if sign == b'-' { -y } else { y }), s.get(3..)?)
        }
        _ => (None, s),
    };
    let b = s.as_bytes();
    let num = |r: core::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        if part.iter().all(u8::is_ascii_digit) {
            part.iter().try_fold(0u32, |acc, &c| acc.checked_mul(10)?.checked_add(u32::from(c - b'0')))
        } else {
            None
        }
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let y = year.unwrap_or(i64::from(y));
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut ms = 0u32;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || digits > 9 {
            return None;
        }
        // First three digits are milliseconds; the rest are truncated.
        for k in 0..3 {
            let digit = if k < digits { u32::from(b[start + k] - b'0') } else { 0 };
            ms = ms * 10 + digit;
        }
    }
    let offset_min: i64 = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let oh = i64::from(num(i + 1..i + 3)?);
            let om = i64::from(num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let v = oh * 60 + om;
            if *sign == b'-' { -v } else { v }
        }
        _ => return None,
    };
    // A leap second (:60) is folded into the next second, as most systems do.
    let t = Timestamp::from_civil(y, mo, d, h, mi, sec, ms)?;
    t.checked_add_ms(-offset_min * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        // Values from RFC 9562 (v7 example) and the klokwrk article, checked by hand:
        // 2022-02-22T19:22:22Z = 1645557742 s.
        let cases = [
            ("1970-01-01T00:00:00Z", 0),
            ("2022-02-22T19:22:22Z", 1_645_557_742_000),
            ("2022-02-22T14:22:22-05:00", 1_645_557_742_000),
            ("2022-03-18T03:44:00Z", 1_647_575_040_000),
            ("2000-02-29T12:00:00.123456Z", 951_825_600_123),
            ("1969-12-31T23:59:59.999Z", -1),
            ("1900-01-01T00:00:00Z", -2_208_988_800_000),
        ];
        for (text, ms) in cases {
            let t: Timestamp = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(t.unix_ms(), ms, "{text}");
        }
        assert_eq!(Timestamp::from_unix_ms(-1).to_string(), "1969-12-31T23:59:59.999Z");
        assert_eq!(Timestamp::from_unix_ms(951_825_600_123).to_string(), "2000-02-29T12:00:00.123Z");
    }

    #[test]
    fn years_outside_four_digits_in_iso_8601_expanded_form() {
        // Unix ms computed independently: JavaScript's Date.UTC(10000, 0, 1) = 253402300800000,
        // the last millisecond of a 48-bit v7 time (2^48 - 1), Date.UTC(-1, 0, 1) =
        // -62198755200000 (written "-000001-01-01T00:00:00.000Z" by toISOString).
        let cases = [
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (253_402_300_800_000, "+010000-01-01T00:00:00.000Z"),
            ((1 << 48) - 1, "+010889-08-02T05:31:50.655Z"),
            (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
            (-62_198_755_200_000, "-000001-01-01T00:00:00.000Z"),
        ];
        for (ms, text) in cases {
            assert_eq!(Timestamp::from_unix_ms(ms).to_string(), text);
            assert_eq!(text.parse::<Timestamp>().map(Timestamp::unix_ms), Ok(ms), "{text}");
        }
        // An expanded year must have its sign and six digits; a leap day is checked in its year.
        for bad in
            ["+10000-01-01T00:00:00Z", "+0100000-01-01T00:00:00Z", "+01x000-01-01T00:00:00Z", "+010001-02-29T00:00:00Z"]
        {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad}");
        }
        assert!("+010000-02-29T00:00:00Z".parse::<Timestamp>().is_ok(), "10000 is a leap year");
    }

    #[test]
    fn display_round_trips() {
        for ms in [0i64, 1, -1, 86_399_999, 253_402_300_799_999, -2_208_988_800_000, 1_700_000_000_123] {
            let t = Timestamp::from_unix_ms(ms);
            assert_eq!(t.to_string().parse::<Timestamp>(), Ok(t), "{ms}");
        }
    }

    #[test]
    fn rejects_bad_text() {
        for bad in [
            "",
            "2022-02-30T00:00:00Z",
            "2022-13-01T00:00:00Z",
            "2022-01-01T24:00:00Z",
            "2022-01-01T00:00:00",
            "2022-01-01T00:00:00.Z",
            "2022-01-01T00:00:00+0100",
            "2022-01-01T00:00:00Zjunk",
            "2022-01-01X00:00:00Z",
            "2é22-01-01T00:00:00Z",
        ] {
            let err = bad.parse::<Timestamp>().unwrap_err();
            assert!(err.to_string().contains("RFC 3339"), "{bad}: {err}");
        }
    }

    #[test]
    fn system_time_round_trip() {
        let t = Timestamp::from_unix_ms(1_645_557_742_123);
        assert_eq!(Timestamp::from_system_time(t.to_system_time()), Ok(t));
        let before = Timestamp::from_unix_ms(-1500);
        assert_eq!(Timestamp::from_system_time(before.to_system_time()), Ok(before));
    }

    #[test]
    fn system_time_before_1970_rounds_towards_the_past() {
        use std::time::Duration;
        let at = |d: Duration| Timestamp::from_system_time(UNIX_EPOCH - d).map(Timestamp::unix_ms);
        assert_eq!(at(Duration::from_nanos(1)), Ok(-1));
        assert_eq!(at(Duration::from_nanos(999)), Ok(-1));
        assert_eq!(at(Duration::from_millis(1)), Ok(-1));
        assert_eq!(at(Duration::from_nanos(1_000_001)), Ok(-2));
        assert_eq!(
            Timestamp::from_system_time(UNIX_EPOCH + Duration::from_nanos(999_999)).map(Timestamp::unix_ms),
            Ok(0)
        );
    }
}
