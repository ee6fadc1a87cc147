//! Copy and swap on MySQL/MariaDB. While the rows are copied, a trigger on each table logs
//! the primary key of every row the application changes (as pg_repack does): the
//! application's transactions never touch the copies, so they never wait for the copy nor
//! deadlock on it (a copy's `INSERT ... SELECT` holds the copy's AUTO-INC lock for the whole
//! statement; a trigger writing through to a row the copy has not reached takes, under
//! REPEATABLE READ, a gap lock at the copy's end where every new row goes: both deadlocked
//! writers in tests). The logs are applied in rounds, each changed row copied again from the
//! table as it is.
//!
//! The swap is one `RENAME TABLE`, and a log cannot be drained safely before it: MariaDB gives
//! writers queued behind a lock the old table before a waiting `RENAME` (gh-ost's two-session
//! cut-over loses them; measured on 10.11), and renaming under `LOCK TABLES` one table at a
//! time makes queued writers fail ("table doesn't exist"). So for the swap the triggers are
//! replaced by pt-online-schema-change's: they write each change through to the copy as it
//! happens (and log nothing). Their creation waits for every transaction already under way on
//! the table, the logs are applied to the end (each logged row now read with a share lock, as
//! pt-online-schema-change reads its chunks: a row read without one could be older than a
//! change written through meanwhile, and would overwrite it), the copies get their foreign keys,
//! and the rename follows; a write that reaches a table just before it is in its copy too.
//!
//! Keys are converted through the mapping table, filled before anything else and not changed
//! after, so that the copy, the rounds and the triggers convert every key alike. A key it does
//! not hold (a row the application inserted since) is converted by the server where combkey
//! would convert it the same way ([`super::server_keys`]: MariaDB's `UUID()`, version 1, and
//! version 6), else written as the same id in the column's new type; either way it is noted.
//! Before the swap each key the server converted is checked against combkey's conversion;
//! after it, their pairs go to the key map, and the noted keys the server left that convert
//! are changed in place, as the in-place method does (whose batches can deadlock the
//! application's transactions: the server's conversion is there so that none are left).
//!
//! The copies get their foreign keys under a name of their own (a foreign key's name is the
//! database's, not the table's); after the swap those get the original names, the old tables
//! (kept under new names) lose theirs, and every table's definition is compared with the
//! original's. Every statement that locks two tables' metadata does not wait for it
//! (`NOWAIT`, tried again), so it never deadlocks an application transaction.

use std::time::Instant;

use combkey::Backend;

use super::shared::{Pace, Pacing, Swap, SwapTable, Tally, hold, phase, stop_after, unchanged};
use crate::catalog::{Name, Stored, hex, string_literal};
use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::keys::Source;
use crate::methods::shared::{Journal, OnlineOutcome, comparable};
use crate::options::{Online, Progress};
use crate::plan::Plan;

const B: Backend = Backend::MySql;

fn q(s: &str) -> String {
    B.quote(s)
}

/// The table of keys written through that the mapping table did not hold.
fn todo(swap: &Swap) -> Name {
    super::shared::derived(B, &swap.tables[0].name, "_", "_todo")
}

/// A value of a key column as the column's final type holds the same id: the value itself,
/// or, for text becoming `BINARY(16)`, its 16 bytes (hyphens, braces and `urn:uuid:` taken
/// out; a value that is no UUID gives no 16 bytes, which the strict session refuses).
fn same_id(expr: &str, plan: &Plan) -> String {
    if plan.retypes() {
        format!(
            "UNHEX(REPLACE(REPLACE(REPLACE(REPLACE(LOWER({expr}), 'urn:uuid:', ''), '{{', ''), '}}', ''), '-', ''))"
        )
    } else {
        expr.to_string()
    }
}

/// A key value's conversion in SQL: the mapping table's, else the server's (a key the
/// application wrote since the map was made, of a layout the server converts), else the same
/// id.
fn converted(expr: &str, swap: &Swap, plan: &Plan) -> String {
    format!(
        "COALESCE((SELECT m.new FROM {map} m WHERE m.old = {expr}), {})",
        swap.server_keys.expr(expr, &same_id(expr, plan)),
        map = swap.map.quoted(B)
    )
}

/// What about `swap`'s tables a rename would leave with the old tables (each as "table: why"):
/// their own triggers, system versioning, partitioning, and the foreign keys of other tables
/// that reference them (a foreign key follows the table it references through a rename). Read
/// before the run, and again just before the swap's rename: one made during the run (a new
/// table's foreign key, a trigger) would otherwise reference, or fire on, the old table, the
/// application's writes through it failing.
async fn outside(db: &mut Db, swap: &Swap) -> Result<Vec<String>, Error> {
    let cat = db.catalog()?;
    let mut why = Vec::new();
    let set: Vec<(String, String)> =
        swap.tables.iter().map(|t| (t.name.schema.clone().unwrap_or_default(), t.name.name.clone())).collect();
    let in_set = |schema: &str, table: &str| set.iter().any(|(s, t)| s == schema && t == table);
    for t in &swap.tables {
        let (schema, name) = (t.name.schema.clone().unwrap_or_default(), t.name.name.clone());
        let p = vec![schema.clone(), name.clone()];
        for r in db
            .rows(
                "SELECT CAST(TRIGGER_NAME AS CHAR) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ? \
                 AND EVENT_OBJECT_TABLE = ? AND TRIGGER_NAME NOT LIKE 'combkey\\_doctor\\_capture\\_%'",
                &p,
            )
            .await?
        {
            why.push(format!(
                "{}: its trigger {} would stay with the old table (and a copy of it would fire for the copy's writes)",
                t.name,
                r.first().cloned().flatten().unwrap_or_default()
            ));
        }
        if let Some(q) = cat.versioned(&t.name)
            && db.query(q).await?
        {
            why.push(format!("{}: it is system-versioned", t.name));
        }
        let def = db.query(cat.definition(&t.name)).await?;
        if def.contains("PARTITION BY") || def.contains("/*!50100 PARTITION") {
            why.push(format!("{}: it is partitioned", t.name));
        }
        // Foreign keys that reference it: those of the swap's tables move with them (their
        // actions as MySQL runs them: a cascade fires no trigger, so only a delete's can be
        // followed); another table's would stay with the old table.
        for r in db
            .rows(
                "SELECT CAST(CONSTRAINT_NAME AS CHAR), CAST(CONSTRAINT_SCHEMA AS CHAR), CAST(TABLE_NAME AS CHAR), \
                 CAST(UPDATE_RULE AS CHAR), CAST(DELETE_RULE AS CHAR) FROM information_schema.REFERENTIAL_CONSTRAINTS \
                 WHERE UNIQUE_CONSTRAINT_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?",
                &p,
            )
            .await?
        {
            let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            let (fk, child_schema, child, update, delete) = (v(0), v(1), v(2), v(3), v(4));
            if !in_set(&child_schema, &child) {
                why.push(format!(
                    "{}: foreign key {fk} of {child_schema}.{child} references it and is not one the run carries (made \
                     since the run began, or on a column that holds no key): it would go on referencing the old table",
                    t.name
                ));
            } else if !matches!(update.as_str(), "NO ACTION" | "RESTRICT")
                || !matches!(delete.as_str(), "NO ACTION" | "RESTRICT" | "CASCADE")
            {
                why.push(format!(
                    "foreign key {fk} of {child_schema}.{child} has ON UPDATE {update} ON DELETE {delete}: MySQL runs a \
                     cascade without firing triggers, so the copy could not follow it"
                ));
            }
        }
    }
    Ok(why)
}

/// Why the plan cannot run by copy and swap here.
pub(super) async fn refusal(db: &mut Db, plan: &Plan) -> Result<Option<String>, Error> {
    if let Some(why) = super::shared::plan_refusal(plan) {
        return Ok(Some(why));
    }
    let swap = match Swap::of(db, plan).await {
        Ok(s) => s,
        Err(e) if e.kind() == ErrorKind::Refused => return Ok(Some(e.to_string())),
        Err(e) => return Err(e),
    };
    let mut why = outside(db, &swap).await?;
    if statement_binlog(db).await? {
        why.push(
            "the server writes a statement-based binary log (binlog_format = STATEMENT): each replica would run the \
             triggers' and the copy's statements itself, the copy's reads under REPEATABLE READ locking the rows the \
             application writes"
                .to_string(),
        );
    }
    let (names, rows) = db.rows_named("SHOW MASTER STATUS").await.unwrap_or_default();
    for (i, n) in names.iter().enumerate() {
        if (n == "Binlog_Do_DB" || n == "Binlog_Ignore_DB")
            && let Some(Some(v)) = rows.first().and_then(|r| r.get(i))
            && !v.is_empty()
        {
            why.push(format!(
                "the server filters its binary log ({n} = {v}): the new tables might not reach a replica, whose rename \
                 would then stop it"
            ));
        }
    }
    if why.is_empty() { Ok(None) } else { Ok(Some(why.join("; "))) }
}

/// A column's type as `information_schema` writes it, with its character set and collation.
async fn column_type(db: &mut Db, t: &Name, column: &str) -> Result<String, Error> {
    let rows = db
        .rows(
            "SELECT CAST(COLUMN_TYPE AS CHAR), CAST(CHARACTER_SET_NAME AS CHAR), CAST(COLLATION_NAME AS CHAR) \
             FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
            &[t.schema.clone().unwrap_or_default(), t.name.clone(), column.to_string()],
        )
        .await?;
    let r = rows.first().ok_or_else(|| Error::usage(format!("no column {column} in {t}")))?;
    let v = |i: usize| r.get(i).cloned().flatten();
    let mut ty = v(0).unwrap_or_default();
    if let (Some(cs), Some(co)) = (v(1), v(2)) {
        ty.push_str(&format!(" CHARACTER SET {cs} COLLATE {co}"));
    }
    Ok(ty)
}

/// Fills the mapping table with every key the table holds, read in key order on a second
/// session, a page at a time; the journal keeps the last key mapped (a stopped run goes on
/// from it).
async fn map(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    journal: &Journal,
    from: Option<String>,
    pacing: &mut Pacing<'_>,
) -> Result<(), Error> {
    let cat = db.catalog()?;
    let parent = &swap.tables[0];
    let column = parent
        .columns
        .iter()
        .find(|c| c.name == plan.column)
        .cloned()
        .ok_or_else(|| Error::usage(format!("no column {} in {}", plan.column, parent.name)))?;
    let total = db.query(cat.row_estimate(&parent.name)).await?.unwrap_or(0);
    let mut cursor: Option<Stored> = from.as_deref().and_then(|h| crate::catalog::unhex(h).ok()).map(Stored::Bytes);
    let mut mapped = 0usize;
    loop {
        pacing.wait(db).await?;
        let filter =
            cursor.as_ref().map(|c| format!(" AND {} > {}", q(&plan.column), cat.key_literal(c))).unwrap_or_default();
        let sql =
            format!("{} LIMIT {}", cat.select_keys(&parent.name, &column, false, &filter, ""), crate::catalog::PAGE);
        let rows = db.rows(&sql, &[]).await?;
        if rows.is_empty() {
            break;
        }
        let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
        let pairs = Source::of(plan).pairs(&values)?;
        db.exec("START TRANSACTION").await?;
        for chunk in pairs.chunks(crate::methods::shared::MAP_BATCH) {
            db.exec(&format!(
                "INSERT IGNORE INTO {} (old, new) VALUES {}",
                swap.map.quoted(B),
                crate::catalog::value_pairs(cat, chunk)
            ))
            .await?;
        }
        let last = values.last().cloned();
        let at = match &last {
            Some(Stored::Bytes(b)) => hex(b),
            Some(Stored::Text(t)) => hex(t.as_bytes()),
            None => String::new(),
        };
        journal.set_cursor(db, Some(&at), usize::try_from(phase::START).unwrap_or(0)).await?;
        db.exec("COMMIT").await?;
        mapped += values.len();
        // Each key read is converted (its new key in the mapping table).
        pacing.progress.batch(mapped, mapped, total);
        if values.len() < crate::catalog::PAGE {
            break;
        }
        cursor = last.map(|l| match l {
            Stored::Text(t) => Stored::Bytes(t.into_bytes()),
            b => b,
        });
    }
    Ok(())
}

