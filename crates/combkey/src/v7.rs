//! The default generator: prefix COMBs that are valid UUIDv7s, strictly increasing.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::bits;
use crate::clock::{Clock, CoarseClock};
use crate::comb::Comb;
use crate::rng::{RandomSource, ThreadRandom};
use crate::time::Timestamp;

const COUNTER_BITS: u32 = 16;
/// A new millisecond starts its counter at a random value below this, leaving at least
/// 2^16 - 2^12 = 61,440 increments before the counter carries into the timestamp
/// (RFC 9562 section 6.2, "counter rollover guards").
const COUNTER_INIT_MASK: u64 = 0x0fff;
/// The counting fast path (`fetch_add`) is taken only while the last tick is below this: far
/// enough from `u64::MAX` that no number of threads adding at most `MAX_FETCH_ADD` each can
/// wrap it. Above it (a clock at year 10889) the compare-and-swap path saturates instead.
const FETCH_ADD_BELOW: u64 = u64::MAX - (1 << 62);
/// The largest batch reserved by `fetch_add`; larger ones take the compare-and-swap path.
const MAX_FETCH_ADD: u64 = 1 << 32;
/// How many random tails a batch draws at once.
const BATCH_CHUNK: usize = 64;

/// Makes prefix COMBs: UUIDv7s that are strictly increasing per generator.
///
/// # Layout
///
/// RFC 9562's UUIDv7 with a 16-bit counter (section 6.2, method 1):
///
/// ```text
///  byte   0  1  2  3  4  5   6    7    8     9 10 11 12 13 14 15
///        ┌─────────────────┬────┬────┬─────┬────────────────────┐
///        │ unix_ms (48, BE)│7 c │ c  │v c r│   random (56)      │
///        └─────────────────┴────┴────┴─────┴────────────────────┘
///  7 = version nibble, v = variant bits 10, c = 16-bit counter (4 + 8 + 4 bits),
///  r = 2 more random bits: 58 random bits in all
///
///  example: 017f22e2-79b0-7000-8000-00000000002a
///           unix_ms 0x017f22e279b0 = 1645557742000 (2022-02-22T19:22:22Z), counter 0
/// ```
///
/// # Guarantees
///
/// - **Strictly increasing**: every id is greater (as bytes, as a `Comb`, and as a lowercase
///   string) than every id this generator returned before, on any thread. Ids made in the
///   same millisecond differ in the counter; a new millisecond starts the counter at a
///   random value below 4096.
/// - **Counter exhaustion**: after 61,440 to 65,535 ids in one millisecond the counter
///   carries into the timestamp, which then runs ahead of the clock by one millisecond per
///   65,536 ids until the clock catches up.
/// - **Clock going back**: the generator keeps counting from the last id it made, so
///   nothing repeats or decreases; the embedded time stays at the last time seen until the
///   clock passes it again.
/// - **Threads**: `generate` takes `&self` and uses one atomic compare-and-swap on a 64-bit
///   word (no lock); the random bits come from a thread-local CSPRNG by default.
/// - **Limits**: clock readings past 2^48 - 1 ms (year 10889) are clamped to it, and
///   readings before 1970 to 1970.
///
/// The default clock is [`CoarseClock`]: ids carry a time up to one kernel tick (1-10 ms)
/// late in exchange for a clock read that costs an eighth. Pass [`SystemClock`](crate::SystemClock) for
/// exact milliseconds.
///
/// ```
/// use combkey::{FixedClock, SeededRandom, Timestamp, V7Generator};
///
/// // A test pins both the clock and the random source and gets the same ids every run.
/// let now = Timestamp::from_unix_ms(1_645_557_742_000);
/// let generator = V7Generator::with_clock_and_random(FixedClock::new(now), SeededRandom::new(1));
/// let a = generator.generate();
/// let b = generator.generate();
/// assert!(a < b);
/// assert_eq!(a.unix_ms(), Some(1_645_557_742_000));
/// assert_eq!(b.v7_counter(), a.v7_counter() + 1);
///
/// // Bulk inserts: fill a slice with one clock read and one atomic operation.
/// let mut ids = [combkey::Comb::NIL; 1000];
/// generator.fill(&mut ids);
/// assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids[0] > b);
/// ```
#[derive(Debug)]
pub struct V7Generator<C = CoarseClock, R = ThreadRandom> {
    /// The last tick handed out: `unix_ms << 16 | counter`.
    last: AtomicU64,
    clock: C,
    random: R,
}

