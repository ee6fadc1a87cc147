//! `rekey`: what leaving random v4 keys costs once the application writes COMBs, against
//! re-keying them first (`combkey doctor --apply --rekey-from created_at`).
//!
//! Per backend, twice: a table of `--rows` random v4 keys whose `created_at` spans the past
//! (one row a second); then (a) left as it is, (b) re-keyed from `created_at`, or (c)
//! re-keyed and its primary key rebuilt (`--rebuild-index`; the time covers both);
//! then `--rows` new rows keyed by combkey's v7 ids, as the application writes them next, in
//! batches of 1,000 (timed: the insert rate). Then the primary key's size and (PostgreSQL)
//! leaf density, and "rows of one hour" of the old rows through the key (`Comb::min_for` of
//! the hour's start and end, what `Comb::range` builds): how many of the hour's rows the key
//! finds, and how long the query takes (median of 21).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use combkey::{Backend, Comb, Timestamp, V7Generator};
use combkey_doctor::{Doctor, Options, Quiet};
use rand::{RngExt, SeedableRng};
use sqlx::{AssertSqlSafe, Connection};

type BoxError = Box<dyn std::error::Error>;

/// One case on one backend.
pub(crate) struct RekeyRun {
    pub(crate) backend: &'static str,
    pub(crate) case: &'static str,
    pub(crate) rows: usize,
    /// Seconds `doctor --apply --rekey-from` took (case b).
    pub(crate) rekey_seconds: Option<f64>,
    /// New rows a second.
    pub(crate) insert_rate: f64,
    pub(crate) index_bytes: i64,
    pub(crate) leaf_density: Option<f64>,
    /// Of an old hour's rows: found through the key, and there (by `created_at`).
    pub(crate) hour_found: i64,
    pub(crate) hour_rows: i64,
    pub(crate) hour_ms: f64,
}

const TABLE: &str = "combkey_bench_rekey";
/// The old rows' first `created_at`: 2025-01-01T00:00:00Z, one row a second after it.
const OLD_T0_MS: i64 = 1_735_689_600_000;

fn literal(backend: Backend, id: Comb) -> String {
    match backend {
        Backend::Postgres => format!("'{id}'::uuid"),
        _ => format!("0x{id:X}"),
    }
}

fn time_literal(backend: Backend, t: Timestamp) -> String {
    let s = t.to_string().replace('T', " ").replace('Z', "");
    match backend {
        Backend::Postgres => format!("'{s}+00'::timestamptz"),
        _ => format!("TIMESTAMP'{s}'"),
    }
}

async fn exec(c: &mut sqlx::AnyConnection, sql: &str) -> Result<(), BoxError> {
    sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await?;
    Ok(())
}

async fn scalar_i64(c: &mut sqlx::AnyConnection, sql: &str) -> Result<i64, BoxError> {
    Ok(sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.to_string())).fetch_one(c).await?)
}

/// Inserts `keys` with their times, 1,000 rows a statement; the seconds it took.
async fn insert(
    c: &mut sqlx::AnyConnection,
    backend: Backend,
    keys: &[(Comb, Timestamp)],
    rng: &mut rand::rngs::StdRng,
) -> Result<f64, BoxError> {
    let started = Instant::now();
    for chunk in keys.chunks(1000) {
        let values: Vec<String> = chunk
            .iter()
            .map(|(id, t)| {
                format!("({}, {}, '{:0100}')", literal(backend, *id), time_literal(backend, *t), rng.random::<u64>())
            })
            .collect();
        exec(c, &format!("INSERT INTO {TABLE} (id, created_at, payload) VALUES {}", values.join(", "))).await?;
    }
    Ok(started.elapsed().as_secs_f64())
}

fn v4(rng: &mut rand::rngs::StdRng) -> Comb {
    let mut b: [u8; 16] = rng.random();
    b[6] = 0x40 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    Comb::from_bytes(b)
}

