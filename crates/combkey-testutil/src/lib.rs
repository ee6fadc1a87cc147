//! Shared by the database tests of the combkey crates (not published): where the test
//! databases are, and ids that expose byte-order mistakes.

/// `COMBKEY_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test` (scripts/db.sh).
pub fn pg_url() -> String {
    std::env::var("COMBKEY_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// `COMBKEY_MYSQL_URL`, default `mysql://root@127.0.0.1:3306/test` (scripts/db.sh).
pub fn mysql_url() -> String {
    std::env::var("COMBKEY_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

/// The RFC 9562 example, nil, max, ascending bytes, an RT.Comb id, and fresh ones: a literal
/// of each in SQL catches any byte-order mistake a round trip would hide.
pub fn sample_ids<T: From<combkey::Comb>>() -> Vec<T> {
    let fixed = [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "00112233-4455-6677-8899-aabbccddeeff",
        "e25afe33-db2d-4502-9bf0-919001862cc4",
    ];
    let mut ids: Vec<combkey::Comb> = fixed.iter().filter_map(|s| s.parse().ok()).collect();
    ids.extend((0..5).map(|_| combkey::Comb::new()));
    ids.into_iter().map(T::from).collect()
}

/// `n` ids in generation order, and the same ids shuffled.
pub fn generated_and_shuffled<T: From<combkey::Comb> + Clone>(n: usize) -> (Vec<T>, Vec<T>) {
    use rand::seq::SliceRandom;
    let mut ids = vec![combkey::Comb::NIL; n];
    combkey::V7Generator::new().fill(&mut ids);
    let ids: Vec<T> = ids.into_iter().map(T::from).collect();
    let mut shuffled = ids.clone();
    shuffled.shuffle(&mut rand::rng());
    (ids, shuffled)
}

/// The 32 uppercase hex digits of an id, for SQL literals (`UNHEX('..')`, `X'..'`).
pub fn hex(id: impl Into<combkey::Comb>) -> String {
    format!("{:X}", id.into())
}

/// An error and its sources, joined: drivers wrap a column's error in one naming it.
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
