//! Tables from entities, with COMB columns in the right stored form on every backend.

use super::orm::sea_query::{ColumnType, TableCreateStatement};
use super::orm::{DbBackend, DbErr, EntityTrait, Schema};

/// `Schema::create_table_from_entity`, with every UUID column (every [`CombUuid`](crate::CombUuid)
/// field) declared `blob` on SQLite, as the migration helpers declare it: sea-query declares
/// it `uuid_text` there, a column whose text affinity lets UUID *text* in beside the 16-byte
/// values (text sorts before every blob in SQLite, and never equals the id's bytes).
/// PostgreSQL (`uuid`) and MySQL/MariaDB (`binary(16)`) get sea-orm's statement unchanged.
///
/// An entity whose COMB key sea-orm treats as auto-increment (a type alias without
/// `auto_increment = false`) gives a statement that sea-query's PostgreSQL builder panics on;
/// [`try_create_table_from_entity`] says so as an error instead.
///
/// ```
/// use sea_orm::{DbBackend, entity::prelude::*};
///
/// #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
/// #[sea_orm(table_name = "orders")]
/// pub struct Model {
///     #[sea_orm(primary_key, auto_increment = false)]
///     pub id: combkey_sea_orm::CombUuid,
///     pub parent: Option<combkey_sea_orm::CombUuid>,
/// }
///
/// #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
/// pub enum Relation {}
///
/// impl ActiveModelBehavior for ActiveModel {}
///
/// let sqlite = DbBackend::Sqlite.build(&combkey_sea_orm::create_table_from_entity(DbBackend::Sqlite, Entity));
/// assert_eq!(sqlite.to_string(), r#"CREATE TABLE "orders" ( "id" blob NOT NULL PRIMARY KEY, "parent" blob )"#);
/// let pg = DbBackend::Postgres.build(&combkey_sea_orm::create_table_from_entity(DbBackend::Postgres, Entity));
/// assert_eq!(pg.to_string(), r#"CREATE TABLE "orders" ( "id" uuid NOT NULL PRIMARY KEY, "parent" uuid )"#);
/// ```
pub fn create_table_from_entity<E: EntityTrait>(backend: DbBackend, entity: E) -> TableCreateStatement {
    let stmt = Schema::new(backend).create_table_from_entity(entity);
    if backend != DbBackend::Sqlite {
        return stmt;
    }
    // Rebuilt from what sea-orm put in it: the table, the columns, the (composite) primary
    // key, the foreign keys and the comment.
    let mut out = TableCreateStatement::new();
    if let Some(table) = stmt.get_table_name() {
        out.table(table.clone());
    }
    for column in stmt.get_columns() {
        let mut column = column.clone();
        if column.get_column_type() == Some(&ColumnType::Uuid) {
            column.blob();
        }
        out.col(column);
    }
    for index in stmt.get_indexes() {
        out.index(&mut index.clone());
    }
    for foreign_key in stmt.get_foreign_key_create_stmts() {
        out.foreign_key(&mut foreign_key.clone());
    }
    if let Some(comment) = stmt.get_comment() {
        out.comment(comment);
    }
    out
}

/// [`create_table_from_entity`], or an error when a COMB column is auto-increment: sea-orm
/// 2.0's derive makes a single primary key auto-increment unless its type's name ends in `Uuid`
/// or `String` (so a type alias such as `type OrderId = CombUuid;` does), sea-orm 1.1's every
/// single primary key unless `auto_increment = false` is written, which no backend can
/// create as meant (PostgreSQL's builder panics, MySQL refuses `AUTO_INCREMENT` on
/// `binary(16)`, SQLite makes the key an integer alias). The message names the fix.
///
/// ```
/// use sea_orm::{DbBackend, entity::prelude::*};
///
/// type OrderId = combkey_sea_orm::CombUuid;
///
/// #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
/// #[sea_orm(table_name = "orders")]
/// pub struct Model {
///     #[sea_orm(primary_key)] // auto_increment = false forgotten
///     pub id: OrderId,
/// }
///
/// #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
/// pub enum Relation {}
///
/// impl ActiveModelBehavior for ActiveModel {}
///
/// let err = combkey_sea_orm::try_create_table_from_entity(DbBackend::Postgres, Entity).unwrap_err();
/// assert!(err.to_string().contains("auto_increment = false"), "{err}");
/// ```
pub fn try_create_table_from_entity<E: EntityTrait>(
    backend: DbBackend,
    entity: E,
) -> Result<TableCreateStatement, DbErr> {
    let stmt = Schema::new(backend).create_table_from_entity(entity);
    for column in stmt.get_columns() {
        let comb = matches!(
            column.get_column_type(),
            Some(ColumnType::Uuid | ColumnType::String(_) | ColumnType::Char(_) | ColumnType::Text)
        );
        if comb && super::auto_increment(column) {
            let table = stmt.get_table_name().map(|t| format!("{t:?}")).unwrap_or_default();
            return Err(DbErr::Custom(format!(
                "column {} of {table} is a COMB id (or text), but sea-orm treats it as auto-increment ({}): write \
                 #[sea_orm(primary_key, auto_increment = false)]",
                column.get_column_name(),
                super::AUTO_INCREMENT_CAUSE
            )));
        }
    }
    Ok(create_table_from_entity(backend, entity))
}
