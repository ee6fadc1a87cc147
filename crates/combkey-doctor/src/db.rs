//! One connection to the database, through sqlx's `Any` driver: statements and catalog queries
//! as text, every value read back as text. What to send comes from combkey's per-backend
//! modules ([`crate::catalog`]); nothing here depends on which database it is.

use crate::catalog::{Catalog, Query};
use combkey::Backend;
use sqlx::AnyConnection;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Connection, Row};

use crate::error::{Error, ErrorKind};

/// The connection, its backend and its URL without the password.
pub(crate) struct Db {
    conn: AnyConnection,
    backend: Backend,
    /// The URL connected to, for a second session ([`Db::another`]); shown only redacted,
    /// its password stripped from every message.
    url: DatabaseUrl,
    /// The server process of this session (PostgreSQL, once [`Db::pooler_check`] found the
    /// session is the server's own), checked again by [`Db::same_session`].
    session_pid: Option<i32>,
}

mod url;

pub use url::DatabaseUrl;
pub(crate) use url::redact;

/// The backend a URL names, the URL read strictly ([`DatabaseUrl::parse`]).
pub(crate) fn backend_of(url: &DatabaseUrl) -> Result<Backend, Error> {
    match url.backend() {
        Backend::Postgres => built(Backend::Postgres, cfg!(feature = "postgres"), "postgres"),
        Backend::MySql => built(Backend::MySql, cfg!(feature = "mysql"), "mysql"),
        _ => built(Backend::Sqlite, cfg!(feature = "sqlite"), "sqlite"),
    }
}

/// `backend`, where this build has its driver (`feature` on); otherwise why not, naming the
/// feature to build with.
fn built(backend: Backend, on: bool, feature: &str) -> Result<Backend, Error> {
    if on {
        return Ok(backend);
    }
    Err(Error::usage(format!(
        "this build has no {backend} driver: combkey-doctor was built without its `{feature}` feature \
         (the command: cargo install combkey-cli --features {feature})"
    )))
}

/// The statements every session of the tool starts with, each with whether a server may lack
/// the setting.
fn own_session(backend: Backend) -> &'static [(&'static str, bool)] {
    match backend {
        Backend::Postgres => &[
            ("SET statement_timeout = 0", false),
            ("SET idle_in_transaction_session_timeout = 0", false),
            // PostgreSQL 14 and later.
            ("SET idle_session_timeout = 0", true),
        ],
        Backend::MySql => &[
            ("SET SESSION autocommit = 1", false),
            // A day: the longest a session of the tool waits idle (a lag wait, --sleep).
            ("SET SESSION wait_timeout = 86400", false),
            // MariaDB's statement limit, and MySQL's (SELECTs only).
            ("SET SESSION max_statement_time = 0", true),
            ("SET SESSION max_execution_time = 0", true),
        ],
        _ => &[],
    }
}

impl Db {
    /// Connects. The URL's password never appears in an error. A PostgreSQL URL that reaches
    /// the server through a pooler that does not keep a session (PgBouncer in transaction or
    /// statement mode) is refused before anything is set or read ([`Db::pooler_check`]).
    pub(crate) async fn connect(url: &str) -> Result<Db, Error> {
        Db::open(DatabaseUrl::parse(url)?, true).await
    }

    /// Connects to a URL read already (its connect timeout, its password given apart).
    pub(crate) async fn connect_url(url: &DatabaseUrl) -> Result<Db, Error> {
        Db::open(url.clone(), true).await
    }

