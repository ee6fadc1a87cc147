//! What a table's keys are: each key's layout, how sure that is, and whether the database's
//! order of the keys is their creation order. Pure: the keys come in, in the database's
//! `ORDER BY key` order (and, where the database keeps one, in insertion order).

use std::collections::BTreeMap;

use combkey::layouts::Layout;
use combkey::{Comb, ShortPrefix, Timestamp};

/// A time is plausible for a key made by software in use: from 1995 to a day from now.
const EARLIEST_MS: i64 = 788_918_400_000; // 1995-01-01T00:00:00Z

/// The layouts a version-4-labelled (or otherwise unlabelled) key may be, tried in this
/// order. uuid-creator's prefix and suffix COMBs are the same bytes as RT.Comb's
/// `PostgreSql` and `Sql` providers and report under those names.
const UNLABELLED: [Layout; 5] =
    [Layout::RtCombSql, Layout::RtCombPostgres, Layout::RtCombLegacy, Layout::NewSequentialId, Layout::MySqlSwap];

/// The share of unlabelled keys that must carry a plausible time under a layout for the
/// keys to be taken as that layout. Random keys do so by chance for well under 1% (48 random
/// bits read as milliseconds land between 1995 and now about 0.4% of the time).
const MIN_SHARE: f64 = 0.05;

/// One key's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A layout of the registry.
    Layout(Layout),
    /// Version 4 (or unlabelled) with no time found: random.
    Random,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Layout(l) => l.name(),
            Kind::Random => "v4",
        }
    }
}

/// What the keys are.
#[derive(Clone, Debug)]
pub(crate) struct Audit {
    /// Each key's verdict, in the order given.
    pub(crate) kinds: Vec<Kind>,
    /// Verdict name to count.
    pub(crate) layouts: BTreeMap<&'static str, usize>,
    /// How each verdict was reached, one line per layout found.
    pub(crate) evidence: Vec<String>,
    /// Share of neighbouring keys in the database's order whose times do not decrease
    /// (keys without a time skipped); `None` with fewer than two timed keys.
    pub(crate) time_order: Option<f64>,
}

/// The time a key of `kind` carries (a short prefix key: the start of its interval nearest
/// `now`).
pub(crate) fn time_of(id: &Comb, kind: Kind, now: Timestamp) -> Option<Timestamp> {
    match kind {
        Kind::Layout(Layout::ShortPrefix) => Some(ShortPrefix::default().interval_near(id, now).start),
        Kind::Layout(l) => l.timestamp(id).ok().flatten(),
        Kind::Random => None,
    }
}

fn plausible(t: Option<Timestamp>, now: Timestamp) -> bool {
    t.is_some_and(|t| t.unix_ms() >= EARLIEST_MS && t <= now.saturating_add_ms(86_400_000))
}

