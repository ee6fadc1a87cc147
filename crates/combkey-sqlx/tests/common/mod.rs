//! Shared by the database tests: combkey-testutil, for this crate's column type.
#![allow(dead_code, unused_imports)]

pub use combkey_testutil::{mysql_url, pg_url};

use combkey_sqlx::Comb;

pub fn sample_ids() -> Vec<Comb> {
    combkey_testutil::sample_ids()
}

pub fn generated_and_shuffled(n: usize) -> (Vec<Comb>, Vec<Comb>) {
    combkey_testutil::generated_and_shuffled(n)
}

pub fn hex(id: Comb) -> String {
    combkey_testutil::hex(id)
}
