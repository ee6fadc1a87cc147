//! Shared by the database tests.
#![allow(dead_code)]

use combid_diesel::Comb;

/// `COMBID_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test` (scripts/db.sh).
pub fn pg_url() -> String {
    std::env::var("COMBID_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// `COMBID_MYSQL_URL`, default `mysql://root@127.0.0.1:3306/test` (scripts/db.sh).
pub fn mysql_url() -> String {
    std::env::var("COMBID_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

/// Ids whose bytes expose byte-order mistakes, and fresh ones.
pub fn sample_ids() -> Vec<Comb> {
    let mut ids: Vec<Comb> = [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "00112233-4455-6677-8899-aabbccddeeff",
    ]
    .iter()
    .map(|s| s.parse().expect("sample id"))
    .collect();
    ids.extend((0..4).map(|_| Comb::new()));
    ids
}

/// `n` ids in generation order, and the same shuffled.
pub fn generated_and_shuffled(n: usize) -> (Vec<Comb>, Vec<Comb>) {
    use rand::seq::SliceRandom;
    let mut ids = vec![combid::Comb::NIL; n];
    combid::V7Generator::new().fill(&mut ids);
    let ids: Vec<Comb> = ids.into_iter().map(Comb::from).collect();
    let mut shuffled = ids.clone();
    shuffled.shuffle(&mut rand::rng());
    (ids, shuffled)
}

pub fn hex(id: Comb) -> String {
    format!("{:X}", id.to_comb())
}

/// An error and its sources, joined: diesel wraps a field's error in one naming the field.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        s.push_str(": ");
        s.push_str(&e.to_string());
        source = e.source();
    }
    s
}
