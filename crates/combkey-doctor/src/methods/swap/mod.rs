//! `--online` by copy and swap: the table and every table that references it are copied into
//! new tables that hold the converted keys (and the key column's new type), the application's
//! changes meanwhile are carried over, and the new tables take the old ones' names in one
//! atomic step. The old tables stay, under new names, until the user drops them.
//!
//! How the field's online rewriters do it, and what is taken from each:
//!
//! - **pg_repack** (PostgreSQL): a trigger writes the primary key of every changed row to a log
//!   table; the rows are copied, the indexes built on the copy afterwards (sorted builds: leaves
//!   full), the log applied in rounds, and the swap done in one transaction under an `ACCESS
//!   EXCLUSIVE` lock taken in attempts that never wait long (`lock_exclusive`). PostgreSQL's
//!   DDL is transactional, so the swap with the log's last rows is all or nothing; a run killed
//!   before it leaves the old tables in place ([`postgres`]).
//! - **pt-online-schema-change** (MySQL/MariaDB): triggers write every change through to the
//!   new table as it happens, the rows are copied in chunks, and one `RENAME TABLE` swaps the
//!   tables atomically. A log drained at the swap cannot be used there: MariaDB gives queued
//!   writers the old table before a waiting `RENAME` (gh-ost's two-session cut-over loses
//!   them; measured on 10.11), and renaming under `LOCK TABLES` one table at a time makes
//!   queued writers fail ("table doesn't exist"). With write-through triggers a write that
//!   reaches the old table just before the rename is in the new one too ([`mysql`]).
//!
//! Change capture by triggers rather than by the replication log (gh-ost's binlog, PostgreSQL's
//! logical decoding): it needs no `wal_level = logical`, replication slot, binary log in row
//! format or replication grant, and a change is captured in the application's own transaction,
//! so nothing lags behind it at the swap.
//!
//! Keys are converted by combkey: the conversions fill a mapping table of old and new values
//! that the copy and the triggers join. On MySQL/MariaDB the keys the application writes
//! during the run, which the table does not hold, are converted by the server as they are
//! written, where its conversion is combkey's ([`server_keys`]), checked before the swap.

use crate::methods::shared::OnlineOutcome;
use crate::options::{Online, Progress};

use crate::db::Db;
use crate::error::Error;
use crate::plan::Plan;

mod mysql;
mod postgres;
mod server_keys;
pub(crate) mod shared;

use shared::{Swap, phase};
/// Runs `plan` online by copy and swap (see the module's docs).
pub(crate) async fn run(
    db: &mut Db,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<OnlineOutcome, Error> {
    match db.backend() {
        combkey::Backend::Postgres => postgres::run(db, plan, online, progress).await,
        combkey::Backend::MySql => mysql::run(db, plan, online, progress).await,
        other => Err(Error::refused(format!(
            "{other}: copy and swap runs on PostgreSQL and MySQL/MariaDB (SQLite has one writer at a time: run without \
             --online)"
        ))),
    }
}

/// Whether a copy-and-swap run of `plan` that the journal holds has swapped the tables.
pub(crate) async fn swapped(db: &mut Db, plan: &Plan) -> Result<bool, Error> {
    let cat = db.catalog()?;
    let journal = crate::methods::shared::Journal::new(cat, plan);
    let Some((at, _)) = journal.swap_state(db, plan).await? else { return Ok(false) };
    if at >= phase::SWAPPED {
        return Ok(true);
    }
    match db.backend() {
        combkey::Backend::MySql => {
            let swap = Swap::of(db, plan).await?;
            mysql::swapped(db, &swap).await
        }
        _ => Ok(false),
    }
}

/// Removes what a stopped copy-and-swap run of `plan` made (its copies, triggers, logs and
/// mapping table) and forgets it: `Ok(true)`; `Ok(false)` where the journal holds no such run.
/// Refused once the tables are swapped: the run is then finished by running it again.
pub(crate) async fn abandon(db: &mut Db, plan: &Plan) -> Result<bool, Error> {
    let cat = db.catalog()?;
    let journal = crate::methods::shared::Journal::new(cat, plan);
    let Some((at, _)) = journal.swap_state(db, plan).await? else { return Ok(false) };
    let swap = Swap::of(db, plan).await?;
    let swapped = match db.backend() {
        combkey::Backend::MySql => mysql::swapped(db, &swap).await?,
        _ => at >= phase::SWAPPED,
    };
    if swapped || at >= phase::SWAPPED {
        return Err(Error::refused(format!(
            "the copy-and-swap run of {} swapped the tables already (the application has the converted keys): run the \
             same command again to finish what follows the swap; there is nothing to abandon",
            plan.target()
        )));
    }
    match db.backend() {
        combkey::Backend::MySql => {
            journal.abandoning(db).await?;
            mysql::clean(db, &swap).await?
        }
        _ => postgres::clean(db, &swap, plan.options.lock_timeout_ms, &mut crate::options::Quiet).await?,
    }
    shared::drop_installed_functions(db, plan).await?;
    journal.forget(db).await?;
    Ok(true)
}

/// Why `plan` cannot run by copy and swap on this database, where it cannot (read from the
/// catalog; changes nothing).
pub(crate) async fn refusal(db: &mut Db, plan: &Plan) -> Result<Option<String>, Error> {
    let why = match db.backend() {
        combkey::Backend::Postgres => postgres::refusal(db, plan).await?,
        combkey::Backend::MySql => mysql::refusal(db, plan).await?,
        _ => Some("SQLite has one writer at a time".into()),
    };
    Ok(why)
}