/// A shared generator on a cache line of its own. Every id takes its atomic's line in
/// exclusive state; a read-mostly neighbour (the fork epoch the random source checks on every
/// draw sat 8 bytes away) would be pulled away from the other cores each time, and the two
/// process-wide generators would take each other's line.
#[repr(align(128))]
struct OwnLine<T>(T);

static DEFAULT: OwnLine<V7Generator> = OwnLine(V7Generator::new());

#[inline]
pub(crate) fn default_generator() -> &'static V7Generator {
    &DEFAULT.0
}

/// The process-wide generator on the exact clock (`Comb::now_v7`: the time as
/// `uuid::Uuid::now_v7` reads it, not up to a tick behind).
static EXACT: OwnLine<V7Generator<crate::clock::SystemClock>> =
    OwnLine(V7Generator::with_clock_and_random(crate::clock::SystemClock, ThreadRandom));

#[inline]
pub(crate) fn exact_generator() -> &'static V7Generator<crate::clock::SystemClock> {
    &EXACT.0
}

impl V7Generator {
    /// A generator on the [`CoarseClock`] and the thread-local CSPRNG.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::V7Generator;
    ///
    /// // A generator of its own, e.g. one per table, in a static.
    /// static ORDERS: V7Generator = V7Generator::new();
    /// let a = ORDERS.generate();
    /// let b = ORDERS.generate();
    /// assert!(a < b);
    /// assert_eq!(a.version(), 7);
    /// ```
    pub const fn new() -> Self {
        Self::with_clock_and_random(CoarseClock, ThreadRandom)
    }
}

impl Default for V7Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock> V7Generator<C> {
    /// A generator on `clock` and the thread-local CSPRNG.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{SystemClock, Timestamp, V7Generator};
    ///
    /// // Exact milliseconds instead of the coarse clock's ticks.
    /// let generator = V7Generator::with_clock(SystemClock);
    /// let before = Timestamp::now();
    /// let id = generator.generate();
    /// assert!(id.timestamp().unwrap() >= before);
    /// ```
    pub const fn with_clock(clock: C) -> Self {
        Self::with_clock_and_random(clock, ThreadRandom)
    }
}

impl<C: Clock, R: RandomSource> V7Generator<C, R> {
    /// A generator on `clock` and `random`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{FixedClock, SeededRandom, Timestamp, V7Generator};
    ///
    /// // A test that wants the same ids on every run.
    /// let now = Timestamp::from_unix_ms(1_645_557_742_000);
    /// let make = || V7Generator::with_clock_and_random(FixedClock::new(now), SeededRandom::new(42));
    /// let (a, b) = (make(), make());
    /// assert_eq!(a.generate(), b.generate());
    /// assert_eq!(a.generate().unix_ms(), Some(1_645_557_742_000));
    /// ```
    pub const fn with_clock_and_random(clock: C, random: R) -> Self {
        V7Generator { last: AtomicU64::new(0), clock, random }
    }

    /// The next id, stamped with the clock's current time.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{FixedClock, Timestamp, V7Generator};
    ///
    /// let generator = V7Generator::with_clock(FixedClock::new(Timestamp::from_unix_ms(1_645_557_742_000)));
    /// let ids: Vec<_> = (0..100).map(|_| generator.generate()).collect();
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// assert!(ids.iter().all(|id| id.to_string().starts_with("017f22e2-79b0-7")));
    /// ```
    #[inline(always)]
    pub fn generate(&self) -> Comb {
        Comb::from_u128(self.generate_u128())
    }

