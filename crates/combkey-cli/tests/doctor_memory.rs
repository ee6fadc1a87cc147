//! `combkey doctor` holds a bounded amount of memory whatever the table's size: its audit,
//! `--migration-sql`, `--apply` and `--apply --online` by copy and swap of a PostgreSQL table of 400,000 RT.Comb keys (with
//! 25,000 referencing rows; about 50 MiB of table and indexes) finish with the process's data
//! segment capped at 16 MiB (`prlimit --data`), and of an SQLite file of as many at 24 MiB
//! (SQLite runs in the process: its page cache and thread). Holding
//! every key, as the tool did before, took about 330 bytes a key: 126 MiB for this table.

use std::io::Read;
use std::process::{Command, Stdio};

use sqlx::{Connection, PgConnection, SqliteConnection};

/// The cap on the process's data segment (heap and anonymous mappings), in bytes.
const CAP: u64 = 16 << 20;
const ROWS: i64 = 400_000;

/// The cap for SQLite, which runs in the process (its page cache and thread), found 20 MiB
/// enough at 100,000 and at 400,000 keys alike.
const SQLITE_CAP: u64 = 24 << 20;
/// What holding every key took before: about 330 bytes a key.
const HELD_PER_KEY: u64 = 330;

/// `combkey` under the cap: its exit status, stdout's line count and last line, and stderr.
fn capped(args: &[&str]) -> (bool, usize, String, String) {
    capped_at(CAP, args)
}

/// `combkey` with its data segment capped at `cap` bytes.
fn capped_at(cap: u64, args: &[&str]) -> (bool, usize, String, String) {
    let mut child = Command::new("prlimit")
        .arg(format!("--data={cap}"))
        .arg(env!("CARGO_BIN_EXE_combkey"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) runs combkey");
    // Read stdout as it comes, counting lines (the script is about 100 MB of text).
    let mut stdout = child.stdout.take().expect("stdout");
    let mut lines = 0;
    let mut line = Vec::new();
    let mut last_line = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = stdout.read(&mut buf).expect("read stdout");
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            if b == b'\n' {
                lines += 1;
                // The last complete line is kept until the next one starts.
                last_line = std::mem::take(&mut line);
            } else if line.len() < 1 << 16 {
                line.push(b);
            }
        }
    }
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("read stderr");
    let status = child.wait().expect("wait");
    (status.success(), lines, String::from_utf8_lossy(&last_line).into_owned(), err)
}

async fn scalar(c: &mut PgConnection, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[tokio::test]
async fn audit_script_and_apply_of_a_table_far_larger_than_the_memory_cap() {
    let url = combkey_testutil::pg_url();
    let mut c = PgConnection::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    // RT.Comb `Sql` keys a second apart: random bytes (version 4, RFC variant) and the Unix
    // milliseconds in the last six bytes, made by the database (no key passes through here).
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP TABLE IF EXISTS doctor_mem_items; DROP TABLE IF EXISTS doctor_mem;
         CREATE TABLE doctor_mem (id uuid PRIMARY KEY, n int NOT NULL DEFAULT 0);
         CREATE TABLE doctor_mem_items (k bigserial PRIMARY KEY, parent uuid NOT NULL REFERENCES doctor_mem (id));
         CREATE INDEX ON doctor_mem_items (parent);
         INSERT INTO doctor_mem (id)
           SELECT encode(set_byte(set_byte(substring(r FROM 1 FOR 10), 6, (get_byte(r, 6) & 15) | 64), 8,
                         (get_byte(r, 8) & 63) | 128) || substring(int8send(1767225600000 + i::bigint * 1000) FROM 3 FOR 6), 'hex')::uuid
           FROM (SELECT i, decode(md5(i::text), 'hex') AS r FROM generate_series(1, {ROWS}) i) g;
         INSERT INTO doctor_mem_items (parent) SELECT id FROM doctor_mem WHERE n = 0 AND right(id::text, 1) = '0';
         ANALYZE doctor_mem; ANALYZE doctor_mem_items;"
    )))
    .execute(&mut c)
    .await
    .expect("the table");
    let bytes =
        scalar(&mut c, "SELECT pg_total_relation_size('doctor_mem') + pg_total_relation_size('doctor_mem_items')")
            .await;
    assert!(bytes > 3 * i64::try_from(CAP).unwrap(), "the tables ({bytes} bytes) are far larger than the cap");
    let children = scalar(&mut c, "SELECT count(*) FROM doctor_mem_items").await;

    // The audit: every key read, all RT.Comb.
    let (ok, _, last, err) = capped(&["doctor", "--url", &url, "--table", "doctor_mem", "--json"]);
    assert!(ok, "the audit under the cap: {err}");
    let report: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert_eq!(report["read"], ROWS, "{report}");
    assert_eq!(report["converts"]["rtcomb-sql -> v7"], ROWS, "{report}");

    // The script: every mapping row written out (a thousand to an INSERT), the keys read as
    // it is written.
    let (ok, lines, _, err) = capped(&["doctor", "--url", &url, "--table", "doctor_mem", "--migration-sql"]);
    assert!(ok, "--migration-sql under the cap: {err}");
    assert!(lines > usize::try_from(ROWS / 1000).unwrap(), "{lines} lines");

    // The conversion, offline.
    let (ok, _, _, err) = capped(&["doctor", "--url", &url, "--table", "doctor_mem", "--apply"]);
    assert!(ok, "--apply under the cap: {err}");
    assert_eq!(scalar(&mut c, "SELECT count(*) FROM doctor_mem WHERE substring(id::text, 15, 1) = '7'").await, ROWS);
    assert_eq!(
        scalar(&mut c, "SELECT count(*) FROM doctor_mem_items i JOIN doctor_mem m ON m.id = i.parent").await,
        children,
        "every child follows its parent"
    );
    sqlx::raw_sql("DROP TABLE doctor_mem_items; DROP TABLE doctor_mem").execute(&mut c).await.unwrap();
}

