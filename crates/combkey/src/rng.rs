//! Random sources: where a generator gets the bits that are not time or counter.

use std::sync::atomic::{AtomicU64, Ordering};

/// A source of random bits usable from many threads through `&self`.
///
/// The default, [`ThreadRandom`], is a CSPRNG. Tests inject [`SeededRandom`] to get the same
/// ids on every run.
pub trait RandomSource: Send + Sync {
    /// 64 random bits.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{RandomSource, SeededRandom};
    ///
    /// // SplitMix64's first output for seed 0.
    /// let random = SeededRandom::new(0);
    /// assert_eq!(random.next_u64(), 0xe220_a839_7b1d_cdaf);
    /// assert_ne!(random.next_u64(), 0xe220_a839_7b1d_cdaf);
    /// ```
    fn next_u64(&self) -> u64;

    /// Fills `dest` with random bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{RandomSource, SeededRandom, ThreadRandom};
    ///
    /// // The same seed fills the same bytes.
    /// let (mut a, mut b) = ([0u8; 10], [0u8; 10]);
    /// SeededRandom::new(7).fill_bytes(&mut a);
    /// SeededRandom::new(7).fill_bytes(&mut b);
    /// assert_eq!(a, b);
    ///
    /// let mut key = [0u8; 32];
    /// ThreadRandom.fill_bytes(&mut key);
    /// assert_ne!(key, [0u8; 32]);
    /// ```
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

/// The default random source: a thread-local ChaCha8 CSPRNG keyed from the operating system.
///
/// - **Keyed from the OS**: each thread's generator takes a fresh 256-bit key from the
///   operating system (`getrandom`, through `rand`'s `SysRng`) before its first draw and again
///   after every 64 KiB of output, the interval at which `rand::rng()` reseeds.
/// - **ChaCha with 8 rounds** (the `chacha20` crate's core, as in `rand`'s `ChaCha8Rng`): `rand` lists it among its
///   cryptographically secure generators, and J.-P. Aumasson's "Too Much Crypto" (2019)
///   argues 8 rounds are a safe margin (the best attacks reach 7). `rand::rng()` uses 12; 8
///   make a random word a third cheaper, which is the largest part of an id's cost after
///   the clock and the atomic.
/// - **No lock**: each thread has its own state.
/// - **Fork-safe**: a forked child process starts with a copy of its parent's generator
///   state, which would make parent and child draw the same bits and so the same ids.
///   `ThreadRandom` registers a `pthread_atfork` handler before its first draw, and a child
///   takes a fresh key from the OS before its first draw (`rand` 0.10 does not do this for
///   `rand::rng()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    // Never inlined: compiled here on its own, the thread-local is reached at one address;
    // inlined into a larger function or another crate, through an accessor call.
    #[inline(never)]
    fn next_u64(&self) -> u64 {
        local::next_u64()
    }

    fn fill_bytes(&self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            chunk.copy_from_slice(&local::next_u64().to_le_bytes()[..chunk.len()]);
        }
    }
}

/// Each thread's generator for [`ThreadRandom`].
///
/// The ChaCha8 core writes four blocks (256 bytes) straight into the thread's pool, and a draw
/// reads the next two words of it: no second buffer, no copy.
mod local {
    use std::cell::{Cell, UnsafeCell};
    use std::mem::MaybeUninit;

    use chacha20::{ChaChaCore, R8, variants::Legacy};
    use rand::rand_core::SeedableRng as _;
    use rand::rand_core::block::Generator as _;
    use rand::rngs::SysRng;

    type Core = ChaChaCore<R8, Legacy>;
    /// Words of one refill: four ChaCha blocks, what one call of the vectorised core makes.
    const POOL: usize = 64;
    /// Refills under one key: 64 KiB of output, as `rand::rng()` reseeds.
    const REFILLS_PER_KEY: u32 = 64 * 1024 / (4 * 64);
    const _: () = assert!(POOL == 64, "REFILLS_PER_KEY assumes 256-byte refills");

    struct Local {
        /// Written by `rekey` before `refills_left` is first set above 0. `MaybeUninit` also
        /// means nothing to drop: a thread-local without a destructor is reached at one
        /// thread-pointer-relative address, where one with a destructor (`rand`'s generators
        /// wipe themselves on drop) is reached through a call that checks its registration,
        /// which doubled the cost of a draw. The state is not wiped at thread exit.
        core: UnsafeCell<MaybeUninit<Core>>,
        /// Refills the current key may still make; 0 before the first key.
        refills_left: Cell<u32>,
        /// Output of the core, each word handed out once.
        pool: UnsafeCell<[u32; POOL]>,
        /// The next unused word of `pool`; `POOL` when empty.
        next: Cell<usize>,
    }

    thread_local! {
        // `const` and nothing to drop: no lazy initialisation and no destructor registration.
        static LOCAL: Local = const {
            Local {
                core: UnsafeCell::new(MaybeUninit::uninit()),
                refills_left: Cell::new(0),
                pool: UnsafeCell::new([0; POOL]),
                next: Cell::new(POOL),
            }
        };
    }

    /// The next two pooled words: an array read while the pool lasts.
    #[inline(always)]
    pub(super) fn next_u64() -> u64 {
        LOCAL.with(|local| {
            let i = local.next.get();
            // No fork check here: in a forked child, `forget` has already emptied the pool
            // and spent the key.
            if i < POOL - 1 {
                local.next.set(i + 2);
                // SAFETY: `LOCAL` is this thread's alone and only `refill` (not running: it is
                // not reentrant and nothing here calls it) writes `pool`; `i + 1 < POOL`.
                let pool = unsafe { &*local.pool.get() };
                u64::from(pool[i]) | (u64::from(pool[i + 1]) << 32)
            } else {
                refill(local)
            }
        })
    }

