//! Inserts that are safe to retry, because the client made the ids: insert-or-verify, and
//! failover across servers, for sqlx (the column type is `combkey_sqlx::Comb`).
//!
//! A writer that loses its connection while a `COMMIT` is in flight cannot know whether the
//! rows were written. With client-made ids it does not need to: it sends the same rows (the
//! same ids) again, on the same server or another node of a cluster, and
//! [`insert_or_verify`] either inserts them or finds them already there, reads them back and
//! checks that they hold the same content. A row that is there with other content is a
//! [`IdempotentError::Conflict`], never overwritten. [`Failover`] runs that over several
//! servers (the nodes of a MariaDB Galera cluster, say), moving on when one fails or stalls.
//!
//! A batch is one transaction: all of its rows are written or none. Rows are compared with
//! `PartialEq` after a round trip through the database, so a row type whose values the
//! database rounds (floats, sub-microsecond times) must compare what the database keeps.
//!
//! On Galera, set `wsrep_sync_wait = 1` on the writers' connections (an `after_connect`
//! hook) so that the read-back sees every write the cluster has certified, including a
//! retried batch's first attempt that committed through another node.
//!
//! # Example
//!
//! A writer that makes its rows' ids itself and sends the batch again whenever an attempt's
//! outcome is unknown: the second send finds the rows the first one wrote.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! use combkey_idempotent::{KeyedRow, insert_or_verify};
//! use combkey_sqlx::Comb;
//! use sqlx::{Connection, Sqlite};
//!
//! #[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
//! struct Event {
//!     id: Comb,
//!     kind: String,
//! }
//!
//! impl KeyedRow<Sqlite> for Event {
//!     const TABLE: &'static str = "events";
//!     const COLUMNS: &'static [&'static str] = &["id", "kind"];
//!     fn id(&self) -> Comb {
//!         self.id
//!     }
//!     fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, Sqlite, &'static str>) {
//!         row.push_bind(self.id).push_bind(self.kind.clone());
//!     }
//! }
//!
//! let mut db = sqlx::SqliteConnection::connect("sqlite::memory:").await?;
//! sqlx::query("CREATE TABLE events (id BLOB PRIMARY KEY, kind TEXT NOT NULL)").execute(&mut db).await?;
//! // The ids are made once, before the first attempt, and kept for every retry.
//! let batch = vec![Event { id: Comb::new(), kind: "signup".into() }, Event { id: Comb::new(), kind: "login".into() }];
//! let first = insert_or_verify(&mut db, &batch).await?;
//! // Say the acknowledgement was lost: the same batch again writes nothing twice.
//! let again = insert_or_verify(&mut db, &batch).await?;
//! assert_eq!((first.inserted, again.inserted, again.already_present), (2, 0, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Versions
//!
//! Minimum Rust version: 1.94. Public dependencies (their types are in this crate's API):
//! sqlx 0.9 (its pools, databases and errors are in this crate's API) and `combkey-sqlx` (rows
//! are keyed by its `Comb`). sqlx 0.10 is supported in a new release of this crate that bumps
//! its own version (0.x: the minor).

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use core::future::Future;
use core::pin::pin;
use core::task::Poll;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use sqlx::{Database, Encode, Executor, FromRow, Pool, QueryBuilder, Type};

use combkey_sqlx::Comb;

/// The most bind values one statement may carry on every database sqlx supports
/// (SQLite's default limit is 32,766; PostgreSQL and MySQL take 65,535).
pub const MAX_BINDS: usize = 32_766;

/// A row keyed by a client-made id, for [`insert_or_verify`]: its table, its columns (the
/// key first) and how to bind its values.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use combkey_sqlx::Comb;
/// use combkey_idempotent::KeyedRow;
/// use sqlx::Sqlite;
///
/// #[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
/// struct Order {
///     id: Comb,
///     item: String,
///     quantity: i64,
/// }
///
/// impl KeyedRow<Sqlite> for Order {
///     const TABLE: &'static str = "orders";
///     const COLUMNS: &'static [&'static str] = &["id", "item", "quantity"];
///     fn id(&self) -> Comb {
///         self.id
///     }
///     fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, Sqlite, &'static str>) {
///         row.push_bind(self.id).push_bind(self.item.clone()).push_bind(self.quantity);
///     }
/// }
/// # }
/// ```
pub trait KeyedRow<DB: Database>: for<'r> FromRow<'r, DB::Row> + PartialEq + Send + Sync + Unpin {
    /// The table (written into the SQL as is: a trusted identifier, quoted if it must be).
    const TABLE: &'static str;
    /// The columns written and read back, the key column first.
    const COLUMNS: &'static [&'static str];
    /// The row's key.
    fn id(&self) -> Comb;
    /// Binds the row's values, one `push_bind` per column in [`COLUMNS`](Self::COLUMNS) order.
    fn push_values(&self, row: sqlx::query_builder::Separated<'_, DB, &'static str>);
}

