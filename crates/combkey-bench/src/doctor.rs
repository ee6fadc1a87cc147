//! `doctor`: `combkey doctor --apply --online` on a big table while writers keep writing, against
//! the offline run of the same table.
//!
//! A parent of `--rows` rows keyed by RT.Comb `Sql` ids (as a .NET service made them) and a
//! child of `--child-rows` rows referencing it (indexed, `ON DELETE CASCADE`). `--writers`
//! tasks each loop as an application does: a new parent with a child (v7 keys: the application
//! uses combkey), an update of a loaded row by the id a client holds (and, once the conversion
//! has moved it, by its new key through `KeyMigration`, as an application does), a delete of
//! one of its own parents; each statement timed. They run alone first (the baseline), then
//! while the online conversion runs. Then the same table is made again and converted offline
//! with no writer, for the time. Afterwards: lost rows (the writers' own bookkeeping against the counts), orphans,
//! keys left unconverted.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use combkey::layouts::{KeyMigration, RtCombLayout};
use combkey::{Backend, Comb, RandomSource, SeededRandom, Timestamp};
use combkey_doctor::{Doctor, Online, Options, Quiet};
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One timed writer statement: when it ended (s since the start) and how long it took (ms).
#[derive(Clone, Copy)]
struct Sample {
    at: f64,
    ms: f64,
}

#[derive(Default)]
struct Book {
    parents_in: AtomicI64,
    parents_out: AtomicI64,
    children_in: AtomicI64,
    children_out: AtomicI64,
    failures: AtomicI64,
    /// Why writer statements failed, and how often (printed after the run).
    reasons: Mutex<std::collections::BTreeMap<String, i64>>,
}

impl Book {
    fn fail(&self, reason: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut r) = self.reasons.lock() {
            *r.entry(reason).or_default() += 1;
        }
    }
}

/// The results of one backend's run.
pub(crate) struct DoctorRun {
    pub(crate) backend: Backend,
    pub(crate) settings: String,
    rows: usize,
    child_rows: usize,
    writers: usize,
    baseline: (f64, f64),
    during: (f64, f64, f64),
    online_s: f64,
    offline_s: f64,
    converted: usize,
    retries: usize,
    lost: i64,
    orphans: i64,
    unconverted: i64,
    failures: i64,
    /// Statements per second, second by second, and the run's window.
    per_second: Vec<f64>,
    window: (f64, f64),
}

fn literal(backend: Backend, id: Comb) -> String {
    match backend {
        Backend::Postgres => format!("'{id}'::uuid"),
        _ => backend.literal(id),
    }
}

fn ddl(backend: Backend, t: &str) -> Vec<String> {
    let key = backend.column_type();
    let (serial, text) = match backend {
        Backend::Postgres => ("bigserial", "text"),
        _ => ("BIGINT AUTO_INCREMENT", "VARCHAR(100)"),
    };
    vec![
        format!("DROP TABLE IF EXISTS {t}_items"),
        format!("DROP TABLE IF EXISTS {t}"),
        format!("CREATE TABLE {t} (id {key} NOT NULL PRIMARY KEY, n INT NOT NULL DEFAULT 0, payload {text})"),
        format!(
            "CREATE TABLE {t}_items (k {serial} PRIMARY KEY, parent {key} NOT NULL, \
             CONSTRAINT {t}_items_fk FOREIGN KEY (parent) REFERENCES {t} (id) ON DELETE CASCADE)"
        ),
        format!("CREATE INDEX {t}_items_parent ON {t}_items (parent)"),
    ]
}