/// `--apply --online` by copy and swap under the same cap: the parent's keys go to the client
/// and back a chunk at a time (they took 66 MiB for 3,000,000 keys when a chunk could hold
/// 100,000).
#[tokio::test]
async fn copy_and_swap_of_a_table_far_larger_than_the_memory_cap() {
    let url = combkey_testutil::pg_url();
    let mut c = PgConnection::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP TABLE IF EXISTS doctor_mem_swap_items, doctor_mem_swap, _doctor_mem_swap_old, _doctor_mem_swap_items_old;
         CREATE TABLE doctor_mem_swap (id uuid PRIMARY KEY, n int NOT NULL DEFAULT 0, note text);
         CREATE TABLE doctor_mem_swap_items (k bigserial PRIMARY KEY, parent uuid NOT NULL REFERENCES doctor_mem_swap (id));
         CREATE INDEX ON doctor_mem_swap_items (parent);
         INSERT INTO doctor_mem_swap (id, note)
           SELECT encode(set_byte(set_byte(substring(r FROM 1 FOR 10), 6, (get_byte(r, 6) & 15) | 64), 8,
                         (get_byte(r, 8) & 63) | 128) || substring(int8send(1767225600000 + i::bigint * 1000) FROM 3 FOR 6), 'hex')::uuid,
                  md5(i::text)
           FROM (SELECT i, decode(md5(i::text), 'hex') AS r FROM generate_series(1, {ROWS}) i) g;
         INSERT INTO doctor_mem_swap_items (parent) SELECT id FROM doctor_mem_swap WHERE right(id::text, 1) = '0';
         ANALYZE doctor_mem_swap; ANALYZE doctor_mem_swap_items;"
    )))
    .execute(&mut c)
    .await
    .expect("the tables");
    // (No journal yet on a new server: nothing to clear then.)
    let _ = sqlx::raw_sql("DELETE FROM combkey_doctor_journal WHERE target LIKE '%\"doctor_mem_swap\"%'")
        .execute(&mut c)
        .await;
    assert_eq!(scalar(&mut c, "SELECT count(*) FROM doctor_mem_swap").await, ROWS, "the table");
    let children = scalar(&mut c, "SELECT count(*) FROM doctor_mem_swap_items").await;
    let (ok, _, _, err) = capped(&[
        "doctor",
        "--url",
        &url,
        "--table",
        "doctor_mem_swap",
        "--apply",
        "--online",
        "--method",
        "copy-swap",
    ]);
    assert!(ok, "copy and swap under the cap: {err}");
    assert!(err.contains(&format!("copied {} rows", ROWS + children)), "{err}");
    assert_eq!(
        scalar(&mut c, "SELECT count(*) FROM doctor_mem_swap WHERE substring(id::text, 15, 1) = '7'").await,
        ROWS
    );
    assert_eq!(
        scalar(&mut c, "SELECT count(*) FROM doctor_mem_swap_items i JOIN doctor_mem_swap m ON m.id = i.parent").await,
        children,
        "every child follows its parent"
    );
    sqlx::raw_sql(
        "DROP TABLE doctor_mem_swap_items, doctor_mem_swap, _doctor_mem_swap_old, _doctor_mem_swap_items_old",
    )
    .execute(&mut c)
    .await
    .unwrap();
}

