//! Runs a plan: exactly its steps, in order. A plan that is one transaction rolls back whole on
//! any failure; a journaled plan (MySQL/MariaDB DDL) records each step it finished in the
//! journal table, in the same transaction where the step is transactional, so a re-run after a
//! crash at any step resumes after the last finished one and every step is safe to run again.

use crate::catalog::{Catalog, Column, Name, Stored};
use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::keys::{KeyChange, Source, key_map_rows};
use crate::methods::shared::{
    Journal, MAP_BATCH, comparable, ddl_in_tries, each_change_page, key_map_twins, key_sources, lock_in_attempts,
};
use crate::options::Progress;
use crate::plan::{Plan, Skip, StepKind};

/// Whether a step's work is already done (it ran before a crash).
async fn skipped(db: &mut Db, skip: &Skip) -> Result<bool, Error> {
    let cat = db.catalog()?;
    match skip {
        Skip::ForeignKeyAbsent { table, name, column } | Skip::ForeignKeyPresent { table, name, column } => {
            let _ = (table, column);
            // The foreign keys that reference the key column now.
            let present = fk_present(db, cat, table, name).await?;
            Ok(matches!(skip, Skip::ForeignKeyAbsent { .. }) != present)
        }
        Skip::ColumnType { table, column, data_type } => {
            let cols: Vec<Column> = db.query(cat.columns(&table.into())).await?;
            Ok(cols.iter().any(|c| c.name == *column && c.data_type == *data_type))
        }
    }
}

async fn fk_present(db: &mut Db, cat: &dyn Catalog, table: &crate::plan::TableName, name: &str) -> Result<bool, Error> {
    let def = db.query(cat.definition(&table.into())).await?;
    Ok(def.contains(&format!("CONSTRAINT {} ", db.backend().quote(name)))
        || def.contains(&format!("CONSTRAINT {name} ")))
}

