//! What the copy and swap of each database shares: the new, old and log tables' names, the
//! pace of the copy, its phases, its counts and its common refusals.

use std::time::{Duration, Instant};

use crate::catalog::{Column, Name};
use crate::db::Db;
use crate::error::Error;
use crate::keys::Source;
use crate::methods::shared::OnlineOutcome;
use crate::options::Progress;
use crate::plan::Plan;

/// One table of a swap: the table or a table that references its key.
#[derive(Clone, Debug)]
pub(crate) struct SwapTable {
    /// The table, as the application names it.
    pub(crate) name: Name,
    /// The copy being filled, which takes the name at the swap.
    pub(crate) new: Name,
    /// The name the table gets at the swap (kept until the user drops it).
    pub(crate) old: Name,
    /// Its change log (PostgreSQL).
    pub(crate) log: Name,
    /// Its columns.
    pub(crate) columns: Vec<Column>,
    /// Its primary key's columns.
    pub(crate) pk: Vec<String>,
    /// Its columns that hold the key column's values (the key itself, or columns referencing
    /// it): each is converted through the mapping table.
    pub(crate) keys: Vec<String>,
}

impl SwapTable {
    /// The columns a copy writes (a generated column is computed again).
    pub(crate) fn insertable(&self) -> Vec<&Column> {
        self.columns.iter().filter(|c| !c.generated).collect()
    }

    /// Which key column `c` is, if it is one.
    pub(crate) fn key_index(&self, c: &str) -> Option<usize> {
        self.keys.iter().position(|k| k == c)
    }
}

/// The objects of a swap: its tables (the table first) and its mapping table.
#[derive(Clone, Debug)]
pub(crate) struct Swap {
    pub(crate) tables: Vec<SwapTable>,
    pub(crate) map: Name,
    /// How long a statement may wait for another session's lock in all (`--lock-timeout`).
    pub(crate) lock_wait_ms: u64,
    /// The keys the server converts itself (MySQL/MariaDB; none on PostgreSQL).
    pub(super) server_keys: super::server_keys::ServerKeys,
}

/// A name made from `base` and `suffix` (`_orders_new`), cut to the database's longest
/// identifier and ended by a hash of the whole where it is longer.
pub(crate) fn derived(backend: combkey::Backend, base: &Name, prefix: &str, suffix: &str) -> Name {
    let mut name = format!("{prefix}{}{suffix}", base.name);
    let max = backend.max_identifier_len();
    if name.len() > max {
        let tag = format!("_{:08x}", crate::plan::fnv1a(&name));
        while name.len() + tag.len() > max {
            name.pop();
        }
        name.push_str(&tag);
    }
    Name { schema: base.schema.clone(), name }
}

impl Swap {
    /// The swap's tables for `plan`: the table, then each table that references it, with the
    /// columns that hold its key values.
    pub(crate) async fn of(db: &mut Db, plan: &Plan) -> Result<Swap, Error> {
        let cat = db.catalog()?;
        let backend = db.backend();
        let mut tables = Vec::new();
        for r in &plan.rewrites {
            let name: Name = (&r.table).into();
            let columns = crate::schema::columns_of(db, &name).await?;
            let pk = db.query(cat.primary_key(&name)).await?;
            if pk.is_empty() {
                return Err(Error::refused(format!(
                    "{name} has no primary key (copy and swap carries each changed row over by its primary key, as \
                     pg_repack and pt-online-schema-change do)"
                )));
            }
            tables.push(SwapTable {
                new: derived(backend, &name, "_", "_new"),
                old: derived(backend, &name, "_", "_old"),
                log: derived(backend, &name, "_", "_log"),
                name,
                columns,
                pk,
                keys: r.columns.clone(),
            });
        }
        let map = derived(backend, &tables[0].name, "_", "_map");
        let server_keys = if backend == combkey::Backend::MySql {
            super::server_keys::ServerKeys::of(plan)
        } else {
            super::server_keys::ServerKeys::default()
        };
        Ok(Swap { tables, map, lock_wait_ms: plan.options.lock_timeout_ms, server_keys })
    }

    /// Every object the run makes, for a check that none is there before it starts.
    pub(crate) fn made(&self) -> Vec<Name> {
        let mut out: Vec<Name> =
            self.tables.iter().flat_map(|t| [t.new.clone(), t.old.clone(), t.log.clone()]).collect();
        out.push(self.map.clone());
        out
    }
}

/// Rows per chunk of a copy, adjusted as it goes so that a chunk takes about
/// [`CHUNK_TIME`] (pt-online-schema-change's `--chunk-time`): short enough that the server
/// serves the application between chunks, long enough that round trips do not dominate.
pub(crate) struct Pace {
    pub(crate) rows: usize,
}

/// The time a chunk of the copy aims at.
const CHUNK_TIME: Duration = Duration::from_millis(250);

