//! `doctor-memory`: the peak memory (RSS) of `combkey doctor` for its audit, `--apply` and
//! `--apply --online`, at two table sizes, on PostgreSQL and MariaDB: the memory must not grow
//! with the table.
//!
//! Each run is a table of `rows` RT.Comb `Sql` keys a second apart (made by the database,
//! `md5` bytes with the version and variant set, the milliseconds in the last six bytes) and
//! one referencing row for every `child_every`-th key, indexed. `combkey` (the release build
//! next to this benchmark, or `--combkey`) runs as a child process, and its peak resident set
//! comes from the kernel when it ends (`wait4`'s `ru_maxrss`). The table is made again before
//! the online run, so both conversions start from the same keys.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use combkey::Backend;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One measured run of the command.
pub(crate) struct Measured {
    pub(crate) backend: Backend,
    pub(crate) rows: usize,
    pub(crate) what: &'static str,
    pub(crate) peak_mib: f64,
    pub(crate) seconds: f64,
}

/// The table's statements, its keys made by the database.
fn load_sql(backend: Backend, t: &str, rows: usize, child_every: usize) -> Vec<String> {
    match backend {
        Backend::Postgres => vec![
            format!("DROP TABLE IF EXISTS {t}_items"),
            format!("DROP TABLE IF EXISTS {t}"),
            format!("CREATE TABLE {t} (id uuid PRIMARY KEY, n int NOT NULL DEFAULT 0)"),
            format!("CREATE TABLE {t}_items (k bigserial PRIMARY KEY, parent uuid NOT NULL REFERENCES {t} (id))"),
            format!("CREATE INDEX {t}_items_parent ON {t}_items (parent)"),
            format!(
                "INSERT INTO {t} (id, n) SELECT encode(set_byte(set_byte(substring(r FROM 1 FOR 10), 6, \
                 (get_byte(r, 6) & 15) | 64), 8, (get_byte(r, 8) & 63) | 128) || \
                 substring(int8send(1767225600000 + i::bigint * 1000) FROM 3 FOR 6), 'hex')::uuid, i \
                 FROM (SELECT i, decode(md5(i::text), 'hex') AS r FROM generate_series(1, {rows}) i) g"
            ),
            format!("INSERT INTO {t}_items (parent) SELECT id FROM {t} WHERE n % {child_every} = 0"),
            format!("VACUUM ANALYZE {t}"),
            format!("VACUUM ANALYZE {t}_items"),
        ],
        _ => vec![
            format!("DROP TABLE IF EXISTS {t}_items"),
            format!("DROP TABLE IF EXISTS {t}"),
            format!("CREATE TABLE {t} (id BINARY(16) NOT NULL PRIMARY KEY, n INT NOT NULL DEFAULT 0)"),
            format!(
                "CREATE TABLE {t}_items (k BIGINT AUTO_INCREMENT PRIMARY KEY, parent BINARY(16) NOT NULL, \
                 KEY {t}_items_parent (parent), CONSTRAINT {t}_items_fk FOREIGN KEY (parent) REFERENCES {t} (id))"
            ),
            // MariaDB's SEQUENCE engine gives the numbers; the hex digits are md5's with the
            // version nibble 4 and the variant bits 10.
            format!(
                "INSERT INTO {t} (id, n) SELECT UNHEX(CONCAT(LEFT(m, 12), '4', SUBSTR(m, 14, 3), \
                 HEX((CONV(SUBSTR(m, 17, 1), 16, 10) & 3) | 8), SUBSTR(m, 18, 3), \
                 LPAD(HEX(1767225600000 + seq * 1000), 12, '0'))), seq \
                 FROM (SELECT seq, MD5(seq) AS m FROM seq_1_to_{rows}) g"
            ),
            format!("INSERT INTO {t}_items (parent) SELECT id FROM {t} WHERE n % {child_every} = 0"),
            format!("ANALYZE TABLE {t}, {t}_items"),
        ],
    }
}

async fn load(pool: &AnyPool, backend: Backend, t: &str, rows: usize, child_every: usize) -> Result<(), BoxError> {
    let _ = sqlx::raw_sql(AssertSqlSafe(format!("DELETE FROM combkey_doctor_journal WHERE target LIKE '%{t}%'")))
        .execute(pool)
        .await;
    for s in load_sql(backend, t, rows, child_every) {
        sqlx::raw_sql(AssertSqlSafe(s)).execute(pool).await?;
    }
    Ok(())
}