    async fn open(url: DatabaseUrl, check_pooler: bool) -> Result<Db, Error> {
        sqlx::any::install_default_drivers();
        let backend = backend_of(&url)?;
        let shown = url.shown().to_string();
        let mut target = url.text().to_string();
        if let Some(rest) = target.strip_prefix("mariadb://") {
            target = format!("mysql://{rest}");
        }
        // Named in pg_stat_activity, unless the URL names it (`?application_name=...`).
        if backend == Backend::Postgres && !target.contains("application_name=") {
            target.push(if target.contains('?') { '&' } else { '?' });
            target.push_str("application_name=combkey%20doctor");
        }
        let connect_error = |e: sqlx::Error| {
            Error::new(ErrorKind::Connection, format!("connecting to {shown}: {}", url.scrub(&server_message(&e))))
        };
        let pooler = check_pooler && backend == Backend::Postgres;
        // The pooler check's second session is opened together with this one, so neither
        // waits idle for the other's connection (a role's `idle_session_timeout` counts from
        // the end of the handshake, before the tool can set it back).
        // Bounded: a server that takes the connection and never answers (or a firewall that
        // drops the packets) would hang the run for ever.
        let within = url.connect_timeout();
        let timed_out = || {
            Error::new(
                ErrorKind::Connection,
                format!(
                    "connecting to {shown}: no answer within {:.1} s (the connect timeout: --connect-timeout); nothing \
                     was read or changed",
                    within.as_secs_f64()
                ),
            )
        };
        let connect =
            |target: String| async move { tokio::time::timeout(within, AnyConnection::connect(&target)).await };
        let (conn, other) = tokio::join!(connect(target.clone()), async {
            if pooler { Some(connect(target.clone()).await) } else { None }
        });
        let conn = conn.map_err(|_| timed_out())?.map_err(connect_error)?;
        let other = match other {
            Some(Err(_)) => return Err(timed_out()),
            Some(Ok(o)) => Some(o),
            None => None,
        };
        let mut db = Db { conn, backend, url: url.clone(), session_pid: None };
        if let Some(other) = other {
            let other = match other {
                Ok(other) => other,
                Err(e) => {
                    let mut err = db.error("checking for a connection pooler", &e);
                    err = err.with_hint(POOLER_SECOND_SESSION);
                    return Err(err);
                }
            };
            db.pooler_check(other, &shown).await?;
        }
        // The session is the tool's own: what the server's or the role's defaults would impose
        // on it is set back (a statement timeout would kill a long rewrite or the audit after
        // a finished conversion; an idle timeout a session that waits through --sleep or a
        // replica's lag; MariaDB's autocommit=0 default would freeze the online scanner in one
        // snapshot). Settings a server does not have (PostgreSQL before 14, MySQL's names on
        // MariaDB and the other way) are skipped.
        for &(sql, optional) in own_session(backend) {
            let mut tries = 0;
            let done = loop {
                match db.exec(sql).await {
                    // Cancelled by the very statement timeout this sets back (a role's
                    // `statement_timeout = '1ms'` can cancel a SET on a loaded server): again.
                    Err(e) if e.code() == Some(QUERY_CANCELED) && tries < CANCELED_RETRIES => tries += 1,
                    done => break done,
                }
            };
            match done {
                Ok(_) => {}
                Err(e)
                    if optional && (e.code() == Some("42704") || e.to_string().contains("Unknown system variable")) => {
                }
                Err(e) => return Err(e),
            }
        }
        db.same_session().await?;
        if backend == Backend::Sqlite {
            // The mapping table and the sorts of a big table's `GROUP BY` in temporary files
            // (in `SQLITE_TMPDIR` or `TMPDIR`), not in memory, whatever default the SQLite
            // linked was built with (`SQLITE_TEMP_STORE=2` keeps them in memory; sqlx's bundled
            // build uses the files default): this connection's setting only.
            db.exec("PRAGMA temp_store = FILE").await?;
        }
        Ok(db)
    }

    /// A second session to the same database (whose URL [`Db::connect`] checked).
    pub(crate) async fn another(&self) -> Result<Db, Error> {
        Db::open(self.url.clone(), false).await
    }

