//! combkey-sea-orm on embedded SQLite (a file in a temporary directory, so every pooled
//! connection sees the same database), and through sea-orm's mock driver.

mod common;

use std::collections::BTreeMap;

use combkey_sea_orm::CombUuid;
use combkey_sea_orm::migration::InstallCombkeyFunctions;
use sea_orm::{ConnectOptions, Database, DatabaseBackend, DatabaseConnection, EntityTrait, MockDatabase, Value};
use sea_orm_migration::{MigrationTrait, SchemaManager};

async fn connect(name: &str) -> (DatabaseConnection, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("combkey-sea-orm-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("combkey.db").display());
    (Database::connect(ConnectOptions::new(url)).await.expect("SQLite"), dir)
}

#[tokio::test]
async fn entity_patterns_and_blob_keys() {
    let (db, dir) = connect("patterns").await;
    common::create_tables(&db).await;
    // create_table_from_entity declares the key blob, not sea-query's uuid_text.
    let pool = db.get_sqlite_connection_pool();
    let declared: String =
        sqlx::query_scalar("SELECT type FROM pragma_table_info('combkey_seaorm_orders') WHERE name = 'id'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(declared.to_lowercase(), "blob");
    common::exercise(&db).await;
    common::rows_created_in_a_time_range(&db).await;
    common::sea_orm_uuid_tests_ported(&db).await;
    common::bad_data(
        &db,
        "CREATE TABLE combkey_seaorm_orders (id BLOB NOT NULL PRIMARY KEY, parent BLOB, note TEXT NOT NULL)",
        "zeroblob(15)",
        "expected 16 bytes, found 15",
    )
    .await;
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn migration_helpers_read_by_sqlx_and_diesel() {
    let (db, dir) = connect("helpers").await;
    let ids = common::helper_table(&db).await;
    let pool = db.get_sqlite_connection_pool();
    let by_sqlx: Vec<CombUuid> =
        sqlx::query_scalar("SELECT id FROM combkey_seaorm_helper ORDER BY id").fetch_all(pool).await.unwrap();
    assert_eq!(by_sqlx, ids);
    let kinds: Vec<String> =
        sqlx::query_scalar("SELECT typeof(id) FROM combkey_seaorm_helper").fetch_all(pool).await.unwrap();
    assert!(kinds.iter().all(|k| k == "blob"), "{kinds:?}");
    let by_diesel: Vec<CombUuid> = {
        use diesel::prelude::*;
        let mut c = diesel::SqliteConnection::establish(&dir.join("combkey.db").display().to_string()).unwrap();
        diesel::sql_query("SELECT id FROM combkey_seaorm_helper ORDER BY id")
            .load::<common::DieselBinaryRow>(&mut c)
            .unwrap()
            .into_iter()
            .map(|r| CombUuid::from(r.id.to_comb()))
            .collect()
    };
    assert_eq!(by_diesel, ids);
    // The functions migration does nothing on SQLite (no stored functions), up or down.
    let manager = SchemaManager::new(&db);
    InstallCombkeyFunctions.up(&manager).await.unwrap();
    InstallCombkeyFunctions.down(&manager).await.unwrap();
    common::drop_helper(&db).await;
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A driver combkey-sqlx does not decode (sea-orm's mock): the same values read, the same
/// errors come back, through sea-orm's own values.
#[tokio::test]
async fn other_drivers_decode_with_the_same_rules() {
    let id = CombUuid::new();
    let row = |v: Value| BTreeMap::from([("id", v), ("parent", Value::Uuid(None)), ("note", Value::from("n"))]);
    let db = MockDatabase::new(DatabaseBackend::MySql)
        .append_query_results([
            vec![row(Value::from(uuid::Uuid::from(id.to_comb())))],
            vec![row(Value::from(id.to_comb().as_bytes().to_vec()))],
            vec![row(Value::from(id.to_string().to_uppercase()))],
            vec![row(Value::from(vec![0u8; 15]))],
            vec![row(Value::from("garbage"))],
        ])
        .into_connection();
    for form in ["uuid", "16 bytes", "uppercase text"] {
        let m = common::order::Entity::find().one(&db).await.unwrap().unwrap();
        assert_eq!(m.id, id, "{form}");
    }
    for expected in ["found 15 bytes", "invalid UUID length"] {
        let err = common::order::Entity::find().one(&db).await.unwrap_err();
        assert!(combkey_testutil::chain(&err).contains(expected), "{err}");
    }
}

#[tokio::test]
async fn partitioned_table_is_an_error_on_sqlite() {
    use combkey_sea_orm::migration::{comb_primary_key, create_partitioned_table};
    use sea_orm_migration::prelude::*;
    let (db, dir) = connect("partitions").await;
    let manager = SchemaManager::new(&db);
    let table = Table::create().table("events").col(comb_primary_key("id", DatabaseBackend::Sqlite)).to_owned();
    let months = combkey::sql::Partitioning::new("events", combkey::sql::Interval::Month).unwrap();
    let (from, to) = ("2026-01-01T00:00:00Z".parse().unwrap(), "2026-03-01T00:00:00Z".parse().unwrap());
    let err = create_partitioned_table(&manager, table, &months, from, to, false).await.unwrap_err();
    assert!(err.to_string().contains("has no table partitioning"), "{err}");
    assert!(!common::table_exists(&db, "events").await);
    drop(db);
    let _ = std::fs::remove_dir_all(dir);
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_sea_orm::CombUuid`, and
/// observes the same (no database needed).
mod swap_comb_uuid {
    combkey_testutil::uuid_swap_test!(combkey_sea_orm::CombUuid);
}

/// A table keyed by UUID text through `CombTextUuid` (sea-orm's `TextUuid` for combkey ids).
#[tokio::test]
async fn text_keys() {
    let (db, dir) = connect("text_keys").await;
    common::text_keys(&db, "TEXT").await;
    db.close().await.unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

/// Code written for `uuid::Uuid` compiles with only the type changed to the text type.
mod swap_comb_text_uuid {
    combkey_testutil::uuid_swap_test!(combkey_sea_orm::CombTextUuid);
}
