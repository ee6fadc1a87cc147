//! The choices a run is made with, at the bottom of the crate: what a plan depends on
//! ([`Options`], kept in the plan and its journal), how an online run paces itself
//! ([`Online`], [`Method`]), and what a run reports as it goes ([`Progress`]). Nothing here
//! reads a database or decides anything.

use std::time::Duration;

use combkey::layouts::Layout;
use serde::{Deserialize, Serialize};

/// What to do with things a key change would touch beyond the keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Triggers {
    /// Refuse while user triggers fire on `UPDATE` of the table or a referencing table.
    #[default]
    Refuse,
    /// Let them fire on every changed row.
    Fire,
}

/// What to do with tables that inherit from the table (PostgreSQL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Inherited {
    /// Refuse while there are any.
    #[default]
    Refuse,
    /// Convert this table's own rows only (`ONLY`).
    Only,
    /// Convert theirs too.
    Include,
}

/// The choices a plan depends on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Options {
    /// Waits for a lock are bounded by this many milliseconds.
    pub lock_timeout_ms: u64,
    /// User triggers.
    pub triggers: Triggers,
    /// Inheriting tables.
    pub inherited: Inherited,
    /// Convert keys whose layout is uncertain.
    pub convert_uncertain: bool,
    /// The layout that made the keys, as the DBA knows it: every version-4 key with a
    /// plausible time is read as it (no clusters are looked for).
    #[serde(default, with = "layout_name")]
    pub layout: Option<Layout>,
    /// The layout keys are converted to: `v7` (the default, what combkey makes), or `v6` for a
    /// table whose writers make v6 (the v1 family only).
    #[serde(default = "v7", with = "layout_to")]
    pub to: Layout,
    /// The table that keeps each converted key's old and new value, where a conversion drops
    /// bits of the old keys (`schema.name` or `name`, in the table's schema; default
    /// `combkey_keymap_<table>`).
    #[serde(default)]
    pub key_map: Option<String>,
    /// Make the key column's `DEFAULT` combkey's database-side generator (`combkey_v7()`,
    /// installed with it; a `BEFORE INSERT` trigger on MySQL/MariaDB), in the same run.
    #[serde(default)]
    pub set_default: bool,
    /// `--rekey-from`: random v4 keys become v7 keys made from this column's time (the row's
    /// creation time), the key map keeping each old key.
    #[serde(default)]
    pub rekey_from: Option<String>,
    /// What `rekey_from` does with rows whose time makes no v7 key.
    #[serde(default)]
    pub rekey_invalid: RekeyInvalid,
    /// `--keep-type`: a text key column keeps its type, its values becoming v7 ids as text
    /// (for applications that bind keys as text), instead of changing to the stored form's type.
    #[serde(default)]
    pub keep_type: bool,
}

fn v7() -> Layout {
    Layout::V7
}

