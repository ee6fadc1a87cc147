//! combkey-sea-orm on a real PostgreSQL (`COMBKEY_PG_URL`).

mod common;

use combkey_sea_orm::migration::InstallCombkeyFunctions;
use combkey_sea_orm::{CombTextUuid, CombUuid};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, Database, DatabaseConnection, EntityTrait, FromQueryResult,
    QueryFilter, QueryOrder, Set, Statement,
};
use sea_orm_migration::{MigrationTrait, SchemaManager};

async fn connect() -> DatabaseConnection {
    let url = common::pg_url();
    Database::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url} (source scripts/servers.sh): {e}"))
}

#[tokio::test]
async fn entity_patterns() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    common::exercise(&db).await;
}

#[tokio::test]
async fn rows_created_in_a_time_range() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    common::rows_created_in_a_time_range(&db).await;
}

#[tokio::test]
async fn sea_orm_uuid_tests_ported() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    common::sea_orm_uuid_tests_ported(&db).await;
}

#[tokio::test]
async fn bad_data_and_null() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    // A uuid column cannot hold 15 bytes; a bytea key column read as the id is a typed
    // mismatch error (the sqlx error kept, its text naming both types).
    common::drop_helper(&db).await;
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_seaorm_orders").await.unwrap();
    db.execute_unprepared(
        "CREATE TABLE combkey_seaorm_orders (id bytea PRIMARY KEY, parent bytea, note text NOT NULL)",
    )
    .await
    .unwrap();
    db.execute_unprepared("INSERT INTO combkey_seaorm_orders VALUES ('\\x00'::bytea, NULL, 'bad')").await.unwrap();
    let err = common::order::Entity::find().all(&db).await.unwrap_err();
    assert!(matches!(common::query_sqlx_error(&err), Some(sqlx::Error::ColumnDecode { .. })), "{err:?}");
    assert!(combkey_testutil::chain(&err).contains("mismatched types"), "{err}");
    db.execute_unprepared("DROP TABLE combkey_seaorm_orders").await.unwrap();
}

/// `Vec<CombUuid>` fields (`uuid[]`) and array conditions: sea-orm's `postgres-array`.
mod tagged {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_tagged")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: CombUuid,
        pub related: Vec<CombUuid>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    #[async_trait::async_trait]
    impl ActiveModelBehavior for ActiveModel {
        async fn before_save<C: ConnectionTrait>(self, _db: &C, insert: bool) -> Result<Self, DbErr> {
            combkey_sea_orm::before_save(self, insert)
        }
    }
}

#[tokio::test]
async fn arrays() {
    let db = connect().await;
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_seaorm_tagged").await.unwrap();
    let stmt = combkey_sea_orm::create_table_from_entity(db.get_database_backend(), tagged::Entity);
    assert!(db.get_database_backend().build(&stmt).to_string().contains("uuid[]"));
    common::execute_schema(&db, &stmt).await.unwrap();
    let (ids, _) = combkey_testutil::generated_and_shuffled::<CombUuid>(6);
    for (n, id) in ids.iter().enumerate() {
        tagged::ActiveModel { id: Set(*id), related: Set(ids[..n].to_vec()) }.insert(&db).await.unwrap();
    }
    let last = tagged::Entity::find_by_id(ids[5]).one(&db).await.unwrap().unwrap();
    assert_eq!(last.related, &ids[..5], "a uuid[] field reads back in order");
    // Both ids bound as one uuid[] value (`= ANY($1)`); sea-orm 1.1 has no `eq_any`, so there
    // the same rows through `IN`.
    #[cfg(not(combkey_sea_orm_1_1))]
    let wanted = tagged::Column::Id.eq_any(vec![ids[1], ids[3]]);
    #[cfg(combkey_sea_orm_1_1)]
    let wanted = tagged::Column::Id.is_in(vec![ids[1], ids[3]]);
    let picked = tagged::Entity::find().filter(wanted).order_by_asc(tagged::Column::Id).all(&db).await.unwrap();
    assert_eq!(picked.iter().map(|m| m.id).collect::<Vec<_>>(), [ids[1], ids[3]], "= ANY($1) with a uuid[] bind");
    let empty = tagged::Entity::find_by_id(ids[0]).one(&db).await.unwrap().unwrap();
    assert!(empty.related.is_empty());
    // Raw sqlx on sea-orm's pool: a Vec<CombUuid> binds as one uuid[] and reads back from one.
    let pool = db.get_postgres_connection_pool();
    let found: Vec<CombUuid> =
        sqlx::query_scalar("SELECT id FROM combkey_seaorm_tagged WHERE id = ANY($1) ORDER BY id")
            .bind(vec![ids[4], ids[2]])
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(found, [ids[2], ids[4]]);
    let related: Vec<CombUuid> = sqlx::query_scalar("SELECT related FROM combkey_seaorm_tagged WHERE id = $1")
        .bind(ids[3])
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(related, &ids[..3]);
    let texts: Vec<String> = sqlx::query_scalar("SELECT unnest($1::text[])")
        .bind(vec![CombTextUuid::from(ids[0].to_comb()), CombTextUuid::from(ids[1].to_comb())])
        .fetch_all(pool)
        .await
        .unwrap();
    assert_eq!(texts, [ids[0].to_string(), ids[1].to_string()]);
    db.execute_unprepared("DROP TABLE combkey_seaorm_tagged").await.unwrap();
}

