//! `combkey doctor` under generated cases: a seed picks a schema (key type: the stored form,
//! UUID text in 36 or 32 characters; a key unique only with a tenant column, referencing tables
//! with or without `ON DELETE CASCADE` and `NULL`s, a unique secondary index, and one shape
//! around it: a self-reference, a view, a user trigger on `UPDATE` with or without
//! `--triggers fire`, a generated column computed from the key, a grandchild referencing the
//! child's reference), data (a mix of key layouts, ids that repeat across tenants, times for
//! re-keying), a mode (the audit, `--apply` offline, offline stopped after a random step then
//! run again, `--online` in place or by copy and swap with an application writing and looking
//! rows up by old and new key throughout, `--rekey-from`, or any run killed with `SIGKILL` at
//! a random moment, or at (or a few milliseconds into) a step its progress says it begins, and
//! then run again), a fault during an online run (someone else's DDL at a
//! random moment: a column added to the table or to a referencing table, an index made; or,
//! copy and swap, a row of the copy changed before the check before the swap, through the
//! test build's statement hook), and runs it against the real databases. What must
//! hold is checked here, from a snapshot of every row before and after, never from doctor's
//! own output:
//!
//! - a failed run is a refusal the case expects (a composite key's re-key, and each shape's
//!   own, [`Shape::refusals`]), saying why, or a fault the harness made;
//! - the audit changes nothing;
//! - a run that exits 0: every row is there once, with its other columns as they were, its key
//!   as it was or converted exactly as its layout says (RFC 9562 and the layouts' own
//!   definitions, through `combkey::layouts`; a re-key by the spec in docs/doctor.md), the same
//!   id converted the same way in every row, every referencing row pointing at the same row
//!   as before, and the next id combkey makes sorting after every converted key;
//! - someone else's DDL is there after the run, or the run stopped saying the table changed;
//!   a copy changed before its check is never swapped in;
//! - a run that stops or is refused: every row exactly as it was, or (a journaled or online
//!   run) a state that the same command run again finishes as above;
//! - every row the application wrote during an online run is there with its key, and every
//!   row it looked up by its key as it was and as converted was found;
//! - a killed run left the tables done, unchanged, or (online, or journaled on MariaDB)
//!   consistent half way, and the same command again finishes it.
//! - a run that finished kept every converted key's old and new id in its key map (one asked
//!   for by name with `--key-map`, drawn per case, or doctor's own) and nothing else; with
//!   `--set-default` (drawn per case) a row written without a key gets a v7 key from the
//!   database itself, sorting after every converted key.
//!
//! CI runs the seeds of `SEEDS` on each database; `COMBKEY_TORTURE_SEEDS=a..b` (or a list
//! `1,5,9`) runs others, `COMBKEY_TORTURE_ROWS=n` gives each case `n` rows. A failing seed is run again with
//! fewer rows, halving while it still fails, and the smallest failing case is printed: the
//! seed, the rows and the case, to turn into a test of its own.

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use combkey::layouts::{KeyMigration, Layout, RtCombLayout, V1Generator};
use combkey::{Comb, FixedClock, SeededRandom, Timestamp};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, Row, SqliteConnection};

/// The seeds CI runs on each database (well under a minute in all): the first few, and those
/// that found something (49 and 56: ids that rows repeat under `(tenant, id)`, taken by the
/// audit for a cluster of RT.Comb or .NET keys and converted; 399: v1-family keys of one node,
/// whose node RT.Comb's layout reads as one instant, converted as RT.Comb keys; 9: on
/// PostgreSQL, a `char(32)` text key, whose new keys were written as 36 characters before the
/// column became `uuid`; 242: on SQLite, a text-declared key with `--key-map`, whose run again
/// after one stopped past its commit refused the blob key map it had made as "no key map");
/// and seeds of each fault: 14 and 125 a copy changed before its check (PostgreSQL, MariaDB),
/// 45, 273 and 299 someone else's DDL (273 and 299 on MariaDB: the DBA's `ALTER` failed with
/// 1205 during the run, and the run's own trigger gave up on the DDL's metadata lock).
const SEEDS: &[u64] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 45, 49, 56, 125, 242, 273, 299, 399];

fn combkey(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_combkey"));
    cmd.args(args).stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run combkey")
}

