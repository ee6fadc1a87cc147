//! What the methods share: the outcome of an online run, the journal table, the queries that
//! read every key to map, the key map's twins check, the comparison of definitions, and
//! pg_repack-style lock attempts.

use std::time::Duration;

use combkey::Comb;

use crate::catalog::{Catalog, Name, Stored};
use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::keys::{KeyChange, Source, id_of};
use crate::plan::Plan;

/// What an online run did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct OnlineOutcome {
    /// Keys converted: the old keys of the committed batches. A key the application deleted
    /// after the run read it and before its batch committed is counted, though no row changed.
    pub converted: usize,
    /// Keys read.
    pub scanned: usize,
    /// Batches committed that changed keys.
    pub batches: usize,
    /// Passes through the table (the first, then catch-ups for keys that arrived meanwhile).
    pub passes: usize,
    /// Batches retried after losing a lock race.
    pub retries: usize,
    /// Time spent waiting for the server to be less busy.
    pub paused: Duration,
    /// Seconds the run took.
    pub seconds: f64,
    /// Whether it went on from where a killed run of the same plan stopped (its journal).
    pub resumed: bool,
    /// The method it ran: `copy-swap` or `in-place`.
    pub method: &'static str,
    /// Why it did not copy and swap, where [`Method::Auto`](crate::Method::Auto) chose to change the keys in place.
    pub in_place_because: Option<String>,
    /// The tables the swap kept under new names (the old tables), for the user to drop, as a
    /// statement names them (quoted where they need it).
    pub kept: Vec<String>,
    /// Rows a copy and swap compared with their copies before its swap, per table: every row
    /// of one snapshot of the table (PostgreSQL: the copy's; MySQL/MariaDB: once every change
    /// is written through).
    pub verified: Vec<(String, u64)>,
    /// Rows the application changed during a copy and swap, compared again with their copies
    /// once their changes were applied (PostgreSQL), per table: a row changed twice counts
    /// twice.
    pub rechecked: Vec<(String, u64)>,
}

/// Rows per `INSERT` into the mapping table.
pub(crate) const MAP_BATCH: usize = 1000;

/// Two old keys that would get one new key (where the key source may make such twins: a
/// re-key, two rows of the same microsecond whose old keys end in the same 62 bits), among
/// `kept` (key map rows about to be added) or between one of them and a row of the key map,
/// are named before the insert would fail on the key map's unique `new_key` (whose message
/// names the new key only), and the run stops with nothing changed.
pub(crate) async fn key_map_twins(
    db: &mut Db,
    cat: &dyn Catalog,
    map: &Name,
    kept: &[(Stored, Stored)],
    source: Source<'_>,
) -> Result<(), Error> {
    if !source.may_collide() {
        return Ok(());
    }
    let twins = |a: &Stored, b: &Stored, new: &Stored| source.collision(a, b, new);
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

/// The queries whose rows are every key value to map: the table's keys and, for a type
/// change, every referencing column's distinct values (which MySQL may hold in another letter
/// case than the parent's). Each row as [`Catalog::select_keys`] gives it.
pub(crate) async fn key_sources(db: &mut Db, plan: &Plan) -> Result<Vec<String>, Error> {
    let cat = db.catalog()?;
    let only = plan.options.inherited == crate::options::Inherited::Only;
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
        let also = if i == 0 { Source::of(plan).reads(&t, &columns)? } else { String::new() };
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
            .each_page(sql, crate::catalog::PAGE, async |rows| {
                let page = Source::of(plan).changes_of(cat, &rows)?;
                if page.is_empty() { Ok(()) } else { each(page).await }
            })
            .await?;
    }
    Ok(())
}

/// The journal table: one row per table and column being changed.
/// The phase [`Journal::swap_state`] gives a copy and swap whose removal began
/// ([`Journal::abandoning`]) and did not finish: what is left (a table's triggers gone,
/// another's still there) cannot be gone on from, since the application's changes to a table
/// whose triggers went are in no log; the run is removed whole before anything else.
pub(crate) const SWAP_ABANDONING: i64 = -1;

pub(crate) struct Journal {
    table: String,
    target: String,
}

impl Journal {
    pub(crate) fn new(cat: &dyn Catalog, plan: &Plan) -> Self {
        let (_, table) = cat.journal_table(plan.table.schema.as_deref());
        Journal { table, target: plan.target() }
    }

