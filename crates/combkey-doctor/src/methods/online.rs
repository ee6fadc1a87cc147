//! `--online`: the keys change in small batches, each a short transaction that moves a batch of
//! parents and their children together, while the application keeps reading and writing.
//!
//! Each batch rewrites the parents and every referencing column from the batch's mapping,
//! checks that no child still references an old key of the batch, advances the journal's
//! cursor, and commits. Foreign keys are never dropped. PostgreSQL checks them at the end of
//! the batch's one statement (a child another session committed after the statement began
//! fails the check, and the batch is tried again); the batch's transaction keeps the planner to
//! index probes, so a batch's work is bounded by the batch whatever the table's size. On
//! MySQL the session's checks are off while it moves parent and children together: the batch
//! moves its parent rows first, which locks them (so a concurrent insert of a child that
//! references one of them waits, and then finds the key gone, instead of slipping in between),
//! reads each child table through its index, and its own count of leftover children stands in
//! for the checks. A batch that loses a lock race (a lock wait past the timeout, a deadlock) is
//! rolled back and retried with a backoff. Two batches run at a time, on two sessions.
//!
//! The scan goes through the keys in key order from the journal's cursor, on a second session
//! that only reads (the next batch's keys while this batch's transaction runs), so a killed run
//! resumes where it was; when it reaches the end, it goes through again for keys that arrived
//! meanwhile with an old layout, until a pass finds none.

use std::time::{Duration, Instant};

use crate::catalog::{Column, Name, Rewrite, Stored};

use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::keys::{Keyed, Source, key_map_rows};
use crate::methods::shared::{Journal, OnlineOutcome, ddl_in_tries};
use crate::options::Inherited;
use crate::options::{Online, Progress};
use crate::plan::{Plan, orphan_count};

/// Passes through the table before a run that still finds keys to convert gives up (each
/// catch-up pass reads every key).
const MAX_PASSES: usize = 10;

/// Keys one catch-up pass keeps to convert, at most (about 50 bytes each).
const SWEEP_CAP: usize = 100_000;

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
    // Without an index each batch reads the referencing table whole, and on MySQL/MariaDB
    // (where a foreign key's index can be dropped while checks are off) locks every row of it
    // until the batch commits: a writer waited 13 s in a break-test.
    if !plan.unindexed.is_empty() {
        let names: Vec<String> =
            plan.unindexed.iter().map(|(t, c)| format!("{}({})", Name::from(t), c.join(", "))).collect();
        let statements: Vec<String> = plan
            .unindexed
            .iter()
            .map(|(t, c)| {
                let t = Name::from(t);
                let cols: Vec<String> = c.iter().map(|c| backend.quote(c)).collect();
                if backend == combkey::Backend::Postgres {
                    format!("CREATE INDEX CONCURRENTLY ON {} ({});", t.quoted(backend), cols.join(", "))
                } else {
                    format!(
                        "ALTER TABLE {} ADD INDEX ({}), ALGORITHM=INPLACE, LOCK=NONE;",
                        t.quoted(backend),
                        cols.join(", ")
                    )
                }
            })
            .collect();
        return Err(Error::refused(format!(
            "referencing columns have no index, so each batch would read (and lock) their tables whole: {}; create one \
             first, which does not block writes: {} (or run without --online, which builds one for the run and \
             drops it after)",
            names.join(", "),
            statements.join(" ")
        )));
    }
    Ok(())
}

