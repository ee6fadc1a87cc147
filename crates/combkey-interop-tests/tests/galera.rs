//! combkey on a three-node MariaDB Galera cluster (`scripts/galera.sh start`, which the
//! README's test command runs): writers on every node with client-made ids, and the faults a
//! cluster lives with (a node killed mid-batch, a node stalled), survived through
//! `combkey_idempotent` without a lost or duplicated row.
//!
//! Every test is `#[ignore]`d with the reason, so a plain `cargo test` lists them as ignored
//! rather than passed; `scripts/test` starts the cluster and runs them with `--ignored`, and
//! then a missing cluster is a failure.
#![allow(missing_docs)] // `table!` declares public items without docs.

use std::collections::BTreeSet;
use std::future::Future;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use combkey_idempotent::{Failover, IdempotentError, KeyedRow, insert_or_verify};
use combkey_sqlx::Comb;
use sqlx::mysql::{MySqlPool, MySqlPoolOptions};
use sqlx::{Executor, MySql, Row};

/// One test at a time: they kill and stall the cluster's nodes.
static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn urls() -> Vec<String> {
    let urls = std::env::var("COMBKEY_GALERA_URLS").unwrap_or_default();
    let urls: Vec<String> = urls.split(',').filter(|u| !u.is_empty()).map(str::to_string).collect();
    assert_eq!(urls.len(), 3, "COMBKEY_GALERA_URLS must name the cluster's 3 nodes (`source scripts/galera.sh start`)");
    urls
}

/// Pools, one per node, whose sessions read causally (`wsrep_sync_wait = 1`: a read waits
/// until the node has applied every write the cluster certified before it).
async fn pools() -> Vec<MySqlPool> {
    let mut pools = Vec::new();
    for url in urls() {
        let pool = MySqlPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(5))
            .after_connect(|c, _| {
                Box::pin(async move {
                    c.execute("SET SESSION wsrep_sync_wait = 1").await?;
                    Ok(())
                })
            })
            .connect_lazy(&url)
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        pools.push(pool);
    }
    pools
}

