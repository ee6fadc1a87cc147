//! combkey-sqlx against embedded SQLite.

mod common;

use combkey::Backend;
use combkey_sqlx::{Comb, CombText};
use common::AssertSqlSafe;
use sqlx::sqlite::{Sqlite, SqliteRow};
use sqlx::{Connection, Decode, Encode, Executor, Row, SqliteConnection, Type};

async fn connect() -> SqliteConnection {
    SqliteConnection::connect("sqlite::memory:").await.expect("in-memory SQLite")
}

// One line per type case: the literal, the bound value inside SQL, the round trip, NULL.
combkey_testutil::test_type!(async blob_column, common::Harness::<SqliteConnection, Comb>::connect("NULL").await, "SQLite BLOB", |id| format!("X'{}'", common::hex(id.into())));
combkey_testutil::test_type!(async text_column, common::Harness::<SqliteConnection, CombText>::connect("NULL").await, "SQLite TEXT", |id| format!("'{id}'"));

#[tokio::test]
async fn hex_and_text_values() {
    let mut c = connect().await;
    for id in common::sample_ids() {
        let shown: String = sqlx::query_scalar("SELECT hex(?)").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(shown, common::hex(id));
        // TEXT holding the UUID string decodes as `Comb` too.
        let text: Comb = sqlx::query_scalar("SELECT ?").bind(id.to_string()).fetch_one(&mut c).await.unwrap();
        assert_eq!(text, id);
    }
}

#[tokio::test]
async fn order_by_id_is_generation_order() {
    let mut c = connect().await;
    sqlx::query(AssertSqlSafe(format!("CREATE TABLE t ({})", Backend::Sqlite.primary_key("id"))))
        .execute(&mut c)
        .await
        .unwrap();
    let (ids, shuffled) = common::generated_and_shuffled(10_000);
    let mut tx = c.begin().await.unwrap();
    for id in &shuffled {
        sqlx::query("INSERT INTO t (id) VALUES (?)").bind(id).execute(&mut *tx).await.unwrap();
    }
    tx.commit().await.unwrap();
    let back: Vec<Comb> = sqlx::query_scalar("SELECT id FROM t ORDER BY id").fetch_all(&mut c).await.unwrap();
    assert_eq!(back, ids);
    // The milliseconds expression of the migration helpers reads the time.
    let expr = Backend::Sqlite.unix_ms_expr("id");
    let ms: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT {expr} FROM t WHERE id = ?")))
        .bind(ids[0])
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(Some(ms), ids[0].to_comb().timestamp().map(|t| t.unix_ms()));
}

#[tokio::test]
async fn bad_data_is_a_decode_error_and_writes_nothing() {
    let mut c = connect().await;
    let cases = [
        ("SELECT zeroblob(15)", "expected 16 bytes, found 15"),
        ("SELECT zeroblob(0)", "expected 16 bytes, found 0"),
        ("SELECT zeroblob(17)", "expected 16 bytes, found 17"),
        ("SELECT CAST('017f22e2-79b0-7cc3-98c4-dc0c0c07398f' AS BLOB)", "UUID text stored in a binary column"),
        ("SELECT 'garbage'", "invalid UUID length"),
        ("SELECT '017f22e2-79b0-7cc3-98c4-dc0c0c07398x'", "invalid character 'x' at position 35"),
    ];
    for (sql, message) in cases {
        let err = sqlx::query_scalar::<_, Comb>(sql).fetch_one(&mut c).await.unwrap_err();
        assert!(err.to_string().contains(message), "{sql}: {err}");
    }
    // A copy that fails on a bad row inside a transaction leaves nothing behind: the good
    // row before it is inserted first, then the bad one fails to decode, and the rollback
    // takes the insert back.
    sqlx::query("CREATE TABLE src (n INTEGER, id BLOB)").execute(&mut c).await.unwrap();
    sqlx::query("CREATE TABLE dst (id BLOB PRIMARY KEY)").execute(&mut c).await.unwrap();
    sqlx::query("INSERT INTO src VALUES (1, ?), (2, zeroblob(15))").bind(Comb::new()).execute(&mut c).await.unwrap();
    let rows: Vec<SqliteRow> = sqlx::query("SELECT id FROM src ORDER BY n").fetch_all(&mut c).await.unwrap();
    let mut inserted_before_failing = 0;
    let copied: Result<(), sqlx::Error> = async {
        let mut tx = c.begin().await?;
        for row in &rows {
            let id: Comb = row.try_get("id")?;
            sqlx::query("INSERT INTO dst VALUES (?)").bind(id).execute(&mut *tx).await?;
            inserted_before_failing = sqlx::query_scalar("SELECT COUNT(*) FROM dst").fetch_one(&mut *tx).await?;
        }
        tx.commit().await
    }
    .await;
    let err = copied.unwrap_err();
    assert!(err.to_string().contains("expected 16 bytes, found 15"), "{err}");
    assert_eq!(inserted_before_failing, 1, "the good row was inserted inside the transaction");
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM dst").fetch_one(&mut c).await.unwrap();
    assert_eq!(n, 0, "the rollback took it back");
}

