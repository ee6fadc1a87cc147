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

use crate::catalog::string_literal;
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
    drop_installed_functions(db, plan).await?;
    journal.forget(db).await?;
    Ok(true)
}

/// Drops the SQL functions that `plan`'s run installed for `--set-default` (none of them was
/// there before it) when what the run made goes before its swap (abandoned, or failed), where
/// nothing else the catalog shows calls them: a default, trigger, view, event or other
/// function. (A call from the application's own SQL the catalog cannot show: made since the
/// run installed them, it would be a call of a function the run had just made.) PostgreSQL
/// refuses the drop where an object depends on one; that keeps them too.
pub(super) async fn drop_installed_functions(db: &mut Db, plan: &Plan) -> Result<(), Error> {
    if !plan.installs_functions {
        return Ok(());
    }
    match db.backend() {
        combkey::Backend::Postgres => {
            let callers = db
                .count(
                    "SELECT count(*) FROM pg_proc WHERE prosrc ~ 'combkey_(v7|unix_ms|time)' \
                     AND NOT (proname IN ('combkey_v7', 'combkey_unix_ms', 'combkey_time') \
                     AND pronamespace = to_regnamespace(current_schema()))",
                )
                .await?;
            if callers == 0 {
                match db.exec("DROP FUNCTION IF EXISTS combkey_time(uuid), combkey_unix_ms(uuid), combkey_v7()").await {
                    // A default, view or index depends on one (2BP01): kept.
                    Err(e) if e.code() == Some("2BP01") => {}
                    other => drop(other?),
                }
            }
        }
        combkey::Backend::MySql => {
            let schema = match plan.table.schema.clone() {
                Some(s) => s,
                None => db
                    .rows("SELECT DATABASE()", &[])
                    .await?
                    .first()
                    .and_then(|r| r.first().cloned().flatten())
                    .unwrap_or_default(),
            };
            let mine = "'combkey_v7', 'combkey_v7_from', 'combkey_unix_ms', 'combkey_time'";
            // Unqualified calls in the same database, qualified ones from any.
            let calls = |schema_col: &str, def_col: &str| {
                format!(
                    "(({schema_col} = {s} AND {def_col} LIKE '%combkey\\_%') OR {def_col} LIKE {q1} OR {def_col} LIKE {q2} \
                     OR {def_col} LIKE {q3})",
                    s = string_literal(&schema),
                    q1 = string_literal(&format!("%{schema}`.combkey\\_%")),
                    q2 = string_literal(&format!("%{schema}`.`combkey\\_%")),
                    q3 = string_literal(&format!("%{schema}.combkey\\_%")),
                )
            };
            let callers = db
                .count(&format!(
                    "SELECT (SELECT count(*) FROM information_schema.TRIGGERS WHERE {}) \
                     + (SELECT count(*) FROM information_schema.VIEWS WHERE {}) \
                     + (SELECT count(*) FROM information_schema.EVENTS WHERE {}) \
                     + (SELECT count(*) FROM information_schema.COLUMNS WHERE {} OR {}) \
                     + (SELECT count(*) FROM information_schema.ROUTINES WHERE {} \
                        AND NOT (ROUTINE_SCHEMA = {} AND ROUTINE_NAME IN ({mine})))",
                    calls("TRIGGER_SCHEMA", "ACTION_STATEMENT"),
                    calls("TABLE_SCHEMA", "VIEW_DEFINITION"),
                    calls("EVENT_SCHEMA", "EVENT_DEFINITION"),
                    calls("TABLE_SCHEMA", "COLUMN_DEFAULT"),
                    calls("TABLE_SCHEMA", "GENERATION_EXPRESSION"),
                    calls("ROUTINE_SCHEMA", "ROUTINE_DEFINITION"),
                    string_literal(&schema)
                ))
                .await?;
            if callers == 0 {
                let db_name = combkey::Backend::MySql.quote(&schema);
                for f in ["combkey_time", "combkey_unix_ms", "combkey_v7", "combkey_v7_from"] {
                    db.exec(&format!("DROP FUNCTION IF EXISTS {db_name}.{f}")).await?;
                }
            }
        }
        _ => {}
    }
    Ok(())
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
