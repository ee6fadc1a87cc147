//! For the methods' unit tests: a SQLite file (embedded, real) whose `orders` holds RT.Comb
//! keys made for SQL Server, one a minute, and whose `order_lines` references them; and what
//! RT.Comb's keys become by combkey's own conversion (`KeyMigration`), the expected values.

use std::path::PathBuf;

use combkey::Comb;
use combkey::layouts::{KeyMigration, Layout, RtCombLayout};
use sqlx::Connection as _;

use crate::{Doctor, Options, Plan};

/// The tables, with the keys they were made with.
pub(crate) struct Orders {
    path: PathBuf,
    pub(crate) url: String,
    /// The parents' keys as made.
    pub(crate) made: Vec<Comb>,
}

impl Orders {
    /// `n` parents, each with one child, in a file of its own (`name`).
    pub(crate) async fn new(name: &str, n: i64) -> Orders {
        let path = std::env::temp_dir().join(format!("combkey-doctor-{name}-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let url = format!("sqlite://{}?mode=rwc", path.display());
        let mut db = sqlx::SqliteConnection::connect(&url).await.expect("a SQLite file");
        sqlx::raw_sql(
            "CREATE TABLE orders (id BLOB PRIMARY KEY, note TEXT); \
             CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))",
        )
        .execute(&mut db)
        .await
        .expect("the tables");
        let now = combkey::Timestamp::now();
        let mut made = Vec::new();
        for minute in 0..n {
            let key = RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), Comb::new_v4()).expect("a key");
            sqlx::query(
                "INSERT INTO orders VALUES (?1, 'order ' || ?2); INSERT INTO order_lines (order_id) VALUES (?1)",
            )
            .bind(key.as_bytes().to_vec())
            .bind(minute)
            .execute(&mut db)
            .await
            .expect("a row");
            made.push(key);
        }
        Orders { path, url, made }
    }

    /// A doctor on the file and its plan for `orders.id`.
    pub(crate) async fn plan(&self) -> (Doctor, Plan) {
        let mut doctor = Doctor::connect(&self.url).await.expect("doctor connects");
        let plan = doctor.plan("orders", "id", Options::default()).await.expect("a plan");
        assert!(!plan.is_empty(), "RT.Comb keys have something to convert");
        (doctor, plan)
    }

    /// What each made key becomes, by combkey's conversion from RT.Comb's SQL Server layout.
    pub(crate) fn expected(&self) -> Vec<(Comb, Comb)> {
        let m = KeyMigration::new(Layout::RtCombSql, Layout::V7).expect("a migration");
        self.made.iter().map(|k| (*k, m.convert(k).expect("a converted key"))).collect()
    }

    /// The database at `url`'s rows: each order's note with its key, and each line's key.
    pub(crate) async fn rows(url: &str) -> (Vec<(String, Comb)>, Vec<Comb>) {
        let mut db = sqlx::SqliteConnection::connect(url).await.expect("the file");
        let comb = |b: Vec<u8>| Comb::from_slice(&b).expect("16 bytes");
        let orders: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT note, id FROM orders ORDER BY note").fetch_all(&mut db).await.expect("orders");
        let lines: Vec<Vec<u8>> =
            sqlx::query_scalar("SELECT order_id FROM order_lines ORDER BY n").fetch_all(&mut db).await.expect("lines");
        (orders.into_iter().map(|(n, k)| (n, comb(k))).collect(), lines.into_iter().map(comb).collect())
    }

    /// Whether the rows at `url` hold exactly the converted keys: each order its own key's
    /// conversion, each line its order's.
    pub(crate) async fn converted(&self, url: &str) -> bool {
        let (orders, lines) = Orders::rows(url).await;
        let expected = self.expected();
        orders.len() == self.made.len()
            && orders.iter().all(|(note, key)| {
                let i: usize = note.trim_start_matches("order ").parse().expect("a note");
                *key == expected[i].1
            })
            && lines.iter().zip(&expected).all(|(line, (_, new))| line == new)
            && lines.len() == expected.len()
    }

    /// Whether the rows at `url` hold the keys as made.
    pub(crate) async fn unchanged(&self, url: &str) -> bool {
        let (orders, lines) = Orders::rows(url).await;
        orders.len() == self.made.len()
            && orders.iter().all(|(note, key)| {
                let i: usize = note.trim_start_matches("order ").parse().expect("a note");
                *key == self.made[i]
            })
            && lines == self.made
    }

    /// A copy of the file, as it is now (for a script to run on).
    pub(crate) fn copy(&self, name: &str) -> String {
        let to = self.path.with_extension(format!("{name}.db"));
        std::fs::copy(&self.path, &to).expect("a copy");
        format!("sqlite://{}", to.display())
    }
}

impl Drop for Orders {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        if let Some(dir) = self.path.parent()
            && let Some(stem) = self.path.file_stem().and_then(|s| s.to_str())
            && let Ok(entries) = std::fs::read_dir(dir)
        {
            for e in entries.flatten() {
                if e.file_name().to_str().is_some_and(|n| n.starts_with(stem)) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}
