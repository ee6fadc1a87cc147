//! sqlx's compile-time checked macros with the column type, by type override. The queries'
//! metadata is in `.sqlx/` (written by a build with `DATABASE_URL` and `SQLX_OFFLINE_DIR`
//! set), so this builds offline; it runs against the real PostgreSQL.

mod common;

use combkey_sqlx::Comb;
use sqlx::{Connection, PgConnection};

struct Order {
    id: Comb,
    parent: Option<Comb>,
    n: i32,
}

#[tokio::test]
async fn query_and_query_as_with_type_overrides() {
    let url = common::pg_url();
    let mut c = PgConnection::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    let id = Comb::new();
    let row = sqlx::query!(r#"SELECT $1::uuid AS "id!: Comb", NULL::uuid AS "parent: Comb""#, id as Comb)
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(row.id, id);
    assert_eq!(row.parent, None);
    let order = sqlx::query_as!(
        Order,
        r#"SELECT $1::uuid AS "id!: Comb", $2::uuid AS "parent: Comb", 7 AS "n!""#,
        id as Comb,
        Some(id) as Option<Comb>
    )
    .fetch_one(&mut c)
    .await
    .unwrap();
    assert_eq!((order.id, order.parent, order.n), (id, Some(id), 7));
}
