//! The PostgreSQL bulk-load benchmark (`copy`): `COPY ... FROM STDIN (FORMAT binary)`
//! through sqlx's `copy_in_raw` with `combkey_sqlx::copy::PgBinaryCopy`, one `COPY` per
//! chunk of rows, each chunk timed, for a bigint identity key (the server numbers the
//! rows), client-made v4 keys and the prefix COMB.

use std::time::{Duration, Instant};

use combkey::V7Generator;
use combkey_sqlx::Comb;
use combkey_sqlx::copy::{Field, PgBinaryCopy};
use rand::RngExt;
use sqlx::{AssertSqlSafe, Connection, PgConnection};

use crate::{Run, Strategy};

/// Runs the three key kinds, `rows` rows each in `COPY`s of `chunk` rows.
pub(crate) async fn run(url: &str, rows: usize, chunk: usize) -> Result<Vec<Run>, Box<dyn std::error::Error>> {
    let mut c = PgConnection::connect(url).await?;
    let v7 = V7Generator::new();
    let mut runs = Vec::new();
    for s in [Strategy::Bigint, Strategy::V4, Strategy::Comb] {
        let table = format!("combkey_copy_{}", format!("{s:?}").to_lowercase());
        let key = if s == Strategy::Bigint {
            "id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
        } else {
            "id uuid PRIMARY KEY"
        };
        sqlx::raw_sql(AssertSqlSafe(format!(
            "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} ({key}, payload text NOT NULL)"
        )))
        .execute(&mut c)
        .await?;
        sqlx::raw_sql("CHECKPOINT").execute(&mut c).await?;
        let (statement, columns) = if s == Strategy::Bigint {
            (format!("COPY {table} (payload) FROM STDIN (FORMAT binary)"), 1)
        } else {
            (format!("COPY {table} (id, payload) FROM STDIN (FORMAT binary)"), 2)
        };
        let mut batch_ms = Vec::new();
        let mut total = Duration::ZERO;
        let mut done = 0;
        while done < rows {
            let n = (rows - done).min(chunk);
            let data = chunk_data(s, &v7, n, columns)?;
            let t = Instant::now();
            let mut copy = c.copy_in_raw(&statement).await?;
            copy.send(data).await?;
            copy.finish().await?;
            let took = t.elapsed();
            total += took;
            batch_ms.push(took.as_secs_f64() * 1000.0);
            done += n;
        }
        let index = format!("{table}_pkey");
        let index_bytes: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT pg_relation_size('{index}')"))).fetch_one(&mut c).await?;
        let table_bytes: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT pg_table_size('{table}')"))).fetch_one(&mut c).await?;
        let leaf_density: f64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT avg_leaf_density FROM pgstatindex('{index}')")))
                .fetch_one(&mut c)
                .await?;
        sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await?;
        let run = Run {
            backend: "PostgreSQL COPY",
            strategy: s,
            rows: done,
            batch_ms,
            total,
            index_bytes,
            table_bytes,
            wal_bytes: None,
            leaf_density: Some(leaf_density),
        };
        eprintln!("COPY {}: {} rows in {:.1} s", s.name(), done, total.as_secs_f64());
        runs.push(run);
    }
    Ok(runs)
}

/// One chunk's COPY data (made before the clock starts).
fn chunk_data(s: Strategy, v7: &V7Generator, n: usize, columns: u16) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let mut rng = rand::rng();
    let mut data = PgBinaryCopy::new(columns);
    let mut ids = vec![combkey::Comb::NIL; n];
    match s {
        Strategy::Comb => v7.fill(&mut ids),
        Strategy::V4 => {
            for id in &mut ids {
                let mut b: [u8; 16] = rng.random();
                b[6] = 0x40 | (b[6] & 0x0f);
                b[8] = 0x80 | (b[8] & 0x3f);
                *id = combkey::Comb::from_bytes(b);
            }
        }
        _ => {}
    }
    for id in ids {
        let payload = format!("{:0100}", rng.random::<u64>());
        if columns == 1 {
            data.push(&[Field::Text(&payload)])?;
        } else {
            data.push(&[Field::Comb(Comb::from(id)), Field::Text(&payload)])?;
        }
    }
    Ok(data.finish())
}

fn rate(r: &Run) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let rows = r.rows as f64;
    rows / r.total.max(Duration::from_millis(1)).as_secs_f64()
}

/// The README table.
pub(crate) fn table(runs: &[Run], settings: &str) -> String {
    let base = runs.iter().find(|r| r.strategy == Strategy::Bigint).map(rate);
    let v4 = runs.iter().find(|r| r.strategy == Strategy::V4).map(rate);
    let mut s = format!(
        "{settings}\n| COPY (FORMAT binary) | rows/s | vs bigint | vs v4 | last 10% / chunk | PK index | leaf density |\n| --- | --- | --- | --- | --- | --- | --- |\n"
    );
    for r in runs {
        let ratio = |o: Option<f64>| o.map_or_else(|| "-".into(), |o| format!("{:.2}x", rate(r) / o));
        let tail = &r.batch_ms[r.batch_ms.len() - (r.batch_ms.len() / 10).max(1)..];
        #[allow(clippy::cast_precision_loss)]
        let tail_ms = tail.iter().sum::<f64>() / tail.len() as f64;
        #[allow(clippy::cast_precision_loss)]
        let mib = r.index_bytes as f64 / 1_048_576.0;
        s.push_str(&format!(
            "| {} | {:.0} | {} | {} | {tail_ms:.0} ms | {mib:.1} MiB | {:.1}% |\n",
            r.strategy.name(),
            rate(r),
            ratio(base),
            ratio(v4),
            r.leaf_density.unwrap_or(f64::NAN)
        ));
    }
    s
}

/// Prints the table and writes copy-summary.txt, copy.csv and the chart.
pub(crate) fn write_all(runs: &[Run], settings: &str, out: &std::path::Path, chunk: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let t = table(runs, settings);
    print!("{t}");
    std::fs::write(out.join("copy-summary.txt"), &t)?;
    let mut csv = String::from("strategy,rows,total_s,rows_per_s,index_bytes,table_bytes,leaf_density\n");
    for r in runs {
        csv.push_str(&format!(
            "{},{},{:.3},{:.0},{},{},{:.2}\n",
            r.strategy.name(),
            r.rows,
            r.total.as_secs_f64(),
            rate(r),
            r.index_bytes,
            r.table_bytes,
            r.leaf_density.unwrap_or(f64::NAN)
        ));
    }
    std::fs::write(out.join("copy.csv"), csv)?;
    let refs: Vec<&Run> = runs.iter().collect();
    std::fs::write(out.join("copy-time-per-chunk.svg"), crate::report::time_chart(&refs, "PostgreSQL COPY", chunk))?;
    Ok(())
}
