//! Runs a plan: exactly its steps, in order. A plan that is one transaction rolls back whole on
//! any failure; a journaled plan (MySQL/MariaDB DDL) records each step it finished in the
//! journal table, in the same transaction where the step is transactional, so a re-run after a
//! crash at any step resumes after the last finished one and every step is safe to run again.

use crate::catalog::{Catalog, Column, Name, Stored};
use combkey::Comb;
use combkey::adapter::{ColumnKind, from_column};

use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::plan::{Plan, Skip, StepKind, new_id};

/// Rows per `INSERT` into the mapping table.
pub(crate) const MAP_BATCH: usize = 1000;

/// What the run reports as it goes.
pub trait Progress {
    /// A step starts.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey_doctor::Progress;
    ///
    /// /// Progress on standard error, as `combkey doctor --apply` shows it.
    /// struct Stderr;
    ///
    /// impl Progress for Stderr {
    ///     fn step(&mut self, index: usize, of: usize, what: &str) {
    ///         eprintln!("step {index}/{of}: {what}");
    ///     }
    ///     fn keys(&mut self, done: usize, total: usize) {
    ///         eprintln!("  {done} of {total} keys mapped");
    ///     }
    /// }
    ///
    /// let mut progress = Stderr;
    /// progress.step(1, 3, "convert the keys");
    /// // `doctor.apply(&plan, &mut progress).await?` calls it for every step.
    /// ```
    fn step(&mut self, index: usize, of: usize, what: &str);
    /// Keys mapped so far, of all.
    fn keys(&mut self, done: usize, total: usize);
    /// An online run: keys read so far, keys converted, the table's estimated rows.
    fn batch(&mut self, scanned: usize, converted: usize, estimate: i64) {
        let _ = (scanned, converted, estimate);
    }
    /// An online run waits before its next batch, and why (said again when the reason
    /// changes, and every 30 s while it lasts); how long it has waited so far.
    fn waiting(&mut self, why: &str, so_far: std::time::Duration) {
        let _ = (why, so_far);
    }
}

/// Progress that says nothing.
pub struct Quiet;

impl Progress for Quiet {
    fn step(&mut self, _: usize, _: usize, _: &str) {}
    fn keys(&mut self, _: usize, _: usize) {}
}

/// For tests: stop the process (as a kill would) right after step `n` finished, with
/// `COMBKEY_DOCTOR_FAIL_AFTER_STEP=n`. Documented in docs/doctor.md; nothing else reads it.
fn fail_after() -> Option<usize> {
    std::env::var("COMBKEY_DOCTOR_FAIL_AFTER_STEP").ok().and_then(|v| v.parse().ok())
}

/// A key value as read, its id, and the value it takes.
pub(crate) struct KeyChange {
    pub(crate) old: Stored,
    pub(crate) new: Stored,
}

/// The id a stored key value holds (16 bytes, or any UUID text, also text bytes in a binary
/// column during a type change).
pub(crate) fn id_of(value: &Stored) -> Result<Comb, combkey::Error> {
    match value {
        Stored::Bytes(b) => from_column(b, ColumnKind::BinaryOrText),
        Stored::Text(t) => from_column(t.as_bytes(), ColumnKind::Text),
    }
}

/// The value an id takes in a column ending as `final_type`.
pub(crate) fn stored_for(backend: combkey::Backend, final_type: &str, id: Comb) -> Stored {
    match (backend, final_type) {
        (combkey::Backend::Postgres, _) | (_, "uuid") => Stored::Text(id.to_string()),
        _ => Stored::Bytes(id.into_bytes().to_vec()),
    }
}

/// The value an id takes in the key column `plan` converts: its stored form, or with
/// `--keep-type` its text in the column's form (32 hex digits where the column holds 32
/// characters, else hyphenated; lowercase). On PostgreSQL a text column changes its type only
/// after its values change (`USING c::uuid` reads either form), so a column of 32 characters
/// takes the 32 hex digits until then: the hyphenated 36 would not fit.
pub(crate) fn stored_in(plan: &Plan, id: Comb) -> Result<Stored, Error> {
    let backend = plan.backend()?;
    let simple = |ty: &str| ty.contains("(32)");
    if plan.options.keep_type || (backend == combkey::Backend::Postgres && plan.retypes() && simple(&plan.column_type))
    {
        let ty = if plan.options.keep_type { &plan.final_type } else { &plan.column_type };
        return Ok(Stored::Text(if simple(ty) { id.simple().to_string() } else { id.hyphenated().to_string() }));
    }
    Ok(stored_for(backend, &plan.final_type, id))
}

