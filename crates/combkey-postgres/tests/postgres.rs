//! combkey-postgres through tokio-postgres on a real PostgreSQL (`COMBKEY_PG_URL`, which
//! `scripts/servers.sh` sets): tokio-postgres' own uuid type test ported, `uuid[]`, text columns,
//! `Option`, bad data, ORDER BY, and binary COPY.

use std::pin::pin;

use combkey_postgres::{Comb, CombText};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls};

/// A client, with its connection driven on the test's runtime.
async fn connect() -> Client {
    let url = combkey_testutil::pg_url();
    let (client, connection) = tokio_postgres::connect(&url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {url} (source scripts/servers.sh): {e}"));
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            panic!("connection: {e}");
        }
    });
    client
}

/// tokio-postgres' `tests/test/types/uuid_1.rs` (`test_uuid_params`) with our type: each
/// value read from a literal and sent back through a parameter.
#[tokio::test]
async fn tokio_postgres_uuid_test_ported() {
    let client = connect().await;
    let checks: [(Option<Comb>, &str); 2] = [
        (Some("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11".parse().unwrap()), "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"),
        (None, "NULL"),
    ];
    for (val, repr) in checks {
        let rows = client.query(&*format!("SELECT {repr}::UUID"), &[]).await.unwrap();
        let result: Option<Comb> = rows[0].get(0);
        assert_eq!(val, result);
        let rows = client.query("SELECT $1::UUID", &[&val]).await.unwrap();
        let result: Option<Comb> = rows[0].get(0);
        assert_eq!(val, result);
    }
}

#[tokio::test]
async fn order_by_id_is_generation_order() {
    let client = connect().await;
    client.batch_execute("CREATE TEMPORARY TABLE t (id uuid PRIMARY KEY, n int NOT NULL)").await.unwrap();
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(500);
    let tx_stmt = client.prepare("INSERT INTO t (id, n) VALUES ($1, $2)").await.unwrap();
    for (n, id) in shuffled.iter().enumerate() {
        client.execute(&tx_stmt, &[id, &i32::try_from(n).unwrap()]).await.unwrap();
    }
    let back: Vec<Comb> =
        client.query("SELECT id FROM t ORDER BY id", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(back, generated);
    // The row's id is the id the client made, and WHERE id = $1 finds it.
    let n: i32 = client.query_one("SELECT n FROM t WHERE id = $1", &[&shuffled[7]]).await.unwrap().get(0);
    assert_eq!(n, 7);
}

#[tokio::test]
async fn arrays_and_nulls() {
    let client = connect().await;
    let ids: Vec<Comb> = combkey_testutil::sample_ids();
    // uuid[] both ways.
    let back: Vec<Comb> = client.query_one("SELECT $1::uuid[]", &[&ids]).await.unwrap().get(0);
    assert_eq!(back, ids);
    let slice: &[Comb] = &ids[..2];
    let back: Vec<Comb> = client.query_one("SELECT $1::uuid[]", &[&slice]).await.unwrap().get(0);
    assert_eq!(back, &ids[..2]);
    // = ANY($1): the array as a filter.
    client.batch_execute("CREATE TEMPORARY TABLE a (id uuid PRIMARY KEY)").await.unwrap();
    for id in &ids {
        client.execute("INSERT INTO a VALUES ($1)", &[id]).await.unwrap();
    }
    let found: i64 = client.query_one("SELECT count(*) FROM a WHERE id = ANY($1)", &[&slice]).await.unwrap().get(0);
    assert_eq!(found, 2);
    // An array with a NULL element reads as Vec<Option<Comb>>; as Vec<Comb> it is an error.
    let row = client.query_one("SELECT ARRAY[$1::uuid, NULL]", &[&ids[0]]).await.unwrap();
    let with_null: Vec<Option<Comb>> = row.get(0);
    assert_eq!(with_null, [Some(ids[0]), None]);
    assert!(row.try_get::<_, Vec<Comb>>(0).is_err());
    // A LEFT JOIN whose right side is missing: None.
    let row =
        client.query_one("SELECT a.id, b.id FROM a LEFT JOIN a b ON b.id = a.id AND false LIMIT 1", &[]).await.unwrap();
    let right: Option<Comb> = row.get(1);
    assert_eq!(right, None);
}

/// Text: a table keyed by UUID text reads as `Comb`; a result read through the simple
/// query protocol (text format) parses.
#[tokio::test]
async fn text_columns_and_the_text_format() {
    let client = connect().await;
    let id = Comb::new();
    for ty in ["text", "varchar(36)", "char(36)"] {
        let row = client.query_one(&*format!("SELECT $1::uuid::text::{ty}"), &[&id]).await.unwrap();
        assert_eq!(row.get::<_, Comb>(0), id, "{ty}");
    }
    let upper: Comb = client.query_one(&*format!("SELECT '{:#}'::text", id), &[]).await.unwrap().get(0);
    assert_eq!(upper, id);
    let messages = client.simple_query(&format!("SELECT '{id}'::uuid")).await.unwrap();
    let text = messages
        .iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .unwrap();
    assert_eq!(text.parse::<Comb>().unwrap(), id);
}

#[tokio::test]
async fn bad_data_is_an_error_never_a_panic() {
    let client = connect().await;
    // Text that is not a UUID, in a text column.
    let row = client.query_one("SELECT 'garbage'::text", &[]).await.unwrap();
    let err = row.try_get::<_, Comb>(0).unwrap_err();
    let cause = std::error::Error::source(&err).map(ToString::to_string).unwrap_or_default();
    assert!(cause.contains("invalid UUID length"), "{err}: {cause}");
    // NULL into a non-Option: rust-postgres' WasNull.
    let row = client.query_one("SELECT NULL::uuid", &[]).await.unwrap();
    let err = row.try_get::<_, Comb>(0).unwrap_err();
    assert!(format!("{err:?}").contains("WasNull"), "{err:?}");
    // A bytea is not a uuid: the type check refuses it before any bytes are read.
    let row = client.query_one("SELECT '\\x0102'::bytea", &[]).await.unwrap();
    let err = row.try_get::<_, Comb>(0).unwrap_err();
    assert!(err.to_string().contains("error deserializing column 0"), "{err}");
    assert!(format!("{err:?}").contains("WrongType"), "{err:?}");
    // Binding an id where the statement wants an integer: refused, nothing sent.
    let err = client.query_one("SELECT $1::int", &[&Comb::new()]).await.unwrap_err();
    assert!(err.to_string().contains("error serializing parameter 0"), "{err}");
}

/// Bulk loading: `COPY ... FROM STDIN (FORMAT binary)` through `BinaryCopyInWriter`.
#[tokio::test]
async fn binary_copy_in() {
    let client = connect().await;
    client.batch_execute("CREATE TEMPORARY TABLE c (id uuid PRIMARY KEY, note text NOT NULL)").await.unwrap();
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(100_000);
    let sink = client.copy_in("COPY c (id, note) FROM STDIN (FORMAT binary)").await.unwrap();
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &[Type::UUID, Type::TEXT]));
    for (n, id) in shuffled.iter().enumerate() {
        let note = format!("row {n}");
        writer.as_mut().write(&[id, &note]).await.unwrap();
    }
    assert_eq!(writer.finish().await.unwrap(), 100_000);
    let back: Vec<Comb> =
        client.query("SELECT id FROM c ORDER BY id", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(back, generated);
    let note: String = client.query_one("SELECT note FROM c WHERE id = $1", &[&shuffled[42]]).await.unwrap().get(0);
    assert_eq!(note, "row 42");
}

