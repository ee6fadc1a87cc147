//! A simulation of a range-sharded engine (CockroachDB, TiDB, YugabyteDB with range
//! sharding; none of them runs here): the key space is cut into ranges, a range that grows
//! past `max_range_rows` splits at its median key, and each insert lands on the range that
//! holds its key. The question is how hot the hottest range gets: a time-first key sends
//! every insert to the last range, which then serves the whole write load alone.
//!
//! Keys come from combkey's own generators on a simulated clock (`write_rate` rows a
//! second), so the short prefix COMB's interval and wrap and the locality UUID's counter
//! behave as they do in production.

use std::collections::BTreeSet;
use std::sync::Arc;

use combkey::layouts::{LocalityGenerator, LocalityMode};
use combkey::{FixedClock, ShortPrefix, Timestamp, V7Generator};
use rand::RngExt;

/// The key kinds simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Comb,
    Short,
    Locality,
    V4,
}

impl KeyKind {
    pub(crate) const ALL: [KeyKind; 4] = [KeyKind::Comb, KeyKind::Short, KeyKind::Locality, KeyKind::V4];

    pub(crate) fn name(self) -> &'static str {
        match self {
            KeyKind::Comb => "prefix COMB (v7)",
            KeyKind::Short => "short prefix COMB (60 s, 2 bytes)",
            KeyKind::Locality => "Groupon locality UUID",
            KeyKind::V4 => "random v4",
        }
    }
}

/// What one simulation found, over the last `window` inserts.
///
/// `hottest` is the mean, over chunks of `max_range_rows / 10` consecutive inserts, of the
/// share of the chunk that its busiest range took: 100% when every write of the moment goes
/// to one range, about `1 / ranges` (plus noise) when writes spread evenly.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub(crate) kind: KeyKind,
    pub(crate) write_rate: u64,
    pub(crate) ranges: usize,
    /// Share of the window's inserts on its busiest range.
    pub(crate) hottest: f64,
    /// Ranges that took at least one insert in the window.
    pub(crate) written: usize,
}

/// The key space as ranges: sorted start keys, each range's row count and a stable id (a
/// split keeps the left half's id), and every key.
struct Ranges {
    starts: Vec<u128>,
    rows: Vec<usize>,
    ids: Vec<usize>,
    next_id: usize,
    keys: BTreeSet<u128>,
    max_rows: usize,
}

impl Ranges {
    fn new(max_rows: usize) -> Self {
        Ranges { starts: vec![0], rows: vec![0], ids: vec![0], next_id: 1, keys: BTreeSet::new(), max_rows }
    }

    /// Inserts `key`; returns the id of the range that took it.
    fn insert(&mut self, key: u128) -> usize {
        let i = self.starts.partition_point(|s| *s <= key) - 1;
        let id = self.ids[i];
        if !self.keys.insert(key) {
            return id; // a duplicate key (never for these kinds at these sizes)
        }
        self.rows[i] += 1;
        if self.rows[i] > self.max_rows {
            let half = self.rows[i] / 2;
            let end = self.starts.get(i + 1).copied();
            let mut in_range = self.keys.range(self.starts[i]..);
            let median = in_range.nth(half).copied();
            if let Some(m) = median.filter(|m| end.is_none_or(|e| *m < e)) {
                self.starts.insert(i + 1, m);
                self.rows.insert(i + 1, self.rows[i] - half);
                self.rows[i] = half;
                self.ids.insert(i + 1, self.next_id);
                self.next_id += 1;
            }
        }
        id
    }
}

