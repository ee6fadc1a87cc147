//! sea-orm 2.0 (sea-query 1.0, sqlx 0.9): the shared code of `src/line/` with this line's crates
//! and the few places where the lines' APIs differ. Its public items are the crate root's.

pub(crate) use ::sea_orm as orm;
#[cfg(feature = "migration")]
pub(crate) use ::sea_orm_migration as orm_migration;
pub(crate) use ::sqlx as orm_sqlx;

use std::sync::Arc;

use orm::DbErr;
#[cfg(feature = "postgres")]
pub(crate) use orm::sea_query::postgres_array::NotU8;
use orm::sea_query::{ColumnDef, Value};

/// `crate::line_sqlx_read!` with this line's module and backend features.
macro_rules! sqlx_read {
    ($($args:tt)*) => {
        $crate::line_sqlx_read!(orm2 ["postgres", "mysql", "sqlite"], $($args)*)
    };
}
pub(crate) use sqlx_read;

/// The argument buffer of sqlx's `Encode` (a lifetime parameter of it in sqlx 0.8, none in 0.9).
macro_rules! argument_buffer {
    ($db:ty, $q:lifetime) => {
        <$db as $crate::orm2::orm_sqlx::Database>::ArgumentBuffer
    };
}
pub(crate) use argument_buffer;

#[path = "../line/behavior.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod behavior;
#[path = "../line/condition.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod condition;
#[cfg(feature = "migration")]
#[path = "../line/migration.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
pub mod migration;
#[cfg(feature = "postgres")]
#[path = "../line/postgres.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod postgres;
#[path = "../line/schema.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod schema;
#[path = "../line/sqlx_impls.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod sqlx_impls;
#[path = "../line/value.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod value;

pub use behavior::before_save;
pub use condition::CreatedIn;
pub use schema::{create_table_from_entity, try_create_table_from_entity};

/// Why sea-orm made a COMB key auto-increment, as the refusal says it: sea-orm 2.0 does so
/// for a single primary key unless its type's name ends in `Uuid` or `String`.
pub(crate) const AUTO_INCREMENT_CAUSE: &str = "its type name does not end in `Uuid`, as with a type alias";

/// What `created_in` gives: sea-query 1.0's expression.
pub(crate) type KeyCondition = orm::sea_query::Expr;

/// The value a UUID binds as (sea-query 1.0 holds it unboxed).
pub(crate) fn uuid_value(u: Option<uuid::Uuid>) -> Value {
    Value::Uuid(u)
}

/// The value a text binds as.
pub(crate) fn string_value(s: Option<String>) -> Value {
    Value::String(s)
}

/// What a value holds, for the kinds a COMB id reads from.
pub(crate) fn held(v: Value) -> value::Held {
    match v {
        Value::Uuid(Some(u)) => value::Held::Uuid(u),
        Value::Bytes(Some(b)) => value::Held::Bytes(b),
        Value::String(Some(s)) => value::Held::String(s),
        _ => value::Held::Other,
    }
}

#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
/// A decode error of sqlx, as sea-orm reports a query's (its `Arc` since 2.0).
pub(crate) fn query_error(e: orm_sqlx::Error) -> DbErr {
    DbErr::Query(orm::RuntimeErr::SqlxError(Arc::new(e)))
}

/// A value that is no COMB id, as sea-orm reports a failed conversion.
pub(crate) fn conversion_error(e: combkey::Error, into: &'static str) -> DbErr {
    DbErr::TryIntoErr { from: "database value", into, source: Arc::new(e) }
}

/// Whether sea-orm declared the column auto-increment.
pub(crate) fn auto_increment(column: &ColumnDef) -> bool {
    column.get_column_spec().auto_increment
}
