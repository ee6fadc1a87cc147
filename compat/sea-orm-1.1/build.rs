// The shared test files (crates/combkey-sea-orm/tests) name a few values whose form differs
// between sea-orm 2.0 and 1.1 (sea-query 0.32 boxes them; sea-orm 1.1 holds sqlx's error
// without an `Arc`); `cfg(combkey_sea_orm_1_1)` tells them they are on 1.1.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(combkey_sea_orm_1_1)");
    println!("cargo::rustc-cfg=combkey_sea_orm_1_1");
}
