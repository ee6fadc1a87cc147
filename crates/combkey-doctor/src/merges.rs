//! Keys that would become one: the audit's check that no two keys of the table have the same
//! form after the change. Three ways there are such keys:
//! - a conversion that drops bits (the v1 family's node bits, NewId's, Groupon's) makes one key
//!   of two keys of its layout that differ only in those bits;
//! - two layouts that hold the same bits in another order make one key of a key of each: a v1
//!   key and the v6 form of it (RFC 9562 section 5.6: v6 is v1 with its time's fields in the
//!   other order) both carry one time, clock sequence and node, so both become one v7 key;
//! - a key becomes one the table already has, one that stays (a v1 key beside the v7 key a
//!   hand-made conversion gave it).
//!
//! The audit's pass over the keys feeds every key with its new form (the key itself where it
//! stays), in any order the database gives them. As an external sort does, the finder sorts
//! them in runs of bounded size, writes each full run to a scratch file, and merges the runs:
//! equal new forms of different keys come next to each other there. Memory stays one run
//! whatever the table's size; the scratch files hold 32 bytes a key, in the system's temporary
//! directory (`TMPDIR`), each removed from the directory as it is made (so a killed run leaves
//! none behind). A key `--rekey-from` re-keys comes with the key its row's time makes (the
//! time, and the old key's last 62 bits: two rows of one microsecond whose keys end alike
//! get one key).

use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use crate::audit::{Classifier, Kind};
use crate::error::Error;
use crate::options::Options;
use crate::plan::new_id;
use crate::rekey::rekeys;
use combkey::Comb;

/// Keys of one run held at most (2 MiB of keys with their new forms: the audit runs in 16 MiB
/// of heap, `doctor_memory.rs`).
const RUN: usize = 1 << 16;

/// Runs merged at once: when this many are written, they are merged into one.
const FAN_IN: usize = 64;

/// Examples of keys that would become one, kept for the message.
const SHOWN: usize = 5;

/// A key's new form and the key, as big-endian numbers: their order is the bytes' order.
type Pair = (u128, u128);

/// Finds keys that would become one, from every key of the table and its verdict.
pub(crate) struct Merges {
    options: Options,
    /// The audit's, for the names of the keys' layouts in the message.
    classifier: Classifier,
    run: Vec<Pair>,
    run_max: usize,
    fan_in: usize,
    written: Vec<Scratch>,
    /// A scratch file that could not be written: the check cannot decide.
    failed: Option<std::io::Error>,
}

impl Merges {
    /// A finder for the change `options` asks for, of keys `classifier` classifies.
    pub(crate) fn new(options: &Options, classifier: &Classifier) -> Self {
        Self::sized(options, classifier, RUN, FAN_IN)
    }

    fn sized(options: &Options, classifier: &Classifier, run_max: usize, fan_in: usize) -> Self {
        Merges {
            options: options.clone(),
            classifier: classifier.clone(),
            run: Vec::new(),
            run_max,
            fan_in,
            written: Vec::new(),
            failed: None,
        }
    }

    /// The next key of the table and its verdict. A key `--rekey-from` re-keys is left to
    /// [`Merges::feed_new`], with the key its row's time makes.
    pub(crate) fn feed(&mut self, id: Comb, kind: Kind) {
        if !rekeys(kind, &id, &self.options) {
            self.feed_new(id, new_id(&id, kind, &self.options).unwrap_or(id));
        }
    }

    /// The next key of the table and the key it becomes.
    pub(crate) fn feed_new(&mut self, id: Comb, new: Comb) {
        if self.failed.is_some() {
            return;
        }
        self.run.push((u128::from_be_bytes(new.into_bytes()), u128::from_be_bytes(id.into_bytes())));
        if self.run.len() >= self.run_max
            && let Err(e) = self.write_run()
        {
            self.failed = Some(e);
            self.run = Vec::new();
        }
    }

    /// Writes the run held to a scratch file; merges the files into one where there are
    /// `fan_in` of them.
    fn write_run(&mut self) -> std::io::Result<()> {
        self.run.sort_unstable();
        self.run.dedup();
        let run = std::mem::take(&mut self.run);
        self.written.push(Scratch::of(&mut run.iter().copied().map(Ok))?);
        self.run = run;
        self.run.clear();
        if self.written.len() >= self.fan_in {
            let runs = std::mem::take(&mut self.written);
            let merged = Scratch::of(&mut Merged::new(&runs)?)?;
            self.written.push(merged);
        }
        Ok(())
    }