    /// This session's server process, by a plain (unprepared) statement: a pooler in
    /// transaction mode does not carry a prepared statement from one server session to the next.
    /// [`Db::backend_pid`] of a session whose settings are still the role's (before the
    /// pooler check ends): read in a transaction that first lifts the statement timeout, and
    /// read again if that timeout cancelled it first. Nothing stays set after it.
    async fn check_pid(conn: &mut AnyConnection) -> Result<i32, sqlx::Error> {
        let mut tries = 0;
        loop {
            let read = async {
                sqlx::raw_sql("BEGIN; SET LOCAL statement_timeout = 0").execute(&mut *conn).await?;
                let pid = Db::backend_pid(&mut *conn).await?;
                sqlx::raw_sql("COMMIT").execute(&mut *conn).await?;
                Ok(pid)
            }
            .await;
            match read {
                Err(e) if canceled(&e) && tries < CANCELED_RETRIES => {
                    tries += 1;
                    let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await;
                }
                read => return read,
            }
        }
    }

    async fn backend_pid(conn: &mut AnyConnection) -> Result<i32, sqlx::Error> {
        sqlx::raw_sql("SELECT pg_backend_pid()").fetch_one(conn).await?.try_get::<i32, _>(0)
    }

    /// Refuses a PostgreSQL URL whose sessions are not the server's: a pooler (PgBouncer's
    /// `pool_mode = transaction` or `statement`, pgcat, Supavisor in transaction mode) gives
    /// each transaction or statement of a client whichever server session is free, so the
    /// tool's session settings (`lock_timeout`) would be left to application transactions,
    /// its session lock would be held by someone else's session, and its prepared statements
    /// would be missing (`prepared statement "sqlx_s_1" does not exist`).
    ///
    /// Told from the outside, with nothing set and nothing prepared, in rounds: a second
    /// client opens a transaction and reads its server process (a pooler hands it a free
    /// server session: the one this connection just gave back, by PgBouncer's default LIFO
    /// reuse, or the next in turn with `server_round_robin`), then this connection reads its
    /// own while the second holds its transaction, and the second commits. A direct
    /// connection, or a pooler in session mode, answers the same process for this connection
    /// every time and never gives it to the second client. PgBouncer in statement mode refuses
    /// the transaction itself. The process is kept: [`Db::same_session`] checks it again
    /// after the session's settings and its lock.
    async fn pooler_check(&mut self, mut other: AnyConnection, shown: &str) -> Result<(), Error> {
        let fail =
            |db: &Db, e: sqlx::Error| db.error("checking for a connection pooler", &e).with_hint(POOLER_SECOND_SESSION);
        let first = match Db::check_pid(&mut self.conn).await {
            Ok(first) => first,
            Err(e) if statement_pooling(&e) => {
                return Err(pooler(shown, "a transaction was refused: PgBouncer's pool_mode = statement"));
            }
            Err(e) => return Err(fail(self, e)),
        };
        let mut result = Ok(());
        let mut replayed = 0;
        let mut round = 0;
        while round < POOLER_ROUNDS {
            let played = async {
                // Each read in a transaction of its own whose first act is to lift a role's
                // statement timeout, which nothing has set back yet (the session's own
                // settings come after this check): a SET outside a transaction would be left
                // to whichever client a pooler gives this server session next.
                sqlx::raw_sql("BEGIN; SET LOCAL statement_timeout = 0").execute(&mut other).await?;
                let second = Db::backend_pid(&mut other).await?;
                let again = Db::check_pid(&mut self.conn).await?;
                sqlx::raw_sql("COMMIT").execute(&mut other).await?;
                Ok::<_, sqlx::Error>((second, again))
            }
            .await;
            result = match played {
                Err(e) if statement_pooling(&e) => {
                    Err(pooler(shown, "a transaction of two statements was refused: PgBouncer's pool_mode = statement"))
                }
                // Cancelled by the role's statement timeout before it was lifted (a BEGIN or
                // a SET can outlast `statement_timeout = '1ms'` on a loaded server): the round
                // is played again, a few times.
                Err(e) if canceled(&e) && replayed < CANCELED_RETRIES => {
                    replayed += 1;
                    let _ = sqlx::raw_sql("ROLLBACK").execute(&mut other).await;
                    continue;
                }
                Err(e) => Err(fail(self, e)),
                Ok((second, _)) if second == first => Err(pooler(
                    shown,
                    &format!(
                        "a second connection was given this connection's server session, process {first}: \
                         PgBouncer's pool_mode = transaction, or another pooler's transaction mode"
                    ),
                )),
                Ok((_, again)) if again != first => Err(pooler(
                    shown,
                    &format!(
                        "this connection's statements ran in server process {first}, then {again}: PgBouncer's \
                         pool_mode = transaction, or another pooler's transaction mode"
                    ),
                )),
                Ok(_) => Ok(()),
            };
            if result.is_err() {
                break;
            }
            round += 1;
        }
        // Given back with nothing left in it: a transaction still open ends with the connection.
        let _ = sqlx::raw_sql("ROLLBACK").execute(&mut other).await;
        let _ = other.close().await;
        result?;
        self.session_pid = Some(first);
        Ok(())
    }

