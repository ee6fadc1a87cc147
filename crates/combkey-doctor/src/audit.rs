//! What a table's keys are: each key's layout, how sure that is, and whether the database's
//! order of the keys is their creation order. Pure: the keys come in, in the database's
//! `ORDER BY key` order.
//!
//! A key whose version nibble names its layout (7, 6, 1, `b`, `d`, 8) is that layout when the
//! time it carries is plausible. A version-4 key may be random or a COMB on a random base
//! (RT.Comb, uuid-creator): nothing in one key tells. A layout is taken for such keys only
//! where its times *cluster*: each accepted key has another within a window of its time, and
//! the cluster holds far more keys than random keys would put there by chance. The times
//! outside the clusters are random keys' bytes read as times, and those keys stay. Random keys
//! can still land inside a cluster's times by chance; the audit counts how many would be
//! expected to ([`Rule::expected_random`]) and, where that is not negligible, calls the
//! cluster's keys *uncertain* and leaves them unless told to convert them.

use std::collections::BTreeMap;

use combkey::layouts::Layout;
use combkey::{Comb, ShortPrefix, Timestamp};
use serde::{Deserialize, Serialize};

/// A time is plausible for a key made by software in use: from 1995 to a day from now.
const EARLIEST_MS: i64 = 788_918_400_000; // 1995-01-01T00:00:00Z
const DAY_MS: i64 = 86_400_000;

/// The layouts a version-4-labelled (or otherwise unlabelled) key may be, tried in this
/// order. uuid-creator's prefix and suffix COMBs are the same bytes as RT.Comb's
/// `PostgreSql` and `Sql` providers and report under those names. A version-8 key is a short
/// prefix COMB unless its times cluster as UUIDNext's SQL Server layout's.
const UNLABELLED: [Layout; 10] = [
    Layout::RtCombSql,
    Layout::RtCombPostgres,
    Layout::RtCombLegacy,
    Layout::NewSequentialId,
    Layout::MySqlSwap,
    Layout::NewId,
    Layout::EfCore,
    Layout::NewIdSequential,
    Layout::MedoSqlServer,
    Layout::UuidNextSqlServer,
];

/// The expected number of random keys inside a cluster's times below which its keys are
/// certain.
const CERTAIN_BELOW: f64 = 0.01;

/// One key's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A layout of the registry, certain.
    Layout(Layout),
    /// Probably this layout, but random keys could be among these by chance: left unless
    /// asked.
    Uncertain(Layout),
    /// Version 4 (or unlabelled) with no time found: random.
    Random,
}

impl Kind {
    /// The verdict's name: the layout's, `v4` for random keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::layouts::Layout;
    /// use combkey_doctor::Kind;
    ///
    /// assert_eq!(Kind::Layout(Layout::RtCombSql).name(), "rtcomb-sql");
    /// assert_eq!(Kind::Uncertain(Layout::RtCombSql).name(), "rtcomb-sql");
    /// assert_eq!(Kind::Random.name(), "v4");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Kind::Layout(l) | Kind::Uncertain(l) => l.name(),
            Kind::Random => "v4",
        }
    }
}

/// Where an unlabelled layout was found: the key times, merged into windows, where its keys
/// cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Rule {
    /// The layout's name.
    pub layout: String,
    /// Half-open windows `[start, end)` of Unix milliseconds.
    pub windows: Vec<(i64, i64)>,
    /// How many random keys would be expected inside the windows by chance.
    pub expected_random: f64,
}

impl Rule {
    fn layout(&self) -> Option<Layout> {
        self.layout.parse().ok()
    }

    fn contains(&self, ms: i64) -> bool {
        self.windows.iter().any(|&(a, b)| a <= ms && ms < b)
    }

    /// Whether its keys are certain.
    pub fn certain(&self) -> bool {
        self.expected_random < CERTAIN_BELOW
    }
}

/// The audit's decisions, which classify any key again the same way (a resumed migration uses
/// the one its journal kept, not a new audit of half-converted keys).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Classifier {
    /// "Now" for plausible times (Unix ms).
    pub now_ms: i64,
    /// The unlabelled layouts found, in the order they are tried.
    pub rules: Vec<Rule>,
    /// The layout a DBA said made the keys (`--layout`): every key whose version nibble names
    /// no layout is read as it where its time is plausible, and no clusters are looked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed: Option<String>,
}

fn plausible(t: Option<Timestamp>, now_ms: i64) -> bool {
    t.is_some_and(|t| t.unix_ms() >= EARLIEST_MS && t.unix_ms() <= now_ms.saturating_add(DAY_MS))
}

/// Whether `id` is a version 7 key of a time before the plausible span (1970 to 1994): not
/// what software made then, but what `--rekey-from` makes of rows with such times (and what
/// the RFC's layout reads as). Its version nibble says v7, so it is one, not a random key.
fn early_v7(id: &Comb) -> bool {
    Layout::detect(id) == Some(Layout::V7)
        && Layout::V7.timestamp(id).ok().flatten().is_some_and(|t| t.unix_ms() < EARLIEST_MS)
}

/// Whether `layout` keeps other data where a version nibble goes (display byte 6's high
/// nibble), so that its keys' nibbles name other layouts by chance.
fn nibble_is_data(layout: Layout) -> bool {
    matches!(
        layout,
        Layout::NewId | Layout::NewIdSequential | Layout::MedoSqlServer | Layout::NewSequentialId | Layout::MySqlSwap
    )
}

/// The layout a key's version nibble names, where its time is plausible (a short prefix COMB
/// carries no instant: any version-8 key).
fn labelled(id: &Comb, now_ms: i64) -> Option<Layout> {
    Layout::detect(id).filter(|&l| l == Layout::ShortPrefix || plausible(l.timestamp(id).ok().flatten(), now_ms))
}

