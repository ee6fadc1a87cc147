//! combkey in one screen: a table keyed by COMB ids, rows inserted out of order, read back in
//! key order, and each id's time and stored form on every backend.
//!
//! ```sh
//! cargo run -p quickstart                                   # in-memory SQLite, nothing to install
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p quickstart
//! DATABASE_URL=mysql://root@127.0.0.1:3306/test cargo run -p quickstart
//! ```

use combkey::Backend;
use combkey_sqlx::Comb;
use sqlx::{AssertSqlSafe, Connection, Database, Decode, Encode, Executor, IntoArguments, Type};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Unset or empty (as an `.env` line `DATABASE_URL=` leaves it): in-memory SQLite.
    let url = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "sqlite::memory:".into());
    // No credentials on screen: the host and database after the login, or, where the URL has
    // no `@` (a typo may have put the password elsewhere), only its scheme.
    let shown = url
        .rsplit_once('@')
        .map_or_else(|| url.split(':').next().filter(|s| !s.is_empty()).unwrap_or(&url), |(_, h)| h);
    println!("database: {shown}");
    if url.starts_with("postgres") {
        run::<sqlx::Postgres>(&url, Backend::Postgres, "$1", "$2").await
    } else if url.starts_with("mysql") || url.starts_with("mariadb") {
        run::<sqlx::MySql>(&url, Backend::MySql, "?", "?").await
    } else if url.starts_with("sqlite") {
        run::<sqlx::Sqlite>(&url, Backend::Sqlite, "?", "?").await
    } else {
        Err(format!("DATABASE_URL must start with postgres://, mysql:// or sqlite:, not {shown:?}").into())
    }
}

async fn run<DB>(url: &str, backend: Backend, p1: &str, p2: &str) -> Result<(), Box<dyn std::error::Error>>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> DB::Arguments: IntoArguments<DB>,
    for<'r> Comb: Type<DB> + Encode<'r, DB> + Decode<'r, DB>,
    for<'r> String: Type<DB> + Encode<'r, DB> + Decode<'r, DB>,
    for<'r> (Comb, String): sqlx::FromRow<'r, DB::Row>,
{
    let mut conn = DB::Connection::connect(url).await?;
    let ddl = format!("CREATE TEMPORARY TABLE quickstart_orders ({}, note TEXT NOT NULL)", bare_pk(backend));
    sqlx::query(AssertSqlSafe(ddl)).execute(&mut conn).await?;

    // Five ids made by the application, inserted in scrambled order.
    let ids: Vec<Comb> = (0..5).map(|_| Comb::new()).collect();
    for i in [3, 0, 4, 1, 2] {
        let insert = format!("INSERT INTO quickstart_orders (id, note) VALUES ({p1}, {p2})");
        sqlx::query(AssertSqlSafe(insert)).bind(ids[i]).bind(format!("order #{}", i + 1)).execute(&mut conn).await?;
    }

    let rows: Vec<(Comb, String)> =
        sqlx::query_as("SELECT id, note FROM quickstart_orders ORDER BY id").fetch_all(&mut conn).await?;
    println!("rows in key order ({} column):", backend.column_type());
    for (id, note) in &rows {
        let core = id.to_comb();
        let time = core.timestamp().map(|t| t.to_string()).unwrap_or_default();
        println!("  {id}  {note}  created {time}");
        println!("      PostgreSQL uuid / MySQL BINARY(16) / SQLite BLOB: 0x{}", Backend::MySql.stored_text(core));
        println!("      SQL Server uniqueidentifier:                      {}", Backend::SqlServer.stored_text(core));
    }
    let in_order = rows.iter().map(|(id, _)| *id).eq(ids.iter().copied());
    println!("ORDER BY id returned creation order: {in_order}");
    if in_order { Ok(()) } else { Err("rows came back out of creation order".into()) }
}

/// The key column without a database-side default, so the example needs no functions installed.
fn bare_pk(backend: Backend) -> String {
    match backend {
        Backend::Postgres => "id uuid PRIMARY KEY".to_string(),
        other => other.primary_key("id"),
    }
}
