//! combkey-diesel through diesel-async: `AsyncPgConnection` on the real PostgreSQL and
//! `AsyncMysqlConnection` on the real MariaDB. diesel-async sends and reads values with
//! diesel's own `ToSql`/`FromSql`, so the same impls serve it; these tests prove it on the
//! wire (tokio-postgres, mysql_async), temporary tables in transactions never committed.
#![allow(missing_docs)] // `table!` declares public items without docs.

mod common;

use combkey_diesel::Comb;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncMysqlConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

mod pg {
    diesel::table! {
        combkey_async_orders (id) {
            id -> Uuid,
            note -> Text,
        }
    }
    diesel::table! {
        combkey_async_items (id) {
            id -> Uuid,
            order_id -> Uuid,
            n -> Integer,
        }
    }
    diesel::joinable!(combkey_async_items -> combkey_async_orders (order_id));
    diesel::allow_tables_to_appear_in_same_query!(combkey_async_orders, combkey_async_items);
}

mod my {
    diesel::table! {
        combkey_async_orders (id) {
            id -> Binary,
            note -> Text,
        }
    }
    diesel::table! {
        combkey_async_items (id) {
            id -> Binary,
            order_id -> Binary,
            n -> Integer,
        }
    }
    diesel::joinable!(combkey_async_items -> combkey_async_orders (order_id));
    diesel::allow_tables_to_appear_in_same_query!(combkey_async_orders, combkey_async_items);
}

#[tokio::test]
async fn async_pg_connection() {
    use pg::combkey_async_items::dsl as i;
    use pg::combkey_async_orders::dsl as o;
    let url = common::pg_url();
    let mut c = AsyncPgConnection::establish(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    c.begin_test_transaction().await.unwrap();
    c.batch_execute(
        "CREATE TEMPORARY TABLE combkey_async_orders (id uuid PRIMARY KEY, note text NOT NULL);
         CREATE TEMPORARY TABLE combkey_async_items (id uuid PRIMARY KEY, order_id uuid NOT NULL, n int NOT NULL)",
    )
    .await
    .unwrap();
    let (ids, shuffled) = common::generated_and_shuffled(1000);
    let rows: Vec<_> = shuffled.iter().map(|id| (o::id.eq(*id), o::note.eq("n"))).collect();
    diesel::insert_into(o::combkey_async_orders).values(&rows).execute(&mut c).await.unwrap();
    let back: Vec<Comb> = o::combkey_async_orders.select(o::id).order(o::id.asc()).load(&mut c).await.unwrap();
    assert_eq!(back, ids, "ORDER BY id is generation order");
    // A literal decodes, a bound value equals the literal inside SQL.
    let lit: Comb = diesel::select(diesel::dsl::sql::<diesel::sql_types::Uuid>(&format!("'{}'::uuid", ids[0])))
        .get_result(&mut c)
        .await
        .unwrap();
    assert_eq!(lit, ids[0]);
    let found: i64 = o::combkey_async_orders.filter(o::id.eq(ids[5])).count().get_result(&mut c).await.unwrap();
    assert_eq!(found, 1);
    // LEFT JOIN with a missing right side.
    diesel::insert_into(i::combkey_async_items)
        .values((i::id.eq(Comb::new()), i::order_id.eq(ids[0]), i::n.eq(1)))
        .execute(&mut c)
        .await
        .unwrap();
    let joined: Vec<(Comb, Option<(Comb, i32)>)> = o::combkey_async_orders
        .left_join(i::combkey_async_items)
        .select((o::id, (i::id, i::n).nullable()))
        .order(o::id.asc())
        .limit(2)
        .load(&mut c)
        .await
        .unwrap();
    assert!(joined[0].1.is_some() && joined[1].1.is_none(), "{joined:?}");
    // NULL into a non-Option: an error, not a panic.
    let err = diesel::select(diesel::dsl::sql::<diesel::sql_types::Uuid>("NULL::uuid"))
        .get_result::<Comb>(&mut c)
        .await
        .unwrap_err();
    assert!(common::is_unexpected_null(&err), "{err}");
}

#[tokio::test]
async fn async_mysql_connection() {
    use my::combkey_async_items::dsl as i;
    use my::combkey_async_orders::dsl as o;
    let url = common::mysql_url();
    let mut c = AsyncMysqlConnection::establish(&url).await.unwrap_or_else(|e| panic!("MariaDB at {url}: {e}"));
    c.batch_execute(
        "CREATE TEMPORARY TABLE combkey_async_orders (id BINARY(16) NOT NULL PRIMARY KEY, note TEXT NOT NULL);
         CREATE TEMPORARY TABLE combkey_async_items (id BINARY(16) NOT NULL PRIMARY KEY, order_id BINARY(16) NOT NULL, n INT NOT NULL)",
    )
    .await
    .unwrap();
    c.begin_test_transaction().await.unwrap();
    let (ids, shuffled) = common::generated_and_shuffled(1000);
    let rows: Vec<_> = shuffled.iter().map(|id| (o::id.eq(*id), o::note.eq("n"))).collect();
    diesel::insert_into(o::combkey_async_orders).values(&rows).execute(&mut c).await.unwrap();
    let back: Vec<Comb> = o::combkey_async_orders.select(o::id).order(o::id.asc()).load(&mut c).await.unwrap();
    assert_eq!(back, ids, "ORDER BY id is generation order");
    let lit: Comb =
        diesel::select(diesel::dsl::sql::<diesel::sql_types::Binary>(&format!("X'{}'", common::hex(ids[0]))))
            .get_result(&mut c)
            .await
            .unwrap();
    assert_eq!(lit, ids[0]);
    let found: i64 = o::combkey_async_orders.filter(o::id.eq(ids[5])).count().get_result(&mut c).await.unwrap();
    assert_eq!(found, 1);
    diesel::insert_into(i::combkey_async_items)
        .values((i::id.eq(Comb::new()), i::order_id.eq(ids[0]), i::n.eq(1)))
        .execute(&mut c)
        .await
        .unwrap();
    let joined: Vec<(Comb, Option<(Comb, i32)>)> = o::combkey_async_orders
        .left_join(i::combkey_async_items)
        .select((o::id, (i::id, i::n).nullable()))
        .order(o::id.asc())
        .limit(2)
        .load(&mut c)
        .await
        .unwrap();
    assert!(joined[0].1.is_some() && joined[1].1.is_none(), "{joined:?}");
    let err = diesel::select(diesel::dsl::sql::<diesel::sql_types::Binary>("NULL"))
        .get_result::<Comb>(&mut c)
        .await
        .unwrap_err();
    assert!(common::is_unexpected_null(&err), "{err}");
}
