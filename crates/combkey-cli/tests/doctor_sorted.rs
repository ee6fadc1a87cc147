//! Converted keys sort before the ids the application makes next, on PostgreSQL, MariaDB
//! (`BINARY(16)`, and `CHAR(36)` keys from its own `UUID()`) and SQLite: tables keyed by v1
//! (PostgreSQL's `uuid_generate_v1()`, MariaDB's `UUID()`), `NEWSEQUENTIALID()`, RT.Comb and
//! each .NET generator's ids are converted by `combkey doctor --apply` as a DBA runs it; then
//! ids from `combkey new` are inserted. Every old row must come before every new one in
//! `ORDER BY id`, in creation order, each findable by its time through the key
//! (`Comb::min_for` / `max_for`, what `Comb::range` builds on), and an old id that the new key
//! cannot give back must resolve through the key map the run kept. Killed after every step, a
//! run ends done or unchanged; the audit of the result, of a mixed table and of a column whose
//! default makes other keys, says what is true.
//!
//! Each test has tables of its own (named after it).

use std::process::{Command, Output};
use std::sync::Arc;

use combkey::layouts::{DOTNET_TICKS_AT_UNIX_EPOCH, DotNetFields, Layout, RtCombLayout, V1Generator};
use combkey::{Comb, FixedClock, RandomSource, SeededRandom, Timestamp};
use serde_json::Value;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, Row, SqliteConnection};

