//! zero-to-production's subscription routes' database code (`routes/subscriptions.rs`,
//! `routes/subscriptions_confirm.rs`), on sqlx 0.8, after the swap to combkey. The changes
//! from the `uuid::Uuid` version are marked `// was:`; sqlx 0.8 has no `sqlx.toml`, so each
//! `query!` names the key's type where it binds or reads one.

use chrono::Utc;
use combkey_sqlx::Comb as Uuid; // was: use uuid::Uuid;
use sqlx::{Executor, PgPool, Postgres, Transaction};

/// A subscriber as the form gives it.
pub struct NewSubscriber {
    /// The address.
    pub email: String,
    /// The name.
    pub name: String,
}

/// `insert_subscriber`: a new row, pending confirmation; its id.
pub async fn insert_subscriber(
    transaction: &mut Transaction<'_, Postgres>,
    new_subscriber: &NewSubscriber,
) -> Result<Uuid, sqlx::Error> {
    let subscriber_id = Uuid::new(); // was: Uuid::new_v4()
    let query = sqlx::query!(
        r#"INSERT INTO subscriptions (id, email, name, subscribed_at, status)
        VALUES ($1, $2, $3, $4, 'pending_confirmation')"#,
        subscriber_id as Uuid, // was: subscriber_id,
        new_subscriber.email,
        new_subscriber.name,
        Utc::now()
    );
    transaction.execute(query).await?;
    Ok(subscriber_id)
}

/// `store_token`: the confirmation token of a subscriber.
pub async fn store_token(
    transaction: &mut Transaction<'_, Postgres>,
    subscriber_id: Uuid,
    subscription_token: &str,
) -> Result<(), sqlx::Error> {
    let query = sqlx::query!(
        r#"INSERT INTO subscription_tokens (subscription_token, subscriber_id) VALUES ($1, $2)"#,
        subscription_token,
        subscriber_id as Uuid // was: subscriber_id
    );
    transaction.execute(query).await?;
    Ok(())
}

/// `get_subscriber_id_from_token`.
pub async fn get_subscriber_id_from_token(
    pool: &PgPool,
    subscription_token: &str,
) -> Result<Option<Uuid>, sqlx::Error> {
    let result = sqlx::query!(
        // was: "SELECT subscriber_id FROM subscription_tokens WHERE subscription_token = $1"
        r#"SELECT subscriber_id AS "subscriber_id: Uuid" FROM subscription_tokens WHERE subscription_token = $1"#,
        subscription_token,
    )
    .fetch_optional(pool)
    .await?;
    Ok(result.map(|r| r.subscriber_id))
}

/// `confirm_subscriber`.
pub async fn confirm_subscriber(pool: &PgPool, subscriber_id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE subscriptions SET status = 'confirmed' WHERE id = $1"#,
        subscriber_id as Uuid // was: subscriber_id
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The confirmed subscribers, as the newsletter route reads them, in the order they came.
pub async fn confirmed_subscribers(pool: &PgPool) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        // was: "SELECT id, email FROM subscriptions WHERE status = 'confirmed' ORDER BY id"
        r#"SELECT id AS "id: Uuid", email FROM subscriptions WHERE status = 'confirmed' ORDER BY id"#,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.email)).collect())
}