/// The table: `rows` RT.Comb `Sql` keys a second apart, `child_rows` children; the keys.
async fn load(
    pool: &AnyPool,
    backend: Backend,
    t: &str,
    rows: usize,
    child_rows: usize,
) -> Result<Vec<Comb>, BoxError> {
    for s in ddl(backend, t) {
        sqlx::raw_sql(AssertSqlSafe(s)).execute(pool).await?;
    }
    // A stopped run's journal of the table dropped above would be taken up by the next run.
    let _ = sqlx::raw_sql(AssertSqlSafe(format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%{t}%'")))
        .execute(pool)
        .await;
    let r = SeededRandom::new(77);
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    let mut ids = Vec::with_capacity(rows);
    for i in 0..rows {
        let mut b = [0u8; 16];
        r.fill_bytes(&mut b);
        b[6] = 0x40 | (b[6] & 0x0f);
        b[8] = 0x80 | (b[8] & 0x3f);
        let at = t0.saturating_add_ms(i64::try_from(i)? * 1000);
        ids.push(RtCombLayout::Sql.create(at, Comb::from_bytes(b))?);
    }
    for chunk in ids.chunks(5000) {
        let v: Vec<String> = chunk.iter().map(|id| format!("({}, 'x')", literal(backend, *id))).collect();
        sqlx::raw_sql(AssertSqlSafe(format!("INSERT INTO {t} (id, payload) VALUES {}", v.join(","))))
            .execute(pool)
            .await?;
    }
    let step = (rows / child_rows.max(1)).max(1);
    let children: Vec<Comb> = ids.iter().step_by(step).take(child_rows).copied().collect();
    for chunk in children.chunks(5000) {
        let v: Vec<String> = chunk.iter().map(|id| format!("({})", literal(backend, *id))).collect();
        sqlx::raw_sql(AssertSqlSafe(format!("INSERT INTO {t}_items (parent) VALUES {}", v.join(","))))
            .execute(pool)
            .await?;
    }
    // As a table that has lived a while: PostgreSQL's autovacuum has been through it (its
    // visibility map lets a scan of the keys read the index alone).
    let analyze = match backend {
        Backend::Postgres => vec![format!("VACUUM (ANALYZE) {t}"), format!("VACUUM (ANALYZE) {t}_items")],
        _ => vec![format!("ANALYZE TABLE {t}, {t}_items")],
    };
    for s in analyze {
        sqlx::raw_sql(AssertSqlSafe(s)).execute(pool).await?;
    }
    Ok(ids)
}

/// Runs a statement, retrying a deadlock as an application on InnoDB does; its time.
async fn timed(pool: &AnyPool, sql: &str) -> Result<(u64, f64), sqlx::Error> {
    let started = Instant::now();
    let mut last = None;
    for _ in 0..10 {
        match sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(pool).await {
            Ok(r) => return Ok((r.rows_affected(), started.elapsed().as_secs_f64() * 1000.0)),
            Err(e) if e.to_string().to_lowercase().contains("deadlock") => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(sqlx::Error::PoolTimedOut))
}

#[allow(clippy::too_many_arguments)]
async fn writer(
    pool: AnyPool,
    backend: Backend,
    t: String,
    stop: Arc<AtomicBool>,
    book: Arc<Book>,
    samples: Arc<Mutex<Vec<Sample>>>,
    zero: Instant,
    loaded: Arc<Vec<Comb>>,
) {
    let Ok(migration) = "rtcomb-sql -> v7".parse::<KeyMigration>() else {
        return;
    };
    let mut mine = Vec::new();
    let mut i = 0u64;
    let record = |ms: f64| {
        if let Ok(mut s) = samples.lock() {
            s.push(Sample { at: zero.elapsed().as_secs_f64(), ms });
        }
    };
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let id = Comb::new();
        let l = literal(backend, id);
        let (begin, commit) = match backend {
            Backend::Postgres => ("BEGIN", "COMMIT"),
            _ => ("START TRANSACTION", "COMMIT"),
        };
        let sql = format!(
            "{begin}; INSERT INTO {t} (id, payload) VALUES ({l}, 'w'); INSERT INTO {t}_items (parent) VALUES ({l}); {commit}"
        );
        match timed(&pool, &sql).await {
            Ok((_, ms)) => {
                record(ms);
                book.parents_in.fetch_add(1, Ordering::Relaxed);
                book.children_in.fetch_add(1, Ordering::Relaxed);
                mine.push(id);
            }
            Err(e) => book.fail(format!("insert: {e}")),
        }
        if i.is_multiple_of(2) {
            // A row by the id a client holds (pgbench's accounts by aid), any of the loaded
            // ones; where the conversion has moved it, by its new key, as an application
            // does with `KeyMigration` (docs/doctor.md). (Not the first key after a random
            // one: once the keys before the cursor have moved, that is the cursor's row for
            // every writer.)
            let old = loaded[rand::random_range(0..loaded.len())];
            let by = |id: Comb| format!("UPDATE {t} SET n = n + 1 WHERE id = {}", literal(backend, id));
            let started = Instant::now();
            let done = match timed(&pool, &by(old)).await {
                Ok((0, _)) => match migration.new_key(&old) {
                    Some(new) => timed(&pool, &by(new)).await.map(|(n, _)| n),
                    None => Ok(0),
                },
                other => other.map(|(n, _)| n),
            };
            match done {
                Ok(1) => record(started.elapsed().as_secs_f64() * 1000.0),
                Ok(n) => book.fail(format!("update by a loaded id changed {n} rows")),
                Err(e) => book.fail(format!("update: {e}")),
            }
        }
        if i.is_multiple_of(4)
            && let Some(old) = mine.pop()
        {
            match timed(&pool, &format!("DELETE FROM {t} WHERE id = {}", literal(backend, old))).await {
                Ok((1, ms)) => {
                    record(ms);
                    book.parents_out.fetch_add(1, Ordering::Relaxed);
                    book.children_out.fetch_add(1, Ordering::Relaxed);
                }
                Ok((n, _)) => book.fail(format!("delete of an own parent changed {n} rows")),
                Err(e) => book.fail(format!("delete: {e}")),
            }
        }
    }
}

async fn count(pool: &AnyPool, sql: &str) -> Result<i64, BoxError> {
    Ok(sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.to_string())).fetch_one(pool).await?)
}