/// A table keyed by UUID text in each text type: `CombText` binds the text, so an insert
/// stores the canonical text, `WHERE id = $1` finds rows (also ones another program wrote in
/// upper case, read back as the same id), a join on text keys works, and `Comb` (which binds
/// `uuid`) is refused by the driver for a text parameter instead of matching nothing.
#[tokio::test]
async fn text_keys_read_and_write() {
    let client = connect().await;
    for ty in ["text", "varchar(36)", "char(36)"] {
        let t = format!("text_keys_{}", ty.replace(['(', ')'], ""));
        client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {t}_c; DROP TABLE IF EXISTS {t};
                 CREATE TABLE {t} (id {ty} PRIMARY KEY, n int NOT NULL);
                 CREATE TABLE {t}_c (id {ty} PRIMARY KEY, parent {ty} NOT NULL REFERENCES {t} (id))"
            ))
            .await
            .unwrap();
        let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<CombText>(100);
        let insert = client.prepare(&format!("INSERT INTO {t} (id, n) VALUES ($1, $2)")).await.unwrap();
        for (n, id) in shuffled.iter().enumerate() {
            client.execute(&insert, &[id, &i32::try_from(n).unwrap()]).await.unwrap();
        }
        let stored: String = client
            .query_one(&*format!("SELECT id::text FROM {t} WHERE id = $1"), &[&generated[5]])
            .await
            .unwrap()
            .get(0);
        assert_eq!(stored, generated[5].to_string(), "{ty}: the canonical text");
        let back: Vec<CombText> = client
            .query(&*format!("SELECT id FROM {t} ORDER BY id COLLATE \"C\""), &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(back, generated, "{ty}");
        let child = CombText::new();
        client.execute(&*format!("INSERT INTO {t}_c VALUES ($1, $2)"), &[&child, &generated[9]]).await.unwrap();
        let parent: CombText = client
            .query_one(&*format!("SELECT p.id FROM {t}_c c JOIN {t} p ON p.id = c.parent WHERE c.id = $1"), &[&child])
            .await
            .unwrap()
            .get(0);
        assert_eq!(parent, generated[9], "{ty}");
        let other = CombText::new();
        client.execute(&*format!("INSERT INTO {t} VALUES (upper($1), 0)"), &[&other]).await.unwrap();
        let upper: CombText =
            client.query_one(&*format!("SELECT id FROM {t} WHERE id = upper($1)"), &[&other]).await.unwrap().get(0);
        assert_eq!(upper, other, "{ty}: upper-case text reads as the id");
        let e =
            client.query(&*format!("SELECT n FROM {t} WHERE id = $1"), &[&Comb::from(generated[0].to_comb())]).await;
        assert!(e.is_err(), "{ty}: Comb binds uuid, which a text parameter refuses");
    }
}

/// Code written for `uuid::Uuid` compiles with only the type changed to the text type.
mod swap_comb_text {
    combkey_testutil::uuid_swap_test!(combkey_postgres::CombText);
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_postgres::Comb`, and
/// observes the same (no database needed).
mod swap_comb {
    combkey_testutil::uuid_swap_test!(combkey_postgres::Comb);
}