/// The span of times (ms) a random key's bytes read as under a layout spread over.
fn time_span_ms(layout: Layout) -> f64 {
    match layout {
        // 64 bits of .NET ticks of 100 ns.
        Layout::EfCore | Layout::NewId | Layout::NewIdSequential => 1.844_674_407_370_955e15,
        // 48-bit milliseconds, and only one in 64 random keys has the version and variant
        // where a v7 in SQL Server's order has them.
        Layout::MedoSqlServer => 2.814_749_767_106_56e14 * 64.0,
        // 60-bit ticks of 100 ns, and only one in 16 random keys has the version nibble.
        Layout::NewSequentialId | Layout::MySqlSwap => 1.152_921_5e14 * 16.0,
        // 16-bit days.
        Layout::RtCombLegacy => 65_536.0 * 86_400_000.0,
        // 48-bit milliseconds.
        _ => 2.814_749_767_106_56e14,
    }
}

impl Classifier {
    /// The classifier of a run that goes on at `now_ms`, later than the audit: a layout whose
    /// keys were still being made when the audit ran (a window that ends within a day of the
    /// audit) keeps its window open until `now_ms`, so keys the application made since are
    /// converted too. Windows that closed earlier stay as they were (a random key falls into
    /// the few days added with a chance of about one in a million).
    pub fn extended_to(&self, now_ms: i64) -> Classifier {
        let mut out = self.clone();
        if now_ms <= self.now_ms {
            return out;
        }
        for rule in &mut out.rules {
            for w in &mut rule.windows {
                if w.1 >= self.now_ms.saturating_sub(DAY_MS) {
                    w.1 = w.1.max(now_ms.saturating_add(DAY_MS));
                }
            }
        }
        out.now_ms = now_ms;
        out
    }

    /// Whether a key whose version nibble names a layout (v1, v6) is read as that layout
    /// whatever its other bits: no layout that keeps other data where the nibble goes (NewId's,
    /// Medo.Uuid7's) was found in the keys, nor given as `--layout`.
    pub(crate) fn reads_nibble_as_is(&self) -> bool {
        let data = |l: &str| l.parse::<Layout>().is_ok_and(nibble_is_data);
        !self.assumed.as_deref().is_some_and(data) && !self.rules.iter().any(|r| data(&r.layout))
    }

    /// The verdict on one key.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-classify-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey::Comb;
    /// use combkey::layouts::{Layout, RtCombLayout};
    /// use combkey_doctor::{Doctor, Kind, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let classifier = &report.audit().classifier;
    /// // A key the application made since the audit, the same way as the others.
    /// let late = RtCombLayout::Sql.create(combkey::Timestamp::now(), Comb::new_v4())?;
    /// assert_eq!(classifier.classify(&late), Kind::Layout(Layout::RtCombSql));
    /// assert_eq!(classifier.classify(&Comb::new()), Kind::Layout(Layout::V7));
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn classify(&self, id: &Comb) -> Kind {
        let labelled = labelled(id, self.now_ms);
        // A version-8 key is a short prefix COMB unless a rule (UUIDNext's layout) takes it.
        let fallback =
            if labelled == Some(Layout::ShortPrefix) { Kind::Layout(Layout::ShortPrefix) } else { Kind::Random };
        let assumed = self.assumed.as_deref().and_then(|l| l.parse::<Layout>().ok());
        // Where a layout keeps other data in the version nibble's place (NewId's worker id,
        // Medo.Uuid7's counter: one in sixteen reads as Groupon's `b`, whose time sits in the
        // same bytes as Medo's), a key of that layout, said by the DBA or inside a cluster of
        // it, is that layout's whatever the nibble reads as.
        let of =
            |layout: Layout| layout.check(id).is_ok() && plausible(layout.timestamp(id).ok().flatten(), self.now_ms);
        if let Some(l) = labelled.filter(|l| *l != Layout::ShortPrefix && *l != Layout::V7) {
            if let Some(a) = assumed.filter(|a| nibble_is_data(*a) && of(*a)) {
                return Kind::Layout(a);
            }
            if let Some(k) = self.by_rule(id, nibble_is_data) {
                return k;
            }
            return Kind::Layout(l);
        }
        if let Some(l) = labelled.filter(|l| *l == Layout::V7) {
            return Kind::Layout(l);
        }
        if early_v7(id) {
            return Kind::Layout(Layout::V7);
        }
        if let Some(layout) = assumed {
            return if of(layout) { Kind::Layout(layout) } else { fallback };
        }
        self.by_rule(id, |_| true).unwrap_or(fallback)
    }

    /// The verdict of the first rule (of a layout `which` takes) whose cluster holds `id`.
    fn by_rule(&self, id: &Comb, which: impl Fn(Layout) -> bool) -> Option<Kind> {
        for rule in &self.rules {
            let Some(layout) = rule.layout() else { continue };
            if layout.check(id).is_err() {
                continue;
            }
            let Some(t) = layout.timestamp(id).ok().flatten() else { continue };
            if which(layout) && plausible(Some(t), self.now_ms) && rule.contains(t.unix_ms()) {
                return Some(if rule.certain() { Kind::Layout(layout) } else { Kind::Uncertain(layout) });
            }
        }
        None
    }
}

/// What the keys are.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Audit {
    /// The decisions, to classify keys the same way again.
    pub classifier: Classifier,
    /// How many keys got each verdict.
    pub counts: Vec<(Kind, usize)>,
    /// Verdict name to count (uncertain keys under their layout's name).
    pub layouts: BTreeMap<&'static str, usize>,
    /// Keys whose layout is uncertain.
    pub uncertain: usize,
    /// How each verdict was reached, one line per layout found.
    pub evidence: Vec<String>,
    /// Share of neighbouring keys in the database's order whose times do not decrease
    /// (keys without a time skipped); `None` with fewer than two timed keys.
    pub time_order: Option<f64>,
}

impl Audit {
    /// The keys with verdict `kind`.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-count-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey::layouts::Layout;
    /// use combkey_doctor::{Doctor, Kind, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(report.audit().count(Kind::Layout(Layout::RtCombSql)), 20);
    /// assert_eq!(report.audit().count(Kind::Random), 0);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn count(&self, kind: Kind) -> usize {
        self.counts.iter().find(|(k, _)| *k == kind).map_or(0, |(_, n)| *n)
    }

    /// Every key counted.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-total-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(report.audit().total(), report.read());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn total(&self) -> usize {
        self.counts.iter().map(|(_, n)| n).sum()
    }
}

