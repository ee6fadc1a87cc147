//! Old keys that would become one: two keys of a layout whose conversion drops bits (the v1
//! family's node bits, NewId's, Groupon's) that differ only in those bits convert to the same
//! new key. The audit finds them in its pass over the keys, which come in the database's key
//! order: where that order is the keys' byte order (a `uuid`, `BINARY(16)` or `BLOB` column),
//! two such keys share every byte before the first byte any conversion drops bits of, so they
//! come in one run of keys with those bytes alike, and only a run is held. Where the keys do
//! not come in byte order (a text column's collation), or one run is too long to hold, the
//! finder says it could not decide and the database groups the keys instead
//! (`Catalog::masked_duplicates`, one `GROUP BY` of the whole table).

use crate::audit::{Kind, target};
use combkey::Comb;
use combkey::layouts::{KeyMigration, Layout};

/// Keys of one run held at most (64 KiB of keys); a longer run leaves the check to the
/// database.
const RUN_MAX: usize = 4096;

/// Examples of keys that would become one, kept for the message.
const SHOWN: usize = 5;

/// Finds old keys that would become one in a stream of keys in byte order.
pub(crate) struct Merges {
    to: Layout,
    convert_uncertain: bool,
    /// Bytes, from the first, that every conversion dropping bits keeps whole.
    prefix: usize,
    /// The keys since the last whose first `prefix` bytes differ, with their verdicts.
    run: Vec<(Comb, Kind)>,
    /// Still deciding: the keys came in byte order and every run fit.
    sure: bool,
    found: (usize, Vec<String>),
}

impl Merges {
    /// A finder for conversions to `to` (and of uncertain keys too, where they convert).
    pub(crate) fn new(to: Layout, convert_uncertain: bool) -> Self {
        let prefix = Layout::ALL
            .iter()
            .filter_map(|&l| lossy(Kind::Layout(l), to))
            .filter_map(|m| kept_bits(&m))
            .map(|keep| keep.iter().position(|&b| b != 0xff).unwrap_or(16))
            .min()
            .unwrap_or(16);
        Merges { to, convert_uncertain, prefix, run: Vec::new(), sure: true, found: (0, Vec::new()) }
    }

    /// The next key of the stream and its verdict.
    pub(crate) fn feed(&mut self, id: Comb, kind: Kind) {
        if !self.sure || self.prefix >= 16 {
            return;
        }
        if let Some(&(last, _)) = self.run.last() {
            let (a, b) = (last.as_bytes(), id.as_bytes());
            if b < a {
                // Not the keys' byte order: runs would miss pairs.
                self.give_up();
                return;
            }
            if a == b {
                // The same id in another row: one key.
                return;
            }
            if a[..self.prefix] != b[..self.prefix] {
                self.close_run();
            }
        }
        if self.run.len() >= RUN_MAX {
            self.give_up();
            return;
        }
        self.run.push((id, kind));
    }

    /// What was found: how many keys would become the same key as another, with a few
    /// examples; `None` where it could not decide (the database is asked then).
    pub(crate) fn finish(mut self) -> Option<(usize, Vec<String>)> {
        if !self.sure {
            return None;
        }
        self.close_run();
        Some(self.found)
    }

    fn give_up(&mut self) {
        self.sure = false;
        self.run = Vec::new();
    }

    /// The keys of the run that would become one: grouped by their verdict and new key.
    fn close_run(&mut self) {
        if self.run.len() >= 2 {
            let mut news: Vec<(Comb, Comb, Kind)> = self
                .run
                .iter()
                .filter_map(|&(old, kind)| {
                    let kind = match kind {
                        Kind::Uncertain(l) if self.convert_uncertain => Kind::Layout(l),
                        k => k,
                    };
                    let new = lossy(kind, self.to)?.convert(&old).ok()?;
                    Some((new, old, kind))
                })
                .collect();
            news.sort_unstable_by_key(|&(new, old, _)| (new, old));
            for same_new in news.chunk_by(|a, b| a.0 == b.0) {
                let (new, first, kind) = same_new[0];
                let group: Vec<Comb> = same_new.iter().filter(|x| x.2 == kind).map(|x| x.1).collect();
                if group.len() >= 2 {
                    self.found.0 += group.len() - 1;
                    if self.found.1.len() < SHOWN {
                        let last = group[group.len() - 1];
                        let more =
                            if group.len() > 2 { format!(" (and {} more)", group.len() - 2) } else { String::new() };
                        self.found.1.push(format!("{first} and {last}{more} would both become {new}"));
                    }
                }
            }
        }
        self.run.clear();
    }
}

