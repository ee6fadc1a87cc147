//! `combkey_idempotent` on one PostgreSQL and one MariaDB server: a batch sent twice is
//! verified, not duplicated; a changed row is a conflict and nothing of its batch is written;
//! an oversized batch is refused before it reaches the server; `Failover` moves past a server
//! that refuses connections. (The cluster, with nodes killed and stalled, is in
//! `crates/combkey-interop-tests/tests/galera.rs`.)

use std::time::Duration;

use combkey_idempotent::{Failover, IdempotentError, KeyedRow, MAX_BINDS, insert_or_verify};
use combkey_sqlx::Comb;
use sqlx::pool::PoolOptions;
use sqlx::{Database, MySql, Postgres};

#[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
struct Order {
    id: Comb,
    item: String,
    quantity: i32,
}

/// The same columns in the table of `failover_retries_a_failed_commit_on_mariadb`.
#[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
struct Retried {
    id: Comb,
    item: String,
    quantity: i32,
}

macro_rules! keyed_row {
    ($row:ty, $db:ty, $table:literal) => {
        impl KeyedRow<$db> for $row {
            const TABLE: &'static str = $table;
            const COLUMNS: &'static [&'static str] = &["id", "item", "quantity"];
            fn id(&self) -> Comb {
                self.id
            }
            fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, $db, &'static str>) {
                row.push_bind(self.id).push_bind(self.item.clone()).push_bind(self.quantity);
            }
        }
    };
}
keyed_row!(Order, Postgres, "combkey_idem_orders");
keyed_row!(Order, MySql, "combkey_idem_orders");
keyed_row!(Retried, MySql, "combkey_idem_commit");

fn orders(n: i32) -> Vec<Order> {
    (0..n).map(|i| Order { id: Comb::new(), item: format!("item {i}"), quantity: i + 1 }).collect()
}

/// The same checks on either database; `count` counts the table's rows.
async fn exercise<DB>(pool: sqlx::Pool<DB>, dead_url: &str)
where
    DB: Database,
    Order: KeyedRow<DB>,
    Comb: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    i64: for<'r> sqlx::Decode<'r, DB> + sqlx::Type<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let count = async |pool: &sqlx::Pool<DB>| -> i64 {
        sqlx::query_scalar::<DB, i64>("SELECT COUNT(*) FROM combkey_idem_orders").fetch_one(pool).await.unwrap()
    };
    let batch = orders(20);
    let mut c = pool.acquire().await.unwrap();
    let first = insert_or_verify::<DB, Order>(&mut c, &batch).await.unwrap();
    assert_eq!((first.inserted, first.already_present), (20, 0));
    let again = insert_or_verify::<DB, Order>(&mut c, &batch).await.unwrap();
    assert_eq!((again.inserted, again.already_present), (0, 20));
    assert_eq!(count(&pool).await, 20);

    // Ten old rows and five new: the new ones are written, the old verified.
    let mut mixed = batch[10..].to_vec();
    mixed.extend(orders(5));
    let done = insert_or_verify::<DB, Order>(&mut c, &mixed).await.unwrap();
    assert_eq!((done.inserted, done.already_present), (5, 10));
    assert_eq!(count(&pool).await, 25);

    // A batch with one changed row: a conflict naming it, and its new rows are not written.
    let mut changed = orders(3);
    let mut old = batch[0].clone();
    old.quantity += 100;
    changed.push(old.clone());
    let err = insert_or_verify::<DB, Order>(&mut c, &changed).await.unwrap_err();
    assert!(matches!(err, IdempotentError::Conflict { id } if id == old.id), "{err}");
    assert!(err.to_string().contains("other content"), "{err}");
    assert!(!err.is_retryable());
    assert_eq!(count(&pool).await, 25, "nothing of the conflicting batch was written");

    // Too many binds for one statement: refused before the server sees it.
    let big = vec![batch[0].clone(); MAX_BINDS / 3 + 1];
    let err = insert_or_verify::<DB, Order>(&mut c, &big).await.unwrap_err();
    assert!(matches!(err, IdempotentError::TooLarge { .. }), "{err}");
    drop(c);

    // A server that refuses connections first: the batch goes to the next one.
    let dead = PoolOptions::<DB>::new().acquire_timeout(Duration::from_secs(2)).connect_lazy(dead_url).unwrap();
    let mut failover = Failover::new(tokio::time::sleep);
    failover.backoff = Duration::from_millis(10);
    let more = orders(4);
    let ack = failover.insert_or_verify(&[dead.clone(), pool.clone()], 0, &more).await.unwrap();
    assert_eq!((ack.node, ack.attempts, ack.verified.inserted), (1, 2, 4));
    // Only dead servers: the last retryable error, after every attempt.
    failover.attempts = 3;
    let err = failover.insert_or_verify(&[dead], 0, &more).await.unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert_eq!(count(&pool).await, 29);
}