/// How keys of a verdict sort in a database that compares bytes left to right: by what their
/// first bytes hold.
fn sort_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Layout(Layout::V7 | Layout::RtCombPostgres | Layout::UcPrefix) => "by Unix milliseconds (v7's order)",
        Kind::Layout(Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap) => "by Gregorian ticks (v6's order)",
        Kind::Layout(Layout::NewIdSequential) => "by .NET ticks",
        Kind::Layout(Layout::ShortPrefix | Layout::UcShortPrefix) => "by a wrapping interval (short prefix)",
        Kind::Random | Kind::Uncertain(_) => "random",
        Kind::Layout(_) => "not in time order",
    }
}

/// The time a key of `kind` carries (a short prefix key: the start of its interval nearest
/// `now`).
pub fn time_of(id: &Comb, kind: Kind, now: Timestamp) -> Option<Timestamp> {
    match kind {
        Kind::Layout(Layout::ShortPrefix) => Some(ShortPrefix::default().interval_near(id, now).start),
        Kind::Layout(l) | Kind::Uncertain(l) => l.timestamp(id).ok().flatten(),
        Kind::Random => None,
    }
}

/// The keys of `pool` whose times under `layout` cluster (see below), and the windows of time
/// they cover.
#[allow(clippy::cast_precision_loss)] // Counts and spans far below 2^52.
fn cluster(keys: &[Comb], pool: &[usize], layout: Layout, now_ms: i64) -> (Vec<usize>, Vec<(i64, i64)>) {
    let mut timed: Vec<(i64, usize)> = pool
        .iter()
        .filter(|&&i| layout.check(&keys[i]).is_ok())
        .filter_map(|&i| {
            let t = layout.timestamp(&keys[i]).ok().flatten();
            plausible(t, now_ms).then(|| (t.map_or(0, Timestamp::unix_ms), i))
        })
        .collect();
    if timed.len() < 2 {
        return (Vec::new(), Vec::new());
    }
    timed.sort_unstable();
    let mut gaps: Vec<i64> = timed.windows(2).map(|w| w[1].0 - w[0].0).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    // A real layout's keys come far denser than random keys' bytes read as times: a window of
    // a hundred median gaps, between a minute and a day.
    let w = median.saturating_mul(100).clamp(60_000, DAY_MS);
    // Keys within the window of one another form runs; a run is a layout's keys only where
    // random keys' bytes could not have made it: random times spread over the whole plausible
    // span, so runs of them are short, and the longer the rarer. The random keys are those in
    // short runs; a run counts when random keys that many would make one that long less than
    // once in a thousand tables.
    let mut runs: Vec<Vec<(i64, usize)>> = Vec::new();
    for &(t, i) in &timed {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|&(p, _)| t - p <= w) => run.push((t, i)),
            _ => runs.push(vec![(t, i)]),
        }
    }
    let random = runs.iter().filter(|r| r.len() < 10).map(Vec::len).sum::<usize>() as f64;
    let span = (now_ms + DAY_MS - EARLIEST_MS) as f64;
    let p2 = 2.0 * w as f64 / span;
    let mut min_run = 2usize;
    while min_run < 10_000 && random * (random * p2).powi(i32::try_from(min_run - 1).unwrap_or(i32::MAX)) >= 1e-3 {
        min_run += 1;
    }
    // A run whose keys all read as one and the same millisecond is a constant field, not a
    // clock: the v1 family's node (MySQL's swapped v1, `NEWSEQUENTIALID`, v6: one server's keys
    // share it) read where RT.Comb keeps its time. A layout's own keys carry times that move.
    let moves = |r: &Vec<(i64, usize)>| r.first().map(|f| f.0) != r.last().map(|l| l.0);
    let accepted: Vec<(i64, usize)> = runs.into_iter().filter(|r| r.len() >= min_run && moves(r)).flatten().collect();
    let mut windows: Vec<(i64, i64)> = Vec::new();
    for &(t, _) in &accepted {
        let (a, b) = (t.saturating_sub(w), t.saturating_add(w + 1));
        match windows.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => windows.push((a, b)),
        }
    }
    (accepted.into_iter().map(|(_, i)| i).collect(), windows)
}

#[allow(clippy::cast_precision_loss)] // Counts and spans far below 2^52.
fn coverage(windows: &[(i64, i64)]) -> f64 {
    windows.iter().map(|(a, b)| (b - a) as f64).sum()
}

/// Keys the audit keeps in full, at most: up to this many it classifies them without reading
/// the table again (2 MiB). Past it, a second pass through the table classifies every key.
pub(crate) const KEEP_ALL: usize = 1 << 17;

/// Unlabelled (version-4) keys the audit learns their layouts' clusters from, at most: a
/// uniform sample of this many (1 MiB, and the clustering's work space a few times that),
/// whatever the table's size.
pub(crate) const SAMPLE: usize = 1 << 16;

/// The first pass of an audit: sees every key once, in the database's key order, and keeps a
/// bounded sample of those whose layout their version nibble does not name.
pub(crate) struct Learner {
    now_ms: i64,
    unlabelled: u64,
    /// A uniform sample (reservoir) of the unlabelled keys.
    sample: Vec<Comb>,
    /// Every key, in order, while there are at most [`KEEP_ALL`].
    all: Option<Vec<Comb>>,
    /// The key fed last: the keys come in key order, so an id that rows repeat (a key unique
    /// only with another column, `(tenant, id)`) comes again at once.
    last: Option<Comb>,
    random: combkey::SeededRandom,
}

impl Learner {
    pub(crate) fn new(now: Timestamp) -> Self {
        Learner {
            now_ms: now.unix_ms(),
            unlabelled: 0,
            sample: Vec::new(),
            all: Some(Vec::new()),
            last: None,
            // A fixed seed: the same table gives the same sample, so the same verdicts.
            random: combkey::SeededRandom::new(0x636f_6d62_6b65_7921),
        }
    }

