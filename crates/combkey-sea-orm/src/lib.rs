//! [`combkey`] ids as a [sea-orm] column type, with sea-orm-migration helpers.
//!
//! [`CombUuid`] is a newtype over [`combkey::Comb`] (the orphan rule keeps sea-orm's traits
//! for the core type here) that converts both ways for free. It is an entity field, an
//! `Option` field and a primary key as it is: `#[sea_orm(primary_key)] pub id: CombUuid`
//! (sea-orm 2.0 treats a key whose type name ends in `Uuid` as not auto-increment).
//!
//! # What it stores
//!
//! | backend | column | stored |
//! | --- | --- | --- |
//! | PostgreSQL | `uuid` | the public bytes |
//! | MySQL / MariaDB | `binary(16)` | the public bytes |
//! | SQLite | `blob` (via [`migration::comb_column`]; an entity-derived table says `uuid_text`, still storing BLOBs) | the public bytes |
//!
//! Values are always bound as parameters (sea-orm binds a UUID value, which sqlx sends as
//! 16 bytes to `binary(16)`/`blob`). Do not render them inline into SQL text for MySQL or
//! SQLite: sea-query prints a UUID inline as quoted text, which is not what a `binary(16)`
//! column holds.
//!
//! Reading goes through combkey-sqlx's codecs, so MariaDB's `UUID` type and `CHAR(36)` text
//! read too, and bad values are errors that say what was found.
//!
//! Open-source sea-orm has no SQL Server backend: for SQL Server use `combkey-tiberius`.
//!
//! # Features
//!
//! - `postgres`, `mysql`, `sqlite`: the backends (sea-orm's `sqlx-postgres`, `sqlx-mysql`,
//!   `sqlx-sqlite`, and combkey-sqlx's backends for the same type in raw sqlx queries).
//! - `migration`: the [`migration`] helpers (sea-orm-migration).
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//!
//! # Example
//!
//! ```
//! use combkey_sea_orm::CombUuid;
//! use sea_orm::entity::prelude::*;
//!
//! #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
//! #[sea_orm(table_name = "orders")]
//! pub struct Model {
//!     #[sea_orm(primary_key)]
//!     pub id: CombUuid,
//!     pub parent: Option<CombUuid>,
//!     pub note: String,
//! }
//!
//! #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
//! pub enum Relation {}
//!
//! impl ActiveModelBehavior for ActiveModel {
//!     // Every new ActiveModel gets a fresh id.
//!     fn new() -> Self {
//!         Self { id: combkey_sea_orm::new_id(), ..ActiveModelTrait::default() }
//!     }
//! }
//! ```
//!
//! Raw sqlx queries take the same type: `CombUuid` implements sqlx's `Type`, `Encode` and
//! `Decode` by delegating to combkey-sqlx.

#![deny(missing_docs)]

mod sqlx_impls;
mod value;
mod wrappers;

#[cfg(feature = "migration")]
pub mod migration;

pub use combkey::{Backend, sql};
pub use value::new_id;
pub use wrappers::CombUuid;
