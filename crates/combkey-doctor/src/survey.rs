//! The audit's read of a table: its schema facts, then its keys streamed through the audit's
//! two passes (nothing held per key beyond a bounded sample, and the external sort of
//! `crate::merges`, which holds one run), then the checks the database answers (the same id
//! written twice, rows referencing nothing), all in one read-only transaction.

use std::time::Instant;

use crate::audit::{Audit, Kind, Learner, Tally};
use crate::catalog::{Catalog, Stored};
use crate::db::Db;
use crate::error::Error;
use crate::keys::{id_of, stored_for};
use crate::merges::Merges;
use crate::options::{Inherited, Options};
use crate::plan::{Reference, orphan_count};
use crate::schema::{IndexStats, Schema};
use combkey::Comb;
use combkey::layouts::Layout;

/// What the read found.
pub(crate) struct Read {
    pub(crate) schema: Schema,
    /// Rows in the table (an estimate when sampling).
    pub(crate) rows: i64,
    /// Keys read, unreadable ones included.
    pub(crate) read: u64,
    /// Values that are no UUID at all: how many, and the first few.
    pub(crate) unreadable: (usize, Vec<String>),
    pub(crate) audit: Audit,
    pub(crate) index: Option<IndexStats>,
    /// Seconds the first pass over the keys took (the read rate an estimate starts from).
    pub(crate) first_pass_seconds: f64,
    /// Keys that sort after the next id the application makes (combkey's v7, or a v6 where
    /// the target is v6), in the database's own order of the column.
    pub(crate) keys_after_next: i64,
}

/// A pass's count of the keys and its search for keys that would become one, fed the same keys.
struct Counted {
    tally: Tally,
    merges: Option<Merges>,
}

impl Counted {
    /// Counts `id`, and says its verdict.
    fn feed(&mut self, id: Comb) -> Kind {
        let kind = self.tally.feed(&id);
        if let Some(m) = &mut self.merges {
            m.feed(id, kind);
        }
        kind
    }
}

/// A stored key value as a message shows it.
pub(crate) fn shown(v: &Stored) -> String {
    match v {
        Stored::Text(t) => format!("{t:?}"),
        Stored::Bytes(b) if b.len() == 16 => {
            format!("0x{}", b.iter().map(|x| format!("{x:02X}")).collect::<String>())
        }
        // UUID text in a binary column (MySQL's text keys read as bytes): the text.
        Stored::Bytes(b) if b.len() <= 64 && b.iter().all(|c| c.is_ascii_graphic()) => {
            format!("{:?}", String::from_utf8_lossy(b))
        }
        Stored::Bytes(b) => format!("{} bytes", b.len()),
    }
}

/// Reads the table's schema facts and its keys (about `sample` of them, drawn at random, or
/// all), in a read-only transaction.
pub(crate) async fn read(
    db: &mut Db,
    table: &str,
    column: &str,
    sample: Option<usize>,
    options: &Options,
) -> Result<Read, Error> {
    let cat = db.catalog()?;
    db.exec_all(&cat.session(options.lock_timeout_ms)).await?;
    db.exec_all(&cat.begin_read_only()).await?;
    let result = read_in_transaction(db, cat, table, column, sample, options).await;
    let end = db.exec_all(&cat.end_read_only()).await;
    let read = result?;
    end?;
    Ok(read)
}

