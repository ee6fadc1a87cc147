//! The patterns sea-orm's users rely on, run on each backend by postgres.rs, mysql.rs and
//! sqlite.rs: entities keyed by the type, `save()`/`insert()`/`update()`, relations, `Option`,
//! conditions on the key, the cases of sea-orm's own `tests/uuid_tests.rs`, bad data.
#![allow(dead_code, missing_docs, unused_imports)]

use combkey_sea_orm::CombUuid;
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr,
    EntityTrait, FromQueryResult, IntoActiveModel, ModelTrait, NotSet, PaginatorTrait, QueryFilter, QueryOrder, Set,
};

pub mod order {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
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

    #[async_trait::async_trait]
    impl ActiveModelBehavior for ActiveModel {
        async fn before_save<C: ConnectionTrait>(self, _db: &C, insert: bool) -> Result<Self, DbErr> {
            combkey_sea_orm::before_save(self, insert)
        }
    }
}

pub mod item {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_items")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
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

    #[async_trait::async_trait]
    impl ActiveModelBehavior for ActiveModel {
        async fn before_save<C: ConnectionTrait>(self, _db: &C, insert: bool) -> Result<Self, DbErr> {
            combkey_sea_orm::before_save(self, insert)
        }
    }
}

/// An entity keyed through a type alias, with `auto_increment = false` written: works.
pub mod aliased {
    use sea_orm::entity::prelude::*;

    pub type OrderId = combkey_sea_orm::CombUuid;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_aliased")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: OrderId,
        pub note: String,
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

/// The same alias without `auto_increment = false`: sea-orm's derive makes the key
/// auto-increment (the type name does not end in `Uuid`); `before_save` refuses it.
pub mod aliased_wrong {
    use sea_orm::entity::prelude::*;

