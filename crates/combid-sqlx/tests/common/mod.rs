//! Shared by the database tests: combid-testutil, for this crate's column type.
#![allow(dead_code, unused_imports)]

pub use combid_testutil::{mysql_url, pg_url};

use combid_sqlx::Comb;

pub fn sample_ids() -> Vec<Comb> {
    combid_testutil::sample_ids()
}

pub fn generated_and_shuffled(n: usize) -> (Vec<Comb>, Vec<Comb>) {
    combid_testutil::generated_and_shuffled(n)
}

pub fn hex(id: Comb) -> String {
    combid_testutil::hex(id)
}
