//! The report: a table in the terminal, CSV files and SVG charts (hand-written SVG: no font
//! or drawing library needed).

use std::fmt::Write as _;
use std::path::Path;

use crate::{Run, Strategy};

fn mib(b: i64) -> f64 {
    // OK: sizes far below 2^52 bytes are exact in f64.
    #[allow(clippy::cast_precision_loss)]
    let v = b as f64 / 1_048_576.0;
    v
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    #[allow(clippy::cast_precision_loss)]
    let n = xs.len() as f64;
    xs.iter().sum::<f64>() / n
}

/// Mean batch time of the first and the last tenth of the run.
fn first_last(run: &Run) -> (f64, f64) {
    let n = run.batch_ms.len();
    let k = (n / 10).max(1).min(n);
    (mean(&run.batch_ms[..k]), mean(&run.batch_ms[n - k..]))
}

pub(crate) fn progress(run: &Run) {
    let (first, last) = first_last(run);
    eprintln!(
        "  {:<10} {:<22} {:>9} rows in {:>7.1} s  (batches: first 10% {:.1} ms, last 10% {:.1} ms)",
        run.backend,
        run.strategy.name(),
        run.rows,
        run.total.as_secs_f64(),
        first,
        last
    );
}

fn ratio(a: f64, b: Option<f64>) -> String {
    match b {
        Some(b) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

/// The terminal table, also written to `summary.txt`.
pub(crate) fn table(runs: &[Run], settings: &[String]) -> String {
    let mut s = String::new();
    for line in settings {
        let _ = writeln!(s, "# {line}");
    }
    let _ = writeln!(
        s,
        "{:<10} {:<22} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "backend",
        "key",
        "rows",
        "total s",
        "first ms",
        "last ms",
        "index MiB",
        "table MiB",
        "WAL MiB",
        "leaf %",
        "t/bigint",
        "t/v4",
        "idx/v4",
        "WAL/big"
    );
    for r in runs {
        let peer = |s: Strategy| runs.iter().find(|x| x.backend == r.backend && x.strategy == s);
        let total = r.total.as_secs_f64();
        let (first, last) = first_last(r);
        let _ = writeln!(
            s,
            "{:<10} {:<22} {:>9} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9}",
            r.backend,
            r.strategy.name(),
            r.rows,
            total,
            first,
            last,
            mib(r.index_bytes),
            mib(r.table_bytes),
            r.wal_bytes.map_or("-".into(), |w| format!("{:.0}", mib(w))),
            r.leaf_density.map_or("-".into(), |d| format!("{d:.1}")),
            ratio(total, peer(Strategy::Bigint).map(|p| p.total.as_secs_f64())),
            ratio(total, peer(Strategy::V4).map(|p| p.total.as_secs_f64())),
            ratio(mib(r.index_bytes), peer(Strategy::V4).map(|p| mib(p.index_bytes))),
            match (r.wal_bytes, peer(Strategy::Bigint).and_then(|p| p.wal_bytes)) {
                #[allow(clippy::cast_precision_loss)]
                (Some(w), Some(b)) => ratio(w as f64, Some(b as f64)),
                _ => "-".into(),
            },
        );
    }
    s
}

const COLORS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf"];

fn color(s: Strategy) -> &'static str {
    match s {
        Strategy::Bigint => COLORS[0],
        Strategy::V4 => COLORS[1],
        Strategy::Comb => COLORS[2],
        Strategy::Short => COLORS[3],
        Strategy::Server => COLORS[4],
        Strategy::UuidType => COLORS[5],
    }
}

/// Time per batch against rows inserted, one line per key kind (each point the mean of 1%
/// of the batches), as the charts of Percona's post.
pub(crate) fn time_chart(runs: &[&Run], backend: &str, batch: usize) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 500.0, 70.0, 220.0, 40.0, 50.0);
    let series: Vec<(Strategy, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|r| {
            let per = (r.batch_ms.len() / 100).max(1);
            let pts = r
                .batch_ms
                .chunks(per)
                .enumerate()
                .map(|(i, c)| {
                    #[allow(clippy::cast_precision_loss)]
                    let x = ((i * per + c.len()) * batch) as f64;
                    (x, mean(c))
                })
                .collect();
            (r.strategy, pts)
        })
        .collect();
    let max_x = series.iter().flat_map(|(_, p)| p.iter().map(|(x, _)| *x)).fold(1.0, f64::max);
    let max_y = series.iter().flat_map(|(_, p)| p.iter().map(|(_, y)| *y)).fold(1.0, f64::max) * 1.05;
    let sx = |x: f64| left + x / max_x * (w - left - right);
    let sy = |y: f64| h - bottom - y / max_y * (h - top - bottom);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"24\" font-size=\"15\">{backend}: time per batch of {batch} rows as the table grows</text>\n"
    );
    for i in 0..=5 {
        let fy = f64::from(i) / 5.0;
        let (y, yv) = (sy(fy * max_y), fy * max_y);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{yv:.0} ms</text>",
            w - right,
            left - 6.0,
            y + 4.0
        );
        let (x, xv) = (sx(fy * max_x), fy * max_x);
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{:.0}k</text>",
            h - bottom + 18.0,
            xv / 1000.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">rows inserted</text>",
        (left + w - right) / 2.0,
        h - 8.0
    );
    for (k, (strategy, pts)) in series.iter().enumerate() {
        let path: Vec<String> = pts.iter().map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y))).collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>",
            color(*strategy),
            path.join(" ")
        );
        #[allow(clippy::cast_precision_loss)]
        let ly = top + 20.0 + 20.0 * k as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{:.1}\" width=\"14\" height=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{:.1}\">{}</text>",
            w - right + 12.0,
            ly - 4.0,
            color(*strategy),
            w - right + 32.0,
            ly + 1.0,
            strategy.name()
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Primary key index (InnoDB: clustered index) size per key kind.
pub(crate) fn size_chart(runs: &[&Run], backend: &str) -> String {
    let (w, left, bar, gap, top) = (900.0, 190.0, 26.0, 12.0, 50.0);
    #[allow(clippy::cast_precision_loss)]
    let h = top + (bar + gap) * runs.len() as f64 + 30.0;
    let max = runs.iter().map(|r| mib(r.index_bytes)).fold(1.0, f64::max);
    let what = if backend == "MariaDB" || backend == "Galera" { "clustered index (data)" } else { "primary key index" };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"24\" font-size=\"15\">{backend}: {what} size</text>\n"
    );
    for (i, r) in runs.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y = top + (bar + gap) * i as f64;
        let len = mib(r.index_bytes) / max * (w - left - 120.0);
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{y:.1}\" width=\"{len:.1}\" height=\"{bar}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.1} MiB</text>",
            left - 8.0,
            y + 17.0,
            r.strategy.name(),
            color(r.strategy),
            left + len + 6.0,
            y + 17.0,
            mib(r.index_bytes)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Prints the table and writes summary.txt, summary.csv, batches.csv and the charts.
