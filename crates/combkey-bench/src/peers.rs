//! `peers`: `combkey doctor` beside the tools DBAs already trust for the same job, on the same
//! tables, under the same application load, in one run.
//!
//! The tables (issue shape): a parent with `--parents` rows and a child with one row for every
//! fifth parent, an indexed foreign key. PostgreSQL: `uuid` keys from `uuid_generate_v1mc()`
//! (version 1, which does not sort on PostgreSQL). MariaDB: `CHAR(36)` keys from `UUID()`, the
//! most common legacy MySQL key (version 1 text: `doctor` changes the column to `BINARY(16)` v7
//! too). Both made afresh from a template before each run.
//!
//! The load is open-loop, as pgbench `-R` and sysbench `--rate` make it: `--rate` transactions a
//! second in all on `--writers` connections, each on a schedule fixed in advance; a
//! transaction's latency counts from its scheduled start, so time spent behind a lock or a busy
//! server shows (no coordinated omission). A transaction inserts a parent (PostgreSQL: a v7 key
//! the application makes with combkey; MariaDB: the column's default makes it), updates a
//! parent found by its number, and inserts a child of that parent.
//!
//! The runs: no migration (the writers alone), the peer (`pg_repack -t parent -t child`;
//! `pt-online-schema-change --alter ENGINE=InnoDB --alter-foreign-keys-method
//! rebuild_constraints`), `combkey doctor --apply --online` by each method, `combkey doctor
//! --apply` offline, and its own `--migration-sql` run by the database's client. Each reports
//! its time, the writers' latency percentiles and errors during it, the primary key's size and
//! leaf density after, and checks the tables: every parent and child there, no orphan, every
//! old key converted (doctor's runs).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use combkey::{Backend, Comb};
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The writers alone.
    None,
    /// pg_repack / pt-online-schema-change.
    Peer,
    /// `doctor --apply --online --method copy-swap`.
    CopySwap,
    /// `doctor --apply --online --method in-place`.
    InPlace,
    /// `doctor --apply`.
    Offline,
    /// `doctor --migration-sql`, run by psql / mariadb.
    Script,
}

impl Kind {
    pub(crate) fn name(self, backend: Backend) -> &'static str {
        match (self, backend) {
            (Kind::None, _) => "no migration",
            (Kind::Peer, Backend::Postgres) => "pg_repack -t parent -t child",
            (Kind::Peer, _) => "pt-online-schema-change",
            (Kind::CopySwap, _) => "doctor --online (copy-swap)",
            (Kind::InPlace, _) => "doctor --online (in-place)",
            (Kind::Offline, _) => "doctor --apply (offline)",
            (Kind::Script, Backend::Postgres) => "doctor --migration-sql | psql",
            (Kind::Script, _) => "doctor --migration-sql | mariadb",
        }
    }
}

/// One run's figures.
pub(crate) struct PeerRun {
    pub(crate) backend: Backend,
    pub(crate) parents: usize,
    pub(crate) kind: Kind,
    /// The migration's time (the writers' window for `None`).
    pub(crate) seconds: f64,
    /// Of it, doctor's run itself as it reports it (without its audits before and after).
    pub(crate) run_seconds: Option<f64>,
    /// `None` where it did not run to its end, with why.
    pub(crate) failed: Option<String>,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) max: f64,
    pub(crate) transactions: usize,
    pub(crate) errors: usize,
    pub(crate) error_kinds: Vec<String>,
    pub(crate) pk_bytes: Option<i64>,
    pub(crate) leaf_density: Option<f64>,
    /// What the tables look like after: parents, children, orphans, old keys left.
    pub(crate) checks: String,
    /// The tool's peak resident memory (KiB, GNU time's `%M`), where measured.
    pub(crate) rss_kib: Option<u64>,
}

