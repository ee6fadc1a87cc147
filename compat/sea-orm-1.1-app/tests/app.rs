//! The app after the swap, on PostgreSQL (COMBKEY_PG_URL, a database of its own) and SQLite (a
//! file of its own), with rows its `uuid::Uuid` version wrote before the swap.

use combkey_sea_orm::CombUuid;
use compat_sea_orm_1_1_app::entities::{document, person};
use compat_sea_orm_1_1_app::migration::Migrator;
use compat_sea_orm_1_1_app::*;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, EntityTrait, Statement};
use sea_orm_migration::MigratorTrait;

/// Writes a person as the app did before the swap: a `uuid::Uuid::new_v4()` key.
async fn old_person(db: &DatabaseConnection, name: &str) -> uuid::Uuid {
    let id = uuid::Uuid::new_v4();
    let sql = match db.get_database_backend() {
        DbBackend::Postgres => "INSERT INTO persons (id, name, description) VALUES ($1, $2, 'before the swap')",
        _ => "INSERT INTO persons (id, name, description) VALUES (?, ?, 'before the swap')",
    };
    db.execute(Statement::from_sql_and_values(db.get_database_backend(), sql, [id.into(), name.into()])).await.unwrap();
    id
}

async fn exercise(db: &DatabaseConnection) {
    Migrator::up(db, None).await.unwrap();
    let old = [old_person(db, "old a").await, old_person(db, "old b").await];

    // New rows: ids from `ActiveModel::new()`, UUIDv7 COMBs, in creation order by key.
    let mut made = Vec::new();
    for n in 0..6 {
        made.push(add_person(db, &format!("new {n}"), "after the swap").await.unwrap());
    }
    for p in &made {
        assert_eq!(uuid::Uuid::from(p.id.to_comb()).get_version_num(), 7, "{}", p.id);
    }
    let all = persons_page(db, 0, 100).await.unwrap();
    assert_eq!(all.len(), 8);
    let new_in_key_order: Vec<_> = all.iter().filter(|p| p.description == "after the swap").cloned().collect();
    assert_eq!(new_in_key_order, made, "ORDER BY id is creation order for the new rows");
    // A page boundary in key order.
    let page: Vec<_> = persons_page(db, 1, 3).await.unwrap();
    assert_eq!(page, all[3..6]);

    // The rows from before the swap: found by the same id, updated, related.
    for (id, name) in old.iter().zip(["old a", "old b"]) {
        let found = person::Entity::find_by_id(CombUuid::from(combkey::Comb::from(*id))).one(db).await.unwrap();
        let found = found.expect("a row written with uuid::Uuid is found by the same id");
        assert_eq!(found.name, name);
        assert_eq!(uuid::Uuid::from(found.id.to_comb()), *id);
    }
    let old_a = person::Entity::find_by_id(CombUuid::from(combkey::Comb::from(old[0]))).one(db).await.unwrap().unwrap();
    let renamed = rename(db, old_a.clone(), "old a, renamed").await.unwrap();
    assert_eq!(renamed.id, old_a.id);
    let d1 = add_document(db, Some(&old_a), "charter").await.unwrap();
    let d2 = add_document(db, Some(&made[0]), "letter").await.unwrap();
    let d3 = add_document(db, Some(&old_a), "deed").await.unwrap();
    let anonymous = add_document(db, None, "fragment").await.unwrap();
    assert_eq!(documents_of(db, &old_a).await.unwrap(), [d1.clone(), d3.clone()]);
    assert_eq!(
        documents_by(db, &[old_a.clone(), made[0].clone()]).await.unwrap(),
        [d1.clone(), d2.clone(), d3.clone()]
    );
    assert_eq!(document::Entity::find_by_id(anonymous.id).one(db).await.unwrap(), Some(anonymous));

    // Deleting by id.
    assert_eq!(delete_person(db, made[5].clone()).await.unwrap(), 1);
    assert_eq!(person::Entity::find_by_id(made[5].id).one(db).await.unwrap(), None);
}

#[tokio::test]
async fn postgres() {
    let url =
        std::env::var("COMBKEY_PG_URL").expect("COMBKEY_PG_URL (scripts/servers.sh pg; scripts/compat passes it)");
    let server = Database::connect(&url).await.unwrap();
    let name = "compat_sea_orm_1_1_app";
    server.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}")).await.unwrap();
    server.execute_unprepared(&format!("CREATE DATABASE {name}")).await.unwrap();
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap();
    let db = Database::connect(format!("{base}/{name}")).await.unwrap();
    exercise(&db).await;
    // The key column is the app's `uuid`, holding the id's text form.
    let made = person::Entity::find().all(&db).await.unwrap();
    for p in made {
        let row = db
            .query_one(Statement::from_sql_and_values(
                DbBackend::Postgres,
                "SELECT id::text AS t FROM persons WHERE id = $1",
                [p.id.into()],
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.try_get::<String>("", "t").unwrap(), p.id.to_string());
    }
    db.close().await.unwrap();
    server.execute_unprepared(&format!("DROP DATABASE {name}")).await.unwrap();
}

#[tokio::test]
async fn sqlite() {
    let dir = std::env::temp_dir().join(format!("compat-sea-orm-1-1-app-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("app.db");
    let _ = std::fs::remove_file(&file);
    let db = Database::connect(format!("sqlite://{}?mode=rwc", file.display())).await.unwrap();
    exercise(&db).await;
    // 16 bytes, as `uuid::Uuid` wrote them.
    let row = db
        .query_one(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT count(*) AS n FROM persons WHERE typeof(id) <> 'blob' OR length(id) <> 16",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.try_get::<i64>("", "n").unwrap(), 0);
    db.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
