//! combkey-sea-orm on embedded SQLite (a file in a temporary directory, so every pooled
//! connection sees the same database).

mod common;

use combkey_sea_orm::CombUuid;
use sea_orm::{ConnectOptions, Database, DatabaseConnection};

async fn connect(dir: &std::path::Path) -> DatabaseConnection {
    let url = format!("sqlite://{}?mode=rwc", dir.join("combkey.db").display());
    Database::connect(ConnectOptions::new(url)).await.expect("SQLite")
}

#[tokio::test]
async fn entity_crud_order_relation_and_helpers() {
    let dir = std::env::temp_dir().join(format!("combkey-sea-orm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = connect(&dir).await;
    common::exercise(&db).await;
    let ids = common::helper_table(&db).await;
    let pool = db.get_sqlite_connection_pool();
    let by_sqlx: Vec<CombUuid> =
        sqlx::query_scalar("SELECT id FROM combkey_seaorm_helper ORDER BY id").fetch_all(pool).await.unwrap();
    assert_eq!(by_sqlx, ids);
    let kinds: Vec<String> =
        sqlx::query_scalar("SELECT typeof(id) FROM combkey_seaorm_helper").fetch_all(pool).await.unwrap();
    assert!(kinds.iter().all(|k| k == "blob"), "{kinds:?}");
    let declared: String =
        sqlx::query_scalar("SELECT type FROM pragma_table_info('combkey_seaorm_helper') WHERE name = 'id'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(declared.to_lowercase(), "blob");
    common::drop_helper(&db).await;
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}
