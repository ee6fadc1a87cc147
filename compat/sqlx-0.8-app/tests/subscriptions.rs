//! The app's flow on a database of its own per test, made as zero-to-production's tests make
//! theirs (`configure_database`: a new database, then `sqlx::migrate!`), on the test PostgreSQL
//! (`COMBKEY_PG_URL`).

use combkey_sqlx::Comb as Uuid;
use compat_sqlx_0_8_app::*;
use sqlx::{Connection, Executor, PgConnection, PgPool};

async fn configure_database() -> PgPool {
    let url = combkey_testutil::pg_url();
    let (server, _) = url.rsplit_once('/').expect("a database URL ends with /database");
    let name = format!("compat_sqlx08_{}", uuid::Uuid::new_v4().simple());
    let mut c = PgConnection::connect(&url).await.expect("PostgreSQL at COMBKEY_PG_URL");
    c.execute(format!(r#"CREATE DATABASE "{name}""#).as_str()).await.unwrap();
    let pool = PgPool::connect(&format!("{server}/{name}")).await.unwrap();
    sqlx::migrate!("./migrations").run(&pool).await.unwrap();
    pool
}

async fn subscribe(pool: &PgPool, n: usize) -> (Uuid, String) {
    let mut tx = pool.begin().await.unwrap();
    let new = NewSubscriber { email: format!("user{n}@example.com"), name: format!("user {n}") };
    let id = insert_subscriber(&mut tx, &new).await.unwrap();
    let token = format!("token{n}");
    store_token(&mut tx, id, &token).await.unwrap();
    tx.commit().await.unwrap();
    (id, token)
}

#[tokio::test]
async fn subscribe_confirm_and_read_back_in_creation_order() {
    let pool = configure_database().await;
    let mut made = Vec::new();
    for n in 0..200 {
        made.push(subscribe(&pool, n).await);
    }
    // Confirmed in another order: the newsletter's `ORDER BY id` still gives the order they came.
    for (id, token) in made.iter().rev() {
        let found = get_subscriber_id_from_token(&pool, token).await.unwrap();
        assert_eq!(found, Some(*id));
        confirm_subscriber(&pool, *id).await.unwrap();
    }
    let confirmed = confirmed_subscribers(&pool).await.unwrap();
    let ids: Vec<Uuid> = confirmed.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, made.iter().map(|(id, _)| *id).collect::<Vec<_>>());
    assert_eq!(confirmed[0].1, "user0@example.com");
    // The stored value is the public id: PostgreSQL prints the same text.
    for (id, _) in made.iter().take(5) {
        let text: String = sqlx::query_scalar("SELECT id::text FROM subscriptions WHERE id = $1")
            .bind(*id)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(text, id.to_string());
    }
    assert!(get_subscriber_id_from_token(&pool, "no such token").await.unwrap().is_none());
}

#[tokio::test]
async fn rows_written_before_the_swap_read_and_confirm() {
    let pool = configure_database().await;
    // The app before the swap: `uuid::Uuid::new_v4()` through its own `query!`.
    let old = uuid::Uuid::new_v4();
    sqlx::query!(
        r#"INSERT INTO subscriptions (id, email, name, subscribed_at, status) VALUES ($1, 'old@example.com', 'old', now(), 'pending_confirmation')"#,
        old
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query!(
        r#"INSERT INTO subscription_tokens (subscription_token, subscriber_id) VALUES ('old-token', $1)"#,
        old
    )
    .execute(&pool)
    .await
    .unwrap();
    let found = get_subscriber_id_from_token(&pool, "old-token").await.unwrap().expect("the old row");
    assert_eq!(found, Uuid::from(old));
    confirm_subscriber(&pool, found).await.unwrap();
    let (new, _) = subscribe(&pool, 1).await;
    confirm_subscriber(&pool, new).await.unwrap();
    let confirmed = confirmed_subscribers(&pool).await.unwrap();
    assert_eq!(confirmed.len(), 2);
    assert!(confirmed.iter().any(|(id, email)| *id == Uuid::from(old) && email == "old@example.com"));
}