/// Runs `plan` from step `from` (0, or after the last one a journal says finished).
pub(crate) async fn run(db: &mut Db, plan: &Plan, from: usize, progress: &mut dyn Progress) -> Result<(), Error> {
    let cat = db.catalog()?;
    let journal = plan.journaled().then(|| Journal::new(cat, plan));
    #[cfg(feature = "failpoints")]
    let fail_after = crate::failpoints::stop_at("STEP").and_then(|n| usize::try_from(n).ok());
    let total = plan.steps.len();
    let mut in_tx = false;
    // Whether the run's one transaction committed (a failure after it changes nothing back).
    let mut committed = false;
    // The journal's row exists from its step on.
    let journal_step = plan.steps.iter().position(|s| s.kind == StepKind::Journal);
    let mut journal_open = journal_step.is_some_and(|j| from > j);
    // Session settings hold for this connection only: a resumed run sets them again; and it
    // makes the key map again where it went meanwhile (its statements make it only if absent).
    if from > 0 {
        for s in
            plan.steps.iter().filter(|s| matches!(s.kind, StepKind::Session | StepKind::KeyMap) && !s.in_transaction)
        {
            db.exec_all(&s.sql).await?;
        }
    }
    // The step under way (for the message of a failure).
    let mut current: Option<&crate::plan::Step> = None;
    let mut began = false;
    let result: Result<(), Error> = async {
        for (i, step) in plan.steps.iter().enumerate().skip(from) {
            current = Some(step);
            began |= step.kind == StepKind::Begin;
            progress.step(i + 1, total, &step.what);
            let skip = match &step.skip {
                Some(s) => skipped(db, s).await?,
                None => false,
            };
            if !skip {
                match step.kind {
                    StepKind::Journal => {
                        let j = journal.as_ref().ok_or_else(|| Error::new(ErrorKind::Database, "a journal step without a journal"))?;
                        j.ensure(db, plan.table.schema.as_deref()).await?;
                        j.start(db, plan, i).await?;
                    }
                    StepKind::Map => {
                        db.exec_all(&step.sql).await?;
                        let sources = key_sources(db, plan).await?;
                        let total: usize = plan.converted.values().sum();
                        let mut done = 0;
                        let key_map = plan.key_map.as_ref().map(Name::from);
                        let mut write = async |db: &mut Db, page: Vec<KeyChange>| -> Result<(), Error> {
                            for chunk in page.chunks(MAP_BATCH) {
                                let rows: Vec<(Stored, Stored)> = chunk.iter().map(|c| (c.old.clone(), c.new.clone())).collect();
                                db.exec(&cat.insert_map(&rows)).await?;
                                if let Some(map) = &key_map {
                                    let kept = key_map_rows(plan, chunk)?;
                                    if !kept.is_empty() {
                                        key_map_twins(db, cat, map, &kept, Source::of(plan)).await?;
                                        db.exec(&cat.key_map_insert(map, &kept)).await?;
                                    }
                                }
                                done += chunk.len();
                                progress.keys(done.min(total.max(done)), total.max(done));
                            }
                            Ok(())
                        };
                        if cat.cursor("k", "").is_some() {
                            // Through a cursor in this transaction (PostgreSQL; SQLite: a
                            // temporary table), a page at a time: the tables are locked against writes (a type change: against
                            // reads too), so no other session could read them meanwhile.
                            for sql in &sources {
                                let Some((declare, fetch, close)) = cat.cursor("combkey_doctor_keys", sql) else { break };
                                db.exec(&declare).await?;
                                loop {
                                    let rows = db.rows(&fetch, &[]).await?;
                                    if rows.is_empty() {
                                        break;
                                    }
                                    let page = Source::of(plan).changes_of(cat, &rows)?;
                                    if !page.is_empty() {
                                        write(db, page).await?;
                                    }
                                }
                                db.exec(&close).await?;
                            }
                        } else {
                            // On a second session while this one writes the mapping (its
                            // temporary table is this session's), a page at a time.
                            let mut reader = db.another().await?;
                            reader.exec_all(&cat.reader_session()).await?;
                            each_change_page(&mut reader, &sources, plan, async |page| write(db, page).await).await?;
                        }
                    }
                    StepKind::NewKeysFree => {
                        for sql in &step.sql {
                            let rows = db.rows(sql, &[]).await?;
                            if !rows.is_empty() {
                                let pairs: Vec<String> = rows
                                    .iter()
                                    .map(|r| {
                                        let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                                        format!("{} would become {}, a key the table holds already", v(0), v(1))
                                    })
                                    .collect();
                                return Err(Error::refused(format!(
                                    "the conversion would make keys the table holds already: {}. Nothing was changed; \
                                     remove or change one of each pair first",
                                    pairs.join("; ")
                                )));
                            }
                        }
                    }
                    StepKind::Verify => {
                        for sql in &step.sql {
                            let rows = db.rows(sql, &[]).await?;
                            let bad = if sql.starts_with("PRAGMA") {
                                rows.len()
                            } else {
                                rows.first().and_then(|r| r.first().cloned().flatten()).and_then(|v| v.parse().ok()).unwrap_or(0)
                            };
                            if bad > 0 {
                                return Err(Error::new(
                                    ErrorKind::Verification,
                                    format!("{bad} rows fail the check {}", crate::db::short(sql)),
                                ));
                            }
                        }
                    }
                    StepKind::CompareDefinitions => {
                        // For tests: this check fails, as a definition another session changed
                        // between the commit and the check once made it.
                        #[cfg(feature = "failpoints")]
                        if crate::failpoints::fail("DEFINITIONS_CHECK") {
                            return Err(Error::new(
                                ErrorKind::Verification,
                                "the definitions differ (COMBKEY_DOCTOR_FAIL_DEFINITIONS_CHECK)",
                            ));
                        }
                        let mut retyped = Vec::new();
                        if plan.retypes() {
                            for r in &plan.rewrites {
                                retyped.extend(r.columns.iter().cloned());
                            }
                        }
                        // `--set-default` changes the key column's default on purpose.
                        if plan.sets_default {
                            retyped.push(plan.column.clone());
                        }
                        for (t, before) in &plan.definitions {
                            let now = db.query(cat.definition(&t.into())).await?;
                            if comparable(before, &retyped, db.backend()) != comparable(&now, &retyped, db.backend()) {
                                return Err(Error::new(
                                    ErrorKind::Verification,
                                    format!(
                                        "the definition of {} differs from before the change beyond the key column's type:\n\
                                         before:\n{before}\nnow:\n{now}",
                                        Name::from(t)
                                    ),
                                ));
                            }
                        }
                    }
                    StepKind::Lock => lock_in_attempts(db, &step.sql, plan.options.lock_timeout_ms, &[]).await?,
                    // After the commit (MySQL/MariaDB's trigger, DDL that commits on its own):
                    // in short tries that never queue the application's writes behind it, and
                    // a failure is never a mere check (inserts without a key need it).
                    StepKind::SetDefault if !step.in_transaction => {
                        let total = plan.options.lock_timeout_ms.saturating_mul(crate::methods::shared::SET_DEFAULT_TRIES);
                        let restore = cat.session(plan.options.lock_timeout_ms);
                        let alone = crate::methods::shared::locks_alone(db, &Name::from(&plan.table)).await?;
                        if let Err(e) = ddl_in_tries(db, &step.sql, total, &restore, alone, &mut *progress).await {
                            return Err(set_default_missing(plan, committed, e));
                        }
                    }
                    StepKind::Done => {
                        if let Some(j) = &journal {
                            j.finish(db).await?;
                        }
                    }
                    _ => db.exec_all(&step.sql).await?,
                }
            }
            match step.kind {
                StepKind::Begin => in_tx = true,
                StepKind::Commit => {
                    in_tx = false;
                    committed = true;
                }
                _ => {}
            }
            if step.kind == StepKind::Journal {
                journal_open = true;
            } else if let Some(j) = &journal
                && journal_open
                && step.kind != StepKind::Done
            {
                j.advance(db, i).await?;
            }
            // As a kill would: no rollback, no clean-up.
            #[cfg(feature = "failpoints")]
            if fail_after == Some(i) {
                crate::failpoints::abort(&format!(
                    "stopping after step {} of --migration-sql (COMBKEY_DOCTOR_FAIL_AFTER_STEP={i} counts from 0)",
                    i + 1
                ));
            }
        }
        Ok(())
    }
    .await;
    if let Err(e) = result {
        if in_tx {
            let _ = db.exec("ROLLBACK").await;
        }
        // The indexes built for the foreign key checks go too (a kill leaves them to the next
        // run, which drops and builds them again): the last statement of each step that builds
        // one drops it. One whose drop fails too (it waits for the same transactions its build
        // waited for) is named.
        let mut left = String::new();
        if !plan.journaled() {
            for s in plan
                .steps
                .iter()
                .filter(|s| s.kind == StepKind::TemporaryIndex && !s.in_transaction && s.sql.len() == 1)
            {
                if db.exec_all(&s.sql).await.is_err() {
                    left.push_str(&format!(
                        "; this run's index for the foreign key checks is still there (its drop failed too): the next \
                         run drops it, or run {}",
                        s.sql[0]
                    ));
                }
            }
        }
        // A concurrent index build waits for every transaction older than it, on any table.
        let mut waited = String::new();
        if let Some(step) = current
            && step.kind == StepKind::TemporaryIndex
            && e.kind() == ErrorKind::LockTimeout
            && let Some(q) = cat.oldest_transactions()
            && let Ok(Some(oldest)) = db.query(q).await
        {
            waited = format!(
                "; CREATE INDEX CONCURRENTLY waits for every transaction that began before it, on any table of the \
                 database, and these were still open: {oldest}. Run again once they end, or with a longer \
                 --lock-timeout"
            );
        } else if e.kind() == ErrorKind::LockTimeout
            && let Some(q) = cat.oldest_transactions()
            && let Ok(Some(oldest)) = db.query(q).await
        {
            // Who may hold the lock: the server names no holder of a row or metadata lock.
            waited = format!("; the oldest open transactions, one of which may hold the lock: {oldest}");
        }
        if let Some((_, on)) = cat.fk_checks_off() {
            let _ = db.exec_all(&on).await;
        }
        if e.kind() == ErrorKind::Incomplete {
            return Err(e);
        }
        if committed && !plan.journaled() {
            return Err(Error::new(
                ErrorKind::AfterCommit,
                format!(
                    "combkey doctor: the keys are converted (the run's transaction committed); a check after the \
                     commit failed: {e}"
                ),
            ));
        }
        let hint = if plan.journaled() {
            "; the journal keeps the plan and the step reached: run the same command again to finish (other sessions' \
             writes to these tables are refused until then)"
        } else if began {
            "; it was one transaction, rolled back: nothing changed"
        } else {
            "; before its transaction began: no key changed"
        };
        let collision = Source::of(plan).hint(&e);
        return Err(e
            .context("combkey doctor")
            .with_hint(collision)
            .with_hint(&waited)
            .with_hint(hint)
            .with_hint(&left));
    }
    // An online run in place that stopped (its journal's row, state `online`) is done with this
    // one, which converted every key of its plan: its row would make the audits say to run it
    // again. (A stopped copy and swap's row stays: its copies and triggers are its own.)
    // After the commit: a failure here is no failure of the run (the audits would only go on
    // saying to run the online run again).
    let _ = Journal::new(cat, plan).finish_in_place(db, plan.table.schema.as_deref()).await;
    Ok(())
}

