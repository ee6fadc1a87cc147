//! One id, three ORMs, one table: orders written with sqlx, their items with diesel, read in
//! key order, joined and range-queried (`Comb::min_for`/`max_for`) with sqlx, diesel and
//! sea-orm, on PostgreSQL (`uuid`), MariaDB (`BINARY(16)`) and SQLite (`BLOB`). The ids
//! carry known times (the generator's `_at` API), one second apart, so a time range names
//! exactly which rows it must return.
#![allow(missing_docs)] // `table!` declares public items without docs.

use combkey::{Comb, Timestamp, V7Generator};
use diesel::prelude::*;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

const ORDERS: usize = 60;

/// `ORDERS` ids made one second apart from `t0`, in generation order.
fn made(t0: Timestamp) -> Vec<Comb> {
    let g = V7Generator::new();
    (0..ORDERS).map(|i| g.generate_at(t0.saturating_add_ms(1000 * i64::try_from(i).unwrap()))).collect()
}

/// The range "created from second 10 to the end of second 19" as key bounds, and the ids it
/// must return.
fn range(t0: Timestamp, ids: &[Comb]) -> (Comb, Comb, Vec<Comb>) {
    let lo = Comb::min_for(t0.saturating_add_ms(10_000)).unwrap();
    let hi = Comb::max_for(t0.saturating_add_ms(19_999)).unwrap();
    (lo, hi, ids[10..20].to_vec())
}

fn shuffled(ids: &[Comb]) -> Vec<Comb> {
    use rand::seq::SliceRandom;
    let mut s = ids.to_vec();
    s.shuffle(&mut rand::rng());
    s
}

mod entity {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_interop_orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: CombUuid,
        pub n: i32,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// What sea-orm reads: the ids in key order, and those in the range.
async fn sea_orm_reads(db: &sea_orm::DatabaseConnection, lo: Comb, hi: Comb) -> (Vec<Comb>, Vec<Comb>) {
    let all = entity::Entity::find().order_by_asc(entity::Column::Id).all(db).await.unwrap();
    let in_range = entity::Entity::find()
        .filter(entity::Column::Id.between(combkey_sea_orm::CombUuid::from(lo), combkey_sea_orm::CombUuid::from(hi)))
        .order_by_asc(entity::Column::Id)
        .all(db)
        .await
        .unwrap();
    (all.iter().map(|m| m.id.to_comb()).collect(), in_range.iter().map(|m| m.id.to_comb()).collect())
}

mod uuid_tables {
    diesel::table! {
        combkey_interop_orders (id) {
            id -> Uuid,
            n -> Integer,
        }
    }
    diesel::table! {
        combkey_interop_items (id) {
            id -> Uuid,
            order_id -> Uuid,
        }
    }
    diesel::joinable!(combkey_interop_items -> combkey_interop_orders (order_id));
    diesel::allow_tables_to_appear_in_same_query!(combkey_interop_orders, combkey_interop_items);
}

mod binary_tables {
    diesel::table! {
        combkey_interop_orders (id) {
            id -> Binary,
            n -> Integer,
        }
    }
    diesel::table! {
        combkey_interop_items (id) {
            id -> Binary,
            order_id -> Binary,
        }
    }
    diesel::joinable!(combkey_interop_items -> combkey_interop_orders (order_id));
    diesel::allow_tables_to_appear_in_same_query!(combkey_interop_orders, combkey_interop_items);
}

type DieselComb = combkey_diesel::Comb;

/// The part every backend shares: sqlx writes the orders shuffled (`$insert`), diesel writes
/// an item for every third order and reads the join and the range, sqlx reads the range with
/// two binds (`$select`). `$tables` is the backend's diesel schema, `$conn` its connection.
macro_rules! sqlx_then_diesel {
    ($tables:ident, $pool:expr, $conn:expr, $ids:expr, $lo:expr, $hi:expr, $expected:expr, $insert:literal, $select:literal) => {{
        use $tables::combkey_interop_items::dsl as i;
        use $tables::combkey_interop_orders::dsl as o;
        let (pool, ids, lo, hi, expected) = ($pool, $ids, $lo, $hi, $expected);
        for id in shuffled(ids) {
            let n = i32::try_from(ids.iter().position(|x| *x == id).unwrap()).unwrap();
            sqlx::query($insert).bind(combkey_sqlx::Comb::from(id)).bind(n).execute(pool).await.unwrap();
        }
        let c = $conn;
        let items: Vec<(DieselComb, DieselComb)> =
            ids.iter().step_by(3).map(|o| (DieselComb::new(), DieselComb::from(*o))).collect();
        for (item, order) in &items {
            diesel::insert_into(i::combkey_interop_items)
                .values((i::id.eq(item), i::order_id.eq(order)))
                .execute(c)
                .unwrap();
        }
        let joined: Vec<(DieselComb, DieselComb)> = i::combkey_interop_items
            .inner_join(o::combkey_interop_orders)
            .select((i::id, o::id))
            .order(o::id.asc())
            .load(c)
            .unwrap();
        assert_eq!(joined, items, "diesel joins sqlx's orders to its items, in key order");
        let by_diesel: Vec<DieselComb> = o::combkey_interop_orders
            .select(o::id)
            .filter(o::id.between(DieselComb::from(lo), DieselComb::from(hi)))
            .order(o::id.asc())
            .load(c)
            .unwrap();
        assert_eq!(by_diesel.iter().map(|x| x.to_comb()).collect::<Vec<_>>(), *expected);
        let by_sqlx: Vec<combkey_sqlx::Comb> = sqlx::query_scalar($select)
            .bind(combkey_sqlx::Comb::from(lo))
            .bind(combkey_sqlx::Comb::from(hi))
            .fetch_all(pool)
            .await
            .unwrap();
        assert_eq!(by_sqlx.iter().map(|x| x.to_comb()).collect::<Vec<_>>(), *expected);
    }};
}

#[tokio::test]
async fn postgres() {
    let url = combkey_testutil::pg_url();
    let t0 = Timestamp::from_unix_ms(1_700_000_000_000);
    let ids = made(t0);
    let (lo, hi, expected) = range(t0, &ids);
    let pool = sqlx::PgPool::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS combkey_interop_items; DROP TABLE IF EXISTS combkey_interop_orders;
         CREATE TABLE combkey_interop_orders (id uuid PRIMARY KEY, n int NOT NULL);
         CREATE TABLE combkey_interop_items (id uuid PRIMARY KEY, order_id uuid NOT NULL REFERENCES combkey_interop_orders (id))",
    )
    .execute(&pool)
    .await
    .unwrap();
    // sqlx writes the orders, shuffled; diesel writes items and reads; sqlx reads the range.
    let mut c = PgConnection::establish(&url).unwrap();
    sqlx_then_diesel!(
        uuid_tables,
        &pool,
        &mut c,
        &ids,
        lo,
        hi,
        &expected,
        "INSERT INTO combkey_interop_orders (id, n) VALUES ($1, $2)",
        "SELECT id FROM combkey_interop_orders WHERE id >= $1 AND id <= $2 ORDER BY id"
    );
    // sea-orm reads all in key order (= generation order) and the range.
    let db = sea_orm::SqlxPostgresConnector::from_sqlx_postgres_pool(pool.clone());
    let (all, in_range) = sea_orm_reads(&db, lo, hi).await;
    assert_eq!(all, ids, "sea-orm reads sqlx's rows in generation order");
    assert_eq!(in_range, expected);
    sqlx::raw_sql("DROP TABLE combkey_interop_items; DROP TABLE combkey_interop_orders").execute(&pool).await.unwrap();
}

