//! diesel's getting-started `posts` on PostgreSQL, keyed by UUIDs: `add TITLE`, `publish ID`,
//! `list`. Written for `uuid::Uuid` (`--features before`); the combkey version differs in
//! the one `use` line below (docs/migrating.md). The `table!` schema does not change.
//!
//! ```sh
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p migrating --bin diesel_posts -- add "hello"
//! ```
#![allow(missing_docs)] // `table!` declares public items without docs.

#[cfg(not(feature = "before"))]
use combkey_diesel::Comb as Uuid;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
#[cfg(feature = "before")]
use uuid::Uuid;

diesel::table! {
    migrating_posts (id) {
        id -> diesel::sql_types::Uuid,
        title -> Text,
        published -> Bool,
    }
}

#[derive(Queryable, Selectable, Insertable, Debug)]
#[diesel(table_name = migrating_posts)]
struct Post {
    id: Uuid,
    title: String,
    published: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL").map_err(|_| "set DATABASE_URL to a PostgreSQL database")?;
    let mut conn = PgConnection::establish(&url)?;
    conn.batch_execute(
        "CREATE TABLE IF NOT EXISTS migrating_posts (id uuid PRIMARY KEY, title text NOT NULL, published boolean NOT NULL)",
    )?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["add", title] => {
            let post = Post { id: Uuid::now_v7(), title: (*title).into(), published: false };
            let post: Post = diesel::insert_into(migrating_posts::table)
                .values(&post)
                .returning(Post::as_returning())
                .get_result(&mut conn)?;
            println!("Added post {}", post.id);
        }
        ["publish", id] => {
            let id = Uuid::parse_str(id)?;
            let n = diesel::update(migrating_posts::table.find(id))
                .set(migrating_posts::published.eq(true))
                .execute(&mut conn)?;
            println!("Published {n} post {id}");
        }
        [] | ["list"] => {
            let posts = migrating_posts::table.order(migrating_posts::id).select(Post::as_select()).load(&mut conn)?;
            for post in posts {
                println!("- [{}] {}: {}", if post.published { "x" } else { " " }, post.id, post.title);
            }
        }
        ["drop"] => conn.batch_execute("DROP TABLE IF EXISTS migrating_posts")?,
        _ => return Err("usage: diesel_posts [add TITLE | publish ID | list | drop]".into()),
    }
    Ok(())
}
