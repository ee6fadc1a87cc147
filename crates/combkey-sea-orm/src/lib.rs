//! [`combkey`] ids as a [sea-orm](https://docs.rs/sea-orm) column type, with sea-orm-migration helpers.
//!
//! [`CombUuid`] is a newtype over [`combkey::Comb`] (the orphan rule keeps sea-orm's traits
//! for the core type here) that converts both ways for free. It is an entity field, an
//! `Option` field, a `Vec` field (PostgreSQL `uuid[]`) and a primary key.
//!
//! # What it stores
//!
//! | backend | column | stored |
//! | --- | --- | --- |
//! | PostgreSQL | `uuid` (`uuid[]` for `Vec<CombUuid>`) | the public bytes |
//! | MySQL / MariaDB | `binary(16)` | the public bytes |
//! | SQLite | `blob` (with [`create_table_from_entity`] or `migration::comb_column`) | the public bytes |
//!
//! A table keyed by UUID *text* (`CHAR(36)`, `TEXT`) takes [`CombTextUuid`] instead (sea-orm's
//! `TextUuid` for combkey ids): it binds the text the column holds.
//!
//! Values are always bound as parameters (sea-orm binds a UUID value, which sqlx sends as
//! 16 bytes to `binary(16)`/`blob`). Do not render them inline into SQL text for MySQL or
//! SQLite: sea-query prints a UUID inline as quoted text, which is not what a `binary(16)`
//! column holds.
//!
//! Reading goes through combkey-sqlx's codecs, so MariaDB's `UUID` type and `CHAR(36)` text
//! read too, and a bad value is an error that keeps its cause (a `DbErr::Query` holding the
//! sqlx error, whose source is the [`combkey::Error`] saying what was found). A backend
//! whose feature is off, a mock or a proxy connection decodes with the same rules through
//! sea-orm's own values.
//!
//! Open-source sea-orm has no SQL Server backend: for SQL Server use `combkey-tiberius`.
//!
//! # An entity keyed by COMB ids
//!
//! Two things to write, both shown below:
//!
//! - `#[sea_orm(primary_key, auto_increment = false)]`. sea-orm 2.0's derive makes a single
//!   primary key auto-increment unless its type's *name* ends in `Uuid` or `String`, so a type
//!   alias (`type OrderId = CombUuid;`) would silently become `AUTO_INCREMENT`; sea-orm 1.1's
//!   makes every single primary key auto-increment, whatever its type. Saying it costs
//!   nothing, and [`before_save`] refuses a key that is auto-increment anyway.
//! - [`before_save`] in `ActiveModelBehavior::before_save`: a new row gets its id on insert.
//!   (Not in `ActiveModelBehavior::new`: `save()` decides insert or update by whether the
//!   key is set, so an id set by `new()` turns `save()` into a failing `UPDATE`.)
//!
//! ```
//! use combkey_sea_orm::CombUuid;
//! use sea_orm::entity::prelude::*;
//!
//! #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
//! #[sea_orm(table_name = "orders")]
//! pub struct Model {
//!     #[sea_orm(primary_key, auto_increment = false)]
//!     pub id: CombUuid,
//!     pub parent: Option<CombUuid>,
//!     pub note: String,
//! }
//!
//! #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
//! pub enum Relation {}
//!
//! #[async_trait::async_trait]
//! impl ActiveModelBehavior for ActiveModel {
//!     async fn before_save<C: ConnectionTrait>(self, _db: &C, insert: bool) -> Result<Self, DbErr> {
//!         // An unset id gets a fresh COMB on insert.
//!         combkey_sea_orm::before_save(self, insert)
//!     }
//! }
//! ```
//!
//! Then `ActiveModel { note: Set(..), ..Default::default() }.save(db)` inserts with a new
//! id, `.insert(db)` too, and a loaded model's `.save(db)` or `.update(db)` updates. Tables
//! come from [`create_table_from_entity`] (sea-orm's, with `blob` on SQLite). "Created
//! between a and b" is a condition on the key ([`CreatedIn`]):
//! `Entity::find().filter(Column::Id.created_in(Comb::range(a..b)?))`.
//!
//! Raw sqlx queries take the same type: `CombUuid` implements sqlx's `Type`, `Encode` and
//! `Decode` by delegating to combkey-sqlx.
//!
//! # Features
//!
//! - `postgres`, `mysql`, `sqlite`: the backends (sea-orm's `sqlx-postgres`, `sqlx-mysql`,
//!   `sqlx-sqlite`, and combkey-sqlx's backends for the same type in raw sqlx queries).
//!   `postgres` also gives `Vec<CombUuid>` fields and array binds (sea-orm's
//!   `postgres-array`).
//! - `migration`: the `migration` module's helpers (sea-orm-migration).
//! - `sea-orm-2` (default): sea-orm 2.0 with no backend (a mock or proxy connection); the four
//!   above turn it on.
//! - `sea-orm-1-1-postgres`, `sea-orm-1-1-mysql`, `sea-orm-1-1-sqlite`,
//!   `sea-orm-1-1-migration` (and `sea-orm-1-1` alone): the same on sea-orm 1.1, for an app that
//!   has not moved to 2.0, with the default features off. See Versions.
//! - `serde`: `Serialize`/`Deserialize` as the core type does.
//! - `schemars`, `utoipa`: API schemas for the column types (`schemars::JsonSchema`,
//!   `utoipa::ToSchema`: a string, format `uuid`, with an example).
//!
//! # Versions
//!
//! Minimum Rust version: 1.87 on sea-orm 1.1, 1.94 on sea-orm 2.0 (sea-orm 2.0's own). Public dependencies (their types are in this crate's API):
//! sea-orm (its `ValueType`, `TryGetable` and `Nullable` are implemented here), 2.0 or 1.1,
//! sea-orm-migration of the same line with the migration feature, and `combkey` (an exact
//! version: this crate uses its adapter-only items).
//!
//! | sea-orm | features | tested in CI |
//! | --- | --- | --- |
//! | 2.0 | `postgres`, `mysql`, `sqlite`, `migration` | this crate's tests |
//! | 1.1.20 and later 1.1 | `sea-orm-1-1-postgres`, `sea-orm-1-1-mysql`, `sea-orm-1-1-sqlite`, `sea-orm-1-1-migration`, default features off | this crate's tests on sea-orm 1.1, and an app's entities swapped from `uuid::Uuid` |
//!
//! An app on sea-orm 1.1 writes
//! `combkey-sea-orm = { version = "0.1", default-features = false, features = ["sea-orm-1-1-postgres"] }`
//! and finds the same items at the same paths (the crate root's are sea-orm 1.1's when sea-orm
//! 2.0 is off; with both on, 1.1's are in `combkey_sea_orm::sea_orm_1_1`). A host's previous major line stays
//! supported for at least 12 months after its next one is released; dropping one, or taking
//! sea-orm 3, is a new release of this crate that bumps its own version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The value at `$idx` decoded by combkey-sqlx's codec `$t` (`Result<Option<$t>, DbErr>`, sqlx's
/// error kept as sea-orm keeps a query's), when the row comes from one of the sqlx drivers the
/// line's backend features (`$pg`, `$my`, `$lite`) turn on; `None` for another driver (mock,
/// proxy). Each line module forwards its own `sqlx_read!` here with its names.
#[cfg(any(feature = "sea-orm-2", feature = "sea-orm-1-1"))]
macro_rules! line_sqlx_read {
    ($line:ident [$pg:literal, $my:literal, $lite:literal], $res:expr, $idx:expr, $t:ty) => {{
        #[allow(unused_mut)]
        let mut read: Option<Result<Option<$t>, $crate::$line::orm::DbErr>> = None;
        #[cfg(feature = $pg)]
        if let Some(row) = $res.try_as_pg_row() {
            read = Some(
                $crate::$line::orm_sqlx::Row::try_get(row, $idx.as_sqlx_postgres_index())
                    .map_err($crate::$line::query_error),
            );
        }
        #[cfg(feature = $my)]
        if let Some(row) = $res.try_as_mysql_row() {
            read = Some(
                $crate::$line::orm_sqlx::Row::try_get(row, $idx.as_sqlx_mysql_index())
                    .map_err($crate::$line::query_error),
            );
        }
        #[cfg(feature = $lite)]
        if let Some(row) = $res.try_as_sqlite_row() {
            read = Some(
                $crate::$line::orm_sqlx::Row::try_get(row, $idx.as_sqlx_sqlite_index())
                    .map_err($crate::$line::query_error),
            );
        }
        read
    }};
}
#[cfg(any(feature = "sea-orm-2", feature = "sea-orm-1-1"))]
use line_sqlx_read;