fn combkey(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_combkey"));
    cmd.args(args).stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run combkey")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The exit code, and standard output then standard error.
fn exit_code(args: &[&str]) -> (Option<i32>, String) {
    let out = combkey(args, &[]);
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// `combkey doctor --json` on the table, with `extra` arguments: the report.
fn report(url: &str, table: &str, extra: &[&str]) -> Value {
    let mut args = vec!["doctor", "--url", url, "--table", table, "--json"];
    args.extend_from_slice(extra);
    let text = ok(&combkey(&args, &[]));
    serde_json::from_str(text.lines().last().unwrap()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn layouts(r: &Value) -> Vec<(String, u64)> {
    r["layouts"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect()
}

/// `n` times one second apart from 2025-03-01, each with a few 100-ns ticks of its own.
fn times(n: usize) -> Vec<(Timestamp, i64)> {
    let t0: Timestamp = "2025-03-01T08:00:00Z".parse().unwrap();
    (0..n)
        .map(|i| {
            let i = i64::try_from(i).unwrap();
            (t0.saturating_add_ms(1000 * i), (i * 7919) % 10_000)
        })
        .collect()
}

fn v4(r: &SeededRandom) -> Comb {
    let mut b = [0u8; 16];
    r.fill_bytes(&mut b);
    b[6] = 0x40 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    Comb::from_bytes(b)
}

/// `n` keys of `layout`, in creation order (one second apart), as their own generators
/// write them (the .NET ones through `DotNetFields`, checked byte for byte against the real
/// libraries in the core's `tests/peers.rs`).
fn keys(layout: Layout, n: usize, seed: u64) -> Vec<Comb> {
    let r = SeededRandom::new(seed);
    let dotnet = |t: Timestamp, sub: i64| t.unix_ms() * 10_000 + sub + DOTNET_TICKS_AT_UNIX_EPOCH;
    match layout {
        Layout::V1 | Layout::NewSequentialId | Layout::MySqlSwap | Layout::V6 => {
            let clock = Arc::new(FixedClock::new(times(1)[0].0));
            let g = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(seed));
            (0..n)
                .map(|_| {
                    clock.advance(std::time::Duration::from_secs(1));
                    Layout::convert(&g.generate(), Layout::V1, layout).unwrap()
                })
                .collect()
        }
        _ => times(n)
            .into_iter()
            .map(|(t, sub)| match layout {
                Layout::RtCombSql => RtCombLayout::Sql.create(t, v4(&r)).unwrap(),
                Layout::RtCombLegacy => RtCombLayout::Legacy.create(t, v4(&r)).unwrap(),
                Layout::EfCore => DotNetFields::efcore(dotnet(t, sub), v4(&r)).to_id(layout).unwrap(),
                Layout::NewId | Layout::NewIdSequential => {
                    DotNetFields::newid(dotnet(t, sub), [0x02, 0x42, 0xac, 0x11, 0x00, 0x02], 0).to_id(layout).unwrap()
                }
                Layout::UuidNextSqlServer => {
                    let q = u16::try_from(r.next_u64() & 0x1fff).unwrap();
                    DotNetFields::uuidnext_sqlserver(t, q, v4(&r)).unwrap().to_id(layout).unwrap()
                }
                Layout::MedoSqlServer => {
                    let k = u32::try_from(r.next_u64() & 0x1ff_ffff).unwrap();
                    DotNetFields::medo_sqlserver(t, k, r.next_u64()).unwrap().to_id(layout).unwrap()
                }
                other => panic!("no keys for {other}"),
            })
            .collect(),
    }
}

/// A database of the test and how its SQL writes things.
enum Db {
    Pg(PgConnection),
    My(MySqlConnection),
    Lite(SqliteConnection, std::path::PathBuf),
}

impl Db {
    async fn pg() -> Db {
        Db::Pg(PgConnection::connect(&combkey_testutil::pg_url()).await.expect("PostgreSQL (scripts/servers.sh)"))
    }

    async fn mysql() -> Db {
        Db::My(MySqlConnection::connect(&combkey_testutil::mysql_url()).await.expect("MariaDB (scripts/servers.sh)"))
    }

    async fn sqlite(name: &str) -> Db {
        let dir = std::env::temp_dir().join(format!("combkey-doctor-sorted-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.join("db.sqlite").display());
        Db::Lite(SqliteConnection::connect(&url).await.unwrap(), dir)
    }

    fn url(&self) -> String {
        match self {
            Db::Pg(_) => combkey_testutil::pg_url(),
            Db::My(_) => combkey_testutil::mysql_url(),
            Db::Lite(_, dir) => format!("sqlite://{}", dir.join("db.sqlite").display()),
        }
    }

    async fn exec(&mut self, sql: &str) {
        let q = sqlx::raw_sql(AssertSqlSafe(sql.to_string()));
        let r = match self {
            Db::Pg(c) => q.execute(c).await.map(drop),
            Db::My(c) => q.execute(c).await.map(drop),
            Db::Lite(c, _) => q.execute(c).await.map(drop),
        };
        r.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The first column of every row, as text (the SQL selects text).
    async fn texts(&mut self, sql: &str) -> Vec<String> {
        let q = sqlx::raw_sql(AssertSqlSafe(sql.to_string()));
        let rows: Result<Vec<String>, sqlx::Error> = match self {
            Db::Pg(c) => q.fetch_all(c).await.map(|rs| rs.iter().map(|r| r.get::<String, _>(0)).collect()),
            Db::My(c) => q.fetch_all(c).await.map(|rs| rs.iter().map(|r| r.get::<String, _>(0)).collect()),
            Db::Lite(c, _) => q.fetch_all(c).await.map(|rs| rs.iter().map(|r| r.get::<String, _>(0)).collect()),
        };
        rows.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The key column type of a fresh table: the stored form, or MariaDB's `CHAR(36)`.
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

    /// An id as the stored form's literal.
    fn literal(&self, id: Comb) -> String {
        match self {
            Db::Pg(_) => format!("'{id}'::uuid"),
            Db::My(_) => format!("0x{:X}", id),
            Db::Lite(_, _) => format!("X'{:X}'", id),
        }
    }

    /// An id as a text key's literal.
    fn text_literal(id: Comb) -> String {
        format!("'{id}'")
    }

    /// The key column as 32 lowercase hex digits (after the conversion: the stored form).
    fn hex(&self, column: &str) -> String {
        match self {
            Db::Pg(_) => format!("encode(uuid_send({column}), 'hex')"),
            Db::My(_) => format!("LOWER(HEX({column}))"),
            Db::Lite(_, _) => format!("lower(hex({column}))"),
        }
    }

    /// An integer column as text.
    fn int_text(&self, column: &str) -> String {
        match self {
            Db::Pg(_) => format!("{column}::text"),
            Db::My(_) => format!("CAST({column} AS CHAR)"),
            Db::Lite(_, _) => format!("CAST({column} AS TEXT)"),
        }
    }

    /// A parent keyed by `ids` (in creation order: `seq` counts them) inserted in another
    /// order, and a child per second parent.
    async fn seed(&mut self, table: &str, ids: &[Comb], text: bool) {
        let ty = self.key_type(text);
        // The old tables an earlier copy-and-swap run of these tables kept, first.
        self.exec(&format!("DROP TABLE IF EXISTS _{table}_items_old")).await;
        self.exec(&format!("DROP TABLE IF EXISTS _{table}_old")).await;
        self.exec(&format!("DROP TABLE IF EXISTS {table}_items")).await;
        self.exec(&format!("DROP TABLE IF EXISTS {table}")).await;
        self.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{table}")).await;
        self.exec(&format!("CREATE TABLE {table} (id {ty} NOT NULL PRIMARY KEY, seq integer NOT NULL)")).await;
        self.exec(&format!(
            "CREATE TABLE {table}_items (n integer NOT NULL PRIMARY KEY, parent {ty} NOT NULL REFERENCES {table} (id))"
        ))
        .await;
        self.exec(&format!("CREATE INDEX {table}_items_parent ON {table}_items (parent)")).await;
        // Inserted out of order: every 7th key first, and so on.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|i| (i % 7, *i));
        let values: Vec<String> = order
            .iter()
            .map(|&i| {
                let key = if text { Db::text_literal(ids[i]) } else { self.literal(ids[i]) };
                format!("({key}, {i})")
            })
            .collect();
        self.exec(&format!("INSERT INTO {table} (id, seq) VALUES {}", values.join(", "))).await;
        self.exec(&format!("INSERT INTO {table}_items (n, parent) SELECT seq, id FROM {table} WHERE seq % 2 = 0"))
            .await;
    }

    /// [`seed`](Self::seed), then a `created_at` column of type `ty`: row `seq` made at
    /// [`REKEY_T0_US`] plus `seq` times [`rekey_step_us`](Self::rekey_step_us).
    async fn seed_timed(&mut self, table: &str, ids: &[Comb], ty: &str) {
        self.seed(table, ids, false).await;
        let step = self.rekey_step_us();
        let time = match self {
            Db::Pg(_) => format!("'2025-03-01 08:00:00+00'::timestamptz + seq * interval '{step} microseconds'"),
            Db::My(_) => format!("TIMESTAMP'2025-03-01 08:00:00' + INTERVAL seq * {step} MICROSECOND"),
            // SQLite's times have milliseconds: the seconds written out as exact decimals.
            Db::Lite(_, _) => format!(
                "strftime('%Y-%m-%d %H:%M:%f', '2025-03-01 08:00:00', '+' || (seq * {ms} / 1000) || '.' || \
                 printf('%03d', seq * {ms} % 1000) || ' seconds')",
                ms = step / 1000
            ),
        };
        self.exec(&format!("ALTER TABLE {table} ADD COLUMN created_at {ty}")).await;
        self.exec(&format!("UPDATE {table} SET created_at = {time}")).await;
    }

    /// The microseconds between two rows' `created_at` (SQLite's times hold milliseconds).
    fn rekey_step_us(&self) -> i64 {
        match self {
            Db::Lite(_, _) => 1_234_000,
            _ => 1_234_567,
        }
    }

    /// `seq` of every row in `ORDER BY id`.
    async fn order(&mut self, table: &str) -> Vec<i64> {
        let seq = self.int_text("seq");
        let rows = self.texts(&format!("SELECT {seq} FROM {table} ORDER BY id")).await;
        rows.iter().map(|s| s.parse().unwrap()).collect()
    }

    /// Children that still find their parent, and all children.
    async fn joined(&mut self, table: &str) -> (usize, usize) {
        let n = self.int_text("count(*)");
        let joined =
            self.texts(&format!("SELECT {n} FROM {table}_items i JOIN {table} p ON p.id = i.parent")).await[0].parse();
        let all = self.texts(&format!("SELECT {n} FROM {table}_items")).await[0].parse();
        (joined.unwrap(), all.unwrap())
    }

    /// The keys now, by `seq`.
    async fn keys_by_seq(&mut self, table: &str) -> Vec<Comb> {
        let hex = self.hex("id");
        self.texts(&format!("SELECT {hex} FROM {table} ORDER BY seq"))
            .await
            .iter()
            .map(|h| h.parse().unwrap())
            .collect()
    }

    /// Inserts `combkey new -n 3` ids (the stored forms) as rows `seq` `from`, `from + 1`, ...
    async fn insert_new(&mut self, table: &str, from: usize) {
        let out = ok(&combkey(&["new", "-n", "3"], &[]));
        for (i, line) in out.lines().enumerate() {
            let id: Comb = line.parse().unwrap();
            let lit = self.literal(id);
            self.exec(&format!("INSERT INTO {table} (id, seq) VALUES ({lit}, {})", from + i)).await;
        }
    }

    /// The `seq` of the rows whose key is between the smallest and the largest v7 id of
    /// millisecond `t` (what `Comb::range` reads "rows created at t" as).
    async fn at(&mut self, table: &str, t: Timestamp) -> Vec<i64> {
        let (lo, hi) = (self.literal(Comb::min_for(t).unwrap()), self.literal(Comb::max_for(t).unwrap()));
        let seq = self.int_text("seq");
        let rows = self.texts(&format!("SELECT {seq} FROM {table} WHERE id >= {lo} AND id <= {hi}")).await;
        rows.iter().map(|s| s.parse().unwrap()).collect()
    }
}

/// Converts `table` (keys of `layout`, `n` of them, `extra` doctor arguments), then checks
/// what the issue asks: every old row before the new ids, in creation order; each old row
/// found by its time through the key; the old ids resolving through the key map where the new
/// key cannot give them back; the audit then finds nothing to do.
async fn converted_keys_sort_before_new_ones(db: &mut Db, table: &str, layout: Layout, old: &[Comb], extra: &[&str]) {
    let url = db.url();
    let n = old.len();
    let before = report(&url, table, extra);
    assert_eq!(layouts(&before), [(layout.name().to_string(), n as u64)], "{layout}: {before}");
    let after_next = before["keys_after_next_id"].as_i64().unwrap();
    let recommendation = before["recommendation"].as_str().unwrap();
    assert!(recommendation.contains(&format!("{n} {layout} keys to v7")), "{recommendation}");
    assert!(recommendation.contains("new keys append at the index's right edge"), "{recommendation}");
    let mut args = vec!["--apply"];
    args.extend_from_slice(extra);
    let after = report(&url, table, &args);
    assert_eq!(layouts(&after), [("v7".to_string(), n as u64)], "{layout}: {after}");
    assert_eq!(after["time_order"].as_f64(), Some(1.0), "{after}");
    assert_eq!(after["keys_after_next_id"], 0, "{after}");
    assert!(after["recommendation"].as_str().unwrap().starts_with("Nothing to do"), "{after}");
    assert_eq!(db.joined(table).await, (n.div_ceil(2), n.div_ceil(2)), "{layout}: every child still joined");
    if after_next > 0 {
        // The v1 family's and NewId's old keys sat after the next id (their first bytes are
        // not a Unix millisecond): the count said so before.
        assert!(before["recommendation"].as_str().unwrap().contains("right edge"), "{before}");
    }

    let new = db.keys_by_seq(table).await;
    let migration = combkey::layouts::KeyMigration::new(layout, Layout::V7).unwrap();
    for (o, k) in old.iter().zip(&new) {
        assert_eq!(migration.convert(o).as_ref(), Ok(k), "{layout}: {o} became {k}");
        assert_eq!(Some(k.timestamp().unwrap()), layout.timestamp(o).unwrap(), "{layout}: the millisecond");
    }
    // The key map: every converted key's old and new value, where the new key cannot give
    // the old one back; an old id from a client is one lookup there.
    let map = format!("combkey_keymap_{table}");
    if migration.keeps_every_bit() {
        assert_eq!(after["key_map"], Value::Null);
    } else {
        let hex = db.hex("m.old_key");
        for (i, (o, k)) in old.iter().zip(&new).enumerate().step_by(37) {
            let found = db.texts(&format!("SELECT {hex} FROM {map} m WHERE m.new_key = {}", db.literal(*k))).await;
            assert_eq!(found, [format!("{:x}", o)], "{layout}: row {i}'s old key in the map");
            let newhex = db.hex("m.new_key");
            let resolved =
                db.texts(&format!("SELECT {newhex} FROM {map} m WHERE m.old_key = {}", db.literal(*o))).await;
            assert_eq!(resolved, [format!("{:x}", k)], "{layout}: old id {o} resolves");
        }
        let count = db.int_text("count(*)");
        assert_eq!(db.texts(&format!("SELECT {count} FROM {map}")).await, [n.to_string()]);
    }

    // Then the application writes: ids from combkey's generator sort after every old row, and
    // the old rows keep their creation order.
    db.insert_new(table, n).await;
    assert_eq!(db.order(table).await, (0..i64::try_from(n + 3).unwrap()).collect::<Vec<_>>(), "{layout}: ORDER BY id");
    // Each old row is found by its time through the key.
    for i in [0, n / 2, n - 1] {
        let t = layout.timestamp(&old[i]).unwrap().unwrap();
        let found = db.at(table, t).await;
        assert!(found.contains(&i64::try_from(i).unwrap()), "{layout}: row {i} at {t}: {found:?}");
    }
    let last = report(&url, table, &[]);
    assert_eq!(last["keys_after_next_id"], 0, "{last}");
    assert!(last["recommendation"].as_str().unwrap().starts_with("Nothing to do"), "{last}");
}

/// The layouts a table of generated keys is converted from, and the `--layout` a DBA gives
/// where the keys do not tell (none: the audit finds each by its structure).
const GENERATED: [(Layout, &[&str]); 9] = [
    (Layout::V1, &[]),
    (Layout::NewSequentialId, &[]),
    (Layout::RtCombSql, &[]),
    (Layout::RtCombLegacy, &[]),
    (Layout::EfCore, &[]),
    (Layout::NewId, &[]),
    (Layout::NewIdSequential, &[]),
    (Layout::UuidNextSqlServer, &[]),
    (Layout::MedoSqlServer, &[]),
];

/// Every layout of [`GENERATED`]; `assumed`: with `--layout NAME` where a DBA may name the
/// layout (its keys carry no version of their own), else found by the audit.
async fn every_layout(db: &mut Db, prefix: &str, assumed: bool) {
    for (i, (layout, extra)) in GENERATED.iter().enumerate() {
        let table = format!("{prefix}_{}", layout.name().replace('-', "_"));
        let old = keys(*layout, 300, 40 + i as u64);
        db.seed(&table, &old, false).await;
        let named = ["--layout", layout.name()];
        let extra = if assumed && combkey_doctor::ASSUMABLE.contains(layout) { &named[..] } else { extra };
        converted_keys_sort_before_new_ones(db, &table, *layout, &old, extra).await;
    }
}

/// `--apply` stopped (as a kill stops it) after each of its steps in turn: the table is as
/// it was (its keys, no key map row) or done (every key converted, the key map full); the
/// next run finishes it.
async fn killed_after_every_step(db: &mut Db, table: &str) {
    let url = db.url();
    let old = keys(Layout::V1, 120, 9);
    db.seed(table, &old, false).await;
    let sql = ok(&combkey(&["doctor", "--url", &url, "--table", table, "--migration-sql"], &[]));
    let steps = sql.lines().filter(|l| l.starts_with("-- step ")).count();
    assert!(sql.contains("combkey_keymap_"), "the plan keeps a key map: {sql}");
    assert!(steps >= 5, "{sql}");
    let map = format!("combkey_keymap_{table}");
    let count = db.int_text("count(*)");
    for k in 0..steps {
        db.seed(table, &old, false).await;
        db.exec(&format!("DROP TABLE IF EXISTS {map}")).await;
        let out = combkey(
            &["doctor", "--url", &url, "--table", table, "--apply"],
            &[("COMBKEY_DOCTOR_FAIL_AFTER_STEP", &k.to_string())],
        );
        assert!(!out.status.success(), "stopped after step {k}");
        let want: Vec<Comb> = old
            .iter()
            .map(|o| combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap().convert(o).unwrap())
            .collect();
        done_or_unchanged(db, table, &old, &want, k).await;
        // The next run finishes it.
        let after = report(&url, table, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 120)], "step {k}: {after}");
        assert_eq!(db.texts(&format!("SELECT {count} FROM {map}")).await, ["120"], "step {k}");
        assert_eq!(db.order(table).await, (0..120).collect::<Vec<_>>(), "step {k}");
    }
}

/// After a run stopped after step `k`: the keys are `old` and the key map empty (or absent), or
/// the keys are `want` and the key map holds every one; every child (half the rows) joined.
async fn done_or_unchanged(db: &mut Db, table: &str, old: &[Comb], want: &[Comb], k: usize) {
    let map = format!("combkey_keymap_{table}");
    let now = db.keys_by_seq(table).await;
    let mapped = if map_exists(db, &map).await {
        let count = db.int_text("count(*)");
        db.texts(&format!("SELECT {count} FROM {map}")).await[0].parse::<usize>().unwrap()
    } else {
        0
    };
    if now == old {
        assert_eq!(mapped, 0, "step {k}: unchanged keys, an empty key map");
    } else {
        assert_eq!(now, want, "step {k}: done, or unchanged");
        assert_eq!(mapped, old.len(), "step {k}: done, with the whole map");
    }
    let half = old.len().div_ceil(2);
    assert_eq!(db.joined(table).await, (half, half), "step {k}");
}

/// Whether a table of this name exists (in the test database).
async fn map_exists(db: &mut Db, map: &str) -> bool {
    let sql = match db {
        Db::Pg(_) => format!("SELECT (to_regclass('{map}') IS NOT NULL)::text"),
        Db::My(_) => format!(
            "SELECT CAST(COUNT(*) AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{map}'"
        ),
        Db::Lite(_, _) => format!("SELECT CAST(COUNT(*) AS TEXT) FROM sqlite_master WHERE name = '{map}'"),
    };
    matches!(db.texts(&sql).await[0].as_str(), "true" | "1")
}

/// Two v1 keys that differ only in the node's multicast and local bits, which the v7 form
/// drops: the run refuses before anything changes, naming both.
async fn keys_that_would_become_one_are_refused(db: &mut Db, table: &str) {
    let url = db.url();
    let mut old = keys(Layout::V1, 50, 21);
    let mut twin = old[10].into_bytes();
    twin[10] ^= 0x03;
    old.push(Comb::from_bytes(twin));
    db.seed(table, &old, false).await;
    let out = combkey(&["doctor", "--url", &url, "--table", table, "--apply"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("would become the same key")
            && err.contains(&old[10].to_string())
            && err.contains(&old[50].to_string()),
        "{err}"
    );
    assert_eq!(db.keys_by_seq(table).await, old, "nothing changed");
    let audit = report(&url, table, &[]);
    assert!(audit["refusal"].as_str().unwrap().contains("would become the same key"), "{audit}");
}

/// A v1 key and the v6 form of it (one time, clock sequence and node: both become one v7 key),
/// and a v1 key beside the v7 key its conversion makes (made by hand before): each method
/// refuses before it changes anything, naming both pairs. (The in-place method converted its
/// batches in key order and stopped half-way at the first pair, every run again.)
async fn keys_of_two_layouts_that_would_become_one_are_refused(db: &mut Db, table: &str, online: bool) {
    let url = db.url();
    let mut old = keys(Layout::V1, 60, 41);
    let v6 = Layout::convert(&old[5], Layout::V1, Layout::V6).unwrap();
    let v1_to_v7 = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
    let v7 = v1_to_v7.convert(&old[40]).unwrap();
    // The premise, from the core's conversion: both of each pair become one key.
    let to_v7 = combkey::layouts::KeyMigration::new(Layout::V6, Layout::V7).unwrap();
    assert_eq!(to_v7.convert(&v6).unwrap(), v1_to_v7.convert(&old[5]).unwrap());
    old.extend([v6, v7]);
    db.seed(table, &old, false).await;
    let mut runs: Vec<Vec<&str>> = vec![vec!["--apply"], vec!["--migration-sql"]];
    if online {
        runs.push(vec!["--apply", "--online", "--method", "in-place"]);
        runs.push(vec!["--apply", "--online", "--method", "copy-swap"]);
    }
    for how in runs {
        let mut args = vec!["doctor", "--url", &url, "--table", table];
        args.extend(&how);
        let out = combkey(&args, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{how:?}: {err}");
        assert!(err.contains("2 keys of") && err.contains("would become the same key as another"), "{how:?}: {err}");
        for k in [old[5], v6, old[40], v7] {
            assert!(err.contains(&k.to_string()), "{how:?}: {k} named: {err}");
        }
        assert!(err.contains("Nothing was changed"), "{how:?}: {err}");
        assert_eq!(db.keys_by_seq(table).await, old, "{how:?}: nothing changed");
        assert!(!map_exists(db, &format!("combkey_keymap_{table}")).await, "{how:?}: no key map made");
    }
    db.exec(&format!("DROP TABLE {table}_items")).await;
    db.exec(&format!("DROP TABLE {table}")).await;
}

/// An in-place run stopped after its first batch; the application then writes a v1 key that
/// differs from one not yet converted only in the bits v7 drops. The run taken up again (its
/// plan from the journal, not a new audit) stops at that key's batch naming the pair and what
/// to do (it said only "run the same command again", which failed alike every time); done as it
/// says (the key written since removed), the same command ends done.
///
/// With `remove_converted`, the DBA removes the other row instead, the one converted already:
/// the key map's pair of its old key and the new key is stale then, and the same command ends
/// done with the pair of the key converted now (every later run failed on the key map's unique
/// new key).
async fn a_key_written_during_an_in_place_run_that_another_becomes(db: &mut Db, table: &str, remove_converted: bool) {
    let url = db.url();
    let old = keys(Layout::V1, 300, 53);
    db.seed(table, &old, false).await;
    let run = [
        "doctor",
        "--url",
        &url,
        "--table",
        table,
        "--apply",
        "--online",
        "--method",
        "in-place",
        "--batch-size",
        "50",
    ];
    let stopped = combkey(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_BATCH", "1")]);
    assert!(!stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    // The greatest key in the column's order (its batch comes last), and its twin: the node's
    // multicast and local bits, which v7 drops, changed.
    let last = *old.iter().max_by_key(|k| k.into_bytes()).unwrap();
    let mut twin = last.into_bytes();
    twin[10] ^= 0x03;
    let twin = Comb::from_bytes(twin);
    let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
    let becomes = m.convert(&last).unwrap();
    assert_eq!(m.convert(&twin).unwrap(), becomes, "the premise: v7 drops those bits");
    db.exec(&format!("INSERT INTO {table} (id, seq) VALUES ({}, 999)", db.literal(twin))).await;
    let (code, out) = exit_code(&run);
    assert_eq!(code, Some(1), "{out}");
    // The later of the two in key order is the one not converted yet.
    let (later, seq) = if twin.into_bytes() > last.into_bytes() {
        (twin, 999)
    } else {
        (last, old.iter().position(|k| *k == last).unwrap())
    };
    assert!(
        out.contains(&format!(
            "{later} would become {becomes}, a key the table holds already (change or remove the row of {later}"
        )),
        "the pair named: {out}"
    );
    let want: Vec<Comb> = old.iter().map(|k| m.convert(k).unwrap()).collect();
    if remove_converted {
        let (converted_seq, earlier) =
            if seq == 999 { (old.iter().position(|k| *k == last).unwrap(), last) } else { (999, twin) };
        db.exec(&format!("DELETE FROM {table}_items WHERE n = {converted_seq}")).await;
        db.exec(&format!("DELETE FROM {table} WHERE seq = {converted_seq}")).await;
        let (code, out) = exit_code(&run);
        assert_eq!(code, Some(0), "{out}");
        let now = db.keys_by_seq(table).await;
        if converted_seq == 999 {
            assert_eq!(now, want, "done");
        } else {
            assert_eq!(now, [&want[..converted_seq], &want[converted_seq + 1..], &[becomes]].concat(), "done");
        }
        let mapped = db
            .texts(&format!(
                "SELECT {} FROM combkey_keymap_{table} WHERE new_key = {}",
                db.hex("old_key"),
                db.literal(becomes)
            ))
            .await;
        assert_eq!(mapped, [later.simple().to_string()], "the pair of the key converted now, not of {earlier}");
        db.exec(&format!("DROP TABLE {table}_items")).await;
        db.exec(&format!("DROP TABLE {table}")).await;
        db.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{table}")).await;
        return;
    }
    db.exec(&format!("DELETE FROM {table}_items WHERE n = {seq}")).await;
    db.exec(&format!("DELETE FROM {table} WHERE seq = {seq}")).await;
    let (code, out) = exit_code(&run);
    assert_eq!(code, Some(0), "{out}");
    if seq == 999 {
        assert_eq!(db.keys_by_seq(table).await, want, "done");
    } else {
        let now = db.keys_by_seq(table).await;
        assert_eq!(now.len(), 300, "{now:?}");
        assert_eq!(now, [&want[..seq], &want[seq + 1..], &[becomes]].concat(), "done");
    }
    db.exec(&format!("DROP TABLE {table}_items")).await;
    db.exec(&format!("DROP TABLE {table}")).await;
    db.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{table}")).await;
}

/// `--keep-type` with one v4 id written twice, in two letter cases: it stays, each text as it
/// is, so the run converts the v1 keys and keeps both (a break-test's run refused, "one stored
/// form would make them one key"); without `--keep-type` both would become one `uuid`: refused.
async fn an_id_in_two_cases_that_stays_is_kept_with_keep_type(db: &mut Db, table: &str) {
    let url = db.url();
    let old = keys(Layout::V1, 30, 47);
    db.seed(table, &old, true).await;
    let v4 = Comb::new_v4();
    db.exec(&format!(
        "INSERT INTO {table} (id, seq) VALUES ('{}', 100), ('{}', 101)",
        v4,
        v4.to_string().to_uppercase()
    ))
    .await;
    let (code, out) = exit_code(&["doctor", "--url", &url, "--table", table, "--apply"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("one stored form would make them one key"), "{out}");
    let (code, out) = exit_code(&["doctor", "--url", &url, "--table", table, "--apply", "--keep-type"]);
    assert_eq!(code, Some(0), "{out}");
    let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
    let texts = db.texts(&format!("SELECT id FROM {table} ORDER BY seq")).await;
    let mut want: Vec<String> = old.iter().map(|k| m.convert(k).unwrap().to_string()).collect();
    want.extend([v4.to_string(), v4.to_string().to_uppercase()]);
    assert_eq!(texts, want);
    db.exec(&format!("DROP TABLE {table}_items")).await;
    db.exec(&format!("DROP TABLE {table}")).await;
    db.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{table}")).await;
}

/// The same twins in a text column whose order is not the keys' byte order (`COLLATE "C"`, one
/// twin upper-case, the other lower-case, keys between them): the audit's pass over the keys
/// cannot find them, and the database's grouping does.
async fn keys_that_would_become_one_are_refused_in_any_order(db: &mut Db, table: &str) {
    let url = db.url();
    let mut old = keys(Layout::V1, 50, 23);
    // The twins begin 3a, a key between them in the column's order 3B: upper-case text sorts
    // before lower-case there, so "3A..." < "3B..." < "3a...", where their bytes sort 3a, 3a, 3b.
    let mut first = old[10].into_bytes();
    first[0] = 0x3a;
    old[10] = Comb::from_bytes(first);
    let mut twin = first;
    twin[10] ^= 0x03;
    let mut between = first;
    between[0] = 0x3b;
    old.push(Comb::from_bytes(twin));
    old.push(Comb::from_bytes(between));
    // Eleven more twins, and eleven pairs of v4 keys alike but for the same bits (no v1 keys:
    // they stay, and are no pair): every group is looked at, not the first ten.
    for i in 20..31 {
        let mut b = old[i].into_bytes();
        b[10] ^= 0x01;
        old.push(Comb::from_bytes(b));
        let v4 = Comb::new_v4();
        let mut b = v4.into_bytes();
        b[10] ^= 0x02;
        old.push(v4);
        old.push(Comb::from_bytes(b));
    }
    db.exec(&format!("DROP TABLE IF EXISTS {table}")).await;
    db.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{table}")).await;
    db.exec(&format!("CREATE TABLE {table} (id text COLLATE \"C\" NOT NULL PRIMARY KEY, seq integer NOT NULL)")).await;
    let values: Vec<String> = old
        .iter()
        .enumerate()
        .map(|(i, k)| {
            // Every key upper-case but one twin: apart in the column's order.
            let text = if i == 50 { k.to_string() } else { k.to_string().to_uppercase() };
            format!("('{text}', {i})")
        })
        .collect();
    db.exec(&format!("INSERT INTO {table} (id, seq) VALUES {}", values.join(", "))).await;
    let read: Vec<Comb> =
        db.texts(&format!("SELECT id FROM {table} ORDER BY id")).await.iter().map(|t| t.parse().unwrap()).collect();
    assert!(read.windows(2).any(|w| w[0] > w[1]), "the premise: the column's order is not the keys' byte order");
    let out = combkey(&["doctor", "--url", &url, "--table", table, "--apply"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("12 keys of public.{table}.id would become the same key")), "{err}");
    let after: Vec<String> = db.texts(&format!("SELECT id FROM {table} ORDER BY seq")).await;
    let before: Vec<String> = values.iter().map(|v| v[2..38].to_string()).collect();
    assert_eq!(after, before, "nothing changed");
    db.exec(&format!("DROP TABLE {table}")).await;
}

/// v6 keys among v7 ones: the audit says how many sort after the next id, converts the v6
/// keys, and says nothing is left only when none does.
async fn a_mixed_table(db: &mut Db, table: &str) {
    let url = db.url();
    let v6 = keys(Layout::V6, 100, 31);
    let g = combkey::V7Generator::new();
    let v7: Vec<Comb> = times(100).into_iter().map(|(t, _)| g.generate_at(t.saturating_add_ms(86_400_000))).collect();
    let all: Vec<Comb> = v6.iter().chain(&v7).copied().collect();
    db.seed(table, &all, false).await;
    let before = report(&url, table, &[]);
    assert_eq!(before["keys_after_next_id"], 100, "every v6 key sorts after a v7 id of any date: {before}");
    assert_eq!(layouts(&before), [("v6".to_string(), 100), ("v7".to_string(), 100)], "{before}");
    let evidence = before["evidence"].to_string();
    assert!(
        evidence.contains("mixed: 100 by Gregorian ticks (v6's order), 100 by Unix milliseconds (v7's order)"),
        "{evidence}"
    );
    let r = before["recommendation"].as_str().unwrap();
    assert!(r.contains("Convert 100 v6 keys to v7"), "{r}");
    let after = report(&url, table, &["--apply"]);
    assert_eq!(after["keys_after_next_id"], 0, "{after}");
    assert_eq!(layouts(&after), [("v7".to_string(), 200)], "{after}");
    assert!(!after["evidence"].to_string().contains("mixed"), "{after}");
    assert_eq!(db.order(table).await, (0..200).collect::<Vec<_>>());
}

mod postgres {
    use super::*;

    #[tokio::test]
    async fn every_layout_sorts_before_new_ids() {
        every_layout(&mut Db::pg().await, "sorted_pg", false).await;
    }

    #[tokio::test]
    async fn killed_after_every_step() {
        super::killed_after_every_step(&mut Db::pg().await, "sorted_pg_kill").await;
    }

    #[tokio::test]
    async fn keys_that_would_become_one_are_refused() {
        super::keys_that_would_become_one_are_refused(&mut Db::pg().await, "sorted_pg_twins").await;
    }

    #[tokio::test]
    async fn a_mixed_table() {
        super::a_mixed_table(&mut Db::pg().await, "sorted_pg_mixed").await;
    }

    #[tokio::test]
    async fn keys_of_two_layouts_that_would_become_one_are_refused() {
        super::keys_of_two_layouts_that_would_become_one_are_refused(&mut Db::pg().await, "sorted_pg_layouts", true)
            .await;
    }

    #[tokio::test]
    async fn a_key_written_during_an_in_place_run_that_another_becomes() {
        super::a_key_written_during_an_in_place_run_that_another_becomes(
            &mut Db::pg().await,
            "sorted_pg_inplace_twin",
            false,
        )
        .await;
    }

    #[tokio::test]
    async fn a_converted_row_removed_after_an_in_place_run_stopped_leaves_no_stale_pair() {
        super::a_key_written_during_an_in_place_run_that_another_becomes(&mut Db::pg().await, "sorted_pg_stale", true)
            .await;
    }

    #[tokio::test]
    async fn an_id_in_two_cases_that_stays_is_kept_with_keep_type() {
        super::an_id_in_two_cases_that_stays_is_kept_with_keep_type(&mut Db::pg().await, "sorted_pg_cases").await;
    }

    #[tokio::test]
    async fn keys_that_would_become_one_are_refused_in_any_order() {
        super::keys_that_would_become_one_are_refused_in_any_order(&mut Db::pg().await, "sorted_pg_twins_text").await;
    }
}

mod mariadb {
    use super::*;

    #[tokio::test]
    async fn every_layout_sorts_before_new_ids() {
        every_layout(&mut Db::mysql().await, "sorted_my", false).await;
    }

    #[tokio::test]
    async fn killed_after_every_step() {
        super::killed_after_every_step(&mut Db::mysql().await, "sorted_my_kill").await;
    }

    #[tokio::test]
    async fn keys_that_would_become_one_are_refused() {
        super::keys_that_would_become_one_are_refused(&mut Db::mysql().await, "sorted_my_twins").await;
    }

    #[tokio::test]
    async fn keys_of_two_layouts_that_would_become_one_are_refused() {
        super::keys_of_two_layouts_that_would_become_one_are_refused(&mut Db::mysql().await, "sorted_my_layouts", true)
            .await;
    }

    #[tokio::test]
    async fn a_key_written_during_an_in_place_run_that_another_becomes() {
        let db = &mut Db::mysql().await;
        super::a_key_written_during_an_in_place_run_that_another_becomes(db, "sorted_my_inplace_twin", false).await;
    }

    #[tokio::test]
    async fn a_converted_row_removed_after_an_in_place_run_stopped_leaves_no_stale_pair() {
        let db = &mut Db::mysql().await;
        super::a_key_written_during_an_in_place_run_that_another_becomes(db, "sorted_my_stale", true).await;
    }

    #[tokio::test]
    async fn a_mixed_table() {
        super::a_mixed_table(&mut Db::mysql().await, "sorted_my_mixed").await;
    }
}

mod sqlite {
    use super::*;

    #[tokio::test]
    async fn every_layout_sorts_before_new_ids() {
        every_layout(&mut Db::sqlite("every").await, "sorted_lite", false).await;
    }

    /// The same, each layout named with `--layout` as a DBA who knows it names it.
    #[tokio::test]
    async fn every_layout_named_by_the_dba() {
        every_layout(&mut Db::sqlite("named").await, "named_lite", true).await;
    }

    #[tokio::test]
    async fn killed_after_every_step() {
        super::killed_after_every_step(&mut Db::sqlite("kill").await, "sorted_lite_kill").await;
    }

    #[tokio::test]
    async fn keys_that_would_become_one_are_refused() {
        super::keys_that_would_become_one_are_refused(&mut Db::sqlite("twins").await, "sorted_lite_twins").await;
    }

    #[tokio::test]
    async fn keys_of_two_layouts_that_would_become_one_are_refused() {
        let db = &mut Db::sqlite("layouts").await;
        super::keys_of_two_layouts_that_would_become_one_are_refused(db, "sorted_lite_layouts", false).await;
    }

    #[tokio::test]
    async fn a_mixed_table() {
        super::a_mixed_table(&mut Db::sqlite("mixed").await, "sorted_lite_mixed").await;
    }

    /// Another program holding a read open on the file (an `sqlite3` shell inside `BEGIN`),
    /// in the default rollback-journal mode: the run stops within its lock timeout before it
    /// maps a key, says why, and changes nothing (it waited on every page it spilled and failed
    /// at its commit, or crawled for many minutes on a large table); once the read ends, it
    /// runs.
    #[tokio::test]
    async fn a_read_held_open_elsewhere() {
        let mut db = Db::sqlite("held").await;
        let url = db.url();
        let t = "sorted_lite_held";
        let old = keys(Layout::V1, 200, 31);
        db.seed(t, &old, false).await;
        assert_eq!(db.texts("PRAGMA journal_mode").await, ["delete"]);
        let mut reader = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(AssertSqlSafe(format!("BEGIN; SELECT count(*) FROM {t}"))).execute(&mut reader).await.unwrap();
        let out = combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--lock-timeout", "300ms"], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("another connection holds the database file"), "{err}");
        assert!(!err.contains("map the old key values"), "stopped before mapping a key: {err}");
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
        sqlx::raw_sql("COMMIT").execute(&mut reader).await.unwrap();
        let after = report(&url, t, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 200)], "{after}");
    }
}

/// `--apply --online` keeps the key map batch by batch, in each batch's transaction.
async fn online_keeps_the_key_map(db: &mut Db, table: &str) {
    let url = db.url();
    let old = keys(Layout::NewSequentialId, 500, 51);
    db.seed(table, &old, false).await;
    let after = report(&url, table, &["--apply", "--online", "--batch-size", "64"]);
    assert_eq!(layouts(&after), [("v7".to_string(), 500)], "{after}");
    let count = db.int_text("count(*)");
    assert_eq!(db.texts(&format!("SELECT {count} FROM combkey_keymap_{table}")).await, ["500"]);
    let hex = db.hex("m.new_key");
    let new = db.keys_by_seq(table).await;
    for i in [0, 63, 64, 499] {
        let resolved = db
            .texts(&format!("SELECT {hex} FROM combkey_keymap_{table} m WHERE m.old_key = {}", db.literal(old[i])))
            .await;
        assert_eq!(resolved, [format!("{:x}", new[i])], "row {i}");
    }
    db.insert_new(table, 500).await;
    assert_eq!(db.order(table).await, (0..503).collect::<Vec<_>>());
}

/// `--to v6`, for a table whose writers make v6: the v1 family becomes v6, every bit kept,
/// no key map; the audit measures the next id as a v6.
async fn to_v6_on_request(db: &mut Db, table: &str) {
    let url = db.url();
    let old = keys(Layout::NewSequentialId, 100, 61);
    db.seed(table, &old, false).await;
    let after = report(&url, table, &["--apply", "--to", "v6"]);
    assert_eq!(layouts(&after), [("v6".to_string(), 100)], "{after}");
    assert_eq!(after["key_map"], Value::Null);
    assert_eq!(after["target"], "v6");
    assert_eq!(after["keys_after_next_id"], 0, "{after}");
    let new = db.keys_by_seq(table).await;
    for (o, n) in old.iter().zip(&new) {
        assert_eq!(Layout::convert(n, Layout::V6, Layout::NewSequentialId).as_ref(), Ok(o));
    }
    assert_eq!(db.order(table).await, (0..100).collect::<Vec<_>>());
    // A v7 target from here would have every v6 key before the next v7 id.
    let v7 = report(&url, table, &[]);
    assert_eq!(v7["keys_after_next_id"], 100, "{v7}");
}

mod database_made {
    use super::*;

    /// A RealWorld-style PostgreSQL table whose keys `DEFAULT uuid_generate_v1mc()` makes:
    /// the audit names the default and what it makes; `--apply --set-default` converts the
    /// keys and makes the default `combkey_v7()` in the same transaction, so the rows inserted
    /// next (by the default, with `RETURNING id`) sort after every old one.
    #[tokio::test]
    async fn postgres_uuid_generate_v1mc() {
        let mut db = Db::pg().await;
        let url = db.url();
        // Another test may create the extension at the same moment: one of the two waits.
        db.exec("SELECT pg_advisory_lock(4242)").await;
        db.exec("CREATE EXTENSION IF NOT EXISTS \"uuid-ossp\"").await;
        db.exec("SELECT pg_advisory_unlock(4242)").await;
        let t = "made_pg_v1mc";
        db.exec(&format!(
            "DROP TABLE IF EXISTS {t}_items; DROP TABLE IF EXISTS {t}; DROP TABLE IF EXISTS combkey_keymap_{t}"
        ))
        .await;
        db.exec(&format!(
            "CREATE TABLE {t} (id uuid PRIMARY KEY DEFAULT uuid_generate_v1mc(), seq integer NOT NULL);
             CREATE TABLE {t}_items (n integer PRIMARY KEY, parent uuid NOT NULL REFERENCES {t} (id))"
        ))
        .await;
        for seq in 0..200 {
            db.exec(&format!("INSERT INTO {t} (seq) VALUES ({seq})")).await;
        }
        db.exec(&format!("INSERT INTO {t}_items SELECT seq, id FROM {t} WHERE seq % 2 = 0")).await;
        let before = report(&url, t, &[]);
        assert_eq!(layouts(&before), [("v1".to_string(), 200)], "{before}");
        assert_eq!(before["default"]["expression"], "uuid_generate_v1mc()", "{before}");
        assert_eq!(before["default"]["makes"], "v1", "{before}");
        let r = before["recommendation"].as_str().unwrap();
        assert!(r.contains("DEFAULT (uuid_generate_v1mc()) makes v1 keys") && r.contains("--set-default"), "{r}");
        let after = report(&url, t, &["--apply", "--set-default"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 200)], "{after}");
        assert_eq!(after["default"]["expression"], "combkey_v7()", "{after}");
        assert!(after["recommendation"].as_str().unwrap().starts_with("Nothing to do"), "{after}");
        let returned = db.texts(&format!("INSERT INTO {t} (seq) VALUES (200), (201), (202) RETURNING id::text")).await;
        assert!(returned.iter().all(|id| id.parse::<Comb>().unwrap().version() == 7), "{returned:?}");
        assert_eq!(db.order(t).await, (0..203).collect::<Vec<_>>());
        assert_eq!(db.joined(t).await, (100, 100));
        let count = db.int_text("count(*)");
        assert_eq!(db.texts(&format!("SELECT {count} FROM combkey_keymap_{t}")).await, ["200"]);
        // Nothing of this test may keep depending on the shared combkey_v7(): other crates'
        // tests install and drop it.
        db.exec(&format!("DROP TABLE IF EXISTS {t}_items, {t}, combkey_keymap_{t}")).await;
    }

    /// MariaDB's usual key: `CHAR(36) DEFAULT uuid()`. `--apply --set-default` changes the
    /// column to `BINARY(16)` (journaled), converts the v1 keys to v7 with their key map, and
    /// makes a `BEFORE INSERT` trigger fill keys with `combkey_v7()`; stopped after any step,
    /// the next run finishes it, and rows inserted then, without a key, sort last.
    #[tokio::test]
    async fn mariadb_char36_uuid() {
        let mut db = Db::mysql().await;
        let url = db.url();
        let t = "made_my_uuid";
        let seed = async |db: &mut Db| {
            db.exec(&format!("DROP TABLE IF EXISTS {t}_items")).await;
            db.exec(&format!("DROP TABLE IF EXISTS {t}")).await;
            db.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
            // An earlier run's journal row (the journal table is doctor's own, made at its first run).
            if map_exists(db, "combkey_doctor_journal").await {
                db.exec(&format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%{t}%'")).await;
            }
            db.exec(&format!("CREATE TABLE {t} (id CHAR(36) NOT NULL DEFAULT uuid() PRIMARY KEY, seq INT NOT NULL)"))
                .await;
            db.exec(&format!(
                "CREATE TABLE {t}_items (n INT NOT NULL PRIMARY KEY, parent CHAR(36) NOT NULL, KEY (parent), \
                 FOREIGN KEY (parent) REFERENCES {t} (id))"
            ))
            .await;
            for seq in 0..120 {
                db.exec(&format!("INSERT INTO {t} (seq) VALUES ({seq})")).await;
            }
            db.exec(&format!("INSERT INTO {t}_items SELECT seq, id FROM {t} WHERE seq % 2 = 0")).await;
        };
        seed(&mut db).await;
        let before = report(&url, t, &[]);
        assert_eq!(layouts(&before), [("v1".to_string(), 120)], "{before}");
        assert_eq!(before["column_type"], "char(36)");
        assert_eq!(before["default"]["makes"], "v1", "{before}");
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", t, "--set-default", "--migration-sql"], &[]));
        let steps = sql.lines().filter(|l| l.starts_with("-- step ")).count();
        assert!(sql.contains("CREATE TRIGGER IF NOT EXISTS") && sql.contains("combkey_keymap_"), "{sql}");
        for k in (0..steps).chain([usize::MAX]) {
            seed(&mut db).await;
            let ids_before = db.texts(&format!("SELECT id FROM {t} ORDER BY seq")).await;
            if k != usize::MAX {
                let out = combkey(
                    &["doctor", "--url", &url, "--table", t, "--apply", "--set-default"],
                    &[("COMBKEY_DOCTOR_FAIL_AFTER_STEP", &k.to_string())],
                );
                assert!(!out.status.success(), "stopped after step {k}");
            }
            let after = report(&url, t, &["--apply", "--set-default"]);
            assert_eq!(layouts(&after), [("v7".to_string(), 120)], "step {k}: {after}");
            assert_eq!(after["column_type"], "binary(16)", "step {k}");
            let new = db.keys_by_seq(t).await;
            for (old, new) in ids_before.iter().zip(&new) {
                let old: Comb = old.parse().unwrap();
                let want = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap().convert(&old).unwrap();
                assert_eq!(*new, want, "step {k}: {old}");
            }
            let count = db.int_text("count(*)");
            assert_eq!(db.texts(&format!("SELECT {count} FROM combkey_keymap_{t}")).await, ["120"], "step {k}");
            assert_eq!(db.joined(t).await, (60, 60), "step {k}");
            db.exec(&format!("INSERT INTO {t} (seq) VALUES (120), (121), (122)")).await;
            assert_eq!(db.order(t).await, (0..123).collect::<Vec<_>>(), "step {k}");
            let last = report(&url, t, &[]);
            assert!(last["recommendation"].as_str().unwrap().starts_with("Nothing to do"), "step {k}: {last}");
        }
    }

    /// SQLite has no functions in SQL: `--set-default` says so and changes nothing.
    #[tokio::test]
    async fn sqlite_has_no_default_to_set() {
        let mut db = Db::sqlite("setdefault").await;
        let url = db.url();
        let old = keys(Layout::V1, 20, 71);
        db.seed("made_lite", &old, false).await;
        let out = combkey(&["doctor", "--url", &url, "--table", "made_lite", "--apply", "--set-default"], &[]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("no functions in SQL"), "{out:?}");
        assert_eq!(db.keys_by_seq("made_lite").await, old);
    }
}

mod online {
    use super::*;

    #[tokio::test]
    async fn postgres_keeps_the_key_map() {
        online_keeps_the_key_map(&mut Db::pg().await, "sorted_pg_online").await;
    }

    #[tokio::test]
    async fn mariadb_keeps_the_key_map() {
        online_keeps_the_key_map(&mut Db::mysql().await, "sorted_my_online").await;
    }

    #[tokio::test]
    async fn postgres_to_v6() {
        to_v6_on_request(&mut Db::pg().await, "sorted_pg_v6").await;
    }

    #[tokio::test]
    async fn sqlite_to_v6() {
        to_v6_on_request(&mut Db::sqlite("v6").await, "sorted_lite_v6").await;
    }
}

/// What a DBA's break-test found, each case as it was met.
mod found {
    use super::*;

    /// A MariaDB type change stopped after its values became 16 bytes (still in the
    /// VARBINARY(64) between type): the audit reads the table, and its check of one id
    /// written in two text forms reads only text values (the bytes of 20,000 v7 ids cast to
    /// text read alike in groups: a refusal, or text that is no UTF-8, before).
    #[tokio::test]
    async fn a_type_change_between_its_steps_is_audited() {
        let mut db = Db::mysql().await;
        let url = db.url();
        db.exec("DROP TABLE IF EXISTS between_steps").await;
        db.exec("CREATE TABLE between_steps (id VARBINARY(64) NOT NULL PRIMARY KEY)").await;
        let g = combkey::V7Generator::new();
        for chunk in (0..20_000).collect::<Vec<_>>().chunks(2000) {
            let values: Vec<String> = chunk.iter().map(|_| format!("(0x{:X})", g.generate())).collect();
            db.exec(&format!("INSERT INTO between_steps VALUES {}", values.join(", "))).await;
        }
        let r = report(&url, "between_steps", &[]);
        assert_eq!(r["read"], 20_000, "{r}");
        assert!(r["refusal"].is_null(), "{r}");
        assert_eq!(layouts(&r), [("v7".to_string(), 20_000)], "{r}");
    }

    /// A key map in a database that does not exist, a table of that name that is no key map,
    /// and a key map of another table's keys: refused before anything changes (no guard, no
    /// foreign key dropped, the column's type as it was).
    #[tokio::test]
    async fn a_key_map_that_cannot_be_used_is_refused_up_front() {
        let mut db = Db::mysql().await;
        let url = db.url();
        let t = "km_refused";
        db.exec(&format!("DROP TABLE IF EXISTS {t}_items")).await;
        db.exec(&format!("DROP TABLE IF EXISTS {t}")).await;
        db.exec(&format!("DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
        db.exec(&format!("CREATE TABLE {t} (id CHAR(36) NOT NULL PRIMARY KEY, seq INT NOT NULL)")).await;
        db.exec(&format!(
            "CREATE TABLE {t}_items (n INT PRIMARY KEY, parent CHAR(36) NOT NULL, KEY (parent), FOREIGN KEY (parent) REFERENCES {t} (id))"
        ))
        .await;
        let old = keys(Layout::V1, 40, 81);
        let values: Vec<String> = old.iter().enumerate().map(|(i, id)| format!("('{id}', {i})")).collect();
        db.exec(&format!("INSERT INTO {t} VALUES {}", values.join(", "))).await;
        db.exec(&format!("INSERT INTO {t}_items SELECT seq, id FROM {t}")).await;
        let show = async |db: &mut Db| {
            db.texts(&format!(
                "SELECT CAST(CONCAT(COLUMN_TYPE, '/', (SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE \
                 EVENT_OBJECT_TABLE = '{t}'), '/', (SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS \
                 WHERE TABLE_NAME = '{t}_items')) AS CHAR) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = \
                 DATABASE() AND TABLE_NAME = '{t}' AND COLUMN_NAME = 'id'"
            ))
            .await
        };
        let before = show(&mut db).await;
        assert_eq!(before, ["char(36)/0/1"]);
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--key-map", "nosuchdb.km"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("nosuchdb, which does not exist"), "{out}");
        assert_eq!(show(&mut db).await, before, "nothing changed");
        db.exec(&format!("CREATE TABLE combkey_keymap_{t} (id INT PRIMARY KEY, old_key VARCHAR(10), new_key INT)"))
            .await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("is no key map"), "{out}");
        assert_eq!(show(&mut db).await, before, "nothing changed");
        db.exec(&format!("DROP TABLE combkey_keymap_{t}")).await;
        db.exec(&format!(
            "CREATE TABLE combkey_keymap_{t} (old_key BINARY(16) NOT NULL PRIMARY KEY, new_key BINARY(16) NOT NULL UNIQUE) \
             COMMENT 'rows of the billing team'"
        ))
        .await;
        db.exec(&format!("INSERT INTO combkey_keymap_{t} VALUES (0x01, 0x02)")).await;
        let audit = report(&url, t, &[]);
        assert!(audit["refusal"].as_str().unwrap().contains("holds rows already"), "{audit}");
        assert_eq!(show(&mut db).await, before, "nothing changed");
        // Emptied, it is used.
        db.exec(&format!("DELETE FROM combkey_keymap_{t}")).await;
        let after = report(&url, t, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 40)], "{after}");
    }

    /// Two tables whose key maps' names would be the same once cut to 63 bytes get two maps;
    /// a map row of an old key with another new key (stale) makes the run roll back.
    #[tokio::test]
    async fn long_names_and_stale_rows() {
        let mut db = Db::pg().await;
        let url = db.url();
        let (a, b) = (
            "customer_order_line_item_history_archive_2023_part_aaaa",
            "customer_order_line_item_history_archive_2023_part_bbbb",
        );
        // The maps an earlier run of this test made.
        db.exec(
            "DO $$ DECLARE r record; BEGIN FOR r IN SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE \
             'combkey_keymap_customer_order%' LOOP EXECUTE format('DROP TABLE %I', r.relname); END LOOP; END $$",
        )
        .await;
        for (t, seed) in [(a, 91), (b, 92)] {
            db.seed(t, &keys(Layout::V1, 30, seed), false).await;
        }
        let (ra, rb) = (report(&url, a, &[]), report(&url, b, &[]));
        let (ma, mb) = (ra["key_map"].as_str().unwrap(), rb["key_map"].as_str().unwrap());
        report(&url, a, &["--apply"]);
        report(&url, b, &["--apply"]);
        assert_ne!(ma, mb, "two tables, two key maps");
        assert!(ma.len() <= "public.".len() + 63, "{ma}");
        for m in [ma, mb] {
            assert_eq!(db.texts(&format!("SELECT count(*)::text FROM {m}")).await, ["30"], "{m}");
        }
        // A stale row: the old key of a row that is there, mapped to another new key.
        let t = "stale_map";
        let old = keys(Layout::V1, 20, 93);
        db.seed(t, &old, false).await;
        db.exec(&format!(
            "CREATE TABLE combkey_keymap_{t} (old_key uuid PRIMARY KEY, new_key uuid NOT NULL UNIQUE); \
             COMMENT ON TABLE combkey_keymap_{t} IS 'combkey doctor: the old and the new key of every key of public.{t}.id it converted (v1 -> v7)'; \
             INSERT INTO combkey_keymap_{t} VALUES ('{}', '{}')",
            old[3],
            Comb::new()
        ))
        .await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply"]);
        assert_eq!(code, Some(1), "{out}");
        assert_eq!(db.keys_by_seq(t).await, old, "rolled back: nothing changed");
    }

    /// A v1 key and its own v7 form in one table: the conversion would make the second
    /// twice. Refused before anything changes, both named.
    #[tokio::test]
    async fn a_key_and_its_own_new_form() {
        let mut db = Db::sqlite("twice").await;
        let url = db.url();
        let mut old = keys(Layout::V1, 20, 94);
        let twin = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap().convert(&old[5]).unwrap();
        old.push(twin);
        db.seed("made_twice", &old, false).await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", "made_twice", "--apply"]);
        assert_eq!(code, Some(1), "{out}");
        // The audit finds it (it reads every key with its new form), and names both.
        assert!(out.contains(&format!("{} (v1) would become {twin}, a key the table holds already", old[5])), "{out}");
        assert_eq!(db.keys_by_seq("made_twice").await, old, "nothing changed");
    }

    /// `--set-default` with `--to v6` (combkey's generator makes v7) is a usage error; with
    /// `--online` the default changes before the first batch; on MariaDB `INSERT ... SELECT`
    /// without the key works afterwards; a function named combkey_v7 that is not combkey's is
    /// refused.
    #[tokio::test]
    async fn set_default_as_a_dba_meets_it() {
        let mut pg = Db::pg().await;
        let url = pg.url();
        pg.exec("SELECT pg_advisory_lock(4242)").await;
        pg.exec("CREATE EXTENSION IF NOT EXISTS \"uuid-ossp\"").await;
        pg.exec("SELECT pg_advisory_unlock(4242)").await;
        let t = "sd_online";
        pg.seed(t, &keys(Layout::V1, 50, 95), false).await;
        pg.exec(&format!("ALTER TABLE {t} ALTER COLUMN id SET DEFAULT uuid_generate_v1()")).await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--to", "v6", "--set-default"]);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains("with --to v6"), "{out}");
        let after = report(&url, t, &["--apply", "--online", "--set-default"]);
        assert_eq!(after["default"]["expression"], "combkey_v7()", "{after}");
        assert_eq!(layouts(&after), [("v7".to_string(), 50)], "{after}");
        // Its DEFAULT depends on the shared combkey_v7(), which other crates' tests drop.
        pg.exec(&format!("DROP TABLE IF EXISTS {t}_items, {t}, combkey_keymap_{t}")).await;

        let mut my = Db::mysql().await;
        let murl = my.url();
        let m = "sd_select";
        my.seed(m, &keys(Layout::V1, 20, 96), false).await;
        my.exec(&format!("ALTER TABLE {m} ALTER COLUMN id SET DEFAULT (UNHEX(REPLACE(UUID(), '-', '')))")).await;
        let after = report(&murl, m, &["--apply", "--set-default"]);
        assert!(after["recommendation"].as_str().unwrap().starts_with("Nothing to do"), "{after}");
        my.exec(&format!("INSERT INTO {m} (seq) SELECT seq + 100 FROM {m} WHERE seq < 2")).await;
        my.exec(&format!("INSERT INTO {m} (seq) VALUES (200)")).await;
        let order = my.order(m).await;
        assert_eq!(&order[20..], [100, 101, 200], "rows inserted without a key get v7 keys that sort last: {order:?}");

        // A function of that name that is not combkey's.
        my.exec("DROP DATABASE IF EXISTS sd_foreign").await;
        my.exec("CREATE DATABASE sd_foreign").await;
        my.exec("CREATE FUNCTION sd_foreign.combkey_v7() RETURNS BINARY(16) NOT DETERMINISTIC NO SQL RETURN UNHEX(REPLACE(UUID(), '-', ''))").await;
        my.exec("CREATE TABLE sd_foreign.t (id BINARY(16) NOT NULL DEFAULT (UNHEX(REPLACE(UUID(), '-', ''))) PRIMARY KEY, seq INT NOT NULL)").await;
        let (code, out) = exit_code(&["doctor", "--url", &murl, "--table", "sd_foreign.t", "--apply", "--set-default"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("is not combkey's"), "{out}");
    }

    /// MariaDB `--apply --set-default` while a report holds a transaction that read the table:
    /// the keys convert, then the trigger that makes new keys waits in short tries (each
    /// waiting for no lock, or at most 100 ms while no transaction is older than a second: the
    /// application's inserts never queue behind it for long), and when the report
    /// outlasts them the run says the trigger is NOT in place and exits 1 (it exited 0 calling
    /// it "a check after the commit failed"); the same command again, once the report ends,
    /// puts it in place.
    #[tokio::test]
    async fn set_default_that_cannot_get_its_lock_says_so_and_fails() {
        let mut my = Db::mysql().await;
        let murl = my.url();
        let m = "sd_held";
        my.seed(m, &keys(Layout::V1, 20, 98), false).await;
        let mut report_session = Db::mysql().await;
        report_session.exec(&format!("START TRANSACTION; SELECT count(*) FROM {m}")).await;
        let out = combkey(
            &["doctor", "--url", &murl, "--table", m, "--apply", "--set-default", "--lock-timeout", "500ms", "--json"],
            &[],
        );
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("NOT in place") && text.contains("are converted"), "{text}");
        let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
        assert_eq!(v["error"], "incomplete", "{v}");
        report_session.exec("COMMIT").await;
        let after = report(&murl, m, &["--apply", "--set-default"]);
        assert_eq!(layouts(&after)[0].0, "v7", "{after}");
        my.exec(&format!("INSERT INTO {m} (seq) VALUES (400)")).await;
        let order = my.order(m).await;
        assert_eq!(order.last(), Some(&400), "a row inserted without a key gets a v7 key that sorts last: {order:?}");
        my.exec(&format!("DROP TABLE IF EXISTS {m}_items, {m}, combkey_keymap_{m}")).await;
    }

    /// A composite foreign key `(tenant, parent)` with an index on exactly that: the rewrite
    /// finds a batch's rows by `parent` alone, which that index cannot probe. Online in place is
    /// refused naming the column (copy and swap needs no such index); offline builds an index on
    /// it first (and drops it after).
    #[tokio::test]
    async fn a_composite_key_needs_an_index_on_its_key_column() {
        let mut db = Db::pg().await;
        let url = db.url();
        db.exec(
            "DROP TABLE IF EXISTS ck_items; DROP TABLE IF EXISTS ck; DROP TABLE IF EXISTS combkey_keymap_ck;
             CREATE TABLE ck (tenant int NOT NULL, id uuid NOT NULL, PRIMARY KEY (id), UNIQUE (tenant, id));
             CREATE TABLE ck_items (n int PRIMARY KEY, tenant int NOT NULL, parent uuid NOT NULL,
               FOREIGN KEY (tenant, parent) REFERENCES ck (tenant, id));
             CREATE INDEX ck_items_tp ON ck_items (tenant, parent);",
        )
        .await;
        let values: Vec<String> = keys(Layout::V1, 30, 97).iter().map(|k| format!("(1, '{k}')")).collect();
        db.exec(&format!(
            "INSERT INTO ck VALUES {}; INSERT INTO ck_items SELECT row_number() OVER (), tenant, id FROM ck",
            values.join(", ")
        ))
        .await;
        let (code, out) =
            exit_code(&["doctor", "--url", &url, "--table", "ck", "--apply", "--online", "--method", "in-place"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("ck_items(parent)"), "{out}");
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "ck", "--migration-sql"], &[]));
        assert!(
            sql.contains("(\"parent\")") && sql.contains("CREATE INDEX CONCURRENTLY \"combkey_doctor_fk_"),
            "{sql}"
        );
        let after = report(&url, "ck", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 30)], "{after}");
    }
}

/// A referencing column without an index (PostgreSQL): `--apply` builds one before its
/// transaction with `CREATE INDEX CONCURRENTLY`, so an application's writes to the child table
/// go on while it is built, and drops it after the commit; stopped after any step, the table is
/// done or unchanged and the next run leaves no index of its own behind.
mod unindexed {
    use super::*;

    /// The indexes the tool made on `t`'s child table that are still there.
    async fn own_indexes(db: &mut Db, t: &str) -> Vec<String> {
        db.texts(&format!(
            "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = '{t}_items'::regclass \
             AND indexrelid::regclass::text LIKE 'combkey_doctor_fk_%'"
        ))
        .await
    }

    async fn seed_unindexed(db: &mut Db, t: &str, old: &[Comb]) {
        db.seed(t, old, false).await;
        db.exec(&format!("DROP INDEX {t}_items_parent")).await;
    }

    #[tokio::test]
    async fn postgres_killed_after_every_step() {
        let mut db = Db::pg().await;
        let url = db.url();
        let t = "unindexed_pg_kill";
        let old = keys(Layout::V1, 60, 75);
        seed_unindexed(&mut db, t, &old).await;
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", t, "--migration-sql"], &[]));
        let build = sql.find("CREATE INDEX CONCURRENTLY \"combkey_doctor_fk_").expect(&sql);
        let begin = sql.find("\nBEGIN").expect(&sql);
        let drop = sql.rfind("DROP INDEX CONCURRENTLY IF EXISTS").expect(&sql);
        let commit = sql.find("\nCOMMIT").expect(&sql);
        assert!(build < begin && commit < drop, "built before the transaction, dropped after: {sql}");
        assert!(sql.contains("never as one transaction (psql -1)"), "{sql}");
        let steps = sql.lines().filter(|l| l.starts_with("-- step ")).count();
        let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let want: Vec<Comb> = old.iter().map(|o| m.convert(o).unwrap()).collect();
        let mut left_seen = false;
        for k in 0..steps {
            seed_unindexed(&mut db, t, &old).await;
            let out = combkey(
                &["doctor", "--url", &url, "--table", t, "--apply"],
                &[("COMBKEY_DOCTOR_FAIL_AFTER_STEP", &k.to_string())],
            );
            assert!(!out.status.success(), "stopped after step {k}");
            done_or_unchanged(&mut db, t, &old, &want, k).await;
            if db.keys_by_seq(t).await == want && !own_indexes(&mut db, t).await.is_empty() {
                // Stopped between the commit and the drop: the audit says what is left.
                let audit = report(&url, t, &[]);
                let says = audit["recommendation"].as_str().unwrap();
                assert!(says.starts_with("Nothing to convert, but a stopped run left the index"), "step {k}: {says}");
                left_seen = true;
            }
            let after = report(&url, t, &["--apply"]);
            assert_eq!(layouts(&after), [("v7".to_string(), 60)], "step {k}: {after}");
            assert_eq!(db.keys_by_seq(t).await, want, "step {k}");
            assert_eq!(own_indexes(&mut db, t).await, Vec::<String>::new(), "step {k}: no index of the tool left");
        }
        assert!(left_seen, "a stop between the commit and the drop left the index");
    }

    /// A transaction that holds a snapshot, on another table, makes the index build wait past
    /// the lock timeout: the run fails before its transaction, naming that session, and says
    /// its half-built index is still there (its drop waits for the same transaction); once the
    /// transaction ends, the next run finishes and leaves no index.
    #[tokio::test]
    async fn postgres_an_old_transaction_elsewhere_is_named() {
        let mut db = Db::pg().await;
        let url = db.url();
        let t = "unindexed_pg_old_tx";
        let old = keys(Layout::V1, 30, 68);
        seed_unindexed(&mut db, t, &old).await;
        let mut holder = PgConnection::connect(&url).await.unwrap();
        let pid: (i32,) = sqlx::query_as("SELECT pg_backend_pid()").fetch_one(&mut holder).await.unwrap();
        sqlx::raw_sql("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class")
            .execute(&mut holder)
            .await
            .unwrap();
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--lock-timeout", "1s"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("CREATE INDEX CONCURRENTLY waits for every transaction"), "{out}");
        assert!(out.contains(&format!("session {} (", pid.0)), "{out}");
        assert!(out.contains("before its transaction began: no key changed"), "{out}");
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
        // The half-built index was dropped on the way out (a snapshot does not hold up a drop).
        assert_eq!(own_indexes(&mut db, t).await, Vec::<String>::new(), "{out}");
        sqlx::raw_sql("COMMIT").execute(&mut holder).await.unwrap();

        // A transaction that wrote to the child table holds up the build and its drop alike:
        // the index is left, and the message says so and how to drop it.
        sqlx::raw_sql(AssertSqlSafe(format!("BEGIN; UPDATE {t}_items SET n = n WHERE n = 0")))
            .execute(&mut holder)
            .await
            .unwrap();
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--lock-timeout", "1s"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("session {} (", pid.0)), "{out}");
        assert!(
            out.contains("is still there (its drop failed too)") && out.contains("DROP INDEX CONCURRENTLY"),
            "{out}"
        );
        assert_eq!(own_indexes(&mut db, t).await.len(), 1, "{out}");
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
        sqlx::raw_sql("COMMIT").execute(&mut holder).await.unwrap();
        let after = report(&url, t, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 30)], "{after}");
        assert_eq!(own_indexes(&mut db, t).await, Vec::<String>::new(), "no index of the tool left");
    }

    /// A partitioned referencing table without an index (an index cannot be built on it
    /// `CONCURRENTLY`): each partition, which carries its own clone of the foreign key, gets
    /// its own index, and the run converts every key.
    #[tokio::test]
    async fn postgres_a_partitioned_child_gets_its_partitions_indexed() {
        let mut db = Db::pg().await;
        let url = db.url();
        let t = "unindexed_pg_parts";
        db.exec(&format!(
            "DROP TABLE IF EXISTS {t}_kids; DROP TABLE IF EXISTS {t}; DROP TABLE IF EXISTS combkey_keymap_{t}; \
             CREATE TABLE {t} (id uuid PRIMARY KEY, seq int NOT NULL); \
             CREATE TABLE {t}_kids (n int NOT NULL, parent uuid NOT NULL REFERENCES {t} (id), PRIMARY KEY (n)) \
               PARTITION BY RANGE (n); \
             CREATE TABLE {t}_kids_1 PARTITION OF {t}_kids FOR VALUES FROM (0) TO (10); \
             CREATE TABLE {t}_kids_2 PARTITION OF {t}_kids FOR VALUES FROM (10) TO (100)"
        ))
        .await;
        let old = keys(Layout::V1, 30, 73);
        let values: Vec<String> = old.iter().enumerate().map(|(i, k)| format!("('{k}', {i})")).collect();
        db.exec(&format!("INSERT INTO {t} VALUES {}; INSERT INTO {t}_kids SELECT seq, id FROM {t}", values.join(", ")))
            .await;
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", t, "--migration-sql"], &[]));
        assert!(sql.contains("CONCURRENTLY \"combkey_doctor_fk_"), "{sql}");
        assert!(!sql.contains(&format!("ON \"public\".\"{t}_kids\" (")), "none on the partitioned table: {sql}");
        for p in ["1", "2"] {
            assert!(sql.contains(&format!("ON \"public\".\"{t}_kids_{p}\" (\"parent\")")), "{sql}");
        }
        let after = report(&url, t, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 30)], "{after}");
        let n = db.int_text("count(*)");
        let joined = db.texts(&format!("SELECT {n} FROM {t}_kids k JOIN {t} p ON p.id = k.parent")).await;
        assert_eq!(joined, ["30"]);
        let left = db
            .texts(&format!(
                "SELECT {n} FROM pg_class WHERE relname LIKE 'combkey\\_doctor\\_fk\\_%' AND relkind = 'i' \
                 AND oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN \
                   (SELECT relid FROM pg_partition_tree('{t}_kids')))"
            ))
            .await;
        assert_eq!(left, ["0"], "dropped after the commit");
    }

    #[tokio::test]
    async fn postgres_writers_go_on_while_the_index_is_built() {
        let mut db = Db::pg().await;
        let url = db.url();
        let t = "unindexed_pg_writers";
        let old = keys(Layout::V1, 60, 74);
        seed_unindexed(&mut db, t, &old).await;
        // An application transaction that wrote to the child table and stays open: the index
        // build waits for it.
        let mut holder = PgConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("BEGIN; UPDATE unindexed_pg_writers_items SET n = n WHERE n = 0")
            .execute(&mut holder)
            .await
            .unwrap();
        let run = Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args(["doctor", "--url", &url, "--table", t, "--apply", "--lock-timeout", "120s"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Until the run waits for the holder.
        let waiting = loop {
            let q = db
                .texts(
                    "SELECT query FROM pg_stat_activity WHERE application_name = 'combkey doctor' \
                     AND wait_event_type = 'Lock' AND query LIKE '%unindexed_pg_writers_items%'",
                )
                .await;
            if let Some(q) = q.into_iter().next() {
                break q;
            }
            tokio::task::yield_now().await;
        };
        assert!(waiting.starts_with("CREATE INDEX CONCURRENTLY"), "{waiting}");
        // Another writer of the child table meanwhile: not blocked by the build.
        let mut writer = PgConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("SET lock_timeout = '5s'; UPDATE unindexed_pg_writers_items SET n = n WHERE n = 2")
            .execute(&mut writer)
            .await
            .expect("a writer of the child table goes on while the index is built");
        sqlx::raw_sql("COMMIT").execute(&mut holder).await.unwrap();
        let out = run.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let want: Vec<Comb> = old.iter().map(|o| m.convert(o).unwrap()).collect();
        assert_eq!(db.keys_by_seq(t).await, want);
        assert_eq!(db.joined(t).await, (30, 30));
        assert_eq!(own_indexes(&mut db, t).await, Vec::<String>::new(), "dropped after the commit");
    }
}

/// `created_at` of row 0 of [`Db::seed_timed`]: 2025-03-01T08:00:00Z, in microseconds.
const REKEY_T0_US: i64 = 1_740_816_000_000_000;

/// What `--rekey-from` makes of v4 key `old` in a row made at `us` microseconds since the
/// Unix epoch, as docs/doctor.md specifies it: the millisecond (48 bits), version 7, the
/// fraction of the millisecond in 4,096 steps (RFC 9562 section 6.2, method 3), the variant,
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

/// Random v4 keys, and the keys `--rekey-from created_at` makes of them in
/// [`Db::seed_timed`]'s rows.
fn v4_keys(db: &Db, n: usize, seed: u64) -> (Vec<Comb>, Vec<Comb>) {
    let r = SeededRandom::new(seed);
    let old: Vec<Comb> = (0..n).map(|_| v4(&r)).collect();
    let step = db.rekey_step_us();
    let new =
        old.iter().enumerate().map(|(i, o)| rekey_spec(*o, REKEY_T0_US + i64::try_from(i).unwrap() * step)).collect();
    (old, new)
}

/// The end the issue asks for: every key the v7 key of its row's time, every child joined,
/// `ORDER BY id` in `created_at` order, every old id resolving to its own row through the key
/// map, and the application's next ids after all of them.
async fn rekeyed_as_asked(db: &mut Db, table: &str, old: &[Comb], new: &[Comb]) {
    let n = old.len();
    let now = db.keys_by_seq(table).await;
    assert_eq!(now, new, "every key the v7 key of its row's created_at");
    let step = db.rekey_step_us();
    for (i, k) in now.iter().enumerate() {
        let ms = (REKEY_T0_US + i64::try_from(i).unwrap() * step) / 1000;
        assert_eq!(k.timestamp().map(Timestamp::unix_ms), Some(ms), "row {i}'s key carries its millisecond");
    }
    assert_eq!(db.joined(table).await, (n.div_ceil(2), n.div_ceil(2)), "every child joined");
    assert_eq!(db.order(table).await, (0..i64::try_from(n).unwrap()).collect::<Vec<_>>(), "ORDER BY id");
    // Every old id, looked up as an application resolves an old URL's id: one join.
    let old_hex = db.hex("m.old_key");
    let seq = db.int_text("t.seq");
    let rows = db
        .texts(&format!(
            "SELECT {old_hex} || ':' || {seq} FROM combkey_keymap_{table} m JOIN {table} t ON t.id = m.new_key"
        ))
        .await;
    let mut resolved: Vec<(Comb, usize)> = rows
        .iter()
        .map(|r| {
            let (k, s) = r.split_once(':').unwrap();
            (k.parse().unwrap(), s.parse().unwrap())
        })
        .collect();
    resolved.sort_by_key(|(_, s)| *s);
    let want: Vec<(Comb, usize)> = old.iter().copied().zip(0..).collect();
    assert_eq!(resolved, want, "every old id resolves to its own row");
    db.insert_new(table, n).await;
    assert_eq!(db.order(table).await, (0..i64::try_from(n + 3).unwrap()).collect::<Vec<_>>(), "new ids sort last");
    db.exec(&format!("DELETE FROM {table} WHERE seq >= {n}")).await;
}

/// `--rekey-from created_at` on a table of v4 keys with children: a row without a time
/// refuses the run (nothing changes) unless kept; then the run is stopped after each of its
/// steps in turn, and each time the table is unchanged (no key map row) or done, and the next
/// run finishes it.
async fn rekeyed_from_created_at(db: &mut Db, table: &str, time_type: &str) {
    let url = db.url();
    let (old, new) = v4_keys(db, 120, 71);
    let rekey = ["--rekey-from", "created_at"];
    db.seed_timed(table, &old, time_type).await;
    let before = report(&url, table, &rekey);
    assert!(
        before["recommendation"].as_str().unwrap().contains("Convert 120 v4 keys to v7 (from created_at)"),
        "{before}"
    );

    // Rows whose time makes no v7 key: refused by default, naming how many and a key.
    db.exec(&format!("UPDATE {table} SET created_at = NULL WHERE seq = 7")).await;
    let mut apply = vec!["doctor", "--url", &url, "--table", table, "--apply"];
    apply.extend_from_slice(&rekey);
    let (code, out) = exit_code(&apply);
    assert_eq!(code, Some(1), "{out}");
    let named = out.contains(&format!("{:X}", old[7])) || out.contains(&old[7].to_string());
    assert!(out.contains("1 NULL") && named && out.contains("--rekey-invalid keep"), "{out}");
    assert_eq!(db.keys_by_seq(table).await, old, "refused: nothing changed");
    // Kept on request: that row keeps its v4 key, the report says so, the others change.
    let kept = report(&url, table, &["--apply", "--rekey-from", "created_at", "--rekey-invalid", "keep"]);
    let now = db.keys_by_seq(table).await;
    assert_eq!(now[7], old[7], "{kept}");
    assert_eq!(now[8], new[8]);
    assert_eq!(layouts(&kept), [("v4".to_string(), 1), ("v7".to_string(), 119)], "{kept}");

    let mut sql_args = vec!["doctor", "--url", &url, "--table", table, "--migration-sql"];
    sql_args.extend_from_slice(&rekey);
    db.seed_timed(table, &old, time_type).await;
    let sql = ok(&combkey(&sql_args, &[]));
    let steps = sql.lines().filter(|l| l.starts_with("-- step ")).count();
    assert!(sql.contains(&format!("combkey_keymap_{table}")) && steps >= 4, "{sql}");
    for k in 0..steps {
        db.seed_timed(table, &old, time_type).await;
        let out = combkey(&apply, &[("COMBKEY_DOCTOR_FAIL_AFTER_STEP", &k.to_string())]);
        assert!(!out.status.success(), "stopped after step {k}");
        done_or_unchanged(db, table, &old, &new, k).await;
        let after = report(&url, table, &["--apply", "--rekey-from", "created_at"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 120)], "step {k}: {after}");
        assert_eq!(after["keys_after_next_id"], 0, "{after}");
        rekeyed_as_asked(db, table, &old, &new).await;
    }
}

/// `--rekey-from created_at --online`, killed after its second batch, then run again.
async fn rekeyed_online(db: &mut Db, table: &str, time_type: &str) {
    let url = db.url();
    let (old, new) = v4_keys(db, 300, 72);
    db.seed_timed(table, &old, time_type).await;
    let args = [
        "doctor",
        "--url",
        &url,
        "--table",
        table,
        "--apply",
        "--online",
        "--batch-size",
        "32",
        "--rekey-from",
        "created_at",
    ];
    let out = combkey(&args, &[("COMBKEY_DOCTOR_FAIL_AFTER_BATCH", "2")]);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let halfway = db.keys_by_seq(table).await;
    let changed = halfway.iter().zip(&old).filter(|(a, b)| a != b).count();
    assert!(changed > 0 && changed < 300, "stopped half-way: {changed} keys changed");
    for (i, k) in halfway.iter().enumerate() {
        assert!(*k == old[i] || *k == new[i], "row {i}: old or new, nothing else");
    }
    assert_eq!(db.joined(table).await, (150, 150), "every child joined half-way");
    let after = report(&url, table, &["--apply", "--online", "--batch-size", "32", "--rekey-from", "created_at"]);
    assert_eq!(layouts(&after), [("v7".to_string(), 300)], "{after}");
    rekeyed_as_asked(db, table, &old, &new).await;
}

/// Offline, the run locks the table against writes before it reads the times: a session in
/// the middle of a write to the table (an insert of a row the run would not touch, not yet
/// committed) makes the run wait, and give up after its lock timeout with nothing changed;
/// without that lock the run would read times that other sessions may change before its
/// keys do.
async fn rekey_waits_for_a_writer(db: &mut Db, writer: &mut Db, table: &str, time_type: &str) {
    let url = db.url();
    let (old, new) = v4_keys(db, 40, 73);
    db.seed_timed(table, &old, time_type).await;
    writer.exec("BEGIN").await;
    let lit = writer.literal(Comb::new());
    writer.exec(&format!("INSERT INTO {table} (id, seq) VALUES ({lit}, 999)")).await;
    let (code, out) = exit_code(&[
        "doctor",
        "--url",
        &url,
        "--table",
        table,
        "--apply",
        "--rekey-from",
        "created_at",
        "--lock-timeout",
        "300ms",
    ]);
    writer.exec("ROLLBACK").await;
    assert_eq!(code, Some(1), "{out}");
    assert!(out.to_lowercase().contains("lock"), "{out}");
    assert_eq!(db.keys_by_seq(table).await, old, "nothing changed");
    let after = report(&url, table, &["--apply", "--rekey-from", "created_at"]);
    assert_eq!(layouts(&after), [("v7".to_string(), 40)], "{after}");
    assert_eq!(db.keys_by_seq(table).await, new);
}

/// Online, while a writer keeps moving the times of rows that still have v4 keys: every key
/// ends the v7 key of its row's time as it is at the end (each batch reads its rows' times
/// again under their locks).
async fn rekey_online_follows_moving_times(db: &mut Db, table: &str) {
    let url = db.url();
    let (old, _) = v4_keys(db, 3000, 74);
    db.seed_timed(table, &old, "timestamptz").await;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let moved = std::sync::Arc::new(AtomicU64::new(0));
    let (stop, count) = (std::sync::Arc::clone(&done), std::sync::Arc::clone(&moved));
    let writer_url = url.clone();
    let t = table.to_string();
    let writer = tokio::spawn(async move {
        let mut c = PgConnection::connect(&writer_url).await.unwrap();
        while !stop.load(Ordering::Relaxed) {
            let sql = format!(
                "UPDATE {t} SET created_at = created_at - interval '1 year 7 microseconds' WHERE id IN (SELECT id FROM {t} \
                 WHERE substr(id::text, 15, 1) = '4' ORDER BY random() LIMIT 3)"
            );
            let n = sqlx::raw_sql(AssertSqlSafe(sql)).execute(&mut c).await.map(|r| r.rows_affected()).unwrap_or(0);
            count.fetch_add(n, Ordering::Relaxed);
        }
    });
    // The writer is at work before the run starts.
    while moved.load(Ordering::Relaxed) == 0 {
        tokio::task::yield_now().await;
    }
    let args: Vec<String> = [
        "doctor",
        "--url",
        &url,
        "--table",
        table,
        "--apply",
        "--online",
        "--batch-size",
        "100",
        "--rekey-from",
        "created_at",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let before = moved.load(Ordering::Relaxed);
    let out = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        combkey(&args, &[])
    })
    .await
    .unwrap();
    let during = moved.load(Ordering::Relaxed) - before;
    done.store(true, Ordering::Relaxed);
    writer.await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(during > 0, "the writer moved times during the run");
    let rows = db
        .texts(&format!(
            "SELECT encode(uuid_send(m.old_key), 'hex') || ':' || encode(uuid_send(t.id), 'hex') || ':' || \
             (floor(extract(epoch FROM t.created_at) * 1000000))::bigint::text \
             FROM combkey_keymap_{table} m JOIN {table} t ON t.id = m.new_key"
        ))
        .await;
    assert_eq!(rows.len(), 3000, "every row re-keyed, each in the map");
    for r in rows {
        let mut parts = r.split(':');
        let (o, k, us) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let (o, k): (Comb, Comb) = (o.parse().unwrap(), k.parse().unwrap());
        assert_eq!(rekey_spec(o, us.parse().unwrap()), k, "{o}: its key is its time's now ({us} µs)");
    }
}

mod rekey {
    use super::*;

    #[tokio::test]
    async fn postgres_waits_for_a_writer() {
        rekey_waits_for_a_writer(&mut Db::pg().await, &mut Db::pg().await, "rekey_pg_wait", "timestamptz").await;
    }

    #[tokio::test]
    async fn mariadb_waits_for_a_writer() {
        rekey_waits_for_a_writer(&mut Db::mysql().await, &mut Db::mysql().await, "rekey_my_wait", "DATETIME(6)").await;
    }

    #[tokio::test]
    async fn postgres_online_follows_moving_times() {
        rekey_online_follows_moving_times(&mut Db::pg().await, "rekey_pg_moving").await;
    }

    /// Two rows of the same millisecond whose old keys end in the same 62 bits would get one
    /// key: the run changes nothing and names both rows' keys and the key, on SQLite,
    /// PostgreSQL and MariaDB; also where the first of them is in the key map already (a
    /// page of keys before).
    #[tokio::test]
    async fn two_rows_that_would_get_one_key() {
        // 10 rows: the twins in one batch; 2,500 rows: the twins half the key space apart (and
        // in the inserted order, in other thousands), each mapped in a batch of its own, the
        // second meeting the first in the key map.
        for (n, flip) in [(10, 0xff), (2500, 0x80)] {
            for mut db in [Db::sqlite("rekey-twins").await, Db::pg().await, Db::mysql().await] {
                let url = db.url();
                let (t, time_type) = match db {
                    Db::Pg(_) => ("rekey_pg_twins", "timestamptz"),
                    Db::My(_) => ("rekey_my_twins", "DATETIME(6)"),
                    Db::Lite(_, _) => ("rekey_lite_twins", "TEXT"),
                };
                let (mut old, _) = v4_keys(&db, n, 76);
                let mut twin = old[2].into_bytes();
                twin[0] ^= flip;
                old[3] = Comb::from_bytes(twin);
                db.seed_timed(t, &old, time_type).await;
                let at = db.texts(&format!("SELECT CAST(created_at AS CHAR(40)) FROM {t} WHERE seq = 2")).await;
                let at =
                    if matches!(db, Db::Pg(_)) { format!("'{}'::timestamptz", at[0]) } else { format!("'{}'", at[0]) };
                db.exec(&format!("UPDATE {t} SET created_at = {at} WHERE seq = 3")).await;
                // The audit finds them (a break-test's in-place run converted every batch before
                // theirs, then stopped there on every run).
                let new = rekey_spec(old[2], REKEY_T0_US + 2 * db.rekey_step_us());
                let online: &[&str] =
                    if matches!(db, Db::Lite(_, _)) { &[] } else { &["--online", "--method", "in-place"] };
                for how in [&[][..], online] {
                    let mut args = vec!["doctor", "--url", &url, "--table", t, "--apply", "--rekey-from", "created_at"];
                    args.extend(how);
                    let (code, out) = exit_code(&args);
                    assert_eq!(code, Some(1), "{how:?}: {out}");
                    assert!(out.contains("same 62 bits") && out.contains("Nothing was changed"), "{how:?}: {out}");
                    let pair = |a: Comb, b: Comb| format!("{a} (v4) and {b} (v4) would both become {new}");
                    assert!(
                        out.contains(&pair(old[2], old[3])) || out.contains(&pair(old[3], old[2])),
                        "{how:?}: both rows named: {out}"
                    );
                    assert_eq!(db.keys_by_seq(t).await, old, "{how:?}: nothing changed");
                }
            }
        }
    }

    /// SQLite text that is no date (`now`, a Julian day number, a day that does not exist) is
    /// no time; a v7 key of a time before 1995 (1980) is counted as v7 and never re-keyed again.
    #[tokio::test]
    async fn sqlite_what_is_a_time_and_what_is_rekeyed() {
        let mut db = Db::sqlite("rekey-times").await;
        let url = db.url();
        let t = "rekey_lite_times";
        let (old, new) = v4_keys(&db, 30, 75);
        db.seed_timed(t, &old, "TEXT").await;
        db.exec(&format!(
            "UPDATE {t} SET created_at = CASE seq WHEN 3 THEN 'now' WHEN 4 THEN '2460311.5' ELSE '2024-02-30 10:00:00' END \
             WHERE seq IN (3, 4, 5)"
        ))
        .await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--rekey-from", "created_at"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("3 not a time"), "{out}");
        // 1980: the v7 keys made from it are counted as v7 by the audit (not as v4), and stay.
        db.exec(&format!("UPDATE {t} SET created_at = '1980-01-01 00:00:00.000' WHERE seq IN (3, 4, 5)")).await;
        let after = report(&url, t, &["--apply", "--rekey-from", "created_at"]);
        assert!(after["recommendation"].as_str().is_some(), "{after}");
        assert_eq!(layouts(&after), [("v7".to_string(), 30)], "the keys of 1980 are v7 keys: {after}");
        let keys = db.keys_by_seq(t).await;
        assert_eq!(keys[6..], new[6..]);
        assert!(keys[3..6].iter().all(|k| k.version() == 7), "{keys:?}");
        let count = db.int_text("count(*)");
        assert_eq!(db.texts(&format!("SELECT {count} FROM combkey_keymap_{t}")).await, ["30"]);
        db.exec(&format!("UPDATE {t} SET created_at = '1980-01-01 00:00:01.000' WHERE seq = 3")).await;
        let again = report(&url, t, &["--apply", "--rekey-from", "created_at"]);
        assert_eq!(db.keys_by_seq(t).await, keys, "nothing re-keyed twice: {again}");
        assert_eq!(db.texts(&format!("SELECT {count} FROM combkey_keymap_{t}")).await, ["30"]);
    }

    #[tokio::test]
    async fn postgres_from_created_at() {
        rekeyed_from_created_at(&mut Db::pg().await, "rekey_pg", "timestamptz").await;
    }

    #[tokio::test]
    async fn mariadb_from_created_at() {
        rekeyed_from_created_at(&mut Db::mysql().await, "rekey_my", "DATETIME(6)").await;
    }

    #[tokio::test]
    async fn sqlite_from_created_at() {
        rekeyed_from_created_at(&mut Db::sqlite("rekey").await, "rekey_lite", "TEXT").await;
    }

    #[tokio::test]
    async fn postgres_online() {
        rekeyed_online(&mut Db::pg().await, "rekey_pg_online", "timestamp").await;
    }

    #[tokio::test]
    async fn mariadb_online() {
        rekeyed_online(&mut Db::mysql().await, "rekey_my_online", "TIMESTAMP(6) NULL").await;
    }
}

/// The tool's sessions are its own: a role whose statements time out after 1 ms and whose idle
/// sessions end after 200 ms (PostgreSQL), a user whose statements end after 1 ms (MariaDB's
/// `MAX_STATEMENT_TIME`), and the run still converts every key, `--online` with a 300 ms sleep
/// between batches too.
mod sessions {
    use super::*;

    /// A superuser role `name` whose sessions start with `settings` (`ALTER ROLE ... SET`), and
    /// the test server's URL as that role. Made once per server and kept (it owns the key maps
    /// its runs make); made under a lock, as two tests may make roles at once.
    async fn pg_role(db: &mut Db, name: &str, settings: &[&str]) -> String {
        db.exec("SELECT pg_advisory_lock(4243)").await;
        db.exec(&format!(
            "DO $$ BEGIN CREATE ROLE {name} LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        ))
        .await;
        for setting in settings {
            db.exec(&format!("ALTER ROLE {name} SET {setting}")).await;
        }
        db.exec("SELECT pg_advisory_unlock(4243)").await;
        let url = db.url().replacen("://postgres@", &format!("://{name}@"), 1);
        assert_ne!(url, db.url(), "the test's URL names its user");
        url
    }

    /// `--apply --json` on a table of 30 v1 keys (seeded with `seed`) with the test hook `hook`
    /// set: it must exit 0; the old keys, standard error and the JSON.
    async fn applied_with(db: &mut Db, t: &str, seed: u64, hook: &str) -> (Vec<Comb>, String, Value) {
        let url = db.url();
        let old = keys(Layout::V1, 30, seed);
        db.seed(t, &old, false).await;
        let out = combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--json"], &[(hook, "1")]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let json: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
        (old, stderr, json)
    }

    /// Standard error closed by its reader (`combkey doctor ... 2>&1 | head -3`): the run does
    /// not stop at its first progress line that cannot be written; it converts every key and
    /// exits 0.
    #[tokio::test]
    async fn a_closed_standard_error_does_not_stop_a_run() {
        let mut db = Db::sqlite("closed-stderr").await;
        let t = "sessions_lite_closed_stderr";
        let old = keys(Layout::V1, 30, 69);
        db.seed(t, &old, false).await;
        let mut run = Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args(["doctor", "--url", &db.url(), "--table", t, "--apply"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes before the tool writes its first line.
        drop(run.stderr.take());
        let status = run.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{status}");
        let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let want: Vec<Comb> = old.iter().map(|o| m.convert(o).unwrap()).collect();
        assert_eq!(db.keys_by_seq(t).await, want);
    }

    /// A check after the run's commit fails (a definition another session changed meanwhile):
    /// the run says the keys are converted, exits 0, and `--json` carries the check's error.
    #[tokio::test]
    async fn a_check_after_the_commit_does_not_say_nothing_changed() {
        let (_, stderr, json) = applied_with(
            &mut Db::sqlite("after-commit").await,
            "sessions_lite_after_commit",
            86,
            "COMBKEY_DOCTOR_FAIL_DEFINITIONS_CHECK",
        )
        .await;
        assert!(stderr.contains("the keys are converted (the run's transaction committed)"), "{stderr}");
        assert!(!stderr.contains("nothing changed"), "{stderr}");
        assert!(json["check_error"].as_str().unwrap().contains("COMBKEY_DOCTOR_FAIL_DEFINITIONS_CHECK"), "{json}");
        assert_eq!(layouts(&json), [("v7".to_string(), 30)], "{json}");
    }

    /// An earlier run's session still holds the table's run lock (its client was killed, its
    /// statement goes on): the next run names that session and how to end it, and changes
    /// nothing; once it is gone, the run goes on.
    #[tokio::test]
    async fn an_earlier_runs_session_is_named() {
        for (mut db, mut holder, t) in
            [(Db::pg().await, Db::pg().await, "earlier_pg"), (Db::mysql().await, Db::mysql().await, "earlier_my")]
        {
            let url = db.url();
            let old = keys(Layout::V1, 20, 85);
            db.seed(t, &old, false).await;
            let (take, pid, end) = match holder {
                Db::Pg(_) => (
                    format!("SELECT pg_advisory_lock(hashtextextended('combkey_doctor:public.{t}', 0))::text"),
                    "SELECT pg_backend_pid()::text",
                    "pg_terminate_backend",
                ),
                _ => (
                    format!("SELECT CAST(GET_LOCK(CONCAT('combkey_doctor:', SHA1('test.{t}')), 0) AS CHAR)"),
                    "SELECT CAST(CONNECTION_ID() AS CHAR)",
                    "KILL",
                ),
            };
            holder.texts(&take).await;
            let pid = holder.texts(pid).await.remove(0);
            let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--lock-timeout", "300ms"]);
            assert_eq!(code, Some(1), "{out}");
            let end = if end == "KILL" { format!("KILL {pid}") } else { format!("{end}({pid})") };
            assert!(out.contains(&format!("session {pid} (")) && out.contains(&end), "{out}");
            assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
            drop(holder);
            let after = report(&url, t, &["--apply"]);
            assert_eq!(layouts(&after), [("v7".to_string(), 20)], "{after}");
        }
    }

    /// A publication that carries the table but not its referencing table (`FOR TABLE parent`):
    /// refused before anything changes, naming the table and the publication; with both
    /// published the run goes on.
    #[tokio::test]
    async fn postgres_a_publication_without_the_children_is_refused() {
        let mut db = Db::pg().await;
        let url = db.url();
        let t = "pub_pg_parent";
        // The publications are made once per server and never dropped: a publication dropped
        // while another test's audit reads the catalog fails that read.
        for p in ["combkey_t_parent_only", "combkey_t_parts"] {
            db.exec(&format!("DO $$ BEGIN CREATE PUBLICATION {p}; EXCEPTION WHEN duplicate_object THEN NULL; END $$"))
                .await;
        }
        let old = keys(Layout::V1, 20, 84);
        db.seed(t, &old, false).await;
        db.exec(&format!("ALTER PUBLICATION combkey_t_parent_only SET TABLE {t}")).await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("{t}_items (not in publication combkey_t_parent_only)")), "{out}");
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
        db.exec(&format!("ALTER PUBLICATION combkey_t_parent_only ADD TABLE {t}_items")).await;
        let after = report(&url, t, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 20)], "{after}");

        // A partitioned referencing table is published through its partitions (or its root):
        // published either way, it counts as published.
        let t = "pub_pg_parts";
        db.exec(&format!(
            "DROP TABLE IF EXISTS {t}_kids; DROP TABLE IF EXISTS {t}; \
             CREATE TABLE {t} (id uuid PRIMARY KEY, seq int NOT NULL); \
             CREATE TABLE {t}_kids (n int NOT NULL, parent uuid NOT NULL REFERENCES {t} (id), PRIMARY KEY (n)) \
               PARTITION BY RANGE (n); \
             CREATE TABLE {t}_kids_1 PARTITION OF {t}_kids FOR VALUES FROM (0) TO (10); \
             CREATE TABLE {t}_kids_2 PARTITION OF {t}_kids FOR VALUES FROM (10) TO (100); \
             ALTER PUBLICATION combkey_t_parts SET TABLE {t}, {t}_kids"
        ))
        .await;
        let values: Vec<String> =
            keys(Layout::V1, 20, 87).iter().enumerate().map(|(i, k)| format!("('{k}', {i})")).collect();
        db.exec(&format!("INSERT INTO {t} VALUES {}; INSERT INTO {t}_kids SELECT seq, id FROM {t}", values.join(", ")))
            .await;
        let audit = report(&url, t, &[]);
        assert!(!audit["refusal"].to_string().contains("not in publication"), "{audit}");
    }

    /// `--max-lag` without `--replica-url`: PostgreSQL says what it cannot see (standbys of
    /// standbys) and runs; MySQL/MariaDB, whose primary knows no replica's lag, refuse up front
    /// and change nothing (it fails closed: a bound nothing could hold is no bound).
    #[tokio::test]
    async fn max_lag_alone_says_what_it_cannot_see() {
        let mut db = Db::pg().await;
        let (url, t) = (db.url(), "lag_pg_alone");
        db.seed(t, &keys(Layout::V1, 20, 83), false).await;
        let out = combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--online", "--max-lag", "5s"], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("a standby of a standby (cascading replication)") && stderr.contains("--replica-url"),
            "{stderr}"
        );

        let mut db = Db::mysql().await;
        let (url, t) = (db.url(), "lag_my_alone");
        let old = keys(Layout::V1, 20, 83);
        db.seed(t, &old, false).await;
        let out = combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--online", "--max-lag", "5s"], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("does not know how far its replicas are behind")
                && stderr.contains("--replica-url")
                && stderr.contains("Nothing was changed"),
            "{stderr}"
        );
        assert_eq!(db.keys_by_seq(t).await, old, "unchanged");
    }

    /// The audit that follows a finished conversion fails: the run still exits 0, says the keys
    /// are converted, and `--json` says `applied` with the audit's error.
    #[tokio::test]
    async fn a_failed_audit_after_the_run_does_not_fail_the_run() {
        let mut db = Db::sqlite("audit-fails").await;
        let t = "sessions_lite_audit";
        let (old, stderr, json) = applied_with(&mut db, t, 82, "COMBKEY_DOCTOR_FAIL_AUDIT_AFTER_APPLY").await;
        assert!(stderr.contains("are converted (the run finished); the audit after it failed"), "{stderr}");
        assert_eq!(json["applied"], true, "{json}");
        assert!(json["audit_error"].as_str().unwrap().contains("COMBKEY_DOCTOR_FAIL_AUDIT_AFTER_APPLY"), "{json}");
        let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let want: Vec<Comb> = old.iter().map(|o| m.convert(o).unwrap()).collect();
        assert_eq!(db.keys_by_seq(t).await, want, "converted");
    }

    /// Materialized views over the key and a referencing column (PostgreSQL): the offline run
    /// refreshes them in its transaction, so they hold the new keys when it commits; the online
    /// run says they must be refreshed.
    #[tokio::test]
    async fn postgres_materialized_views_are_refreshed_or_named() {
        let mut db = Db::pg().await;
        let url = db.url();
        for (t, online) in [("matview_pg_offline", false), ("matview_pg_online", true)] {
            db.exec(&format!(
                "DROP MATERIALIZED VIEW IF EXISTS {t}_mv; DROP MATERIALIZED VIEW IF EXISTS {t}_items_mv; \
                 DROP MATERIALIZED VIEW IF EXISTS {t}_empty_mv"
            ))
            .await;
            let old = keys(Layout::V1, 100, 81);
            db.seed(t, &old, false).await;
            db.exec(&format!(
                "CREATE MATERIALIZED VIEW {t}_mv AS SELECT id, seq FROM {t}; \
                 CREATE MATERIALIZED VIEW {t}_items_mv AS SELECT parent FROM {t}_items; \
                 CREATE MATERIALIZED VIEW {t}_empty_mv AS SELECT id FROM {t} WITH NO DATA"
            ))
            .await;
            let sql = ok(&combkey(&["doctor", "--url", &url, "--table", t, "--migration-sql"], &[]));
            assert!(sql.contains(&format!("REFRESH MATERIALIZED VIEW public.{t}_mv")), "{sql}");
            assert!(sql.contains(&format!("REFRESH MATERIALIZED VIEW public.{t}_items_mv")), "{sql}");
            let audit = report(&url, t, &[]);
            let notes = audit["notes"].to_string();
            assert!(
                notes.contains("materialized views hold the keys") && notes.contains(&format!("{t}_items_mv")),
                "{audit}"
            );
            let args: &[&str] = if online { &["--apply", "--online"] } else { &["--apply"] };
            let after = report(&url, t, args);
            assert_eq!(layouts(&after), [("v7".to_string(), 100)], "{after}");
            let n = db.int_text("count(*)");
            let joined = db.texts(&format!("SELECT {n} FROM {t}_mv m JOIN {t} USING (id)")).await;
            let items = db.texts(&format!("SELECT {n} FROM {t}_items_mv m JOIN {t} p ON p.id = m.parent")).await;
            if online {
                // An online run does not refresh them (the note above said so): the old keys.
                assert_eq!((joined, items), (vec!["0".to_string()], vec!["0".to_string()]), "{after}");
            } else {
                assert_eq!((joined, items), (vec!["100".to_string()], vec!["50".to_string()]), "{after}");
            }
            // A view made WITH NO DATA holds no key: it is left unpopulated.
            let populated =
                db.texts(&format!("SELECT relispopulated::text FROM pg_class WHERE relname = '{t}_empty_mv'")).await;
            assert_eq!(populated, ["false"], "{after}");
            db.exec(&format!(
                "DROP MATERIALIZED VIEW {t}_mv; DROP MATERIALIZED VIEW {t}_items_mv; DROP MATERIALIZED VIEW {t}_empty_mv"
            ))
            .await;
        }
    }

    /// PgBouncer in front of the server (`scripts/servers.sh pgbouncer`): in transaction and
    /// statement mode the audit and the run are refused up front, naming the pooler and what to
    /// use instead, with nothing changed and nothing left on the pooled server sessions the
    /// application's transactions get next; in session mode the run converts every key and the
    /// application's next session starts with the server's settings.
    // Two worker threads: the application's traffic goes on while the test waits for the tool.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_pooler_without_sessions_is_refused() {
        let mut db = Db::pg().await;
        let [tx, stmt, session, round_robin]: [String; 4] = combkey_testutil::url("COMBKEY_PGBOUNCER_URLS")
            .split(',')
            .map(str::to_string)
            .collect::<Vec<_>>()
            .try_into()
            .expect("four PgBouncer URLs: transaction, statement, session mode, transaction mode in turn");
        let t = "pooler_pg";
        let old = keys(Layout::V1, 40, 76);
        db.seed(t, &old, false).await;
        for (url, mode) in [(&tx, "pool_mode = transaction"), (&stmt, "pool_mode = statement")] {
            for args in [&["--apply"][..], &["--apply", "--online"], &[]] {
                let mut all = vec!["doctor", "--url", url.as_str(), "--table", t];
                all.extend_from_slice(args);
                let (code, out) = exit_code(&all);
                assert_eq!(code, Some(1), "{args:?}: {out}");
                assert!(out.contains("connection pooler that does not keep a session") && out.contains(mode), "{out}");
                assert!(out.contains("pool_mode = session") && out.contains("connect to the server itself"), "{out}");
                assert!(!out.contains("sqlx_s_"), "{out}");
            }
            // An application's statements through the same pool (each its own transaction,
            // as statement mode allows): the server's settings, none of the tool's.
            let mut app = PgConnection::connect(url).await.unwrap();
            for _ in 0..5 {
                for setting in ["lock_timeout", "statement_timeout"] {
                    let v: (String,) = sqlx::query_as(AssertSqlSafe(format!("SHOW {setting}")))
                        .persistent(false)
                        .fetch_one(&mut app)
                        .await
                        .unwrap();
                    assert_eq!(v.0, "0", "{setting}");
                }
            }
        }
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
        // A transaction pool of two server sessions handed out in turn (`server_round_robin`),
        // both open (three clients at once asked for them): found every time, though the
        // tool's connection gets its own server session back while another client holds the
        // other one.
        let warm: Vec<_> = (0..3)
            .map(|_| {
                let url = round_robin.clone();
                tokio::spawn(async move {
                    let mut c = PgConnection::connect(&url).await.unwrap();
                    sqlx::raw_sql("SELECT pg_sleep(0.2)").execute(&mut c).await.unwrap();
                })
            })
            .collect();
        for w in warm {
            w.await.unwrap();
        }
        for args in [&["--apply"][..], &[], &[], &["--apply", "--online"], &[]] {
            let mut all = vec!["doctor", "--url", round_robin.as_str(), "--table", t];
            all.extend_from_slice(args);
            let (code, out) = exit_code(&all);
            assert_eq!(code, Some(1), "{args:?}: {out}");
            assert!(out.contains("connection pooler that does not keep a session"), "{out}");
        }
        // Application traffic through the transaction pool (eight clients, five server
        // sessions) while the tool starts: found every time.
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let traffic: Vec<_> = (0..8)
            .map(|_| {
                let (url, stop) = (tx.clone(), Arc::clone(&stop));
                tokio::spawn(async move {
                    let mut c = PgConnection::connect(&url).await.unwrap();
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        sqlx::raw_sql("SELECT 1").execute(&mut c).await.unwrap();
                    }
                })
            })
            .collect();
        for args in [&["--apply"][..], &[], &[], &[], &[], &["--apply"], &[], &[], &[], &[]] {
            let mut all = vec!["doctor", "--url", tx.as_str(), "--table", t];
            all.extend_from_slice(args);
            let (code, out) = exit_code(&all);
            assert_eq!(code, Some(1), "{args:?}: {out}");
            assert!(out.contains("connection pooler that does not keep a session"), "{out}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in traffic {
            t.await.unwrap();
        }
        // The run lock (a session lock) is free: no pooled server session kept it.
        let lock = format!("hashtextextended('combkey_doctor:public.{t}', 0)");
        let free = db.texts(&format!("SELECT pg_try_advisory_lock({lock})::text")).await;
        assert_eq!(free, ["true"], "no session lock left");
        db.exec(&format!("SELECT pg_advisory_unlock({lock})")).await;

        // Session mode keeps a session: the run goes on, and the pool's next client starts
        // with the server's settings.
        let after = report(&session, t, &["--apply", "--lock-timeout", "7s"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 40)], "{after}");
        let mut app = PgConnection::connect(&session).await.unwrap();
        let v: (String,) = sqlx::query_as("SHOW lock_timeout").persistent(false).fetch_one(&mut app).await.unwrap();
        assert_eq!(v.0, "0");
    }

    #[tokio::test]
    async fn postgres_role_timeouts_do_not_stop_a_run() {
        let mut db = Db::pg().await;
        let url =
            pg_role(&mut db, "combkey_t_timeouts", &["statement_timeout = '1ms'", "idle_session_timeout = '200ms'"])
                .await;
        let t = "sessions_pg_timeouts";
        let (old, new) = v4_keys(&db, 300, 77);
        db.seed_timed(t, &old, "timestamptz").await;
        let args = ["--apply", "--online", "--batch-size", "50", "--sleep", "300ms", "--rekey-from", "created_at"];
        let after = report(&url, t, &args);
        assert_eq!(layouts(&after), [("v7".to_string(), 300)], "{after}");
        rekeyed_as_asked(&mut db, t, &old, &new).await;
        let t = "sessions_pg_offline";
        let old = keys(Layout::V1, 200, 78);
        db.seed(t, &old, false).await;
        let after = report(&url, t, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 200)], "{after}");
    }

    /// MariaDB sessions that start with `autocommit = 0` (here through `init_connect`, for the
    /// test's user only, so the other tests' sessions keep theirs): the online scanner still sees
    /// the keys an application writes during the run (it would otherwise read one snapshot for
    /// the whole run, and leave them old), and every key is converted.
    #[tokio::test]
    async fn mariadb_autocommit_off_does_not_freeze_the_scanner() {
        let mut db = Db::mysql().await;
        db.exec("DROP USER IF EXISTS 'combkey_t_autocommit'@'%'").await;
        db.exec("CREATE USER 'combkey_t_autocommit'@'%'").await;
        // No SUPER: `init_connect` runs for this user's sessions.
        db.exec("GRANT ALL ON test.* TO 'combkey_t_autocommit'@'%'").await;
        db.exec("GRANT PROCESS ON *.* TO 'combkey_t_autocommit'@'%'").await;
        db.exec(
            "SET GLOBAL init_connect = 'SET autocommit = IF(CURRENT_USER() LIKE ''combkey\\_t\\_autocommit@%'', 0, @@autocommit)'",
        )
        .await;
        let url = db.url().replacen("://root@", "://combkey_t_autocommit@", 1);
        assert_ne!(url, db.url(), "the test's URL names its user");
        let mut probe = MySqlConnection::connect(&url).await.unwrap();
        let ac: (i64,) = sqlx::query_as("SELECT @@autocommit").fetch_one(&mut probe).await.unwrap();
        assert_eq!(ac.0, 0, "the user's sessions start with autocommit off");
        drop(probe);
        let t = "sessions_my_autocommit";
        let old = keys(Layout::V1, 200, 72);
        db.seed(t, &old, false).await;
        let run = Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args([
                "doctor",
                "--url",
                &url,
                "--table",
                t,
                "--apply",
                "--online",
                "--method",
                "in-place",
                "--batch-size",
                "20",
                "--sleep",
                "200ms",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Once the first batch is in, the application writes 40 more rows with old keys.
        let map = format!("combkey_keymap_{t}");
        let n = db.int_text("count(*)");
        loop {
            if map_exists(&mut db, &map).await && db.texts(&format!("SELECT {n} FROM {map}")).await[0] != "0" {
                break;
            }
            tokio::task::yield_now().await;
        }
        let late = keys(Layout::V1, 40, 71);
        let values: Vec<String> =
            late.iter().enumerate().map(|(i, k)| format!("({}, {})", db.literal(*k), 1000 + i)).collect();
        db.exec(&format!("INSERT INTO {t} (id, seq) VALUES {}", values.join(", "))).await;
        let out = run.wait_with_output().unwrap();
        db.exec("SET GLOBAL init_connect = ''").await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let after = report(&db.url(), t, &[]);
        assert_eq!(layouts(&after), [("v7".to_string(), 240)], "{after}");

        // The same user on a read-only server (a replica, say), which it may not write to:
        // refused up front, saying why. (Here, after the run above: the other tests' users
        // may write despite `read_only`.)
        let t = "sessions_my_read_only";
        db.seed(t, &old, false).await;
        db.exec("SET GLOBAL read_only = 1").await;
        let (code, out) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply"]);
        let (code_online, out_online) = exit_code(&["doctor", "--url", &url, "--table", t, "--apply", "--online"]);
        db.exec("SET GLOBAL read_only = 0").await;
        for (code, out) in [(code, out), (code_online, out_online)] {
            assert_eq!(code, Some(1), "{out}");
            assert!(
                out.contains("the server is read-only (read_only = ON") && out.contains("nothing was changed"),
                "{out}"
            );
        }
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
    }

    /// A role whose sessions start read-only (`default_transaction_read_only`): `--apply` is
    /// refused before anything changes, saying so, instead of failing at its first write; the
    /// audit, which only reads, goes on.
    #[tokio::test]
    async fn postgres_a_read_only_role_is_refused_up_front() {
        let mut db = Db::pg().await;
        let url = pg_role(&mut db, "combkey_t_read_only", &["default_transaction_read_only = on"]).await;
        let t = "sessions_pg_read_only";
        let old = keys(Layout::V1, 20, 70);
        db.seed(t, &old, false).await;
        for args in [&["--apply"][..], &["--apply", "--online"]] {
            let mut all = vec!["doctor", "--url", url.as_str(), "--table", t];
            all.extend_from_slice(args);
            let (code, out) = exit_code(&all);
            assert_eq!(code, Some(1), "{out}");
            assert!(out.contains("this session starts read-only (default_transaction_read_only = on"), "{out}");
            assert!(!out.contains("cannot execute"), "refused before the first write: {out}");
        }
        assert_eq!(db.keys_by_seq(t).await, old, "nothing changed");
        let audit = report(&url, t, &[]);
        assert_eq!(layouts(&audit), [("v1".to_string(), 20)], "{audit}");
    }

    #[tokio::test]
    async fn mariadb_max_statement_time_does_not_stop_a_run() {
        let mut db = Db::mysql().await;
        db.exec("DROP USER IF EXISTS 'combkey_t_timeouts'@'%'").await;
        db.exec("CREATE USER 'combkey_t_timeouts'@'%' WITH MAX_STATEMENT_TIME 0.001").await;
        db.exec("GRANT ALL ON *.* TO 'combkey_t_timeouts'@'%'").await;
        let url = db.url().replacen("://root@", "://combkey_t_timeouts@", 1);
        assert_ne!(url, db.url(), "the test's URL names its user");
        let t = "sessions_my_timeouts";
        let (old, new) = v4_keys(&db, 300, 79);
        db.seed_timed(t, &old, "DATETIME(6)").await;
        let after = report(&url, t, &["--apply", "--rekey-from", "created_at"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 300)], "{after}");
        rekeyed_as_asked(&mut db, t, &old, &new).await;
        let t = "sessions_my_online";
        let old = keys(Layout::V1, 200, 80);
        db.seed(t, &old, false).await;
        let after = report(&url, t, &["--apply", "--online", "--batch-size", "50", "--sleep", "100ms"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 200)], "{after}");
    }
}