/// The target layout kept in a plan by its name.
mod layout_to {
    use combkey::layouts::Layout;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(l: &Layout, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(l.name())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Layout, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// The layouts `--layout` may name: those whose keys carry no version nibble of their own
/// (version 4, or a moved one, or UUIDNext's version 8 which short prefix COMBs share), so
/// only a DBA can say what made them.
pub const ASSUMABLE: [Layout; 12] = [
    Layout::RtCombSql,
    Layout::RtCombPostgres,
    Layout::RtCombLegacy,
    Layout::UcPrefix,
    Layout::UcSuffix,
    Layout::NewSequentialId,
    Layout::MySqlSwap,
    Layout::EfCore,
    Layout::NewId,
    Layout::NewIdSequential,
    Layout::UuidNextSqlServer,
    Layout::MedoSqlServer,
];

/// An optional layout kept in a plan (the journal's JSON) by its name.
mod layout_name {
    use combkey::layouts::Layout;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(l: &Option<Layout>, s: S) -> Result<S::Ok, S::Error> {
        match l {
            Some(l) => s.serialize_some(l.name()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Layout>, D::Error> {
        Option::<String>::deserialize(d)?.map(|n| n.parse().map_err(serde::de::Error::custom)).transpose()
    }
}

impl Options {
    /// Waits for a lock end after `ms` milliseconds (default 5000).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Options;
    ///
    /// assert_eq!(Options::default().lock_timeout_ms, 5000);
    /// let options = Options::default().with_lock_timeout_ms(1000);
    /// assert_eq!(options.lock_timeout_ms, 1000);
    /// ```
    pub fn with_lock_timeout_ms(mut self, ms: u64) -> Self {
        self.lock_timeout_ms = ms;
        self
    }

    /// What to do with user triggers (default [`Triggers::Refuse`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::{Options, Triggers};
    ///
    /// assert_eq!(Options::default().triggers, Triggers::Refuse);
    /// // An audit trigger that should record the key change.
    /// let options = Options::default().with_triggers(Triggers::Fire);
    /// assert_eq!(options.triggers, Triggers::Fire);
    /// ```
    pub fn with_triggers(mut self, triggers: Triggers) -> Self {
        self.triggers = triggers;
        self
    }

    /// What to do with inheriting tables and partitions (default [`Inherited::Refuse`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::{Inherited, Options};
    ///
    /// assert_eq!(Options::default().inherited, Inherited::Refuse);
    /// let options = Options::default().with_inherited(Inherited::Only);
    /// assert_eq!(options.inherited, Inherited::Only);
    /// ```
    pub fn with_inherited(mut self, inherited: Inherited) -> Self {
        self.inherited = inherited;
        self
    }

    /// Whether keys whose layout is uncertain are converted too (default `false`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Options;
    ///
    /// assert!(!Options::default().convert_uncertain);
    /// assert!(Options::default().with_convert_uncertain(true).convert_uncertain);
    /// ```
    pub fn with_convert_uncertain(mut self, convert: bool) -> Self {
        self.convert_uncertain = convert;
        self
    }

    /// The layout that made the keys, where the DBA knows it (`--layout`): every key whose
    /// version nibble names no layout is read as it where its time is plausible. Only the
    /// layouts whose keys do not say what they are: RT.Comb's three, uuid-creator's prefix
    /// and suffix COMBs, `NEWSEQUENTIALID`, MySQL's swapped v1.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::layouts::Layout;
    /// use combkey_doctor::{ASSUMABLE, Options};
    ///
    /// // The DBA knows EF Core made these keys.
    /// let options = Options::default().with_layout(Some(Layout::EfCore));
    /// assert_eq!(options.layout, Some(Layout::EfCore));
    /// assert!(ASSUMABLE.contains(&Layout::EfCore));
    /// ```
    pub fn with_layout(mut self, layout: Option<Layout>) -> Self {
        self.layout = layout;
        self
    }

    /// The layout keys are converted to (default `v7`, what combkey makes): `v7` or `v6`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::layouts::Layout;
    /// use combkey_doctor::Options;
    ///
    /// assert_eq!(Options::default().to, Layout::V7);
    /// // The application makes v6 ids: convert NEWSEQUENTIALID() keys to v6, not v7.
    /// let options = Options::default().with_target(Layout::V6);
    /// assert_eq!(options.to, Layout::V6);
    /// ```
    pub fn with_target(mut self, to: Layout) -> Self {
        self.to = to;
        self
    }

    /// The name of the table that keeps old and new keys (default `combkey_keymap_<table>`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Options;
    ///
    /// assert_eq!(Options::default().key_map, None); // combkey_keymap_<table>
    /// let options = Options::default().with_key_map(Some("archive.order_keys".into()));
    /// assert_eq!(options.key_map.as_deref(), Some("archive.order_keys"));
    /// ```
    pub fn with_key_map(mut self, name: Option<String>) -> Self {
        self.key_map = name;
        self
    }

    /// Whether the run also makes the key column's default combkey's generator.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Options;
    ///
    /// assert!(!Options::default().set_default);
    /// assert!(Options::default().with_set_default(true).set_default);
    /// ```
    pub fn with_set_default(mut self, set: bool) -> Self {
        self.set_default = set;
        self
    }

    /// Random v4 keys become v7 keys made from `column`'s time, the row's creation time
    /// (`created_at`): its millisecond, its microseconds in the next 12 bits, then the old
    /// key's last 62 bits. The key map keeps every old key, where an old id resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::{Options, RekeyInvalid};
    ///
    /// let options = Options::default().with_rekey_from(Some("created_at".into()));
    /// assert_eq!(options.rekey_from.as_deref(), Some("created_at"));
    /// // Rows whose time is NULL, in the future or before 1970 refuse the run unless kept.
    /// assert_eq!(options.rekey_invalid, RekeyInvalid::Refuse);
    /// ```
    pub fn with_rekey_from(mut self, column: Option<String>) -> Self {
        self.rekey_from = column;
        self
    }

    /// Whether a text key column keeps its type (`--keep-type`): its values become v7 ids as
    /// text in the column's own form (lowercase; 32 hex digits in a 32-character column), for
    /// applications that bind keys as text (combkey's `CombText` types). Without it a text key
    /// column changes to the stored form's type (PostgreSQL `uuid`, MySQL/MariaDB `BINARY(16)`,
    /// SQLite's 16-byte blobs).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Options;
    ///
    /// assert!(!Options::default().keep_type);
    /// // The application binds its CHAR(36) keys as text: they stay text, as v7 ids.
    /// assert!(Options::default().with_keep_type(true).keep_type);
    /// ```
    pub fn with_keep_type(mut self, keep: bool) -> Self {
        self.keep_type = keep;
        self
    }

    /// What `--rekey-from` does with rows whose time makes no v7 key (`NULL`, in the future,
    /// before 1970, not a time): refuse the run (the default) or keep their v4 keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::{Options, RekeyInvalid};
    ///
    /// let options = Options::default()
    ///     .with_rekey_from(Some("created_at".into()))
    ///     .with_rekey_invalid(RekeyInvalid::Keep);
    /// assert_eq!(options.rekey_invalid, RekeyInvalid::Keep);
    /// ```
    pub fn with_rekey_invalid(mut self, rule: RekeyInvalid) -> Self {
        self.rekey_invalid = rule;
        self
    }
}
impl Default for Options {
    fn default() -> Self {
        Options {
            lock_timeout_ms: 5000,
            triggers: Triggers::Refuse,
            inherited: Inherited::Refuse,
            convert_uncertain: false,
            layout: None,
            to: Layout::V7,
            key_map: None,
            set_default: false,
            rekey_from: None,
            rekey_invalid: RekeyInvalid::Refuse,
            keep_type: false,
        }
    }
}

/// What `--rekey-from` does with a row whose time gives no v7 key: `NULL`, after the run's
/// start (its key would sort after the ids the application makes next), before 1970 (v7 counts
/// from the Unix epoch), or a value the database cannot read as a time (SQLite text that is no
/// date, or a number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum RekeyInvalid {
    /// Refuse the run, naming how many rows of each kind and a few of their keys: nothing
    /// changes until they are fixed (or `Keep` is chosen).
    #[default]
    Refuse,
    /// Those rows keep their v4 keys; the report counts them.
    Keep,
}

/// How an online run changes the keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// Copy and swap where the table allows it (what the audit reports), else in place; a
    /// stopped run goes on the way it began.
    #[default]
    Auto,
    /// The table and its referencing tables are copied into new tables with the converted
    /// keys (and the key column's new type), the application's changes carried over meanwhile,
    /// and the new tables swapped in atomically (pg_repack's and pt-online-schema-change's way).
    /// Needs room for a second copy of the tables; changes a column's type online.
    CopySwap,
    /// The keys change in place, in batches of short transactions (no second copy; the
    /// primary key is left half empty: rebuild it after).
    InPlace,
}

impl Method {
    /// Its name, as `--method` takes it.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Method;
    ///
    /// assert_eq!(Method::CopySwap.name(), "copy-swap");
    /// assert_eq!(Method::default().name(), "auto");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::CopySwap => "copy-swap",
            Method::InPlace => "in-place",
        }
    }
}

/// How an online run paces itself.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Online {
    /// How the keys change (default [`Method::Auto`]).
    pub method: Method,
    /// After a copy and swap, drop the old tables (kept by default, under the names the run
    /// gave them, until the user drops them).
    pub drop_old: bool,
    /// Keys read per batch (each batch's transaction changes those of them that convert).
    pub batch_size: usize,
    /// Wait before a batch while this many sessions (or more) wait for a lock.
    pub pause_when_busy: Option<i64>,
    /// Wait before a batch while a replica lags more than this, or while a replica's lag
    /// cannot be read (it fails closed).
    pub max_lag: Option<Duration>,
    /// Replicas to ask for their lag, connected to once per run (MySQL/MariaDB replicas, and
    /// PostgreSQL standbys; a PostgreSQL primary also reads its own `pg_stat_replication` and
    /// replication slots). A URL that is no replica is refused before anything changes.
    pub replica_urls: Vec<String>,
    /// Retries of one batch that lost a lock race before the run gives up.
    pub max_retries: u32,
    /// How long a copy and swap waits at its swap for other sessions' transactions that hold
    /// its tables (a report's open transaction): it does not queue for the lock meanwhile (a
    /// queued request would hold up every write behind it), and says on which sessions it
    /// waits; past this the run stops, nothing swapped.
    pub swap_wait: Duration,
    /// PostgreSQL: once a copy and swap's swap has waited this long for the sessions that hold
    /// its tables in a long transaction, it cancels their statements, and once it has waited
    /// twice as long, it ends those sessions (as pg_repack's `--wait-timeout`; `None`, the
    /// default: it never does, and stops after [`swap_wait`](Self::swap_wait)). MariaDB does not
    /// show who holds a table's metadata lock: the option is refused there.
    pub kill_blockers_after: Option<Duration>,
    /// A pause after each batch that changed keys, to leave the server room.
    pub sleep: Duration,
    /// The application is ready for the key column's new type (it binds the stored form, such
    /// as combkey's `Comb` types, not text): without it an online run that would change the
    /// column's type is refused, since every write and lookup of an application that binds
    /// the old form fails or matches nothing from the swap on.
    pub app_ready_for_new_type: bool,
    /// Only the keys this condition selects (SQL on the key column), in one pass: a copy and
    /// swap's keys written through unconverted, after the swap. Keys the application writes
    /// meanwhile are its own new rows, not chased.
    pub(crate) only: Option<String>,
    /// The in-place run after a copy and swap: journaled apart ([`Journal::after_swap`]
    /// (crate::methods::shared::Journal::after_swap)), its row gone when it ends.
    pub(crate) after_swap: bool,
}