#[tokio::test]
async fn on_postgres() {
    let pool = sqlx::PgPool::connect(&combkey_testutil::pg_url()).await.unwrap();
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS combkey_idem_orders;
         CREATE TABLE combkey_idem_orders (id uuid PRIMARY KEY, item text NOT NULL, quantity int NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();
    exercise(pool.clone(), "postgres://postgres@127.0.0.1:1/test").await;
    sqlx::raw_sql("DROP TABLE combkey_idem_orders").execute(&pool).await.unwrap();
}

#[tokio::test]
async fn on_mariadb() {
    let pool = sqlx::MySqlPool::connect(&combkey_testutil::mysql_url()).await.unwrap();
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS combkey_idem_orders;
         CREATE TABLE combkey_idem_orders (id BINARY(16) PRIMARY KEY, item TEXT NOT NULL, quantity INT NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();
    exercise(pool.clone(), "mysql://root@127.0.0.1:1/test").await;
    sqlx::raw_sql("DROP TABLE combkey_idem_orders").execute(&pool).await.unwrap();
}

/// The errors a MariaDB Galera node answers with while the cluster changes under a writer,
/// raised with their real numbers and SQLSTATEs (`SIGNAL`): retryable, and a constraint or
/// schema error is not. 1180 is what a node that leaves the primary component at COMMIT
/// returns ("Got error 6 \"No such device or address\" during COMMIT"): once taken for final,
/// it ended a writer whose node had just been killed.
#[tokio::test]
async fn a_clusters_transient_errors_are_retryable_on_mariadb() {
    let pool = sqlx::MySqlPool::connect(&combkey_testutil::mysql_url()).await.unwrap();
    let signal = async |code: u16, state: &str| -> sqlx::Error {
        let sql = format!("SIGNAL SQLSTATE '{state}' SET MYSQL_ERRNO = {code}, MESSAGE_TEXT = 'raised by the test'");
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap_err()
    };
    for (code, state) in
        [(1047, "08S01"), (1053, "08S01"), (1180, "HY000"), (1205, "HY000"), (1213, "40001"), (1927, "70100")]
    {
        let e = signal(code, state).await;
        assert!(e.to_string().contains(&code.to_string()), "{e}");
        assert!(combkey_idempotent::is_retryable_error(&e), "{code} ({state}) is retryable: {e}");
        assert!(IdempotentError::from(e).is_retryable());
    }
    for (code, state) in [(1062, "23000"), (1146, "42S02"), (1406, "22001"), (1452, "23000")] {
        let e = signal(code, state).await;
        assert!(!combkey_idempotent::is_retryable_error(&e), "{code} ({state}) is final: {e}");
    }
}

/// `Failover` sends a batch whose COMMIT failed with Galera's 1180 again, and it lands once:
/// a trigger fails the first attempt (a flag in a non-transactional Aria table, which the
/// failed statement does not roll back) and lets the second through.
#[tokio::test]
async fn failover_retries_a_failed_commit_on_mariadb() {
    let pool = sqlx::MySqlPool::connect(&combkey_testutil::mysql_url()).await.unwrap();
    for sql in [
        "DROP TABLE IF EXISTS combkey_idem_commit, combkey_idem_commit_fail",
        "CREATE TABLE combkey_idem_commit (id BINARY(16) PRIMARY KEY, item TEXT NOT NULL, quantity INT NOT NULL)",
        "CREATE TABLE combkey_idem_commit_fail (n INT) ENGINE=Aria",
        "INSERT INTO combkey_idem_commit_fail VALUES (1)",
        "CREATE TRIGGER combkey_idem_commit_once BEFORE INSERT ON combkey_idem_commit FOR EACH ROW BEGIN
           IF (SELECT COUNT(*) FROM combkey_idem_commit_fail) > 0 THEN
             DELETE FROM combkey_idem_commit_fail;
             SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1180,
               MESSAGE_TEXT = 'Got error 6 \"No such device or address\" during COMMIT';
           END IF;
         END",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap();
    }
    let rows: Vec<Retried> =
        orders(5).into_iter().map(|o| Retried { id: o.id, item: o.item, quantity: o.quantity }).collect();
    let mut failover = Failover::new(tokio::time::sleep);
    failover.backoff = Duration::from_millis(10);
    let ack = failover.insert_or_verify(std::slice::from_ref(&pool), 0, &rows).await.unwrap();
    assert_eq!((ack.attempts, ack.verified.inserted), (2, 5), "the second attempt inserted the batch");
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM combkey_idem_commit").fetch_one(&pool).await.unwrap();
    assert_eq!(n, 5);
    sqlx::raw_sql("DROP TABLE combkey_idem_commit, combkey_idem_commit_fail").execute(&pool).await.unwrap();
}
