//! One exercise of the column type, run on each backend by postgres.rs, mysql.rs, sqlite.rs.
#![allow(dead_code, missing_docs, unused_imports)]

use combkey_sea_orm::CombUuid;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, EntityTrait, IntoActiveModel,
    ModelTrait, PaginatorTrait, QueryFilter, QueryOrder, Schema, Set,
};

pub mod order {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_orders")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: CombUuid,
        pub parent: Option<CombUuid>,
        pub note: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {
        #[sea_orm(has_many = "super::item::Entity")]
        Item,
    }

    impl Related<super::item::Entity> for Entity {
        fn to() -> RelationDef {
            Relation::Item.def()
        }
    }

    impl ActiveModelBehavior for ActiveModel {
        fn new() -> Self {
            Self { id: combkey_sea_orm::new_id(), ..ActiveModelTrait::default() }
        }
    }
}

pub mod item {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_items")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: CombUuid,
        pub order_id: CombUuid,
        pub n: i32,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {
        #[sea_orm(belongs_to = "super::order::Entity", from = "Column::OrderId", to = "super::order::Column::Id")]
        Order,
    }

    impl Related<super::order::Entity> for Entity {
        fn to() -> RelationDef {
            Relation::Order.def()
        }
    }

    impl ActiveModelBehavior for ActiveModel {}
}

pub use combkey_testutil::{mysql_url, pg_url};

async fn drop_tables(db: &DatabaseConnection) {
    for t in ["combkey_seaorm_items", "combkey_seaorm_orders", "combkey_seaorm_helper"] {
        db.execute_unprepared(&format!("DROP TABLE IF EXISTS {t}")).await.expect("drop");
    }
}

/// Tables from the entities; the key is not made auto-increment on any backend.
pub async fn create_tables(db: &DatabaseConnection) {
    drop_tables(db).await;
    let backend = db.get_database_backend();
    let schema = Schema::new(backend);
    for stmt in [schema.create_table_from_entity(order::Entity), schema.create_table_from_entity(item::Entity)] {
        let sql = backend.build(&stmt).to_string();
        let lower = sql.to_lowercase();
        assert!(
            !lower.contains("auto_increment") && !lower.contains("serial") && !lower.contains("autoincrement"),
            "{sql}"
        );
        db.execute(&stmt).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

pub async fn exercise(db: &DatabaseConnection) {
    create_tables(db).await;

    // insert (the id comes from ActiveModelBehavior::new), find_by_id, update, delete.
    let mut a = <order::ActiveModel as sea_orm::ActiveModelBehavior>::new();
    a.note = Set("first".into());
    let first = a.insert(db).await.expect("insert");
    assert_eq!(first.id.to_comb().version(), 7);
    let found = order::Entity::find_by_id(first.id).one(db).await.unwrap();
    assert_eq!(found.as_ref(), Some(&first));
    let mut active = first.clone().into_active_model();
    active.note = Set("changed".into());
    let changed = active.update(db).await.unwrap();
    assert_eq!(changed.note, "changed");
    // An Option column: NULL and an id.
    assert_eq!(changed.parent, None);
    let child = order::ActiveModel { id: Set(CombUuid::new()), parent: Set(Some(first.id)), note: Set("child".into()) }
        .insert(db)
        .await
        .unwrap();
    let by_parent = order::Entity::find().filter(order::Column::Parent.eq(first.id)).all(db).await.unwrap();
    assert_eq!(by_parent, vec![child.clone()]);
    let orphans = order::Entity::find().filter(order::Column::Parent.is_null()).count(db).await.unwrap();
    assert_eq!(orphans, 1);

    // A relation keyed by the type.
    for n in 0..3 {
        item::ActiveModel { id: Set(CombUuid::new()), order_id: Set(first.id), n: Set(n) }.insert(db).await.unwrap();
    }
    let items = first.find_related(item::Entity).order_by_asc(item::Column::N).all(db).await.unwrap();
    assert_eq!(items.iter().map(|i| i.n).collect::<Vec<_>>(), [0, 1, 2]);
    let (one, parent) = item::Entity::find().find_also_related(order::Entity).one(db).await.unwrap().unwrap();
    assert_eq!(parent.map(|p| p.id), Some(one.order_id));

    order::Entity::delete_by_id(child.id).exec(db).await.unwrap();
    assert!(order::Entity::find_by_id(child.id).one(db).await.unwrap().is_none());

    // 10,000 ids inserted shuffled come back in generation order.
    item::Entity::delete_many().exec(db).await.unwrap();
    order::Entity::delete_many().exec(db).await.unwrap();
    let (ids, shuffled): (Vec<CombUuid>, Vec<CombUuid>) = combkey_testutil::generated_and_shuffled(10_000);
    for chunk in shuffled.chunks(500) {
        let rows =
            chunk.iter().map(|id| order::ActiveModel { id: Set(*id), parent: Set(None), note: Set(String::new()) });
        order::Entity::insert_many(rows).exec(db).await.unwrap();
    }
    let back: Vec<CombUuid> = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert!(back == ids, "find().order_by_asc(Column::Id) is generation order");
    let later = order::Entity::find().filter(order::Column::Id.gt(ids[9_000])).count(db).await.unwrap();
    assert_eq!(later, 999);

    drop_tables(db).await;
}

/// The migration helpers' columns, written through sea-orm; returns the ids for other
/// libraries to read back.
pub async fn helper_table(db: &DatabaseConnection) -> Vec<CombUuid> {
    use sea_orm::sea_query::Table;
    let backend = db.get_database_backend();
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_seaorm_helper").await.unwrap();
    let create = Table::create()
        .table("combkey_seaorm_helper")
        .col(combkey_sea_orm::migration::comb_primary_key("id", backend))
        .col(combkey_sea_orm::migration::comb_column("parent", backend).null())
        .to_owned();
    db.execute(&create).await.unwrap();
    let ids: Vec<CombUuid> = (0..5).map(|_| CombUuid::new()).collect();
    for id in ids.iter().rev() {
        let stmt = sea_orm::Statement::from_sql_and_values(
            backend,
            match backend {
                DatabaseBackend::Postgres => "INSERT INTO combkey_seaorm_helper (id, parent) VALUES ($1, $2)",
                _ => "INSERT INTO combkey_seaorm_helper (id, parent) VALUES (?, ?)",
            },
            [(*id).into(), sea_orm::Value::from(Option::<CombUuid>::None.map(|c| uuid::Uuid::from(c.to_comb())))],
        );
        db.execute_raw(stmt).await.unwrap();
    }
    ids
}

pub async fn drop_helper(db: &DatabaseConnection) {
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_seaorm_helper").await.unwrap();
}