impl Online {
    /// Keys read per batch (default 1000).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().batch_size, 1000);
    /// assert_eq!(Online::default().with_batch_size(200).batch_size, 200);
    /// ```
    pub fn with_batch_size(mut self, keys: usize) -> Self {
        self.batch_size = keys;
        self
    }

    /// Waits before a batch while this many sessions (or more) wait for a lock (default: never).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().pause_when_busy, None);
    /// // Hold back while 3 or more sessions wait for a lock.
    /// let online = Online::default().with_pause_when_busy(Some(3));
    /// assert_eq!(online.pause_when_busy, Some(3));
    /// ```
    pub fn with_pause_when_busy(mut self, waiters: Option<i64>) -> Self {
        self.pause_when_busy = waiters;
        self
    }

    /// Waits before a batch while a replica lags more than this (default: no bound).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().max_lag, None);
    /// let online = Online::default().with_max_lag(Some(Duration::from_secs(2)));
    /// assert_eq!(online.max_lag, Some(Duration::from_secs(2)));
    /// ```
    pub fn with_max_lag(mut self, lag: Option<Duration>) -> Self {
        self.max_lag = lag;
        self
    }

    /// The replicas to ask for their lag: MySQL/MariaDB replicas, or PostgreSQL standbys.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey_doctor::Online;
    ///
    /// let online = Online::default()
    ///     .with_replica_urls(vec!["mysql://monitor@replica-1/shop".into()])
    ///     .with_max_lag(Some(Duration::from_secs(1)));
    /// assert_eq!(online.replica_urls.len(), 1);
    /// assert!(Online::default().replica_urls.is_empty());
    /// ```
    pub fn with_replica_urls(mut self, urls: Vec<String>) -> Self {
        self.replica_urls = urls;
        self
    }