    /// Whether this connection still runs in the server process [`Db::pooler_check`] found
    /// (PostgreSQL; elsewhere, and for a second session, nothing to check): a pooler that
    /// slipped past the check (another client took the server session in between) is caught
    /// here, after the session's settings and after its lock, before any change.
    pub(crate) async fn same_session(&mut self) -> Result<(), Error> {
        let Some(first) = self.session_pid else { return Ok(()) };
        let now = Db::backend_pid(&mut self.conn).await.map_err(|e| self.error("checking the session", &e))?;
        if now != first {
            let shown = self.url.shown().to_string();
            return Err(pooler(
                &shown,
                &format!(
                    "this connection's statements ran in server process {first}, then {now}: PgBouncer's pool_mode \
                     = transaction, or another pooler's transaction mode. Its settings (lock_timeout) and lock may \
                     be left on a pooled server session until the pooler closes it"
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn catalog(&self) -> Result<&'static dyn Catalog, Error> {
        crate::catalog::of(self.backend)
    }

    /// An error of a statement, its kind told by the database's error code, the password
    /// stripped.
    fn error(&self, what: &str, e: &sqlx::Error) -> Error {
        let mut message = self.url.scrub(&server_message(e));
        let code = e.as_database_error().and_then(|d| d.code()).map(|c| c.into_owned()).unwrap_or_default();
        let lower = message.to_ascii_lowercase();
        // PostgreSQL 55P03 lock_not_available; MySQL 1205 lock wait timeout (HY000 with the
        // number in the message); SQLite 5 SQLITE_BUSY.
        let lock = code == "55P03"
            || lower.contains("lock wait timeout")
            || lower.contains("lock timeout")
            || lower.contains("database is locked")
            || code == "5";
        let conflict = code == "40P01" || code == "40001" || lower.contains("deadlock");
        if lock && self.backend == Backend::Sqlite {
            message.push_str(
                " (another connection holds the database file: a transaction open in another program, such as an \
                 sqlite3 shell inside BEGIN, or in the default rollback-journal mode any read still open; nothing was \
                 changed: end it, or run when it is done)",
            );
        }
        let kind = if lock {
            ErrorKind::LockTimeout
        } else if conflict {
            ErrorKind::Conflict
        } else {
            ErrorKind::Database
        };
        Error::new(kind, format!("{what}: {message}")).with_code(code)
    }

    /// Runs a statement (any SQL the database takes as one).
    pub(crate) async fn exec(&mut self, sql: &str) -> Result<u64, Error> {
        match sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(&mut self.conn).await {
            Ok(r) => Ok(r.rows_affected()),
            Err(e) => Err(self.error(&short(sql), &e)),
        }
    }

    /// Runs `sql` (one statement or several), an error naming it `what` instead of its text.
    pub(crate) async fn exec_as(&mut self, sql: &str, what: &str) -> Result<u64, Error> {
        match sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(&mut self.conn).await {
            Ok(r) => Ok(r.rows_affected()),
            Err(e) => Err(self.error(what, &e)),
        }
    }

    /// Runs statements in order.
    pub(crate) async fn exec_all(&mut self, sqls: &[String]) -> Result<(), Error> {
        for s in sqls {
            self.exec(s).await?;
        }
        Ok(())
    }

    /// The rows of a query, every value as text (`None` for `NULL`; bytes as UTF-8, numbers
    /// written out), its parameters bound as text in order.
    pub(crate) async fn rows(&mut self, sql: &str, params: &[String]) -> Result<Vec<Vec<Option<String>>>, Error> {
        let rows: Result<Vec<AnyRow>, sqlx::Error> = if params.is_empty() {
            sqlx::raw_sql(AssertSqlSafe(sql.to_string())).fetch_all(&mut self.conn).await
        } else {
            let mut q = sqlx::query(AssertSqlSafe(sql.to_string()));
            for p in params {
                q = q.bind(p.clone());
            }
            q.fetch_all(&mut self.conn).await
        };
        let rows = rows.map_err(|e| self.error(&short(sql), &e))?;
        Ok(rows.iter().map(text_row).collect())
    }

    /// Runs a statement without parameters and hands each row to `each` as it arrives (a
    /// table's keys, without holding them all).
    pub(crate) async fn each_row(
        &mut self,
        sql: &str,
        mut each: impl FnMut(Vec<Option<String>>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        use futures_util::StreamExt;
        let mut stream = sqlx::raw_sql(AssertSqlSafe(sql.to_string())).fetch(&mut self.conn);
        let mut failed = None;
        while let Some(row) = stream.next().await {
            match row {
                Ok(row) => each(text_row(&row))?,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop(stream);
        match failed {
            Some(e) => Err(self.error(&short(sql), &e)),
            None => Ok(()),
        }
    }

    /// Runs a statement without parameters and hands its rows to `each` a page of `size` at a
    /// time, as they arrive (a table's keys, holding one page): the next page is read once
    /// `each` has returned.
    pub(crate) async fn each_page(
        &mut self,
        sql: &str,
        size: usize,
        mut each: impl AsyncFnMut(Vec<Vec<Option<String>>>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        use futures_util::StreamExt;
        let mut stream = sqlx::raw_sql(AssertSqlSafe(sql.to_string())).fetch(&mut self.conn);
        let mut page = Vec::with_capacity(size);
        let mut failed = None;
        while let Some(row) = stream.next().await {
            match row {
                Ok(row) => {
                    page.push(text_row(&row));
                    if page.len() == size {
                        each(std::mem::replace(&mut page, Vec::with_capacity(size))).await?;
                    }
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop(stream);
        if let Some(e) = failed {
            return Err(self.error(&short(sql), &e));
        }
        if !page.is_empty() {
            each(page).await?;
        }
        Ok(())
    }

    /// The column names and rows of a statement without parameters (`SHOW ...`).
    pub(crate) async fn rows_named(&mut self, sql: &str) -> Result<(Vec<String>, Vec<Vec<Option<String>>>), Error> {
        use sqlx::Column;
        let rows = sqlx::raw_sql(AssertSqlSafe(sql.to_string()))
            .fetch_all(&mut self.conn)
            .await
            .map_err(|e| self.error(&short(sql), &e))?;
        let names =
            rows.first().map(|r| r.columns().iter().map(|c| c.name().to_string()).collect()).unwrap_or_default();
        Ok((names, rows.iter().map(text_row).collect()))
    }

    /// Runs a catalog query and parses its answer.
    pub(crate) async fn query<T>(&mut self, q: Query<T>) -> Result<T, Error> {
        let rows = self.rows(&q.sql, &q.params).await?;
        (q.parse)(&rows).map_err(|e| Error::new(ErrorKind::Database, format!("{}: {e}", short(&q.sql))))
    }

    /// The first value of the first row as a number.
    pub(crate) async fn count(&mut self, sql: &str) -> Result<i64, Error> {
        let rows = self.rows(sql, &[]).await?;
        rows.first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| Error::new(ErrorKind::Database, format!("{}: no number in its answer", short(sql))))
    }
}

/// How many rounds [`Db::pooler_check`] plays: a pool of up to this many server sessions in
/// round-robin is found for certain; a LIFO pool almost always in the first round.
const POOLER_ROUNDS: usize = 8;

/// The refusal of a URL that goes through a pooler without sessions, and why it was told.
fn pooler(shown: &str, why: &str) -> Error {
    Error::refused(format!(
        "{shown} reaches PostgreSQL through a connection pooler that does not keep a session ({why}): doctor holds \
         a lock and its settings across statements and transactions, which such a pooler hands to other clients' \
         transactions, so nothing was changed; connect to the server itself (its own host and port), or through a \
         pool in session mode (PgBouncer: pool_mode = session for this database)"
    ))
}

/// PgBouncer's answer to a transaction in statement mode ("transaction blocks not allowed in
/// statement pooling mode"; older releases: "... in statement mode").
/// PostgreSQL's SQLSTATE for a statement cancelled (by `statement_timeout`, among others).
const QUERY_CANCELED: &str = "57014";

/// How many times a statement cancelled by a role's statement timeout, before the tool's
/// session has set it back, is tried again.
const CANCELED_RETRIES: u32 = 20;

/// Told of the pooler check's second session when it cannot be opened or used.
const POOLER_SECOND_SESSION: &str = "; the check opens a second session beside this one (doctor's --apply uses two at \
                                     once: a role or a pool that allows one session only cannot run it)";

/// What the server said of an error: PostgreSQL's message with its detail and hint (sqlx's
/// text ends with "at line N", the line of PostgreSQL's own source that raised it, and leaves
/// out the detail that names, say, the objects that depend on a table), anything else as sqlx
/// says it.
fn server_message(e: &sqlx::Error) -> String {
    #[cfg(feature = "postgres")]
    if let Some(pg) = e.as_database_error().and_then(|d| d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()) {
        let mut m = format!("error returned from database: {}", pg.message());
        if let Some(detail) = pg.detail() {
            m.push_str(&format!(" ({})", detail.trim_end_matches('.').replace('\n', "; ")));
        }
        if let Some(hint) = pg.hint() {
            m.push_str(&format!(" (hint: {})", hint.trim_end_matches('.')));
        }
        return m;
    }
    e.to_string()
}

fn canceled(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.code().as_deref() == Some(QUERY_CANCELED))
}

fn statement_pooling(e: &sqlx::Error) -> bool {
    let m = e.to_string();
    m.contains("not allowed in statement pooling mode") || m.contains("not allowed in statement mode")
}

/// Every value of a row as text.
fn text_row(row: &AnyRow) -> Vec<Option<String>> {
    (0..row.len())
        .map(|i| {
            if let Ok(v) = row.try_get::<Option<String>, _>(i) {
                return v;
            }
            if let Ok(v) = row.try_get::<Option<Vec<u8>>, _>(i) {
                return v.map(|b| String::from_utf8_lossy(&b).into_owned());
            }
            if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
                return v.map(|n| n.to_string());
            }
            if let Ok(v) = row.try_get::<Option<f64>, _>(i) {
                return v.map(|n| n.to_string());
            }
            if let Ok(v) = row.try_get::<Option<bool>, _>(i) {
                return v.map(|b| b.to_string());
            }
            None
        })
        .collect()
}

/// The start of a statement, for messages.
pub(crate) fn short(sql: &str) -> String {
    let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let first: String = one_line.chars().take(100).collect();
    if first.len() < one_line.len() { format!("{first}...") } else { first }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_built_without_says_which_feature() {
        let e = built(Backend::MySql, false, "mysql").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(e.to_string().contains("without its `mysql` feature"), "{e}");
        assert!(e.to_string().contains("cargo install combkey-cli --features mysql"), "{e}");
        assert_eq!(built(Backend::Sqlite, true, "sqlite").unwrap(), Backend::Sqlite);
    }

    #[test]
    fn an_unknown_scheme_is_refused_without_its_password() {
        let e = DatabaseUrl::parse("oracle://scott:tiger@host/db").err().unwrap();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(!e.to_string().contains("tiger") && e.to_string().contains("scott:***@host"), "{e}");
    }
}
