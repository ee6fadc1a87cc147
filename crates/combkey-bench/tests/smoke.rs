//! A small run against the CI databases: the report has its shape (not its speed).

use std::process::Command;

#[test]
fn small_run_writes_the_report() {
    let out = std::env::temp_dir().join(format!("combkey-bench-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["--rows", "3000", "--mysql-rows", "2000", "--batch", "500", "--secondary-index", "--out"])
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

#[test]
fn small_query_run_writes_the_report() {
    let out = std::env::temp_dir().join(format!("combkey-bench-query-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_combkey-bench"))
        .args(["--query", "--rows", "20000", "--rows-per-hour", "1000", "--hours", "5", "--out"])
        .arg(&out)
        .output()
        .expect("run combkey-bench --query");
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