async fn lite(c: &mut SqliteConnection, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The same on SQLite (one file, the keys as 16-byte blobs): the audit, the script and the
/// conversion read the keys in pages.
#[tokio::test]
async fn the_same_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("combkey-doctor-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("db.sqlite");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let mut c = SqliteConnection::connect(&url).await.unwrap();
    // RT.Comb `Sql` keys a second apart: random bytes with version 4 and the RFC variant, and
    // the Unix milliseconds in the last six bytes.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE doctor_mem (id BLOB PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0);
         CREATE TABLE doctor_mem_items (k INTEGER PRIMARY KEY, parent BLOB NOT NULL REFERENCES doctor_mem (id));
         CREATE INDEX doctor_mem_items_parent ON doctor_mem_items (parent);
         WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {ROWS})
         INSERT INTO doctor_mem (id)
           SELECT unhex(substr(hex(randomblob(6)), 1, 12) || '4' || substr(hex(randomblob(2)), 1, 3)
                        || substr('89AB', 1 + abs(random() % 4), 1) || substr(hex(randomblob(2)), 1, 3)
                        || printf('%012X', 1767225600000 + i * 1000))
           FROM g;
         INSERT INTO doctor_mem_items (parent) SELECT id FROM doctor_mem WHERE rowid % 16 = 0;"
    )))
    .execute(&mut c)
    .await
    .expect("the tables");
    let held = HELD_PER_KEY * u64::try_from(ROWS).unwrap();
    assert!(held > 5 * SQLITE_CAP, "holding the keys ({held} bytes) would take five times the cap");
    let children = lite(&mut c, "SELECT count(*) FROM doctor_mem_items").await;
    c.close().await.unwrap();

    let (ok, _, last, err) = capped_at(SQLITE_CAP, &["doctor", "--url", &url, "--table", "doctor_mem", "--json"]);
    assert!(ok, "the audit under the cap: {err}");
    let report: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert_eq!(report["read"], ROWS, "{report}");
    assert_eq!(report["converts"]["rtcomb-sql -> v7"], ROWS, "{report}");
    let (ok, lines, _, err) =
        capped_at(SQLITE_CAP, &["doctor", "--url", &url, "--table", "doctor_mem", "--migration-sql"]);
    assert!(ok, "--migration-sql under the cap: {err}");
    assert!(lines > usize::try_from(ROWS / 1000).unwrap(), "{lines} lines");
    let (ok, _, _, err) = capped_at(SQLITE_CAP, &["doctor", "--url", &url, "--table", "doctor_mem", "--apply"]);
    assert!(ok, "--apply under the cap: {err}");

    let mut c = SqliteConnection::connect(&url).await.unwrap();
    assert_eq!(lite(&mut c, "SELECT count(*) FROM doctor_mem WHERE substr(hex(id), 13, 1) = '7'").await, ROWS);
    assert_eq!(
        lite(&mut c, "SELECT count(*) FROM doctor_mem_items i JOIN doctor_mem m ON m.id = i.parent").await,
        children,
        "every child follows its parent"
    );
    c.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--apply --rekey-from` of an SQLite file in its default rollback-journal mode (what the
/// `sqlite3` shell and most applications make), 200,000 v4 keys with a child each, under the
/// same cap. A second connection reading the keys while the run writes its key map would hold
/// a shared lock that every spill of the run's page cache to the file must wait for: a run
/// that took minutes on the busy handler. With `--lock-timeout 1ms` each such wait gives up at
/// once and the page cache grows instead, past the cap; the keys read on the run's own
/// connection end it within the cap.
#[tokio::test]
async fn rekey_in_sqlites_rollback_journal_mode() {
    const N: i64 = 200_000;
    let dir = std::env::temp_dir().join(format!("combkey-doctor-memory-rollback-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("db.sqlite");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let mut c = SqliteConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "PRAGMA journal_mode = DELETE;
         CREATE TABLE doctor_rb (id BLOB PRIMARY KEY, created_at TEXT NOT NULL);
         CREATE TABLE doctor_rb_items (k INTEGER PRIMARY KEY, parent BLOB NOT NULL REFERENCES doctor_rb (id));
         CREATE INDEX doctor_rb_items_parent ON doctor_rb_items (parent);
         WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {N})
         INSERT INTO doctor_rb (id, created_at)
           SELECT unhex(substr(hex(randomblob(6)), 1, 12) || '4' || substr(hex(randomblob(2)), 1, 3)
                        || substr('89AB', 1 + abs(random() % 4), 1) || substr(hex(randomblob(8)), 1, 15)),
                  strftime('%Y-%m-%d %H:%M:%f', '2025-01-01', '+' || i || ' seconds')
           FROM g;
         INSERT INTO doctor_rb_items (parent) SELECT id FROM doctor_rb;"
    )))
    .execute(&mut c)
    .await
    .expect("the tables");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut c).await.unwrap();
    assert_eq!(mode, "delete", "the file is in rollback-journal mode");
    c.close().await.unwrap();

    let (ok, _, _, err) = capped_at(
        SQLITE_CAP,
        &[
            "doctor",
            "--url",
            &url,
            "--table",
            "doctor_rb",
            "--apply",
            "--rekey-from",
            "created_at",
            "--lock-timeout",
            "1ms",
        ],
    );
    assert!(ok, "--apply --rekey-from under the cap in rollback-journal mode: {err}");

    let mut c = SqliteConnection::connect(&url).await.unwrap();
    assert_eq!(lite(&mut c, "SELECT count(*) FROM doctor_rb WHERE substr(hex(id), 13, 1) = '7'").await, N);
    assert_eq!(lite(&mut c, "SELECT count(*) FROM combkey_keymap_doctor_rb").await, N);
    assert_eq!(
        lite(&mut c, "SELECT count(*) FROM doctor_rb_items i JOIN doctor_rb m ON m.id = i.parent").await,
        N,
        "every child follows its parent"
    );
    c.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
