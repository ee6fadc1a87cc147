//! Random sources: where a generator gets the bits that are not time or counter.

use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng as _;

/// A source of random bits usable from many threads through `&self`.
///
/// The default, [`ThreadRandom`], is a CSPRNG. Tests inject [`SeededRandom`] to get the same
/// ids on every run.
pub trait RandomSource: Send + Sync {
    /// 64 random bits.
    fn next_u64(&self) -> u64;

    /// Fills `dest` with random bytes.
    fn fill_bytes(&self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

impl<R: RandomSource + ?Sized> RandomSource for std::sync::Arc<R> {
    #[inline]
    fn next_u64(&self) -> u64 {
        (**self).next_u64()
    }

    #[inline]
    fn fill_bytes(&self, dest: &mut [u8]) {
        (**self).fill_bytes(dest)
    }
}

/// The operating system-seeded, thread-local CSPRNG of the `rand` crate (`rand::rng()`:
/// ChaCha12, reseeded from the OS every 64 KiB of output).
///
/// Each thread has its own state, so many threads draw from it with no lock.
///
/// **Fork-safe**: a forked child process starts with a copy of its parent's generator
/// state, which would make parent and child draw the same bits and so the same ids.
/// `ThreadRandom` registers a `pthread_atfork` handler and reseeds from the OS in the child
/// before its first draw (`rand` 0.10 does not do this itself). The handler is registered on
/// the first draw through combkey: a parent that used `rand::rng()` itself but forks before
/// making any id should make one id (or call `ThreadRandom.next_u64()`) before forking.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    #[inline]
    fn next_u64(&self) -> u64 {
        fork::thread_rng().next_u64()
    }

    #[inline]
    fn fill_bytes(&self, dest: &mut [u8]) {
        fork::thread_rng().fill_bytes(dest)
    }
}

#[cfg(unix)]
mod fork {
    use std::cell::Cell;
    use std::sync::Once;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Bumped in every child process right after `fork()`.
    static FORK_EPOCH: AtomicU64 = AtomicU64::new(0);
    static REGISTER: Once = Once::new();

    thread_local! {
        static SEEN_EPOCH: Cell<u64> = const { Cell::new(0) };
    }

    extern "C" fn in_child_after_fork() {
        // Async-signal-safe: one atomic add.
        FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
    }

    /// `rand::rng()`, reseeded first if this process was forked since this thread last drew.
    #[inline]
    pub(super) fn thread_rng() -> rand::rngs::ThreadRng {
        REGISTER.call_once(|| {
            // SAFETY: registers a handler that only does an atomic add; no prepare/parent hooks.
            // A failure (ENOMEM) leaves fork detection off, which is no worse than `rand` alone.
            let _ = unsafe { libc::pthread_atfork(None, None, Some(in_child_after_fork)) };
        });
        let mut rng = rand::rng();
        let epoch = FORK_EPOCH.load(Ordering::Relaxed);
        if SEEN_EPOCH.with(Cell::get) != epoch {
            // A failed reseed keeps the old state; the OS source failing is the only cause.
            let _ = rng.reseed();
            SEEN_EPOCH.with(|s| s.set(epoch));
        }
        rng
    }
}

#[cfg(not(unix))]
mod fork {
    /// No `fork()` on this platform.
    #[inline]
    pub(super) fn thread_rng() -> rand::rngs::ThreadRng {
        rand::rng()
    }
}

/// A deterministic, seedable source (SplitMix64) for tests and reproducible examples.
///
/// **Not** cryptographically secure and not for production ids: ids made with it are
/// predictable by anyone who knows the seed.
///
/// ```
/// use combkey::{FixedClock, SeededRandom, V7Generator};
///
/// let now = combkey::Timestamp::from_unix_ms(1_645_557_742_000);
/// let make = || V7Generator::with_clock_and_random(FixedClock::new(now), SeededRandom::new(7));
/// assert_eq!(make().generate(), make().generate());
/// ```
#[derive(Debug)]
pub struct SeededRandom(AtomicU64);

impl SeededRandom {
    /// A source that yields the same sequence for the same `seed`.
    pub const fn new(seed: u64) -> Self {
        SeededRandom(AtomicU64::new(seed))
    }
}

impl RandomSource for SeededRandom {
    fn next_u64(&self) -> u64 {
        // SplitMix64 (Steele, Lea, Flood 2014).
        let mut z = self.0.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_is_reproducible_and_spread() {
        let a = SeededRandom::new(1);
        let b = SeededRandom::new(1);
        let xs: Vec<u64> = (0..64).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..64).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 64);
        // Every bit position is set by some output and cleared by another.
        let or = xs.iter().fold(0, |acc, x| acc | x);
        let and = xs.iter().fold(u64::MAX, |acc, x| acc & x);
        assert_eq!((or, and), (u64::MAX, 0));
    }

    #[test]
    fn fill_bytes_fills_odd_lengths() {
        let r = SeededRandom::new(3);
        let mut buf = [0u8; 13];
        r.fill_bytes(&mut buf);
        assert!(buf[8..].iter().any(|&b| b != 0));
        let mut t = [0u8; 37];
        ThreadRandom.fill_bytes(&mut t);
        assert!(t.iter().filter(|&&b| b == 0).count() < 10);
    }
}
