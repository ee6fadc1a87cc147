//! `query`: "rows of one hour" on PostgreSQL through the COMB key's index
//! (`id >= start AND id < end`, [`combkey::Comb::range`]) against a `created_at` column and its
//! own index, on the same table, and the bytes the `created_at` index costs.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use combkey::{Timestamp, V7Generator};
use combkey_sqlx::Comb;
use rand::{RngExt, SeedableRng};
use sqlx::{Connection, PgConnection};

/// The result of one `query` run.
pub(crate) struct QueryRun {
    pub(crate) rows: usize,
    pub(crate) rows_per_hour: usize,
    /// Per sampled hour: (rows returned, key-range ms, created_at ms).
    pub(crate) hours: Vec<(usize, f64, f64)>,
    pub(crate) pkey_bytes: i64,
    pub(crate) created_at_index_bytes: i64,
    pub(crate) table_bytes: i64,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => 0.0,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// Loads `rows` rows, `rows_per_hour` an hour in creation order (ids made for their time
/// with the generator's `_at` API, `created_at` the same time), then times `samples` random
/// hours both ways, alternating which query goes first.
pub(crate) async fn run(
    url: &str,
    rows: usize,
    rows_per_hour: usize,
    samples: usize,
) -> Result<QueryRun, Box<dyn std::error::Error>> {
    let mut c = PgConnection::connect(url).await?;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS combkey_query;
         CREATE TABLE combkey_query (id uuid PRIMARY KEY, created_at timestamptz NOT NULL, payload text NOT NULL);
         CREATE INDEX combkey_query_created_at ON combkey_query (created_at)",
    )
    .execute(&mut c)
    .await?;
    let t0 = Timestamp::from_unix_ms(1_700_000_000_000);
    let step_ms = 3_600_000 / i64::try_from(rows_per_hour.max(1))?;
    let g = V7Generator::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut done = 0usize;
    while done < rows {
        let n = (rows - done).min(10_000);
        let mut ids = Vec::with_capacity(n);
        let mut ms = Vec::with_capacity(n);
        let mut payload = Vec::with_capacity(n);
        for i in done..done + n {
            let at = t0.saturating_add_ms(step_ms * i64::try_from(i)?);
            ids.push(Comb::from(g.generate_at(at)));
            ms.push(at.unix_ms());
            payload.push(format!("{:0100}", rng.random::<u64>()));
        }
        sqlx::query(
            "INSERT INTO combkey_query (id, created_at, payload)
             SELECT i, to_timestamp(m / 1000.0), p FROM UNNEST($1::uuid[], $2::bigint[], $3::text[]) AS u(i, m, p)",
        )
        .bind(&ids)
        .bind(&ms)
        .bind(&payload)
        .execute(&mut c)
        .await?;
        done += n;
    }
    sqlx::raw_sql("VACUUM ANALYZE combkey_query").execute(&mut c).await?;
    let size = |name: &str| format!("SELECT pg_relation_size('{name}')");
    let pkey_bytes: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(size("combkey_query_pkey"))).fetch_one(&mut c).await?;
    let created_at_index_bytes: i64 =
        sqlx::query_scalar(sqlx::AssertSqlSafe(size("combkey_query_created_at"))).fetch_one(&mut c).await?;
    let table_bytes: i64 = sqlx::query_scalar("SELECT pg_table_size('combkey_query')").fetch_one(&mut c).await?;

    let total_hours = rows / rows_per_hour.max(1);
    let mut hours = Vec::new();
    for k in 0..samples {
        let hour = rng.random_range(0..total_hours.max(1));
        let start = t0.saturating_add_ms(3_600_000 * i64::try_from(hour)?);
        let end = start.saturating_add_ms(3_600_000);
        let range = combkey::Comb::range(start..end)?;
        let by_key = async |c: &mut PgConnection| -> Result<(usize, f64), sqlx::Error> {
            let t = Instant::now();
            let rows: Vec<(Comb, String)> =
                sqlx::query_as("SELECT id, payload FROM combkey_query WHERE id >= $1 AND id < $2")
                    .bind(Comb::from(range.start()))
                    .bind(Comb::from(range.end()))
                    .fetch_all(c)
                    .await?;
            Ok((rows.len(), t.elapsed().as_secs_f64() * 1000.0))
        };
        let by_created_at = async |c: &mut PgConnection| -> Result<(usize, f64), sqlx::Error> {
            let t = Instant::now();
            let rows: Vec<(Comb, String)> = sqlx::query_as(
                "SELECT id, payload FROM combkey_query WHERE created_at >= to_timestamp($1 / 1000.0) \
                 AND created_at < to_timestamp($2 / 1000.0)",
            )
            .bind(start.unix_ms())
            .bind(end.unix_ms())
            .fetch_all(c)
            .await?;
            Ok((rows.len(), t.elapsed().as_secs_f64() * 1000.0))
        };
        let ((n_key, key_ms), (n_at, at_ms)) = if k % 2 == 0 {
            let a = by_key(&mut c).await?;
            (a, by_created_at(&mut c).await?)
        } else {
            let b = by_created_at(&mut c).await?;
            (by_key(&mut c).await?, b)
        };
        if n_key != n_at {
            return Err(format!("hour {hour}: the key range returned {n_key} rows, created_at {n_at}").into());
        }
        hours.push((n_key, key_ms, at_ms));
    }
    sqlx::raw_sql("DROP TABLE combkey_query").execute(&mut c).await?;
    Ok(QueryRun { rows, rows_per_hour, hours, pkey_bytes, created_at_index_bytes, table_bytes })
}

