//! Audit an existing table's primary keys and convert them to sorted COMB ids, without ever
//! losing or silently changing anything: the library behind `combkey doctor`.
//!
//! A table keyed by RT.Comb's `Sql` ids, SQL Server `NEWSEQUENTIALID()` values, UUID text or a
//! mix with random v4 keys: [`Doctor::audit`] says which layouts the keys are (with the
//! evidence), whether `ORDER BY key` is creation order, what the primary key index costs and
//! what references the key, and reads only (a read-only transaction; no statistics change,
//! no extension is installed). [`Doctor::plan`] makes the migration as data ([`Plan`]: ordered
//! steps with their SQL, what each drops with its original definition), and
//! [`Doctor::apply`] runs exactly that plan:
//!
//! - **Done or unchanged.** On PostgreSQL and SQLite, and on MySQL/MariaDB when only values
//!   change, the whole migration is one transaction: the key and every referencing column
//!   change together, foreign keys are checked before the commit, and any failure (a lock
//!   timeout, a kill, a refused value) leaves everything as it was. Where a column's type must
//!   change on MySQL/MariaDB, whose DDL commits on its own, a journal table in the database
//!   keeps the plan and the step reached, triggers refuse other sessions' writes while the
//!   foreign keys are dropped, and running the same command again after a crash at any step
//!   finishes the job. Foreign keys are never dropped otherwise.
//! - **Fidelity.** Every foreign key comes back from the catalog's own text; indexes, checks,
//!   defaults, comments and triggers stay; a definition that differs afterwards beyond the key
//!   column's type is an error.
//! - **Bounded waits.** Every lock wait ends after the lock timeout (5 s by default).
//! - **Old ids keep working.** Conversions are lossless: `combkey::layouts::KeyMigration` maps
//!   an id a client kept from before to its new key.
//!
//! ```no_run
//! # async fn f() -> Result<(), combkey_doctor::Error> {
//! use combkey_doctor::{Doctor, Options, Quiet};
//!
//! let mut doctor = Doctor::connect("postgres://app@db/shop").await?;
//! let report = doctor.audit("orders", "id", None, Options::default()).await?;
//! println!("{}", report.text());
//! let plan = doctor.plan("orders", "id", Options::default()).await?;
//! if !plan.is_empty() {
//!     doctor.apply(&plan, &mut Quiet).await?;
//! }
//! # Ok(()) }
//! ```
//!
//! # Versions
//!
//! Minimum Rust version: 1.94. Public dependencies (their types are in this crate's API):
//! `combkey` (its `Backend`). The database drivers (sqlx 0.9) are private: connections are made
//! from a URL, and the futures run on the caller's tokio runtime.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers, bottom up (docs/doctor.md, "How doctor is built"): each module uses only the
// ones above it in this list, which tests/layers.rs checks.
mod audit;
mod catalog;
mod db;
mod error;
mod failpoints;
mod keys;
mod merges;
mod methods;
mod options;
mod plan;
mod rekey;
mod report;
mod schema;
mod survey;
mod throttle;

use std::time::Instant;

use crate::catalog::Name;
use combkey::Backend;

pub use audit::{Audit, Classifier, Kind, Rule};
pub use db::DatabaseUrl;
pub use error::{Error, ErrorKind};
pub use methods::OnlineOutcome;
pub use options::{ASSUMABLE, Inherited, Method, Online, Options, Progress, Quiet, RekeyInvalid, Triggers};
pub use plan::{Object, Plan, Reference, RewriteTarget, Skip, Step, StepKind, TableName};
pub use report::Report;
pub use schema::{IndexStats, default_makes};

use db::Db;

/// The tables a plan changes: the table, then every referencing table.
fn plan_tables(plan: &Plan) -> Vec<Name> {
    let mut tables: Vec<Name> = vec![(&plan.table).into()];
    for r in &plan.references {
        let t: Name = (&r.child).into();
        if !tables.contains(&t) {
            tables.push(t);
        }
    }
    tables
}

/// A connection to the database whose table to audit or convert.
pub struct Doctor {
    db: Db,
    /// The table whose run lock this session holds.
    locked: Vec<Name>,
}

