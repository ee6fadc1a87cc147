//! Clocks: where a generator or validator gets "now".
//!
//! Every generator and the validator take their clock as a value, so a test can fix it and a
//! batch job can pass its own idea of "now" (seed 004's `Clock` argument).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current Unix time in milliseconds.
///
/// Implemented for the clocks below and for any `Fn() -> u64` closure:
///
/// ```
/// use combid::{Clock, V7Generator};
///
/// let batch_now = 1_645_557_742_000u64;
/// let generator = V7Generator::with_clock(move || batch_now);
/// assert_eq!(generator.generate().unix_ms(), Some(batch_now));
/// ```
pub trait Clock: Send + Sync {
    /// Milliseconds since 1970-01-01T00:00:00Z. A clock before 1970 reports 0.
    fn now_unix_ms(&self) -> u64;
}

impl<F: Fn() -> u64 + Send + Sync> Clock for F {
    #[inline]
    fn now_unix_ms(&self) -> u64 {
        self()
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    #[inline]
    fn now_unix_ms(&self) -> u64 {
        (**self).now_unix_ms()
    }
}

/// The system real-time clock read with full precision (`SystemTime::now()`).
///
/// About 57 ns a read on this project's machines. [`CoarseClock`] is the default for
/// generators because it costs a fifth of that.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now_unix_ms(&self) -> u64 {
        system_ms()
    }
}

fn system_ms() -> u64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        // OK because u64 milliseconds last 584 million years; saturate rather than wrap.
        Ok(d) => u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
        Err(_) => 0,
    }
}

/// The system real-time clock read at the kernel's tick resolution.
///
/// On Linux this is `CLOCK_REALTIME_COARSE`: no hardware read, about 13 ns a call on this
/// project's machines instead of 57 ns, at the resolution of the kernel tick (1 to 10 ms,
/// 4 ms on most distributions; [`CoarseClock::resolution_ns`] tells). Elsewhere it is
/// [`SystemClock`].
///
/// A generator on this clock stamps ids up to one tick late; ordering is unaffected, since
/// the generator's counter orders ids within a tick. Choose [`SystemClock`] when the
/// embedded time must be exact to the millisecond.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoarseClock;

impl CoarseClock {
    /// The clock's resolution in nanoseconds, as the kernel reports it (`clock_getres`);
    /// `None` where the coarse clock is not available and [`SystemClock`] is used instead.
    pub fn resolution_ns() -> Option<u64> {
        imp::resolution_ns()
    }
}

impl Clock for CoarseClock {
    #[inline]
    fn now_unix_ms(&self) -> u64 {
        imp::coarse_ms()
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    fn timespec_ms(ts: &libc::timespec) -> u64 {
        // OK because CLOCK_REALTIME is never negative on a sane system; treat one as 1970.
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
        secs.saturating_mul(1000).saturating_add(nanos / 1_000_000)
    }

    #[inline]
    pub(super) fn coarse_ms() -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec; the call only writes into it.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        if rc == 0 { timespec_ms(&ts) } else { super::system_ms() }
    }

    pub(super) fn resolution_ns() -> Option<u64> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: as above.
        let rc = unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        if rc != 0 {
            return None;
        }
        let secs = u64::try_from(ts.tv_sec).ok()?;
        let nanos = u64::try_from(ts.tv_nsec).ok()?;
        Some(secs * 1_000_000_000 + nanos)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    #[inline]
    pub(super) fn coarse_ms() -> u64 {
        super::system_ms()
    }

    pub(super) fn resolution_ns() -> Option<u64> {
        None
    }
}

/// A clock that only moves when told to: for tests and for replaying a batch job's "now".
///
/// Share it through an `Arc` (`Arc<FixedClock>` is a clock too), so a test can step it while
/// a generator uses it.
///
/// ```
/// use std::sync::Arc;
/// use combid::{FixedClock, V7Generator};
///
/// let clock = Arc::new(FixedClock::new(1_000));
/// let generator = V7Generator::with_clock(Arc::clone(&clock));
/// let a = generator.generate();
/// clock.set(500); // the clock steps back ...
/// let b = generator.generate();
/// assert!(b > a); // ... the ids do not
/// ```
#[derive(Debug, Default)]
pub struct FixedClock(AtomicU64);

impl FixedClock {
    /// A clock that reads `unix_ms` until changed.
    pub const fn new(unix_ms: u64) -> Self {
        FixedClock(AtomicU64::new(unix_ms))
    }

    /// Sets the time.
    pub fn set(&self, unix_ms: u64) {
        self.0.store(unix_ms, Ordering::Relaxed);
    }

    /// Moves the time forward by `ms` (saturating).
    pub fn advance(&self, ms: u64) {
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| Some(t.saturating_add(ms)));
    }

    /// Moves the time back by `ms` (saturating at 1970).
    pub fn rewind(&self, ms: u64) {
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| Some(t.saturating_sub(ms)));
    }
}

impl Clock for FixedClock {
    #[inline]
    fn now_unix_ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_clock_tracks_system_clock() {
        // The coarse clock lags by at most one tick; allow a generous 50 ms for scheduling.
        let precise = SystemClock.now_unix_ms();
        let coarse = CoarseClock.now_unix_ms();
        assert!(coarse.abs_diff(precise) < 50, "coarse {coarse} vs system {precise}");
        assert!(precise > 1_600_000_000_000, "system clock reads {precise}");
    }

    #[test]
    fn fixed_clock_moves_only_when_told() {
        let c = FixedClock::new(10);
        assert_eq!(c.now_unix_ms(), 10);
        c.advance(5);
        assert_eq!(c.now_unix_ms(), 15);
        c.rewind(100);
        assert_eq!(c.now_unix_ms(), 0);
        c.set(u64::MAX);
        c.advance(1);
        assert_eq!(c.now_unix_ms(), u64::MAX);
    }
}
