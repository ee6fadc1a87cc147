// The shared test files (crates/combkey-sqlx/tests) bind SQL built at run time through
// `AssertSqlSafe`, which sqlx 0.9 added; on sqlx 0.8 their `common` module stands in for it.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(combkey_sqlx_0_8)");
    println!("cargo::rustc-cfg=combkey_sqlx_0_8");
}
