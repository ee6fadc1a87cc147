//! Validation of client-made ids, as the klokwrk article ("Random UUID as a Primary Key in
//! the Relational Database") describes it: version, variant, and the carried time within a
//! window around a clock.

use std::time::Duration;

use crate::bits;
use crate::clock::{Clock, SystemClock, saturating_ms};
use crate::comb::Comb;
use crate::error::{Detail, Error};
use crate::short_prefix::ShortPrefix;
use crate::time::Timestamp;

/// What kind of id a [`Validator`] expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Expected {
    /// A prefix COMB / UUIDv7: the window applies to its millisecond timestamp.
    V7,
    /// A short prefix COMB with these settings: the window applies to its prefix, with
    /// wrap-around.
    ShortPrefix(ShortPrefix),
}

/// Checks an id a client made before it becomes an entity's permanent key.
///
/// In order: the version nibble, the RFC variant, then the time the id carries against the
/// window `[now - past, now + future]` of the validator's clock (10 minutes each way by
/// default). Each failure is its own [`ErrorKind`](crate::ErrorKind) (`Version`,
/// `Variant`, `TooOld`, `TooNew`) with a message that says what was found and what was
/// allowed.
///
/// For a short prefix COMB, the id is accepted when the interval its prefix names overlaps
/// the window, taking the prefix's wrap-around into account (prefix `fff6` is ten minutes
/// before `0000`).
///
/// ```
/// use combkey::{Comb, ErrorKind, Expected, FixedClock, ShortPrefix, Timestamp, Validator};
///
/// // The klokwrk article's example: clock at 2022-03-18T03:44:00Z, +-10 minutes, minute prefix.
/// let v = Validator::new(Expected::ShortPrefix(ShortPrefix::default().labelled_v4()))
///     .with_clock(FixedClock::new(Timestamp::from_unix_ms(1_647_575_040_000)));
/// for ok in ["0000", "000a", "fff6"] {
///     let id: Comb = format!("{ok}8f3b-1c2d-4e5f-9a6b-7c8d9e0f1a2b").parse()?;
///     assert!(v.validate(&id).is_ok(), "{ok}");
/// }
/// let id: Comb = "000b8f3b-1c2d-4e5f-9a6b-7c8d9e0f1a2b".parse()?;
/// let err = v.validate(&id).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::TooNew);
/// assert_eq!(
///     err.to_string(),
///     "id is too far in the future: its prefix 0x000b is 11 intervals of 60000 ms ahead of the clock, at most 10 accepted"
/// );
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Validator<C = SystemClock> {
    expected: Expected,
    past_ms: i64,
    future_ms: i64,
    clock: C,
}

const DEFAULT_TOLERANCE_MS: i64 = 10 * 60 * 1000;

impl Validator {
    /// A validator for `expected` ids with a +-10 minute window on the system clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Expected, Validator};
    ///
    /// let validator = Validator::new(Expected::V7);
    /// // An id a client made just now passes.
    /// assert!(validator.validate(&Comb::new()).is_ok());
    /// ```
    pub const fn new(expected: Expected) -> Self {
        Validator { expected, past_ms: DEFAULT_TOLERANCE_MS, future_ms: DEFAULT_TOLERANCE_MS, clock: SystemClock }
    }
}

