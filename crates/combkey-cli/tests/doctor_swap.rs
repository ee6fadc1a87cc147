//! `combkey doctor --apply --online` by copy and swap, on real PostgreSQL and MariaDB, with
//! writers as an application has them the whole time: new parents with children, updates of
//! parents found by a number, children added to them, deletes (cascading to children). Checked
//! by the test itself, never by doctor: no writer statement failed, every row the writers left
//! is there (their own bookkeeping against the counts), every key converted as its layout says
//! (the core's `KeyMigration`, per row, against the kept old table), no orphan, every object as
//! it was but the key type, nothing of the run left behind. A run stopped at each of its phases
//! leaves the tables as the application knew them (or, after the swap, swapped), and a second
//! run finishes it; a table changed by another session meanwhile stops the swap with nothing
//! changed; what copy and swap cannot carry makes `auto` change the keys in place and say why.
//!
//! Each test has tables of its own, so tests running at once never meet.

use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use combkey::layouts::{KeyMigration, Layout, RtCombLayout};
use combkey::{Comb, RandomSource, SeededRandom, Timestamp};
use serde_json::Value;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, Row};

/// `args` with `--app-ready-for-new-type` added to an online run that may change the key
/// column's type (no `--keep-type`): these tests' applications are ready for the new type, or
/// check what the type change does; the refusal without the flag is tested in doctor.rs
/// (`an_online_type_change_is_refused_until_the_application_is_ready`).
fn ready<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut args = args.to_vec();
    if args.contains(&"--online") && !args.contains(&"--keep-type") && !args.contains(&"--app-ready-for-new-type") {
        args.push("--app-ready-for-new-type");
    }
    args
}

fn combkey_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_combkey"));
    cmd.args(ready(args)).stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run combkey")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &Output) -> Value {
    let text = ok(out);
    serde_json::from_str(text.lines().last().unwrap()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `n` RT.Comb `Sql` keys one second apart up to now (keys made for SQL Server, which do not
/// sort on PostgreSQL or MariaDB, by an application that still makes them).
fn rtcomb_sql(n: usize, seed: u64) -> Vec<Comb> {
    let t0 = Timestamp::now().saturating_add_ms(-1000 * i64::try_from(n).unwrap());
    let r = SeededRandom::new(seed);
    (0..n)
        .map(|i| {
            let mut b = [0u8; 16];
            r.fill_bytes(&mut b);
            b[6] = 0x40 | (b[6] & 0x0f);
            b[8] = 0x80 | (b[8] & 0x3f);
            RtCombLayout::Sql
                .create(t0.saturating_add_ms(i64::try_from(i).unwrap() * 1000), Comb::from_bytes(b))
                .unwrap()
        })
        .collect()
}

/// What the writers did: rows in and out, and statements that failed.
#[derive(Default)]
struct Writes {
    parents_in: AtomicI64,
    parents_out: AtomicI64,
    children_in: AtomicI64,
    updates: AtomicI64,
    failures: AtomicI64,
    last_error: std::sync::Mutex<String>,
}

impl Writes {
    fn failed(&self, e: impl std::fmt::Display) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap() = e.to_string();
    }
}

/// The run, in a thread of its own while the writers go on.
async fn run_doctor(args: Vec<String>, env: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        combkey_env(&args, &env)
    })
    .await
    .unwrap()
}

/// A run of doctor held at one of the test build's hold points (`COMBKEY_DOCTOR_HOLD_<point>`,
/// a folder it says `held` in and waits for `go` in), started with `env` besides and waited
/// for until it holds (a run that ends first fails the test).
struct Held {
    dir: std::path::PathBuf,
    doctor: tokio::task::JoinHandle<Output>,
}