    /// `generate`'s work, returning the id as a number. Where the compiler does not inline it,
    /// a `u128` comes back in two registers where a `Comb` (16 bytes) comes back through
    /// memory the caller passes, and those stores sat right before the next id's atomic, which
    /// waits for every earlier store to drain: `Comb::new` took 12.7 ns that way against 9.8 ns
    /// this way on this project's machines (docs/benchmarks.md).
    #[inline]
    fn generate_u128(&self) -> u128 {
        let tick = self.reserve_one(bits::clamp_unix_ms48(self.clock.now()));
        // The random word after the atomic, so its store (the pool's index) is not one the
        // atomic waits for.
        tick_to_u128(tick, self.random.next_u64())
    }

    /// The next id, stamped with `t` instead of the clock's time: for a job that brings its
    /// own "now". Still strictly greater than every id made before by this generator, so a
    /// time earlier than the last one used gets the last one's timestamp.
    ///
    /// ```
    /// use combkey::{Timestamp, V7Generator};
    ///
    /// let t: Timestamp = "2024-01-01T00:00:00Z".parse()?;
    /// assert_eq!(V7Generator::new().generate_at(t).timestamp(), Some(t));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    #[inline(always)]
    pub fn generate_at(&self, t: Timestamp) -> Comb {
        Comb::from_u128(self.generate_at_u128(t))
    }

    /// `generate_at`'s work, as `generate_u128`.
    #[inline]
    fn generate_at_u128(&self, t: Timestamp) -> u128 {
        let tick = self.reserve_one(bits::clamp_unix_ms48(t));
        tick_to_u128(tick, self.random.next_u64())
    }

    /// Fills `out` with consecutive ids, as if by `generate` in a loop but with one clock
    /// read and one atomic operation: for bulk inserts.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, V7Generator};
    ///
    /// let generator = V7Generator::new();
    /// let first = generator.generate();
    /// let mut batch = vec![Comb::NIL; 500];
    /// generator.fill(&mut batch);
    /// assert!(batch[0] > first);
    /// assert!(batch.windows(2).all(|w| w[0] < w[1]));
    /// assert!(generator.generate() > batch[499]);
    /// ```
    pub fn fill(&self, out: &mut [Comb]) {
        self.fill_at(self.clock.now(), out)
    }

