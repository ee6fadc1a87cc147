//! The service on a loopback port, driven over HTTP, on SQLite and on the real PostgreSQL
//! and MariaDB (`COMBKEY_PG_URL`, `COMBKEY_MYSQL_URL`; scripts/servers.sh starts them).

use std::net::SocketAddr;
use std::time::Duration;

mod common;

use combkey::{Comb, ShortPrefix, Timestamp};
use common::{post, prefix, request, start};
use idempotent_service::Config;
use serde_json::{Value, json};
use sqlx::AssertSqlSafe;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn ms(t: Timestamp) -> u64 {
    u64::try_from(t.unix_ms()).expect("after 1970")
}

/// Everything the service promises, against one database. `count` counts orders by item.
async fn scenario<F, Fut>(addr: SocketAddr, count: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = i64>,
{
    let now = Timestamp::now();
    // A client-made v7 id: 201, then the retry 200 with the same order, then a conflict.
    let id = Comb::new();
    let body = json!({ "id": id.to_string(), "item": "tea", "quantity": 2 });
    let (s1, first) = post(addr, &body).await;
    assert_eq!(s1, 201, "{first}");
    assert_eq!(first["id"], id.to_string());
    let (s2, again) = post(addr, &body).await;
    assert_eq!((s2, &again), (200, &first), "a retry returns the same order");
    let (s3, conflict) = post(addr, &json!({ "id": id.to_string(), "item": "coffee", "quantity": 2 })).await;
    assert_eq!(s3, 409, "{conflict}");
    assert!(conflict["error"].as_str().unwrap_or_default().contains("different body"));
    assert_eq!(request(addr, "GET", &format!("/orders/{id}"), None).await, (200, first.clone()));
    assert_eq!(count("tea".into()).await, 1);

    // A short prefix COMB, as uuid-creator clients make them (version 8 here).
    let sp = ShortPrefix::default();
    let short = sp.make(now, *Comb::new().as_bytes());
    let (s, _) = post(addr, &json!({ "id": short.to_string(), "item": "short", "quantity": 1 })).await;
    assert_eq!(s, 201);
    // ... eleven minutes behind or ahead: outside the ten-minute window, wrap-around aware.
    for (offset, reason) in [(-11 * 60_000i64, "too old"), (11 * 60_000, "too far in the future")] {
        let at = now.checked_add_ms(offset).expect("in range");
        let late = sp.make(at, *Comb::new().as_bytes());
        let (s, e) = post(addr, &json!({ "id": late.to_string(), "item": "x", "quantity": 1 })).await;
        assert_eq!(s, 422, "{e}");
        assert!(e["error"].as_str().unwrap_or_default().contains(reason), "{e}");
    }

    // v7 ids out of the window, past and future.
    for (offset, reason) in [(-3_600_000i64, "too old"), (3_600_000, "too far in the future")] {
        let at = now.checked_add_ms(offset).expect("in range");
        let off = Comb::from_v7_parts(ms(at), 0, 42);
        let (s, e) = post(addr, &json!({ "id": off.to_string(), "item": "x", "quantity": 1 })).await;
        assert_eq!(s, 422, "{e}");
        assert!(e["error"].as_str().unwrap_or_default().contains(reason), "{e}");
    }

    // A batch job's own clock: yesterday's ids with yesterday's clock pass; a clock three
    // days off does not.
    let yesterday = now.checked_add_ms(-86_400_000).expect("in range");
    let batch_id = Comb::from_v7_parts(ms(yesterday), 7, 4242);
    let (s, e) = post(
        addr,
        &json!({ "id": batch_id.to_string(), "clock": yesterday.to_string(), "item": "batch", "quantity": 1 }),
    )
    .await;
    assert_eq!(s, 201, "{e}");
    let long_ago = now.checked_add_ms(-3 * 86_400_000).expect("in range");
    let old_id = Comb::from_v7_parts(ms(long_ago), 7, 4242);
    let (s, e) =
        post(addr, &json!({ "id": old_id.to_string(), "clock": long_ago.to_string(), "item": "batch", "quantity": 1 }))
            .await;
    assert_eq!(s, 422, "{e}");
    assert!(e["error"].as_str().unwrap_or_default().starts_with("clock:"), "{e}");
    // The same clock checks where the server makes the id (schemathesis found these taken
    // without a word), and a good clock is the time of the id it makes.
    for bad in ["not a time", "2024-01-01T12:99:00Z", &long_ago.to_string()] {
        let command = Comb::new().to_string();
        let (s, e) = post(addr, &json!({ "command_id": command, "clock": bad, "item": "batch", "quantity": 1 })).await;
        assert_eq!(s, 422, "clock {bad:?}: {e}");
        assert!(e["error"].as_str().unwrap_or_default().starts_with("clock:"), "{e}");
    }
    let (s, made) = post(
        addr,
        &json!({ "command_id": Comb::new().to_string(), "clock": yesterday.to_string(), "item": "batch", "quantity": 1 }),
    )
    .await;
    assert_eq!(s, 201, "{made}");
    let made: Comb = made["id"].as_str().unwrap_or_default().parse().expect("an id");
    assert_eq!(made.unix_ms(), Some(yesterday.unix_ms()), "made at the batch job's clock");

    // A body that is not an order: validated like the id, 422 with the reason.
    let long = "x".repeat(100_000);
    for (item, quantity, reason) in [
        ("tea", -5, "quantity: expected at least 1, found -5"),
        ("tea", 0, "quantity: expected at least 1, found 0"),
        ("", 1, "item: expected a name"),
        ("   ", 1, "item: expected a name"),
        (long.as_str(), 1, "item: expected at most 200 characters, found 100000"),
    ] {
        let (s, e) = post(addr, &json!({ "id": Comb::new().to_string(), "item": item, "quantity": quantity })).await;
        assert_eq!(s, 422, "{e}");
        assert!(e["error"].as_str().unwrap_or_default().contains(reason), "{reason}: {e}");
        let (s, e) =
            post(addr, &json!({ "command_id": Comb::new().to_string(), "item": item, "quantity": quantity })).await;
        assert_eq!(s, 422, "command path: {e}");
    }
    let longest = "é".repeat(200);
    let (s, e) = post(addr, &json!({ "id": Comb::new().to_string(), "item": longest, "quantity": 1 })).await;
    assert_eq!(s, 201, "200 characters (400 bytes of UTF-8) fit: {e}");

    // Malformed input.
    for (bad, reason) in [
        (json!({ "id": "nope", "item": "x", "quantity": 1 }), "invalid UUID length"),
        (
            json!({ "id": "919108f7-52d1-4320-9bac-f847db4148a8", "item": "x", "quantity": 1 }),
            "version 4 is not accepted",
        ),
        (json!({ "item": "x", "quantity": 1 }), "an id or a command_id is required"),
        (json!({ "command_id": "zz", "item": "x", "quantity": 1 }), "command_id"),
    ] {
        let (s, e) = post(addr, &bad).await;
        assert_eq!(s, 422, "{bad}: {e}");
        assert!(e["error"].as_str().unwrap_or_default().contains(reason), "{bad}: {e}");
    }
    let (s, e) = request(addr, "POST", "/orders", Some("{\"id\": ")).await;
    assert_eq!(s, 400, "{e}");
    assert!(e["error"].is_string());
    let (s, e) = request(addr, "POST", "/orders", Some("{\"item\": \"x\"}")).await;
    assert_eq!(s, 422, "{e}");
    assert_eq!(request(addr, "GET", "/orders/not-an-id", None).await.0, 400);
    assert_eq!(request(addr, "GET", &format!("/orders/{}", Comb::new()), None).await.0, 404);

    // The command-id path: the server makes the id; a retry returns the same order.
    let command = Comb::new().to_string();
    let body = json!({ "command_id": command, "item": "by-command", "quantity": 3 });
    let (s1, made) = post(addr, &body).await;
    assert_eq!(s1, 201, "{made}");
    let (s2, again) = post(addr, &body).await;
    assert_eq!((s2, &again), (200, &made));
    assert_eq!(count("by-command".into()).await, 1);

    // Racing duplicates: 50 concurrent creations with one id, and 50 with one command id.
    for racing in [
        json!({ "id": Comb::new().to_string(), "item": "race-id", "quantity": 5 }),
        json!({ "command_id": Comb::new().to_string(), "item": "race-command", "quantity": 5 }),
    ] {
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                tokio::spawn({
                    let body = racing.clone();
                    async move { post(addr, &body).await }
                })
            })
            .collect();
        let mut created = 0;
        let mut bodies = Vec::new();
        for t in tasks {
            let (s, b) = tokio::time::timeout(Duration::from_secs(30), t).await.expect("in time").expect("task");
            assert!(s == 201 || s == 200, "{s}: {b}");
            created += usize::from(s == 201);
            bodies.push(b);
        }
        assert_eq!(created, 1, "exactly one creation wins");
        assert!(bodies.windows(2).all(|w| w[0] == w[1]), "all responses agree");
        let item = racing["item"].as_str().expect("item").to_string();
        assert_eq!(count(item).await, 1, "exactly one row");
    }
}