/// Audits `keys`, given in the database's key order.
pub(crate) fn audit(keys: &[Comb], now: Timestamp) -> Audit {
    let mut kinds = vec![Kind::Random; keys.len()];
    let mut evidence = Vec::new();
    // 1. Keys whose version nibble names their layout, kept when their times are plausible.
    let mut labelled: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut unlabelled = Vec::new();
    for (i, id) in keys.iter().enumerate() {
        match Layout::detect(id) {
            Some(l) if l == Layout::ShortPrefix || plausible(l.timestamp(id).ok().flatten(), now) => {
                kinds[i] = Kind::Layout(l);
                labelled.entry(l.name()).or_default().0 += 1;
            }
            Some(l) => {
                labelled.entry(l.name()).or_default().1 += 1;
                unlabelled.push(i);
            }
            None => unlabelled.push(i),
        }
    }
    for (name, (kept, implausible)) in &labelled {
        let mut line =
            format!("{name}: {kept} keys, certain (their version nibble says so and their times are plausible)");
        if *implausible > 0 {
            line.push_str(&format!(
                "; {implausible} more with that nibble carry no plausible time and were examined as unlabelled"
            ));
        }
        evidence.push(line);
    }
    // 2. The rest: repeatedly, the layout under which the most of them carry a plausible
    //    time (structured ids can look plausible in a wrong layout for some keys, never for
    //    as many as in their own), while enough do.
    let mut left = unlabelled;
    loop {
        if left.len() < 2 {
            break;
        }
        let best = UNLABELLED
            .iter()
            .map(|&layout| {
                let fits: Vec<usize> = left
                    .iter()
                    .copied()
                    .filter(|&i| {
                        layout.check(&keys[i]).is_ok() && plausible(layout.timestamp(&keys[i]).ok().flatten(), now)
                    })
                    .collect();
                (layout, fits)
            })
            .max_by_key(|(_, fits)| fits.len());
        let Some((layout, fits)) = best else { break };
        #[allow(clippy::cast_precision_loss)]
        let share = fits.len() as f64 / left.len() as f64;
        if share < MIN_SHARE || fits.len() < 2 {
            break;
        }
        let mut times: Vec<i64> =
            fits.iter().filter_map(|&i| layout.timestamp(&keys[i]).ok().flatten()).map(Timestamp::unix_ms).collect();
        times.sort_unstable();
        let (lo, hi) = (times[times.len() / 20], times[times.len() - 1 - times.len() / 20]);
        let sure = if share >= 0.99 {
            "certain"
        } else if share >= 0.5 {
            "very likely"
        } else {
            "likely, among other keys"
        };
        evidence.push(format!(
            "{}: {} keys, {sure}: {:.1}% of the {} keys without a telling version carry a time from 1995 to now \
             in this layout (random keys would for about 0.4%), 90% of them between {} and {}",
            layout.name(),
            fits.len(),
            share * 100.0,
            left.len(),
            Timestamp::from_unix_ms(lo),
            Timestamp::from_unix_ms(hi)
        ));
        for &i in &fits {
            kinds[i] = Kind::Layout(layout);
        }
        let taken: std::collections::HashSet<usize> = fits.into_iter().collect();
        left.retain(|i| !taken.contains(i));
    }
    if !left.is_empty() {
        evidence.push(format!(
            "v4: {} keys carry no time in any known layout: random (version 4) keys, or a layout combkey does not know",
            left.len()
        ));
    }
    let mut layouts = BTreeMap::new();
    for k in &kinds {
        *layouts.entry(k.name()).or_default() += 1;
    }
    let times: Vec<Timestamp> = keys.iter().zip(&kinds).filter_map(|(id, k)| time_of(id, *k, now)).collect();
    let time_order = if times.len() < 2 {
        None
    } else {
        let ok = times.windows(2).filter(|w| w[1] >= w[0]).count();
        #[allow(clippy::cast_precision_loss)]
        Some(ok as f64 / (times.len() - 1) as f64)
    };
    Audit { kinds, layouts, evidence, time_order }
}