/// The statements that make the copies, the triggers that write through to them, and the
/// table of keys written through unmapped. Each is safe to run again.
async fn make(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<Vec<String>, Error> {
    let cat = db.catalog()?;
    let mut out = Vec::new();
    let parent = &swap.tables[0];
    let final_type = plan.final_type.as_str();
    out.push(format!(
        "CREATE TABLE IF NOT EXISTS {} (k {final_type} NOT NULL PRIMARY KEY) ENGINE=InnoDB",
        todo(swap).quoted(B)
    ));
    for t in &swap.tables {
        out.push(format!("CREATE TABLE IF NOT EXISTS {} LIKE {}", t.new.quoted(B), t.name.quoted(B)));
        if plan.retypes() {
            let definition = plan
                .definitions
                .iter()
                .find(|(n, _)| Name::from(n) == t.name)
                .map(|(_, d)| d.clone())
                .unwrap_or_default();
            for k in &t.keys {
                let Some(column) = t.columns.iter().find(|c| c.name == *k) else { continue };
                let mut column = column.clone();
                if plan.sets_default && t.name == parent.name {
                    column.default = None;
                }
                let retype = cat.retype(&t.name, &column, &definition)?;
                if let Some(after) = retype.after {
                    out.push(after.replacen(&t.name.quoted(B), &t.new.quoted(B), 1));
                }
            }
        }
    }
    if plan.sets_default
        && let Some(step) = plan.steps.iter().find(|s| s.kind == crate::plan::StepKind::SetDefault)
    {
        for s in &step.sql {
            out.push(
                s.replace(&format!(" ON {}", parent.name.quoted(B)), &format!(" ON {}", parent.new.quoted(B))).replace(
                    &format!("ALTER TABLE {}", parent.name.quoted(B)),
                    &format!("ALTER TABLE {}", parent.new.quoted(B)),
                ),
            );
        }
    }
    for t in &swap.tables {
        let mut cols = Vec::new();
        for c in &t.pk {
            cols.push(format!("{} {} NOT NULL", q(c), column_type(db, &t.name, c).await?));
        }
        out.push(format!(
            "CREATE TABLE IF NOT EXISTS {} (combkey_seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, {}) ENGINE=InnoDB",
            t.log.quoted(B),
            cols.join(", ")
        ));
    }
    Ok(out)
}

/// The select list of a row of `t` as its copy holds it (`row` the alias or `NEW`/`OLD`),
/// its column list.
fn row_parts(swap: &Swap, plan: &Plan, t: &SwapTable, row: &str) -> (String, String) {
    let names: Vec<String> = t.insertable().iter().map(|c| q(&c.name)).collect();
    (values_of(swap, plan, t, row).join(", "), names.join(", "))
}

/// `INSERT INTO log ...` of `row`'s (`NEW`, `OLD`) primary key.
fn log_insert(t: &SwapTable, row: &str) -> String {
    let cols: Vec<String> = t.pk.iter().map(|c| q(c)).collect();
    let values: Vec<String> = t.pk.iter().map(|c| format!("{row}.{}", q(c))).collect();
    format!("INSERT INTO {} ({}) VALUES ({})", t.log.quoted(B), cols.join(", "), values.join(", "))
}

/// The triggers on `t` while its rows are copied: each change's primary key goes to the log.
fn log_triggers(t: &SwapTable) -> Vec<String> {
    let table = t.name.quoted(B);
    vec![
        format!(
            "CREATE OR REPLACE TRIGGER {} AFTER INSERT ON {table} FOR EACH ROW {}",
            trigger(t, "ins").quoted(B),
            log_insert(t, "NEW")
        ),
        format!(
            "CREATE OR REPLACE TRIGGER {} AFTER UPDATE ON {table} FOR EACH ROW BEGIN {}; {}; END",
            trigger(t, "upd").quoted(B),
            log_insert(t, "OLD"),
            log_insert(t, "NEW")
        ),
        format!(
            "CREATE OR REPLACE TRIGGER {} AFTER DELETE ON {table} FOR EACH ROW {}",
            trigger(t, "del").quoted(B),
            log_insert(t, "OLD")
        ),
    ]
}

/// The triggers on `t` for the swap: each change is written through to the copy as it happens
/// (pt-online-schema-change's), taking the record locks of the rows it writes (the log holds
/// only what came before them, which the last rounds apply). Each
/// key column's converted value is computed once into a variable, so the copy's row is found
/// through its primary key. An update of a row the copy does not hold yet (only one the
/// application inserted before these triggers and the rounds have not applied) is left to the
/// log.
fn through_triggers(swap: &Swap, plan: &Plan, t: &SwapTable) -> Vec<String> {
    let cols = t.insertable();
    let names: Vec<String> = cols.iter().map(|c| q(&c.name)).collect();
    // `combkey_n0`, ... the NEW row's key columns converted; `combkey_o0`, ... the OLD row's.
    let var = |row: &str, c: &str| t.key_index(c).map(|i| format!("combkey_{}{i}", &row[..1].to_lowercase()));
    let declare = |row: &str| -> String {
        t.keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                format!(
                    "DECLARE combkey_{r}{i} {ty} DEFAULT {};",
                    converted(&format!("{row}.{}", q(k)), swap, plan),
                    r = &row[..1].to_lowercase(),
                    ty = plan.final_type
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let value = |row: &str, c: &str| var(row, c).unwrap_or_else(|| format!("{row}.{}", q(c)));
    let values: Vec<String> = cols.iter().map(|c| value("NEW", &c.name)).collect();
    let insert = format!("INSERT INTO {} ({}) VALUES ({})", t.new.quoted(B), names.join(", "), values.join(", "));
    let sets: Vec<String> = cols.iter().map(|c| format!("n.{} = {}", q(&c.name), value("NEW", &c.name))).collect();
    let upserts: Vec<String> = cols.iter().map(|c| format!("{c} = VALUES({c})", c = q(&c.name))).collect();
    let at = |row: &str| -> String {
        t.pk.iter().map(|c| format!("n.{} <=> {}", q(c), value(row, c))).collect::<Vec<_>>().join(" AND ")
    };
    // Keys the mapping table does not hold, noted for after the swap.
    let note: Vec<String> = t
        .keys
        .iter()
        .map(|k| {
            format!(
                "IF NEW.{k} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {map} m WHERE m.old = NEW.{k}) THEN \
                 INSERT IGNORE INTO {todo} (k) VALUES ({}); END IF;",
                same_id(&format!("NEW.{k}"), plan),
                k = q(k),
                map = swap.map.quoted(B),
                todo = todo(swap).quoted(B)
            )
        })
        .collect();
    let changed_pk =
        t.pk.iter().map(|c| format!("NOT (OLD.{c} <=> NEW.{c})", c = q(c))).collect::<Vec<_>>().join(" OR ");
    let table = t.name.quoted(B);
    let new = t.new.quoted(B);
    vec![
        // A row the copy holds under the new row's primary key already is replaced: one deleted
        // before these triggers whose logged delete the last rounds have not applied yet, or
        // the rows of a table truncated meanwhile (its AUTO_INCREMENT counter starts again,
        // and a plain insert failed the application's with 1062; the truncation stops the run
        // before the rename).
        format!(
            "CREATE OR REPLACE TRIGGER {} AFTER INSERT ON {table} FOR EACH ROW BEGIN {} {} {insert} ON DUPLICATE KEY \
             UPDATE {}; END",
            trigger(t, "ins").quoted(B),
            declare("NEW"),
            note.join(" "),
            upserts.join(", ")
        ),
        // A new primary key is a new row of the copy (the log, which these triggers replace, would
        // not bring it): the old one removed, the new one written as it is (pt-online-schema-change's
        // `DELETE IGNORE` and `REPLACE`; here without REPLACE's deletes of other rows).
        format!(
            "CREATE OR REPLACE TRIGGER {} AFTER UPDATE ON {table} FOR EACH ROW BEGIN {} {} {} IF {changed_pk} THEN \
             DELETE n FROM {new} n WHERE {}; {insert} ON DUPLICATE KEY UPDATE {}; \
             ELSE UPDATE {new} n SET {} WHERE {}; END IF; END",
            trigger(t, "upd").quoted(B),
            declare("NEW"),
            declare("OLD"),
            note.join(" "),
            at("OLD"),
            upserts.join(", "),
            sets.join(", "),
            at("NEW")
        ),
        format!(
            "CREATE OR REPLACE TRIGGER {} AFTER DELETE ON {table} FOR EACH ROW BEGIN {} DELETE n FROM {new} n WHERE {}; END",
            trigger(t, "del").quoted(B),
            declare("OLD"),
            at("OLD")
        ),
    ]
}

/// The values of `t`'s insertable columns as its copy holds them, from `row` (`t`, a table's
/// alias).
fn values_of(swap: &Swap, plan: &Plan, t: &SwapTable, row: &str) -> Vec<String> {
    t.insertable()
        .iter()
        .map(|c| {
            let e = format!("{row}.{}", q(&c.name));
            if t.key_index(&c.name).is_some() { converted(&e, swap, plan) } else { e }
        })
        .collect()
}

/// The name of `t`'s trigger for `event` (trigger names are the database's: one per table).
/// It stays with the table when the table is renamed.
fn trigger(t: &SwapTable, event: &str) -> Name {
    Name {
        schema: t.name.schema.clone(),
        name: format!("combkey_doctor_capture_{event}_{:08x}", crate::plan::fnv1a(&t.name.to_string())),
    }
}

/// The triggers' drops.
fn drop_triggers(t: &SwapTable) -> Vec<String> {
    ["ins", "upd", "del"].iter().map(|e| format!("DROP TRIGGER IF EXISTS {}", trigger(t, e).quoted(B))).collect()
}

/// How a column's values are read into a cursor and written back into SQL.
#[derive(Clone, Debug)]
enum Kind {
    /// Numbers: their decimal text.
    Number,
    /// Bytes: their hex digits, back as `X'..'`.
    Binary,
    /// Text: its bytes' hex digits, back in its character set and collation (so a range
    /// compares as the index orders).
    Text(String, String),
    /// Anything else (dates, MariaDB's `UUID`): its text, back as a string.
    Other,
}

impl Kind {
    fn read(&self, expr: &str) -> String {
        match self {
            Kind::Binary | Kind::Text(..) => format!("HEX({expr})"),
            Kind::Number | Kind::Other => format!("CAST({expr} AS CHAR)"),
        }
    }

    fn literal(&self, v: &str) -> String {
        let hexdigits = |v: &str| v.chars().filter(char::is_ascii_hexdigit).collect::<String>();
        match self {
            Kind::Number => {
                let n: String =
                    v.chars().filter(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e' | 'E' | '+')).collect();
                if n.is_empty() { "NULL".into() } else { n }
            }
            Kind::Binary => format!("X'{}'", hexdigits(v)),
            Kind::Text(cs, co) => format!("_{cs} X'{}' COLLATE {co}", hexdigits(v)),
            Kind::Other => string_literal(v),
        }
    }
}

/// The kinds of `t`'s columns `cols`, from `information_schema`.
async fn kinds(db: &mut Db, t: &Name, cols: &[String]) -> Result<Vec<Kind>, Error> {
    let mut out = Vec::new();
    for c in cols {
        let rows = db
            .rows(
                "SELECT CAST(DATA_TYPE AS CHAR), CAST(CHARACTER_SET_NAME AS CHAR), CAST(COLLATION_NAME AS CHAR) \
                 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
                &[t.schema.clone().unwrap_or_default(), t.name.clone(), c.clone()],
            )
            .await?;
        let v = |i: usize| rows.first().and_then(|r| r.get(i).cloned().flatten()).unwrap_or_default();
        let ty = v(0).to_ascii_lowercase();
        out.push(if ["int", "decimal", "numeric", "float", "double", "bit", "year"].iter().any(|n| ty.contains(n)) {
            Kind::Number
        } else if ty.contains("binary") || ty.contains("blob") {
            Kind::Binary
        } else if ty.contains("char") || ty.contains("text") || ty == "enum" || ty == "set" {
            Kind::Text(v(1), v(2))
        } else {
            Kind::Other
        });
    }
    Ok(out)
}

/// Copies every table in chunks, each a short transaction that locks the rows it reads (so an
/// application write to one of them waits for it, and its trigger then writes through after
/// it), skipping rows the triggers wrote already: the table in its new keys' order (its copy
/// filled from left to right), then each referencing table in its primary key's.
async fn copy(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    journal: &Journal,
    from: Option<String>,
    pacing: &mut Pacing<'_>,
) -> Result<(), Error> {
    let cat = db.catalog()?;
    let mut total = 0;
    for t in &swap.tables {
        total += db.query(cat.row_estimate(&t.name)).await?.unwrap_or(0).max(0);
    }
    // `table index:cursor` where a stopped copy was.
    let (start, mut cursor): (usize, Option<String>) = match from.as_deref().and_then(|f| f.split_once(':')) {
        Some((i, c)) => (i.parse().unwrap_or(0), (!c.is_empty()).then(|| c.to_string())),
        None => (0, None),
    };
    let mut copied = 0usize;
    let mut chunks = 0i64;
    for (i, t) in swap.tables.iter().enumerate().skip(start) {
        let mut pace = Pace::new();
        let (exprs, names) = row_parts(swap, plan, t, "t");
        let parent = i == 0;
        // The table: through the mapping table, in the order of the new keys; a referencing
        // table in its primary key's.
        let (order, kinds, table_sql, exprs) = if parent {
            let kind = if plan.final_type.starts_with("binary") { Kind::Binary } else { Kind::Other };
            let table_sql = format!(
                "{map} m STRAIGHT_JOIN {tab} t ON t.{k} = m.old",
                map = swap.map.quoted(B),
                tab = t.name.quoted(B),
                k = q(&plan.column)
            );
            // The key itself through the join's mapping row.
            let exprs = exprs.replacen(&converted(&format!("t.{}", q(&plan.column)), swap, plan), "m.new", 1);
            (vec!["m.new".to_string()], vec![kind], table_sql, exprs)
        } else {
            let order: Vec<String> = t.pk.iter().map(|c| format!("t.{}", q(c))).collect();
            (order, kinds(db, &t.name, &t.pk).await?, format!("{} t", t.name.quoted(B)), exprs)
        };
        let read: Vec<String> = order.iter().zip(&kinds).map(|(o, k)| k.read(o)).collect();
        let tuple = |v: &[String]| if v.len() == 1 { v[0].clone() } else { format!("({})", v.join(", ")) };
        let order_list = order.join(", ");
        let bound = |c: &str| -> String {
            let lits: Vec<String> = c.split(',').zip(&kinds).map(|(v, k)| k.literal(v)).collect();
            tuple(&lits)
        };
        // Where the copy of this table ends: its last row now (rows the application adds later
        // come through the triggers; a chunk never reads them, so it never waits for their
        // writers).
        let end = db
            .rows(
                &format!(
                    "SELECT CONCAT_WS(',', {}) FROM {table_sql} ORDER BY {} LIMIT 1",
                    read.join(", "),
                    order.iter().map(|o| format!("{o} DESC")).collect::<Vec<_>>().join(", ")
                ),
                &[],
            )
            .await?
            .first()
            .and_then(|r| r.first().cloned().flatten());
        let Some(end) = end else { continue };
        loop {
            pacing.wait(db).await?;
            let lower = cursor.as_deref().map(|c| format!(" AND {} > {}", tuple(&order), bound(c))).unwrap_or_default();
            let upper_row = db
                .rows(
                    &format!(
                        "SELECT CONCAT_WS(',', {}) FROM {table_sql} WHERE {} <= {}{lower} ORDER BY {order_list} LIMIT 1 OFFSET {}",
                        read.join(", "),
                        tuple(&order),
                        bound(&end),
                        pace.rows.saturating_sub(1)
                    ),
                    &[],
                )
                .await?;
            let upper = upper_row.first().and_then(|r| r.first().cloned().flatten()).unwrap_or_else(|| end.clone());
            let range = format!("{lower} AND {} <= {}", tuple(&order), bound(&upper));
            let started = Instant::now();
            db.exec("START TRANSACTION").await?;
            if !parent {
                // Referencing values the mapping table does not hold, noted for after the swap.
                for k in &t.keys {
                    db.exec(&format!(
                        "INSERT IGNORE INTO {todo} (k) SELECT DISTINCT {} FROM {table_sql} LEFT JOIN {map} m ON m.old = t.{k} \
                         WHERE t.{k} IS NOT NULL AND m.old IS NULL{range}",
                        same_id(&format!("t.{}", q(k)), plan),
                        todo = todo(swap).quoted(B),
                        map = swap.map.quoted(B),
                        k = q(k)
                    ))
                    .await?;
                }
            }
            // Read as of the statement's start (READ COMMITTED, no lock): a row the application
            // changes meanwhile is in the log, and the rounds copy it again after this chunk.
            let n = db
                .exec(&format!(
                    "INSERT IGNORE INTO {new} ({names}) SELECT {exprs} FROM {table_sql} WHERE 1 = 1{range} \
                     ORDER BY {order_list}",
                    new = t.new.quoted(B)
                ))
                .await?;
            let at = format!("{i}:{upper}");
            journal.set_cursor(db, Some(&at), usize::try_from(phase::MADE).unwrap_or(0)).await?;
            db.exec("COMMIT").await?;
            let n = usize::try_from(n).unwrap_or(0);
            pace.took(n.max(1), started.elapsed());
            copied += n;
            pacing.tally.out.scanned += n;
            chunks += 1;
            pacing.progress.batch(copied, copied, total);
            stop_after("CHUNK", chunks);
            if upper == end {
                break;
            }
            cursor = Some(upper);
        }
        cursor = None;
        if parent {
            copy_unmapped(db, swap, plan, t).await?;
        }
    }
    pacing.tally.out.batches = usize::try_from(chunks).unwrap_or(0);
    Ok(())
}

/// Rows of the table whose key the mapping table does not hold (inserted after it was filled,
/// before the triggers, or with no key): copied as the same id, a thousand at a time, the keys
/// noted for after the swap.
async fn copy_unmapped(db: &mut Db, swap: &Swap, plan: &Plan, t: &SwapTable) -> Result<(), Error> {
    let k = q(&plan.column);
    let (exprs, names) = row_parts(swap, plan, t, "t");
    let kind = kinds(db, &t.name, std::slice::from_ref(&plan.column)).await?.remove(0);
    let keys: Vec<String> = db
        .rows(
            &format!(
                "SELECT {} FROM {tab} t LEFT JOIN {map} m ON m.old = t.{k} WHERE m.old IS NULL AND t.{k} IS NOT NULL",
                kind.read(&format!("t.{k}")),
                tab = t.name.quoted(B),
                map = swap.map.quoted(B)
            ),
            &[],
        )
        .await?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    let mut filters: Vec<String> = keys
        .chunks(1000)
        .map(|c| format!("t.{k} IN ({})", c.iter().map(|v| kind.literal(v)).collect::<Vec<_>>().join(", ")))
        .collect();
    if t.columns.iter().any(|c| c.name == plan.column && c.nullable) {
        filters.push(format!("t.{k} IS NULL"));
    }
    for filter in filters {
        db.exec("START TRANSACTION").await?;
        db.exec(&format!(
            "INSERT IGNORE INTO {todo} (k) SELECT {} FROM {tab} t WHERE {filter} AND t.{k} IS NOT NULL",
            same_id(&format!("t.{k}"), plan),
            todo = todo(swap).quoted(B),
            tab = t.name.quoted(B)
        ))
        .await?;
        db.exec(&format!(
            "INSERT IGNORE INTO {new} ({names}) SELECT {exprs} FROM {tab} t WHERE {filter}",
            new = t.new.quoted(B),
            tab = t.name.quoted(B)
        ))
        .await?;
        db.exec("COMMIT").await?;
    }
    Ok(())
}

/// A DDL statement on a table the application uses (a trigger's creation or drop), waiting for
/// no metadata lock (`lock_wait_timeout = 0` for the statement) and tried again a few
/// milliseconds later while one is held: a trigger's statement also locks the tables its
/// table's foreign keys name, and one that waited there would deadlock application
/// transactions (MariaDB then rolls the application's back). Done, it also means that no
/// transaction that began before it is still under way on the table. Where the server has no
/// `SET STATEMENT` (MySQL), the statement waits as the session allows.
async fn ddl(db: &mut Db, swap: &Swap, statement: &str) -> Result<(), Error> {
    let nowait = format!("SET STATEMENT lock_wait_timeout = 0 FOR {statement}");
    in_nowait_tries(db, swap, &nowait, statement).await
}

/// `ALTER TABLE table spec`, waiting for no metadata lock (MariaDB's `NOWAIT`) and tried
/// again a few milliseconds later while one is held: a foreign key's statement locks two tables,
/// and one that waited for the second while holding the first would deadlock application
/// transactions that hold the second and want the first (MariaDB then rolls the application's
/// back). Where the server has no `NOWAIT` there (MySQL), the statement waits as the session
/// allows.
async fn alter(db: &mut Db, swap: &Swap, table: &Name, spec: &str) -> Result<(), Error> {
    let nowait = format!("ALTER TABLE {} NOWAIT {spec}", table.quoted(B));
    in_nowait_tries(db, swap, &nowait, &format!("ALTER TABLE {} {spec}", table.quoted(B))).await
}

/// Runs `nowait` (a statement that waits for no metadata lock) until it goes through, a few
/// milliseconds apart, for as long as `--lock-timeout` allows in all (a second at least);
/// `plain` instead where the server has no such form (MySQL: the session's lock wait applies).
/// Past that wait the run stops, naming the oldest open transactions (who may hold the lock:
/// the server shows a metadata lock's holder only with a plugin); it never queued, so the
/// application's statements went on meanwhile.
async fn in_nowait_tries(db: &mut Db, swap: &Swap, nowait: &str, plain: &str) -> Result<(), Error> {
    let wait = std::time::Duration::from_millis(swap.lock_wait_ms.max(1000));
    in_nowait_tries_within(db, nowait, plain, wait, "--lock-timeout", None).await
}

/// The write-through triggers' creation, just before the swap: its tries go on for as long as
/// the swap's own (`--swap-wait`, or `--lock-timeout` where longer), as a report that holds a
/// table then makes them wait as it makes the rename wait (a break-test's report made them
/// give up after the 5 s lock timeout, the run stopped, though `--swap-wait` said 60 s).
async fn ddl_before_swap(db: &mut Db, swap: &Swap, online: &Online, statement: &str) -> Result<(), Error> {
    let nowait = format!("SET STATEMENT lock_wait_timeout = 0 FOR {statement}");
    let lock = std::time::Duration::from_millis(swap.lock_wait_ms.max(1000));
    in_nowait_tries_within(db, &nowait, statement, lock.max(online.swap_wait), "--swap-wait", Some(lock)).await
}

async fn in_nowait_tries_within(
    db: &mut Db,
    nowait: &str,
    plain: &str,
    wait: std::time::Duration,
    flag: &str,
    past_lock_timeout: Option<std::time::Duration>,
) -> Result<(), Error> {
    let started = Instant::now();
    let mut tries = 0u32;
    let mut held = false;
    loop {
        match db.exec(nowait).await {
            Ok(_) => return Ok(()),
            Err(e) if e.code() == Some("42000") => return db.exec(plain).await.map(drop),
            Err(e) if e.kind() == ErrorKind::LockTimeout && started.elapsed() < wait => {
                tries += 1;
                if past_lock_timeout.is_some_and(|l| started.elapsed() >= l) && !held {
                    hold("DDL_PAST_LOCK_TIMEOUT").await;
                    held = true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(if tries < 100 { 5 } else { 20 })).await;
            }
            Err(e) if e.kind() == ErrorKind::LockTimeout => {
                let holders = match db.catalog()?.oldest_transactions() {
                    Some(q) => db.query(q).await.ok().flatten(),
                    None => None,
                };
                return Err(Error::new(
                    ErrorKind::LockTimeout,
                    format!(
                        "another session held a table's metadata lock for {:.1} s ({flag}; {} tries that never \
                         queued, so the application's statements went on): {}. On a table the application writes to \
                         without a pause, each try needs a moment when no transaction holds it: a longer {flag} \
                         (60s) gives the tries more moments (a break-test's four busy writers needed it)",
                        started.elapsed().as_secs_f64(),
                        tries + 1,
                        holders.map_or_else(
                            || "no open transaction was seen (a DDL statement, or a lock held outside one)".to_string(),
                            |h| format!("the oldest open transactions on the server: {h}")
                        )
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
}

async fn statement_binlog(db: &mut Db) -> Result<bool, Error> {
    match db.catalog()?.statement_binlog() {
        Some(q) => db.query(q).await,
        None => Ok(false),
    }
}

/// Applies the first `limit` rows of each log, one transaction per table: a logged row that is
/// gone from the table goes from its copy (its children's copies with it, where the key
/// cascades), and one that is there is written to its copy as it is now (inserted, or its copy
/// updated: a parent's copy is never deleted and inserted again, which the copies' foreign
/// keys, once there, would refuse or cascade). A batch that loses a lock race to a writer is
/// tried again. How many log rows it applied.
///
/// `through`: the write-through triggers may be up, which log nothing: each logged row is read
/// for its copy with a share lock (pt-online-schema-change's `LOCK IN SHARE MODE`), so that
/// what the copy gets is the row as last committed. A plain read could be older than a change
/// committed while the write waited for that change's lock on the copy, and would overwrite it
/// (a row the application deleted written back, an update undone), with no log row left to set
/// it right.
async fn apply(db: &mut Db, swap: &Swap, plan: &Plan, limit: usize, through: bool) -> Result<usize, Error> {
    let mut applied = 0;
    for t in &swap.tables {
        let mut tries = 0u32;
        loop {
            match apply_batch(db, swap, plan, t, limit, through).await {
                Ok(n) => {
                    applied += n;
                    break;
                }
                Err(e) if matches!(e.kind(), ErrorKind::Conflict | ErrorKind::LockTimeout) && tries < 50 => {
                    let _ = db.exec("ROLLBACK").await;
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(10 * u64::from(tries.min(10)))).await;
                }
                Err(e) => {
                    let _ = db.exec("ROLLBACK").await;
                    return Err(e);
                }
            }
        }
    }
    Ok(applied)
}

async fn apply_batch(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    t: &SwapTable,
    limit: usize,
    through: bool,
) -> Result<usize, Error> {
    let seqs: Vec<String> = db
        .rows(
            &format!("SELECT CAST(combkey_seq AS CHAR) FROM {} ORDER BY combkey_seq LIMIT {limit}", t.log.quoted(B)),
            &[],
        )
        .await?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    if seqs.is_empty() {
        return Ok(0);
    }
    let these = seqs.join(", ");
    // The range as well as the list: MariaDB reads an IN list of more than
    // `in_predicate_conversion_threshold` (1,000) values as a table of values, and then scanned
    // the whole log for the rows gone (1.1 s a round at 605,000 log rows, 0.15 s with the
    // range): under a steady load the rounds fell behind the writers.
    let logged = format!(
        "l.combkey_seq BETWEEN {} AND {} AND l.combkey_seq IN ({these})",
        seqs.first().map_or("0", String::as_str),
        seqs.last().map_or("0", String::as_str)
    );
    let pk: Vec<String> = t.pk.iter().map(|c| q(c)).collect();
    let same_row: Vec<String> = pk.iter().map(|c| format!("o.{c} = l.{c}")).collect();
    let (exprs, names) = row_parts(swap, plan, t, "t");
    let updates: Vec<String> = t.insertable().iter().map(|c| format!("{c} = VALUES({c})", c = q(&c.name))).collect();
    let filter = format!(
        "({}) IN (SELECT {} FROM {} l WHERE {logged})",
        pk.iter().map(|c| format!("t.{c}")).collect::<Vec<_>>().join(", "),
        pk.iter().map(|c| format!("l.{c}")).collect::<Vec<_>>().join(", "),
        t.log.quoted(B)
    );
    // The logged rows gone from the table, by a plain read: the applier locks no row of the
    // table (a subquery of a DELETE would, and an application transaction waiting for it while
    // it waits for that transaction's log row deadlocks).
    let kinds = kinds(db, &t.name, &t.pk).await?;
    let read: Vec<String> = t.pk.iter().zip(&kinds).map(|(c, k)| k.read(&format!("l.{}", q(c)))).collect();
    let gone = db
        .rows(
            &format!(
                "SELECT DISTINCT {} FROM {log} l WHERE {logged} AND NOT EXISTS (SELECT 1 FROM {tab} o WHERE {})",
                read.join(", "),
                same_row.join(" AND "),
                log = t.log.quoted(B),
                tab = t.name.quoted(B)
            ),
            &[],
        )
        .await?;
    db.exec("START TRANSACTION").await?;
    for chunk in gone.chunks(500) {
        let rows: Vec<String> = chunk
            .iter()
            .map(|r| {
                let parts: Vec<String> =
                    t.pk.iter()
                        .zip(&kinds)
                        .zip(r)
                        .map(|((c, k), v)| {
                            let lit = k.literal(v.as_deref().unwrap_or_default());
                            let v = if t.key_index(c).is_some() { converted(&lit, swap, plan) } else { lit };
                            format!("n.{} = {v}", q(c))
                        })
                        .collect();
                format!("({})", parts.join(" AND "))
            })
            .collect();
        db.exec(&format!("DELETE n FROM {} n WHERE {}", t.new.quoted(B), rows.join(" OR "))).await?;
    }
    for k in &t.keys {
        db.exec(&format!(
            "INSERT IGNORE INTO {todo} (k) SELECT DISTINCT {} FROM {tab} t LEFT JOIN {map} m ON m.old = t.{k} \
             WHERE t.{k} IS NOT NULL AND m.old IS NULL AND {filter}",
            same_id(&format!("t.{}", q(k)), plan),
            todo = todo(swap).quoted(B),
            tab = t.name.quoted(B),
            map = swap.map.quoted(B),
            k = q(k)
        ))
        .await?;
    }
    // A child whose parent's copy this round has not written yet waits for nothing: the checks
    // are off for this statement's writes (the swap checks every key after the last round).
    db.exec("SET SESSION foreign_key_checks = 0").await?;
    if through {
        hold("THROUGH_APPLY").await;
    }
    let written = db
        .exec(&format!(
            "INSERT INTO {new} ({names}) SELECT {exprs} FROM {tab} t WHERE {filter}{lock} ON DUPLICATE KEY UPDATE {}",
            updates.join(", "),
            new = t.new.quoted(B),
            tab = t.name.quoted(B),
            lock = if through { " LOCK IN SHARE MODE" } else { "" }
        ))
        .await;
    db.exec("SET SESSION foreign_key_checks = 1").await?;
    written?;
    db.exec(&format!("DELETE FROM {} WHERE combkey_seq IN ({these})", t.log.quoted(B))).await?;
    db.exec("COMMIT").await?;
    Ok(seqs.len())
}

/// Log rows still to apply, over every table.
async fn backlog(db: &mut Db, swap: &Swap) -> Result<i64, Error> {
    let counts: Vec<String> =
        swap.tables.iter().map(|t| format!("(SELECT COUNT(*) FROM {})", t.log.quoted(B))).collect();
    db.count(&format!("SELECT {}", counts.join(" + "))).await
}

/// Before the rename, with every change written through and the logs applied to the end: in
/// one consistent snapshot (each application transaction writes a table and its copy together,
/// through the triggers), each table's rows, their key columns converted as the copy converts
/// them, against the copy's, counted and summed as row hashes (spirit compares its copies by
/// chunked checksums; here one snapshot holds both tables whole). A difference stops the run
/// before the swap, nothing changed.
async fn verify(db: &mut Db, swap: &Swap, plan: &Plan, verified: &mut Vec<(String, u64)>) -> Result<(), Error> {
    #[cfg(feature = "failpoints")]
    if let Some(sql) = crate::failpoints::sql("BEFORE_VERIFY") {
        db.exec(&sql.replace("{copy}", &swap.tables[0].new.quoted(B))).await?;
    }
    // Keys the application wrote since the map was made (noted, written as the same id) that
    // are, or after the swap become, a key the map gives another key: the copy holds one row
    // for both (the later write replaced the other's), or the in-place conversion after the
    // swap would fail on the primary key. Named, before the swap.
    let pairs = written_since_become_one(db, swap, plan).await?;
    if !pairs.is_empty() {
        return Err(super::shared::become_one(&pairs.join("; ")));
    }
    server_keys_agree(db, swap, plan).await?;
    db.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").await?;
    db.exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY").await?;
    let result: Result<(), Error> = async {
        for t in &swap.tables {
            // Each column's bytes (`N` for NULL, so that no two rows read alike), hashed: 60 bits
            // as an integer, so that the sum is exact (a string's would be a float's, rounded
            // and different in another order).
            let hash = |values: &[String]| {
                let cells: Vec<String> =
                    values.iter().map(|v| format!("IFNULL(CONCAT('v', CAST({v} AS BINARY)), 'N')")).collect();
                format!("CAST(CONV(SUBSTRING(MD5(CONCAT_WS(',', {})), 1, 15), 16, 10) AS UNSIGNED)", cells.join(", "))
            };
            let copied: Vec<String> = t.insertable().iter().map(|c| format!("n.{}", q(&c.name))).collect();
            let row = db
                .rows(
                    &format!(
                        "SELECT (SELECT CONCAT(COUNT(*), ' ', COALESCE(SUM({}), 0)) FROM {tab} t), \
                         (SELECT CONCAT(COUNT(*), ' ', COALESCE(SUM({}), 0)) FROM {new} n)",
                        hash(&values_of(swap, plan, t, "t")),
                        hash(&copied),
                        tab = t.name.quoted(B),
                        new = t.new.quoted(B)
                    ),
                    &[],
                )
                .await?;
            let v: Vec<Option<String>> =
                (0..2).map(|i| row.first().and_then(|r| r.get(i).cloned().flatten())).collect();
            let rows = |i: usize| v[i].as_deref().unwrap_or("").split(' ').next().unwrap_or("").to_string();
            if v[0].is_none() || v[0] != v[1] {
                return Err(Error::new(
                    ErrorKind::Verification,
                    format!(
                        "the copy of {} is not the table: {} rows in one snapshot of both, {} in the copy{} (checked \
                         before the swap, which did not happen)",
                        t.name,
                        rows(0),
                        rows(1),
                        if rows(0) == rows(1) { ", and their rows' hashes differ" } else { "" }
                    ),
                ));
            }
            let name = t.name.to_string();
            let n = rows(0).parse().unwrap_or(0);
            match verified.iter_mut().find(|(x, _)| *x == name) {
                Some((_, k)) => *k += n,
                None => verified.push((name, n)),
            }
        }
        Ok(())
    }
    .await;
    let end = db.exec("COMMIT").await;
    result?;
    end?;
    Ok(())
}

/// The noted keys (written since the map was made) as the server converts them, a page after
/// `after`: each key, its conversion, and whether the live table `t` holds a row under the key
/// itself.
async fn noted_page(
    db: &mut Db,
    swap: &Swap,
    t: &Name,
    column: &str,
    after: Option<&str>,
) -> Result<Vec<(Stored, Vec<u8>, bool)>, Error> {
    let cat = db.catalog()?;
    let rows = db
        .rows(
            &format!(
                "SELECT HEX(d.k), 'bytes', HEX({conv}), EXISTS (SELECT 1 FROM {tab} t WHERE t.{c} = d.k) FROM {todo} d \
                 WHERE NOT ({conv} <=> d.k){after} ORDER BY CAST(d.k AS BINARY) LIMIT {page}",
                conv = swap.server_keys.expr_final("d.k"),
                tab = t.quoted(B),
                c = q(column),
                todo = todo(swap).quoted(B),
                after = after.map(|a| format!(" AND CAST(d.k AS BINARY) > X'{a}'")).unwrap_or_default(),
                page = crate::catalog::PAGE
            ),
            &[],
        )
        .await?;
    rows.iter()
        .map(|r| {
            let cell = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            Ok((cat.parse_key(r)?, crate::catalog::unhex(&cell(2))?, cell(3) == "1"))
        })
        .collect()
}

/// Before the swap: every noted key the server converted (in a write-through trigger or a
/// round) against combkey's conversion of it; a difference stops the run, nothing swapped.
async fn server_keys_agree(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<(), Error> {
    if !swap.server_keys.any() {
        return Ok(());
    }
    let mut after: Option<String> = None;
    let mut differ = Vec::new();
    loop {
        let page = noted_page(db, swap, &swap.tables[0].name, &plan.column, after.as_deref()).await?;
        let values: Vec<Stored> = page.iter().map(|(k, _, _)| k.clone()).collect();
        for ((old, by_server, _), (_, new)) in page.iter().zip(Source::of(plan).pairs(&values)?) {
            let combkeys = match &new {
                Stored::Bytes(b) => b.clone(),
                Stored::Text(t) => t.as_bytes().to_vec(),
            };
            if *by_server != combkeys && differ.len() < 5 {
                let shown = |v: &Stored| crate::keys::id_of(v).map_or_else(|_| format!("{v:?}"), |id| id.to_string());
                differ.push(format!(
                    "{} became {} by the server's conversion, {} by combkey's",
                    shown(old),
                    shown(&Stored::Bytes(by_server.clone())),
                    shown(&new)
                ));
            }
        }
        match page.last() {
            Some((Stored::Bytes(b), _, _)) if page.len() == crate::catalog::PAGE => after = Some(hex(b)),
            _ => break,
        }
    }
    if differ.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Verification,
        format!(
            "keys the application wrote during the run were converted by the server otherwise than combkey converts \
             them: {} (checked before the swap, which did not happen; please report this)",
            differ.join("; ")
        ),
    ))
}

/// Adds `pairs` (old and new id, as the key map holds them) to the key map `map`, those it
/// holds already left as they are (a run stopped and run again adds them again).
async fn key_map_add(db: &mut Db, map: &Name, pairs: &[(Stored, Stored)]) -> Result<(), Error> {
    let cat = db.catalog()?;
    for chunk in pairs.chunks(crate::methods::shared::MAP_BATCH) {
        db.exec(&format!(
            "INSERT IGNORE INTO {} (old_key, new_key) VALUES {}",
            map.quoted(B),
            crate::catalog::value_pairs(cat, chunk)
        ))
        .await?;
    }
    Ok(())
}

/// After the swap: the pairs of the noted keys the server converted go to the key map, and
/// the keys leave the list, a page at a time (a run stopped here and run again does it
/// again, alike). A key whose row the table still holds under the key itself stays on the
/// list for the in-place conversion (a run begun by an earlier combkey, which converted none).
async fn server_keys_mapped(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<usize, Error> {
    let cat = db.catalog()?;
    let Some(map) = plan.key_map.as_ref().map(Name::from).filter(|_| swap.server_keys.any()) else {
        return Ok(0);
    };
    let mut mapped = 0;
    let mut after: Option<String> = None;
    loop {
        let page = noted_page(db, swap, &swap.tables[0].name, &plan.column, after.as_deref()).await?;
        let mut pairs = Vec::new();
        let mut done = Vec::new();
        for (old, new, unconverted) in &page {
            if *unconverted {
                continue;
            }
            if let (Ok(o), Ok(n)) = (crate::keys::id_of(old), crate::keys::id_of(&Stored::Bytes(new.clone()))) {
                pairs.push((
                    crate::keys::stored_for(B, &plan.final_type, o),
                    crate::keys::stored_for(B, &plan.final_type, n),
                ));
            }
            done.push(cat.key_literal(old));
        }
        if !done.is_empty() {
            db.exec("START TRANSACTION").await?;
            key_map_add(db, &map, &pairs).await?;
            db.exec(&format!("DELETE FROM {} WHERE k IN ({})", todo(swap).quoted(B), done.join(", "))).await?;
            db.exec("COMMIT").await?;
            mapped += pairs.len();
        }
        match page.last() {
            Some((Stored::Bytes(b), _, _)) if page.len() == crate::catalog::PAGE => after = Some(hex(b)),
            _ => break,
        }
    }
    Ok(mapped)
}

/// Keys noted as written since the map was made whose final key (the same id, or the key
/// the in-place conversion after the swap makes) is a new key of the map, or another noted
/// key's final key: each pair as "a and b would both become c", five at most.
async fn written_since_become_one(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<Vec<String>, Error> {
    let cat = db.catalog()?;
    let noted = db.rows(&format!("SELECT HEX(k), 'bytes' FROM {}", todo(swap).quoted(B)), &[]).await?;
    if noted.is_empty() {
        return Ok(Vec::new());
    }
    let values: Vec<Stored> = noted.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
    let finals = Source::of(plan).pairs(&values)?;
    let mut out = Vec::new();
    // As ids (the values are of two types: the old column's and the new one's).
    let shown = |v: &Stored| crate::keys::id_of(v).map_or_else(|_| crate::survey::shown(v), |id| id.to_string());
    // Among themselves.
    let mut by_new: std::collections::HashMap<&Stored, &Stored> = std::collections::HashMap::new();
    for (old, new) in &finals {
        if let Some(first) = by_new.insert(new, old)
            && first != old
            && out.len() < 5
        {
            out.push(format!("{} and {} would both become {}", shown(first), shown(old), shown(new)));
        }
    }
    // Against the map's new keys (the map's primary key), a page at a time.
    for chunk in finals.chunks(crate::catalog::PAGE) {
        let news: Vec<String> = chunk.iter().map(|(_, n)| cat.key_literal(n)).collect();
        let rows = db
            .rows(
                &format!(
                    "SELECT HEX(m.old), HEX(m.new) FROM {} m WHERE m.new IN ({}) LIMIT 5",
                    swap.map.quoted(B),
                    news.join(", ")
                ),
                &[],
            )
            .await?;
        for r in rows {
            let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            let new = Stored::Bytes(crate::catalog::unhex(&v(1)).unwrap_or_default());
            if let Some((old, _)) = chunk.iter().find(|(_, n)| *n == new)
                && out.len() < 5
            {
                let mapped = Stored::Bytes(crate::catalog::unhex(&v(0)).unwrap_or_default());
                out.push(format!("{} and {} would both become {}", shown(&mapped), shown(old), shown(&new)));
            }
        }
    }
    Ok(out)
}

/// Applies the logs until none is left, the write-through triggers up.
async fn drain(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<usize, Error> {
    let mut applied = 0;
    loop {
        let n = apply(db, swap, plan, 5_000, true).await?;
        applied += n;
        if n == 0 {
            return Ok(applied);
        }
    }
}

/// A foreign key of a swapped table, as `SHOW CREATE TABLE` writes it.
struct ForeignKey {
    table: usize,
    name: String,
    line: String,
}

/// The foreign keys of the swap's tables (each table's own).
async fn foreign_keys(db: &mut Db, swap: &Swap, of: impl Fn(&SwapTable) -> Name) -> Result<Vec<ForeignKey>, Error> {
    let cat = db.catalog()?;
    let mut out = Vec::new();
    for (i, t) in swap.tables.iter().enumerate() {
        let def = db.query(cat.definition(&of(t))).await?;
        for line in def.lines().map(str::trim) {
            let Some(rest) = line.strip_prefix("CONSTRAINT `") else { continue };
            if !line.contains(" FOREIGN KEY ") {
                continue;
            }
            let Some(end) = rest.find("` ") else { continue };
            out.push(ForeignKey {
                table: i,
                name: rest[..end].replace("``", "`"),
                line: line.trim_end_matches(',').to_string(),
            });
        }
    }
    Ok(out)
}

/// `RENAME INDEX` clauses that give each plain index of `now` (a `SHOW CREATE TABLE` text)
/// that `before` does not have the name `before` gave the same index (its columns and options),
/// where that name is free in `now`.
fn index_renames(before: &str, now: &str) -> Vec<String> {
    // (name, what follows it) of each `KEY` line.
    let keys = |text: &str| -> Vec<(String, String)> {
        text.lines()
            .map(|l| l.trim().trim_end_matches(','))
            .filter_map(|l| l.strip_prefix("KEY `"))
            .filter_map(|r| r.find("` (").map(|end| (r[..end].replace("``", "`"), r[end + 1..].to_string())))
            .collect()
    };
    let (was, is) = (keys(before), keys(now));
    let mut out = Vec::new();
    for (name, rest) in &is {
        if was.iter().any(|(n, r)| n == name && r == rest) {
            continue;
        }
        let given: &Vec<String> = &out;
        let taken = |n: &String| {
            is.iter().any(|(m, _)| m == n) || given.iter().any(|o: &String| o.ends_with(&format!(" TO {}", q(n))))
        };
        if let Some((old, _)) = was.iter().find(|(n, r)| r == rest && !taken(n)) {
            let rename = format!("RENAME INDEX {} TO {}", q(name), q(old));
            out.push(rename);
        }
    }
    out
}

/// The name a foreign key has on the copy until the swap (pt-online-schema-change's leading
/// underscore), cut to 64 characters.
fn temporary_fk(name: &str) -> String {
    let n = format!("_{name}");
    if n.len() <= 64 { n } else { format!("_{:08x}_{}", crate::plan::fnv1a(name), &name[..54.min(name.len())]) }
}

/// `line` (a `CONSTRAINT ...` clause) named `name`, with references to the swap's tables
/// pointing at their copies where `to_copies`.
fn fk_clause(swap: &Swap, line: &str, old_name: &str, name: &str, to_copies: bool) -> String {
    let mut l = line.replacen(&format!("CONSTRAINT {} ", q(old_name)), &format!("CONSTRAINT {} ", q(name)), 1);
    if to_copies {
        for t in &swap.tables {
            for from in [format!("REFERENCES {} ", t.name.quoted(B)), format!("REFERENCES {} ", q(&t.name.name))] {
                l = l.replace(&from, &format!("REFERENCES {} ", t.new.quoted(B)));
            }
        }
    }
    l
}

/// Before the swap: the copies get the tables' foreign keys under names of their own (the
/// session's checks off: added in place, not checked again), then the children whose parent a
/// cascade deleted in the table (MySQL fires no trigger for it) go from the copies too.
async fn copies_keys(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<(), Error> {
    db.exec("SET SESSION foreign_key_checks = 0").await?;
    let fks = foreign_keys(db, swap, |t| t.name.clone()).await?;
    let present = foreign_keys(db, swap, |t| t.new.clone()).await?;
    for fk in fks {
        let t = &swap.tables[fk.table];
        let temporary = temporary_fk(&fk.name);
        if present.iter().any(|p| p.table == fk.table && p.name == temporary) {
            continue;
        }
        alter(
            db,
            swap,
            &t.new,
            &format!("ADD {}, ALGORITHM=INPLACE", fk_clause(swap, &fk.line, &fk.name, &temporary, true)),
        )
        .await?;
    }
    db.exec("SET SESSION foreign_key_checks = 1").await?;
    // With the keys there, a parent's delete written through cascades in the copies too: the
    // children whose parent a cascade in the table deleted before (MySQL fires no trigger for
    // it) are all there are to remove.
    // Found by a plain read (locking nothing the writers need), deleted by their primary key.
    for r in &plan.references {
        let Some(child) = swap.tables.iter().find(|t| t.name == Name::from(&r.child)) else { continue };
        let parent = &swap.tables[0];
        let on: Vec<String> =
            r.child_columns.iter().zip(&r.parent_columns).map(|(c, p)| format!("p.{} = c.{}", q(p), q(c))).collect();
        let present: Vec<String> = r.child_columns.iter().map(|c| format!("c.{} IS NOT NULL", q(c))).collect();
        // Only a cascade deletes children unseen. Under any other key the copies hold what the
        // tables hold (the logs are drained, every change written through), so a child without
        // its parent there is a row the copy lost: the run stops before the swap, nothing
        // changed, never a row removed to hide it.
        if !r.definition.to_ascii_uppercase().contains("ON DELETE CASCADE") {
            let sql = format!(
                "SELECT COUNT(*) FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {})",
                child.new.quoted(B),
                present.join(" AND "),
                parent.new.quoted(B),
                on.join(" AND ")
            );
            let n = db.count(&sql).await?;
            if n > 0 {
                return Err(Error::new(
                    ErrorKind::Verification,
                    format!(
                        "{n} rows of the copy of {} reference no row of the copy of {} ({}): the copy is not the \
                         table, so it is not swapped in",
                        child.name, parent.name, r.name
                    ),
                ));
            }
            continue;
        }
        let kinds = kinds(db, &child.name, &child.pk).await?;
        let read: Vec<String> = child.pk.iter().zip(&kinds).map(|(c, k)| k.read(&format!("c.{}", q(c)))).collect();
        let orphans = db
            .rows(
                &format!(
                    "SELECT {} FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {})",
                    read.join(", "),
                    child.new.quoted(B),
                    present.join(" AND "),
                    parent.new.quoted(B),
                    on.join(" AND ")
                ),
                &[],
            )
            .await?;
        let pk = format!("({})", child.pk.iter().map(|c| q(c)).collect::<Vec<_>>().join(", "));
        for chunk in orphans.chunks(1000) {
            let tuples: Vec<String> = chunk
                .iter()
                .map(|row| {
                    let lits: Vec<String> =
                        row.iter().zip(&kinds).map(|(v, k)| k.literal(v.as_deref().unwrap_or_default())).collect();
                    format!("({})", lits.join(", "))
                })
                .collect();
            db.exec(&format!("DELETE FROM {} WHERE {pk} IN ({})", child.new.quoted(B), tuples.join(", "))).await?;
        }
    }
    Ok(())
}

/// Whether table `n` exists.
async fn exists(db: &mut Db, n: &Name) -> Result<bool, Error> {
    let there = db
        .count(&format!(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}",
            n.schema.as_deref().map_or_else(|| "DATABASE()".to_string(), string_literal),
            string_literal(&n.name)
        ))
        .await?;
    Ok(there > 0)
}

/// Whether the swap happened: the copies have the tables' names, the tables their kept names.
pub(super) async fn swapped(db: &mut Db, swap: &Swap) -> Result<bool, Error> {
    let t = &swap.tables[0];
    let n = db
        .count(&format!(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME IN ({}, {})",
            string_literal(t.name.schema.as_deref().unwrap_or_default()),
            string_literal(&t.old.name),
            string_literal(&t.new.name)
        ))
        .await?;
    let old = db
        .count(&format!(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}",
            string_literal(t.name.schema.as_deref().unwrap_or_default()),
            string_literal(&t.old.name)
        ))
        .await?;
    Ok(n == 1 && old == 1)
}

/// Each table's InnoDB table id, where the server shows it (`INNODB_SYS_TABLES`, which needs
/// the `PROCESS` privilege): a `TRUNCATE` (which MariaDB runs as DDL, firing no trigger) or a
/// rebuild gives the table a new one. `None` per table where it cannot be read.
async fn table_ids(db: &mut Db, swap: &Swap) -> Vec<Option<String>> {
    let mut ids = Vec::new();
    for t in &swap.tables {
        let name = format!("{}/{}", t.name.schema.clone().unwrap_or_default(), t.name.name);
        let id = db
            .rows("SELECT CAST(TABLE_ID AS CHAR) FROM information_schema.INNODB_SYS_TABLES WHERE NAME = ?", &[name])
            .await
            .ok()
            .and_then(|r| r.first().and_then(|r| r.first().cloned().flatten()));
        ids.push(id);
    }
    ids
}

/// Whether a table was truncated (or rebuilt) since `before` was read (its ids, [`table_ids`]),
/// or, where its id cannot be read, is empty while its copy is not: its rows would come back
/// with the copy. The tables so found, named.
async fn truncated_since(db: &mut Db, swap: &Swap, before: &[Option<String>]) -> Result<Vec<String>, Error> {
    let now = table_ids(db, swap).await;
    let mut found = Vec::new();
    for (i, t) in swap.tables.iter().enumerate() {
        match (before.get(i).cloned().flatten(), now.get(i).cloned().flatten()) {
            (Some(a), Some(b)) if a != b => found.push(t.name.to_string()),
            (Some(_), Some(_)) => {}
            _ => {
                let empty = db
                    .count(&format!(
                        "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM {} LIMIT 1) a) = 0 AND (SELECT COUNT(*) FROM (SELECT 1 \
                         FROM {} LIMIT 1) b) = 1",
                        t.name.quoted(B),
                        t.new.quoted(B)
                    ))
                    .await?;
                if empty > 0 {
                    found.push(t.name.to_string());
                }
            }
        }
    }
    Ok(found)
}

/// Before each try of the swap's rename: each table's definition as the run began, and nothing
/// made since that references them or fires on them (a new table's foreign key, a trigger),
/// which would stay with the old tables. Read before every try, not once: the tries can go on
/// for minutes under a busy table, and another session's DDL meanwhile would otherwise be
/// swapped away (a column added) or left on the old table.
async fn still_the_tables(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<(), Error> {
    let cat = db.catalog()?;
    for t in &swap.tables {
        let Some((_, before)) = plan.definitions.iter().find(|(n, _)| Name::from(n) == t.name) else { continue };
        let now = db.query(cat.definition(&t.name)).await?;
        let (was, is) = (comparable(before, &[], B), comparable(&now, &[], B));
        if was != is {
            return Err(Error::new(
                ErrorKind::Verification,
                format!(
                    "{} changed since the run began (another session altered it): {}",
                    t.name,
                    crate::methods::shared::definition_change(&was, &is)
                ),
            ));
        }
    }
    // What came to reference them or fire on them during the run (a new table's foreign key,
    // a trigger) would stay with the old tables: nothing is swapped then.
    let why = outside(db, swap).await?;
    if !why.is_empty() {
        return Err(Error::new(
            ErrorKind::Verification,
            format!(
                "the tables were changed by another session since the run began, so the copies are not the tables any \
                 more (run again to see whether copy and swap can carry them): {}",
                why.join("; ")
            ),
        ));
    }
    Ok(())
}

/// The swap: the tables' definitions as the plan found them (a change since stops it), then one
/// `RENAME TABLE` of every table and copy, its metadata lock waited for at most the lock
/// timeout, and tried again.
async fn swap_tables(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
    ids: &[Option<String>],
) -> Result<(u32, std::time::Duration), Error> {
    let cat = db.catalog()?;
    // An AUTO_INCREMENT counter goes on from the table's (the copy's counter follows only the
    // values written to it; rows deleted at the end would otherwise have their numbers given
    // again).
    for t in &swap.tables {
        let next = db
            .rows(
                "SELECT CAST(AUTO_INCREMENT AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                &[t.name.schema.clone().unwrap_or_default(), t.name.name.clone()],
            )
            .await?;
        if let Some(Some(n)) = next.first().and_then(|r| r.first()).map(|v| v.as_deref().map(str::to_string))
            && n.chars().all(|c| c.is_ascii_digit())
        {
            alter(db, swap, &t.new, &format!("AUTO_INCREMENT = {n}")).await?;
        }
    }
    let pairs = |first_wait: &str| -> String {
        let mut out = Vec::new();
        for (i, t) in swap.tables.iter().enumerate() {
            let wait = if i == 0 { first_wait } else { "" };
            out.push(format!("{}{wait} TO {}", t.name.quoted(B), t.old.quoted(B)));
            out.push(format!("{} TO {}", t.new.quoted(B), t.name.quoted(B)));
        }
        format!("RENAME TABLE {}", out.join(", "))
    };
    // Never waiting for the metadata lock where the server can say so (MariaDB's NOWAIT): a
    // RENAME that waits heads the tables' lock queue, and every statement of the application
    // on them waits behind it for as long (a report's open transaction would stall every
    // writer). Tried again at growing pauses (5 ms up to 200 ms) while another session's
    // transaction holds a table, for at most --swap-wait, naming the oldest transactions
    // while it waits. MySQL has no NOWAIT there: its session's lock_wait_timeout bounds each
    // try.
    let started = Instant::now();
    let mut said: Option<Instant> = None;
    let (mut tries, mut nowait) = (0u32, true);
    loop {
        still_the_tables(db, swap, plan).await?;
        // A TRUNCATE since the check before the swap (read before it, so that none falls
        // between): the copy still holds the rows, which the rename would bring back.
        let truncated = truncated_since(db, swap, ids).await?;
        if !truncated.is_empty() {
            return Err(Error::new(
                ErrorKind::Verification,
                format!(
                    "{} {} truncated (or rebuilt) during the run: MariaDB runs TRUNCATE as DDL, firing no trigger, so \
                     the copy still holds the rows and the rename would bring them back; nothing was swapped; run again \
                     to copy it as it is now",
                    truncated.join(", "),
                    if truncated.len() == 1 { "was" } else { "were" }
                ),
            ));
        }
        let sql = if nowait { pairs(" NOWAIT") } else { pairs("") };
        match db.exec(&sql).await {
            // The tries that waited, and how long.
            Ok(_) => return Ok((tries, if tries > 0 { started.elapsed() } else { std::time::Duration::ZERO })),
            // No NOWAIT on this server (MySQL): its session's lock_wait_timeout bounds it.
            Err(e) if e.code() == Some("42000") && nowait => nowait = false,
            Err(e) if e.kind() == ErrorKind::LockTimeout && nowait => {
                tries += 1;
                if tries == 1 {
                    hold("SWAP_TRIED").await;
                }
                let holders = match cat.oldest_transactions() {
                    Some(q) if started.elapsed() >= std::time::Duration::from_secs(1) => db.query(q).await?,
                    _ => None,
                };
                let holders = holders.unwrap_or_else(|| "another session".to_string());
                if started.elapsed() >= online.swap_wait {
                    return Err(e
                        .context(format!(
                            "the swap's RENAME TABLE did not get its metadata locks in {tries} tries over {:.0} s \
                             (--swap-wait; it never queued for them, so the application's writes went on); the \
                             oldest open transactions: {holders}",
                            started.elapsed().as_secs_f64()
                        ))
                        .with_hint("; end the transaction that holds the tables (or give --swap-wait more time) and run the command again"));
                }
                if started.elapsed() >= std::time::Duration::from_secs(1)
                    && said.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(30))
                {
                    progress.swap_waits(
                        &format!(
                            "the swap's RENAME TABLE waits for the sessions that hold {} (the oldest open \
                             transactions: {holders}); it does not queue for the lock meanwhile, so the application's \
                             writes go on (at most --swap-wait {} s)",
                            swap.tables.iter().map(|t| t.name.to_string()).collect::<Vec<_>>().join(", "),
                            online.swap_wait.as_secs()
                        ),
                        started.elapsed(),
                    );
                    said = Some(Instant::now());
                }
                tokio::time::sleep(std::time::Duration::from_millis(u64::from(tries.min(40)) * 5)).await;
            }
            Err(e) if e.kind() == ErrorKind::LockTimeout && tries < online.max_retries => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100 << tries.min(4))).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// After the swap (each step safe to run again): the triggers go from the kept tables, and
/// their foreign keys; the swapped-in tables' foreign keys get their original names; keys
/// written through unmapped are converted in place; the key map is filled; the work tables go;
/// every definition is compared with the original's.
async fn after_swap(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<usize, Error> {
    let cat = db.catalog()?;
    for t in &swap.tables {
        for s in drop_triggers(t) {
            ddl(db, swap, &s).await?;
        }
    }
    db.exec("SET SESSION foreign_key_checks = 0").await?;
    for fk in foreign_keys(db, swap, |t| t.old.clone()).await? {
        alter(db, swap, &swap.tables[fk.table].old, &format!("DROP FOREIGN KEY {}, ALGORITHM=INPLACE", q(&fk.name)))
            .await?;
    }
    let original: Vec<(usize, String)> = plan
        .definitions
        .iter()
        .filter_map(|(n, d)| swap.tables.iter().position(|t| t.name == Name::from(n)).map(|i| (i, d.clone())))
        .collect();
    let now_keys = foreign_keys(db, swap, |t| t.name.clone()).await?;
    for (i, def) in &original {
        let t = &swap.tables[*i];
        for line in def.lines().map(str::trim).filter(|l| l.starts_with("CONSTRAINT `") && l.contains(" FOREIGN KEY "))
        {
            let Some(name) =
                line.strip_prefix("CONSTRAINT `").and_then(|r| r.find("` ").map(|e| r[..e].replace("``", "`")))
            else {
                continue;
            };
            let temporary = temporary_fk(&name);
            if !now_keys.iter().any(|k| k.table == *i && k.name == temporary) {
                continue;
            }
            let now = db.query(cat.definition(&t.name)).await?;
            // MariaDB names a foreign key's own index after the constraint: the index gets
            // back the name it had.
            let mut parts = vec![format!("DROP FOREIGN KEY {}", q(&temporary))];
            if now.contains(&format!("KEY {} (", q(&temporary))) && def.contains(&format!("KEY {} (", q(&name))) {
                parts.push(format!("RENAME INDEX {} TO {}", q(&temporary), q(&name)));
            }
            parts.push(format!("ADD {}", line.trim_end_matches(',')));
            alter(db, swap, &t.name, &parts.join(", ")).await?;
        }
        // MariaDB also renames an index it made for an unnamed foreign key (`KEY parent_id`)
        // after a named constraint added over it: each index gets back the name it had.
        let now = db.query(cat.definition(&t.name)).await?;
        let renames = index_renames(def, &now);
        if !renames.is_empty() {
            alter(db, swap, &t.name, &renames.join(", ")).await?;
        }
    }
    db.exec("SET SESSION foreign_key_checks = 1").await?;
    // The key map first, from the mapping table, then the work tables but the list of keys
    // written through unconverted (`_todo`), which the in-place run below reads: a run killed
    // anywhere after the swap and run again finds the key map whole (the in-place run adds the
    // pairs of the keys it converts, batch by batch).
    let mapping_left = exists(db, &swap.map).await?;
    if let Some(map) = plan.key_map.as_ref().map(Name::from).filter(|_| mapping_left) {
        let converted_names: Vec<&str> = plan.converted.keys().map(String::as_str).collect();
        let about = crate::plan::key_map_about(&swap.tables[0].name, &plan.column, &converted_names);
        db.exec_all(&cat.key_map_create(&map, &plan.final_type, &about)).await?;
        // The old ids in the key column's final type, as combkey reads them, a page at a time.
        let mut last: Option<String> = None;
        loop {
            let after_last = last.as_deref().map(|l| format!(" WHERE new > X'{l}'")).unwrap_or_default();
            let rows = db
                .rows(
                    &format!(
                        "SELECT HEX(old), 'bytes', HEX(new) FROM {}{after_last} ORDER BY new LIMIT {}",
                        swap.map.quoted(B),
                        crate::catalog::PAGE
                    ),
                    &[],
                )
                .await?;
            let mut pairs = Vec::new();
            for r in &rows {
                let old = cat.parse_key(r)?;
                let new =
                    Stored::Bytes(crate::catalog::unhex(r.get(2).cloned().flatten().as_deref().unwrap_or_default())?);
                // The map keeps ids, whatever form the column holds them in.
                if let (Ok(old), Ok(new)) = (crate::keys::id_of(&old), crate::keys::id_of(&new))
                    && old != new
                {
                    pairs.push((
                        crate::keys::stored_for(B, &plan.final_type, old),
                        crate::keys::stored_for(B, &plan.final_type, new),
                    ));
                }
            }
            key_map_add(db, &map, &pairs).await?;
            if rows.len() < crate::catalog::PAGE {
                break;
            }
            last = rows.last().and_then(|r| r.get(2).cloned().flatten());
        }
    }
    let logs: Vec<String> = swap.tables.iter().map(|t| t.log.quoted(B)).collect();
    db.exec(&format!("DROP TABLE IF EXISTS {}, {}", swap.map.quoted(B), logs.join(", "))).await?;
    stop_after("CLEANUP", 1);
    // The keys the server converted as they were written (counted once: a run stopped after
    // this and run again finds none left).
    let by_server = server_keys_mapped(db, swap, plan).await?;
    // Keys written through as the same id that convert: changed in place now.
    let noted =
        db.rows(&format!("SELECT HEX(k), 'bytes' FROM {}", todo(swap).quoted(B)), &[]).await.unwrap_or_default();
    let values: Vec<Stored> = noted.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
    // The in-place run's plan describes the tables as they are now (the journal keeps it, and
    // checks it against them should that run stop).
    let mut after = Plan { column_type: plan.final_type.clone(), ..plan.clone() };
    // The copy got the default before the swap: nothing of it to do again on the live table.
    after.steps.retain(|s| s.kind != crate::plan::StepKind::SetDefault);
    for (t, d) in &mut after.definitions {
        *d = db.query(cat.definition(&Name::from(&*t))).await?;
    }
    let converting = Source::of(&after).pairs(&values)?.into_iter().filter(|(o, n)| o != n).count();
    let mut converted = by_server;
    if converting > 0 {
        let mut plain = online.clone();
        plain.method = crate::options::Method::InPlace;
        plain.only = Some(format!("{} IN (SELECT d.k FROM {} d)", q(&plan.column), todo(swap).quoted(B)));
        // Journaled apart: the copy and swap's journal row stays at its phase after the swap.
        plain.after_swap = true;
        let out = crate::methods::in_place(db, &after, &plain, progress).await?;
        converted = out.converted;
    }
    db.exec(&format!("DROP TABLE IF EXISTS {}", todo(swap).quoted(B))).await?;
    let retyped: Vec<String> =
        if plan.retypes() { swap.tables.iter().flat_map(|t| t.keys.clone()).collect() } else { Vec::new() };
    let mut changed = retyped.clone();
    if plan.sets_default {
        changed.push(plan.column.clone());
    }
    for (i, before) in &original {
        let t = &swap.tables[*i];
        let now = db.query(cat.definition(&t.name)).await?;
        if comparable(before, &changed, B) != comparable(&now, &changed, B) {
            return Err(Error::new(
                ErrorKind::Verification,
                format!(
                    "the definition of {} differs from before the change beyond the key columns:\nbefore:\n{before}\nnow:\n{now}",
                    t.name
                ),
            ));
        }
    }
    if online.drop_old {
        let kept: Vec<String> = swap.tables.iter().rev().map(|t| t.old.quoted(B)).collect();
        db.exec(&format!("DROP TABLE IF EXISTS {}", kept.join(", "))).await?;
    }
    Ok(converted)
}

/// Removes what a run made before its swap: the triggers, the copies, the work tables. Safe
/// to run again.
///
/// The copies' foreign keys go first (each `ALTER` waiting for no lock, tried again): the
/// triggers go one table at a time, and while a parent's trigger is gone and a child's is not,
/// an application's new parent row is not in the parent's copy, so its child's write through
/// to the child's copy failed its foreign key (1452), and so the application's insert did (1-3
/// per stopped run in a break-test). Without them no trigger's write to a copy can fail.
pub(super) async fn clean(db: &mut Db, swap: &Swap) -> Result<(), Error> {
    let _ = db.exec("ROLLBACK").await;
    let mut present = Swap {
        tables: Vec::new(),
        map: swap.map.clone(),
        lock_wait_ms: swap.lock_wait_ms,
        server_keys: swap.server_keys.clone(),
    };
    for t in &swap.tables {
        if exists(db, &t.new).await? {
            present.tables.push(t.clone());
        }
    }
    for fk in foreign_keys(db, &present, |t| t.new.clone()).await? {
        alter(db, swap, &present.tables[fk.table].new, &format!("DROP FOREIGN KEY {}", q(&fk.name))).await?;
    }
    for (i, t) in swap.tables.iter().enumerate() {
        for s in drop_triggers(t) {
            ddl(db, swap, &s).await?;
        }
        stop_after("CLEAN_TRIGGERS", i64::try_from(i).unwrap_or(i64::MAX) + 1);
    }
    let mut drops: Vec<String> = swap.tables.iter().rev().flat_map(|t| [t.new.quoted(B), t.log.quoted(B)]).collect();
    drops.push(swap.map.quoted(B));
    drops.push(todo(swap).quoted(B));
    db.exec("SET SESSION foreign_key_checks = 0").await?;
    let dropped = db.exec(&format!("DROP TABLE IF EXISTS {}", drops.join(", "))).await;
    db.exec("SET SESSION foreign_key_checks = 1").await?;
    dropped.map(drop)
}

/// Runs `plan` by copy and swap.
pub(super) async fn run(
    db: &mut Db,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<OnlineOutcome, Error> {
    if online.kill_blockers_after.is_some() {
        return Err(Error::refused(
            "--kill-blockers-after is refused on MySQL/MariaDB: the server does not show which sessions hold a \
             table's metadata lock (without the metadata_lock_info plugin), and ending the oldest transactions \
             instead could end sessions that hold nothing. Leave it out: the swap waits --swap-wait for them, \
             naming the oldest open transactions. Nothing was changed",
        ));
    }
    let cat = db.catalog()?;
    let journal = Journal::new(cat, plan);
    journal.ensure(db, plan.table.schema.as_deref()).await?;
    let mut state = journal.swap_state(db, plan).await?;
    // An earlier run began removing what it made and did not finish: its copies miss the
    // changes made to the tables whose triggers went, so it is removed whole, and this run
    // begins afresh.
    if let Some((phase::ABANDONING, _)) = state {
        let swap = Swap::of(db, plan).await?;
        clean(db, &swap).await.map_err(|e| {
            e.context("removing what an earlier, stopped run made (its removal had begun and not finished)").with_hint(
                "; nothing was swapped (the application's tables are as they were): run the same command again once \
                 the sessions that hold the tables end, or --abandon",
            )
        })?;
        super::shared::drop_installed_functions(db, plan).await?;
        journal.forget(db).await?;
        state = None;
    }
    if state.is_none()
        && let Some(why) = refusal(db, plan).await?
    {
        return Err(Error::refused(format!(
            "copy and swap cannot run here: {why}. Give --method in-place (changes the keys in place, batch by batch). \
             Nothing was changed"
        )));
    }
    let mut throttle = crate::throttle::Throttle::connect(online, cat).await?;
    db.exec_all(&cat.session(plan.options.lock_timeout_ms)).await?;
    // The copy's and the rounds' reads lock nothing (a binary log in row or mixed format takes
    // them so: one in statement format is refused).
    db.exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED").await?;
    let swap = Swap::of(db, plan).await?;
    let (mut at, mut cursor) = state.clone().unwrap_or((phase::START, None));
    // A run stopped between its rename and the journal's note of it.
    if at < phase::SWAPPED && state.is_some() && swapped(db, &swap).await? {
        at = phase::SWAPPED;
    }
    if state.is_none() {
        let mut taken = Vec::new();
        for n in swap.made().into_iter().chain([todo(&swap)]) {
            if exists(db, &n).await? {
                taken.push(n.to_string());
            }
        }
        if !taken.is_empty() {
            return Err(Error::refused(format!(
                "copy and swap makes tables named {}, and a table of that name is there already (no run of this table's \
                 keys is in the journal): rename or drop it, or give --method in-place. Nothing was changed",
                taken.join(", ")
            )));
        }
        journal.start_swap(db, plan).await?;
    }
    let mut tally = Tally::new(state.is_some());
    let total = swap.tables.len();
    let key_type = column_type(db, &swap.tables[0].name, &plan.column).await;
    // A run that stopped after its copy may have put the write-through triggers up already.
    let through_maybe = at >= phase::COPIED;
    let result: Result<(), Error> = async {
        let key_type = key_type?;
        if at < phase::MADE {
            progress.step(1, 5, "map every key to its new value");
            db.exec(&format!(
                "CREATE TABLE IF NOT EXISTS {} (old {key_type} NOT NULL, new {} NOT NULL, PRIMARY KEY (new), UNIQUE KEY (old)) ENGINE=InnoDB",
                swap.map.quoted(B),
                plan.final_type
            ))
            .await?;
            map(db, &swap, plan, &journal, cursor.take(), &mut Pacing { throttle: &mut throttle, progress: &mut *progress, tally: &mut tally }).await?;
            progress.step(2, 5, "make the copies and the triggers that write changes through to them");
            for s in make(db, &swap, plan).await? {
                db.exec(&s).await?;
            }
            for t in &swap.tables {
                for s in log_triggers(t) {
                    ddl(db, &swap, &s).await?;
                }
            }
            journal.set_cursor(db, None, usize::try_from(phase::MADE).unwrap_or(0)).await?;
            stop_after("PHASE", phase::MADE);
            at = phase::MADE;
        }
        if at < phase::COPIED {
            progress.step(3, 5, &format!("copy the rows of {total} tables, keys converted"));
            copy(db, &swap, plan, &journal, cursor.take(), &mut Pacing { throttle: &mut throttle, progress: &mut *progress, tally: &mut tally }).await?;
            journal.set_cursor(db, None, usize::try_from(phase::COPIED).unwrap_or(0)).await?;
            stop_after("PHASE", phase::COPIED);
            at = phase::COPIED;
        }
        if at < phase::SWAPPED {
            progress.step(4, 5, "apply the changes made meanwhile, then swap the tables (one RENAME TABLE)");
            // Rounds until what is left is small, each said.
            let mut applied = 0;
            loop {
                tally.out.paused += throttle.wait(db, progress).await?;
                let left = backlog(db, &swap).await?;
                if applied > 0 {
                    progress.applied(applied, left);
                }
                if left <= 100 {
                    break;
                }
                applied += apply(db, &swap, plan, 5_000, through_maybe).await?;
                tally.out.passes += 1;
            }
            // The copies' statistics, which InnoDB took when they were empty and recounts in the
            // background (or, under STATS_AUTO_RECALC=0, never): after the swap the
            // application's queries are planned from them, and the audit after the run reads the
            // key's index size from them. Sampled, it waits for no writer (and, not written to
            // the binary log, makes no replica or Galera node do it).
            for t in &swap.tables {
                db.exec(&format!("ANALYZE NO_WRITE_TO_BINLOG TABLE {}", t.new.quoted(B))).await?;
            }
            // From here on every change is written through to the copies as it happens; the
            // triggers' creation waits for the transactions under way on each table, so what
            // the logs hold then is all that is left.
            hold("BEFORE_THROUGH").await;
            for t in &swap.tables {
                for s in through_triggers(&swap, plan, t) {
                    ddl_before_swap(db, &swap, online, &s).await?;
                }
            }
            stop_after("THROUGH", 1);
            drain(db, &swap, plan).await?;
            copies_keys(db, &swap, plan).await?;
            drain(db, &swap, plan).await?;
            // The tables' ids before the check, so that a TRUNCATE after it is seen at the rename.
            let ids = table_ids(db, &swap).await;
            verify(db, &swap, plan, &mut tally.out.verified).await?;
            hold("BEFORE_SWAP").await;
            let (tries, waited) = swap_tables(db, &swap, plan, online, &mut *progress, &ids).await?;
            tally.out.retries += usize::try_from(tries).unwrap_or(usize::MAX);
            tally.out.paused += waited;
            stop_after("RENAME", 1);
            journal.set_cursor(db, None, usize::try_from(phase::SWAPPED).unwrap_or(0)).await?;
            stop_after("PHASE", phase::SWAPPED);
        }
        Ok(())
    }
    .await;
    if let Err(e) = result {
        if swapped(db, &swap).await.unwrap_or(false) {
            return Err(e.context("combkey doctor --online (copy and swap)").with_hint(
                "; the tables are swapped (the application has the converted keys); what follows the swap did not \
                 finish: run the same command again to finish it",
            ));
        }
        // From here the run is removed, never gone on from: a removal that stops half-way
        // (one table's triggers gone, another's kept) is finished by the next run.
        let cleaned = match journal.abandoning(db).await {
            Ok(()) => clean(db, &swap).await,
            Err(e) => Err(e),
        };
        if cleaned.is_ok() {
            let _ = super::shared::drop_installed_functions(db, plan).await;
            let _ = journal.forget(db).await;
        }
        return Err(unchanged(e, cleaned));
    }
    progress.step(5, 5, "name the foreign keys as they were, convert keys written meanwhile, fill the key map");
    let converted = after_swap(db, &swap, plan, online, progress).await.map_err(|e| {
        e.context("combkey doctor --online (copy and swap)").with_hint(
            "; the tables are swapped (the application has the converted keys); what follows the swap did not finish: \
             run the same command again to finish it",
        )
    })?;
    journal.finish(db).await?;
    if !online.drop_old {
        tally.out.kept = swap.tables.iter().map(|t| t.old.shown(B)).collect();
    }
    tally.out.converted = plan.converted.values().sum::<usize>() + converted;
    // The rounds before the swap, and the last one under the write-through triggers.
    tally.out.passes += 1;
    Ok(tally.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_renamed_after_a_constraint_gets_its_name_back() {
        let before = "CREATE TABLE `c` (\n  `id` int(11) NOT NULL,\n  `p` binary(16) NOT NULL,\n  `q` binary(16),\n  \
                      PRIMARY KEY (`id`),\n  KEY `p` (`p`),\n  KEY `by q` (`q`) COMMENT 'x',\n  KEY `q2` (`q`),\n  \
                      CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `t` (`id`)\n) ENGINE=InnoDB";
        let now = before.replace("KEY `p` (`p`)", "KEY `c_ibfk_1` (`p`)");
        assert_eq!(index_renames(before, &now), ["RENAME INDEX `c_ibfk_1` TO `p`"]);
        // Nothing renamed: nothing to do; an index that is new stays.
        assert!(index_renames(before, before).is_empty());
        let added = before.replace("  KEY `p` (`p`),\n", "  KEY `p` (`p`),\n  KEY `extra` (`id`, `p`),\n");
        assert!(index_renames(before, &added).is_empty());
        // Two indexes on the same columns: each old name is given once.
        let both = before.replace("KEY `q2` (`q`)", "KEY `z` (`q`)");
        assert_eq!(index_renames(before, &both), ["RENAME INDEX `z` TO `q2`"]);
    }
}
