//! The catalog's model and the [`Catalog`] trait each database's module implements: the
//! tables, columns, keys and statements every layer above reads, with nothing of any one
//! database in it.

use combkey::Backend;

use crate::error::Error;

/// A table as the catalog names it: its schema (PostgreSQL schema, MySQL database, SQLite
/// attached database; `None` for SQLite's `main`) and its name, both exactly as stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name {
    /// The schema (database), as the catalog stores it.
    pub schema: Option<String>,
    /// The table's name, as the catalog stores it.
    pub name: String,
}

impl Name {
    /// The name quoted for `backend`, schema-qualified where there is a schema.
    pub fn quoted(&self, backend: Backend) -> String {
        match &self.schema {
            Some(s) => format!("{}.{}", backend.quote(s), backend.quote(&self.name)),
            None => backend.quote(&self.name),
        }
    }
}

impl Name {
    /// The name as a message shows it for `backend`: each part as it is where SQL takes it so
    /// (lower-case letters, digits and `_`; MySQL/MariaDB also upper case), quoted otherwise,
    /// so that what a message names can be pasted into a statement (`"Sch ema"."_Odd x_old"`).
    pub fn shown(&self, backend: Backend) -> String {
        let part = |p: &str| {
            let plain = p.chars().next().is_some_and(|c| {
                c.is_ascii_lowercase() || c == '_' || (backend != Backend::Postgres && c.is_ascii_uppercase())
            }) && p.chars().all(|c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || c == '_'
                    || (backend != Backend::Postgres && c.is_ascii_uppercase())
            });
            if plain { p.to_string() } else { backend.quote(p) }
        };
        match &self.schema {
            Some(s) => format!("{}.{}", part(s), part(&self.name)),
            None => part(&self.name),
        }
    }
}

impl core::fmt::Display for Name {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match &self.schema {
            Some(s) => write!(f, "{s}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A column of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its type as the catalog writes it, lower case (`uuid`, `binary(16)`, `char(36)`, `text`).
    pub data_type: String,
    /// Whether it takes `NULL`.
    pub nullable: bool,
    /// Its default expression, if any (as the catalog writes it); for a generated column, the
    /// expression that computes it (PostgreSQL, MySQL/MariaDB; SQLite does not tell).
    pub default: Option<String>,
    /// MySQL: `ON UPDATE CURRENT_TIMESTAMP`, which an `UPDATE` of the row changes.
    pub auto_update: bool,
    /// A generated (computed) column.
    pub generated: bool,
}

/// A foreign key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKey {
    /// The constraint's name.
    pub name: String,
    /// The referencing table.
    pub child: Name,
    /// The referencing columns, in the key's order.
    pub child_columns: Vec<String>,
    /// The referenced table.
    pub parent: Name,
    /// The referenced columns, in the same order.
    pub parent_columns: Vec<String>,
    /// The constraint as the database writes it (PostgreSQL `pg_get_constraintdef`, MySQL the
    /// `CONSTRAINT ...` line of `SHOW CREATE TABLE`, SQLite the `sqlite_master` text of the
    /// child table): what re-creates it.
    pub definition: String,
    /// Its `ON UPDATE` action, upper case (`NO ACTION`, `CASCADE`, `RESTRICT`, ...).
    pub on_update: String,
    /// Its comment (PostgreSQL `COMMENT ON CONSTRAINT`), which a re-created key must get back.
    pub comment: Option<String>,
}

impl ForeignKey {
    /// The referencing column that holds values of the referenced column `parent_column`.
    pub fn child_column_for(&self, parent_column: &str) -> Option<&str> {
        self.parent_columns.iter().position(|c| c == parent_column).map(|i| self.child_columns[i].as_str())
    }
}

/// A trigger on a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// The table it is on.
    pub table: Name,
    /// Its name.
    pub name: String,
    /// The events it fires on, upper case (`INSERT`, `UPDATE`, `DELETE`), and when.
    pub events: String,
    /// Its definition as the database writes it.
    pub definition: String,
}

/// A `CHECK` constraint that mentions a column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The table.
    pub table: Name,
    /// Its name.
    pub name: String,
    /// Its expression as the database writes it.
    pub definition: String,
}

/// A key column's value as the table holds it: bytes (`uuid` read as its bytes, `BINARY(16)`,
/// a `BLOB`) or text (a `CHAR(36)` key, PostgreSQL's text form of a `uuid`, MariaDB's `UUID`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stored {
    /// Bytes.
    Bytes(Vec<u8>),
    /// Text.
    Text(String),
}

/// A table whose key columns a change rewrites from a mapping of old to new values, and the
/// columns it keeps as they were (MySQL's `ON UPDATE CURRENT_TIMESTAMP`, which an `UPDATE`
/// would otherwise set to now).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// The table.
    pub table: Name,
    /// Its columns that hold key values (the key itself, or columns referencing it).
    pub columns: Vec<String>,
    /// Columns an `UPDATE` would change by itself, set to their own value instead.
    pub keep: Vec<String>,
}