    /// How many keys would become the same key as another, with a few examples.
    pub(crate) fn finish(mut self) -> Result<(usize, Vec<String>), Error> {
        let scratch = |e: std::io::Error| {
            Error::scratch(format!(
                "the audit's scratch files in {} (its check of keys that would become one): {e}",
                std::env::temp_dir().display()
            ))
        };
        if let Some(e) = self.failed.take() {
            return Err(scratch(e));
        }
        let mut found = Found { classifier: &self.classifier, group: None, count: 0, shown: Vec::new() };
        self.run.sort_unstable();
        self.run.dedup();
        if self.written.is_empty() {
            self.run.iter().for_each(|&p| found.next(p));
        } else {
            let last = Scratch::of(&mut self.run.iter().copied().map(Ok)).map_err(scratch)?;
            self.run = Vec::new();
            self.written.push(last);
            for p in Merged::new(&self.written).map_err(scratch)? {
                found.next(p.map_err(scratch)?);
            }
        }
        Ok(found.finish())
    }
}

/// The keys of one new form, so far.
struct Group {
    new: u128,
    first: u128,
    last: u128,
    keys: usize,
    /// One of them is the new form itself: a key that stays.
    stays: bool,
}

/// Keys that would become one, from pairs in order.
struct Found<'c> {
    classifier: &'c Classifier,
    group: Option<Group>,
    count: usize,
    shown: Vec<String>,
}

impl Found<'_> {
    fn next(&mut self, (new, old): Pair) {
        match &mut self.group {
            Some(g) if g.new == new => {
                // The same key in two rows (two stored forms of one id) is one key.
                if g.last != old {
                    g.last = old;
                    g.keys += 1;
                    g.stays |= old == new;
                }
            }
            _ => {
                self.close();
                self.group = Some(Group { new, first: old, last: old, keys: 1, stays: old == new });
            }
        }
    }

    fn close(&mut self) {
        let Some(g) = self.group.take() else { return };
        if g.keys < 2 {
            return;
        }
        self.count += g.keys - 1;
        if self.shown.len() < SHOWN {
            let id = |v: u128| Comb::from_bytes(v.to_be_bytes());
            let with_version = |v: u128| format!("{} ({})", id(v), self.classifier.classify(&id(v)).name());
            let more = |n: usize| if n > 0 { format!(" (and {n} more)") } else { String::new() };
            self.shown.push(if g.stays {
                // The others become the key that stays.
                let other = if g.first == g.new { g.last } else { g.first };
                format!(
                    "{}{} would become {}, a key the table holds already",
                    with_version(other),
                    more(g.keys - 2),
                    id(g.new)
                )
            } else {
                format!(
                    "{} and {}{} would both become {}",
                    with_version(g.first),
                    with_version(g.last),
                    more(g.keys - 2),
                    id(g.new)
                )
            });
        }
    }

    fn finish(mut self) -> (usize, Vec<String>) {
        self.close();
        (self.count, self.shown)
    }
}

/// A scratch file of pairs in order, removed from its directory as soon as it is made where
/// the system allows it (Unix), otherwise when it is dropped.
struct Scratch {
    file: File,
    path: PathBuf,
    /// Still in its directory.
    listed: bool,
}

impl Scratch {
    /// A scratch file holding `pairs` (in order), read from its start.
    fn of(pairs: &mut dyn Iterator<Item = std::io::Result<Pair>>) -> std::io::Result<Scratch> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut scratch = loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("combkey-doctor-keys-{}-{n}", std::process::id()));
            match File::options().read(true).write(true).create_new(true).open(&path) {
                Ok(file) => {
                    let listed = std::fs::remove_file(&path).is_err();
                    break Scratch { file, path, listed };
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        };
        let mut out = BufWriter::with_capacity(1 << 16, &mut scratch.file);
        for p in pairs {
            let (new, old) = p?;
            out.write_all(&new.to_be_bytes())?;
            out.write_all(&old.to_be_bytes())?;
        }
        out.flush()?;
        drop(out);
        scratch.file.seek(SeekFrom::Start(0))?;
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.listed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Scratch files' pairs merged into one order (each file read once, from its start).
struct Merged<'a> {
    readers: Vec<BufReader<&'a File>>,
    /// Each reader's next pair, least first.
    heap: BinaryHeap<std::cmp::Reverse<(Pair, usize)>>,
}