impl Pace {
    pub(crate) fn new() -> Self {
        Pace { rows: 2_000 }
    }

    /// After a chunk of `rows` rows that took `took`.
    pub(crate) fn took(&mut self, rows: usize, took: Duration) {
        if rows == 0 {
            return;
        }
        let per_row = took.as_secs_f64() / f64::from(u32::try_from(rows).unwrap_or(u32::MAX));
        if per_row <= 0.0 {
            self.rows = (self.rows * 2).min(100_000);
            return;
        }
        // OK because the value is clamped to 100..=100_000 first.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let want = (CHUNK_TIME.as_secs_f64() / per_row).clamp(100.0, 100_000.0) as usize;
        // Half way towards it each time: one slow chunk (a checkpoint) does not collapse it.
        self.rows = usize::midpoint(self.rows, want).max(100);
    }
}

/// The phases of a run, as the journal keeps them.
pub(crate) mod phase {
    /// Nothing made yet (MySQL/MariaDB: the mapping table being filled, the cursor its last
    /// key).
    pub(crate) const START: i64 = 0;
    /// The copies, the mapping table and the triggers are there (the copy under way, the
    /// cursor where it is).
    pub(crate) const MADE: i64 = 1;
    /// The rows are copied.
    pub(crate) const COPIED: i64 = 3;
    /// PostgreSQL: the new tables' indexes are built.
    pub(crate) const INDEXED: i64 = 4;
    /// The new tables took the names (the application writes to them).
    pub(crate) const SWAPPED: i64 = 5;
    /// Not swapped, and the removal of what the run made began (MySQL/MariaDB: one statement
    /// at a time) and did not finish: the run is removed whole before anything else.
    pub(crate) const ABANDONING: i64 = crate::methods::shared::SWAP_ABANDONING;
}

/// The common refusals: what copy and swap does not do (yet) whatever the database.
pub(crate) fn plan_refusal(plan: &Plan) -> Option<String> {
    if let Some(why) = Source::of(plan).row_dependence() {
        return Some(format!("{why}, which the in-place method does batch by batch"));
    }
    if plan.options.inherited != crate::options::Inherited::Refuse {
        return Some("the table has inheriting tables or partitions".into());
    }
    None
}

/// What a long phase reports to and waits for between its chunks: the throttle, the progress
/// and the run's counters.
pub(crate) struct Pacing<'a> {
    pub(crate) throttle: &'a mut crate::throttle::Throttle,
    pub(crate) progress: &'a mut dyn Progress,
    pub(crate) tally: &'a mut Tally,
}

impl Pacing<'_> {
    /// Waits while the throttle says so (the time counted as paused).
    pub(crate) async fn wait(&mut self, db: &mut Db) -> Result<(), Error> {
        self.tally.out.paused += self.throttle.wait(db, &mut *self.progress).await?;
        Ok(())
    }
}

/// A run's clock and counters, for its outcome.
pub(crate) struct Tally {
    pub(crate) started: Instant,
    pub(crate) out: OnlineOutcome,
}

impl Tally {
    pub(crate) fn new(resumed: bool) -> Self {
        let out = OnlineOutcome { resumed, method: "copy-swap", ..OnlineOutcome::default() };
        Tally { started: Instant::now(), out }
    }

    pub(crate) fn done(mut self) -> OnlineOutcome {
        self.out.seconds = self.started.elapsed().as_secs_f64();
        self.out
    }
}

pub(crate) use crate::failpoints::{hold, stop_after};

/// An error of a run that changed nothing the application sees: what it made is gone (the
/// cleaning's own failure is added to the message, with what is left).
pub(crate) fn unchanged(e: Error, cleaned: Result<(), Error>) -> Error {
    let e = e.context("combkey doctor --online (copy and swap)");
    match cleaned {
        Ok(()) => e.with_hint("; the tables were not swapped and what the run made is gone: nothing changed"),
        Err(c) => e.with_hint(&format!(
            "; the tables were not swapped (nothing changed for the application), but removing what the run made \
             failed ({c}): run the same command again (it removes what is left first) or with --abandon to remove it"
        )),
    }
}

/// The error for keys that would become one found during the run (`pairs` names them).
pub(crate) fn become_one(pairs: &str) -> Error {
    Error::refused(format!(
        "two keys of the table would become one key: {pairs} (the audit found no such pair, so one of each was written \
         since, by the application: a key that is the new form of another, or a key of the same id). Nothing was \
         swapped; change or remove one key of each pair, then run again"
    ))
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
                    s = crate::catalog::string_literal(&schema),
                    q1 = crate::catalog::string_literal(&format!("%{schema}`.combkey\\_%")),
                    q2 = crate::catalog::string_literal(&format!("%{schema}`.`combkey\\_%")),
                    q3 = crate::catalog::string_literal(&format!("%{schema}.combkey\\_%")),
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
                    crate::catalog::string_literal(&schema)
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