/// The settings of a run.
pub(crate) struct Setup<'a> {
    pub(crate) backend: Backend,
    pub(crate) url: &'a str,
    pub(crate) parents: usize,
    pub(crate) rate: f64,
    pub(crate) writers: usize,
    /// Every this many transactions a writer also deletes a parent with its children (0: none).
    pub(crate) delete_every: u32,
    pub(crate) combkey: &'a Path,
}

/// One writer transaction: when it was due (s from the start), its latency (ms from when it was
/// due), and its error.
struct Tx {
    due: f64,
    ms: f64,
    error: Option<String>,
}

/// The tables' statements, per database, from the template (`_peers_t_parent`, `_peers_t_child`).
fn make_tables(backend: Backend, parents: usize) -> (Vec<String>, Vec<String>) {
    let children = parents / 5;
    match backend {
        Backend::Postgres => (
            vec![
                "CREATE EXTENSION IF NOT EXISTS \"uuid-ossp\"".into(),
                "CREATE EXTENSION IF NOT EXISTS pgstattuple".into(),
                "CREATE EXTENSION IF NOT EXISTS pg_repack".into(),
                "DROP TABLE IF EXISTS _peers_t_child, _peers_t_parent".into(),
                format!(
                    "CREATE TABLE _peers_t_parent AS SELECT uuid_generate_v1mc() AS id, g::bigint AS seq, 0 AS n, \
                     md5(g::text) AS payload FROM generate_series(1, {parents}) g"
                ),
                format!(
                    "CREATE TABLE _peers_t_child AS SELECT g::bigint AS id, p.id AS parent_id, 'seeded'::text AS note \
                     FROM generate_series(1, {children}) g JOIN _peers_t_parent p ON p.seq = g * 5"
                ),
            ],
            vec![
                "DROP TABLE IF EXISTS child, parent, _parent_old, _child_old, _parent_new, _child_new, _parent_map, \
                 _parent_log, _child_log, combkey_keymap_parent CASCADE"
                    .into(),
                "DROP FUNCTION IF EXISTS _parent_capture(), _child_capture() CASCADE".into(),
                "DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"parent\"%'".into(),
                "CREATE TABLE parent (id uuid PRIMARY KEY DEFAULT uuid_generate_v1mc(), seq bigserial UNIQUE, \
                 n int NOT NULL DEFAULT 0, payload text)"
                    .into(),
                "INSERT INTO parent (id, seq, n, payload) SELECT id, seq, n, payload FROM _peers_t_parent".into(),
                "SELECT setval(pg_get_serial_sequence('parent', 'seq'), (SELECT max(seq) FROM parent))".into(),
                "CREATE TABLE child (id bigserial PRIMARY KEY, parent_id uuid NOT NULL REFERENCES parent (id), note text)"
                    .into(),
                "INSERT INTO child (id, parent_id, note) SELECT id, parent_id, note FROM _peers_t_child".into(),
                "SELECT setval(pg_get_serial_sequence('child', 'id'), (SELECT max(id) FROM child))".into(),
                "CREATE INDEX child_parent_id ON child (parent_id)".into(),
                "VACUUM ANALYZE parent".into(),
                "VACUUM ANALYZE child".into(),
                "CHECKPOINT".into(),
            ],
        ),
        _ => (
            vec![
                "DROP TABLE IF EXISTS _peers_t_child, _peers_t_parent".into(),
                format!(
                    "CREATE TABLE _peers_t_parent ENGINE=InnoDB AS SELECT UUID() AS id, seq, 0 AS n, MD5(seq) AS payload \
                     FROM seq_1_to_{parents}"
                ),
                "ALTER TABLE _peers_t_parent ADD PRIMARY KEY (seq)".into(),
                format!(
                    "CREATE TABLE _peers_t_child ENGINE=InnoDB AS SELECT s.seq AS id, p.id AS parent_id, 'seeded' AS note \
                     FROM seq_1_to_{children} s JOIN _peers_t_parent p ON p.seq = s.seq * 5"
                ),
            ],
            vec![
                "SET foreign_key_checks = 0".into(),
                "DROP TABLE IF EXISTS child, parent, _parent_old, _child_old, _parent_new, _child_new, _parent_map, \
                 _parent_todo, _parent_log, _child_log, combkey_keymap_parent, _parent_del"
                    .into(),
                "SET foreign_key_checks = 1".into(),
                "DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"parent\"%'".into(),
                "CREATE TABLE parent (id CHAR(36) NOT NULL DEFAULT (UUID()), seq INT NOT NULL AUTO_INCREMENT, \
                 n INT NOT NULL DEFAULT 0, payload VARCHAR(100), PRIMARY KEY (id), UNIQUE KEY (seq)) ENGINE=InnoDB"
                    .into(),
                "INSERT INTO parent (id, seq, n, payload) SELECT id, seq, n, payload FROM _peers_t_parent ORDER BY id".into(),
                "CREATE TABLE child (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, parent_id CHAR(36) NOT NULL, \
                 note VARCHAR(20), KEY child_parent_id (parent_id), CONSTRAINT child_fk FOREIGN KEY (parent_id) \
                 REFERENCES parent (id)) ENGINE=InnoDB"
                    .into(),
                "INSERT INTO child (id, parent_id, note) SELECT id, parent_id, note FROM _peers_t_child ORDER BY id".into(),
                "ANALYZE TABLE parent, child".into(),
            ],
        ),
    }
}

