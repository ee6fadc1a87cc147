//! The three tables (orders, the command ids that made them, notes on orders), on any of the
//! three sqlx backends.

use combkey::Comb;
use combkey_sqlx::Comb as Col;
use sqlx::{AssertSqlSafe, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};

use crate::{Note, Order};

/// What a create did.
pub enum Created {
    /// A new row.
    New(Order),
    /// A row with that id (or command id) existed already: this one.
    Existing(Order),
}

/// SQL texts for one backend and table prefix.
pub struct Sql {
    create_orders: String,
    create_commands: String,
    get: String,
    insert: String,
    lookup_command: String,
    insert_command: String,
    create_notes: String,
    insert_note: String,
    /// The key map's lookup of an old id's new key, with a key map.
    resolve: Option<String>,
}

impl Sql {
    /// `p(n)` writes the n-th placeholder.
    pub fn new(prefix: &str, column: &str, text: &str, p: impl Fn(usize) -> String) -> Self {
        let (o, c, n) = (format!("{prefix}orders"), format!("{prefix}creation_identifiers"), format!("{prefix}notes"));
        Sql {
            create_orders: format!(
                "CREATE TABLE IF NOT EXISTS {o} (id {column} NOT NULL PRIMARY KEY, item {text} NOT NULL, quantity BIGINT NOT NULL)"
            ),
            create_commands: format!(
                "CREATE TABLE IF NOT EXISTS {c} (command_id {column} NOT NULL PRIMARY KEY, entity_id {column} NOT NULL)"
            ),
            get: format!("SELECT id, item, quantity FROM {o} WHERE id = {}", p(1)),
            insert: format!("INSERT INTO {o} (id, item, quantity) VALUES ({}, {}, {})", p(1), p(2), p(3)),
            lookup_command: format!("SELECT entity_id FROM {c} WHERE command_id = {}", p(1)),
            insert_command: format!("INSERT INTO {c} (command_id, entity_id) VALUES ({}, {})", p(1), p(2)),
            // A note references its order by key: what an order's key change (`combkey doctor
            // --apply --online`) reaches.
            create_notes: format!(
                "CREATE TABLE IF NOT EXISTS {n} (id {column} NOT NULL PRIMARY KEY, order_id {column} NOT NULL, \
                 body {text} NOT NULL, FOREIGN KEY (order_id) REFERENCES {o} (id))"
            ),
            insert_note: format!("INSERT INTO {n} (id, order_id, body) VALUES ({}, {}, {})", p(1), p(2), p(3)),
            resolve: None,
        }
    }

    /// With the key map `combkey doctor` kept (`combkey_keymap_orders`, or the name it was
    /// given): an old id resolves through it.
    pub fn with_key_map(mut self, map: Option<&str>, p: impl Fn(usize) -> String) -> Self {
        self.resolve = map.map(|m| format!("SELECT new_key FROM {m} WHERE old_key = {}", p(1)));
        self
    }
}

fn unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// A foreign key violation: PostgreSQL 23503, MySQL/MariaDB 1452, SQLite's constraint error.
pub(crate) fn foreign_key_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_foreign_key_violation())
}

/// Attempts at one create before a retryable error reaches the client.
const ATTEMPTS: u32 = 8;

/// Runs `attempt` again while it fails with an error that a retry can overcome, as
/// `combkey-idempotent` classifies them: on a multi-primary cluster (Galera) identical
/// requests racing over several nodes meet as a certification conflict (a deadlock error) on
/// all but one; tried again, they find the winner's row and answer with it.
async fn retrying<T, F, Fut>(mut attempt: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    let mut n = 0;
    loop {
        match attempt().await {
            Err(e) if n + 1 < ATTEMPTS && combkey_idempotent::is_retryable_error(&e) => {
                n += 1;
                tokio::time::sleep(std::time::Duration::from_millis(5 << n)).await;
            }
            Err(e) => return Err(e),
            Ok(v) => return Ok(v),
        }
    }
}

/// The store on one backend.
pub struct Store<DB: Database> {
    pool: Pool<DB>,
    sql: Sql,
}

