//! `--online`: the keys change in small batches, each a short transaction that moves a batch of
//! parents and their children together, while the application keeps reading and writing.
//!
//! Each batch locks its parent rows first (so a concurrent insert of a child that references
//! one of them waits, and then finds the key gone, instead of slipping in between), rewrites
//! the parents and every referencing column through the mapping table, checks that no child
//! still references an old key of the batch, advances the journal's cursor, and commits.
//! Foreign keys are never dropped: PostgreSQL checks them at the end of each batch's statement;
//! MySQL's session has its checks off while it moves parent and children together, and the
//! batch's own count of leftover children stands in for them. A batch that loses a lock race
//! (a lock wait past the timeout, a deadlock) is rolled back and retried with a backoff.
//!
//! The scan goes through the keys in key order from the journal's cursor, so a killed run
//! resumes where it was; when it reaches the end, it goes through again for keys that arrived
//! meanwhile with an old layout, until a pass finds none.

use std::time::{Duration, Instant};

use combkey::backend::catalog::{Column, Name, Rewrite, Stored};

use crate::apply::{Journal, Progress, changes};
use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::plan::{Inherited, Plan, orphan_count};

/// How an online run paces itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Online {
    /// Keys read per batch (each batch's transaction changes those of them that convert).
    pub batch_size: usize,
    /// Wait before a batch while this many sessions (or more) wait for a lock.
    pub pause_when_busy: Option<i64>,
    /// Wait before a batch while a replica lags more than this.
    pub max_lag: Option<Duration>,
    /// MySQL/MariaDB replicas to ask for their lag (PostgreSQL's primary knows its own).
    pub replica_urls: Vec<String>,
    /// Retries of one batch that lost a lock race before the run gives up.
    pub max_retries: u32,
    /// A pause after each batch that changed keys, to leave the server room.
    pub sleep: Duration,
}

impl Default for Online {
    fn default() -> Self {
        Online {
            batch_size: 1000,
            pause_when_busy: None,
            max_lag: None,
            replica_urls: Vec::new(),
            max_retries: 20,
            sleep: Duration::ZERO,
        }
    }
}

/// What an online run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OnlineOutcome {
    /// Keys converted.
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
}

/// For tests: stop the process (as a kill would) right after `n` batches committed, with
/// `COMBKEY_DOCTOR_FAIL_AFTER_BATCH=n`.
fn fail_after_batch() -> Option<usize> {
    std::env::var("COMBKEY_DOCTOR_FAIL_AFTER_BATCH").ok().and_then(|v| v.parse().ok())
}

fn cursor_text(v: &Stored) -> String {
    match v {
        Stored::Bytes(b) => format!("b:{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        Stored::Text(t) => format!("t:{t}"),
    }
}

fn cursor_value(s: &str) -> Option<Stored> {
    if let Some(t) = s.strip_prefix("t:") {
        return Some(Stored::Text(t.to_string()));
    }
    let hex = s.strip_prefix("b:")?;
    let bytes: Option<Vec<u8>> =
        (0..hex.len()).step_by(2).map(|i| hex.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok())).collect();
    bytes.map(Stored::Bytes)
}

/// Refuses what cannot run online.
fn check(plan: &Plan) -> Result<(), Error> {
    let backend = plan.backend()?;
    if backend == combkey::Backend::Sqlite {
        return Err(Error::refused(
            "SQLite has one writer at a time: an online run would hold it as long as an offline one; run without --online",
        ));
    }
    if plan.retypes() {
        return Err(Error::refused(format!(
            "the column's type changes ({} to {}): that is DDL, which locks the table while it rebuilds it; run without \
             --online, in a maintenance window",
            plan.column_type, plan.final_type
        )));
    }
    if backend == combkey::Backend::Postgres && !plan.unindexed.is_empty() {
        let names: Vec<String> =
            plan.unindexed.iter().map(|(t, c)| format!("{}({})", Name::from(t), c.join(", "))).collect();
        return Err(Error::refused(format!(
            "referencing columns have no index, so checking each batch's keys would scan their tables: {}; create one \
             first (CREATE INDEX CONCURRENTLY does not block writes)",
            names.join(", ")
        )));
    }
    Ok(())
}

