//! `doctor-sqlite`: `combkey doctor` on an SQLite file in both journal modes, the default
//! rollback journal (`DELETE`, what the `sqlite3` shell and most applications make) and `WAL`:
//! the audit, a layout conversion with its key map (v1 to v7) and a re-key from a time column
//! (`--rekey-from created_at`, v4 to v7), at each table size. Each run's time and peak RSS
//! (the `combkey` process as a child, as `doctor-memory` measures it); the goal: every run in
//! rollback-journal mode within 1.2x of the same run in WAL mode (before, a rollback-journal
//! `--apply` stalled on its busy handler: 200,000 rows had not finished after six minutes).
//!
//! The file: a parent `p (id BLOB PRIMARY KEY, created_at TEXT, note TEXT)` and two children
//! referencing it (one indexed `NOT NULL`, one `ON DELETE CASCADE`), one row of each per parent,
//! and a view of the parent; the keys one a millisecond apart.

use std::fmt::Write as _;
use std::path::Path;

use combkey::Timestamp;
use rand::{RngExt, SeedableRng};
use sqlx::{AssertSqlSafe, Connection};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One measured run.
pub(crate) struct Measured {
    pub(crate) journal: &'static str,
    pub(crate) what: &'static str,
    pub(crate) rows: usize,
    pub(crate) seconds: f64,
    pub(crate) peak_mib: f64,
}

/// The keys' first time: 2023-06-17T06:31:43.833Z, one row a millisecond after it.
const T0_MS: i64 = 1_686_983_503_833;

/// A version 1 id of `ms` (a random clock sequence and node, as a server of many processes
/// writes them).
fn v1(ms: i64, rng: &mut rand::rngs::StdRng) -> [u8; 16] {
    // 100 ns intervals since 1582-10-15.
    let ticks = u64::try_from(ms).unwrap_or(0) * 10_000 + 0x01B2_1DD2_1381_4000;
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&u32::try_from(ticks & 0xFFFF_FFFF).unwrap_or(0).to_be_bytes());
    b[4..6].copy_from_slice(&u16::try_from((ticks >> 32) & 0xFFFF).unwrap_or(0).to_be_bytes());
    b[6..8].copy_from_slice(&(u16::try_from((ticks >> 48) & 0x0FFF).unwrap_or(0) | 0x1000).to_be_bytes());
    rng.fill(&mut b[8..16]);
    b[8] = (b[8] & 0x3F) | 0x80;
    b
}

/// A version 4 id.
fn v4(rng: &mut rand::rngs::StdRng) -> [u8; 16] {
    let mut b = [0u8; 16];
    rng.fill(&mut b[..]);
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    b
}

fn hex(b: &[u8; 16]) -> String {
    b.iter().fold(String::with_capacity(32), |mut s, x| {
        let _ = write!(s, "{x:02X}");
        s
    })
}

/// Makes `path` afresh: `rows` parents keyed by v1 (`layout == "v1"`) or v4 ids, their two
/// children, in `journal` mode.
async fn load(path: &Path, journal: &str, rows: usize, layout: &str) -> Result<(), BoxError> {
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let mut c = sqlx::SqliteConnection::connect(&url).await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(rows as u64);
    let ddl = format!(
        "PRAGMA journal_mode = {journal};
         CREATE TABLE p (id BLOB PRIMARY KEY, created_at TEXT NOT NULL, note TEXT);
         CREATE TABLE c1 (n INTEGER PRIMARY KEY, pid BLOB NOT NULL REFERENCES p (id), v TEXT);
         CREATE INDEX c1_pid ON c1 (pid);
         CREATE TABLE c2 (n INTEGER PRIMARY KEY, pid BLOB REFERENCES p (id) ON DELETE CASCADE);
         CREATE INDEX c2_pid ON c2 (pid);
         CREATE VIEW pv AS SELECT id, note FROM p;"
    );
    sqlx::raw_sql(AssertSqlSafe(ddl)).execute(&mut c).await?;
    let mut n = 0usize;
    while n < rows {
        let end = (n + 1000).min(rows);
        let mut parents = Vec::new();
        let mut children = Vec::new();
        for i in n..end {
            let ms = T0_MS + i64::try_from(i)?;
            let id = if layout == "v1" { v1(ms, &mut rng) } else { v4(&mut rng) };
            let at = Timestamp::from_unix_ms(ms).to_string().replace('T', " ").replace('Z', "");
            parents.push(format!("(X'{}', '{at}', 'n{i}')", hex(&id)));
            children.push(format!("X'{}'", hex(&id)));
        }
        let one: Vec<String> = children.iter().map(|c| format!("({c}, 'x')")).collect();
        let two: Vec<String> = children.iter().map(|c| format!("({c})")).collect();
        let sql = format!(
            "BEGIN; INSERT INTO p VALUES {}; INSERT INTO c1 (pid, v) VALUES {}; INSERT INTO c2 (pid) VALUES {}; COMMIT",
            parents.join(", "),
            one.join(", "),
            two.join(", ")
        );
        sqlx::raw_sql(AssertSqlSafe(sql)).execute(&mut c).await?;
        n = end;
    }
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut c).await?;
    if !mode.eq_ignore_ascii_case(journal) {
        return Err(format!("{}: journal mode {mode}, not {journal}", path.display()).into());
    }
    c.close().await?;
    Ok(())
}