    /// Whether the key's version nibble names a layout with a plausible time (a version-8
    /// key is looked at with the unlabelled ones: it may be UUIDNext's).
    fn labelled(&self, id: &Comb) -> bool {
        labelled(id, self.now_ms).is_some_and(|l| l != Layout::ShortPrefix)
    }

    pub(crate) fn feed(&mut self, id: Comb) {
        use combkey::RandomSource as _;
        if let Some(all) = &mut self.all {
            if all.len() < KEEP_ALL {
                all.push(id);
            } else {
                self.all = None;
            }
        }
        // An id seen once counts once: the same id in several rows would read as keys of one
        // time under every layout, a cluster that random keys never make.
        if self.labelled(&id) || early_v7(&id) || self.last.replace(id) == Some(id) {
            return;
        }
        self.unlabelled += 1;
        if self.sample.len() < SAMPLE {
            self.sample.push(id);
        } else {
            // Algorithm R: the n-th key replaces a random one of the sample with chance S/n.
            let j = self.random.next_u64() % self.unlabelled;
            if let Ok(j) = usize::try_from(j)
                && j < SAMPLE
            {
                self.sample[j] = id;
            }
        }
    }

    /// Every key fed, in order, when there were few enough to keep them all.
    pub(crate) fn keys(&self) -> Option<&[Comb]> {
        self.all.as_deref()
    }

    /// What was learned: the layouts the unlabelled keys cluster under, and where; or, where a
    /// DBA said which layout made the keys (`assumed`), that layout alone.
    #[allow(clippy::cast_precision_loss)] // Counts far below 2^52.
    pub(crate) fn classifier(&self, assumed: Option<Layout>) -> Classifier {
        let now_ms = self.now_ms;
        if let Some(l) = assumed {
            return Classifier { now_ms, rules: Vec::new(), assumed: Some(l.name().into()) };
        }
        let keys = &self.sample;
        // 1. The sample holds only keys whose version nibble does not name a layout.
        let mut pool: Vec<usize> = (0..keys.len()).collect();
        // 2. Repeatedly, the layout under which most of them cluster, while clusters stand out
        //    from what random keys would put there.
        let mut rules = Vec::new();
        let mut tried: Vec<Layout> = Vec::new();
        loop {
            let best = UNLABELLED
                .iter()
                .filter(|l| !tried.contains(l))
                .map(|&l| (l, cluster(keys, &pool, l, now_ms)))
                .max_by_key(|(_, (accepted, _))| accepted.len());
            let Some((mut layout, (mut accepted, mut windows))) = best else { break };
            // EF Core's and NewId's ids carry .NET ticks in the same bytes, and EF Core's
            // version 4 can be a NewId worker's first digit: NewId's worker id (display bytes
            // 4..7) is the same in every id a machine makes, EF Core's bytes there are random.
            if matches!(layout, Layout::EfCore | Layout::NewId) {
                let mut workers: Vec<[u8; 4]> = accepted
                    .iter()
                    .map(|&i| {
                        let b = keys[i].as_bytes();
                        [b[4], b[5], b[6], b[7]]
                    })
                    .collect();
                workers.sort_unstable();
                workers.dedup();
                let chosen = if workers.len() * 20 <= accepted.len() { Layout::NewId } else { Layout::EfCore };
                tried.push(if chosen == Layout::NewId { Layout::EfCore } else { Layout::NewId });
                if chosen != layout {
                    layout = chosen;
                    (accepted, windows) = cluster(keys, &pool, layout, now_ms);
                }
            }
            tried.push(layout);
            let by_chance = pool.len() as f64 * coverage(&windows) / time_span_ms(layout);
            if accepted.len() < 2 || (accepted.len() as f64) <= 3.0 * by_chance {
                continue;
            }
            let rule = Rule { layout: layout.name().into(), windows, expected_random: 0.0 };
            let single = Classifier { now_ms, rules: vec![rule.clone()], assumed: None };
            pool.retain(|&i| single.classify(&keys[i]) == Kind::Random);
            rules.push(rule);
            if pool.len() < 2 {
                break;
            }
        }
        // 3. The keys left are random; so would be expected this many of the table's (the
        //    sample's share scaled to all unlabelled keys) inside each rule's times.
        let scale = if keys.is_empty() { 1.0 } else { self.unlabelled as f64 / keys.len() as f64 };
        for rule in &mut rules {
            let layout = rule.layout().unwrap_or(Layout::RtCombSql);
            rule.expected_random = pool.len() as f64 * scale * coverage(&rule.windows) / time_span_ms(layout);
        }
        Classifier { now_ms, rules, assumed: None }
    }

    /// Whether the clusters were learned from a sample: its size and the unlabelled keys'.
    pub(crate) fn sampled(&self) -> Option<(usize, u64)> {
        (self.unlabelled > self.sample.len() as u64).then_some((self.sample.len(), self.unlabelled))
    }
}

/// The second pass of an audit: every key's verdict under a [`Classifier`], counted, and the
/// order of their times in the database's key order. Holds no key.
pub(crate) struct Tally {
    classifier: Classifier,
    now: Timestamp,
    counts: Vec<(Kind, usize)>,
    labelled: BTreeMap<&'static str, usize>,
    /// Version 7 keys of times before 1995 ([`early_v7`]).
    early_v7: usize,
    /// Keys that read as no layout (counted as `v4`) by their version nibble, where it is not 4
    /// (a v1 key of a time in the future, a version-8 key): said as what they are.
    unknown_versions: BTreeMap<u8, usize>,
    previous: Option<Timestamp>,
    ordered: u64,
    pairs: u64,
    sampled: Option<(usize, u64)>,
}

impl Tally {
    pub(crate) fn new(classifier: Classifier, now: Timestamp, sampled: Option<(usize, u64)>) -> Self {
        Tally {
            classifier,
            now,
            counts: Vec::new(),
            labelled: BTreeMap::new(),
            early_v7: 0,
            unknown_versions: BTreeMap::new(),
            previous: None,
            ordered: 0,
            pairs: 0,
            sampled,
        }
    }