/// Where a key of `kind` goes in the migration: `Some(layout)` to convert it to, `None` to
/// keep it (with the reason).
pub(crate) fn target(kind: Kind) -> Result<Option<Layout>, &'static str> {
    match kind {
        Kind::Layout(Layout::V7 | Layout::V6 | Layout::ShortPrefix) => Ok(None),
        // The Unix-ms COMBs become the public v7 id with the same time, losslessly.
        Kind::Layout(Layout::RtCombSql | Layout::RtCombPostgres | Layout::UcPrefix | Layout::UcSuffix) => {
            Ok(Some(Layout::V7))
        }
        // The v1 family carries 100-ns ticks, a clock sequence and a node: more than v7 holds.
        // RFC 9562's v6 is the same fields high bits first, so it sorts by time as bytes and
        // converts back.
        Kind::Layout(Layout::V1 | Layout::NewSequentialId | Layout::LambertV13 | Layout::MySqlSwap) => {
            Ok(Some(Layout::V6))
        }
        Kind::Layout(Layout::UcShortPrefix | Layout::UcShortSuffix) => Ok(Some(Layout::ShortPrefix)),
        Kind::Layout(Layout::RtCombLegacy) => {
            Err("rtcomb-legacy keys carry SQL Server datetime ticks that no sorted layout holds without loss")
        }
        Kind::Layout(Layout::Locality) => Err("locality keys carry a counter, pid and MAC that no sorted layout holds"),
        Kind::Random => Err("v4 keys carry no time, so no sorted form keeps them: they stay as they are"),
        Kind::Layout(_) => Err("no lossless sorted form for this layout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use combkey::V7Generator;
    use combkey::layouts::RtCombLayout;

    fn now() -> Timestamp {
        "2026-06-01T00:00:00Z".parse().unwrap()
    }

    /// `n` times one second apart from 2026-01-01.
    fn times(n: i64) -> Vec<Timestamp> {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        (0..n).map(|i| t0.saturating_add_ms(i * 1000)).collect()
    }

    fn v4() -> Comb {
        let mut b: [u8; 16] = rand::random();
        b[6] = 0x40 | (b[6] & 0x0f);
        b[8] = 0x80 | (b[8] & 0x3f);
        Comb::from_bytes(b)
    }

    fn sorted(mut keys: Vec<Comb>) -> Vec<Comb> {
        keys.sort();
        keys
    }

    #[test]
    fn rtcomb_sql_keys_in_a_memcmp_database() {
        let keys = sorted(times(1000).into_iter().map(|t| RtCombLayout::Sql.create(t, v4()).unwrap()).collect());
        let a = audit(&keys, now());
        assert_eq!(a.layouts.get("rtcomb-sql"), Some(&1000), "{:?}", a.layouts);
        let order = a.time_order.unwrap();
        assert!((0.4..0.6).contains(&order), "random order of times: {order}");
        assert!(a.evidence[0].contains("certain"), "{:?}", a.evidence);
    }

    #[test]
    fn v7_keys_sort_and_v4_keys_are_random() {
        let g = V7Generator::new();
        let mut keys: Vec<Comb> = times(300).into_iter().map(|t| g.generate_at(t)).collect();
        keys.extend((0..200).map(|_| v4()));
        let a = audit(&sorted(keys), now());
        assert_eq!(a.layouts.get("v7"), Some(&300));
        assert_eq!(a.layouts.get("v4"), Some(&200));
        assert_eq!(a.time_order, Some(1.0));
        assert!(target(Kind::Random).unwrap_err().contains("carry no time"));
    }

    /// NEWSEQUENTIALID values one second apart: their first six bytes read as milliseconds
    /// (RT.Comb's PostgreSql layout) look plausible for some keys, but every key is
    /// plausible as what it is.
    #[test]
    fn newsequentialid_keys_are_found_by_their_times() {
        let clock = std::sync::Arc::new(combkey::FixedClock::new(times(1)[0]));
        let g = combkey::layouts::V1Generator::with_clock_and_random(clock.clone(), combkey::SeededRandom::new(3));
        let keys: Vec<Comb> = (0..1000)
            .map(|_| {
                clock.advance(std::time::Duration::from_secs(1));
                Layout::convert(&g.generate(), Layout::V1, Layout::NewSequentialId).unwrap()
            })
            .collect();
        let a = audit(&sorted(keys), now());
        assert_eq!(a.layouts.get("newsequentialid"), Some(&1000), "{:?} {:?}", a.layouts, a.evidence);
        assert_eq!(target(Kind::Layout(Layout::NewSequentialId)), Ok(Some(Layout::V6)));
    }

    #[test]
    fn random_keys_alone() {
        let a = audit(&sorted((0..2000).map(|_| v4()).collect()), now());
        assert_eq!(a.layouts.get("v4"), Some(&2000), "{:?} {:?}", a.layouts, a.evidence);
        assert_eq!(a.time_order, None);
    }
}
