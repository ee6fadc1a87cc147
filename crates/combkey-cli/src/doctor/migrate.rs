//! The migration `combkey doctor` prints (`--migration-sql`) or runs (`--apply`): every key
//! of a time-carrying layout becomes its sorted form with the same time, losslessly (the
//! registry's conversions), in the table and in every column that references it; a text
//! key column becomes the binary stored form.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use combkey::Comb;
use combkey::layouts::Layout;
use sqlx::{AssertSqlSafe, Connection};

use super::audit::{self, Kind};
use super::db::{Db, Key, Raw, Reference};

/// Rows per mapping `INSERT`.
const BATCH: usize = 1000;

/// How the key column's type changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Retype {
    /// PostgreSQL text to `uuid`.
    PgToUuid,
    /// MySQL/MariaDB `CHAR(36)`/`VARCHAR` to `BINARY(16)`.
    MySqlToBinary16,
    /// SQLite `TEXT` values rewritten as 16-byte `BLOB`s.
    SqliteToBlob,
}

/// What the migration does.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Keys whose value changes, and their new id.
    pub(crate) changes: Vec<(Key, Comb)>,
    /// Keys converted, by (from, to) layout names.
    pub(crate) converted: BTreeMap<(&'static str, &'static str), usize>,
    /// Keys left as they are, by kind, with the reason.
    pub(crate) kept: BTreeMap<&'static str, (usize, &'static str)>,
    /// Keys a conversion refused (not of their detected layout's lossless base).
    pub(crate) refused: usize,
    pub(crate) retype: Option<Retype>,
}

impl Plan {
    /// Nothing would change.
    pub(crate) fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.retype.is_none()
    }
}

/// The plan for `keys` (all of the table's, in key order) of `kinds`.
pub(crate) fn plan(backend: combkey::Backend, column_type: &str, keys: &[Key], kinds: &[Kind]) -> Plan {
    let ty = column_type.to_lowercase();
    let retype = match backend {
        combkey::Backend::Postgres if ty != "uuid" => Some(Retype::PgToUuid),
        combkey::Backend::MySql if ty.starts_with("char") || ty.starts_with("varchar") => Some(Retype::MySqlToBinary16),
        combkey::Backend::Sqlite if keys.iter().any(|k| matches!(k.raw, Raw::Text(_))) => Some(Retype::SqliteToBlob),
        _ => None,
    };
    let mut plan = Plan { changes: Vec::new(), converted: BTreeMap::new(), kept: BTreeMap::new(), refused: 0, retype };
    for (key, kind) in keys.iter().zip(kinds) {
        let new = match (audit::target(*kind), kind) {
            (Ok(Some(to)), Kind::Layout(from)) => match Layout::convert(&key.id, *from, to) {
                Ok(new) => {
                    *plan.converted.entry((from.name(), to.name())).or_default() += 1;
                    Some(new)
                }
                Err(_) => {
                    plan.refused += 1;
                    None
                }
            },
            (Ok(_), _) => None,
            (Err(reason), _) => {
                let e = plan.kept.entry(kind.name()).or_insert((0, reason));
                e.0 += 1;
                None
            }
        };
        match new {
            Some(new) => plan.changes.push((key.clone(), new)),
            // SQLite text keys are rewritten as blobs even when their id stays.
            None if retype == Some(Retype::SqliteToBlob) && matches!(key.raw, Raw::Text(_)) => {
                plan.changes.push((key.clone(), key.id));
            }
            None => {}
        }
    }
    plan
}

/// One statement of the script, and whether it runs inside the transaction.
#[derive(Clone, Debug)]
pub(crate) struct Stmt {
    pub(crate) sql: String,
    pub(crate) in_tx: bool,
    /// For the mapping inserts: rows so far, of all.
    pub(crate) progress: Option<(usize, usize)>,
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::with_capacity(b.len() * 2), |mut s, x| {
        let _ = write!(s, "{x:02X}");
        s
    })
}