/// combkey started with `args`, its standard output and error piped.
fn spawned(args: &[&str]) -> std::process::Child {
    use std::process::Stdio;
    Command::new(env!("CARGO_BIN_EXE_combkey"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run combkey")
}

/// Runs combkey and kills it (`SIGKILL`) once `after` has passed, unless it ended before.
fn killed(args: &[&str], after: std::time::Duration) -> Output {
    let mut child = spawned(args);
    let started = std::time::Instant::now();
    while child.try_wait().expect("the run's status").is_none() {
        if started.elapsed() >= after {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.wait_with_output().expect("the run's output")
}

/// Runs combkey and kills it (`SIGKILL`) `after` it printed the beginning of its step `step`
/// (`step N of M`, on its standard error), unless it ended before.
fn killed_at_step(args: &[&str], step: usize, after: std::time::Duration) -> Output {
    use std::io::{BufRead, Read};
    let mut child = spawned(args);
    let mut stdout = child.stdout.take().expect("its standard output");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let stderr = child.stderr.take().expect("its standard error");
    let seen = Arc::new(std::sync::Mutex::new(None::<std::time::Instant>));
    let err = {
        let seen = Arc::clone(&seen);
        let want = format!("step {step} of ");
        std::thread::spawn(move || {
            let mut v = Vec::new();
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(&want) {
                    seen.lock().unwrap().get_or_insert_with(std::time::Instant::now);
                }
                v.extend_from_slice(line.as_bytes());
                v.push(b'\n');
            }
            v
        })
    };
    while child.try_wait().expect("the run's status").is_none() {
        if seen.lock().unwrap().is_some_and(|at| at.elapsed() >= after) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let status = child.wait().expect("the run's status");
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Waits until the server has ended the sessions of a killed run (a statement it was running
/// goes on until the server notices, holding its locks): the run again must not meet them.
async fn sessions_gone(db: &mut Db) {
    let sql = match db {
        // Of this database (another checkout's run, or a developer's, may use the server).
        Db::Pg(_) => {
            "SELECT count(*)::text FROM pg_stat_activity WHERE application_name = 'combkey doctor' \
             AND datname = current_database()"
        }
        Db::My(_) => {
            "SELECT CAST(count(*) AS CHAR) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() \
             AND USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) AND COMMAND NOT IN ('Daemon', 'Binlog Dump') \
             AND DB = DATABASE()"
        }
        Db::Lite(_, _) => return,
    };
    let started = std::time::Instant::now();
    loop {
        let n = db.rows(sql).await[0][0].clone().unwrap_or_default();
        if n == "0" {
            return;
        }
        assert!(started.elapsed().as_secs() < 120, "a killed run's sessions are still there after 2 minutes");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Pg,
    My,
    Lite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Audit,
    Offline,
    /// Offline, stopped after step `n` (counting from 0), then run again.
    Stopped(usize),
    OnlineInPlace,
    CopySwap,
    Rekey,
    /// A run killed (`SIGKILL`) after this many milliseconds, then the same command again.
    Killed(u64, How),
}

/// How a killed run runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    Offline,
    InPlace,
    CopySwap,
}

/// What stands around the table beyond its referencing tables: shapes doctor converts, and
/// shapes it refuses (each with the words its refusal must hold, [`Shape::refusals`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Plain,
    /// `t.up` references `t (id)`: every even row the row made three before it.
    SelfRef,
    /// A view that reads the key.
    View,
    /// A user trigger on `UPDATE` of the table, writing a log table; `true`: the run is given
    /// `--triggers fire`.
    Trigger(bool),
    /// A stored generated column computed from the key.
    Generated,
    /// A grandchild whose foreign key references the child's column that references the key.
    Chain,
    /// PostgreSQL: a table that inherits from the table; the run is given `--inherited` with
    /// this choice (`None`: the default, refuse).
    Inherited(Option<&'static str>),
}

impl Shape {
    /// What a refusal of this shape must say (none: the shape is converted, never refused).
    fn refusals(self, case: &Case) -> &'static [&'static str] {
        match self {
            Shape::Plain | Shape::SelfRef => &[],
            // A view pins the table (copy and swap) and the column's type (a text key).
            Shape::View => &["view"],
            Shape::Trigger(false) => &["triggers fire on UPDATE"],
            Shape::Trigger(true) if case.mode_is_copy_swap() => &["trigger"],
            Shape::Trigger(true) => &[],
            Shape::Generated => &["generated"],
            Shape::Chain => &["reference a column that references"],
            Shape::Inherited(None) => &["tables inherit from"],
            Shape::Inherited(Some(_)) if case.mode_is_copy_swap() => &["inheriting tables"],
            Shape::Inherited(Some(_)) => &[],
        }
    }
}

/// One generated case.
#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    backend: Backend,
    rows: usize,
    text_key: bool,
    /// `PRIMARY KEY (tenant, id)`, tenant 2 repeating some of tenant 1's ids.
    composite: bool,
    /// Per referencing table: `ON DELETE CASCADE`, and whether some rows hold `NULL`.
    children: Vec<(bool, bool)>,
    unique_payload: bool,
    /// The layouts of the keys (`None`: random version 4).
    layouts: Vec<Option<Layout>>,
    mode: Mode,
    shape: Shape,
    /// A text key written as 32 hex digits (`CHAR(32)`), not 36 characters.
    simple_text: bool,
    /// `--set-default`: the key column's default becomes combkey's generator.
    set_default: bool,
    /// `--key-map km_<table>`: a key map asked for by name.
    key_map: bool,
    /// A fault made during an online run.
    fault: Option<Fault>,
    /// A killed run killed this many milliseconds after it says it begins step `n` (its
    /// progress, read as it comes), not after a random time.
    kill_at_step: Option<(usize, u64)>,
}

/// A fault the harness makes during an online run (not a killed one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// Someone else's DDL, this many milliseconds into the run: a column added to the table
    /// (0), an index made on it (1), a column added to its first referencing table (2). It is
    /// never lost: a run that ends done leaves it there, one that stops says the table changed.
    Ddl(u8, u64),
    /// Copy and swap: a row of the copy changed before the check before the swap (the test
    /// build's statement hook): the copy is never swapped in.
    Corrupt,
}

impl Fault {
    /// The DDL, and what shows it is there (a count that is 1 when it is).
    fn ddl(self, case: &Case) -> Option<(String, String)> {
        let Fault::Ddl(kind, _) = self else { return None };
        let t = case.table();
        let kind = if kind == 2 && case.children.is_empty() { 0 } else { kind };
        let column = |table: &str| match case.backend {
            Backend::Pg => format!(
                "SELECT count(*)::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '{table}' \
                 AND column_name = 'extra_f'"
            ),
            _ => format!(
                "SELECT CAST(COUNT(*) AS CHAR) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}' \
                 AND COLUMN_NAME = 'extra_f'"
            ),
        };
        Some(match kind {
            0 => (format!("ALTER TABLE {t} ADD COLUMN extra_f integer"), column(&t)),
            1 => (
                format!("CREATE INDEX {t}_f ON {t} (payload)"),
                match case.backend {
                    Backend::Pg => format!("SELECT count(*)::text FROM pg_indexes WHERE indexname = '{t}_f'"),
                    _ => format!(
                        "SELECT CAST(COUNT(DISTINCT INDEX_NAME) AS CHAR) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() \
                         AND TABLE_NAME = '{t}' AND INDEX_NAME = '{t}_f'"
                    ),
                },
            ),
            _ => (format!("ALTER TABLE {t}_c0 ADD COLUMN extra_f integer"), column(&format!("{t}_c0"))),
        })
    }
}

impl Case {
    fn new(seed: u64, backend: Backend, rows: Option<usize>) -> Case {
        let mut r = StdRng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ backend as u64);
        // Drawn whatever is given, so the other choices are the seed's whatever the rows.
        let drawn = r.random_range(8..=400);
        let rows =
            rows.or_else(|| std::env::var("COMBKEY_TORTURE_ROWS").ok().and_then(|v| v.parse().ok())).unwrap_or(drawn);
        let modes: &[Mode] = match backend {
            Backend::Lite => &[Mode::Audit, Mode::Offline, Mode::Stopped(0), Mode::Rekey],
            _ => &[Mode::Audit, Mode::Offline, Mode::Stopped(0), Mode::OnlineInPlace, Mode::CopySwap, Mode::Rekey],
        };
        let mut mode = modes[r.random_range(0..modes.len())];
        if mode == Mode::Stopped(0) {
            mode = Mode::Stopped(r.random_range(0..12));
        }
        let all = [
            Some(Layout::V1),
            None,
            Some(Layout::V7),
            Some(Layout::RtCombSql),
            Some(Layout::V6),
            Some(Layout::NewSequentialId),
            Some(Layout::MySqlSwap),
        ];
        let mut layouts: Vec<Option<Layout>> =
            if mode == Mode::Rekey { vec![None] } else { all.iter().copied().filter(|_| r.random_bool(0.5)).collect() };
        if layouts.is_empty() {
            layouts.push(all[r.random_range(0..all.len())]);
        }
        // Text keys change type, which the in-place online method cannot do (it says so).
        let text_key = r.random_bool(0.3) && mode != Mode::OnlineInPlace;
        let children: Vec<(bool, bool)> =
            (0..r.random_range(0..=2)).map(|_| (r.random_bool(0.5), r.random_bool(0.3))).collect();
        let composite = r.random_bool(0.3);
        let unique_payload = r.random_bool(0.3);
        // Drawn after the choices above, so a seed keeps them whatever is added here.
        let shapes = [
            Shape::Plain,
            Shape::SelfRef,
            Shape::View,
            Shape::Trigger(false),
            Shape::Trigger(true),
            Shape::Generated,
            Shape::Chain,
        ];
        let mut shape = if r.random_bool(0.5) { Shape::Plain } else { shapes[r.random_range(1..shapes.len())] };
        // A self-reference and a chain on one id column (not under a tenant); a chain needs a child.
        if (composite && matches!(shape, Shape::SelfRef | Shape::Chain))
            || (shape == Shape::Chain && children.is_empty())
        {
            shape = Shape::Plain;
        }
        let simple_text = r.random_bool(0.4);
        if r.random_bool(0.2) {
            let how = if backend == Backend::Lite { 0 } else { r.random_range(0..3) };
            let how = [How::Offline, How::InPlace, How::CopySwap][how];
            mode = Mode::Killed(r.random_range(0..250), how);
        }
        // (A text key changes type, which the in-place online method cannot do.)
        let text_key = text_key && !matches!(mode, Mode::Rekey | Mode::Killed(_, How::InPlace));
        // MariaDB computes no generated column from a CHAR column (its value would depend on
        // PAD_CHAR_TO_FULL_LENGTH): that shape is for the stored form there.
        if backend == Backend::My && text_key && shape == Shape::Generated {
            shape = Shape::Plain;
        }
        // Drawn last, so the seeds keep the choices above. SQLite has no functions in SQL, so
        // no default there.
        let set_default = r.random_bool(0.25) && backend != Backend::Lite && mode != Mode::Audit;
        let key_map = r.random_bool(0.3) && mode != Mode::Audit;
        if backend == Backend::Pg && shape == Shape::Plain && r.random_bool(0.15) {
            shape = Shape::Inherited([None, Some("only"), Some("include")][r.random_range(0..3)]);
        }
        // Drawn after everything above, so a seed keeps its choices.
        let copy_swap = mode == Mode::CopySwap;
        let fault = if matches!(mode, Mode::CopySwap | Mode::OnlineInPlace) && r.random_bool(0.3) {
            if copy_swap && r.random_bool(0.4) {
                Some(Fault::Corrupt)
            } else {
                Some(Fault::Ddl(r.random_range(0..3), r.random_range(0..400)))
            }
        } else {
            None
        };
        // Drawn after everything above: a killed run killed at a step's beginning, or inside it.
        let kill_at_step = match mode {
            Mode::Killed(_, how) if r.random_bool(0.5) => {
                let steps = if how == How::Offline { 14 } else { 5 };
                Some((r.random_range(1..=steps), [0, 0, 5, 20, 60][r.random_range(0..5)]))
            }
            _ => None,
        };
        Case {
            seed,
            backend,
            rows,
            text_key,
            composite,
            children,
            unique_payload,
            layouts,
            mode,
            shape,
            simple_text: text_key && simple_text,
            set_default,
            key_map,
            fault,
            kill_at_step,
        }
    }

    fn mode_is_copy_swap(&self) -> bool {
        matches!(self.mode, Mode::CopySwap | Mode::Killed(_, How::CopySwap))
    }

    fn online(&self) -> bool {
        matches!(self.mode, Mode::OnlineInPlace | Mode::CopySwap | Mode::Killed(_, How::InPlace | How::CopySwap))
    }

    fn table(&self) -> String {
        let b = match self.backend {
            Backend::Pg => "pg",
            Backend::My => "my",
            Backend::Lite => "lite",
        };
        format!("tort_{b}_{}", self.seed)
    }

    /// The key map the run keeps: the one asked for, or doctor's own name for it.
    fn key_map_name(&self) -> String {
        if self.key_map { format!("km_{}", self.table()) } else { format!("combkey_keymap_{}", self.table()) }
    }
}

/// A database of the harness.
enum Db {
    Pg(PgConnection),
    My(MySqlConnection),
    Lite(SqliteConnection, std::path::PathBuf),
}

impl Db {
    async fn open(backend: Backend, name: &str) -> Db {
        match backend {
            Backend::Pg => Db::Pg(PgConnection::connect(&combkey_testutil::pg_url()).await.expect("PostgreSQL")),
            Backend::My => Db::My(MySqlConnection::connect(&combkey_testutil::mysql_url()).await.expect("MariaDB")),
            Backend::Lite => {
                let dir = std::env::temp_dir().join(format!("combkey-torture-{}-{name}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let url = format!("sqlite://{}?mode=rwc", dir.join("db.sqlite").display());
                Db::Lite(SqliteConnection::connect(&url).await.unwrap(), dir)
            }
        }
    }

    fn url(&self) -> String {
        match self {
            Db::Pg(_) => combkey_testutil::pg_url(),
            Db::My(_) => combkey_testutil::mysql_url(),
            Db::Lite(_, dir) => format!("sqlite://{}", dir.join("db.sqlite").display()),
        }
    }

    async fn exec(&mut self, sql: &str) -> Result<(), String> {
        let q = sqlx::raw_sql(AssertSqlSafe(sql.to_string()));
        match self {
            Db::Pg(c) => q.execute(c).await.map(drop),
            Db::My(c) => q.execute(c).await.map(drop),
            Db::Lite(c, _) => q.execute(c).await.map(drop),
        }
        .map_err(|e| format!("{sql}: {e}"))
    }

    /// Every row of a query whose columns are all text.
    async fn rows(&mut self, sql: &str) -> Vec<Vec<Option<String>>> {
        self.try_rows(sql).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Every row of a query whose columns are all text, or the database's error.
    async fn try_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
        let q = sqlx::raw_sql(AssertSqlSafe(sql.to_string()));
        let out: Result<Vec<Vec<Option<String>>>, sqlx::Error> =
            match self {
                Db::Pg(c) => q.fetch_all(c).await.map(|rs| {
                    rs.iter().map(|r| (0..r.len()).map(|i| r.get::<Option<String>, _>(i)).collect()).collect()
                }),
                Db::My(c) => q.fetch_all(c).await.map(|rs| {
                    rs.iter().map(|r| (0..r.len()).map(|i| r.get::<Option<String>, _>(i)).collect()).collect()
                }),
                Db::Lite(c, _) => q.fetch_all(c).await.map(|rs| {
                    rs.iter().map(|r| (0..r.len()).map(|i| r.get::<Option<String>, _>(i)).collect()).collect()
                }),
            };
        out.map_err(|e| format!("{sql}: {e}"))
    }

    fn backend(&self) -> Backend {
        match self {
            Db::Pg(_) => Backend::Pg,
            Db::My(_) => Backend::My,
            Db::Lite(_, _) => Backend::Lite,
        }
    }

    /// A key column as 32 lowercase hex digits, whatever it holds (the stored form or text).
    fn hex(&self, c: &str) -> String {
        match self {
            Db::Pg(_) => format!("lower(replace({c}::text, '-', ''))"),
            Db::My(_) => format!("CAST(IF(LENGTH({c}) = 16, LOWER(HEX({c})), LOWER(REPLACE({c}, '-', ''))) AS CHAR)"),
            Db::Lite(_, _) => {
                format!("CASE WHEN typeof({c}) = 'blob' THEN lower(hex({c})) ELSE lower(replace({c}, '-', '')) END")
            }
        }
    }

    fn text(&self, c: &str) -> String {
        match self {
            Db::Pg(_) => format!("{c}::text"),
            Db::My(_) => format!("CAST({c} AS CHAR)"),
            Db::Lite(_, _) => format!("CAST({c} AS TEXT)"),
        }
    }

    fn literal(&self, id: Comb, text: bool) -> String {
        match (self, text) {
            (_, true) => format!("'{id}'"),
            (Db::Pg(_), false) => format!("'{id}'::uuid"),
            (Db::My(_), false) => format!("0x{id:X}"),
            (Db::Lite(_, _), false) => format!("X'{id:X}'"),
        }
    }

    /// A key's literal as the case writes it (text keys in 36 or 32 characters).
    fn lit(&self, case: &Case, id: Comb) -> String {
        if case.simple_text { format!("'{}'", id.simple()) } else { self.literal(id, case.text_key) }
    }

    /// The key column's type as the case makes it.
    fn key_type_of(&self, case: &Case) -> &'static str {
        match (self, case.simple_text) {
            (Db::My(_), true) => "CHAR(32)",
            (Db::Pg(_), true) => "char(32)",
            _ => self.key_type(case.text_key),
        }
    }

    fn key_type(&self, text: bool) -> &'static str {
        match (self, text) {
            (Db::Pg(_), false) => "uuid",
            (Db::Pg(_), true) => "text",
            (Db::My(_), false) => "BINARY(16)",
            (Db::My(_), true) => "CHAR(36)",
            (Db::Lite(_, _), false) => "BLOB",
            (Db::Lite(_, _), true) => "TEXT",
        }
    }
}

/// A row of the parent as generated: tenant, seq, id, its layout, its time (ms).
#[derive(Clone, Debug)]
struct Gen {
    tenant: i64,
    seq: usize,
    id: Comb,
    /// `None`: random version 4.
    layout: Option<Layout>,
    ms: i64,
}

/// The rows: one key per row, of a layout of the case's, one second apart from 2025-03-01;
/// with a composite key, tenant 2 repeats every fourth of tenant 1's ids, 30 days later.
fn generate(case: &Case) -> Vec<Gen> {
    let mut r = StdRng::seed_from_u64(case.seed ^ 0x5eed);
    let random = SeededRandom::new(case.seed);
    let t0: Timestamp = "2025-03-01T08:00:00Z".parse().unwrap();
    let clock = Arc::new(FixedClock::new(t0));
    let v1 = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(case.seed ^ 1));
    let v7 = combkey::V7Generator::new();
    let mut out = Vec::new();
    for seq in 0..case.rows {
        let t = t0.saturating_add_ms(1000 * i64::try_from(seq).unwrap());
        clock.set(t);
        let layout = case.layouts[r.random_range(0..case.layouts.len())];
        let mut b = [0u8; 16];
        combkey::RandomSource::fill_bytes(&random, &mut b);
        b[6] = 0x40 | (b[6] & 0x0f);
        b[8] = 0x80 | (b[8] & 0x3f);
        let v4 = Comb::from_bytes(b);
        let id = match layout {
            None => v4,
            Some(Layout::V7) => v7.generate_at(t),
            Some(Layout::RtCombSql) => RtCombLayout::Sql.create(t, v4).unwrap(),
            Some(l @ (Layout::V1 | Layout::V6 | Layout::NewSequentialId | Layout::MySqlSwap)) => {
                Layout::convert(&v1.generate(), Layout::V1, l).unwrap()
            }
            Some(other) => panic!("{other}"),
        };
        out.push(Gen { tenant: 1, seq, id, layout, ms: t.unix_ms() });
    }
    if case.composite {
        let n = out.len();
        for i in (0..n).step_by(4) {
            let g = out[i].clone();
            out.push(Gen { tenant: 2, seq: n + i, ms: g.ms + 30 * 86_400_000, ..g });
        }
    }
    out
}

/// Makes the case's tables and rows: `t (tenant, id, seq, payload, created_at)` and its
/// referencing tables `t_c0`, `t_c1` (one row per parent row, some `NULL` where the case says).
async fn seed(db: &mut Db, case: &Case, rows: &[Gen]) {
    let t = case.table();
    let ty = db.key_type_of(case);
    db.exec(&format!("DROP VIEW IF EXISTS {t}_v")).await.unwrap();
    let mut drops = vec![format!("{t}_g"), format!("{t}_log"), format!("{t}_h")];
    drops.extend((0..3).flat_map(|i| [format!("_{t}_c{i}_old"), format!("{t}_c{i}")]));
    drops.extend([format!("_{t}_old"), t.clone(), format!("combkey_keymap_{t}"), format!("km_{t}")]);
    for d in drops {
        db.exec(&format!("DROP TABLE IF EXISTS {d}")).await.unwrap();
    }
    if db.backend() != Backend::Lite {
        let _ = db.exec(&format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%{t}%'")).await;
    }
    let time = match db {
        Db::Pg(_) => "timestamptz",
        Db::My(_) => "DATETIME(6)",
        Db::Lite(_, _) => "TEXT",
    };
    let key = if case.composite { "PRIMARY KEY (tenant, id)" } else { "PRIMARY KEY (id)" };
    let mut extra = String::new();
    if case.shape == Shape::SelfRef {
        extra = format!(", up {ty}, FOREIGN KEY (up) REFERENCES {t} (id)");
    }
    if case.shape == Shape::Generated {
        extra = match db {
            Db::Pg(_) => format!(", id_shown text GENERATED ALWAYS AS ({}) STORED", db.hex("id")),
            Db::My(_) => ", id_shown varchar(64) AS (HEX(id)) STORED".into(),
            Db::Lite(_, _) => ", id_shown TEXT GENERATED ALWAYS AS (hex(id)) STORED".into(),
        };
    }
    db.exec(&format!(
        "CREATE TABLE {t} (tenant integer NOT NULL, id {ty} NOT NULL, seq integer NOT NULL, payload varchar(40) NOT NULL, \
         created_at {time} NOT NULL{extra}, {key})"
    ))
    .await
    .unwrap();
    if case.composite {
        db.exec(&format!("CREATE INDEX {t}_id ON {t} (id)")).await.unwrap();
    }
    if case.unique_payload {
        db.exec(&format!("CREATE UNIQUE INDEX {t}_payload ON {t} (payload)")).await.unwrap();
    }
    if case.shape == Shape::SelfRef {
        // Indexed, as the referencing tables' columns are (online runs refuse one without).
        db.exec(&format!("CREATE INDEX {t}_up ON {t} (up)")).await.unwrap();
    }
    for (i, (cascade, _)) in case.children.iter().enumerate() {
        let (cols, refs) = if case.composite { ("tenant, parent", "tenant, id") } else { ("parent", "id") };
        let on = if *cascade { " ON DELETE CASCADE" } else { "" };
        db.exec(&format!(
            "CREATE TABLE {t}_c{i} (n integer NOT NULL PRIMARY KEY, tenant integer, parent {ty}, \
             FOREIGN KEY ({cols}) REFERENCES {t} ({refs}){on})"
        ))
        .await
        .unwrap();
        db.exec(&format!("CREATE INDEX {t}_c{i}_p ON {t}_c{i} (parent)")).await.unwrap();
    }
    let self_ref = case.shape == Shape::SelfRef;
    for chunk in rows.chunks(200) {
        let values: Vec<String> = chunk
            .iter()
            .map(|g| {
                let at = Timestamp::from_unix_ms(g.ms).to_string().replace('T', " ").replace('Z', "");
                let up = match g.seq {
                    s if self_ref && s >= 3 && s % 2 == 0 => format!(", {}", db.lit(case, rows[s - 3].id)),
                    _ if self_ref => ", NULL".into(),
                    _ => String::new(),
                };
                format!("({}, {}, {}, 'p{}', '{at}'{up})", g.tenant, db.lit(case, g.id), g.seq, g.seq)
            })
            .collect();
        let up = if self_ref { ", up" } else { "" };
        db.exec(&format!("INSERT INTO {t} (tenant, id, seq, payload, created_at{up}) VALUES {}", values.join(", ")))
            .await
            .unwrap();
    }
    for (i, (_, nulls)) in case.children.iter().enumerate() {
        let parent = if *nulls { "CASE WHEN seq % 5 = 0 THEN NULL ELSE id END" } else { "id" };
        db.exec(&format!("INSERT INTO {t}_c{i} (n, tenant, parent) SELECT seq, tenant, {parent} FROM {t}"))
            .await
            .unwrap();
    }
    match case.shape {
        Shape::View => db.exec(&format!("CREATE VIEW {t}_v AS SELECT id, payload FROM {t}")).await.unwrap(),
        Shape::Inherited(_) => db.exec(&format!("CREATE TABLE {t}_h () INHERITS ({t})")).await.unwrap(),
        Shape::Trigger(_) => {
            db.exec(&format!("CREATE TABLE {t}_log (seq integer NOT NULL)")).await.unwrap();
            let log = format!("INSERT INTO {t}_log (seq) VALUES (NEW.seq)");
            db.exec(&match db {
                Db::Pg(_) => format!(
                    "CREATE OR REPLACE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {log}; RETURN NEW; END $$; \
                     CREATE TRIGGER {t}_tr AFTER UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
                ),
                Db::My(_) => format!("CREATE TRIGGER {t}_tr AFTER UPDATE ON {t} FOR EACH ROW {log}"),
                Db::Lite(_, _) => format!("CREATE TRIGGER {t}_tr AFTER UPDATE ON {t} BEGIN {log}; END"),
            })
            .await
            .unwrap();
        }
        Shape::Chain => {
            db.exec(&format!("CREATE UNIQUE INDEX {t}_c0_u ON {t}_c0 (parent)")).await.unwrap();
            db.exec(&format!(
                "CREATE TABLE {t}_g (n integer NOT NULL PRIMARY KEY, gp {ty}, FOREIGN KEY (gp) REFERENCES {t}_c0 (parent))"
            ))
            .await
            .unwrap();
            db.exec(&format!("INSERT INTO {t}_g (n, gp) SELECT n, parent FROM {t}_c0 WHERE parent IS NOT NULL"))
                .await
                .unwrap();
        }
        Shape::Plain | Shape::SelfRef | Shape::Generated => {}
    }
}

/// Every row: the parent's `seq -> (tenant, id hex, payload, created_at)`, and per referencing
/// table `n -> (tenant, the seq of the parent it points at, or its own value where none)`.
#[derive(Clone, Debug, PartialEq)]
struct Snapshot {
    parents: BTreeMap<i64, (String, String, String)>,
    children: Vec<BTreeMap<i64, Option<String>>>,
}

async fn snapshot(db: &mut Db, case: &Case) -> Snapshot {
    let t = case.table();
    let (hex, seq, tenant) = (db.hex("id"), db.text("seq"), db.text("tenant"));
    let mut parents = BTreeMap::new();
    for r in db.rows(&format!("SELECT {seq}, {tenant}, {hex}, payload FROM {t}")).await {
        let s: i64 = r[0].clone().unwrap().parse().unwrap();
        let old = parents.insert(s, (r[1].clone().unwrap(), r[2].clone().unwrap(), r[3].clone().unwrap()));
        assert!(old.is_none(), "seed {} {:?}: row seq {s} twice", case.seed, case.backend);
    }
    let mut children = Vec::new();
    for i in 0..case.children.len() {
        let on = if case.composite { "p.tenant = c.tenant AND p.id = c.parent" } else { "p.id = c.parent" };
        let (n, ps, ph) = (db.text("c.n"), db.text("p.seq"), db.hex("c.parent"));
        let rows = db.rows(&format!("SELECT {n}, {ps}, {ph} FROM {t}_c{i} c LEFT JOIN {t} p ON {on}")).await;
        let mut m = BTreeMap::new();
        for r in rows {
            // The parent row it finds (by seq), or, where it finds none, its own value.
            let v = r[1].clone().map(|s| format!("seq {s}")).or_else(|| r[2].clone().map(|h| format!("orphan {h}")));
            m.insert(r[0].clone().unwrap().parse().unwrap(), v);
        }
        children.push(m);
    }
    if case.shape == Shape::SelfRef {
        // The row each row's `up` finds (by seq), as a referencing table's.
        let (n, ps, ph) = (db.text("c.seq"), db.text("p.seq"), db.hex("c.up"));
        let mut m = BTreeMap::new();
        for r in db.rows(&format!("SELECT {n}, {ps}, {ph} FROM {t} c LEFT JOIN {t} p ON p.id = c.up")).await {
            let v = r[1].clone().map(|s| format!("seq {s}")).or_else(|| r[2].clone().map(|h| format!("orphan {h}")));
            m.insert(r[0].clone().unwrap().parse().unwrap(), v);
        }
        children.push(m);
    }
    Snapshot { parents, children }
}

/// What a key may become: itself, or its conversion to v7 as its layout says (a v6 key stays,
/// where doctor's default target is v7 it converts too), or with `--rekey-from` the key of
/// its row's time.
fn allowed(g: &Gen, rekey: bool) -> Vec<Comb> {
    let mut out = vec![g.id];
    if rekey {
        if g.layout.is_none() {
            out.push(rekey_spec(g.id, g.ms * 1000));
        }
    } else if let Some(l) = g.layout
        && let Ok(m) = KeyMigration::new(l, Layout::V7)
        && let Ok(k) = m.convert(&g.id)
    {
        out.push(k);
    }
    out
}

/// The docs' re-key: the millisecond, version 7, the microseconds in 4,096 steps, the variant,
/// the old key's last 62 bits.
fn rekey_spec(old: Comb, us: i64) -> Comb {
    let ms = u64::try_from(us / 1000).unwrap();
    let fraction = u16::try_from((us % 1000) * 4096 / 1000).unwrap();
    let mut b = old.into_bytes();
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    b[6] = 0x70 | u8::try_from(fraction >> 8).unwrap();
    b[7] = u8::try_from(fraction & 0xff).unwrap();
    b[8] = 0x80 | (b[8] & 0x3f);
    Comb::from_bytes(b)
}

/// The invariants of a finished run: `before` and `after` hold the same rows, each key
/// allowed, one id one new key, children on the same rows, converted keys before the next id.
fn check_done(
    case: &Case,
    gens: &[Gen],
    before: &Snapshot,
    after: &Snapshot,
    written: &Written,
    complete: bool,
) -> Result<(), String> {
    let rekey = case.mode == Mode::Rekey;
    let mut new_of: BTreeMap<Comb, Comb> = BTreeMap::new();
    let next = Comb::new();
    for g in gens {
        let i = i64::try_from(g.seq).unwrap();
        if written.deleted.contains(&i) {
            if after.parents.contains_key(&i) {
                return Err(format!("row seq {i}, deleted by the application, is there"));
            }
            continue;
        }
        let (tenant, hex, payload) = after.parents.get(&i).ok_or(format!("row seq {i} lost"))?;
        let (b_tenant, _, b_payload) = &before.parents[&i];
        let b_payload = written.updated.get(&i).unwrap_or(b_payload);
        if tenant != b_tenant || payload != b_payload {
            return Err(format!("row seq {i}: other columns changed ({tenant}, {payload})"));
        }
        let now: Comb = hex.parse().map_err(|e| format!("row seq {i}: key {hex}: {e}"))?;
        // Keys whose version nibble names their layout (v1, v6) convert for certain, and a
        // re-key re-keys every v4 key; other layouts convert where the audit is sure of them.
        let certain = if rekey { g.layout.is_none() } else { matches!(g.layout, Some(Layout::V1 | Layout::V6)) };
        if complete && certain && now == g.id {
            return Err(format!("row seq {i}: key {} ({:?}) was left as it was", g.id, g.layout));
        }
        if !allowed(g, rekey).contains(&now) {
            return Err(format!(
                "row seq {i}: key {} ({:?}) became {now}, allowed {:?}",
                g.id,
                g.layout,
                allowed(g, rekey)
            ));
        }
        if !rekey
            && let Some(prev) = new_of.insert(g.id, now)
            && prev != now
        {
            return Err(format!("id {} became {prev} in one row and {now} in another", g.id));
        }
        if now != g.id && now.as_bytes() >= next.as_bytes() {
            return Err(format!("converted key {now} of row seq {i} sorts after the next id {next}"));
        }
    }
    let extra: Vec<&i64> =
        after.parents.keys().filter(|s| !before.parents.contains_key(s) && !written.inserted.contains_key(s)).collect();
    if !extra.is_empty() {
        return Err(format!("rows that were not there: {extra:?}"));
    }
    for (i, (b, a)) in before.children.iter().zip(&after.children).enumerate() {
        for (n, was) in b {
            if written.deleted.contains(n) {
                continue;
            }
            let is = a.get(n).ok_or(format!("child {i} row {n} lost"))?;
            if was != is {
                return Err(format!("child {i} row {n} pointed at {was:?}, now {is:?}"));
            }
        }
    }
    Ok(())
}

/// What the application committed during a run.
#[derive(Default)]
struct Written {
    /// Rows it inserted (a child each, where there are referencing tables), by seq.
    inserted: BTreeMap<i64, Comb>,
    /// Rows whose payload it set last to this.
    updated: BTreeMap<i64, String>,
    /// Rows it deleted with their children.
    deleted: std::collections::BTreeSet<i64>,
    /// Rows it looked up by their old and new key and found under neither.
    missed: Vec<String>,
}

/// An application writing until `stop`: inserts of parents with v7 keys and a child each,
/// updates of a row's other column, deletes of a row and its children (one transaction each,
/// tenant 1's rows of the seed), and lookups of a row by its key as it was and as converted
/// (a client holding an old id asks for both), which must find it.
async fn writer(case: Case, gens: Vec<Gen>, stop: Arc<AtomicBool>) -> Written {
    let mut db = Db::open(case.backend, "writer").await;
    let t = case.table();
    let mut w = Written::default();
    let mut r = StdRng::seed_from_u64(case.seed ^ 0x77);
    let mut seq = 1_000_000i64;
    let begin = if case.backend == Backend::My { "START TRANSACTION" } else { "BEGIN" };
    while !stop.load(Ordering::Relaxed) {
        seq += 1;
        let o = i64::try_from(r.random_range(0..case.rows)).unwrap();
        let op = r.random_range(0..12);
        let id = Comb::new();
        if op >= 10 {
            let g = &gens[usize::try_from(o).unwrap()];
            // By the key's hex digits, whatever the column holds (a text key's column changes
            // type under a copy and swap, and the application's text would no longer match).
            let keys: Vec<String> = allowed(g, false).into_iter().map(|k| format!("'{}'", k.simple())).collect();
            let found = db
                .try_rows(&format!(
                    "SELECT {} FROM {t} WHERE tenant = 1 AND {} IN ({})",
                    db.text("seq"),
                    db.hex("id"),
                    keys.join(", ")
                ))
                .await;
            // A failed statement (the table swapped under it) is no answer; no row is one.
            if let Ok(found) = found
                && found.is_empty()
                && !w.deleted.contains(&o)
            {
                w.missed.push(format!("row seq {o}, key {} or {:?}", g.id, allowed(g, false)));
            }
            tokio::task::yield_now().await;
            continue;
        }
        let sql = if op < 7 {
            let at = Timestamp::now().to_string().replace('T', " ").replace('Z', "");
            let mut sql = format!(
                "INSERT INTO {t} (tenant, id, seq, payload, created_at) VALUES (1, {}, {seq}, 'w{seq}', '{at}')",
                db.lit(&case, id)
            );
            if !case.children.is_empty() {
                sql.push_str(&format!(
                    "; INSERT INTO {t}_c0 (n, tenant, parent) VALUES ({seq}, 1, {})",
                    db.lit(&case, id)
                ));
            }
            sql
        } else if op < 9 {
            format!("UPDATE {t} SET payload = 'u{seq}' WHERE seq = {o}")
        } else {
            let mut sql: Vec<String> =
                (0..case.children.len()).map(|i| format!("DELETE FROM {t}_c{i} WHERE n = {o}")).collect();
            sql.push(format!("DELETE FROM {t} WHERE seq = {o}"));
            sql.join("; ")
        };
        match db.exec(&format!("{begin}; {sql}; COMMIT")).await {
            Ok(()) if op < 7 => drop(w.inserted.insert(seq, id)),
            Ok(()) if op < 9 => drop(w.updated.insert(o, format!("u{seq}"))),
            Ok(()) => drop(w.deleted.insert(o)),
            Err(_) => drop(db.exec("ROLLBACK").await),
        }
        tokio::task::yield_now().await;
    }
    w
}

/// Runs one case; `Err` says what broke.
async fn run_case(case: &Case) -> Result<(), String> {
    // Made once: a v7 key's random bits differ each time they are made.
    let gens = generate(case);
    if run(case, &gens).await? {
        finished(case, &gens).await?;
    }
    Ok(())
}

/// Runs one case's commands and checks the rows; `Ok(true)` where the last run finished.
async fn run(case: &Case, gens: &[Gen]) -> Result<bool, String> {
    let mut db = Db::open(case.backend, &case.table()).await;
    let url = db.url();
    let t = case.table();
    let gens = gens.to_vec();
    seed(&mut db, case, &gens).await;
    let before = snapshot(&mut db, case).await;
    let mut args: Vec<&str> = vec!["doctor", "--url", &url, "--table", &t];
    let mut env: Vec<(&str, String)> = Vec::new();
    match case.mode {
        Mode::Audit => {}
        Mode::Offline => args.push("--apply"),
        Mode::Stopped(k) => {
            args.push("--apply");
            env.push(("COMBKEY_DOCTOR_FAIL_AFTER_STEP", k.to_string()));
        }
        Mode::OnlineInPlace => args.extend(["--apply", "--online", "--method", "in-place", "--batch-size", "25"]),
        // The harness's application counts only the writes that committed (a text key written
        // into a column the swap made BINARY(16) fails, and is not counted), so its cases take
        // the type change at the swap that a ready application would.
        Mode::CopySwap => {
            args.extend(["--apply", "--online", "--method", "copy-swap", "--drop-old", "--app-ready-for-new-type"])
        }
        Mode::Rekey => args.extend(["--apply", "--rekey-from", "created_at"]),
        Mode::Killed(_, How::Offline) => args.push("--apply"),
        Mode::Killed(_, How::InPlace) => {
            args.extend(["--apply", "--online", "--method", "in-place", "--batch-size", "25"])
        }
        Mode::Killed(_, How::CopySwap) => {
            args.extend(["--apply", "--online", "--method", "copy-swap", "--drop-old", "--app-ready-for-new-type"])
        }
    }
    if case.set_default {
        args.push("--set-default");
    }
    let key_map = case.key_map_name();
    if case.key_map {
        args.extend(["--key-map", &key_map]);
    }
    if case.shape == Shape::Trigger(true) {
        args.extend(["--triggers", "fire"]);
    }
    if let Shape::Inherited(Some(choice)) = case.shape {
        args.extend(["--inherited", choice]);
    }
    if case.fault == Some(Fault::Corrupt) {
        env.push((
            "COMBKEY_DOCTOR_SQL_BEFORE_VERIFY",
            "UPDATE {copy} SET payload = 'corrupted' WHERE seq = (SELECT m FROM (SELECT MIN(seq) AS m FROM {copy}) x)"
                .to_string(),
        ));
    }
    let online = case.online();
    let stop = Arc::new(AtomicBool::new(false));
    let w = online.then(|| tokio::spawn(writer(case.clone(), gens.clone(), Arc::clone(&stop))));
    let ddl = match (case.fault, case.fault.and_then(|f| f.ddl(case))) {
        (Some(Fault::Ddl(_, ms)), Some((sql, _))) => {
            let backend = case.backend;
            Some(tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                let mut db = Db::open(backend, "ddl").await;
                db.exec(&sql).await
            }))
        }
        _ => None,
    };
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env_ref.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let kill_after = match case.mode {
            Mode::Killed(ms, _) => Some(std::time::Duration::from_millis(ms)),
            _ => None,
        };
        let kill_at_step = case.kill_at_step;
        tokio::task::spawn_blocking(move || {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            match (kill_after, kill_at_step) {
                (Some(_), Some((step, ms))) => killed_at_step(&a, step, std::time::Duration::from_millis(ms)),
                (Some(after), None) => killed(&a, after),
                _ => combkey(&a, &e),
            }
        })
        .await
        .unwrap()
    };
    stop.store(true, Ordering::Relaxed);
    let written = match w {
        Some(w) => w.await.unwrap(),
        None => Written::default(),
    };
    // Someone else's DDL that was made is there after the run (one the run's locks made give up,
    // as a DBA's statement may, is not).
    if let Some(ddl) = ddl
        && ddl.await.unwrap().is_ok()
    {
        let (_, there) = case.fault.and_then(|f| f.ddl(case)).unwrap_or_default();
        let n = db.rows(&there).await;
        if n.first().and_then(|r| r[0].clone()).as_deref() != Some("1") {
            return Err(format!("someone else's DDL is gone after the run ({there})"));
        }
    }
    if let Some(miss) = written.missed.first() {
        return Err(format!("the application looked a row up by its old and new key and found none: {miss}"));
    }
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let after = snapshot(&mut db, case).await;
    // Every row the application committed is there.
    for (s, id) in &written.inserted {
        match after.parents.get(s) {
            None => return Err(format!("the application's row seq {s} is gone\n{said}")),
            Some((_, hex, _)) if *hex != id.simple().to_string() => {
                return Err(format!("the application's row seq {s} has key {hex}, not its {id}\n{said}"));
            }
            Some(_) => {}
        }
    }
    // Every row that was there before as it was (rows the application wrote aside).
    let unchanged =
        |a: &Snapshot| {
            let mine = |k: &i64| written.deleted.contains(k) || written.updated.contains_key(k);
            before.parents.iter().filter(|(k, _)| !mine(k)).all(|(k, v)| a.parents.get(k) == Some(v))
                && before.children.iter().zip(&a.children).all(|(b, a)| {
                    b.iter().filter(|(n, _)| !written.deleted.contains(n)).all(|(n, v)| a.get(n) == Some(v))
                })
        };
    if let Mode::Killed(..) = case.mode {
        // Killed (or done before the kill): done, unchanged, or (an online or journaled run)
        // consistent half way; then the same command again finishes it.
        if !out.status.success() && !unchanged(&after) {
            let whole = !online && case.backend != Backend::My;
            check_done(case, &gens, &before, &after, &written, whole)
                .map_err(|e| format!("killed: neither unchanged nor done: {e}\n{said}"))?;
        }
        if out.status.success() {
            return check_done(case, &gens, &before, &after, &written, true)
                .map(|()| true)
                .map_err(|e| format!("{e}\n{said}"));
        }
        sessions_gone(&mut db).await;
        let again = combkey(&args, &[]);
        let said = format!("{}{}", String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&again.stderr));
        let after = snapshot(&mut db, case).await;
        if again.status.success() {
            return check_done(case, &gens, &before, &after, &written, true)
                .map(|()| true)
                .map_err(|e| format!("run again after the kill: {e}\n{said}"));
        }
        let refusals = case.shape.refusals(case);
        if refusals.iter().any(|r| said.contains(r)) || (case.composite && said.contains("(tenant, id)")) {
            return Ok(false);
        }
        return Err(format!("run again after the kill failed\n{said}"));
    }
    let mut finished = false;
    match (case.mode, out.status.success()) {
        (Mode::Audit, ok) => {
            if !ok {
                return Err(format!("the audit failed\n{said}"));
            }
            if after != before {
                return Err(format!("the audit changed the table\n{said}"));
            }
        }
        (Mode::Stopped(_), false) => {
            // Done or unchanged now; the same command again finishes it.
            if !unchanged(&after) {
                // One transaction (PostgreSQL, SQLite) is done whole; a journaled MariaDB run
                // may be half way, consistently.
                check_done(case, &gens, &before, &after, &written, case.backend != Backend::My)
                    .map_err(|e| format!("stopped: neither unchanged nor done: {e}\n{said}"))?;
            }
            let again = combkey(&args, &[]);
            let said = format!("{}{}", String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&again.stderr));
            let after = snapshot(&mut db, case).await;
            if again.status.success() {
                check_done(case, &gens, &before, &after, &written, true)
                    .map_err(|e| format!("run again: {e}\n{said}"))?;
                finished = true;
            } else if !unchanged(&after) {
                return Err(format!("run again failed and changed the table\n{said}"));
            }
        }
        (_, true) => {
            check_done(case, &gens, &before, &after, &written, true).map_err(|e| format!("{e}\n{said}"))?;
            finished = true;
        }
        (_, false) => {
            if said.trim().is_empty() {
                return Err("a failed run said nothing".into());
            }
            // Only what is listed is to be refused, saying so: a re-key of a key unique with
            // another column, and the shapes' own refusals.
            let mut refusals: Vec<&str> = case.shape.refusals(case).to_vec();
            refusals.extend(match case.fault {
                // The check before the swap.
                Some(Fault::Corrupt) => &["is not the table", "differ from their copies"][..],
                // Someone else's DDL: the table changed, or (MariaDB) its metadata lock held the
                // run's own DDL past its lock timeout, or its index build read mid-change: the run
                // stopped with nothing changed, saying why.
                Some(Fault::Ddl(..)) => &[
                    "changed by another session",
                    "changed since the run began",
                    "Lock wait timeout exceeded",
                    "metadata lock",
                    "referencing columns have no index",
                ][..],
                None => &[][..],
            });
            let refused = refusals.iter().any(|r| said.contains(r));
            if (case.mode != Mode::Rekey || !case.composite) && !refused {
                return Err(format!("a case doctor supports failed (refusals allowed: {refusals:?})\n{said}"));
            }
            if !unchanged(&after) {
                // Only an online run (whose batches commit) or a journaled one may stop half
                // way, and then consistently, and the same command again finishes it.
                check_done(case, &gens, &before, &after, &written, false).map_err(|e| {
                    format!("a failed run left the table neither unchanged nor consistent: {e}\n{said}")
                })?;
                if !online && !matches!(case.backend, Backend::My) {
                    return Err(format!("a failed offline run changed the table\n{said}"));
                }
                let again = combkey(&args, &[]);
                let said =
                    format!("{}{}", String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&again.stderr));
                let after = snapshot(&mut db, case).await;
                if !again.status.success() {
                    return Err(format!("a run after a failed one failed too\n{said}"));
                }
                check_done(case, &gens, &before, &after, &written, true)
                    .map_err(|e| format!("run again: {e}\n{said}"))?;
                finished = true;
            }
            // A refusal, or a failure that says why: the run changed nothing. A
            // composite key refuses `--rekey-from`, naming its columns.
            if case.mode == Mode::Rekey && case.composite && !refused && !said.contains("(tenant, id)") {
                return Err(format!("a composite key's refusal does not name its columns\n{said}"));
            }
        }
    }
    if case.mode == Mode::Rekey && case.composite && out.status.success() {
        return Err(format!("--rekey-from on a key unique only with tenant ran\n{said}"));
    }
    Ok(finished)
}