impl Doctor {
    /// Connects (`postgres://`, `mysql://` or `mariadb://`, `sqlite:`). A password in the URL
    /// never appears in an error.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), combkey_doctor::Error> {
    /// use combkey::Backend;
    /// use combkey_doctor::{Doctor, ErrorKind};
    ///
    /// let doctor = Doctor::connect("sqlite::memory:").await?;
    /// assert_eq!(doctor.backend(), Backend::Sqlite);
    ///
    /// // No server listens on port 1: the error names the URL, never its password.
    /// let err = Doctor::connect("postgres://app:s3cret@127.0.0.1:1/shop").await.err().unwrap();
    /// assert_eq!(err.kind(), ErrorKind::Connection);
    /// assert!(err.to_string().contains("postgres://app:***@127.0.0.1:1/shop"));
    /// assert!(!err.to_string().contains("s3cret"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Doctor, Error> {
        Ok(Doctor { db: Db::connect(url).await?, locked: Vec::new() })
    }

    /// Connects to a URL read already ([`DatabaseUrl::parse`]), with a password given apart
    /// from it ([`DatabaseUrl::with_password`]) where it has one.
    pub async fn connect_to(url: &DatabaseUrl) -> Result<Doctor, Error> {
        Ok(Doctor { db: Db::connect_url(url).await?, locked: Vec::new() })
    }

    /// The database's backend.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), combkey_doctor::Error> {
    /// use combkey::Backend;
    /// use combkey_doctor::Doctor;
    ///
    /// let doctor = Doctor::connect("sqlite::memory:").await?;
    /// assert_eq!(doctor.backend(), Backend::Sqlite);
    /// assert_eq!(doctor.backend().column_type(), "BLOB"); // what the keys become
    /// # Ok(())
    /// # }
    /// ```
    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// Takes the run locks of `tables` (the table and every table referencing it) for this
    /// session, held until the connection ends, so that two doctors never plan or change the
    /// same table at once (also two parents that share a referencing table); the second is
    /// told and changes nothing.
    /// A lock still held is waited for up to `wait_ms` (the lock timeout): a doctor that was
    /// just killed holds its locks until the server has noticed its connection is gone.
    /// Refuses, before anything changes, a session that cannot write (a standby, a read-only
    /// role or server), saying why, instead of failing at the first write.
    async fn writable(&mut self) -> Result<(), Error> {
        let cat = self.db.catalog()?;
        if let Some(q) = cat.read_only()
            && let Some(why) = self.db.query(q).await?
        {
            return Err(Error::refused(format!("nothing was changed: {why}")));
        }
        Ok(())
    }

    async fn lock(&mut self, tables: &[Name], wait_ms: u64) -> Result<(), Error> {
        let deadline = Instant::now() + std::time::Duration::from_millis(wait_ms);
        let cat = self.db.catalog()?;
        if let Some(first) = tables.first()
            && !self.locked.contains(first)
        {
            // Another table's run: its locks go.
            for previous in std::mem::take(&mut self.locked) {
                if let Some(q) = cat.run_unlock(&previous) {
                    self.db.query(q).await?;
                }
            }
        }
        for table in tables {
            if self.locked.contains(table) {
                continue;
            }
            let mut taken = true;
            if let Some(q) = cat.run_lock(table) {
                loop {
                    taken = self.db.query(q.clone()).await?;
                    if taken || Instant::now() >= deadline {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
            if !taken {
                // Who holds it: often a run whose client was killed, whose server session goes
                // on with its statement (and its locks) until the statement ends.
                let holder = match cat.run_lock_holder(table) {
                    Some(q) => self.db.query(q).await.ok().flatten(),
                    None => None,
                };
                // "session 31366 (...": its id, for the command that ends it.
                let id = holder
                    .as_deref()
                    .and_then(|h| h.strip_prefix("session "))
                    .and_then(|h| h.split_whitespace().next())
                    .unwrap_or("<session>")
                    .to_string();
                let end = match self.backend() {
                    Backend::Postgres => format!("SELECT pg_terminate_backend({id})"),
                    _ => format!("KILL {id}"),
                };
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!(
                        "another combkey doctor is converting {table} right now: {} holds the lock \
                         combkey_doctor:{table}. If that is an earlier run whose client was stopped (killed, its \
                         connection lost), its session goes on until its statement ends, then rolls back: wait for it \
                         and run this again, or end it now ({end}; its transaction rolls back, a journaled run goes on \
                         from its journal). Nothing was changed",
                        holder.unwrap_or_else(|| "a session".into())
                    ),
                ));
            }
            self.locked.push(table.clone());
        }
        // The lock is a session's: still this one's (a pooler that slipped past the check at
        // connect would have given it to another client's session). If not, it is let go where
        // it can be, and nothing changes.
        if let Err(e) = self.db.same_session().await {
            for previous in std::mem::take(&mut self.locked) {
                if let Some(q) = cat.run_unlock(&previous) {
                    let _ = self.db.query(q).await;
                }
            }
            return Err(e);
        }
        Ok(())
    }

    async fn unfinished(&mut self, table: &Name, column: &str) -> Result<Option<(Plan, i64)>, Error> {
        let cat = self.db.catalog()?;
        methods::shared::Journal::unfinished(
            &mut self.db,
            cat,
            table.schema.as_deref(),
            &plan::journal_target(table, column),
        )
        .await
    }

    /// The audit: reads only. The keys are streamed, in two passes at most, and memory stays
    /// bounded whatever the table's size (at most 131,072 keys, or a sample of 65,536).
    ///
    /// `sample`: `None` reads every key; `Some(n)` reads about `n` keys drawn at random (a
    /// draw, so [`Report::read`] can be a little more or less than `n`).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-audit-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// // A SQLite table `orders` keyed by 20 RT.Comb `Sql` ids (made for SQL Server), as blobs,
    /// // and a table `order_lines` referencing it.
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(report.read(), 20);
    /// assert_eq!(report.audit().layouts.get("rtcomb-sql"), Some(&20));
    /// assert_eq!(report.referenced_by(), ["order_lines.order_id"]);
    /// println!("{}", report.text());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn audit(
        &mut self,
        table: &str,
        column: &str,
        sample: Option<usize>,
        options: Options,
    ) -> Result<Report, Error> {
        let started = Instant::now();
        let read = survey::read(&mut self.db, table, column, sample, &options).await?;
        // A column none of whose values is a UUID is no key of ids: the wrong column (a
        // name, a code), not a table with a few bad values to fix.
        if read.read > 0 && u64::try_from(read.unreadable.0).unwrap_or(0) == read.read {
            return Err(Error::usage(format!(
                "{}.{} holds no UUID: none of the {} values read is one ({}); give the key column of ids as --column",
                read.schema.table,
                read.schema.column.name,
                read.read,
                read.unreadable.1.first().cloned().unwrap_or_default()
            )));
        }
        let unfinished = self.unfinished(&read.schema.table, &read.schema.column.name).await?;
        let cat = self.db.catalog()?;
        let target = plan::journal_target(&read.schema.table, &read.schema.column.name);
        let unfinished_online = methods::shared::Journal::unfinished_online(
            &mut self.db,
            cat,
            read.schema.table.schema.as_deref(),
            &target,
        )
        .await?
        .is_some();
        let (plan, refusal) = match plan::build(self.db.backend(), &read.schema, &read.audit, &options) {
            Ok(p) => (Some(p), None),
            Err(e) if e.kind() == ErrorKind::Refused => (None, Some(e.to_string())),
            Err(e) => return Err(e),
        };
        Ok(Report {
            backend: self.db.backend(),
            rows: read.rows,
            read: usize::try_from(read.read).unwrap_or(usize::MAX),
            sampled: sample.is_some(),
            unreadable: read.unreadable,
            audit: read.audit,
            index: read.index,
            unfinished: unfinished.map(|(p, step)| (usize::try_from(step + 1).unwrap_or(0), p.steps.len())),
            unfinished_online,
            plan,
            refusal,
            schema: read.schema,
            first_pass_seconds: read.first_pass_seconds,
            keys_after_next: read.keys_after_next,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// The migration's plan, from every key (streamed; memory stays bounded). Refuses (an
    /// [`ErrorKind::Refused`] error naming them) what it cannot keep as it was: unreadable
    /// values, triggers or inheriting tables the options do not allow, checks or defaults a
    /// type change would break. An unfinished journaled run's plan, when there is one.
    ///
    /// From here on this session holds the table's run lock: a second doctor that plans or
    /// changes the same table meanwhile gets an [`ErrorKind::Conflict`] error and changes
    /// nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-plan-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// // `orders` is keyed by 20 RT.Comb `Sql` ids as blobs; `order_lines` references it.
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// assert_eq!(plan.converted.get("rtcomb-sql -> v7"), Some(&20));
    /// assert_eq!(plan.references[0].child.name, "order_lines");
    /// for step in &plan.steps {
    ///     println!("{:?}: {}", step.kind, step.what);
    /// }
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn plan(&mut self, table: &str, column: &str, options: Options) -> Result<Plan, Error> {
        schema::check_table_name(table)?;
        // An unknown table is told by the read below, with its hint.
        if let Some(name) = schema::resolve(&mut self.db, table).await? {
            self.lock(&[name], options.lock_timeout_ms).await?;
        }
        let read = survey::read(&mut self.db, table, column, None, &options).await?;
        let mut tables = vec![read.schema.table.clone()];
        tables.extend(read.schema.references.iter().map(|fk| fk.child.clone()));
        self.lock(&tables, options.lock_timeout_ms).await?;
        if let Some((plan, _)) = self.unfinished(&read.schema.table, &read.schema.column.name).await? {
            plan::refuse::resumed_with(&plan, &options)?;
            return Ok(plan);
        }
        let cat = self.db.catalog()?;
        let target = plan::journal_target(&read.schema.table, &read.schema.column.name);
        if let Some(plan) =
            methods::shared::Journal::unfinished_online(&mut self.db, cat, read.schema.table.schema.as_deref(), &target)
                .await?
        {
            plan::refuse::resumed_with(&plan, &options)?;
            self.journaled_plan_matches(&plan).await?;
            return Ok(plan);
        }
        if let Some(plan) = self.mirrored_run(&read.schema.table, &target).await? {
            plan::refuse::resumed_with(&plan, &options)?;
            return Ok(plan);
        }
        self.no_orphaned_swap(&read.schema.table).await?;
        if read.unreadable.0 > 0 {
            return Err(Error::refused(format!(
                "{} values of {}.{} are no UUID at all ({}): fix or remove them first; nothing was changed",
                read.unreadable.0,
                read.schema.table,
                read.schema.column.name,
                read.unreadable.1.join(", ")
            )));
        }
        plan::build(self.db.backend(), &read.schema, &read.audit, &options)
    }

    /// Whether the tables are still those a journaled `--online` run's plan describes (a table
    /// re-created from a backup, or altered, since the run stopped: its plan would copy or
    /// convert what is not there). A copy-and-swap run that had not swapped the tables is
    /// abandoned then (its copies and triggers go; nothing else changed); an in-place run is
    /// refused with the statement that forgets it.
    async fn journaled_plan_matches(&mut self, plan: &Plan) -> Result<(), Error> {
        // After its swap a run only finishes what follows it, on the tables it swapped in.
        if methods::swap::swapped(&mut self.db, plan).await? {
            return Ok(());
        }
        let cat = self.db.catalog()?;
        let backend = self.db.backend();
        let mut changed: Vec<String> = Vec::new();
        if plan.retypes() {
            changed.extend(plan.rewrites.iter().flat_map(|r| r.columns.clone()));
        }
        if plan.sets_default {
            changed.push(plan.column.clone());
        }
        let mut differs = None;
        for (t, before) in &plan.definitions {
            let now = self.db.query(cat.definition(&t.into())).await?;
            // What a stopped run leaves on them: its capture triggers, and (after a swap) its
            // foreign keys not validated yet.
            let now: String = now
                .lines()
                .filter(|l| {
                    !["CREATE TRIGGER combkey_doctor_capture ", "CREATE TRIGGER combkey_doctor_truncate "]
                        .iter()
                        .any(|o| l.starts_with(o))
                })
                .map(|l| if before.contains(l) { l } else { l.strip_suffix(" NOT VALID").unwrap_or(l) })
                .collect::<Vec<_>>()
                .join("\n");
            let (was, is) = (
                methods::shared::comparable(before, &changed, backend),
                methods::shared::comparable(&now, &changed, backend),
            );
            if was != is {
                differs = Some((Name::from(t), methods::shared::definition_change(&was, &is)));
                break;
            }
        }
        let Some((table, what)) = differs else { return Ok(()) };
        let cat = self.db.catalog()?;
        let journal = methods::shared::Journal::new(cat, plan);
        if journal.swap_state(&mut self.db, plan).await?.is_some() {
            self.lock(&plan_tables(plan), plan.options.lock_timeout_ms).await?;
            methods::swap::abandon(&mut self.db, plan).await?;
            return Err(Error::refused(format!(
                "{table} was changed (altered, or re-created) since an earlier --online copy-and-swap run stopped ({what}), \
                 so its copy is not the table any more: that run is abandoned, its copies and triggers gone; nothing else \
                 changed. Run again to start over"
            )));
        }
        let (_, journal_table) = cat.journal_table(plan.table.schema.as_deref());
        Err(Error::refused(format!(
            "the journal holds an unfinished --online run of {}.{} whose plan no longer matches {table} (it was altered \
             or re-created since: {what}): nothing was changed. If the table is as it should be, forget that run and run again: \
             DELETE FROM {journal_table} WHERE target = '{}'",
            Name::from(&plan.table),
            plan.column,
            plan.target().replace('\'', "''")
        )))
    }

    /// Writes the plan's statements as text to `out`, every mapping row written out
    /// (`--migration-sql`): the keys are read from the table as the text is written, in
    /// pages, so memory stays bounded whatever the table's size.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-script-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// // Review the SQL, or hand it to a DBA, instead of running it.
    /// let mut sql = Vec::new();
    /// doctor.script(&plan, &mut sql).await?;
    /// let sql = String::from_utf8(sql)?;
    /// assert!(sql.contains("orders"));
    /// // Writing it changed nothing: the plan is still to be run.
    /// assert_eq!(doctor.audit("orders", "id", None, Options::default()).await?.audit().layouts.get("rtcomb-sql"), Some(&20));
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn script(&mut self, plan: &Plan, out: &mut dyn std::io::Write) -> Result<(), Error> {
        methods::script::write(&mut self.db, plan, out).await
    }

    /// Runs `plan` (from [`plan`](Self::plan)); resumes an unfinished journaled run of it
    /// after the last step it finished. The keys are read from the table again as the
    /// mapping is written, in pages on a second session: memory stays bounded.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-apply-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options, Quiet};
    ///
    /// // `orders` is keyed by 20 RT.Comb `Sql` ids; `order_lines` references it.
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// doctor.apply(&plan, &mut Quiet).await?;
    ///
    /// let after = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(after.audit().layouts.get("v7"), Some(&20));
    /// assert_eq!(after.audit().time_order, Some(1.0)); // ORDER BY id is creation order now
    /// assert_eq!(after.keys_after_next(), 0); // new ids append at the index's right edge
    /// // Nothing is left to do.
    /// assert!(doctor.plan("orders", "id", Options::default()).await?.is_empty());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn apply(&mut self, plan: &Plan, progress: &mut dyn Progress) -> Result<(), Error> {
        let table: Name = (&plan.table).into();
        self.writable().await?;
        self.lock(&plan_tables(plan), plan.options.lock_timeout_ms).await?;
        let from = match self.unfinished(&table, &plan.column).await? {
            Some((journaled, step)) if journaled == *plan => usize::try_from(step + 1).unwrap_or(0),
            _ => 0,
        };
        // A journaled run stopped while its guards were up: they must still be there, or the
        // tables were re-created (a restore) or changed by hand since, and the journal's plan
        // no longer describes them.
        let guard = plan.steps.iter().position(|s| s.kind == StepKind::Guard);
        let unguard = plan.steps.iter().position(|s| s.kind == StepKind::Unguard);
        if let (Some(g), Some(u)) = (guard, unguard)
            && from > g
            && from <= u
        {
            let cat = self.db.catalog()?;
            let up = match cat.guards_up(&plan::guard_tag(plan)) {
                Some(q) => self.db.query(q).await?,
                None => true,
            };
            if !up {
                let (_, journal) = cat.journal_table(table.schema.as_deref());
                return Err(Error::refused(format!(
                    "the journal of an earlier run on {table}.{column} (stopped after step {from} of {steps}) does not \
                     match the tables: the triggers it put up are gone, so the tables were re-created or changed since. \
                     Nothing was changed. If the tables are as they should be, remove the journal's row and run again: \
                     DELETE FROM {journal} WHERE target = '{target}'",
                    target = plan.target().replace('\'', "''"),
                    column = plan.column,
                    steps = plan.steps.len(),
                )));
            }
        }
        methods::offline::run(&mut self.db, plan, from, progress).await
    }

    /// Runs `plan` online: in batches of short transactions while the application keeps
    /// reading and writing (see [`Online`]); resumes a killed online run of the same plan from
    /// its journal. Refuses a plan that changes the column's type (DDL) and, on PostgreSQL,
    /// referencing columns without an index.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use combkey_doctor::{Doctor, Online, Options, Quiet};
    ///
    /// let mut doctor = Doctor::connect(&std::env::var("DATABASE_URL")?).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// // Batches of 500 keys, pausing while other sessions wait for locks.
    /// let online = Online::default().with_batch_size(500).with_pause_when_busy(Some(4));
    /// let outcome = doctor.apply_online(&plan, &online, &mut Quiet).await?;
    /// println!("{} keys converted in {} batches", outcome.converted, outcome.batches);
    /// assert!(doctor.plan("orders", "id", Options::default()).await?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn apply_online(
        &mut self,
        plan: &Plan,
        online: &Online,
        progress: &mut dyn Progress,
    ) -> Result<OnlineOutcome, Error> {
        self.writable().await?;
        self.lock(&plan_tables(plan), plan.options.lock_timeout_ms).await?;
        if plan.retypes() && !self.resuming(plan).await? {
            let sql_mode = self.sql_mode().await?;
            plan::refuse::online_type_change(plan, online, sql_mode.as_deref())?;
        }
        let method = self.online_method(plan, online).await?;
        match method {
            (Method::CopySwap, _) => methods::swap::run(&mut self.db, plan, online, progress).await,
            (_, because) => {
                let mut out = methods::online::run(&mut self.db, plan, online, progress).await?;
                out.in_place_because = because;
                Ok(out)
            }
        }
    }

    /// Refuses a plan for a table whose copy and swap's mapping table is there while the
    /// journal has no run of it (PostgreSQL's journal is UNLOGGED, so a server crash empties
    /// it): after the swap the old-to-new pairs are only in that table, and a run that went on
    /// as if nothing had happened would find every key converted and never fill the key map.
    /// PostgreSQL: a copy and swap of `name` whose journal row a crash took, found by the copy
    /// of that row on its mapping table ([`Journal::mirror`](methods::shared::Journal::mirror)):
    /// its plan, to go on with, where it had swapped the tables; refused where it had not (its
    /// copy cannot be trusted to be where the lost row said: `--abandon` removes it).
    async fn mirrored_run(&mut self, name: &catalog::Name, target: &str) -> Result<Option<Plan>, Error> {
        if self.db.backend() != Backend::Postgres {
            return Ok(None);
        }
        let map = methods::swap::shared::derived(Backend::Postgres, name, "_", "_map");
        let Some((plan, step)) = methods::shared::Journal::mirrored(&mut self.db, &map).await? else {
            return Ok(None);
        };
        if plan.target() != target {
            return Ok(None);
        }
        if step >= methods::swap::shared::phase::SWAPPED {
            return Ok(Some(plan));
        }
        Err(Error::refused(format!(
            "a copy and swap of {name} stopped before its swap, and the journal lost its row: PostgreSQL's journal table \
             is not crash-safe (UNLOGGED), so a server restart empties it. The application's tables are as they were. \
             Run this command with --abandon (it removes what the run made: {map}, the copies, the logs, the capture \
             triggers), then the command again. Nothing was changed"
        )))
    }

    async fn no_orphaned_swap(&mut self, name: &catalog::Name) -> Result<(), Error> {
        if self.db.backend() != Backend::Postgres {
            return Ok(());
        }
        let map = methods::swap::shared::derived(Backend::Postgres, name, "_", "_map");
        if schema::resolve(&mut self.db, &map.quoted(Backend::Postgres)).await?.is_none() {
            return Ok(());
        }
        Err(Error::refused(format!(
            "{map} is the mapping table of a copy and swap of {name}, and the journal holds no run of it: PostgreSQL's \
             journal table is not crash-safe (UNLOGGED), so a server restart may have emptied it. If the tables were \
             swapped (the keys are v7), the old-to-new pairs are only there: keep them as the key map (INSERT INTO \
             the key map (old_key, new_key) SELECT old::uuid, new::uuid FROM {map} WHERE old::uuid <> new::uuid), then \
             drop {map} and the run's other work tables (_{}_log, _{}_new, the capture triggers); if they were not \
             swapped, drop what the run made. Nothing was changed",
            name.name, name.name
        )))
    }

    /// Whether a stopped online run of `plan`'s table is in its journal (it goes on the way it
    /// began, whatever was decided before it began).
    async fn resuming(&mut self, plan: &Plan) -> Result<bool, Error> {
        let cat = self.db.catalog()?;
        if !self.db.query(cat.journal_exists(plan.table.schema.as_deref())).await? {
            return Ok(false);
        }
        let journal = methods::shared::Journal::new(cat, plan);
        Ok(journal.swap_state(&mut self.db, plan).await?.is_some()
            || journal.online_cursor(&mut self.db, plan).await?.is_some())
    }

    /// MySQL/MariaDB: the server's global `sql_mode`, which the application's new sessions
    /// take (`None` elsewhere).
    async fn sql_mode(&mut self) -> Result<Option<String>, Error> {
        if self.db.backend() != Backend::MySql {
            return Ok(None);
        }
        let rows = self.db.rows("SELECT @@GLOBAL.sql_mode", &[]).await?;
        Ok(Some(rows.into_iter().next().and_then(|r| r.into_iter().next().flatten()).unwrap_or_default()))
    }

    /// The method [`apply_online`](Self::apply_online) would run `plan` by, and, where
    /// [`Method::Auto`] chose to change the keys in place, why copy and swap cannot run here.
    /// A stopped run goes on the way it began. Reads only. An error where the plan changes the
    /// column's type (which only copy and swap does online) and copy and swap cannot run.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use combkey_doctor::{Doctor, Method, Online, Options};
    ///
    /// let mut doctor = Doctor::connect(&std::env::var("DATABASE_URL")?).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// match doctor.online_method(&plan, &Online::default()).await? {
    ///     (Method::CopySwap, _) => println!("a copy of orders and its referencing tables, then a swap"),
    ///     (_, Some(why)) => println!("in place, because {why}"),
    ///     (m, None) => println!("{}", m.name()),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn online_method(&mut self, plan: &Plan, online: &Online) -> Result<(Method, Option<String>), Error> {
        let cat = self.db.catalog()?;
        let journal = methods::shared::Journal::new(cat, plan);
        let journaled = self.db.query(cat.journal_exists(plan.table.schema.as_deref())).await?;
        // A stopped run goes on the way it began, whatever method is asked for now (the advice
        // `--method in-place` after a stopped copy and swap ended "done" with its key map
        // empty and its work tables left).
        Ok(match online.method {
            _ if journaled && journal.swap_state(&mut self.db, plan).await?.is_some() => (Method::CopySwap, None),
            _ if journaled && journal.online_cursor(&mut self.db, plan).await?.is_some() => (Method::InPlace, None),
            Method::Auto if cat.backend() == Backend::Sqlite => (Method::InPlace, None),
            Method::Auto => match methods::swap::refusal(&mut self.db, plan).await? {
                None => (Method::CopySwap, None),
                Some(why) if plan.retypes() => {
                    return Err(Error::refused(format!(
                        "the column's type changes ({} to {}), which only copy and swap does online, and it cannot run \
                         here: {why}. Run without --online (a maintenance window), or change what stops it. Nothing \
                         was changed",
                        plan.column_type, plan.final_type
                    )));
                }
                Some(why) => (Method::InPlace, Some(why)),
            },
            m => (m, None),
        })
    }

    /// Removes what a stopped `--online` copy-and-swap run on `table`'s `column` made (the
    /// copies, the triggers that fed them, its work tables) and forgets the run: `Ok(true)`;
    /// `Ok(false)` where there is none. The tables stay as they were: the run had not swapped
    /// them (once it has, running it again finishes it, and this is refused).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use combkey_doctor::Doctor;
    ///
    /// let mut doctor = Doctor::connect(&std::env::var("DATABASE_URL")?).await?;
    /// if doctor.abandon("orders", "id").await? {
    ///     println!("the stopped run's tables and triggers are gone; orders is as it was");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn abandon(&mut self, table: &str, column: &str) -> Result<bool, Error> {
        schema::check_table_name(table)?;
        let cat = self.db.catalog()?;
        let Some(name) = schema::resolve(&mut self.db, table).await? else {
            return Err(Error::usage(format!("no table {table:?}")));
        };
        let column = catalog::unquote(column);
        let target = plan::journal_target(&name, &column);
        let mut found =
            methods::shared::Journal::unfinished_online(&mut self.db, cat, name.schema.as_deref(), &target).await?;
        // PostgreSQL: a run whose journal row a crash took, from the row's copy on its mapping
        // table, put back so that it is abandoned as any stopped run.
        if found.is_none() && self.db.backend() == Backend::Postgres {
            let map = methods::swap::shared::derived(Backend::Postgres, &name, "_", "_map");
            if let Some((plan, _)) = methods::shared::Journal::mirrored(&mut self.db, &map).await?
                && plan.target() == target
            {
                self.writable().await?;
                let journal = methods::shared::Journal::new(cat, &plan);
                journal.ensure(&mut self.db, name.schema.as_deref()).await?;
                journal.restore_mirror(&mut self.db, &map).await?;
                found = Some(plan);
            }
        }
        let Some(plan) = found else {
            return Ok(false);
        };
        self.writable().await?;
        self.lock(&plan_tables(&plan), plan.options.lock_timeout_ms).await?;
        methods::swap::abandon(&mut self.db, &plan).await
    }

    /// Rebuilds the primary key's index online (PostgreSQL `REINDEX INDEX CONCURRENTLY`,
    /// MySQL/MariaDB `ALTER TABLE ... FORCE, ALGORITHM=INPLACE, LOCK=NONE`, SQLite `REINDEX`):
    /// its size before and after, in bytes, where the database tells.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&std::env::var("DATABASE_URL")?).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// if let Some(why) = report.bloat() {
    ///     println!("orders' primary key is bloated: {why}");
    ///     let (before, after) = doctor.rebuild_index("orders").await?;
    ///     println!("index: {before:?} -> {after:?} bytes");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn rebuild_index(&mut self, table: &str) -> Result<(Option<i64>, Option<i64>), Error> {
        schema::check_table_name(table)?;
        let cat = self.db.catalog()?;
        let name =
            schema::resolve(&mut self.db, table).await?.ok_or_else(|| Error::usage(format!("no table {table:?}")))?;
        let before = self.db.query(cat.index_size(&name)).await?;
        let index = match cat.primary_key_index(&name) {
            Some(q) => self.db.query(q).await?,
            None => None,
        };
        self.db.exec_all(&cat.rebuild_primary_key(&name, index.as_deref())).await?;
        let after = self.db.query(cat.index_size(&name)).await?;
        Ok((before, after))
    }

    /// Whether `plan` resumes a run a journal keeps: `Some(step)`, the index in the plan's
    /// steps that an earlier, stopped run of the same plan goes on from, or `None` for a new
    /// run.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-resumes-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// match doctor.resumes(&plan).await? {
    ///     Some(step) => println!("an earlier run stopped: going on from step {step}"),
    ///     None => println!("a new run"),
    /// }
    /// // No run of this plan was ever started on this database.
    /// assert_eq!(doctor.resumes(&plan).await?, None);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn resumes(&mut self, plan: &Plan) -> Result<Option<usize>, Error> {
        let table: Name = (&plan.table).into();
        Ok(match self.unfinished(&table, &plan.column).await? {
            Some((journaled, step)) if journaled == *plan => Some(usize::try_from(step + 1).unwrap_or(0)),
            _ => None,
        })
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
