//! What an entity keyed by [`CombUuid`] does in its `ActiveModelBehavior`.

use super::orm::sea_query::ColumnType;
use super::orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityName, EntityTrait, Iterable, PrimaryKeyToColumn, PrimaryKeyTrait,
};

use crate::CombUuid;

/// For `ActiveModelBehavior::before_save`: on insert, gives every UUID primary key column
/// that is `NotSet` a fresh id, and refuses an entity whose COMB key sea-orm treats as
/// auto-increment.
///
/// Why here and not in `ActiveModelBehavior::new`: sea-orm's `save()` inserts when the
/// primary key is `NotSet` and updates when it is set, so a `new()` that sets the id makes
/// `save()` of a new row an `UPDATE` that fails with `RecordNotUpdated`. `before_save` runs
/// after that choice, so `save()`, `insert()` and `update()` all do the right thing.
///
/// The check: sea-orm 2.0's derive makes a single primary key auto-increment unless its type
/// name ends in `Uuid` or `String`, or `auto_increment = false` is written (sea-orm 1.1's
/// makes every single primary key auto-increment unless it is written). Such a key (on 2.0, one
/// typed by an alias such as `type OrderId = CombUuid;`) becomes `AUTO_INCREMENT` in
/// `create_table_from_entity`, and sea-orm drops the id it was given and asks the database for
/// one, so inserts fail deep in sea-orm (on MySQL and SQLite after the row is written). This
/// returns an error naming the entity and the fix instead, before the insert.
///
/// Only `uuid` key columns ([`CombUuid`]) get an id: a [`CombTextUuid`](crate::CombTextUuid)
/// key is a string column, like any `String` key, and is left to the application.
///
/// ```
/// use combkey_sea_orm::CombUuid;
/// use sea_orm::entity::prelude::*;
///
/// #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
/// #[sea_orm(table_name = "orders")]
/// pub struct Model {
///     #[sea_orm(primary_key, auto_increment = false)]
///     pub id: CombUuid,
///     pub note: String,
/// }
///
/// #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
/// pub enum Relation {}
///
/// #[async_trait::async_trait]
/// impl ActiveModelBehavior for ActiveModel {
///     async fn before_save<C: ConnectionTrait>(self, _db: &C, insert: bool) -> Result<Self, DbErr> {
///         combkey_sea_orm::before_save(self, insert)
///     }
/// }
///
/// let order = ActiveModel { note: sea_orm::Set("first".into()), ..Default::default() };
/// let order = combkey_sea_orm::before_save(order, true)?;
/// assert!(order.id.is_set());
/// # Ok::<(), DbErr>(())
/// ```
pub fn before_save<A: ActiveModelTrait>(mut model: A, insert: bool) -> Result<A, DbErr> {
    if !insert {
        return Ok(model);
    }
    let auto_increment = <<A::Entity as EntityTrait>::PrimaryKey as PrimaryKeyTrait>::auto_increment();
    for key in <<A::Entity as EntityTrait>::PrimaryKey as Iterable>::iter() {
        let column = key.into_column();
        if column.def().get_column_type() != &ColumnType::Uuid {
            continue;
        }
        if auto_increment {
            let table = <A::Entity as Default>::default().table_name().to_string();
            return Err(DbErr::Custom(format!(
                "the primary key of {table} is a COMB id, but sea-orm treats it as auto-increment ({}): write \
                 #[sea_orm(primary_key, auto_increment = false)]",
                super::AUTO_INCREMENT_CAUSE
            )));
        }
        if model.is_not_set(column) {
            model.set(column, CombUuid::new().into());
        }
    }
    Ok(model)
}