impl Held {
    async fn start(point: &str, name: &str, run: Vec<String>, mut env: Vec<(String, String)>) -> Held {
        let dir = std::env::temp_dir().join(format!("combkey-swap-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        env.push((format!("COMBKEY_DOCTOR_HOLD_{point}"), dir.display().to_string()));
        let doctor = tokio::spawn(run_doctor(run, env));
        let waited = std::time::Instant::now();
        while !dir.join("held").exists() {
            assert!(waited.elapsed().as_secs() < 120 && !doctor.is_finished(), "the run never reached {point}");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        Held { dir, doctor }
    }

    /// Lets the run go on.
    fn release(&self) {
        std::fs::write(self.dir.join("go"), "").unwrap();
    }

    /// The run's end.
    async fn end(self) -> Output {
        let out = self.doctor.await.unwrap();
        let _ = std::fs::remove_dir_all(&self.dir);
        out
    }

    /// Lets the run go on, and its end.
    async fn go(self) -> Output {
        self.release();
        self.end().await
    }
}

fn args(url: &str, table: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["doctor", "--url", url, "--table", table].iter().map(|s| (*s).to_string()).collect();
    a.extend(extra.iter().map(|s| (*s).to_string()));
    a
}

mod postgres {
    use super::*;

    async fn connect() -> PgConnection {
        PgConnection::connect(&combkey_testutil::pg_url()).await.expect("PostgreSQL (source scripts/servers.sh)")
    }

    async fn exec(c: &mut PgConnection, sql: &str) {
        sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn count(c: &mut PgConnection, sql: &str) -> i64 {
        sqlx::query_scalar(AssertSqlSafe(sql.to_string())).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// A parent of RT.Comb keys numbered by `seq`, children referencing it (one per second
    /// parent, deleted with their parent), with a grant, a comment, a check and a trigger that
    /// must come back as they were.
    async fn seed(c: &mut PgConnection, t: &str, n: usize, seed: u64) {
        // An earlier run's journal row of these tables goes with them.
        let _ = sqlx::raw_sql(AssertSqlSafe(format!(
            "DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%' OR target LIKE '%\"{t}_items\"%'"
        )))
        .execute(&mut *c)
        .await;
        exec(
            c,
            &format!(
                "DROP TABLE IF EXISTS {t}_items, {t}, _{t}_old, _{t}_items_old, _{t}_new, _{t}_items_new, _{t}_map, \
                 _{t}_log, _{t}_items_log CASCADE;
                 DROP FUNCTION IF EXISTS _{t}_capture(), _{t}_items_capture(), {t}_touch() CASCADE;
                 DROP ROLE IF EXISTS {t}_reader;
                 CREATE ROLE {t}_reader;
                 CREATE TABLE {t} (id uuid PRIMARY KEY, seq bigserial UNIQUE, n int NOT NULL DEFAULT 0 CHECK (n >= 0),
                   note text, touched int NOT NULL DEFAULT 0, twice int GENERATED ALWAYS AS (n * 2) STORED);
                 COMMENT ON TABLE {t} IS 'the parents';
                 GRANT SELECT ON {t} TO {t}_reader;
                 CREATE TABLE {t}_items (k bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                   parent uuid NOT NULL REFERENCES {t} (id) ON DELETE CASCADE, what text);
                 CREATE INDEX {t}_items_parent ON {t}_items (parent);
                 CREATE FUNCTION {t}_touch() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN NEW.touched := NEW.touched + 1; RETURN NEW; END $f$;
                 CREATE TRIGGER {t}_touch BEFORE UPDATE OF n ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_touch();"
            ),
        )
        .await;
        let texts: Vec<String> = rtcomb_sql(n, seed).iter().map(ToString::to_string).collect();
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {t} (id, note) SELECT u::uuid, 'seeded' FROM UNNEST($1::text[]) u"
        )))
        .bind(&texts)
        .execute(&mut *c)
        .await
        .unwrap();
        exec(
            c,
            &format!(
                "INSERT INTO {t}_items (parent, what) SELECT id, 'seeded' FROM {t} WHERE seq % 2 = 0; ANALYZE {t}"
            ),
        )
        .await;
    }

    /// A writer: new parents (v7 keys, made with combkey) with a child, updates of parents it
    /// finds by number, children added to them, deletes of its own parents (their children go
    /// with them).
    async fn writer(t: String, parents: i64, stop: Arc<AtomicBool>, w: Arc<Writes>) {
        let mut c = connect().await;
        let mut mine: Vec<Comb> = Vec::new();
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            i += 1;
            let id = Comb::new();
            let seq = 1 + i64::try_from(i * 7919).unwrap() % parents;
            let r = sqlx::raw_sql(AssertSqlSafe(format!(
                "BEGIN; INSERT INTO {t} (id, note) VALUES ('{id}', 'writer'); \
                 INSERT INTO {t}_items (parent, what) VALUES ('{id}', 'writer'); \
                 UPDATE {t} SET n = n + 1 WHERE seq = {seq}; \
                 INSERT INTO {t}_items (parent, what) SELECT id, 'added' FROM {t} WHERE seq = {seq}; COMMIT"
            )))
            .execute(&mut c)
            .await;
            match r {
                Ok(_) => {
                    w.parents_in.fetch_add(1, Ordering::Relaxed);
                    w.children_in.fetch_add(1, Ordering::Relaxed);
                    w.updates.fetch_add(1, Ordering::Relaxed);
                    mine.push(id);
                }
                Err(e) => {
                    w.failed(e);
                    let _ = sqlx::raw_sql("ROLLBACK").execute(&mut c).await;
                }
            }
            if i.is_multiple_of(4)
                && let Some(old) = mine.pop()
            {
                match sqlx::raw_sql(AssertSqlSafe(format!("DELETE FROM {t} WHERE id = '{old}'"))).execute(&mut c).await
                {
                    Ok(r) if r.rows_affected() == 1 => {
                        w.parents_out.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => w.failed("a delete of the writer's own parent found no row"),
                    Err(e) => w.failed(e),
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// Every row of the kept old table that is still in the table has the key its layout
    /// converts to (its number says which row it is); the old table has every old key.
    async fn converted_as_the_layout_says(c: &mut PgConnection, t: &str) -> usize {
        let m = KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap();
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT o.id::text, n.id::text FROM _{t}_old o JOIN {t} n USING (seq) WHERE o.note = 'seeded'"
        )))
        .fetch_all(&mut *c)
        .await
        .unwrap();
        for r in &rows {
            let (old, new): (String, String) = (r.get(0), r.get(1));
            let want = m.convert(&old.parse::<Comb>().unwrap()).unwrap();
            assert_eq!(new, want.to_string(), "row of old key {old}");
        }
        rows.len()
    }

    /// What the run leaves behind, besides the kept old tables: nothing.
    async fn leftovers(c: &mut PgConnection, t: &str) -> Vec<String> {
        sqlx::query_scalar::<_, String>(AssertSqlSafe(format!(
            "SELECT relname::text FROM pg_class WHERE relname IN ('_{t}_new', '_{t}_items_new', '_{t}_map', '_{t}_log', \
             '_{t}_items_log') UNION ALL SELECT tgname::text FROM pg_trigger WHERE tgname IN ('combkey_doctor_capture', \
             'combkey_doctor_truncate') \
             AND tgrelid::regclass::text IN ('{t}', '{t}_items', '_{t}_old', '_{t}_items_old') \
             UNION ALL SELECT proname::text FROM pg_proc WHERE proname IN ('_{t}_capture', '_{t}_items_capture')"
        )))
        .fetch_all(c)
        .await
        .unwrap()
    }

    /// The definitions a DBA would compare: columns, constraints, indexes, triggers, grants,
    /// comment.
    async fn shape(c: &mut PgConnection, t: &str) -> String {
        sqlx::query_scalar::<_, String>(AssertSqlSafe(format!(
            "SELECT concat_ws(E'\\n', \
               (SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull || ' ' || \
                  coalesce(pg_get_expr(d.adbin, d.adrelid), '') || attidentity::text, ',' ORDER BY attnum) FROM pg_attribute a \
                  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum WHERE attrelid = '{t}'::regclass \
                  AND attnum > 0), \
               (SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated, ',' ORDER BY conname) \
                  FROM pg_constraint WHERE conrelid = '{t}'::regclass), \
               (SELECT string_agg(pg_get_indexdef(indexrelid), ',' ORDER BY indexrelid::regclass::text) FROM pg_index \
                  WHERE indrelid = '{t}'::regclass), \
               (SELECT string_agg(pg_get_triggerdef(oid), ',') FROM pg_trigger WHERE tgrelid = '{t}'::regclass AND NOT tgisinternal), \
               (SELECT relacl::text FROM pg_class WHERE oid = '{t}'::regclass), obj_description('{t}'::regclass, 'pg_class'), \
               (SELECT string_agg(pg_get_serial_sequence('{t}', attname), ',' ORDER BY attnum) FROM pg_attribute \
                  WHERE attrelid = '{t}'::regclass AND attnum > 0))"
        )))
        .fetch_one(c)
        .await
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn copy_and_swap_while_writers_write_loses_nothing() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg";
        let mut c = connect().await;
        seed(&mut c, t, 20_000, 1).await;
        let (shape_before, items_before) = (shape(&mut c, t).await, shape(&mut c, &format!("{t}_items")).await);
        let (p0, c0) = (
            count(&mut c, &format!("SELECT count(*) FROM {t}")).await,
            count(&mut c, &format!("SELECT count(*) FROM {t}_items")).await,
        );
        let stop = Arc::new(AtomicBool::new(false));
        let w = Arc::new(Writes::default());
        let writers: Vec<_> =
            (0..3).map(|_| tokio::spawn(writer(t.to_string(), p0, Arc::clone(&stop), Arc::clone(&w)))).collect();
        while w.parents_in.load(Ordering::Relaxed) < 20 {
            tokio::task::yield_now().await;
        }
        let out = run_doctor(
            args(&url, t, &["--apply", "--online", "--triggers", "fire", "--method", "copy-swap", "--json"]),
            Vec::new(),
        )
        .await;
        // The writers go on a while against the swapped tables.
        let swapped_at = w.parents_in.load(Ordering::Relaxed);
        while w.parents_in.load(Ordering::Relaxed) < swapped_at + 20 {
            tokio::task::yield_now().await;
        }
        stop.store(true, Ordering::Relaxed);
        for h in writers {
            h.await.unwrap();
        }
        let after = json(&out);
        assert_eq!(after["online"]["method"], "copy-swap", "{after}");
        assert_eq!(
            w.failures.load(Ordering::Relaxed),
            0,
            "no writer statement failed: {}",
            w.last_error.lock().unwrap()
        );
        assert!(layouts_of(&after).iter().all(|(l, _)| l != "rtcomb-sql"), "every old key converted: {after}");
        let parents = p0 + w.parents_in.load(Ordering::Relaxed) - w.parents_out.load(Ordering::Relaxed);
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t}")).await, parents, "every parent there");
        // Children: the seeded ones, two per writer transaction, less those of deleted parents.
        let children = count(&mut c, &format!("SELECT count(*) FROM {t}_items")).await;
        let gone = c0 + 2 * w.parents_in.load(Ordering::Relaxed) - children;
        assert!(gone >= w.parents_out.load(Ordering::Relaxed), "children of deleted parents only: {gone}");
        let orphans = count(
            &mut c,
            &format!("SELECT count(*) FROM {t}_items i WHERE NOT EXISTS (SELECT 1 FROM {t} p WHERE p.id = i.parent)"),
        )
        .await;
        assert_eq!(orphans, 0);
        assert!(converted_as_the_layout_says(&mut c, t).await > 19_000);
        // The updates of the run's time are in the table (the trigger's count came along).
        let updated = count(&mut c, &format!("SELECT coalesce(sum(n), 0) FROM {t}")).await;
        assert_eq!(updated, w.updates.load(Ordering::Relaxed), "every update is there");
        // A stored generated column (its expression depends on the table's own column, which
        // is no dependent that stays with the old table) is computed on the copy.
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t} WHERE twice IS DISTINCT FROM n * 2")).await, 0);
        assert_eq!(
            count(&mut c, &format!("SELECT count(*) FROM {t} WHERE touched <> n")).await,
            0,
            "the trigger came too"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(shape(&mut c, t).await, shape_before, "every definition as it was");
        assert_eq!(shape(&mut c, &format!("{t}_items")).await, items_before, "every definition as it was");
        // Its index is a sorted build's, not a bloated one.
        assert_eq!(after["index"]["bloated"], false, "{after}");
        let said = stderr(&out);
        assert!(said.contains(&format!("the old tables are kept as public._{t}_old, public._{t}_items_old")), "{said}");
        // The next id sorts after every converted key.
        let last: String = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT n.id::text FROM {t} n JOIN _{t}_old o USING (seq) WHERE o.note = 'seeded' ORDER BY n.id DESC LIMIT 1"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert!(Comb::new().to_string() > last, "{last}");
        // The same command after the finished run (its old tables kept): nothing to do, exit 0.
        let again = combkey_env(
            &[
                "doctor",
                "--url",
                &url,
                "--table",
                t,
                "--apply",
                "--online",
                "--triggers",
                "fire",
                "--method",
                "copy-swap",
            ],
            &[],
        );
        assert!(ok(&again).contains("nothing to do"), "{}", String::from_utf8_lossy(&again.stdout));
    }

    /// The crash tests' run: a copy and swap keeping a key map, its old tables dropped.
    fn crash_run(url: &str, t: &str, key_map: &str) -> Vec<String> {
        args(
            url,
            t,
            &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--key-map", key_map, "--drop-old"],
        )
    }

    /// The rows of `t` and its children as a DBA compares them: every column but the generated
    /// one, in one text.
    async fn contents(c: &mut PgConnection, t: &str) -> String {
        sqlx::query_scalar::<_, String>(AssertSqlSafe(format!(
            "SELECT concat_ws(E'\\n', (SELECT string_agg(concat_ws(' ', id, seq, n, note, touched), ',' ORDER BY seq) \
             FROM {t}), (SELECT string_agg(concat_ws(' ', k, parent, what), ',' ORDER BY k) FROM {t}_items))"
        )))
        .fetch_one(c)
        .await
        .unwrap()
    }

    /// A change made during the run by a session with `session_replication_role = replica` (a
    /// logical replication subscriber applying changes, pglogical): the capture triggers fire
    /// there too (ALWAYS, as pg_repack's), so the change reaches the copy (a break-test lost 300
    /// such updates, verified and swapped).
    #[tokio::test]
    async fn a_change_made_in_replica_mode_reaches_the_copy() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_replica_role";
        let mut c = connect().await;
        seed(&mut c, t, 200, 47).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let held = Held::start("BEFORE_SWAP", "replica-role", run, Vec::new()).await;
        let mut subscriber = connect().await;
        exec(&mut subscriber, "SET session_replication_role = replica").await;
        exec(&mut subscriber, &format!("UPDATE {t} SET note = 'applied by a subscriber' WHERE seq % 10 = 0")).await;
        exec(&mut subscriber, &format!("DELETE FROM {t}_items WHERE parent IN (SELECT id FROM {t} WHERE seq = 3)"))
            .await;
        exec(&mut subscriber, &format!("DELETE FROM {t} WHERE seq = 3")).await;
        let out = held.go().await;
        ok(&out);
        let changed: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT count(*) FROM {t} WHERE note = 'applied by a subscriber'"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(changed, 20, "every update there");
        let rows: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT count(*) FROM {t}"))).fetch_one(&mut c).await.unwrap();
        assert_eq!(rows, 199, "the delete there");
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// The application writes, during the copy, the key another row's key becomes (an RT.Comb
    /// key's v7 form): the copy would hold one row for both, the later write replacing the
    /// other's (a break-test lost the row so, swapped, exit 0). The run stops before its swap,
    /// naming both, with every row as the application left it and nothing of the run left.
    #[tokio::test]
    async fn a_key_written_during_the_copy_that_another_key_becomes_is_refused() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_written_twin";
        let mut c = connect().await;
        seed(&mut c, t, 300, 43).await;
        let k: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id::text FROM {t} WHERE seq = 5")))
            .fetch_one(&mut c)
            .await
            .unwrap();
        let k: Comb = k.parse().unwrap();
        let becomes = KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap().convert(&k).unwrap();
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let held = Held::start("BEFORE_SWAP", "written-twin", run, Vec::new()).await;
        exec(&mut c, &format!("INSERT INTO {t} (id, note) VALUES ('{becomes}', 'the application')")).await;
        let written = contents(&mut c, t).await;
        let out = held.go().await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("{k} and {becomes} would both become {becomes}")), "{err}");
        assert!(err.contains("Nothing was swapped") && err.contains("nothing changed"), "{err}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(contents(&mut c, t).await, written, "every row as the application left it");
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// A `TRUNCATE` during the run, after the copy: no row trigger fires for it, so the copy
    /// still held every row and the swap would have brought them back. Its statement trigger
    /// logs it; the run stops before its swap, naming the table, with the rows as the
    /// application left them (none) and nothing of the run left.
    #[tokio::test]
    async fn a_table_truncated_during_the_run_is_not_swapped_back_full() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_truncated";
        let mut c = connect().await;
        seed(&mut c, t, 300, 53).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let held = Held::start("BEFORE_SWAP", "truncated", run, Vec::new()).await;
        assert!(count(&mut c, &format!("SELECT count(*) FROM {t}_items")).await > 0, "the children to truncate");
        exec(&mut c, &format!("TRUNCATE {t}_items")).await;
        let written = contents(&mut c, t).await;
        let out = held.go().await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("public.{t}_items was truncated during the run")), "{err}");
        assert!(err.contains("nothing changed"), "{err}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t}_items")).await, 0, "no child came back");
        assert_eq!(contents(&mut c, t).await, written, "every row as the application left it");
        // Both tables (the parent's TRUNCATE cascading): both named.
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let held = Held::start("BEFORE_SWAP", "truncated-both", run, Vec::new()).await;
        exec(&mut c, &format!("TRUNCATE {t} CASCADE")).await;
        let out = held.go().await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("public.{t}, public.{t}_items were truncated during the run")), "{err}");
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t}")).await, 0, "no row came back");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// Changes the application made during the copy, more than the swap applies under its lock:
    /// applied in rounds first, each said (a break-test's step 4 ran minutes saying nothing), and
    /// every one of them in the swapped table.
    #[tokio::test]
    async fn the_rounds_before_the_swap_say_how_far_they_are() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_rounds";
        let mut c = connect().await;
        seed(&mut c, t, 1500, 71).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let held = Held::start("BEFORE_SWAP", "rounds", run, Vec::new()).await;
        exec(&mut c, &format!("UPDATE {t} SET note = 'changed during the copy'")).await;
        let out = held.go().await;
        ok(&out);
        let err = stderr(&out);
        assert!(err.contains("changes made meanwhile applied, ") && err.contains(" in the logs still"), "{err}");
        let changed = format!("SELECT count(*) FROM {t} WHERE note = 'changed during the copy'");
        assert_eq!(count(&mut c, &changed).await, 1500, "every change there");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// What comes to depend on the table during the run (a view, a new table's foreign key, a
    /// policy with row security, a publication) would stay with the old table after the swap:
    /// the view reading frozen rows, the application's writes through the foreign key failing,
    /// the policy gone from the live table, the subscriber cut off (a break-test saw each). The
    /// swap reads them again under its lock and stops, naming each, with nothing changed.
    #[tokio::test]
    async fn what_comes_to_depend_on_the_table_during_the_run_stops_the_swap() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_dependants";
        let mut c = connect().await;
        seed(&mut c, t, 200, 67).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_refunds; DROP PUBLICATION IF EXISTS {t}_pub")).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let held = Held::start("BEFORE_SWAP", "dependants", run, Vec::new()).await;
        exec(
            &mut c,
            &format!(
                "CREATE VIEW {t}_open AS SELECT id, note FROM {t} WHERE n >= 0;
                 CREATE TABLE {t}_refunds (k bigserial PRIMARY KEY, parent uuid NOT NULL REFERENCES {t} (id));
                 INSERT INTO {t}_refunds (parent) SELECT id FROM {t} WHERE seq <= 3;
                 CREATE POLICY {t}_seen ON {t} USING (n >= 0);
                 ALTER TABLE {t} ENABLE ROW LEVEL SECURITY;
                 CREATE PUBLICATION {t}_pub FOR TABLE {t}_items;"
            ),
        )
        .await;
        let written = contents(&mut c, t).await;
        let out = held.go().await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("changed by another session since the run began"), "{err}");
        for what in [
            format!("rule _RETURN on view {t}_open depends on it"),
            format!("foreign key {t}_refunds_parent_fkey of {t}_refunds references it"),
            "row-level security is on for it".to_string(),
            format!("publication {t}_pub publishes it"),
        ] {
            assert!(err.contains(&what), "{what}: {err}");
        }
        assert!(err.contains("nothing changed"), "{err}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(contents(&mut c, t).await, written, "every row as it was");
        // The application's writes through the new foreign key go on.
        exec(&mut c, &format!("INSERT INTO {t}_refunds (parent) SELECT id FROM {t} WHERE seq = 4")).await;
        exec(
            &mut c,
            &format!(
                "DROP PUBLICATION {t}_pub; DROP VIEW {t}_open; DROP TABLE {t}_refunds, {t}_items, {t}; \
                 DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader"
            ),
        )
        .await;
    }

    /// A copy that is not the table is never swapped in: a copied row changed (or one gone)
    /// after the copy, before its check, or a row the application changed meanwhile changed
    /// again in the copy once its change was applied (through the test build's statement
    /// hooks). Each run stops before its swap with the table as it was and nothing of the run
    /// left; a run without the hooks says how many rows of each table it compared.
    #[tokio::test]
    async fn a_copy_that_is_not_the_table_is_never_swapped() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_verify";
        let mut c = connect().await;
        seed(&mut c, t, 300, 37).await;
        let before = contents(&mut c, t).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        for (hook, sql, said) in [
            (
                "COMBKEY_DOCTOR_SQL_BEFORE_VERIFY",
                "UPDATE {copy} SET note = 'not seeded' WHERE seq = 7",
                format!(
                    "the copy of public.{t} is not the table: 300 rows in the copy's snapshot, 300 copied, and their rows' hashes differ"
                ),
            ),
            (
                "COMBKEY_DOCTOR_SQL_BEFORE_VERIFY",
                "DELETE FROM {copy} WHERE seq = 8",
                format!("the copy of public.{t} is not the table: 300 rows in the copy's snapshot, 299 copied"),
            ),
        ] {
            let out = combkey_env(&run, &[(hook, sql)]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{sql}: {err}");
            assert!(err.contains(&said) && err.contains("nothing changed"), "{sql}: {err}");
            assert!(leftovers(&mut c, t).await.is_empty(), "{sql}: {:?}", leftovers(&mut c, t).await);
            assert_eq!(contents(&mut c, t).await, before, "{sql}: nothing changed");
        }

        // A change made during the run, applied, then its copy changed: held before the swap.
        let env = vec![(
            "COMBKEY_DOCTOR_SQL_AFTER_APPLY".to_string(),
            "UPDATE {copy} SET note = 'lost' WHERE note = 'changed'".to_string(),
        )];
        let held = Held::start("BEFORE_SWAP", "verify", run.iter().map(|s| (*s).to_string()).collect(), env).await;
        exec(&mut c, &format!("UPDATE {t} SET note = 'changed' WHERE seq = 9")).await;
        let changed = contents(&mut c, t).await;
        let out = held.go().await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("1 of the 1 rows of public.{t} that the application changed during the run differ")),
            "{err}"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(contents(&mut c, t).await, changed, "nothing changed");

        // Without the hooks: swapped, every row compared.
        let out = combkey_env(&[&run[..], &["--json"]].concat(), &[]);
        let done = json(&out);
        assert_eq!(
            done["online"]["verified_rows"],
            serde_json::json!({ format!("public.{t}"): 300, format!("public.{t}_items"): 150 }),
            "{done}"
        );
        assert!(
            stderr(&out).contains(&format!("rows compared with their copies: public.{t} 300, public.{t}_items 150"))
        );
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 300)], "every key converted: {audit}");
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// PostgreSQL's journal is UNLOGGED, so a server crash empties it; the run's row is also
    /// kept as its mapping table's comment, written with the swap. A copy and swap stopped
    /// right after its swap, its journal row then gone (as a crash leaves it): the same command
    /// finishes it, with every pair in the key map, where the run was once taken for done and
    /// the key map never filled. Stopped before its swap, its row gone: the run is refused with
    /// the advice to abandon it, and --abandon (following that advice) leaves the table as it was.
    #[tokio::test]
    async fn a_run_whose_journal_a_crash_emptied_is_taken_up_again() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_crash";
        let mut c = connect().await;
        seed(&mut c, t, 200, 31).await;
        let key_map = format!("combkey_keymap_{t}");
        exec(&mut c, &format!("DROP TABLE IF EXISTS {key_map}")).await;
        let run = crash_run(&url, t, &key_map);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let forget = format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%'");

        // Before the swap.
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "4")]);
        assert!(stderr(&stopped).contains("stopping after phase 4"), "{}", stderr(&stopped));
        exec(&mut c, &forget).await;
        let again = combkey_env(&run, &[]);
        assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
        let said = stderr(&again);
        assert!(said.contains("stopped before its swap") && said.contains("--abandon"), "{said}");
        let abandoned = ok(&combkey_env(&["doctor", "--url", &url, "--table", t, "--abandon"], &[]));
        assert!(abandoned.contains("abandoned"), "{abandoned}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("rtcomb-sql".to_string(), 200)], "the keys as they were: {audit}");

        // After the swap.
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "5")]);
        assert!(stderr(&stopped).contains("stopping after phase 5"), "it stopped after its swap: {}", stderr(&stopped));
        exec(&mut c, &forget).await;
        ok(&combkey_env(&run, &[]));
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 200)], "every key converted: {audit}");
        let pairs = count(&mut c, &format!("SELECT count(*) FROM {key_map} m JOIN {t} p ON p.id = m.new_key")).await;
        assert_eq!(pairs, 200, "every converted key's pair in the key map");
        seed(&mut c, t, 1, 31).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_items, {t}, {key_map} CASCADE")).await;
    }

    /// A real crash (the server stopped at once, as a power cut stops it, and started again)
    /// right after the swap: it empties the UNLOGGED journal, and the same command finishes the
    /// run from the row's copy on the mapping table, with every pair in the key map.
    #[tokio::test]
    async fn a_server_crash_after_the_swap_loses_no_pair_of_the_key_map() {
        let url = combkey_testutil::url("COMBKEY_PGCRASH_URL");
        let t = "swap_pg_restart";
        let mut c = PgConnection::connect(&url).await.unwrap();
        seed(&mut c, t, 300, 42).await;
        let key_map = format!("combkey_keymap_{t}");
        exec(&mut c, &format!("DROP TABLE IF EXISTS {key_map}")).await;
        let run = crash_run(&url, t, &key_map);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "5")]);
        assert!(stderr(&stopped).contains("stopping after phase 5"), "it stopped after its swap: {}", stderr(&stopped));
        drop(c);
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pgcrash.sh");
        let crashed = Command::new("bash").arg(script).arg("crash").output().expect("scripts/pgcrash.sh");
        assert!(crashed.status.success(), "{}", String::from_utf8_lossy(&crashed.stderr));
        let mut c = PgConnection::connect(&url).await.unwrap();
        let rows =
            count(&mut c, &format!("SELECT count(*) FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%'")).await;
        assert_eq!(rows, 0, "the crash emptied the journal (it is UNLOGGED)");
        ok(&combkey_env(&run, &[]));
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 300)], "every key converted: {audit}");
        let pairs = count(&mut c, &format!("SELECT count(*) FROM {key_map} m JOIN {t} p ON p.id = m.new_key")).await;
        assert_eq!(pairs, 300, "every converted key's pair in the key map");
        exec(
            &mut c,
            &format!("DROP TABLE IF EXISTS {t}_items, {t}, {key_map} CASCADE; DROP ROLE IF EXISTS {t}_reader"),
        )
        .await;
        exec(&mut c, &format!("DROP FUNCTION IF EXISTS {t}_touch() CASCADE")).await;
    }

    /// A report holds a table the parent's foreign key references (not one of the tables the
    /// run converts): the swap's statements lock it too (the foreign key moves to the copy), and
    /// once waited for it for the whole --lock-timeout holding the converted tables, every
    /// writer behind. Now the swap waits without asking, naming the session, and writes go on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_report_on_a_referenced_table_never_puts_the_writers_behind_the_swap() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_refd";
        let mut c = connect().await;
        seed(&mut c, t, 500, 43).await;
        exec(
            &mut c,
            &format!(
                "DROP TABLE IF EXISTS {t}_cust CASCADE; CREATE TABLE {t}_cust (k int PRIMARY KEY, n int NOT NULL DEFAULT 0);
                 INSERT INTO {t}_cust (k) VALUES (1); ALTER TABLE {t} ADD COLUMN cust int REFERENCES {t}_cust (k);
                 UPDATE {t} SET cust = 1"
            ),
        )
        .await;
        let mut report = connect().await;
        exec(&mut report, &format!("BEGIN; SELECT count(*) FROM {t}_cust")).await;
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut report).await.unwrap();
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let mut doctor =
            combkey_testutil::Running::start(Command::new(env!("CARGO_BIN_EXE_combkey")).args(ready(&run)));
        doctor.wait_for_line(
            &["waiting to swap", &format!("session {pid} "), &format!("{t}_cust")],
            std::time::Duration::from_secs(300),
        );
        exec(&mut c, "SET lock_timeout = '50ms'").await;
        for i in 1..=10 {
            let queued = format!(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation IN ('{t}'::regclass, '{t}_items'::regclass, \
                 '{t}_cust'::regclass)"
            );
            assert_eq!(count(&mut c, &queued).await, 0, "a lock request waits");
            exec(&mut c, &format!("UPDATE {t} SET note = 'written meanwhile' WHERE seq = {i}")).await;
            exec(&mut c, &format!("UPDATE {t}_cust SET n = n + 1 WHERE k = 1")).await;
        }
        exec(&mut c, "RESET lock_timeout").await;
        exec(&mut report, "COMMIT").await;
        let (done, said) = doctor.finish(std::time::Duration::from_secs(300));
        assert!(done, "{said}");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 500)], "every key converted: {audit}");
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t} WHERE note = 'written meanwhile'")).await, 10);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        seed(&mut c, t, 1, 43).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_items, {t}, {t}_cust CASCADE; DROP ROLE IF EXISTS {t}_reader"))
            .await;
    }

    /// `pg_dump --schema-only` of the tables, as a DBA compares them.
    fn schema_dump(url: &str, tables: &[&str]) -> String {
        let mut cmd = Command::new("pg_dump");
        cmd.arg("--schema-only");
        for t in tables {
            cmd.args(["--table", t]);
        }
        let out = cmd.arg(url).output().expect("pg_dump (PostgreSQL's client)");
        assert!(out.status.success(), "pg_dump: {}", String::from_utf8_lossy(&out.stderr));
        // Its header names the server's and pg_dump's versions, and PostgreSQL 17 prints a
        // \restrict line with a random key: neither is the tables'.
        // A held run's capture (and TRUNCATE) triggers are its own, not the tables'.
        let text: String = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with("-- Dumped") && !l.starts_with("\\restrict") && !l.starts_with("\\unrestrict"))
            .collect::<Vec<_>>()
            .join("\n");
        text.split("\n--\n-- Name: ")
            .filter(|part| !part.contains("combkey_doctor_capture") && !part.contains("combkey_doctor_truncate"))
            .collect::<Vec<_>>()
            .join("\n-- Name: ")
    }

    /// The tables' extended statistics (which `pg_dump --table` leaves out): names, schemas,
    /// targets, columns, kinds.
    async fn statistics(c: &mut PgConnection, tables: &[&str]) -> String {
        let list = tables.iter().map(|t| format!("'{t}'::regclass")).collect::<Vec<_>>().join(", ");
        sqlx::query_scalar::<_, Option<String>>(AssertSqlSafe(format!(
            "SELECT string_agg(stxnamespace::regnamespace::text || '.' || stxname || ' ON ' || stxrelid::regclass::text ||              ' target ' || coalesce(stxstattarget, -1)::text || ' ' || pg_get_statisticsobjdef_columns(oid) || ' ' ||              stxkind::text, E'\\n' ORDER BY stxname) FROM pg_statistic_ext WHERE stxrelid IN ({list})"
        )))
        .fetch_one(c)
        .await
        .unwrap()
        .unwrap_or_default()
    }

    /// Everything `pg_dump --schema-only` shows of the tables is the same after the swap
    /// (statistics targets, `n_distinct`, `CLUSTER ON`, extended statistics with their names
    /// and targets, storage parameters with the TOAST table's, column comments, grants), where
    /// they were once lost or renamed; and what another session changed of that during the copy
    /// (a grant, a column's comment, a statistics target, a storage parameter, `CLUSTER ON`) is
    /// carried to the swapped-in table. Extended statistics made during the copy stop the swap
    /// with nothing changed.
    #[tokio::test]
    async fn the_table_after_the_swap_is_the_table_pg_dump_showed() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_dump";
        let mut c = connect().await;
        seed(&mut c, t, 500, 41).await;
        exec(
            &mut c,
            &format!(
                "ALTER TABLE {t} ALTER COLUMN n SET STATISTICS 500;
                 ALTER TABLE {t} ALTER COLUMN note SET (n_distinct = -0.5);
                 CREATE STATISTICS {t}_n_note (ndistinct, dependencies) ON n, note FROM {t};
                 ALTER STATISTICS {t}_n_note SET STATISTICS 300;
                 ALTER TABLE {t} CLUSTER ON {t}_seq_key;
                 ALTER TABLE {t} SET (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.05, toast.autovacuum_enabled = false);
                 COMMENT ON COLUMN {t}.note IS 'a note';
                 ALTER TABLE {t} ENABLE ALWAYS TRIGGER {t}_touch;
                 CREATE TRIGGER {t}_touch_replica BEFORE UPDATE OF note ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_touch();
                 ALTER TABLE {t} ENABLE REPLICA TRIGGER {t}_touch_replica;
                 ALTER TABLE {t}_items ALTER COLUMN what SET STATISTICS 42;"
            ),
        )
        .await;
        let tables = [t, &format!("{t}_items")];
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);

        // Extended statistics made during the copy: the swap stops, nothing changed.
        let held = Held::start("BEFORE_SWAP", "dump", run.clone(), Vec::new()).await;
        exec(&mut c, &format!("CREATE STATISTICS {t}_late ON n, seq FROM {t}")).await;
        let before = (schema_dump(&url, &tables), statistics(&mut c, &tables).await);
        let out = held.go().await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(&format!("{t}_late")), "{}", stderr(&out));
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!((schema_dump(&url, &tables), statistics(&mut c, &tables).await), before, "nothing changed");
        exec(&mut c, &format!("DROP STATISTICS {t}_late")).await;

        // Changes during the copy are carried over.
        let held = Held::start("BEFORE_SWAP", "dump", run.clone(), Vec::new()).await;
        exec(
            &mut c,
            &format!(
                "GRANT INSERT, UPDATE ON {t} TO {t}_reader;
                 COMMENT ON COLUMN {t}.n IS 'how many';
                 ALTER TABLE {t} ALTER COLUMN seq SET STATISTICS 50;
                 ALTER TABLE {t} ALTER COLUMN note RESET (n_distinct);
                 ALTER TABLE {t} ALTER COLUMN n SET (n_distinct = 100);
                 ALTER TABLE {t}_items SET (fillfactor = 80);
                 ALTER TABLE {t} CLUSTER ON {t}_pkey;"
            ),
        )
        .await;
        let before = schema_dump(&url, &tables);
        let stats_before = statistics(&mut c, &tables).await;
        assert!(stats_before.contains(&format!("public.{t}_n_note ON {t} target 300")), "{stats_before}");
        let out = held.go().await;
        ok(&out);
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 500)], "every key converted: {audit}");
        let after = schema_dump(&url, &tables);
        if after != before {
            let diff: Vec<String> = before
                .lines()
                .filter(|l| !after.lines().any(|a| a == *l))
                .map(|l| format!("- {l}"))
                .chain(after.lines().filter(|l| !before.lines().any(|b| b == *l)).map(|l| format!("+ {l}")))
                .collect();
            panic!("pg_dump differs after the swap:\n{}", diff.join("\n"));
        }
        assert_eq!(statistics(&mut c, &tables).await, stats_before, "the extended statistics as they were");
        seed(&mut c, t, 1, 41).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_items, {t} CASCADE; DROP ROLE IF EXISTS {t}_reader")).await;
    }

    /// A report holds the table in an open transaction while the run reaches its swap (where
    /// every writer once stalled about 4 s at each of the swap's lock attempts, queued behind
    /// them): the swap waits without queueing for the lock, naming the report's session, and the
    /// application's writes go on, none behind a lock request of the run; past --swap-wait the
    /// run stops with nothing swapped, its copy kept; the same command again goes on from it, and
    /// once the report ends the swap goes through.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_report_holding_the_table_never_puts_the_writers_behind_the_swap() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_reader";
        let mut c = connect().await;
        seed(&mut c, t, 2000, 40).await;
        let mut report = connect().await;
        exec(&mut report, &format!("BEGIN; SELECT count(*) FROM {t}")).await;
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut report).await.unwrap();
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();

        let mut short = run.clone();
        short.extend(["--swap-wait", "1s"]);
        let gave_up = combkey_env(&short, &[]);
        assert_eq!(gave_up.status.code(), Some(1), "{}", stderr(&gave_up));
        let said = stderr(&gave_up);
        assert!(said.contains("--swap-wait") && said.contains(&format!("session {pid} ")), "{said}");
        // Its copy stays for the same command to go on from (removing it needs the same locks).
        assert!(said.contains("nothing was swapped") && said.contains("run the same command again"), "{said}");
        assert!(!leftovers(&mut c, t).await.is_empty(), "the copy is kept");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("rtcomb-sql".to_string(), 2000)], "the keys as they were: {audit}");

        let mut doctor =
            combkey_testutil::Running::start(Command::new(env!("CARGO_BIN_EXE_combkey")).args(ready(&run)));
        doctor.wait_for_line(&["waiting to swap", &format!("session {pid} ")], std::time::Duration::from_secs(300));
        writes_go_through(&mut c, t, 1..=20, "written while the report reads", true).await;
        exec(&mut report, "COMMIT").await;
        let (done, said) = doctor.finish(std::time::Duration::from_secs(300));
        assert!(done, "{said}");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 2000)], "every key converted: {audit}");
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t}_items WHERE what = 'written'")).await, 20);
        assert_eq!(
            count(&mut c, &format!("SELECT count(*) FROM {t} WHERE note = 'written while the report reads'")).await,
            20
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        seed(&mut c, t, 1, 40).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_items, {t} CASCADE; DROP ROLE IF EXISTS {t}_reader")).await;
    }

    /// A long transaction that writes to the table when the run begins: the run's first lock
    /// (for its triggers) waits for it without asking for the lock (each attempt made the
    /// application's writes queue behind it, up to half a second a time), says for whom, and
    /// goes on once it ends.
    #[tokio::test]
    async fn a_long_writer_when_the_run_begins_never_puts_the_writers_behind_its_first_lock() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_long_writer";
        let mut c = connect().await;
        seed(&mut c, t, 500, 57).await;
        let mut holder = connect().await;
        exec(&mut holder, &format!("BEGIN; UPDATE {t} SET note = 'held' WHERE seq = 1")).await;
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut holder).await.unwrap();
        // Long: open for more than a second (the run's measure of a long holder).
        let long = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = {pid} AND xact_start < clock_timestamp() - interval '1100 ms'"
        );
        while count(&mut c, &long).await == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let run = args(
            &url,
            t,
            &[
                "--apply",
                "--online",
                "--method",
                "copy-swap",
                "--triggers",
                "fire",
                "--drop-old",
                "--lock-timeout",
                "300s",
            ],
        );
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let mut doctor =
            combkey_testutil::Running::start(Command::new(env!("CARGO_BIN_EXE_combkey")).args(ready(&run)));
        doctor.wait_for_line(&["waiting for a lock", &format!("session {pid} ")], std::time::Duration::from_secs(300));
        writes_go_through(&mut c, t, 2..=21, "written meanwhile", false).await;
        exec(&mut holder, "COMMIT").await;
        let (done, said) = doctor.finish(std::time::Duration::from_secs(300));
        assert!(done, "{said}");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 500)], "every key converted: {audit}");
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t} WHERE note = 'written meanwhile'")).await, 20);
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t} WHERE note = 'held'")).await, 1);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// Autovacuum at work on the table when the run asks for its lock: PostgreSQL cancels an
    /// autovacuum worker that a lock request waits behind, but the run never waits in the
    /// queue, so it waited for the vacuum to end (on a large table, longer than any lock
    /// timeout) and stopped. It cancels the worker itself, says so, and goes on.
    #[tokio::test]
    async fn autovacuum_on_the_table_gives_way_to_the_run() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_autovacuum";
        let mut c = connect().await;
        seed(&mut c, t, 1000, 59).await;
        // A vacuum that takes minutes (100 ms asleep after each page), due at once.
        exec(
            &mut c,
            &format!(
                "ALTER TABLE {t} SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0, \
                 autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1, autovacuum_analyze_threshold = 1000000000); \
                 UPDATE {t} SET note = repeat('x', 1800)"
            ),
        )
        .await;
        let working = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: VACUUM%{t}' \
             AND now() - xact_start > interval '2 s'"
        );
        // The launcher visits the database once a minute (autovacuum_naptime); a worker under
        // way for 2 s is in its throttled vacuum of the table (one seen at once may end before
        // the run begins).
        let waited = std::time::Instant::now();
        while count(&mut c, &working).await == 0 {
            assert!(waited.elapsed().as_secs() < 180, "autovacuum never started on {t}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--triggers", "fire", "--drop-old"]);
        let out = run_doctor(run, Vec::new()).await;
        let said = ok(&out);
        let err = stderr(&out);
        assert!(err.contains(&format!("cancelled autovacuum: VACUUM public.{t}")), "{said}\n{err}");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 1000)], "every key converted: {audit}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// --kill-blockers-after: a report left idle in its transaction on the table is waited
    /// for that long, its statement cancelled (which does not end an idle transaction), then,
    /// at twice the wait, its session ended, each said; the swap follows.
    #[tokio::test]
    async fn kill_blockers_after_ends_a_report_that_holds_the_table() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_kill_blockers";
        let mut c = connect().await;
        seed(&mut c, t, 300, 61).await;
        let mut report = connect().await;
        exec(&mut report, &format!("BEGIN; SELECT count(*) FROM {t}")).await;
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut report).await.unwrap();
        let run = args(
            &url,
            t,
            &[
                "--apply",
                "--online",
                "--method",
                "copy-swap",
                "--triggers",
                "fire",
                "--drop-old",
                "--kill-blockers-after",
                "1s",
            ],
        );
        let out = run_doctor(run, Vec::new()).await;
        let said = ok(&out);
        let err = stderr(&out);
        assert_eq!(
            err.matches(&format!("cancelled the statements of session {pid} (")).count(),
            1,
            "cancelled once: {said}\n{err}"
        );
        assert!(err.contains(&format!("ended session {pid} (")), "{said}\n{err}");
        assert!(err.contains("past --kill-blockers-after 1 s"), "{err}");
        assert_eq!(
            count(&mut c, &format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}")).await,
            0,
            "ended"
        );
        assert!(sqlx::query("SELECT 1").execute(&mut report).await.is_err(), "the report's session is gone");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("v7".to_string(), 300)], "every key converted: {audit}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// While a run waits for a lock: no lock request queued on the tables, and writes that
    /// would give up at once behind one go through (rows `seq` get `note`; with `children`, a
    /// child `written` each).
    async fn writes_go_through(
        c: &mut PgConnection,
        t: &str,
        seq: std::ops::RangeInclusive<i32>,
        note: &str,
        children: bool,
    ) {
        exec(c, "SET lock_timeout = '50ms'").await;
        for i in seq {
            let queued = format!(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation IN ('{t}'::regclass, '{t}_items'::regclass)"
            );
            assert_eq!(count(c, &queued).await, 0, "a lock request waits on the tables");
            exec(c, &format!("UPDATE {t} SET note = '{note}' WHERE seq = {i}")).await;
            if children {
                exec(c, &format!("INSERT INTO {t}_items (parent, what) SELECT id, 'written' FROM {t} WHERE seq = {i}"))
                    .await;
            }
        }
        exec(c, "RESET lock_timeout").await;
    }

    fn layouts_of(r: &Value) -> Vec<(String, u64)> {
        r["layouts"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect()
    }

    /// Stopped after each phase (and after a chunk of the copy), as a kill stops it: before the
    /// swap the application sees the tables as they were and goes on writing to them; a second
    /// run finishes, with the rows written in between converted too.
    #[tokio::test]
    async fn stopped_at_any_phase_a_second_run_finishes() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        for (k, (var, n)) in
            [("CHUNK", 1), ("PHASE", 1), ("PHASE", 3), ("PHASE", 4), ("PHASE", 5)].into_iter().enumerate()
        {
            let t = format!("swap_pg_stop{k}");
            let t = t.as_str();
            seed(&mut c, t, 3000, 10 + k as u64).await;
            let stopped = combkey_env(
                &[
                    "doctor",
                    "--url",
                    &url,
                    "--table",
                    t,
                    "--apply",
                    "--online",
                    "--triggers",
                    "fire",
                    "--method",
                    "copy-swap",
                ],
                &[(&format!("COMBKEY_DOCTOR_FAIL_AFTER_{var}"), &n.to_string())],
            );
            assert!(!stopped.status.success(), "it stopped: {}", stderr(&stopped));
            let swapped =
                count(&mut c, &format!("SELECT count(*) FROM pg_class WHERE relname = '_{t}_old'")).await == 1;
            assert_eq!(swapped, var == "PHASE" && n == 5, "{var} {n}");
            // The application goes on: a row it writes before the swap with the old layout is
            // converted by the second run (after the swap it writes to the converted table).
            let late = RtCombLayout::Sql.create(Timestamp::now(), Comb::new_v4()).unwrap();
            if !swapped {
                exec(&mut c, &format!("INSERT INTO {t} (id, note) VALUES ('{late}', 'late')")).await;
            }
            let second = combkey_env(
                &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--triggers", "fire", "--json"],
                &[],
            );
            // What the second run says of the copy: its own, or the first run's.
            let copied_before = var == "PHASE" && n >= 3;
            assert_eq!(
                stderr(&second).contains("the earlier run had copied the rows"),
                copied_before,
                "{var} {n}: {}",
                stderr(&second)
            );
            let done = json(&second);
            assert!(layouts_of(&done).iter().all(|(l, _)| l != "rtcomb-sql"), "{var} {n}: {done}");
            if !swapped {
                let late_now: String =
                    sqlx::query_scalar(AssertSqlSafe(format!("SELECT id::text FROM {t} WHERE note = 'late'")))
                        .fetch_one(&mut c)
                        .await
                        .unwrap();
                let m = KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap();
                assert_eq!(late_now, m.convert(&late).unwrap().to_string(), "{var} {n}: the late row converted");
            }
            assert!(leftovers(&mut c, t).await.is_empty(), "{var} {n}: {:?}", leftovers(&mut c, t).await);
            let invalid = count(
                &mut c,
                &format!(
                    "SELECT count(*) FROM pg_constraint WHERE conrelid = '{t}_items'::regclass AND NOT convalidated"
                ),
            )
            .await;
            assert_eq!(invalid, 0, "{var} {n}: the foreign key validated");
        }
    }

    /// v1 keys, whose conversion drops bits: the key map holds every old key with the new one
    /// combkey makes of it, whether the run makes it (from its mapping table) or finds one
    /// with rows of an earlier run (they stay), and when stopped right after the swap or right
    /// after the key map is filled, the second run leaves it whole.
    #[tokio::test]
    async fn v1_keys_leave_the_key_map_whole() {
        use combkey::FixedClock;
        use combkey::layouts::V1Generator;
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        let clock = Arc::new(FixedClock::new(Timestamp::now().saturating_add_ms(-3_600_000)));
        let g = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(41));
        let old: Vec<Comb> = (0..1500)
            .map(|_| {
                clock.advance(std::time::Duration::from_millis(7));
                g.generate()
            })
            .collect();
        let m = KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let mut want: Vec<(String, String)> =
            old.iter().map(|o| (o.to_string(), m.convert(o).unwrap().to_string())).collect();
        want.sort();
        for (k, (stop, earlier)) in
            [(None, false), (None, true), (Some(5), false), (Some(6), false)].into_iter().enumerate()
        {
            let t = format!("swap_pg_v1_{k}");
            let t = t.as_str();
            let map = format!("combkey_keymap_{t}");
            v1_tables(&mut c, t, "note text").await;
            let texts: Vec<String> = old.iter().map(ToString::to_string).collect();
            sqlx::query(AssertSqlSafe(format!("INSERT INTO {t} (id) SELECT u::uuid FROM UNNEST($1::text[]) u")))
                .bind(&texts)
                .execute(&mut c)
                .await
                .unwrap();
            exec(&mut c, &format!("INSERT INTO {t}_items (parent) SELECT id FROM {t}")).await;
            let mut expected = want.clone();
            if earlier {
                // A key map an earlier run left, with a key no longer in the table.
                let gone = (
                    "00000000-0000-1000-8000-000000000001".to_string(),
                    "01890000-0000-7000-8000-000000000001".to_string(),
                );
                exec(
                    &mut c,
                    &format!(
                        "CREATE TABLE {map} (old_key uuid PRIMARY KEY, new_key uuid NOT NULL UNIQUE);
                         COMMENT ON TABLE {map} IS 'combkey doctor: the old and the new key of every key of public.{t}.id it converted (v1 -> v7)';
                         INSERT INTO {map} VALUES ('{}', '{}')",
                        gone.0, gone.1
                    ),
                )
                .await;
                expected.push(gone);
                expected.sort();
            }
            let run = ["doctor", "--url", &url, "--table", t, "--apply", "--online", "--method", "copy-swap"];
            if let Some(n) = stop {
                let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", &n.to_string())]);
                assert!(!stopped.status.success(), "{k}: it stopped: {}", stderr(&stopped));
            }
            ok(&combkey_env(&run, &[]));
            let kept: Vec<(String, String)> = sqlx::query_as(AssertSqlSafe(format!(
                "SELECT old_key::text, new_key::text FROM {map} ORDER BY old_key::text"
            )))
            .fetch_all(&mut c)
            .await
            .unwrap();
            assert_eq!(kept.len(), expected.len(), "{k}");
            assert!(kept == expected, "{k}: the key map holds every old key with combkey's new one");
            // The key map is the table a key map is (what the offline run makes).
            assert_eq!(
                count(
                    &mut c,
                    &format!(
                        "SELECT count(*) FROM pg_constraint WHERE conrelid = '{map}'::regclass AND conname IN \
                         ('{map}_pkey', '{map}_new_key_key')"
                    )
                )
                .await,
                2,
                "{k}"
            );
            let ids: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id::text FROM {t} ORDER BY id")))
                .fetch_all(&mut c)
                .await
                .unwrap();
            let mut converted: Vec<String> = want.iter().map(|(_, n)| n.clone()).collect();
            converted.sort();
            assert_eq!(ids, converted, "{k}");
            assert!(leftovers(&mut c, t).await.is_empty(), "{k}: {:?}", leftovers(&mut c, t).await);
        }
    }

    /// A parent `t` of `uuid` keys with `column` beside them and children referencing it, made
    /// afresh (what an earlier run of it left, its key map and journal row too).
    async fn v1_tables(c: &mut PgConnection, t: &str, column: &str) {
        let map = format!("combkey_keymap_{t}");
        exec(
            c,
            &format!(
                "DROP TABLE IF EXISTS {t}_items, {t}, _{t}_old, _{t}_items_old, _{t}_new, _{t}_items_new, _{t}_map, \
                 _{t}_log, _{t}_items_log, {map} CASCADE;
                 DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%';
                 CREATE TABLE {t} (id uuid PRIMARY KEY, {column});
                 CREATE TABLE {t}_items (k bigserial PRIMARY KEY, parent uuid NOT NULL REFERENCES {t} (id));
                 CREATE INDEX ON {t}_items (parent);"
            ),
        )
        .await;
    }

    /// v1 keys of every part of the span the audit finds plausible (1995 to a day from now,
    /// its edges, every sub-millisecond tick, clock sequences and nodes of all zeros and all
    /// ones) become what the core's `KeyMigration` makes of them; v1 keys of a time out of the
    /// span or of another variant stay, and so do v4 and v7 keys.
    #[tokio::test]
    async fn v1_keys_over_their_whole_span_become_what_combkey_makes() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        let t = "swap_pg_v1_span";
        let map = format!("combkey_keymap_{t}");
        let r = SeededRandom::new(0x5eed_0f5a);
        const G: i64 = 122_192_928_000_000_000;
        let earliest = 788_918_400_000_i64 * 10_000 + G;
        let now = Timestamp::now().unix_ms() * 10_000 + G;
        let day = 86_400_000_i64 * 10_000;
        let v1 = combkey_testutil::v1_id;
        let random = |r: &SeededRandom| {
            let mut x = [0u8; 8];
            r.fill_bytes(&mut x);
            u64::from_be_bytes(x)
        };
        let node = |r: &SeededRandom| {
            let mut n = [0u8; 6];
            r.fill_bytes(&mut n);
            n
        };
        // (key, whether it converts)
        let mut keys: Vec<(Comb, bool)> = Vec::new();
        for i in 0..4000_i64 {
            let span = u64::try_from(now - earliest).unwrap();
            let ticks = earliest + i64::try_from(random(&r) % span).unwrap();
            let cs = u16::try_from(random(&r) % 0x4000).unwrap();
            keys.push((v1(ticks, 0x80, cs, node(&r)), true));
            // Every sub-millisecond tick, the two low ones and the two high ones of a millisecond.
            let ms = ticks - (ticks - G).rem_euclid(10_000);
            keys.push((v1(ms + (i % 10_000), 0x80, cs, node(&r)), true));
        }
        for (ticks, cs, n) in [
            (earliest, 0, [0u8; 6]),
            (earliest + 9_999, 0x3fff, [0xff; 6]),
            (earliest + 10_000, 0x2aaa, [0xfc, 0, 0, 0, 0, 1]),
            (now, 0x1555, [0x03, 0xff, 0xff, 0xff, 0xff, 0xfe]),
            (now + day / 2, 7, [1, 2, 3, 4, 5, 6]),
        ] {
            keys.push((v1(ticks, 0x80, cs, n), true));
        }
        // Out of the span, another variant: left to combkey, which keeps them.
        keys.push((v1(earliest - 1, 0x80, 1, [9; 6]), false));
        keys.push((v1(earliest - 10_000 * 86_400_000, 0x80, 2, [9; 6]), false));
        keys.push((v1(now + 2 * day, 0x80, 3, [9; 6]), false));
        keys.push((v1(now - day, 0xc0, 4, [9; 6]), false));
        keys.push((v1(now - day, 0x00, 5, [9; 6]), false));
        // Keys that stay whatever.
        keys.push((Comb::new_v4(), false));
        keys.push((Comb::new(), false));
        let m = KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let want: Vec<String> =
            keys.iter().map(|(k, converts)| if *converts { m.convert(k).unwrap() } else { *k }.to_string()).collect();
        v1_tables(&mut c, t, "seq int NOT NULL").await;
        let texts: Vec<String> = keys.iter().map(|(k, _)| k.to_string()).collect();
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {t} (id, seq) SELECT u::uuid, n FROM UNNEST($1::text[]) WITH ORDINALITY AS x (u, n)"
        )))
        .bind(&texts)
        .execute(&mut c)
        .await
        .unwrap();
        exec(&mut c, &format!("INSERT INTO {t}_items (parent) SELECT id FROM {t} WHERE seq % 3 = 0")).await;
        let out =
            combkey_env(&["doctor", "--url", &url, "--table", t, "--apply", "--online", "--method", "copy-swap"], &[]);
        ok(&out);
        let ids: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id::text FROM {t} ORDER BY seq")))
            .fetch_all(&mut c)
            .await
            .unwrap();
        assert_eq!(ids.len(), want.len());
        let wrong: Vec<String> = ids
            .iter()
            .zip(&want)
            .zip(&keys)
            .filter(|((got, want), _)| got != want)
            .take(5)
            .map(|((got, want), (old, _))| format!("{old}: {got}, combkey makes {want}"))
            .collect();
        assert!(wrong.is_empty(), "{wrong:?}");
        let mut pairs: Vec<(String, String)> = keys
            .iter()
            .zip(&want)
            .filter(|((_, converts), _)| *converts)
            .map(|((old, _), new)| (old.to_string(), new.clone()))
            .collect();
        pairs.sort();
        let kept: Vec<(String, String)> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT old_key::text, new_key::text FROM {map} ORDER BY old_key::text"
        )))
        .fetch_all(&mut c)
        .await
        .unwrap();
        assert!(kept == pairs, "the key map holds every converted key's pair, and only those");
        assert_eq!(
            count(
                &mut c,
                &format!(
                    "SELECT count(*) FROM {t}_items i WHERE NOT EXISTS (SELECT 1 FROM {t} p WHERE p.id = i.parent)"
                )
            )
            .await,
            0
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}, _{t}_items_old, _{t}_old, {map}")).await;
    }

    /// A stopped run abandoned: its tables, triggers and functions go, the table is as it was.
    #[tokio::test]
    async fn a_stopped_run_is_abandoned_and_the_table_is_as_it_was() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_abandon";
        let mut c = connect().await;
        seed(&mut c, t, 2000, 30).await;
        let before = shape(&mut c, t).await;
        let keys = count(&mut c, &format!("SELECT count(*) FROM {t} WHERE id::text LIKE '%'")).await;
        let stopped = combkey_env(
            &[
                "doctor",
                "--url",
                &url,
                "--table",
                t,
                "--apply",
                "--online",
                "--triggers",
                "fire",
                "--method",
                "copy-swap",
            ],
            &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "4")],
        );
        assert!(!stopped.status.success());
        assert!(!leftovers(&mut c, t).await.is_empty(), "the stopped run left its objects");
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(audit["unfinished_online"], true, "{audit}");
        let out = ok(&combkey_env(&["doctor", "--url", &url, "--table", t, "--abandon"], &[]));
        assert!(out.contains("abandoned"), "{out}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(shape(&mut c, t).await, before);
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t}")).await, keys);
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(audit["unfinished_online"], false, "{audit}");
        let again = ok(&combkey_env(&["doctor", "--url", &url, "--table", t, "--abandon"], &[]));
        assert!(again.contains("nothing to abandon"), "{again}");
    }

    /// A schema, table and column whose names need quotes (a space, upper case, a quote): the
    /// run swaps, fills the key map and ends done, and names the kept tables as a statement
    /// takes them. (After the swap the key map's check cast the schema's name to regnamespace
    /// unquoted: "schema "shop" does not exist" or "invalid name syntax", every time the
    /// command was run again, the key map never filled, --abandon refused.)
    #[tokio::test]
    async fn names_that_need_quotes_are_swapped_and_their_key_map_filled() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(
            &mut c,
            r#"DROP SCHEMA IF EXISTS "Swap Sch" CASCADE;
               CREATE SCHEMA "Swap Sch";
               CREATE TABLE "Swap Sch"."Odd ""T"" x" ("I d" uuid PRIMARY KEY, v int NOT NULL);
               CREATE TABLE "Swap Sch".kid (k serial PRIMARY KEY, p uuid REFERENCES "Swap Sch"."Odd ""T"" x" ("I d"));
               CREATE INDEX ON "Swap Sch".kid (p);"#,
        )
        .await;
        let clock = Arc::new(combkey::FixedClock::new(Timestamp::now().saturating_add_ms(-3_600_000)));
        let g = combkey::layouts::V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(43));
        let keys: Vec<String> = (0..300)
            .map(|_| {
                clock.advance(std::time::Duration::from_millis(3));
                g.generate().to_string()
            })
            .collect();
        sqlx::query(AssertSqlSafe(
            r#"INSERT INTO "Swap Sch"."Odd ""T"" x" SELECT u::uuid, o::int FROM unnest($1::text[]) WITH ORDINALITY AS x (u, o)"#,
        ))
        .bind(&keys)
        .execute(&mut c)
        .await
        .unwrap();
        exec(&mut c, r#"INSERT INTO "Swap Sch".kid (p) SELECT "I d" FROM "Swap Sch"."Odd ""T"" x" WHERE v % 3 = 0"#)
            .await;
        let out = combkey_env(
            &[
                "doctor",
                "--url",
                &url,
                "--table",
                r#""Swap Sch"."Odd ""T"" x""#,
                "--column",
                r#""I d""#,
                "--apply",
                "--online",
                "--method",
                "copy-swap",
            ],
            &[],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(r#"kept as "Swap Sch"."_Odd ""T"" x_old", "Swap Sch"._kid_old"#),
            "{}",
            stderr(&out)
        );
        let map = count(
            &mut c,
            r#"SELECT count(*) FROM "Swap Sch"."combkey_keymap_Odd ""T"" x" m JOIN "Swap Sch"."_Odd ""T"" x_old" o ON o."I d" = m.old_key
               JOIN "Swap Sch"."Odd ""T"" x" n ON n."I d" = m.new_key AND n.v = o.v"#,
        )
        .await;
        assert_eq!(map, 300, "every converted key's pair in the key map");
        assert_eq!(
            count(&mut c, r#"SELECT count(*) FROM "Swap Sch".kid k JOIN "Swap Sch"."Odd ""T"" x" p ON p."I d" = k.p"#)
                .await,
            100
        );
        assert_eq!(
            count(&mut c, r#"SELECT count(*) FROM pg_tables WHERE schemaname = 'Swap Sch' AND (tablename LIKE '%\_map' OR tablename LIKE '%\_log')"#).await,
            0,
            "no work table left"
        );
        exec(&mut c, r#"DROP SCHEMA "Swap Sch" CASCADE"#).await;
    }

    /// `--abandon` of a run that installed combkey's functions for `--set-default` (none was
    /// there) removes them with the rest of the run; functions that were there before a run
    /// stay. In a database of its own: the functions are the database's, not a table's.
    #[tokio::test]
    async fn an_abandoned_run_removes_the_functions_it_installed_and_keeps_those_there_before() {
        let db = "swap_pg_abandon_fn";
        let mut admin = connect().await;
        exec(&mut admin, &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await;
        exec(&mut admin, &format!("CREATE DATABASE {db}")).await;
        let base = combkey_testutil::pg_url();
        let url = format!("{}/{db}", &base[..base.rfind('/').unwrap()]);
        let t = "swap_pg_abandon_fn";
        let mut c = PgConnection::connect(&url).await.unwrap();
        let functions =
            "SELECT count(*) FROM pg_proc WHERE proname IN ('combkey_v7', 'combkey_unix_ms', 'combkey_time')";
        let run = [
            "doctor",
            "--url",
            &url,
            "--table",
            t,
            "--apply",
            "--online",
            "--triggers",
            "fire",
            "--method",
            "copy-swap",
            "--set-default",
        ];
        for installed_before in [false, true] {
            seed(&mut c, t, 300, 41).await;
            if installed_before {
                exec(&mut c, combkey::Backend::Postgres.install_functions()).await;
            }
            assert_eq!(count(&mut c, functions).await, if installed_before { 3 } else { 0 });
            let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "4")]);
            assert!(stderr(&stopped).contains("stopping after phase 4"), "{}", stderr(&stopped));
            assert_eq!(count(&mut c, functions).await, 3, "the run installed them for its default");
            let out = ok(&combkey_env(&["doctor", "--url", &url, "--table", t, "--abandon"], &[]));
            assert!(out.contains("abandoned"), "{out}");
            assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
            assert_eq!(
                count(&mut c, functions).await,
                if installed_before { 3 } else { 0 },
                "installed before the run: {installed_before}"
            );
        }
        c.close().await.unwrap();
        exec(&mut admin, &format!("DROP DATABASE {db} WITH (FORCE)")).await;
        exec(&mut admin, &format!("DROP ROLE IF EXISTS {t}_reader")).await;
    }

    /// Rows the application changes again and again are copied again once per round, with
    /// every log row of theirs removed: three rows updated 4,000 times each during a stopped
    /// run (24,000 log rows) take one round and the swap's, where each round applied 5,000 log rows and the
    /// rounds fell behind a busy application's updates (a break-test: 4.7M log rows of 40,000
    /// rows).
    #[tokio::test]
    async fn rows_changed_again_and_again_are_applied_once() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_hot_rows";
        let mut c = connect().await;
        seed(&mut c, t, 2000, 44).await;
        let run = [
            "doctor",
            "--url",
            &url,
            "--table",
            t,
            "--apply",
            "--online",
            "--triggers",
            "fire",
            "--method",
            "copy-swap",
        ];
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "4")]);
        assert!(stderr(&stopped).contains("stopping after phase 4"), "{}", stderr(&stopped));
        exec(
            &mut c,
            &format!("DO $$ BEGIN FOR i IN 1..4000 LOOP UPDATE {t} SET n = n + 1 WHERE seq <= 3; END LOOP; END $$"),
        )
        .await;
        // (The old and the new key of each updated row are logged.)
        assert!(count(&mut c, &format!("SELECT count(*) FROM _{t}_log")).await >= 12_000);
        let out = combkey_env(&run, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        // One round copies them again (the swap's last application counts as one more), where
        // rounds of 5,000 log rows took five.
        assert!(
            ["in 1 round,", "in 2 rounds,"]
                .iter()
                .any(|r| stderr(&out).contains(&format!("applied the changes made meanwhile {r}"))),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            count(&mut c, &format!("SELECT count(*) FROM {t} WHERE seq <= 3 AND n = 4000 AND touched = 4000")).await,
            3
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_items, {t}, _{t}_items_old, _{t}_old CASCADE; DROP FUNCTION {t}_touch(); DROP ROLE {t}_reader")).await;
    }

    /// Another session changes the table while the run copies it: the swap finds the
    /// definition changed and stops, and what the run made goes; the table keeps its keys and
    /// the change.
    #[tokio::test]
    async fn a_table_changed_meanwhile_stops_the_swap_with_nothing_changed() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_ddl";
        let mut c = connect().await;
        seed(&mut c, t, 2000, 31).await;
        let stopped = combkey_env(
            &[
                "doctor",
                "--url",
                &url,
                "--table",
                t,
                "--apply",
                "--online",
                "--triggers",
                "fire",
                "--method",
                "copy-swap",
            ],
            &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "4")],
        );
        assert!(!stopped.status.success());
        exec(&mut c, &format!("ALTER TABLE {t} ADD COLUMN extra int")).await;
        let out =
            combkey_env(&["doctor", "--url", &url, "--table", t, "--apply", "--online", "--triggers", "fire"], &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("abandoned") && stderr(&out).contains("new: extra integer"), "{}", stderr(&out));
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        let audit = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&audit), [("rtcomb-sql".to_string(), 2000)], "the keys as they were: {audit}");
    }

    /// What copy and swap cannot carry (a view reads the table: it would go on reading the old
    /// one): `auto` changes the keys in place and says why; `copy-swap` refuses and changes
    /// nothing; a type change, which only copy and swap does online, is refused.
    #[tokio::test]
    async fn a_view_makes_auto_change_the_keys_in_place() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_view";
        let mut c = connect().await;
        exec(&mut c, &format!("DROP VIEW IF EXISTS {t}_v")).await;
        seed(&mut c, t, 500, 32).await;
        exec(&mut c, &format!("CREATE VIEW {t}_v AS SELECT seq, n FROM {t}")).await;
        let refused = combkey_env(
            &[
                "doctor",
                "--url",
                &url,
                "--table",
                t,
                "--apply",
                "--online",
                "--triggers",
                "fire",
                "--method",
                "copy-swap",
            ],
            &[],
        );
        assert_eq!(refused.status.code(), Some(1));
        assert!(
            stderr(&refused).contains(&format!("view {t}_v")) && stderr(&refused).contains("Nothing was changed"),
            "{}",
            stderr(&refused)
        );
        let out = combkey_env(
            &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--triggers", "fire", "--json"],
            &[],
        );
        let done = json(&out);
        assert_eq!(done["online"]["method"], "in-place", "{done}");
        assert!(
            stderr(&out).contains("not by copy and swap") && stderr(&out).contains(&format!("view {t}_v")),
            "{}",
            stderr(&out)
        );
        assert_eq!(layouts_of(&done), [("v7".to_string(), 500)], "{done}");
        // Text keys with such a view: only copy and swap changes the type online.
        let tt = "swap_pg_view_text";
        exec(
            &mut c,
            &format!(
                "DROP VIEW IF EXISTS {tt}_v; DROP TABLE IF EXISTS {tt}; CREATE TABLE {tt} (id text PRIMARY KEY); \
             INSERT INTO {tt} SELECT id::text FROM {t}; CREATE VIEW {tt}_v AS SELECT count(*) FROM {tt}"
            ),
        )
        .await;
        let out = combkey_env(&["doctor", "--url", &url, "--table", tt, "--apply", "--online"], &[]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("only copy and swap does online") && stderr(&out).contains("Nothing was changed"),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            count(
                &mut c,
                &format!(
                    "SELECT count(*) FROM information_schema.columns WHERE table_name = '{tt}' AND data_type = 'text'"
                )
            )
            .await,
            1
        );
    }

    /// Text keys (and a text column referencing them) become uuid online: the copies have the
    /// new type, the foreign key, the converted keys.
    #[tokio::test]
    async fn text_keys_become_uuid_online() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_text";
        let mut c = connect().await;
        exec(
            &mut c,
            &format!(
                "DROP TABLE IF EXISTS {t}_items, {t}, _{t}_old, _{t}_items_old CASCADE;
                 CREATE TABLE {t} (id varchar(36) PRIMARY KEY, seq serial);
                 CREATE TABLE {t}_items (k serial PRIMARY KEY, parent varchar(36) REFERENCES {t} (id));
                 CREATE INDEX ON {t}_items (parent)"
            ),
        )
        .await;
        let keys = rtcomb_sql(1000, 33);
        for (i, k) in keys.iter().enumerate() {
            // Upper case and lower case both: the same ids.
            let text = if i % 2 == 0 { k.to_string().to_uppercase() } else { k.to_string() };
            exec(
                &mut c,
                &format!("INSERT INTO {t} (id) VALUES ('{text}'); INSERT INTO {t}_items (parent) VALUES ('{text}')"),
            )
            .await;
        }
        let done = json(&combkey_env(
            &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--triggers", "fire", "--json"],
            &[],
        ));
        assert_eq!(done["column_type"], "uuid", "{done}");
        assert_eq!(done["online"]["method"], "copy-swap", "{done}");
        assert_eq!(layouts_of(&done), [("v7".to_string(), 1000)], "{done}");
        let joined = count(&mut c, &format!("SELECT count(*) FROM {t}_items i JOIN {t} p ON p.id = i.parent")).await;
        assert_eq!(joined, 1000);
        let typed = count(&mut c, &format!("SELECT count(*) FROM information_schema.columns WHERE table_name = '{t}_items' AND column_name = 'parent' AND data_type = 'uuid'")).await;
        assert_eq!(typed, 1);
        let m = KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap();
        let first: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id::text FROM {t} WHERE seq = 1")))
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(first, m.convert(&keys[0]).unwrap().to_string());
    }

    /// The offline run under the same writers: it locks the tables against writes first, so
    /// their inserts of children and updates wait for its commit instead of failing it (before,
    /// a child inserted after its statement began failed the foreign key check at its end,
    /// every time), and none of theirs fails.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_offline_run_ends_done_while_writers_insert_children() {
        let url = combkey_testutil::pg_url();
        let t = "swap_pg_offline";
        let mut c = connect().await;
        seed(&mut c, t, 20_000, 2).await;
        let (p0, c0) = (
            count(&mut c, &format!("SELECT count(*) FROM {t}")).await,
            count(&mut c, &format!("SELECT count(*) FROM {t}_items")).await,
        );
        let stop = Arc::new(AtomicBool::new(false));
        let w = Arc::new(Writes::default());
        let writers: Vec<_> =
            (0..3).map(|_| tokio::spawn(writer(t.to_string(), p0, Arc::clone(&stop), Arc::clone(&w)))).collect();
        while w.parents_in.load(Ordering::Relaxed) < 20 {
            tokio::task::yield_now().await;
        }
        let out = run_doctor(args(&url, t, &["--apply", "--triggers", "fire", "--json"]), Vec::new()).await;
        let done_at = w.parents_in.load(Ordering::Relaxed);
        while w.parents_in.load(Ordering::Relaxed) < done_at + 20 {
            tokio::task::yield_now().await;
        }
        stop.store(true, Ordering::Relaxed);
        for h in writers {
            h.await.unwrap();
        }
        let after = json(&out);
        assert_eq!(w.failures.load(Ordering::Relaxed), 0, "no writer failed: {}", w.last_error.lock().unwrap());
        assert!(layouts_of(&after).iter().all(|(l, _)| l != "rtcomb-sql"), "every old key converted: {after}");
        let parents = p0 + w.parents_in.load(Ordering::Relaxed) - w.parents_out.load(Ordering::Relaxed);
        assert_eq!(count(&mut c, &format!("SELECT count(*) FROM {t}")).await, parents);
        let children = count(&mut c, &format!("SELECT count(*) FROM {t}_items")).await;
        assert!(children > c0, "the writers' children are there");
        let orphans = count(
            &mut c,
            &format!("SELECT count(*) FROM {t}_items i WHERE NOT EXISTS (SELECT 1 FROM {t} p WHERE p.id = i.parent)"),
        )
        .await;
        assert_eq!(orphans, 0);
    }

    /// `--keep-type`: text keys stay text, as v7 ids (lowercase, hyphenated), by either method
    /// and offline; a key that does not convert keeps its text exactly (its letter case too).
    #[tokio::test]
    async fn keep_type_keeps_text_keys_text() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        for (t, method) in [("keep_pg_swap", "copy-swap"), ("keep_pg_place", "in-place"), ("keep_pg_offline", "")] {
            exec(
                &mut c,
                &format!(
                    "DROP TABLE IF EXISTS {t}_items, {t}, _{t}_old, _{t}_items_old CASCADE;
                     DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%';
                     CREATE TABLE {t} (id text PRIMARY KEY, seq serial);
                     CREATE TABLE {t}_items (k serial PRIMARY KEY, parent text REFERENCES {t} (id));
                     CREATE INDEX ON {t}_items (parent)"
                ),
            )
            .await;
            let keys = rtcomb_sql(300, 40);
            let values: Vec<String> = keys.iter().map(|k| format!("('{}')", k.to_string().to_uppercase())).collect();
            exec(
                &mut c,
                &format!(
                    "INSERT INTO {t} (id) VALUES {}; INSERT INTO {t}_items (parent) SELECT id FROM {t}",
                    values.join(", ")
                ),
            )
            .await;
            // A random key, upper case: it stays as it is.
            exec(&mut c, &format!("INSERT INTO {t} (id) VALUES ('{}')", Comb::new_v4().to_string().to_uppercase()))
                .await;
            let mut args = vec!["doctor", "--url", &url, "--table", t, "--apply", "--keep-type", "--json"];
            if !method.is_empty() {
                args.extend(["--online", "--method", method]);
            }
            let done = json(&combkey_env(&args, &[]));
            assert_eq!(done["column_type"], "text", "{t}: {done}");
            let m = KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap();
            let first: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {t} WHERE seq = 1")))
                .fetch_one(&mut c)
                .await
                .unwrap();
            assert_eq!(first, m.convert(&keys[0]).unwrap().to_string(), "{t}: v7, as lowercase text");
            let kept: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {t} WHERE seq = 301")))
                .fetch_one(&mut c)
                .await
                .unwrap();
            assert_eq!(kept, kept.to_uppercase(), "{t}: the random key as it was");
            let joined =
                count(&mut c, &format!("SELECT count(*) FROM {t}_items i JOIN {t} p ON p.id = i.parent")).await;
            assert_eq!(joined, 300, "{t}");
        }
        // A uuid column has no text type to keep.
        exec(&mut c, "DROP TABLE IF EXISTS keep_pg_uuid; CREATE TABLE keep_pg_uuid (id uuid PRIMARY KEY)").await;
        let out = combkey_env(&["doctor", "--url", &url, "--table", "keep_pg_uuid", "--apply", "--keep-type"], &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("no text type to keep"), "{}", stderr(&out));
    }
}