    pub type OrderKey = combkey_sea_orm::CombUuid;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_aliased_wrong")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: OrderKey,
        pub note: String,
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

/// A COMB key written `#[sea_orm(primary_key)]` alone: not auto-increment on sea-orm 2.0
/// (its type's name ends in `Uuid`); sea-orm 1.1 makes every single primary key
/// auto-increment, and `before_save` refuses it there, saying why.
pub mod bare_key {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_bare_key")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: CombUuid,
        pub note: String,
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

pub use combkey_testutil::{mysql_url, pg_url};

const TABLES: [&str; 5] = [
    "combkey_seaorm_items",
    "combkey_seaorm_orders",
    "combkey_seaorm_helper",
    "combkey_seaorm_aliased",
    "combkey_seaorm_aliased_wrong",
];

/// A table keyed by UUID text, as sea-orm's `TextUuid` serves for `uuid::Uuid`.
pub mod text_order {
    use combkey_sea_orm::CombTextUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_seaorm_text_orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: combkey_sea_orm::CombTextUuid,
        pub parent: Option<CombTextUuid>,
        pub note: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A text key (`key_type`: the backend's `CHAR(36)`/`TEXT`) through the entity:
/// `insert`, `find_by_id`, a filter on a text reference, `ORDER BY id`, `update`, `delete`;
/// the stored value is the canonical text, and a key another program wrote in upper case
/// reads as the id.
pub async fn text_keys(db: &DatabaseConnection, key_type: &str) {
    use combkey_sea_orm::CombTextUuid;
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_seaorm_text_orders").await.unwrap();
    db.execute_unprepared(&format!(
        "CREATE TABLE combkey_seaorm_text_orders (id {key_type} NOT NULL PRIMARY KEY, parent {key_type} NULL, \
         note VARCHAR(20) NOT NULL)"
    ))
    .await
    .unwrap();
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<CombTextUuid>(40);
    for (n, id) in shuffled.iter().enumerate() {
        let parent = if n % 2 == 0 { Some(generated[0]) } else { None };
        text_order::ActiveModel { id: Set(*id), parent: Set(parent), note: Set(format!("n{n}")) }
            .insert(db)
            .await
            .unwrap_or_else(|e| panic!("{key_type}: {e}"));
    }
    let found = text_order::Entity::find_by_id(shuffled[3]).one(db).await.unwrap();
    assert_eq!(found.map(|m| (m.id, m.note)), Some((shuffled[3], "n3".to_string())), "{key_type}: find_by_id");
    let stored = db
        .query_one_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            "SELECT id FROM combkey_seaorm_text_orders WHERE note = 'n3'",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.try_get_by_index::<String>(0).unwrap(), shuffled[3].to_string(), "{key_type}: stored as text");
    let all = text_order::Entity::find().order_by_asc(text_order::Column::Id).all(db).await.unwrap();
    assert_eq!(all.iter().map(|m| m.id).collect::<Vec<_>>(), generated, "{key_type}: ORDER BY id");
    let children =
        text_order::Entity::find().filter(text_order::Column::Parent.eq(generated[0])).count(db).await.unwrap();
    assert_eq!(children, 20, "{key_type}: filter on a text reference");
    let mut m: text_order::ActiveModel = all[5].clone().into();
    m.note = Set("updated".into());
    m.update(db).await.unwrap();
    let again = text_order::Entity::find_by_id(generated[5]).one(db).await.unwrap().unwrap();
    assert_eq!(again.note, "updated");
    text_order::Entity::delete_by_id(generated[6]).exec(db).await.unwrap();
    assert_eq!(text_order::Entity::find().count(db).await.unwrap(), 39);
    let other = CombTextUuid::new();
    db.execute_unprepared(&format!(
        "INSERT INTO combkey_seaorm_text_orders (id, note) VALUES ('{}', 'upper')",
        other.to_string().to_uppercase()
    ))
    .await
    .unwrap();
    let upper = text_order::Entity::find().filter(text_order::Column::Note.eq("upper")).one(db).await.unwrap().unwrap();
    assert_eq!(upper.id, other, "{key_type}: upper-case text reads as the id");
    db.execute_unprepared("DROP TABLE combkey_seaorm_text_orders").await.unwrap();
}

async fn drop_tables(db: &DatabaseConnection) {
    for t in TABLES {
        db.execute_unprepared(&format!("DROP TABLE IF EXISTS {t}")).await.expect("drop");
    }
}

/// Tables from the entities (`blob` keys on SQLite); no key is auto-increment.
pub async fn create_tables(db: &DatabaseConnection) {
    drop_tables(db).await;
    let backend = db.get_database_backend();
    for stmt in [
        combkey_sea_orm::create_table_from_entity(backend, order::Entity),
        combkey_sea_orm::create_table_from_entity(backend, item::Entity),
        combkey_sea_orm::create_table_from_entity(backend, aliased::Entity),
    ] {
        let sql = backend.build(&stmt).to_string();
        let lower = sql.to_lowercase();
        assert!(
            !lower.contains("auto_increment") && !lower.contains("serial") && !lower.contains("autoincrement"),
            "{sql}"
        );
        assert!(!lower.contains("uuid_text"), "{sql}");
        execute_schema(db, &stmt).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // An alias key without `auto_increment = false`: an error naming the fix, on every
    // backend (sea-query's PostgreSQL builder would panic on the statement).
    let err = combkey_sea_orm::try_create_table_from_entity(backend, aliased_wrong::Entity).unwrap_err();
    assert!(err.to_string().contains("auto_increment = false"), "{err}");
    assert!(combkey_sea_orm::try_create_table_from_entity(backend, aliased::Entity).is_ok());
}

/// `save()`, `insert()` and `update()` with the id filled in `before_save`: what broke when
/// the docs set the id in `ActiveModelBehavior::new` (`save()` then issued an UPDATE).
pub async fn save_insert_update(db: &DatabaseConnection) {
    // save() of a new row (key NotSet): an INSERT, the id filled on the way.
    let saved = order::ActiveModel { note: Set("saved".into()), ..Default::default() }.save(db).await.unwrap();
    let saved_id = saved.id.clone().unwrap();
    assert_eq!(saved_id.to_comb().version(), 7);
    assert_eq!(order::Entity::find_by_id(saved_id).one(db).await.unwrap().map(|m| m.note), Some("saved".into()));
    // ActiveModelBehavior::new() leaves the key NotSet, so save() inserts.
    let mut fresh = <order::ActiveModel as ActiveModelBehavior>::new();
    assert!(fresh.id.is_not_set());
    fresh.note = Set("new then save".into());
    let fresh = fresh.save(db).await.unwrap();
    assert!(!fresh.id.is_not_set(), "the saved row has its id");
    // insert(): the same.
    let inserted = order::ActiveModel { note: Set("inserted".into()), ..Default::default() }.insert(db).await.unwrap();
    assert!(inserted.id > saved_id, "later ids are greater");
    // A client-made id is kept.
    let mine = CombUuid::new();
    let kept =
        order::ActiveModel { id: Set(mine), note: Set("mine".into()), parent: Set(None) }.insert(db).await.unwrap();
    assert_eq!(kept.id, mine);
    // save() of a loaded row: an UPDATE of that row.
    let mut loaded = inserted.clone().into_active_model();
    loaded.note = Set("saved again".into());
    let updated = loaded.save(db).await.unwrap();
    assert_eq!(updated.id.clone().unwrap(), inserted.id);
    // update(): the same.
    let mut loaded = inserted.clone().into_active_model();
    loaded.note = Set("updated".into());
    assert_eq!(loaded.update(db).await.unwrap().note, "updated");
    assert_eq!(order::Entity::find().count(db).await.unwrap(), 4);
    // The alias key with auto_increment = false inserts on every backend.
    let a = aliased::ActiveModel { note: Set("aliased".into()), ..Default::default() }.insert(db).await.unwrap();
    assert_eq!(aliased::Entity::find_by_id(a.id).one(db).await.unwrap(), Some(a));
    // Without it, before_save refuses with the fix in the message.
    let err = aliased_wrong::ActiveModel { note: Set("x".into()), ..Default::default() }.insert(db).await.unwrap_err();
    assert!(err.to_string().contains("auto_increment = false"), "{err}");
    // The key written `primary_key` alone: sea-orm 2.0 leaves it as it is; sea-orm 1.1 makes it
    // auto-increment, and the refusal (before anything is written) says that is why.
    #[cfg(not(combkey_sea_orm_1_1))]
    {
        assert!(err.to_string().contains("its type name does not end in `Uuid`"), "{err}");
        assert!(!<bare_key::PrimaryKey as sea_orm::PrimaryKeyTrait>::auto_increment());
        assert!(combkey_sea_orm::try_create_table_from_entity(db.get_database_backend(), bare_key::Entity).is_ok());
    }
    #[cfg(combkey_sea_orm_1_1)]
    {
        let err = bare_key::ActiveModel { note: Set("x".into()), ..Default::default() }.insert(db).await.unwrap_err();
        assert!(err.to_string().contains("sea-orm 1.1 makes every single primary key auto-increment"), "{err}");
        assert!(err.to_string().contains("auto_increment = false"), "{err}");
        let err = combkey_sea_orm::try_create_table_from_entity(db.get_database_backend(), bare_key::Entity);
        assert!(err.unwrap_err().to_string().contains("sea-orm 1.1 makes every single primary key"));
    }
    order::Entity::delete_many().exec(db).await.unwrap();
}

pub async fn exercise(db: &DatabaseConnection) {
    create_tables(db).await;
    save_insert_update(db).await;

    // find_by_id, update, delete; an Option column with NULL and with an id.
    let first = order::ActiveModel { note: Set("first".into()), ..Default::default() }.insert(db).await.unwrap();
    let found = order::Entity::find_by_id(first.id).one(db).await.unwrap();
    assert_eq!(found.as_ref(), Some(&first));
    assert_eq!(first.parent, None);
    let child = order::ActiveModel { parent: Set(Some(first.id)), note: Set("child".into()), ..Default::default() }
        .insert(db)
        .await
        .unwrap();
    let by_parent = order::Entity::find().filter(order::Column::Parent.eq(first.id)).all(db).await.unwrap();
    assert_eq!(by_parent, vec![child.clone()]);
    let orphans = order::Entity::find().filter(order::Column::Parent.is_null()).count(db).await.unwrap();
    assert_eq!(orphans, 1);

    // A relation keyed by the type; find_also_related with a missing right side is None.
    for n in 0..3 {
        item::ActiveModel { order_id: Set(first.id), n: Set(n), ..Default::default() }.insert(db).await.unwrap();
    }
    let items = first.find_related(item::Entity).order_by_asc(item::Column::N).all(db).await.unwrap();
    assert_eq!(items.iter().map(|i| i.n).collect::<Vec<_>>(), [0, 1, 2]);
    let (one, parent) = item::Entity::find().find_also_related(order::Entity).one(db).await.unwrap().unwrap();
    assert_eq!(parent.map(|p| p.id), Some(one.order_id));
    let with_items =
        order::Entity::find().find_also_related(item::Entity).order_by_asc(order::Column::Id).all(db).await.unwrap();
    assert!(with_items.iter().any(|(o, i)| o.id == child.id && i.is_none()), "LEFT JOIN, no item: None");

    order::Entity::delete_by_id(child.id).exec(db).await.unwrap();
    assert!(order::Entity::find_by_id(child.id).one(db).await.unwrap().is_none());

    // 10,000 ids inserted shuffled come back in generation order; conditions on the key.
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
    let some = order::Entity::find()
        .filter(order::Column::Id.is_in(ids[10..13].to_vec()))
        .order_by_asc(order::Column::Id)
        .all(db)
        .await
        .unwrap();
    assert_eq!(some.iter().map(|m| m.id).collect::<Vec<_>>(), &ids[10..13]);

    drop_tables(db).await;
}

/// "Orders created in this minute" as a condition on the key: exactly the rows whose id
/// carries a time in the range, answered from the primary key's index.
pub async fn rows_created_in_a_time_range(db: &DatabaseConnection) {
    use combkey_sea_orm::CreatedIn;
    create_tables(db).await;
    let t0 = combkey::Timestamp::from_unix_ms(1_700_000_000_000);
    let g = combkey::V7Generator::new();
    let made: Vec<CombUuid> =
        (0..2_000).map(|i| CombUuid::from(g.generate_at(t0.saturating_add_ms(1_000 * i)))).collect();
    for chunk in made.chunks(500).rev() {
        let rows =
            chunk.iter().rev().map(|id| order::ActiveModel { id: Set(*id), parent: Set(None), note: Set("n".into()) });
        order::Entity::insert_many(rows).exec(db).await.unwrap();
    }
    let range = combkey::Comb::range(t0.saturating_add_ms(600_000)..t0.saturating_add_ms(660_000)).unwrap();
    let minute: Vec<CombUuid> = order::Entity::find()
        .filter(order::Column::Id.created_in(range))
        .order_by_asc(order::Column::Id)
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(minute, &made[600..660]);
    // The plan: the primary key's index, not a full scan.
    let backend = db.get_database_backend();
    let (explain, select) = match backend {
        DatabaseBackend::Postgres => {
            db.execute_unprepared("ANALYZE combkey_seaorm_orders").await.unwrap();
            ("EXPLAIN", "SELECT id FROM combkey_seaorm_orders WHERE id BETWEEN $1 AND $2")
        }
        DatabaseBackend::MySql => {
            ("EXPLAIN FORMAT=JSON", "SELECT id FROM combkey_seaorm_orders WHERE id BETWEEN ? AND ?")
        }
        _ => ("EXPLAIN QUERY PLAN", "SELECT id FROM combkey_seaorm_orders WHERE id BETWEEN ? AND ?"),
    };
    let stmt = sea_orm::Statement::from_sql_and_values(
        backend,
        format!("{explain} {select}"),
        [CombUuid::from(range.start()).into(), CombUuid::from(range.last()).into()],
    );
    let rows = db.query_all_raw(stmt).await.unwrap();
    let plan: Vec<String> = rows
        .iter()
        .map(|r| match backend {
            DatabaseBackend::Postgres => r.try_get::<String>("", "QUERY PLAN").unwrap(),
            DatabaseBackend::MySql => r.try_get_by_index::<String>(0).unwrap(),
            _ => r.try_get::<String>("", "detail").unwrap(),
        })
        .collect();
    let plan = plan.join("\n");
    let compact: String = plan.split_whitespace().collect();
    let indexed = match backend {
        DatabaseBackend::Postgres => plan.contains("combkey_seaorm_orders_pkey") && !plan.contains("Seq Scan"),
        DatabaseBackend::MySql => {
            compact.contains("\"key\":\"PRIMARY\"") && compact.contains("\"access_type\":\"range\"")
        }
        _ => plan.contains("SEARCH combkey_seaorm_orders USING") && plan.contains("(id>? AND id<?)"),
    };
    assert!(indexed, "{plan}");
    drop_tables(db).await;
}

/// The cases of sea-orm's own `tests/uuid_tests.rs` (`insert_metadata`,
/// `create_and_update_metadata`), with the key our type.
pub async fn sea_orm_uuid_tests_ported(db: &DatabaseConnection) {
    create_tables(db).await;
    // insert_metadata: insert returns the model; find by the key, into_json.
    let model = order::Model { id: CombUuid::new(), parent: None, note: "markup".into() };
    let result = model.clone().into_active_model().insert(db).await.unwrap();
    assert_eq!(result, model);
    let json = order::Entity::find().filter(order::Column::Id.eq(model.id)).into_json().one(db).await.unwrap();
    assert_eq!(json, Some(serde_json::json!({ "id": model.id.to_string(), "parent": null, "note": "markup" })));
    // create_and_update_metadata: Entity::insert(..).exec gives the key as last_insert_id;
    // an update filtered on another key updates nothing.
    let model = order::Model { id: CombUuid::new(), parent: None, note: "1.18".into() };
    let res = order::Entity::insert(model.clone().into_active_model()).exec(db).await.unwrap();
    assert_eq!(res.last_insert_id, model.id);
    assert_eq!(order::Entity::find_by_id(model.id).one(db).await.unwrap(), Some(model.clone()));
    let update = order::Entity::update(order::ActiveModel { note: Set("0.22".into()), ..model.into_active_model() });
    // (sea-orm 1.1 has no `validate`: its `UpdateOne` takes the filter as it is.)
    #[cfg(not(combkey_sea_orm_1_1))]
    let update = update.validate().unwrap();
    let update = update.filter(order::Column::Id.eq(CombUuid::default())).exec(db).await;
    assert_eq!(update, Err(DbErr::RecordNotUpdated));
    drop_tables(db).await;
}

/// A bad value and a NULL in a non-`Option` field: errors that say what was found, with the
/// sqlx error kept (not flattened to a string).
pub async fn bad_data(db: &DatabaseConnection, create: &str, bad_key: &str, expected: &str) {
    drop_tables(db).await;
    db.execute_unprepared(create).await.unwrap();
    db.execute_unprepared(&format!(
        "INSERT INTO combkey_seaorm_orders (id, parent, note) VALUES ({bad_key}, NULL, 'bad')"
    ))
    .await
    .unwrap();
    let err = order::Entity::find().all(db).await.unwrap_err();
    assert!(matches!(query_sqlx_error(&err), Some(sqlx::Error::ColumnDecode { .. })), "{err:?}");
    let chain = combkey_testutil::chain(&err);
    assert!(chain.contains(expected), "{chain}");
    db.execute_unprepared("DELETE FROM combkey_seaorm_orders").await.unwrap();
    // NULL into the non-Option key (read through a query that selects NULL for it).
    #[derive(sea_orm::FromQueryResult, Debug)]
    struct Key {
        id: CombUuid,
    }
    let err = Key::find_by_statement(sea_orm::Statement::from_string(db.get_database_backend(), "SELECT NULL AS id"))
        .one(db)
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("null"), "{err}");
    #[derive(sea_orm::FromQueryResult, Debug)]
    struct MaybeKey {
        id: Option<CombUuid>,
    }
    let none =
        MaybeKey::find_by_statement(sea_orm::Statement::from_string(db.get_database_backend(), "SELECT NULL AS id"))
            .one(db)
            .await
            .unwrap();
    assert!(matches!(none, Some(MaybeKey { id: None })), "{none:?}");
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
    execute_schema(db, &create).await.unwrap();
    let ids: Vec<CombUuid> = (0..5).map(|_| CombUuid::new()).collect();
    for id in ids.iter().rev() {
        let stmt = sea_orm::Statement::from_sql_and_values(
            backend,
            match backend {
                DatabaseBackend::Postgres => "INSERT INTO combkey_seaorm_helper (id, parent) VALUES ($1, $2)",
                _ => "INSERT INTO combkey_seaorm_helper (id, parent) VALUES (?, ?)",
            },
            [(*id).into(), Option::<CombUuid>::None.into()],
        );
        db.execute_raw(stmt).await.unwrap();
    }
    ids
}

pub async fn drop_helper(db: &DatabaseConnection) {
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_seaorm_helper").await.unwrap();
}

#[derive(diesel::QueryableByName)]
pub struct DieselBinaryRow {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    pub id: combkey_diesel::Comb,
}

/// `migration::create_partitioned_table` in a migration: rows made for given times land in
/// the partition of their month (`count_in(partition)` counts one partition's rows), an id
/// after every month lands in the default partition, `down` removes all of it, and a bad
/// range leaves no table behind.
pub async fn partitioned_table_migration(db: &DatabaseConnection, count_in: fn(&str) -> String, parts: [&str; 3]) {
    use combkey::Timestamp;
    use combkey::sql::{Interval, Partitioning};
    use combkey_sea_orm::migration::{comb_primary_key, create_partitioned_table};
    use sea_orm_migration::prelude::*;

    struct CreateEvents {
        to: &'static str,
    }
    impl MigrationName for CreateEvents {
        fn name(&self) -> &str {
            "m20260101_000001_create_events"
        }
    }
    #[async_trait::async_trait]
    impl MigrationTrait for CreateEvents {
        async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
            let backend = manager.get_database_backend();
            let table = Table::create()
                .table("combkey_seaorm_events")
                .col(comb_primary_key("id", backend))
                .col(ColumnDef::new("note").text().not_null())
                .to_owned();
            let months = Partitioning::new("combkey_seaorm_events", Interval::Month).unwrap();
            let from: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
            create_partitioned_table(manager, table, &months, from, self.to.parse().unwrap(), true).await
        }
        async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
            manager.drop_table(Table::drop().table("combkey_seaorm_events").to_owned()).await
        }
    }

