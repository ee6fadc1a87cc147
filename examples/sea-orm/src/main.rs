//! combkey with sea-orm: an entity keyed by COMB ids, its table made by the migration helpers,
//! new ActiveModels getting their ids from `ActiveModelBehavior`, rows read back in key order.
//!
//! ```sh
//! cargo run -p sea-orm-example                              # in-memory SQLite, nothing to install
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p sea-orm-example
//! DATABASE_URL=mysql://root@127.0.0.1:3306/test cargo run -p sea-orm-example
//! ```

use combkey_sea_orm::migration::comb_primary_key;
use sea_orm::sea_query::{ColumnDef, Table};
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ConnectOptions, ConnectionTrait, Database, EntityTrait, QueryOrder, Set,
};

mod note {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_example_notes")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: CombUuid,
        pub text: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {
        fn new() -> Self {
            Self { id: combkey_sea_orm::new_id(), ..ActiveModelTrait::default() }
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite::memory:".to_string());
    println!("database: {}", url.split('@').next_back().unwrap_or(&url));
    // One connection, so an in-memory SQLite database is the same for every statement.
    let db = Database::connect(ConnectOptions::new(url).max_connections(1).to_owned()).await?;
    let backend = db.get_database_backend();
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_example_notes").await?;
    let create = Table::create()
        .table("combkey_example_notes")
        .col(comb_primary_key("id", backend))
        .col(ColumnDef::new("text").text().not_null())
        .to_owned();
    db.execute(&create).await?;

    let mut made = Vec::new();
    for text in ["alpha", "beta", "gamma"] {
        let mut n = note::ActiveModel::new(); // the id is already set
        n.text = Set(text.to_string());
        made.push(n.insert(&db).await?);
    }
    let rows = note::Entity::find().order_by_asc(note::Column::Id).all(&db).await?;
    for n in &rows {
        let time = n.id.to_comb().timestamp().map(|t| t.to_string()).unwrap_or_default();
        println!("  {}  {:<6} created {time}", n.id, n.text);
    }
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_example_notes").await?;
    let in_order = rows == made;
    println!("ORDER BY id returned creation order: {in_order}");
    if in_order { Ok(()) } else { Err("rows came back out of creation order".into()) }
}