/// Runs `plan` online.
pub(crate) async fn run(
    db: &mut Db,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<OnlineOutcome, Error> {
    check(plan)?;
    // Replicas are connected to (and checked to be replicas) before anything changes.
    let mut throttle = crate::throttle::Throttle::connect(online, db.catalog()?).await?;
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
    let journal = if online.after_swap { Journal::after_swap(cat, plan) } else { Journal::new(cat, plan) };
    journal.ensure(db, plan.table.schema.as_deref()).await?;
    // The table of old and new keys, made before the first batch (each batch adds its keys).
    let key_map = plan.key_map.as_ref().map(Name::from);
    if let Some(step) = plan.steps.iter().find(|s| s.kind == crate::plan::StepKind::KeyMap) {
        db.exec_all(&step.sql).await?;
    }
    let mut out = OnlineOutcome { method: "in-place", ..OnlineOutcome::default() };
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
    // `--set-default` before the first batch: from here on rows inserted without a key get
    // combkey's, so the passes end (its statements are safe to run again on a resumed run).
    // In short tries where it is DDL outside a transaction (MySQL/MariaDB's trigger), so the
    // application's writes never queue behind it.
    if let Some(step) = plan.steps.iter().find(|s| s.kind == crate::plan::StepKind::SetDefault) {
        let restore = cat.session(plan.options.lock_timeout_ms);
        let alone = crate::methods::shared::locks_alone(db, &Name::from(&plan.table)).await?;
        let total = plan.options.lock_timeout_ms.saturating_mul(crate::methods::shared::SET_DEFAULT_TRIES);
        ddl_in_tries(db, &step.sql, total, &restore, alone, &mut *progress).await.map_err(|e| {
            e.context("--set-default's trigger, before the first batch").with_hint(
                "; no key was converted. The run's journal row and what it made before the trigger (combkey's SQL \
                 functions, the key map table) stay for the same command, which goes on from there: run it again \
                 once the table's other sessions end (or --apply without --online, which finishes it too)",
            )
        })?;
    }
    let fk = cat.fk_checks_off();
    // Where the session's foreign key checks are off (MySQL), the batch's rewrite of the
    // parents locks them before the children move, so no child can be added to one in
    // between; where the database checks them (PostgreSQL, at the end of the batch's one
    // statement), such a child fails the check and the batch is tried again.
    debug_assert!(targets.first().is_some_and(|t| t.table == table), "the parents are rewritten first");
    if let Some((off, _)) = &fk {
        db.exec_all(off).await?;
    }
    let begin = cat.begin_batch();
    // The table's size for progress: the statistics' estimate, or a count where there is none.
    let total = match db.query(cat.row_estimate(&table)).await? {
        Some(n) if n > 0 => n,
        _ => db.count(&format!("SELECT count(*) FROM {}", table.quoted(backend))).await?,
    };
    #[cfg(feature = "failpoints")]
    let fail_after = crate::failpoints::stop_at("BATCH").and_then(|n| usize::try_from(n).ok());
    let q = |n: &str| backend.quote(n);
    let result: Result<(), Error> = async {
        let mut converted_this_pass = 0;
        // A pass that began at a resumed run's cursor saw only the keys after it: keys added
        // before it meanwhile are found by a pass from the start, so such a pass never ends
        // the run by itself.
        let mut pass_from_start = cursor.is_none();
        let mut live = plan.clone();
        // The keys are read on a second session: the next batch's while this one's
        // transaction runs (reads only, no transaction: they take no lock).
        let mut scanner = db.another().await?;
        // What the key source needs of each row besides its key (a re-key: the row's time).
        let source = Source::of(plan);
        let also = {
            let columns = scanner.query(cat.columns(&table)).await?;
            source.reads(&table, &columns)?
        };
        let also = also.as_str();
        let keyed = |rows: &[Vec<Option<String>>]| source.keyed(cat, rows);
        let scan = async |scanner: &mut Db, cursor: Option<&Stored>| -> Result<Vec<Keyed>, Error> {
            let mut filter = match cursor {
                Some(c) => format!(" AND {} > {}", q(&plan.column), cat.key_literal(c)),
                None => String::new(),
            };
            if let Some(only) = &online.only {
                filter.push_str(&format!(" AND {only}"));
            }
            let sql = format!("{} LIMIT {}", cat.select_keys(&table, &column, only, &filter, also), online.batch_size);
            let rows = scanner.rows(&sql, &[]).await?;
            keyed(&rows)
        };
        // The catch-up passes after a pass from the start: every key read once, in the order
        // that reads the table fastest, the ones to convert kept and converted in batches.
        // (On PostgreSQL a pass in key order visits the heap at random for every key: most of
        // a run's reading, for a pass that usually finds nothing.)
        // At most SWEEP_CAP keys are kept from one sweep (memory stays bounded however many
        // old keys arrived meanwhile): a sweep that found more converts those, then sweeps again.
        let sweep =
            async |scanner: &mut Db, live: &Plan, scanned: &mut usize| -> Result<(Vec<Vec<Keyed>>, bool), Error> {
                let mut found: Vec<Keyed> = Vec::new();
                let mut complete = true;
                scanner
                    .each_page(&cat.sweep_keys(&table, &column, only, also), crate::catalog::PAGE, async |rows| {
                        *scanned += rows.len();
                        if found.len() >= SWEEP_CAP {
                            complete = false;
                            return Ok(());
                        }
                        let keys = keyed(&rows)?;
                        let changed: std::collections::HashSet<Stored> =
                            Source::of(live).changes(&keys)?.into_iter().map(|c| c.old).collect();
                        found.extend(keys.into_iter().filter(|(v, _)| changed.contains(v)));
                        Ok(())
                    })
                    .await?;
                found.sort();
                Ok((found.chunks(online.batch_size).rev().map(<[Keyed]>::to_vec).collect(), complete))
            };
        // One batch's transaction on `db`, retried when it loses a race; the keys it changed.
        let rereads = source.rereads();
        // A batch's statements for `batch`: its rewrite (after `begin`, where given) and the key
        // map's rows; and the list of its old keys.
        let build =
            |batch: &[crate::keys::KeyChange], live: &Plan, with_begin: bool| -> Result<(String, String), Error> {
                let olds: Vec<String> = batch.iter().map(|c| cat.key_literal(&c.old)).collect();
                let rows: Vec<(Stored, Stored)> = batch.iter().map(|c| (c.old.clone(), c.new.clone())).collect();
                // The parents' rewrite comes first (the plan's first target is the table): it
                // locks each parent row it moves, so a concurrent child insert that references
                // one waits for the batch, then finds the key gone, instead of slipping in
                // between; a child inserted before it holds its parent's lock until it commits,
                // and the children's rewrite that follows moves it.
                let mut head = if with_begin { begin.clone() } else { Vec::new() };
                head.extend(cat.rewrite_batch(&targets, only, &rows, &plan.column_type));
                // The batch's old and new keys go to the key map in the same transaction.
                if let Some(map) = &key_map {
                    let kept = key_map_rows(live, batch)?;
                    if !kept.is_empty() {
                        head.push(cat.key_map_unstale(map, &kept));
                        head.push(cat.key_map_insert(map, &kept));
                    }
                }
                Ok((head.join(";\n"), olds.join(", ")))
            };
        // One batch's transaction on `db`, retried when it loses a race; the keys it changed.
        let run_batch =
            async |db: &mut Db, keys: &[Keyed], live: &Plan, passes: usize| -> Result<(usize, usize), Error> {
                let last = keys.last().map(|k| &k.0);
                let read = Source::of(live).changes(keys)?;
                if read.is_empty() {
                    if let Some(l) = last {
                        journal.set_cursor(db, Some(&cursor_text(l)), passes).await?;
                    }
                    return Ok((0, 0));
                }
                let (read_head, read_olds) = build(&read, live, true)?;
                // Where a new key depends on the row (a re-key: its time), the row may have
                // changed since it was read, and the new key must be what the row says when it
                // changes. The transaction locks the batch's rows (`FOR UPDATE`), reads them
                // again, and makes the keys from those.
                let lock = format!(
                    "{} FOR UPDATE",
                    cat.select_keys(&table, &column, only, &format!(" AND {} IN ({read_olds})", q(&plan.column)), also)
                );
                let mut attempt = 0;
                let tried = Instant::now();
                loop {
                    let tx: Result<usize, Error> = async {
                        let (n, in_olds) = if rereads {
                            db.exec_all(&begin).await?;
                            let locked = db.rows(&lock, &[]).await?;
                            let batch = Source::of(live).changes(&keyed(&locked)?)?;
                            if !batch.is_empty() {
                                let (head, in_olds) = build(&batch, live, false)?;
                                db.exec_as(&head, "the batch's rewrite").await?;
                                (batch.len(), in_olds)
                            } else {
                                (0, String::new())
                            }
                        } else {
                            // The transaction's start, the lock and the rewrite in one round trip: on a
                            // busy server each round trip waits its turn for the CPU.
                            db.exec_as(&read_head, "the batch's rewrite").await?;
                            (read.len(), read_olds.clone())
                        };
                        for r in plan.references.iter().filter(|_| n > 0) {
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
                        journal.set_cursor(db, last.map(cursor_text).as_deref(), passes).await?;
                        db.exec("COMMIT").await?;
                        Ok(n)
                    }
                    .await;
                    match tx {
                        Ok(n) => return Ok((n, usize::try_from(attempt).unwrap_or(usize::MAX))),
                        Err(e) => {
                            let _ = db.exec("ROLLBACK").await;
                            // A unique key's violation: a new key of the batch the table holds
                            // already (written since the audit). Named, where it is found.
                            if matches!(e.code(), Some("23505" | "23000" | "1062")) && !rereads {
                                let news: Vec<String> = read.iter().map(|c| cat.key_literal(&c.new)).collect();
                                let held = db
                                    .rows(
                                        &format!(
                                            "SELECT {} FROM {} WHERE {} IN ({}) LIMIT 5",
                                            cat.key_text(&q(&plan.column)),
                                            table.quoted(backend),
                                            q(&plan.column),
                                            news.join(", ")
                                        ),
                                        &[],
                                    )
                                    .await
                                    .unwrap_or_default();
                                let pairs: Vec<String> = held
                                    .iter()
                                    .filter_map(|r| r.first().cloned().flatten())
                                    .filter_map(|t| t.parse::<combkey::Comb>().ok())
                                    .filter_map(|held| {
                                        let c = read.iter().find(|c| crate::keys::id_of(&c.new).ok() == Some(held))?;
                                        let old = crate::keys::id_of(&c.old).ok()?;
                                        Some(format!(
                                            "{old} would become {held}, a key the table holds already (change or \
                                             remove the row of {old}, not converted yet)"
                                        ))
                                    })
                                    .collect();
                                if !pairs.is_empty() {
                                    return Err(Error::refused(format!(
                                        "two keys of the table would become one key: {} (the audit found no such pair: \
                                         one of them was written since, a key that is the new form of another, or that \
                                         differs from one only in bits the conversion drops)",
                                        pairs.join("; ")
                                    )));
                                }
                            }
                            // PostgreSQL's foreign key check at the end of the statement (23503):
                            // a child of a batch key committed after the statement began; the
                            // next attempt sees it and moves it too.
                            if (matches!(e.kind(), ErrorKind::LockTimeout | ErrorKind::Conflict)
                                || e.code() == Some("23503"))
                                && attempt < online.max_retries
                            {
                                attempt += 1;
                                tokio::time::sleep(Duration::from_millis(20 << attempt.min(7))).await;
                                continue;
                            }
                            if attempt == 0 {
                                return Err(e);
                            }
                            let key = |c: Option<&crate::keys::KeyChange>| {
                                c.map(|c| cat.key_literal(&c.old)).unwrap_or_default()
                            };
                            let (first, last) = (key(read.first()), key(read.last()));
                            return Err(e.context(format!(
                                "a batch of {} keys ({} to {}) did not commit in {} tries over {:.0} s (each waits for \
                                 a lock at most --lock-timeout; another session holds one of its rows or their \
                                 children's)",
                                read.len(),
                                first,
                                last,
                                attempt + 1,
                                tried.elapsed().as_secs_f64()
                            )));
                        }
                    }
                }
            };
        // Two batches at a time, each on a session of its own: consecutive ranges of keys, so
        // they change different rows; each commits on its own (a batch that is retried while
        // the next one committed leaves its keys to the pass from the start that ends every
        // run, should the run be killed meanwhile).
        let lanes = 2;
        let mut second = db.another().await?;
        second.exec_all(&cat.session(plan.options.lock_timeout_ms)).await?;
        if let Some((off, _)) = &fk {
            second.exec_all(off).await?;
        }
        // Keys read ahead, the next round's.
        let mut prefetched: std::collections::VecDeque<Vec<Keyed>> = std::collections::VecDeque::new();
        // Batches a sweep found, last first.
        let mut swept: Vec<Vec<Keyed>> = Vec::new();
        let mut sweeping = false;
        // Whether the last sweep kept every key it found (it stops keeping at SWEEP_CAP).
        let mut sweep_complete = true;
        loop {
            out.paused += throttle.wait(db, progress).await?;
            // This round's keys: up to `lanes` batches, in key order.
            let mut round: Vec<Vec<Keyed>> = Vec::new();
            let mut pass_ended = false;
            while round.len() < lanes && !pass_ended {
                if sweeping {
                    match swept.pop() {
                        Some(v) => round.push(v),
                        None => pass_ended = true,
                    }
                    pass_ended |= swept.is_empty();
                } else {
                    let v = match prefetched.pop_front() {
                        Some(v) => v,
                        None => scan(&mut scanner, cursor.as_ref()).await?,
                    };
                    out.scanned += v.len();
                    if v.len() == online.batch_size {
                        cursor = v.last().map(|k| k.0.clone());
                    } else {
                        pass_ended = true;
                    }
                    round.push(v);
                }
            }
            // Keys the application made since the audit, in a layout it still makes, count too.
            live.classifier = plan.classifier.extended_to(combkey::Timestamp::now().unix_ms());
            let passes = out.passes;
            let empty: Vec<Keyed> = Vec::new();
            let (a, b) = (round.first().unwrap_or(&empty), round.get(1).unwrap_or(&empty));
            // The next round's keys are read meanwhile.
            let read_next = async {
                let mut ahead = std::collections::VecDeque::new();
                if let (Some(c), false) = (&cursor, sweeping || pass_ended) {
                    let first = scan(&mut scanner, Some(c)).await?;
                    if lanes == 2
                        && first.len() == online.batch_size
                        && let Some(l) = first.last().map(|k| k.0.clone())
                    {
                        ahead.push_back(first);
                        ahead.push_back(scan(&mut scanner, Some(&l)).await?);
                    } else {
                        ahead.push_back(first);
                    }
                }
                Ok::<_, Error>(ahead)
            };
            let (done_a, done_b, read) =
                tokio::join!(run_batch(db, a, &live, passes), run_batch(&mut second, b, &live, passes), read_next);
            let mut round_converted = 0;
            for (converted, retried) in [done_a?, done_b?] {
                out.retries += retried;
                if converted > 0 {
                    round_converted += converted;
                    out.batches += 1;
                }
            }
            out.converted += round_converted;
            converted_this_pass += round_converted;
            prefetched = read?;
            #[cfg(feature = "failpoints")]
            if fail_after.is_some_and(|n| out.batches >= n) {
                crate::failpoints::abort(&format!(
                    "stopping after batch {} (COMBKEY_DOCTOR_FAIL_AFTER_BATCH)",
                    out.batches
                ));
            }
            if !online.sleep.is_zero() && round_converted > 0 {
                tokio::time::sleep(online.sleep).await;
            }
            progress.batch(out.scanned, out.converted, total);
            if pass_ended {
                // The end of a pass: again while keys arrived meanwhile, until a pass that read
                // the whole table found none. A sweep that kept only SWEEP_CAP of the keys it
                // found is not a pass of its own: it goes on with the rest.
                if sweep_complete {
                    out.passes += 1;
                }
                if (converted_this_pass == 0 || online.only.is_some()) && (pass_from_start || sweeping) {
                    break;
                }
                if out.passes >= MAX_PASSES && converted_this_pass > 0 && sweep_complete {
                    // Never "done" while keys with an old layout are still being written: each
                    // pass would find more.
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        format!(
                            "{converted_this_pass} keys with an old layout were written while the last of {} passes \
                             through the table ran (and converted): the application still writes such keys, so no \
                             pass ends with none; make it write sorted keys (combkey's) first, then run again",
                            out.passes
                        ),
                    ));
                }
                converted_this_pass = 0;
                // Killed from here on, the next run starts with a pass from the start.
                journal.set_cursor(db, None, out.passes).await?;
                if pass_from_start || sweeping {
                    sweeping = true;
                    (swept, sweep_complete) = sweep(&mut scanner, &live, &mut out.scanned).await?;
                    if swept.is_empty() {
                        out.passes += 1;
                        break;
                    }
                } else {
                    // The pass began at a resumed run's cursor: one from the start.
                    pass_from_start = true;
                    cursor = None;
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
        if online.after_swap {
            journal.forget(db).await?;
        } else {
            journal.finish(db).await?;
        }
        Ok(())
    }
    .await;
    if let Some((_, on)) = &fk {
        let _ = db.exec_all(on).await;
    }
    result.map_err(|e| {
        let collision = Source::of(plan).hint(&e);
        // A unique key's violation that is no re-key's pair, or two keys named as one: the same
        // again would fail alike.
        let unique = collision.is_empty()
            && (matches!(e.code(), Some("23505" | "23000" | "1062" | "2067" | "1555"))
                || e.to_string().contains("would become one key"));
        let e = e.context("combkey doctor --online").with_hint(collision);
        if unique {
            e.with_hint(
                "; a key this batch makes is one the table holds already: a key written since the audit (the new form \
                 of a key of the batch, or a key that differs from one only in bits the conversion drops). The batch \
                 rolled back; every earlier batch committed whole and the journal keeps the position: change or \
                 remove one of the two keys, then run the same command again to go on",
            )
        } else {
            e.with_hint(
                "; every batch committed whole and the journal keeps the position: run the same command again to go on",
            )
        }
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