    let manager = SchemaManager::new(db);
    let migration = CreateEvents { to: "2026-03-01T00:00:00Z" };
    let _ = migration.down(&manager).await;
    // A range that ends before it starts: an error, and no table.
    let err = CreateEvents { to: "2025-01-01T00:00:00Z" }.up(&manager).await.unwrap_err();
    assert!(err.to_string().contains("from before to"), "{err}");
    assert!(!table_exists(db, "combkey_seaorm_events").await);

    migration.up(&manager).await.unwrap();
    let backend = db.get_database_backend();
    let g = combkey::V7Generator::new();
    let times = ["2026-01-05T10:00:00Z", "2026-01-31T23:59:59.999Z", "2026-02-01T00:00:00Z", "2026-05-01T00:00:00Z"];
    for time in times {
        let id = CombUuid::from(g.generate_at(time.parse().unwrap()));
        let stmt = sea_orm::Statement::from_sql_and_values(
            backend,
            match backend {
                DatabaseBackend::Postgres => "INSERT INTO combkey_seaorm_events (id, note) VALUES ($1, $2)",
                _ => "INSERT INTO combkey_seaorm_events (id, note) VALUES (?, ?)",
            },
            [id.into(), time.into()],
        );
        db.execute_raw(stmt).await.unwrap();
    }
    let mut counts = Vec::new();
    for part in parts {
        let row = db.query_one_raw(sea_orm::Statement::from_string(backend, count_in(part))).await.unwrap().unwrap();
        counts.push(row.try_get_by_index::<i64>(0).unwrap());
    }
    // January holds two rows, February one, the default (after March) the May row.
    assert_eq!(counts, [2, 1, 1], "{parts:?}");
    migration.down(&manager).await.unwrap();
    assert!(!table_exists(db, "combkey_seaorm_events").await);
}

/// Whether the table exists (sea-orm-migration's `has_table` needs its `sqlx-*` features).
pub async fn table_exists(db: &DatabaseConnection, name: &str) -> bool {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Sqlite => {
            format!("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '{name}'")
        }
        DatabaseBackend::Postgres => format!("SELECT COUNT(*) FROM pg_tables WHERE tablename = '{name}'"),
        _ => format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{name}'"
        ),
    };
    let row = db.query_one_raw(sea_orm::Statement::from_string(backend, sql)).await.unwrap().unwrap();
    row.try_get_by_index::<i64>(0).unwrap() > 0
}