/// The statements that change a text key column's type to the stored form's: before its
/// values are rewritten (MySQL: to `VARBINARY(64)`, which holds the text and the bytes alike)
/// and after (MySQL: to `BINARY(16)`; PostgreSQL: to `uuid` from the canonical text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retype {
    /// The statement before the values are rewritten, if any.
    pub before: Option<String>,
    /// The column's type between the two statements, lower case, as the catalog writes it.
    pub between_type: Option<String>,
    /// The statement after, if any.
    pub after: Option<String>,
    /// The column's type at the end, lower case, as the catalog writes it.
    pub final_type: String,
}

/// How far a replica is behind its primary.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ReplicaLag {
    /// The server is no replica.
    NotAReplica,
    /// Seconds behind.
    Behind(f64),
    /// It cannot be told, and why.
    Unknown(String),
}

/// The rows a catalog query answered: each value as text, `None` for `NULL`.
pub type Rows = [Vec<Option<String>>];

/// A catalog query: SQL whose every selected value is text, with text parameters bound in
/// order, and what parses its rows.
pub struct Query<T> {
    /// The SQL.
    pub sql: String,
    /// The parameters, bound as text in order.
    pub params: Vec<String>,
    /// Makes the answer of the rows (`None` values are SQL `NULL`).
    pub parse: fn(&Rows) -> Result<T, Error>,
}

// By hand: a derive would ask `T: Clone`, and the parser is a plain function whatever `T` is.
impl<T> Clone for Query<T> {
    fn clone(&self) -> Self {
        Query { sql: self.sql.clone(), params: self.params.clone(), parse: self.parse }
    }
}

impl<T> core::fmt::Debug for Query<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Query").field("sql", &self.sql).field("params", &self.params).finish_non_exhaustive()
    }
}

/// The value in column `i` of a row, or an error naming the query's shape.
pub(crate) fn cell(row: &[Option<String>], i: usize) -> Result<Option<String>, Error> {
    row.get(i).cloned().ok_or_else(|| Error::config("catalog row", format!("{} values", row.len()), "more columns"))
}

/// The first value of the first row, where there is one and it is not `NULL` (a catalog
/// query that answers one message or nothing).
pub(crate) fn first_text(rows: &[Vec<Option<String>>]) -> Result<Option<String>, Error> {
    Ok(rows.first().and_then(|r| r.first().cloned().flatten()))
}

/// The text in column `i` of a row; `NULL` is an error.
pub(crate) fn text(row: &[Option<String>], i: usize) -> Result<String, Error> {
    cell(row, i)?.ok_or_else(|| Error::config("catalog value", "NULL", "text"))
}

/// A boolean the catalog wrote as text (`t`, `true`, `1`, `YES`).
pub(crate) fn flag(row: &[Option<String>], i: usize) -> Result<bool, Error> {
    Ok(matches!(cell(row, i)?.as_deref().map(str::to_ascii_lowercase).as_deref(), Some("t" | "true" | "1" | "yes")))
}

