//! A small run against the CI databases: the report has its shape (not its speed).

use std::process::Command;

#[test]
fn small_run_writes_the_report() {
    let out = std::env::temp_dir().join(format!("combkey-bench-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["insert", "--rows", "3000", "--mysql-rows", "2000", "--batch", "500", "--secondary-index", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let table = String::from_utf8_lossy(&status.stdout);
    for key in ["bigint", "uuid v4 (client)", "combkey prefix COMB", "combkey short prefix", "combkey_v7() (server)"] {
        assert!(table.contains(key), "{key} missing from the table:\n{table}");
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "backend,strategy,rows,total_s,first10_ms,last10_ms,index_bytes,table_bytes,wal_bytes,leaf_density"
    );
    // Five PostgreSQL strategies; five on MariaDB (its UUID type, no server-side generator).
    assert_eq!(lines.iter().filter(|l| l.starts_with("PostgreSQL,")).count(), 5, "{csv}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("MariaDB,")).count(), 5, "{csv}");
    for l in &lines[1..] {
        let cols: Vec<&str> = l.split(',').collect();
        assert_eq!(cols.len(), 10, "{l}");
        let rows: u64 = cols[2].parse().expect("rows");
        assert!(rows == 3000 || rows == 2000, "{l}");
        assert!(cols[6].parse::<i64>().expect("index bytes") > 0, "{l}");
        if cols[0] == "PostgreSQL" {
            let density: f64 = cols[9].parse().expect("leaf density");
            assert!((1.0..=100.0).contains(&density), "{l}");
        }
    }
    let batches = std::fs::read_to_string(out.join("batches.csv")).expect("batches.csv");
    // 3000 / 500 = 6 batches per PostgreSQL strategy, 4 per MariaDB one.
    assert_eq!(batches.lines().count(), 1 + 5 * 6 + 5 * 4);
    for chart in [
        "postgresql-time-per-batch.svg",
        "postgresql-index-size.svg",
        "mariadb-time-per-batch.svg",
        "mariadb-index-size.svg",
    ] {
        let svg = std::fs::read_to_string(out.join(chart)).expect(chart);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{chart}");
        assert!(svg.contains("combkey prefix COMB"), "{chart} has a legend");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `rekey` on both databases: the left v4 keys find none of an old hour's rows through the
/// key, the re-keyed ones all of them; every case has its row.
#[test]
fn small_rekey_run_writes_the_report() {
    let out = std::env::temp_dir().join(format!("combkey-bench-rekey-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["rekey", "--rows", "8000", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench rekey");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let summary = std::fs::read_to_string(out.join("summary-rekey.md")).expect("summary-rekey.md");
    let rows: Vec<Vec<&str>> = summary
        .lines()
        .filter(|l| l.starts_with("| PostgreSQL") || l.starts_with("| MariaDB"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 6, "{summary}");
    for r in &rows {
        // | backend | case (rows) | re-key s | rate | MiB | density | found / there | ms |
        let (found, there) = r[7].split_once(" / ").expect("found / there");
        // 8,000 old rows a second apart: the hour from row 4,000 on holds 3,600 of them.
        assert_eq!(there, "3600", "{summary}");
        let want = if r[2].starts_with("left as v4") { "0" } else { "3600" };
        assert_eq!(found, want, "{summary}");
        assert!(r[5].parse::<f64>().expect("MiB") > 0.0, "{summary}");
        assert_eq!(r[3] == "-", r[2].starts_with("left as v4"), "{summary}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn small_query_run_writes_the_report() {
    let out = std::env::temp_dir().join(format!("combkey-bench-query-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["query", "--rows", "20000", "--rows-per-hour", "1000", "--hours", "5", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench query");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let summary = std::fs::read_to_string(out.join("query-summary.txt")).expect("query-summary.txt");
    for part in ["the COMB key (`id >= $1 AND id < $2`)", "`created_at` and its index", "key range / created_at:"] {
        assert!(summary.contains(part), "{part} missing:\n{summary}");
    }
    // Every sampled hour returned its 1,000 rows both ways.
    assert!(summary.contains("| 1000 |"), "{summary}");
    let csv = std::fs::read_to_string(out.join("query.csv")).expect("query.csv");
    assert_eq!(csv.lines().count(), 1 + 5, "{csv}");
    let svg = std::fs::read_to_string(out.join("query-time.svg")).expect("query-time.svg");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn small_shards_simulation_writes_the_table() {
    let out = std::env::temp_dir().join(format!("combkey-bench-shards-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["shards", "--rows", "20000", "--max-range-rows", "1000", "--rates", "100,10000", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench shards");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let table = std::fs::read_to_string(out.join("shards-summary.txt")).expect("shards-summary.txt");
    for row in ["| prefix COMB (v7) |", "| short prefix COMB", "| Groupon locality UUID |", "| random v4 |"] {
        assert!(table.contains(row), "{row} missing:\n{table}");
    }
    // The time-first key: (nearly) every insert of the moment on one range; v4: spread.
    let hottest = |row: &str| -> f64 {
        let line = table.lines().find(|l| l.starts_with(row)).unwrap_or_default();
        line.split('|').nth(2).and_then(|c| c.trim().split('%').next()?.parse().ok()).unwrap_or(f64::NAN)
    };
    assert!(hottest("| prefix COMB (v7) |") > 90.0, "{table}");
    assert!(hottest("| random v4 |") < 30.0, "{table}");
    assert!(table.contains("| 100 rows/s | 10000 rows/s |"), "{table}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs a Galera cluster: `source scripts/servers.sh galera`, then --ignored (scripts/test does both)"]
fn small_galera_run_writes_the_report() {
    assert!(std::env::var("COMBKEY_GALERA_URLS").is_ok(), "COMBKEY_GALERA_URLS: `source scripts/galera.sh start`");
    let out = std::env::temp_dir().join(format!("combkey-bench-galera-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["galera", "--galera-rows", "2000", "--batch", "500", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench galera");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let csv = std::fs::read_to_string(out.join("galera.csv")).expect("galera.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "{csv}");
    for l in &lines[1..] {
        let cols: Vec<&str> = l.split(',').collect();
        assert_eq!(cols[1], "6000", "three writers' rows: {l}");
    }
    let comb = lines.iter().find(|l| l.starts_with("combkey prefix COMB,")).expect("the COMB row");
    assert_eq!(comb.split(',').nth(4), Some("0"), "no certification failure: {comb}");
    for chart in ["galera-time-per-batch.svg", "galera-index-size.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).expect(chart);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{chart}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs the Spider servers: `source scripts/servers.sh spider`, then --ignored (scripts/test does both)"]
fn small_spider_run_writes_the_report() {
    assert!(std::env::var("COMBKEY_SPIDER_URL").is_ok(), "COMBKEY_SPIDER_URL: `source scripts/spider.sh start`");
    let out = std::env::temp_dir().join(format!("combkey-bench-spider-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["spider", "--rows", "20000", "--writers", "2", "--batch", "100", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench spider");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let csv = std::fs::read_to_string(out.join("spider.csv")).expect("spider.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 9, "two shardings by four key kinds: {csv}");
    let cols = |prefix: &str| -> Vec<String> {
        lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {csv}"))
            .split(',')
            .map(str::to_string)
            .collect()
    };
    // Under key ranges the prefix COMB's rows are all on one backend and its time query
    // reaches that one only; under the hash they spread and the query reaches all three.
    let range = cols("RANGE,combkey prefix COMB,");
    assert_eq!(range[2], "20000");
    assert_eq!(range[5].split(' ').filter(|n| *n != "0").count(), 1, "{range:?}");
    assert_eq!(range[8], "1", "{range:?}");
    let hash = cols("KEY (hash),combkey prefix COMB,");
    assert_eq!(hash[5].split(' ').filter(|n| *n != "0").count(), 3, "{hash:?}");
    assert_eq!(hash[8], "3", "{hash:?}");
    let svg = std::fs::read_to_string(out.join("spider-rows-per-backend.svg")).expect("the chart");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_old_mode_flags_are_refused_not_mixed() {
    // Modes are subcommands: one run does one benchmark, and a flag of another mode is an
    // error instead of silently winning over the others.
    let out = Command::new(env!("CARGO_BIN_EXE_combkey-bench")).args(["--query", "--shards"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(env!("CARGO_BIN_EXE_combkey-bench")).args(["shards", "--hours", "5"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