/// The error of a `--set-default` whose trigger could not be made after the keys converted:
/// not a passing check, since an insert without a key needs it.
fn set_default_missing(plan: &Plan, committed: bool, e: Error) -> Error {
    if !committed || plan.journaled() {
        return e;
    }
    Error::new(
        ErrorKind::Incomplete,
        format!(
            "combkey doctor: the keys of {}.{} are converted (the run's transaction committed), but --set-default's \
             trigger that makes new keys is NOT in place: {e}. Until it is, an insert that gives no key gets the \
             column's old default, or fails where the column has none. Run the same command again to put it in \
             place (it converts nothing more) once the other sessions' transactions that read or wrote the table \
             have ended",
            plan.table, plan.column
        ),
    )
}

#[cfg(test)]
mod tests {
    use sqlx::Connection as _;

    use crate::methods::fixture::Orders;
    use crate::options::Quiet;

    #[tokio::test(flavor = "current_thread")]
    async fn the_plans_steps_convert_every_key_and_its_references() {
        let orders = Orders::new("offline", 30).await;
        let (mut doctor, plan) = orders.plan().await;
        assert!(orders.unchanged(&orders.url).await);
        super::run(&mut doctor.db, &plan, 0, &mut Quiet).await.expect("the run");
        assert!(orders.converted(&orders.url).await, "every key is its conversion, every line its order's");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_run_that_fails_at_a_step_changes_nothing() {
        let orders = Orders::new("offline-fails", 30).await;
        let (mut doctor, plan) = orders.plan().await;
        // After the plan: a line whose order does not exist (written with the checks off), which
        // the plan's check of the references finds at its end, after every key changed.
        let mut db = sqlx::SqliteConnection::connect(&orders.url).await.expect("the file");
        sqlx::raw_sql("PRAGMA foreign_keys = OFF; INSERT INTO order_lines (order_id) VALUES (x'00112233445566778899aabbccddeeff')")
            .execute(&mut db)
            .await
            .expect("an orphan");
        drop(db);
        let e = super::run(&mut doctor.db, &plan, 0, &mut Quiet).await.expect_err("the check fails");
        assert!(e.to_string().contains("nothing changed"), "{e}");
        let (rows, lines) = Orders::rows(&orders.url).await;
        assert_eq!(lines.len(), orders.made.len() + 1);
        assert!(rows.iter().all(|(note, key)| {
            let i: usize = note.trim_start_matches("order ").parse().expect("a note");
            *key == orders.made[i]
        }));
        assert_eq!(&lines[..orders.made.len()], &orders.made[..], "the lines keep their orders' keys");
    }
}
