//! combkey-sqlx against a real MariaDB or MySQL (`COMBKEY_MYSQL_URL`).

mod common;

use combkey_sqlx::Backend;
use combkey_sqlx::Comb;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection};

async fn connect() -> MySqlConnection {
    let url = common::mysql_url();
    MySqlConnection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("MySQL/MariaDB at {url} (source scripts/db.sh): {e}"))
}

async fn is_mariadb(c: &mut MySqlConnection) -> bool {
    let v: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(c).await.unwrap();
    v.contains("MariaDB")
}

#[tokio::test]
async fn three_legs_and_null_binary16() {
    let mut c = connect().await;
    for id in common::sample_ids() {
        let hex = common::hex(id);
        let lit: Comb = sqlx::query_scalar(AssertSqlSafe(format!("SELECT CAST(UNHEX('{hex}') AS BINARY(16))")))
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(lit, id, "literal");
        let eq: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT ? = UNHEX('{hex}')")))
            .bind(id)
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(eq, 1, "bound {id} differs from the literal inside MySQL");
        let shown: String = sqlx::query_scalar("SELECT HEX(?)").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(shown, hex);
        let back: Comb = sqlx::query_scalar("SELECT ?").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(back, id, "round trip");
    }
    sqlx::query("CREATE TEMPORARY TABLE combkey_null (id BINARY(16) NULL)").execute(&mut c).await.unwrap();
    sqlx::query("INSERT INTO combkey_null VALUES (NULL)").execute(&mut c).await.unwrap();
    let none: Option<Comb> = sqlx::query_scalar("SELECT id FROM combkey_null").fetch_one(&mut c).await.unwrap();
    assert_eq!(none, None);
    let err = sqlx::query_scalar::<_, Comb>("SELECT id FROM combkey_null").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().to_lowercase().contains("null"), "{err}");
}

#[tokio::test]
async fn mariadb_uuid_type_and_char36_decode() {
    let mut c = connect().await;
    let id = Comb::new();
    // CHAR(36): an old text key column still reads.
    let text: Comb =
        sqlx::query_scalar(AssertSqlSafe(format!("SELECT CAST('{id}' AS CHAR(36))"))).fetch_one(&mut c).await.unwrap();
    assert_eq!(text, id);
    if !is_mariadb(&mut c).await {
        return; // MySQL has no UUID type; the BINARY(16) tests above are the contract there.
    }
    sqlx::query("CREATE TEMPORARY TABLE combkey_uuid (id UUID PRIMARY KEY)").execute(&mut c).await.unwrap();
    // Leg 1: a literal inserted as text reads back as the id.
    sqlx::query(AssertSqlSafe(format!("INSERT INTO combkey_uuid VALUES ('{id}')"))).execute(&mut c).await.unwrap();
    let lit: Comb = sqlx::query_scalar("SELECT id FROM combkey_uuid").fetch_one(&mut c).await.unwrap();
    assert_eq!(lit, id);
    // Leg 2: the bound value matches the row inside SQL.
    let n: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM combkey_uuid WHERE id = ?").bind(id).fetch_one(&mut c).await.unwrap();
    assert_eq!(n, 1);
    // Leg 3: bound insert, read back.
    let other = Comb::new();
    sqlx::query("INSERT INTO combkey_uuid VALUES (?)").bind(other).execute(&mut c).await.unwrap();
    let text: String = sqlx::query_scalar("SELECT CAST(id AS CHAR) FROM combkey_uuid WHERE id = ?")
        .bind(other)
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(text, other.to_string());
}

#[tokio::test]
async fn order_by_id_is_generation_order() {
    let mut c = connect().await;
    let mariadb = is_mariadb(&mut c).await;
    let mut tables = vec!["CREATE TEMPORARY TABLE combkey_order_bin (id BINARY(16) PRIMARY KEY)"];
    if mariadb {
        tables.push("CREATE TEMPORARY TABLE combkey_order_uuid (id UUID PRIMARY KEY)");
    }
    for ddl in tables {
        let table = ddl.split_whitespace().nth(3).expect("table name");
        sqlx::query(ddl).execute(&mut c).await.unwrap();
        let (ids, shuffled) = common::generated_and_shuffled(10_000);
        for chunk in shuffled.chunks(1000) {
            let placeholders = vec!["(?)"; chunk.len()].join(",");
            let mut q = sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES {placeholders}")));
            for id in chunk {
                q = q.bind(*id);
            }
            q.execute(&mut c).await.unwrap();
        }
        let back: Vec<Comb> = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} ORDER BY id")))
            .fetch_all(&mut c)
            .await
            .unwrap();
        assert!(back == ids, "{table}: ORDER BY id is not generation order");
    }
}