impl<'a> Merged<'a> {
    fn new(runs: &'a [Scratch]) -> std::io::Result<Self> {
        let mut m = Merged {
            readers: runs.iter().map(|s| BufReader::with_capacity(1 << 14, &s.file)).collect(),
            heap: BinaryHeap::new(),
        };
        for i in 0..m.readers.len() {
            m.refill(i)?;
        }
        Ok(m)
    }

    fn refill(&mut self, i: usize) -> std::io::Result<()> {
        let mut b = [0u8; 32];
        match self.readers[i].read_exact(&mut b) {
            Ok(()) => {
                let (new, old) = b.split_at(16);
                let n = |h: &[u8]| u128::from_be_bytes(h.try_into().unwrap_or_default());
                self.heap.push(std::cmp::Reverse(((n(new), n(old)), i)));
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Iterator for Merged<'_> {
    type Item = std::io::Result<Pair>;

    fn next(&mut self) -> Option<Self::Item> {
        let std::cmp::Reverse((p, i)) = self.heap.pop()?;
        Some(self.refill(i).map(|()| p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use combkey::layouts::{KeyMigration, Layout};

    /// 2024-06-01 in v1 ticks (100 ns since 1582-10-15).
    const T: i64 = 0x01ef_1f6e_0000_0000;

    fn v1(ticks: i64, node: [u8; 6]) -> Comb {
        combkey_testutil::v1_id(ticks, 0x80, 0x1234, node)
    }

    fn v6(ticks: i64, node: [u8; 6]) -> Comb {
        combkey_testutil::v6_id(ticks, 0x80, 0x1234, node)
    }

    fn options() -> Options {
        Options::default()
    }

    fn classifier() -> Classifier {
        crate::audit::Learner::new(combkey::Timestamp::now()).classifier(None)
    }

    /// The keys fed with the verdicts their versions give, in runs of `run` keys merged `fan_in`
    /// at a time.
    fn found(keys: &[Comb], run: usize, fan_in: usize) -> (usize, Vec<String>) {
        let mut m = Merges::sized(&options(), &classifier(), run, fan_in);
        for &k in keys {
            let kind = match k.version() {
                1 => Kind::Layout(Layout::V1),
                6 => Kind::Layout(Layout::V6),
                7 => Kind::Layout(Layout::V7),
                _ => Kind::Random,
            };
            m.feed(k, kind);
        }
        m.finish().expect("the scratch files are written")
    }

    fn v7_of(k: Comb) -> Comb {
        // The conversion itself is the oracle.
        let from = if k.version() == 6 { Layout::V6 } else { Layout::V1 };
        KeyMigration::new(from, Layout::V7).unwrap().convert(&k).unwrap()
    }

    #[test]
    fn keys_of_one_layout_that_differ_only_in_dropped_bits_are_found() {
        // v1 -> v7 drops the node's multicast and local bits (its first octet's two low bits).
        let a = v1(T, [0x10, 1, 2, 3, 4, 5]);
        let twin = v1(T, [0x13, 1, 2, 3, 4, 5]);
        assert_eq!(v7_of(a), v7_of(twin), "the premise");
        let others = [v1(T + 1, [0x10, 1, 2, 3, 4, 5]), v1(T, [0x10, 1, 2, 3, 4, 6])];
        let (n, shown) = found(&[a, others[0], twin, others[1], a], RUN, FAN_IN);
        assert_eq!(n, 1, "{shown:?}");
        let (lo, hi) = (a.min(twin), a.max(twin));
        assert_eq!(shown, [format!("{lo} (v1) and {hi} (v1) would both become {}", v7_of(a))]);
    }

    #[test]
    fn a_v1_key_and_the_v6_form_of_it_are_found() {
        let node = [0x10, 9, 8, 7, 6, 5];
        let a = v1(T + 77, node);
        let b = v6(T + 77, node);
        assert_ne!(a, b);
        assert_eq!(v7_of(a), v7_of(b), "the premise: both carry one time, clock sequence and node");
        let noise: Vec<Comb> = (0..500).map(|i| v1(T + 1000 + i, node)).collect();
        let mut keys = noise.clone();
        keys.insert(250, a);
        keys.push(b);
        let (n, shown) = found(&keys, RUN, FAN_IN);
        assert_eq!(n, 1, "{shown:?}");
        assert!(shown[0].contains(&a.to_string()) && shown[0].contains(&b.to_string()), "{shown:?}");
        assert!(shown[0].contains("(v6)"), "{shown:?}");
        assert_eq!(found(&noise, RUN, FAN_IN).0, 0);
    }

    #[test]
    fn a_key_that_becomes_one_the_table_has_is_found() {
        let a = v1(T, [0x10, 1, 2, 3, 4, 5]);
        let made_by_hand = v7_of(a);
        let (n, shown) = found(&[made_by_hand, Comb::new_v4(), a], RUN, FAN_IN);
        assert_eq!(n, 1);
        assert_eq!(shown, [format!("{a} (v1) would become {made_by_hand}, a key the table holds already")]);
    }

    #[test]
    fn one_key_in_two_rows_is_no_pair() {
        let a = v1(T, [0x10, 1, 2, 3, 4, 5]);
        let v4 = Comb::new_v4();
        assert_eq!(found(&[a, v4, a, v4], RUN, FAN_IN), (0, Vec::new()));
    }

    #[test]
    fn re_keyed_keys_come_with_the_keys_their_times_make() {
        // `feed` leaves a key --rekey-from re-keys to `feed_new`, which the audit calls with the
        // key the row's time makes.
        let v4 = Comb::new_v4();
        let mut m = Merges::new(&Options { rekey_from: Some("created_at".into()), ..options() }, &classifier());
        m.feed(v4, Kind::Random);
        assert!(m.run.is_empty());
        // Two v4 keys that end in the same 62 bits, of rows of one microsecond: one key.
        let mut other = v4.into_bytes();
        other[0] ^= 0xff;
        let other = Comb::from_bytes(other);
        let us = 1_700_000_000_000_000;
        assert_eq!(crate::rekey::rekeyed(&v4, us), crate::rekey::rekeyed(&other, us), "the premise");
        m.feed_new(v4, crate::rekey::rekeyed(&v4, us));
        m.feed_new(other, crate::rekey::rekeyed(&other, us));
        assert_eq!(m.finish().unwrap().0, 1);
    }

    #[test]
    fn runs_written_and_merged_find_what_one_run_finds() {
        // 20,000 v1 keys in random order with 37 twins, 11 v6 forms and 5 keys made by hand, in
        // runs of 100 merged 4 at a time (written runs merged into one, then again).
        let mut keys: Vec<Comb> = (0..20_000).map(|i| v1(T + i * 3, [0x10, 1, 2, 3, 4, 5])).collect();
        for i in 0..37i64 {
            keys.push(v1(T + i * 300, [0x13, 1, 2, 3, 4, 5]));
        }
        for i in 0..11i64 {
            keys.push(v6(T + (1 + i * 1_000) * 3, [0x10, 1, 2, 3, 4, 5]));
        }
        for i in 0..5usize {
            keys.push(v7_of(keys[15_000 + i]));
        }
        keys.extend((0..1000).map(|_| Comb::new_v4()));
        // A shuffle that needs no crate: a fixed permutation by a multiplier prime to the length.
        let n = keys.len();
        let shuffled: Vec<Comb> = (0..n).map(|i| keys[(i * 7919) % n]).collect();
        assert_eq!(found(&shuffled, RUN, FAN_IN).0, 37 + 11 + 5);
        assert_eq!(found(&shuffled, 100, 4).0, 37 + 11 + 5);
        assert_eq!(found(&shuffled, 100, 4).1, found(&shuffled, RUN, FAN_IN).1);
    }

    #[test]
    fn a_scratch_file_is_gone_from_the_directory_once_made() {
        let s = Scratch::of(&mut [(1u128, 2u128)].into_iter().map(Ok)).unwrap();
        assert!(s.path.starts_with(std::env::temp_dir()), "{}", s.path.display());
        if cfg!(unix) {
            assert!(!s.listed && !s.path.exists(), "{} is gone", s.path.display());
        }
        let pairs: Vec<Pair> = Merged::new(std::slice::from_ref(&s)).unwrap().map(Result::unwrap).collect();
        assert_eq!(pairs, [(1, 2)]);
    }
}