/// A key unique only with another column: `PRIMARY KEY (tenant, id)`, where tenant 2 reuses
/// every third of tenant 1's ids (legal under that key) in rows made 100 days later, and a
/// child per row referencing `(tenant, id)`.
mod composite {
    use super::*;

    /// The rows: `(tenant, seq, id, ms)`; tenant 1's rows `seq` 0.., tenant 2's after them.
    fn rows(ids: &[Comb]) -> Vec<(i64, usize, Comb, i64)> {
        let t0 = REKEY_T0_US / 1000;
        let mut out: Vec<(i64, usize, Comb, i64)> =
            ids.iter().enumerate().map(|(i, id)| (1, i, *id, t0 + 1000 * i64::try_from(i).unwrap())).collect();
        let later = 100 * 86_400_000;
        for (i, id) in ids.iter().enumerate().step_by(3) {
            out.push((2, ids.len() + i, *id, t0 + later + 1000 * i64::try_from(i).unwrap()));
        }
        out
    }

    /// The table `t` of [`rows`], its child `t_items` (one row per row of `t`), an index on
    /// `id` alone (not unique), and `created_at` holding each row's millisecond.
    async fn seed(db: &mut Db, t: &str, ids: &[Comb]) {
        let ty = db.key_type(false);
        for d in [
            format!("_{t}_items_old"),
            format!("_{t}_old"),
            format!("{t}_items"),
            t.to_string(),
            format!("combkey_keymap_{t}"),
        ] {
            db.exec(&format!("DROP TABLE IF EXISTS {d}")).await;
        }
        let time_ty = match db {
            Db::Pg(_) => "timestamptz",
            Db::My(_) => "DATETIME(6)",
            Db::Lite(_, _) => "TEXT",
        };
        db.exec(&format!(
            "CREATE TABLE {t} (tenant integer NOT NULL, id {ty} NOT NULL, seq integer NOT NULL, created_at {time_ty} NOT NULL, \
             PRIMARY KEY (tenant, id))"
        ))
        .await;
        db.exec(&format!("CREATE INDEX {t}_id ON {t} (id)")).await;
        db.exec(&format!(
            "CREATE TABLE {t}_items (n integer NOT NULL PRIMARY KEY, tenant integer NOT NULL, parent {ty} NOT NULL, \
             FOREIGN KEY (tenant, parent) REFERENCES {t} (tenant, id))"
        ))
        .await;
        db.exec(&format!("CREATE INDEX {t}_items_tp ON {t}_items (parent, tenant)")).await;
        let values: Vec<String> = rows(ids)
            .iter()
            .map(|(tenant, seq, id, ms)| {
                let at = Timestamp::from_unix_ms(*ms).to_string().replace('T', " ").replace('Z', "");
                let at = match db {
                    Db::Pg(_) => format!("'{at}+00'"),
                    _ => format!("'{at}'"),
                };
                format!("({tenant}, {}, {seq}, {at})", db.literal(*id))
            })
            .collect();
        db.exec(&format!("INSERT INTO {t} (tenant, id, seq, created_at) VALUES {}", values.join(", "))).await;
        db.exec(&format!("INSERT INTO {t}_items (n, tenant, parent) SELECT seq, tenant, id FROM {t}")).await;
    }

