//! A process that makes ids, forks, and keeps making ids in parent and child: no id twice.
//! Its own harness (no test threads), since a child of a multi-threaded process may only
//! call async-signal-safe functions until it execs.

#[cfg(unix)]
fn main() {
    use combkey::{Comb, V7Generator};
    use std::io::{Read, Write};
    use std::os::fd::FromRawFd;

    const N: usize = 200_000;
    let mut failed = 0;
    let mut passed = 0;

    // Two generators in the parent: the process-wide default, and one on a frozen clock, so
    // that parent and child walk the very same ticks and only the random bits tell their ids
    // apart (without the reseed after fork, those would be the same too).
    let own = V7Generator::with_clock(combkey::FixedClock::new(combkey::Timestamp::from_unix_ms(1_700_000_000_000)));
    // And a v1 generator on a frozen clock: its clock sequence and node, drawn before the
    // fork, are all that would tell parent's and child's ids apart; the child draws its own.
    let v1 = combkey::layouts::V1Generator::with_clock_and_random(
        combkey::FixedClock::new(combkey::Timestamp::from_unix_ms(1_700_000_000_000)),
        combkey::ThreadRandom,
    );
    let before: Vec<Comb> = (0..1000)
        .map(|_| Comb::new())
        .chain((0..1000).map(|_| own.generate()))
        .chain((0..1000).map(|_| v1.generate()))
        .collect();

    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints for pipe() to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: this process has one thread (harness = false), so the child may run Rust code.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    // The frozen-clock generator draws first: `rand` reseeds from the OS every 64 KiB, after
    // which even an unfixed copy would drift apart.
    let make = || -> Vec<Comb> {
        (0..N).map(|_| own.generate()).chain((0..N).map(|_| Comb::new())).chain((0..N).map(|_| v1.generate())).collect()
    };
    if pid == 0 {
        // Child: make ids, send their bytes to the parent, exit without running destructors.
        // SAFETY: the read end is closed and the write end owned by this File from here on.
        unsafe { libc::close(fds[0]) };
        let mut out = unsafe { std::fs::File::from_raw_fd(fds[1]) };
        let ids = make();
        let bytes: Vec<u8> = ids.iter().flat_map(|id| *id.as_bytes()).collect();
        let ok = out.write_all(&bytes).is_ok();
        drop(out);
        // SAFETY: leaving the child at once, as after any fork.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    // SAFETY: as above, for the parent's ends.
    unsafe { libc::close(fds[1]) };
    let mut input = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    let parent_ids = make();
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes).expect("read the child's ids");
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let child_ids: Vec<Comb> = bytes.chunks_exact(16).map(|c| Comb::from_slice(c).expect("16 bytes")).collect();

    let mut check = |name: &str, ok: bool| {
        if ok {
            passed += 1;
            println!("ok   {name}");
        } else {
            failed += 1;
            println!("FAIL {name}");
        }
    };
    check("the child sent all its ids", child_ids.len() == 3 * N && status == 0);
    let mut all: Vec<Comb> = before.iter().chain(&parent_ids).chain(&child_ids).copied().collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    check(&format!("no duplicate among {n} ids from parent and child"), all.len() == n);
    let ticks = |id: &Comb| combkey::layouts::Layout::V1.gregorian_ticks(id).ok();
    let increasing = |ids: &[Comb]| {
        ids[..N].windows(2).all(|w| w[0] < w[1])
            && ids[N..2 * N].windows(2).all(|w| w[0] < w[1])
            && ids[2 * N..].windows(2).all(|w| ticks(&w[0]) < ticks(&w[1]))
    };
    check("each process's ids strictly increasing", increasing(&parent_ids) && increasing(&child_ids));
    println!("fork: {passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}

#[cfg(not(unix))]
fn main() {
    println!("fork: no fork() on this platform");
}