// The sea-orm integration is written once (src/line/) and compiled for each sea-orm line a
// feature turns on: sea-orm 2.0 (`sea-orm-2`, in the default features) in `orm2`, whose items
// are the crate root's, and sea-orm 1.1 (`sea-orm-1-1`) in `sea_orm_1_1`.
#[cfg(feature = "sea-orm-2")]
mod orm2;
#[cfg(feature = "sea-orm-1-1")]
#[cfg_attr(docsrs, doc(cfg(feature = "sea-orm-1-1")))]
pub mod sea_orm_1_1;
mod wrappers;

#[cfg(all(feature = "migration", feature = "sea-orm-2"))]
pub use orm2::migration;
#[cfg(feature = "sea-orm-2")]
pub use orm2::{CreatedIn, before_save, create_table_from_entity, try_create_table_from_entity};

// An application on sea-orm 1.1 alone (default features off) finds the same names at the root.
#[cfg(all(feature = "sea-orm-1-1-migration", not(feature = "sea-orm-2")))]
pub use sea_orm_1_1::migration;
#[cfg(all(feature = "sea-orm-1-1", not(feature = "sea-orm-2")))]
pub use sea_orm_1_1::{CreatedIn, before_save, create_table_from_entity, try_create_table_from_entity};

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] as a sea-orm column type, usable as a plain field, an `Option`
    /// field and the primary key.
    ///
    /// The name ends in `Uuid` on purpose: sea-orm 2.0 marks a primary key auto-increment
    /// unless its field type's name ends in `Uuid` or `String`, so
    /// `#[sea_orm(primary_key)] pub id: CombUuid` needs no further attribute there. (sea-orm
    /// 1.1 marks every single primary key auto-increment: write `auto_increment = false`.)
    ///
    /// ```
    /// let id = combkey_sea_orm::CombUuid::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_sea_orm::CombUuid::from(core), id);
    /// ```
    pub struct CombUuid;
}