/// What [`insert_or_verify`] did with a batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verified {
    /// Rows this call inserted.
    pub inserted: usize,
    /// Rows that were there already with the same content (an earlier attempt wrote them).
    pub already_present: usize,
}

/// Why a batch was not acknowledged.
#[derive(Debug)]
#[non_exhaustive]
pub enum IdempotentError {
    /// A row with this id is in the table with other content: another writer's row, or an
    /// id used twice. Nothing of the batch was written by this call.
    Conflict {
        /// The id.
        id: Comb,
    },
    /// The batch needs more bind values than one statement may carry ([`MAX_BINDS`]).
    TooLarge {
        /// Rows in the batch.
        rows: usize,
        /// Bind values it needs.
        binds: usize,
    },
    /// The attempt did not finish within [`Failover::attempt_timeout`] (a stalled server):
    /// its outcome is unknown, so it is retried.
    TimedOut {
        /// Which server (index into the pools).
        node: usize,
    },
    /// A row the database reported as a duplicate was not there when read back, more times
    /// than retrying explains.
    Vanished {
        /// The id.
        id: Comb,
    },
    /// The database's error, which is also this error's [`source`](std::error::Error::source)
    /// (its message is not repeated in this one's). [`is_retryable`](IdempotentError::is_retryable)
    /// says whether sending the same batch again (to another node) can succeed.
    Database(sqlx::Error),
}

impl IdempotentError {
    /// Whether sending the same batch again may succeed: lost or refused connections, a
    /// stalled server, a node that is not part of the cluster's primary component (or that
    /// left it as it committed), a deadlock or Galera certification failure, a lock wait
    /// timeout. Conflicts and malformed statements are not.
    ///
    /// ```
    /// use combkey_idempotent::IdempotentError;
    ///
    /// // A stalled server: the outcome is unknown, so the same batch goes again (elsewhere).
    /// assert!(IdempotentError::TimedOut { node: 1 }.is_retryable());
    /// // A lost connection, as the database driver reports it.
    /// let lost = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
    /// assert!(IdempotentError::Database(sqlx::Error::Io(lost)).is_retryable());
    /// // The same id with other content: sending it again cannot help.
    /// assert!(!IdempotentError::Conflict { id: combkey_sqlx::Comb::new() }.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            IdempotentError::TimedOut { .. } | IdempotentError::Vanished { .. } => true,
            IdempotentError::Database(e) => retryable(e),
            _ => false,
        }
    }
}

impl fmt::Display for IdempotentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdempotentError::Conflict { id } => {
                write!(f, "id {id} is already in the table with other content: not overwritten")
            }
            IdempotentError::TooLarge { rows, binds } => write!(
                f,
                "a batch of {rows} rows needs {binds} bind values, more than one statement may carry ({MAX_BINDS}): split it"
            ),
            IdempotentError::TimedOut { node } => write!(f, "server {node} did not answer in time; outcome unknown"),
            IdempotentError::Vanished { id } => {
                write!(f, "id {id} was reported as a duplicate but could not be read back")
            }
            // The database's own message is the source (`source()`), not repeated here: a
            // chain of errors prints it once.
            IdempotentError::Database(_) => f.write_str("the database failed the batch's statement"),
        }
    }
}

impl std::error::Error for IdempotentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IdempotentError::Database(e) => Some(e),
            _ => None,
        }
    }
}

impl From<sqlx::Error> for IdempotentError {
    fn from(e: sqlx::Error) -> Self {
        IdempotentError::Database(e)
    }
}

/// Whether sending the same statements again may get past this database error: the cases
/// of [`IdempotentError::is_retryable`] for an error of your own statements (a create that
/// is not a batch of [`KeyedRow`]s, say). A unique violation is not one of them: that is a
/// row already there, to be read back.
///
/// ```
/// // A pool that is closed cannot get better by itself, but a retry elsewhere can.
/// assert!(combkey_idempotent::is_retryable_error(&sqlx::Error::PoolClosed));
/// assert!(!combkey_idempotent::is_retryable_error(&sqlx::Error::RowNotFound));
/// ```
pub fn is_retryable_error(e: &sqlx::Error) -> bool {
    retryable(e)
}

