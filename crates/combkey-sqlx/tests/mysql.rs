//! combkey-sqlx against a real MariaDB or MySQL (`COMBKEY_MYSQL_URL`).

mod common;

use combkey::Backend;
use combkey_sqlx::{Comb, CombText};
use common::AssertSqlSafe;
use sqlx::mysql::{MySql, MySqlRow};
use sqlx::{Connection, Decode, Encode, Executor, MySqlConnection, Row, Type};

async fn connect() -> MySqlConnection {
    let url = common::mysql_url();
    MySqlConnection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("MySQL/MariaDB at {url} (source scripts/servers.sh): {e}"))
}

async fn is_mariadb(c: &mut MySqlConnection) -> bool {
    let v: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(c).await.unwrap();
    v.contains("MariaDB")
}

// One line per type case: the literal, the bound value inside SQL, the round trip, NULL.
combkey_testutil::test_type!(async binary16_column, common::Harness::<MySqlConnection, Comb>::connect("CAST(NULL AS BINARY(16))").await, "MySQL BINARY(16)", |id| format!("CAST(0x{} AS BINARY(16))", common::hex(id.into())));
combkey_testutil::test_type!(async char36_column, common::Harness::<MySqlConnection, CombText>::connect("CAST(NULL AS CHAR(36))").await, "MySQL CHAR(36)", |id| format!("CAST('{id}' AS CHAR(36))"));

#[tokio::test]
async fn hex_shows_the_public_bytes() {
    let mut c = connect().await;
    for id in common::sample_ids() {
        let shown: String = sqlx::query_scalar("SELECT HEX(?)").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(shown, common::hex(id));
    }
}

#[tokio::test]
async fn mariadb_uuid_type_and_char36_decode() {
    let mut c = connect().await;
    let id = Comb::new();
    // CHAR(36): an old text key column still reads.
    let text: Comb =
        sqlx::query_scalar(AssertSqlSafe(format!("SELECT CAST('{id}' AS CHAR(36))"))).fetch_one(&mut c).await.unwrap();
    assert_eq!(text, id);
    // MySQL has no UUID type: this test then fails, saying so, rather than pass without
    // testing anything (run the others with `--skip mariadb_uuid_type` against MySQL).
    assert!(
        is_mariadb(&mut c).await,
        "mariadb_uuid_type_and_char36_decode needs MariaDB's UUID type; COMBKEY_MYSQL_URL is a MySQL server"
    );
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
        sqlx::raw_sql(AssertSqlSafe(combkey::sql::mysql_text_key_to_binary16(&table, "id"))).execute(&mut c).await;
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

/// sqlx's own `test_type!` (sqlx-test/src/lib.rs) as a plain function: the prepared leg
/// (`{lit} <=> ?`: the bound value equals the literal inside SQL; the literal decodes; the
/// value round-trips) and the unprepared leg (a simple query: MySQL's text protocol).
async fn sqlx_test_type<T>(c: &mut MySqlConnection, literal: &str, value: T)
where
    T: for<'r> Decode<'r, MySql> + for<'q> Encode<'q, MySql> + Type<MySql> + Clone + PartialEq + std::fmt::Debug,
    T: Send + Unpin + 'static,
{
    let query = format!("SELECT {literal} <=> ?, {literal} AS _2, ? AS _3");
    let row: MySqlRow =
        sqlx::query(AssertSqlSafe(query)).bind(value.clone()).bind(value.clone()).fetch_one(&mut *c).await.unwrap();
    assert_eq!(row.get::<i64, _>(0), 1, "[1] {literal}: the bound {value:?} differs from the literal");
    assert_eq!(row.get::<T, _>(1), value, "[2] {literal} decodes");
    assert_eq!(row.get::<T, _>(2), value, "[3] round trip");
    let rows = c.fetch_all(AssertSqlSafe(format!("SELECT {literal} AS _1"))).await.unwrap();
    assert_eq!(rows[0].get::<T, _>("_1"), value, "unprepared {literal}");
}

/// The `uuid` and `uuid_hyphenated` cases of sqlx's `tests/mysql/types.rs`, with its values:
/// `Comb` for the binary literals, `CombText` for the text ones.
#[tokio::test]
async fn sqlx_uuid_type_tests_ported() {
    let mut c = connect().await;
    let a: Comb = "b731678f-636f-4135-bc6f-19440c13bd19".parse().unwrap();
    let nil: Comb = "00000000-0000-0000-0000-000000000000".parse().unwrap();
    sqlx_test_type(&mut c, "x'b731678f636f4135bc6f19440c13bd19'", a).await;
    sqlx_test_type(&mut c, "x'00000000000000000000000000000000'", nil).await;
    sqlx_test_type(&mut c, "'b731678f-636f-4135-bc6f-19440c13bd19'", CombText::from(a.to_comb())).await;
    sqlx_test_type(&mut c, "'00000000-0000-0000-0000-000000000000'", CombText::from(nil.to_comb())).await;
}

#[tokio::test]
async fn text_keys_read_and_write() {
    let mut c = connect().await;
    sqlx::query("CREATE TEMPORARY TABLE combkey_legacy (id CHAR(36) NOT NULL PRIMARY KEY, note TEXT NOT NULL)")
        .execute(&mut c)
        .await
        .unwrap();
    let ids: Vec<CombText> = (0..3).map(|_| CombText::new()).collect();
    for (n, id) in ids.iter().enumerate() {
        sqlx::query("INSERT INTO combkey_legacy (id, note) VALUES (?, ?)")
            .bind(id)
            .bind(format!("row {n}"))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let stored: String =
        sqlx::query_scalar("SELECT id FROM combkey_legacy WHERE note = 'row 1'").fetch_one(&mut c).await.unwrap();
    assert_eq!(stored, ids[1].to_string(), "stored as the canonical text");
    let note: String = sqlx::query_scalar("SELECT note FROM combkey_legacy WHERE id = ?")
        .bind(ids[2])
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(note, "row 2", "WHERE char36_id = ? finds the row");
    let back: Vec<CombText> =
        sqlx::query_scalar("SELECT id FROM combkey_legacy ORDER BY id").fetch_all(&mut c).await.unwrap();
    assert_eq!(back, ids);
    // `Comb` in the same column reads too (decoding accepts the text), but binds 16 bytes,
    // which MariaDB refuses to compare with utf8 text (or, elsewhere, matches nothing): the
    // reason `CombText` exists.
    let binary_bind = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM combkey_legacy WHERE id = ?")
        .bind(Comb::from(ids[0].to_comb()))
        .fetch_one(&mut c)
        .await;
    assert!(!matches!(binary_bind, Ok(1)), "{binary_bind:?}");
    let err = sqlx::query_scalar::<_, CombText>("SELECT 'garbage'").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().contains("invalid UUID length"), "{err}");
}