    /// Counts `id`, and says its verdict.
    pub(crate) fn feed(&mut self, id: &Comb) -> Kind {
        let kind = self.classifier.classify(id);
        match self.counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((kind, 1)),
        }
        let version = id.as_bytes()[6] >> 4;
        if kind == Kind::Random && version != 4 && !early_v7(id) {
            *self.unknown_versions.entry(version).or_default() += 1;
        }
        if early_v7(id) {
            self.early_v7 += 1;
        } else if let Kind::Layout(l) = kind
            && Layout::detect(id) == Some(l)
        {
            *self.labelled.entry(l.name()).or_default() += 1;
        }
        if let Some(t) = time_of(id, kind, self.now) {
            if let Some(p) = self.previous {
                self.pairs += 1;
                if t >= p {
                    self.ordered += 1;
                }
            }
            self.previous = Some(t);
        }
        kind
    }

    /// The sample the classifier learned from, where it was one (known only after the pass
    /// that learned it, when this tally was fed in the same pass).
    pub(crate) fn set_sampled(&mut self, sampled: Option<(usize, u64)>) {
        self.sampled = sampled;
    }

    #[allow(clippy::cast_precision_loss)] // Counts far below 2^52.
    pub(crate) fn finish(self) -> Audit {
        let Tally { classifier, counts, labelled, early_v7, unknown_versions, ordered, pairs, sampled, .. } = self;
        let mut layouts = BTreeMap::new();
        let mut uncertain = 0;
        for (k, n) in &counts {
            *layouts.entry(k.name()).or_default() += n;
            if matches!(k, Kind::Uncertain(_)) {
                uncertain += n;
            }
        }
        let mut evidence = Vec::new();
        for (name, n) in &labelled {
            evidence.push(format!(
                "{name}: {n} keys, certain (their version nibble says so and their times are plausible)"
            ));
        }
        if early_v7 > 0 {
            evidence.push(format!(
                "v7: {early_v7} keys whose version nibble says v7 carry times before 1995 (what --rekey-from makes of \
                 rows with such times): v7 keys, kept as they are"
            ));
        }
        for rule in &classifier.rules {
            let n: usize = counts
                .iter()
                .filter(|(k, _)| matches!(k, Kind::Layout(l) | Kind::Uncertain(l) if l.name() == rule.layout))
                .map(|(_, n)| n)
                .sum();
            let (first, last) = (rule.windows.first().map_or(0, |w| w.0), rule.windows.last().map_or(0, |w| w.1));
            let span = format!("{} to {}", Timestamp::from_unix_ms(first), Timestamp::from_unix_ms(last));
            if rule.certain() {
                evidence.push(format!(
                    "{}: {n} keys, certain: keys whose version nibble names no layout, their bytes read as times that \
                     cluster ({span}, {} windows); \
                     random keys would put {:.4} keys there by chance",
                    rule.layout,
                    rule.windows.len(),
                    rule.expected_random
                ));
            } else {
                evidence.push(format!(
                    "{}: {n} keys, uncertain: keys whose version nibble names no layout, their bytes read as times that \
                     cluster ({span}), but the table's \
                     other random keys would put about {:.1} keys there by chance; they stay unless --convert-uncertain",
                    rule.layout, rule.expected_random
                ));
            }
        }
        if let Some(l) = &classifier.assumed {
            let n: usize =
                counts.iter().filter(|(k, _)| matches!(k, Kind::Layout(x) if x.name() == l)).map(|(_, n)| n).sum();
            let random: usize = counts.iter().filter(|(k, _)| *k == Kind::Random).map(|(_, n)| n).sum();
            // Were they all random keys, this many would read as a plausible time by chance.
            let span = (classifier.now_ms + DAY_MS - EARLIEST_MS) as f64;
            let layout_span = l.parse::<Layout>().map_or(2.814_749_767_106_56e14, time_span_ms);
            let by_chance = (n + random) as f64 * span / layout_span;
            evidence.push(format!(
                "{l}: {n} keys, as --layout {l} says: every key whose version nibble names no layout is read as {l} \
                 where its time is plausible (1995 to a day from now); no clusters were looked for. Had these {} keys \
                 been random, about {by_chance:.0} would have read as a plausible time by chance",
                n + random
            ));
        }
        if let Some((sample, of)) = sampled.filter(|_| classifier.assumed.is_none()) {
            evidence.push(format!(
                "the clusters were found in a uniform sample of {sample} of the {of} version-4 keys (memory stays \
                 bounded), and every key was then classified by them; a key of a layout whose times no sampled key \
                 came near reads as random and stays (give --layout to say what made the keys)"
            ));
        }
        // Keys of kinds that do not sort together: each kind sorts by what its first bytes hold.
        let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
        for (k, n) in &counts {
            *kinds.entry(sort_kind(*k)).or_default() += n;
        }
        if kinds.len() > 1 {
            let list: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            evidence.push(format!(
                "mixed: {}; keys of different kinds do not sort together in the database's order (a key whose first \
                 bytes count Gregorian or .NET ticks sorts after every key that starts with Unix milliseconds, of any \
                 date; random and other keys fall anywhere)",
                list.join(", ")
            ));
        }
        let others: usize = unknown_versions.values().sum();
        let random = layouts.get("v4").copied().unwrap_or(0).saturating_sub(others);
        if random > 0 {
            evidence.push(format!(
                "v4: {random} keys carry no time in any known layout: random (version 4) keys, or a layout combkey does not know"
            ));
        }
        for (version, n) in &unknown_versions {
            let what = match version {
                1 | 6 => "a time-based layout whose time is not plausible (before 1995 or more than a day from now)",
                7 => "version 7 whose time is more than a day from now",
                8 => "version 8, whose bits RFC 9562 leaves to its maker (no layout combkey knows claims these)",
                _ => "a version no layout combkey knows",
            };
            evidence.push(format!(
                "v4: {n} of the keys counted so are version {version}, not random: {what}; they carry no time combkey can \
                 trust, and stay as they are"
            ));
        }
        let time_order = (pairs > 0).then(|| ordered as f64 / pairs as f64);
        Audit { classifier, counts, layouts, uncertain, evidence, time_order }
    }
}