/// Runs statements on a connection of their own (the journal's clean-up only where the journal
/// is there: doctor makes it at its first run).
async fn exec_all(backend: Backend, url: &str, sqls: &[String]) -> Result<(), BoxError> {
    let optional = |s: &str| s.starts_with("DELETE FROM combkey_doctor_journal");
    match backend {
        Backend::Postgres => {
            let mut c = PgConnection::connect(url).await?;
            for s in sqls {
                if let Err(e) = sqlx::raw_sql(AssertSqlSafe(s.clone())).execute(&mut c).await
                    && !optional(s)
                {
                    return Err(format!("{s}: {e}").into());
                }
            }
        }
        _ => {
            let mut c = MySqlConnection::connect(url).await?;
            for s in sqls {
                if let Err(e) = sqlx::raw_sql(AssertSqlSafe(s.clone())).execute(&mut c).await
                    && !optional(s)
                {
                    return Err(format!("{s}: {e}").into());
                }
            }
        }
    }
    Ok(())
}

/// The template, made once per size.
pub(crate) async fn template(backend: Backend, url: &str, parents: usize) -> Result<(), BoxError> {
    let (t, _) = make_tables(backend, parents);
    exec_all(backend, url, &t).await
}

/// One writer's share of the schedule.
struct Writer {
    backend: Backend,
    url: String,
    parents: usize,
    start: Instant,
    interval: Duration,
    offset: Duration,
    stop: Arc<std::sync::atomic::AtomicBool>,
    out: Arc<Mutex<Vec<Tx>>>,
    seed: u64,
    delete_every: u32,
}

