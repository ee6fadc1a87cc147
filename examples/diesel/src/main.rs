//! combkey with diesel: a model keyed by COMB ids, with a nullable self-reference, inserted
//! out of order and read back in key order.
//!
//! ```sh
//! cargo run -p diesel-example                               # in-memory SQLite, nothing to install
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p diesel-example
//! DATABASE_URL=mysql://root@127.0.0.1:3306/test cargo run -p diesel-example
//! ```
#![allow(missing_docs)] // `table!` declares public items without docs.

use combkey_diesel::Comb;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

/// One model per backend: the `table!` column type differs (`Uuid` on PostgreSQL, `Binary`
/// on MySQL and SQLite), the Rust side does not.
macro_rules! run_with {
    ($module:ident, $conn:ty, $sql_type:ident, $url:expr, $ddl:expr) => {{
        mod $module {
            diesel::table! {
                tasks (id) {
                    id -> $sql_type,
                    parent -> Nullable<$sql_type>,
                    title -> Text,
                }
            }
        }
        use $module::tasks;

        #[derive(Queryable, Selectable, Insertable, Identifiable, Debug)]
        #[diesel(table_name = tasks)]
        struct Task {
            id: Comb,
            parent: Option<Comb>,
            title: String,
        }

        let mut conn = <$conn>::establish($url)?;
        conn.batch_execute($ddl)?;
        let ids: Vec<Comb> = (0..4).map(|_| Comb::new()).collect();
        let tasks_out_of_order = [2, 0, 3, 1].map(|i| Task {
            id: ids[i],
            parent: (i > 0).then(|| ids[0]),
            title: format!("task {}", i + 1),
        });
        diesel::insert_into(tasks::table).values(&tasks_out_of_order).execute(&mut conn)?;
        let rows: Vec<Task> = tasks::table.order(tasks::id.asc()).select(Task::as_select()).load(&mut conn)?;
        for t in &rows {
            let time = t.id.to_comb().timestamp().map(|ts| ts.to_string()).unwrap_or_default();
            let parent = t.parent.map(|p| p.to_string()).unwrap_or_else(|| "-".into());
            println!("  {}  {:<7} created {time}  parent {parent}", t.id, t.title);
        }
        let children: i64 = tasks::table.filter(tasks::parent.eq(ids[0])).count().get_result(&mut conn)?;
        println!("children of {}: {children}", ids[0]);
        rows.iter().map(|t| t.id).eq(ids.iter().copied())
    }};
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Unset or empty (as an `.env` line `DATABASE_URL=` leaves it): in-memory SQLite.
    let url = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| ":memory:".into());
    // No credentials on screen: the host and database after the login, or, where the URL has
    // no `@` (a typo may have put the password elsewhere), only its scheme.
    println!(
        "database: {}",
        url.rsplit_once('@')
            .map_or_else(|| url.split(':').next().filter(|s| !s.is_empty()).unwrap_or(&url), |(_, h)| h)
    );
    let in_order = if url.starts_with("postgres") {
        run_with!(
            pg,
            PgConnection,
            Uuid,
            &url,
            "CREATE TEMPORARY TABLE tasks (id uuid PRIMARY KEY, parent uuid REFERENCES tasks (id), title text NOT NULL)"
        )
    } else if url.starts_with("mysql") {
        run_with!(
            my,
            MysqlConnection,
            Binary,
            &url,
            "CREATE TEMPORARY TABLE tasks (id BINARY(16) NOT NULL PRIMARY KEY, parent BINARY(16) NULL, title TEXT NOT NULL)"
        )
    } else {
        let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
        run_with!(
            lite,
            SqliteConnection,
            Binary,
            path,
            "CREATE TEMPORARY TABLE tasks (id BLOB NOT NULL PRIMARY KEY, parent BLOB REFERENCES tasks (id), title TEXT NOT NULL)"
        )
    };
    println!("ORDER BY id returned creation order: {in_order}");
    if in_order { Ok(()) } else { Err("rows came back out of creation order".into()) }
}