impl<DB> Store<DB>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> DB::Arguments: IntoArguments<DB>,
    for<'r> Col: Type<DB> + Encode<'r, DB> + Decode<'r, DB>,
    for<'r> String: Type<DB> + Encode<'r, DB> + Decode<'r, DB>,
    for<'r> i64: Type<DB> + Encode<'r, DB> + Decode<'r, DB>,
    for<'r> (Col, String, i64): sqlx::FromRow<'r, DB::Row>,
    for<'r> (Col,): sqlx::FromRow<'r, DB::Row>,
{
    /// Creates the tables if missing.
    pub async fn new(pool: Pool<DB>, sql: Sql) -> Result<Self, sqlx::Error> {
        let mut c = pool.acquire().await?;
        sqlx::query(AssertSqlSafe(sql.create_orders.clone())).execute(&mut *c).await?;
        sqlx::query(AssertSqlSafe(sql.create_commands.clone())).execute(&mut *c).await?;
        sqlx::query(AssertSqlSafe(sql.create_notes.clone())).execute(&mut *c).await?;
        drop(c);
        Ok(Store { pool, sql })
    }

    async fn get_on(&self, c: &mut DB::Connection, id: Comb) -> Result<Option<Order>, sqlx::Error> {
        let row: Option<(Col, String, i64)> =
            sqlx::query_as(AssertSqlSafe(self.sql.get.clone())).bind(Col::from(id)).fetch_optional(&mut *c).await?;
        Ok(row.map(|(id, item, quantity)| Order { id: id.to_comb(), item, quantity }))
    }

    /// The new key of an old id, from the key map (none without one).
    pub async fn resolve(&self, old: Comb) -> Result<Option<Comb>, sqlx::Error> {
        let Some(sql) = &self.sql.resolve else { return Ok(None) };
        let row: Option<(Col,)> =
            sqlx::query_as(AssertSqlSafe(sql.clone())).bind(Col::from(old)).fetch_optional(&self.pool).await?;
        Ok(row.map(|(k,)| k.to_comb()))
    }

    /// The order with this id.
    pub async fn get(&self, id: Comb) -> Result<Option<Order>, sqlx::Error> {
        let mut c = self.pool.acquire().await?;
        self.get_on(&mut c, id).await
    }

    /// Inserts `order` under its client-made id; the primary key decides a race (retried
    /// where the race ended in a conflict a retry overcomes).
    pub async fn create_with_id(&self, order: Order) -> Result<Created, sqlx::Error> {
        retrying(|| self.create_with_id_once(order.clone())).await
    }

    async fn create_with_id_once(&self, order: Order) -> Result<Created, sqlx::Error> {
        let mut c = self.pool.acquire().await?;
        let inserted = sqlx::query(AssertSqlSafe(self.sql.insert.clone()))
            .bind(Col::from(order.id))
            .bind(order.item.clone())
            .bind(order.quantity)
            .execute(&mut *c)
            .await;
        match inserted {
            Ok(_) => Ok(Created::New(order)),
            Err(e) if unique_violation(&e) => {
                let existing = self.get_on(&mut c, order.id).await?;
                existing.map(Created::Existing).ok_or(e)
            }
            Err(e) => Err(e),
        }
    }

    /// Creates `order` (its id made by the server) for `command_id` in one transaction with
    /// the `(command_id, entity_id)` row, or returns the order an earlier try made.
    pub async fn create_with_command(&self, command_id: Comb, order: Order) -> Result<Created, sqlx::Error> {
        retrying(|| self.create_with_command_once(command_id, order.clone())).await
    }

    async fn create_with_command_once(&self, command_id: Comb, order: Order) -> Result<Created, sqlx::Error> {
        if let Some(existing) = self.by_command(command_id).await? {
            return Ok(Created::Existing(existing));
        }
        let mut tx = self.pool.begin().await?;
        let result: Result<(), sqlx::Error> = async {
            sqlx::query(AssertSqlSafe(self.sql.insert.clone()))
                .bind(Col::from(order.id))
                .bind(order.item.clone())
                .bind(order.quantity)
                .execute(&mut *tx)
                .await?;
            sqlx::query(AssertSqlSafe(self.sql.insert_command.clone()))
                .bind(Col::from(command_id))
                .bind(Col::from(order.id))
                .execute(&mut *tx)
                .await?;
            Ok(())
        }
        .await;
        match result {
            Ok(()) => {
                tx.commit().await?;
                Ok(Created::New(order))
            }
            Err(e) if unique_violation(&e) => {
                // Another try of the same command won: nothing of ours is kept.
                tx.rollback().await?;
                self.by_command(command_id).await?.map(Created::Existing).ok_or(e)
            }
            Err(e) => Err(e),
        }
    }

    /// Adds `note` to its order (the key in `note.order_id`): a foreign key violation when no
    /// order has that key.
    pub async fn add_note(&self, note: &Note) -> Result<(), sqlx::Error> {
        retrying(|| async {
            let mut c = self.pool.acquire().await?;
            sqlx::query(AssertSqlSafe(self.sql.insert_note.clone()))
                .bind(Col::from(note.id))
                .bind(Col::from(note.order_id))
                .bind(note.body.clone())
                .execute(&mut *c)
                .await
                .map(drop)
        })
        .await
    }

    async fn by_command(&self, command_id: Comb) -> Result<Option<Order>, sqlx::Error> {
        let mut c = self.pool.acquire().await?;
        let entity: Option<(Col,)> = sqlx::query_as(AssertSqlSafe(self.sql.lookup_command.clone()))
            .bind(Col::from(command_id))
            .fetch_optional(&mut *c)
            .await?;
        match entity {
            Some((id,)) => self.get_on(&mut c, id.to_comb()).await,
            None => Ok(None),
        }
    }
}
