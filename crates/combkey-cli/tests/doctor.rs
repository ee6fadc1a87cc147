//! `combkey doctor` on real PostgreSQL, MariaDB and SQLite, driven as a DBA drives it: tables
//! keyed by other systems' layouts (RT.Comb `Sql` ids, SQL Server `NEWSEQUENTIALID` values,
//! UUID text in any form, a v4/v7/RT.Comb mix), with children that reference them alone or
//! with other columns, from other schemas, through quoted names. The audit reads only; a
//! migration makes `ORDER BY id` creation order, keeps every child joined and every object as
//! it was, converts back to the old keys, and has nothing to do when run again; a migration
//! stopped after any one of its steps leaves the tables as they were (one transaction) or
//! finishes when run again (MariaDB's journaled type change).
//!
//! Each test has tables of its own (named after it), so tests running at once never meet.

use std::process::{Command, Output};
use std::sync::Arc;

use combkey::layouts::{Layout, RtCombLayout, V1Generator};
use combkey::{Comb, FixedClock, RandomSource, SeededRandom, Timestamp, V7Generator};
use serde_json::Value;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, SqliteConnection};

fn combkey_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_combkey"));
    cmd.args(args).stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run combkey")
}

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

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
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

/// How many steps the migration of `table` has (`--migration-sql` numbers them).
fn steps(url: &str, table: &str, extra: &[&str]) -> usize {
    let mut args = vec!["doctor", "--url", url, "--table", table, "--migration-sql"];
    args.extend_from_slice(extra);
    let sql = ok(&combkey(&args, None));
    sql.lines().filter(|l| l.starts_with("-- step ")).count()
}

