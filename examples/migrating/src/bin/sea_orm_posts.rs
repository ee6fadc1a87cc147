//! A sea-orm app keyed by UUIDs (sea-orm's `examples/basic` shape: a `post` entity): `add
//! TITLE`, `rename ID TITLE`, `list`. Written for `uuid::Uuid` (`--features before`); the
//! combkey version differs in the one `use` line in the entity (docs/migrating.md).
//!
//! ```sh
//! DATABASE_URL=sqlite:posts.db?mode=rwc cargo run -p migrating --bin sea_orm_posts -- add "hello"
//! ```

mod post {
    #[cfg(not(feature = "before"))]
    use combkey_sea_orm::CombUuid as Uuid;
    use sea_orm::entity::prelude::*;
    #[cfg(feature = "before")]
    use uuid::Uuid;

    // Serialize/Deserialize as Loco's entities derive them: the swap needs combkey-sea-orm's
    // `serde` feature, as the app's uuid had its own.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
    #[sea_orm(table_name = "posts")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: Uuid,
        pub title: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}

    /// A fresh key.
    pub fn new_id() -> Uuid {
        Uuid::now_v7()
    }

    /// A key from the command line.
    pub fn parse_id(s: &str) -> Result<Uuid, Box<dyn std::error::Error>> {
        Ok(Uuid::parse_str(s)?)
    }
}

use sea_orm::{ActiveModelTrait, ConnectionTrait, Database, EntityTrait, QueryOrder, Schema, Set};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite::memory:".into());
    let db = Database::connect(&url).await?;
    let backend = db.get_database_backend();
    let mut create = Schema::new(backend).create_table_from_entity(post::Entity);
    db.execute(create.if_not_exists()).await?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["add", title] => {
            let post = post::ActiveModel { id: Set(post::new_id()), title: Set((*title).into()) }.insert(&db).await?;
            println!("Added post {}", post.id);
        }
        ["rename", id, title] => {
            let Some(found) = post::Entity::find_by_id(post::parse_id(id)?).one(&db).await? else {
                return Err(format!("no post {id}").into());
            };
            let mut post: post::ActiveModel = found.into();
            post.title = Set((*title).into());
            let post = post.update(&db).await?;
            println!("Renamed post {}", post.id);
        }
        ["json"] => {
            let posts = post::Entity::find().order_by_asc(post::Column::Id).all(&db).await?;
            println!("{}", serde_json::to_string(&posts)?);
        }
        [] | ["list"] => {
            for post in post::Entity::find().order_by_asc(post::Column::Id).all(&db).await? {
                println!("- {}: {}", post.id, post.title);
            }
        }
        _ => return Err("usage: sea_orm_posts [add TITLE | rename ID TITLE | list | json]".into()),
    }
    Ok(())
}