/// The summary table (Markdown).
pub(crate) fn table(run: &QueryRun, settings: &str) -> String {
    let key = median(run.hours.iter().map(|h| h.1).collect());
    let at = median(run.hours.iter().map(|h| h.2).collect());
    let rows = median(
        run.hours
            .iter()
            .map(|h| {
                #[allow(clippy::cast_precision_loss)] // row counts far below 2^52
                let n = h.0 as f64;
                n
            })
            .collect(),
    );
    let mib = |b: i64| {
        #[allow(clippy::cast_precision_loss)] // sizes far below 2^52
        let v = b as f64 / 1_048_576.0;
        v
    };
    let mut s = String::new();
    let _ =
        writeln!(s, "{settings}; {} rows, {} an hour, {} hours sampled", run.rows, run.rows_per_hour, run.hours.len());
    let _ = writeln!(s, "| rows of one hour through | median time | rows | index it needs |");
    let _ = writeln!(s, "| --- | --- | --- | --- |");
    let _ = writeln!(
        s,
        "| the COMB key (`id >= $1 AND id < $2`) | {key:.2} ms | {rows:.0} | primary key, {:.1} MiB (there anyway) |",
        mib(run.pkey_bytes)
    );
    let _ = writeln!(
        s,
        "| `created_at` and its index | {at:.2} ms | {rows:.0} | `created_at` index, {:.1} MiB more |",
        mib(run.created_at_index_bytes)
    );
    let _ = writeln!(
        s,
        "\nkey range / created_at: {:.2}x the time; the created_at index is {:.1}% of the table's {:.1} MiB",
        if at > 0.0 { key / at } else { 0.0 },
        100.0 * mib(run.created_at_index_bytes) / mib(run.table_bytes).max(f64::MIN_POSITIVE),
        mib(run.table_bytes)
    );
    s
}

/// Per-hour times, both ways, as an SVG scatter (hour sample on x, ms on y).
pub(crate) fn chart(run: &QueryRun) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 420.0, 70.0, 230.0, 40.0, 40.0);
    let max_y = run.hours.iter().flat_map(|x| [x.1, x.2]).fold(0.1, f64::max) * 1.1;
    #[allow(clippy::cast_precision_loss)]
    let n = run.hours.len().max(1) as f64;
    let sx = |i: usize| {
        #[allow(clippy::cast_precision_loss)]
        let i = i as f64;
        left + (i + 0.5) / n * (w - left - right)
    };
    let sy = |y: f64| h - bottom - y / max_y * (h - top - bottom);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"24\" font-size=\"15\">PostgreSQL: the rows of one hour, {} rows in the table</text>\n",
        run.rows
    );
    for i in 0..=4 {
        let v = max_y * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v:.1} ms</text>",
            w - right,
            left - 6.0,
            sy(v) + 4.0,
            y = sy(v)
        );
    }
    for (i, (_, key, at)) in run.hours.iter().enumerate() {
        let _ = writeln!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"#2ca02c\"/>", sx(i), sy(*key));
        let _ = writeln!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"#1f77b4\"/>", sx(i), sy(*at));
    }
    let _ = writeln!(
        s,
        "<circle cx=\"{0}\" cy=\"{1}\" r=\"4\" fill=\"#2ca02c\"/><text x=\"{2}\" y=\"{3}\">COMB key range</text>\n\
         <circle cx=\"{0}\" cy=\"{4}\" r=\"4\" fill=\"#1f77b4\"/><text x=\"{2}\" y=\"{5}\">created_at index</text>\n\
         <text x=\"{6}\" y=\"{7}\" text-anchor=\"middle\">sampled hours</text>",
        w - right + 16.0,
        top + 20.0,
        w - right + 28.0,
        top + 24.0,
        top + 40.0,
        top + 44.0,
        (left + w - right) / 2.0,
        h - 10.0
    );
    s.push_str("</svg>\n");
    s
}

/// Writes `query.csv`, `query-summary.txt` and `query-time.svg` into `out`.
pub(crate) fn write_all(run: &QueryRun, settings: &str, out: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let mut csv = String::from("hour_sample,rows,key_range_ms,created_at_ms\n");
    for (i, (n, key, at)) in run.hours.iter().enumerate() {
        let _ = writeln!(csv, "{i},{n},{key:.3},{at:.3}");
    }
    std::fs::write(out.join("query.csv"), csv)?;
    let summary = table(run, settings);
    print!("{summary}");
    std::fs::write(out.join("query-summary.txt"), summary)?;
    std::fs::write(out.join("query-time.svg"), chart(run))?;
    Ok(())
}