/// `--apply`, stopped (as a kill would stop it) right after step `k` (0-based).
fn apply_stopped_after(url: &str, table: &str, k: usize, extra: &[&str]) -> Output {
    let mut args = vec!["doctor", "--url", url, "--table", table, "--apply"];
    args.extend_from_slice(extra);
    let k = k.to_string();
    combkey_env(&args, &[("COMBKEY_DOCTOR_FAIL_AFTER_STEP", &k)])
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

    async fn exec(c: &mut PgConnection, sql: &str) {
        sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// A parent keyed by `ids` (with each key's text in `old`), a child per second parent.
    async fn seed(c: &mut PgConnection, table: &str, ids: &[Comb]) {
        exec(
            c,
            &format!(
                "DROP TABLE IF EXISTS {table}_items; DROP TABLE IF EXISTS {table};
                 CREATE TABLE {table} (id uuid PRIMARY KEY, old text NOT NULL);
                 CREATE TABLE {table}_items (n serial PRIMARY KEY, parent uuid NOT NULL REFERENCES {table} (id))"
            ),
        )
        .await;
        let texts: Vec<String> = ids.iter().map(ToString::to_string).collect();
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {table} (id, old) SELECT u::uuid, u FROM UNNEST($1::text[]) u"
        )))
        .bind(&texts)
        .execute(&mut *c)
        .await
        .unwrap();
        exec(
            c,
            &format!("INSERT INTO {table}_items (parent) SELECT id FROM {table} ORDER BY old LIMIT {}", ids.len() / 2),
        )
        .await;
    }

    async fn pairs(c: &mut PgConnection, table: &str) -> Vec<(String, String)> {
        sqlx::query_as(AssertSqlSafe(format!("SELECT id::text, old FROM {table} ORDER BY id")))
            .fetch_all(c)
            .await
            .unwrap()
    }

    async fn joined(c: &mut PgConnection, table: &str) -> (i64, i64) {
        sqlx::query_as(AssertSqlSafe(format!(
            "SELECT (SELECT count(*) FROM {table}_items i JOIN {table} p ON p.id = i.parent), (SELECT count(*) FROM {table}_items)"
        )))
        .fetch_one(c)
        .await
        .unwrap()
    }

    /// Every constraint and index of the tables, as PostgreSQL writes them.
    async fn objects(c: &mut PgConnection, tables: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for t in tables {
            let defs: Vec<String> = sqlx::query_scalar(
                "SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = to_regclass($1)
                 UNION ALL SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = to_regclass($1) ORDER BY 1",
            )
            .bind(*t)
            .fetch_all(&mut *c)
            .await
            .unwrap();
            out.extend(defs);
        }
        out
    }

    #[tokio::test]
    async fn rtcomb_sql_keys_become_v7() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_rt", &rtcomb_sql(2000, 1)).await;
        let before_objects = objects(&mut c, &["doctor_rt", "doctor_rt_items"]).await;
        let before = report(&url, "doctor_rt", &[]);
        assert_eq!(layouts(&before), [("rtcomb-sql".to_string(), 2000)], "{before}");
        let order = before["time_order"].as_f64().unwrap();
        assert!((0.35..0.65).contains(&order), "RT.Comb Sql ids do not sort in PostgreSQL: {order}");
        assert_eq!(before["column_type"], "uuid");
        assert_eq!(before["stored_form_ok"], true);
        assert_eq!(before["referenced_by"], serde_json::json!(["doctor_rt_items.parent"]));
        assert!(before["recommendation"].as_str().unwrap().contains("Convert 2000 rtcomb-sql keys to v7"), "{before}");

        // The SQL alone changes nothing, and drops no foreign key: the keys and the
        // referencing column change in one statement, which PostgreSQL checks at its end.
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_rt", "--migration-sql"], None));
        assert!(!sql.contains("DROP CONSTRAINT"), "{sql}");
        assert!(sql.contains("UPDATE \"public\".\"doctor_rt_items\" t SET"), "{sql}");
        assert_eq!(layouts(&report(&url, "doctor_rt", &[])), [("rtcomb-sql".to_string(), 2000)]);

        let after = report(&url, "doctor_rt", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 2000)], "{after}");
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        assert_eq!(after["referenced_by"], serde_json::json!(["doctor_rt_items.parent"]), "the foreign key is there");
        assert_eq!(joined(&mut c, "doctor_rt").await, (1000, 1000));
        assert_eq!(objects(&mut c, &["doctor_rt", "doctor_rt_items"]).await, before_objects, "every object as it was");
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

    /// NEWSEQUENTIALID values become v7 with their millisecond (what the application makes
    /// next sorts after them); the v7 form cannot hold every bit of a v1 id, so the run keeps
    /// each key's old and new value in the key map, where an old id resolves.
    #[tokio::test]
    async fn newsequentialid_keys_become_v7_with_a_key_map() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(&mut c, "DROP TABLE IF EXISTS combkey_keymap_doctor_nsid").await;
        seed(&mut c, "doctor_nsid", &newsequentialid(1000)).await;
        let before = report(&url, "doctor_nsid", &[]);
        assert_eq!(layouts(&before), [("newsequentialid".to_string(), 1000)], "{before}");
        let order = before["time_order"].as_f64().unwrap();
        assert!(order < 0.7, "NEWSEQUENTIALID values do not sort in PostgreSQL: {order}");
        assert_eq!(before["key_map"], "public.combkey_keymap_doctor_nsid", "{before}");
        let after = report(&url, "doctor_nsid", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 1000)], "{after}");
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        assert_eq!(joined(&mut c, "doctor_nsid").await, (500, 500));
        let rows = pairs(&mut c, "doctor_nsid").await;
        let new: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
        let old: Vec<String> = rows.iter().map(|(_, old)| old.clone()).collect();
        assert_eq!(convert(&old, "newsequentialid", "v7"), new);
        let mapped: Vec<(String, String)> = sqlx::query_as(
            "SELECT d.id::text, m.old_key::text FROM doctor_nsid d JOIN combkey_keymap_doctor_nsid m ON m.new_key = d.id \
             ORDER BY d.id",
        )
        .fetch_all(&mut c)
        .await
        .unwrap();
        assert_eq!(mapped, rows, "every row's old key in the key map");
    }

    /// RT.Comb `Legacy` keys (SQL Server `datetime` ticks, 1/300 s) become v7 at the
    /// millisecond RT.Comb reads them as, and convert back: no key map.
    #[tokio::test]
    async fn legacy_keys_become_v7_at_their_millisecond() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        let r = SeededRandom::new(17);
        let ids: Vec<Comb> = times(2000).into_iter().map(|t| RtCombLayout::Legacy.create(t, v4(&r)).unwrap()).collect();
        seed(&mut c, "doctor_legacy", &ids).await;
        let before = report(&url, "doctor_legacy", &[]);
        assert_eq!(layouts(&before), [("rtcomb-legacy".to_string(), 2000)], "{before}");
        let advice = before["recommendation"].as_str().unwrap();
        assert!(advice.contains("Convert 2000 rtcomb-legacy keys to v7"), "{advice}");
        assert_eq!(before["key_map"], Value::Null);
        let after = report(&url, "doctor_legacy", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 2000)], "{after}");
        let rows = pairs(&mut c, "doctor_legacy").await;
        let new: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
        let old: Vec<String> = rows.iter().map(|(_, old)| old.clone()).collect();
        assert_eq!(convert(&new, "v7", "rtcomb-legacy"), old);
    }

    /// The audit of a large table with `--sample` reads a sample in key order.
    #[tokio::test]
    async fn sampled_audit() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_sample", &rtcomb_sql(20_000, 7)).await;
        exec(&mut c, "ANALYZE doctor_sample").await;
        let r = report(&url, "doctor_sample", &["--sample", "2000"]);
        assert_eq!(r["sampled"], true);
        let read = r["read"].as_u64().unwrap();
        assert!((1000..4000).contains(&read), "about 2000 keys read: {read}");
        assert_eq!(layouts(&r), [("rtcomb-sql".to_string(), read)]);
        assert!(r["time_order"].as_f64().unwrap() < 0.65, "{r}");
        // What a sample cannot look for, said.
        assert!(
            r["recommendation"]
                .as_str()
                .unwrap()
                .contains("keys that would become one are looked for only where every key is read"),
            "{r}"
        );
    }

    /// Stopped after each step in turn: the tables are exactly as they were (before the
    /// commit) or the job is done (after it), never in between; the next run finishes it.
    #[tokio::test]
    async fn stopped_after_any_step_done_or_unchanged_and_a_rerun_finishes() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        let ids = rtcomb_sql(300, 21);
        seed(&mut c, "doctor_steps", &ids).await;
        let rows = pairs(&mut c, "doctor_steps").await;
        let defs = objects(&mut c, &["doctor_steps", "doctor_steps_items"]).await;
        let n = steps(&url, "doctor_steps", &[]);
        assert!(n >= 6, "{n} steps");
        let mut unchanged = 0;
        for k in 0..n {
            seed(&mut c, "doctor_steps", &ids).await;
            let out = apply_stopped_after(&url, "doctor_steps", k, &[]);
            assert!(!out.status.success(), "stopped after step {k}: {}", stderr(&out));
            let now = report(&url, "doctor_steps", &[]);
            if layouts(&now) == [("rtcomb-sql".to_string(), 300)] {
                assert_eq!(pairs(&mut c, "doctor_steps").await, rows, "after a stop at step {k}: every key as it was");
                unchanged += 1;
            } else {
                assert_eq!(layouts(&now), [("v7".to_string(), 300)], "after a stop at step {k}: done or unchanged");
            }
            // The index a run builds for its foreign key checks before its transaction (the
            // child's column has none) may be left by a stop between its build and its drop:
            // the only object that may differ, and the next run drops it.
            let mut now_objects = objects(&mut c, &["doctor_steps", "doctor_steps_items"]).await;
            now_objects.retain(|o| !o.starts_with("CREATE INDEX combkey_doctor_fk_"));
            assert_eq!(now_objects, defs, "step {k}: objects");
            assert_eq!(joined(&mut c, "doctor_steps").await, (150, 150), "step {k}");
            let after = report(&url, "doctor_steps", &["--apply"]);
            assert_eq!(layouts(&after), [("v7".to_string(), 300)], "{after}");
            assert_eq!(
                objects(&mut c, &["doctor_steps", "doctor_steps_items"]).await,
                defs,
                "step {k}: after the next run"
            );
        }
        assert!(unchanged >= n - 3, "every step before the commit left everything unchanged ({unchanged} of {n})");
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
                 WHERE application_name = 'combkey_doctor_kill_test' AND state <> 'idle' AND xact_start IS NOT NULL \
                 AND query LIKE 'INSERT INTO combkey_doctor_map%' AND pid <> pg_backend_pid()",
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

    /// Quoted mixed-case names, a schema, a composite foreign key from another schema, and a
    /// same-named lower-case table that must not be touched.
    #[tokio::test]
    async fn quoted_names_schemas_and_composite_keys() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(
            &mut c,
            r#"DROP SCHEMA IF EXISTS doctor_shop CASCADE; DROP SCHEMA IF EXISTS doctor_other CASCADE;
               CREATE SCHEMA doctor_shop; CREATE SCHEMA doctor_other;
               CREATE TABLE doctor_shop."Orders" (id uuid NOT NULL, tenant int NOT NULL, PRIMARY KEY (id), UNIQUE (id, tenant));
               CREATE TABLE doctor_shop.orders (id uuid PRIMARY KEY);
               CREATE TABLE doctor_other."Lines" (n serial PRIMARY KEY, order_id uuid, tenant int,
                 CONSTRAINT "Lines_order" FOREIGN KEY (order_id, tenant) REFERENCES doctor_shop."Orders" (id, tenant)
                 ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE)"#,
        )
        .await;
        let ids = rtcomb_sql(200, 31);
        let other = rtcomb_sql(50, 32);
        for (i, id) in ids.iter().enumerate() {
            exec(&mut c, &format!(r#"INSERT INTO doctor_shop."Orders" VALUES ('{id}', {})"#, i % 3)).await;
            exec(&mut c, &format!(r#"INSERT INTO doctor_other."Lines" (order_id, tenant) VALUES ('{id}', {})"#, i % 3))
                .await;
        }
        for id in &other {
            exec(&mut c, &format!("INSERT INTO doctor_shop.orders VALUES ('{id}')")).await;
        }
        let lower_before: Vec<String> =
            sqlx::query_scalar("SELECT id::text FROM doctor_shop.orders ORDER BY id").fetch_all(&mut c).await.unwrap();
        let quoted = r#"doctor_shop."Orders""#;
        let before = report(&url, quoted, &[]);
        assert_eq!(layouts(&before), [("rtcomb-sql".to_string(), 200)], "only \"Orders\", not orders: {before}");
        assert_eq!(before["referenced_by"], serde_json::json!(["doctor_other.Lines.(order_id, tenant)"]), "{before}");
        let defs_before = objects(&mut c, &[quoted, r#"doctor_other."Lines""#]).await;
        let after = report(&url, quoted, &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 200)], "{after}");
        let joined: i64 = sqlx::query_scalar(
            r#"SELECT count(*) FROM doctor_other."Lines" l JOIN doctor_shop."Orders" o ON o.id = l.order_id AND o.tenant = l.tenant"#,
        )
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(joined, 200);
        assert_eq!(
            objects(&mut c, &[quoted, r#"doctor_other."Lines""#]).await,
            defs_before,
            "the FK, deferrability included"
        );
        let lower_after: Vec<String> =
            sqlx::query_scalar("SELECT id::text FROM doctor_shop.orders ORDER BY id").fetch_all(&mut c).await.unwrap();
        assert_eq!(lower_after, lower_before, "the lower-case table is not touched");
        // Unquoted, PostgreSQL folds the name: that is the other table.
        let folded = report(&url, "doctor_shop.Orders", &[]);
        assert_eq!(folded["rows"], 50, "{folded}");
    }

    /// A text key in any UUID form (hyphenated, upper case, braces, URN, 32 digits) becomes a
    /// `uuid` column holding the same ids, its referencing column too, the foreign key back.
    #[tokio::test]
    async fn text_keys_of_every_form_become_uuid() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_text_items; DROP TABLE IF EXISTS doctor_text;
             CREATE TABLE doctor_text (id text PRIMARY KEY, expect uuid NOT NULL);
             CREATE TABLE doctor_text_items (n serial PRIMARY KEY, parent text REFERENCES doctor_text (id) ON UPDATE CASCADE);
             COMMENT ON CONSTRAINT doctor_text_items_parent_fkey ON doctor_text_items IS 'each item''s order'",
        )
        .await;
        let g = V7Generator::new();
        for (i, t) in times(50).into_iter().enumerate() {
            let id = g.generate_at(t);
            let u = uuid::Uuid::from_bytes(id.into_bytes());
            let text = match i % 5 {
                0 => id.to_string(),
                1 => id.to_string().to_uppercase(),
                2 => format!("{}", u.braced()),
                3 => format!("{}", u.urn()),
                _ => format!("{}", u.simple()),
            };
            exec(&mut c, &format!("INSERT INTO doctor_text VALUES ('{text}', '{id}'); INSERT INTO doctor_text_items (parent) VALUES ('{text}')")).await;
        }
        let after = report(&url, "doctor_text", &["--apply"]);
        assert_eq!(after["column_type"], "uuid", "{after}");
        let same: i64 =
            sqlx::query_scalar("SELECT count(*) FROM doctor_text WHERE id = expect").fetch_one(&mut c).await.unwrap();
        assert_eq!(same, 50, "every id is the one its text wrote");
        let joined: i64 =
            sqlx::query_scalar("SELECT count(*) FROM doctor_text_items i JOIN doctor_text t ON t.id = i.parent")
                .fetch_one(&mut c)
                .await
                .unwrap();
        assert_eq!(joined, 50);
        assert_eq!(after["referenced_by"], serde_json::json!(["doctor_text_items.parent"]));
        // The foreign key came back with its comment.
        let comment: Option<String> = sqlx::query_scalar(
            "SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conname = 'doctor_text_items_parent_fkey'",
        )
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(comment.as_deref(), Some("each item's order"));
    }

    /// User triggers are named and refused unless `--triggers fire`; inheriting tables are
    /// named and refused unless `--inherited only|include`; nothing changes when refused.
    #[tokio::test]
    async fn triggers_and_inheritance_are_refused_unless_chosen() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_trig", &rtcomb_sql(100, 41)).await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_trig_log; CREATE TABLE doctor_trig_log (n int);
             CREATE OR REPLACE FUNCTION doctor_trig_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO doctor_trig_log VALUES (1); RETURN NEW; END $$;
             CREATE TRIGGER doctor_trig_audit AFTER UPDATE ON doctor_trig FOR EACH ROW EXECUTE FUNCTION doctor_trig_fn()",
        )
        .await;
        let rows = pairs(&mut c, "doctor_trig").await;
        let r = report(&url, "doctor_trig", &[]);
        assert!(r["triggers"].to_string().contains("doctor_trig_audit"), "{r}");
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_trig", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("doctor_trig_audit") && stderr(&out).contains("--triggers fire"),
            "{}",
            stderr(&out)
        );
        assert_eq!(pairs(&mut c, "doctor_trig").await, rows, "refused: nothing changed");
        let after = report(&url, "doctor_trig", &["--apply", "--triggers", "fire"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 100)]);
        let fired: i64 = sqlx::query_scalar("SELECT count(*) FROM doctor_trig_log").fetch_one(&mut c).await.unwrap();
        assert_eq!(fired, 100, "the trigger fired once per changed row, as chosen");

        exec(&mut c, "DROP TABLE IF EXISTS doctor_inh_child").await;
        seed(&mut c, "doctor_inh", &rtcomb_sql(100, 42)).await;
        exec(&mut c, "CREATE TABLE doctor_inh_child () INHERITS (doctor_inh)").await;
        let extra = rtcomb_sql(10, 43);
        for id in &extra {
            exec(&mut c, &format!("INSERT INTO doctor_inh_child VALUES ('{id}', '{id}')")).await;
        }
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_inh", "--apply"], None);
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains("doctor_inh_child") && stderr(&out).contains("--inherited"), "{}", stderr(&out));
        let only = report(&url, "doctor_inh", &["--apply", "--inherited", "only"]);
        assert_eq!(layouts(&only), [("v7".to_string(), 100)], "{only}");
        let child: Vec<String> =
            sqlx::query_scalar("SELECT id::text FROM doctor_inh_child ORDER BY id").fetch_all(&mut c).await.unwrap();
        let mut expect: Vec<String> = extra.iter().map(ToString::to_string).collect();
        expect.sort();
        assert_eq!(child, expect, "--inherited only leaves the inheriting table's rows");

        // An inheriting table's key that a key of the table would become: one id twice in the
        // hierarchy (a break-test's run made it so). Refused, both named, nothing changed.
        exec(&mut c, "DROP TABLE IF EXISTS doctor_inh_child").await;
        let ids = rtcomb_sql(100, 44);
        seed(&mut c, "doctor_inh", &ids).await;
        exec(&mut c, "CREATE TABLE doctor_inh_child () INHERITS (doctor_inh)").await;
        let becomes =
            combkey::layouts::KeyMigration::new(Layout::RtCombSql, Layout::V7).unwrap().convert(&ids[7]).unwrap();
        exec(&mut c, &format!("INSERT INTO doctor_inh_child VALUES ('{becomes}', 'child')")).await;
        let before = pairs(&mut c, "doctor_inh").await;
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_inh", "--apply", "--inherited", "only"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out)
                .contains(&format!("{} (rtcomb-sql) would become {becomes}, a key the table holds already", ids[7])),
            "{}",
            stderr(&out)
        );
        assert_eq!(pairs(&mut c, "doctor_inh").await, before, "nothing changed");
        exec(&mut c, "DROP TABLE doctor_inh_child").await;
    }

    /// The audit reads only: it installs no extension, and analyzes nothing.
    #[tokio::test]
    async fn the_audit_reads_only() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_ro", &rtcomb_sql(500, 51)).await;
        let stats = async |c: &mut PgConnection| {
            let s: (Option<i64>, i64, i64) = sqlx::query_as(
                    "SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'pgstattuple'), \
                            (SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'doctor_ro' AND last_analyze IS NOT NULL), \
                            (SELECT reltuples::bigint FROM pg_class WHERE relname = 'doctor_ro')",
                )
                .fetch_one(c)
                .await
                .unwrap();
            s
        };
        let before = stats(&mut c).await;
        let r = report(&url, "doctor_ro", &[]);
        assert_eq!(layouts(&r), [("rtcomb-sql".to_string(), 500)]);
        assert_eq!(stats(&mut c).await, before, "no extension installed, no statistics changed");
    }

    /// A lock held by another transaction: the run waits no longer than --lock-timeout, fails,
    /// and changes nothing.
    #[tokio::test]
    async fn a_held_lock_ends_the_wait_and_changes_nothing() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_lock", &rtcomb_sql(100, 61)).await;
        let rows = pairs(&mut c, "doctor_lock").await;
        let mut holder = connect().await;
        exec(&mut holder, "BEGIN; LOCK TABLE doctor_lock_items IN ACCESS EXCLUSIVE MODE").await;
        let started = std::time::Instant::now();
        let out =
            combkey(&["doctor", "--url", &url, "--table", "doctor_lock", "--apply", "--lock-timeout", "1s"], None);
        let waited = started.elapsed();
        exec(&mut holder, "ROLLBACK").await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("lock"), "{}", stderr(&out));
        assert!(waited < std::time::Duration::from_secs(60), "{waited:?}");
        assert_eq!(pairs(&mut c, "doctor_lock").await, rows, "nothing changed");
    }

    /// A password in the URL never shows in what the command prints.
    /// A table's keys as PostgreSQL prints them, in key order.
    /// RT.Comb `Sql` keys made over a year, one of them with no neighbour within days: the
    /// audit cannot tell it from a random key and leaves it; `--layout rtcomb-sql` (the DBA
    /// knows .NET made every key) reads every version-4 key with a plausible time as RT.Comb,
    /// says so, and converts them all, while a random key whose bytes read as no plausible time
    /// stays as it was.
    #[tokio::test]
    async fn a_dba_says_which_layout_made_the_keys() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        let r = SeededRandom::new(95);
        let t0: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
        // 1,999 keys a few minutes apart over the year's first week, one alone in the autumn.
        let mut ids: Vec<Comb> =
            (0..1999).map(|i| RtCombLayout::Sql.create(t0.saturating_add_ms(i * 300_000), v4(&r)).unwrap()).collect();
        let lonely = RtCombLayout::Sql.create(t0.saturating_add_ms(280 * 86_400_000), v4(&r)).unwrap();
        ids.push(lonely);
        // A random key whose last six bytes read as a time in the 9th millennium.
        let mut b = *v4(&r).as_bytes();
        b[10] = 0xe0;
        let random = Comb::from_bytes(b);
        ids.push(random);
        seed(&mut c, "doctor_said", &ids).await;

        let audit = report(&url, "doctor_said", &[]);
        assert_eq!(audit["layouts"]["v4"], 2, "the lonely key is taken for a random one: {audit}");
        let said = report(&url, "doctor_said", &["--layout", "rtcomb-sql"]);
        assert_eq!(said["layouts"]["rtcomb-sql"], 2000, "{said}");
        assert_eq!(said["layouts"]["v4"], 1, "{said}");
        let evidence = said["evidence"].to_string();
        assert!(evidence.contains("as --layout rtcomb-sql says"), "the audit says what it assumed: {evidence}");

        let after = report(&url, "doctor_said", &["--apply", "--layout", "rtcomb-sql"]);
        assert_eq!(layouts(&after), [("v4".to_string(), 1), ("v7".to_string(), 2000)], "{after}");
        let new = combkey::layouts::Layout::convert(&lonely, Layout::RtCombSql, Layout::V7).unwrap();
        let n: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT count(*) FROM doctor_said WHERE id = '{new}' OR id = '{random}'"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(n, 2, "the lonely key converted, the random one unchanged");
        // A layout whose keys say what they are is no assumption.
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_said", "--layout", "v7"], None);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("say what they are"), "{}", stderr(&out));
        exec(&mut c, "DROP TABLE doctor_said_items; DROP TABLE doctor_said").await;
    }

    async fn key_texts(c: &mut PgConnection, table: &str, column: &str) -> Vec<String> {
        sqlx::query_scalar(AssertSqlSafe(format!("SELECT {column}::text FROM {table} ORDER BY 1")))
            .fetch_all(c)
            .await
            .unwrap()
    }

    /// `--apply` that must refuse: exit 1, the message, and the audit's refusal the same.
    fn refused(url: &str, table: &str, extra: &[&str], says: &str) {
        let r = report(url, table, extra);
        assert!(r["refusal"].as_str().is_some_and(|m| m.contains(says)), "audit: {r}");
        assert!(!r["recommendation"].as_str().unwrap().contains("Run --apply"), "{r}");
        let mut args = vec!["doctor", "--url", url, "--table", table, "--apply"];
        args.extend_from_slice(extra);
        let out = combkey(&args, None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }

    /// What would fail half-way is refused before anything changes, and said by the audit:
    /// one id written in two letter cases in a text key (one stored form would make them one
    /// key), a view that reads a text key (PostgreSQL does not retype a column a view reads),
    /// rows that already reference nothing behind a `NOT VALID` foreign key (offline and
    /// online), a `bytea` key (read as its bytes; changed to uuid by hand first).
    #[tokio::test]
    async fn what_would_fail_half_way_is_refused_before_anything_changes() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        let ids = rtcomb_sql(20, 81);

        exec(&mut c, "DROP TABLE IF EXISTS doctor_case; CREATE TABLE doctor_case (id text PRIMARY KEY)").await;
        for id in &ids {
            exec(&mut c, &format!("INSERT INTO doctor_case VALUES ('{id}')")).await;
        }
        exec(&mut c, &format!("INSERT INTO doctor_case VALUES ('{}')", ids[3].to_string().to_uppercase())).await;
        let before = key_texts(&mut c, "doctor_case", "id").await;
        refused(&url, "doctor_case", &[], "repeat the id of another value, written differently");
        // The values as stored, so a DBA can find them.
        let upper = ids[3].to_string().to_uppercase();
        let r = report(&url, "doctor_case", &[]);
        let refusal = r["refusal"].as_str().unwrap_or_default();
        for said in [format!("'{upper}'"), format!("'{}'", ids[3]), "2 values read as".to_string()] {
            assert!(refusal.contains(&said), "{said}: {refusal}");
        }
        assert_eq!(key_texts(&mut c, "doctor_case", "id").await, before, "nothing changed");
        let column: String = sqlx::query_scalar(
            "SELECT data_type::text FROM information_schema.columns WHERE table_name = 'doctor_case'",
        )
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(column, "text");

        exec(
            &mut c,
            "DROP VIEW IF EXISTS doctor_viewed_v; DROP TABLE IF EXISTS doctor_viewed;
             CREATE TABLE doctor_viewed (id text PRIMARY KEY);
             CREATE VIEW doctor_viewed_v AS SELECT id FROM doctor_viewed",
        )
        .await;
        for id in &ids {
            exec(&mut c, &format!("INSERT INTO doctor_viewed VALUES ('{id}')")).await;
        }
        refused(&url, "doctor_viewed", &[], "public.doctor_viewed_v (reads public.doctor_viewed.id)");
        exec(&mut c, "DROP VIEW doctor_viewed_v").await;
        // An expression index, a row security policy, a trigger's WHEN: each reads the column.
        for (create, says, drop) in [
            ("CREATE INDEX doctor_viewed_lower ON doctor_viewed (lower(id))", "index doctor_viewed_lower", "DROP INDEX doctor_viewed_lower"),
            (
                "CREATE POLICY doctor_viewed_p ON doctor_viewed USING (id <> 'x')",
                "policy doctor_viewed_p on doctor_viewed",
                "DROP POLICY doctor_viewed_p ON doctor_viewed",
            ),
            (
                "CREATE OR REPLACE FUNCTION doctor_viewed_f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
                 CREATE TRIGGER doctor_viewed_t BEFORE INSERT ON doctor_viewed FOR EACH ROW WHEN (NEW.id <> 'x')
                   EXECUTE FUNCTION doctor_viewed_f()",
                "trigger doctor_viewed_t on doctor_viewed",
                "DROP TRIGGER doctor_viewed_t ON doctor_viewed",
            ),
        ] {
            exec(&mut c, create).await;
            refused(&url, "doctor_viewed", &[], says);
            exec(&mut c, drop).await;
        }
        assert_eq!(report(&url, "doctor_viewed", &["--apply"])["column_type"], "uuid", "runs once they are gone");

        seed(&mut c, "doctor_nv", &ids).await;
        exec(
            &mut c,
            "ALTER TABLE doctor_nv_items DROP CONSTRAINT doctor_nv_items_parent_fkey;
             INSERT INTO doctor_nv_items (parent) VALUES ('922c9f4e-81ed-4608-a7ce-018bcfe56800');
             ALTER TABLE doctor_nv_items ADD CONSTRAINT doctor_nv_items_parent_fkey FOREIGN KEY (parent)
               REFERENCES doctor_nv (id) NOT VALID;
             CREATE INDEX ON doctor_nv_items (parent)",
        )
        .await;
        let before = pairs(&mut c, "doctor_nv").await;
        refused(&url, "doctor_nv", &[], "1 rows of public.doctor_nv_items (foreign key doctor_nv_items_parent_fkey)");
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_nv", "--apply", "--online"], None);
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains("rows already reference no row"), "{}", stderr(&out));
        assert_eq!(pairs(&mut c, "doctor_nv").await, before, "nothing changed");

        // A rule that rewrites UPDATEs of the table: PostgreSQL would run it for every key
        // changed (or refuse the UPDATE inside WITH).
        seed(&mut c, "doctor_rule", &ids).await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_rule_log; CREATE TABLE doctor_rule_log (x uuid);
             CREATE RULE doctor_rule_r AS ON UPDATE TO doctor_rule DO ALSO INSERT INTO doctor_rule_log VALUES (NEW.id)",
        )
        .await;
        let before = pairs(&mut c, "doctor_rule").await;
        refused(&url, "doctor_rule", &[], "doctor_rule_r (ON UPDATE) on public.doctor_rule");
        assert_eq!(pairs(&mut c, "doctor_rule").await, before, "nothing changed");
        exec(&mut c, "DROP RULE doctor_rule_r ON doctor_rule").await;

        exec(&mut c, "DROP TABLE IF EXISTS doctor_bytea; CREATE TABLE doctor_bytea (id bytea PRIMARY KEY)").await;
        for id in &ids {
            exec(&mut c, &format!("INSERT INTO doctor_bytea VALUES ('\\x{}')", combkey_testutil::hex(*id))).await;
        }
        let r = report(&url, "doctor_bytea", &[]);
        assert_eq!(layouts(&r), [("rtcomb-sql".to_string(), 20)], "read as their bytes: {r}");
        let before = key_texts(&mut c, "doctor_bytea", "id").await;
        refused(&url, "doctor_bytea", &[], "encode(\"id\", 'hex')::uuid");
        assert_eq!(key_texts(&mut c, "doctor_bytea", "id").await, before, "nothing changed");
    }

    /// Names as a DBA types them: a quoted column name with a space and capitals.
    #[tokio::test]
    async fn a_quoted_column_name_is_found() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(&mut c, "DROP TABLE IF EXISTS doctor_qcol; CREATE TABLE doctor_qcol (\"My Id\" uuid PRIMARY KEY)").await;
        for id in rtcomb_sql(30, 82) {
            exec(&mut c, &format!("INSERT INTO doctor_qcol VALUES ('{id}')")).await;
        }
        for given in ["\"My Id\"", "My Id"] {
            let r = report(&url, "doctor_qcol", &["--column", given]);
            assert_eq!(layouts(&r), [("rtcomb-sql".to_string(), 30)], "--column {given}: {r}");
        }
        let after = report(&url, "doctor_qcol", &["--column", "\"My Id\"", "--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 30)], "{after}");
    }

    /// Two doctors on one table: the second is told another is converting it, and changes
    /// nothing (the lock is PostgreSQL's advisory lock `combkey_doctor:schema.table`, which a
    /// DBA can see in pg_locks).
    #[tokio::test]
    async fn a_second_doctor_on_the_same_table_changes_nothing() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_twice", &rtcomb_sql(50, 83)).await;
        let before = pairs(&mut c, "doctor_twice").await;
        let mut holder = connect().await;
        let lock = "hashtextextended('combkey_doctor:public.doctor_twice', 0)";
        exec(&mut holder, &format!("SELECT pg_advisory_lock({lock})")).await;
        for extra in [&[][..], &["--online"][..]] {
            let mut args = vec!["doctor", "--url", &url, "--table", "doctor_twice", "--apply", "--lock-timeout", "1s"];
            args.extend_from_slice(extra);
            let out = combkey(&args, None);
            assert_eq!(out.status.code(), Some(1), "{extra:?}");
            assert!(
                stderr(&out).contains("another combkey doctor is converting public.doctor_twice"),
                "{}",
                stderr(&out)
            );
            assert_eq!(pairs(&mut c, "doctor_twice").await, before, "nothing changed");
        }
        // The audit reads only, and takes no lock.
        assert_eq!(layouts(&report(&url, "doctor_twice", &[])), [("rtcomb-sql".to_string(), 50)]);
        exec(&mut holder, &format!("SELECT pg_advisory_unlock({lock})")).await;
        let after = report(&url, "doctor_twice", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 50)], "{after}");
    }

    /// A chain of keys on PostgreSQL: refused before anything changes.
    #[tokio::test]
    async fn a_chain_of_foreign_keys_is_refused() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(&mut c, "DROP TABLE IF EXISTS doctor_chain_g").await;
        seed(&mut c, "doctor_chain", &rtcomb_sql(20, 88)).await;
        exec(
            &mut c,
            "ALTER TABLE doctor_chain_items ADD UNIQUE (parent);
             CREATE TABLE doctor_chain_g (n serial PRIMARY KEY, p uuid REFERENCES doctor_chain_items (parent));",
        )
        .await;
        let before = pairs(&mut c, "doctor_chain").await;
        refused(&url, "doctor_chain", &[], "public.doctor_chain_g.(p) -> public.doctor_chain_items.(parent)");
        assert_eq!(pairs(&mut c, "doctor_chain").await, before);
        exec(&mut c, "DROP TABLE doctor_chain_g").await;
    }

    /// Row-level security the connecting role is subject to (its owner under `FORCE ROW LEVEL
    /// SECURITY`, here) hides rows: the audit and `--apply` refuse before anything changes,
    /// saying so (not calling the hidden parents' children orphans); as the owner without
    /// FORCE, every row shows and every key converts.
    #[tokio::test]
    async fn rows_the_role_cannot_see_are_refused() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        seed(&mut c, "doctor_rls", &rtcomb_sql(40, 97)).await;
        exec(
            &mut c,
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'doctor_rls_owner') THEN \
               CREATE ROLE doctor_rls_owner LOGIN; END IF; END $$;
             ALTER TABLE doctor_rls ADD COLUMN tenant int NOT NULL DEFAULT 1;
             UPDATE doctor_rls SET tenant = 2 WHERE old > (SELECT old FROM doctor_rls ORDER BY old LIMIT 1 OFFSET 20);
             ALTER TABLE doctor_rls OWNER TO doctor_rls_owner;
             ALTER TABLE doctor_rls_items OWNER TO doctor_rls_owner;
             GRANT CREATE ON SCHEMA public TO doctor_rls_owner;
             ALTER TABLE doctor_rls ENABLE ROW LEVEL SECURITY;
             ALTER TABLE doctor_rls FORCE ROW LEVEL SECURITY;
             CREATE POLICY tenant_one ON doctor_rls USING (tenant = 1);",
        )
        .await;
        let owner = url.replacen("postgres@", "doctor_rls_owner@", 1);
        let before = pairs(&mut c, "doctor_rls").await;
        let audit = report(&owner, "doctor_rls", &[]);
        let refusal = audit["refusal"].as_str().unwrap_or_default();
        assert!(
            refusal.contains("row-level security hides rows") && refusal.contains("FORCE ROW LEVEL SECURITY"),
            "{audit}"
        );
        assert!(
            !refusal.contains("fix or remove them"),
            "hidden parents' children are not called orphans to remove: {refusal}"
        );
        refused(&owner, "doctor_rls", &[], "row-level security hides rows");
        assert_eq!(pairs(&mut c, "doctor_rls").await, before, "nothing changed");
        exec(&mut c, "ALTER TABLE doctor_rls NO FORCE ROW LEVEL SECURITY").await;
        let after = report(&owner, "doctor_rls", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 40)], "{after}");
        exec(&mut c, "DROP TABLE doctor_rls_items; DROP TABLE doctor_rls").await;
    }

    /// A partition is converted with its partitioned table, never alone: run on one, doctor
    /// names the table and the flag; `--inherited only` on the partitioned table says where
    /// the keys are; `--inherited include` converts every partition.
    #[tokio::test]
    async fn partitions_are_converted_through_their_table() {
        let url = combkey_testutil::pg_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_hp_items; DROP TABLE IF EXISTS doctor_hp;
             CREATE TABLE doctor_hp (id uuid PRIMARY KEY) PARTITION BY HASH (id);
             CREATE TABLE doctor_hp0 PARTITION OF doctor_hp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
             CREATE TABLE doctor_hp1 PARTITION OF doctor_hp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
             CREATE TABLE doctor_hp_items (k serial PRIMARY KEY, parent uuid NOT NULL REFERENCES doctor_hp (id));",
        )
        .await;
        for id in rtcomb_sql(40, 98) {
            exec(
                &mut c,
                &format!("INSERT INTO doctor_hp VALUES ('{id}'); INSERT INTO doctor_hp_items (parent) VALUES ('{id}')"),
            )
            .await;
        }
        refused(&url, "doctor_hp0", &[], "doctor_hp0 is a partition of public.doctor_hp");
        refused(&url, "doctor_hp0", &[], "--inherited include");
        refused(&url, "doctor_hp", &["--inherited", "only"], "doctor_hp is partitioned: it holds no row of its own");
        let after = report(&url, "doctor_hp", &["--apply", "--inherited", "include"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 40)], "{after}");
        let joined: i64 =
            sqlx::query_scalar("SELECT count(*) FROM doctor_hp_items i JOIN doctor_hp p ON p.id = i.parent")
                .fetch_one(&mut c)
                .await
                .unwrap();
        assert_eq!(joined, 40);
        exec(&mut c, "DROP TABLE doctor_hp_items; DROP TABLE doctor_hp").await;
    }

    #[tokio::test]
    async fn passwords_never_show() {
        let base = combkey_testutil::pg_url();
        let url = base.replacen("postgres@", "postgres:Sup3rS3cret@", 1).replacen("/test", "/no_such_database", 1);
        let out = combkey(&["doctor", "--url", &url, "--table", "t"], None);
        assert!(!out.status.success());
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(!all.contains("Sup3rS3cret") && all.contains("postgres:***@"), "{all}");
    }

    /// A table name with quotes and a semicolon, one in a schema that does not exist, and a
    /// column that holds no UUID at all: each a usage error (exit 2) that names it quoted, and
    /// runs nothing the name did not mean (the name with SQL in it was a database error that
    /// showed the catalog query; the column of names was audited as a report, exit 1).
    #[tokio::test]
    async fn odd_names_and_a_column_of_no_uuid_are_usage_errors() {
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS odd_names; CREATE TABLE odd_names (id uuid PRIMARY KEY, name text NOT NULL); \
                      INSERT INTO odd_names SELECT gen_random_uuid(), 'n' || g FROM generate_series(1, 5) g",
        )
        .await;
        let url = combkey_testutil::pg_url();
        for (table, column, says) in [
            // An open quote: no name of one or two parts (refused before the server).
            ("odd_names\"; DROP TABLE odd_names; --", "id", "invalid table name: expected table or schema.table"),
            ("nosuchschema.odd_names", "id", "no table \"nosuchschema.odd_names\""),
            ("odd_names", "name", "public.odd_names.name holds no UUID"),
        ] {
            for json in [false, true] {
                let mut args = vec!["doctor", "--url", url.as_str(), "--table", table, "--column", column];
                if json {
                    args.push("--json");
                }
                let out = combkey(&args, None);
                let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
                assert_eq!(out.status.code(), Some(2), "{table} {column}: {text}");
                assert!(stderr(&out).contains(says), "{table} {column}: {text}");
                assert!(!text.contains("SELECT"), "no query shown: {text}");
                if json {
                    let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
                    assert_eq!(v["error"], "usage", "{text}");
                    assert!(v["message"].as_str().unwrap().contains(says), "{text}");
                }
            }
        }
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM odd_names").fetch_one(&mut c).await.unwrap();
        assert_eq!(n, 5, "the table is there, as it was");
        exec(&mut c, "DROP TABLE odd_names").await;
    }

    /// A key whose conversion drops bits (a v1 key), committed after the audit saw only keys
    /// that convert without loss (so the plan keeps no key map): it stays as it is, where it was
    /// converted with no key-map row and its old id could never be resolved; the next run plans
    /// a key map and converts it.
    #[tokio::test]
    async fn a_lossy_key_written_after_the_audit_stays_until_a_key_map_keeps_it() {
        let mut c = connect().await;
        let t = "late_v1";
        exec(&mut c, &format!("DROP TABLE IF EXISTS {t}; DROP TABLE IF EXISTS combkey_keymap_{t}; CREATE TABLE {t} (id uuid PRIMARY KEY, n int)")).await;
        let values: Vec<String> = rtcomb_sql(50, 7).iter().enumerate().map(|(i, k)| format!("('{k}', {i})")).collect();
        exec(&mut c, &format!("INSERT INTO {t} VALUES {}", values.join(", "))).await;
        let clock = Arc::new(FixedClock::new(times(1)[0]));
        let v1 = V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(5)).generate();
        let mut app = connect().await;
        exec(&mut app, &format!("BEGIN; INSERT INTO {t} VALUES ('{v1}', 99)")).await;
        let url = combkey_testutil::pg_url();
        let run = {
            let url = url.clone();
            tokio::task::spawn_blocking(move || {
                combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--json"], None)
            })
        };
        // The run has audited and waits for the application's transaction (a lock request on
        // this table: other tests' runs wait for locks of their own meanwhile).
        let waiting = format!(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
             WHERE NOT l.granted AND a.application_name = 'combkey doctor' AND l.relation = '{t}'::regclass"
        );
        let started = std::time::Instant::now();
        loop {
            let n: i64 = sqlx::query_scalar(AssertSqlSafe(waiting.clone())).fetch_one(&mut c).await.unwrap();
            if n > 0 {
                break;
            }
            assert!(started.elapsed().as_secs() < 120 && !run.is_finished(), "the run never waited for the writer");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        exec(&mut app, "COMMIT").await;
        let out = run.await.unwrap();
        let report: Value = serde_json::from_str(ok(&out).lines().last().unwrap()).unwrap();
        let kept: String = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id::text FROM {t} WHERE n = 99")))
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(kept, v1.to_string(), "the v1 key stays: {report}");
        assert_eq!(report["layouts"]["v7"], 50, "{report}");
        // The next run keeps a key map for it.
        let again: Value = serde_json::from_str(
            ok(&combkey(&["doctor", "--url", &url, "--table", t, "--apply", "--json"], None)).lines().last().unwrap(),
        )
        .unwrap();
        assert_eq!(again["layouts"]["v7"], 51, "{again}");
        let mapped: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT count(*) FROM combkey_keymap_{t} WHERE old_key = '{v1}'"
        )))
        .fetch_one(&mut c)
        .await
        .unwrap();
        assert_eq!(mapped, 1, "the key map resolves the old id");
        exec(&mut c, &format!("DROP TABLE {t}; DROP TABLE IF EXISTS combkey_keymap_{t}")).await;
    }
}