/// A key of the file after a run, to check the run changed what it says: the share of v7 keys.
async fn v7_share(path: &Path) -> Result<f64, BoxError> {
    let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await?;
    let (v7, all): (i64, i64) =
        sqlx::query_as("SELECT count(*) FILTER (WHERE substr(hex(id), 13, 1) = '7'), count(*) FROM p")
            .fetch_one(&mut c)
            .await?;
    c.close().await?;
    #[allow(clippy::cast_precision_loss)]
    Ok(if all == 0 { 0.0 } else { v7 as f64 / all as f64 })
}

/// Every journal mode, path and size.
pub(crate) async fn run(combkey: &Path, dir: &Path, sizes: &[usize]) -> Result<Vec<Measured>, BoxError> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("combkey-bench-doctor.sqlite");
    let url = format!("sqlite:{}", path.display());
    let mut out = Vec::new();
    for &rows in sizes {
        for journal in ["DELETE", "WAL"] {
            // What runs, on which keys, and whether on a file made afresh (the conversion
            // runs on the file the audit read, which the audit does not change).
            let cases: [(&'static str, &str, &[&str], bool); 3] = [
                ("audit", "v1", &[], true),
                ("--apply (v1 -> v7, key map)", "v1", &["--apply"], false),
                ("--apply --rekey-from (v4)", "v4", &["--apply", "--rekey-from", "created_at"], true),
            ];
            for (what, layout, extra, fresh) in cases {
                if fresh {
                    eprintln!("doctor-sqlite: {rows} {layout} rows, journal {journal}");
                    load(&path, journal, rows, layout).await?;
                }
                let mut args = vec!["doctor", "--url", url.as_str(), "--table", "p"];
                args.extend_from_slice(extra);
                let (peak_mib, seconds) = crate::doctor_memory::peak(combkey, &args)?;
                if what != "audit" {
                    let share = v7_share(&path).await?;
                    if share < 0.999 {
                        return Err(
                            format!("{what} in {journal} mode left {:.1}% of the keys v7", share * 100.0).into()
                        );
                    }
                }
                eprintln!("doctor-sqlite: {rows} rows, {journal}, {what}: {seconds:.1} s, peak RSS {peak_mib:.1} MiB");
                out.push(Measured { journal, what, rows, seconds, peak_mib });
            }
        }
    }
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok(out)
}

/// The table, and whether every rollback-journal run took at most 1.2x its WAL run.
pub(crate) fn summary(runs: &[Measured], settings: &[String]) -> (String, bool) {
    let mut s = String::new();
    let _ = writeln!(s, "combkey doctor on SQLite: rollback journal (DELETE) beside WAL");
    for line in settings {
        let _ = writeln!(s, "  {line}");
    }
    let _ = writeln!(
        s,
        "{:<30} {:>8} {:>12} {:>10} {:>12} {:>10} {:>8}",
        "run", "rows", "DELETE s", "MiB", "WAL s", "MiB", "ratio"
    );
    let mut ok = true;
    for d in runs.iter().filter(|m| m.journal == "DELETE") {
        let Some(w) = runs.iter().find(|m| m.journal == "WAL" && m.what == d.what && m.rows == d.rows) else {
            continue;
        };
        let ratio = d.seconds / w.seconds.max(0.001);
        // Runs under a second are dominated by the process's start.
        let met = ratio <= 1.2 || d.seconds - w.seconds < 0.5;
        ok &= met;
        let _ = writeln!(
            s,
            "{:<30} {:>8} {:>12.2} {:>10.1} {:>12.2} {:>10.1} {:>7.2}x{}",
            d.what,
            d.rows,
            d.seconds,
            d.peak_mib,
            w.seconds,
            w.peak_mib,
            ratio,
            if met { "" } else { " MISSED" }
        );
    }
    let _ = writeln!(s, "goal (rollback journal within 1.2x of WAL): {}", if ok { "met" } else { "MISSED" });
    (s, ok)
}