/// What a database's catalog is asked, and how it writes a schema change: implemented by each
/// database's module, reached through [`Backend::catalog`].
pub(crate) trait Catalog: Sync {
    /// The database.
    fn backend(&self) -> Backend;
    /// Whether a key column of this type changes type to hold the stored form (a text key
    /// becoming PostgreSQL's `uuid` or MySQL's `BINARY(16)`).
    fn retype_needed(&self, column: &Column) -> bool;
    /// Whether the key column's values change form (text to 16 bytes), by a type change or in
    /// place (SQLite): what reads the column then sees another type.
    fn values_change_form(&self, column: &Column) -> bool {
        self.retype_needed(column)
    }
    /// A query whose rows are the ids that the key column holds in more than one form (letter
    /// case, braces, `urn:uuid:`, hyphens): each as one normalized text and how many values
    /// read as it. The database groups them, so no key is held here. `None` where the column
    /// holds one form only (PostgreSQL `uuid`, `BINARY(16)`).
    fn same_id(&self, table: &Name, column: &Column, only: bool) -> Option<String>;
    /// A random share `p` (0 to 1) of a table's rows, as a `WHERE` condition that follows
    /// `... IS NOT NULL` (` AND random() < p`).
    fn sample_filter(&self, p: f64) -> String {
        format!(" AND random() < {p}")
    }
    /// The table a user named (`orders`, `"Orders"`, `shop.orders`, in the database's own
    /// quoting rules): its schema and name as stored, or no row when there is none.
    fn resolve(&self, user_name: &str) -> Result<Query<Option<Name>>, Error>;
    /// The columns of a table.
    fn columns(&self, table: &Name) -> Query<Vec<Column>>;
    /// The columns of its primary key, in order.
    fn primary_key(&self, table: &Name) -> Query<Vec<String>>;
    /// Whether `column` holds no value twice by itself: a primary key or a unique index (or
    /// constraint) of that one column, whole-table and valid. A key that is unique only with
    /// other columns (`(tenant, id)`) can repeat an id for rows that differ in the others.
    fn unique_alone(&self, table: &Name, column: &str) -> Query<bool>;
    /// Every foreign key that references `column` of `table` (alone or with other columns),
    /// from any table and schema. (MySQL: [`complete_foreign_key`](Self::complete_foreign_key)
    /// then fills each one's definition from its table's [`definition`](Self::definition).)
    fn references(&self, table: &Name, column: &str) -> Query<Vec<ForeignKey>>;
    /// Fills what [`references`](Self::references) could not read from the catalog's tables:
    /// MySQL's `CONSTRAINT ...` line of the child's `SHOW CREATE TABLE`.
    fn complete_foreign_key(&self, _fk: &mut ForeignKey, _child_definition: &str) -> Result<(), Error> {
        Ok(())
    }
    /// The user triggers on a table.
    fn triggers(&self, table: &Name) -> Query<Vec<Trigger>>;
    /// The `CHECK` constraints of a table that mention `column`.
    fn checks(&self, table: &Name, column: &str) -> Query<Vec<Check>>;
    /// The tables that inherit from this one or are its partitions (PostgreSQL; none elsewhere).
    fn inheritors(&self, table: &Name) -> Query<Vec<Name>>;
    /// Why the connected role cannot see every row of `table` (PostgreSQL's row-level
    /// security applies to it: `FORCE ROW LEVEL SECURITY`, or a role that is not the owner, and
    /// neither superuser nor `BYPASSRLS`), or no row where it sees them all.
    fn row_security(&self, _table: &Name) -> Option<Query<Option<String>>> {
        None
    }
    /// The partitioned table `table` is a partition of (PostgreSQL), if it is one.
    fn partition_of(&self, _table: &Name) -> Option<Query<Option<Name>>> {
        None
    }
    /// Whether `table` is partitioned, its rows all in its partitions (PostgreSQL).
    fn partitioned(&self, _table: &Name) -> Option<Query<bool>> {
        None
    }
    /// Whether `table` is system-versioned (MariaDB `WITH SYSTEM VERSIONING`: every `UPDATE`
    /// adds a history row).
    fn versioned(&self, _table: &Name) -> Option<Query<bool>> {
        None
    }
    /// The publications that publish `table` (PostgreSQL logical replication: named, `FOR
    /// TABLES IN SCHEMA` or `FOR ALL TABLES`).
    fn publications(&self, _table: &Name) -> Option<Query<Vec<String>>> {
        None
    }
    /// The subscriptions that write `table` (PostgreSQL logical replication's subscriber side).
    fn subscriptions(&self, _table: &Name) -> Option<Query<Vec<String>>> {
        None
    }
    /// Whether an index of `table` starts with one of `columns` (what makes a look-up of
    /// referencing rows an index probe instead of a scan).
    fn has_index_on(&self, table: &Name, columns: &[String]) -> Query<bool>;
    /// The table's whole definition as the database writes it (`SHOW CREATE TABLE`,
    /// `sqlite_master.sql`; PostgreSQL: its columns, constraints and indexes as
    /// `pg_get_*def` write them), for comparing before and after a change.
    fn definition(&self, table: &Name) -> Query<String>;
    /// The primary key index's size in bytes, as the database's statistics have it (MySQL:
    /// as of the last `ANALYZE TABLE`; reading never runs one).
    fn index_size(&self, table: &Name) -> Query<Option<i64>>;
    /// Whether [`leaf_density`](Self::leaf_density) can run (PostgreSQL: `pgstattuple` is
    /// installed; reading never installs it).
    fn leaf_density_available(&self) -> Query<bool>;
    /// The primary key index's leaf density in percent, where the database tells.
    fn leaf_density(&self, table: &Name) -> Option<Query<Option<f64>>>;
    /// The estimated (statistics) or exact number of rows.
    fn row_estimate(&self, table: &Name) -> Query<Option<i64>>;
    /// How many sessions wait for a lock right now (PostgreSQL `pg_locks`, MySQL
    /// `information_schema.INNODB_LOCK_WAITS`): what a tool that works in batches backs off on.
    fn lock_waiters(&self) -> Option<Query<i64>> {
        None
    }
    /// The largest replication lag the primary sees, in seconds (PostgreSQL
    /// `pg_stat_replication.replay_lag`); MySQL replicas are asked themselves
    /// ([`replica_lag`](Self::replica_lag)).
    fn replication_lag(&self) -> Option<Query<f64>> {
        None
    }
    /// On a replica: the statement that says how far it is behind its primary (MySQL `SHOW ALL
    /// SLAVES STATUS`; PostgreSQL's recovery functions and WAL receiver), read by
    /// [`read_replica`](Self::read_replica).
    fn replica_status(&self) -> &'static str;
    /// What [`replica_status`](Self::replica_status)'s rows (with their column names) say: not
    /// a replica at all, behind by so many seconds, or behind by an amount nobody can tell (a
    /// stopped SQL thread, a WAL receiver that is not streaming), with the reason.
    fn read_replica(&self, names: &[String], rows: &Rows) -> ReplicaLag;
    /// Replication the primary knows of whose lag cannot be read (PostgreSQL: a replication
    /// slot that no standby or subscriber is using, which holds WAL back), each with why.
    fn unread_replication(&self) -> Option<Query<Vec<String>>> {
        None
    }
    /// The statements that rebuild the primary key's index without blocking readers and
    /// writers (PostgreSQL `REINDEX INDEX CONCURRENTLY`, MySQL's online `ALTER TABLE ... FORCE`),
    /// given the index's name from [`primary_key_index`](Self::primary_key_index); they run
    /// outside a transaction.
    fn rebuild_primary_key(&self, table: &Name, index: Option<&str>) -> Vec<String>;
    /// The primary key index's name, quoted and schema-qualified (PostgreSQL).
    fn primary_key_index(&self, _table: &Name) -> Option<Query<Option<String>>> {
        None
    }
    /// The rules that rewrite an `INSERT`, `UPDATE` or `DELETE` of `table` (PostgreSQL's
    /// `CREATE RULE`), each as `name (ON UPDATE)`; `None` where there are none.
    fn rules(&self, _table: &Name) -> Option<Query<Vec<String>>> {
        None
    }
    /// The views that read `column` of `table`, where they keep its type from changing
    /// (PostgreSQL; `None` elsewhere).
    fn views_reading(&self, _table: &Name, _column: &str) -> Option<Query<Vec<Name>>> {
        None
    }
    /// Takes, without waiting, a lock held by this session until it ends or gives it back with
    /// [`run_unlock`](Self::run_unlock), named after `table`: what keeps two tools that change
    /// the same table apart (PostgreSQL `pg_try_advisory_lock`, MySQL `GET_LOCK`). The query
    /// answers whether the lock was taken; `None` where the database's own write lock does it
    /// (SQLite).
    fn run_lock(&self, _table: &Name) -> Option<Query<bool>> {
        None
    }
    /// Gives back [`run_lock`](Self::run_lock)'s lock.
    fn run_unlock(&self, _table: &Name) -> Option<Query<bool>> {
        None
    }