mod mariadb {
    use super::*;

    async fn connect() -> MySqlConnection {
        MySqlConnection::connect(&combkey_testutil::mysql_url()).await.expect("MariaDB (source scripts/servers.sh)")
    }

    async fn exec(c: &mut MySqlConnection, sql: &str) {
        sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn show(c: &mut MySqlConnection, table: &str) -> String {
        let (_, def): (String, String) =
            sqlx::query_as(AssertSqlSafe(format!("SHOW CREATE TABLE {table}"))).fetch_one(c).await.unwrap();
        def.lines().filter(|l| !l.starts_with(") ENGINE")).collect::<Vec<_>>().join("\n")
    }

    async fn scalar(c: &mut MySqlConnection, sql: &str) -> i64 {
        sqlx::query_scalar(AssertSqlSafe(sql.to_string())).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// A `CHAR(36)` key that is not the primary key, with a unique index, a secondary index, a
    /// comment, an `ON UPDATE CURRENT_TIMESTAMP` column; a child in another database that
    /// references it together with another column, holding the keys in upper case.
    async fn seed_text(c: &mut MySqlConnection, db: &str, ids: &[Comb]) {
        exec(
            c,
            &format!(
                "DROP DATABASE IF EXISTS {db}_other; CREATE DATABASE {db}_other;
                 DROP TABLE IF EXISTS {db}_p;
                 CREATE TABLE {db}_p (n INT NOT NULL AUTO_INCREMENT PRIMARY KEY, id CHAR(36) NOT NULL COMMENT 'the public id',
                   tenant INT NOT NULL DEFAULT 1, note VARCHAR(20),
                   updated TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
                   UNIQUE KEY {db}_u (id, tenant), KEY {db}_k (note, id));
                 CREATE TABLE {db}_other.lines (n INT AUTO_INCREMENT PRIMARY KEY, pid CHAR(36) NULL, tenant INT NOT NULL DEFAULT 1,
                   CONSTRAINT {db}_fk FOREIGN KEY (pid, tenant) REFERENCES test.{db}_p (id, tenant) ON DELETE CASCADE)"
            ),
        )
        .await;
        for chunk in ids.chunks(500) {
            let values: Vec<String> = chunk.iter().map(|id| format!("('{id}', 'n', '2020-02-02 02:02:02')")).collect();
            exec(c, &format!("INSERT INTO {db}_p (id, note, updated) VALUES {}", values.join(","))).await;
        }
        exec(
            c,
            &format!(
                "INSERT INTO {db}_other.lines (pid) SELECT UPPER(id) FROM {db}_p ORDER BY n LIMIT {}",
                ids.len() / 2
            ),
        )
        .await;
    }

    async fn text_state(c: &mut MySqlConnection, db: &str) -> (i64, i64, i64) {
        (
            scalar(
                c,
                &format!(
                    "SELECT COUNT(*) FROM {db}_other.lines l JOIN {db}_p p ON p.id = l.pid AND p.tenant = l.tenant"
                ),
            )
            .await,
            scalar(c, &format!("SELECT COUNT(*) FROM {db}_other.lines")).await,
            scalar(c, &format!("SELECT COUNT(*) FROM {db}_p WHERE updated = '2020-02-02 02:02:02'")).await,
        )
    }

    /// One id held twice in a case-sensitive text key (`ascii_bin`), in two letter cases: the
    /// check runs in the database, and refuses before anything changes, naming both values as
    /// stored (`QUOTE`), so a DBA can find them.
    #[tokio::test]
    async fn one_id_in_two_letter_cases_is_refused_with_both_values() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_same_my;
             CREATE TABLE doctor_same_my (id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY)",
        )
        .await;
        let ids = rtcomb_sql(20, 95);
        let values: Vec<String> = ids.iter().map(|id| format!("('{id}')")).collect();
        exec(&mut c, &format!("INSERT INTO doctor_same_my VALUES {}", values.join(","))).await;
        let upper = ids[4].to_string().to_uppercase();
        exec(&mut c, &format!("INSERT INTO doctor_same_my VALUES ('{upper}')")).await;
        let all = "SELECT GROUP_CONCAT(id ORDER BY id) FROM doctor_same_my";
        let before: String = sqlx::query_scalar(all).fetch_one(&mut c).await.unwrap();
        let r = report(&url, "doctor_same_my", &[]);
        let refusal = r["refusal"].as_str().unwrap_or_default();
        for said in [
            "written differently".to_string(),
            format!("'{upper}'"),
            format!("'{}'", ids[4]),
            "2 values read as".to_string(),
        ] {
            assert!(refusal.contains(&said), "{said}: {refusal}");
        }
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_same_my", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("written differently"), "{}", stderr(&out));
        let after: String = sqlx::query_scalar(all).fetch_one(&mut c).await.unwrap();
        assert_eq!(after, before, "nothing changed");
        assert!(show(&mut c, "doctor_same_my").await.contains("`id` char(36)"), "the column kept its type");
        exec(&mut c, "DROP TABLE doctor_same_my").await;
        // One id in its 36 and its 32 characters, both lower case (each value alone looks
        // like every other: the grouping is not skipped for it); and all values one way: none.
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_same_my2;
             CREATE TABLE doctor_same_my2 (id VARCHAR(36) NOT NULL PRIMARY KEY)",
        )
        .await;
        exec(&mut c, &format!("INSERT INTO doctor_same_my2 VALUES {}", values.join(","))).await;
        let r = report(&url, "doctor_same_my2", &[]);
        assert!(r["refusal"].is_null(), "{r}");
        let short = ids[7].to_string().replace('-', "");
        exec(&mut c, &format!("INSERT INTO doctor_same_my2 VALUES ('{short}')")).await;
        let r = report(&url, "doctor_same_my2", &[]);
        let refusal = r["refusal"].as_str().unwrap_or_default();
        for said in [format!("'{short}'"), format!("'{}'", ids[7]), "2 values read as".to_string()] {
            assert!(refusal.contains(&said), "{said}: {refusal}");
        }
        exec(&mut c, "DROP TABLE doctor_same_my2").await;
    }

    #[tokio::test]
    async fn char36_v7_text_becomes_binary16_keeping_everything() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        let g = V7Generator::new();
        let ids: Vec<Comb> = times(1000).into_iter().map(|t| g.generate_at(t)).collect();
        seed_text(&mut c, "doctor_c36", &ids).await;
        let (p_before, l_before) = (show(&mut c, "doctor_c36_p").await, show(&mut c, "doctor_c36_other.lines").await);
        let before = report(&url, "doctor_c36_p", &[]);
        assert_eq!(before["column_type"], "char(36)");
        assert_eq!(before["stored_form_ok"], false);
        assert_eq!(layouts(&before), [("v7".to_string(), 1000)], "{before}");
        assert_eq!(before["referenced_by"], serde_json::json!(["doctor_c36_other.lines.(pid, tenant)"]));
        assert!(before["recommendation"].as_str().unwrap().contains("BINARY(16)"), "{before}");

        let after = report(&url, "doctor_c36_p", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(after["stored_form_ok"], true);
        assert_eq!(layouts(&after), [("v7".to_string(), 1000)]);
        assert_eq!(after["time_order"].as_f64(), Some(1.0));
        assert_eq!(text_state(&mut c, "doctor_c36").await, (500, 500, 1000), "joined; ON UPDATE columns untouched");
        // Everything as it was but the two columns' type: the primary key stays on n.
        let p_after = show(&mut c, "doctor_c36_p").await;
        assert_eq!(p_after, p_before.replace("`id` char(36) NOT NULL", "`id` binary(16) NOT NULL"));
        let l_after = show(&mut c, "doctor_c36_other.lines").await;
        assert_eq!(l_after, l_before.replace("`pid` char(36) DEFAULT NULL", "`pid` binary(16) DEFAULT NULL"));
        for (i, id) in ids.iter().enumerate().step_by(97) {
            let n = scalar(&mut c, &format!("SELECT n FROM doctor_c36_p WHERE id = 0x{}", combkey_testutil::hex(*id)))
                .await;
            assert_eq!(n, i64::try_from(i).unwrap() + 1, "{id} is the same row's id");
        }
        let again = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_c36_p", "--apply"], None));
        assert!(again.contains("nothing to do"), "{again}");
        let guards = "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE (EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE) \
                      IN (('test', 'doctor_c36_p'), ('doctor_c36_other', 'lines'))";
        assert_eq!(scalar(&mut c, guards).await, 0, "the guard triggers are gone");
    }

    /// The journaled type change, stopped after each of its steps in turn: in between, other
    /// sessions' writes are refused (no orphan can appear while the foreign key is dropped),
    /// and the next run finishes it: every key converted, nothing else changed, 0 orphans.
    #[tokio::test]
    async fn a_type_change_stopped_after_any_step_finishes_when_run_again() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        let ids = rtcomb_sql(200, 71);
        seed_text(&mut c, "doctor_jn", &ids).await;
        let (p_before, l_before) = (show(&mut c, "doctor_jn_p").await, show(&mut c, "doctor_jn_other.lines").await);
        let n = steps(&url, "doctor_jn_p", &[]);
        assert!(n >= 15, "{n} steps");
        let mut guarded = 0;
        for k in 0..n {
            seed_text(&mut c, "doctor_jn", &ids).await;
            let out = apply_stopped_after(&url, "doctor_jn_p", k, &[]);
            assert!(!out.status.success(), "stopped after step {k}");
            assert!(
                stderr(&out).contains(&format!("COMBKEY_DOCTOR_FAIL_AFTER_STEP={k} counts from 0")),
                "{}",
                stderr(&out)
            );
            // A foreign key dropped: another session may not delete a parent (its children
            // would be orphaned) nor add a child.
            let fk_present = show(&mut c, "doctor_jn_other.lines").await.contains("FOREIGN KEY");
            if !fk_present {
                guarded += 1;
                // Refused, and said so: not queued (a trigger cannot wait for the run).
                let e = sqlx::raw_sql("DELETE FROM doctor_jn_p LIMIT 1").execute(&mut c).await.unwrap_err();
                assert!(e.to_string().contains("write refused, retry after it ends"), "step {k}: {e}");
                let e = sqlx::raw_sql("INSERT INTO doctor_jn_other.lines (pid) VALUES ('x')")
                    .execute(&mut c)
                    .await
                    .unwrap_err();
                assert!(e.to_string().contains("combkey doctor is changing"), "step {k}: {e}");
            }
            let finish = report(&url, "doctor_jn_p", &["--apply"]);
            assert_eq!(layouts(&finish), [("v7".to_string(), 200)], "after a stop at step {k}: {finish}");
            assert_eq!(finish["column_type"], "binary(16)", "step {k}");
            assert_eq!(text_state(&mut c, "doctor_jn").await, (100, 100, 200), "after a stop at step {k}");
            assert_eq!(
                show(&mut c, "doctor_jn_p").await,
                p_before.replace("`id` char(36) NOT NULL", "`id` binary(16) NOT NULL"),
                "step {k}"
            );
            assert_eq!(
                show(&mut c, "doctor_jn_other.lines").await,
                l_before.replace("`pid` char(36) DEFAULT NULL", "`pid` binary(16) DEFAULT NULL"),
                "step {k}"
            );
            let orphans = scalar(
                &mut c,
                "SELECT COUNT(*) FROM doctor_jn_other.lines l WHERE l.pid IS NOT NULL AND NOT EXISTS \
                 (SELECT 1 FROM doctor_jn_p p WHERE p.id = l.pid AND p.tenant = l.tenant)",
            )
            .await;
            assert_eq!(orphans, 0, "step {k}");
            assert_eq!(
                scalar(
                    &mut c,
                    "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE (EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE) \
                     IN (('test', 'doctor_jn_p'), ('doctor_jn_other', 'lines'))"
                )
                .await,
                0,
                "step {k}: the guards are gone"
            );
        }
        assert!(guarded >= 5, "stops with the foreign key dropped: {guarded}");
    }

    /// A row that references no parent before the run (loaded with foreign key checks off):
    /// the type change refuses before it changes anything (the foreign key could not be added
    /// back), and runs once the row is dealt with.
    #[tokio::test]
    async fn an_orphan_already_there_refuses_the_type_change_before_anything_changes() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        let ids = rtcomb_sql(100, 73);
        seed_text(&mut c, "doctor_orph", &ids).await;
        exec(
            &mut c,
            "SET FOREIGN_KEY_CHECKS = 0;
             INSERT INTO doctor_orph_other.lines (pid) VALUES ('922c9f4e-81ed-4608-a7ce-018bcfe56800');
             SET FOREIGN_KEY_CHECKS = 1",
        )
        .await;
        let (p_before, l_before) = (show(&mut c, "doctor_orph_p").await, show(&mut c, "doctor_orph_other.lines").await);
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_orph_p", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("1 rows of doctor_orph_other.lines"), "{}", stderr(&out));
        assert_eq!(show(&mut c, "doctor_orph_p").await, p_before, "nothing changed");
        assert_eq!(show(&mut c, "doctor_orph_other.lines").await, l_before, "the foreign key is still there");
        let guards = "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE (EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE) \
                      IN (('test', 'doctor_orph_p'), ('doctor_orph_other', 'lines'))";
        assert_eq!(scalar(&mut c, guards).await, 0, "no guard left behind");
        // Writes go on as before.
        exec(&mut c, "DELETE FROM doctor_orph_other.lines WHERE pid = '922c9f4e-81ed-4608-a7ce-018bcfe56800'").await;
        let after = report(&url, "doctor_orph_p", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(text_state(&mut c, "doctor_orph").await, (50, 50, 100));
    }

    /// A generated column computed from a `CHAR(36)` key would compute something else from 16
    /// bytes: the type change refuses before anything changes, naming it.
    #[tokio::test]
    async fn a_generated_column_computed_from_the_key_refuses_the_type_change() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_gen_p;
             CREATE TABLE doctor_gen_p (id CHAR(36) NOT NULL PRIMARY KEY, short_id CHAR(8) AS (LEFT(id, 8)) VIRTUAL)",
        )
        .await;
        for id in rtcomb_sql(20, 84) {
            exec(&mut c, &format!("INSERT INTO doctor_gen_p (id) VALUES ('{id}')")).await;
        }
        let before = show(&mut c, "doctor_gen_p").await;
        let r = report(&url, "doctor_gen_p", &[]);
        let refusal = r["refusal"].as_str().unwrap_or_default();
        assert!(refusal.contains("generated columns") && refusal.contains("short_id"), "{r}");
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_gen_p", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("short_id"), "{}", stderr(&out));
        assert_eq!(show(&mut c, "doctor_gen_p").await, before, "nothing changed");
        let journal = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME = 'combkey_doctor_journal'";
        if scalar(&mut c, journal).await > 0 {
            assert_eq!(
                scalar(&mut c, "SELECT COUNT(*) FROM combkey_doctor_journal WHERE target LIKE '%doctor_gen_p%'").await,
                0,
                "no journal row"
            );
        }
    }

    /// Two doctors on one table: the second is told another is converting it and changes
    /// nothing (the lock is `GET_LOCK('combkey_doctor:' || SHA1('db.table'))`, which a DBA
    /// can see with IS_USED_LOCK).
    #[tokio::test]
    async fn a_second_doctor_on_the_same_table_changes_nothing() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        let ids = rtcomb_sql(40, 85);
        seed_text(&mut c, "doctor_twice", &ids).await;
        let before = show(&mut c, "doctor_twice_p").await;
        let mut holder = connect().await;
        let name = "CONCAT('combkey_doctor:', SHA1('test.doctor_twice_p'))";
        assert_eq!(scalar(&mut holder, &format!("SELECT GET_LOCK({name}, 0)")).await, 1);
        let out =
            combkey(&["doctor", "--url", &url, "--table", "doctor_twice_p", "--apply", "--lock-timeout", "1s"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("another combkey doctor is converting test.doctor_twice_p"), "{}", stderr(&out));
        assert_eq!(show(&mut c, "doctor_twice_p").await, before, "nothing changed");
        assert_eq!(scalar(&mut holder, &format!("SELECT RELEASE_LOCK({name})")).await, 1);
        // A doctor converting another table that shares the referencing table holds its lock
        // too: this one waits its turn.
        let child = "CONCAT('combkey_doctor:', SHA1('doctor_twice_other.lines'))";
        assert_eq!(scalar(&mut holder, &format!("SELECT GET_LOCK({child}, 0)")).await, 1);
        let out =
            combkey(&["doctor", "--url", &url, "--table", "doctor_twice_p", "--apply", "--lock-timeout", "1s"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("is converting doctor_twice_other.lines"), "{}", stderr(&out));
        assert_eq!(show(&mut c, "doctor_twice_p").await, before, "nothing changed");
        assert_eq!(scalar(&mut holder, &format!("SELECT RELEASE_LOCK({child})")).await, 1);
        let after = report(&url, "doctor_twice_p", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(text_state(&mut c, "doctor_twice").await, (20, 20, 40));
    }

    /// A foreign key declared the common way (`FOREIGN KEY (pid) REFERENCES p (id)`, MariaDB
    /// makes the index and names it `pid`): after the type change the index keeps its name
    /// (MariaDB would otherwise rename it after the constraint when the key is added back).
    #[tokio::test]
    async fn a_foreign_key_with_the_index_mariadb_made_comes_back_as_it_was() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_ix_c; DROP TABLE IF EXISTS doctor_ix;
             CREATE TABLE doctor_ix (id CHAR(36) NOT NULL PRIMARY KEY);
             CREATE TABLE doctor_ix_c (n INT AUTO_INCREMENT PRIMARY KEY, pid CHAR(36), FOREIGN KEY (pid) REFERENCES doctor_ix (id))",
        )
        .await;
        for id in rtcomb_sql(30, 86) {
            exec(
                &mut c,
                &format!("INSERT INTO doctor_ix VALUES ('{id}'); INSERT INTO doctor_ix_c (pid) VALUES ('{id}')"),
            )
            .await;
        }
        let before = show(&mut c, "doctor_ix_c").await;
        assert!(before.contains("KEY `pid` (`pid`)"), "{before}");
        let after = report(&url, "doctor_ix", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(
            show(&mut c, "doctor_ix_c").await,
            before.replace("`pid` char(36) DEFAULT NULL", "`pid` binary(16) DEFAULT NULL")
        );
        let orphans = "SELECT COUNT(*) FROM doctor_ix_c c LEFT JOIN doctor_ix p ON p.id = c.pid WHERE p.id IS NULL";
        assert_eq!(scalar(&mut c, orphans).await, 0);
    }

    /// A chain of keys (a grandchild references the child's referencing column): refused
    /// before anything changes, for values only and for a type change, never a run that
    /// orphans the grandchild's rows.
    #[tokio::test]
    async fn a_chain_of_foreign_keys_is_refused_before_anything_changes() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        for (t, ty) in [("doctor_chb", "BINARY(16)"), ("doctor_chc", "CHAR(36)")] {
            exec(
                &mut c,
                &format!(
                    "DROP TABLE IF EXISTS {t}_g; DROP TABLE IF EXISTS {t}_c; DROP TABLE IF EXISTS {t};
                     CREATE TABLE {t} (id {ty} PRIMARY KEY);
                     CREATE TABLE {t}_c (pid {ty} PRIMARY KEY, FOREIGN KEY (pid) REFERENCES {t} (id));
                     CREATE TABLE {t}_g (n INT AUTO_INCREMENT PRIMARY KEY, cpid {ty}, FOREIGN KEY (cpid) REFERENCES {t}_c (pid))"
                ),
            )
            .await;
            for id in rtcomb_sql(40, 87) {
                let v = if ty == "CHAR(36)" { format!("'{id}'") } else { format!("0x{}", combkey_testutil::hex(id)) };
                exec(&mut c, &format!("INSERT INTO {t} VALUES ({v}); INSERT INTO {t}_c VALUES ({v}); INSERT INTO {t}_g (cpid) VALUES ({v})"))
                    .await;
            }
            let before =
                (show(&mut c, t).await, show(&mut c, &format!("{t}_c")).await, show(&mut c, &format!("{t}_g")).await);
            let keys =
                format!("SELECT COUNT(*) FROM {t}_g g JOIN {t}_c c ON c.pid = g.cpid JOIN {t} p ON p.id = c.pid");
            assert_eq!(scalar(&mut c, &keys).await, 40);
            let r = report(&url, t, &[]);
            assert!(r["refusal"].as_str().is_some_and(|m| m.contains(&format!("{t}_g"))), "{ty}: {r}");
            for extra in [&[][..], &["--online"][..]] {
                let mut args = vec!["doctor", "--url", &url, "--table", t, "--apply"];
                args.extend_from_slice(extra);
                let out = combkey(&args, None);
                assert_eq!(out.status.code(), Some(1), "{ty} {extra:?}: {}", stderr(&out));
                assert!(stderr(&out).contains("chain"), "{}", stderr(&out));
            }
            assert_eq!(scalar(&mut c, &keys).await, 40, "{ty}: every grandchild still joins");
            let after =
                (show(&mut c, t).await, show(&mut c, &format!("{t}_c")).await, show(&mut c, &format!("{t}_g")).await);
            assert_eq!(after, before, "{ty}: nothing changed");
        }
    }

    /// A view that reads a `CHAR(36)` key (it would select other rows from 16 bytes) and a
    /// trigger that writes UUID text into it: the type change refuses before anything changes.
    #[tokio::test]
    async fn views_and_triggers_on_a_text_key_refuse_the_type_change() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP VIEW IF EXISTS doctor_vw_v; DROP TABLE IF EXISTS doctor_vw;
             CREATE TABLE doctor_vw (id CHAR(36) NOT NULL PRIMARY KEY, n INT NOT NULL DEFAULT 0);
             CREATE VIEW doctor_vw_v AS SELECT id FROM doctor_vw WHERE id LIKE '0%'",
        )
        .await;
        for id in rtcomb_sql(20, 89) {
            exec(&mut c, &format!("INSERT INTO doctor_vw (id) VALUES ('{id}')")).await;
        }
        let before = show(&mut c, "doctor_vw").await;
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_vw", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("view test.doctor_vw_v"), "{}", stderr(&out));
        exec(
            &mut c,
            "DROP VIEW doctor_vw_v;
             CREATE TRIGGER doctor_vw_t BEFORE INSERT ON doctor_vw FOR EACH ROW SET NEW.id = COALESCE(NEW.id, UUID())",
        )
        .await;
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_vw", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("doctor_vw_t"), "{}", stderr(&out));
        assert_eq!(show(&mut c, "doctor_vw").await, before, "nothing changed");
        exec(&mut c, "DROP TRIGGER doctor_vw_t").await;
        // A view in another database over a table of the same name there reads none of this
        // table's keys: it does not refuse this table's type change (it once did).
        exec(
            &mut c,
            "DROP DATABASE IF EXISTS doctor_vw_other; CREATE DATABASE doctor_vw_other;
             CREATE TABLE doctor_vw_other.doctor_vw (id CHAR(36) NOT NULL PRIMARY KEY);
             CREATE VIEW doctor_vw_other.doctor_vw_v AS SELECT id FROM doctor_vw_other.doctor_vw",
        )
        .await;
        assert_eq!(report(&url, "doctor_vw", &["--apply"])["column_type"], "binary(16)");
        exec(&mut c, "DROP DATABASE doctor_vw_other; DROP TABLE IF EXISTS doctor_vw, combkey_keymap_doctor_vw").await;
    }

    /// A journaled run stopped with its guards up, then the tables re-created (a restore from
    /// a backup): the next run refuses, changing nothing, and says how to let go of the old
    /// journal; without it the tables convert as new.
    #[tokio::test]
    async fn a_journal_that_no_longer_matches_the_tables_is_refused() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        let ids = rtcomb_sql(30, 91);
        seed_text(&mut c, "doctor_stale", &ids).await;
        let n = steps(&url, "doctor_stale_p", &[]);
        // Stopped after the foreign key was dropped (guards up).
        let plan = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_stale_p", "--migration-sql"], None));
        let dropped =
            plan.lines().filter(|l| l.starts_with("-- step ")).position(|l| l.contains("drop foreign key")).unwrap();
        assert!(dropped < n);
        let out = apply_stopped_after(&url, "doctor_stale_p", dropped, &[]);
        assert!(!out.status.success());
        // Restored from a backup: the tables as they were, no guards.
        seed_text(&mut c, "doctor_stale", &ids).await;
        let before = show(&mut c, "doctor_stale_p").await;
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_stale_p", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("does not match the tables") && stderr(&out).contains("DELETE FROM"),
            "{}",
            stderr(&out)
        );
        assert_eq!(show(&mut c, "doctor_stale_p").await, before, "nothing changed");
        exec(&mut c, r#"DELETE FROM combkey_doctor_journal WHERE target = '"test"."doctor_stale_p"."id"'"#).await;
        let after = report(&url, "doctor_stale_p", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(text_state(&mut c, "doctor_stale").await, (15, 15, 30));
    }

    /// `BINARY(16)` keys (values only): one transaction with the session's foreign key checks
    /// off, parent and child changed together; stopped after any step, nothing changed. The
    /// foreign keys (composite, from another database) are never dropped or re-created.
    #[tokio::test]
    async fn binary_keys_change_in_one_transaction() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP DATABASE IF EXISTS doctor_bin_other; CREATE DATABASE doctor_bin_other; DROP TABLE IF EXISTS doctor_bin;
             CREATE TABLE doctor_bin (id BINARY(16) NOT NULL, tenant INT NOT NULL DEFAULT 1, PRIMARY KEY (id), UNIQUE KEY (id, tenant));
             CREATE TABLE doctor_bin_other.items (n INT AUTO_INCREMENT PRIMARY KEY, pid BINARY(16), tenant INT NOT NULL DEFAULT 1,
               CONSTRAINT doctor_bin_fk FOREIGN KEY (pid, tenant) REFERENCES test.doctor_bin (id, tenant) ON DELETE CASCADE);",
        )
        .await;
        for id in rtcomb_sql(300, 81) {
            let h = combkey_testutil::hex(id);
            exec(&mut c, &format!("INSERT INTO doctor_bin (id) VALUES (0x{h}); INSERT INTO doctor_bin_other.items (pid) VALUES (0x{h})")).await;
        }
        let keys = async |c: &mut MySqlConnection| {
            let k: Vec<String> =
                sqlx::query_scalar("SELECT HEX(id) FROM doctor_bin ORDER BY id").fetch_all(c).await.unwrap();
            k
        };
        let before = keys(&mut c).await;
        let defs = (show(&mut c, "doctor_bin").await, show(&mut c, "doctor_bin_other.items").await);
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_bin", "--migration-sql"], None));
        assert!(!sql.contains("DROP FOREIGN KEY"), "{sql}");
        let n = steps(&url, "doctor_bin", &[]);
        let commit = sql.lines().filter(|l| l.starts_with("-- step ")).position(|l| l.ends_with(": commit")).unwrap();
        for k in 0..commit {
            let out = apply_stopped_after(&url, "doctor_bin", k, &[]);
            assert!(!out.status.success());
            assert_eq!(
                keys(&mut c).await,
                before,
                "stopped after step {k} (before the commit at {commit} of {n}): nothing changed"
            );
        }
        let after = report(&url, "doctor_bin", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 300)], "{after}");
        assert_eq!((show(&mut c, "doctor_bin").await, show(&mut c, "doctor_bin_other.items").await), defs);
        let joined = scalar(
            &mut c,
            "SELECT COUNT(*) FROM doctor_bin_other.items i JOIN doctor_bin p ON p.id = i.pid AND p.tenant = i.tenant",
        )
        .await;
        assert_eq!(joined, 300);
    }

    /// System-versioned tables: a type change that would reach one is refused before anything
    /// changes (MariaDB would stop it half-way, error 4119, with the foreign keys dropped); a
    /// versioned parent is found (it was "no table"), and converting its binary keys says what
    /// its history keeps.
    #[tokio::test]
    async fn system_versioned_tables() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_ver_items; DROP TABLE IF EXISTS doctor_ver;
             CREATE TABLE doctor_ver (id CHAR(36) NOT NULL PRIMARY KEY);
             CREATE TABLE doctor_ver_items (k INT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NOT NULL,
               CONSTRAINT doctor_ver_fk FOREIGN KEY (parent) REFERENCES doctor_ver (id)) WITH SYSTEM VERSIONING;",
        )
        .await;
        for id in rtcomb_sql(20, 99) {
            exec(
                &mut c,
                &format!(
                    "INSERT INTO doctor_ver VALUES ('{id}'); INSERT INTO doctor_ver_items (parent) VALUES ('{id}')"
                ),
            )
            .await;
        }
        let (parent, child) = (show(&mut c, "doctor_ver").await, show(&mut c, "doctor_ver_items").await);
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_ver", "--apply"], None);
        assert!(!out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("test.doctor_ver_items is system-versioned"), "{}", stderr(&out));
        assert_eq!((show(&mut c, "doctor_ver").await, show(&mut c, "doctor_ver_items").await), (parent, child));

        exec(
            &mut c,
            "DROP TABLE doctor_ver_items; DROP TABLE doctor_ver;
             CREATE TABLE doctor_ver (id BINARY(16) NOT NULL PRIMARY KEY, note INT NOT NULL DEFAULT 0) WITH SYSTEM VERSIONING;",
        )
        .await;
        for id in rtcomb_sql(20, 100) {
            exec(&mut c, &format!("INSERT INTO doctor_ver (id) VALUES (0x{})", combkey_testutil::hex(id))).await;
        }
        let audit = report(&url, "doctor_ver", &[]);
        assert_eq!(audit["layouts"]["rtcomb-sql"], 20, "the versioned table is found: {audit}");
        assert!(audit["notes"].to_string().contains("system-versioned"), "{audit}");
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "doctor_ver", "--migration-sql"], None));
        assert!(sql.contains("note: test.doctor_ver is system-versioned"), "{sql}");
        let after = report(&url, "doctor_ver", &["--apply"]);
        assert_eq!(layouts(&after), [("v7".to_string(), 20)], "{after}");
        assert_eq!(
            scalar(&mut c, "SELECT COUNT(*) FROM doctor_ver FOR SYSTEM_TIME ALL").await,
            40,
            "the history kept the old keys"
        );
        exec(&mut c, "DROP TABLE doctor_ver").await;
    }

    /// Keys written `urn:uuid:...` or `{...}` in a text column become their ids, never zeros.
    #[tokio::test]
    async fn urn_and_braced_text_becomes_the_same_ids() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(
            &mut c,
            "DROP TABLE IF EXISTS doctor_urn; CREATE TABLE doctor_urn (id VARCHAR(45) NOT NULL PRIMARY KEY, expect CHAR(32) NOT NULL)",
        )
        .await;
        let g = V7Generator::new();
        for (i, t) in times(40).into_iter().enumerate() {
            let id = g.generate_at(t);
            let u = uuid::Uuid::from_bytes(id.into_bytes());
            let text = if i % 2 == 0 { format!("{}", u.urn()) } else { format!("{}", u.braced()).to_uppercase() };
            exec(&mut c, &format!("INSERT INTO doctor_urn VALUES ('{text}', '{}')", combkey_testutil::hex(id))).await;
        }
        let after = report(&url, "doctor_urn", &["--apply"]);
        assert_eq!(after["column_type"], "binary(16)", "{after}");
        assert_eq!(scalar(&mut c, "SELECT COUNT(*) FROM doctor_urn WHERE HEX(id) = expect").await, 40);
    }

    /// 5,000 random v4 keys, 5,000 v7 keys and 5,000 RT.Comb `Sql` keys: the RT.Comb keys
    /// become v7, and not one v4 key changes.
    #[tokio::test]
    async fn no_random_key_is_rewritten() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(&mut c, "DROP TABLE IF EXISTS doctor_mix; CREATE TABLE doctor_mix (id BINARY(16) NOT NULL PRIMARY KEY)")
            .await;
        let r = SeededRandom::new(91);
        let random: Vec<Comb> = (0..5000).map(|_| v4(&r)).collect();
        let g = V7Generator::new();
        let mut all = random.clone();
        all.extend(times(5000).into_iter().map(|t| g.generate_at(t)));
        all.extend(rtcomb_sql(5000, 92));
        for chunk in all.chunks(1000) {
            let v: Vec<String> = chunk.iter().map(|id| format!("(0x{})", combkey_testutil::hex(*id))).collect();
            exec(&mut c, &format!("INSERT INTO doctor_mix VALUES {}", v.join(","))).await;
        }
        let after = report(&url, "doctor_mix", &["--apply"]);
        assert_eq!(layouts(&after), [("v4".to_string(), 5000), ("v7".to_string(), 10_000)], "{after}");
        let hexes: Vec<String> = random.iter().map(|id| format!("0x{}", combkey_testutil::hex(*id))).collect();
        let still = scalar(&mut c, &format!("SELECT COUNT(*) FROM doctor_mix WHERE id IN ({})", hexes.join(","))).await;
        assert_eq!(still, 5000, "every random key is still there, unchanged");
    }

    /// The audit reads only: no `ANALYZE TABLE` (which rewrites the table's statistics), in a
    /// read-only transaction.
    #[tokio::test]
    async fn the_audit_reads_only() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(&mut c, "DROP TABLE IF EXISTS doctor_ro; CREATE TABLE doctor_ro (id BINARY(16) NOT NULL PRIMARY KEY) STATS_AUTO_RECALC=0").await;
        for id in rtcomb_sql(300, 97) {
            exec(&mut c, &format!("INSERT INTO doctor_ro VALUES (0x{})", combkey_testutil::hex(id))).await;
        }
        exec(&mut c, "ANALYZE TABLE doctor_ro").await;
        // Rows the statistics do not know of (no automatic recalculation): an ANALYZE would
        // count them.
        for id in rtcomb_sql(100, 98) {
            exec(&mut c, &format!("INSERT INTO doctor_ro VALUES (0x{})", combkey_testutil::hex(id))).await;
        }
        let stats = "SELECT CAST(n_rows AS SIGNED) FROM mysql.innodb_table_stats \
                     WHERE database_name = DATABASE() AND table_name = 'doctor_ro'";
        assert_eq!(scalar(&mut c, stats).await, 300);
        let r = report(&url, "doctor_ro", &[]);
        assert_eq!(r["read"], 400);
        assert_eq!(scalar(&mut c, stats).await, 300, "the table's statistics as they were: no ANALYZE");
    }

    /// A row lock held by another transaction: the run waits no longer than --lock-timeout
    /// (not MariaDB's default of 50 s), fails, and changes nothing.
    #[tokio::test]
    async fn a_held_row_lock_ends_the_wait_and_changes_nothing() {
        let url = combkey_testutil::mysql_url();
        let mut c = connect().await;
        exec(&mut c, "DROP TABLE IF EXISTS doctor_lk; CREATE TABLE doctor_lk (id BINARY(16) NOT NULL PRIMARY KEY)")
            .await;
        for id in rtcomb_sql(50, 95) {
            exec(&mut c, &format!("INSERT INTO doctor_lk VALUES (0x{})", combkey_testutil::hex(id))).await;
        }
        let before = scalar(&mut c, "SELECT COUNT(*) FROM doctor_lk WHERE SUBSTR(HEX(id), 13, 1) = '4'").await;
        let mut holder = connect().await;
        exec(&mut holder, "START TRANSACTION; SELECT * FROM doctor_lk FOR UPDATE").await;
        let started = std::time::Instant::now();
        let out = combkey(&["doctor", "--url", &url, "--table", "doctor_lk", "--apply", "--lock-timeout", "1s"], None);
        let waited = started.elapsed();
        exec(&mut holder, "ROLLBACK").await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).to_lowercase().contains("lock wait timeout"), "{}", stderr(&out));
        assert!(waited < std::time::Duration::from_secs(40), "{waited:?}");
        assert_eq!(scalar(&mut c, "SELECT COUNT(*) FROM doctor_lk WHERE SUBSTR(HEX(id), 13, 1) = '4'").await, before);
    }
}

