//! The insert benchmark on a three-node MariaDB Galera cluster (`galera`): three writers,
//! one per node, inserting at once. Galera certifies every transaction against the others
//! on every node; AUTO_INCREMENT there is interleaved (`wsrep_auto_increment_control`:
//! increment = cluster size, one offset per node), so no key is allocated twice either, but
//! its keys no longer sort in creation order across nodes. Client-made keys need nobody.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use combkey::{SystemClock, V7Generator};
use combkey_sqlx::Comb;
use rand::RngExt;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection};

use crate::{Run, Strategy};

/// One strategy's run on the cluster.
pub(crate) struct GaleraRun {
    pub(crate) run: Run,
    /// Certification failures on all nodes during the run (`wsrep_local_cert_failures`).
    pub(crate) cert_failures: u64,
    /// Batches a writer had to send again (deadlock / certification failure).
    pub(crate) retried_batches: u64,
    /// Share of neighbouring rows in `ORDER BY id` whose writer-recorded creation time
    /// (ms) goes backwards.
    pub(crate) out_of_order: f64,
    /// The largest such step back, in ms.
    pub(crate) worst_ms: i64,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

async fn status_sum(urls: &[String], name: &str) -> Result<u64, Box<dyn std::error::Error>> {
    let mut sum = 0;
    for url in urls {
        let mut c = MySqlConnection::connect(url).await?;
        let (_, v): (String, String) =
            sqlx::query_as(AssertSqlSafe(format!("SHOW GLOBAL STATUS LIKE '{name}'"))).fetch_one(&mut c).await?;
        sum += v.parse::<u64>()?;
    }
    Ok(sum)
}

/// Waits until every node has applied every write set the first node had committed (the DDL
/// just run there: Galera applies it on the others asynchronously), up to 120 s.
async fn applied_everywhere(urls: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let last = |url: String| async move {
        let mut c = MySqlConnection::connect(&url).await?;
        let row: (String, String) =
            sqlx::query_as("SHOW GLOBAL STATUS LIKE 'wsrep_last_committed'").fetch_one(&mut c).await?;
        Ok::<i64, Box<dyn std::error::Error>>(row.1.parse()?)
    };
    let target = last(urls[0].clone()).await?;
    for url in urls {
        let deadline = Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let seen = last(url.clone()).await?;
            if seen >= target {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("{url} applied up to {seen} of {target} after 120 s").into());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// A batch's keys (none for AUTO_INCREMENT) and ~100-byte payloads.
fn make_batch(ids: &V7Generator<SystemClock>, strategy: Strategy, n: usize) -> (Vec<Comb>, Vec<String>) {
    let mut rng = rand::rng();
    let keys = match strategy {
        Strategy::Comb => {
            let mut k = vec![combkey::Comb::NIL; n];
            ids.fill(&mut k);
            k.into_iter().map(Comb::from).collect()
        }
        Strategy::V4 => (0..n)
            .map(|_| {
                let mut b: [u8; 16] = rng.random();
                b[6] = 0x40 | (b[6] & 0x0f);
                b[8] = 0x80 | (b[8] & 0x3f);
                Comb::from(combkey::Comb::from_bytes(b))
            })
            .collect(),
        _ => Vec::new(),
    };
    let payload = (0..n).map(|_| format!("{:0100}", rng.random::<u64>())).collect();
    (keys, payload)
}

/// One writer: `rows` rows in batches through its own connection to its node, with its own
/// generator (an independent client). Returns each batch's (completion instant, ms) and
/// how many batches it resent.
async fn write(
    url: String,
    table: String,
    strategy: Strategy,
    writer: u8,
    rows: usize,
    batch: usize,
) -> Result<(Vec<(Instant, f64)>, u64), String> {
    let mut c = MySqlConnection::connect(&url).await.map_err(|e| format!("{url}: {e}"))?;
    let ids = V7Generator::with_clock(SystemClock);
    let mut times = Vec::new();
    let mut retried = 0;
    let mut done = 0;
    while done < rows {
        let n = (rows - done).min(batch);
        let made_at = now_ms();
        let (keys, payload) = make_batch(&ids, strategy, n);
        let sql = if keys.is_empty() {
            format!("INSERT INTO {table} (writer, made_at, payload) VALUES {}", vec!["(?, ?, ?)"; n].join(","))
        } else {
            format!("INSERT INTO {table} (id, writer, made_at, payload) VALUES {}", vec!["(?, ?, ?, ?)"; n].join(","))
        };
        let t = Instant::now();
        loop {
            let mut q = sqlx::query(AssertSqlSafe(sql.clone()));
            for (i, p) in payload.iter().enumerate() {
                if let Some(k) = keys.get(i) {
                    q = q.bind(*k);
                }
                q = q.bind(writer).bind(made_at).bind(p);
            }
            match q.execute(&mut c).await {
                Ok(_) => break,
                // 1213: deadlock, which is how Galera reports a certification failure.
                Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("40001") => retried += 1,
                Err(e) => return Err(format!("writer {writer}: {e}")),
            }
        }
        times.push((Instant::now(), t.elapsed().as_secs_f64() * 1000.0));
        done += n;
    }
    Ok((times, retried))
}

/// Runs `strategies` on the cluster at `urls` (one writer per node), `rows` rows per writer.
pub(crate) async fn run(
    urls: &[String],
    strategies: &[Strategy],
    rows: usize,
    batch: usize,
) -> Result<Vec<GaleraRun>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for &s in strategies {
        let table = format!("combkey_galera_bench_{}", format!("{s:?}").to_lowercase());
        let key = match s {
            Strategy::Bigint => "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY",
            Strategy::Comb | Strategy::V4 => "id BINARY(16) NOT NULL PRIMARY KEY",
            other => return Err(format!("galera measures bigint, v4 and comb, not {}", other.name()).into()),
        };
        let mut c = MySqlConnection::connect(&urls[0]).await?;
        sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&mut c).await?;
        sqlx::query(AssertSqlSafe(format!(
            "CREATE TABLE {table} ({key}, writer TINYINT NOT NULL, made_at BIGINT NOT NULL, payload VARCHAR(120) NOT NULL) ENGINE=InnoDB"
        )))
        .execute(&mut c)
        .await?;
        applied_everywhere(urls).await?;
        let cert0 = status_sum(urls, "wsrep_local_cert_failures").await?;
        let started = Instant::now();
        let writers: Vec<_> = urls
            .iter()
            .enumerate()
            .map(|(w, url)| {
                tokio::spawn(write(url.clone(), table.clone(), s, u8::try_from(w).unwrap_or(u8::MAX), rows, batch))
            })
            .collect();
        let mut batches = Vec::new();
        let mut retried_batches = 0;
        for w in writers {
            let (times, retried) = w.await??;
            batches.extend(times);
            retried_batches += retried;
        }
        let total = started.elapsed();
        // Every node has applied everything before sizes and order are read.
        sqlx::query("SET SESSION wsrep_sync_wait = 1").execute(&mut c).await?;
        let cert_failures = status_sum(urls, "wsrep_local_cert_failures").await? - cert0;
        let made: Vec<i64> = sqlx::query_scalar(AssertSqlSafe(format!("SELECT made_at FROM {table} ORDER BY id")))
            .fetch_all(&mut c)
            .await?;
        let backwards: Vec<i64> = made.windows(2).filter(|w| w[1] < w[0]).map(|w| w[0] - w[1]).collect();
        #[allow(clippy::cast_precision_loss)]
        let out_of_order = backwards.len() as f64 / made.len().saturating_sub(1).max(1) as f64;
        let (data_len, index_len) = crate::innodb_sizes(&mut c, &table).await?;
        sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await?;
        batches.sort_by_key(|(at, _)| *at);
        let run = Run {
            backend: "Galera",
            strategy: s,
            rows: made.len(),
            batch_ms: batches.into_iter().map(|(_, ms)| ms).collect(),
            total,
            index_bytes: data_len,
            table_bytes: data_len + index_len,
            wal_bytes: None,
            leaf_density: None,
        };
        eprintln!(
            "Galera {}: {} rows in {:.1} s, {} certification failures, {:.2}% out of creation order",
            s.name(),
            run.rows,
            total.as_secs_f64(),
            cert_failures,
            out_of_order * 100.0
        );
        out.push(GaleraRun {
            run,
            cert_failures,
            retried_batches,
            out_of_order,
            worst_ms: backwards.into_iter().max().unwrap_or(0),
        });
    }
    Ok(out)
}

fn rate(r: &GaleraRun) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let rows = r.run.rows as f64;
    rows / r.run.total.max(Duration::from_millis(1)).as_secs_f64()
}