    /// Retries of one batch that lost a lock race before the run gives up (default 20).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().max_retries, 20);
    /// assert_eq!(Online::default().with_max_retries(5).max_retries, 5);
    /// ```
    pub fn with_max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// How long a copy and swap waits at its swap for the sessions that hold its tables in a
    /// transaction (default 5 minutes), never queued for their lock meanwhile.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().swap_wait, Duration::from_secs(300));
    /// let online = Online::default().with_swap_wait(Duration::from_secs(60));
    /// assert_eq!(online.swap_wait, Duration::from_secs(60));
    /// ```
    pub fn with_swap_wait(mut self, wait: Duration) -> Self {
        self.swap_wait = wait;
        self
    }

    /// PostgreSQL: after this long a copy and swap's swap cancels the statements of the
    /// sessions that hold its tables in a long transaction, and after twice as long ends those
    /// sessions, naming each (default `None`: never).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().kill_blockers_after, None);
    /// let online = Online::default().with_kill_blockers_after(Some(Duration::from_secs(30)));
    /// assert_eq!(online.kill_blockers_after, Some(Duration::from_secs(30)));
    /// ```
    pub fn with_kill_blockers_after(mut self, after: Option<Duration>) -> Self {
        self.kill_blockers_after = after;
        self
    }

    /// How the keys change (default [`Method::Auto`]: copy and swap where the table allows it).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::{Method, Online};
    ///
    /// assert_eq!(Online::default().method, Method::Auto);
    /// // No room for a second copy of the table: change the keys in place.
    /// let online = Online::default().with_method(Method::InPlace);
    /// assert_eq!(online.method, Method::InPlace);
    /// ```
    pub fn with_method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// After a copy and swap, drop the old tables too (default: they are kept).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Online;
    ///
    /// assert!(!Online::default().drop_old);
    /// assert!(Online::default().with_drop_old(true).drop_old);
    /// ```
    pub fn with_drop_old(mut self, drop: bool) -> Self {
        self.drop_old = drop;
        self
    }