/// The bits of the old key that `m`'s conversion drops, as a mask per display byte of the
/// bits it keeps: found by flipping each bit of a key of the old layout and seeing whether
/// the new key changes (so the mask never disagrees with the conversion itself).
pub(crate) fn kept_bits(m: &KeyMigration) -> Option<[u8; 16]> {
    let probe = m.from().generate().ok()?;
    let new = m.convert(&probe).ok()?;
    let mut keep = [0xffu8; 16];
    for (i, k) in keep.iter_mut().enumerate() {
        for bit in 0..8 {
            let mut b = probe.into_bytes();
            b[i] ^= 1 << bit;
            if m.convert(&Comb::from_bytes(b)).ok() == Some(new) {
                *k &= !(1 << bit);
            }
        }
    }
    Some(keep)
}

/// The conversion of keys of verdict `kind` to `to`, where it drops bits.
fn lossy(kind: Kind, to: Layout) -> Option<KeyMigration> {
    let Kind::Layout(from) = kind else { return None };
    let to = target(kind, to).ok()??;
    let m = KeyMigration::new(from, to).ok()?;
    (!m.keeps_every_bit()).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// v1 keys of the given times (100 ns ticks since 1582) with `node`.
    fn v1(ticks: u64, node: [u8; 6]) -> Comb {
        combkey_testutil::v1_id(i64::try_from(ticks).unwrap(), 0x80, 0x1234, node)
    }

    /// 2024-06-01 in v1 ticks.
    const T: u64 = 0x01ef_1f6e_0000_0000;

    fn fed(keys: &[Comb]) -> Option<(usize, Vec<String>)> {
        let mut m = Merges::new(Layout::V7, false);
        for &k in keys {
            m.feed(k, Kind::Layout(Layout::V1));
        }
        m.finish()
    }

    #[test]
    fn runs_are_of_keys_alike_before_the_first_byte_any_conversion_drops_bits_of() {
        // v1 -> v7 drops the node's multicast and local bits (its first octet's two low bits),
        // Groupon's and NewId's conversions bits of byte 6.
        let first = |l: Layout| {
            lossy(Kind::Layout(l), Layout::V7).and_then(|m| kept_bits(&m)).map(|k| k.iter().position(|&b| b != 0xff))
        };
        assert_eq!(first(Layout::V1), Some(Some(10)));
        assert_eq!(first(Layout::Locality), Some(Some(6)));
        assert_eq!(first(Layout::V7), None, "v7 stays");
        assert_eq!(Merges::new(Layout::V7, false).prefix, 6);
    }

    #[test]
    fn keys_that_differ_only_in_dropped_bits_are_found_in_byte_order() {
        let a = v1(T, [0x10, 1, 2, 3, 4, 5]);
        let twin = v1(T, [0x13, 1, 2, 3, 4, 5]);
        let other = v1(T + 1, [0x10, 1, 2, 3, 4, 5]);
        let same_run_not_twin = v1(T, [0x10, 1, 2, 3, 4, 6]);
        // The conversion itself is the oracle: the twins convert to one key.
        let m = KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        assert_eq!(m.convert(&a).unwrap(), m.convert(&twin).unwrap());
        let mut keys = vec![a, twin, other, same_run_not_twin, a];
        keys.sort();
        let (n, shown) = fed(&keys).expect("in byte order: decided");
        assert_eq!(n, 1, "{shown:?}");
        assert_eq!(shown, [format!("{a} and {twin} would both become {}", m.convert(&a).unwrap())]);
    }

    #[test]
    fn distinct_keys_are_no_merge() {
        let mut keys: Vec<Comb> = (0..1000).map(|i| v1(T + i * 7, [0x10, 1, 2, 3, 4, 5])).collect();
        keys.sort();
        assert_eq!(fed(&keys), Some((0, Vec::new())));
    }

    #[test]
    fn keys_out_of_byte_order_or_a_run_too_long_leave_it_to_the_database() {
        let a = v1(T, [0x10, 1, 2, 3, 4, 5]);
        let b = v1(T + 1, [0x10, 1, 2, 3, 4, 5]);
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        assert_eq!(fed(&[hi, lo]), None, "a text column's collation, say");
        let run: Vec<Comb> = (0..=u32::try_from(RUN_MAX).unwrap())
            .map(|i| {
                let mut n = [0x10, 0, 0, 0, 0, 0];
                n[2..6].copy_from_slice(&i.to_be_bytes());
                v1(T, n)
            })
            .collect();
        assert_eq!(fed(&run), None, "one run of {} keys", run.len());
    }

    #[test]
    fn keys_of_other_verdicts_are_no_merge() {
        let a = v1(T, [0x10, 1, 2, 3, 4, 5]);
        let twin = v1(T, [0x13, 1, 2, 3, 4, 5]);
        let mut m = Merges::new(Layout::V7, false);
        m.feed(a.min(twin), Kind::Layout(Layout::V1));
        m.feed(a.max(twin), Kind::Random);
        assert_eq!(m.finish(), Some((0, Vec::new())));
        // Uncertain v1 keys count where they convert.
        let mut m = Merges::new(Layout::V7, true);
        m.feed(a.min(twin), Kind::Uncertain(Layout::V1));
        m.feed(a.max(twin), Kind::Uncertain(Layout::V1));
        assert_eq!(m.finish().map(|f| f.0), Some(1));
    }
}