impl<C: Clock> Validator<C> {
    /// The same validator on another clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, Expected, FixedClock, Timestamp, Validator};
    ///
    /// let now: Timestamp = "2022-02-22T19:30:00Z".parse()?;
    /// let validator = Validator::new(Expected::V7).with_clock(FixedClock::new(now));
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?; // 19:22:22
    /// assert!(validator.validate(&id).is_ok());
    /// // Against the real clock it is years old.
    /// assert_eq!(Validator::new(Expected::V7).validate(&id).unwrap_err().kind(), ErrorKind::TooOld);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn with_clock<C2: Clock>(self, clock: C2) -> Validator<C2> {
        Validator { expected: self.expected, past_ms: self.past_ms, future_ms: self.future_ms, clock }
    }

    /// How far before the clock an id's time may be (default 10 minutes).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey::{Comb, ErrorKind, Expected, Timestamp, Validator};
    ///
    /// let now: Timestamp = "2022-02-22T19:30:00Z".parse()?;
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?; // 7 min 38 s before
    /// let strict = Validator::new(Expected::V7).past(Duration::from_secs(60));
    /// let err = strict.validate_at(&id, now).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::TooOld);
    /// assert_eq!(
    ///     err.to_string(),
    ///     "id is too old: it carries 2022-02-22T19:22:22.000Z, the earliest time accepted is 2022-02-22T19:29:00.000Z"
    /// );
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn past(mut self, tolerance: Duration) -> Self {
        self.past_ms = saturating_ms(tolerance);
        self
    }

    /// How far after the clock an id's time may be (default 10 minutes).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey::{Comb, ErrorKind, Expected, Timestamp, Validator};
    ///
    /// let now: Timestamp = "2022-02-22T19:22:00Z".parse()?;
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?; // 22 s ahead of `now`
    /// assert!(Validator::new(Expected::V7).validate_at(&id, now).is_ok());
    /// let strict = Validator::new(Expected::V7).future(Duration::from_secs(5));
    /// assert_eq!(strict.validate_at(&id, now).unwrap_err().kind(), ErrorKind::TooNew);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn future(mut self, tolerance: Duration) -> Self {
        self.future_ms = saturating_ms(tolerance);
        self
    }

    /// What the validator expects.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Expected, ShortPrefix, Validator};
    ///
    /// assert_eq!(Validator::new(Expected::V7).expected(), Expected::V7);
    /// let sp = ShortPrefix::default();
    /// assert_eq!(Validator::new(Expected::ShortPrefix(sp)).expected(), Expected::ShortPrefix(sp));
    /// ```
    pub const fn expected(&self) -> Expected {
        self.expected
    }

    /// Checks `id` against the validator's clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, Expected, Validator};
    ///
    /// let validator = Validator::new(Expected::V7);
    /// assert!(validator.validate(&Comb::now_v7()).is_ok());
    /// // A random id is refused by its version, before any time is looked at.
    /// let err = validator.validate(&Comb::new_v4()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Version);
    /// assert_eq!(err.to_string(), "wrong UUID version: expected version 7, found version 4");
    /// ```
    pub fn validate(&self, id: &Comb) -> Result<(), Error> {
        self.validate_at(id, self.clock.now())
    }

    /// Checks `id` against `now` instead of the clock: for a batch job that sends its own
    /// idea of "now" with its ids (the klokwrk article's batch job). Bound how far that instant may be from the
    /// server's own clock yourself; [`Validator::validate`] does that with the server's time.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, Expected, Timestamp, Validator};
    ///
    /// // A batch job sends the ids it made along with its own "now".
    /// let batch_now: Timestamp = "2022-02-22T19:25:00Z".parse()?;
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// let validator = Validator::new(Expected::V7);
    /// assert!(validator.validate_at(&id, batch_now).is_ok());
    /// let an_hour_later = batch_now.saturating_add_ms(3_600_000);
    /// assert_eq!(validator.validate_at(&id, an_hour_later).unwrap_err().kind(), ErrorKind::TooOld);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn validate_at(&self, id: &Comb, now: Timestamp) -> Result<(), Error> {
        let version = match self.expected {
            Expected::V7 => 7,
            Expected::ShortPrefix(sp) => sp.version(),
        };
        if id.version() != version {
            return Err(Error(Detail::Version { expected: version, found: id.version() }));
        }
        if !id.is_rfc_variant() {
            return Err(Error(Detail::Variant { found: id.as_bytes()[8] }));
        }
        let earliest = now.unix_ms().saturating_sub(self.past_ms);
        let latest = now.unix_ms().saturating_add(self.future_ms);
        match self.expected {
            Expected::V7 => {
                let found = bits::read_unix_ms48(id.as_bytes(), 0).unix_ms();
                if found < earliest {
                    Err(Error(Detail::TooOld {
                        found: Timestamp::from_unix_ms(found),
                        earliest: Timestamp::from_unix_ms(earliest),
                    }))
                } else if found > latest {
                    Err(Error(Detail::TooNew {
                        found: Timestamp::from_unix_ms(found),
                        latest: Timestamp::from_unix_ms(latest),
                    }))
                } else {
                    Ok(())
                }
            }
            Expected::ShortPrefix(sp) => check_prefix(&sp, id, now, earliest, latest),
        }
    }
}