/// Runs `combkey` with `args` and waits for it: its peak RSS in MiB and its seconds.
pub(crate) fn peak(combkey: &Path, args: &[&str]) -> Result<(f64, f64), BoxError> {
    let started = Instant::now();
    let child = Command::new(combkey).args(args).stdout(std::process::Stdio::null()).spawn()?;
    let pid = libc::pid_t::try_from(child.id())?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is this process's child, not yet waited for (the `Child` handle is
    // forgotten below, so std never waits for it again); both pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    std::mem::forget(child);
    if waited != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()).into());
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("combkey {} failed (status {status})", args.join(" ")).into());
    }
    // Linux reports ru_maxrss in KiB.
    #[allow(clippy::cast_precision_loss)]
    let mib = usage.ru_maxrss as f64 / 1024.0;
    Ok((mib, started.elapsed().as_secs_f64()))
}

/// The three runs at one size on one backend.
pub(crate) async fn run(
    url: &str,
    backend: Backend,
    combkey: &Path,
    rows: usize,
    child_every: usize,
) -> Result<Vec<Measured>, BoxError> {
    sqlx::any::install_default_drivers();
    let t = "combkey_doctor_mem";
    let pool = AnyPoolOptions::new().max_connections(2).connect(url).await?;
    let mut out = Vec::new();
    let name = backend.name();
    eprintln!("doctor-memory, {name}: loading {rows} rows");
    load(&pool, backend, t, rows, child_every).await?;
    let base = ["doctor", "--url", url, "--table", t];
    for (what, extra) in [("audit", &[][..]), ("--apply", &["--apply"][..])] {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let (peak_mib, seconds) = peak(combkey, &args)?;
        eprintln!("doctor-memory, {name}, {rows} rows, {what}: peak RSS {peak_mib:.1} MiB, {seconds:.1} s");
        out.push(Measured { backend, rows, what, peak_mib, seconds });
    }
    eprintln!("doctor-memory, {name}: loading {rows} rows again");
    load(&pool, backend, t, rows, child_every).await?;
    let args: Vec<&str> = base.iter().copied().chain(["--apply", "--online"]).collect();
    let (peak_mib, seconds) = peak(combkey, &args)?;
    eprintln!("doctor-memory, {name}, {rows} rows, --apply --online: peak RSS {peak_mib:.1} MiB, {seconds:.1} s");
    out.push(Measured { backend, rows, what: "--apply --online", peak_mib, seconds });
    for s in [format!("DROP TABLE {t}_items"), format!("DROP TABLE {t}")] {
        sqlx::raw_sql(AssertSqlSafe(s)).execute(&pool).await?;
    }
    Ok(out)
}

/// The table of results, and whether the goals hold (the larger size within 1.2x of the
/// smaller, every peak under 150 MiB).
pub(crate) fn summary(runs: &[Measured], settings: &[String]) -> (String, bool) {
    let mut s = String::new();
    let _ = writeln!(s, "combkey doctor: peak RSS (MiB) and time (s) by table size");
    for line in settings {
        let _ = writeln!(s, "  {line}");
    }
    let _ = writeln!(s, "{:<10} {:<18} {:>10} {:>12} {:>10}", "backend", "run", "rows", "peak MiB", "seconds");
    let mut ok = true;
    for m in runs {
        let _ = writeln!(
            s,
            "{:<10} {:<18} {:>10} {:>12.1} {:>10.1}",
            m.backend.name(),
            m.what,
            m.rows,
            m.peak_mib,
            m.seconds
        );
        ok &= m.peak_mib < 150.0;
    }
    for m in runs {
        let smallest = runs
            .iter()
            .filter(|o| o.backend == m.backend && o.what == m.what)
            .min_by_key(|o| o.rows)
            .map_or(m.peak_mib, |o| o.peak_mib);
        if m.peak_mib > 1.2 * smallest {
            ok = false;
            let _ = writeln!(
                s,
                "  GOAL MISSED: {} {} at {} rows: {:.1} MiB, {:.2}x the smallest table's",
                m.backend.name(),
                m.what,
                m.rows,
                m.peak_mib,
                m.peak_mib / smallest
            );
        }
    }
    let _ =
        writeln!(s, "goal (peak flat within 1.2x across sizes, under 150 MiB): {}", if ok { "met" } else { "MISSED" });
    (s, ok)
}