    /// Says the application is ready for the key column's new type (default: not), which an
    /// online run that changes the column's type needs.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Online;
    ///
    /// assert!(!Online::default().app_ready_for_new_type);
    /// assert!(Online::default().with_app_ready_for_new_type(true).app_ready_for_new_type);
    /// ```
    pub fn with_app_ready_for_new_type(mut self, ready: bool) -> Self {
        self.app_ready_for_new_type = ready;
        self
    }

    /// A pause after each batch that changed keys (default none).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey_doctor::Online;
    ///
    /// assert_eq!(Online::default().sleep, Duration::ZERO);
    /// let gentle = Online::default().with_sleep(Duration::from_millis(50));
    /// assert_eq!(gentle.sleep, Duration::from_millis(50));
    /// ```
    pub fn with_sleep(mut self, sleep: Duration) -> Self {
        self.sleep = sleep;
        self
    }
}

impl Default for Online {
    fn default() -> Self {
        Online {
            method: Method::Auto,
            drop_old: false,
            batch_size: 1000,
            pause_when_busy: None,
            max_lag: None,
            replica_urls: Vec::new(),
            max_retries: 20,
            swap_wait: Duration::from_secs(300),
            kill_blockers_after: None,
            sleep: Duration::ZERO,
            app_ready_for_new_type: false,
            only: None,
            after_swap: false,
        }
    }
}

/// What the run reports as it goes.
pub trait Progress {
    /// A step starts.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Progress;
    ///
    /// /// Progress on standard error, as `combkey doctor --apply` shows it.
    /// struct Stderr;
    ///
    /// impl Progress for Stderr {
    ///     fn step(&mut self, index: usize, of: usize, what: &str) {
    ///         eprintln!("step {index}/{of}: {what}");
    ///     }
    ///     fn keys(&mut self, done: usize, total: usize) {
    ///         eprintln!("  {done} of {total} keys mapped");
    ///     }
    /// }
    ///
    /// let mut progress = Stderr;
    /// progress.step(1, 3, "convert the keys");
    /// // `doctor.apply(&plan, &mut progress).await?` calls it for every step.
    /// ```
    fn step(&mut self, index: usize, of: usize, what: &str);
    /// Keys mapped so far, of all.
    fn keys(&mut self, done: usize, total: usize);
    /// An online run: keys read so far, keys converted, the table's estimated rows.
    fn batch(&mut self, scanned: usize, converted: usize, estimate: i64) {
        let _ = (scanned, converted, estimate);
    }
    /// An online run waits before its next batch, and why (said again when the reason
    /// changes, and every 30 s while it lasts); how long it has waited so far.
    fn waiting(&mut self, why: &str, so_far: std::time::Duration) {
        let _ = (why, so_far);
    }
    /// A copy and swap waits at its swap for the sessions that hold its tables, and for whom
    /// (said again when that changes, and every 30 s while it lasts); how long it has waited so
    /// far. By default said as [`waiting`](Progress::waiting) says.
    fn swap_waits(&mut self, why: &str, so_far: std::time::Duration) {
        self.waiting(why, so_far);
    }
    /// A lock the run needs (copy and swap's first step, the removal of a stopped run) waits,
    /// without asking for it, for the long transactions that hold its tables, and for whom
    /// (said again when that changes); how long it has waited so far. By default said as
    /// [`waiting`](Progress::waiting) says.
    fn lock_waits(&mut self, why: &str, so_far: std::time::Duration) {
        self.waiting(why, so_far);
    }
    /// A copy and swap applies the changes the application made meanwhile, in rounds, before
    /// its swap: how many it has applied so far, and how many its logs hold still (said after
    /// each round; the swap comes once what is left is small).
    fn applied(&mut self, applied: usize, left: i64) {
        let _ = (applied, left);
    }
}

/// Progress that says nothing.
pub struct Quiet;

impl Progress for Quiet {
    fn step(&mut self, _: usize, _: usize, _: &str) {}
    fn keys(&mut self, _: usize, _: usize) {}
}
