//! The sharding benchmark on a real sharded MariaDB (`spider`): a Spider head over three
//! backends (`scripts/spider.sh start`), several writers through the head, per key kind and
//! per way of sharding: key ranges (the key space cut in three, as a range-sharded engine
//! cuts it) and a hash of the key (`PARTITION BY KEY`). Measured: throughput, how the writes
//! spread over the backends while they run (each backend's `Handler_write`, sampled),
//! each backend's rows and bytes, and a query for the last tenth of the rows by creation
//! time: its latency and how many backends it reached (their `Com_select` counters).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use combkey_sqlx::Comb;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection};

use crate::{Keys, Strategy, payload};

/// How the head spreads the table over the backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sharding {
    /// The key space cut in three equal ranges, one per backend.
    Range,
    /// A hash of the key (`PARTITION BY KEY`), one partition per backend.
    Key,
}

impl Sharding {
    fn name(self) -> &'static str {
        match self {
            Sharding::Range => "RANGE",
            Sharding::Key => "KEY (hash)",
        }
    }
}

/// One run: a key kind under one sharding.
pub(crate) struct SpiderRun {
    pub(crate) sharding: Sharding,
    pub(crate) strategy: Strategy,
    pub(crate) rows: usize,
    pub(crate) total: Duration,
    /// Rows each backend holds at the end.
    pub(crate) per_backend: Vec<i64>,
    /// Bytes (data and indexes) each backend holds at the end.
    pub(crate) bytes: Vec<i64>,
    /// The busiest backend's share of the rows inserted in each sampling interval, averaged.
    pub(crate) busiest_share: f64,
    /// The last tenth of the rows by creation time: median latency of the query, in ms.
    pub(crate) query_ms: f64,
    /// How many backends that query reached.
    pub(crate) touched: usize,
    /// Batches sent again after a deadlock.
    pub(crate) retried: u64,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

async fn status(url: &str, name: &str) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
    let mut c = MySqlConnection::connect(url).await?;
    let (_, v): (String, String) =
        sqlx::query_as(AssertSqlSafe(format!("SHOW GLOBAL STATUS LIKE '{name}'"))).fetch_one(&mut c).await?;
    Ok(v.parse()?)
}

const TABLE: &str = "combkey_spider_bench";

fn key_ddl(strategy: Strategy) -> &'static str {
    match strategy {
        // A sequence the writers share (as a central sequence hands out numbers):
        // AUTO_INCREMENT through the head hung with several writers (the head's insert and its
        // own read of the backend deadlock there; measured with MariaDB 10.11's Spider).
        Strategy::Bigint => "id BIGINT NOT NULL PRIMARY KEY",
        _ => "id BINARY(16) NOT NULL PRIMARY KEY",
    }
}

/// The head's partitioning clause and each backend's table names, in backend order.
fn partitions(sharding: Sharding, strategy: Strategy, servers: &[String], rows: usize) -> (String, Vec<String>) {
    let n = servers.len();
    let tables: Vec<String> = (1..=n).map(|i| format!("{TABLE}_p{i}")).collect();
    let place = |i: usize| format!("COMMENT = 'srv \"{}\", table \"{}\"'", servers[i], tables[i]);
    let clause = match sharding {
        Sharding::Key => {
            let parts: Vec<String> = (0..n).map(|i| format!("PARTITION p{} {}", i + 1, place(i))).collect();
            format!("PARTITION BY KEY(id) ({})", parts.join(", "))
        }
        Sharding::Range => {
            let parts: Vec<String> = (0..n)
                .map(|i| {
                    let bound = if i + 1 == n {
                        "MAXVALUE".to_string()
                    } else if strategy == Strategy::Bigint {
                        ((rows / n) * (i + 1) + 1).to_string()
                    } else {
                        // The first of 16 bytes at (i + 1) / n of the key space.
                        let first = (256 * (i + 1) / n).min(255);
                        format!("0x{first:02X}{}", "00".repeat(15))
                    };
                    format!("PARTITION p{} VALUES LESS THAN ({bound}) {}", i + 1, place(i))
                })
                .collect();
            let by = if strategy == Strategy::Bigint { "RANGE (id)" } else { "RANGE COLUMNS(id)" };
            format!("PARTITION BY {by} ({})", parts.join(", "))
        }
    };
    (clause, tables)
}

