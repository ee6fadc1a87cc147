//! `sqlx.toml` overrides (this crate's `sqlx.toml`): `query!` gives and takes
//! `combkey_sqlx::Comb` for every PostgreSQL `uuid`, and `CombText` for one text column,
//! with no override in the queries. The query metadata is in `.sqlx/` (regenerate with
//! `SQLX_OFFLINE=false DATABASE_URL=$COMBKEY_PG_URL cargo test -p combkey-sqlx-toml-test`,
//! the table below created first); it runs against the real PostgreSQL.

use combkey_sqlx::{Comb, CombText};
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn type_and_table_overrides_from_sqlx_toml() {
    let url = combkey_testutil::pg_url();
    let mut c = PgConnection::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    let id = Comb::new();
    // 'UUID' = "combkey_sqlx::Comb": the parameter takes a Comb, the column is a Comb.
    let row = sqlx::query!(r#"SELECT $1::uuid AS "id!", NULL::uuid AS parent"#, id).fetch_one(&mut c).await.unwrap();
    let (back, parent): (Comb, Option<Comb>) = (row.id, row.parent);
    assert_eq!((back, parent), (id, None));
    // 'UUID[]' = "Vec<combkey_sqlx::Comb>": an array column is a Vec of the type.
    let row = sqlx::query!(r#"SELECT ARRAY[$1::uuid, $1::uuid] AS "ids!""#, id).fetch_one(&mut c).await.unwrap();
    let ids: Vec<Comb> = row.ids;
    assert_eq!(ids, [id, id]);

    // A helper written for uuid::Uuid (tests, benches, fixtures) binds through Comb: the
    // override changed the parameter type of every `query!` in the package. `.into()` at the
    // boundary is the whole change (docs/migrating.md); binding the Uuid itself does not
    // compile (`COMBKEY_COMPILE_FAIL_UUID_PARAM`, build.rs, checked by examples/migrating/sqlx-toml.sh).
    let fixture: uuid::Uuid = uuid::Uuid::new_v4();
    let row = sqlx::query!(r#"SELECT $1::uuid AS "id!""#, Comb::from(fixture)).fetch_one(&mut c).await.unwrap();
    assert_eq!(uuid::Uuid::from(row.id), fixture);
    #[cfg(combkey_uuid_param)]
    {
        let row = sqlx::query!(r#"SELECT $1::uuid AS "id!""#, fixture).fetch_one(&mut c).await.unwrap();
        let _ = row.id;
    }

    // A table's text key column: CombText by the table override.
    sqlx::query("CREATE TABLE IF NOT EXISTS combkey_sqlx_toml_legacy (id text PRIMARY KEY, note text NOT NULL)")
        .execute(&mut c)
        .await
        .unwrap();
    let key = CombText::new();
    sqlx::query!("INSERT INTO combkey_sqlx_toml_legacy (id, note) VALUES ($1, 'x')", key.to_string())
        .execute(&mut c)
        .await
        .unwrap();
    let row = sqlx::query!("SELECT id, note FROM combkey_sqlx_toml_legacy WHERE note = 'x' LIMIT 1")
        .fetch_one(&mut c)
        .await
        .unwrap();
    let read: CombText = row.id;
    assert_eq!(read, key);
    sqlx::query("DROP TABLE combkey_sqlx_toml_legacy").execute(&mut c).await.unwrap();
}