/// Simulates `rows` inserts at `write_rate` rows a second into ranges of at most
/// `max_range_rows`, and measures the last `window` inserts.
pub(crate) fn simulate(kind: KeyKind, write_rate: u64, rows: usize, max_range_rows: usize, window: usize) -> Outcome {
    let t0 = Timestamp::from_unix_ms(1_767_225_600_000); // 2026-01-01
    let clock = Arc::new(FixedClock::new(t0));
    let v7 = V7Generator::new();
    let short = ShortPrefix::default();
    let locality = LocalityGenerator::with_parts(LocalityMode::Variable, 4242, [0, 0, 1, 2, 3, 4], 0, clock.clone());
    let mut rng = rand::rng();
    let mut ranges = Ranges::new(max_range_rows);
    // Per chunk of consecutive inserts (a tenth of a range's size, so a range splits at
    // most once in a chunk): how many went to each range.
    let chunk = (max_range_rows / 10).max(1);
    let mut counts: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut written: BTreeSet<usize> = BTreeSet::new();
    let mut shares = Vec::new();
    let per_row_us = 1_000_000 / write_rate.max(1);
    for i in 0..rows {
        let us = (i as u64).saturating_mul(per_row_us);
        let t = t0.saturating_add_ms(i64::try_from(us / 1000).unwrap_or(i64::MAX));
        let key = match kind {
            KeyKind::Comb => v7.generate_at(t),
            KeyKind::Short => short.make(t, rng.random()),
            KeyKind::Locality => {
                clock.set(t);
                locality.generate()
            }
            KeyKind::V4 => combkey::Comb::from_bytes(rng.random()),
        };
        let range = ranges.insert(u128::from_be_bytes(*key.as_bytes()));
        if i + window >= rows {
            *counts.entry(range).or_default() += 1;
            written.insert(range);
            if counts.values().sum::<usize>() == chunk {
                #[allow(clippy::cast_precision_loss)]
                shares.push(counts.values().copied().max().unwrap_or(0) as f64 / chunk as f64);
                counts.clear();
            }
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let hottest = shares.iter().sum::<f64>() / shares.len().max(1) as f64;
    Outcome { kind, write_rate, ranges: ranges.starts.len(), hottest, written: written.len() }
}

/// The README table: one row per key kind, one column per write rate.
pub(crate) fn table(outcomes: &[Outcome], rates: &[u64], rows: usize, max_range_rows: usize, window: usize) -> String {
    let mut s = format!(
        "{rows} inserts, ranges split past {max_range_rows} rows, the last {window} inserts measured: \
         in each run of {} consecutive inserts, the share its busiest range took, averaged \
         (ranges written in the window / ranges in all)\n| key |",
        (max_range_rows / 10).max(1)
    );
    for r in rates {
        s.push_str(&format!(" {r} rows/s |"));
    }
    s.push_str("\n| --- |");
    for _ in rates {
        s.push_str(" --- |");
    }
    s.push('\n');
    for kind in KeyKind::ALL {
        s.push_str(&format!("| {} |", kind.name()));
        for r in rates {
            if let Some(o) = outcomes.iter().find(|o| o.kind == kind && o.write_rate == *r) {
                s.push_str(&format!(" {:.1}% ({}/{}) |", o.hottest * 100.0, o.written, o.ranges));
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_at_the_median_and_keep_every_key() {
        let mut r = Ranges::new(4);
        for k in [10u128, 20, 30, 40, 50] {
            r.insert(k);
        }
        assert_eq!(r.starts, [0, 30]);
        assert_eq!(r.rows, [2, 3]);
        assert_eq!(r.insert(5), 0);
        assert_eq!(r.insert(35), 1);
        assert_eq!(r.rows.iter().sum::<usize>(), 7);
    }

    #[test]
    fn a_time_first_key_writes_one_range_and_v4_spreads() {
        let comb = simulate(KeyKind::Comb, 1000, 20_000, 1000, 2000);
        assert!((comb.hottest - 1.0).abs() < 0.01, "{comb:?}");
        let v4 = simulate(KeyKind::V4, 1000, 20_000, 1000, 2000);
        assert!(v4.hottest < 0.2 && v4.written > 10, "{v4:?}");
    }
}