    // How a change is written.

    /// Whether DDL is transactional (PostgreSQL, SQLite): a failed change then leaves nothing
    /// behind; where it is not (MySQL/MariaDB), a tool keeps a journal instead.
    fn transactional_ddl(&self) -> bool;
    /// Session settings before any statement of a change: waits for locks bounded by
    /// `lock_timeout_ms` (PostgreSQL `lock_timeout`; MySQL `lock_wait_timeout` and
    /// `innodb_lock_wait_timeout`, which count whole seconds, rounded up; SQLite
    /// `busy_timeout`), strict value checks (MySQL `sql_mode`).
    fn session(&self, lock_timeout_ms: u64) -> Vec<String>;
    /// The statements that start a read-only transaction (the audit's; SQLite: `BEGIN` after
    /// `PRAGMA query_only`).
    fn begin_read_only(&self) -> Vec<String>;
    /// The statements that end it.
    fn end_read_only(&self) -> Vec<String> {
        vec!["ROLLBACK".into()]
    }
    /// The statement that starts a transaction that writes (SQLite: `BEGIN EXCLUSIVE`, which
    /// takes the lock it needs at once instead of failing on it half-way).
    fn begin(&self) -> String {
        "BEGIN".into()
    }
    /// The statements that start one batch of an online conversion: a transaction whose work
    /// is bounded by the batch, whatever the table's size (PostgreSQL: the planner may not
    /// scan a whole table or hash it where an index finds the batch's rows; its estimates for
    /// the mapping table of a thousand rows would choose that for a table of a hundred
    /// thousand).
    fn begin_batch(&self) -> Vec<String> {
        vec![self.begin()]
    }
    /// The statement, in a transaction, that keeps other sessions from changing `table`'s rows
    /// until it ends while they can still read them (`None` where the transaction's start does
    /// already: SQLite's `BEGIN EXCLUSIVE`).
    fn lock_against_writes(&self, table: &Name, only: bool) -> Option<String> {
        let _ = (table, only);
        None
    }
    /// The statement, first in an offline change's transaction, that keeps other sessions from
    /// writing to every table of the change until it commits (PostgreSQL `LOCK TABLE`: a
    /// child another session inserted after the change's statement began would otherwise fail
    /// the foreign key check at its end, and the whole run with it). `exclusive`: readers wait
    /// too (a type change, whose `ALTER`s take that lock anyway: taken up front, all at once,
    /// the run never waits for a lock while it holds another). `None` where row locks make
    /// writers wait already (MySQL/MariaDB) or the transaction's start does (SQLite).
    fn lock_tables(&self, tables: &[Name], only: bool, exclusive: bool) -> Option<String> {
        let _ = (tables, only, exclusive);
        None
    }
    /// The statement that bounds one attempt at [`lock_tables`](Self::lock_tables)'s lock to
    /// `ms` milliseconds inside the transaction (PostgreSQL `SET LOCAL lock_timeout`), where
    /// the lock is taken in attempts, each rolled back to a savepoint when it times out.
    fn lock_attempt(&self, ms: u64) -> Option<String> {
        let _ = ms;
        None
    }
    /// The session statement that makes DDL outside a transaction wait for no metadata lock
    /// (MySQL/MariaDB `lock_wait_timeout = 0`: MariaDB fails at once, MySQL's minimum is 1 s),
    /// for DDL taken in short tries that never head the table's lock queue
    /// ([`crate::methods`]' `ddl_in_tries`); `None` where such DDL runs in the transaction.
    fn ddl_no_wait(&self) -> Option<String> {
        None
    }
    /// `statement` (DDL outside a transaction) made to wait at most `ms` milliseconds for its
    /// metadata lock, where the server can bound a statement's time below a second (MariaDB's
    /// `SET STATEMENT max_statement_time`); as it is elsewhere.
    fn ddl_waiting(&self, statement: &str, ms: u64) -> String {
        let _ = ms;
        statement.to_string()
    }
    /// How many foreign keys `table` has to tables other than itself (MySQL/MariaDB, where a
    /// trigger's statement locks those tables too); `None` where DDL runs in the transaction.
    fn foreign_keys_to_others(&self, table: &Name) -> Option<Query<i64>> {
        let _ = table;
        None
    }
    /// How many transactions of other sessions have been open longer than `ms` milliseconds
    /// (MySQL/MariaDB, whose server names no holder of a metadata lock: one of them may hold
    /// the table, and a statement queued behind it would hold up the application's writes for
    /// as long as it waits). `None` where the catalog does not tell.
    fn long_transactions(&self, ms: u64) -> Option<Query<i64>> {
        let _ = ms;
        None
    }
    /// A cursor over `select` inside the transaction, read a page at a time: its `DECLARE`,
    /// the `FETCH` of the next page and its `CLOSE` (PostgreSQL; SQLite: a temporary table
    /// taken from a page at a time). `None` where a statement's rows are streamed on a session
    /// of their own instead.
    fn cursor(&self, name: &str, select: &str) -> Option<(String, String, String)> {
        let _ = (name, select);
        None
    }
    /// The server's `deadlock_timeout` in milliseconds (PostgreSQL): a lock attempt that waits
    /// less than it gives up before the server would pick a victim among the transactions it
    /// waits for.
    fn deadlock_timeout(&self) -> Option<Query<Option<i64>>> {
        None
    }
    /// Why this session cannot write, where it cannot (`None` where it can, or where the
    /// database does not tell): a standby, a session that starts read-only (a role's
    /// `default_transaction_read_only`), a read-only server the user may not write to.
    fn read_only(&self) -> Option<Query<Option<String>>> {
        None
    }
    /// The session that holds [`run_lock`](Self::run_lock)'s lock of `table`, as a message
    /// shows it (its id, state, how long, its statement), where the database tells.
    fn run_lock_holder(&self, table: &Name) -> Option<Query<Option<String>>> {
        let _ = table;
        None
    }
    /// The `n`-th (from 1) bound parameter in a statement: `$n` or `?`.
    fn param(&self, n: usize) -> String {
        let _ = n;
        "?".into()
    }
    /// The statement that makes the journal table `combkey_doctor_journal` in `schema` (a
    /// tool's record of a change in progress, which survives the tool's crash), and its quoted
    /// name. It must not break replication: PostgreSQL's is `UNLOGGED`, which no publication
    /// publishes (a `FOR ALL TABLES` publication would otherwise publish it, and a subscriber
    /// without it would stop applying every change) and no standby receives; it lasts through
    /// the tool's crash, and after the server's own crash an online run begins again from the
    /// start (it finds the keys converted so far converted). MariaDB's is a plain InnoDB table,
    /// which replicates in every binlog format.
    fn journal_table(&self, schema: Option<&str>) -> (String, String);
    /// Whether the journal table exists in `schema`: asked of the catalog, so that an audit
    /// (which reads only) makes the server log no error for a table that is not there.
    fn journal_exists(&self, schema: Option<&str>) -> Query<bool>;
    /// Whether any guard trigger of a journaled type change tagged `tag` is up
    /// (`combkey_guard_{tag}_*`); `None` where a type change needs no guards (transactional DDL).
    fn guards_up(&self, _tag: &str) -> Option<Query<bool>> {
        None
    }
    /// Whether `table` would have its `UPDATE`s refused by a publication that publishes them:
    /// no replica identity (PostgreSQL: `REPLICA IDENTITY NOTHING`, or `DEFAULT` without a
    /// primary key).
    fn missing_replica_identity(&self, _table: &Name) -> Option<Query<bool>> {
        None
    }
    /// The statements around a change's transaction that turn foreign key checks off for this
    /// session only, and back on, where checking each updated row against its referencing
    /// rows one by one would be the cost (SQLite without an index on the referencing column)
    /// or where only the session's own changes matter and it moves parent and children
    /// together (MySQL). `None` where the database checks at the end of the statement and
    /// nothing needs turning off (PostgreSQL).
    fn fk_checks_off(&self) -> Option<(Vec<String>, Vec<String>)>;
    /// The `SELECT` of a key column's values as text (how each is stored: PostgreSQL the
    /// value's text, MySQL and SQLite `hex()` of its bytes with SQLite's `typeof()`), in the
    /// database's key order, `ONLY` this table's rows when `only` (PostgreSQL inheritance);
    /// `also` is more of the select list after them (`, expr`: the row's time for
    /// `--rekey-from`), or empty.
    fn select_keys(&self, table: &Name, column: &Column, only: bool, filter: &str, also: &str) -> String;
    /// The `SELECT` of every value of a key column as [`select_keys`](Self::select_keys) gives
    /// them, in whatever order reads the table fastest (PostgreSQL: the heap's, one sequential
    /// read, where the key order would visit the heap at random; MySQL: the key's, which is
    /// the table's own).
    fn sweep_keys(&self, table: &Name, column: &Column, only: bool, also: &str) -> String {
        self.select_keys(table, column, only, "", also)
    }
    /// The `SELECT` of the distinct values of a referencing column, as
    /// [`select_keys`](Self::select_keys) gives each, in no order (the database removes the
    /// repeats; nothing is held here).
    fn distinct_keys(&self, table: &Name, column: &Column) -> String {
        let all = self.sweep_keys(table, column, false, "");
        let unordered = all.split(" ORDER BY ").next().unwrap_or(&all);
        unordered.replacen("SELECT ", "SELECT DISTINCT ", 1)
    }
    /// The count of keys that sort after `literal` (a value as the column holds it) in the
    /// database's own order of the column: the old keys the next id would sort before.
    fn count_after(&self, table: &Name, column: &Column, only: bool, literal: &str) -> String {
        let b = self.backend();
        let only = if only && b == Backend::Postgres { "ONLY " } else { "" };
        format!("SELECT count(*) FROM {only}{} WHERE {} > {literal}", table.quoted(b), b.quote(&column.name))
    }
    /// The statement that makes the table of old and new keys a conversion keeps (`old_key`
    /// its primary key, `new_key` unique, both of the key column's final type), if it is not
    /// there, with `about` as its comment.
    fn key_map_create(&self, map: &Name, final_type: &str, about: &str) -> Vec<String>;
    /// The statement that adds `(old, new)` rows (values of the key column's final type) to
    /// the key map; a row whose old key is there already is left out (a type change maps a
    /// referencing column's values too).
    fn key_map_insert(&self, map: &Name, rows: &[(Stored, Stored)]) -> String;
    /// The statement that removes, before `rows` are added to the key map in the transaction
    /// that gave their rows their new keys, the pairs that give one of those new keys to another
    /// old key: stale, since no row held that new key when the batch gave it (the unique key
    /// would have refused it). A row converted earlier and removed since, and another old key
    /// converted to the same new key, would otherwise fail every later run on the key map's
    /// unique `new_key` (and a client of the old key would find the other row).
    fn key_map_unstale(&self, map: &Name, rows: &[(Stored, Stored)]) -> String {
        let news: Vec<String> = rows.iter().map(|(_, n)| self.key_literal(n)).collect();
        let olds: Vec<String> = rows.iter().map(|(o, _)| self.key_literal(o)).collect();
        format!(
            "DELETE FROM {} WHERE new_key IN ({}) AND old_key NOT IN ({})",
            map.quoted(self.backend()),
            news.join(", "),
            olds.join(", ")
        )
    }
    /// The statements that make `column`'s default combkey's generator, each safe to run
    /// again: PostgreSQL installs `combkey_v7()` and sets the `DEFAULT`; MySQL/MariaDB, where a
    /// default cannot call a stored function, installs it in the table's database, adds a
    /// `BEFORE INSERT` trigger that fills a missing key, and drops the old default. `None`
    /// where the database has no functions (SQLite).
    fn combkey_default(&self, _table: &Name, _column: &Column, _final_type: &str) -> Option<Vec<String>> {
        None
    }
    /// The functions named like combkey's generator (`combkey_v7`, MySQL's `combkey_v7_from`)
    /// where a default or trigger of `table` would call them, and those named like combkey's
    /// other functions (`combkey_unix_ms`, `combkey_time`) where its installation would make
    /// them: name and body, to tell combkey's own from another one of that name. `None` where
    /// the database has no functions.
    fn combkey_functions(&self, _table: &Name) -> Option<Query<Vec<(String, String)>>> {
        None
    }
    /// The statement that drops `column`'s default (before a type change the default would
    /// not survive).
    fn drop_default(&self, table: &Name, column: &Column) -> String {
        let b = self.backend();
        format!("ALTER TABLE {} ALTER COLUMN {} DROP DEFAULT", table.quoted(b), b.quote(&column.name))
    }
    /// Whether the server writes a statement-based binary log, which would replay a trigger's
    /// random and clock calls differently on each replica (MySQL/MariaDB).
    fn statement_binlog(&self) -> Option<Query<bool>> {
        None
    }
    /// The pairs of the mapping table whose new value is a key the table holds already (a
    /// key of another kind that the conversion would make twice): old and new, as text; at
    /// most five. For a conversion that keeps the column's type.
    fn new_keys_taken(&self, table: &Name, column: &str, only: bool) -> String {
        let b = self.backend();
        let only = if only && b == Backend::Postgres { "ONLY " } else { "" };
        format!(
            "SELECT {}, {} FROM combkey_doctor_map m JOIN {only}{} t ON t.{} = m.new LIMIT 5",
            self.key_text("m.old"),
            self.key_text("m.new"),
            table.quoted(b),
            b.quote(column)
        )
    }
    /// A key value's expression as text for a message (PostgreSQL the value, MySQL/MariaDB and
    /// SQLite its hex digits).
    fn key_text(&self, expr: &str) -> String;
    /// What a table says it is: its comment (PostgreSQL, MySQL/MariaDB) or its `CREATE TABLE`
    /// text (SQLite, which keeps the text, comments included).
    fn table_about(&self, table: &Name) -> Query<Option<String>>;
    /// Whether `schema` (a PostgreSQL schema, a MySQL/MariaDB database, an SQLite attached
    /// database) exists; `None`: the connection's own.
    fn schema_exists(&self, schema: Option<&str>) -> Query<bool>;
    /// The publications that would publish a table made in `schema` (PostgreSQL: `FOR ALL
    /// TABLES`, `FOR TABLES IN SCHEMA`): a subscriber without that table would stop applying
    /// every change. `None` where the database has no such publications.
    fn publications_of_new_tables(&self, _schema: Option<&str>) -> Option<Query<Vec<String>>> {
        None
    }
    /// Settings of a session that streams a table's keys to another session that writes (the
    /// reader may wait for the writer between pages): MySQL's `net_write_timeout`.
    fn reader_session(&self) -> Vec<String> {
        Vec::new()
    }
    /// A statement as a script the database's own client runs writes it, terminated:
    /// `sql;` (MySQL/MariaDB: between `DELIMITER` lines where the statement itself holds a
    /// `;`, a trigger's or a function's body, which the `mysql`/`mariadb` client would cut there).
    fn script_statement(&self, sql: &str) -> String {
        format!("{sql};\n")
    }
    /// The statements that add back a foreign key from its [`ForeignKey::definition`], and
    /// what went with it (PostgreSQL: its comment; MySQL/MariaDB: the index it named after
    /// itself, given the child table's `definition` from before), so the table ends as it was;
    /// `None` where the database cannot add one to an existing table (SQLite).
    fn add_foreign_key(&self, fk: &ForeignKey, child_definition: &str) -> Option<Vec<String>>;
    /// The statement that drops a foreign key; `None` where the database cannot (SQLite).
    fn drop_foreign_key(&self, fk: &ForeignKey) -> Option<String>;
    /// A key value from a row of [`select_keys`](Self::select_keys).
    fn parse_key(&self, row: &[Option<String>]) -> Result<Stored, Error>;
    /// A key value as an SQL literal.
    fn key_literal(&self, value: &Stored) -> String;
    /// The statements that make this session's mapping table `combkey_doctor_map (old, new)`
    /// for values of a key column of type `column_type` (a temporary table, made once per
    /// session), and empty it.
    fn map_table(&self, column_type: &str) -> Vec<String>;
    /// The statement that adds `(old, new)` rows to the mapping table; a row whose `old` is
    /// there already is left out.
    fn insert_map(&self, rows: &[(Stored, Stored)]) -> String;
    /// The statements that rewrite every listed column from the mapping table (a value not in
    /// it stays), in an order the database accepts inside one transaction: PostgreSQL one
    /// statement for every table, so its foreign keys, checked at the end of the statement,
    /// see the parent and its children changed together; MySQL and SQLite one per column, with
    /// their foreign key checks off for the session ([`fk_checks_off`](Self::fk_checks_off)).
    /// `only`: PostgreSQL's `ONLY` (not the tables that inherit).
    fn rewrite_from_map(&self, targets: &[Rewrite], only: bool) -> Vec<String>;
    /// The statements that rewrite every listed column for one batch of `(old, new)` pairs of
    /// an online conversion, as [`rewrite_from_map`](Self::rewrite_from_map) does, the pairs
    /// included: by default the session's mapping table emptied, filled and joined;
    /// PostgreSQL one statement whose mapping is a `VALUES` list (no temporary table to
    /// truncate per batch).
    fn rewrite_batch(
        &self,
        targets: &[Rewrite],
        only: bool,
        rows: &[(Stored, Stored)],
        column_type: &str,
    ) -> Vec<String> {
        let mut out = self.map_table(column_type);
        out.push(self.insert_map(rows));
        out.extend(self.rewrite_from_map(targets, only));
        out
    }
    /// The statements that change a text key column to the stored form's type, given the
    /// table's [`definition`](Self::definition); an error naming what would be lost where the
    /// column cannot change type in place.
    fn retype(&self, table: &Name, column: &Column, table_definition: &str) -> Result<Retype, Error>;
    /// Triggers that refuse writes to `table` by any session but one that set `@combkey_doctor`
    /// (MySQL, while a non-transactional change has its foreign keys dropped): their create
    /// and drop statements. `None` where a change is one transaction anyway.
    fn write_guard(&self, table: &Name, tag: &str) -> Option<(Vec<String>, Vec<String>)>;
    /// The statements that let this session past [`write_guard`](Self::write_guard)'s triggers.
    fn pass_guard(&self) -> Vec<String> {
        Vec::new()
    }
    /// A statement whose rows are foreign key violations (SQLite's `PRAGMA foreign_key_check`).
    fn foreign_key_check(&self) -> Option<String> {
        None
    }
    /// A query counting the values of a column that are not 16 bytes (after a type change's
    /// values were rewritten, before its transaction commits); `None` where the type change
    /// itself checks them (PostgreSQL's cast to `uuid`).
    fn not_sixteen_bytes(&self, _table: &Name, _column: &str) -> Option<String> {
        None
    }
    /// An index for the database's check of each updated key, which would otherwise scan the
    /// referencing table for every key (PostgreSQL): built before the change's transaction
    /// without blocking writers, and dropped after its commit. Its build statements (each run
    /// alone, outside a transaction; a half-built one of an earlier run is dropped first) and
    /// its drop statement.
    fn concurrent_index(&self, _table: &Name, _columns: &[String], _name: &str) -> Option<(Vec<String>, String)> {
        None
    }
    /// The indexes on `table` that a run built for its foreign key checks and did not drop
    /// (it was stopped between its commit and its last step), by name.
    fn own_indexes(&self, _table: &Name) -> Option<Query<Vec<String>>> {
        None
    }
    /// The oldest transactions open now, besides this session's, as a message names them
    /// (PostgreSQL: what a concurrent index build waits for).
    fn oldest_transactions(&self) -> Option<Query<Option<String>>> {
        None
    }
    /// The other sessions (and prepared transactions) that hold a lock on any of `tables` in a
    /// transaction open longer than `older_than_ms`, as a message names them: what a lock
    /// request of the swap would queue behind, with the application's writes queued behind it
    /// (`None` where the server does not show who holds a table's locks: MySQL/MariaDB's
    /// metadata locks are not visible without a plugin).
    fn lock_holders(&self, tables: &[Name], older_than_ms: u64) -> Option<Query<Option<String>>> {
        let _ = (tables, older_than_ms);
        None
    }
    /// Cancels the autovacuum workers that hold a lock on any of `tables` (or on what a swap's
    /// statements lock besides), as PostgreSQL does for a lock request that waits behind one for
    /// `deadlock_timeout` (the run never waits in the lock queue, so PostgreSQL never does it
    /// for the run): what they were doing, as a message names it (`None`: none cancelled). Never
    /// one that prevents wraparound, and only where the session may (a superuser).
    fn yield_autovacuum(&self, tables: &[Name]) -> Option<Query<Option<String>>> {
        let _ = tables;
        None
    }
    /// Cancels the statements of (or, with `end`, ends) the sessions that
    /// [`lock_holders`](Catalog::lock_holders) names, as a message names them (`None`: none
    /// signalled; prepared transactions cannot be). Fails where the session may not signal
    /// them.
    fn end_holders(&self, tables: &[Name], older_than_ms: u64, end: bool) -> Option<Query<Option<String>>> {
        let _ = (tables, older_than_ms, end);
        None
    }
    /// The statement that drops index `name` of `table` without blocking its writers.
    fn drop_own_index(&self, _table: &Name, _name: &str) -> Option<String> {
        None
    }
}