combkey::adapter::column_newtype! {
    /// A [`combkey::Comb`] in a text key column (`CHAR(36)`, `VARCHAR`, `TEXT`): what
    /// sea-orm's own `TextUuid` is for `uuid::Uuid`. Bound as the lowercase hyphenated text,
    /// so `find_by_id`, inserts and joins match what the column holds when it holds that form;
    /// read from any UUID text form. A column of uppercase text (what .NET writes) is matched
    /// only under a case-insensitive collation (MySQL's default), as with `TextUuid`: lower
    /// it first (`UPDATE t SET id = lower(id)`, with its referencing columns). Its name ends in
    /// `Uuid` for the same reason as [`CombUuid`]'s. [`before_save`] does not give a text key
    /// its id (its column is a string column, like any `String` key's): set it, as
    /// `Set(CombTextUuid::new())`. Such a table can move to the binary stored form with
    /// `combkey doctor`.
    ///
    /// ```
    /// use combkey_sea_orm::CombTextUuid;
    /// use sea_orm::sea_query::Value;
    ///
    /// let id: CombTextUuid = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse()?;
    /// assert_eq!(Value::from(id), Value::from("017f22e2-79b0-7cc3-98c4-dc0c0c07398f".to_string()));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub struct CombTextUuid;
}

/// The README's examples, compiled and run as doc tests (on SQLite, as the README shows).
#[cfg(all(doctest, feature = "sqlite"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