mod sqlite {
    use super::*;

    fn url(name: &str) -> (tempdir::Dir, String) {
        let dir = tempdir::Dir::new(name);
        let url = format!("sqlite://{}?mode=rwc", dir.path.join("db.sqlite").display());
        (dir, url)
    }

    mod tempdir {
        /// A directory of its own, deleted at the end of the test.
        pub struct Dir {
            pub path: std::path::PathBuf,
        }

        impl Dir {
            pub fn new(name: &str) -> Dir {
                let path = std::env::temp_dir().join(format!("combkey-doctor-{}-{name}", std::process::id()));
                std::fs::create_dir_all(&path).unwrap();
                Dir { path }
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }

    /// Text keys become blobs in place: a `CHECK` on a referencing column's text and a
    /// generated column computed from it refuse before anything changes (the check would
    /// fail half-way; the generated column would silently hold bytes).
    #[tokio::test]
    async fn checks_and_generated_columns_on_text_keys_refuse() {
        let (_dir, url) = url("readers");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        for (child, says) in [
            ("CREATE TABLE g (n INTEGER PRIMARY KEY, pid TEXT REFERENCES p (id) CHECK (length(pid) = 36))", "CHECK"),
            // An index on an expression of the key would compute something else of 16 bytes.
            (
                "CREATE TABLE g (n INTEGER PRIMARY KEY, pid TEXT REFERENCES p (id)); CREATE INDEX p_lower ON p (lower(id))",
                "index p_lower",
            ),
            (
                "CREATE TABLE g (n INTEGER PRIMARY KEY, pid TEXT REFERENCES p (id), h TEXT GENERATED ALWAYS AS (substr(pid, 1, 8)) STORED)",
                "generated",
            ),
        ] {
            sqlx::raw_sql(AssertSqlSafe(format!(
                "DROP TABLE IF EXISTS g; DROP TABLE IF EXISTS p; CREATE TABLE p (id TEXT PRIMARY KEY); {child}"
            )))
            .execute(&mut c)
            .await
            .unwrap();
            for id in rtcomb_sql(20, 90) {
                sqlx::query("INSERT INTO p VALUES (?1); INSERT INTO g (pid) VALUES (?1)")
                    .bind(id.to_string())
                    .execute(&mut c)
                    .await
                    .unwrap();
            }
            let before: Vec<(String, String)> =
                sqlx::query_as("SELECT typeof(p.id), typeof(g.pid) FROM p JOIN g ON g.pid = p.id")
                    .fetch_all(&mut c)
                    .await
                    .unwrap();
            assert_eq!(before.len(), 20);
            let out = combkey(&["doctor", "--url", &url, "--table", "p", "--apply"], None);
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            assert!(stderr(&out).contains(says), "{}", stderr(&out));
            let after: Vec<(String, String)> =
                sqlx::query_as("SELECT typeof(p.id), typeof(g.pid) FROM p JOIN g ON g.pid = p.id")
                    .fetch_all(&mut c)
                    .await
                    .unwrap();
            assert_eq!(after, before, "nothing changed");
        }
    }

