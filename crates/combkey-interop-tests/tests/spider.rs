//! combkey on a sharded MariaDB: a Spider head over three backend servers
//! (`scripts/spider.sh start`, which the README's test command runs), a table sharded by the
//! COMB key with the DDL `combkey sql mysql shards` prints ([`combkey::sql::Sharding`]),
//! written and read through sqlx: `ORDER BY id` across the shards is creation order, each
//! month's rows are on its backend, a time-range query reaches only the backend that holds the
//! range (the backends' own statement counters say so), and a backend stopped mid-write is a
//! clear error with nothing half-written, the batch retried whole once it is back.
//!
//! Every test is `#[ignore]`d with the reason, so a plain `cargo test` lists them as ignored
//! rather than passed; `scripts/test` starts the servers and runs them with `--ignored`, and
//! then a missing Spider is a failure.
#![allow(missing_docs)] // `table!` and the sea-orm derives declare public items without docs.

use std::process::Command;
use std::sync::Arc;

use combkey::sql::{Interval, Sharding};
use combkey::{FixedClock, Timestamp, V7Generator};
use combkey_idempotent::{KeyedRow, insert_or_verify};
use combkey_sqlx::Comb;
use sqlx::{Connection, Executor, MySql, MySqlConnection};

/// One test at a time: they stop and start backends.
static SHARDS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn env(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set (`source scripts/spider.sh start`)"))
}

fn backends() -> Vec<String> {
    let urls: Vec<String> = env("COMBKEY_SPIDER_BACKEND_URLS").split(',').map(str::to_string).collect();
    assert_eq!(urls.len(), 3, "three Spider backends");
    urls
}

async fn connect(url: &str) -> MySqlConnection {
    MySqlConnection::connect(url).await.unwrap_or_else(|e| panic!("{url}: {e}"))
}

fn spider(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/spider.sh");
    let out = Command::new("bash").arg(script).args(args).output().expect("run scripts/spider.sh");
    assert!(
        out.status.success(),
        "spider.sh {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn exec(c: &mut MySqlConnection, sql: &str) {
    c.execute(sqlx::AssertSqlSafe(sql.to_string())).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

async fn scalar(c: &mut MySqlConnection, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string())).fetch_one(c).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The backend's count of SELECT statements run (by anyone: the head's Spider connections).
async fn selects(c: &mut MySqlConnection) -> i64 {
    let (_, v): (String, String) =
        sqlx::query_as("SHOW GLOBAL STATUS LIKE 'Com_select'").fetch_one(c).await.expect("Com_select");
    v.parse().unwrap()
}

const DDL: &str = "(id BINARY(16) NOT NULL PRIMARY KEY, n INT NOT NULL)";

/// The table `t` on every backend with the tables of the partitions it holds, then on the
/// head with the range DDL from January to April 2026 over b1, b2, b3 (January on b1,
/// February on b2, March on b3; older and later ids on b1).
async fn sharded(head: &mut MySqlConnection, t: &str) {
    let servers = env("COMBKEY_SPIDER_SERVERS");
    let servers: Vec<&str> = servers.split(',').collect();
    let sharding = Sharding::new(t, Interval::Month, &servers).unwrap();
    let (from, to) = ("2026-01-01T00:00:00Z".parse().unwrap(), "2026-04-01T00:00:00Z".parse().unwrap());
    for (server, url) in servers.iter().zip(backends()) {
        let mut b = connect(&url).await;
        let mut drops = String::new();
        for table in ["before", "max", "2026_01", "2026_02", "2026_03"] {
            drops.push_str(&format!("DROP TABLE IF EXISTS {t}_{table}; "));
        }
        exec(&mut b, &format!("{drops} DROP TABLE IF EXISTS {t}; CREATE TABLE {t} {DDL}")).await;
        exec(&mut b, &sharding.backend(server, from, to).unwrap()).await;
    }
    exec(head, &format!("DROP TABLE IF EXISTS {t}; CREATE TABLE {t} {DDL}")).await;
    exec(head, &sharding.range(from, to).unwrap()).await;
}

/// Drops `t` on the head, then its tables on every backend.
async fn unshard(head: &mut MySqlConnection, t: &str) {
    exec(head, &format!("DROP TABLE IF EXISTS {t}")).await;
    for url in backends() {
        let mut b = connect(&url).await;
        let mut drops = String::new();
        for table in ["before", "max", "2026_01", "2026_02", "2026_03"] {
            drops.push_str(&format!("DROP TABLE IF EXISTS {t}_{table}; "));
        }
        exec(&mut b, &format!("{drops} DROP TABLE IF EXISTS {t}")).await;
    }
}