/// Audits `keys`, given in the database's key order, at `now`: the two passes over keys held
/// in memory (the doctor streams a table's keys through the same passes instead).
#[cfg(test)]
pub(crate) fn audit(keys: &[Comb], now: Timestamp) -> Audit {
    let mut learner = Learner::new(now);
    for id in keys {
        learner.feed(*id);
    }
    let mut tally = Tally::new(learner.classifier(None), now, learner.sampled());
    for id in keys {
        tally.feed(id);
    }
    tally.finish()
}

/// Where a key of `kind` goes in the migration whose target is `to` (`v7`, or `v6` for a table
/// whose writers make v6): `Some(layout)` to convert it to, `None` to keep it (it is of the
/// target already), or the reason it stays.
pub fn target(kind: Kind, to: Layout) -> Result<Option<Layout>, &'static str> {
    let v1_family = |l: Layout| {
        matches!(l, Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId)
    };
    match kind {
        Kind::Layout(l) if l == to => Ok(None),
        Kind::Layout(Layout::ShortPrefix) => Ok(None),
        // The short COMBs carry an interval that wraps, not an instant: they stay short.
        Kind::Layout(Layout::UcShortPrefix | Layout::UcShortSuffix) => Ok(Some(Layout::ShortPrefix)),
        // `--to v6`: RFC 9562's re-ordered v1 holds every bit of the v1 family, high bits first.
        Kind::Layout(l) if to == Layout::V6 && v1_family(l) => Ok(Some(Layout::V6)),
        Kind::Layout(Layout::V7) if to == Layout::V6 => Ok(None),
        Kind::Layout(_) if to == Layout::V6 => Err("--to v6 converts only the v1 family (v1, newsequentialid, \
                                                  lambert-v13, mysql-swap): other keys stay"),
        // Every layout that carries a time becomes v7 with the same millisecond: it then sorts
        // with the ids the application makes next.
        Kind::Layout(l) if combkey::layouts::KeyMigration::new(l, Layout::V7).is_ok() => Ok(Some(Layout::V7)),
        Kind::Uncertain(_) => Err("uncertain keys could be random keys whose bytes read as a time: they stay unless \
                                   --convert-uncertain"),
        Kind::Random => Err("v4 keys carry no time, so no sorted form keeps them: they stay as they are"),
        Kind::Layout(_) => Err("no sorted form for this layout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use combkey::layouts::RtCombLayout;
    use combkey::{RandomSource, SeededRandom, V7Generator};

    fn now() -> Timestamp {
        "2026-06-01T00:00:00Z".parse().unwrap()
    }

    /// Keys that read as no layout but are not version 4 (v1 keys whose time is nowhere near
    /// now, version-5 name hashes) are said as what they are, not as random version-4 keys.
    #[test]
    fn keys_of_no_layout_that_are_not_v4_are_said_as_their_version() {
        let r = SeededRandom::new(9);
        let with_version = |v: u8| {
            let mut b = [0u8; 16];
            r.fill_bytes(&mut b);
            b[6] = (v << 4) | (b[6] & 0x0f);
            b[8] = 0x80 | (b[8] & 0x3f);
            Comb::from_bytes(b)
        };
        // A v1 key's 60-bit time drawn at random: centuries away from 2026 in almost every key.
        let mut keys: Vec<Comb> = (0..10).map(|_| with_version(1)).collect();
        keys.retain(|k| {
            time_of(k, Kind::Layout(Layout::V1), now()).is_none_or(|t| t.unix_ms() > now().unix_ms() + DAY_MS)
        });
        let v1 = keys.len();
        keys.extend((0..3).map(|_| with_version(5)));
        keys.extend((0..5).map(|_| with_version(4)));
        let a = audit(&keys, now());
        assert_eq!(a.layouts.get("v4"), Some(&(v1 + 8)), "{:?}", a.layouts);
        let evidence = a.evidence.join("\n");
        assert!(evidence.contains("v4: 5 keys carry no time"), "{evidence}");
        assert!(evidence.contains(&format!("{v1} of the keys counted so are version 1, not random")), "{evidence}");
        assert!(evidence.contains("3 of the keys counted so are version 5, not random"), "{evidence}");
    }

    /// `n` times one second apart from 2026-01-01.
    fn times(n: i64) -> Vec<Timestamp> {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        (0..n).map(|i| t0.saturating_add_ms(i * 1000)).collect()
    }

    fn v4(r: &SeededRandom) -> Comb {
        let mut b = [0u8; 16];
        r.fill_bytes(&mut b);
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
        let r = SeededRandom::new(1);
        let keys = sorted(times(1000).into_iter().map(|t| RtCombLayout::Sql.create(t, v4(&r)).unwrap()).collect());
        let a = audit(&keys, now());
        assert_eq!(a.layouts.get("rtcomb-sql"), Some(&1000), "{:?}", a.layouts);
        let order = a.time_order.unwrap();
        assert!((0.4..0.6).contains(&order), "random order of times: {order}");
        assert!(a.evidence[0].contains("certain"), "{:?}", a.evidence);
        assert_eq!(a.uncertain, 0);
    }

    #[test]
    fn v7_keys_sort_and_v4_keys_are_random() {
        let g = V7Generator::new();
        let r = SeededRandom::new(2);
        let mut keys: Vec<Comb> = times(300).into_iter().map(|t| g.generate_at(t)).collect();
        keys.extend((0..200).map(|_| v4(&r)));
        let a = audit(&sorted(keys), now());
        assert_eq!(a.layouts.get("v7"), Some(&300));
        assert_eq!(a.layouts.get("v4"), Some(&200));
        assert_eq!(a.time_order, Some(1.0));
        assert!(target(Kind::Random, Layout::V7).unwrap_err().contains("carry no time"));
    }

    /// The mix the old rule (5% of the keys plausible) got wrong: random v4 keys whose bytes
    /// happened to read as a time between 1995 and now were taken for RT.Comb keys. Now not
    /// one of 5,000 is, over many seeds.
    #[test]
    fn a_v4_v7_rtcomb_mix_never_takes_a_random_key() {
        for seed in 0..50 {
            let r = SeededRandom::new(seed);
            let g = V7Generator::new();
            let random: Vec<Comb> = (0..5000).map(|_| v4(&r)).collect();
            let mut keys = random.clone();
            keys.extend(times(5000).into_iter().map(|t| g.generate_at(t)));
            keys.extend(times(5000).into_iter().map(|t| RtCombLayout::Sql.create(t, v4(&r)).unwrap()));
            let keys = sorted(keys);
            let a = audit(&keys, now());
            for id in &random {
                assert_eq!(a.classifier.classify(id), Kind::Random, "seed {seed}: random key {id} taken for a layout");
            }
            assert_eq!(a.layouts.get("rtcomb-sql"), Some(&5000), "seed {seed}: {:?} {:?}", a.layouts, a.evidence);
            assert_eq!(a.uncertain, 0, "{:?}", a.evidence);
        }
    }

    /// RT.Comb keys spread over a year among many random keys: random keys could fall among
    /// their times by chance, so they are uncertain, not converted.
    #[test]
    fn sparse_comb_keys_among_many_random_ones_are_uncertain() {
        for seed in 0..10 {
            sparse(seed);
        }
    }

    fn sparse(seed: u64) {
        let r = SeededRandom::new(seed);
        let t0: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
        let mut keys: Vec<Comb> = (0..20_000).map(|_| v4(&r)).collect();
        let combs: Vec<Comb> = (0..3000)
            .map(|i| RtCombLayout::Sql.create(t0.saturating_add_ms(i * 10_000_000), v4(&r)).unwrap())
            .collect();
        keys.extend(combs.iter().copied());
        let a = audit(&sorted(keys), now());
        for id in &combs {
            assert_eq!(a.classifier.classify(id), Kind::Uncertain(Layout::RtCombSql), "seed {seed}");
        }
        // Random keys whose bytes read as a time among theirs are uncertain too (about 2 expected):
        // indistinguishable, so not converted either.
        assert!((3000..3010).contains(&a.uncertain), "seed {seed}: {:?} {:?}", a.layouts, a.evidence);
        assert!(a.evidence.iter().any(|e| e.contains("uncertain")), "{:?}", a.evidence);
        assert!(target(Kind::Uncertain(Layout::RtCombSql), Layout::V7).is_err());
    }

    /// NEWSEQUENTIALID values one second apart: their first six bytes read as milliseconds
    /// (RT.Comb's PostgreSql layout) look plausible for some keys, but every key is
    /// plausible as what it is.
    #[test]
    fn newsequentialid_keys_are_found_by_their_times() {
        let clock = std::sync::Arc::new(combkey::FixedClock::new(times(1)[0]));
        let g = combkey::layouts::V1Generator::with_clock_and_random(clock.clone(), SeededRandom::new(3));
        let keys: Vec<Comb> = (0..1000)
            .map(|_| {
                clock.advance(std::time::Duration::from_secs(1));
                Layout::convert(&g.generate(), Layout::V1, Layout::NewSequentialId).unwrap()
            })
            .collect();
        let a = audit(&sorted(keys), now());
        assert_eq!(a.layouts.get("newsequentialid"), Some(&1000), "{:?} {:?}", a.layouts, a.evidence);
        assert_eq!(target(Kind::Layout(Layout::NewSequentialId), Layout::V7), Ok(Some(Layout::V7)));
        assert_eq!(target(Kind::Layout(Layout::NewSequentialId), Layout::V6), Ok(Some(Layout::V6)));
        assert_eq!(target(Kind::Layout(Layout::V6), Layout::V7), Ok(Some(Layout::V7)), "a mixed v6/v7 table ends v7");
        assert!(target(Kind::Layout(Layout::RtCombSql), Layout::V6).is_err());
    }

    #[test]
    fn random_keys_alone() {
        let r = SeededRandom::new(4);
        let a = audit(&sorted((0..2000).map(|_| v4(&r)).collect()), now());
        assert_eq!(a.layouts.get("v4"), Some(&2000), "{:?} {:?}", a.layouts, a.evidence);
        assert_eq!(a.time_order, None);
    }

    /// More version-4 keys than the sample holds: the clusters are learned from a uniform
    /// sample of them and every key is still classified (none is held beyond the sample),
    /// with the counts of the whole table, and the evidence says a sample was used.
    #[test]
    fn a_table_larger_than_the_sample_is_classified_whole() {
        let r = SeededRandom::new(7);
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let combs = KEEP_ALL + 10_000;
        let mut keys: Vec<Comb> = (0..combs)
            .map(|i| RtCombLayout::Sql.create(t0.saturating_add_ms(i64::try_from(i).unwrap() * 100), v4(&r)).unwrap())
            .collect();
        keys.extend((0..20_000).map(|_| v4(&r)));
        let keys = sorted(keys);
        let mut learner = Learner::new(now());
        for id in &keys {
            learner.feed(*id);
        }
        assert!(learner.keys().is_none(), "more keys than are kept whole");
        assert_eq!(learner.sample.len(), SAMPLE, "the sample holds at most SAMPLE keys");
        let mut tally = Tally::new(learner.classifier(None), now(), learner.sampled());
        for id in &keys {
            tally.feed(id);
        }
        let a = tally.finish();
        assert_eq!(a.layouts.get("rtcomb-sql"), Some(&combs), "{:?} {:?}", a.layouts, a.evidence);
        assert_eq!(a.layouts.get("v4"), Some(&20_000), "{:?}", a.evidence);
        assert!(a.evidence.iter().any(|e| e.contains("uniform sample of 65536")), "{:?}", a.evidence);
    }

    /// `--layout`: every unlabelled key with a plausible time is read as the layout said, with
    /// no clusters; the others stay random.
    #[test]
    fn an_assumed_layout_reads_every_unlabelled_key_with_a_plausible_time() {
        let r = SeededRandom::new(8);
        let lonely = RtCombLayout::Sql.create(times(1)[0], v4(&r)).unwrap();
        let mut far = *v4(&r).as_bytes();
        far[10] = 0xe0;
        let keys = sorted(vec![lonely, Comb::from_bytes(far)]);
        let mut learner = Learner::new(now());
        keys.iter().for_each(|k| learner.feed(*k));
        assert_eq!(audit(&keys, now()).layouts.get("v4"), Some(&2), "alone, no cluster: random");
        let c = learner.classifier(Some(Layout::RtCombSql));
        assert_eq!(c.classify(&lonely), Kind::Layout(Layout::RtCombSql));
        assert_eq!(c.classify(&Comb::from_bytes(far)), Kind::Random);
        let replayed: Classifier = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(replayed, c);
    }

    /// v7 keys of 1970 to 1994 (what `--rekey-from` makes of rows of such times) are v7 keys,
    /// not random ones, and the evidence says why; a v7 key of 1995 on is labelled as before.
    #[test]
    fn v7_keys_before_1995_are_v7() {
        let g = V7Generator::new();
        let early: Vec<Comb> = ["1970-01-01T00:00:01Z", "1980-06-01T12:00:00Z", "1994-12-31T23:59:59Z"]
            .iter()
            .map(|t| g.generate_at(t.parse().unwrap()))
            .collect();
        let mut keys = early.clone();
        keys.extend(times(50).into_iter().map(|t| g.generate_at(t)));
        let r = SeededRandom::new(9);
        keys.extend((0..20).map(|_| v4(&r)));
        let a = audit(&sorted(keys), now());
        assert_eq!(a.layouts.get("v7"), Some(&53), "{:?}", a.layouts);
        assert_eq!(a.layouts.get("v4"), Some(&20), "{:?}", a.layouts);
        for k in &early {
            assert_eq!(a.classifier.classify(k), Kind::Layout(Layout::V7), "{k}");
        }
        assert!(
            a.evidence.iter().any(|e| e.starts_with("v7: 3 keys") && e.contains("before 1995")),
            "{:?}",
            a.evidence
        );
        assert!(a.evidence.iter().any(|e| e.starts_with("v7: 50 keys, certain")), "{:?}", a.evidence);
    }

    /// Random keys that rows repeat (a key unique only with a tenant column: tenant 2 reusing
    /// tenant 1's ids) are no cluster of any layout. One random key in a few hundred reads as
    /// a plausible time under some layout by chance (here: its last six bytes as RT.Comb's
    /// milliseconds); read once it is alone, but two rows holding it made a "cluster" of two
    /// keys of the very same time, which random keys never make, and it was converted.
    #[test]
    fn ids_that_rows_repeat_are_no_cluster() {
        let r = SeededRandom::new(10);
        let ids: Vec<Comb> = (0..400).map(|_| v4(&r)).collect();
        let mut lucky = ids[7].into_bytes();
        let ms: i64 = "2020-05-01T10:00:00Z".parse::<Timestamp>().unwrap().unix_ms();
        lucky[10..].copy_from_slice(&ms.to_be_bytes()[2..]);
        let lucky = Comb::from_bytes(lucky);
        let mut keys = ids.clone();
        keys.extend([lucky, lucky, lucky]);
        let a = audit(&sorted(keys), now());
        assert_eq!(a.layouts.get("v4"), Some(&403), "{:?} {:?}", a.layouts, a.evidence);
        assert!(a.classifier.rules.is_empty(), "{:?}", a.classifier.rules);
    }

    /// Keys of the v1 family from one server share its node, which RT.Comb's layout reads as
    /// its time: where that reads as a plausible millisecond, they made a "cluster" of one
    /// instant, and were converted as RT.Comb keys (found by the generated cases). One instant
    /// is no clock: they are found by their own times instead, or not at all.
    #[test]
    fn a_shared_node_is_no_rtcomb_clock() {
        let clock = std::sync::Arc::new(combkey::FixedClock::new(times(1)[0]));
        let g =
            combkey::layouts::V1Generator::with_clock_and_random(std::sync::Arc::clone(&clock), SeededRandom::new(3));
        // A node (multicast bit set, as a random node has) whose 48 bits read as 2019.
        let node: [u8; 6] = 0x016b_a483_981a_u64.to_be_bytes()[2..].try_into().unwrap();
        // A few keys of two layouts of the family, as a small table mixing them holds.
        let keys: Vec<Comb> = [Layout::MySqlSwap, Layout::NewSequentialId, Layout::MySqlSwap, Layout::NewSequentialId]
            .iter()
            .map(|layout| {
                clock.advance(std::time::Duration::from_secs(1));
                let mut b = g.generate().into_bytes();
                b[10..].copy_from_slice(&node);
                Layout::convert(&Comb::from_bytes(b), Layout::V1, *layout).unwrap()
            })
            .collect();
        let a = audit(&sorted(keys.clone()), now());
        assert_eq!(a.layouts.get("rtcomb-sql"), None, "{:?} {:?}", a.layouts, a.evidence);
        for k in &keys {
            assert_ne!(a.classifier.classify(k), Kind::Layout(Layout::RtCombSql), "{k}");
        }
    }

    /// The classifier a journal keeps classifies every key as the audit did.
    #[test]
    fn the_classifier_replays_the_audit() {
        let r = SeededRandom::new(6);
        let mut keys: Vec<Comb> = (0..3000).map(|_| v4(&r)).collect();
        keys.extend(times(2000).into_iter().map(|t| RtCombLayout::Sql.create(t, v4(&r)).unwrap()));
        let a = audit(&sorted(keys.clone()), now());
        let replayed: Classifier = serde_json::from_str(&serde_json::to_string(&a.classifier).unwrap()).unwrap();
        for id in sorted(keys) {
            assert_eq!(replayed.classify(&id), a.classifier.classify(&id));
        }
    }
}
