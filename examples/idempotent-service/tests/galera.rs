//! The service, one instance per node of a three-node MariaDB Galera cluster
//! (`COMBKEY_GALERA_URLS`; scripts/test starts the cluster and runs this): identical requests
//! racing over all three nodes get 201 once and 200 otherwise, never 500 (Galera's
//! certification conflict is retried), a different body for the same id gets 409 everywhere,
//! and every node holds exactly one row per id.

mod common;

use combkey::Comb;
use common::{post, prefix, start};
use serde_json::json;
use sqlx::{AssertSqlSafe, Executor};

fn galera_urls() -> Vec<String> {
    let urls = std::env::var("COMBKEY_GALERA_URLS").unwrap_or_default();
    let urls: Vec<String> = urls.split(',').filter(|u| !u.is_empty()).map(str::to_string).collect();
    assert_eq!(
        urls.len(),
        3,
        "COMBKEY_GALERA_URLS must name the cluster's 3 nodes (`source scripts/servers.sh galera`)"
    );
    urls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs the Galera cluster (COMBKEY_GALERA_URLS); scripts/test runs it"]
async fn identical_requests_racing_over_three_nodes() {
    let urls = galera_urls();
    let p = prefix();
    // One after the other: each instance creates the tables if missing, and Galera orders
    // those statements the same on every node, so the later ones find the tables there.
    let mut nodes = Vec::new();
    for url in &urls {
        nodes.push(start(url, &p).await);
    }
    const ROUNDS: i64 = 40;
    let mut ids = Vec::new();
    for round in 0..ROUNDS {
        let id = Comb::new();
        ids.push(id);
        let body = json!({ "id": id.to_string(), "item": format!("race {round}"), "quantity": 1 });
        let answers = futures_join(nodes.iter().map(|&addr| {
            let body = body.clone();
            async move { post(addr, &body).await }
        }))
        .await;
        let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
        assert!(statuses.iter().all(|s| *s == 201 || *s == 200), "round {round}: {answers:?}");
        assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "round {round}: one creates, {statuses:?}");
        assert!(answers.iter().all(|(_, b)| b["id"] == id.to_string() && b["item"] == body["item"]), "{answers:?}");
        // The same id with another body: a conflict on every node.
        let other = json!({ "id": id.to_string(), "item": "something else", "quantity": 9 });
        for &addr in &nodes {
            let (s, b) = post(addr, &other).await;
            assert_eq!(s, 409, "round {round}: {b}");
        }
    }
    // Every node: exactly one row per id (reads wait until the node applied the cluster's
    // writes: wsrep_sync_wait).
    for url in &urls {
        let pool = sqlx::mysql::MySqlPoolOptions::new()
            .max_connections(1)
            .after_connect(|c, _| {
                Box::pin(async move { c.execute("SET SESSION wsrep_sync_wait = 1").await.map(|_| ()) })
            })
            .connect(url)
            .await
            .expect("a node");
        let n: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {p}orders")))
            .fetch_one(&pool)
            .await
            .expect("count");
        assert_eq!(n, ROUNDS, "{url}");
        let distinct: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(DISTINCT id) FROM {p}orders")))
            .fetch_one(&pool)
            .await
            .expect("count");
        assert_eq!(distinct, ROUNDS, "{url}");
        let others: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {p}orders WHERE item = 'something else'")))
                .fetch_one(&pool)
                .await
                .expect("count");
        assert_eq!(others, 0, "{url}");
    }
    let pool = sqlx::MySqlPool::connect(&urls[0]).await.expect("node 1");
    for t in ["notes", "orders", "creation_identifiers"] {
        sqlx::query(AssertSqlSafe(format!("DROP TABLE {p}{t}"))).execute(&pool).await.expect("drop");
    }
}

/// Runs the futures at once on the runtime's threads and returns their outputs in order.
async fn futures_join<F, T>(futures: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("a request task"));
    }
    out
}