/// Rows in the table of partition `part` on backend `i` (0-based).
async fn on_backend(i: usize, t: &str, part: &str) -> i64 {
    scalar(&mut connect(&backends()[i]).await, &format!("SELECT COUNT(*) FROM {t}_{part}")).await
}

/// `n` ids a day apart from `start`, in creation order.
fn ids(start: &str, n: usize) -> Vec<Comb> {
    let clock = Arc::new(FixedClock::new(start.parse().unwrap()));
    let g = V7Generator::with_clock(Arc::clone(&clock));
    (0..n)
        .map(|_| {
            clock.advance(std::time::Duration::from_secs(86_400));
            Comb::from(g.generate())
        })
        .collect()
}

#[tokio::test]
#[ignore = "needs the Spider servers: scripts/test starts them and runs this with --ignored"]
async fn shards_by_time_order_and_pruning() {
    let _one = SHARDS.lock().await;
    let t = "spider_orders";
    let mut head = connect(&env("COMBKEY_SPIDER_URL")).await;
    sharded(&mut head, t).await;
    // Jan 2 .. Mar 31: 89 days, one id each, inserted out of order through the head.
    let made = ids("2026-01-01T00:00:00Z", 89);
    let mut shuffled = made.clone();
    shuffled.reverse();
    shuffled.rotate_left(17);
    for (n, id) in shuffled.iter().enumerate() {
        sqlx::query(sqlx::AssertSqlSafe(format!("INSERT INTO {t} (id, n) VALUES (?, ?)")))
            .bind(id)
            .bind(i32::try_from(n).unwrap())
            .execute(&mut head)
            .await
            .unwrap();
    }
    let back: Vec<Comb> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT id FROM {t} ORDER BY id")))
        .fetch_all(&mut head)
        .await
        .unwrap();
    assert_eq!(back, made, "ORDER BY id across the shards is creation order");

    // Each month on its server: b1 January (30 ids: Jan 2..31), b2 February (28), b3 March (31).
    assert_eq!(
        [on_backend(0, t, "2026_01").await, on_backend(1, t, "2026_02").await, on_backend(2, t, "2026_03").await],
        [30, 28, 31]
    );
    let mut b: Vec<MySqlConnection> = Vec::new();
    for url in backends() {
        b.push(connect(&url).await);
    }
    // A February range reaches b2 only: the backends' own statement counters.
    let from = combkey::Comb::min_for("2026-02-01T00:00:00Z".parse::<Timestamp>().unwrap()).unwrap();
    let to = combkey::Comb::min_for("2026-03-01T00:00:00Z".parse::<Timestamp>().unwrap()).unwrap();
    let mut before = Vec::new();
    for c in &mut b {
        before.push(selects(c).await);
    }
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {t} WHERE id >= ? AND id < ?")))
        .bind(Comb::from(from))
        .bind(Comb::from(to))
        .fetch_one(&mut head)
        .await
        .unwrap();
    assert_eq!(n, 28);
    let mut after = Vec::new();
    for c in &mut b {
        after.push(selects(c).await);
    }
    let touched: Vec<bool> = before.iter().zip(&after).map(|(x, y)| y > x).collect();
    assert_eq!(touched, [false, true, false], "only February's backend was asked: {before:?} -> {after:?}");
    // Lookup by key through the head.
    let found: i32 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT n FROM {t} WHERE id = ?")))
        .bind(shuffled[5])
        .fetch_one(&mut head)
        .await
        .unwrap();
    assert_eq!(found, 5);
    unshard(&mut head, t).await;
}

#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
struct Order {
    id: Comb,
    n: i32,
}

impl KeyedRow<MySql> for Order {
    const TABLE: &'static str = "spider_stop";
    const COLUMNS: &'static [&'static str] = &["id", "n"];

    fn id(&self) -> Comb {
        self.id
    }

    fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, MySql, &'static str>) {
        row.push_bind(self.id);
        row.push_bind(self.n);
    }
}

