//! Concurrency at scale: 4 threads x N ids (default 5,000,000) from one shared generator,
//! then from one generator per thread: no duplicate among all of them, and each generator's
//! ids strictly increasing in the order each thread received them.
//!
//! `cargo run --release -p combkey --example scale -- 5000000`

use std::sync::Arc;
use std::time::Instant;

use combkey::{Comb, V7Generator};

fn run(per_thread: usize, shared: bool) -> Vec<Comb> {
    let one = Arc::new(V7Generator::new());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let g = if shared { Arc::clone(&one) } else { Arc::new(V7Generator::new()) };
            std::thread::spawn(move || {
                let ids: Vec<Comb> = (0..per_thread).map(|_| g.generate()).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "a thread's ids are not strictly increasing");
                ids
            })
        })
        .collect();
    handles.into_iter().flat_map(|h| h.join().expect("generator thread")).collect()
}

fn main() {
    let per_thread: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5_000_000);
    let started = Instant::now();
    let mut all = run(per_thread, true);
    all.extend(run(per_thread, false));
    let made = started.elapsed();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    println!(
        "{n} ids (4 threads x {per_thread}, shared generator and per-thread generators) in {:.2} s: {} duplicates",
        made.as_secs_f64(),
        n - all.len()
    );
    assert_eq!(all.len(), n, "duplicates found");
}
