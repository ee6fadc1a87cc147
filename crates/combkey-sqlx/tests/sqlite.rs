//! combkey-sqlx against embedded SQLite.

mod common;

use combkey_sqlx::Backend;
use combkey_sqlx::Comb;
use sqlx::{AssertSqlSafe, Connection, SqliteConnection};

async fn connect() -> SqliteConnection {
    SqliteConnection::connect("sqlite::memory:").await.expect("in-memory SQLite")
}

#[tokio::test]
async fn three_legs_and_null() {
    let mut c = connect().await;
    for id in common::sample_ids() {
        let hex = common::hex(id);
        let lit: Comb = sqlx::query_scalar(AssertSqlSafe(format!("SELECT X'{hex}'"))).fetch_one(&mut c).await.unwrap();
        assert_eq!(lit, id, "literal");
        let eq: bool =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT ? = X'{hex}'"))).bind(id).fetch_one(&mut c).await.unwrap();
        assert!(eq, "bound {id} differs from the literal inside SQLite");
        let back: Comb = sqlx::query_scalar("SELECT ?").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(back, id, "round trip");
        let shown: String = sqlx::query_scalar("SELECT hex(?)").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(shown, hex);
        // TEXT holding the UUID string decodes too.
        let text: Comb = sqlx::query_scalar("SELECT ?").bind(id.to_string()).fetch_one(&mut c).await.unwrap();
        assert_eq!(text, id);
    }
    let none: Option<Comb> = sqlx::query_scalar("SELECT NULL").fetch_one(&mut c).await.unwrap();
    assert_eq!(none, None);
    let err = sqlx::query_scalar::<_, Comb>("SELECT NULL").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().to_lowercase().contains("null"), "{err}");
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
    // A copy that fails on a bad row inside a transaction leaves nothing behind.
    sqlx::query("CREATE TABLE src (id BLOB)").execute(&mut c).await.unwrap();
    sqlx::query("CREATE TABLE dst (id BLOB PRIMARY KEY)").execute(&mut c).await.unwrap();
    sqlx::query("INSERT INTO src VALUES (?), (zeroblob(15))").bind(Comb::new()).execute(&mut c).await.unwrap();
    let copied: Result<(), sqlx::Error> = async {
        let mut tx = c.begin().await?;
        let rows: Vec<Comb> = sqlx::query_scalar("SELECT id FROM src ORDER BY rowid").fetch_all(&mut *tx).await?;
        for id in rows {
            sqlx::query("INSERT INTO dst VALUES (?)").bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await
    }
    .await;
    assert!(copied.is_err());
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM dst").fetch_one(&mut c).await.unwrap();
    assert_eq!(n, 0);
}