    /// Each row's key by `seq`.
    async fn keys(db: &mut Db, t: &str) -> Vec<Comb> {
        db.keys_by_seq(t).await
    }

    /// Every child that finds its row by `(tenant, id)`, and all children.
    async fn joined(db: &mut Db, t: &str) -> (usize, usize) {
        let n = db.int_text("count(*)");
        let j = db
            .texts(&format!(
                "SELECT {n} FROM {t}_items i JOIN {t} p ON p.tenant = i.tenant AND p.id = i.parent AND p.seq = i.n"
            ))
            .await[0]
            .parse()
            .unwrap();
        let all = db.texts(&format!("SELECT {n} FROM {t}_items")).await[0].parse().unwrap();
        (j, all)
    }

    /// A layout conversion (v1 to v7, which keeps a key map) converts each value by its bytes:
    /// tenant 2's rows take the same new id as tenant 1's rows of that id, every child
    /// follows, the key map holds each old id once. Then `--rekey-from`, which would give both
    /// tenants' rows one row's time, is refused naming the key's columns, with nothing changed.
    async fn converted_per_value_rekey_refused(db: &mut Db, t: &str, online: &[&[&str]]) {
        let url = db.url();
        let old = super::keys(Layout::V1, 90, 83);
        let m = combkey::layouts::KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let all = rows(&old);
        let want: Vec<Comb> = {
            let mut by_seq: Vec<(usize, Comb)> = all.iter().map(|(_, s, id, _)| (*s, m.convert(id).unwrap())).collect();
            by_seq.sort_by_key(|(s, _)| *s);
            by_seq.into_iter().map(|(_, k)| k).collect()
        };
        let olds: Vec<Comb> = {
            let mut by_seq: Vec<(usize, Comb)> = all.iter().map(|(_, s, id, _)| (*s, *id)).collect();
            by_seq.sort_by_key(|(s, _)| *s);
            by_seq.into_iter().map(|(_, k)| k).collect()
        };
        let mut runs: Vec<Vec<&str>> = vec![vec!["--apply"]];
        runs.extend(online.iter().map(|extra| [&["--apply"][..], extra].concat()));
        for run in &runs {
            seed(db, t, &old).await;
            let before = report(&url, t, &[]);
            assert!(before["refusal"].is_null(), "{run:?}: a key repeated under (tenant, id) is no refusal: {before}");
            let after = report(&url, t, run);
            assert_eq!(layouts(&after), [("v7".to_string(), u64::try_from(all.len()).unwrap())], "{run:?}: {after}");
            assert_eq!(keys(db, t).await, want, "{run:?}: every row's key converted from its own bytes");
            assert_eq!(joined(db, t).await, (all.len(), all.len()), "{run:?}: every child follows its row");
            let n = db.int_text("count(*)");
            let old_hex = db.hex("old_key");
            let new_hex = db.hex("new_key");
            let map: Vec<String> = db
                .texts(&format!("SELECT {old_hex} || ':' || {new_hex} FROM combkey_keymap_{t} ORDER BY old_key"))
                .await;
            let mut want_map: Vec<String> =
                old.iter().map(|o| format!("{}:{}", o.simple(), m.convert(o).unwrap().simple())).collect();
            want_map.sort();
            let mut got = map.clone();
            got.sort();
            assert_eq!(got, want_map, "{run:?}: the key map holds each old id once");
            assert_eq!(db.texts(&format!("SELECT {n} FROM combkey_keymap_{t}")).await, [old.len().to_string()]);
        }

        // Re-keying from the rows' times: refused up front, naming the columns.
        let v4s: Vec<Comb> = {
            let r = SeededRandom::new(84);
            (0..90).map(|_| v4(&r)).collect()
        };
        let v4_olds: Vec<Comb> = {
            let mut by_seq: Vec<(usize, Comb)> = rows(&v4s).iter().map(|(_, s, id, _)| (*s, *id)).collect();
            by_seq.sort_by_key(|(s, _)| *s);
            by_seq.into_iter().map(|(_, k)| k).collect()
        };
        assert_ne!(v4_olds, olds);
        let mut runs: Vec<Vec<&str>> = vec![vec!["--apply", "--rekey-from", "created_at"]];
        runs.extend(online.iter().map(|extra| [&["--apply", "--rekey-from", "created_at"][..], extra].concat()));
        for run in &runs {
            seed(db, t, &v4s).await;
            let audit = report(&url, t, &["--rekey-from", "created_at"]);
            let refusal = audit["refusal"].as_str().unwrap_or_default().to_string();
            assert!(refusal.contains("(tenant, id)"), "{run:?}: the audit names the key's columns: {audit}");
            let mut args = vec!["doctor", "--url", url.as_str(), "--table", t];
            args.extend(run.iter().copied());
            let (code, out) = exit_code(&args);
            assert_ne!(code, Some(0), "{run:?}: {out}");
            assert!(
                out.contains("unique only with the other columns of its primary key (tenant, id)")
                    && out.contains("Nothing was changed"),
                "{run:?}: {out}"
            );
            assert_eq!(keys(db, t).await, v4_olds, "{run:?}: nothing changed");
            assert_eq!(joined(db, t).await, (v4_olds.len(), v4_olds.len()));
            assert!(!map_exists(db, &format!("combkey_keymap_{t}")).await, "{run:?}: no key map made");
        }
        // `--json`: the refusal as one object on standard output.
        let out =
            combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--rekey-from", "created_at", "--json"], &[]);
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let refused: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
        assert_eq!(refused["error"], "refused", "{refused}");
        assert!(refused["message"].as_str().unwrap().contains("(tenant, id)"), "{refused}");
        assert_eq!(keys(db, t).await, v4_olds, "nothing changed");
    }

    /// Both online methods.
    const ONLINE: &[&[&str]] = &[&["--online", "--method", "in-place"], &["--online", "--method", "copy-swap"]];

    #[tokio::test]
    async fn postgres() {
        converted_per_value_rekey_refused(&mut Db::pg().await, "composite_pg", ONLINE).await;
    }

    #[tokio::test]
    async fn mariadb() {
        converted_per_value_rekey_refused(&mut Db::mysql().await, "composite_my", ONLINE).await;
    }

    #[tokio::test]
    async fn sqlite() {
        converted_per_value_rekey_refused(&mut Db::sqlite("composite").await, "composite_lite", &[]).await;
    }
}