    /// [`fill`](Self::fill) with the time given instead of read from the clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp, V7Generator};
    ///
    /// // Back-filling rows imported from another system with the time they were created.
    /// let created: Timestamp = "2024-01-01T00:00:00Z".parse()?;
    /// let mut ids = [Comb::NIL; 3];
    /// V7Generator::new().fill_at(created, &mut ids);
    /// assert!(ids.iter().all(|id| id.timestamp() == Some(created)));
    /// assert!(ids[0] < ids[1] && ids[1] < ids[2]);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn fill_at(&self, t: Timestamp, out: &mut [Comb]) {
        // A slice of more than 2^64 ids cannot exist; 0 ids reserve nothing.
        let Some(n) = u64::try_from(out.len()).ok().filter(|&n| n > 0) else {
            return;
        };
        let mut tick = self.reserve(bits::clamp_unix_ms48(t), n);
        let mut tails = [0u8; 8 * BATCH_CHUNK];
        for chunk in out.chunks_mut(BATCH_CHUNK) {
            let bytes = &mut tails[..8 * chunk.len()];
            self.random.fill_bytes(bytes);
            for (slot, tail) in chunk.iter_mut().zip(bytes.chunks_exact(8)) {
                let mut r = [0u8; 8];
                r.copy_from_slice(tail);
                *slot = Comb::from_u128(tick_to_u128(tick, u64::from_le_bytes(r)));
                tick = tick.saturating_add(1);
            }
        }
    }

    /// Reserves one tick at or after `now_ms` (already within 48 bits): the counting fast path
    /// inline, everything else out of line.
    #[inline]
    fn reserve_one(&self, now_ms: u64) -> u64 {
        let cur = self.last.load(Ordering::Relaxed);
        if now_ms <= cur >> COUNTER_BITS && cur < FETCH_ADD_BELOW {
            // The generator's millisecond is the clock's (or ahead of it): count on. One
            // `fetch_add` instead of a load-compare-exchange chain, about half the cost. The
            // result is above everything handed out before even if another thread moved on to
            // a new millisecond in between: additions and exchanges on one atomic are ordered.
            return self.last.fetch_add(1, Ordering::Relaxed) + 1;
        }
        self.reserve_cold(now_ms, 1)
    }

    /// Reserves `n` consecutive ticks at or after `now_ms` (already within 48 bits) and
    /// returns the first.
    #[inline]
    fn reserve(&self, now_ms: u64, n: u64) -> u64 {
        let cur = self.last.load(Ordering::Relaxed);
        if now_ms <= cur >> COUNTER_BITS && cur < FETCH_ADD_BELOW && n <= MAX_FETCH_ADD {
            // As in `reserve_one`.
            return self.last.fetch_add(n, Ordering::Relaxed) + 1;
        }
        self.reserve_cold(now_ms, n)
    }

    /// `reserve` when the clock has moved to a new millisecond (once a millisecond at most),
    /// the tick is near its end, or the batch is huge: a compare-and-swap loop.
    #[cold]
    #[inline(never)]
    fn reserve_cold(&self, now_ms: u64, n: u64) -> u64 {
        let mut cur = self.last.load(Ordering::Relaxed);
        loop {
            let first = if now_ms > cur >> COUNTER_BITS {
                // A millisecond the generator has not used yet: start its counter low.
                (now_ms << COUNTER_BITS) | (self.random.next_u64() & COUNTER_INIT_MASK)
            } else {
                match cur.checked_add(1) {
                    Some(t) => t,
                    // All 2^64 ticks are used: only reachable with a clock at year 10889.
                    // The ids keep the last tick and stay unique by their 58 random bits.
                    None => return u64::MAX,
                }
            };
            let last = first.saturating_add(n - 1);
            match self.last.compare_exchange_weak(cur, last, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return first,
                Err(actual) => cur = actual,
            }
        }
    }
}

