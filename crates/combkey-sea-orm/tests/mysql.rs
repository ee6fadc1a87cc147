//! combkey-sea-orm on a real MariaDB or MySQL (`COMBKEY_MYSQL_URL`).

mod common;

use combkey_sea_orm::CombUuid;
use combkey_sea_orm::migration::InstallCombkeyFunctions;
use sea_orm::{Database, DatabaseConnection, FromQueryResult, Statement};
use sea_orm_migration::{MigrationTrait, SchemaManager};

async fn connect() -> DatabaseConnection {
    let url = common::mysql_url();
    Database::connect(&url).await.unwrap_or_else(|e| panic!("MySQL/MariaDB at {url} (source scripts/db.sh): {e}"))
}

#[tokio::test]
async fn entity_crud_order_relation_and_helpers() {
    let db = connect().await;
    common::exercise(&db).await;
    let ids = common::helper_table(&db).await;
    let pool = db.get_mysql_connection_pool();
    let by_sqlx: Vec<CombUuid> =
        sqlx::query_scalar("SELECT id FROM combkey_seaorm_helper ORDER BY id").fetch_all(pool).await.unwrap();
    assert_eq!(by_sqlx, ids);
    let ty: String = sqlx::query_scalar(
        "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'combkey_seaorm_helper' AND COLUMN_NAME = 'id'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(ty.to_lowercase(), "binary(16)", "not binary(1)");
    common::drop_helper(&db).await;
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
    let backend = db.get_database_backend();
    let made = Made::find_by_statement(Statement::from_string(backend, "SELECT combkey_v7() AS id"))
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.id.to_comb().version(), 7);
    // Up again is fine (MySQL has no CREATE OR REPLACE FUNCTION: the migration drops first).
    InstallCombkeyFunctions.up(&manager).await.unwrap();
}