/// Runs every strategy under every sharding: `rows` rows per run from `writers` writers.
pub(crate) async fn run(
    head: &str,
    backends: &[String],
    servers: &[String],
    strategies: &[Strategy],
    rows: usize,
    writers: usize,
    batch: usize,
) -> Result<Vec<SpiderRun>, Box<dyn std::error::Error + Send + Sync>> {
    let mut out = Vec::new();
    for sharding in [Sharding::Range, Sharding::Key] {
        for &strategy in strategies {
            let columns = format!(
                "({}, writer TINYINT NOT NULL, made_at BIGINT NOT NULL, payload VARCHAR(120) NOT NULL)",
                key_ddl(strategy)
            );
            let (clause, tables) = partitions(sharding, strategy, servers, rows);
            for (url, t) in backends.iter().zip(&tables) {
                let mut b = MySqlConnection::connect(url).await?;
                sqlx::raw_sql(AssertSqlSafe(format!(
                    "SET SESSION lock_wait_timeout = 30; DROP TABLE IF EXISTS {t}; CREATE TABLE {t} {columns} ENGINE=InnoDB"
                )))
                    .execute(&mut b)
                    .await?;
            }
            let mut h = MySqlConnection::connect(head).await?;
            sqlx::raw_sql(AssertSqlSafe(format!(
                "DROP TABLE IF EXISTS {TABLE}; CREATE TABLE {TABLE} {columns} \
                 ENGINE = SPIDER COMMENT = 'wrapper \"mysql\"' {clause}"
            )))
            .execute(&mut h)
            .await?;

            // Inserts per backend, sampled while the writers write.
            let stop = Arc::new(AtomicBool::new(false));
            let sampler = {
                let stop = Arc::clone(&stop);
                let backends = backends.to_vec();
                tokio::spawn(async move {
                    let mut shares = Vec::new();
                    let mut last: Vec<i64> = Vec::new();
                    for url in &backends {
                        last.push(status(url, "Handler_write").await?);
                    }
                    while !stop.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(250)).await;
                        let mut deltas = Vec::new();
                        for (i, url) in backends.iter().enumerate() {
                            let now = status(url, "Handler_write").await?;
                            deltas.push(now - last[i]);
                            last[i] = now;
                        }
                        let sum: i64 = deltas.iter().sum();
                        if sum > 0 {
                            #[allow(clippy::cast_precision_loss)]
                            shares.push(*deltas.iter().max().unwrap_or(&0) as f64 / sum as f64);
                        }
                    }
                    Ok::<Vec<f64>, Box<dyn std::error::Error + Send + Sync>>(shares)
                })
            };
            let keys = Arc::new(Keys {
                v7: combkey::V7Generator::new(),
                short: combkey::ShortPrefixGenerator::new(combkey::ShortPrefix::default()),
            });
            let retries = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let sequence = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let started = Instant::now();
            let each = rows / writers;
            let tasks: Vec<_> = (0..writers)
                .map(|w| {
                    let head = head.to_string();
                    let keys = Arc::clone(&keys);
                    let retries = Arc::clone(&retries);
                    let sequence = Arc::clone(&sequence);
                    tokio::spawn(async move {
                        let mut c = MySqlConnection::connect(&head).await?;
                        let mut done = 0;
                        while done < each {
                            let n = (each - done).min(batch);
                            // The time first: an id made after it carries that time or a later one.
                            let made = now_ms();
                            let ids = keys.batch(strategy, n);
                            let first = sequence.fetch_add(n as u64, Ordering::Relaxed) + 1;
                            let pay = payload(n);
                            let sql = format!(
                                "INSERT INTO {TABLE} (id, writer, made_at, payload) VALUES {}",
                                vec!["(?, ?, ?, ?)"; n].join(",")
                            );
                            loop {
                                let mut q = sqlx::query(AssertSqlSafe(sql.clone()));
                                for (i, p) in pay.iter().enumerate() {
                                    match ids.get(i) {
                                        Some(id) => q = q.bind(*id),
                                        None => q = q.bind(i64::try_from(first + i as u64).unwrap_or(i64::MAX)),
                                    }
                                    q = q.bind(u8::try_from(w).unwrap_or(u8::MAX)).bind(made).bind(p);
                                }
                                match q.execute(&mut c).await {
                                    Ok(_) => break,
                                    // A deadlock or a lock wait past its timeout (the head's
                                    // AUTO_INCREMENT lock): the batch again.
                                    Err(sqlx::Error::Database(e))
                                        if e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                                            .is_some_and(|m| matches!(m.number(), 1205 | 1213)) =>
                                    {
                                        retries.fetch_add(1, Ordering::Relaxed);
                                    }
                                    Err(e) => return Err(e.into()),
                                }
                            }
                            done += n;
                        }
                        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
                    })
                })
                .collect();
            for t in tasks {
                t.await??;
            }
            let total = started.elapsed();
            stop.store(true, Ordering::Relaxed);
            let shares = sampler.await??;
            #[allow(clippy::cast_precision_loss)]
            let busiest_share = if shares.is_empty() { 1.0 } else { shares.iter().sum::<f64>() / shares.len() as f64 };

            // The last tenth of the rows by creation time.
            let times: Vec<i64> =
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT made_at FROM {TABLE} ORDER BY made_at")))
                    .fetch_all(&mut h)
                    .await?;
            let from_ms = times.get(times.len() * 9 / 10).copied().unwrap_or(0);
            let mut before = Vec::new();
            for url in backends {
                before.push(status(url, "Com_select").await?);
            }
            let mut latencies = Vec::new();
            for _ in 0..5 {
                let t = Instant::now();
                let n: i64 = if matches!(strategy, Strategy::Comb) {
                    // The key's own range: the rows made from `from_ms` on.
                    let start = combkey::Comb::min_for(combkey::Timestamp::from_unix_ms(from_ms))?;
                    let end = combkey::Comb::max_for(combkey::Timestamp::now().saturating_add_ms(1000))?;
                    sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {TABLE} WHERE id BETWEEN ? AND ?")))
                        .bind(Comb::from(start))
                        .bind(Comb::from(end))
                        .fetch_one(&mut h)
                        .await?
                } else {
                    sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {TABLE} WHERE made_at >= ?")))
                        .bind(from_ms)
                        .fetch_one(&mut h)
                        .await?
                };
                latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                if n <= 0 {
                    let (lo, hi): (Vec<u8>, Vec<u8>) = sqlx::query_as(AssertSqlSafe(format!(
                        "SELECT MIN(id), MAX(id) FROM {TABLE} WHERE made_at >= ?"
                    )))
                    .bind(from_ms)
                    .fetch_one(&mut h)
                    .await?;
                    return Err(format!(
                        "{} {}: the last tenth is empty (made from {from_ms}: ids {} to {})",
                        sharding.name(),
                        strategy.name(),
                        combkey::Comb::from_slice(&lo).map(|c| c.to_string()).unwrap_or_default(),
                        combkey::Comb::from_slice(&hi).map(|c| c.to_string()).unwrap_or_default()
                    )
                    .into());
                }
            }
            latencies.sort_by(f64::total_cmp);
            let mut touched = 0;
            for (url, b) in backends.iter().zip(&before) {
                if status(url, "Com_select").await? > *b {
                    touched += 1;
                }
            }
            sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE {TABLE}"))).execute(&mut h).await?;
            drop(h);
            let mut per_backend = Vec::new();
            let mut bytes = Vec::new();
            for (url, t) in backends.iter().zip(&tables) {
                let mut b = MySqlConnection::connect(url).await?;
                sqlx::raw_sql("SET SESSION lock_wait_timeout = 30").execute(&mut b).await?;
                per_backend.push(
                    sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {t}"))).fetch_one(&mut b).await?,
                );
                let (d, i) = crate::innodb_sizes(&mut b, t).await?;
                bytes.push(d + i);
                sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE {t}"))).execute(&mut b).await?;
            }
            let run = SpiderRun {
                sharding,
                strategy,
                rows: times.len(),
                total,
                per_backend,
                bytes,
                busiest_share,
                query_ms: latencies[latencies.len() / 2],
                touched,
                retried: retries.load(Ordering::Relaxed),
            };
            eprintln!(
                "Spider {} {}: {} rows in {:.1} s, rows per backend {:?}, busiest share {:.0}%, last tenth in {:.1} ms on {} backends",
                sharding.name(),
                strategy.name(),
                run.rows,
                total.as_secs_f64(),
                run.per_backend,
                busiest_share * 100.0,
                run.query_ms,
                touched
            );
            out.push(run);
        }
    }
    Ok(out)
}