/// One writer: its share of the schedule, on a connection of its own.
async fn writer(w: Writer) -> Result<(), BoxError> {
    let Writer { backend, url, parents, start, interval, offset, stop, out, seed, delete_every } = w;
    use std::sync::atomic::Ordering;
    let mut pg = None;
    let mut my = None;
    match backend {
        Backend::Postgres => pg = Some(PgConnection::connect(&url).await?),
        _ => my = Some(MySqlConnection::connect(&url).await?),
    }
    let mut k: u32 = 0;
    let mut r = seed;
    let mut txs = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let due = offset + interval * k;
        k += 1;
        let at = start + due;
        let now = Instant::now();
        if at > now {
            tokio::time::sleep(at - now).await;
        }
        // A parent by its number, spread over the loaded ones (xorshift).
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        let seq = 1 + r % u64::try_from(parents).unwrap_or(1);
        // Every `delete_every`th: another loaded parent deleted, its children first.
        let gone = 1 + (r >> 20) % u64::try_from(parents).unwrap_or(1);
        let delete = delete_every > 0 && k.is_multiple_of(delete_every);
        let result: Result<(), sqlx::Error> = match (&mut pg, &mut my) {
            (Some(c), _) => {
                let id = Comb::new();
                let delete = if delete {
                    format!(
                        "DELETE FROM child WHERE parent_id = (SELECT id FROM parent WHERE seq = {gone}); \
                         DELETE FROM parent WHERE seq = {gone}; "
                    )
                } else {
                    String::new()
                };
                sqlx::raw_sql(AssertSqlSafe(format!(
                    "BEGIN; INSERT INTO parent (id, payload) VALUES ('{id}', 'writer'); \
                     UPDATE parent SET n = n + 1 WHERE seq = {seq}; \
                     INSERT INTO child (parent_id, note) SELECT id, 'writer' FROM parent WHERE seq = {seq}; {delete}COMMIT"
                )))
                .execute(&mut *c)
                .await
                .map(drop)
            }
            (_, Some(c)) => {
                let delete = if delete {
                    format!(
                        "DELETE c FROM child c JOIN parent p ON p.id = c.parent_id WHERE p.seq = {gone}; \
                         DELETE FROM parent WHERE seq = {gone}; "
                    )
                } else {
                    String::new()
                };
                sqlx::raw_sql(AssertSqlSafe(format!(
                    "START TRANSACTION; INSERT INTO parent (payload) VALUES ('writer'); \
                     UPDATE parent SET n = n + 1 WHERE seq = {seq}; \
                     INSERT INTO child (parent_id, note) SELECT id, 'writer' FROM parent WHERE seq = {seq}; {delete}COMMIT"
                )))
                .execute(&mut *c)
                .await
                .map(drop)
            }
            _ => Ok(()),
        };
        let error = match result {
            Ok(()) => None,
            Err(e) => {
                let _ = match (&mut pg, &mut my) {
                    (Some(c), _) => sqlx::raw_sql("ROLLBACK").execute(&mut *c).await.map(drop),
                    (_, Some(c)) => sqlx::raw_sql("ROLLBACK").execute(&mut *c).await.map(drop),
                    _ => Ok(()),
                };
                let text = e.to_string();
                Some(text.chars().take(160).collect())
            }
        };
        txs.push(Tx { due: due.as_secs_f64(), ms: at.elapsed().as_secs_f64() * 1000.0, error });
    }
    if let Ok(mut o) = out.lock() {
        o.extend(txs);
    }
    Ok(())
}

/// `program` run under GNU time, which writes its peak resident memory (KiB) to `rss`; the
/// program itself where there is no `/usr/bin/time`.
fn timed(program: impl AsRef<std::ffi::OsStr>, rss: &Path) -> tokio::process::Command {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return tokio::process::Command::new(program);
    }
    let mut c = tokio::process::Command::new(time);
    c.args(["-f", "%M", "-o"]).arg(rss).arg(program);
    c
}

