//! combkey-sea-orm on a real MariaDB or MySQL (`COMBKEY_MYSQL_URL`).

mod common;

use combkey_sea_orm::CombUuid;
use combkey_sea_orm::migration::InstallCombkeyFunctions;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, FromQueryResult, Statement};
use sea_orm_migration::{MigrationTrait, SchemaManager};

async fn connect() -> DatabaseConnection {
    let url = common::mysql_url();
    Database::connect(&url).await.unwrap_or_else(|e| panic!("MySQL/MariaDB at {url} (source scripts/servers.sh): {e}"))
}

/// The tests that share this backend's tables run one at a time.
static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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
    common::bad_data(
        &db,
        "CREATE TABLE combkey_seaorm_orders (id VARBINARY(16) NOT NULL PRIMARY KEY, parent VARBINARY(16), note TEXT NOT NULL)",
        "UNHEX('000102030405060708090A0B0C0D0E')",
        "found 15 bytes",
    )
    .await;
}

#[tokio::test]
async fn migration_helpers_read_by_sqlx_and_diesel() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
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
    let by_diesel: Vec<CombUuid> = {
        use diesel::prelude::*;
        let mut c = diesel::MysqlConnection::establish(&common::mysql_url()).unwrap();
        diesel::sql_query("SELECT id FROM combkey_seaorm_helper ORDER BY id")
            .load::<common::DieselBinaryRow>(&mut c)
            .unwrap()
            .into_iter()
            .map(|r| CombUuid::from(r.id.to_comb()))
            .collect()
    };
    assert_eq!(by_diesel, ids);
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
    InstallCombkeyFunctions.down(&manager).await.unwrap();
    let err = db.execute_unprepared("SELECT combkey_v7()").await.unwrap_err();
    assert!(err.to_string().contains("combkey_v7"), "down removed the function: {err}");
    InstallCombkeyFunctions.up(&manager).await.unwrap(); // other tests use them
}

#[tokio::test]
async fn partitioned_table_migration() {
    let db = connect().await;
    let _guard = LOCK.lock().await;
    common::partitioned_table_migration(
        &db,
        |p| format!("SELECT COUNT(*) FROM combkey_seaorm_events PARTITION ({p})"),
        ["p2026_01", "p2026_02", "pmax"],
    )
    .await;
}

/// A table keyed by UUID text through `CombTextUuid` (sea-orm's `TextUuid` for combkey ids).
#[tokio::test]
async fn text_keys() {
    let db = connect().await;
    common::text_keys(&db, "CHAR(36)").await;
}