#[tokio::test]
#[ignore = "needs the Spider servers: scripts/test starts them and runs this with --ignored"]
async fn a_stopped_backend_is_a_clear_error_and_the_batch_is_retried_whole() {
    let _one = SHARDS.lock().await;
    let t = Order::TABLE;
    let mut head = connect(&env("COMBKEY_SPIDER_URL")).await;
    sharded(&mut head, t).await;
    // One batch across January (b1) and February (b2).
    let rows: Vec<Order> = ids("2026-01-20T00:00:00Z", 20)
        .into_iter()
        .enumerate()
        .map(|(n, id)| Order { id, n: i32::try_from(n).unwrap() })
        .collect();
    spider(&["stop-backend", "2"]);
    let err = insert_or_verify::<MySql, Order>(&mut head, &rows).await.expect_err("b2 is stopped");
    // The database's message is the error's source: the chain names the shard.
    let text = combkey_testutil::chain(&err);
    assert!(text.contains("b2"), "the error names the unreachable shard: {text}");
    // The batch is one statement: nothing of it on b1 either.
    assert_eq!(on_backend(0, t, "2026_01").await, 0, "nothing half-written");
    spider(&["start-backend", "2"]);
    // The retry writes the batch whole once the head reaches b2 again (it may take the head a
    // few attempts to reconnect: each failing one writes nothing, as above).
    let mut head = connect(&env("COMBKEY_SPIDER_URL")).await;
    let mut attempts = 0;
    let done = loop {
        attempts += 1;
        match insert_or_verify::<MySql, Order>(&mut head, &rows).await {
            Ok(done) => break done,
            Err(e) if attempts < 200 && combkey_testutil::chain(&e).contains("b2") => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the retry: {}", combkey_testutil::chain(&e)),
        }
    };
    assert_eq!(done.inserted + done.already_present, 20, "{done:?}");
    assert_eq!(scalar(&mut head, &format!("SELECT COUNT(*) FROM {t}")).await, 20);
    assert_eq!(on_backend(0, t, "2026_01").await + on_backend(1, t, "2026_02").await, 20);
    let back: Vec<Order> = sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT id, n FROM {t} ORDER BY id")))
        .fetch_all(&mut head)
        .await
        .unwrap();
    assert_eq!(back, rows, "every row as written, in creation order");
    unshard(&mut head, t).await;
}

diesel::table! {
    spider_orm (id) {
        id -> Binary,
        n -> Integer,
    }
}

#[derive(diesel::Queryable, diesel::Insertable, diesel::Selectable, Debug, PartialEq)]
#[diesel(table_name = spider_orm)]
#[diesel(check_for_backend(diesel::mysql::Mysql))]
struct OrmRow {
    id: combkey_diesel::Comb,
    n: i32,
}

mod orm {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "spider_orm")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: combkey_sea_orm::CombUuid,
        pub n: i32,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// diesel and sea-orm through the head, as their users write: inserts (diesel), reads by key
/// and in key order (both), across the three shards.
#[tokio::test]
#[ignore = "needs the Spider servers: scripts/test starts them and runs this with --ignored"]
async fn diesel_and_sea_orm_through_the_head() {
    use diesel::prelude::*;
    use sea_orm::{ActiveModelTrait, EntityTrait, QueryOrder, Set};
    let _one = SHARDS.lock().await;
    let t = "spider_orm";
    let mut head = connect(&env("COMBKEY_SPIDER_URL")).await;
    sharded(&mut head, t).await;
    let made = ids("2026-01-15T00:00:00Z", 60); // January to mid-March: all three shards
    // diesel writes the first half.
    let url = env("COMBKEY_SPIDER_URL");
    let first: Vec<OrmRow> = made[..30]
        .iter()
        .enumerate()
        .map(|(n, id)| OrmRow { id: (*id).to_comb().into(), n: i32::try_from(n).unwrap() })
        .collect();
    let back: Vec<OrmRow> = tokio::task::spawn_blocking(move || {
        let mut c = diesel::MysqlConnection::establish(&url).expect("diesel connects to the head");
        diesel::insert_into(spider_orm::table).values(&first).execute(&mut c).expect("diesel insert");
        spider_orm::table.order(spider_orm::id).select(OrmRow::as_select()).load(&mut c).expect("diesel load")
    })
    .await
    .unwrap();
    assert_eq!(
        back.iter().map(|r| r.id.to_comb()).collect::<Vec<_>>(),
        made[..30].iter().map(|c| c.to_comb()).collect::<Vec<_>>()
    );
    // sea-orm writes the second half, finds one by key, and reads all in key order.
    let db = sea_orm::Database::connect(env("COMBKEY_SPIDER_URL")).await.expect("sea-orm connects to the head");
    for (n, id) in made[30..].iter().enumerate() {
        orm::ActiveModel { id: Set((*id).to_comb().into()), n: Set(i32::try_from(n + 30).unwrap()) }
            .insert(&db)
            .await
            .unwrap();
    }
    let found = orm::Entity::find_by_id(combkey_sea_orm::CombUuid::from(made[45].to_comb())).one(&db).await.unwrap();
    assert_eq!(found.map(|m| m.n), Some(45));
    let all = orm::Entity::find().order_by_asc(orm::Column::Id).all(&db).await.unwrap();
    assert_eq!(
        all.iter().map(|m| m.id.to_comb()).collect::<Vec<_>>(),
        made.iter().map(|c| c.to_comb()).collect::<Vec<_>>()
    );
    assert_eq!(all.iter().map(|m| m.n).collect::<Vec<_>>(), (0..60).collect::<Vec<_>>());
    unshard(&mut head, t).await;
}
