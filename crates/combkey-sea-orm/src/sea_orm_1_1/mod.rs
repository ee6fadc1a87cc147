//! For applications on sea-orm 1.1 (sea-query 0.32, sqlx 0.8): [`before_save`], the table
//! helpers, [`CreatedIn`] and (feature `sea-orm-1-1-migration`) the [`migration`] helpers, as
//! the crate root has them for sea-orm 2.0. Where sea-orm 2.0 is not turned on (an app on
//! sea-orm 1.1 turns off the default features), the crate root re-exports these, so code reads
//! the same on both lines.
//!
//! The column types are the same ([`CombUuid`](crate::CombUuid),
//! [`CombTextUuid`](crate::CombTextUuid)): they implement sea-orm 1.1's traits too, with the same
//! behaviour (one source, compiled for each line).

#[cfg(feature = "sea-orm-1-1-migration")]
pub(crate) use ::sea_orm_migration11 as orm_migration;
pub(crate) use ::sea_orm11 as orm;
pub(crate) use ::sqlx08 as orm_sqlx;

use orm::DbErr;
#[cfg(feature = "sea-orm-1-1-postgres")]
pub(crate) use orm::sea_query::with_array::NotU8;
use orm::sea_query::{ColumnDef, Value};

/// `crate::line_sqlx_read!` with this line's module and backend features.
macro_rules! sqlx_read {
    ($($args:tt)*) => {
        $crate::line_sqlx_read!(sea_orm_1_1 ["sea-orm-1-1-postgres", "sea-orm-1-1-mysql", "sea-orm-1-1-sqlite"], $($args)*)
    };
}
pub(crate) use sqlx_read;

/// The argument buffer of sqlx's `Encode` (a lifetime parameter of it in sqlx 0.8, none in 0.9).
macro_rules! argument_buffer {
    ($db:ty, $q:lifetime) => {
        <$db as $crate::sea_orm_1_1::orm_sqlx::Database>::ArgumentBuffer<$q>
    };
}
pub(crate) use argument_buffer;

#[path = "../line/behavior.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod behavior;
#[path = "../line/condition.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
mod condition;
#[cfg(feature = "sea-orm-1-1-migration")]
#[path = "../line/migration.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each sea-orm line")]
pub mod migration;
#[cfg(feature = "sea-orm-1-1-postgres")]
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

/// Why sea-orm made a COMB key auto-increment, as the refusal says it: sea-orm 1.1 does so for
/// every single primary key, whatever its type, unless `auto_increment = false` is written.
pub(crate) const AUTO_INCREMENT_CAUSE: &str =
    "sea-orm 1.1 makes every single primary key auto-increment unless told otherwise, whatever its type";

/// What `created_in` gives: sea-query 0.32's expression.
pub(crate) type KeyCondition = orm::sea_query::SimpleExpr;

/// The value a UUID binds as (sea-query 0.32 holds it boxed).
pub(crate) fn uuid_value(u: Option<uuid::Uuid>) -> Value {
    Value::Uuid(u.map(Box::new))
}

/// The value a text binds as.
pub(crate) fn string_value(s: Option<String>) -> Value {
    Value::String(s.map(Box::new))
}

/// What a value holds, for the kinds a COMB id reads from.
pub(crate) fn held(v: Value) -> value::Held {
    match v {
        Value::Uuid(Some(u)) => value::Held::Uuid(*u),
        Value::Bytes(Some(b)) => value::Held::Bytes(*b),
        Value::String(Some(s)) => value::Held::String(*s),
        _ => value::Held::Other,
    }
}

#[cfg(any(feature = "sea-orm-1-1-postgres", feature = "sea-orm-1-1-mysql", feature = "sea-orm-1-1-sqlite"))]
/// A decode error of sqlx, as sea-orm reports a query's.
pub(crate) fn query_error(e: orm_sqlx::Error) -> DbErr {
    DbErr::Query(orm::RuntimeErr::SqlxError(e))
}

/// A value that is no COMB id, as sea-orm reports a failed conversion.
pub(crate) fn conversion_error(e: combkey::Error, into: &'static str) -> DbErr {
    DbErr::TryIntoErr { from: "database value", into, source: Box::new(e) }
}

/// Whether sea-orm declared the column auto-increment.
pub(crate) fn auto_increment(column: &ColumnDef) -> bool {
    column.get_column_spec().iter().any(|spec| matches!(spec, orm::sea_query::ColumnSpec::AutoIncrement))
}