/// Statements per second and the longest statement, in `[from, to)` seconds.
fn stats(samples: &[Sample], from: f64, to: f64) -> (f64, f64, f64) {
    let mut ms: Vec<f64> = samples.iter().filter(|s| s.at >= from && s.at < to).map(|s| s.ms).collect();
    ms.sort_by(f64::total_cmp);
    #[allow(clippy::cast_precision_loss)]
    let rate = ms.len() as f64 / (to - from).max(1e-9);
    let max = ms.last().copied().unwrap_or(0.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let p99 = ms.get(((ms.len() as f64) * 0.99) as usize).copied().unwrap_or(max);
    (rate, max, p99)
}

/// One backend: the baseline, the online run with writers, the checks, the offline run.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run(
    url: &str,
    backend: Backend,
    settings: String,
    rows: usize,
    child_rows: usize,
    writers: usize,
    batch_size: usize,
    baseline_s: u64,
) -> Result<DoctorRun, BoxError> {
    sqlx::any::install_default_drivers();
    let t = "combkey_doctor_bench";
    let pool = AnyPoolOptions::new().max_connections(u32::try_from(writers + 2)?).connect(url).await?;
    eprintln!("doctor bench, {}: loading {rows} rows and {child_rows} children", backend.name());
    let loaded = Arc::new(load(&pool, backend, t, rows, child_rows).await?);
    let p0 = count(&pool, &format!("SELECT count(*) FROM {t}")).await?;
    let c0 = count(&pool, &format!("SELECT count(*) FROM {t}_items")).await?;
    let zero = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let book = Arc::new(Book::default());
    let samples = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..writers)
        .map(|_| {
            tokio::spawn(writer(
                pool.clone(),
                backend,
                t.to_string(),
                Arc::clone(&stop),
                Arc::clone(&book),
                Arc::clone(&samples),
                zero,
                Arc::clone(&loaded),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(baseline_s)).await;
    let start = zero.elapsed().as_secs_f64();
    eprintln!("doctor bench, {}: converting online while {writers} writers write", backend.name());
    let mut doctor = Doctor::connect(url).await?;
    let plan = doctor.plan(t, "id", Options::default()).await?;
    let online = Online::default().with_batch_size(batch_size);
    let outcome = doctor.apply_online(&plan, &online, &mut Quiet).await?;
    eprintln!(
        "doctor bench, {}: online {:.1} s, {} converted in {} batches, {} retries, {} passes",
        backend.name(),
        outcome.seconds,
        outcome.converted,
        outcome.batches,
        outcome.retries,
        outcome.passes
    );
    let end = zero.elapsed().as_secs_f64();
    // The writers write on a little after, for the chart.
    tokio::time::sleep(Duration::from_secs(baseline_s.min(5))).await;
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.await?;
    }
    let samples = samples.lock().map(|s| s.clone()).unwrap_or_default();
    if let Ok(reasons) = book.reasons.lock() {
        for (reason, n) in reasons.iter() {
            eprintln!("doctor bench, {}: {n} writer statements failed: {reason}", backend.name());
        }
    }
    let expect_p = p0 + book.parents_in.load(Ordering::Relaxed) - book.parents_out.load(Ordering::Relaxed);
    let expect_c = c0 + book.children_in.load(Ordering::Relaxed) - book.children_out.load(Ordering::Relaxed);
    let lost = (expect_p - count(&pool, &format!("SELECT count(*) FROM {t}")).await?)
        + (expect_c - count(&pool, &format!("SELECT count(*) FROM {t}_items")).await?);
    let orphans = count(
        &pool,
        &format!("SELECT count(*) FROM {t}_items i WHERE NOT EXISTS (SELECT 1 FROM {t} p WHERE p.id = i.parent)"),
    )
    .await?;
    let report = doctor.audit(t, "id", None, Options::default()).await?;
    let unconverted = i64::try_from(report.audit().layouts.get("rtcomb-sql").copied().unwrap_or(0))?;
    // Its run lock is held while its connection lives.
    drop(doctor);
    // The offline run of the same table, no writer.
    eprintln!("doctor bench, {}: the same table offline", backend.name());
    load(&pool, backend, t, rows, child_rows).await?;
    let mut offline = Doctor::connect(url).await?;
    let started = Instant::now();
    let plan = offline.plan(t, "id", Options::default()).await?;
    offline.apply(&plan, &mut Quiet).await?;
    let offline_s = started.elapsed().as_secs_f64();
    for s in ddl(backend, t).into_iter().take(2) {
        sqlx::raw_sql(AssertSqlSafe(s)).execute(&pool).await?;
    }
    let last = samples.iter().map(|s| s.at).fold(0.0, f64::max);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let per_second: Vec<f64> = (0..last.ceil() as usize)
        .map(|s| samples.iter().filter(|x| x.at >= s as f64 && x.at < (s + 1) as f64).count() as f64)
        .collect();
    let (b_rate, b_max, _) = stats(&samples, 0.0, start);
    Ok(DoctorRun {
        backend,
        settings,
        rows,
        child_rows,
        writers,
        baseline: (b_rate, b_max),
        during: stats(&samples, start, end),
        online_s: outcome.seconds,
        offline_s,
        converted: outcome.converted,
        retries: outcome.retries,
        lost,
        orphans,
        unconverted,
        failures: book.failures.load(Ordering::Relaxed),
        per_second,
        window: (start, end),
    })
}

/// The summary table.
pub(crate) fn table(runs: &[DoctorRun]) -> String {
    let mut s = String::new();
    for r in runs {
        let _ = writeln!(s, "# {}; {} rows, {} children, {} writers", r.settings, r.rows, r.child_rows, r.writers);
    }
    let _ = writeln!(
        s,
        "| backend | writer statements/s before | during | ratio | longest writer statement during (before) | p99 during | online run | offline run | online / offline | keys converted | batches retried | lost rows | orphans | keys left | writer failures |"
    );
    let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in runs {
        let _ = writeln!(
            s,
            "| {} | {:.0} | {:.0} | {:.2}x | {:.0} ms ({:.0} ms) | {:.1} ms | {:.1} s | {:.1} s | {:.2}x | {} | {} | {} | {} | {} | {} |",
            r.backend.name(),
            r.baseline.0,
            r.during.0,
            r.during.0 / r.baseline.0.max(1e-9),
            r.during.1,
            r.baseline.1,
            r.during.2,
            r.online_s,
            r.offline_s,
            r.online_s / r.offline_s.max(1e-9),
            r.converted,
            r.retries,
            r.lost,
            r.orphans,
            r.unconverted,
            r.failures
        );
    }
    s
}

/// Writer statements per second over time, the online run's window shaded.
fn chart(r: &DoctorRun) -> String {
    let (w, h, left, bottom) = (720.0, 300.0, 60.0, 40.0);
    let max = r.per_second.iter().copied().fold(1.0, f64::max) * 1.1;
    #[allow(clippy::cast_precision_loss)]
    let n = r.per_second.len().max(1) as f64;
    let x = |s: f64| left + (w - left - 20.0) * s / n;
    let y = |v: f64| h - bottom - (h - bottom - 20.0) * v / max;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect x=\"{:.1}\" y=\"20\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#fde9c8\"/>\n\
         <text x=\"{:.1}\" y=\"34\">combkey doctor --online</text>\n",
        x(r.window.0),
        (x(r.window.1) - x(r.window.0)).max(1.0),
        h - bottom - 20.0,
        x(r.window.0) + 4.0
    );
    let points: Vec<String> = r
        .per_second
        .iter()
        .enumerate()
        .map(|(i, v)| {
            #[allow(clippy::cast_precision_loss)]
            let s = i as f64 + 0.5;
            format!("{:.1},{:.1}", x(s), y(*v))
        })
        .collect();
    let _ = writeln!(
        svg,
        "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"{}\"/>",
        points.join(" ")
    );
    let _ =
        writeln!(svg, "<line x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"black\"/>", h - bottom, w - 20.0);
    let _ = writeln!(svg, "<line x1=\"{left}\" y1=\"20\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>", h - bottom);
    let _ = writeln!(svg, "<text x=\"{left}\" y=\"{}\">seconds</text>", h - 10.0);
    let _ = writeln!(svg, "<text x=\"4\" y=\"{:.1}\">{max:.0}/s</text>", y(max) + 4.0);
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"14\">{}: writer statements a second ({} writers)</text>",
        left,
        r.backend.name(),
        r.writers
    );
    svg.push_str("</svg>\n");
    svg
}

/// The summary, the per-second CSV and the charts.
pub(crate) fn write_all(runs: &[DoctorRun], out: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let t = table(runs);
    print!("{t}");
    std::fs::write(out.join("doctor-summary.txt"), t)?;
    let mut csv = String::from("backend,second,statements\n");
    for r in runs {
        for (i, v) in r.per_second.iter().enumerate() {
            let _ = writeln!(csv, "{},{i},{v}", r.backend.name());
        }
        std::fs::write(out.join(format!("doctor-{}-writers.svg", r.backend.name())), chart(r))?;
    }
    std::fs::write(out.join("doctor-writers.csv"), csv)
}
