//! `combkey doctor` on real PostgreSQL, MariaDB and SQLite: tables keyed by other systems'
//! layouts (RT.Comb `Sql` ids in a PostgreSQL `uuid` column, SQL Server `NEWSEQUENTIALID`
//! values, `CHAR(36)` v7 text in MariaDB, a v4/v7 mix and RT.Comb text keys in SQLite), each
//! with a child table referencing it. The audit names the layouts and how the database
//! orders them; the migration makes `ORDER BY id` creation order, keeps every child joined,
//! converts back to the old keys, and has nothing to do when run again; a migration killed
//! half-way leaves the table as it was.

use std::process::{Command, Output};
use std::sync::Arc;

use combkey::layouts::{Layout, RtCombLayout, V1Generator};
use combkey::{Comb, FixedClock, RandomSource, SeededRandom, Timestamp, V7Generator};
use serde_json::Value;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, SqliteConnection};

fn combkey(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_combkey"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run combkey");
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `combkey doctor --json` on the table: the report.
fn report(url: &str, table: &str, extra: &[&str]) -> Value {
    let mut args = vec!["doctor", "--url", url, "--table", table, "--json"];
    args.extend_from_slice(extra);
    let text = ok(&combkey(&args, None));
    serde_json::from_str(text.lines().last().unwrap()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn layouts(r: &Value) -> Vec<(String, u64)> {
    r["layouts"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect()
}

/// `n` times one second apart from 2026-01-01.
fn times(n: usize) -> Vec<Timestamp> {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    (0..n).map(|i| t0.saturating_add_ms(1000 * i64::try_from(i).unwrap())).collect()
}

fn v4(r: &SeededRandom) -> Comb {
    let mut b = [0u8; 16];
    r.fill_bytes(&mut b);
    b[6] = 0x40 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    Comb::from_bytes(b)
}

fn rtcomb_sql(n: usize, seed: u64) -> Vec<Comb> {
    let r = SeededRandom::new(seed);
    times(n).into_iter().map(|t| RtCombLayout::Sql.create(t, v4(&r)).unwrap()).collect()
}

/// NEWSEQUENTIALID values: v1 ids one second apart in SQL Server's byte order (Lambert).
fn newsequentialid(n: usize) -> Vec<Comb> {
    let clock = Arc::new(FixedClock::new(times(1)[0]));
    let g = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(3));
    (0..n)
        .map(|_| {
            clock.advance(std::time::Duration::from_secs(1));
            Layout::convert(&g.generate(), Layout::V1, Layout::NewSequentialId).unwrap()
        })
        .collect()
}

/// `combkey convert --from FROM --to TO` of every id: what the old keys were.
fn convert(ids: &[String], from: &str, to: &str) -> Vec<String> {
    let out = ok(&combkey(&["convert", "--from", from, "--to", to], Some(&ids.join("\n"))));
    out.lines().map(str::to_string).collect()
}

mod postgres {
    use super::*;

    async fn connect() -> PgConnection {
        PgConnection::connect(&combkey_testutil::pg_url()).await.expect("PostgreSQL (source scripts/servers.sh)")
    }

    /// A parent keyed by `ids` (with each key's text in `old`), a child per second parent.
    async fn seed(c: &mut PgConnection, table: &str, ids: &[Comb]) {
        sqlx::raw_sql(AssertSqlSafe(format!(
            "DROP TABLE IF EXISTS {table}_items; DROP TABLE IF EXISTS {table};
             CREATE TABLE {table} (id uuid PRIMARY KEY, old text NOT NULL);
             CREATE TABLE {table}_items (n serial PRIMARY KEY, parent uuid NOT NULL REFERENCES {table} (id))"
        )))
        .execute(&mut *c)
        .await
        .unwrap();
        let texts: Vec<String> = ids.iter().map(ToString::to_string).collect();
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {table} (id, old) SELECT u::uuid, u FROM UNNEST($1::text[]) u"
        )))
        .bind(&texts)
        .execute(&mut *c)
        .await
        .unwrap();
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {table}_items (parent) SELECT id FROM {table} ORDER BY old LIMIT {}",
            ids.len() / 2
        )))
        .execute(&mut *c)
        .await
        .unwrap();
    }

    async fn pairs(c: &mut PgConnection, table: &str) -> Vec<(String, String)> {
        sqlx::query_as(AssertSqlSafe(format!("SELECT id::text, old FROM {table} ORDER BY id")))
            .fetch_all(c)
            .await
            .unwrap()
    }

    async fn joined(c: &mut PgConnection, table: &str) -> (i64, i64) {
        let both: (i64, i64) = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT (SELECT count(*) FROM {table}_items i JOIN {table} p ON p.id = i.parent), (SELECT count(*) FROM {table}_items)"
        )))
        .fetch_one(c)
        .await
        .unwrap();
        both
    }

    #[tokio::test]
    async fn rtcomb_sql_keys_become_v7() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_rt", &rtcomb_sql(2000, 1)).await;
        let before = report(&url, "doctor_rt", &[]);
        assert_eq!(layouts(&before), [("rtcomb-sql".to_string(), 2000)], "{before}");
        let order = before["time_order"].as_f64().unwrap();
        assert!((0.35..0.65).contains(&order), "RT.Comb Sql ids do not sort in PostgreSQL: {order}");
        assert_eq!(before["column_type"], "uuid");
        assert_eq!(before["stored_form_ok"], true);
        assert_eq!(before["referenced_by"], serde_json::json!(["doctor_rt_items.parent"]));
        assert!(before["recommendation"].as_str().unwrap().contains("Convert 2000 rtcomb-sql keys to v7"), "{before}");
        assert!(before["index"]["leaf_density"].as_f64().is_some(), "{before}");

        // The SQL alone changes nothing.
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_rt", "--migration-sql"], None));
        assert!(
            sql.contains("ALTER TABLE doctor_rt_items DROP CONSTRAINT") && sql.contains("UPDATE doctor_rt_items c")
        );
        assert_eq!(layouts(&report(&url, "doctor_rt", &[])), [("rtcomb-sql".to_string(), 2000)]);

        let after = report(&url, "doctor_rt", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 2000)], "{after}");
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        assert_eq!(after["referenced_by"], serde_json::json!(["doctor_rt_items.parent"]), "the foreign key is back");
        assert_eq!(joined(&mut c, "doctor_rt").await, (1000, 1000));
        // Each new key converts back to the old one.
        let rows = pairs(&mut c, "doctor_rt").await;
        let new: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
        let old: Vec<String> = rows.iter().map(|(_, old)| old.clone()).collect();
        assert_eq!(convert(&new, "v7", "rtcomb-sql"), old);

        // Again: nothing to do, nothing changes.
        let again = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_rt", "--apply"], None));
        assert!(again.contains("nothing to do"), "{again}");
        assert_eq!(pairs(&mut c, "doctor_rt").await, rows);
    }

    #[tokio::test]
    async fn newsequentialid_keys_become_v6() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_nsid", &newsequentialid(1000)).await;
        let before = report(&url, "doctor_nsid", &[]);
        assert_eq!(layouts(&before), [("newsequentialid".to_string(), 1000)], "{before}");
        let order = before["time_order"].as_f64().unwrap();
        assert!(order < 0.7, "NEWSEQUENTIALID values do not sort in PostgreSQL: {order}");
        let after = report(&url, "doctor_nsid", &["--apply"]);
        assert_eq!(layouts(&after), [("v6".to_string(), 1000)], "{after}");
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        assert_eq!(joined(&mut c, "doctor_nsid").await, (500, 500));
        let rows = pairs(&mut c, "doctor_nsid").await;
        let new: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
        let old: Vec<String> = rows.iter().map(|(_, old)| old.clone()).collect();
        assert_eq!(convert(&new, "v6", "newsequentialid"), old);
    }

    /// The audit of a large table with `--sample` reads a sample in key order.
    #[tokio::test]
    async fn sampled_audit() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_sample", &rtcomb_sql(20_000, 7)).await;
        sqlx::raw_sql("ANALYZE doctor_sample").execute(&mut c).await.unwrap();
        let r = report(&url, "doctor_sample", &["--sample", "2000"]);
        assert_eq!(r["sampled"], true);
        let read = r["read"].as_u64().unwrap();
        assert!((1000..4000).contains(&read), "about 2000 keys read: {read}");
        assert_eq!(layouts(&r), [("rtcomb-sql".to_string(), read)]);
        assert!(r["time_order"].as_f64().unwrap() < 0.65, "{r}");
    }

    /// Kill the migration's connection half-way: the transaction rolls back, the table and
    /// its foreign key are as they were.
    #[tokio::test]
    async fn a_migration_killed_half_way_leaves_the_table_as_it_was() {
        // Its own application name, so only this test's migration is killed.
        let base = combkey_testutil::pg_url();
        let url =
            format!("{base}{}application_name=combkey_doctor_kill_test", if base.contains('?') { '&' } else { '?' });
        let mut c = connect().await;
        seed(&mut c, "doctor_kill", &rtcomb_sql(60_000, 11)).await;
        let rows = pairs(&mut c, "doctor_kill").await;
        let mut child = Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args(["doctor", "--url", &url, "--table", "doctor_kill", "--apply"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut killed = false;
        for _ in 0..20_000 {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = 'combkey_doctor_kill_test' AND xact_start IS NOT NULL AND pid <> pg_backend_pid()",
            )
            .fetch_one(&mut c)
            .await
            .unwrap();
            if n > 0 {
                killed = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let out = child.wait_with_output().unwrap();
        assert!(killed, "the migration's transaction was seen and killed");
        assert!(!out.status.success(), "the killed migration reports failure");
        assert_eq!(pairs(&mut c, "doctor_kill").await, rows, "every key as it was");
        assert_eq!(joined(&mut c, "doctor_kill").await, (30_000, 30_000));
        let r = report(&url, "doctor_kill", &[]);
        assert_eq!(layouts(&r), [("rtcomb-sql".to_string(), 60_000)]);
        assert_eq!(
            r["referenced_by"],
            serde_json::json!(["doctor_kill_items.parent"]),
            "the foreign key is still there"
        );
    }
}

mod mariadb {
    use super::*;

    #[tokio::test]
    async fn char36_v7_text_becomes_binary16() {
        let url = combkey_testutil::mysql_url();
        let mut c = MySqlConnection::connect(&url).await.expect("MariaDB (source scripts/servers.sh)");
        let g = V7Generator::new();
        let ids: Vec<String> = times(1000).into_iter().map(|t| g.generate_at(t).to_string()).collect();
        sqlx::raw_sql(
            "DROP TABLE IF EXISTS doctor_c36_items; DROP TABLE IF EXISTS doctor_c36;
             CREATE TABLE doctor_c36 (id CHAR(36) NOT NULL PRIMARY KEY, old CHAR(36) NOT NULL);
             CREATE TABLE doctor_c36_items (n INT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NOT NULL,
               CONSTRAINT doctor_c36_fk FOREIGN KEY (parent) REFERENCES doctor_c36 (id))",
        )
        .execute(&mut c)
        .await
        .unwrap();
        for chunk in ids.chunks(500) {
            let values: Vec<String> = chunk.iter().map(|id| format!("('{id}', '{id}')")).collect();
            sqlx::raw_sql(AssertSqlSafe(format!("INSERT INTO doctor_c36 VALUES {}", values.join(","))))
                .execute(&mut c)
                .await
                .unwrap();
        }
        sqlx::raw_sql("INSERT INTO doctor_c36_items (parent) SELECT id FROM doctor_c36 ORDER BY old LIMIT 300")
            .execute(&mut c)
            .await
            .unwrap();
        let before = report(&url, "doctor_c36", &[]);
        assert_eq!(before["column_type"], "char(36)");
        assert_eq!(before["stored_form_ok"], false);
        assert_eq!(layouts(&before), [("v7".to_string(), 1000)], "{before}");
        assert_eq!(before["referenced_by"], serde_json::json!(["doctor_c36_items.parent"]));
        assert!(before["recommendation"].as_str().unwrap().contains("BINARY(16)"), "{before}");

        let after = report(&url, "doctor_c36", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(after["stored_form_ok"], true);
        assert_eq!(layouts(&after), [("v7".to_string(), 1000)]);
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        assert_eq!(after["referenced_by"], serde_json::json!(["doctor_c36_items.parent"]), "the foreign key is back");
        let child_type: String = sqlx::query_scalar(
            "SELECT CAST(COLUMN_TYPE AS CHAR) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
             AND TABLE_NAME = 'doctor_c36_items' AND COLUMN_NAME = 'parent'",
        )
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(child_type, "binary(16)");
        let joined: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM doctor_c36_items i JOIN doctor_c36 p ON p.id = i.parent")
                .fetch_one(&mut c)
                .await
                .unwrap();
        assert_eq!(joined, 300);
        // The same ids, now 16 bytes each.
        let same: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM doctor_c36 WHERE id = UNHEX(REPLACE(old, '-', ''))")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(same, 1000);
        let again = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_c36", "--apply"], None));
        assert!(again.contains("nothing to do"), "{again}");
        sqlx::raw_sql("DROP TABLE doctor_c36_items; DROP TABLE doctor_c36").execute(&mut c).await.unwrap();
    }
}

mod sqlite {
    use super::*;

    fn url(name: &str) -> String {
        let dir = std::env::temp_dir().join(format!("combkey-doctor-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        format!("sqlite://{}?mode=rwc", dir.join("db.sqlite").display())
    }

    #[tokio::test]
    async fn a_v4_v7_mix_needs_nothing() {
        let url = url("mix");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(
            "CREATE TABLE t (id BLOB PRIMARY KEY); CREATE TABLE t_items (n INTEGER PRIMARY KEY, parent BLOB REFERENCES t (id))",
        )
        .execute(&mut c)
        .await
        .unwrap();
        let g = V7Generator::new();
        let r = SeededRandom::new(5);
        let mut ids: Vec<Comb> = times(300).into_iter().map(|t| g.generate_at(t)).collect();
        ids.extend((0..200).map(|_| v4(&r)));
        for id in &ids {
            sqlx::query("INSERT INTO t VALUES (?)").bind(id.as_bytes().to_vec()).execute(&mut c).await.unwrap();
        }
        sqlx::query("INSERT INTO t_items (parent) VALUES (?)")
            .bind(ids[0].as_bytes().to_vec())
            .execute(&mut c)
            .await
            .unwrap();
        let before = report(&url, "t", &[]);
        assert_eq!(layouts(&before), [("v4".to_string(), 200), ("v7".to_string(), 300)], "{before}");
        assert_eq!(before["time_order"].as_f64(), Some(1.0));
        assert_eq!(before["referenced_by"], serde_json::json!(["t_items.parent"]));
        let again = ok(&combkey(&["doctor", "--url", &url, "--table", "t", "--apply"], None));
        assert!(again.contains("nothing to do") && again.contains("200 v4 keys stay"), "{again}");
    }

    #[tokio::test]
    async fn rtcomb_text_keys_become_v7_blobs() {
        let url = url("text");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(
            "CREATE TABLE t (id TEXT PRIMARY KEY, old TEXT NOT NULL);
             CREATE TABLE t_items (n INTEGER PRIMARY KEY, parent TEXT NOT NULL REFERENCES t (id))",
        )
        .execute(&mut c)
        .await
        .unwrap();
        let ids = rtcomb_sql(500, 9);
        for id in &ids {
            sqlx::query("INSERT INTO t VALUES (?, ?)")
                .bind(id.to_string())
                .bind(id.to_string())
                .execute(&mut c)
                .await
                .unwrap();
        }
        for id in &ids[..100] {
            sqlx::query("INSERT INTO t_items (parent) VALUES (?)").bind(id.to_string()).execute(&mut c).await.unwrap();
        }
        let before = report(&url, "t", &[]);
        assert_eq!(layouts(&before), [("rtcomb-sql".to_string(), 500)], "{before}");
        assert!(before["time_order"].as_f64().unwrap() < 0.65);
        let after = report(&url, "t", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 500)], "{after}");
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        let blobs: i64 = sqlx::query_scalar("SELECT count(*) FROM t WHERE typeof(id) = 'blob' AND length(id) = 16")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(blobs, 500);
        let joined: i64 = sqlx::query_scalar("SELECT count(*) FROM t_items i JOIN t ON t.id = i.parent")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(joined, 100);
        let rows: Vec<(Vec<u8>, String)> =
            sqlx::query_as("SELECT id, old FROM t ORDER BY id").fetch_all(&mut c).await.unwrap();
        let new: Vec<String> = rows.iter().map(|(b, _)| Comb::from_slice(b).unwrap().to_string()).collect();
        let old: Vec<String> = rows.iter().map(|(_, o)| o.clone()).collect();
        assert_eq!(convert(&new, "v7", "rtcomb-sql"), old);
        let again = ok(&combkey(&["doctor", "--url", &url, "--table", "t", "--apply"], None));
        assert!(again.contains("nothing to do"), "{again}");
    }
}

#[test]
fn bad_arguments_are_errors() {
    let out = combkey(&["doctor", "--url", "sqlite::memory:", "--table", "t; DROP TABLE x"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("plain SQL identifier"));
    let out = combkey(&["doctor", "--url", "sqlite::memory:", "--table", "missing"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no column id in table missing"), "{out:?}");
    let out = combkey(&["doctor", "--url", "oracle://x", "--table", "t"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a postgres://"), "{out:?}");
}
