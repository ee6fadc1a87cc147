//! `combkey doctor` on a primary with replicas behind it, the production case: a PostgreSQL
//! primary with a streaming standby (behind a physical slot) and a logical subscriber, and a
//! MariaDB primary with a GTID replica (`scripts/servers.sh pgrepl myrepl`, which the test
//! command starts). What doctor creates never stops replication; its throttle waits, and says
//! why, while a replica's lag cannot be read; a URL that is no replica is refused.
//!
//! The scenarios of each primary run one after another in one test: they stop and start the
//! replicas the others rely on.

use std::process::{Command, Output, Stdio};

use combkey_testutil::Running;
use std::time::{Duration, Instant};

use combkey::layouts::RtCombLayout;
use combkey::{Comb, RandomSource, SeededRandom, Timestamp};
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection};

fn urls(var: &str) -> Vec<String> {
    combkey_testutil::url(var).split(',').map(str::to_string).collect()
}

/// The same server's URL with another database.
fn with_db(url: &str, db: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{db}")
}

/// `args` with `--app-ready-for-new-type` added to an online run that may change the key
/// column's type (no `--keep-type`): these tests' applications are ready for the new type, or
/// check what the type change does; the refusal without the flag is tested in doctor.rs
/// (`an_online_type_change_is_refused_until_the_application_is_ready`).
fn ready<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut args = args.to_vec();
    if args.contains(&"--online") && !args.contains(&"--keep-type") && !args.contains(&"--app-ready-for-new-type") {
        args.push("--app-ready-for-new-type");
    }
    args
}