    /// Makes a new pool (under a new key first if due) and returns its first two words.
    #[cold]
    #[inline(never)]
    fn refill(local: &Local) -> u64 {
        if local.refills_left.get() == 0 {
            rekey(local);
        }
        local.refills_left.set(local.refills_left.get() - 1);
        // SAFETY: `refills_left` was above 0, so `rekey` has written `core`; no other reference
        // to `core` or `pool` exists while this runs (thread-local, and the core's `generate`
        // does not reach `LOCAL`).
        let (core, pool) = unsafe { ((*local.core.get()).assume_init_mut(), &mut *local.pool.get()) };
        core.generate(pool);
        local.next.set(2);
        u64::from(pool[0]) | (u64::from(pool[1]) << 32)
    }

    /// A fresh key from the operating system.
    #[cold]
    #[inline(never)]
    fn rekey(local: &Local) {
        // Before the first word is handed out, so that a fork after it is seen.
        super::fork::register();
        // The OS source failing is the only error; `rand::rng()` (reseeded after a fork) stands in.
        let core = Core::try_from_rng(&mut SysRng).unwrap_or_else(|_| Core::from_rng(&mut super::fork::thread_rng()));
        // SAFETY: as in `refill`: no other reference to `core` exists during this call. The old
        // core (if any) is overwritten without drop, as documented on `core`.
        unsafe { (*local.core.get()).write(core) };
        local.refills_left.set(REFILLS_PER_KEY);
        #[cfg(test)]
        REKEYS.with(|n| n.set(n.get() + 1));
    }

    /// Throws away this thread's pool and key: called in a forked child (the only thread there
    /// is the one that forked), so that parent and child never hand out the same words.
    /// Async-signal-safe: two stores to a thread-local that has no destructor and needs no
    /// initialisation.
    pub(super) fn forget() {
        LOCAL.with(|local| {
            local.next.set(POOL);
            local.refills_left.set(0);
        });
    }

    #[cfg(test)]
    thread_local! {
        /// Keys this thread has taken, for the tests.
        pub(super) static REKEYS: Cell<u32> = const { Cell::new(0) };
    }

    /// Words one key may produce, for the tests.
    #[cfg(test)]
    pub(super) const WORDS_PER_KEY: usize = REFILLS_PER_KEY as usize * POOL / 2;
}

#[cfg(unix)]
pub(crate) mod fork {
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
        // Async-signal-safe: one atomic add and two thread-local stores.
        FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
        super::local::forget();
    }

    /// Registers the `pthread_atfork` handler that, in a child, bumps the epoch (which
    /// reseeds `rand::rng()`) and makes this thread's pool take a new key (once).
    pub(super) fn register() {
        REGISTER.call_once(|| {
            // SAFETY: registers an async-signal-safe handler; no prepare/parent hooks.
            // A failure (ENOMEM) leaves fork detection off, which is no worse than `rand` alone.
            let _ = unsafe { libc::pthread_atfork(None, None, Some(in_child_after_fork)) };
        });
    }

    /// How many times this process's ancestry has forked since it started (0 in the first
    /// process): a value that changes in a forked child, read after registering the handler.
    #[cfg(feature = "layouts")]
    pub(crate) fn epoch() -> u64 {
        register();
        FORK_EPOCH.load(Ordering::Acquire)
    }

    /// `rand::rng()`, reseeded first if this process was forked since this thread last drew.
    #[inline]
    pub(super) fn thread_rng() -> rand::rngs::ThreadRng {
        register();
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
pub(crate) mod fork {
    /// No `fork()` on this platform: nothing to register.
    pub(super) fn register() {}

    /// No `fork()` on this platform: always 0.
    #[cfg(feature = "layouts")]
    pub(crate) fn epoch() -> u64 {
        0
    }

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
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{RandomSource, SeededRandom};
    ///
    /// let a = SeededRandom::new(42);
    /// let b = SeededRandom::new(42);
    /// assert_eq!([a.next_u64(), a.next_u64()], [b.next_u64(), b.next_u64()]);
    /// assert_ne!(SeededRandom::new(43).next_u64(), SeededRandom::new(42).next_u64());
    /// ```
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
    fn thread_random_takes_a_new_key_after_64_kib() {
        std::thread::spawn(|| {
            let keys = || local::REKEYS.with(std::cell::Cell::get);
            assert_eq!(keys(), 0);
            let first = ThreadRandom.next_u64();
            assert_eq!(keys(), 1, "a key from the OS before the first word");
            let words: Vec<u64> = (1..local::WORDS_PER_KEY).map(|_| ThreadRandom.next_u64()).collect();
            assert_eq!(local::WORDS_PER_KEY * 8, 64 * 1024);
            assert_eq!(keys(), 1, "64 KiB under the first key");
            let next = ThreadRandom.next_u64();
            assert_eq!(keys(), 2, "a new key for the next word");
            let mut all: Vec<u64> = words;
            all.extend([first, next]);
            let n = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), n, "no word twice");
        })
        .join()
        .expect("the test thread");
    }

    #[test]
    fn threads_draw_different_words() {
        let draw = || std::thread::spawn(|| (0..64).map(|_| ThreadRandom.next_u64()).collect::<Vec<u64>>());
        let (a, b) = (draw(), draw());
        let (a, b) = (a.join().expect("thread a"), b.join().expect("thread b"));
        assert!(a.iter().all(|w| !b.contains(w)), "two threads share a word");
        // Every bit position is set by some word and cleared by another.
        let or = a.iter().fold(0, |acc, x| acc | x);
        let and = a.iter().fold(u64::MAX, |acc, x| acc & x);
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