#[inline]
fn tick_to_u128(tick: u64, random: u64) -> u128 {
    let t = tick.to_be_bytes();
    crate::comb::v7_u128(tick >> COUNTER_BITS, u16::from_be_bytes([t[6], t[7]]), random)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::FixedClock;
    use crate::rng::SeededRandom;

    const T0: i64 = 1_645_557_742_000;
    const MAX_MS: i64 = (1 << 48) - 1;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_unix_ms(ms)
    }

    fn fixed(ms: i64) -> (Arc<FixedClock>, V7Generator<Arc<FixedClock>, SeededRandom>) {
        let clock = Arc::new(FixedClock::new(at(ms)));
        (Arc::clone(&clock), V7Generator::with_clock_and_random(clock, SeededRandom::new(42)))
    }

    fn assert_strictly_increasing(ids: &[Comb]) {
        for (i, w) in ids.windows(2).enumerate() {
            assert!(w[0] < w[1], "ids[{i}] = {} >= ids[{}] = {}", w[0], i + 1, w[1]);
        }
    }

    #[test]
    fn layout_is_valid_v7() {
        let (_, g) = fixed(T0);
        let id = g.generate();
        let u = uuid::Uuid::from(id);
        assert_eq!(u.get_version_num(), 7);
        assert_eq!(u.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(id.unix_ms(), Some(T0));
        assert!(id.v7_counter() < 4096, "a new millisecond starts below 4096");
    }

    #[test]
    fn deterministic_with_fixed_clock_and_seed() {
        let (_, a) = fixed(T0);
        let (_, b) = fixed(T0);
        let xs: Vec<Comb> = (0..100).map(|_| a.generate()).collect();
        let ys: Vec<Comb> = (0..100).map(|_| b.generate()).collect();
        assert_eq!(xs, ys);
    }

    #[test]
    fn frozen_clock_counts_then_carries_into_timestamp() {
        let (_, g) = fixed(T0);
        let ids: Vec<Comb> = (0..200_000).map(|_| g.generate()).collect();
        assert_strictly_increasing(&ids);
        let last = ids.last().map(|c| c.unix_ms());
        // 200,000 ids at >= 61,440 a millisecond need 3 or 4 milliseconds.
        assert!(matches!(last, Some(Some(ms)) if (T0 + 2..=T0 + 3).contains(&ms)), "{last:?}");
    }

    #[test]
    fn clock_stepping_back_never_repeats() {
        let (clock, g) = fixed(T0);
        let mut ids = vec![g.generate()];
        clock.rewind(std::time::Duration::from_secs(3600));
        ids.extend((0..1000).map(|_| g.generate()));
        assert_strictly_increasing(&ids);
        assert!(ids.iter().all(|id| id.unix_ms() == Some(T0)), "time stays at the last seen");
        clock.set(at(T0 + 5));
        let later = g.generate();
        assert!(later > ids[1000]);
        assert_eq!(later.unix_ms(), Some(T0 + 5));
    }

    #[test]
    fn clock_jumping_forward_follows() {
        let (clock, g) = fixed(T0);
        let a = g.generate();
        clock.advance(std::time::Duration::from_secs(365 * 86_400));
        let b = g.generate();
        assert!(b > a);
        assert_eq!(b.unix_ms(), Some(T0 + 365 * 86_400_000));
    }

    #[test]
    fn clamps_at_the_48_bit_limit_without_panicking() {
        let (clock, g) = fixed(i64::MAX);
        let a = g.generate();
        assert_eq!(a.unix_ms(), Some(MAX_MS));
        clock.set(at(0));
        let mut ids = vec![a];
        let mut batch = vec![Comb::NIL; 70_000];
        g.fill(&mut batch);
        ids.extend(batch);
        ids.push(g.generate());
        // The tick space ends here: the last ids share the maximal prefix, distinct by their random tails.
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        assert!(ids.iter().all(|id| id.version() == 7 && id.is_rfc_variant()));
    }

    #[test]
    fn fill_continues_the_sequence() {
        let (_, g) = fixed(T0);
        let mut ids = vec![g.generate()];
        let mut batch = vec![Comb::NIL; 1000];
        g.fill(&mut batch);
        ids.extend_from_slice(&batch);
        ids.push(g.generate());
        g.fill(&mut []);
        ids.push(g.generate());
        assert_strictly_increasing(&ids);
        // Consecutive ticks: the counter goes up by exactly one.
        assert!(ids.windows(2).all(|w| w[1].v7_counter() == w[0].v7_counter().wrapping_add(1)));
    }

    #[test]
    fn generate_at_uses_the_given_time() {
        let (_, g) = fixed(T0);
        assert_eq!(g.generate_at(at(T0 + 1000)).unix_ms(), Some(T0 + 1000));
        // Earlier than the last one: keeps increasing at the last time.
        let b = g.generate_at(at(T0));
        assert_eq!(b.unix_ms(), Some(T0 + 1000));
    }

    #[test]
    fn a_clock_before_1970_stamps_1970() {
        let (_, g) = fixed(-5_000);
        assert_eq!(g.generate().unix_ms(), Some(0));
    }

    #[test]
    fn default_new_increases_across_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let ids: Vec<Comb> = (0..10_000).map(|_| Comb::new()).collect();
                    ids
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            let ids = h.join().expect("thread");
            assert_strictly_increasing(&ids);
            all.extend(ids);
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
