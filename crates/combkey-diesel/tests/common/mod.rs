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
