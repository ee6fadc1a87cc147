//! A document, perhaps written by a person.

use combkey_sea_orm::CombUuid as Uuid; // was: (nothing: `Uuid` came from the prelude)
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "documents")]
pub struct Model {
    /// The document primary key.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// Its author, if known.
    pub author_id: Option<Uuid>,
    /// The document title.
    pub title: String,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::person::Entity", from = "Column::AuthorId", to = "super::person::Column::Id")]
    Author,
}

impl Related<super::person::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Author.def()
    }
}

impl ActiveModelBehavior for ActiveModel {
    fn new() -> Self {
        Self { id: sea_orm::ActiveValue::Set(Uuid::new()), ..ActiveModelTrait::default() } // was: Uuid::now_v7()
    }
}
