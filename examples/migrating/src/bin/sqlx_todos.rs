//! sqlx's `examples/sqlite/todos`, keyed by UUIDs: `add TEXT`, `done ID`, `list`. Written for
//! `uuid::Uuid` (`--features before`); the combkey version differs in the one `use` line
//! below (docs/migrating.md shows the diff). Rows either version wrote, the other reads.
//!
//! ```sh
//! DATABASE_URL=sqlite:todos.db?mode=rwc cargo run -p migrating --bin sqlx_todos -- add "buy milk"
//! ```

#[cfg(not(feature = "before"))]
use combkey_sqlx::Comb as Uuid;
use sqlx::SqlitePool;
#[cfg(feature = "before")]
use uuid::Uuid;

#[derive(sqlx::FromRow)]
struct Todo {
    id: Uuid,
    description: String,
    done: bool,
}

async fn add_todo(pool: &SqlitePool, description: &str) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::now_v7();
    sqlx::query("INSERT INTO todos (id, description) VALUES (?1, ?2)").bind(id).bind(description).execute(pool).await?;
    Ok(id)
}

async fn complete_todo(pool: &SqlitePool, id: Uuid) -> Result<bool, sqlx::Error> {
    let rows = sqlx::query("UPDATE todos SET done = TRUE WHERE id = ?1").bind(id).execute(pool).await?.rows_affected();
    Ok(rows > 0)
}

async fn list_todos(pool: &SqlitePool) -> Result<(), sqlx::Error> {
    let todos: Vec<Todo> =
        sqlx::query_as("SELECT id, description, done FROM todos ORDER BY id").fetch_all(pool).await?;
    for todo in todos {
        println!("- [{}] {}: {}", if todo.done { "x" } else { " " }, todo.id, &todo.description);
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite::memory:".into());
    let pool = SqlitePool::connect(&url).await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS todos (id BLOB PRIMARY KEY, description TEXT NOT NULL, done BOOLEAN NOT NULL DEFAULT FALSE)")
        .execute(&pool)
        .await?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["add", description] => println!("Added new todo with id {}", add_todo(&pool, description).await?),
        ["done", id] => {
            let id = Uuid::parse_str(id)?;
            if complete_todo(&pool, id).await? {
                println!("Todo {id} is marked as done");
            } else {
                println!("Invalid id {id}");
            }
        }
        [] | ["list"] => list_todos(&pool).await?,
        _ => return Err("usage: sqlx_todos [add TEXT | done ID | list]".into()),
    }
    Ok(())
}