/// The sqlx error a `DbErr::Query` holds: behind an `Arc` on sea-orm 2.0, held as it is on 1.1
/// (`Borrow` reaches it through both).
pub fn query_sqlx_error(err: &DbErr) -> Option<&sqlx::Error> {
    match err {
        DbErr::Query(sea_orm::RuntimeErr::SqlxError(e)) => Some(std::borrow::Borrow::<sqlx::Error>::borrow(e)),
        _ => None,
    }
}

/// Runs a schema statement as sea-orm 2.0 does (`execute(&statement)`); sea-orm 1.1 executes it
/// built for the connection's backend.
pub async fn execute_schema<C: ConnectionTrait, S: sea_orm::StatementBuilder>(
    db: &C,
    stmt: &S,
) -> Result<sea_orm::ExecResult, DbErr> {
    #[cfg(not(combkey_sea_orm_1_1))]
    return db.execute(stmt).await;
    #[cfg(combkey_sea_orm_1_1)]
    return db.execute(db.get_database_backend().build(stmt)).await;
}

/// sea-orm 2.0's names for a raw statement's `query_one`, `query_all` and `execute`, which are
/// sea-orm 1.1's `query_one`, `query_all` and `execute`: the shared tests call 2.0's.
#[cfg(combkey_sea_orm_1_1)]
pub trait RawStatements: ConnectionTrait + Sync {
    async fn query_one_raw(&self, stmt: sea_orm::Statement) -> Result<Option<sea_orm::QueryResult>, DbErr> {
        self.query_one(stmt).await
    }

    async fn query_all_raw(&self, stmt: sea_orm::Statement) -> Result<Vec<sea_orm::QueryResult>, DbErr> {
        self.query_all(stmt).await
    }

    async fn execute_raw(&self, stmt: sea_orm::Statement) -> Result<sea_orm::ExecResult, DbErr> {
        self.execute(stmt).await
    }
}

#[cfg(combkey_sea_orm_1_1)]
impl<C: ConnectionTrait + Sync> RawStatements for C {}
