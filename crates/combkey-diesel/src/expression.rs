//! "Rows created between a and b" as a condition on the key.

use diesel::dsl::Between;
use diesel::expression::{AsExpression, Expression};
use diesel::expression_methods::ExpressionMethods;
use diesel::sql_types::SqlType;

use crate::Comb;

/// `created_in` for a diesel expression of the key column: the rows whose id carries a time
/// in a [`combkey::KeyRange`] ([`combkey::Comb::range`]), as `id BETWEEN start AND last`
/// (`last` the end's predecessor: the same rows as `id >= start AND id < end`), which the
/// database answers from the primary key's index.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use combkey_diesel::{Comb, CreatedInExpressionMethods};
/// use diesel::prelude::*;
///
/// diesel::table! {
///     orders (id) {
///         id -> Binary,
///     }
/// }
///
/// let mut c = SqliteConnection::establish(":memory:").unwrap();
/// diesel::sql_query("CREATE TABLE orders (id BLOB PRIMARY KEY NOT NULL)").execute(&mut c).unwrap();
/// let g = combkey::V7Generator::new();
/// let (a, b): (combkey::Timestamp, combkey::Timestamp) = ("2026-01-01T00:00:00Z".parse()?, "2026-01-01T01:00:00Z".parse()?);
/// let inside = Comb::from(g.generate_at(a));
/// let after = Comb::from(g.generate_at(b));
/// diesel::insert_into(orders::table).values(&vec![orders::id.eq(inside), orders::id.eq(after)]).execute(&mut c).unwrap();
/// let hour: Vec<Comb> = orders::table
///     .select(orders::id)
///     .filter(orders::id.created_in(combkey::Comb::range(a..b)?))
///     .load(&mut c)
///     .unwrap();
/// assert_eq!(hour, [inside]);
/// # }
/// # Ok::<(), combkey::Error>(())
/// ```
pub trait CreatedInExpressionMethods: Expression + ExpressionMethods + Sized {
    /// `self BETWEEN range.start() AND range.last()`.
    fn created_in(self, range: combkey::KeyRange) -> Between<Self, Comb, Comb>
    where
        Self::SqlType: SqlType,
        Comb: AsExpression<Self::SqlType>,
    {
        self.between(Comb::from(range.start()), Comb::from(range.last()))
    }
}

impl<T: Expression + ExpressionMethods> CreatedInExpressionMethods for T {}
