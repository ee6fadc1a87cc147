//! Generator guarantees under threads and clock faults.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use combkey::{Clock, Comb, FixedClock, Timestamp, V7Generator};

const T0: Timestamp = Timestamp::from_unix_ms(1_700_000_000_000);

fn assert_strictly_increasing(ids: &[Comb], what: &str) {
    if let Some(i) = ids.windows(2).position(|w| w[0] >= w[1]) {
        panic!("{what}: ids[{i}] = {} is not below ids[{}] = {}", ids[i], i + 1, ids[i + 1]);
    }
}

fn assert_no_duplicates(all: &mut Vec<Comb>) {
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "{} duplicates", n - all.len());
}

/// Runs `threads` threads that each take `per_thread` ids from `g`, calling `between` with
/// the thread number and index before each id.
fn run<C: Clock + 'static>(
    g: Arc<V7Generator<C>>,
    threads: usize,
    per_thread: usize,
    between: impl Fn(usize, usize) + Send + Sync + 'static,
) -> Vec<Comb> {
    let between = Arc::new(between);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let g = Arc::clone(&g);
            let between = Arc::clone(&between);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(per_thread);
                for i in 0..per_thread {
                    between(t, i);
                    ids.push(g.generate());
                }
                assert_strictly_increasing(&ids, &format!("thread {t}"));
                ids
            })
        })
        .collect();
    let mut all = Vec::with_capacity(threads * per_thread);
    for h in handles {
        all.extend(h.join().expect("a generator thread panicked"));
    }
    all
}

#[test]
fn four_threads_a_million_each_from_one_generator() {
    let g = Arc::new(V7Generator::new());
    let mut all = run(g, 4, 1_000_000, |_, _| {});
    assert_no_duplicates(&mut all);
}

#[test]
fn clock_stepped_back_an_hour_mid_run() {
    let clock = Arc::new(FixedClock::new(T0));
    let g = Arc::new(V7Generator::with_clock(Arc::clone(&clock)));
    let c = Arc::clone(&clock);
    let mut all = run(g, 4, 250_000, move |t, i| {
        if t == 0 && i == 100_000 {
            c.rewind(Duration::from_secs(3600));
        }
        if t == 1 && i % 1000 == 0 {
            c.advance(Duration::from_millis(1));
        }
    });
    assert_no_duplicates(&mut all);
}

#[test]
fn frozen_clock_many_threads() {
    let clock = Arc::new(FixedClock::new(T0));
    let g = Arc::new(V7Generator::with_clock(Arc::clone(&clock)));
    let mut all = run(g, 4, 250_000, |_, _| {});
    // 1M ids at 61,440-65,536 a millisecond: the time slips by 16 or 17 ms, no more.
    let max = all.iter().filter_map(|id| id.unix_ms()).max();
    assert!(matches!(max, Some(ms) if ms - 1_700_000_000_000 <= 17), "{max:?}");
    assert_no_duplicates(&mut all);
}

#[test]
fn clock_jumping_forward_a_year_and_back_across_millisecond_boundaries() {
    let t0 = T0.unix_ms();
    let tick = Arc::new(AtomicI64::new(0));
    let tk = Arc::clone(&tick);
    // A clock that jitters back and forth across millisecond boundaries, then jumps a year.
    let clock = move || {
        let n = tk.fetch_add(1, Ordering::Relaxed);
        let jitter = [0, 1, 0, 2, 1, 0][usize::try_from(n % 6).unwrap_or(0)];
        Timestamp::from_unix_ms(if n > 500_000 { t0 + 365 * 86_400_000 + jitter } else { t0 + n / 1000 + jitter })
    };
    let g = Arc::new(V7Generator::with_clock(clock));
    let mut all = run(g, 4, 250_000, |_, _| {});
    let later = all.iter().filter(|id| id.unix_ms() >= Some(t0 + 365 * 86_400_000)).count();
    assert!(later > 0, "the jump forward shows in the ids");
    assert_no_duplicates(&mut all);
}

#[test]
fn separate_generators_do_not_collide() {
    let gens: Vec<_> = (0..4).map(|_| Arc::new(V7Generator::new())).collect();
    let handles: Vec<_> = gens
        .iter()
        .map(|g| {
            let g = Arc::clone(g);
            std::thread::spawn(move || {
                let mut ids = vec![Comb::NIL; 250_000];
                for chunk in ids.chunks_mut(1000) {
                    g.fill(chunk);
                }
                assert_strictly_increasing(&ids, "batch");
                ids
            })
        })
        .collect();
    let mut set = HashSet::new();
    for h in handles {
        for id in h.join().expect("thread") {
            assert!(set.insert(id), "duplicate {id}");
        }
    }
}