    /// A text-declared key's key map holds blobs (as every SQLite key map does): a run after
    /// one that finished (or stopped after its commit) takes that map as its own, where it
    /// once refused it as "no key map" for not being text (found by the generated cases, seeds
    /// 242 and 372).
    #[tokio::test]
    async fn a_text_declared_keys_key_map_is_its_own_on_the_next_run() {
        let (_dir, url) = url("textmap");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("CREATE TABLE p (id TEXT PRIMARY KEY)").execute(&mut c).await.unwrap();
        for id in rtcomb_sql(20, 94) {
            sqlx::query("INSERT INTO p VALUES (?1)").bind(id.to_string()).execute(&mut c).await.unwrap();
        }
        let apply = ["doctor", "--url", &url, "--table", "p", "--apply", "--key-map", "km"];
        ok(&combkey(&apply, None));
        let map: Vec<(String, String)> =
            sqlx::query_as("SELECT typeof(old_key), typeof(new_key) FROM km").fetch_all(&mut c).await.unwrap();
        assert_eq!(map.len(), 20);
        assert!(map.iter().all(|(o, n)| o == "blob" && n == "blob"), "{map:?}");
        // Rows the application wrote since as text, to convert on the next run.
        for id in rtcomb_sql(5, 95) {
            sqlx::query("INSERT INTO p VALUES (?1)").bind(id.to_string()).execute(&mut c).await.unwrap();
        }
        ok(&combkey(&apply, None));
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM km").fetch_one(&mut c).await.unwrap();
        assert_eq!(n, 25, "the second run added its keys to the same map");
        let text: i64 =
            sqlx::query_scalar("SELECT count(*) FROM p WHERE typeof(id) <> 'blob'").fetch_one(&mut c).await.unwrap();
        assert_eq!(text, 0);
    }