fn combkey(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_combkey")).args(ready(args)).stdin(Stdio::null()).output().expect("run combkey")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `--apply --online` of `table` with `--replica-url` a server that is no replica: refused.
fn refused_as_no_replica(url: &str, table: &str, not_a_replica: &str) {
    let out = combkey(&[
        "doctor",
        "--url",
        url,
        "--table",
        table,
        "--apply",
        "--online",
        "--max-lag",
        "5s",
        "--replica-url",
        not_a_replica,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("is no replica"), "{}", text(&out));
}

/// RT.Comb `Sql` keys a second apart.
fn rtcomb(n: usize, seed: u64) -> Vec<Comb> {
    let r = SeededRandom::new(seed);
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    (0..n)
        .map(|i| {
            let mut b = [0u8; 16];
            r.fill_bytes(&mut b);
            b[6] = 0x40 | (b[6] & 0x0f);
            b[8] = 0x80 | (b[8] & 0x3f);
            let t = t0.saturating_add_ms(1000 * i64::try_from(i).unwrap());
            RtCombLayout::Sql.create(t, Comb::from_bytes(b)).unwrap()
        })
        .collect()
}

/// v1 keys (PostgreSQL's `uuid_generate_v1()` layout) a second apart.
fn v1(n: usize) -> Vec<Comb> {
    let clock = std::sync::Arc::new(combkey::FixedClock::new("2026-01-01T00:00:00Z".parse().unwrap()));
    let g = combkey::layouts::V1Generator::with_clock_and_random(std::sync::Arc::clone(&clock), SeededRandom::new(9));
    (0..n)
        .map(|_| {
            clock.advance(Duration::from_secs(1));
            g.generate()
        })
        .collect()
}

/// Polls `check` every 100 ms until it holds, up to `limit`: the condition, never a fixed wait.
async fn until(what: &str, limit: Duration, mut check: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `combkey` with `args` (an online type change's flag added) in the background.
fn start(args: &[&str]) -> Running {
    Running::start(Command::new(env!("CARGO_BIN_EXE_combkey")).args(ready(args)))
}

mod postgres {
    use super::*;

    async fn exec(c: &mut PgConnection, sql: &str) {
        sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn count(c: &mut PgConnection, sql: &str) -> i64 {
        sqlx::query_scalar(AssertSqlSafe(sql.to_string())).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// A fresh database `db` on the server of `url`, and a connection to it.
    async fn database(url: &str, db: &str) -> PgConnection {
        let mut admin = PgConnection::connect(url).await.unwrap_or_else(|e| panic!("{url}: {e}"));
        exec(&mut admin, &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await;
        exec(&mut admin, &format!("CREATE DATABASE {db}")).await;
        PgConnection::connect(&with_db(url, db)).await.unwrap()
    }

    /// A parent of `ids` and a child per parent.
    async fn table(c: &mut PgConnection, t: &str, key: &str, ids: &[Comb]) {
        exec(
            c,
            &format!(
                "CREATE TABLE {t} (id {key} PRIMARY KEY, n int NOT NULL DEFAULT 0);
                 CREATE TABLE {t}_items (k serial PRIMARY KEY, parent {key} NOT NULL REFERENCES {t} (id));
                 CREATE INDEX ON {t}_items (parent);"
            ),
        )
        .await;
        if ids.is_empty() {
            return;
        }
        let values: Vec<String> = ids.iter().map(|id| format!("('{id}')")).collect();
        exec(c, &format!("INSERT INTO {t} (id) VALUES {}", values.join(","))).await;
        exec(c, &format!("INSERT INTO {t}_items (parent) SELECT id FROM {t}")).await;
    }

    /// Keys with version 7 in `t`.
    async fn v7(c: &mut PgConnection, t: &str) -> i64 {
        count(c, &format!("SELECT count(*) FROM {t} WHERE substring(id::text, 15, 1) = '7'")).await
    }

    fn pgrepl(cmd: &str) {
        let out = Command::new("bash")
            .args(["scripts/pgrepl.sh", cmd])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .output()
            .unwrap();
        assert!(out.status.success(), "pgrepl.sh {cmd}: {}", text(&out));
    }

    /// Starts the standby again however the test ends.
    struct StandbyBack;

    impl Drop for StandbyBack {
        fn drop(&mut self) {
            pgrepl("start-standby");
        }
    }

    #[tokio::test]
    async fn standby_and_logical_subscriber() {
        let [primary, standby, subscriber]: [String; 3] =
            urls("COMBKEY_PGREPL_URLS").try_into().expect("three URLs: primary, standby, subscriber");
        // What an earlier run that failed half-way may have left: the subscription (and its
        // slot on the primary, which would hold WAL back unused).
        if let Ok(mut old) = PgConnection::connect(&with_db(&subscriber, "doctor_logical")).await {
            let _ = sqlx::raw_sql(
                "ALTER SUBSCRIPTION doctor_sub DISABLE; ALTER SUBSCRIPTION doctor_sub SET (slot_name = NONE); \
                 DROP SUBSCRIPTION doctor_sub",
            )
            .execute(&mut old)
            .await;
        }
        let mut admin = PgConnection::connect(&primary).await.unwrap();
        until("the old subscription's slot released", Duration::from_secs(60), async || {
            count(&mut admin, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'doctor_sub' AND active")
                .await
                == 0
        })
        .await;
        exec(
            &mut admin,
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'doctor_sub'",
        )
        .await;

        // 1. A standby that left pg_stat_replication while its slot holds WAL back: the run
        //    waits and says why, converts nothing meanwhile, and goes on when it is back.
        let mut c = database(&primary, "doctor_standby").await;
        table(&mut c, "t", "uuid", &rtcomb(300, 1)).await;
        let url = with_db(&primary, "doctor_standby");
        let back = StandbyBack;
        pgrepl("stop-standby");
        let mut run = start(&[
            "doctor",
            "--url",
            &url,
            "--table",
            "t",
            "--apply",
            "--online",
            "--batch-size",
            "50",
            "--max-lag",
            "5s",
        ]);
        let line = run.wait_for_line(
            &["waiting before the next batch", "combkey_standby", "not in use"],
            Duration::from_secs(120),
        );
        assert!(line.contains("holds WAL back"), "{line}");
        assert_eq!(v7(&mut c, "t").await, 0, "nothing converted while the lag cannot be read");
        drop(back);
        let (ok, err) = run.finish(Duration::from_secs(300));
        assert!(ok, "{err}");
        assert_eq!(v7(&mut c, "t").await, 300);

        // 2. --replica-url: the standby's own lag is read; the primary is no replica and is
        //    refused before anything changes.
        exec(&mut c, "CREATE TABLE u (id uuid PRIMARY KEY)").await;
        let values: Vec<String> = rtcomb(100, 2).iter().map(|id| format!("('{id}')")).collect();
        exec(&mut c, &format!("INSERT INTO u VALUES {}", values.join(","))).await;
        refused_as_no_replica(&url, "u", &url);
        assert_eq!(v7(&mut c, "u").await, 0, "nothing changed");
        let standby_db = with_db(&standby, "doctor_standby");
        let out = combkey(&[
            "doctor",
            "--url",
            &url,
            "--table",
            "u",
            "--apply",
            "--online",
            "--max-lag",
            "30s",
            "--replica-url",
            &standby_db,
        ]);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(v7(&mut c, "u").await, 100);
        // On the standby itself: refused up front (it takes no writes), audit included.
        let out = combkey(&["doctor", "--url", &standby_db, "--table", "u", "--apply"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("this server is a replica"), "{}", text(&out));
        drop(c);

        // 3. A FOR ALL TABLES publication and its subscriber: an online run (which keeps a
        //    journal) and an offline one leave replication flowing, and the subscriber gets
        //    the new keys; a type change says what each subscriber must do; doctor on the
        //    subscriber's table refuses.
        let mut sub = database(&subscriber, "doctor_logical").await;
        let mut c = database(&primary, "doctor_logical").await;
        for conn in [&mut c, &mut sub] {
            exec(conn, "CREATE TABLE legacy (id text PRIMARY KEY)").await;
        }
        table(&mut c, "online", "uuid", &rtcomb(200, 3)).await;
        table(&mut c, "offline", "uuid", &rtcomb(200, 4)).await;
        table(&mut sub, "online", "uuid", &[]).await;
        table(&mut sub, "offline", "uuid", &[]).await;
        table(&mut c, "stalled", "uuid", &rtcomb(100, 6)).await;
        table(&mut sub, "stalled", "uuid", &[]).await;
        let values: Vec<String> = rtcomb(20, 5).iter().map(|id| format!("('{id}')")).collect();
        exec(&mut c, &format!("INSERT INTO legacy VALUES {}", values.join(","))).await;
        for conn in [&mut c, &mut sub] {
            exec(conn, "CREATE TABLE noident (id uuid NOT NULL); CREATE UNIQUE INDEX noident_id ON noident (id)").await;
        }
        let values: Vec<String> = rtcomb(30, 7).iter().map(|id| format!("('{id}')")).collect();
        exec(&mut c, &format!("INSERT INTO noident VALUES {}", values.join(","))).await;
        table(&mut c, "v1keys", "uuid", &v1(150)).await;
        table(&mut sub, "v1keys", "uuid", &[]).await;
        exec(&mut c, "CREATE PUBLICATION doctor_pub FOR ALL TABLES").await;
        let port = primary.rsplit_once(':').unwrap().1.split('/').next().unwrap().to_string();
        exec(
            &mut sub,
            &format!(
                "CREATE SUBSCRIPTION doctor_sub CONNECTION 'host=127.0.0.1 port={port} dbname=doctor_logical user=postgres' \
                 PUBLICATION doctor_pub"
            ),
        )
        .await;
        until("the subscriber's first copy", Duration::from_secs(120), async || {
            count(&mut sub, "SELECT (SELECT count(*) FROM online) + (SELECT count(*) FROM offline_items)").await == 400
        })
        .await;
        let logical = with_db(&primary, "doctor_logical");
        let out =
            combkey(&["doctor", "--url", &logical, "--table", "online", "--apply", "--online", "--batch-size", "50"]);
        assert!(out.status.success(), "{}", text(&out));
        let out = combkey(&["doctor", "--url", &logical, "--table", "offline", "--apply"]);
        assert!(out.status.success(), "{}", text(&out));
        // Replication still flows: a row written now arrives.
        let marker = Comb::new();
        exec(&mut c, &format!("INSERT INTO online (id) VALUES ('{marker}')")).await;
        until("the row written after the runs, on the subscriber", Duration::from_secs(120), async || {
            count(&mut sub, &format!("SELECT count(*) FROM online WHERE id = '{marker}'")).await == 1
        })
        .await;
        assert_eq!(v7(&mut sub, "online").await, 201, "the subscriber has the new keys");
        until("the offline run's keys on the subscriber", Duration::from_secs(60), async || {
            v7(&mut sub, "offline").await == 200
        })
        .await;
        assert_eq!(
            count(&mut sub, "SELECT count(*) FROM online_items i JOIN online o ON o.id = i.parent").await,
            200,
            "the subscriber's children follow"
        );
        assert_eq!(
            count(
                &mut sub,
                "SELECT count(*) FROM pg_stat_subscription WHERE subname = 'doctor_sub' AND pid IS NOT NULL"
            )
            .await,
            1
        );
        // The type change of a published text key: the plan says what each subscriber must do.
        let out = combkey(&["doctor", "--url", &logical, "--table", "legacy", "--migration-sql"]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains("logical replication does not carry DDL") && text(&out).contains("doctor_pub"),
            "{}",
            text(&out)
        );
        // On the subscriber, the table is written by the subscription: refused.
        let out =
            combkey(&["doctor", "--url", &with_db(&subscriber, "doctor_logical"), "--table", "offline", "--apply"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("subscription doctor_sub"), "{}", text(&out));
        // A published table with no replica identity: PostgreSQL would refuse its updates, so
        // doctor refuses it before anything changes.
        let out = combkey(&["doctor", "--url", &logical, "--table", "noident", "--apply"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("has no replica identity"), "{}", text(&out));
        assert_eq!(v7(&mut c, "noident").await, 0);
        // v1 keys keep a key map, a new table the FOR ALL TABLES publication would publish and
        // the subscriber lacks (it would stop applying every change): refused up front, with
        // the table to make; made on both sides, the run goes on and replication flows.
        until("the subscriber has the v1 keys", Duration::from_secs(120), async || {
            count(&mut sub, "SELECT count(*) FROM v1keys_items").await == 150
        })
        .await;
        let out = combkey(&["doctor", "--url", &logical, "--table", "v1keys", "--apply"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            text(&out).contains("publication doctor_pub (FOR ALL TABLES) would publish it")
                && text(&out).contains("CREATE TABLE IF NOT EXISTS \"public\".\"combkey_keymap_v1keys\""),
            "{}",
            text(&out)
        );
        assert_eq!(v7(&mut c, "v1keys").await, 0, "nothing changed");
        for conn in [&mut c, &mut sub] {
            exec(conn, "CREATE TABLE combkey_keymap_v1keys (old_key uuid PRIMARY KEY, new_key uuid NOT NULL UNIQUE)")
                .await;
        }
        exec(&mut sub, "ALTER SUBSCRIPTION doctor_sub REFRESH PUBLICATION").await;
        let out = combkey(&["doctor", "--url", &logical, "--table", "v1keys", "--apply"]);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(v7(&mut c, "v1keys").await, 150);
        until("the key map and the new keys on the subscriber", Duration::from_secs(120), async || {
            count(&mut sub, "SELECT count(*) FROM combkey_keymap_v1keys").await == 150
                && v7(&mut sub, "v1keys").await == 150
        })
        .await;

        // 4. The subscriber stops applying (a table it does not have gets a row: its apply
        //    worker fails and restarts, and the slot's sender catches up or streams with no
        //    lag reported): --max-lag waits, converting nothing, until it applies again.
        until("the subscriber has the stalled table's rows", Duration::from_secs(120), async || {
            count(&mut sub, "SELECT count(*) FROM stalled").await == 100
        })
        .await;
        exec(&mut c, "CREATE TABLE only_here (id int PRIMARY KEY); INSERT INTO only_here VALUES (1)").await;
        let mut run = start(&[
            "doctor",
            "--url",
            &logical,
            "--table",
            "stalled",
            "--apply",
            "--online",
            "--batch-size",
            "20",
            "--max-lag",
            "5s",
        ]);
        run.wait_for_line(&["waiting before the next batch"], Duration::from_secs(120));
        assert_eq!(v7(&mut c, "stalled").await, 0, "nothing converted while the subscriber applies nothing");
        exec(&mut sub, "CREATE TABLE only_here (id int PRIMARY KEY)").await;
        let (ok, err) = run.finish(Duration::from_secs(300));
        assert!(ok, "{err}");
        assert_eq!(v7(&mut c, "stalled").await, 100);
        until("the subscriber applies again", Duration::from_secs(120), async || v7(&mut sub, "stalled").await == 100)
            .await;
        // 5. The subscriber's apply worker waits for a lock (a long transaction there): the
        //    sender streams, the last lag it reported is small, but it replies no more; the
        //    run waits once it has not replied for --max-lag, and goes on when it applies.
        exec(&mut c, "DELETE FROM stalled_items; DELETE FROM stalled").await;
        let values: Vec<String> = rtcomb(2000, 8).iter().map(|id| format!("('{id}')")).collect();
        exec(&mut c, &format!("INSERT INTO stalled (id) VALUES {}", values.join(","))).await;
        until("the subscriber has the new rows", Duration::from_secs(120), async || {
            count(&mut sub, "SELECT count(*) FROM stalled").await == 2000
        })
        .await;
        let mut blocker = PgConnection::connect(&with_db(&subscriber, "doctor_logical")).await.unwrap();
        exec(&mut blocker, "BEGIN; LOCK TABLE stalled IN ACCESS EXCLUSIVE MODE").await;
        let mut run = start(&[
            "doctor",
            "--url",
            &logical,
            "--table",
            "stalled",
            "--apply",
            "--online",
            "--batch-size",
            "20",
            "--max-lag",
            "1s",
            "--sleep",
            "40ms",
        ]);
        run.wait_for_line(&["waiting before the next batch", "has not replied"], Duration::from_secs(120));
        assert!(v7(&mut c, "stalled").await < 2000, "the run waits before its end");
        exec(&mut blocker, "COMMIT").await;
        let (ok, err) = run.finish(Duration::from_secs(300));
        assert!(ok, "{err}");
        assert_eq!(v7(&mut c, "stalled").await, 2000);
        exec(&mut sub, "DROP SUBSCRIPTION doctor_sub").await;
    }
}

mod mariadb {
    use super::*;

    async fn exec(c: &mut MySqlConnection, sql: &str) {
        sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn one(c: &mut MySqlConnection, sql: &str) -> String {
        let v: Option<String> = sqlx::query_scalar(AssertSqlSafe(sql.to_string()))
            .fetch_one(c)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        v.unwrap_or_default()
    }

    /// Every row of the tables of `db`, and their definitions, as one text.
    async fn contents(c: &mut MySqlConnection, db: &str) -> String {
        let mut all = String::new();
        for t in ["bin", "bin_items", "txt", "txt_items"] {
            let (_, def): (String, String) =
                sqlx::query_as(AssertSqlSafe(format!("SHOW CREATE TABLE {db}.{t}"))).fetch_one(&mut *c).await.unwrap();
            all.push_str(def.split(") ENGINE").next().unwrap_or_default());
            let key = if t.ends_with("_items") { "parent" } else { "id" };
            all.push_str(
                &one(c, &format!("SELECT CAST(GROUP_CONCAT(HEX({key}) ORDER BY {key}) AS CHAR) FROM {db}.{t}")).await,
            );
        }
        all
    }

    /// Waits until the replica has applied everything the primary has logged.
    async fn caught_up(primary: &mut MySqlConnection, replica: &mut MySqlConnection) {
        let pos = one(primary, "SELECT @@GLOBAL.gtid_binlog_pos").await;
        let waited = one(replica, &format!("SELECT CAST(MASTER_GTID_WAIT('{pos}', 120) AS CHAR)")).await;
        assert_eq!(waited, "0", "the replica applied the primary's binary log up to {pos}");
    }

    #[tokio::test]
    async fn replicas_stay_identical_and_the_throttle_fails_closed() {
        let [primary, replica]: [String; 2] =
            urls("COMBKEY_MYREPL_URLS").try_into().expect("two URLs: primary, replica");
        let mut p = MySqlConnection::connect(&primary).await.unwrap();
        let mut r = MySqlConnection::connect(&replica).await.unwrap();
        // A run that failed half-way may have left the replica's SQL thread stopped.
        exec(&mut r, "START SLAVE").await;

        // 1. An online run and a journaled type change, in each binlog format: the replica
        //    ends identical, row for row and definition for definition.
        for format in ["STATEMENT", "MIXED", "ROW"] {
            exec(&mut p, &format!("SET GLOBAL binlog_format = '{format}'")).await;
            let db = format!("doctor_repl_{}", format.to_lowercase());
            exec(&mut p, &format!("DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")).await;
            let url = with_db(&primary, &db);
            let mut c = MySqlConnection::connect(&url).await.unwrap();
            exec(
                &mut c,
                "CREATE TABLE bin (id BINARY(16) NOT NULL PRIMARY KEY, n INT NOT NULL DEFAULT 0);
                 CREATE TABLE bin_items (k INT AUTO_INCREMENT PRIMARY KEY, parent BINARY(16) NOT NULL,
                   KEY (parent), CONSTRAINT bin_fk FOREIGN KEY (parent) REFERENCES bin (id));
                 CREATE TABLE txt (id CHAR(36) NOT NULL PRIMARY KEY);
                 CREATE TABLE txt_items (k INT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NOT NULL,
                   CONSTRAINT txt_fk FOREIGN KEY (parent) REFERENCES txt (id));",
            )
            .await;
            let bins: Vec<String> =
                rtcomb(150, 10).iter().map(|id| format!("(0x{})", combkey_testutil::hex(*id))).collect();
            exec(&mut c, &format!("INSERT INTO bin (id) VALUES {}", bins.join(","))).await;
            exec(&mut c, "INSERT INTO bin_items (parent) SELECT id FROM bin").await;
            let txts: Vec<String> = rtcomb(50, 11).iter().map(|id| format!("('{id}')")).collect();
            exec(&mut c, &format!("INSERT INTO txt VALUES {}", txts.join(","))).await;
            exec(&mut c, "INSERT INTO txt_items (parent) SELECT id FROM txt").await;
            let out = combkey(&[
                "doctor",
                "--url",
                &url,
                "--table",
                "bin",
                "--apply",
                "--online",
                "--batch-size",
                "40",
                "--max-lag",
                "30s",
                "--replica-url",
                &replica,
            ]);
            assert!(out.status.success(), "{format}: {}", text(&out));
            let out = combkey(&["doctor", "--url", &url, "--table", "txt", "--apply"]);
            assert!(out.status.success(), "{format}: {}", text(&out));
            // A type change online (copy and swap): the replica gets the copies and the rename;
            // a statement-based log is refused, saying why, with nothing changed.
            exec(
                &mut c,
                &format!(
                    "CREATE TABLE txo (id CHAR(36) NOT NULL PRIMARY KEY);
                     CREATE TABLE txo_items (k INT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NOT NULL,
                       CONSTRAINT txo_fk FOREIGN KEY (parent) REFERENCES txo (id));
                     INSERT INTO txo VALUES {};
                     INSERT INTO txo_items (parent) SELECT id FROM txo",
                    rtcomb(60, 12).iter().map(|id| format!("('{id}')")).collect::<Vec<_>>().join(",")
                ),
            )
            .await;
            let out = combkey(&[
                "doctor",
                "--url",
                &url,
                "--table",
                "txo",
                "--apply",
                "--online",
                "--max-lag",
                "30s",
                "--replica-url",
                &replica,
            ]);
            if format == "STATEMENT" {
                assert_eq!(out.status.code(), Some(1), "{format}: {}", text(&out));
                assert!(
                    text(&out).contains("statement-based binary log") && text(&out).contains("Nothing was changed")
                );
            } else {
                assert!(out.status.success(), "{format}: {}", text(&out));
            }
            caught_up(&mut p, &mut r).await;
            assert_eq!(contents(&mut r, &db).await, contents(&mut p, &db).await, "{format}: the replica is identical");
            assert!(contents(&mut p, &db).await.contains("binary(16)"), "{format}: the text key changed type");
            // MariaDB's usual key, CHAR(36) DEFAULT uuid(), converted with --set-default: the
            // trigger that stands in for the default calls the clock and RANDOM_BYTES, which a
            // statement-based log would replay differently on the replica: refused there; in
            // MIXED and ROW the replica ends identical, the key map and the keys the trigger
            // makes afterwards included.
            exec(
                &mut c,
                "CREATE TABLE made (id CHAR(36) NOT NULL DEFAULT uuid() PRIMARY KEY, n INT NOT NULL);
                 CREATE TABLE made_items (k INT AUTO_INCREMENT PRIMARY KEY, parent CHAR(36) NOT NULL, KEY (parent),
                   CONSTRAINT made_fk FOREIGN KEY (parent) REFERENCES made (id));
                 INSERT INTO made (n) VALUES (1), (2), (3), (4), (5), (6), (7), (8);
                 INSERT INTO made_items (parent) SELECT id FROM made;",
            )
            .await;
            let out = combkey(&["doctor", "--url", &url, "--table", "made", "--apply", "--set-default"]);
            let made = |db: &str| {
                format!(
                    "SELECT CAST(CONCAT(GROUP_CONCAT(HEX(id), n ORDER BY id), '/', \
                     (SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '{db}')) AS CHAR) FROM {db}.made"
                )
            };
            if format == "STATEMENT" {
                assert_eq!(out.status.code(), Some(1), "{}", text(&out));
                assert!(text(&out).contains("statement-based binary log"), "{}", text(&out));
                assert!(one(&mut c, "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = 'made' AND COLUMN_NAME = 'id' AND TABLE_SCHEMA = DATABASE()").await == "char", "nothing changed");
            } else {
                assert!(out.status.success(), "{format}: {}", text(&out));
                exec(&mut c, "INSERT INTO made (n) VALUES (9), (10)").await;
                caught_up(&mut p, &mut r).await;
                let (on_p, on_r) = (one(&mut p, &made(&db)).await, one(&mut r, &made(&db)).await);
                assert_eq!(on_r, on_p, "{format}: the replica's keys are the primary's");
                assert!(on_p.ends_with("/1"), "{format}: one trigger: {on_p}");
                let map = format!(
                    "SELECT CAST(GROUP_CONCAT(HEX(old_key), HEX(new_key) ORDER BY old_key) AS CHAR) FROM {db}.combkey_keymap_made"
                );
                assert_eq!(one(&mut r, &map).await, one(&mut p, &map).await, "{format}: the key map");
                let v7 = "SELECT CAST(COUNT(*) AS CHAR) FROM made WHERE SUBSTR(HEX(id), 13, 1) = '7'";
                assert_eq!(one(&mut c, v7).await, "10", "{format}: every key v7, the trigger's too");
            }
        }
        exec(&mut p, "SET GLOBAL binlog_format = 'MIXED'").await;

        // 2. A replica whose SQL thread stopped: Seconds_Behind_Master is NULL, so the run waits
        //    and says why, converting nothing, and goes on once it runs again.
        let db = "doctor_repl_throttle";
        exec(&mut p, &format!("DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")).await;
        let url = with_db(&primary, db);
        let mut c = MySqlConnection::connect(&url).await.unwrap();
        exec(&mut c, "CREATE TABLE t (id BINARY(16) NOT NULL PRIMARY KEY)").await;
        let bins: Vec<String> =
            rtcomb(120, 12).iter().map(|id| format!("(0x{})", combkey_testutil::hex(*id))).collect();
        exec(&mut c, &format!("INSERT INTO t VALUES {}", bins.join(","))).await;
        caught_up(&mut p, &mut r).await;
        exec(&mut r, "STOP SLAVE SQL_THREAD").await;
        let mut run = start(&[
            "doctor",
            "--url",
            &url,
            "--table",
            "t",
            "--apply",
            "--online",
            "--batch-size",
            "40",
            "--max-lag",
            "5s",
            "--replica-url",
            &replica,
        ]);
        run.wait_for_line(
            &["waiting before the next batch", "Seconds_Behind_Master is NULL"],
            Duration::from_secs(120),
        );
        let v7 = "SELECT CAST(COUNT(*) AS CHAR) FROM t WHERE SUBSTR(HEX(id), 13, 1) = '7'";
        assert_eq!(one(&mut c, v7).await, "0", "nothing converted while the lag cannot be read");
        exec(&mut r, "START SLAVE SQL_THREAD").await;
        let (ok, err) = run.finish(Duration::from_secs(300));
        assert!(ok, "{err}");
        assert_eq!(one(&mut c, v7).await, "120");

        // 3. Run on the replica itself: refused up front (changed there, the replica would stop
        //    at the primary's next change to a converted row, error 1032).
        caught_up(&mut p, &mut r).await;
        let on_replica = with_db(&replica, db);
        let out = combkey(&["doctor", "--url", &on_replica, "--table", "t", "--apply"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("this server is a replica"), "{}", text(&out));

        // 4. A --replica-url that is no replica (the primary itself): refused before anything
        //    changes.
        exec(&mut c, "CREATE TABLE u (id BINARY(16) NOT NULL PRIMARY KEY)").await;
        exec(&mut c, &format!("INSERT INTO u VALUES {}", bins.join(","))).await;
        refused_as_no_replica(&url, "u", &primary);
        assert_eq!(one(&mut c, "SELECT CAST(COUNT(*) AS CHAR) FROM u WHERE SUBSTR(HEX(id), 13, 1) = '7'").await, "0");
    }
}
