//! `COMBKEY_COMPILE_FAIL_UUID_PARAM=1` compiles tests/overrides.rs with a helper that binds a
//! `uuid::Uuid` where the override made the parameter a `Comb`, which must not compile
//! (examples/migrating/sqlx-toml.sh checks the message). An environment variable, not a
//! feature, so that `--all-features` never turns it on.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(combkey_uuid_param)");
    println!("cargo::rerun-if-env-changed=COMBKEY_COMPILE_FAIL_UUID_PARAM");
    if std::env::var_os("COMBKEY_COMPILE_FAIL_UUID_PARAM").is_some() {
        println!("cargo::rustc-cfg=combkey_uuid_param");
    }
}