pub(crate) fn write_all(runs: &[Run], settings: &[String], out: &Path, batch: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let t = table(runs, settings);
    print!("{t}");
    std::fs::write(out.join("summary.txt"), &t)?;
    let mut csv = String::from(
        "backend,strategy,rows,total_s,first10_ms,last10_ms,index_bytes,table_bytes,wal_bytes,leaf_density\n",
    );
    let mut batches = String::from("backend,strategy,rows_inserted,batch_ms\n");
    for r in runs {
        let (first, last) = first_last(r);
        let _ = writeln!(
            csv,
            "{},{},{},{:.3},{first:.3},{last:.3},{},{},{},{}",
            r.backend,
            r.strategy.name(),
            r.rows,
            r.total.as_secs_f64(),
            r.index_bytes,
            r.table_bytes,
            r.wal_bytes.map_or(String::new(), |w| w.to_string()),
            r.leaf_density.map_or(String::new(), |d| format!("{d:.2}"))
        );
        for (i, ms) in r.batch_ms.iter().enumerate() {
            let _ = writeln!(batches, "{},{},{},{ms:.3}", r.backend, r.strategy.name(), (i + 1) * batch);
        }
    }
    std::fs::write(out.join("summary.csv"), csv)?;
    std::fs::write(out.join("batches.csv"), batches)?;
    for backend in ["PostgreSQL", "MariaDB"] {
        let mine: Vec<&Run> = runs.iter().filter(|r| r.backend == backend).collect();
        if mine.is_empty() {
            continue;
        }
        let slug = backend.to_lowercase();
        std::fs::write(out.join(format!("{slug}-time-per-batch.svg")), time_chart(&mine, backend, batch))?;
        std::fs::write(out.join(format!("{slug}-index-size.svg")), size_chart(&mine, backend))?;
    }
    eprintln!("wrote {}/summary.csv, batches.csv and the SVG charts", out.display());
    Ok(())
}