/// Whether a sqlx error is one that retrying the same batch can get past.
fn retryable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            #[cfg(feature = "mysql")]
            if let Some(my) = db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
                // 1047 WSREP has not yet prepared node for application use (not in the
                // primary component), 1053 shutdown in progress, 1180 "Got error 6 ... during
                // COMMIT" (a Galera node that lost the primary component as it committed; the
                // outcome is the caller's to verify, which the retry does), 1205 lock wait
                // timeout, 1213 deadlock (also Galera's certification failure), 1927
                // connection killed, 2006/2013 server gone / lost during query.
                if matches!(my.number(), 1047 | 1053 | 1180 | 1205 | 1213 | 1927 | 2006 | 2013) {
                    return true;
                }
            }
            // SQLSTATE classes: 08 connection exception, 40001 serialization failure,
            // 40P01 deadlock (PostgreSQL), 57P01-57P03 the server is shutting down or
            // starting, 70100 (MySQL) the query was interrupted.
            db.code().is_some_and(|c| {
                c.starts_with("08") || matches!(&*c, "40001" | "40P01" | "57P01" | "57P02" | "57P03" | "70100")
            })
        }
        _ => false,
    }
}

/// Inserts `rows` in one transaction, or, where some of their ids are in the table
/// already, checks that those rows hold the same content and inserts the rest: safe to call
/// again with the same rows after an error whose outcome is unknown.
///
/// Errors: [`IdempotentError::Conflict`] when an id is there with other content (nothing is
/// written); [`IdempotentError::TooLarge`] past [`MAX_BINDS`]; the database's own error
/// otherwise ([`is_retryable`](IdempotentError::is_retryable) tells whether to send the
/// batch again).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # tokio_test(async {
/// use combkey_sqlx::Comb;
/// use combkey_idempotent::{insert_or_verify, IdempotentError, KeyedRow};
/// use sqlx::{Connection, Sqlite};
///
/// #[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
/// struct Order {
///     id: Comb,
///     item: String,
/// }
///
/// impl KeyedRow<Sqlite> for Order {
///     const TABLE: &'static str = "orders";
///     const COLUMNS: &'static [&'static str] = &["id", "item"];
///     fn id(&self) -> Comb {
///         self.id
///     }
///     fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, Sqlite, &'static str>) {
///         row.push_bind(self.id).push_bind(self.item.clone());
///     }
/// }
///
/// let mut c = sqlx::SqliteConnection::connect("sqlite::memory:").await?;
/// sqlx::query("CREATE TABLE orders (id BLOB PRIMARY KEY, item TEXT NOT NULL)").execute(&mut c).await?;
/// let batch = vec![Order { id: Comb::new(), item: "tea".into() }, Order { id: Comb::new(), item: "milk".into() }];
/// let v = insert_or_verify(&mut c, &batch).await?;
/// assert_eq!((v.inserted, v.already_present), (2, 0));
/// // The same batch again (its acknowledgement was lost): nothing new, no error.
/// let v = insert_or_verify(&mut c, &batch).await?;
/// assert_eq!((v.inserted, v.already_present), (0, 2));
/// // The same id with other content is refused, and nothing is overwritten.
/// let other = vec![Order { id: batch[0].id, item: "coffee".into() }];
/// assert!(matches!(insert_or_verify(&mut c, &other).await, Err(IdempotentError::Conflict { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # });
/// # #[cfg(feature = "sqlite")]
/// # fn tokio_test<F: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>>(f: F) {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f).unwrap()
/// # }
/// ```
pub async fn insert_or_verify<DB, R>(conn: &mut DB::Connection, rows: &[R]) -> Result<Verified, IdempotentError>
where
    DB: Database,
    R: KeyedRow<DB>,
    Comb: for<'q> Encode<'q, DB> + Type<DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
{
    let binds = rows.len().saturating_mul(R::COLUMNS.len());
    if binds > MAX_BINDS {
        return Err(IdempotentError::TooLarge { rows: rows.len(), binds });
    }
    if rows.is_empty() {
        return Ok(Verified::default());
    }
    match insert(conn, rows.iter()).await {
        Ok(()) => return Ok(Verified { inserted: rows.len(), already_present: 0 }),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {}
        Err(e) => return Err(e.into()),
    }
    // Some ids are there: an earlier attempt of this batch, or another writer's rows.
    let mut present: HashMap<Comb, R> = HashMap::with_capacity(rows.len());
    {
        let mut select = QueryBuilder::<DB>::new(format!(
            "SELECT {} FROM {} WHERE {} IN (",
            R::COLUMNS.join(", "),
            R::TABLE,
            R::COLUMNS[0]
        ));
        let mut ids = select.separated(", ");
        for row in rows {
            ids.push_bind(row.id());
        }
        select.push(")");
        for found in select.build_query_as::<R>().fetch_all(&mut *conn).await? {
            present.insert(found.id(), found);
        }
    }
    let mut missing = Vec::new();
    for row in rows {
        match present.get(&row.id()) {
            Some(found) if found == row => {}
            Some(_) => return Err(IdempotentError::Conflict { id: row.id() }),
            None => missing.push(row),
        }
    }
    if !missing.is_empty() {
        match insert(conn, missing.iter().copied()).await {
            Ok(()) => {}
            // Raced by a writer that inserted one of them meanwhile: let the caller retry.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(IdempotentError::Vanished { id: missing[0].id() });
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Verified { inserted: missing.len(), already_present: rows.len() - missing.len() })
}

/// One multi-row `INSERT` of `rows` in its own transaction.
async fn insert<'r, DB, R>(conn: &mut DB::Connection, rows: impl Iterator<Item = &'r R>) -> Result<(), sqlx::Error>
where
    DB: Database,
    R: KeyedRow<DB> + 'r,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
{
    let mut q = QueryBuilder::<DB>::new(format!("INSERT INTO {} ({}) ", R::TABLE, R::COLUMNS.join(", ")));
    q.push_values(rows, |b, row| row.push_values(b));
    let mut tx = <DB::Connection as sqlx::Connection>::begin(conn).await?;
    q.build().execute(&mut *tx).await?;
    tx.commit().await
}