/// The mapping of every key value that changes, from values read in key order (with
/// `--rekey-from`, `times` holds each value's row's time as the time expression gives it).
pub(crate) fn changes(plan: &Plan, values: &[Stored], times: &[Option<String>]) -> Result<Vec<KeyChange>, Error> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut bad = Vec::new();
    let now_us = crate::rekey::now_us();
    for (i, value) in values.iter().enumerate() {
        if !seen.insert(value.clone()) {
            continue;
        }
        let id = match id_of(value) {
            Ok(id) => id,
            Err(e) => {
                if bad.len() < 5 {
                    bad.push(format!("{value:?}: {e}"));
                }
                continue;
            }
        };
        let kind = plan.classifier.classify(&id);
        let new = if crate::rekey::rekeys(kind, &id, &plan.options) {
            // A row whose time makes no v7 key keeps its key (the plan refused them, unless
            // kept; rows written since may have one).
            match crate::rekey::RowTime::of(times.get(i).cloned().flatten().as_deref(), now_us) {
                crate::rekey::RowTime::At(us) => crate::rekey::rekeyed(&id, us),
                _ => id,
            }
        } else {
            new_id(&id, kind, &plan.options).unwrap_or(id)
        };
        // `--keep-type`: an id that stays keeps its text as it is (its letter case too).
        if plan.options.keep_type && new == id {
            continue;
        }
        let new_value = stored_in(plan, new)?;
        if new_value != *value {
            out.push(KeyChange { old: value.clone(), new: new_value });
        }
    }
    if !bad.is_empty() {
        return Err(Error::refused(format!(
            "values of {}.{} (or of a column referencing it) are no UUID, so nothing was changed: {}",
            Name::from(&plan.table),
            plan.column,
            bad.join("; ")
        )));
    }
    Ok(out)
}

/// The key map's rows for `changes`: each converted key's old and new id, as the key column
/// holds them at the end. A value whose id stays (a text key that only changes its type) has
/// none.
pub(crate) fn key_map_rows(plan: &Plan, changes: &[KeyChange]) -> Result<Vec<(Stored, Stored)>, Error> {
    let backend = plan.backend()?;
    let mut out = Vec::new();
    for c in changes {
        let (Ok(old), Ok(new)) = (id_of(&c.old), id_of(&c.new)) else { continue };
        if old != new {
            out.push((stored_for(backend, &plan.final_type, old), stored_for(backend, &plan.final_type, new)));
        }
    }
    Ok(out)
}

/// `--rekey-from`: two rows that would get one new key (the same microsecond, old keys that
/// end in the same 62 bits), among `kept` (key map rows about to be added) or between one of
/// them and a row of the key map, are named before the insert would fail on the key map's
/// unique `new_key` (whose message names the new key only), and the run stops with nothing
/// changed.
pub(crate) async fn rekey_twins(
    db: &mut Db,
    cat: &dyn Catalog,
    map: &Name,
    kept: &[(Stored, Stored)],
    column: &str,
) -> Result<(), Error> {
    let twins = |a: &Stored, b: &Stored, new: &Stored| {
        let show = |v: &Stored| id_of(v).map_or_else(|_| format!("{v:?}"), |id| id.to_string());
        Error::refused(format!(
            "--rekey-from {column}: the rows keyed {} and {} would both get the key {} (their {column} is the same to \
             the microsecond, the millisecond on SQLite, and their old keys end in the same 62 bits), so nothing \
             changed: change one of the two old keys (or its {column} by a microsecond) and run again",
            show(a),
            show(b),
            show(new)
        ))
    };
    let mut seen: std::collections::HashMap<Comb, &Stored> = std::collections::HashMap::new();
    for (old, new) in kept {
        let Ok(id) = id_of(new) else { continue };
        if let Some(first) = seen.insert(id, old)
            && id_of(first).ok() != id_of(old).ok()
        {
            return Err(twins(first, old, new));
        }
    }
    let backend = db.backend();
    let news: Vec<String> = kept.iter().map(|(_, n)| cat.key_literal(n)).collect();
    let rows = db
        .rows(
            &format!(
                "SELECT {}, {} FROM {} WHERE new_key IN ({})",
                cat.key_text("old_key"),
                cat.key_text("new_key"),
                map.quoted(backend),
                news.join(", ")
            ),
            &[],
        )
        .await?;
    for r in rows {
        let id = |i: usize| r.get(i).cloned().flatten().and_then(|t| t.parse::<Comb>().ok());
        let (Some(mapped_old), Some(new)) = (id(0), id(1)) else { continue };
        if let Some((old, new_value)) = kept.iter().find(|(_, n)| id_of(n).ok() == Some(new))
            && id_of(old).ok() != Some(mapped_old)
        {
            return Err(twins(&Stored::Text(mapped_old.to_string()), old, new_value));
        }
    }
    Ok(())
}