/// The README table.
pub(crate) fn table(runs: &[GaleraRun], settings: &str) -> String {
    let base = runs.iter().find(|r| r.run.strategy == Strategy::Bigint);
    let v4 = runs.iter().find(|r| r.run.strategy == Strategy::V4);
    let mut s = format!(
        "{settings}\n| 3 writers, one per node | rows/s | vs AUTO_INCREMENT | vs v4 | certification failures | batches resent | clustered index | index vs AUTO_INCREMENT | `ORDER BY id` out of creation order | worst step back |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    );
    for r in runs {
        let ratio = |other: Option<&GaleraRun>, f: fn(&GaleraRun) -> f64| {
            other.map_or_else(|| "-".to_string(), |o| format!("{:.2}x", f(r) / f(o)))
        };
        #[allow(clippy::cast_precision_loss)]
        let size = |g: &GaleraRun| g.run.index_bytes as f64;
        #[allow(clippy::cast_precision_loss)]
        let mib = r.run.index_bytes as f64 / 1_048_576.0;
        s.push_str(&format!(
            "| {} | {:.0} | {} | {} | {} | {} | {mib:.1} MiB | {} | {:.2}% | {} ms |\n",
            if r.run.strategy == Strategy::Bigint { "AUTO_INCREMENT (interleaved)" } else { r.run.strategy.name() },
            rate(r),
            ratio(base, rate),
            ratio(v4, rate),
            r.cert_failures,
            r.retried_batches,
            ratio(base, size),
            r.out_of_order * 100.0,
            r.worst_ms
        ));
    }
    s
}

/// Prints the table and writes galera-summary.txt, galera.csv and the charts.
pub(crate) fn write_all(
    runs: &[GaleraRun],
    settings: &str,
    out: &std::path::Path,
    batch: usize,
) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let t = table(runs, settings);
    print!("{t}");
    std::fs::write(out.join("galera-summary.txt"), &t)?;
    let mut csv = String::from(
        "strategy,rows,total_s,rows_per_s,cert_failures,batches_resent,index_bytes,out_of_order,worst_ms\n",
    );
    for r in runs {
        csv.push_str(&format!(
            "{},{},{:.3},{:.0},{},{},{},{:.6},{}\n",
            r.run.strategy.name(),
            r.run.rows,
            r.run.total.as_secs_f64(),
            rate(r),
            r.cert_failures,
            r.retried_batches,
            r.run.index_bytes,
            r.out_of_order,
            r.worst_ms
        ));
    }
    std::fs::write(out.join("galera.csv"), csv)?;
    let plain: Vec<&Run> = runs.iter().map(|r| &r.run).collect();
    std::fs::write(
        out.join("galera-time-per-batch.svg"),
        crate::report::time_chart(&plain, "Galera, 3 writers", batch),
    )?;
    std::fs::write(out.join("galera-index-size.svg"), crate::report::size_chart(&plain, "Galera"))?;
    Ok(())
}