fn check_prefix(sp: &ShortPrefix, id: &Comb, now: Timestamp, earliest: i64, latest: i64) -> Result<(), Error> {
    let prefix = sp.prefix_of(id);
    let k_now = sp.interval_index(now.unix_ms());
    let k_lo = sp.interval_index(earliest);
    let k_hi = sp.interval_index(latest);
    let m = i128::from(sp.modulus());
    let span = i128::from(k_hi) - i128::from(k_lo);
    if span + 1 >= m {
        return Ok(()); // the window covers the whole cycle: every prefix is in it
    }
    let offset = (i128::from(prefix) - i128::from(sp.wrap(k_lo))).rem_euclid(m);
    if offset <= span {
        return Ok(());
    }
    let d = sp.signed_distance(prefix, now);
    let interval_ms = sp.interval_ms();
    if d < 0 {
        let allowed = k_now.abs_diff(k_lo);
        Err(Error(Detail::PrefixTooOld { prefix, behind: d.unsigned_abs(), allowed, interval_ms }))
    } else {
        let allowed = k_hi.abs_diff(k_now);
        Err(Error(Detail::PrefixTooNew { prefix, ahead: d.unsigned_abs(), allowed, interval_ms }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, FixedClock};

    const KLOKWRK_NOW: Timestamp = Timestamp::from_unix_ms(1_647_575_040_000); // 2022-03-18T03:44:00Z

    fn short(prefix: &str) -> Comb {
        format!("{prefix}1234-5678-4abc-9def-0123456789ab").parse().unwrap()
    }

    fn klokwrk() -> Validator<FixedClock> {
        Validator::new(Expected::ShortPrefix(ShortPrefix::default().labelled_v4()))
            .with_clock(FixedClock::new(KLOKWRK_NOW))
    }

    #[test]
    fn klokwrk_vectors() {
        let v = klokwrk();
        for ok in ["0000", "0001", "000a", "fff6", "ffff"] {
            assert_eq!(v.validate(&short(ok)), Ok(()), "{ok}");
        }
        let err = v.validate(&short("000b")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooNew);
        let err = v.validate(&short("fff5")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooOld);
        assert_eq!(
            err.to_string(),
            "id is too old: its prefix 0xfff5 is 11 intervals of 60000 ms behind the clock, at most 10 accepted"
        );
        assert_eq!(v.validate(&short("8000")).unwrap_err().kind(), ErrorKind::TooNew);
        assert_eq!(v.validate(&short("7fff")).unwrap_err().kind(), ErrorKind::TooNew);
        assert_eq!(v.validate(&short("8001")).unwrap_err().kind(), ErrorKind::TooOld);
    }

    #[test]
    fn mid_interval_clock_and_asymmetric_window() {
        // Clock at 03:44:30, window -1 min / +0: intervals 03:43 and 03:44 overlap it.
        let v = klokwrk().past(Duration::from_secs(60)).future(Duration::ZERO);
        let at = Timestamp::from_unix_ms(1_647_575_070_000);
        assert!(v.validate_at(&short("ffff"), at).is_ok());
        assert!(v.validate_at(&short("0000"), at).is_ok());
        assert!(v.validate_at(&short("0001"), at).is_err());
        assert!(v.validate_at(&short("fffe"), at).is_err());
    }

    #[test]
    fn whole_cycle_window_accepts_all() {
        let sp = ShortPrefix::new(1000, 1).unwrap().labelled_v4();
        let v = Validator::new(Expected::ShortPrefix(sp)).with_clock(FixedClock::new(KLOKWRK_NOW));
        for p in ["00", "7f", "80", "ff"] {
            assert!(v.validate(&format!("{p}001234-5678-4abc-9def-0123456789ab").parse().unwrap()).is_ok());
        }
    }

    #[test]
    fn version_and_variant() {
        let v = klokwrk();
        let v8: Comb = "00001234-5678-8abc-9def-0123456789ab".parse().unwrap();
        let e = v.validate(&v8).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Version);
        assert_eq!(e.to_string(), "wrong UUID version: expected version 4, found version 8");
        let bad_variant: Comb = "00001234-5678-4abc-cdef-0123456789ab".parse().unwrap();
        let e = v.validate(&bad_variant).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Variant);
        assert_eq!(e.to_string(), "wrong UUID variant: expected the RFC 9562 variant (top bits 10), found top bits 11");
    }

    #[test]
    fn v7_window() {
        let now = 1_645_557_742_000u64;
        let v = Validator::new(Expected::V7).with_clock(FixedClock::new(Timestamp::from_unix_ms(now.cast_signed())));
        let at = |ms: u64| Comb::from_v7_parts(ms, 0, 0);
        assert!(v.validate(&at(now)).is_ok());
        assert!(v.validate(&at(now - 600_000)).is_ok());
        assert!(v.validate(&at(now + 600_000)).is_ok());
        let e = v.validate(&at(now - 600_001)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooOld);
        assert_eq!(
            e.to_string(),
            "id is too old: it carries 2022-02-22T19:12:21.999Z, the earliest time accepted is 2022-02-22T19:12:22.000Z"
        );
        let e = v.validate(&at(now + 600_001)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooNew);
        // RFC 9562's example is version 7 but from 2022: too old for a clock in 2026.
        let rfc: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        assert_eq!(Validator::new(Expected::V7).validate(&rfc).unwrap_err().kind(), ErrorKind::TooOld);
        assert!(Validator::new(Expected::V7).validate(&Comb::new()).is_ok());
    }

    #[test]
    fn extreme_clocks_do_not_panic() {
        let v = Validator::new(Expected::V7)
            .past(Duration::MAX)
            .future(Duration::MAX)
            .with_clock(FixedClock::new(Timestamp::MAX));
        assert!(v.validate(&Comb::new()).is_ok());
        let sp =
            Validator::new(Expected::ShortPrefix(ShortPrefix::default())).with_clock(FixedClock::new(Timestamp::MAX));
        let _ = sp.validate(&"ffff1234-5678-8abc-9def-0123456789ab".parse().unwrap());
        let _ =
            sp.validate_at(&"ffff1234-5678-8abc-9def-0123456789ab".parse().unwrap(), Timestamp::from_unix_ms(i64::MIN));
    }
}
