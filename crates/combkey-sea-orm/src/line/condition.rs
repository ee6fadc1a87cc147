//! "Rows created between a and b" as a condition on the key column.

use super::KeyCondition;
use super::orm::ColumnTrait;

use crate::CombUuid;

/// `created_in` for a sea-orm column holding COMB ids: the rows whose id carries a time in a
/// [`combkey::KeyRange`] ([`combkey::Comb::range`]), as `id BETWEEN start AND last`, which the
/// database answers from the primary key's index.
///
/// ```
/// use combkey_sea_orm::{CombUuid, CreatedIn};
/// use sea_orm::{DbBackend, QueryTrait, entity::prelude::*};
///
/// #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
/// #[sea_orm(table_name = "orders")]
/// pub struct Model {
///     #[sea_orm(primary_key, auto_increment = false)]
///     pub id: CombUuid,
/// }
///
/// #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
/// pub enum Relation {}
///
/// impl ActiveModelBehavior for ActiveModel {}
///
/// let (a, b) = ("2026-01-01T00:00:00Z".parse()?, "2026-01-01T01:00:00Z".parse()?);
/// let hour = Entity::find().filter(Column::Id.created_in(combkey::Comb::range(a..b)?));
/// assert_eq!(
///     hour.build(DbBackend::Postgres).to_string(),
///     r#"SELECT "orders"."id" FROM "orders" WHERE "orders"."id" BETWEEN '019b76da-a800-7000-8000-000000000000' AND '019b7711-9680-7000-7fff-ffffffffffff'"#
/// );
/// # Ok::<(), combkey::Error>(())
/// ```
pub trait CreatedIn: ColumnTrait {
    /// `self BETWEEN range.start() AND range.last()` (the same rows as `>= start AND < end`).
    fn created_in(&self, range: combkey::KeyRange) -> KeyCondition {
        self.between(CombUuid::from(range.start()), CombUuid::from(range.last()))
    }
}

impl<C: ColumnTrait> CreatedIn for C {}
