//! combkey-sqlx against a real PostgreSQL (`COMBKEY_PG_URL`).

mod common;

use combkey::Backend;
use combkey_sqlx::{Comb, CombText};
use common::AssertSqlSafe;
use sqlx::postgres::{PgRow, Postgres};
use sqlx::{Connection, Decode, Encode, Executor, PgConnection, Row, Type};

async fn connect() -> PgConnection {
    let url = common::pg_url();
    PgConnection::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url} (source scripts/servers.sh): {e}"))
}

// One line per type case: the literal, the bound value inside SQL, the round trip, NULL.
combkey_testutil::test_type!(async uuid_column, common::Harness::<PgConnection, Comb>::connect("NULL::uuid").await, "PostgreSQL uuid", |id| format!("'{id}'::uuid"));
combkey_testutil::test_type!(async text_column, common::Harness::<PgConnection, CombText>::connect("NULL::text").await, "PostgreSQL text", |id| format!("'{id}'::text"));
combkey_testutil::test_type!(async varchar_column, common::Harness::<PgConnection, CombText>::connect("NULL::varchar").await, "PostgreSQL varchar", |id| format!("'{id}'::varchar"));

#[tokio::test]
async fn text_form_and_other_types() {
    let mut c = connect().await;
    for id in common::sample_ids() {
        // The text form PostgreSQL prints is the public string.
        let text: String = sqlx::query_scalar("SELECT $1::text").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(text, id.to_string());
    }
    let some: Option<Comb> = sqlx::query_scalar("SELECT $1").bind(Some(Comb::new())).fetch_one(&mut c).await.unwrap();
    assert!(some.is_some());
    // A column of another type: a type mismatch error.
    let err = sqlx::query_scalar::<_, Comb>("SELECT 'not a uuid'::text").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().contains("mismatched types"), "{err}");
}

#[tokio::test]
async fn text_wire_format_decodes() {
    // Simple-query protocol results arrive as text.
    let mut c = connect().await;
    let id = Comb::new();
    let rows = sqlx::raw_sql(AssertSqlSafe(format!("SELECT '{id}'::uuid AS id"))).fetch_all(&mut c).await.unwrap();
    let back: Comb = rows[0].try_get("id").unwrap();
    assert_eq!(back, id);
}

#[tokio::test]
async fn order_by_id_is_generation_order_and_arrays_bind() {
    let mut c = connect().await;
    sqlx::query("CREATE TEMPORARY TABLE combkey_order (id uuid PRIMARY KEY, n int)").execute(&mut c).await.unwrap();
    let (ids, shuffled) = common::generated_and_shuffled(10_000);
    // uuid[] binds through PgHasArrayType.
    sqlx::query("INSERT INTO combkey_order (id) SELECT * FROM UNNEST($1::uuid[])")
        .bind(&shuffled)
        .execute(&mut c)
        .await
        .unwrap();
    let back: Vec<Comb> =
        sqlx::query_scalar("SELECT id FROM combkey_order ORDER BY id").fetch_all(&mut c).await.unwrap();
    assert_eq!(back, ids);
    let arr: Vec<Comb> =
        sqlx::query_scalar("SELECT array_agg(id ORDER BY id) FROM combkey_order").fetch_one(&mut c).await.unwrap();
    assert_eq!(arr, ids);
}

#[tokio::test]
async fn database_side_functions_match_rust_ids() {
    let mut c = connect().await;
    sqlx::raw_sql(Backend::Postgres.install_functions()).execute(&mut c).await.unwrap();
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
        let ms: i64 = sqlx::query_scalar("SELECT combkey_unix_ms($1)").bind(id).fetch_one(&mut c).await.unwrap();
        assert_eq!(Some(ms), id.to_comb().timestamp().map(|t| t.unix_ms()));
        let within: bool =
            sqlx::query_scalar("SELECT abs(extract(epoch FROM combkey_time($1)) * 1000 - $2::bigint) < 1")
                .bind(id)
                .bind(ms)
                .fetch_one(&mut c)
                .await
                .unwrap();
        assert!(within);
    }
    // A DEFAULT from the migration helpers.
    sqlx::query(AssertSqlSafe(format!(
        "CREATE TEMPORARY TABLE combkey_default ({}, note text)",
        Backend::Postgres.primary_key("id")
    )))
    .execute(&mut c)
    .await
    .unwrap();
    let made: Comb = sqlx::query_scalar("INSERT INTO combkey_default (note) VALUES ('x') RETURNING id")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(made.to_comb().version(), 7);
}