/// Waits while the server is busier than allowed; the time waited.
async fn throttle(db: &mut Db, online: &Online) -> Result<Duration, Error> {
    let cat = db.catalog()?;
    let started = Instant::now();
    let mut delay = Duration::from_millis(50);
    loop {
        let mut busy = false;
        if let (Some(limit), Some(q)) = (online.pause_when_busy, cat.lock_waiters()) {
            busy |= db.query(q).await? >= limit;
        }
        if let Some(max) = online.max_lag {
            if let Some(q) = cat.replication_lag() {
                busy |= db.query(q).await? > max.as_secs_f64();
            }
            for url in &online.replica_urls {
                let mut replica = Db::connect(url).await?;
                if let Some((sql, column)) = replica.catalog()?.replica_lag() {
                    let (names, rows) = replica.rows_named(sql).await?;
                    if let Some(i) = names.iter().position(|n| n == column) {
                        let lag = rows
                            .iter()
                            .filter_map(|r| r.get(i).cloned().flatten()?.parse::<f64>().ok())
                            .fold(0.0, f64::max);
                        busy |= lag > max.as_secs_f64();
                    }
                }
            }
        }
        if !busy {
            return Ok(started.elapsed());
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

/// Runs `plan` online.
pub(crate) async fn run(
    db: &mut Db,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<OnlineOutcome, Error> {
    check(plan)?;
    let started = Instant::now();
    let backend = db.backend();
    let cat = db.catalog()?;
    let table: Name = (&plan.table).into();
    let column = Column {
        name: plan.column.clone(),
        data_type: plan.column_type.clone(),
        nullable: false,
        default: None,
        auto_update: false,
        generated: false,
    };
    let only = plan.options.inherited == Inherited::Only;
    let targets: Vec<Rewrite> = plan
        .rewrites
        .iter()
        .map(|r| Rewrite { table: (&r.table).into(), columns: r.columns.clone(), keep: r.keep.clone() })
        .collect();
    let journal = Journal::new(cat, plan);
    journal.ensure(db, plan.table.schema.as_deref()).await?;
    let mut out = OnlineOutcome::default();
    let mut cursor = match journal.online_cursor(db, plan).await? {
        Some(c) => {
            out.resumed = true;
            c.as_deref().and_then(cursor_value)
        }
        None => {
            journal.start_online(db, plan).await?;
            None
        }
    };
    db.exec_all(&cat.session(plan.options.lock_timeout_ms)).await?;
    let fk = cat.fk_checks_off();
    if let Some((off, _)) = &fk {
        db.exec_all(off).await?;
    }
    // The table's size for progress: the statistics' estimate, or a count where there is none.
    let total = match db.query(cat.row_estimate(&table)).await? {
        Some(n) if n > 0 => n,
        _ => db.count(&format!("SELECT count(*) FROM {}", table.quoted(backend))).await?,
    };
    let fail_after = fail_after_batch();
    let q = |n: &str| backend.quote(n);
    let result: Result<(), Error> = async {
        let mut converted_this_pass = 0;
        // A pass that began at a resumed run's cursor saw only the keys after it: keys added
        // before it meanwhile are found by a pass from the start, so such a pass never ends
        // the run by itself.
        let mut pass_from_start = cursor.is_none();
        let mut live = plan.clone();
        loop {
            out.paused += throttle(db, online).await?;
            let filter = match &cursor {
                Some(c) => format!(" AND {} > {}", q(&plan.column), cat.key_literal(c)),
                None => String::new(),
            };
            let sql = format!("{} LIMIT {}", cat.select_keys(&table, &column, only, &filter), online.batch_size);
            let rows = db.rows(&sql, &[]).await?;
            let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
            out.scanned += values.len();
            let last = values.last().cloned();
            // Keys the application made since the audit, in a layout it still makes, count too.
            live.classifier = plan.classifier.extended_to(combkey::Timestamp::now().unix_ms());
            let batch = changes(&live, &values)?;
            if !batch.is_empty() {
                let olds: Vec<String> = batch.iter().map(|c| cat.key_literal(&c.old)).collect();
                let in_olds = olds.join(", ");
                let mut attempt = 0;
                loop {
                    let tx: Result<(), Error> = async {
                        db.exec(&cat.begin()).await?;
                        // Parents first: a concurrent child insert that references one waits,
                        // then finds it gone, instead of slipping in between.
                        db.rows(
                            &format!(
                                "SELECT 1 FROM {} WHERE {} IN ({in_olds}) FOR UPDATE",
                                table.quoted(backend),
                                q(&plan.column)
                            ),
                            &[],
                        )
                        .await?;
                        db.exec_all(&cat.map_table(&plan.column_type)).await?;
                        let rows: Vec<(Stored, Stored)> =
                            batch.iter().map(|c| (c.old.clone(), c.new.clone())).collect();
                        db.exec(&cat.insert_map(&rows)).await?;
                        db.exec_all(&cat.rewrite_from_map(&targets, only)).await?;
                        for r in &plan.references {
                            if let Some(i) = r.parent_columns.iter().position(|c| *c == plan.column) {
                                let left = db
                                    .count(&format!(
                                        "SELECT count(*) FROM {} WHERE {} IN ({in_olds})",
                                        Name::from(&r.child).quoted(backend),
                                        q(&r.child_columns[i])
                                    ))
                                    .await?;
                                if left > 0 {
                                    return Err(Error::new(
                                        ErrorKind::Conflict,
                                        format!(
                                            "{left} rows of {} still reference an old key of the batch",
                                            Name::from(&r.child)
                                        ),
                                    ));
                                }
                            }
                        }
                        journal.set_cursor(db, last.as_ref().map(cursor_text).as_deref(), out.passes).await?;
                        db.exec("COMMIT").await?;
                        Ok(())
                    }
                    .await;
                    match tx {
                        Ok(()) => break,
                        Err(e) => {
                            let _ = db.exec("ROLLBACK").await;
                            if matches!(e.kind(), ErrorKind::LockTimeout | ErrorKind::Conflict)
                                && attempt < online.max_retries
                            {
                                attempt += 1;
                                out.retries += 1;
                                tokio::time::sleep(Duration::from_millis(20 << attempt.min(7))).await;
                                continue;
                            }
                            return Err(e);
                        }
                    }
                }
                out.converted += batch.len();
                converted_this_pass += batch.len();
                out.batches += 1;
                if fail_after == Some(out.batches) {
                    eprintln!("combkey doctor: stopping after batch {} (COMBKEY_DOCTOR_FAIL_AFTER_BATCH)", out.batches);
                    std::process::abort();
                }
                if !online.sleep.is_zero() {
                    tokio::time::sleep(online.sleep).await;
                }
            } else if let Some(l) = &last {
                journal.set_cursor(db, Some(&cursor_text(l)), out.passes).await?;
            }
            progress.batch(out.scanned, out.converted, total);
            match last {
                Some(l) if values.len() == online.batch_size => cursor = Some(l),
                _ => {
                    // The end of a pass: again from the start while keys arrived meanwhile.
                    out.passes += 1;
                    if (converted_this_pass == 0 && pass_from_start) || out.passes >= 20 {
                        break;
                    }
                    converted_this_pass = 0;
                    pass_from_start = true;
                    cursor = None;
                    journal.set_cursor(db, None, out.passes).await?;
                }
            }
        }
        // Every foreign key whole.
        for r in &plan.references {
            let sql = orphan_count(backend, r, &table);
            let n = db.count(&sql).await?;
            if n > 0 {
                return Err(Error::new(
                    ErrorKind::Verification,
                    format!("{n} rows fail the check {}", crate::db::short(&sql)),
                ));
            }
        }
        journal.finish(db).await?;
        Ok(())
    }
    .await;
    if let Some((_, on)) = &fk {
        let _ = db.exec_all(on).await;
    }
    result.map_err(|e| {
        e.context("combkey doctor --online").with_hint(
            "; every batch committed whole and the journal keeps the position: run the same command again to go on",
        )
    })?;
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        for v in [Stored::Bytes(vec![0, 1, 0xfe, 0xff]), Stored::Text("017f22e2-79b0-7cc3-98c4-dc0c0c07398f".into())] {
            assert_eq!(cursor_value(&cursor_text(&v)), Some(v));
        }
        assert_eq!(cursor_value("b:zz"), None);
    }
}