    /// The journal row of the in-place run that converts, after a copy and swap, the keys
    /// written through during it: a row of its own, so that the copy and swap's row (at its
    /// phase after the swap) stays, and a kill during that run is finished by the copy and
    /// swap run again, whatever `--method` it is given.
    pub(crate) fn after_swap(cat: &dyn Catalog, plan: &Plan) -> Self {
        let (_, table) = cat.journal_table(plan.table.schema.as_deref());
        Journal { table, target: format!("{} (keys written during its swap)", plan.target()) }
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
                &format!(
                    "SELECT plan FROM {table} WHERE target = {} AND state IN ('online', 'swap', 'abandon')",
                    cat.param(1)
                ),
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

    pub(crate) async fn start(&self, db: &mut Db, plan: &Plan, step: usize) -> Result<(), Error> {
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
    /// PostgreSQL: its journal table is UNLOGGED (never streamed or published), so a server
    /// crash empties it, while the copy and swap's own tables are logged. The run's row is
    /// therefore also kept as the comment of its mapping table `on` (a catalog change: crash-safe,
    /// never published), written in the transactions that make the run's objects and that swap
    /// the tables, so a run whose row a crash took is recognised ([`mirrored`](Self::mirrored))
    /// and taken up again ([`restore_mirror`](Self::restore_mirror)).
    pub(crate) async fn mirror(&self, db: &mut Db, on: &Name) -> Result<(), Error> {
        let on = crate::catalog::string_literal(&on.quoted(combkey::Backend::Postgres));
        let target = crate::catalog::string_literal(&self.target);
        db.exec(&format!(
            "DO $combkey$ BEGIN EXECUTE format('COMMENT ON TABLE %s IS %L', {on}, \
             (SELECT row_to_json(j)::text FROM {} j WHERE target = {target})); END $combkey$",
            self.table
        ))
        .await
        .map(drop)
    }

    /// The run journaled on mapping table `on` by [`mirror`](Self::mirror) (read only): its
    /// plan and the phase it had reached, `None` where `on` holds no such copy.
    pub(crate) async fn mirrored(db: &mut Db, on: &Name) -> Result<Option<(Plan, i64)>, Error> {
        let rows = db
            .rows(
                &format!(
                    "SELECT obj_description(to_regclass({}), 'pg_class')",
                    crate::catalog::string_literal(&on.quoted(combkey::Backend::Postgres))
                ),
                &[],
            )
            .await?;
        let Some(text) = rows.first().and_then(|r| r.first().cloned().flatten()) else { return Ok(None) };
        let Ok(row) = serde_json::from_str::<serde_json::Value>(&text) else { return Ok(None) };
        let plan = match &row["plan"] {
            serde_json::Value::String(s) => serde_json::from_str::<Plan>(s).ok(),
            v => serde_json::from_value::<Plan>(v.clone()).ok(),
        };
        let step = row["step"].as_i64().or_else(|| row["step"].as_str().and_then(|s| s.parse().ok()));
        Ok(match (plan, step, row["state"].as_str()) {
            (Some(plan), Some(step), Some("swap")) => Some((plan, step)),
            _ => None,
        })
    }

    /// Puts back the journal row that [`mirror`](Self::mirror) copied onto `on`, where the
    /// journal holds none of this run (a crash emptied it): whether it did.
    pub(crate) async fn restore_mirror(&self, db: &mut Db, on: &Name) -> Result<bool, Error> {
        let on = crate::catalog::string_literal(&on.quoted(combkey::Backend::Postgres));
        let target = crate::catalog::string_literal(&self.target);
        let rows = db
            .rows(
                &format!(
                    "WITH c AS (SELECT obj_description(to_regclass({on}), 'pg_class') AS j), \
                     r AS (INSERT INTO {t} SELECT (json_populate_record(NULL::{t}, c.j::json)).* FROM c \
                     WHERE c.j IS NOT NULL AND c.j LIKE '{{%' AND (c.j::json ->> 'target') = {target} \
                     AND NOT EXISTS (SELECT 1 FROM {t} WHERE target = {target}) RETURNING 1) SELECT count(*)::text FROM r",
                    t = self.table
                ),
                &[],
            )
            .await?;
        Ok(rows.first().and_then(|r| r.first().cloned().flatten()).is_some_and(|n| n != "0"))
    }

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
                    "SELECT plan, step, cursor_value, state FROM {} WHERE target = {} AND state IN ('swap', 'abandon')",
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
                "an earlier copy-and-swap run of {} was stopped with another plan, and its tables are still there: run that command again to finish it, or give --abandon to remove what it made. Nothing was changed",
                self.target
            )));
        }
        if row.get(3).cloned().flatten().as_deref() == Some("abandon") {
            return Ok(Some((SWAP_ABANDONING, None)));
        }
        let step = row.get(1).cloned().flatten().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
        Ok(Some((step, row.get(2).cloned().flatten())))
    }

    /// Forgets this target's run (its row goes).
    /// Marks the copy and swap's row as being removed, before the first statement that removes
    /// what the run made ([`SWAP_ABANDONING`]):
    /// a removal stopped half-way is finished by the next run, never gone on from.
    pub(crate) async fn abandoning(&self, db: &mut Db) -> Result<(), Error> {
        let cat = db.catalog()?;
        db.rows(
            &format!("UPDATE {} SET state = 'abandon' WHERE target = {} AND state = 'swap'", self.table, cat.param(1)),
            std::slice::from_ref(&self.target),
        )
        .await
        .map(drop)
    }

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

    pub(crate) async fn advance(&self, db: &mut Db, step: usize) -> Result<(), Error> {
        let cat = db.catalog()?;
        db.rows(
            &format!("UPDATE {} SET step = {step} WHERE target = {}", self.table, cat.param(1)),
            std::slice::from_ref(&self.target),
        )
        .await
        .map(drop)
    }

    /// Marks this target's stopped online run in place (state `online`) done, where there is
    /// one (an offline run converted its keys since).
    pub(crate) async fn finish_in_place(&self, db: &mut Db, schema: Option<&str>) -> Result<(), Error> {
        let cat = db.catalog()?;
        if !db.query(cat.journal_exists(schema)).await? {
            return Ok(());
        }
        // Only where there is such a row: a role that may not write the journal (another role's)
        // ran this run without it.
        let there = db
            .rows(
                &format!("SELECT 1 FROM {} WHERE target = {} AND state = 'online'", self.table, cat.param(1)),
                std::slice::from_ref(&self.target),
            )
            .await?;
        if there.is_empty() {
            return Ok(());
        }
        db.rows(
            &format!("UPDATE {} SET state = 'done' WHERE target = {} AND state = 'online'", self.table, cat.param(1)),
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

/// How two [`comparable`] forms of a definition differ, as a message says it: the lines gone
/// and the lines new, three of each at most.
pub(crate) fn definition_change(was: &[String], is: &[String]) -> String {
    let gone: Vec<&str> = was.iter().filter(|l| !is.contains(l)).take(3).map(String::as_str).collect();
    let new: Vec<&str> = is.iter().filter(|l| !was.contains(l)).take(3).map(String::as_str).collect();
    let mut what = Vec::new();
    if !gone.is_empty() {
        what.push(format!("gone: {}", gone.join("; ")));
    }
    if !new.is_empty() {
        what.push(format!("new: {}", new.join("; ")));
    }
    what.join("; ")
}

/// Takes a step's table locks inside the run's transaction in attempts, as pg_repack's
/// `lock_exclusive` does: each attempt waits at most 100 ms more than the last, never as long
/// as the server's `deadlock_timeout` (so where the run and an application transaction wait
/// for each other, the run's attempt gives up first and the application's goes on), and is
/// rolled back to a savepoint when it times out; the attempts go on until `total_ms` (the lock
/// timeout) has passed. The application's statements queue behind an attempt for at most its
/// wait. Where `holders_of` names tables, an attempt that timed out while a long transaction
/// ([`LONG_HOLD_MS`]) holds one of them ends the attempts (a lock timeout naming it), so that the
/// caller waits for it without heading the lock queue. Where the database takes no lock in
/// attempts, the statements run as they are.
pub(crate) async fn lock_in_attempts(
    db: &mut Db,
    sql: &[String],
    total_ms: u64,
    holders_of: &[Name],
) -> Result<(), Error> {
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
                // A long transaction holds one of the tables (not the application's short
                // writes): another try would head the queue behind it again, with every write
                // waiting behind the try. The caller waits for it without queueing.
                if let Some(q) = cat.lock_holders(holders_of, LONG_HOLD_MS)
                    && let Some(h) = db.query(q).await?
                {
                    return Err(Error::new(ErrorKind::LockTimeout, format!("the tables are held by {h}")));
                }
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

/// [`lock_in_attempts`] for a lock a long transaction may hold up (the copy and swap's first
/// step, the removal of a stopped run): where an attempt timed out while a long transaction
/// ([`LONG_HOLD_MS`]) holds one of `tables`, another would only head the lock queue behind it
/// again, each write of the application waiting behind the attempt (up to half a second each,
/// about 4 s in all in a break-test). So no attempt is made while one holds them: the holders
/// are read again every 200 ms, said through `progress` (`lock_waits`) when they change, and the attempts go
/// on once they are gone, all within `total_ms`; then a lock timeout naming them.
pub(crate) async fn lock_waiting_out_holders(
    db: &mut Db,
    sql: &[String],
    total_ms: u64,
    tables: &[Name],
    progress: &mut dyn crate::options::Progress,
) -> Result<(), Error> {
    let started = std::time::Instant::now();
    let left = |started: std::time::Instant| {
        total_ms.saturating_sub(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX))
    };
    let mut said = String::new();
    loop {
        match lock_in_attempts(db, sql, left(started).max(1), tables).await {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::LockTimeout && left(started) > 0 => {
                let cat = db.catalog()?;
                if yield_autovacuum(db, tables, &mut *progress).await? {
                    continue;
                }
                let Some(q) = cat.lock_holders(tables, LONG_HOLD_MS) else { return Err(e) };
                // The holder gone meanwhile (an autovacuum worker that ended): the attempts go on.
                let Some(mut h) = db.query(q).await? else { continue };
                loop {
                    if left(started) == 0 {
                        return Err(Error::new(
                            ErrorKind::LockTimeout,
                            format!(
                                "waited {:.0} s (--lock-timeout) for {h}, in an open transaction; it never queued for \
                                 the lock meanwhile, so the application's writes went on",
                                started.elapsed().as_secs_f64()
                            ),
                        ));
                    }
                    let who = h.split(" (").next().unwrap_or_default().to_string();
                    if who != said {
                        progress.lock_waits(
                            &format!(
                                "{h} holds the tables; the run does not ask for the lock meanwhile, so the \
                                 application's writes go on (at most --lock-timeout {:.0} s)",
                                Duration::from_millis(total_ms).as_secs_f64()
                            ),
                            started.elapsed(),
                        );
                        said = who;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    if yield_autovacuum(db, tables, &mut *progress).await? {
                        break;
                    }
                    let Some(q) = cat.lock_holders(tables, LONG_HOLD_MS) else { break };
                    match db.query(q).await? {
                        Some(now) => h = now,
                        None => break,
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Cancels the autovacuum workers that hold `tables` (where the session may, and never one
/// that prevents wraparound: `Catalog::yield_autovacuum`), as PostgreSQL does for a lock
/// request that waits behind one, and says so through `progress`: whether it cancelled one.
/// Autovacuum starts on the table again later.
pub(crate) async fn yield_autovacuum(
    db: &mut Db,
    tables: &[Name],
    progress: &mut dyn crate::options::Progress,
) -> Result<bool, Error> {
    let Some(q) = db.catalog()?.yield_autovacuum(tables) else { return Ok(false) };
    match db.query(q).await? {
        Some(what) => {
            progress.lock_waits(
                &format!(
                    "cancelled {what}, which held the tables (as PostgreSQL does for a lock that waits behind \
                     autovacuum; it starts on the table again later)"
                ),
                Duration::ZERO,
            );
            Ok(true)
        }
        None => Ok(false),
    }
}

/// A transaction open longer than this that holds a table is a long holder (a report, a
/// session left idle in its transaction), not one of the application's short writes: a lock
/// request for the swap is not made while one holds the tables.
pub(crate) const LONG_HOLD_MS: u64 = 1000;

/// How long `--set-default`'s trigger is tried (after the commit; online, before the first
/// batch), in lock timeouts (30 s at the default 5 s): the tries never queue the application's
/// writes behind them for long (`ddl_in_tries`).
pub(crate) const SET_DEFAULT_TRIES: u64 = 6;

/// Runs DDL outside a transaction that needs the table's metadata lock (MySQL/MariaDB's
/// `CREATE TRIGGER` of `--set-default`) in short tries, so that it never heads the table's lock
/// queue for long with the application's writes waiting behind it, until `total_ms` has passed;
/// then the last error, with the sessions that held the table. The session's own lock timeout
/// is set back after (`restore`). Where DDL runs in the transaction, once.
///
/// A try that waits for no lock ([`Catalog::ddl_no_wait`](crate::catalog::Catalog::ddl_no_wait))
/// holds nobody up, but finds the table free only in a moment between the application's
/// transactions, and an application writing in back-to-back transactions leaves almost none
/// (a generated case's run gave up with one writer). So where the statements lock `table`
/// alone (`alone`: it has no foreign key to another table, whose lock a waiting statement
/// would hold while it waits, and MariaDB's deadlock detector rolls the application's
/// transaction back), every second try waits in the queue, for 20 ms growing by 10 ms a try up
/// to 100 ms (MariaDB's `max_statement_time` for the statement; the application's writes wait
/// behind it that long at most), and gets the lock as the transaction before it ends, as
/// pg_repack's tries do; but not while another session's transaction is open longer than
/// [`LONG_HOLD_MS`] (it may hold the table, and the writes would queue behind each try for
/// nothing). The tries come 5 ms apart.
pub(crate) async fn ddl_in_tries(
    db: &mut Db,
    sql: &[String],
    total_ms: u64,
    restore: &[String],
    alone: bool,
    progress: &mut dyn crate::options::Progress,
) -> Result<(), Error> {
    let cat = db.catalog()?;
    let Some(no_wait) = cat.ddl_no_wait() else { return db.exec_all(sql).await };
    let started = std::time::Instant::now();
    let mut attempt: u64 = 0;
    let mut may_wait = alone;
    // When the wait was last said (after a second of tries, then every 10 s).
    let mut said: Option<std::time::Instant> = None;
    let result = loop {
        if started.elapsed() >= std::time::Duration::from_secs(1)
            && said.is_none_or(|at| at.elapsed() >= std::time::Duration::from_secs(10))
        {
            let holders = match cat.oldest_transactions() {
                Some(q) => db.query(q).await.ok().flatten(),
                None => None,
            };
            progress.lock_waits(
                &format!(
                    "the table's metadata lock, which another session's open transaction holds (for at most {:.0} s \
                     in all){}",
                    Duration::from_millis(total_ms).as_secs_f64(),
                    holders.map(|h| format!("; the oldest open transactions: {h}")).unwrap_or_default()
                ),
                started.elapsed(),
            );
            said = Some(std::time::Instant::now());
        }
        attempt += 1;
        // Never queued behind a long holder (a report's transaction, a session idle in one):
        // the writes would wait behind the statement each time, for as long as it waits. One
        // that cannot be told of counts as one.
        let waiting = may_wait
            && attempt.is_multiple_of(2)
            && match cat.long_transactions(LONG_HOLD_MS) {
                Some(q) => db.query(q).await.is_ok_and(|n| n == 0),
                None => false,
            };
        let tried = if waiting {
            let wait_ms = (10 + attempt * 5).min(100);
            let mut tried = Ok(());
            for s in sql {
                if let Err(e) = db.exec(&cat.ddl_waiting(s, wait_ms)).await {
                    tried = Err(e);
                    break;
                }
            }
            tried
        } else {
            db.exec(&no_wait).await?;
            db.exec_all(sql).await
        };
        match tried {
            Ok(()) => break Ok(()),
            // No `SET STATEMENT` here (MySQL): the tries that wait for no lock only.
            Err(e) if waiting && e.code() == Some("42000") => may_wait = false,
            // A waiting try's time ran out (MariaDB's 1969, SQLSTATE 70100), or a try found the
            // table held.
            Err(e)
                if (e.kind() == ErrorKind::LockTimeout || (waiting && e.code() == Some("70100")))
                    && started.elapsed().as_millis() < u128::from(total_ms) =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            Err(e) if e.kind() == ErrorKind::LockTimeout || (waiting && e.code() == Some("70100")) => {
                let holders = match cat.oldest_transactions() {
                    Some(q) => db.query(q).await.ok().flatten(),
                    None => None,
                };
                break Err(Error::new(ErrorKind::LockTimeout, e.to_string()).with_hint(&format!(
                    " ({attempt} tries over {:.1} s{}{})",
                    started.elapsed().as_secs_f64(),
                    if may_wait { ", every second one waiting up to 100 ms" } else { ", each waiting for no lock" },
                    holders.map(|h| format!("; the oldest open transactions: {h}")).unwrap_or_default()
                )));
            }
            Err(e) => break Err(e),
        }
    };
    db.exec_all(restore).await?;
    result
}

/// Whether DDL on `table` (a trigger's creation, a default's change) locks that table alone
/// (MySQL/MariaDB: the table has no foreign key to another table, whose metadata lock a
/// trigger's statement also takes).
pub(crate) async fn locks_alone(db: &mut Db, table: &Name) -> Result<bool, Error> {
    let cat = db.catalog()?;
    let Some(q) = cat.foreign_keys_to_others(table) else { return Ok(false) };
    Ok(db.query(q).await? == 0)
}