/// Where a batch was acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Acknowledged {
    /// What the acknowledging attempt did.
    pub verified: Verified,
    /// The server (index into the pools) that acknowledged it.
    pub node: usize,
    /// Attempts it took (1 when the first server answered).
    pub attempts: u32,
}

/// [`insert_or_verify`] over several servers (the nodes of a multi-primary cluster, or one
/// server and patience): an attempt that fails with a retryable error or does not finish
/// within `attempt_timeout` is sent again, with the same rows, to the next server, after
/// `backoff`. Runtime-agnostic: it sleeps through the function it is given
/// (`tokio::time::sleep`, say).
///
/// ```no_run
/// # #[cfg(feature = "mysql")]
/// # async fn f(pools: Vec<sqlx::MySqlPool>, batch: Vec<impl combkey_idempotent::KeyedRow<sqlx::MySql>>)
/// #     -> Result<(), combkey_idempotent::IdempotentError> {
/// use combkey_idempotent::Failover;
///
/// // One pool per Galera node; this writer prefers node 0.
/// let failover = Failover::new(tokio::time::sleep);
/// let ack = failover.insert_or_verify(&pools, 0, &batch).await?;
/// println!("acknowledged by node {} after {} attempts", ack.node, ack.attempts);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Failover<S> {
    /// Attempts in all before giving up (default 20).
    pub attempts: u32,
    /// How long one attempt may take before it is abandoned as stalled (default 10 s).
    pub attempt_timeout: Duration,
    /// The pause before the next attempt (default 100 ms, doubling up to 2 s).
    pub backoff: Duration,
    sleep: S,
}

