//! Shared by the database tests: combkey-testutil, for this crate's column type.
#![allow(dead_code, unused_imports)]

pub use combkey_testutil::{mysql_url, pg_url};

use combkey_sqlx::Comb;

/// SQL built at run time, as sqlx 0.9 takes it.
#[cfg(not(combkey_sqlx_0_8))]
pub use sqlx::AssertSqlSafe;

/// On sqlx 0.8 (compat/sqlx-0.8 runs these files there), which has no `AssertSqlSafe` and takes
/// a query as `&str`: the text, kept for the test's life (a test makes a few dozen).
#[cfg(combkey_sqlx_0_8)]
#[allow(non_snake_case)]
pub fn AssertSqlSafe(sql: impl Into<String>) -> &'static str {
    String::leak(sql.into())
}

pub fn sample_ids() -> Vec<Comb> {
    combkey_testutil::sample_ids()
}

pub fn generated_and_shuffled(n: usize) -> (Vec<Comb>, Vec<Comb>) {
    combkey_testutil::generated_and_shuffled(n)
}

pub fn hex(id: Comb) -> String {
    combkey_testutil::hex(id)
}

/// A sqlx connection as a [`combkey_testutil::TypeHarness`] for `T` (`Comb` or `CombText`):
/// `null` is a typed NULL of the column type, `placeholder` the driver's first parameter.
pub struct Harness<C, T> {
    pub c: C,
    null: &'static str,
    placeholder: &'static str,
    _t: std::marker::PhantomData<T>,
}

macro_rules! harness {
    ($db:ty, $conn:ty, $eq:ty, $url:expr, $placeholder:literal) => {
        impl<T> Harness<$conn, T> {
            pub async fn connect(null: &'static str) -> Self {
                use sqlx::Connection;
                let url = $url;
                let c = <$conn>::connect(&url).await.unwrap_or_else(|e| panic!("{url}: {e}"));
                Harness { c, null, placeholder: $placeholder, _t: std::marker::PhantomData }
            }
        }

        impl<T> combkey_testutil::TypeHarness for Harness<$conn, T>
        where
            T: for<'r> sqlx::Decode<'r, $db>
                + for<'q> sqlx::Encode<'q, $db>
                + sqlx::Type<$db>
                + From<combkey::Comb>
                + Into<combkey::Comb>
                + Copy
                + PartialEq
                + std::fmt::Debug
                + Send
                + Unpin
                + 'static,
        {
            type Id = T;

            async fn literal(&mut self, expr: &str) -> Result<T, String> {
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT {expr}")))
                    .fetch_one(&mut self.c)
                    .await
                    .map_err(|e| e.to_string())
            }

            async fn bound_equals(&mut self, id: T, expr: &str) -> Result<bool, String> {
                let eq: $eq = sqlx::query_scalar(AssertSqlSafe(format!("SELECT {} = {expr}", self.placeholder)))
                    .bind(id)
                    .fetch_one(&mut self.c)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(eq == <$eq>::from(true))
            }

            async fn round_trip(&mut self, id: T) -> Result<T, String> {
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT {}", self.placeholder)))
                    .bind(id)
                    .fetch_one(&mut self.c)
                    .await
                    .map_err(|e| e.to_string())
            }

            async fn null_option(&mut self) -> Result<Option<T>, String> {
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT {}", self.null)))
                    .fetch_one(&mut self.c)
                    .await
                    .map_err(|e| e.to_string())
            }

            async fn null_strict(&mut self) -> Result<T, String> {
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT {}", self.null)))
                    .fetch_one(&mut self.c)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    };
}

harness!(sqlx::Postgres, sqlx::PgConnection, bool, pg_url(), "$1");
harness!(sqlx::MySql, sqlx::MySqlConnection, i64, mysql_url(), "?");
harness!(sqlx::Sqlite, sqlx::SqliteConnection, bool, String::from("sqlite::memory:"), "?");