    /// A text-declared key keeps its declaration and its values become blobs: the plan says so
    /// (code comparing text ids finds none afterwards). A column of numbers is no UUID column.
    #[tokio::test]
    async fn text_declared_keys_say_their_values_become_blobs() {
        let (_dir, url) = url("blobs");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("CREATE TABLE p (id TEXT PRIMARY KEY); CREATE TABLE n (id INTEGER PRIMARY KEY)")
            .execute(&mut c)
            .await
            .unwrap();
        for id in rtcomb_sql(20, 93) {
            sqlx::query("INSERT INTO p VALUES (?1)").bind(id.to_string()).execute(&mut c).await.unwrap();
        }
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "p", "--migration-sql"], None));
        assert!(sql.contains("note: p.id is declared text") && sql.contains("16-byte blobs"), "{sql}");
        let out = combkey(&["doctor", "--url", &url, "--table", "n"], None);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("n.id is integer: a column of numbers holds no UUID"), "{}", stderr(&out));
    }

    /// One id held twice, as a 16-byte blob and as text: refused, with both values as stored.
    #[tokio::test]
    async fn one_id_as_blob_and_as_text_is_refused_with_both_values() {
        let (_dir, url) = url("same");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("CREATE TABLE p (id PRIMARY KEY)").execute(&mut c).await.unwrap();
        let ids = rtcomb_sql(20, 94);
        for id in &ids {
            sqlx::query("INSERT INTO p VALUES (?1)").bind(id.to_string()).execute(&mut c).await.unwrap();
        }
        sqlx::query("INSERT INTO p VALUES (?1)").bind(ids[5].as_bytes().to_vec()).execute(&mut c).await.unwrap();
        let r = report(&url, "p", &[]);
        let refusal = r["refusal"].as_str().unwrap_or_default();
        let blob = format!("X'{}'", combkey_testutil::hex(ids[5]).to_uppercase());
        for said in ["written differently".to_string(), format!("'{}'", ids[5]), blob, "2 values read as".to_string()] {
            assert!(refusal.contains(&said), "{said}: {refusal}");
        }
        let out = combkey(&["doctor", "--url", &url, "--table", "p", "--apply"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let n: i64 =
            sqlx::query_scalar("SELECT count(*) FROM p WHERE typeof(id) = 'text'").fetch_one(&mut c).await.unwrap();
        assert_eq!(n, 20, "nothing changed");
    }

    #[tokio::test]
    async fn a_v4_v7_mix_needs_nothing() {
        let (_dir, url) = url("mix");
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

    /// RT.Comb text keys become v7 blobs; children written `REFERENCES T` (no column: the
    /// primary key) in another letter case are found and follow; stopped after any step,
    /// nothing changed.
    #[tokio::test]
    async fn rtcomb_text_keys_become_v7_blobs() {
        let (_dir, url) = url("text");
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(
            "CREATE TABLE t (id TEXT PRIMARY KEY, old TEXT NOT NULL);
             CREATE TABLE t_items (n INTEGER PRIMARY KEY, parent TEXT NOT NULL REFERENCES T)",
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
        assert_eq!(before["referenced_by"], serde_json::json!(["t_items.parent"]), "REFERENCES T, no column");
        assert!(before["time_order"].as_f64().unwrap() < 0.65);
        let snapshot = async |c: &mut SqliteConnection| {
            let v: Vec<(Vec<u8>, String)> =
                sqlx::query_as("SELECT CAST(id AS BLOB), old FROM t ORDER BY old").fetch_all(c).await.unwrap();
            v
        };
        let rows = snapshot(&mut c).await;
        let sql = ok(&combkey(&["doctor", "--url", &url, "--table", "t", "--migration-sql"], None));
        let commit = sql.lines().filter(|l| l.starts_with("-- step ")).position(|l| l.ends_with(": commit")).unwrap();
        for k in 0..commit {
            let out = apply_stopped_after(&url, "t", k, &[]);
            assert!(!out.status.success());
            assert_eq!(snapshot(&mut c).await, rows, "stopped after step {k}: nothing changed");
        }
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
    // Names are quoted, never pasted into SQL: a name with SQL in it is just a table that
    // does not exist.
    let out = combkey(&["doctor", "--url", "sqlite::memory:", "--table", "t; DROP TABLE x"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no table \"t; DROP TABLE x\""), "{out:?}");
    let out = combkey(&["doctor", "--url", "sqlite::memory:", "--table", "missing"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no table \"missing\""), "{out:?}");
    let out = combkey(&["doctor", "--url", "oracle://scott:tiger@x/db", "--table", "t"], None);
    assert!(stderr(&out).contains("expected postgres://"), "{out:?}");
    assert!(!stderr(&out).contains("tiger"), "{out:?}");
    // An empty name is a usage error that shows no query.
    for args in [&["--table", ""][..], &["--table", "t", "--column", ""][..]] {
        let mut all = vec!["doctor", "--url", "sqlite::memory:"];
        all.extend_from_slice(args);
        let out = combkey(&all, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("name is empty") && !stderr(&out).contains("SELECT"), "{out:?}");
    }
    let out = combkey(
        &["doctor", "--url", "sqlite::memory:", "--table", "t", "--apply", "--online", "--batch-size", "0"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("give 1 to 1000000"), "{out:?}");
    // A lock timeout of 0 is PostgreSQL's "no timeout": refused, as is one past an hour.
    for t in ["0s", "2h"] {
        let out = combkey(&["doctor", "--url", "sqlite::memory:", "--table", "t", "--lock-timeout", t], None);
        assert_eq!(out.status.code(), Some(2), "{t}");
        assert!(stderr(&out).contains("a lock timeout from 1ms to 1h"), "{out:?}");
    }
}

/// Passwords and URLs, on servers that check passwords (the private PostgreSQL asks the members
/// of `combkey_password` for one, scripts/servers.sh; MariaDB asks every user that has one):
/// a password is never shown, whatever the URL's typo and the output mode; a URL the tool cannot
/// read reaches no server; the password can come from where each database's clients take it.
/// Every test password starts with `cKpw-`, which CI looks for in the whole test output.
mod logins {
    use super::*;
    use std::io::Write as _;
    use std::net::TcpListener;

    fn all(out: &Output) -> String {
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    }

    /// `host:port` of a URL of the test servers.
    fn host_port(url: &str) -> String {
        url.split('@').nth(1).unwrap().split('/').next().unwrap().to_string()
    }

    /// A folder of the test's own (removed at the end), for HOME and option files.
    struct Dir(std::path::PathBuf);
    impl Dir {
        fn new(name: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("combkey-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
        fn file(&self, name: &str, text: &str) -> String {
            use std::os::unix::fs::PermissionsExt;
            let p = self.0.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
            p.to_string_lossy().into_owned()
        }
        fn path(&self) -> String {
            self.0.to_string_lossy().into_owned()
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The typos that printed the password (and two that connected to another server): each
    /// refused before any connection (exit 2, no listener reached), in plain and `--json`
    /// output, never showing the password.
    #[test]
    fn a_mistyped_url_shows_no_password_and_reaches_no_server() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let pw = "cKpw-Typo7x";
        let urls = [
            format!("postgres//u:{pw}@127.0.0.1:{port}/test"),
            format!("u:{pw}@127.0.0.1:{port}/test"),
            format!("mysql:/root:{pw}@127.0.0.1:{port}/test"),
            format!("mysql:root:{pw}@127.0.0.1:{port}/test"),
            format!("postgres:/u:{pw}@127.0.0.1:{port}/test"),
            format!("postgresql:///u:{pw}@127.0.0.1:{port}/test"),
            format!("mariadb//root:{pw}@127.0.0.1:{port}/test"),
            format!("postgres://u:{pw}/x@127.0.0.1:{port}/test"),
            format!("postgres://u:{pw}"),
            format!("mysql://root:{pw}@/test"),
            format!("psql://u:{pw}@127.0.0.1:{port}/test"),
            // libpq's keyword/value strings and ADO.NET's (a break-test saw them shown whole).
            format!("host=127.0.0.1 port={port} user=postgres password={pw} dbname=test"),
            format!("dbname=test password='{pw}'"),
            format!("Server=127.0.0.1;Port={port};User Id=u;Password={pw};"),
        ];
        for url in &urls {
            for json in [false, true] {
                let mut args = vec!["doctor", "--url", url.as_str(), "--table", "t"];
                if json {
                    args.push("--json");
                }
                let out = combkey(&args, None);
                let text = all(&out);
                assert_eq!(out.status.code(), Some(2), "{url}: {text}");
                assert!(!text.contains(pw), "{url} (json {json}) showed its password: {text}");
                assert!(
                    text.contains("nothing was connected to") && text.contains("expected postgres://"),
                    "{url}: {text}"
                );
                assert!(!text.contains("combkey: combkey"), "{text}");
                if json {
                    let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
                    assert_eq!(v["error"], "usage", "{url}");
                }
            }
        }
        assert!(listener.accept().is_err(), "a mistyped URL reached the server");
        // The same URL typed right is read, and the refused connection is a connection error.
        let out =
            combkey(&["doctor", "--url", &format!("postgres://u:{pw}@127.0.0.1:1/x"), "--table", "t", "--json"], None);
        let text = all(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(!text.contains(pw), "{text}");
        let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
        assert_eq!(v["error"], "connection", "{text}");
        assert!(v["message"].as_str().unwrap().contains("u:***@127.0.0.1:1/x"), "{text}");
    }

    /// A server that takes the connection and never answers (found by a break-test: the run
    /// hung for ever): a connection error within --connect-timeout, on both drivers.
    #[test]
    fn a_server_that_never_answers_ends_within_the_connect_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let held = std::thread::spawn(move || {
            let mut kept = Vec::new();
            listener.set_nonblocking(true).unwrap();
            let started = std::time::Instant::now();
            while started.elapsed() < std::time::Duration::from_secs(60)
                && !stop.load(std::sync::atomic::Ordering::Relaxed)
            {
                if let Ok((s, _)) = listener.accept() {
                    kept.push(s);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            kept.len()
        });
        for scheme in ["postgres", "mysql"] {
            let url = format!("{scheme}://u:cKpw-Hang1@127.0.0.1:{port}/test");
            let out = combkey(&["doctor", "--url", &url, "--table", "t", "--connect-timeout", "1s", "--json"], None);
            let text = all(&out);
            assert_eq!(out.status.code(), Some(1), "{text}");
            assert!(text.contains("no answer within 1.0 s"), "{text}");
            assert!(!text.contains("cKpw-"), "{text}");
            let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
            assert_eq!(v["error"], "connection");
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(held.join().unwrap() >= 2, "both connected, and were never answered");
    }

    /// `--lock-timeout 0` is refused as its help says, with the reason.
    #[test]
    fn a_lock_timeout_of_0_is_refused_with_the_reason() {
        let out = combkey(&["doctor", "--url", "sqlite::memory:", "--table", "t", "--lock-timeout", "0"], None);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("0 would let PostgreSQL wait for a lock for ever"), "{}", stderr(&out));
    }

    #[test]
    fn without_url_or_database_url_it_says_what_to_give() {
        let out = Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args(["doctor", "--table", "t"])
            .env_remove("DATABASE_URL")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("give --url URL, or set DATABASE_URL"), "{}", stderr(&out));
    }

    /// A libpq keyword/value string in `DATABASE_URL`: refused, its password not shown.
    #[test]
    fn a_keyword_value_database_url_shows_no_password() {
        let pw = "dbUrl-Kv9pw";
        for json in [false, true] {
            let mut args = vec!["doctor", "--table", "t"];
            if json {
                args.push("--json");
            }
            let out = Command::new(env!("CARGO_BIN_EXE_combkey"))
                .args(&args)
                .env("DATABASE_URL", format!("host=127.0.0.1 port=1 password={pw} dbname=x"))
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let text = all(&out);
            assert_eq!(out.status.code(), Some(2), "{text}");
            assert!(!text.contains(pw), "showed its password: {text}");
            assert!(text.contains("password=***"), "{text}");
        }
    }

    mod postgres {
        use super::*;

        async fn exec(sql: &str) {
            let mut c = PgConnection::connect(&combkey_testutil::pg_url()).await.unwrap();
            sqlx::raw_sql(AssertSqlSafe(sql.to_string()))
                .execute(&mut c)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }

        /// A role that must give its password, and a table of COMB keys it may read.
        async fn role(name: &str, pw: &str) {
            exec(&format!(
                "DROP TABLE IF EXISTS {name}_t; DROP ROLE IF EXISTS {name};
                 CREATE ROLE {name} LOGIN PASSWORD '{pw}' IN ROLE combkey_password;
                 CREATE TABLE {name}_t (id uuid PRIMARY KEY);
                 INSERT INTO {name}_t SELECT gen_random_uuid() FROM generate_series(1, 20);
                 GRANT SELECT ON {name}_t TO {name}"
            ))
            .await;
        }

        async fn drop_role(name: &str) {
            exec(&format!("DROP TABLE IF EXISTS {name}_t; DROP ROLE IF EXISTS {name}")).await;
        }

        /// The URL of the role, with no password.
        fn url(name: &str) -> String {
            format!("postgres://{name}@{}/test", host_port(&combkey_testutil::pg_url()))
        }

        fn audit(name: &str, url: &str, env: &[(&str, &str)]) -> Output {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_combkey"));
            cmd.args(["doctor", "--url", url, "--table", &format!("{name}_t"), "--json"])
                .stdin(std::process::Stdio::null())
                .env_remove("PGPASSWORD")
                .env_remove("PGPASSFILE");
            for (k, v) in env {
                cmd.env(k, v);
            }
            cmd.output().unwrap()
        }

        #[tokio::test]
        async fn the_password_comes_from_the_url_pgpassword_pgpassfile_or_pgpass() {
            let name = "login_pg_sources";
            let pw = "cKpw-Pg-9q:z";
            role(name, pw).await;
            let home = Dir::new(name);
            let encoded = pw.replace(':', "%3A");
            let with_pw = url(name).replace(&format!("{name}@"), &format!("{name}:{encoded}@"));
            // No password: the server refuses the login, which is a connection error.
            let out = audit(name, &url(name), &[("HOME", &home.path())]);
            assert_eq!(out.status.code(), Some(1), "{}", all(&out));
            assert!(all(&out).contains("password authentication failed"), "{}", all(&out));
            // A wrong one: refused, and not shown.
            let wrong = with_pw.replace("9q", "0q");
            let out = audit(name, &wrong, &[("HOME", &home.path())]);
            assert_eq!(out.status.code(), Some(1));
            assert!(!all(&out).contains("cKpw-"), "{}", all(&out));
            assert_eq!(
                serde_json::from_str::<Value>(String::from_utf8_lossy(&out.stdout).trim()).unwrap()["error"],
                "connection"
            );
            // In the URL, in PGPASSWORD, in PGPASSFILE's file, in ~/.pgpass.
            let line = format!("{}:test:{name}:{}\n", host_port(&combkey_testutil::pg_url()), pw.replace(':', "\\:"));
            let file = home.file("passfile", &line);
            for (how, url, env) in [
                ("the URL", with_pw.clone(), vec![("HOME", home.path())]),
                ("PGPASSWORD", url(name), vec![("HOME", home.path()), ("PGPASSWORD", pw.to_string())]),
                ("PGPASSFILE", url(name), vec![("HOME", home.path()), ("PGPASSFILE", file.clone())]),
            ] {
                let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let out = audit(name, &url, &env);
                assert!(out.status.success(), "{how}: {}", all(&out));
                assert!(!all(&out).contains("cKpw-"), "{how}: {}", all(&out));
                let v: Value =
                    serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
                assert_eq!(v["rows"], 20, "{how}");
            }
            home.file(".pgpass", &line);
            let out = audit(name, &url(name), &[("HOME", &home.path())]);
            assert!(out.status.success(), "~/.pgpass: {}", all(&out));
            drop_role(name).await;
        }

        /// What the command under `script` printed up to its password prompt, once the prompt
        /// reads with the terminal's echo off (a line typed before that is echoed by the
        /// terminal itself, as anywhere): read from `stty` on the command's terminal.
        fn prompted(child: &mut std::process::Child, stdout: &mut std::process::ChildStdout) -> Vec<u8> {
            use std::io::Read as _;
            let mut seen = Vec::new();
            let mut buf = [0u8; 256];
            while !String::from_utf8_lossy(&seen).contains("Password for ") {
                let n = stdout.read(&mut buf).unwrap();
                assert!(n > 0, "no prompt: {}", String::from_utf8_lossy(&seen));
                seen.extend_from_slice(&buf[..n]);
            }
            let script_pid = child.id();
            let tty = loop {
                let kids = std::fs::read_to_string(format!("/proc/{script_pid}/task/{script_pid}/children"))
                    .unwrap_or_default();
                let tty = kids.split_whitespace().find_map(|k| std::fs::read_link(format!("/proc/{k}/fd/0")).ok());
                if let Some(tty) = tty.filter(|t| t.starts_with("/dev/pts")) {
                    break tty;
                }
                assert!(child.try_wait().unwrap().is_none(), "the command ended before it read the password");
                std::thread::yield_now();
            };
            loop {
                let stty = Command::new("stty").arg("-F").arg(&tty).arg("-a").output().unwrap();
                if String::from_utf8_lossy(&stty.stdout).split_whitespace().any(|w| w == "-echo") {
                    return seen;
                }
                assert!(child.try_wait().unwrap().is_none(), "the command ended before it read the password");
                std::thread::yield_now();
            }
        }

        /// `--ask-pass` on a terminal (`script` gives the command one): the password typed is
        /// used and never echoed; without a terminal it says so and connects nowhere.
        #[tokio::test]
        async fn ask_pass_prompts_on_the_terminal() {
            let name = "login_pg_ask";
            let pw = "cKpw-Asked-4";
            role(name, pw).await;
            let home = Dir::new(name);
            let cmd = format!(
                "{} doctor --url {} --table {name}_t --ask-pass --json",
                env!("CARGO_BIN_EXE_combkey"),
                url(name)
            );
            let mut child = Command::new("script")
                .args(["-qec", &cmd, "/dev/null"])
                .env("HOME", home.path())
                .env_remove("PGPASSWORD")
                .env_remove("PGPASSFILE")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("script (util-linux)");
            // Typed once the prompt is there: the terminal echoes nothing while it reads.
            let mut stdin = child.stdin.take().unwrap();
            let mut stdout = child.stdout.take().unwrap();
            let mut seen = prompted(&mut child, &mut stdout);
            stdin.write_all(format!("{pw}\n").as_bytes()).unwrap();
            drop(stdin);
            {
                use std::io::Read as _;
                stdout.read_to_end(&mut seen).unwrap();
            }
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&seen).into_owned();
            assert!(out.status.success(), "{:?}: {text}{}", out.status, stderr(&out));
            assert!(!text.contains(pw), "the password was echoed: {text}");
            assert!(text.contains(&format!("Password for postgres://{name}@")), "{text}");
            assert!(text.contains("\"rows\":20"), "{text}");
            // Ctrl-C at the prompt: the command stops, and the terminal echoes again (it was
            // left without echo).
            let cmd = format!(
                "{} doctor --url {} --table {name}_t --ask-pass; stty -a",
                env!("CARGO_BIN_EXE_combkey"),
                url(name)
            );
            let mut child = Command::new("script")
                .args(["-qec", &cmd, "/dev/null"])
                .env("HOME", home.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("script (util-linux)");
            let mut stdin = child.stdin.take().unwrap();
            let mut stdout = child.stdout.take().unwrap();
            let mut seen = prompted(&mut child, &mut stdout);
            stdin.write_all(b"\x03").unwrap();
            drop(stdin);
            {
                use std::io::Read as _;
                stdout.read_to_end(&mut seen).unwrap();
            }
            let _ = child.wait();
            let text = String::from_utf8_lossy(&seen).into_owned();
            assert!(text.contains("interrupted at the password prompt"), "{text}");
            let settings = text.rsplit("Password for ").next().unwrap_or_default();
            assert!(settings.split_whitespace().any(|w| w == "echo"), "the terminal echoes again: {text}");
            // No terminal: refused, nothing asked.
            let out = combkey(&["doctor", "--url", &url(name), "--table", &format!("{name}_t"), "--ask-pass"], None);
            assert_eq!(out.status.code(), Some(2), "{}", all(&out));
            assert!(stderr(&out).contains("--ask-pass: standard input is not a terminal"), "{}", all(&out));
            drop_role(name).await;
        }
    }

    mod mariadb {
        use super::*;

        async fn exec(sql: &str) {
            let mut c = MySqlConnection::connect(&combkey_testutil::mysql_url()).await.unwrap();
            sqlx::raw_sql(AssertSqlSafe(sql.to_string()))
                .execute(&mut c)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }

        #[tokio::test]
        async fn the_password_comes_from_my_cnf_or_a_named_option_file() {
            let name = "login_my_cnf";
            exec(&format!(
                "DROP TABLE IF EXISTS {name}_t; DROP USER IF EXISTS '{name}'@'%';
                 CREATE USER '{name}'@'%' IDENTIFIED BY 'cKpw-My \"#1';
                 CREATE TABLE {name}_t (id BINARY(16) PRIMARY KEY);
                 INSERT INTO {name}_t VALUES (UNHEX(REPLACE(UUID(), '-', ''))), (UNHEX(REPLACE(UUID(), '-', '')));
                 GRANT SELECT ON test.{name}_t TO '{name}'@'%'"
            ))
            .await;
            let home = Dir::new(name);
            let hp = host_port(&combkey_testutil::mysql_url());
            let run = |url: &str, extra: &[&str]| {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_combkey"));
                cmd.args(["doctor", "--url", url, "--table", &format!("{name}_t"), "--json"])
                    .args(extra)
                    .env("HOME", home.path())
                    .env_remove("DATABASE_URL")
                    .stdin(std::process::Stdio::null());
                cmd.output().unwrap()
            };
            let cnf = "[mysqld]\npassword=wrong\n[client]\npassword=\"cKpw-My \\\"#1\" # the login\n".to_string();
            // No option file: the login is refused.
            let out = run(&format!("mysql://{name}@{hp}/test"), &[]);
            assert_eq!(out.status.code(), Some(1), "{}", all(&out));
            assert!(all(&out).contains("Access denied"), "{}", all(&out));
            // ~/.my.cnf.
            home.file(".my.cnf", &cnf);
            let out = run(&format!("mysql://{name}@{hp}/test"), &[]);
            assert!(out.status.success(), "~/.my.cnf: {}", all(&out));
            assert!(!all(&out).contains("cKpw-"), "{}", all(&out));
            // A file named by --defaults-file, its user too, instead of ~/.my.cnf.
            home.file(".my.cnf", "[client]\npassword=cKpw-wrong\n");
            let named = home.file("login.cnf", &format!("[client]\nuser={name}\n{}", cnf.lines().nth(3).unwrap()));
            let out = run(&format!("mysql://{hp}/test"), &["--defaults-file", &named]);
            assert!(out.status.success(), "--defaults-file: {}", all(&out));
            let out = run(&format!("mysql://{name}@{hp}/test"), &[]);
            assert_eq!(out.status.code(), Some(1), "the wrong ~/.my.cnf: {}", all(&out));
            assert!(!all(&out).contains("cKpw-"), "{}", all(&out));
            // A file anyone may write is not trusted with the login (as the mysql client does).
            {
                use std::os::unix::fs::PermissionsExt;
                let named = home.file("open.cnf", &cnf);
                std::fs::set_permissions(&named, std::fs::Permissions::from_mode(0o666)).unwrap();
                let out = run(&format!("mysql://{name}@{hp}/test"), &["--defaults-file", &named]);
                assert_eq!(out.status.code(), Some(1), "{}", all(&out));
                assert!(stderr(&out).contains("anyone may write to it"), "{}", all(&out));
            }
            // A --defaults-file that is not there is said, before any connection.
            let out = run(&format!("mysql://{name}@{hp}/test"), &["--defaults-file", "/nonexistent/x.cnf"]);
            assert_eq!(out.status.code(), Some(2));
            assert!(stderr(&out).contains("reading the MySQL option file /nonexistent/x.cnf"), "{}", all(&out));
            // DATABASE_URL where --url is left out.
            home.file(".my.cnf", &cnf);
            let out = Command::new(env!("CARGO_BIN_EXE_combkey"))
                .args(["doctor", "--table", &format!("{name}_t"), "--json"])
                .env("HOME", home.path())
                .env("DATABASE_URL", format!("mysql://{name}@{hp}/test"))
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success(), "DATABASE_URL: {}", all(&out));
            exec(&format!("DROP TABLE IF EXISTS {name}_t; DROP USER IF EXISTS '{name}'@'%'")).await;
        }
    }
}

/// An online run that would change the key column's type (MariaDB `CHAR(36)` to `BINARY(16)`,
/// PostgreSQL `text` to `uuid`) while an application binds the key as text: refused, nothing
/// changed (after the swap every insert failed with 1406 and every update by key matched no
/// row); the two-step path it names, `--keep-type` now, keeps the application working
/// throughout, its writes counted.
mod type_change_online {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// What the application saw: writes that failed, updates by key that matched no row.
    #[derive(Debug, Default)]
    struct Seen {
        written: usize,
        failed: Vec<String>,
        missed: usize,
    }

    /// An application binding its keys as text: inserts a row and a child, then updates the
    /// row by its key, until `stop`.
    async fn app(url: String, t: String, stop: Arc<AtomicBool>) -> Seen {
        let mut seen = Seen::default();
        let mut c = sqlx::AnyConnection::connect(&url).await.unwrap();
        let mut seq = 100_000i64;
        let ph = |i: usize| if url.starts_with("postgres") { format!("${i}") } else { "?".to_string() };
        while !stop.load(Ordering::Relaxed) || seen.written < 20 {
            seq += 1;
            let id = Comb::new().to_string();
            let insert = format!("INSERT INTO {t} (id, seq) VALUES ({}, {})", ph(1), ph(2));
            let done = sqlx::query(AssertSqlSafe(insert)).bind(id.clone()).bind(seq).execute(&mut c).await;
            if let Err(e) = done {
                seen.failed.push(e.to_string());
                continue;
            }
            let update = format!("UPDATE {t} SET seq = seq + 1 WHERE id = {}", ph(1));
            match sqlx::query(AssertSqlSafe(update)).bind(id).execute(&mut c).await {
                Ok(r) if r.rows_affected() == 1 => seen.written += 1,
                Ok(_) => seen.missed += 1,
                Err(e) => seen.failed.push(e.to_string()),
            }
            tokio::task::yield_now().await;
        }
        seen
    }

    async fn keys(c: &mut sqlx::AnyConnection, t: &str) -> Vec<String> {
        let sql = format!("SELECT id FROM {t} ORDER BY seq");
        sqlx::query_scalar::<_, String>(AssertSqlSafe(sql)).fetch_all(c).await.unwrap()
    }

    /// RT.Comb keys as text (they do not sort on either database), 300 rows.
    async fn check(url: &str, t: &str, key_type: &str) {
        sqlx::any::install_default_drivers();
        let mut c = sqlx::AnyConnection::connect(url).await.unwrap();
        let reset =
            format!("DROP TABLE IF EXISTS {t}; DROP TABLE IF EXISTS _{t}_old; DROP TABLE IF EXISTS combkey_keymap_{t}");
        sqlx::raw_sql(AssertSqlSafe(reset.clone())).execute(&mut c).await.unwrap();
        let create = format!("CREATE TABLE {t} (id {key_type} NOT NULL PRIMARY KEY, seq BIGINT NOT NULL)");
        sqlx::raw_sql(AssertSqlSafe(create)).execute(&mut c).await.unwrap();
        let values: Vec<String> =
            rtcomb_sql(300, 41).iter().enumerate().map(|(i, k)| format!("('{k}', {i})")).collect();
        let insert = format!("INSERT INTO {t} (id, seq) VALUES {}", values.join(", "));
        sqlx::raw_sql(AssertSqlSafe(insert)).execute(&mut c).await.unwrap();
        let before = keys(&mut c, t).await;
        // Refused, nothing changed, the two steps named.
        let out = combkey(&["doctor", "--url", url, "--table", t, "--apply", "--online", "--json"], None);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert_eq!(out.status.code(), Some(1), "{text}");
        for part in ["--keep-type", "--app-ready-for-new-type", "Nothing was changed"] {
            assert!(text.contains(part), "{part}: {text}");
        }
        assert_eq!(keys(&mut c, t).await, before, "nothing changed");
        // The first step under the application's writes: it keeps working.
        let stop = Arc::new(AtomicBool::new(false));
        let writer = tokio::spawn(app(url.to_string(), t.to_string(), Arc::clone(&stop)));
        let args: Vec<String> =
            ["doctor", "--url", url, "--table", t, "--apply", "--online", "--keep-type", "--drop-old", "--json"]
                .iter()
                .map(|s| (*s).to_string())
                .collect();
        let out = tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            combkey(&args, None)
        })
        .await
        .unwrap();
        stop.store(true, Ordering::Relaxed);
        let seen = writer.await.unwrap();
        let after = ok(&out);
        assert!(after.contains("\"v7\""), "{after}");
        assert!(seen.failed.is_empty() && seen.missed == 0, "the application broke: {seen:?}");
        assert!(seen.written >= 20, "{seen:?}");
        sqlx::raw_sql(AssertSqlSafe(reset)).execute(&mut c).await.unwrap();
    }

    #[tokio::test]
    async fn mariadb_char36() {
        check(&combkey_testutil::mysql_url(), "tco_my", "CHAR(36)").await;
    }

    #[tokio::test]
    async fn postgres_text() {
        check(&combkey_testutil::pg_url(), "tco_pg", "text").await;
    }
}