fn galera(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/galera.sh");
    let out = Command::new("bash").arg(script).args(args).output().expect("run scripts/galera.sh");
    assert!(
        out.status.success(),
        "galera.sh {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn status(pool: &MySqlPool, name: &str) -> String {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("SHOW GLOBAL STATUS LIKE '{name}'")))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    row.get::<String, _>(1)
}

async fn cert_failures(pools: &[MySqlPool]) -> u64 {
    let mut sum = 0;
    for p in pools {
        sum += status(p, "wsrep_local_cert_failures").await.parse::<u64>().unwrap();
    }
    sum
}

/// Every node is back in a 3-node primary component and synced (up to 90 s of wall-clock
/// time, however long each query to a dead node takes to fail).
async fn wait_synced(pools: &[MySqlPool]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while std::time::Instant::now() < deadline {
        let mut ok = true;
        for p in pools {
            let size = sqlx::query("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").fetch_one(p).await;
            let state = sqlx::query("SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'").fetch_one(p).await;
            ok &= matches!((size, state), (Ok(s), Ok(t)) if s.get::<String, _>(1) == "3" && t.get::<String, _>(1) == "Synced");
        }
        if ok {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the cluster did not return to 3 synced nodes");
}

/// The cluster to this test alone, whole again (a test that failed mid-fault may have left a
/// node stopped or dead: `galera.sh heal` continues or restarts it), with a fresh table.
async fn cluster() -> (tokio::sync::MutexGuard<'static, ()>, Vec<MySqlPool>) {
    let one = CLUSTER.lock().await;
    tokio::task::spawn_blocking(|| galera(&["heal"])).await.unwrap();
    let pools = pools().await;
    wait_synced(&pools).await;
    fresh_table(&pools).await;
    (one, pools)
}

/// Each node's ids in `ORDER BY id` and its `CHECKSUM TABLE`: the same on every node.
async fn same_everywhere(pools: &[MySqlPool], table: &str) -> Vec<Comb> {
    let mut first: Option<(Vec<Comb>, i64)> = None;
    for (n, p) in pools.iter().enumerate() {
        let ids: Vec<Comb> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT id FROM {table} ORDER BY id")))
            .fetch_all(p)
            .await
            .unwrap();
        let checksum: i64 = sqlx::query(sqlx::AssertSqlSafe(format!("CHECKSUM TABLE {table}")))
            .fetch_one(p)
            .await
            .unwrap()
            .get::<i64, _>(1);
        match &first {
            None => first = Some((ids, checksum)),
            Some((ids0, sum0)) => {
                assert_eq!(&ids, ids0, "node {n} holds other rows or another order than node 0");
                assert_eq!(checksum, *sum0, "node {n}'s CHECKSUM TABLE differs from node 0's");
            }
        }
    }
    first.map(|(ids, _)| ids).unwrap_or_default()
}

#[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
struct Order {
    id: Comb,
    writer: i32,
    seq: i32,
    made_at: i64,
}

impl KeyedRow<MySql> for Order {
    const TABLE: &'static str = "combkey_galera_orders";
    const COLUMNS: &'static [&'static str] = &["id", "writer", "seq", "made_at"];
    fn id(&self) -> Comb {
        self.id
    }
    fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, MySql, &'static str>) {
        row.push_bind(self.id).push_bind(self.writer).push_bind(self.seq).push_bind(self.made_at);
    }
}

fn now_ms() -> i64 {
    i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

fn batch(writer: i32, first_seq: i32, n: i32) -> Vec<Order> {
    (first_seq..first_seq + n).map(|seq| Order { id: Comb::new(), writer, seq, made_at: now_ms() }).collect()
}

async fn fresh_table(pools: &[MySqlPool]) {
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS combkey_galera_orders;
         CREATE TABLE combkey_galera_orders (id BINARY(16) NOT NULL PRIMARY KEY, writer INT NOT NULL,
           seq INT NOT NULL, made_at BIGINT NOT NULL)",
    )
    .execute(&pools[0])
    .await
    .unwrap();
    applied_everywhere(pools).await;
}

/// Waits until every node has applied every write set node 0 had committed (the DDL just run
/// there): Galera applies DDL on the other nodes asynchronously, and a write through a node
/// that has not applied it yet fails with "table doesn't exist". Up to 120 s, then a failure
/// that says which node lags.
async fn applied_everywhere(pools: &[MySqlPool]) {
    let target: i64 = status(&pools[0], "wsrep_last_committed").await.parse().unwrap();
    for (n, p) in pools.iter().enumerate() {
        let mut seen = -1;
        for _ in 0..1200 {
            seen = status(p, "wsrep_last_committed").await.parse().unwrap();
            if seen >= target {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(seen >= target, "node {n} applied up to {seen} of {target} after 120 s");
    }
}

diesel::table! {
    combkey_galera_orders (id) {
        id -> Binary,
        writer -> Integer,
        seq -> Integer,
        made_at -> BigInt,
    }
}

mod entity {
    use combkey_sea_orm::CombUuid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "combkey_galera_orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: CombUuid,
        pub writer: i32,
        pub seq: i32,
        pub made_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

const BATCHES: i32 = 20;
const PER_BATCH: i32 = 100;

/// Three writers at once, one per node: sqlx on node 1, diesel on node 2, sea-orm on node 3,
/// each inserting its own client-made ids. No key is allocated by anyone, so no write set
/// conflicts with another: no certification failure, and every node ends with the same rows
/// in the same key order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Galera cluster: `source scripts/servers.sh galera`, then --ignored (scripts/test does both)"]
async fn three_writers_one_per_node() {
    let (_one, pools) = cluster().await;
    let failures_before = cert_failures(&pools).await;

    let sqlx_writer = {
        let pool = pools[0].clone();
        tokio::spawn(async move {
            for b in 0..BATCHES {
                let rows = batch(0, b * PER_BATCH, PER_BATCH);
                let mut c = pool.acquire().await.unwrap();
                let done = insert_or_verify(&mut *c, &rows).await.unwrap();
                assert_eq!(done.inserted, rows.len());
            }
        })
    };
    let diesel_writer = {
        let url = urls()[1].clone();
        tokio::task::spawn_blocking(move || {
            use diesel::prelude::*;
            let mut c = diesel::MysqlConnection::establish(&url).unwrap();
            for b in 0..BATCHES {
                let rows: Vec<_> = (b * PER_BATCH..(b + 1) * PER_BATCH)
                    .map(|seq| {
                        (
                            combkey_galera_orders::id.eq(combkey_diesel::Comb::new()),
                            combkey_galera_orders::writer.eq(1),
                            combkey_galera_orders::seq.eq(seq),
                            combkey_galera_orders::made_at.eq(now_ms()),
                        )
                    })
                    .collect();
                diesel::insert_into(combkey_galera_orders::table).values(&rows).execute(&mut c).unwrap();
            }
        })
    };
    let sea_orm_writer = {
        let url = urls()[2].clone();
        tokio::spawn(async move {
            use sea_orm::{EntityTrait, Set};
            let db = sea_orm::Database::connect(&url).await.unwrap();
            for b in 0..BATCHES {
                let rows = (b * PER_BATCH..(b + 1) * PER_BATCH).map(|seq| entity::ActiveModel {
                    id: Set(combkey_sea_orm::CombUuid::new()),
                    writer: Set(2),
                    seq: Set(seq),
                    made_at: Set(now_ms()),
                });
                entity::Entity::insert_many(rows).exec(&db).await.unwrap();
            }
        })
    };
    sqlx_writer.await.unwrap();
    diesel_writer.await.unwrap();
    sea_orm_writer.await.unwrap();

    let ids = same_everywhere(&pools, "combkey_galera_orders").await;
    let total = usize::try_from(3 * BATCHES * PER_BATCH).unwrap();
    assert_eq!(ids.len(), total);
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), total, "no duplicate");
    assert_eq!(cert_failures(&pools).await, failures_before, "client-made keys caused no certification failure");
    // Every writer's rows, in key order, are in its own creation order.
    for writer in 0..3 {
        let seqs: Vec<i32> = sqlx::query_scalar("SELECT seq FROM combkey_galera_orders WHERE writer = ? ORDER BY id")
            .bind(writer)
            .fetch_all(&pools[0])
            .await
            .unwrap();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "writer {writer}'s rows sort in its creation order");
    }
}

/// A batch acknowledged on one node and sent again to another (the writer never saw the
/// acknowledgement) is verified, not duplicated; the same id with other content is a
/// conflict on every node.
#[tokio::test]
#[ignore = "needs a Galera cluster: `source scripts/servers.sh galera`, then --ignored (scripts/test does both)"]
async fn a_retry_on_another_node_is_verified_not_duplicated() {
    let (_one, pools) = cluster().await;
    let rows = batch(0, 0, 50);
    let mut c0 = pools[0].acquire().await.unwrap();
    assert_eq!(insert_or_verify(&mut *c0, &rows).await.unwrap().inserted, 50);
    let mut c1 = pools[1].acquire().await.unwrap();
    let again = insert_or_verify(&mut *c1, &rows).await.unwrap();
    assert_eq!((again.inserted, again.already_present), (0, 50));
    // Half old, half new: the new half is inserted, the old half verified.
    let mut mixed = rows[25..].to_vec();
    mixed.extend(batch(0, 50, 25));
    let mut c2 = pools[2].acquire().await.unwrap();
    let done = insert_or_verify(&mut *c2, &mixed).await.unwrap();
    assert_eq!((done.inserted, done.already_present), (25, 25));
    let mut changed = rows[..1].to_vec();
    changed[0].seq = 999;
    let err = insert_or_verify(&mut *c1, &changed).await.unwrap_err();
    assert!(matches!(err, IdempotentError::Conflict { id } if id == rows[0].id), "{err}");
    assert!(!err.is_retryable());
    assert_eq!(same_everywhere(&pools, "combkey_galera_orders").await.len(), 75);
}

/// What a writer acknowledged, and how many of its batches needed more than one attempt or
/// were acknowledged by another node than its own.
struct Written {
    acked: Vec<Order>,
    retried: usize,
    moved: usize,
}

/// A writer that prefers node `home` and writes batches through `Failover` until `stop` is
/// set (and at least `min_batches`).
fn writer(
    pools: Vec<MySqlPool>,
    home: usize,
    stop: Arc<AtomicBool>,
    min_batches: i32,
) -> tokio::task::JoinHandle<Written> {
    tokio::spawn(async move {
        let mut failover = Failover::new(tokio::time::sleep);
        failover.attempt_timeout = Duration::from_secs(3);
        failover.backoff = Duration::from_millis(50);
        let mut w = Written { acked: Vec::new(), retried: 0, moved: 0 };
        let mut b = 0;
        while b < min_batches || !stop.load(Ordering::SeqCst) {
            let rows = batch(i32::try_from(home).unwrap(), b * PER_BATCH, PER_BATCH);
            let ack = failover
                .insert_or_verify(&pools, home, &rows)
                .await
                .unwrap_or_else(|e| panic!("writer {home}, batch {b}: {}", combkey_testutil::chain(&e)));
            assert_eq!(ack.verified.inserted + ack.verified.already_present, rows.len());
            w.retried += usize::from(ack.attempts > 1);
            w.moved += usize::from(ack.node != home);
            w.acked.extend(rows);
            b += 1;
        }
        w
    })
}

/// Runs three writers, one per node, and `fault` while they write; stops them 3 s after it.
async fn write_through<F: Future<Output = ()>>(pools: &[MySqlPool], fault: F) -> Vec<Written> {
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..3).map(|home| writer(pools.to_vec(), home, stop.clone(), 10)).collect();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    fault.await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, Ordering::SeqCst);
    let mut written = Vec::new();
    for w in writers {
        written.push(w.await.unwrap());
    }
    for (home, w) in written.iter().enumerate() {
        eprintln!(
            "writer {home}: {} rows acknowledged, {} batches retried, {} acknowledged by another node",
            w.acked.len(),
            w.retried,
            w.moved
        );
    }
    written
}