#[tokio::test]
async fn from_row_and_transactions() {
    #[derive(sqlx::FromRow, Debug, PartialEq)]
    struct Order {
        id: Comb,
        parent: Option<Comb>,
        note: String,
    }
    let mut c = connect().await;
    let mut tx = c.begin().await.unwrap();
    sqlx::query("CREATE TEMPORARY TABLE combkey_rows (id uuid PRIMARY KEY, parent uuid, note text NOT NULL)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let a = Order { id: Comb::new(), parent: None, note: "a".into() };
    let b = Order { id: Comb::new(), parent: Some(a.id), note: "b".into() };
    for o in [&a, &b] {
        sqlx::query("INSERT INTO combkey_rows (id, parent, note) VALUES ($1, $2, $3)")
            .bind(o.id)
            .bind(o.parent)
            .bind(&o.note)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    let rows: Vec<Order> = sqlx::query_as("SELECT * FROM combkey_rows ORDER BY id").fetch_all(&mut *tx).await.unwrap();
    assert_eq!(rows, vec![a, b]);
    tx.rollback().await.unwrap();
}

/// sqlx's own `test_type!` (sqlx-test/src/lib.rs) as a plain function: the prepared leg
/// (`{lit} IS NOT DISTINCT FROM $1, $2::text, {lit}, $3`: the bound value equals the
/// literal inside SQL, the literal decodes, the value round-trips) and the unprepared leg
/// (a simple query, whose results PostgreSQL sends as text).
async fn sqlx_test_type<T>(c: &mut PgConnection, literal: &str, value: T)
where
    T: for<'r> Decode<'r, Postgres>
        + for<'q> Encode<'q, Postgres>
        + Type<Postgres>
        + Clone
        + PartialEq
        + std::fmt::Debug,
    T: Send + Unpin + 'static,
{
    let query = format!("SELECT {literal} IS NOT DISTINCT FROM $1, $2::text AS _1, {literal} AS _2, $3 AS _3");
    let row: PgRow = sqlx::query(AssertSqlSafe(query))
        .bind(value.clone())
        .bind(value.clone())
        .bind(value.clone())
        .fetch_one(&mut *c)
        .await
        .unwrap();
    let (same, received): (bool, Option<String>) = (row.get(0), row.get(1));
    assert!(same, "[1] {literal}: the bound {value:?} (received as {received:?}) differs from the literal");
    assert_eq!(row.get::<T, _>(2), value, "[2] {literal} decodes");
    assert_eq!(row.get::<T, _>(3), value, "[3] round trip");
    let rows = c.fetch_all(AssertSqlSafe(format!("SELECT {literal} AS _1"))).await.unwrap();
    assert_eq!(rows[0].get::<T, _>("_1"), value, "unprepared {literal}");
}

/// The `uuid` and `uuid_vec` cases of sqlx's `tests/postgres/types.rs`, with its values.
#[tokio::test]
async fn sqlx_uuid_type_tests_ported() {
    let mut c = connect().await;
    let a: Comb = "b731678f-636f-4135-bc6f-19440c13bd19".parse().unwrap();
    let nil: Comb = "00000000-0000-0000-0000-000000000000".parse().unwrap();
    sqlx_test_type(&mut c, "'b731678f-636f-4135-bc6f-19440c13bd19'::uuid", a).await;
    sqlx_test_type(&mut c, "'00000000-0000-0000-0000-000000000000'::uuid", nil).await;
    sqlx_test_type(
        &mut c,
        "'{b731678f-636f-4135-bc6f-19440c13bd19,00000000-0000-0000-0000-000000000000}'::uuid[]",
        vec![a, nil],
    )
    .await;
    sqlx_test_type(&mut c, "NULL::uuid", None::<Comb>).await;
    // The text form in text columns (as `uuid::fmt::Hyphenated` in sqlx's MySQL and SQLite tests).
    sqlx_test_type(&mut c, "'b731678f-636f-4135-bc6f-19440c13bd19'::text", CombText::from(a.to_comb())).await;
    sqlx_test_type(&mut c, "'00000000-0000-0000-0000-000000000000'::varchar", CombText::from(nil.to_comb())).await;
}

#[tokio::test]
async fn text_keys_read_and_write() {
    let mut c = connect().await;
    sqlx::query("CREATE TEMPORARY TABLE combkey_legacy (id text PRIMARY KEY, note text NOT NULL)")
        .execute(&mut c)
        .await
        .unwrap();
    let ids: Vec<CombText> = (0..3).map(|_| CombText::new()).collect();
    for (n, id) in ids.iter().enumerate() {
        sqlx::query("INSERT INTO combkey_legacy (id, note) VALUES ($1, $2)")
            .bind(id)
            .bind(format!("row {n}"))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let stored: String =
        sqlx::query_scalar("SELECT id FROM combkey_legacy WHERE note = 'row 1'").fetch_one(&mut c).await.unwrap();
    assert_eq!(stored, ids[1].to_string(), "stored as the canonical text");
    let note: String = sqlx::query_scalar("SELECT note FROM combkey_legacy WHERE id = $1")
        .bind(ids[2])
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(note, "row 2", "WHERE text_key = $1 finds the row");
    let back: Vec<CombText> =
        sqlx::query_scalar("SELECT id FROM combkey_legacy ORDER BY id").fetch_all(&mut c).await.unwrap();
    assert_eq!(back, ids);
    let err = sqlx::query_scalar::<_, CombText>("SELECT 'garbage'::text").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().contains("invalid UUID length"), "{err}");
    // The binary column type is not text: a type mismatch, not a silent misread.
    let err = sqlx::query_scalar::<_, CombText>("SELECT gen_random_uuid()").fetch_one(&mut c).await.unwrap_err();
    assert!(err.to_string().contains("mismatched types"), "{err}");
}

/// Bulk loading through `copy_in_raw` with `combkey_sqlx::copy::PgBinaryCopy`, streamed in
/// pieces; a COPY the server refuses (a field of the wrong type) writes nothing.
#[tokio::test]
async fn binary_copy_in_raw() {
    use combkey_sqlx::copy::{Field, PgBinaryCopy};
    let mut c = connect().await;
    sqlx::raw_sql("CREATE TEMPORARY TABLE copied (id uuid PRIMARY KEY, note text NOT NULL, n int8)")
        .execute(&mut c)
        .await
        .unwrap();
    let (generated, shuffled) = common::generated_and_shuffled(100_000);
    let mut data = PgBinaryCopy::new(3);
    let mut copy = c.copy_in_raw("COPY copied (id, note, n) FROM STDIN (FORMAT binary)").await.unwrap();
    for (n, id) in shuffled.iter().enumerate() {
        let n = i64::try_from(n).unwrap();
        let note = format!("row {n}");
        data.push(&[Field::Comb(*id), Field::Text(&note), if n % 2 == 0 { Field::Int8(n) } else { Field::Null }])
            .unwrap();
        if data.pending() > 1 << 20 {
            copy.send(data.take()).await.unwrap();
        }
    }
    copy.send(data.finish()).await.unwrap();
    assert_eq!(copy.finish().await.unwrap(), 100_000);
    let back: Vec<Comb> = sqlx::query_scalar("SELECT id FROM copied ORDER BY id").fetch_all(&mut c).await.unwrap();
    assert_eq!(back, generated);
    let (note, n): (String, Option<i64>) =
        sqlx::query_as("SELECT note, n FROM copied WHERE id = $1").bind(shuffled[5]).fetch_one(&mut c).await.unwrap();
    assert_eq!((note.as_str(), n), ("row 5", None));

    // The server refuses a 4-byte field for an int8 column: an error, and no row of it.
    sqlx::raw_sql("TRUNCATE copied").execute(&mut c).await.unwrap();
    let mut data = PgBinaryCopy::new(3);
    data.push(&[Field::Comb(Comb::new()), Field::Text("fine"), Field::Int8(1)]).unwrap();
    data.push(&[Field::Comb(Comb::new()), Field::Text("bad"), Field::Int4(2)]).unwrap();
    let mut copy = c.copy_in_raw("COPY copied (id, note, n) FROM STDIN (FORMAT binary)").await.unwrap();
    copy.send(data.finish()).await.unwrap();
    let err = copy.finish().await.unwrap_err();
    assert!(
        err.to_string().contains("insufficient data left in message")
            || err.to_string().contains("incorrect binary data format"),
        "{err}"
    );
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM copied").fetch_one(&mut c).await.unwrap();
    assert_eq!(left, 0);
}