/// The command line of a run, and its environment.
fn command(setup: &Setup<'_>, kind: Kind, script: &Path, rss: &Path) -> Option<tokio::process::Command> {
    let url = setup.url;
    let (host, port, user, db) = parts(url);
    let mut c = match (kind, setup.backend) {
        (Kind::None, _) => return None,
        (Kind::Peer, Backend::Postgres) => {
            let mut c = timed("pg_repack", rss);
            c.args([
                "-h",
                &host,
                "-p",
                &port,
                "-U",
                &user,
                "-d",
                &db,
                "-t",
                "parent",
                "-t",
                "child",
                "--no-kill-backend",
            ]);
            c
        }
        (Kind::Peer, _) => {
            let mut c = timed("pt-online-schema-change", rss);
            c.args([
                "--alter",
                "ENGINE=InnoDB",
                "--alter-foreign-keys-method",
                "rebuild_constraints",
                "--execute",
                "--no-version-check",
                "--recursion-method",
                "none",
                "--no-check-alter",
                &format!("h={host},P={port},u={user},D={db},t=parent"),
            ]);
            c
        }
        (Kind::CopySwap | Kind::InPlace | Kind::Offline, b) => {
            let mut c = timed(setup.combkey, rss);
            c.args(["doctor", "--url", url, "--table", "parent", "--apply", "--progress", "none"]);
            if b != Backend::Postgres {
                c.arg("--set-default");
            }
            match kind {
                Kind::CopySwap => drop(c.args(["--online", "--method", "copy-swap"])),
                Kind::InPlace => drop(c.args(["--online", "--method", "in-place"])),
                _ => {}
            }
            // MariaDB's column becomes BINARY(16): these writers are ready for it, as an online
            // type change requires them to be (they never bind a key: the column's default, then
            // --set-default's trigger, makes it; they find parents by number and copy a parent's
            // key into its child with INSERT ... SELECT).
            // (In place never changes a type online: it refuses this table, and says why.)
            if b != Backend::Postgres && kind == Kind::CopySwap {
                c.arg("--app-ready-for-new-type");
            }
            c
        }
        (Kind::Script, Backend::Postgres) => {
            let mut c = timed("psql", rss);
            c.args(["-h", &host, "-p", &port, "-U", &user, "-d", &db, "-q", "-v", "ON_ERROR_STOP=1", "-f"]).arg(script);
            c
        }
        (Kind::Script, _) => {
            let mut c = timed("sh", rss);
            c.args([
                "-c",
                &format!("mariadb --protocol=tcp -h {host} -P {port} -u {user} {db} < '{}'", script.display()),
            ]);
            c
        }
    };
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    Some(c)
}

/// host, port, user, database of a URL (no password: the test servers have none).
fn parts(url: &str) -> (String, String, String, String) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (user, rest) = rest.split_once('@').unwrap_or(("root", rest));
    let user = user.split(':').next().unwrap_or(user);
    let (hostport, db) = rest.split_once('/').unwrap_or((rest, "test"));
    let db = db.split('?').next().unwrap_or(db);
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "5432"));
    (host.into(), port.into(), user.into(), db.into())
}