#[tokio::test]
async fn database_side_functions_match_rust_ids() {
    let mut c = connect().await;
    sqlx::raw_sql(Backend::MySql.drop_functions()).execute(&mut c).await.unwrap();
    sqlx::raw_sql(Backend::MySql.install_functions()).execute(&mut c).await.unwrap();
    let clock = combkey::V7Generator::with_clock(combkey::SystemClock);
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(Comb::from(clock.generate()));
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        let db: Comb = sqlx::query_scalar("SELECT combkey_v7()").fetch_one(&mut c).await.unwrap();
        assert_eq!((db.to_comb().version(), db.to_comb().is_rfc_variant()), (7, true), "{db}");
        ids.push(db);
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(sorted, ids, "database-made and Rust-made ids sort by time together");
    for id in &ids {
        let ms: i64 = sqlx::query_scalar("SELECT combkey_unix_ms(?)").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(Some(ms), id.to_comb().timestamp().map(|t| t.unix_ms()));
        let shown: String = sqlx::query_scalar("SELECT DATE_FORMAT(combkey_time(?), '%Y-%m-%dT%H:%i:%s.%f')")
            .bind(id)
            .fetch_one(&mut c)
            .await
            .unwrap();
        let want = id.to_comb().timestamp().map(|t| t.to_string()).unwrap_or_default();
        assert_eq!(&shown[..23], &want[..23], "combkey_time of {id}");
    }
    // A default id through the trigger (a real table: triggers cannot sit on temporary ones).
    let table = format!("combkey_default_{}", rand::random::<u32>());
    sqlx::query(AssertSqlSafe(format!("CREATE TABLE {table} ({}, note TEXT)", Backend::MySql.primary_key("id"))))
        .execute(&mut c)
        .await
        .unwrap();
    let trigger = Backend::MySql.default_trigger(&table, "id").expect("MySQL has a default trigger");
    let made: Result<Comb, sqlx::Error> = async {
        sqlx::raw_sql(AssertSqlSafe(trigger)).execute(&mut c).await?;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (note) VALUES ('x')"))).execute(&mut c).await?;
        sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table}"))).fetch_one(&mut c).await
    }
    .await;
    sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await.unwrap();
    assert_eq!(made.unwrap().to_comb().version(), 7);
}

#[tokio::test]
async fn char36_key_converts_to_binary16() {
    let mut c = connect().await;
    let (ids, shuffled) = common::generated_and_shuffled(100);
    let table = format!("combkey_conv_{}", rand::random::<u32>());
    sqlx::query(AssertSqlSafe(format!("CREATE TABLE {table} (id CHAR(36) NOT NULL PRIMARY KEY, n INT)")))
        .execute(&mut c)
        .await
        .unwrap();
    for id in &shuffled {
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES (?)")))
            .bind(id.to_string())
            .execute(&mut c)
            .await
            .unwrap();
    }
    let converted =
        sqlx::raw_sql(AssertSqlSafe(combkey_sqlx::sql::mysql_char36_to_binary16(&table, "id"))).execute(&mut c).await;
    let back: Result<Vec<Comb>, _> =
        sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} ORDER BY id"))).fetch_all(&mut c).await;
    let ty: Result<String, _> = sqlx::query_scalar(
        "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'id'",
    )
    .bind(&table)
    .fetch_one(&mut c)
    .await;
    sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await.unwrap();
    converted.unwrap();
    assert_eq!(back.unwrap(), ids);
    assert_eq!(ty.unwrap().to_lowercase(), "binary(16)");
}

#[tokio::test]
async fn bad_data_is_a_decode_error() {
    let mut c = connect().await;
    let cases = [
        (
            "SELECT CAST(UNHEX('00') AS BINARY(15))",
            "expected 16 bytes or UUID text (32 to 45 characters), found 15 bytes",
        ),
        ("SELECT CAST('' AS BINARY(0))", "found 0 bytes"),
        ("SELECT UNHEX('000102030405060708090a0b0c0d0e0f10')", "found 17 bytes"),
        ("SELECT CAST('017f22e2-79b0-7cc3-98c4-dc0c0c07398g' AS BINARY)", "invalid character 'g' at position 35"),
        ("SELECT 'not a uuid at all'", "invalid UUID length"),
        ("SELECT CAST('017f22e2-79b0-7cc3-98c4-dc0c0c07398' AS CHAR(36))", "found 35"),
    ];
    for (sql, message) in cases {
        let err = sqlx::query_scalar::<_, Comb>(sql).fetch_one(&mut c).await.unwrap_err();
        assert!(err.to_string().contains(message), "{sql}: {err}");
    }
}