#[tokio::test]
async fn on_sqlite() {
    let dir = std::env::temp_dir().join(format!("combkey-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.join("orders.db").display());
    let p = prefix();
    let addr = start(&url, &p).await;
    let pool = sqlx::SqlitePool::connect(&url).await.expect("SQLite");
    scenario(addr, |item| {
        let pool = pool.clone();
        let sql = format!("SELECT COUNT(*) FROM {p}orders WHERE item = ?");
        async move { sqlx::query_scalar(AssertSqlSafe(sql)).bind(item).fetch_one(&pool).await.expect("count") }
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn on_postgres() {
    let url = std::env::var("COMBKEY_PG_URL").expect("COMBKEY_PG_URL (source scripts/servers.sh)");
    let p = prefix();
    let addr = start(&url, &p).await;
    let pool = sqlx::PgPool::connect(&url).await.expect("PostgreSQL");
    scenario(addr, |item| {
        let pool = pool.clone();
        let sql = format!("SELECT COUNT(*) FROM {p}orders WHERE item = $1");
        async move { sqlx::query_scalar(AssertSqlSafe(sql)).bind(item).fetch_one(&pool).await.expect("count") }
    })
    .await;
    for t in ["notes", "orders", "creation_identifiers"] {
        sqlx::query(AssertSqlSafe(format!("DROP TABLE {p}{t}"))).execute(&pool).await.expect("drop");
    }
}

#[tokio::test]
async fn on_mariadb() {
    let url = std::env::var("COMBKEY_MYSQL_URL").expect("COMBKEY_MYSQL_URL (source scripts/servers.sh)");
    let p = prefix();
    let addr = start(&url, &p).await;
    let pool = sqlx::MySqlPool::connect(&url).await.expect("MariaDB");
    scenario(addr, |item| {
        let pool = pool.clone();
        let sql = format!("SELECT COUNT(*) FROM {p}orders WHERE item = ?");
        async move { sqlx::query_scalar(AssertSqlSafe(sql)).bind(item).fetch_one(&pool).await.expect("count") }
    })
    .await;
    for t in ["notes", "orders", "creation_identifiers"] {
        sqlx::query(AssertSqlSafe(format!("DROP TABLE {p}{t}"))).execute(&pool).await.expect("drop");
    }
}

/// `GET /openapi.json`: the document describes both paths, and every id as a uuid string
/// (combkey's `utoipa` feature), the request body's ids included.
#[tokio::test]
async fn serves_its_openapi_document() {
    let addr = start("sqlite::memory:", &prefix()).await;
    let (status, doc) = request(addr, "GET", "/openapi.json", None).await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["openapi"], "3.1.0", "{doc}");
    assert!(doc["paths"]["/orders"]["post"].is_object(), "{doc}");
    assert!(doc["paths"]["/orders/{id}"]["get"].is_object(), "{doc}");
    assert!(doc["paths"]["/orders/{id}/notes"]["post"].is_object(), "{doc}");
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["Comb"]["type"], "string", "{doc}");
    assert_eq!(schemas["Comb"]["format"], "uuid", "{doc}");
    assert_eq!(schemas["Order"]["properties"]["id"]["$ref"], "#/components/schemas/Comb", "{doc}");
    let body_id = schemas["CreateOrder"]["properties"]["id"].to_string();
    assert!(body_id.contains("#/components/schemas/Comb"), "{body_id}");
    let param = &doc["paths"]["/orders/{id}"]["get"]["parameters"][0];
    assert_eq!(param["name"], "id", "{doc}");
    assert!(param["schema"].to_string().contains("#/components/schemas/Comb"), "{doc}");
    // The example id in the document is one the service itself accepts as well formed.
    let example = schemas["Comb"]["examples"][0].as_str().expect("an example id");
    let (status, body) = request(addr, "GET", &format!("/orders/{example}"), None).await;
    assert_eq!(status, 404, "well formed, not there: {body}");
}

/// After `combkey doctor` converted a table's RT.Comb `Sql` keys to v7, a client that kept an
/// order's old id still finds it: 301 to the new key's URL, with the order.
#[tokio::test]
async fn an_id_from_before_the_conversion_is_redirected_to_the_new_key() {
    let migration: combkey::layouts::KeyMigration = "rtcomb-sql -> v7".parse().unwrap();
    let config = Config { database_url: "sqlite::memory:".into(), key_migration: Some(migration), ..Config::default() };
    let app = idempotent_service::app(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    // The row as the conversion left it: a v7 key whose RT.Comb Sql form a client kept.
    let id = Comb::new();
    let (s, order) = post(addr, &json!({ "id": id.to_string(), "item": "kept", "quantity": 3 })).await;
    assert_eq!(s, 201, "{order}");
    let old = migration.old_key(&id).expect("every v7 id has an RT.Comb Sql form");
    assert_eq!(old.version(), 4);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET /orders/{old} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 301"), "{head}");
    assert!(head.to_ascii_lowercase().contains(&format!("location: /orders/{id}")), "{head}");
    assert_eq!(serde_json::from_str::<Value>(body).unwrap(), order);
    // An id that never existed, in either form: 404.
    let (s, _) = request(addr, "GET", &format!("/orders/{}", Comb::new()), None).await;
    assert_eq!(s, 404);
}

/// A note on an order by the key a client kept from before the conversion: the insert fails
/// the foreign key (PostgreSQL 23503, MariaDB 1452, SQLite's constraint) and the service tries
/// again with the new key, as docs/doctor.md tells an application to during `--online`.
#[tokio::test]
async fn a_note_by_an_old_key_is_added_to_the_order_under_its_new_key() {
    let migration: combkey::layouts::KeyMigration = "rtcomb-sql -> v7".parse().unwrap();
    let env = |v: &str| std::env::var(v).unwrap_or_else(|_| panic!("{v} (source scripts/servers.sh)"));
    for url in ["sqlite::memory:".to_string(), env("COMBKEY_PG_URL"), env("COMBKEY_MYSQL_URL")] {
        let p = prefix();
        let config = Config {
            database_url: url.clone(),
            table_prefix: p.clone(),
            key_migration: Some(migration),
            ..Config::default()
        };
        let app = idempotent_service::app(config).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
        let id = Comb::new();
        let (s, order) = post(addr, &json!({ "id": id.to_string(), "item": "noted", "quantity": 1 })).await;
        assert_eq!(s, 201, "{order}");
        let old = migration.old_key(&id).expect("an RT.Comb Sql form");
        let body = json!({ "body": "by the old key" }).to_string();
        let (s, note) = request(addr, "POST", &format!("/orders/{old}/notes"), Some(&body)).await;
        assert_eq!(s, 201, "{url}: {note}");
        assert_eq!(note["order_id"], id.to_string(), "{url}: the order's key now");
        let (s, note) = request(addr, "POST", &format!("/orders/{id}/notes"), Some(&body)).await;
        assert_eq!((s, note["order_id"].as_str()), (201, Some(id.to_string().as_str())), "{url}");
        let (s, e) = request(addr, "POST", &format!("/orders/{}/notes", Comb::new()), Some(&body)).await;
        assert_eq!(s, 404, "{url}: {e}");
        let (s, _) = request(addr, "POST", &format!("/orders/{id}/notes"), Some(r#"{"body": ""}"#)).await;
        assert_eq!(s, 422, "{url}");
        let drop = format!("DROP TABLE {p}notes; DROP TABLE {p}orders; DROP TABLE {p}creation_identifiers");
        if url.starts_with("postgres") {
            let pool = sqlx::PgPool::connect(&url).await.expect("PostgreSQL");
            sqlx::raw_sql(AssertSqlSafe(drop)).execute(&pool).await.expect("drop");
        } else if url.starts_with("mysql") {
            let pool = sqlx::MySqlPool::connect(&url).await.expect("MariaDB");
            sqlx::raw_sql(AssertSqlSafe(drop)).execute(&pool).await.expect("drop");
        }
    }
}

/// Orders keyed by random v4 ids, re-keyed from their `created_at` by `combkey doctor
/// --rekey-from` (the library, as the command runs it): a client's old id answers 301 to the
/// new key through the key map the run kept, and a note by the old id lands on the order; on
/// PostgreSQL and MariaDB.
#[tokio::test]
async fn an_old_v4_id_resolves_through_the_key_map_after_a_rekey() {
    let env = |v: &str| std::env::var(v).unwrap_or_else(|_| panic!("{v} (source scripts/servers.sh)"));
    for url in [env("COMBKEY_PG_URL"), env("COMBKEY_MYSQL_URL")] {
        let p = prefix();
        let map = format!("combkey_keymap_{p}orders");
        let config = Config {
            database_url: url.clone(),
            table_prefix: p.clone(),
            key_map: Some(map.clone()),
            ..Config::default()
        };
        let app = idempotent_service::app(config).await.unwrap();
        let pg = url.starts_with("postgres");
        // Rows an older version of the application wrote: v4 keys, a creation time each.
        let old: Vec<Comb> = (0..20).map(|_| Comb::new_v4()).collect();
        let (time_type, lit): (&str, fn(&Comb) -> String) =
            if pg { ("timestamptz", |k| format!("'{k}'::uuid")) } else { ("DATETIME(6)", |k| format!("0x{k:X}")) };
        let mut sql = format!("ALTER TABLE {p}orders ADD COLUMN created_at {time_type};");
        for (i, k) in old.iter().enumerate() {
            sql.push_str(&format!(
                "INSERT INTO {p}orders (id, item, quantity, created_at) VALUES ({}, 'old {i}', {i}, \
                 TIMESTAMP '2024-05-01 10:00:00' + INTERVAL '{i}' MINUTE);",
                lit(k)
            ));
        }
        let exec = async |sql: String| {
            if pg {
                let pool = sqlx::PgPool::connect(&url).await.expect("PostgreSQL");
                sqlx::raw_sql(AssertSqlSafe(sql)).execute(&pool).await.expect("SQL");
            } else {
                let pool = sqlx::MySqlPool::connect(&url).await.expect("MariaDB");
                sqlx::raw_sql(AssertSqlSafe(sql)).execute(&pool).await.expect("SQL");
            }
        };
        exec(sql).await;
        let mut doctor = combkey_doctor::Doctor::connect(&url).await.unwrap();
        let options = combkey_doctor::Options::default().with_rekey_from(Some("created_at".into()));
        let plan = doctor.plan(&format!("{p}orders"), "id", options).await.unwrap();
        assert_eq!(plan.converted.values().sum::<usize>(), 20, "{plan:?}");
        doctor.apply(&plan, &mut combkey_doctor::Quiet).await.unwrap();

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
        for (i, k) in old.iter().enumerate().step_by(7) {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            let req = format!("GET /orders/{k} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            stream.write_all(req.as_bytes()).await.unwrap();
            let mut raw = String::new();
            stream.read_to_string(&mut raw).await.unwrap();
            let (head, body) = raw.split_once("\r\n\r\n").unwrap();
            assert!(head.starts_with("HTTP/1.1 301"), "{url}: {head}");
            let order: Value = serde_json::from_str(body).unwrap();
            assert_eq!(order["item"], format!("old {i}"), "{url}: {order}");
            let new: Comb = order["id"].as_str().unwrap().parse().unwrap();
            assert_eq!(new.version(), 7, "{url}");
            // 2024-05-01T10:00:00Z plus i minutes, the row's time, is the new key's.
            let made = Timestamp::from_unix_ms(1_714_557_600_000 + 60_000 * i64::try_from(i).unwrap());
            assert_eq!(new.timestamp(), Some(made), "{url}");
            assert!(head.to_ascii_lowercase().contains(&format!("location: /orders/{new}")), "{url}: {head}");
            let body = json!({ "body": "by the old id" }).to_string();
            let (s, note) = request(addr, "POST", &format!("/orders/{k}/notes"), Some(&body)).await;
            assert_eq!((s, note["order_id"].as_str()), (201, Some(new.to_string().as_str())), "{url}: {note}");
        }
        let (s, _) = request(addr, "GET", &format!("/orders/{}", Comb::new_v4()), None).await;
        assert_eq!(s, 404, "{url}: an id in neither form");
        exec(format!(
            "DROP TABLE {p}notes; DROP TABLE {p}orders; DROP TABLE {p}creation_identifiers; DROP TABLE {map}"
        ))
        .await;
    }
}

/// With a face key: the tables keep sorted v7 keys (in each backend's stored form), every id in
/// the responses, `Location` and error messages is the face, and the faces clients send in
/// paths find their rows; on SQLite, PostgreSQL and MariaDB.
#[tokio::test]
async fn faces_outside_sorted_keys_inside() {
    let key: combkey::FaceKey = "000102030405060708090a0b0c0d0e0f".parse().unwrap();
    let env = |v: &str| std::env::var(v).unwrap_or_else(|_| panic!("{v} (source scripts/servers.sh)"));
    let dir = std::env::temp_dir().join(format!("combkey-faces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let lite = format!("sqlite://{}?mode=rwc", dir.join("orders.db").display());
    for url in [lite.clone(), env("COMBKEY_PG_URL"), env("COMBKEY_MYSQL_URL")] {
        let p = prefix();
        let config = Config {
            database_url: url.clone(),
            table_prefix: p.clone(),
            face_key: Some(key.clone()),
            ..Config::default()
        };
        let app = idempotent_service::app(config).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
        // Orders made by the server, one after another: their faces out, their keys in.
        let mut faces = Vec::new();
        for i in 0..20 {
            let body = json!({ "command_id": Comb::new().to_string(), "item": format!("item {i}"), "quantity": 1 });
            let (s, order) = post(addr, &body).await;
            assert_eq!(s, 201, "{url}: {order}");
            let face: uuid::Uuid = order["id"].as_str().unwrap().parse().unwrap();
            assert_eq!(face.get_version_num(), 4, "{url}: a face, not the key");
            faces.push(face);
        }
        let keys: Vec<Comb> = faces.iter().map(|f| key.unmask(*f).expect("a face of the key")).collect();
        assert!(keys.iter().all(|k| k.version() == 7), "{url}");
        let mut sorted_faces = faces.clone();
        sorted_faces.sort();
        assert_ne!(sorted_faces, faces, "{url}: the faces do not show the order");
        // The table's keys sort in creation order in the database's own comparison.
        let sql = format!("SELECT id FROM {p}orders ORDER BY id");
        let stored: Vec<Comb> = if url.starts_with("postgres") {
            let pool = sqlx::PgPool::connect(&url).await.unwrap();
            let rows: Vec<combkey_sqlx::Comb> = sqlx::query_scalar(AssertSqlSafe(sql)).fetch_all(&pool).await.unwrap();
            rows.into_iter().map(Comb::from).collect()
        } else if url.starts_with("mysql") {
            let pool = sqlx::MySqlPool::connect(&url).await.unwrap();
            let rows: Vec<combkey_sqlx::Comb> = sqlx::query_scalar(AssertSqlSafe(sql)).fetch_all(&pool).await.unwrap();
            rows.into_iter().map(Comb::from).collect()
        } else {
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            let rows: Vec<combkey_sqlx::Comb> = sqlx::query_scalar(AssertSqlSafe(sql)).fetch_all(&pool).await.unwrap();
            rows.into_iter().map(Comb::from).collect()
        };
        assert_eq!(stored, keys, "{url}: ORDER BY id is the creation order");
        let now = Timestamp::now().unix_ms();
        assert!(keys.iter().all(|k| (now - k.unix_ms().unwrap()).abs() < 600_000), "{url}: keys carry the time");
        // A face in a path finds its order; the key itself, or a random v4, names none.
        let (s, order) = request(addr, "GET", &format!("/orders/{}", faces[3]), None).await;
        assert_eq!((s, order["id"].as_str()), (200, Some(faces[3].to_string().as_str())), "{url}: {order}");
        let (s, body) = request(addr, "GET", &format!("/orders/{}", keys[3]), None).await;
        assert_eq!(s, 404, "{url}: {body}");
        assert_eq!(body, json!({ "error": format!("no order {}", keys[3]) }), "{url}: the client's own text only");
        let (s, _) = request(addr, "GET", &format!("/orders/{}", Comb::new_v4()), None).await;
        assert_eq!(s, 404, "{url}");
        // A note on an order by its face: the note's ids are faces too.
        let (s, note) =
            request(addr, "POST", &format!("/orders/{}/notes", faces[5]), Some(r#"{"body": "fragile"}"#)).await;
        assert_eq!(s, 201, "{url}: {note}");
        assert_eq!(note["order_id"].as_str().unwrap(), faces[5].to_string(), "{url}");
        let note_id: uuid::Uuid = note["id"].as_str().unwrap().parse().unwrap();
        assert_eq!(key.unmask(note_id).unwrap().version(), 7, "{url}");
        // A client-made v7 id: its face comes back; the conflict names the face, not the id.
        let id = Comb::new();
        let (s, order) = post(addr, &json!({ "id": id.to_string(), "item": "own", "quantity": 2 })).await;
        assert_eq!((s, order["id"].as_str().unwrap()), (201, key.mask(id).unwrap().to_string().as_str()), "{url}");
        let (s, body) = post(addr, &json!({ "id": id.to_string(), "item": "other", "quantity": 2 })).await;
        assert_eq!(s, 409, "{url}");
        let text = body.to_string();
        assert!(text.contains(&key.mask(id).unwrap().to_string()) && !text.contains(&id.to_string()), "{url}: {text}");
        // A short prefix COMB has no face: refused up front.
        let short = combkey::ShortPrefixGenerator::new(ShortPrefix::default()).generate();
        let (s, body) = post(addr, &json!({ "id": short.to_string(), "item": "short", "quantity": 1 })).await;
        assert_eq!(s, 422, "{url}: {body}");
        for t in ["notes", "orders", "creation_identifiers"] {
            let drop = format!("DROP TABLE {p}{t}");
            if url.starts_with("postgres") {
                let pool = sqlx::PgPool::connect(&url).await.expect("PostgreSQL");
                sqlx::query(AssertSqlSafe(drop)).execute(&pool).await.expect("drop");
            } else if url.starts_with("mysql") {
                let pool = sqlx::MySqlPool::connect(&url).await.expect("MariaDB");
                sqlx::query(AssertSqlSafe(drop)).execute(&pool).await.expect("drop");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