fn sql_text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The statements, in order.
pub(crate) fn script(
    backend: combkey::Backend,
    table: &str,
    column: &str,
    column_type: &str,
    refs: &[Reference],
    plan: &Plan,
) -> Vec<Stmt> {
    let mut out = Vec::new();
    let tx = |sql: String| Stmt { sql, in_tx: true, progress: None };
    let plain = |sql: String| Stmt { sql, in_tx: false, progress: None };
    match backend {
        combkey::Backend::Postgres => {
            for r in refs {
                out.push(tx(format!("ALTER TABLE {} DROP CONSTRAINT \"{}\"", r.table, r.constraint)));
            }
            if plan.retype == Some(Retype::PgToUuid) {
                out.push(tx(format!(
                    "ALTER TABLE \"{table}\" ALTER COLUMN \"{column}\" TYPE uuid USING \"{column}\"::uuid"
                )));
                for r in refs {
                    out.push(tx(format!(
                        "ALTER TABLE {} ALTER COLUMN \"{}\" TYPE uuid USING \"{}\"::uuid",
                        r.table, r.column, r.column
                    )));
                }
            }
            if !plan.changes.is_empty() {
                out.push(tx(
                    "CREATE TEMPORARY TABLE combkey_doctor_map (old uuid PRIMARY KEY, new uuid NOT NULL) ON COMMIT DROP".into(),
                ));
                out.extend(map_inserts(plan, |k, new| format!("('{}', '{new}')", k.id)));
                for r in refs {
                    out.push(tx(format!(
                        "UPDATE {} c SET \"{}\" = m.new FROM combkey_doctor_map m WHERE c.\"{}\" = m.old",
                        r.table, r.column, r.column
                    )));
                }
                out.push(tx(format!(
                    "UPDATE \"{table}\" t SET \"{column}\" = m.new FROM combkey_doctor_map m WHERE t.\"{column}\" = m.old"
                )));
            }
            for r in refs {
                out.push(tx(format!("ALTER TABLE {} ADD CONSTRAINT \"{}\" {}", r.table, r.constraint, r.definition)));
            }
        }
        combkey::Backend::MySql => {
            // DDL commits on its own in MySQL/MariaDB: the foreign keys go first, the columns
            // are converted, the keys change in one transaction, the foreign keys come back.
            for r in refs {
                out.push(plain(format!("ALTER TABLE `{}` DROP FOREIGN KEY `{}`", r.table, r.constraint)));
            }
            if plan.retype == Some(Retype::MySqlToBinary16) {
                out.push(plain(mysql_to_binary16(table, column, true, false)));
                for r in refs {
                    out.push(plain(mysql_to_binary16(&r.table, &r.column, false, r.nullable)));
                }
            }
            if !plan.changes.is_empty() {
                let uuid_type = column_type.eq_ignore_ascii_case("uuid");
                let (ty, lit): (&str, fn(&Comb) -> String) = if uuid_type {
                    ("UUID", |id| format!("'{id}'"))
                } else {
                    ("BINARY(16)", |id| format!("0x{}", hex(id.as_bytes())))
                };
                out.push(tx(format!(
                    "CREATE TEMPORARY TABLE combkey_doctor_map (old {ty} NOT NULL PRIMARY KEY, new {ty} NOT NULL)"
                )));
                out.extend(map_inserts(plan, |k, new| format!("({}, {})", lit(&k.id), lit(new))));
                for r in refs {
                    out.push(tx(format!(
                        "UPDATE `{}` c JOIN combkey_doctor_map m ON c.`{}` = m.old SET c.`{}` = m.new",
                        r.table, r.column, r.column
                    )));
                }
                out.push(tx(format!(
                    "UPDATE `{table}` t JOIN combkey_doctor_map m ON t.`{column}` = m.old SET t.`{column}` = m.new"
                )));
                out.push(tx("DROP TEMPORARY TABLE combkey_doctor_map".into()));
            }
            for r in refs {
                out.push(plain(format!(
                    "ALTER TABLE `{}` ADD CONSTRAINT `{}` FOREIGN KEY (`{}`) REFERENCES `{table}` (`{column}`) {}",
                    r.table, r.constraint, r.column, r.definition
                )));
            }
        }
        _ => {
            if !plan.changes.is_empty() {
                out.push(tx("PRAGMA defer_foreign_keys = ON".into()));
                out.push(tx("CREATE TEMPORARY TABLE combkey_doctor_map (old PRIMARY KEY, new BLOB NOT NULL)".into()));
                out.extend(map_inserts(plan, |k, new| {
                    let old = match &k.raw {
                        Raw::Bytes(b) => format!("X'{}'", hex(b)),
                        Raw::Text(t) => sql_text(t),
                    };
                    format!("({old}, X'{}')", hex(new.as_bytes()))
                }));
                for (t, c) in refs.iter().map(|r| (r.table.as_str(), r.column.as_str())).chain([(table, column)]) {
                    out.push(tx(format!(
                        "UPDATE \"{t}\" SET \"{c}\" = (SELECT new FROM combkey_doctor_map WHERE old = \"{t}\".\"{c}\") \
                         WHERE \"{c}\" IN (SELECT old FROM combkey_doctor_map)"
                    )));
                }
                out.push(tx("DROP TABLE combkey_doctor_map".into()));
            }
        }
    }
    out
}