async fn read_in_transaction(
    db: &mut Db,
    cat: &dyn Catalog,
    table: &str,
    column: &str,
    sample: Option<usize>,
    options: &Options,
) -> Result<Read, Error> {
    let mut schema = Schema::load(db, table, column).await?;
    let backend = db.backend();
    let estimate = db.query(cat.row_estimate(&schema.table)).await?;
    let rows = match (sample, estimate) {
        (Some(_), Some(n)) if n > 0 => n,
        _ => db.count(&format!("SELECT count(*) FROM {}", schema.table.quoted(backend))).await?,
    };
    // The share of rows to draw.
    #[allow(clippy::cast_precision_loss)]
    let filter = match sample {
        Some(n) if (n as f64) < rows as f64 => cat.sample_filter(n as f64 / rows.max(1) as f64),
        _ => String::new(),
    };
    let only = options.inherited == Inherited::Only;
    // `--rekey-from`: each row's time too, in the last cell; and the columns it could read.
    let columns = db.query(cat.columns(&schema.table)).await?;
    schema.time_columns = crate::rekey::time_columns(backend, &schema.table, &columns);
    let also = crate::rekey::select_also(backend, &schema.table, &columns, options)?;
    let sql = cat.select_keys(&schema.table, &schema.column, only, &filter, &also);
    let now = combkey::Timestamp::now();

    // First pass: every key seen once; a bounded sample of the unlabelled ones kept. Each key
    // is also counted under the classifier that learns nothing (the one a table of labelled
    // keys gets, or a `--layout` one): where what the pass learned leaves the classifier that,
    // the count is the audit's, and the table is read once.
    let started = Instant::now();
    let mut learner = Learner::new(now);
    let unlearned = Learner::new(now).classifier(options.layout);
    let merges = |c: &crate::audit::Classifier| sample.is_none().then(|| Merges::new(options, c));
    let mut early = options
        .rekey_from
        .is_none()
        .then(|| Counted { tally: Tally::new(unlearned.clone(), now, None), merges: merges(&unlearned) });
    let mut read = 0u64;
    let mut unreadable = (0usize, Vec::new());
    db.each_row(&sql, |row| {
        let v = cat.parse_key(&row)?;
        read += 1;
        match id_of(&v) {
            Ok(id) => {
                learner.feed(id);
                if let Some(c) = &mut early {
                    c.feed(id);
                }
            }
            Err(e) => {
                unreadable.0 += 1;
                if unreadable.1.len() < 5 {
                    unreadable.1.push(format!("{} ({e})", shown(&v)));
                }
            }
        }
        Ok(())
    })
    .await?;
    let first_pass_seconds = started.elapsed().as_secs_f64();

    // Second pass, where the first learned something: every key classified by what it learned
    // (the keys kept, where the table was small enough to keep them all; the table again
    // otherwise).
    let classifier = learner.classifier(options.layout);
    let mut counted = match early {
        Some(mut c) if classifier == unlearned => {
            c.tally.set_sampled(learner.sampled());
            c
        }
        _ => {
            let mut c = Counted { merges: merges(&classifier), tally: Tally::new(classifier, now, learner.sampled()) };
            // `--rekey-from` reads the table again for the rows' times: each key it would
            // re-key whose time makes no v7 key is counted.
            let mut rekey = options.rekey_from.as_ref().map(|c| (c.clone(), crate::rekey::Invalid::default()));
            let now_us = crate::rekey::now_us();
            match (learner.keys(), &mut rekey) {
                (_, Some((_, invalid))) => {
                    db.each_row(&sql, |row| {
                        let v = cat.parse_key(&row)?;
                        if let Ok(id) = id_of(&v)
                            && crate::rekey::rekeys(c.feed(id), &id, options)
                        {
                            let time = crate::rekey::RowTime::of(row.last().cloned().flatten().as_deref(), now_us);
                            // The key the run makes of it (it stays where its time makes none).
                            let new = match time {
                                crate::rekey::RowTime::At(us) => crate::rekey::rekeyed(&id, us),
                                _ => id,
                            };
                            if let Some(m) = &mut c.merges {
                                m.feed_new(id, new);
                            }
                            invalid.add(time, || shown(&v));
                        }
                        Ok(())
                    })
                    .await?
                }
                (Some(keys), None) => keys.iter().for_each(|&id| {
                    c.feed(id);
                }),
                (None, None) => {
                    db.each_row(&sql, |row| {
                        if let Ok(id) = id_of(&cat.parse_key(&row)?) {
                            c.feed(id);
                        }
                        Ok(())
                    })
                    .await?
                }
            }
            schema.rekey = rekey;
            c
        }
    };
    // `--inherited only` on PostgreSQL: the keys of the tables that inherit from it stay, and a
    // new key that is one of them would be one id twice in the hierarchy (which a query of the
    // table finds twice).
    if only
        && backend == combkey::Backend::Postgres
        && let Some(m) = counted.merges.as_mut()
    {
        let c = backend.quote(&schema.column.name);
        let sql = format!(
            "SELECT k.{c}::text FROM {t} k WHERE k.tableoid <> {oid}::regclass AND k.{c} IS NOT NULL",
            t = schema.table.quoted(backend),
            oid = crate::catalog::string_literal(&schema.table.quoted(backend))
        );
        db.each_row(&sql, |row| {
            if let Ok(id) = id_of(&cat.parse_key(&row)?) {
                m.feed_new(id, id);
            }
            Ok(())
        })
        .await?;
    }
    let merged = counted.merges.map(Merges::finish).transpose()?;
    let tally = counted.tally;
    drop(learner);
    let audit = tally.finish();

    // The next id the application makes, as the column holds it: the keys after it in the
    // database's order are keys it would sort before. A second from now: keys the application
    // makes while the audit reads (a default's trigger on the server, whose clock may be a few
    // milliseconds ahead, or of the same millisecond with greater random bits) are not counted
    // as keys out of order (a break-test saw "1 keys sort after the next id" after a clean
    // run under writers).
    let next = if options.to == Layout::V6 {
        Layout::V6.generate()?
    } else {
        Comb::min_for(combkey::Timestamp::now().saturating_add_ms(1000)).unwrap_or_else(|_| Comb::new())
    };
    let next_value = if cat.retype_needed(&schema.column) {
        Stored::Text(next.to_string())
    } else {
        stored_for(backend, &schema.column.data_type, next)
    };
    let keys_after_next =
        db.count(&cat.count_after(&schema.table, &schema.column, only, &cat.key_literal(&next_value))).await?;

    // The table of old and new keys a conversion that drops bits keeps, and whether a new
    // table there would be published (a subscriber without it would stop applying changes).
    let map = crate::plan::key_map_name(backend, &schema.table, options.key_map.as_deref());
    let columns = db.query(cat.columns(&map)).await?;
    let (has_rows, about) = if columns.is_empty() {
        (false, None)
    } else {
        let any = db.rows(&format!("SELECT 1 FROM {} LIMIT 1", map.quoted(backend)), &[]).await?;
        (!any.is_empty(), db.query(cat.table_about(&map)).await?)
    };
    let schema_exists = db.query(cat.schema_exists(map.schema.as_deref())).await?;
    schema.key_map = Some(crate::schema::KeyMapFacts { name: map, schema_exists, columns, has_rows, about });
    if let Some(q) = cat.publications_of_new_tables(schema.table.schema.as_deref()) {
        schema.new_tables_published = db.query(q).await?;
    }
    if let Some(q) = cat.statement_binlog() {
        schema.statement_binlog = db.query(q).await?;
    }
    if let Some(q) = cat.combkey_functions(&schema.table) {
        // combkey's own where each body is part of the text that installs combkey's functions.
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let ours = squash(backend.install_functions());
        let found = db.query(q).await?;
        schema.combkey_functions = !found.is_empty();
        let generator: Vec<&(String, String)> =
            found.iter().filter(|(name, _)| name == "combkey_v7" || name == "combkey_v7_from").collect();
        schema.combkey_v7 =
            (!generator.is_empty()).then(|| generator.iter().all(|(_, body)| ours.contains(&squash(body))));
    }

    if sample.is_none() {
        // The same id written two ways (letter case, braces, urn:uuid:): one stored form
        // would make them one key. Counted by the database, which groups them.
        if let Some(sql) = cat.same_id(&schema.table, &schema.column, only) {
            db.each_row(&sql, |row| {
                // `--keep-type`: an id that stays keeps each of its texts as it is, so its forms
                // stay apart (a key that converts becomes one new text).
                let id = row.first().cloned().flatten().and_then(|k| k.parse::<Comb>().ok());
                if options.keep_type
                    && let Some(id) = id
                {
                    let kind = audit.classifier.classify(&id);
                    if crate::plan::new_id(&id, kind, options).is_none() && !crate::rekey::rekeys(kind, &id, options) {
                        return Ok(());
                    }
                }
                let n: usize = row.get(1).cloned().flatten().and_then(|n| n.parse().ok()).unwrap_or(0);
                schema.same_id.0 += n.saturating_sub(1);
                if schema.same_id.1.len() < 5 {
                    let k = row.first().cloned().flatten().unwrap_or_default();
                    let stored = row.get(2).cloned().flatten().unwrap_or_default();
                    schema.same_id.1.push(format!("{stored}: {n} values read as {k}"));
                }
                Ok(())
            })
            .await?;
        }
        // Keys that would become one, found from the pass over the keys (crate::merges).
        if let Some(found) = merged {
            schema.collisions = found;
        }
        // Rows that already reference nothing would fail the check after the change.
        for fk in &schema.references {
            let r = Reference {
                name: fk.name.clone(),
                child: (&fk.child).into(),
                child_columns: fk.child_columns.clone(),
                parent_columns: fk.parent_columns.clone(),
                definition: fk.definition.clone(),
            };
            let n = db.count(&orphan_count(backend, &r, &schema.table)).await?;
            if n > 0 {
                schema.orphans.push((fk.name.clone(), fk.child.clone(), n));
            }
        }
    }
    let index = match db.query(cat.index_size(&schema.table)).await? {
        Some(bytes) => {
            let density = if db.query(cat.leaf_density_available()).await? {
                match cat.leaf_density(&schema.table) {
                    Some(q) => db.query(q).await?,
                    None => None,
                }
            } else {
                None
            };
            Some(IndexStats { bytes, leaf_density: density })
        }
        None => None,
    };
    Ok(Read { schema, rows, read, unreadable, audit, index, first_pass_seconds, keys_after_next })
}
