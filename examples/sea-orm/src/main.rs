//! combkey with sea-orm: an entity keyed by COMB ids, its table made from the entity, new rows
//! getting their ids in `ActiveModelBehavior::before_save`, rows read back in key order.
//!
//! ```sh
//! cargo run -p sea-orm-example                              # in-memory SQLite, nothing to install
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p sea-orm-example
//! DATABASE_URL=mysql://root@127.0.0.1:3306/test cargo run -p sea-orm-example
//! ```

use sea_orm::{ActiveModelTrait, ConnectOptions, ConnectionTrait, Database, EntityTrait, QueryOrder, Set};

mod note {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_example_notes")]
    pub struct Model {
        // Not auto-increment: written out, so a type alias for the key stays right too.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: CombUuid,
        pub text: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    #[async_trait::async_trait]
    impl ActiveModelBehavior for ActiveModel {
        // The id is given on insert (not in `new()`, which would make `save()` an UPDATE).
        async fn before_save<C: ConnectionTrait>(self, _db: &C, insert: bool) -> Result<Self, DbErr> {
            combkey_sea_orm::before_save(self, insert)
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Unset or empty (as an `.env` line `DATABASE_URL=` leaves it): in-memory SQLite.
    let url = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "sqlite::memory:".into());
    // No credentials on screen: the host and database after the login, or, where the URL has
    // no `@` (a typo may have put the password elsewhere), only its scheme.
    println!(
        "database: {}",
        url.rsplit_once('@')
            .map_or_else(|| url.split(':').next().filter(|s| !s.is_empty()).unwrap_or(&url), |(_, h)| h)
    );
    // One connection, so an in-memory SQLite database is the same for every statement.
    let db = Database::connect(ConnectOptions::new(url).max_connections(1).to_owned()).await?;
    let backend = db.get_database_backend();
    db.execute_unprepared("DROP TABLE IF EXISTS combkey_example_notes").await?;
    // The table from the entity: uuid, binary(16) or blob keys.
    db.execute(&combkey_sea_orm::create_table_from_entity(backend, note::Entity)).await?;

    let mut made = Vec::new();
    for text in ["alpha", "beta", "gamma"] {
        // save() of a new row inserts it; before_save gives it its id.
        let saved = note::ActiveModel { text: Set(text.to_string()), ..Default::default() }.save(&db).await?;
        made.push(note::Model { id: saved.id.unwrap(), text: saved.text.unwrap() });
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
