//! Shared by the database tests: combkey-testutil, for this crate's column type.
#![allow(dead_code, unused_imports)]

pub use combkey_testutil::{chain, mysql_url, pg_url};

use combkey_diesel::Comb;

pub fn sample_ids() -> Vec<Comb> {
    combkey_testutil::sample_ids()
}

pub fn generated_and_shuffled(n: usize) -> (Vec<Comb>, Vec<Comb>) {
    combkey_testutil::generated_and_shuffled(n)
}

pub fn hex(id: Comb) -> String {
    combkey_testutil::hex(id)
}

/// Whether a diesel error is its `UnexpectedNullError`: what a NULL into a non-`Option`
/// must give, so that diesel's nullable tuples (LEFT JOIN) turn an all-NULL side into `None`.
pub fn is_unexpected_null(err: &diesel::result::Error) -> bool {
    matches!(err, diesel::result::Error::DeserializationError(e) if e.is::<diesel::result::UnexpectedNullError>())
}

/// A diesel connection as a [`combkey_testutil::TypeHarness`] for `T` (`Comb` or `CombText`):
/// `null` is a typed NULL of the column type. Made for one connection type and SQL type with
/// [`harness!`].
pub struct Harness<C, T> {
    pub c: C,
    pub null: &'static str,
    pub _t: std::marker::PhantomData<T>,
}

impl<C, T> Harness<C, T> {
    pub fn new(c: C, null: &'static str) -> Self {
        Harness { c, null, _t: std::marker::PhantomData }
    }
}

/// `impl TypeHarness for Harness<$conn, $t>` with the column's SQL type `$st`.
#[allow(unused_macros)] // Not every test binary declares a harness.
macro_rules! harness {
    ($conn:ty, $st:ty, $t:ty) => {
        impl combkey_testutil::TypeHarness for common::Harness<$conn, $t> {
            type Id = $t;

            async fn literal(&mut self, expr: &str) -> Result<$t, String> {
                use diesel::RunQueryDsl;
                diesel::select(diesel::dsl::sql::<$st>(expr)).get_result(&mut self.c).map_err(|e| common::chain(&e))
            }

            async fn bound_equals(&mut self, id: $t, expr: &str) -> Result<bool, String> {
                use diesel::RunQueryDsl;
                diesel::select(
                    diesel::dsl::sql::<diesel::sql_types::Bool>("").bind::<$st, _>(id).sql(&format!(" = {expr}")),
                )
                .get_result(&mut self.c)
                .map_err(|e| common::chain(&e))
            }

            async fn round_trip(&mut self, id: $t) -> Result<$t, String> {
                use diesel::{IntoSql, RunQueryDsl};
                diesel::select(id.into_sql::<$st>()).get_result(&mut self.c).map_err(|e| common::chain(&e))
            }

            async fn null_option(&mut self) -> Result<Option<$t>, String> {
                use diesel::RunQueryDsl;
                diesel::select(diesel::dsl::sql::<diesel::sql_types::Nullable<$st>>(self.null))
                    .get_result(&mut self.c)
                    .map_err(|e| common::chain(&e))
            }

            async fn null_strict(&mut self) -> Result<$t, String> {
                use diesel::RunQueryDsl;
                diesel::select(diesel::dsl::sql::<$st>(self.null))
                    .get_result(&mut self.c)
                    .map_err(|e| common::chain(&e))
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use harness;
