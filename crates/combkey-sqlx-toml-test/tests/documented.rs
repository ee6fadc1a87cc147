//! The `sqlx.toml` that combkey-sqlx's docs show, read as sqlx reads it: each table override
//! must match the table name sqlx reports for such a column on MariaDB, SQLite and
//! PostgreSQL, which is the name the `query!` macros look the override up by
//! (`sqlx-macros-core`'s `column_override(&origin.table, &origin.name)`).

use sqlx::_unstable::config::Config;
use sqlx::{Column, ColumnOrigin, Connection, Executor, MySqlConnection, PgConnection, SqliteConnection, Statement};

/// The ```toml block of combkey-sqlx's crate docs.
fn documented() -> Config {
    let docs = include_str!("../../combkey-sqlx/src/lib.rs");
    let block: Vec<&str> = docs
        .lines()
        .map(|l| l.strip_prefix("//!").map_or(l, |r| r.strip_prefix(' ').unwrap_or(r)))
        .skip_while(|l| *l != "```toml")
        .skip(1)
        .take_while(|l| *l != "```")
        .collect();
    assert!(block.len() > 5, "the docs' sqlx.toml block");
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("combkey-sqlx-toml-{}-{n}.toml", std::process::id()));
    std::fs::write(&path, block.join("\n")).unwrap();
    let config = Config::try_from_path(path.clone()).unwrap_or_else(|e| panic!("the docs' sqlx.toml: {e}"));
    std::fs::remove_file(path).unwrap();
    config
}

/// The override the macros would use for each column of `statement`, by its origin.
fn overrides<S: Statement>(config: &Config, statement: &S) -> Vec<(String, Option<String>)> {
    statement
        .columns()
        .iter()
        .map(|c| match c.origin() {
            ColumnOrigin::Table(t) => (
                format!("{}.{}", t.table, t.name),
                config.macros.column_override(&t.table, &t.name).map(str::to_string),
            ),
            other => (format!("{other:?}"), None),
        })
        .collect()
}

fn expected(table: &str) -> Vec<(String, Option<String>)> {
    vec![
        (format!("{table}.id"), Some("combkey_sqlx::Comb".into())),
        (format!("{table}.legacy_id"), Some("combkey_sqlx::CombText".into())),
    ]
}

#[tokio::test]
async fn mariadb_table_overrides_match() {
    let config = documented();
    let url = combkey_testutil::mysql_url();
    let mut c = MySqlConnection::connect(&url).await.unwrap_or_else(|e| panic!("MariaDB at {url}: {e}"));
    c.execute("CREATE DATABASE IF NOT EXISTS shop").await.unwrap();
    c.execute("CREATE TABLE IF NOT EXISTS shop.orders (id BINARY(16) PRIMARY KEY, legacy_id CHAR(36))").await.unwrap();
    let statement = c.prepare(sqlx::SqlSafeStr::into_sql_str("SELECT id, legacy_id FROM shop.orders")).await.unwrap();
    assert_eq!(overrides(&config, &statement), expected("shop.orders"));
    c.execute("DROP DATABASE shop").await.unwrap();
}

#[tokio::test]
async fn sqlite_table_overrides_match() {
    let config = documented();
    let mut c = SqliteConnection::connect("sqlite::memory:").await.unwrap();
    c.execute("CREATE TABLE orders (id BLOB PRIMARY KEY, legacy_id TEXT)").await.unwrap();
    let statement = c.prepare(sqlx::SqlSafeStr::into_sql_str("SELECT id, legacy_id FROM orders")).await.unwrap();
    assert_eq!(overrides(&config, &statement), expected("orders"));
}

#[tokio::test]
async fn postgres_overrides_match() {
    let config = documented();
    assert_eq!(config.macros.type_override("UUID"), Some("combkey_sqlx::Comb"));
    assert_eq!(config.macros.type_override("UUID[]"), Some("Vec<combkey_sqlx::Comb>"));
    let url = combkey_testutil::pg_url();
    let mut c = PgConnection::connect(&url).await.unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    c.execute("CREATE TEMPORARY TABLE orders (id uuid PRIMARY KEY, legacy_id text)").await.unwrap();
    let statement =
        c.prepare(sqlx::SqlSafeStr::into_sql_str("SELECT id, legacy_id, ARRAY[id] AS ids FROM orders")).await.unwrap();
    let names: Vec<String> = statement.columns().iter().map(|c| c.type_info().to_string()).collect();
    assert_eq!(names, ["UUID", "TEXT", "UUID[]"], "the type names the type overrides are keyed by");
}
