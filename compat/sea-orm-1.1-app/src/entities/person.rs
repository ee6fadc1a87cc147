//! A person of the archive.

use combkey_sea_orm::CombUuid as Uuid; // was: (nothing: `Uuid` came from the prelude)
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "persons")]
pub struct Model {
    /// The person primary key.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The person name.
    pub name: String,
    /// The person description.
    pub description: String,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::document::Entity")]
    Documents,
}

impl Related<super::document::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Documents.def()
    }
}

impl ActiveModelBehavior for ActiveModel {
    fn new() -> Self {
        Self { id: sea_orm::ActiveValue::Set(Uuid::new()), ..ActiveModelTrait::default() } // was: Uuid::now_v7()
    }
}