/// The seconds of doctor's run in its summary line (`..., 3.4 s; the old tables ...`, `..., 4.3 s`).
fn own_seconds(line: &str) -> Option<f64> {
    if !(line.starts_with("combkey doctor: copied ") || line.contains(" keys converted in ")) {
        return None;
    }
    let head = line.split("; ").next()?;
    head.strip_suffix(" s")?.rsplit(' ').next()?.parse().ok()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // OK because the index is clamped to the slice.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// The primary key's size and leaf density, and the checks of the tables.
async fn after(setup: &Setup<'_>, kind: Kind) -> Result<(Option<i64>, Option<f64>, String), BoxError> {
    let doctor = matches!(kind, Kind::CopySwap | Kind::InPlace | Kind::Offline | Kind::Script);
    match setup.backend {
        Backend::Postgres => {
            let mut c = PgConnection::connect(setup.url).await?;
            let (bytes, density): (i64, f64) = sqlx::query_as(
                "SELECT pg_relation_size(i.indexrelid), (pgstatindex(i.indexrelid::regclass)).avg_leaf_density \
                 FROM pg_index i WHERE i.indrelid = 'parent'::regclass AND i.indisprimary",
            )
            .fetch_one(&mut c)
            .await?;
            let (p, ch, orphans, old): (i64, i64, i64, i64) = sqlx::query_as(
                "SELECT (SELECT count(*) FROM parent), (SELECT count(*) FROM child), \
                 (SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent p WHERE p.id = c.parent_id)), \
                 (SELECT count(*) FROM parent WHERE substr(id::text, 15, 1) = '1')",
            )
            .fetch_one(&mut c)
            .await?;
            Ok((Some(bytes), Some(density), checks(p, ch, orphans, doctor.then_some(old))))
        }
        _ => {
            let mut c = MySqlConnection::connect(setup.url).await?;
            sqlx::raw_sql("ANALYZE TABLE parent").execute(&mut c).await?;
            let bytes: Option<i64> = sqlx::query_scalar(
                "SELECT CAST(DATA_LENGTH AS SIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() \
                 AND TABLE_NAME = 'parent'",
            )
            .fetch_optional(&mut c)
            .await?;
            // The clustered index's pages in the buffer pool (all of them, with a pool sized to
            // the data): how full they are.
            let density: Option<f64> = sqlx::query_scalar(
                "SELECT CAST(100 * SUM(DATA_SIZE) / (COUNT(*) * 16384) AS DOUBLE) FROM information_schema.INNODB_BUFFER_PAGE \
                 WHERE TABLE_NAME = CONCAT('`', DATABASE(), '`.`parent`') AND INDEX_NAME = 'PRIMARY' AND PAGE_TYPE = 'INDEX'",
            )
            .fetch_optional(&mut c)
            .await?
            .flatten();
            let (p, ch, orphans, old): (i64, i64, i64, i64) = sqlx::query_as(
                "SELECT (SELECT COUNT(*) FROM parent), (SELECT COUNT(*) FROM child), \
                 (SELECT COUNT(*) FROM child c LEFT JOIN parent p ON p.id = c.parent_id WHERE p.id IS NULL), \
                 (SELECT COUNT(*) FROM parent WHERE LENGTH(id) <> 16 OR SUBSTR(HEX(id), 13, 1) <> '7')",
            )
            .fetch_one(&mut c)
            .await?;
            Ok((bytes, density, checks(p, ch, orphans, doctor.then_some(old))))
        }
    }
}

fn checks(parents: i64, children: i64, orphans: i64, old: Option<i64>) -> String {
    let old = old.map(|o| format!(", {o} old keys left")).unwrap_or_default();
    format!("{parents} parents, {children} children, {orphans} orphans{old}")
}

/// One run: fresh tables from the template, the writers, the migration under them.
pub(crate) async fn run(setup: &Setup<'_>, kind: Kind, warmup: Duration, alone: Duration) -> Result<PeerRun, BoxError> {
    let (_, tables) = make_tables(setup.backend, setup.parents);
    exec_all(setup.backend, setup.url, &tables).await?;
    let script = std::env::temp_dir().join(format!("combkey-peers-{}.sql", std::process::id()));
    if kind == Kind::Script {
        let out = tokio::process::Command::new(setup.combkey)
            .args(["doctor", "--url", setup.url, "--table", "parent", "--migration-sql"])
            .args(if setup.backend == Backend::Postgres { &[][..] } else { &["--set-default"][..] })
            .output()
            .await?;
        if !out.status.success() {
            return Err(format!("--migration-sql: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        std::fs::write(&script, &out.stdout)?;
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let txs = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    // OK because the rate is positive (checked by the caller) and the writers at least one.
    #[allow(clippy::cast_precision_loss)]
    let interval = Duration::from_secs_f64(setup.writers as f64 / setup.rate);
    let handles: Vec<_> = (0..setup.writers)
        .map(|w| {
            let offset = interval.mul_f64(w as f64 / setup.writers as f64);
            tokio::spawn(writer(Writer {
                backend: setup.backend,
                url: setup.url.to_string(),
                parents: setup.parents,
                start,
                interval,
                offset,
                stop: Arc::clone(&stop),
                out: Arc::clone(&txs),
                seed: 0x9e37_79b9_7f4a_7c15 ^ (w as u64 + 1),
                delete_every: setup.delete_every,
            }))
        })
        .collect();
    tokio::time::sleep(warmup).await;
    let from = start.elapsed().as_secs_f64();
    let mut run_seconds = None;
    let rss = script.with_extension("rss");
    let _ = std::fs::remove_file(&rss);
    let (seconds, failed) = match command(setup, kind, &script, &rss) {
        None => {
            tokio::time::sleep(alone).await;
            (alone.as_secs_f64(), None)
        }
        Some(mut c) => {
            let began = Instant::now();
            let out = c.output().await?;
            let took = began.elapsed().as_secs_f64();
            run_seconds = String::from_utf8_lossy(&out.stderr).lines().find_map(own_seconds);
            let failed = (!out.status.success()).then(|| {
                let e = String::from_utf8_lossy(&out.stderr);
                e.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().chars().take(300).collect()
            });
            (took, failed)
        }
    };
    let to = start.elapsed().as_secs_f64();
    // The writers go on a moment against the tables as they are now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in handles {
        h.await??;
    }
    let _ = std::fs::remove_file(&script);
    let rss_kib = std::fs::read_to_string(&rss).ok().and_then(|t| t.lines().rev().find_map(|l| l.trim().parse().ok()));
    let _ = std::fs::remove_file(&rss);
    let all = std::mem::take(&mut *txs.lock().map_err(|_| "writer results")?);
    let during: Vec<&Tx> = all.iter().filter(|t| t.due >= from && t.due <= to).collect();
    let mut ms: Vec<f64> = during.iter().filter(|t| t.error.is_none()).map(|t| t.ms).collect();
    ms.sort_by(f64::total_cmp);
    let errors: Vec<&Tx> = all.iter().filter(|t| t.error.is_some()).collect();
    let mut kinds: Vec<String> = errors.iter().filter_map(|t| t.error.clone()).collect();
    kinds.sort();
    kinds.dedup();
    kinds.truncate(3);
    let (pk_bytes, leaf_density, checks) = after(setup, kind).await?;
    Ok(PeerRun {
        backend: setup.backend,
        parents: setup.parents,
        kind,
        seconds,
        run_seconds,
        failed,
        p50: percentile(&ms, 0.50),
        p99: percentile(&ms, 0.99),
        max: ms.last().copied().unwrap_or(0.0),
        transactions: during.len(),
        errors: errors.len(),
        error_kinds: kinds,
        pk_bytes,
        leaf_density,
        checks,
        rss_kib,
    })
}

/// The results as a Markdown table (and the errors seen, below it).
pub(crate) fn table(runs: &[PeerRun]) -> String {
    let mut s = String::from(
        "| database | parents | run | time | tool's peak RSS | writers p50 / p99 / max (ms) | writer errors | primary key after | leaf density | tables after |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in runs {
        #[allow(clippy::cast_precision_loss)]
        let mib = r.pk_bytes.map_or_else(|| "-".into(), |b| format!("{:.1} MiB", b as f64 / 1_048_576.0));
        #[allow(clippy::cast_precision_loss)]
        let rss = r.rss_kib.map_or_else(|| "-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
        let time = match &r.failed {
            Some(why) => format!("failed: {why}"),
            None => match r.run_seconds {
                Some(own) => format!("{:.1} s (the run {own:.1} s)", r.seconds),
                None => format!("{:.1} s", r.seconds),
            },
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {time} | {} | {:.1} / {:.1} / {:.1} ({} tx) | {} | {mib} | {} | {} |",
            if r.backend == Backend::Postgres { "PostgreSQL" } else { "MariaDB" },
            r.parents,
            r.kind.name(r.backend),
            rss,
            r.p50,
            r.p99,
            r.max,
            r.transactions,
            r.errors,
            r.leaf_density.map_or_else(|| "-".into(), |d| format!("{d:.1}%")),
            r.checks
        );
    }
    for r in runs.iter().filter(|r| !r.error_kinds.is_empty()) {
        let _ = writeln!(
            s,
            "\n{} {} {}: {}",
            r.backend.name(),
            r.parents,
            r.kind.name(r.backend),
            r.error_kinds.join(" / ")
        );
    }
    s
}
