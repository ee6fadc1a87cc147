//! Generator and conversion speed against uuid and ulid, in one run.
//!
//! `cargo bench -p combkey --features face`; as a smoke test `cargo bench -p combkey --features face -- --test`.

use std::hint::black_box;

use combkey::{Comb, ShortPrefix, ShortPrefixGenerator, SystemClock, V7Generator};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

fn one_id(c: &mut Criterion) {
    let mut g = c.benchmark_group("one id");
    g.bench_function("combkey Comb::new (v7, coarse clock)", |b| b.iter(|| black_box(Comb::new())));
    let precise = V7Generator::with_clock(SystemClock);
    g.bench_function("combkey v7, SystemClock", |b| b.iter(|| black_box(precise.generate())));
    g.bench_function("combkey Comb::now_v7 (v7, exact clock)", |b| b.iter(|| black_box(Comb::now_v7())));
    let short = ShortPrefixGenerator::new(ShortPrefix::default());
    g.bench_function("combkey short prefix", |b| b.iter(|| black_box(short.generate())));
    g.bench_function("uuid Uuid::now_v7", |b| b.iter(|| black_box(uuid::Uuid::now_v7())));
    g.bench_function("uuid Uuid::new_v4", |b| b.iter(|| black_box(uuid::Uuid::new_v4())));
    g.bench_function("ulid Ulid::new", |b| b.iter(|| black_box(ulid::Ulid::new())));
    g.finish();
}

/// A face and back (uuidv47's scheme): one SipHash-2-4 of 10 bytes each way.
#[cfg(feature = "face")]
fn faces(c: &mut Criterion) {
    let mut g = c.benchmark_group("faces");
    let key = combkey::FaceKey::from_hex("000102030405060708090a0b0c0d0e0f").expect("key");
    let id = Comb::new();
    let face = key.mask(id).expect("v7");
    g.bench_function("combkey FaceKey::mask", |b| b.iter(|| black_box(key.mask(black_box(id)))));
    g.bench_function("combkey FaceKey::unmask (time checked)", |b| b.iter(|| black_box(key.unmask(black_box(face)))));
    g.bench_function("combkey FaceKey::unmask_any_time", |b| {
        b.iter(|| black_box(key.unmask_any_time(black_box(face))))
    });
    g.finish();
}

#[cfg(not(feature = "face"))]
fn faces(_: &mut Criterion) {
    eprintln!("faces: skipped (run with --features face)");
}

/// What one `Comb::new` is made of, each part alone: the floor under the generator. Every id
/// needs one atomic read-modify-write on the one shared word (ids increase across threads), one
/// clock read and 8 bytes from a CSPRNG; `Uuid::new_v4` needs 16 bytes from `rand`'s
/// thread-local ChaCha12 and neither of the others.
fn parts(c: &mut Criterion) {
    use std::sync::atomic::{AtomicU64, Ordering};

    use combkey::{Clock, CoarseClock, RandomSource, ThreadRandom};

    #[repr(align(128))]
    struct OwnLine(AtomicU64);
    static SHARED: OwnLine = OwnLine(AtomicU64::new(0));

    let mut g = c.benchmark_group("one id, its parts");
    g.bench_function("fetch_add on a shared atomic", |b| b.iter(|| SHARED.0.fetch_add(1, Ordering::Relaxed)));
    g.bench_function("CoarseClock::now", |b| b.iter(|| CoarseClock.now()));
    g.bench_function("ThreadRandom 8 bytes (ChaCha8)", |b| b.iter(|| ThreadRandom.next_u64()));
    g.bench_function("rand::rng() 16 bytes (ChaCha12, as new_v4)", |b| b.iter(rand::random::<u128>));
    g.finish();
}

fn batch(c: &mut Criterion) {
    const N: usize = 1000;
    let mut g = c.benchmark_group("batch of 1000");
    g.throughput(Throughput::Elements(N as u64));
    let v7 = V7Generator::new();
    let mut buf = vec![Comb::NIL; N];
    g.bench_function("combkey v7 fill", |b| b.iter(|| v7.fill(black_box(&mut buf))));
    let short = ShortPrefixGenerator::new(ShortPrefix::default());
    g.bench_function("combkey short prefix fill", |b| b.iter(|| short.fill(black_box(&mut buf))));
    g.bench_function("uuid now_v7 loop", |b| {
        b.iter(|| {
            for slot in buf.iter_mut() {
                *slot = Comb::from(uuid::Uuid::now_v7());
            }
            black_box(&buf);
        })
    });
    g.finish();
}

fn convert(c: &mut Criterion) {
    const N: usize = 1000;
    let mut ids = vec![Comb::NIL; N];
    V7Generator::new().fill(&mut ids);
    let stored: Vec<[u8; 16]> = ids.iter().map(|id| id.to_sqlserver_bytes()).collect();
    let mut g = c.benchmark_group("sql server conversion, 1000 ids");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("public -> stored", |b| {
        b.iter_batched_ref(
            || vec![[0u8; 16]; N],
            |out| {
                for (o, id) in out.iter_mut().zip(black_box(&ids)) {
                    *o = id.to_sqlserver_bytes();
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("stored -> public", |b| {
        b.iter_batched_ref(
            || vec![Comb::NIL; N],
            |out| {
                for (o, s) in out.iter_mut().zip(black_box(&stored)) {
                    *o = Comb::from_sqlserver_bytes(*s);
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Ids per second from one thread and from one thread per core, all drawing from the one
/// process-wide generator (`Comb::new` keeps ids increasing across threads with one shared
/// atomic), against `uuid::Uuid::now_v7` driven the same way. Criterion's time per element is
/// the wall time divided by the ids all threads made.
fn threads(c: &mut Criterion) {
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    fn run(threads: usize, iters: u64, make: fn() -> [u8; 16]) -> Duration {
        let start = Arc::new(Barrier::new(threads + 1));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let start = Arc::clone(&start);
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..iters {
                        black_box(make());
                    }
                })
            })
            .collect();
        start.wait();
        let t = Instant::now();
        for w in workers {
            w.join().expect("a bench thread panicked");
        }
        t.elapsed()
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1];
    if cores > 1 {
        counts.push(cores);
    }
    let mut g = c.benchmark_group("threads");
    for &n in &counts {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("combkey Comb::new, {n} thread(s)"), |b| {
            b.iter_custom(|iters| run(n, iters, || *Comb::new().as_bytes()))
        });
        g.bench_function(format!("uuid Uuid::now_v7, {n} thread(s)"), |b| {
            b.iter_custom(|iters| run(n, iters, || *uuid::Uuid::now_v7().as_bytes()))
        });
    }
    g.finish();
}

criterion_group!(benches, one_id, faces, parts, batch, convert, threads);
criterion_main!(benches);