/// A column name as given (`"My Id"`, `` `My Id` ``, `[My Id]`, `my_id`) as the catalog
/// writes it: without its quotes, a doubled quote inside made single.
pub(crate) fn unquote(name: &str) -> String {
    let n = name.trim();
    for (open, close) in [('"', '"'), ('`', '`'), ('[', ']')] {
        if n.len() >= 2 && n.starts_with(open) && n.ends_with(close) {
            let inner = &n[1..n.len() - 1];
            return if open == close {
                inner.replace(&format!("{close}{close}"), &close.to_string())
            } else {
                inner.into()
            };
        }
    }
    n.to_string()
}

/// Keys per page of a read that maps keys: its rows are held, converted and written to the
/// mapping table (or the script) before the next page is read.
pub(crate) const PAGE: usize = 10_000;

/// Hex digits of bytes, upper case.
/// `(old, new), ...`: rows of key values as a `VALUES` list of literals.
pub(crate) fn value_pairs(cat: &dyn Catalog, rows: &[(Stored, Stored)]) -> String {
    rows.iter().map(|(o, n)| format!("({}, {})", cat.key_literal(o), cat.key_literal(n))).collect::<Vec<_>>().join(", ")
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Bytes of hex digits.
pub(crate) fn unhex(s: &str) -> Result<Vec<u8>, Error> {
    let digits = s.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Err(Error::config("hex value", format!("{} digits", digits.len()), "an even number"));
    }
    digits
        .chunks(2)
        .map(|pair| {
            core::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| Error::config("hex value", String::from_utf8_lossy(pair), "hex digits"))
        })
        .collect()
}

/// `s` as an SQL string literal (quotes doubled).
pub(crate) fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