/// Keys per page of a read that maps keys: its rows are held, converted and written to the
/// mapping table (or the script) before the next page is read.
pub(crate) const PAGE: usize = 10_000;

/// The queries whose rows are every key value to map: the table's keys and, for a type
/// change, every referencing column's distinct values (which MySQL may hold in another letter
/// case than the parent's). Each row as [`Catalog::select_keys`] gives it.
pub(crate) async fn key_sources(db: &mut Db, plan: &Plan) -> Result<Vec<String>, Error> {
    let cat = db.catalog()?;
    let only = plan.options.inherited == crate::plan::Inherited::Only;
    let mut tables: Vec<(Name, String)> = vec![((&plan.table).into(), plan.column.clone())];
    if plan.retypes() {
        for r in &plan.rewrites {
            for c in &r.columns {
                let t: Name = (&r.table).into();
                if !tables.contains(&(t.clone(), c.clone())) {
                    tables.push((t, c.clone()));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, (t, c)) in tables.into_iter().enumerate() {
        let columns = db.query(cat.columns(&t)).await?;
        let also =
            if i == 0 { crate::rekey::select_also(db.backend(), &t, &columns, &plan.options)? } else { String::new() };
        let col =
            columns.into_iter().find(|x| x.name == c).ok_or_else(|| Error::usage(format!("no column {c} in {t}")))?;
        out.push(if i == 0 { cat.sweep_keys(&t, &col, only, &also) } else { cat.distinct_keys(&t, &col) });
    }
    Ok(out)
}

/// Streams every key value to map on `reader` (a second session), a page at a time, and hands
/// each page's changes to `each` (which writes them on the first session): memory holds one
/// page, whatever the table's size.
pub(crate) async fn each_change_page(
    reader: &mut Db,
    sources: &[String],
    plan: &Plan,
    mut each: impl AsyncFnMut(Vec<KeyChange>) -> Result<(), Error>,
) -> Result<(), Error> {
    let cat = crate::catalog::of(plan.backend()?)?;
    for sql in sources {
        reader
            .each_page(sql, PAGE, async |rows| {
                let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
                let page = changes(plan, &values, &times_of(plan, &rows))?;
                if page.is_empty() { Ok(()) } else { each(page).await }
            })
            .await?;
    }
    Ok(())
}

/// Each row's time (its last cell) where the plan re-keys from one; else nothing.
pub(crate) fn times_of(plan: &Plan, rows: &[Vec<Option<String>>]) -> Vec<Option<String>> {
    if plan.options.rekey_from.is_some() {
        rows.iter().map(|r| r.last().cloned().flatten()).collect()
    } else {
        Vec::new()
    }
}

/// The journal table: one row per table and column being changed.
pub(crate) struct Journal {
    table: String,
    target: String,
}

impl Journal {
    pub(crate) fn new(cat: &dyn Catalog, plan: &Plan) -> Self {
        let (_, table) = cat.journal_table(plan.table.schema.as_deref());
        Journal { table, target: plan.target() }
    }

    pub(crate) async fn ensure(&self, db: &mut Db, schema: Option<&str>) -> Result<(), Error> {
        let (create, _) = db.catalog()?.journal_table(schema);
        db.exec(&create).await.map(drop)
    }

    /// The unfinished plan of an online run, if there is one.
    pub(crate) async fn unfinished_online(
        db: &mut Db,
        cat: &dyn Catalog,
        schema: Option<&str>,
        target: &str,
    ) -> Result<Option<Plan>, Error> {
        let (_, table) = cat.journal_table(schema);
        if !db.query(cat.journal_exists(schema)).await? {
            return Ok(None);
        }
        let Ok(rows) = db
            .rows(
                &format!("SELECT plan FROM {table} WHERE target = {} AND state IN ('online', 'swap')", cat.param(1)),
                &[target.to_string()],
            )
            .await
        else {
            return Ok(None);
        };
        let Some(row) = rows.first() else { return Ok(None) };
        let plan: Plan =
            serde_json::from_str(row.first().cloned().flatten().as_deref().unwrap_or_default()).map_err(|e| {
                Error::new(ErrorKind::Database, format!("the journal's plan for {target} does not read: {e}"))
            })?;
        Ok(Some(plan))
    }

    /// The unfinished plan and the last step it finished, if there is one.
    pub(crate) async fn unfinished(
        db: &mut Db,
        cat: &dyn Catalog,
        schema: Option<&str>,
        target: &str,
    ) -> Result<Option<(Plan, i64)>, Error> {
        let (_, table) = cat.journal_table(schema);
        if !db.query(cat.journal_exists(schema)).await? {
            return Ok(None);
        }
        let rows = db
            .rows(
                &format!("SELECT plan, step FROM {table} WHERE target = {} AND state = 'running'", cat.param(1)),
                &[target.to_string()],
            )
            .await
            .or_else(|_| Ok::<_, Error>(Vec::new()))?;
        let Some(row) = rows.first() else { return Ok(None) };
        let plan: Plan =
            serde_json::from_str(row.first().cloned().flatten().as_deref().unwrap_or_default()).map_err(|e| {
                Error::new(ErrorKind::Database, format!("the journal's plan for {target} does not read: {e}"))
            })?;
        let step = row.get(1).cloned().flatten().and_then(|s| s.trim().parse().ok()).unwrap_or(-1);
        Ok(Some((plan, step)))
    }

    async fn start(&self, db: &mut Db, plan: &Plan, step: usize) -> Result<(), Error> {
        self.write_row(db, plan, "running", step).await
    }

    /// Replaces this target's journal row with `plan` in `state` at `step`.
    async fn write_row(&self, db: &mut Db, plan: &Plan, state: &str, step: usize) -> Result<(), Error> {
        let cat = db.catalog()?;
        let json = serde_json::to_string(plan).map_err(|e| Error::new(ErrorKind::Database, e.to_string()))?;
        db.rows(
            &format!("DELETE FROM {} WHERE target = {}", self.table, cat.param(1)),
            std::slice::from_ref(&self.target),
        )
        .await?;
        db.rows(
            &format!(
                "INSERT INTO {} (target, state, step, plan) VALUES ({}, '{state}', {step}, {})",
                self.table,
                cat.param(1),
                cat.param(2)
            ),
            &[self.target.clone(), json],
        )
        .await
        .map(drop)
    }

    /// An online run's cursor (`Some(None)`: at the start), if the journal holds an unfinished
    /// online run of this plan.
    pub(crate) async fn online_cursor(&self, db: &mut Db, plan: &Plan) -> Result<Option<Option<String>>, Error> {
        let cat = db.catalog()?;
        let Ok(rows) = db
            .rows(
                &format!(
                    "SELECT plan, cursor_value FROM {} WHERE target = {} AND state = 'online'",
                    self.table,
                    cat.param(1)
                ),
                std::slice::from_ref(&self.target),
            )
            .await
        else {
            return Ok(None);
        };
        let Some(row) = rows.first() else { return Ok(None) };
        let journaled: Plan = serde_json::from_str(row.first().cloned().flatten().as_deref().unwrap_or_default())
            .map_err(|e| {
                Error::new(ErrorKind::Database, format!("the journal's plan for {} does not read: {e}", self.target))
            })?;
        if journaled != *plan {
            return Ok(None);
        }
        Ok(Some(row.get(1).cloned().flatten()))
    }

    pub(crate) async fn start_online(&self, db: &mut Db, plan: &Plan) -> Result<(), Error> {
        self.write_row(db, plan, "online", 0).await
    }

    /// A copy-and-swap run of `plan` begins: its phase 0.
    pub(crate) async fn start_swap(&self, db: &mut Db, plan: &Plan) -> Result<(), Error> {
        self.write_row(db, plan, "swap", 0).await
    }

    /// The phase and cursor of an unfinished copy-and-swap run of this plan, if the journal
    /// holds one (`Err` where it holds one of another plan: its objects are in the way).
    pub(crate) async fn swap_state(&self, db: &mut Db, plan: &Plan) -> Result<Option<(i64, Option<String>)>, Error> {
        let cat = db.catalog()?;
        if !db.query(cat.journal_exists(plan.table.schema.as_deref())).await? {
            return Ok(None);
        }
        let rows = db
            .rows(
                &format!(
                    "SELECT plan, step, cursor_value FROM {} WHERE target = {} AND state = 'swap'",
                    self.table,
                    cat.param(1)
                ),
                std::slice::from_ref(&self.target),
            )
            .await?;
        let Some(row) = rows.first() else { return Ok(None) };
        let journaled: Plan = serde_json::from_str(row.first().cloned().flatten().as_deref().unwrap_or_default())
            .map_err(|e| {
                Error::new(ErrorKind::Database, format!("the journal's plan for {} does not read: {e}", self.target))
            })?;
        if journaled != *plan {
            return Err(Error::refused(format!(
                "an earlier copy-and-swap run of {} was stopped with another plan, and its tables are still there: run                  that command again to finish it, or give --abandon to remove what it made. Nothing was changed",
                self.target
            )));
        }
        let step = row.get(1).cloned().flatten().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
        Ok(Some((step, row.get(2).cloned().flatten())))
    }

    /// Forgets this target's run (its row goes).
    pub(crate) async fn forget(&self, db: &mut Db) -> Result<(), Error> {
        let cat = db.catalog()?;
        db.rows(
            &format!("DELETE FROM {} WHERE target = {}", self.table, cat.param(1)),
            std::slice::from_ref(&self.target),
        )
        .await
        .map(drop)
    }

    pub(crate) async fn set_cursor(&self, db: &mut Db, cursor: Option<&str>, pass: usize) -> Result<(), Error> {
        let cat = db.catalog()?;
        match cursor {
            Some(c) => db
                .rows(
                    &format!(
                        "UPDATE {} SET cursor_value = {}, step = {pass}, updated_at = CURRENT_TIMESTAMP WHERE target = {}",
                        self.table,
                        cat.param(1),
                        cat.param(2)
                    ),
                    &[c.to_string(), self.target.clone()],
                )
                .await
                .map(drop),
            None => db
                .rows(
                    &format!(
                        "UPDATE {} SET cursor_value = NULL, step = {pass}, updated_at = CURRENT_TIMESTAMP WHERE target = {}",
                        self.table,
                        cat.param(1)
                    ),
                    std::slice::from_ref(&self.target),
                )
                .await
                .map(drop),
        }
    }

    async fn advance(&self, db: &mut Db, step: usize) -> Result<(), Error> {
        let cat = db.catalog()?;
        db.rows(
            &format!("UPDATE {} SET step = {step} WHERE target = {}", self.table, cat.param(1)),
            std::slice::from_ref(&self.target),
        )
        .await
        .map(drop)
    }

    pub(crate) async fn finish(&self, db: &mut Db) -> Result<(), Error> {
        let cat = db.catalog()?;
        db.rows(
            &format!("UPDATE {} SET state = 'done' WHERE target = {}", self.table, cat.param(1)),
            std::slice::from_ref(&self.target),
        )
        .await
        .map(drop)
    }
}

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

/// A definition with what a change may alter on purpose taken out: lines that name a retyped
/// column, and counters that move with inserts (`AUTO_INCREMENT=`).
pub(crate) fn comparable(definition: &str, retyped: &[String], backend: combkey::Backend) -> Vec<String> {
    let mut lines: Vec<String> = definition
        .lines()
        .map(|l| {
            let l = l.trim();
            match l.find(" AUTO_INCREMENT=") {
                Some(i) => {
                    let rest = &l[i + 16..];
                    let end = rest.find(' ').unwrap_or(rest.len());
                    format!("{}{}", &l[..i], &rest[end..])
                }
                None => l.to_string(),
            }
        })
        .filter(|l| {
            !retyped.iter().any(|c| l.starts_with(&format!("{} ", backend.quote(c))) || l.starts_with(&format!("{c} ")))
        })
        .collect();
    lines.sort();
    lines
}

/// Takes a step's table locks inside the run's transaction in attempts, as pg_repack's
/// `lock_exclusive` does: each attempt waits at most 100 ms more than the last, never as long
/// as the server's `deadlock_timeout` (so where the run and an application transaction wait
/// for each other, the run's attempt gives up first and the application's goes on), and is
/// rolled back to a savepoint when it times out; the attempts go on until `total_ms` (the lock
/// timeout) has passed. The application's statements queue behind an attempt for at most its
/// wait. Where the database takes no lock in attempts, the statements run as they are.
pub(crate) async fn lock_in_attempts(db: &mut Db, sql: &[String], total_ms: u64) -> Result<(), Error> {
    let cat = db.catalog()?;
    if cat.lock_attempt(1).is_none() {
        return db.exec_all(sql).await;
    }
    let deadlock = match cat.deadlock_timeout() {
        Some(q) => db.query(q).await?.unwrap_or(1000),
        None => 1000,
    };
    let cap = u64::try_from(deadlock / 2).unwrap_or(0).clamp(1, 1000);
    let started = std::time::Instant::now();
    db.exec("SAVEPOINT combkey_doctor_lock").await?;
    let mut attempt: u64 = 0;
    loop {
        attempt += 1;
        let spent = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let wait = (attempt * 100).min(cap).min(total_ms.saturating_sub(spent).max(1));
        if let Some(set) = cat.lock_attempt(wait) {
            db.exec(&set).await?;
        }
        match db.exec_all(sql).await {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::LockTimeout && started.elapsed().as_millis() < u128::from(total_ms) => {
                db.exec("ROLLBACK TO SAVEPOINT combkey_doctor_lock").await?;
            }
            Err(e) => {
                let holders = match cat.oldest_transactions() {
                    Some(q) => {
                        let _ = db.exec("ROLLBACK TO SAVEPOINT combkey_doctor_lock").await;
                        db.query(q).await.ok().flatten()
                    }
                    None => None,
                };
                return Err(match (e.kind(), holders) {
                    (ErrorKind::LockTimeout, Some(h)) => e.with_hint(&format!(
                        " ({attempt} attempts over {:.1} s; the oldest open transactions: {h})",
                        started.elapsed().as_secs_f64()
                    )),
                    _ => e,
                });
            }
        }
    }
    db.exec("RELEASE SAVEPOINT combkey_doctor_lock").await?;
    // The rest of the transaction waits as the session does.
    if let Some(set) = cat.lock_attempt(total_ms) {
        db.exec(&set).await?;
    }
    Ok(())
}

/// Runs `plan` from step `from` (0, or after the last one a journal says finished).
pub(crate) async fn run(db: &mut Db, plan: &Plan, from: usize, progress: &mut dyn Progress) -> Result<(), Error> {
    let cat = db.catalog()?;
    let journal = plan.journaled().then(|| Journal::new(cat, plan));
    let fail_after = fail_after();
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
                                        if let Some(column) = &plan.options.rekey_from {
                                            rekey_twins(db, cat, map, &kept, column).await?;
                                        }
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
                                    let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
                                    let page = changes(plan, &values, &times_of(plan, &rows))?;
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
                        if std::env::var_os("COMBKEY_DOCTOR_FAIL_DEFINITIONS_CHECK").is_some() {
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
                    StepKind::Lock => lock_in_attempts(db, &step.sql, plan.options.lock_timeout_ms).await?,
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
            if fail_after == Some(i) {
                // As a kill would: no rollback, no clean-up.
                eprintln!(
                    "combkey doctor: stopping after step {} of --migration-sql (COMBKEY_DOCTOR_FAIL_AFTER_STEP={i} counts from 0)",
                    i + 1
                );
                std::process::abort();
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
        }
        if let Some((_, on)) = cat.fk_checks_off() {
            let _ = db.exec_all(&on).await;
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
        let collision = crate::rekey::collision_hint(&plan.options, &e);
        return Err(e
            .context("combkey doctor")
            .with_hint(collision)
            .with_hint(&waited)
            .with_hint(hint)
            .with_hint(&left));
    }
    Ok(())
}