impl<S, F> Failover<S>
where
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    /// With the defaults and the runtime's `sleep`; the public fields change them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use combkey_idempotent::Failover;
    ///
    /// let mut failover = Failover::new(tokio::time::sleep);
    /// assert_eq!((failover.attempts, failover.attempt_timeout), (20, Duration::from_secs(10)));
    /// // A writer that would rather fail fast: three tries, two seconds each.
    /// failover.attempts = 3;
    /// failover.attempt_timeout = Duration::from_secs(2);
    /// ```
    pub fn new(sleep: S) -> Self {
        Failover { attempts: 20, attempt_timeout: Duration::from_secs(10), backoff: Duration::from_millis(100), sleep }
    }

    /// Sends `rows` to `pools[first]`, then to the next pools in turn, until one
    /// acknowledges them (inserted, or verified present) or a non-retryable error (a
    /// conflict) or the last attempt's error ends it.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # tokio_test(async {
    /// use combkey_idempotent::{Failover, KeyedRow};
    /// use combkey_sqlx::Comb;
    /// use sqlx::Sqlite;
    /// use sqlx::sqlite::SqlitePoolOptions;
    ///
    /// #[derive(sqlx::FromRow, Clone, Debug, PartialEq)]
    /// struct Order {
    ///     id: Comb,
    ///     item: String,
    /// }
    ///
    /// impl KeyedRow<Sqlite> for Order {
    ///     const TABLE: &'static str = "orders";
    ///     const COLUMNS: &'static [&'static str] = &["id", "item"];
    ///     fn id(&self) -> Comb {
    ///         self.id
    ///     }
    ///     fn push_values(&self, mut row: sqlx::query_builder::Separated<'_, Sqlite, &'static str>) {
    ///         row.push_bind(self.id).push_bind(self.item.clone());
    ///     }
    /// }
    ///
    /// // Two servers (here two in-memory databases, one connection each).
    /// let mut pools = Vec::new();
    /// for _ in 0..2 {
    ///     let pool = SqlitePoolOptions::new().max_connections(1).connect("sqlite::memory:").await?;
    ///     sqlx::query("CREATE TABLE orders (id BLOB PRIMARY KEY, item TEXT NOT NULL)").execute(&pool).await?;
    ///     pools.push(pool);
    /// }
    /// let batch = vec![Order { id: Comb::new(), item: "tea".into() }];
    /// let failover = Failover::new(tokio::time::sleep);
    /// // This writer prefers server 1; it answers at the first attempt.
    /// let ack = failover.insert_or_verify(&pools, 1, &batch).await?;
    /// assert_eq!((ack.node, ack.attempts, ack.verified.inserted), (1, 1, 1));
    /// // Sent again (the acknowledgement was lost): verified, nothing new.
    /// let ack = failover.insert_or_verify(&pools, 1, &batch).await?;
    /// assert_eq!((ack.verified.inserted, ack.verified.already_present), (0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// # #[cfg(feature = "sqlite")]
    /// # fn tokio_test<F: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>>(f: F) {
    /// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f).unwrap()
    /// # }
    /// ```
    pub async fn insert_or_verify<DB, R>(
        &self,
        pools: &[Pool<DB>],
        first: usize,
        rows: &[R],
    ) -> Result<Acknowledged, IdempotentError>
    where
        DB: Database,
        R: KeyedRow<DB>,
        Comb: for<'q> Encode<'q, DB> + Type<DB>,
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
        DB::Arguments: sqlx::IntoArguments<DB>,
    {
        if pools.is_empty() {
            return Err(IdempotentError::Database(sqlx::Error::Configuration("no servers to write to".into())));
        }
        let mut backoff = self.backoff;
        let mut last = None;
        for attempt in 0..self.attempts.max(1) {
            let node = (first + attempt as usize) % pools.len();
            let pool = &pools[node];
            let work = async {
                let mut conn = pool.acquire().await?;
                insert_or_verify::<DB, R>(&mut conn, rows).await
            };
            let outcome = match race(work, (self.sleep)(self.attempt_timeout)).await {
                Some(outcome) => outcome,
                None => Err(IdempotentError::TimedOut { node }),
            };
            match outcome {
                Ok(verified) => return Ok(Acknowledged { verified, node, attempts: attempt + 1 }),
                Err(e) if e.is_retryable() => {
                    last = Some(e);
                    (self.sleep)(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(IdempotentError::TimedOut { node: first }))
    }
}

/// `Some(work's output)`, or `None` when `timer` finishes first (then `work` is dropped).
async fn race<T>(work: impl Future<Output = T>, timer: impl Future<Output = ()>) -> Option<T> {
    let mut work = pin!(work);
    let mut timer = pin!(timer);
    core::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_errors_are_retryable() {
        let io = sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset"));
        assert!(IdempotentError::Database(io).is_retryable());
        assert!(IdempotentError::Database(sqlx::Error::PoolTimedOut).is_retryable());
        assert!(IdempotentError::TimedOut { node: 1 }.is_retryable());
        assert!(!IdempotentError::Conflict { id: Comb::new() }.is_retryable());
        assert!(!IdempotentError::TooLarge { rows: 1, binds: 1 }.is_retryable());
        assert!(!IdempotentError::Database(sqlx::Error::RowNotFound).is_retryable());
        let e = IdempotentError::TooLarge { rows: 20_000, binds: 40_000 };
        assert!(e.to_string().contains("split it"), "{e}");
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(all(doctest, feature = "postgres"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