mod mariadb {
    use super::*;

    async fn connect() -> MySqlConnection {
        MySqlConnection::connect(&combkey_testutil::mysql_url()).await.expect("MariaDB (source scripts/servers.sh)")
    }

    async fn exec(c: &mut MySqlConnection, sql: &str) {
        sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn count(c: &mut MySqlConnection, sql: &str) -> i64 {
        sqlx::query_scalar(AssertSqlSafe(sql.to_string())).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    async fn show(c: &mut MySqlConnection, t: &str) -> String {
        let row = sqlx::query(AssertSqlSafe(format!("SHOW CREATE TABLE {t}"))).fetch_one(c).await.unwrap();
        let text: String = row.get(1);
        // The counter moves with inserts.
        text.split(' ').filter(|w| !w.starts_with("AUTO_INCREMENT=")).collect::<Vec<_>>().join(" ")
    }

    /// The most common legacy MySQL key: `UUID()` text in `CHAR(36)`, made by the column's
    /// default, with a child referencing it (deleted with its parent) and one that does not
    /// cascade.
    async fn seed(c: &mut MySqlConnection, t: &str, n: usize) {
        let _ =
            sqlx::raw_sql(AssertSqlSafe(format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%'")))
                .execute(&mut *c)
                .await;
        exec(
            c,
            &format!(
                "SET foreign_key_checks = 0;
                 DROP TABLE IF EXISTS {t}_items, {t}_notes, {t}, _{t}_old, _{t}_items_old, _{t}_notes_old, _{t}_new,
                   _{t}_items_new, _{t}_notes_new, _{t}_map, _{t}_todo, _{t}_log, _{t}_items_log, _{t}_notes_log;
                 SET foreign_key_checks = 1;
                 CREATE TABLE {t} (id CHAR(36) NOT NULL DEFAULT (UUID()) COMMENT 'the key', seq INT NOT NULL AUTO_INCREMENT,
                   n INT NOT NULL DEFAULT 0, note VARCHAR(20), PRIMARY KEY (id), UNIQUE KEY (seq)) ENGINE=InnoDB COMMENT 'parents';
                 CREATE TABLE {t}_items (k BIGINT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NOT NULL, what VARCHAR(20),
                   CONSTRAINT {t}_items_fk FOREIGN KEY (parent) REFERENCES {t} (id) ON DELETE CASCADE) ENGINE=InnoDB;
                 CREATE TABLE {t}_notes (k BIGINT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NULL, KEY by_parent (parent),
                   CONSTRAINT {t}_notes_fk FOREIGN KEY (parent) REFERENCES {t} (id),
                   also CHAR(36) NULL, FOREIGN KEY (also) REFERENCES {t} (id)) ENGINE=InnoDB;
                 INSERT INTO {t} (note) SELECT 'seeded' FROM seq_1_to_{n};
                 INSERT INTO {t}_items (parent, what) SELECT id, 'seeded' FROM {t} WHERE seq % 2 = 0;
                 INSERT INTO {t}_notes (parent, also) SELECT id, IF(seq % 2 = 0, id, NULL) FROM {t} WHERE seq % 7 = 0;
                 INSERT INTO {t}_notes (parent) VALUES (NULL);"
            ),
        )
        .await;
    }

    /// A writer that writes no key itself (the default makes them): new parents with a child,
    /// updates of parents it finds by number, children added to them, deletes of its own
    /// parents (their children go with them). Its statements work whatever the key column's
    /// type.
    async fn writer(t: String, parents: i64, stop: Arc<AtomicBool>, w: Arc<Writes>) {
        let mut c = connect().await;
        let mut mine: Vec<i64> = Vec::new();
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            i += 1;
            let seq = 1 + i64::try_from(i * 7919).unwrap() % parents;
            let r = async {
                sqlx::raw_sql("START TRANSACTION").execute(&mut c).await?;
                sqlx::raw_sql(AssertSqlSafe(format!("INSERT INTO {t} (note) VALUES ('writer')")))
                    .execute(&mut c)
                    .await?;
                let mine_seq: i64 =
                    sqlx::query_scalar("SELECT CAST(LAST_INSERT_ID() AS SIGNED)").fetch_one(&mut c).await?;
                sqlx::raw_sql(AssertSqlSafe(format!(
                    "INSERT INTO {t}_items (parent, what) SELECT id, 'writer' FROM {t} WHERE seq = {mine_seq}; \
                     UPDATE {t} SET n = n + 1 WHERE seq = {seq}; \
                     INSERT INTO {t}_items (parent, what) SELECT id, 'added' FROM {t} WHERE seq = {seq}; COMMIT"
                )))
                .execute(&mut c)
                .await?;
                Ok::<_, sqlx::Error>(mine_seq)
            }
            .await;
            match r {
                Ok(s) => {
                    w.parents_in.fetch_add(1, Ordering::Relaxed);
                    w.children_in.fetch_add(2, Ordering::Relaxed);
                    w.updates.fetch_add(1, Ordering::Relaxed);
                    mine.push(s);
                }
                Err(e) => {
                    w.failed(e);
                    let _ = sqlx::raw_sql("ROLLBACK").execute(&mut c).await;
                }
            }
            if i.is_multiple_of(4)
                && let Some(old) = mine.pop()
            {
                match sqlx::raw_sql(AssertSqlSafe(format!("DELETE FROM {t} WHERE seq = {old}"))).execute(&mut c).await {
                    Ok(r) if r.rows_affected() == 1 => {
                        w.parents_out.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => w.failed("a delete of the writer's own parent found no row"),
                    Err(e) => w.failed(e),
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    fn layouts_of(r: &Value) -> Vec<(String, u64)> {
        r["layouts"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect()
    }

    /// Drops the test's tables (`seed`'s three).
    async fn drop_tables(c: &mut MySqlConnection, t: &str) {
        exec(
            c,
            &format!("SET foreign_key_checks = 0; DROP TABLE {t}_items, {t}_notes, {t}; SET foreign_key_checks = 1"),
        )
        .await;
    }

    async fn leftovers(c: &mut MySqlConnection, t: &str) -> Vec<String> {
        sqlx::query_scalar::<_, String>(AssertSqlSafe(format!(
            "SELECT CAST(TABLE_NAME AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN \
             ('_{t}_new', '_{t}_items_new', '_{t}_notes_new', '_{t}_map', '_{t}_todo', '_{t}_log', '_{t}_items_log', \
             '_{t}_notes_log') UNION ALL \
             SELECT CAST(TRIGGER_NAME AS CHAR) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND \
             TRIGGER_NAME LIKE 'combkey\\_doctor\\_capture%' AND EVENT_OBJECT_TABLE IN ('{t}', '{t}_items', '{t}_notes', \
             '_{t}_old', '_{t}_items_old', '_{t}_notes_old')"
        )))
        .fetch_all(c)
        .await
        .unwrap()
    }

    /// Every kept old key's row has the key its layout (MySQL's `UUID()`, version 1) converts
    /// to, as 16 bytes, or as text where the column `kept_text`.
    async fn converted_as_the_layout_says(c: &mut MySqlConnection, t: &str, kept_text: bool) -> usize {
        let m = KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let new = if kept_text { "CAST(n.id AS CHAR)" } else { "HEX(n.id)" };
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT CAST(o.id AS CHAR), {new} FROM _{t}_old o JOIN {t} n USING (seq) WHERE o.note = 'seeded'"
        )))
        .fetch_all(&mut *c)
        .await
        .unwrap();
        for r in &rows {
            let (old, new): (String, String) = (r.get(0), r.get(1));
            let want = m.convert(&old.parse::<Comb>().unwrap()).unwrap();
            let want = if kept_text { want.to_string() } else { want.simple().to_string().to_uppercase() };
            assert_eq!(new, want, "row of old key {old}");
        }
        rows.len()
    }

    /// `combkey doctor` with `flags` (copy and swap, `--json`) while three [`writer`]s write, from
    /// their 20th parent until 20 more after the run: its output and what they did.
    async fn under_writers(url: &str, t: &str, parents: i64, flags: &str) -> (Output, Arc<Writes>) {
        let stop = Arc::new(AtomicBool::new(false));
        let w = Arc::new(Writes::default());
        let writers: Vec<_> =
            (0..3).map(|_| tokio::spawn(writer(t.to_string(), parents, Arc::clone(&stop), Arc::clone(&w)))).collect();
        while w.parents_in.load(Ordering::Relaxed) < 20 {
            tokio::task::yield_now().await;
        }
        let out =
            run_doctor(args(url, t, &["--apply", "--online", "--method", "copy-swap", flags, "--json"]), Vec::new())
                .await;
        let swapped_at = w.parents_in.load(Ordering::Relaxed);
        while w.parents_in.load(Ordering::Relaxed) < swapped_at + 20 {
            tokio::task::yield_now().await;
        }
        stop.store(true, Ordering::Relaxed);
        for h in writers {
            h.await.unwrap();
        }
        (out, w)
    }

    /// Rows of `t`'s children that reference no parent.
    async fn orphans(c: &mut MySqlConnection, t: &str) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        for child in [format!("{t}_items"), format!("{t}_notes")] {
            let n = count(
                c,
                &format!("SELECT COUNT(*) FROM {child} i LEFT JOIN {t} p ON p.id = i.parent WHERE i.parent IS NOT NULL AND p.id IS NULL"),
            )
            .await;
            out.push((child, n));
        }
        out.retain(|(_, n)| *n > 0);
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn char36_keys_become_binary16_v7_while_writers_write() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my";
        let mut c = connect().await;
        seed(&mut c, t, 20_000).await;
        let (items_before, notes_before) =
            (show(&mut c, &format!("{t}_items")).await, show(&mut c, &format!("{t}_notes")).await);
        let (p0, c0) = (
            count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await,
            count(&mut c, &format!("SELECT COUNT(*) FROM {t}_items")).await,
        );
        let (out, w) = under_writers(&url, t, p0, "--set-default").await;
        let after = json(&out);
        assert_eq!(after["online"]["method"], "copy-swap", "{after}");
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(
            w.failures.load(Ordering::Relaxed),
            0,
            "no writer statement failed: {}",
            w.last_error.lock().unwrap()
        );
        // Every key is v7 now: the old ones converted, those the writers' default made
        // meanwhile converted after the swap, those made since by combkey's default.
        let keys = count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await;
        assert_eq!(layouts_of(&after).len(), 1, "only v7 keys when the run ended: {after}");
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE SUBSTR(HEX(id), 13, 1) <> '7'")).await,
            0,
            "{after}"
        );
        let parents = p0 + w.parents_in.load(Ordering::Relaxed) - w.parents_out.load(Ordering::Relaxed);
        assert_eq!(keys, parents, "every parent there");
        let children = count(&mut c, &format!("SELECT COUNT(*) FROM {t}_items")).await;
        assert!(children <= c0 + w.children_in.load(Ordering::Relaxed) && children > c0, "{children}");
        assert_eq!(orphans(&mut c, t).await, Vec::new(), "children without their parent");
        assert!(converted_as_the_layout_says(&mut c, t, false).await > 19_000);
        assert_eq!(
            count(&mut c, &format!("SELECT CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM {t}")).await,
            w.updates.load(Ordering::Relaxed)
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        // Every definition as it was but the key columns' type (and the key's default, which
        // --set-default changed): foreign keys with their names and actions, indexes, comments.
        let bin = |s: String| s.replace("char(36)", "binary(16)").replace(" NOT NULL DEFAULT uuid()", " NOT NULL");
        assert_eq!(show(&mut c, &format!("{t}_items")).await, bin(items_before));
        assert_eq!(show(&mut c, &format!("{t}_notes")).await, bin(notes_before));
        // The next id sorts after every converted key.
        let last: String = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT CAST(HEX(MAX(n.id)) AS CHAR) FROM {t} n JOIN _{t}_old o USING (seq) WHERE o.note = 'seeded'"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert!(Comb::new().simple().to_string().to_uppercase() > last, "{last}");
    }

    /// An application that goes on writing old keys (the column keeps its `UUID()` default,
    /// `--keep-type` without `--set-default`) through the copy, the swap and after: the run
    /// converts what was there and what was written through, and ends; it does not chase the
    /// application's new keys pass after pass and fail. The report says what is left.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn old_keys_written_on_after_the_swap_end_the_run_done() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_still_v1";
        let mut c = connect().await;
        seed(&mut c, t, 20_000).await;
        let p0 = count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await;
        let (out, w) = under_writers(&url, t, p0, "--keep-type").await;
        let after = json(&out);
        assert_eq!(after["online"]["method"], "copy-swap", "{after}");
        assert_eq!(after["column_type"], "char(36)", "{after}");
        assert_eq!(w.failures.load(Ordering::Relaxed), 0, "{}", w.last_error.lock().unwrap());
        // Every seeded key is v7; so is every key written before the swap began to count.
        assert!(converted_as_the_layout_says(&mut c, t, true).await > 19_000);
        let v1_seeded =
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE note = 'seeded' AND SUBSTR(id, 15, 1) <> '7'"))
                .await;
        assert_eq!(v1_seeded, 0, "{after}");
        // The application's keys since are its own: v1, as its default makes them.
        let v1 = count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE SUBSTR(id, 15, 1) = '1'")).await;
        assert!(v1 > 0, "the writers wrote v1 keys after the swap");
        assert_eq!(orphans(&mut c, t).await, Vec::new(), "children without their parent");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
    }

    /// An application that gives rows new primary keys throughout the run (`UPDATE ... SET id =
    /// UUID()`, rows no child references): every row is there after the swap, with every update.
    /// (The write-through triggers once removed the old row from the copy and updated a new one
    /// that was not there: each key changed while they ran lost its row.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rows_whose_key_the_application_changes_are_all_there() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_rekeyed";
        let mut c = connect().await;
        seed(&mut c, t, 20_000).await;
        let p0 = count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await;
        let stop = Arc::new(AtomicBool::new(false));
        let updates = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let writers: Vec<_> = (0..2u64)
            .map(|w| {
                let (stop, updates, t) = (Arc::clone(&stop), Arc::clone(&updates), t.to_string());
                tokio::spawn(async move {
                    let mut c = connect().await;
                    let mut i = w;
                    while !stop.load(Ordering::Relaxed) {
                        i += 2;
                        // Parents with no child: odd numbers not divisible by 7.
                        let seq = 1 + 2 * ((i * 7919) % 10_000);
                        if seq % 7 == 0 {
                            continue;
                        }
                        let r = sqlx::raw_sql(AssertSqlSafe(format!(
                            "UPDATE {t} SET id = UUID(), n = n + 1 WHERE seq = {seq}"
                        )))
                        .execute(&mut c)
                        .await
                        .unwrap_or_else(|e| panic!("the application's update: {e}"));
                        updates.fetch_add(i64::try_from(r.rows_affected()).unwrap(), Ordering::Relaxed);
                        // An application's pace, not a flood the rounds could never catch up with.
                        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    }
                })
            })
            .collect();
        while updates.load(Ordering::Relaxed) < 50 {
            tokio::task::yield_now().await;
        }
        let out = run_doctor(
            args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--keep-type", "--json"]),
            Vec::new(),
        )
        .await;
        stop.store(true, Ordering::Relaxed);
        for h in writers {
            h.await.unwrap();
        }
        let after = json(&out);
        assert_eq!(after["online"]["method"], "copy-swap", "{after}");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, p0, "every row there");
        assert_eq!(
            count(&mut c, &format!("SELECT CAST(SUM(n) AS SIGNED) FROM {t}")).await,
            updates.load(Ordering::Relaxed),
            "every update there"
        );
        let seeded = count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE note = 'seeded'")).await;
        assert_eq!(seeded, p0);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
    }

    /// Under the write-through triggers (which log nothing), a logged row is read for its copy
    /// with a share lock: where the application deletes the row meanwhile, the copy gets it as
    /// last committed (gone). A plain read, older than the delete that the copy's write then
    /// waited for, wrote the deleted row back into the copy, and so into the table at the swap
    /// (found once by the generated cases, seed 225 on MariaDB; here a test hook holds the run
    /// at that moment).
    /// The application writes, during the copy, the key another row's key becomes (a v1 key's
    /// v7 form) and a v1 key that differs from another only in the bits v7 drops: the copy
    /// would hold one row for the first pair (a break-test found the later write's row in
    /// place of the other's after the swap), and the conversion after the swap would fail on
    /// the second (it stopped there, swapped, every time). The run stops before its swap,
    /// naming both pairs, with every row as the application left it.
    #[tokio::test]
    async fn keys_written_during_the_copy_that_would_become_one_are_refused() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_written_twin";
        let mut c = connect().await;
        seed(&mut c, t, 300).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "3")]);
        assert!(stderr(&stopped).contains("stopping after phase 3"), "{}", stderr(&stopped));
        let key = async |c: &mut MySqlConnection, seq: i64| -> Comb {
            let k: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {t} WHERE seq = {seq}")))
                .fetch_one(c)
                .await
                .unwrap();
            k.parse().unwrap()
        };
        let (a, b) = (key(&mut c, 5).await, key(&mut c, 9).await);
        let m = KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        let becomes = m.convert(&a).unwrap();
        let mut twin = b.into_bytes();
        twin[10] ^= 0x01;
        let twin = Comb::from_bytes(twin);
        assert_eq!(m.convert(&twin).unwrap(), m.convert(&b).unwrap(), "the premise: v7 drops that bit");
        exec(&mut c, &format!("INSERT INTO {t} (id, note) VALUES ('{becomes}', 'app'), ('{twin}', 'app')")).await;
        let out = combkey_env(&run, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        let (a_shown, b_shown) = (
            format!("{a} and {becomes} would both become {becomes}"),
            format!("{b} and {twin} would both become {}", m.convert(&b).unwrap()),
        );
        assert!(err.contains(&a_shown) && err.contains(&b_shown), "both pairs named: {err}");
        assert!(err.contains("Nothing was swapped") && err.contains("nothing changed"), "{err}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 302, "every row there");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 302, "not swapped");
        drop_tables(&mut c, t).await;
    }

    /// Changes logged while the run was stopped after its copy, more than the last round takes:
    /// applied in rounds first, each said, every one of them in the swapped table.
    #[tokio::test]
    async fn the_rounds_before_the_swap_say_how_far_they_are() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_rounds";
        let mut c = connect().await;
        seed(&mut c, t, 400).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "3")]);
        assert!(stderr(&stopped).contains("stopping after phase 3"), "{}", stderr(&stopped));
        exec(&mut c, &format!("UPDATE {t} SET note = 'changed'")).await;
        let out = combkey_env(&run, &[]);
        ok(&out);
        let err = stderr(&out);
        assert!(err.contains("changes made meanwhile applied, ") && err.contains(" in the logs still"), "{err}");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE note = 'changed'")).await, 400);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        drop_tables(&mut c, t).await;
    }

    /// A new table's foreign key to the table, or a trigger on it, made during the run: a rename
    /// takes the foreign key along to the old table (every write of the application through it
    /// would fail), and the trigger stays there. Read again before the rename: nothing swapped,
    /// each named, nothing changed.
    #[tokio::test]
    async fn what_comes_to_reference_the_table_during_the_run_stops_the_swap() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_dependants";
        let mut c = connect().await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_refunds")).await;
        seed(&mut c, t, 100).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "3")]);
        assert!(stderr(&stopped).contains("stopping after phase 3"), "{}", stderr(&stopped));
        let ty: String = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT CAST(COLUMN_TYPE AS CHAR) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
             AND TABLE_NAME = '{t}' AND COLUMN_NAME = 'id'"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        exec(
            &mut c,
            &format!(
                "CREATE TABLE {t}_refunds (k INT AUTO_INCREMENT PRIMARY KEY, parent {ty} NOT NULL, \
                 CONSTRAINT {t}_refunds_parent FOREIGN KEY (parent) REFERENCES {t} (id)) ENGINE=InnoDB;
                 INSERT INTO {t}_refunds (parent) SELECT id FROM {t} WHERE seq <= 3;
                 CREATE TRIGGER {t}_audit AFTER UPDATE ON {t} FOR EACH ROW SET @combkey_test_audit = 1"
            ),
        )
        .await;
        let out = combkey_env(&run, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("changed by another session since the run began"), "{err}");
        assert!(err.contains(&format!("foreign key {t}_refunds_parent of test.{t}_refunds references it")), "{err}");
        assert!(err.contains(&format!("its trigger {t}_audit would stay with the old table")), "{err}");
        assert!(err.contains("nothing changed"), "{err}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 100, "not swapped");
        // The application's writes through the new foreign key go on.
        exec(&mut c, &format!("INSERT INTO {t}_refunds (parent) SELECT id FROM {t} WHERE seq = 4")).await;
        exec(
            &mut c,
            &format!(
                "SET foreign_key_checks = 0; DROP TABLE {t}_refunds, {t}_items, {t}_notes, {t}; SET foreign_key_checks = 1"
            ),
        )
        .await;
    }

    /// A report's transaction holds the table while the run makes its triggers (their DDL needs
    /// the table's metadata lock): the run's statements never queue for it, and it stops after
    /// `--lock-timeout` (it tried for about a minute whatever the option said), naming the
    /// report's session, with nothing changed.
    #[tokio::test]
    async fn a_report_holding_the_table_stops_the_run_after_its_lock_timeout() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_held_ddl";
        let mut c = connect().await;
        seed(&mut c, t, 100).await;
        let mut report = connect().await;
        let session = count(&mut report, "SELECT CAST(CONNECTION_ID() AS SIGNED)").await;
        exec(&mut report, "START TRANSACTION").await;
        count(&mut report, &format!("SELECT COUNT(*) FROM {t}")).await;
        let run =
            args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--set-default", "--lock-timeout", "2s"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let out = combkey_env(&run, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("another session held a table's metadata lock for 2."), "{err}");
        assert!(err.contains(&format!("the oldest open transactions on the server: session {session} ")), "{err}");
        assert!(err.contains("a longer --lock-timeout"), "{err}");
        assert!(err.contains("nothing changed"), "{err}");
        exec(&mut report, "COMMIT").await;
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 100, "not swapped");
        drop_tables(&mut c, t).await;
    }

    /// --kill-blockers-after needs to know who holds the tables, which MariaDB does not show:
    /// refused before anything changes.
    #[tokio::test]
    async fn kill_blockers_after_is_refused() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_kill_blockers";
        let mut c = connect().await;
        seed(&mut c, t, 50).await;
        let run = args(
            &url,
            t,
            &["--apply", "--online", "--method", "copy-swap", "--set-default", "--kill-blockers-after", "1s"],
        );
        let out = run_doctor(run, Vec::new()).await;
        let err = stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("--kill-blockers-after is refused on MySQL/MariaDB") && err.contains("Nothing was changed"),
            "{err}"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 50, "not swapped");
        drop_tables(&mut c, t).await;
    }

    /// A copy that is not the table is never swapped in: a copied row changed, or one gone,
    /// before the check in one snapshot of both (through the test build's statement hook):
    /// the run stops before its rename with the tables as they were and nothing of the run
    /// left; a run without the hook says how many rows of each table it compared.
    #[tokio::test]
    async fn a_copy_that_is_not_the_table_is_never_swapped() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_verify";
        let mut c = connect().await;
        seed(&mut c, t, 300).await;
        let contents = format!(
            "SELECT CONCAT_WS('/', (SELECT GROUP_CONCAT(CONCAT_WS(' ', id, seq, n, note) ORDER BY seq SEPARATOR ',') FROM {t}), \
             (SELECT GROUP_CONCAT(CONCAT_WS(' ', k, parent, what) ORDER BY k SEPARATOR ',') FROM {t}_items), \
             (SELECT GROUP_CONCAT(CONCAT_WS(' ', k, parent, also) ORDER BY k SEPARATOR ',') FROM {t}_notes))"
        );
        exec(&mut c, "SET SESSION group_concat_max_len = 1048576").await;
        let read = async |c: &mut MySqlConnection| -> String {
            sqlx::query_scalar(AssertSqlSafe(contents.clone())).fetch_one(c).await.unwrap()
        };
        let before = read(&mut c).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        for (sql, said) in [
            (
                "UPDATE {copy} SET note = 'not seeded' WHERE seq = 7",
                format!(
                    "the copy of test.{t} is not the table: 300 rows in one snapshot of both, 300 in the copy, and their rows' hashes differ"
                ),
            ),
            (
                "DELETE FROM {copy} WHERE seq = 1",
                format!("the copy of test.{t} is not the table: 300 rows in one snapshot of both, 299 in the copy"),
            ),
        ] {
            let out = combkey_env(&run, &[("COMBKEY_DOCTOR_SQL_BEFORE_VERIFY", sql)]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{sql}: {err}");
            assert!(err.contains(&said) && err.contains("nothing changed"), "{sql}: {err}");
            assert!(leftovers(&mut c, t).await.is_empty(), "{sql}: {:?}", leftovers(&mut c, t).await);
            assert_eq!(read(&mut c).await, before, "{sql}: nothing changed");
        }
        // A TRUNCATE after the copy fires no trigger (MariaDB runs it as DDL): the copy still
        // holds the rows, and the swap would bring them back.
        let sql = format!("TRUNCATE {t}_notes");
        let out = combkey_env(&run, &[("COMBKEY_DOCTOR_SQL_BEFORE_VERIFY", &sql)]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{sql}: {err}");
        assert!(
            err.contains(&format!(
                "the copy of test.{t}_notes is not the table: 0 rows in one snapshot of both, 43 in the copy"
            )) && err.contains("nothing changed"),
            "{sql}: {err}"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{sql}: {:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_notes")).await, 0, "no row came back");
        let out = combkey_env(&[&run[..], &["--json"]].concat(), &[]);
        let done = json(&out);
        assert_eq!(
            done["online"]["verified_rows"],
            serde_json::json!({ format!("test.{t}"): 300, format!("test.{t}_items"): 150, format!("test.{t}_notes"): 0 }),
            "{done}"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        drop_tables(&mut c, t).await;
    }

    #[tokio::test]
    async fn a_row_deleted_while_its_logged_change_is_copied_stays_deleted() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_race";
        let mut c = connect().await;
        seed(&mut c, t, 200).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let stopped = run_doctor(run.clone(), vec![("COMBKEY_DOCTOR_FAIL_AFTER_THROUGH".into(), "1".into())]).await;
        assert!(!stopped.status.success(), "it stopped: {}", stderr(&stopped));
        // A change of row 1 (no children) logged before the triggers turned to writing through.
        exec(&mut c, &format!("INSERT INTO _{t}_log (id) SELECT id FROM {t} WHERE seq = 1")).await;
        let held = Held::start("THROUGH_APPLY", "race", run, Vec::new()).await;
        // The application deletes row 1 (its trigger deletes the copy's row) and has not
        // committed when the run copies the logged row again.
        let mut app = connect().await;
        exec(&mut app, "START TRANSACTION").await;
        exec(&mut app, &format!("DELETE FROM {t} WHERE seq = 1")).await;
        held.release();
        let waited = std::time::Instant::now();
        // The run's copy of the logged row is under way and held up (by the application's lock;
        // MariaDB's lock tables do not show a wait of a read the optimizer makes).
        let stuck = format!(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'INSERT INTO `test`.`_{t}_new`%' \
             AND TIME_MS > 50"
        );
        while count(&mut c, &stuck).await == 0 {
            assert!(waited.elapsed().as_secs() < 120, "the run never copied the logged row");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        exec(&mut app, "COMMIT").await;
        let out = held.end().await;
        ok(&out);
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE seq = 1")).await,
            0,
            "the deleted row stays deleted"
        );
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 199);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 16")).await, 199, "swapped");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
    }

    /// Killed after the swap, once its work tables went (the mapping table among them, the key
    /// map filled from it just before): the run again finishes with the key map whole, where
    /// it once failed reading the mapping table it had dropped (found by the generated cases,
    /// seed 637 on MariaDB, killed at random).
    #[tokio::test]
    async fn a_run_killed_after_its_work_tables_went_finishes_with_its_key_map_whole() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_cleanup";
        let mut c = connect().await;
        seed(&mut c, t, 500).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
        let run = [
            "doctor",
            "--url",
            &url,
            "--table",
            t,
            "--apply",
            "--online",
            "--method",
            "copy-swap",
            "--drop-old",
            "--set-default",
        ];
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_CLEANUP", "1")]);
        assert!(!stopped.status.success(), "it stopped: {}", stderr(&stopped));
        assert!(stderr(&stopped).contains("stopping after cleanup 1"), "{}", stderr(&stopped));
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 16")).await, 500, "swapped");
        ok(&combkey_env(&run, &[]));
        let mapped = count(
            &mut c,
            &format!(
                "SELECT COUNT(*) FROM combkey_keymap_{t} m JOIN {t} p ON p.id = m.new_key WHERE LENGTH(m.old_key) = 16"
            ),
        )
        .await;
        assert_eq!(mapped, 500, "every key's old and new id in the key map");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 500);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
    }

    /// Killed in the in-place run after the swap (keys the application wrote during the
    /// swap's last rounds, which the mapping table did not hold, of a layout the server does
    /// not convert; the v1 keys written with them were converted by the server, their pairs
    /// mapped before the in-place run): the same command again, and
    /// the advice `--method in-place`, end done with the key map holding every converted pair
    /// (the swap's and the in-place run's), no work table, trigger or journal row of the run
    /// left. It once left the run stuck: the in-place run had overwritten the copy and swap's
    /// journal row, so the same command refused because of the run's own trigger and
    /// `--method in-place` ended "done" with the key map holding none of the swap's pairs.
    #[tokio::test]
    async fn killed_in_the_in_place_run_after_the_swap_any_method_finishes_with_the_key_map_whole() {
        let url = combkey_testutil::mysql_url();
        for (i, again) in [&[][..], &["--method", "in-place"][..]].into_iter().enumerate() {
            let t = format!("swap_my_step5_{i}");
            let t = t.as_str();
            let mut c = connect().await;
            seed(&mut c, t, 300).await;
            exec(&mut c, &format!("DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
            let run = args(
                &url,
                t,
                &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default", "--batch-size", "5"],
            );
            // Stopped once the triggers write through to the copies; the application adds rows
            // with its own old-layout keys: the column's UUID() default (v1, converted by the
            // server as they are written through), and v6 keys of its own, a layout the table
            // did not hold (written through unconverted, to be converted in place after the
            // swap).
            let through = run_doctor(run.clone(), vec![("COMBKEY_DOCTOR_FAIL_AFTER_THROUGH".into(), "1".into())]).await;
            assert!(!through.status.success(), "it stopped: {}", stderr(&through));
            for i in 0..30 {
                if i % 2 == 0 {
                    exec(&mut c, &format!("INSERT INTO {t} (note) VALUES ('during')")).await;
                } else {
                    let v6 = Layout::V6.generate().unwrap();
                    exec(&mut c, &format!("INSERT INTO {t} (id, note) VALUES ('{v6}', 'during')")).await;
                }
            }
            // Killed after the in-place run's first batch, after the swap.
            let stopped = run_doctor(run.clone(), vec![("COMBKEY_DOCTOR_FAIL_AFTER_BATCH".into(), "1".into())]).await;
            assert!(!stopped.status.success(), "it stopped: {}", stderr(&stopped));
            assert!(
                stderr(&stopped).contains("step 5 of 5") && stderr(&stopped).contains("stopping after batch"),
                "{}",
                stderr(&stopped)
            );
            let mut again_args: Vec<&str> = run.iter().map(String::as_str).collect();
            again_args.retain(|a| !["--batch-size", "5"].contains(a));
            if !again.is_empty() {
                let m = again_args.iter().position(|a| *a == "--method").unwrap();
                again_args.drain(m..m + 2);
                again_args.extend_from_slice(again);
            }
            let done = combkey_env(&again_args, &[]);
            ok(&done);
            if !again.is_empty() {
                let said = stderr(&done);
                assert!(
                    said.contains("it goes on by copy-swap, the way it began (not by --method in-place)"),
                    "{said}"
                );
            }
            assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 330, "every row");
            let v7 = count(
                &mut c,
                &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 16 AND HEX(id) LIKE '____________7%'"),
            )
            .await;
            assert_eq!(v7, 330, "every key converted: {}", stderr(&done));
            let mapped = count(
                &mut c,
                &format!("SELECT COUNT(*) FROM combkey_keymap_{t} m JOIN {t} p ON p.id = m.new_key WHERE LENGTH(m.old_key) = 16"),
            )
            .await;
            assert_eq!(mapped, 330, "every converted key's old and new id in the key map");
            assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
            let journal = count(
                &mut c,
                &format!("SELECT COUNT(*) FROM combkey_doctor_journal WHERE target LIKE '%{t}.%' AND state <> 'done'"),
            )
            .await;
            assert_eq!(journal, 0, "no unfinished run of the table in the journal");
            exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_notes, {t}_items, {t}, combkey_keymap_{t}")).await;
        }
    }

    /// Keys the application writes during the run with its old default (MariaDB's `UUID()`)
    /// are converted by the server as they are written through: right after the rename the
    /// table holds them, and the children's references, as combkey's v7 keys
    /// (`KeyMigration`), so no conversion in place follows the swap (its batches deadlocked
    /// the application's transactions, 1213, in break-tests); the finished run's key map holds
    /// their pairs. Text keys kept as text (`--keep-type`) alike.
    #[tokio::test]
    async fn keys_written_during_the_run_are_converted_as_they_are_written() {
        let url = combkey_testutil::mysql_url();
        let m = KeyMigration::new(Layout::V1, Layout::V7).unwrap();
        for (i, flags) in [&["--set-default"][..], &["--keep-type"][..]].into_iter().enumerate() {
            let t = format!("swap_my_as_written_{i}");
            let t = t.as_str();
            let keep = i == 1;
            let mut c = connect().await;
            seed(&mut c, t, 200).await;
            exec(&mut c, &format!("DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
            let mut run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old"]);
            run.extend(flags.iter().map(|f| (*f).to_string()));
            let held = Held::start(
                "BEFORE_SWAP",
                t,
                run.clone(),
                vec![("COMBKEY_DOCTOR_FAIL_AFTER_RENAME".into(), "1".into())],
            )
            .await;
            for _ in 0..20 {
                exec(
                    &mut c,
                    &format!(
                        "INSERT INTO {t} (note) VALUES ('during'); \
                         INSERT INTO {t}_items (parent, what) SELECT id, 'during' FROM {t} WHERE seq = LAST_INSERT_ID()"
                    ),
                )
                .await;
            }
            let during: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT CAST(id AS CHAR) FROM {t} WHERE note = 'during' ORDER BY seq"
            )))
            .fetch_all(&mut c)
            .await
            .unwrap();
            assert_eq!(during.len(), 20);
            let stopped = held.go().await;
            assert!(
                !stopped.status.success() && stderr(&stopped).contains("RENAME"),
                "it stopped after the rename: {}",
                stderr(&stopped)
            );
            // Right after the rename: each row under combkey's conversion of its key, its child
            // referencing it.
            let key = |old: &str| {
                let new = m.convert(&old.parse::<Comb>().unwrap()).unwrap();
                if keep { format!("'{new}'") } else { format!("X'{}'", new.simple()) }
            };
            for old in &during {
                let k = key(old);
                assert_eq!(
                    count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE id = {k} AND note = 'during'")).await,
                    1,
                    "the row of {old} under {k} right after the swap"
                );
                assert_eq!(
                    count(&mut c, &format!("SELECT COUNT(*) FROM {t}_items WHERE parent = {k} AND what = 'during'"))
                        .await,
                    1,
                    "the child of {old}"
                );
            }
            let done = combkey_env(&run.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
            ok(&done);
            for old in &during {
                let old_key = format!("X'{}'", old.replace('-', ""));
                let new = m.convert(&old.parse::<Comb>().unwrap()).unwrap();
                let mapped: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!(
                    "SELECT CAST(HEX(new_key) AS CHAR) FROM combkey_keymap_{t} WHERE old_key = {old_key}"
                )))
                .fetch_all(&mut c)
                .await
                .unwrap();
                assert_eq!(mapped, vec![new.simple().to_string().to_uppercase()], "the key map's pair of {old}");
            }
            assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 220, "every row");
            assert_eq!(orphans(&mut c, t).await, Vec::new(), "children without their parent");
            assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
            exec(&mut c, &format!("SET foreign_key_checks = 0; DROP TABLE IF EXISTS {t}_notes, {t}_items, {t}, combkey_keymap_{t}; SET foreign_key_checks = 1")).await;
        }
    }

    /// A key the server converts otherwise than combkey would (here a v1 key of a day and a
    /// half from now, with the run's session two days ahead, as a server whose clock is ahead
    /// of combkey's host reads it: combkey reads the time as no key's, the server as one)
    /// stops the run before the swap, naming the key, nothing changed.
    #[tokio::test]
    async fn a_key_the_server_converts_otherwise_than_combkey_stops_the_swap() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_skewed";
        let mut c = connect().await;
        seed(&mut c, t, 100).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--set-default"]);
        let through = run_doctor(run.clone(), vec![("COMBKEY_DOCTOR_FAIL_AFTER_THROUGH".into(), "1".into())]).await;
        assert!(!through.status.success(), "it stopped: {}", stderr(&through));
        // A v1 key of 36 hours from now (100-ns ticks since 1582), written through as it is.
        let ms = i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis())
            .unwrap()
            + 36 * 3_600_000;
        let ticks = u64::try_from(ms).unwrap() * 10_000 + 0x01B2_1DD2_1381_4000;
        let future = format!(
            "{:08x}-{:04x}-1{:03x}-9abc-0123456789ab",
            ticks & 0xffff_ffff,
            (ticks >> 32) & 0xffff,
            (ticks >> 48) & 0x0fff
        );
        exec(&mut c, &format!("INSERT INTO {t} (id, note) VALUES ('{future}', 'future')")).await;
        let skewed = run_doctor(
            run.clone(),
            vec![("COMBKEY_DOCTOR_SQL_BEFORE_VERIFY".into(), "SET timestamp = UNIX_TIMESTAMP() + 172800".into())],
        )
        .await;
        assert!(!skewed.status.success(), "{}", stderr(&skewed));
        let said = stderr(&skewed);
        assert!(
            said.contains("converted by the server otherwise than combkey converts them")
                && said.contains(&future)
                && said.contains("the tables were not swapped"),
            "{said}"
        );
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await,
            101,
            "the table as it was"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        drop_tables(&mut c, t).await;
    }

    /// Runs copy and swap on `t` until its `RENAME TABLE` has been tried once and waits for a
    /// report that holds the table, does `meanwhile` from another session, then lets the report
    /// end: the run's output.
    async fn while_the_rename_waits(url: &str, t: &str, meanwhile: &str) -> Output {
        let mut c = connect().await;
        let tried = std::env::temp_dir().join(format!("combkey-swap-{t}-tried-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tried);
        std::fs::create_dir_all(&tried).unwrap();
        let held = Held::start(
            "BEFORE_SWAP",
            t,
            args(url, t, &["--apply", "--online", "--method", "copy-swap", "--set-default"]),
            vec![("COMBKEY_DOCTOR_HOLD_SWAP_TRIED".into(), tried.display().to_string())],
        )
        .await;
        // A report that holds the table from before the swap's first try.
        let mut report = connect().await;
        exec(&mut report, &format!("START TRANSACTION; SELECT COUNT(*) FROM {t}")).await;
        held.release();
        let waited = std::time::Instant::now();
        while !tried.join("held").exists() {
            assert!(waited.elapsed().as_secs() < 120, "the rename was never tried");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        exec(&mut c, meanwhile).await;
        std::fs::write(tried.join("go"), "").unwrap();
        exec(&mut report, "COMMIT").await;
        let out = held.end().await;
        let _ = std::fs::remove_dir_all(&tried);
        out
    }

    /// What another session makes while the swap's `RENAME TABLE` tries wait for a report that
    /// holds the table (a new table's foreign key that references it, which MariaDB makes at
    /// once beside the report) is seen before the next try: the run stops naming it, nothing
    /// swapped, the new table's foreign key still on the live table. (It was read once, before
    /// the tries, which can go on for minutes.)
    #[tokio::test]
    async fn a_foreign_key_made_while_the_rename_waits_stops_the_swap() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_fk_meanwhile";
        let mut c = connect().await;
        seed(&mut c, t, 100).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_later")).await;
        let out = while_the_rename_waits(
            &url,
            t,
            &format!(
                "CREATE TABLE {t}_later (k INT PRIMARY KEY, parent CHAR(36), CONSTRAINT {t}_later_fk FOREIGN KEY (parent) \
                 REFERENCES {t} (id)) ENGINE=InnoDB"
            ),
        )
        .await;
        assert!(!out.status.success(), "{}", stderr(&out));
        let said = stderr(&out);
        assert!(said.contains(&format!("{t}_later")) && said.contains("the tables were not swapped"), "{said}");
        let fk_on: String = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT CAST(REFERENCED_TABLE_NAME AS CHAR) FROM information_schema.REFERENTIAL_CONSTRAINTS \
             WHERE CONSTRAINT_SCHEMA = DATABASE() AND CONSTRAINT_NAME = '{t}_later_fk'"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(fk_on, t, "the new foreign key references the live table");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 100);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE {t}_later")).await;
        drop_tables(&mut c, t).await;
    }

    /// A report that holds a table when the write-through triggers are made, just before the
    /// swap, is waited for as the swap waits for it (`--swap-wait`), not given up on after the
    /// lock timeout: the run ends done once the report ends. (A break-test's report made the
    /// run stop after the 5 s lock timeout, though `--swap-wait` said 60 s.)
    #[tokio::test]
    async fn a_report_when_the_triggers_switch_is_waited_for_as_long_as_the_swap_waits() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_report_at_through";
        let mut c = connect().await;
        seed(&mut c, t, 100).await;
        let past = std::env::temp_dir().join(format!("combkey-swap-{t}-past-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&past);
        std::fs::create_dir_all(&past).unwrap();
        let run = args(
            &url,
            t,
            &[
                "--apply",
                "--online",
                "--method",
                "copy-swap",
                "--set-default",
                "--lock-timeout",
                "1s",
                "--swap-wait",
                "60s",
            ],
        );
        let held = Held::start(
            "BEFORE_THROUGH",
            t,
            run,
            vec![("COMBKEY_DOCTOR_HOLD_DDL_PAST_LOCK_TIMEOUT".into(), past.display().to_string())],
        )
        .await;
        let mut report = connect().await;
        exec(&mut report, &format!("START TRANSACTION; SELECT COUNT(*) FROM {t}_items")).await;
        held.release();
        // The triggers' tries go on past the lock timeout while the report holds the child.
        let waited = std::time::Instant::now();
        while !past.join("held").exists() {
            assert!(
                waited.elapsed().as_secs() < 120 && !held.doctor.is_finished(),
                "the triggers' tries did not go on past the lock timeout"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        exec(&mut report, "COMMIT").await;
        std::fs::write(past.join("go"), "").unwrap();
        let out = held.end().await;
        let _ = std::fs::remove_dir_all(&past);
        ok(&out);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 16")).await, 100, "swapped");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        drop_tables(&mut c, t).await;
    }

    /// A child truncated while the rename waits, and the application's inserts into it go on:
    /// its AUTO_INCREMENT counter starts again at 1, and the write-through trigger's insert
    /// into the copy, which still holds the old rows under those numbers, failed the
    /// application's insert with 1062 (76 in a break-test). Now none fails; the truncation
    /// stops the run before the rename, nothing swapped, no truncated row back.
    #[tokio::test]
    async fn a_child_truncated_while_the_rename_waits_fails_no_application_insert() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_truncated_meanwhile";
        let mut c = connect().await;
        seed(&mut c, t, 100).await;
        let out = while_the_rename_waits(
            &url,
            t,
            &format!(
                "TRUNCATE TABLE {t}_items; \
                 INSERT INTO {t}_items (parent, what) SELECT id, 'after' FROM {t} ORDER BY seq LIMIT 10"
            ),
        )
        .await;
        assert!(!out.status.success(), "{}", stderr(&out));
        let said = stderr(&out);
        assert!(said.contains("truncated") && said.contains("the tables were not swapped"), "{said}");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_items")).await, 10, "only the rows after it");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_items WHERE what = 'after'")).await, 10);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 100);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        drop_tables(&mut c, t).await;
    }

    /// A TRUNCATE after the check before the swap, just before the rename: MariaDB runs it as
    /// DDL, firing no trigger, so the copy still held the rows and the rename would have brought
    /// them back. The table's InnoDB id, read before the check, is read again before each try
    /// of the rename: nothing swapped, nothing changed, no row back.
    #[tokio::test]
    async fn a_table_truncated_just_before_the_rename_is_not_swapped_back_full() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_truncated";
        let mut c = connect().await;
        seed(&mut c, t, 200).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let held = Held::start("BEFORE_SWAP", "my-truncated", run, Vec::new()).await;
        assert!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_notes")).await > 0, "the rows to truncate");
        exec(&mut c, &format!("TRUNCATE {t}_notes")).await;
        let out = held.go().await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("test.{t}_notes was truncated (or rebuilt) during the run")), "{err}");
        assert!(err.contains("nothing changed"), "{err}");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_notes")).await, 0, "no row came back");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 200, "not swapped");
        drop_tables(&mut c, t).await;
    }

    /// Someone adds a column to the table while a copy and swap is under way: the run sees the
    /// change before its swap and changes nothing, and while it removes its triggers (one table
    /// at a time) no application write fails: the copies' foreign keys go first. Writes failed
    /// with 1452 on the copies' foreign key (a new parent not in the parent's copy once its
    /// trigger was gone, its child written through to the child's copy) in 3 of 4 such runs of
    /// a break-test.
    #[tokio::test]
    async fn a_run_stopped_by_someone_elses_ddl_fails_no_application_write() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_ddl";
        let mut c = connect().await;
        seed(&mut c, t, 400).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let stop = Arc::new(AtomicBool::new(false));
        let w = Arc::new(Writes::default());
        let writers: Vec<_> =
            (0..3).map(|_| tokio::spawn(writer(t.to_string(), 400, Arc::clone(&stop), Arc::clone(&w)))).collect();
        while w.parents_in.load(Ordering::Relaxed) < 20 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // Held once the copies have their foreign keys, just before the rename.
        let held = Held::start("BEFORE_SWAP", "ddl", run.clone(), Vec::new()).await;
        exec(&mut c, &format!("ALTER TABLE {t} ADD COLUMN extra INT NULL")).await;
        let out = held.go().await;
        let seen = w.parents_in.load(Ordering::Relaxed);
        while w.parents_in.load(Ordering::Relaxed) < seen + 20 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for h in writers {
            h.await.unwrap();
        }
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("changed since the run began"), "{}", stderr(&out));
        // What changed, not the two definitions whole.
        assert!(stderr(&out).contains("new: `extra` int(11) DEFAULT NULL"), "{}", stderr(&out));
        assert!(!stderr(&out).contains("before:"), "{}", stderr(&out));
        assert_eq!(
            w.failures.load(Ordering::Relaxed),
            0,
            "application writes failed: {}",
            w.last_error.lock().unwrap()
        );
        let all = count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await;
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await,
            all,
            "the keys as they were"
        );
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_notes, {t}_items, {t}")).await;
    }

    /// A removal of what a stopped run made, itself stopped half-way (the parent's triggers gone,
    /// the children's still there) while the application writes: the same command again once
    /// went on from the run's copy, which missed every change made to the parent meanwhile, and
    /// the application's new rows were gone after the swap (a break-test lost 7,049 orders and
    /// their lines this way). Now it removes what is left and begins afresh: every row there.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_removal_stopped_half_way_is_finished_and_loses_no_row() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_half";
        let mut c = connect().await;
        seed(&mut c, t, 400).await;
        let p0 = count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await;
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let w = Arc::new(Writes::default());
        let writers: Vec<_> =
            (0..3).map(|_| tokio::spawn(writer(t.to_string(), p0, Arc::clone(&stop), Arc::clone(&w)))).collect();
        let more = async |n: i64| {
            let seen = w.parents_in.load(Ordering::Relaxed);
            while w.parents_in.load(Ordering::Relaxed) < seen + n {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        };
        more(20).await;
        let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "3")]);
        assert!(stderr(&stopped).contains("stopping after phase 3"), "{}", stderr(&stopped));
        more(20).await;
        let half = combkey_env(
            &["doctor", "--url", &url, "--table", t, "--abandon"],
            &[("COMBKEY_DOCTOR_FAIL_AFTER_CLEAN_TRIGGERS", "1")],
        );
        assert!(stderr(&half).contains("stopping after clean_triggers 1"), "{}", stderr(&half));
        // The application goes on writing to the parent, whose triggers are gone.
        more(40).await;
        ok(&combkey_env(&run, &[]));
        more(20).await;
        stop.store(true, Ordering::Relaxed);
        for h in writers {
            h.await.unwrap();
        }
        assert_eq!(
            w.failures.load(Ordering::Relaxed),
            0,
            "no writer statement failed: {}",
            w.last_error.lock().unwrap()
        );
        let parents = p0 + w.parents_in.load(Ordering::Relaxed) - w.parents_out.load(Ordering::Relaxed);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, parents, "every parent there");
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE SUBSTR(HEX(id), 13, 1) <> '7'")).await,
            0,
            "every key converted"
        );
        assert_eq!(
            count(&mut c, &format!("SELECT CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM {t}")).await,
            w.updates.load(Ordering::Relaxed),
            "every update there"
        );
        assert_eq!(orphans(&mut c, t).await, Vec::new(), "children without their parent");
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_notes, {t}_items, {t}")).await;
    }

    /// `--abandon` of a run that installed combkey's functions for `--set-default` (none was
    /// there) removes them with the rest of the run, where nothing else calls them; functions
    /// that were there before a run stay, and so do those another table's trigger calls. In a
    /// database of its own: the functions are the database's.
    #[tokio::test]
    async fn an_abandoned_run_removes_the_functions_it_installed_and_keeps_those_in_use() {
        let db = "swap_my_abandon_fn";
        let mut admin = connect().await;
        exec(&mut admin, &format!("DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")).await;
        let base = combkey_testutil::mysql_url();
        let url = format!("{}/{db}", &base[..base.rfind('/').unwrap()]);
        let t = "swap_my_abandon_fn";
        let mut c = MySqlConnection::connect(&url).await.unwrap();
        let functions = format!(
            "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '{db}' AND ROUTINE_NAME IN \
             ('combkey_v7', 'combkey_v7_from', 'combkey_unix_ms', 'combkey_time')"
        );
        let run = args(
            &url,
            t,
            &["--apply", "--online", "--method", "copy-swap", "--set-default", "--app-ready-for-new-type"],
        );
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        // Installed by the run; there before it; installed by the run and called by a trigger
        // of another table meanwhile.
        for case in ["by the run", "before", "in use"] {
            seed(&mut c, t, 300).await;
            if case == "before" {
                for f in combkey::Backend::MySql.install_functions().split(";\n").filter(|f| !f.trim().is_empty()) {
                    exec(&mut c, f).await;
                }
            }
            assert_eq!(count(&mut c, &functions).await, if case == "before" { 4 } else { 0 }, "{case}");
            let stopped = combkey_env(&run, &[("COMBKEY_DOCTOR_FAIL_AFTER_PHASE", "3")]);
            assert!(stderr(&stopped).contains("stopping after phase 3"), "{}", stderr(&stopped));
            assert_eq!(count(&mut c, &functions).await, 4, "the run installed them for its default");
            if case == "in use" {
                exec(
                    &mut c,
                    &format!(
                        "CREATE TABLE {t}_other (id BINARY(16) PRIMARY KEY); CREATE TRIGGER {t}_other_id BEFORE INSERT \
                         ON {t}_other FOR EACH ROW SET NEW.id = combkey_v7()"
                    ),
                )
                .await;
            }
            let out = ok(&combkey_env(&["doctor", "--url", &url, "--table", t, "--abandon"], &[]));
            assert!(out.contains("abandoned"), "{out}");
            assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
            assert_eq!(count(&mut c, &functions).await, if case == "by the run" { 0 } else { 4 }, "{case}");
            drop_tables(&mut c, t).await;
            if case == "before" {
                exec(&mut c, combkey::Backend::MySql.drop_functions()).await;
            }
        }
        exec(&mut c, &format!("INSERT INTO {t}_other () VALUES ()")).await;
        c.close().await.unwrap();
        exec(&mut admin, &format!("DROP DATABASE {db}")).await;
    }

    /// A prepared XA transaction whose client went (it holds its row locks, and shows in no
    /// session) makes a journaled run wait past its lock timeout: the failure names it as such,
    /// where it once named nothing (or "session 0 (user ?, ?)"); once it is rolled back the same
    /// command, even with --online, finishes it.
    #[tokio::test]
    async fn a_prepared_xa_transaction_holding_a_row_is_named() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_xa";
        let mut c = connect().await;
        let _ = sqlx::raw_sql(AssertSqlSafe(format!("XA ROLLBACK '{t}'"))).execute(&mut c).await;
        seed(&mut c, t, 50).await;
        let mut holder = connect().await;
        exec(
            &mut holder,
            &format!("XA START '{t}'; UPDATE {t} SET n = n + 1 WHERE seq = 5; XA END '{t}'; XA PREPARE '{t}'"),
        )
        .await;
        holder.close().await.unwrap();
        let run = args(&url, t, &["--apply", "--set-default", "--lock-timeout", "1s"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let stopped = combkey_env(&run, &[]);
        assert_eq!(stopped.status.code(), Some(1), "{}", stderr(&stopped));
        assert!(
            stderr(&stopped).contains("a transaction of no session (a prepared XA transaction: XA RECOVER lists it)"),
            "{}",
            stderr(&stopped)
        );
        assert!(!stderr(&stopped).contains("(user ?"), "{}", stderr(&stopped));
        exec(&mut c, &format!("XA ROLLBACK '{t}'")).await;
        // The same run asked for online: finished as it began (it once refused, its own guard
        // triggers taken for a user's).
        let mut online = run.clone();
        online.extend(["--online", "--app-ready-for-new-type"]);
        let out = combkey_env(&online, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("finished as it began"), "{}", stderr(&out));
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE SUBSTR(HEX(id), 13, 1) <> '7'")).await,
            0,
            "every key converted"
        );
        assert_eq!(orphans(&mut c, t).await, Vec::new(), "children without their parent");
        drop_tables(&mut c, t).await;
        exec(&mut c, &format!("DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
    }

    /// The audit of a table whose InnoDB statistics are of when it was near empty says its
    /// size is those statistics, and gives no estimate from it (it printed "16 KiB; with sorted
    /// keys about 16 KiB" for 100,000 rows); once analysed, the size and estimate are shown.
    #[tokio::test]
    async fn an_unanalysed_tables_size_is_said_to_be_stale() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_stale_stats";
        let mut c = connect().await;
        exec(
            &mut c,
            &format!(
                "DROP TABLE IF EXISTS {t};
                 CREATE TABLE {t} (id BINARY(16) NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB STATS_AUTO_RECALC=0;
                 INSERT INTO {t} SELECT RANDOM_BYTES(16), seq FROM seq_1_to_20000"
            ),
        )
        .await;
        let out = ok(&combkey_env(&["doctor", "--url", &url, "--table", t], &[]));
        assert!(out.contains("InnoDB's statistics of the table when it held fewer rows"), "{out}");
        assert!(!out.contains("with sorted keys about"), "{out}");
        exec(&mut c, &format!("ANALYZE TABLE {t}")).await;
        let out = ok(&combkey_env(&["doctor", "--url", &url, "--table", t], &[]));
        assert!(!out.contains("fewer rows") && out.contains("with sorted keys about"), "{out}");
        exec(&mut c, &format!("DROP TABLE {t}")).await;
    }

    /// The copies' statistics are taken before the swap: under `STATS_AUTO_RECALC=0` (which the
    /// copy keeps from the table's definition) InnoDB never recounts them, and the swapped-in
    /// table showed 0 rows to the optimizer and a key index of one page to the audit after.
    #[tokio::test]
    async fn the_swapped_in_tables_have_their_statistics() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_stats";
        let mut c = connect().await;
        let _ =
            sqlx::raw_sql(AssertSqlSafe(format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%'")))
                .execute(&mut c)
                .await;
        exec(
            &mut c,
            &format!(
                "DROP TABLE IF EXISTS {t}, combkey_keymap_{t};
                 CREATE TABLE {t} (id CHAR(36) NOT NULL DEFAULT (UUID()) PRIMARY KEY, n INT) ENGINE=InnoDB STATS_AUTO_RECALC=0;
                 INSERT INTO {t} (n) SELECT seq FROM seq_1_to_3000"
            ),
        )
        .await;
        let run = args(
            &url,
            t,
            &[
                "--apply",
                "--online",
                "--method",
                "copy-swap",
                "--set-default",
                "--app-ready-for-new-type",
                "--drop-old",
            ],
        );
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        ok(&combkey_env(&run, &[]));
        let counted = count(
            &mut c,
            &format!(
                "SELECT CAST(n_rows AS SIGNED) FROM mysql.innodb_table_stats WHERE database_name = DATABASE() \
                 AND table_name = '{t}'"
            ),
        )
        .await;
        assert!(counted > 1500 && counted < 6000, "the optimizer's {counted} rows, of 3000");
        exec(&mut c, &format!("DROP TABLE {t}, combkey_keymap_{t}")).await;
    }

    /// A report's transaction reads the table just before the swap (where the RENAME once
    /// waited a second at a time heading the metadata lock queue, every writer behind it): the
    /// RENAME never queues, the run says it waits, no application statement waits for a
    /// metadata lock, and the swap goes through once the report ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_report_holding_the_table_never_puts_the_writers_behind_the_rename() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_reader";
        let mut c = connect().await;
        seed(&mut c, t, 400).await;
        let dir = std::env::temp_dir().join(format!("combkey-swap-reader-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let run = args(&url, t, &["--apply", "--online", "--method", "copy-swap", "--drop-old", "--set-default"]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let mut doctor = combkey_testutil::Running::start(
            Command::new(env!("CARGO_BIN_EXE_combkey"))
                .args(ready(&run))
                .env("COMBKEY_DOCTOR_HOLD_BEFORE_SWAP", dir.display().to_string()),
        );
        let waited = std::time::Instant::now();
        while !dir.join("held").exists() {
            assert!(waited.elapsed().as_secs() < 120, "the run never reached its swap");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let mut report = connect().await;
        exec(&mut report, "START TRANSACTION").await;
        count(&mut report, &format!("SELECT COUNT(*) FROM {t}")).await;
        std::fs::write(dir.join("go"), "").unwrap();
        doctor.wait_for_line(&["waiting to swap", "RENAME TABLE"], std::time::Duration::from_secs(120));
        for i in 1..=20 {
            // Statements on this test's tables (other tests run beside it on the server).
            let queued = format!(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for table metadata lock%' \
                 AND INFO LIKE '%{t}%'"
            );
            assert_eq!(count(&mut c, &queued).await, 0, "a statement waits for a metadata lock");
            exec(&mut c, &format!("UPDATE {t} SET n = n + 1 WHERE seq = {i}")).await;
        }
        exec(&mut report, "COMMIT").await;
        let (done, said) = doctor.finish(std::time::Duration::from_secs(300));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(done, "{said}");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 16")).await, 400, "swapped");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE n > 0 AND seq <= 20")).await, 20);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
        // The same command after the finished run (its own --set-default trigger in place):
        // nothing to do, exit 0.
        let again = combkey_env(&run, &[]);
        assert!(ok(&again).contains("nothing to do"), "{}", String::from_utf8_lossy(&again.stdout));
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}_notes, {t}_items, {t}")).await;
    }

    /// A copy that lost a row its children reference (here removed by hand while the run was
    /// stopped) is never swapped in: the run stops before the swap with nothing changed, where
    /// it once removed the children's copies as if a cascade had deleted them (and the swap
    /// lost the parent and its notes); the next run copies anew and ends done.
    #[tokio::test]
    async fn a_copy_that_lost_a_referenced_row_is_not_swapped_in() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_lost";
        let mut c = connect().await;
        seed(&mut c, t, 3000).await;
        let notes = count(&mut c, &format!("SELECT COUNT(*) FROM {t}_notes")).await;
        let stopped = combkey_env(
            &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--method", "copy-swap", "--set-default"],
            &[("COMBKEY_DOCTOR_FAIL_AFTER_THROUGH", "1")],
        );
        assert!(!stopped.status.success(), "it stopped: {}", stderr(&stopped));
        // Parent 7 has notes (a plain foreign key, no cascade).
        exec(&mut c, &format!("DELETE FROM _{t}_new WHERE seq = 7")).await;
        let failed = combkey_env(&["doctor", "--url", &url, "--table", t, "--apply", "--online", "--set-default"], &[]);
        assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
        assert!(stderr(&failed).contains("reference no row of the copy"), "{}", stderr(&failed));
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 3000, "the table as it was");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE LENGTH(id) = 36")).await, 3000);
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_notes")).await, notes);
        let done = json(&combkey_env(
            &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--set-default", "--json"],
            &[],
        ));
        assert_eq!(done["online"]["method"], "copy-swap", "{done}");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}")).await, 3000, "every row");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t}_notes")).await, notes, "every note");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE seq = 7")).await, 1);
        assert!(leftovers(&mut c, t).await.is_empty(), "{:?}", leftovers(&mut c, t).await);
    }

    /// Stopped after each phase and after a chunk of the copy: before the swap the application
    /// sees the tables as they were; a second run finishes.
    #[tokio::test]
    async fn stopped_at_any_phase_a_second_run_finishes() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        for (k, (var, n)) in [("CHUNK", 1), ("PHASE", 1), ("PHASE", 3), ("THROUGH", 1), ("RENAME", 1), ("PHASE", 5)]
            .into_iter()
            .enumerate()
        {
            let t = format!("swap_my_stop{k}");
            let t = t.as_str();
            seed(&mut c, t, 3000).await;
            let stopped = combkey_env(
                &[
                    "doctor",
                    "--url",
                    &url,
                    "--table",
                    t,
                    "--apply",
                    "--online",
                    "--method",
                    "copy-swap",
                    "--set-default",
                ],
                &[(&format!("COMBKEY_DOCTOR_FAIL_AFTER_{var}"), &n.to_string())],
            );
            assert!(!stopped.status.success(), "it stopped: {}", stderr(&stopped));
            let swapped = count(&mut c, &format!("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '_{t}_old'")).await == 1;
            assert_eq!(swapped, var == "RENAME" || n == 5, "{var} {n}");
            if !swapped {
                // The application goes on: its writes reach the copy too.
                exec(&mut c, &format!("INSERT INTO {t} (note) VALUES ('late'); UPDATE {t} SET n = 5 WHERE seq = 3"))
                    .await;
            }
            let done = json(&combkey_env(
                &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--set-default", "--json"],
                &[],
            ));
            assert_eq!(done["column_type"], "binary(16)", "{var} {n}: {done}");
            assert_eq!(
                count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE SUBSTR(HEX(id), 13, 1) <> '7'")).await,
                0,
                "{var} {n}"
            );
            if !swapped {
                assert_eq!(
                    count(&mut c, &format!("SELECT n FROM {t} WHERE seq = 3")).await,
                    5,
                    "{var} {n}: the update came"
                );
                assert_eq!(
                    count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE note = 'late'")).await,
                    1,
                    "{var} {n}"
                );
            }
            assert!(leftovers(&mut c, t).await.is_empty(), "{var} {n}: {:?}", leftovers(&mut c, t).await);
            let orphans = count(
                &mut c,
                &format!("SELECT COUNT(*) FROM {t}_items i LEFT JOIN {t} p ON p.id = i.parent WHERE p.id IS NULL"),
            )
            .await;
            assert_eq!(orphans, 0, "{var} {n}");
        }
    }

    /// A user trigger on the table would stay with the old one: `auto` cannot change the type
    /// in place online, so it refuses, naming the trigger; nothing changed.
    #[tokio::test]
    async fn a_user_trigger_refuses_the_type_change_online() {
        let url = combkey_testutil::mysql_url();
        let t = "swap_my_trigger";
        let mut c = connect().await;
        seed(&mut c, t, 200).await;
        exec(&mut c, &format!("DROP TRIGGER IF EXISTS {t}_audit; CREATE TRIGGER {t}_audit BEFORE UPDATE ON {t} FOR EACH ROW SET NEW.note = 'updated'")).await;
        let before = show(&mut c, t).await;
        let out = combkey_env(
            &["doctor", "--url", &url, "--table", t, "--apply", "--online", "--set-default", "--triggers", "fire"],
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("{t}_audit")) && stderr(&out).contains("Nothing was changed"),
            "{}",
            stderr(&out)
        );
        assert_eq!(show(&mut c, t).await, before);
        assert!(leftovers(&mut c, t).await.is_empty());
    }

    /// `--keep-type` on MySQL/MariaDB text keys, `CHAR(36)` and `CHAR(32)`: the column keeps its
    /// type, the keys become v7 ids in its form, online (copy and swap) and offline.
    #[tokio::test]
    async fn keep_type_keeps_char_keys_char() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        for (t, width, online) in [("keep_my_36", 36, true), ("keep_my_32", 32, true), ("keep_my_off", 36, false)] {
            let _ = sqlx::raw_sql(AssertSqlSafe(format!(
                "DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"{t}\"%'"
            )))
            .execute(&mut c)
            .await;
            exec(
                &mut c,
                &format!(
                    "SET foreign_key_checks = 0;
                     DROP TABLE IF EXISTS {t}_items, {t}, _{t}_old, _{t}_items_old;
                     SET foreign_key_checks = 1;
                     CREATE TABLE {t} (id CHAR({width}) NOT NULL PRIMARY KEY, seq INT NOT NULL AUTO_INCREMENT UNIQUE);
                     CREATE TABLE {t}_items (k INT AUTO_INCREMENT PRIMARY KEY, parent CHAR({width}) NOT NULL,
                       CONSTRAINT {t}_fk FOREIGN KEY (parent) REFERENCES {t} (id))"
                ),
            )
            .await;
            let keys = rtcomb_sql(200, 41);
            let text = |k: &Comb| if width == 32 { k.simple().to_string() } else { k.to_string() };
            let values: Vec<String> = keys.iter().map(|k| format!("('{}')", text(k))).collect();
            exec(
                &mut c,
                &format!(
                    "INSERT INTO {t} (id) VALUES {}; INSERT INTO {t}_items (parent) SELECT id FROM {t}",
                    values.join(", ")
                ),
            )
            .await;
            let mut args = vec!["doctor", "--url", &url, "--table", t, "--apply", "--keep-type", "--json"];
            if online {
                args.push("--online");
            }
            let done = json(&combkey_env(&args, &[]));
            assert_eq!(done["column_type"], format!("char({width})"), "{t}: {done}");
            let m = KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap();
            let first: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {t} WHERE seq = 1")))
                .fetch_one(&mut c)
                .await
                .unwrap();
            assert_eq!(first, text(&m.convert(&keys[0]).unwrap()), "{t}: v7 in the column's form");
            let joined =
                count(&mut c, &format!("SELECT COUNT(*) FROM {t}_items i JOIN {t} p ON p.id = i.parent")).await;
            assert_eq!(joined, 200, "{t}");
        }
    }

    /// `--migration-sql` of a type change with `--set-default` (guard triggers, combkey's
    /// functions and trigger: bodies with `;` in them) runs to its end in the `mariadb` client,
    /// and the table ends as `--apply` would leave it.
    #[tokio::test]
    async fn the_script_runs_in_the_mariadb_client() {
        let url = combkey_testutil::mysql_url();
        let t = "script_my";
        let mut c = connect().await;
        seed(&mut c, t, 300).await;
        let out = combkey_env(&["doctor", "--url", &url, "--table", t, "--migration-sql", "--set-default"], &[]);
        let script = ok(&out);
        assert!(script.contains("DELIMITER //"), "trigger bodies between DELIMITER lines");
        // The application writes on between the script's making and its run: keys the
        // script's mapping does not hold (MySQL's UUID(), one in upper case with a child
        // that spells it in lower case, as a case-insensitive collation lets it).
        exec(
            &mut c,
            &format!(
                "INSERT INTO {t} (note) VALUES ('late');
                 INSERT INTO {t} (id, note) VALUES (UPPER(UUID()), 'late');
                 INSERT INTO {t}_items (parent, what) SELECT LOWER(id), 'late' FROM {t} WHERE note = 'late'"
            ),
        )
        .await;
        let rest = url.split_once("://").unwrap().1;
        let (user, rest) = rest.split_once('@').unwrap();
        let (hostport, db) = rest.split_once('/').unwrap();
        let (host, port) = hostport.split_once(':').unwrap();
        let mut client = Command::new("mariadb")
            .args([
                "--protocol=tcp",
                "-h",
                host,
                "-P",
                port,
                "-u",
                user.split(':').next().unwrap(),
                db.split('?').next().unwrap(),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the mariadb client (scripts/deps.sh)");
        {
            use std::io::Write as _;
            client.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
        }
        let ran = client.wait_with_output().unwrap();
        assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
        let after = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        // The late keys are stored as the UUIDs they spell (MySQL's v1), not converted, and
        // every child still finds its parent.
        assert_eq!(layouts_of(&after), [("v1".to_string(), 2), ("v7".to_string(), 300)], "{after}");
        assert_eq!(
            count(
                &mut c,
                &format!("SELECT COUNT(*) FROM {t}_items i JOIN {t} p ON p.id = i.parent WHERE i.what = 'late'")
            )
            .await,
            2
        );
        assert_eq!(after["default"]["makes"], "v7", "{after}");
        // The next run converts them.
        ok(&combkey_env(&["doctor", "--url", &url, "--table", t, "--apply"], &[]));
        let after = json(&combkey_env(&["doctor", "--url", &url, "--table", t, "--json"], &[]));
        assert_eq!(layouts_of(&after), [("v7".to_string(), 302)], "{after}");
        // A row inserted without a key gets combkey's.
        exec(&mut c, &format!("INSERT INTO {t} (note) VALUES ('after')")).await;
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE SUBSTR(HEX(id), 13, 1) <> '7'")).await, 0);
    }
}