/// The `INSERT`s that fill the mapping table, `BATCH` rows each, `row` writing one
/// `(old, new)` tuple.
fn map_inserts(plan: &Plan, row: impl Fn(&Key, &Comb) -> String) -> Vec<Stmt> {
    let total = plan.changes.len();
    plan.changes
        .chunks(BATCH)
        .enumerate()
        .map(|(n, chunk)| {
            let values: Vec<String> = chunk.iter().map(|(k, new)| row(k, new)).collect();
            Stmt {
                sql: format!("INSERT INTO combkey_doctor_map (old, new) VALUES {}", values.join(", ")),
                in_tx: true,
                progress: Some(((n * BATCH + chunk.len()).min(total), total)),
            }
        })
        .collect()
}

/// `CHAR(36)` to `BINARY(16)` in place: a new column filled with the bytes, taking the old
/// one's name and place (and the primary key, for the key column).
fn mysql_to_binary16(table: &str, column: &str, primary: bool, nullable: bool) -> String {
    let tmp = format!("{column}_combkey_bin");
    let null = if nullable { "NULL" } else { "NOT NULL" };
    let pk = if primary { "DROP PRIMARY KEY, " } else { "" };
    let add_pk = if primary { format!(", ADD PRIMARY KEY (`{column}`)") } else { String::new() };
    format!(
        "ALTER TABLE `{table}` ADD COLUMN `{tmp}` BINARY(16) NULL AFTER `{column}`;\n\
         UPDATE `{table}` SET `{tmp}` = UNHEX(REPLACE(`{column}`, '-', ''));\n\
         ALTER TABLE `{table}` {pk}DROP COLUMN `{column}`, CHANGE COLUMN `{tmp}` `{column}` BINARY(16) {null}{add_pk}"
    )
}

/// The script as text: `BEGIN`/`COMMIT` around the statements that run in the transaction.
pub(crate) fn to_text(backend: combkey::Backend, stmts: &[Stmt]) -> String {
    let mut s = String::new();
    let mut open = false;
    let begin = if backend == combkey::Backend::MySql { "START TRANSACTION;\n" } else { "BEGIN;\n" };
    for st in stmts {
        if st.in_tx && !open {
            s.push_str(begin);
            open = true;
        } else if !st.in_tx && open {
            s.push_str("COMMIT;\n");
            open = false;
        }
        s.push_str(&st.sql);
        s.push_str(";\n");
    }
    if open {
        s.push_str("COMMIT;\n");
    }
    s
}

/// Runs the script: the statements marked for the transaction in one transaction (all of
/// them on PostgreSQL and SQLite), progress on stderr.
pub(crate) async fn apply(db: &mut Db, stmts: &[Stmt]) -> Result<(), String> {
    // Progress in twentieths (and the last batch).
    let progress = |st: &Stmt| {
        if let Some((done, total)) = st.progress {
            let step = (total / 20).max(1);
            if done == total || done / step != (done - done.min(BATCH)) / step {
                eprintln!("combkey doctor: {done} of {total} keys mapped");
            }
        }
    };
    macro_rules! run {
        ($conn:expr) => {{
            let conn = $conn;
            let mut i = 0;
            while i < stmts.len() {
                if stmts[i].in_tx {
                    let mut tx = conn.begin().await.map_err(|e| format!("BEGIN: {e}"))?;
                    while i < stmts.len() && stmts[i].in_tx {
                        sqlx::raw_sql(AssertSqlSafe(stmts[i].sql.clone()))
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| format!("{}: {e}", short(&stmts[i].sql)))?;
                        progress(&stmts[i]);
                        i += 1;
                    }
                    tx.commit().await.map_err(|e| format!("COMMIT: {e}"))?;
                } else {
                    sqlx::raw_sql(AssertSqlSafe(stmts[i].sql.clone()))
                        .execute(&mut *conn)
                        .await
                        .map_err(|e| format!("{}: {e}", short(&stmts[i].sql)))?;
                    i += 1;
                }
            }
            Ok(())
        }};
    }
    match db {
        Db::Pg(c) => run!(c),
        Db::My(c) => run!(c),
        Db::Lite(c) => run!(c),
    }
}

/// The start of a statement, for error messages.
fn short(sql: &str) -> String {
    let first: String = sql.chars().take(80).collect();
    if first.len() < sql.len() { format!("{first}...") } else { first }
}