/// After a run that finished: the key map holds each converted key's old and new id (and
/// nothing else), and with `--set-default` a row written without a key gets a v7 key from the
/// database that sorts after every converted key.
async fn finished(case: &Case, gens: &[Gen]) -> Result<(), String> {
    let mut db = Db::open(case.backend, &case.table()).await;
    let t = case.table();
    let after = snapshot(&mut db, case).await;
    let by_seq: BTreeMap<i64, &Gen> = gens.iter().map(|g| (i64::try_from(g.seq).unwrap(), g)).collect();
    // Each row's key now, where it changed.
    let mut converted: BTreeMap<Comb, Comb> = BTreeMap::new();
    for (seq, (_, hex, _)) in &after.parents {
        let Some(g) = by_seq.get(seq) else { continue };
        let now: Comb = hex.parse().map_err(|e| format!("row seq {seq}: {e}"))?;
        if now != g.id {
            converted.insert(g.id, now);
        }
    }
    let map = case.key_map_name();
    let rows = db.try_rows(&format!("SELECT {}, {} FROM {map}", db.hex("old_key"), db.hex("new_key"))).await;
    match rows {
        Err(e) if case.key_map && !converted.is_empty() => {
            return Err(format!("the key map {map} asked for is not there: {e}"));
        }
        Err(_) => {}
        Ok(rows) => {
            let mut held: BTreeMap<Comb, Comb> = BTreeMap::new();
            let ids: BTreeMap<Comb, &Gen> = gens.iter().map(|g| (g.id, g)).collect();
            for r in rows {
                let id = |i: usize| r[i].as_deref().unwrap_or_default().parse::<Comb>();
                let (Ok(old), Ok(new)) = (id(0), id(1)) else { return Err(format!("a key map row of no ids: {r:?}")) };
                let g = ids.get(&old).ok_or(format!("the key map holds {old}, a key the table never had"))?;
                if new == old || !allowed(g, case.mode == Mode::Rekey).contains(&new) {
                    return Err(format!("the key map maps {old} ({:?}) to {new}", g.layout));
                }
                if held.insert(old, new).is_some_and(|was| was != new) {
                    return Err(format!("the key map maps {old} twice"));
                }
            }
            for (old, new) in &converted {
                if held.get(old) != Some(new) {
                    return Err(format!("the key map lacks {old} -> {new} (holds {:?})", held.get(old)));
                }
            }
        }
    }
    if case.set_default {
        let at = Timestamp::now().to_string().replace('T', " ").replace('Z', "");
        let seq = 2_000_000_000i64;
        db.exec(&format!("INSERT INTO {t} (tenant, seq, payload, created_at) VALUES (1, {seq}, 'default', '{at}')"))
            .await
            .map_err(|e| format!("--set-default: a row written without a key: {e}"))?;
        let hex = db.rows(&format!("SELECT {} FROM {t} WHERE seq = {seq}", db.hex("id"))).await;
        db.exec(&format!("DELETE FROM {t} WHERE seq = {seq}")).await?;
        let made: Comb =
            hex[0][0].as_deref().unwrap_or_default().parse().map_err(|e| format!("the default's key: {e}"))?;
        if made.version() != 7 {
            return Err(format!("--set-default: the database made {made}, not a v7 key"));
        }
        if let Some(last) = converted.values().max_by_key(|k| *k.as_bytes())
            && made.as_bytes() <= last.as_bytes()
        {
            return Err(format!("--set-default: the database's next key {made} sorts before the converted {last}"));
        }
        // The default calls combkey's functions, which other tests of the same database drop
        // and install again: the case's table lets go of them.
        if case.backend == Backend::Pg {
            db.exec(&format!("ALTER TABLE {t} ALTER COLUMN id DROP DEFAULT")).await?;
        }
    }
    Ok(())
}

