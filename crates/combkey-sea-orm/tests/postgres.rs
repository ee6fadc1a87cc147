//! combkey-sea-orm on a real PostgreSQL (`COMBKEY_PG_URL`).

mod common;

use combkey_sea_orm::CombUuid;
use combkey_sea_orm::migration::InstallCombkeyFunctions;
use sea_orm::{Database, DatabaseConnection, FromQueryResult, Statement};
use sea_orm_migration::{MigrationTrait, SchemaManager};

async fn connect() -> DatabaseConnection {
    let url = common::pg_url();
    Database::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url} (source scripts/db.sh): {e}"))
}

#[tokio::test]
async fn entity_crud_order_relation_and_helpers() {
    let db = connect().await;
    common::exercise(&db).await;

    // Tables made by the migration helpers read back through sqlx and diesel.
    let ids = common::helper_table(&db).await;
    let pool = db.get_postgres_connection_pool();
    let by_sqlx: Vec<CombUuid> =
        sqlx::query_scalar("SELECT id FROM combkey_seaorm_helper ORDER BY id").fetch_all(pool).await.unwrap();
    assert_eq!(by_sqlx, ids);
    let by_diesel: Vec<combkey_diesel::Comb> = {
        use diesel::prelude::*;
        let mut c = diesel::PgConnection::establish(&common::pg_url()).unwrap();
        diesel::sql_query("SELECT id FROM combkey_seaorm_helper ORDER BY id")
            .load::<DieselRow>(&mut c)
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
struct DieselRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: combkey_diesel::Comb,
}

#[derive(FromQueryResult)]
struct Made {
    id: CombUuid,
}

#[tokio::test]
async fn migration_installs_the_database_functions() {
    let db = connect().await;
    let manager = SchemaManager::new(&db);
    InstallCombkeyFunctions.up(&manager).await.unwrap();
    let made = Made::find_by_statement(Statement::from_string(db.get_database_backend(), "SELECT combkey_v7() AS id"))
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.id.to_comb().version(), 7);
}