/// Both cases on one backend.
pub(crate) async fn run(url: &str, backend: Backend, rows: usize) -> Result<Vec<RekeyRun>, BoxError> {
    sqlx::any::install_default_drivers();
    let mut c = sqlx::AnyConnection::connect(url).await?;
    if backend == Backend::Postgres {
        exec(&mut c, "CREATE EXTENSION IF NOT EXISTS pgstattuple").await?;
    }
    let mut out = Vec::new();
    for case in ["left as v4", "re-keyed first", "re-keyed, index rebuilt"] {
        exec(&mut c, &format!("DROP TABLE IF EXISTS {TABLE}")).await?;
        exec(&mut c, &format!("DROP TABLE IF EXISTS combkey_keymap_{TABLE}")).await?;
        exec(
            &mut c,
            &match backend {
                Backend::Postgres => format!(
                    "CREATE TABLE {TABLE} (id uuid PRIMARY KEY, created_at timestamptz NOT NULL, payload text NOT NULL)"
                ),
                _ => format!(
                    "CREATE TABLE {TABLE} (id BINARY(16) NOT NULL PRIMARY KEY, created_at DATETIME(6) NOT NULL, \
                     payload VARCHAR(120) NOT NULL) ENGINE=InnoDB"
                ),
            },
        )
        .await?;
        // The same old rows for both cases.
        let mut rng = rand::rngs::StdRng::seed_from_u64(45);
        let old: Vec<(Comb, Timestamp)> = (0..rows)
            .map(|i| (v4(&mut rng), Timestamp::from_unix_ms(OLD_T0_MS + 1000 * i64::try_from(i).unwrap_or(0))))
            .collect();
        insert(&mut c, backend, &old, &mut rng).await?;
        drop(old);
        let rekey_seconds = if case != "left as v4" {
            let started = Instant::now();
            let mut doctor = Doctor::connect(url).await?;
            let options = Options::default().with_rekey_from(Some("created_at".into()));
            let plan = doctor.plan(TABLE, "id", options).await?;
            doctor.apply(&plan, &mut Quiet).await?;
            // The update leaves the old index entries' pages as the random keys filled
            // them: `--rebuild-index` packs the index anew (online).
            if case == "re-keyed, index rebuilt" {
                doctor.rebuild_index(TABLE).await?;
            }
            Some(started.elapsed().as_secs_f64())
        } else {
            None
        };
        // The application's next rows: combkey's v7 ids, now.
        let g = V7Generator::new();
        let new: Vec<(Comb, Timestamp)> = (0..rows)
            .map(|_| {
                let id = g.generate();
                (id, id.timestamp().unwrap_or_else(Timestamp::now))
            })
            .collect();
        let seconds = insert(&mut c, backend, &new, &mut rng).await?;
        #[allow(clippy::cast_precision_loss)]
        let insert_rate = rows as f64 / seconds.max(1e-9);
        let (index_bytes, leaf_density) = match backend {
            Backend::Postgres => {
                exec(&mut c, &format!("VACUUM ANALYZE {TABLE}")).await?;
                let bytes = scalar_i64(&mut c, &format!("SELECT pg_relation_size('{TABLE}_pkey')")).await?;
                let density: f64 = sqlx::query_scalar(AssertSqlSafe(format!(
                    "SELECT avg_leaf_density FROM pgstatindex('{TABLE}_pkey')"
                )))
                .fetch_one(&mut c)
                .await?;
                (bytes, Some(density))
            }
            _ => {
                exec(&mut c, &format!("ANALYZE TABLE {TABLE}")).await?;
                // InnoDB: the clustered index is the table.
                let bytes = scalar_i64(
                    &mut c,
                    &format!(
                        "SELECT CAST(DATA_LENGTH AS SIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = \
                         DATABASE() AND TABLE_NAME = '{TABLE}'"
                    ),
                )
                .await?;
                (bytes, None)
            }
        };
        // An old hour, in the middle of the old rows, through the key.
        let hour = Timestamp::from_unix_ms(OLD_T0_MS + 500 * i64::try_from(rows).unwrap_or(0));
        let end = hour.saturating_add_ms(3_600_000);
        let (lo, hi) = (Comb::min_for(hour)?, Comb::min_for(end)?);
        let by_key = format!(
            "SELECT count(*) FROM {TABLE} WHERE id >= {} AND id < {}",
            literal(backend, lo),
            literal(backend, hi)
        );
        let by_time = format!(
            "SELECT count(*) FROM {TABLE} WHERE created_at >= {} AND created_at < {}",
            time_literal(backend, hour),
            time_literal(backend, end)
        );
        let hour_rows = scalar_i64(&mut c, &by_time).await?;
        let mut times = Vec::new();
        let mut hour_found = 0;
        for _ in 0..21 {
            let t = Instant::now();
            hour_found = scalar_i64(&mut c, &by_key).await?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        out.push(RekeyRun {
            backend: if backend == Backend::Postgres { "PostgreSQL" } else { "MariaDB" },
            case,
            rows,
            rekey_seconds,
            insert_rate,
            index_bytes,
            leaf_density,
            hour_found,
            hour_rows,
            hour_ms: times[times.len() / 2],
        });
        eprintln!("rekey: {} {case} done", backend.name());
    }
    exec(&mut c, &format!("DROP TABLE IF EXISTS {TABLE}")).await?;
    exec(&mut c, &format!("DROP TABLE IF EXISTS combkey_keymap_{TABLE}")).await?;
    Ok(out)
}

/// The summary table (Markdown).
pub(crate) fn table(runs: &[RekeyRun], settings: &[String]) -> String {
    let mut s = String::new();
    for line in settings {
        let _ = writeln!(s, "{line}  ");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| backend | old v4 rows, then as many new COMB rows | re-key (s) | new rows / s | primary key (MiB) | leaf density (%) | an old hour through the key: rows found / there | its query (ms) |"
    );
    let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in runs {
        #[allow(clippy::cast_precision_loss)]
        let mib = r.index_bytes as f64 / 1_048_576.0;
        let _ = writeln!(
            s,
            "| {} | {} ({} + {}) | {} | {:.0} | {:.1} | {} | {} / {} | {:.2} |",
            r.backend,
            r.case,
            r.rows,
            r.rows,
            r.rekey_seconds.map_or_else(|| "-".to_string(), |x| format!("{x:.1}")),
            r.insert_rate,
            mib,
            r.leaf_density.map_or_else(|| "n/a".to_string(), |d| format!("{d:.1}")),
            r.hour_found,
            r.hour_rows,
            r.hour_ms
        );
    }
    s
}

/// Prints the table and writes it to `out/summary-rekey.md`.
pub(crate) fn write_all(runs: &[RekeyRun], settings: &[String], out: &Path) -> std::io::Result<()> {
    let t = table(runs, settings);
    print!("{t}");
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("summary-rekey.md"), t)
}