/// Every acknowledged row is on every node exactly once, and nothing else is.
async fn exactly_the_acknowledged(pools: &[MySqlPool], written: &[Written]) {
    let acked: BTreeSet<Comb> = written.iter().flat_map(|w| w.acked.iter().map(|o| o.id)).collect();
    let total: usize = written.iter().map(|w| w.acked.len()).sum();
    assert_eq!(acked.len(), total, "the writers made distinct ids");
    let ids = same_everywhere(pools, "combkey_galera_orders").await;
    assert_eq!(ids.len(), total, "no row lost, none duplicated");
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), acked);
}

/// SIGKILL node 3 while its writer is mid-batch: the writer sends the unacknowledged batch
/// again, with the same ids, to another node. The node restarts, recovers its position and
/// rejoins by incremental state transfer. No acknowledged row is lost or duplicated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Galera cluster: `source scripts/servers.sh galera`, then --ignored (scripts/test does both)"]
async fn a_node_killed_mid_batch_loses_and_duplicates_nothing() {
    let (_one, pools) = cluster().await;
    // The writers get going, then node 3 dies under its writer.
    let written = write_through(&pools, async {
        tokio::task::spawn_blocking(|| galera(&["kill-node", "3", "KILL"])).await.unwrap();
    })
    .await;
    assert!(written[2].moved > 0, "node 3's writer moved to another node after the kill");
    tokio::task::spawn_blocking(|| galera(&["start-node", "3"])).await.unwrap();
    let fresh = self::pools().await;
    wait_synced(&fresh).await;
    exactly_the_acknowledged(&fresh, &written).await;
    if std::env::var("COMBKEY_GALERA_DOCKER").as_deref() == Ok("1") {
        return; // the node's log is in its container
    }
    let log = std::fs::read_to_string(
        std::path::Path::new(&std::env::var("COMBKEY_GALERA_DIR").unwrap_or_else(|_| "/tmp/combkey-galera".into()))
            .join("node3/error.log"),
    )
    .unwrap_or_default();
    assert!(log.contains("IST received"), "node 3 rejoined by incremental state transfer");
}

/// SIGSTOP node 2 during the writes (a stalled peer: the cluster waits, then evicts it) and
/// SIGCONT it seconds later: writers on the stalled node time out and move; the node rejoins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Galera cluster: `source scripts/servers.sh galera`, then --ignored (scripts/test does both)"]
async fn a_stalled_node_loses_and_duplicates_nothing() {
    let (_one, pools) = cluster().await;
    let written = write_through(&pools, async {
        tokio::task::spawn_blocking(|| galera(&["kill-node", "2", "STOP"])).await.unwrap();
        tokio::time::sleep(Duration::from_secs(8)).await;
        tokio::task::spawn_blocking(|| galera(&["kill-node", "2", "CONT"])).await.unwrap();
    })
    .await;
    assert!(written[1].retried > 0, "node 2's writer retried while its node was stalled");
    let fresh = self::pools().await;
    wait_synced(&fresh).await;
    exactly_the_acknowledged(&fresh, &written).await;
}