/// sqlx's own `test_type!` (sqlx-test/src/lib.rs) as a plain function: the prepared leg
/// (`{lit} IS ?`: the bound value equals the literal inside SQL; the literal decodes; the
/// value round-trips) and the unprepared leg.
async fn sqlx_test_type<T>(c: &mut SqliteConnection, literal: &str, value: T)
where
    T: for<'r> Decode<'r, Sqlite> + for<'q> Encode<'q, Sqlite> + Type<Sqlite> + Clone + PartialEq + std::fmt::Debug,
    T: Send + Unpin + 'static,
{
    let query = format!("SELECT {literal} IS ?, {literal} AS _2, ? AS _3");
    let row: SqliteRow =
        sqlx::query(AssertSqlSafe(query)).bind(value.clone()).bind(value.clone()).fetch_one(&mut *c).await.unwrap();
    assert!(row.get::<bool, _>(0), "[1] {literal}: the bound {value:?} differs from the literal");
    assert_eq!(row.get::<T, _>(1), value, "[2] {literal} decodes");
    assert_eq!(row.get::<T, _>(2), value, "[3] round trip");
    let rows = c.fetch_all(AssertSqlSafe(format!("SELECT {literal} AS _1"))).await.unwrap();
    assert_eq!(rows[0].get::<T, _>("_1"), value, "unprepared {literal}");
}

/// The `uuid` and `uuid_hyphenated` cases of sqlx's `tests/sqlite/types.rs`, with its values:
/// `Comb` for the blob literals, `CombText` for the text ones.
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
    sqlx::query("CREATE TABLE legacy (id TEXT NOT NULL PRIMARY KEY, note TEXT NOT NULL)")
        .execute(&mut c)
        .await
        .unwrap();
    let ids: Vec<CombText> = (0..3).map(|_| CombText::new()).collect();
    for (n, id) in ids.iter().enumerate() {
        sqlx::query("INSERT INTO legacy (id, note) VALUES (?, ?)")
            .bind(id)
            .bind(format!("row {n}"))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let stored: String =
        sqlx::query_scalar("SELECT id FROM legacy WHERE note = 'row 1'").fetch_one(&mut c).await.unwrap();
    assert_eq!(stored, ids[1].to_string(), "stored as the canonical text");
    let kind: String = sqlx::query_scalar("SELECT typeof(id) FROM legacy LIMIT 1").fetch_one(&mut c).await.unwrap();
    assert_eq!(kind, "text");
    let note: String =
        sqlx::query_scalar("SELECT note FROM legacy WHERE id = ?").bind(ids[2]).fetch_one(&mut c).await.unwrap();
    assert_eq!(note, "row 2", "WHERE text_key = ? finds the row");
    let back: Vec<CombText> = sqlx::query_scalar("SELECT id FROM legacy ORDER BY id").fetch_all(&mut c).await.unwrap();
    assert_eq!(back, ids);
    let err = sqlx::query_scalar::<_, CombText>("SELECT 'garbage'").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().contains("invalid UUID length"), "{err}");
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_sqlx::Comb`, and
/// observes the same (no database needed).
mod swap_comb {
    combkey_testutil::uuid_swap_test!(combkey_sqlx::Comb);
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_sqlx::CombText`, and
/// observes the same (no database needed).
mod swap_comb_text {
    combkey_testutil::uuid_swap_test!(combkey_sqlx::CombText);
}

/// The swap as sqlx users write it: a `FromRow` struct whose field was `uuid::Uuid` keeps
/// `#[sqlx(try_from = "uuid::Uuid")]` (rows written by code that still binds `uuid::Uuid`),
/// and the field's type alone changes.
#[tokio::test]
async fn from_row_with_try_from_uuid() {
    #[derive(sqlx::FromRow, Debug)]
    struct Order {
        #[sqlx(try_from = "uuid::Uuid")]
        id: Comb,
        note: String,
    }
    let mut c = connect().await;
    c.execute("CREATE TABLE swap_orders (id BLOB PRIMARY KEY, note TEXT NOT NULL)").await.unwrap();
    let old = uuid::Uuid::from_bytes(*Comb::new().as_bytes());
    sqlx::query("INSERT INTO swap_orders VALUES (?, 'x')").bind(old).execute(&mut c).await.unwrap();
    let row: Order = sqlx::query_as("SELECT id, note FROM swap_orders").fetch_one(&mut c).await.unwrap();
    assert_eq!(row.id, old);
    assert_eq!(uuid::Uuid::from(row.id), old);
    assert_eq!(format!("{:?}", row.id), format!("{old:?}"));
    assert_eq!(row.note, "x");
    // And the new type binds where `uuid::Uuid` was bound.
    let found: (String,) =
        sqlx::query_as("SELECT note FROM swap_orders WHERE id = ?").bind(row.id).fetch_one(&mut c).await.unwrap();
    assert_eq!(found.0, "x");
}