/// The docs' table.
pub(crate) fn table(runs: &[SpiderRun], settings: &str) -> String {
    let mut s = format!(
        "{settings}\n| sharding | key | rows/s | busiest backend's share of inserts (sampled) | rows per backend | MiB per backend | last tenth by time: ms | backends reached | batches resent (deadlocks) |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    );
    for r in runs {
        #[allow(clippy::cast_precision_loss)]
        let rate = r.rows as f64 / r.total.max(Duration::from_millis(1)).as_secs_f64();
        #[allow(clippy::cast_precision_loss)]
        let mib: Vec<String> = r.bytes.iter().map(|b| format!("{:.1}", *b as f64 / 1_048_576.0)).collect();
        let rows: Vec<String> = r.per_backend.iter().map(ToString::to_string).collect();
        s.push_str(&format!(
            "| {} | {} | {rate:.0} | {:.0}% | {} | {} | {:.1} | {} of {} | {} |\n",
            r.sharding.name(),
            r.strategy.name(),
            r.busiest_share * 100.0,
            rows.join(" / "),
            mib.join(" / "),
            r.query_ms,
            r.touched,
            r.per_backend.len(),
            r.retried
        ));
    }
    s
}

/// Prints the table and writes spider-summary.txt and spider.csv.
pub(crate) fn write_all(runs: &[SpiderRun], settings: &str, out: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let t = table(runs, settings);
    print!("{t}");
    std::fs::write(out.join("spider-summary.txt"), &t)?;
    let mut csv = String::from(
        "sharding,strategy,rows,total_s,busiest_share,rows_per_backend,bytes_per_backend,query_ms,touched\n",
    );
    for r in runs {
        let rows: Vec<String> = r.per_backend.iter().map(ToString::to_string).collect();
        let bytes: Vec<String> = r.bytes.iter().map(ToString::to_string).collect();
        csv.push_str(&format!(
            "{},{},{},{:.3},{:.4},{},{},{:.2},{}\n",
            r.sharding.name(),
            r.strategy.name(),
            r.rows,
            r.total.as_secs_f64(),
            r.busiest_share,
            rows.join(" "),
            bytes.join(" "),
            r.query_ms,
            r.touched
        ));
    }
    std::fs::write(out.join("spider.csv"), csv)?;
    std::fs::write(out.join("spider-rows-per-backend.svg"), chart(runs))
}

/// Each run's rows per backend as one bar in three parts (b1, b2, b3), with the busiest
/// backend's sampled share of the inserts and the time query's backends and latency.
fn chart(runs: &[SpiderRun]) -> String {
    use std::fmt::Write as _;
    const SHADES: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#17becf"];
    let (w, left, bar, gap, top, right) = (980.0, 260.0, 24.0, 10.0, 60.0, 330.0);
    #[allow(clippy::cast_precision_loss)]
    let h = top + (bar + gap) * runs.len() as f64 + 30.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"22\" font-size=\"15\">MariaDB Spider, 3 backends: where the rows went (b1 / b2 / b3), busiest share while writing, time query</text>\n"
    );
    for (i, name) in ["b1", "b2", "b3"].iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let x = left + 60.0 * i as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"34\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"44\">{name}</text>",
            SHADES[i],
            x + 16.0
        );
    }
    for (k, r) in runs.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y = top + (bar + gap) * k as f64;
        let total: i64 = r.per_backend.iter().sum::<i64>().max(1);
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{} {}</text>",
            left - 8.0,
            y + 16.0,
            r.sharding.name(),
            r.strategy.name()
        );
        let mut x = left;
        for (b, rows) in r.per_backend.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let len = *rows as f64 / total as f64 * (w - left - right);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{len:.1}\" height=\"{bar}\" fill=\"{}\"/>",
                SHADES[b % SHADES.len()]
            );
            x += len;
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">busiest {:.0}%, query on {} of {} in {:.1} ms</text>",
            w - right + 10.0,
            y + 16.0,
            r.busiest_share * 100.0,
            r.touched,
            r.per_backend.len(),
            r.query_ms
        );
    }
    s.push_str("</svg>\n");
    s
}
