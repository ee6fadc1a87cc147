//! A small archive app on sea-orm 1.1, keyed by `Uuid`, after the swap to combkey (the changes
//! are in the entity files, marked `// was:`). What it does with its keys is what such apps do:
//! insert through `ActiveModel::new()`, find by id, update, delete, pages ordered by id, a
//! relation, and a migrator that declares the keys `uuid` (unchanged by the swap).

pub mod entities;

use entities::{document, person};
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ModelTrait,
    PaginatorTrait, QueryFilter, QueryOrder, Set,
};

/// The migrations.
pub mod migration {
    use sea_orm_migration::prelude::*;

    /// The app's migrator.
    pub struct Migrator;

    impl MigratorTrait for Migrator {
        fn migrations() -> Vec<Box<dyn MigrationTrait>> {
            vec![Box::new(CreateTables)]
        }
    }

    #[derive(DeriveIden)]
    enum Persons {
        Table,
        Id,
        Name,
        Description,
    }

    #[derive(DeriveIden)]
    enum Documents {
        Table,
        Id,
        AuthorId,
        Title,
    }

    #[derive(DeriveMigrationName)]
    struct CreateTables;

    #[async_trait::async_trait]
    impl MigrationTrait for CreateTables {
        async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
            manager
                .create_table(
                    Table::create()
                        .table(Persons::Table)
                        .col(ColumnDef::new(Persons::Id).uuid().not_null().primary_key())
                        .col(ColumnDef::new(Persons::Name).string().not_null())
                        .col(ColumnDef::new(Persons::Description).string().not_null())
                        .to_owned(),
                )
                .await?;
            manager
                .create_table(
                    Table::create()
                        .table(Documents::Table)
                        .col(ColumnDef::new(Documents::Id).uuid().not_null().primary_key())
                        .col(ColumnDef::new(Documents::AuthorId).uuid().null())
                        .col(ColumnDef::new(Documents::Title).string().not_null())
                        .foreign_key(
                            ForeignKey::create()
                                .from(Documents::Table, Documents::AuthorId)
                                .to(Persons::Table, Persons::Id)
                                .on_delete(ForeignKeyAction::SetNull),
                        )
                        .to_owned(),
                )
                .await
        }

        async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
            manager.drop_table(Table::drop().table(Documents::Table).to_owned()).await?;
            manager.drop_table(Table::drop().table(Persons::Table).to_owned()).await
        }
    }
}

/// A new person; its row.
pub async fn add_person<C: ConnectionTrait>(db: &C, name: &str, description: &str) -> Result<person::Model, DbErr> {
    let person = person::ActiveModel {
        name: Set(name.into()),
        description: Set(description.into()),
        ..person::ActiveModel::new()
    };
    person.insert(db).await
}

/// A new document by `author`; its row.
pub async fn add_document<C: ConnectionTrait>(
    db: &C,
    author: Option<&person::Model>,
    title: &str,
) -> Result<document::Model, DbErr> {
    let document = document::ActiveModel {
        author_id: Set(author.map(|a| a.id)),
        title: Set(title.into()),
        ..document::ActiveModel::new()
    };
    document.insert(db).await
}

/// Renames a person.
pub async fn rename<C: ConnectionTrait>(db: &C, person: person::Model, name: &str) -> Result<person::Model, DbErr> {
    let mut person: person::ActiveModel = person.into();
    person.name = Set(name.into());
    person.update(db).await
}

/// One page of persons, in key order.
pub async fn persons_page<C: ConnectionTrait>(db: &C, page: u64, per_page: u64) -> Result<Vec<person::Model>, DbErr> {
    person::Entity::find().order_by_asc(person::Column::Id).paginate(db, per_page).fetch_page(page).await
}

/// A person's documents, in key order.
pub async fn documents_of<C: ConnectionTrait>(db: &C, person: &person::Model) -> Result<Vec<document::Model>, DbErr> {
    person.find_related(document::Entity).order_by_asc(document::Column::Id).all(db).await
}

/// Documents by any of `authors`.
pub async fn documents_by<C: ConnectionTrait>(
    db: &C,
    authors: &[person::Model],
) -> Result<Vec<document::Model>, DbErr> {
    document::Entity::find()
        .filter(document::Column::AuthorId.is_in(authors.iter().map(|a| a.id)))
        .order_by_asc(document::Column::Id)
        .all(db)
        .await
}

/// Deletes a person by id; how many rows went.
pub async fn delete_person<C: ConnectionTrait>(db: &C, person: person::Model) -> Result<u64, DbErr> {
    Ok(person::Entity::delete_by_id(person.id).exec(db).await?.rows_affected)
}