#[tokio::test]
async fn migration_helpers_read_by_sqlx_and_diesel() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    let ids = common::helper_table(&db).await;
    let pool = db.get_postgres_connection_pool();
    let by_sqlx: Vec<CombUuid> =
        sqlx::query_scalar("SELECT id FROM combkey_seaorm_helper ORDER BY id").fetch_all(pool).await.unwrap();
    assert_eq!(by_sqlx, ids);
    let by_diesel: Vec<combkey_diesel::Comb> = {
        use diesel::prelude::*;
        let mut c = diesel::PgConnection::establish(&common::pg_url()).unwrap();
        diesel::sql_query("SELECT id FROM combkey_seaorm_helper ORDER BY id")
            .load::<DieselUuidRow>(&mut c)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(by_diesel.into_iter().map(|c| CombUuid::from(c.to_comb())).collect::<Vec<_>>(), ids);
    // Raw sqlx binds the same type.
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM combkey_seaorm_helper WHERE id = $1")
        .bind(ids[0])
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(n, 1);
    common::drop_helper(&db).await;
}

#[derive(diesel::QueryableByName)]
struct DieselUuidRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: combkey_diesel::Comb,
}

#[derive(FromQueryResult)]
struct Made {
    id: CombUuid,
}

#[tokio::test]
async fn migration_installs_and_removes_the_database_functions() {
    let db = connect().await;
    let manager = SchemaManager::new(&db);
    InstallCombkeyFunctions.up(&manager).await.unwrap();
    let made = Made::find_by_statement(Statement::from_string(db.get_database_backend(), "SELECT combkey_v7() AS id"))
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.id.to_comb().version(), 7);
    InstallCombkeyFunctions.down(&manager).await.unwrap();
    let err = db.execute_unprepared("SELECT combkey_v7()").await.unwrap_err();
    assert!(err.to_string().contains("combkey_v7"), "down removed the function: {err}");
    InstallCombkeyFunctions.up(&manager).await.unwrap(); // other tests use them
}

/// The tests that share this backend's tables run one at a time.
static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn partitioned_table_migration() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    common::partitioned_table_migration(
        &db,
        |p| format!("SELECT COUNT(*) FROM {p}"),
        ["combkey_seaorm_events_2026_01", "combkey_seaorm_events_2026_02", "combkey_seaorm_events_default"],
    )
    .await;
}

/// A table keyed by UUID text through `CombTextUuid` (sea-orm's `TextUuid` for combkey ids).
#[tokio::test]
async fn text_keys() {
    let db = connect().await;
    common::text_keys(&db, "text").await;
}