/// The seeds to run: `COMBKEY_TORTURE_SEEDS` (`a..b` or `1,5,9`), else [`SEEDS`].
fn seeds() -> Vec<u64> {
    match std::env::var("COMBKEY_TORTURE_SEEDS") {
        Ok(v) if v.contains("..") => {
            let (a, b) = v.split_once("..").unwrap();
            (a.trim().parse().unwrap()..b.trim().parse().unwrap()).collect()
        }
        Ok(v) => v.split(',').map(|s| s.trim().parse().unwrap()).collect(),
        Err(_) => SEEDS.to_vec(),
    }
}

/// Runs every seed on `backend`; a failing one is shrunk (its rows halved while it still
/// fails) and every failure reported together.
async fn torture(backend: Backend) {
    let mut failures = Vec::new();
    for seed in seeds() {
        let case = Case::new(seed, backend, None);
        let started = std::time::Instant::now();
        let result = run_case(&case).await;
        eprintln!(
            "torture {case:?}: {} in {:.1} s",
            if result.is_ok() { "held" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        );
        let Err(first) = result else { continue };
        let mut smallest = (case.clone(), first);
        let mut rows = case.rows / 2;
        while rows >= 4 {
            let smaller = Case { rows, ..case.clone() };
            match run_case(&smaller).await {
                Err(e) => smallest = (smaller, e),
                Ok(()) => break,
            }
            rows /= 2;
        }
        failures.push(format!(
            "seed {seed} ({backend:?}), smallest failing case with COMBKEY_TORTURE_SEEDS={seed} COMBKEY_TORTURE_ROWS={}: {:?}\n{}",
            smallest.0.rows, smallest.0, smallest.1
        ));
    }
    assert!(failures.is_empty(), "{} of {} seeds failed:\n\n{}", failures.len(), seeds().len(), failures.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    torture(Backend::Pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb() {
    torture(Backend::My).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    torture(Backend::Lite).await;
}