#[tokio::test]
async fn mariadb() {
    let url = combkey_testutil::mysql_url();
    let t0 = Timestamp::from_unix_ms(1_700_000_000_000);
    let ids = made(t0);
    let (lo, hi, expected) = range(t0, &ids);
    let pool = sqlx::MySqlPool::connect(&url).await.unwrap_or_else(|e| panic!("MariaDB at {url}: {e}"));
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS combkey_interop_items; DROP TABLE IF EXISTS combkey_interop_orders;
         CREATE TABLE combkey_interop_orders (id BINARY(16) NOT NULL PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB;
         CREATE TABLE combkey_interop_items (id BINARY(16) NOT NULL PRIMARY KEY, order_id BINARY(16) NOT NULL,
           FOREIGN KEY (order_id) REFERENCES combkey_interop_orders (id)) ENGINE=InnoDB",
    )
    .execute(&pool)
    .await
    .unwrap();
    let mut c = MysqlConnection::establish(&url).unwrap();
    sqlx_then_diesel!(
        binary_tables,
        &pool,
        &mut c,
        &ids,
        lo,
        hi,
        &expected,
        "INSERT INTO combkey_interop_orders (id, n) VALUES (?, ?)",
        "SELECT id FROM combkey_interop_orders WHERE id >= ? AND id <= ? ORDER BY id"
    );
    let db = sea_orm::SqlxMySqlConnector::from_sqlx_mysql_pool(pool.clone());
    let (all, in_range) = sea_orm_reads(&db, lo, hi).await;
    assert_eq!(all, ids, "sea-orm reads sqlx's rows in generation order");
    assert_eq!(in_range, expected);
    sqlx::raw_sql("DROP TABLE combkey_interop_items; DROP TABLE combkey_interop_orders").execute(&pool).await.unwrap();
}

#[tokio::test]
async fn sqlite() {
    let dir = std::env::temp_dir().join(format!("combkey-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("interop.db");
    let t0 = Timestamp::from_unix_ms(1_700_000_000_000);
    let ids = made(t0);
    let (lo, hi, expected) = range(t0, &ids);
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=rwc", file.display())).await.unwrap();
    sqlx::raw_sql(
        "CREATE TABLE combkey_interop_orders (id BLOB NOT NULL PRIMARY KEY, n INTEGER NOT NULL);
         CREATE TABLE combkey_interop_items (id BLOB NOT NULL PRIMARY KEY, order_id BLOB NOT NULL REFERENCES combkey_interop_orders (id))",
    )
    .execute(&pool)
    .await
    .unwrap();
    let mut c = SqliteConnection::establish(&file.display().to_string()).unwrap();
    sqlx_then_diesel!(
        binary_tables,
        &pool,
        &mut c,
        &ids,
        lo,
        hi,
        &expected,
        "INSERT INTO combkey_interop_orders (id, n) VALUES (?, ?)",
        "SELECT id FROM combkey_interop_orders WHERE id >= ? AND id <= ? ORDER BY id"
    );
    let db = sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(pool.clone());
    let (all, in_range) = sea_orm_reads(&db, lo, hi).await;
    assert_eq!(all, ids, "sea-orm reads sqlx's rows in generation order");
    assert_eq!(in_range, expected);
    drop(c);
    pool.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
