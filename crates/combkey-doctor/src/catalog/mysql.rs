//! MySQL's and MariaDB's catalog (`information_schema`, `SHOW CREATE TABLE`), read with every
//! value as text. A table's schema is its database.

use super::model::{
    Catalog, Check, Column, ForeignKey, Name, Query, ReplicaLag, Retype, Rewrite, Rows, Stored, Trigger, cell,
    first_text, flag, hex, string_literal, text, unhex,
};
use crate::error::Error;
use combkey::Backend;

/// MySql's catalog queries and statements.
pub(crate) struct MySql;

/// The separator of `GROUP_CONCAT`ed column names (ASCII unit separator: never in a name).
const SEP: char = '\u{1f}';

fn params(t: &Name) -> Vec<String> {
    vec![t.schema.clone().unwrap_or_default(), t.name.clone()]
}

/// `COALESCE(NULLIF(?, ''), DATABASE())`: the schema given, or the connection's database.
const SCHEMA: &str = "COALESCE(NULLIF(?, ''), DATABASE())";

/// A user's table name: `t`, `db.t`, with backticks around either part (doubled inside).
fn parse_name(s: &str) -> Result<(Option<String>, String), Error> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = s.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' if quoted && chars.peek() == Some(&'`') => {
                chars.next();
                cur.push('`');
            }
            '`' => quoted = !quoted,
            '.' if !quoted => parts.push(core::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    match (quoted, parts.as_slice()) {
        (false, [t]) if !t.is_empty() => Ok((None, t.clone())),
        (false, [d, t]) if !d.is_empty() && !t.is_empty() => Ok((Some(d.clone()), t.clone())),
        _ => {
            Err(Error::config("table name", format!("{s:?}"), "table or database.table, parts optionally in backticks"))
        }
    }
}

/// The `CONSTRAINT ...` line of a foreign key in a `SHOW CREATE TABLE` text.
pub(crate) fn constraint_clause(show_create: &str, name: &str) -> Option<String> {
    let head = format!("CONSTRAINT {} FOREIGN KEY", Backend::MySql.quote(name));
    show_create.lines().map(str::trim).find(|l| l.starts_with(&head)).map(|l| l.trim_end_matches(',').to_string())
}

/// The definition of column `name` in a `SHOW CREATE TABLE` text (the line without its
/// trailing comma), for rewriting it with another type.
pub fn column_clause(show_create: &str, name: &str) -> Option<String> {
    let head = format!("{} ", Backend::MySql.quote(name));
    show_create.lines().map(str::trim).find(|l| l.starts_with(&head)).map(|l| l.trim_end_matches(',').to_string())
}

/// One `UPDATE ... JOIN combkey_doctor_map` per column of `targets` (a temporary table may
/// appear once per statement). For one batch of an online run (`batch`) the mapping is read
/// first (`STRAIGHT_JOIN`) and each table probed through its index on the column, whatever
/// the optimizer estimates: reading a table whole would, under `REPEATABLE READ`, lock every
/// row of it until the batch commits (seen when the mapping table's row estimate had grown
/// past the child table's size). Offline, the mapping holds every key and the optimizer's
/// choice stands.
fn rewrite_joins(targets: &[Rewrite], batch: bool) -> Vec<String> {
    let q = |n: &str| Backend::MySql.quote(n);
    let mut out = Vec::new();
    for t in targets {
        let keep: String = t.keep.iter().map(|k| format!(", t.{k} = t.{k}", k = q(k))).collect();
        let table = t.table.quoted(Backend::MySql);
        for c in &t.columns {
            let c = q(c);
            out.push(if batch {
                format!("UPDATE combkey_doctor_map m STRAIGHT_JOIN {table} t ON t.{c} = m.old SET t.{c} = m.new{keep}")
            } else {
                format!("UPDATE {table} t JOIN combkey_doctor_map m ON t.{c} = m.old SET t.{c} = m.new{keep}")
            });
        }
    }
    out
}

/// The plain index of a MySQL table definition (`SHOW CREATE TABLE`) on exactly `columns`:
/// its quoted name and its definition line (`KEY `pid` (`pid`)`).
fn fk_index(definition: &str, columns: &[String]) -> Option<(String, String)> {
    let want: Vec<String> = columns.iter().map(|c| Backend::MySql.quote(c)).collect();
    let want = format!("({})", want.join(","));
    definition.lines().map(|l| l.trim().trim_end_matches(',')).find_map(|line| {
        let rest = line.strip_prefix("KEY ")?;
        let end = rest[1..].find('`')? + 2;
        let (name, after) = rest.split_at(end);
        after.trim_start().starts_with(&want).then(|| (name.to_string(), line.to_string()))
    })
}

impl Catalog for MySql {
    fn backend(&self) -> Backend {
        Backend::MySql
    }

    fn retype_needed(&self, column: &Column) -> bool {
        let t = column.data_type.as_str();
        t.starts_with("char") || t.starts_with("varchar") || t.contains("text")
    }

    fn versioned(&self, table: &Name) -> Option<Query<bool>> {
        Some(Query {
            sql: format!(
                "SELECT CAST(TABLE_TYPE = 'SYSTEM VERSIONED' AS CHAR) FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ?"
            ),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn lock_against_writes(&self, table: &Name, _only: bool) -> Option<String> {
        // Every row (and the gaps between, under REPEATABLE READ: no insert either) locked for
        // update until the commit; plain reads, which lock nothing, go on.
        Some(format!("SELECT COUNT(*) FROM {} FOR UPDATE", table.quoted(Backend::MySql)))
    }

    fn reader_session(&self) -> Vec<String> {
        // The server gives up on a client that reads nothing for net_write_timeout (60 s by
        // default): an hour, for a reader whose writer is slow under load.
        vec!["SET SESSION net_write_timeout = 3600".into()]
    }

    fn sample_filter(&self, p: f64) -> String {
        format!(" AND RAND() < {p}")
    }

    /// Text values only: a journaled type change stopped after its values became their 16
    /// bytes (in `VARBINARY(64)`) holds bytes that no text form repeats.
    fn same_id(&self, table: &Name, column: &Column, _only: bool) -> Option<String> {
        if column.data_type == "uuid" || column.data_type == "binary(16)" {
            return None;
        }
        let c = Backend::MySql.quote(&column.name);
        let t = table.quoted(Backend::MySql);
        // Grouping every value takes the server a second a few hundred thousand rows; where
        // every value is written one way (all canonical lower case, as `UUID()` writes them,
        // or all upper case, or all 32 digits of one case), no two values spell one id, and
        // the server skips the grouping: a value that is not so is found in one pass.
        let h = |x: &str| format!("[{x}]");
        let forms = [("0-9a-f", true), ("0-9A-F", true), ("0-9a-f", false), ("0-9A-F", false)];
        let gates: Vec<String> = forms
            .iter()
            .map(|(set, dashed)| {
                let d = h(set);
                let pattern = if *dashed {
                    format!("^{d}{{8}}-{d}{{4}}-{d}{{4}}-{d}{{4}}-{d}{{12}}$")
                } else {
                    format!("^{d}{{32}}$")
                };
                format!(
                    "EXISTS (SELECT 1 FROM {t} WHERE {c} IS NOT NULL AND LENGTH({c}) > 16 AND CAST({c} AS BINARY) NOT REGEXP '{pattern}')"
                )
            })
            .collect();
        Some(format!(
            "SELECT k, COUNT(*), LEFT(GROUP_CONCAT(QUOTE(v) ORDER BY v SEPARATOR ' and '), 300) FROM (SELECT \
             CAST(b AS CHAR) AS v, REPLACE(REPLACE(REPLACE(REPLACE(LOWER(CAST(b AS CHAR)), 'urn:uuid:', ''), \
             '{{', ''), '}}', ''), '-', '') AS k FROM (SELECT DISTINCT CAST({c} AS BINARY) AS b FROM {t} \
             WHERE {c} IS NOT NULL AND LENGTH({c}) > 16) u) d WHERE {} GROUP BY k \
             HAVING COUNT(*) > 1",
            gates.join(" AND ")
        ))
    }

    fn resolve(&self, user_name: &str) -> Result<Query<Option<Name>>, Error> {
        let (schema, name) = parse_name(user_name)?;
        Ok(Query {
            sql: format!(
                "SELECT CAST(TABLE_SCHEMA AS CHAR), CAST(TABLE_NAME AS CHAR), CAST(CAST(TABLE_NAME AS BINARY) = CAST(? AS BINARY) AS CHAR) \
                 FROM information_schema.TABLES WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ? AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')"
            ),
            params: vec![name.clone(), schema.unwrap_or_default(), name],
            parse: |rows| {
                let exact: Vec<_> = rows.iter().filter(|r| flag(r, 2).unwrap_or(false)).collect();
                let pick = match (exact.as_slice(), rows) {
                    ([one], _) => one,
                    ([], [one]) => one,
                    ([], []) => return Ok(None),
                    _ => {
                        return Err(Error::config(
                            "table name",
                            format!("{} tables that differ only in case", rows.len()),
                            "one table: write its name exactly",
                        ));
                    }
                };
                Ok(Some(Name { schema: Some(text(pick, 0)?), name: text(pick, 1)? }))
            },
        })
    }

    fn columns(&self, table: &Name) -> Query<Vec<Column>> {
        Query {
            sql: format!(
                "SELECT CAST(COLUMN_NAME AS CHAR), CAST(COLUMN_TYPE AS CHAR), CAST(IS_NULLABLE AS CHAR), \
                 CAST(COALESCE(GENERATION_EXPRESSION, COLUMN_DEFAULT) AS CHAR), \
                 CAST(EXTRA AS CHAR) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ? \
                 ORDER BY ORDINAL_POSITION"
            ),
            params: params(table),
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        let extra = cell(r, 4)?.unwrap_or_default().to_lowercase();
                        Ok(Column {
                            name: text(r, 0)?,
                            data_type: text(r, 1)?.to_lowercase(),
                            nullable: flag(r, 2)?,
                            // MariaDB writes a NULL default as the text NULL.
                            default: cell(r, 3)?.filter(|d| d != "NULL"),
                            auto_update: extra.contains("on update"),
                            generated: extra.contains("generated") || extra.contains("persistent"),
                        })
                    })
                    .collect()
            },
        }
    }

    fn primary_key(&self, table: &Name) -> Query<Vec<String>> {
        Query {
            sql: format!(
                "SELECT CAST(COLUMN_NAME AS CHAR) FROM information_schema.KEY_COLUMN_USAGE \
                 WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION"
            ),
            params: params(table),
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        }
    }

    fn references(&self, table: &Name, column: &str) -> Query<Vec<ForeignKey>> {
        let mut p = params(table);
        p.push(column.to_string());
        Query {
            sql: format!(
                "SELECT CAST(k.CONSTRAINT_NAME AS CHAR), CAST(k.TABLE_SCHEMA AS CHAR), CAST(k.TABLE_NAME AS CHAR), \
                 CAST(GROUP_CONCAT(k.COLUMN_NAME ORDER BY k.ORDINAL_POSITION SEPARATOR 0x1f) AS CHAR), \
                 CAST(k.REFERENCED_TABLE_SCHEMA AS CHAR), CAST(k.REFERENCED_TABLE_NAME AS CHAR), \
                 CAST(GROUP_CONCAT(k.REFERENCED_COLUMN_NAME ORDER BY k.ORDINAL_POSITION SEPARATOR 0x1f) AS CHAR), \
                 CAST(MAX(r.UPDATE_RULE) AS CHAR) \
                 FROM information_schema.KEY_COLUMN_USAGE k \
                 JOIN information_schema.REFERENTIAL_CONSTRAINTS r ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA \
                   AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME \
                 WHERE k.REFERENCED_TABLE_SCHEMA = {SCHEMA} AND k.REFERENCED_TABLE_NAME = ? \
                 GROUP BY k.CONSTRAINT_SCHEMA, k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME \
                 HAVING SUM(k.REFERENCED_COLUMN_NAME = ?) > 0 ORDER BY 2, 3, 1"
            ),
            params: p,
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        Ok(ForeignKey {
                            name: text(r, 0)?,
                            child: Name { schema: Some(text(r, 1)?), name: text(r, 2)? },
                            child_columns: text(r, 3)?.split(SEP).map(str::to_string).collect(),
                            parent: Name { schema: Some(text(r, 4)?), name: text(r, 5)? },
                            parent_columns: text(r, 6)?.split(SEP).map(str::to_string).collect(),
                            // Filled from the child's SHOW CREATE TABLE (complete_foreign_key).
                            definition: String::new(),
                            on_update: text(r, 7)?.to_uppercase(),
                            comment: None,
                        })
                    })
                    .collect()
            },
        }
    }

    fn complete_foreign_key(&self, fk: &mut ForeignKey, child_definition: &str) -> Result<(), Error> {
        fk.definition = constraint_clause(child_definition, &fk.name).ok_or_else(|| {
            Error::config(
                "foreign key",
                format!("{} of {}", fk.name, fk.child),
                "a CONSTRAINT line in SHOW CREATE TABLE",
            )
        })?;
        Ok(())
    }

    fn triggers(&self, table: &Name) -> Query<Vec<Trigger>> {
        Query {
            sql: format!(
                "SELECT CAST(EVENT_OBJECT_SCHEMA AS CHAR), CAST(EVENT_OBJECT_TABLE AS CHAR), CAST(TRIGGER_NAME AS CHAR), \
                 CAST(CONCAT(ACTION_TIMING, ' ', EVENT_MANIPULATION) AS CHAR), CAST(ACTION_STATEMENT AS CHAR) \
                 FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = {SCHEMA} AND EVENT_OBJECT_TABLE = ? ORDER BY 3"
            ),
            params: params(table),
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        Ok(Trigger {
                            table: Name { schema: Some(text(r, 0)?), name: text(r, 1)? },
                            name: text(r, 2)?,
                            events: text(r, 3)?,
                            definition: text(r, 4)?,
                        })
                    })
                    .collect()
            },
        }
    }

    fn checks(&self, table: &Name, column: &str) -> Query<Vec<Check>> {
        let mut p = params(table);
        p.push(format!("%{}%", Backend::MySql.quote(column).replace('%', "\\%").replace('_', "\\_")));
        Query {
            sql: format!(
                "SELECT CAST(CONSTRAINT_SCHEMA AS CHAR), CAST(TABLE_NAME AS CHAR), CAST(CONSTRAINT_NAME AS CHAR), CAST(CHECK_CLAUSE AS CHAR) \
                 FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = {SCHEMA} AND TABLE_NAME = ? AND CHECK_CLAUSE LIKE ? ORDER BY 3"
            ),
            params: p,
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        Ok(Check {
                            table: Name { schema: Some(text(r, 0)?), name: text(r, 1)? },
                            name: text(r, 2)?,
                            definition: text(r, 3)?,
                        })
                    })
                    .collect()
            },
        }
    }

    fn inheritors(&self, _table: &Name) -> Query<Vec<Name>> {
        Query { sql: "SELECT 1 FROM DUAL WHERE 1 = 0".into(), params: Vec::new(), parse: |_| Ok(Vec::new()) }
    }

    fn unique_alone(&self, table: &Name, column: &str) -> Query<bool> {
        let mut p = params(table);
        p.push(column.to_string());
        Query {
            sql: format!(
                "SELECT CAST(COUNT(*) > 0 AS CHAR) FROM (SELECT INDEX_NAME FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ? AND NON_UNIQUE = 0 GROUP BY INDEX_NAME \
                 HAVING COUNT(*) = 1 AND MAX(COLUMN_NAME) = ?) u"
            ),
            params: p,
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn has_index_on(&self, table: &Name, columns: &[String]) -> Query<bool> {
        let mut p = params(table);
        p.push(columns.join(&SEP.to_string()));
        Query {
            sql: format!(
                "SELECT CAST(COUNT(*) > 0 AS CHAR) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ? \
                 AND SEQ_IN_INDEX = 1 AND FIND_IN_SET(COLUMN_NAME, REPLACE(?, 0x1f, ','))"
            ),
            params: p,
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn definition(&self, table: &Name) -> Query<String> {
        Query {
            sql: format!("SHOW CREATE TABLE {}", table.quoted(Backend::MySql)),
            params: Vec::new(),
            parse: |rows| rows.first().map_or(Ok(String::new()), |r| text(r, 1)),
        }
    }

    fn index_size(&self, table: &Name) -> Query<Option<i64>> {
        Query {
            // InnoDB: the clustered index is the table (DATA_LENGTH), as of the statistics.
            sql: format!(
                "SELECT CAST(DATA_LENGTH AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ?"
            ),
            params: params(table),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok())),
        }
    }

    fn leaf_density_available(&self) -> Query<bool> {
        Query { sql: "SELECT '0'".into(), params: Vec::new(), parse: |_| Ok(false) }
    }

    fn leaf_density(&self, _table: &Name) -> Option<Query<Option<f64>>> {
        None
    }

    fn row_estimate(&self, table: &Name) -> Query<Option<i64>> {
        Query {
            sql: format!(
                "SELECT CAST(TABLE_ROWS AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ?"
            ),
            params: params(table),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok())),
        }
    }

    fn transactional_ddl(&self) -> bool {
        false
    }

    fn lock_waiters(&self) -> Option<Query<i64>> {
        Some(Query {
            sql: "SELECT CAST(COUNT(*) AS CHAR) FROM information_schema.INNODB_LOCK_WAITS".into(),
            params: Vec::new(),
            parse: |rows| {
                Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok()).unwrap_or(0))
            },
        })
    }

    fn views_reading(&self, table: &Name, column: &str) -> Option<Query<Vec<Name>>> {
        // MariaDB keeps a view's text with every column qualified: `db`.`table`.`column`.
        Some(Query {
            // The table's database too: a view in another database over a table of the same
            // name there reads none of this table's keys.
            sql: "SELECT CAST(CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) AS CHAR) FROM information_schema.VIEWS \
                  WHERE VIEW_DEFINITION LIKE CONCAT('%`', COALESCE(NULLIF(?, ''), DATABASE()), '`.`', ?, '`.`', ?, '`%') \
                  ORDER BY 1"
                .into(),
            params: vec![table.schema.clone().unwrap_or_default(), table.name.clone(), column.to_string()],
            parse: |rows| {
                rows.iter().map(|r| Ok(Name { schema: None, name: format!("view {}", text(r, 0)?) })).collect()
            },
        })
    }

    fn run_lock(&self, table: &Name) -> Option<Query<bool>> {
        // A lock name is at most 64 characters: the table's name goes in as its SHA-1.
        Some(Query {
            sql: format!("SELECT CAST(GET_LOCK(CONCAT('combkey_doctor:', SHA1(CONCAT({SCHEMA}, '.', ?))), 0) AS CHAR)"),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn read_only(&self) -> Option<Query<Option<String>>> {
        // `read_only` stops the users without SUPER (MySQL, MariaDB before 10.11) or READ_ONLY
        // ADMIN (MariaDB 10.11 and later).
        Some(Query {
            sql: "SELECT CASE WHEN @@global.read_only = 1 AND NOT EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES \
                  WHERE GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', \
                  SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AND PRIVILEGE_TYPE IN ('SUPER', 'READ_ONLY ADMIN')) \
                  THEN 'the server is read-only (read_only = ON: a replica, or a primary taken out of service) and this \
                  user may not write to it: connect to the primary' END"
                .into(),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn run_lock_holder(&self, table: &Name) -> Option<Query<Option<String>>> {
        Some(Query {
            sql: format!(
                "SELECT CONCAT('session ', ID, ' (', COMMAND, ' for ', TIME, ' s: ', \
                 LEFT(COALESCE(INFO, ''), 80), ')') FROM information_schema.PROCESSLIST \
                 WHERE ID = IS_USED_LOCK(CONCAT('combkey_doctor:', SHA1(CONCAT({SCHEMA}, '.', ?))))"
            ),
            params: params(table),
            parse: first_text,
        })
    }

    fn run_unlock(&self, table: &Name) -> Option<Query<bool>> {
        Some(Query {
            sql: format!(
                "SELECT CAST(RELEASE_LOCK(CONCAT('combkey_doctor:', SHA1(CONCAT({SCHEMA}, '.', ?)))) AS CHAR)"
            ),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn replica_status(&self) -> &'static str {
        "SHOW ALL SLAVES STATUS"
    }

    fn read_replica(&self, names: &[String], rows: &Rows) -> ReplicaLag {
        let col = |row: &Vec<Option<String>>, n: &str| {
            names.iter().position(|c| c == n).and_then(|i| row.get(i).cloned().flatten()).unwrap_or_default()
        };
        if rows.is_empty() {
            return ReplicaLag::NotAReplica;
        }
        // The connection furthest behind; one whose lag MariaDB gives as NULL (its SQL or I/O
        // thread stopped, or failed) makes the whole answer unknown, as pt-online-schema-change
        // reads it.
        let mut worst = 0.0f64;
        for row in rows {
            match col(row, "Seconds_Behind_Master").parse::<f64>() {
                Ok(s) => worst = worst.max(s),
                Err(_) => {
                    let name = col(row, "Connection_name");
                    let error = [col(row, "Last_SQL_Error"), col(row, "Last_IO_Error")]
                        .into_iter()
                        .filter(|e| !e.is_empty())
                        .collect::<Vec<_>>()
                        .join("; ");
                    return ReplicaLag::Unknown(format!(
                        "Seconds_Behind_Master is NULL{} (Slave_SQL_Running {}, Slave_IO_Running {}{})",
                        if name.is_empty() { String::new() } else { format!(" for connection '{name}'") },
                        col(row, "Slave_SQL_Running"),
                        col(row, "Slave_IO_Running"),
                        if error.is_empty() { String::new() } else { format!(": {error}") }
                    ));
                }
            }
        }
        ReplicaLag::Behind(worst)
    }

    fn rebuild_primary_key(&self, table: &Name, _index: Option<&str>) -> Vec<String> {
        vec![format!("ALTER TABLE {} FORCE, ALGORITHM=INPLACE, LOCK=NONE", table.quoted(Backend::MySql))]
    }

    fn session(&self, lock_timeout_ms: u64) -> Vec<String> {
        let secs = lock_timeout_ms.div_ceil(1000).max(1);
        vec![
            "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO'".into(),
            format!("SET SESSION lock_wait_timeout = {secs}"),
            format!("SET SESSION innodb_lock_wait_timeout = {secs}"),
        ]
    }

    fn oldest_transactions(&self) -> Option<Query<Option<String>>> {
        // InnoDB's open transactions (a plain read's among them once it read a row), oldest
        // first: who may hold a table's metadata lock (which the server shows only with a
        // plugin). No statement text (it may hold a literal password). One of no session
        // (thread 0) is a prepared XA transaction whose client went (or the server's own).
        Some(Query {
            sql: "SELECT GROUP_CONCAT(IF(t.trx_mysql_thread_id = 0, \
                  CONCAT('a transaction of no session (a prepared XA transaction: XA RECOVER lists it), open for ', \
                  TIMESTAMPDIFF(SECOND, t.trx_started, NOW()), ' s'), \
                  CONCAT('session ', t.trx_mysql_thread_id, ' (user ', COALESCE(p.USER, '?'), \
                  COALESCE(CONCAT(', from ', SUBSTRING_INDEX(p.HOST, ':', 1)), ''), ', ', COALESCE(p.COMMAND, '?'), \
                  ', its transaction open for ', TIMESTAMPDIFF(SECOND, t.trx_started, NOW()), ' s)')) \
                  ORDER BY t.trx_started SEPARATOR '; ') \
                  FROM (SELECT * FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id <> CONNECTION_ID() \
                  ORDER BY trx_started LIMIT 3) t \
                  LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id"
                .into(),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn ddl_no_wait(&self) -> Option<String> {
        Some("SET SESSION lock_wait_timeout = 0".into())
    }

    fn ddl_waiting(&self, statement: &str, ms: u64) -> String {
        // Only what takes a table's lock (a function's creation takes none). The statement's
        // lock wait (a second, the least MySQL knows) outlasts its time, which ends it first.
        let upper = statement.trim_start().to_ascii_uppercase();
        if upper.starts_with("CREATE TRIGGER") || upper.starts_with("ALTER TABLE") || upper.starts_with("DROP TRIGGER")
        {
            format!(
                "SET STATEMENT max_statement_time = {}.{:03}, lock_wait_timeout = 1 FOR {statement}",
                ms / 1000,
                ms % 1000
            )
        } else {
            statement.to_string()
        }
    }

    fn long_transactions(&self, ms: u64) -> Option<Query<i64>> {
        // trx_started is to the second: one more, so that a short transaction begun just
        // before a second's turn is not taken for a long one.
        Some(Query {
            sql: format!(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id <> CONNECTION_ID() \
                 AND trx_started <= NOW() - INTERVAL {} SECOND",
                ms.div_ceil(1000) + 1
            ),
            params: Vec::new(),
            parse: |rows| rows.first().map_or(Ok(0), |r| Ok(text(r, 0)?.parse().unwrap_or(1))),
        })
    }

    fn foreign_keys_to_others(&self, table: &Name) -> Option<Query<i64>> {
        Some(Query {
            sql: format!(
                "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = {SCHEMA} \
                 AND TABLE_NAME = ? AND NOT (UNIQUE_CONSTRAINT_SCHEMA = CONSTRAINT_SCHEMA AND REFERENCED_TABLE_NAME = TABLE_NAME)"
            ),
            params: vec![table.schema.clone().unwrap_or_default(), table.name.clone()],
            parse: |rows| rows.first().map_or(Ok(0), |r| Ok(text(r, 0)?.parse().unwrap_or(1))),
        })
    }

    fn begin_read_only(&self) -> Vec<String> {
        vec!["START TRANSACTION READ ONLY".into()]
    }

    fn fk_checks_off(&self) -> Option<(Vec<String>, Vec<String>)> {
        Some((vec!["SET SESSION foreign_key_checks = 0".into()], vec!["SET SESSION foreign_key_checks = 1".into()]))
    }

    fn begin(&self) -> String {
        "START TRANSACTION".into()
    }

    fn journal_table(&self, schema: Option<&str>) -> (String, String) {
        let name =
            Name { schema: schema.map(str::to_string), name: "combkey_doctor_journal".into() }.quoted(Backend::MySql);
        (
            format!(
                "CREATE TABLE IF NOT EXISTS {name} (target VARCHAR(700) NOT NULL PRIMARY KEY, state VARCHAR(16) NOT NULL, \
                 step INT NOT NULL, plan LONGTEXT NOT NULL, cursor_value TEXT, \
                 updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP) ENGINE=InnoDB"
            ),
            name,
        )
    }

    fn journal_exists(&self, schema: Option<&str>) -> Query<bool> {
        Query {
            sql: format!(
                "SELECT CAST(COUNT(*) AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {SCHEMA} \
                 AND TABLE_NAME = 'combkey_doctor_journal'"
            ),
            params: vec![schema.unwrap_or_default().to_string()],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn guards_up(&self, tag: &str) -> Option<Query<bool>> {
        Some(Query {
            sql: "SELECT CAST(COUNT(*) > 0 AS CHAR) FROM information_schema.TRIGGERS WHERE INSTR(TRIGGER_NAME, ?) = 1"
                .to_string(),
            params: vec![format!("combkey_guard_{tag}_")],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn select_keys(&self, table: &Name, column: &Column, _only: bool, filter: &str, also: &str) -> String {
        // HEX() of the bytes as stored; MariaDB's UUID type shows its text through CAST.
        let c = Backend::MySql.quote(&column.name);
        let value = if column.data_type == "uuid" {
            format!("CAST({c} AS CHAR), 'text'")
        } else {
            format!("HEX({c}), 'bytes'")
        };
        format!(
            "SELECT {value}{also} FROM {t} WHERE {c} IS NOT NULL{filter} ORDER BY {c}",
            t = table.quoted(Backend::MySql)
        )
    }

    fn add_foreign_key(&self, fk: &ForeignKey, child_definition: &str) -> Option<Vec<String>> {
        let table = fk.child.quoted(Backend::MySql);
        // MariaDB replaces the index it made for a foreign key by one named after the
        // constraint when the key is added back: the index is dropped and added again by its
        // own name in the same statement, so the table ends as it was.
        Some(vec![match fk_index(child_definition, &fk.child_columns) {
            Some((name, line)) => format!("ALTER TABLE {table} DROP INDEX {name}, ADD {line}, ADD {}", fk.definition),
            None => format!("ALTER TABLE {table} ADD {}", fk.definition),
        }])
    }

    fn drop_foreign_key(&self, fk: &ForeignKey) -> Option<String> {
        Some(format!(
            "ALTER TABLE {} DROP FOREIGN KEY {}",
            fk.child.quoted(Backend::MySql),
            Backend::MySql.quote(&fk.name)
        ))
    }

    fn parse_key(&self, row: &[Option<String>]) -> Result<Stored, Error> {
        let value = text(row, 0)?;
        Ok(if cell(row, 1)?.as_deref() == Some("text") { Stored::Text(value) } else { Stored::Bytes(unhex(&value)?) })
    }

    fn key_map_create(&self, map: &Name, final_type: &str, about: &str) -> Vec<String> {
        let ty = if final_type == "uuid" { "UUID" } else { "BINARY(16)" };
        vec![format!(
            "CREATE TABLE IF NOT EXISTS {} (old_key {ty} NOT NULL PRIMARY KEY, new_key {ty} NOT NULL, \
             UNIQUE KEY new_key (new_key)) ENGINE=InnoDB COMMENT={}",
            map.quoted(Backend::MySql),
            string_literal(&about.chars().take(2048).collect::<String>())
        )]
    }

    fn combkey_default(&self, table: &Name, column: &Column, final_type: &str) -> Option<Vec<String>> {
        // The functions in the table's database (a trigger's body resolves names there).
        let db = table.schema.as_deref().map(|s| format!("{}.", Backend::MySql.quote(s))).unwrap_or_default();
        let functions = Backend::MySql
            .install_functions()
            .replace("CREATE FUNCTION ", &format!("CREATE FUNCTION IF NOT EXISTS {db}"));
        let c = Backend::MySql.quote(&column.name);
        let t = table.quoted(Backend::MySql);
        let trigger = Name { schema: table.schema.clone(), name: format!("{}_combkey_{}", table.name, column.name) };
        // MySQL checks that a NOT NULL column without a default gets a value before a trigger
        // runs for INSERT ... SELECT: the column's default is the nil id instead, which no key
        // is, and the trigger replaces it (and NULL) with a new id.
        let nil = if final_type == "uuid" {
            "'00000000-0000-0000-0000-000000000000'"
        } else {
            "0x00000000000000000000000000000000"
        };
        Some(vec![
            functions,
            format!(
                "CREATE TRIGGER IF NOT EXISTS {} BEFORE INSERT ON {t} FOR EACH ROW SET NEW.{c} = \
                 IF(NEW.{c} IS NULL OR NEW.{c} = {nil}, {db}combkey_v7(), NEW.{c})",
                trigger.quoted(Backend::MySql),
            ),
            format!("ALTER TABLE {t} ALTER COLUMN {c} SET DEFAULT {nil}"),
        ])
    }

    fn combkey_functions(&self, table: &Name) -> Option<Query<Vec<(String, String)>>> {
        Some(Query {
            sql: format!(
                "SELECT CAST(ROUTINE_NAME AS CHAR), CAST(ROUTINE_DEFINITION AS CHAR) FROM information_schema.ROUTINES \
                 WHERE ROUTINE_SCHEMA = {SCHEMA} AND ROUTINE_NAME IN ('combkey_v7', 'combkey_v7_from', 'combkey_unix_ms', 'combkey_time') \
                 AND ROUTINE_TYPE = 'FUNCTION'"
            ),
            params: vec![table.schema.clone().unwrap_or_default()],
            parse: |rows| rows.iter().map(|r| Ok((text(r, 0)?, cell(r, 1)?.unwrap_or_default()))).collect(),
        })
    }

    fn statement_binlog(&self) -> Option<Query<bool>> {
        Some(Query {
            sql: "SELECT (@@log_bin = 1 AND @@binlog_format = 'STATEMENT')".into(),
            params: Vec::new(),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn key_map_insert(&self, map: &Name, rows: &[(Stored, Stored)]) -> String {
        // A row there already with the same pair stays; a clash of either key with another pair
        // (stale, or two old keys becoming one) sets old_key NULL: an error in strict mode, and
        // the run rolls back.
        format!(
            "INSERT INTO {} (old_key, new_key) VALUES {} ON DUPLICATE KEY UPDATE old_key = \
             IF(old_key = VALUES(old_key) AND new_key = VALUES(new_key), old_key, NULL)",
            map.quoted(Backend::MySql),
            super::model::value_pairs(self, rows)
        )
    }

    fn key_text(&self, expr: &str) -> String {
        format!("CAST(HEX({expr}) AS CHAR)")
    }

    fn table_about(&self, table: &Name) -> Query<Option<String>> {
        Query {
            sql: format!(
                "SELECT CAST(TABLE_COMMENT AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {SCHEMA} AND TABLE_NAME = ?"
            ),
            params: vec![table.schema.clone().unwrap_or_default(), table.name.clone()],
            parse: |rows| rows.first().map_or(Ok(None), |r| cell(r, 0)),
        }
    }

    fn schema_exists(&self, schema: Option<&str>) -> Query<bool> {
        Query {
            sql: format!("SELECT CAST(COUNT(*) AS CHAR) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = {SCHEMA}"),
            params: vec![schema.unwrap_or_default().to_string()],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn key_literal(&self, value: &Stored) -> String {
        match value {
            Stored::Bytes(b) if b.is_empty() => "''".into(),
            Stored::Bytes(b) => format!("0x{}", hex(b)),
            // Only canonical UUID text (MariaDB's UUID type) is written as text.
            Stored::Text(t) => string_literal(t),
        }
    }

    fn map_table(&self, column_type: &str) -> Vec<String> {
        let ty = if column_type == "uuid" { "UUID" } else { "VARBINARY(64)" };
        vec![
            format!(
                "CREATE TEMPORARY TABLE IF NOT EXISTS combkey_doctor_map (old {ty} NOT NULL PRIMARY KEY, new {ty} NOT NULL)"
            ),
            "DELETE FROM combkey_doctor_map".into(),
        ]
    }

    fn insert_map(&self, rows: &[(Stored, Stored)]) -> String {
        let values: Vec<String> =
            rows.iter().map(|(o, n)| format!("({}, {})", self.key_literal(o), self.key_literal(n))).collect();
        // A value read twice (a referencing column's value that is also a key) maps once.
        format!(
            "INSERT INTO combkey_doctor_map (old, new) VALUES {} ON DUPLICATE KEY UPDATE new = new",
            values.join(", ")
        )
    }

    fn rewrite_from_map(&self, targets: &[Rewrite], _only: bool) -> Vec<String> {
        rewrite_joins(targets, false)
    }

    fn rewrite_batch(
        &self,
        targets: &[Rewrite],
        _only: bool,
        rows: &[(Stored, Stored)],
        column_type: &str,
    ) -> Vec<String> {
        // A new mapping table per batch: InnoDB never frees the rows a `DELETE` removes from
        // a temporary table, so emptying one table batch after batch costs a little more each
        // time (measured: 1.5 ms at the first batch, 22 ms at the 350th) and its row estimate
        // grows without end. Dropping and creating it takes 0.2 ms. (Temporary tables are the
        // session's own, and neither statement ends the transaction.)
        let mut out = vec!["DROP TEMPORARY TABLE IF EXISTS combkey_doctor_map".to_string()];
        out.extend(self.map_table(column_type));
        out.push(self.insert_map(rows));
        out.extend(rewrite_joins(targets, true));
        out
    }

    fn retype(&self, table: &Name, column: &Column, table_definition: &str) -> Result<Retype, Error> {
        let clause = column_clause(table_definition, &column.name).ok_or_else(|| {
            Error::config("column", format!("{} of {table}", column.name), "a line of its own in SHOW CREATE TABLE")
        })?;
        if let Some(d) = &column.default {
            return Err(Error::refused(format!(
                "{table}.{} has DEFAULT {d}, a text default that a BINARY(16) column would not take: give --set-default \
                 to replace it with combkey's generator (a BEFORE INSERT trigger) in the same run, or drop it first",
                column.name
            )));
        }
        if column.generated {
            return Err(Error::config(
                "key column to convert",
                format!("{}.{} (generated)", table, column.name),
                "a stored column",
            ));
        }
        // The clause is `name type [attributes]`: keep the attributes (NULL/NOT NULL,
        // COMMENT, INVISIBLE) except the text ones that no binary type takes.
        let name = Backend::MySql.quote(&column.name);
        let rest = clause.strip_prefix(&name).unwrap_or(&clause).trim_start();
        let after_type = rest.split_once(' ').map_or("", |(_, r)| r);
        let mut attrs: Vec<&str> = Vec::new();
        let mut words = after_type.split(' ').peekable();
        while let Some(w) = words.next() {
            match w.to_ascii_uppercase().as_str() {
                // A default the caller drops (`--set-default` makes a new one): its expression
                // too, to the end of its parentheses.
                "DEFAULT" => {
                    let (mut opened, mut closed) = (0usize, 0usize);
                    for e in words.by_ref() {
                        opened += e.matches('(').count();
                        closed += e.matches(')').count();
                        if closed >= opened {
                            break;
                        }
                    }
                }
                "CHARACTER" | "CHARSET" | "COLLATE" => {
                    if w.eq_ignore_ascii_case("CHARACTER") {
                        words.next();
                    }
                    words.next();
                }
                _ => attrs.push(w),
            }
        }
        let attrs = attrs.join(" ");
        let alter = |ty: &str| {
            format!("ALTER TABLE {} MODIFY COLUMN {name} {ty} {attrs}", table.quoted(Backend::MySql))
                .trim_end()
                .to_string()
        };
        Ok(Retype {
            // Holds every UUID text form (at most 45 characters) and the 16 bytes alike.
            before: Some(alter("varbinary(64)")),
            between_type: Some("varbinary(64)".into()),
            after: Some(alter("binary(16)")),
            final_type: "binary(16)".into(),
        })
    }

    fn write_guard(&self, table: &Name, tag: &str) -> Option<(Vec<String>, Vec<String>)> {
        let t = table.quoted(Backend::MySql);
        let schema = table.schema.as_deref().map(|s| format!("{}.", Backend::MySql.quote(s))).unwrap_or_default();
        // What the application's write gets: refused, not queued (a trigger cannot wait for the
        // run without holding the table's metadata lock that the run's next ALTER needs), and
        // what to do (MySQL keeps the first 128 characters of a message).
        let message = string_literal(&format!(
            "combkey doctor is changing {}'s key type: write refused, retry after it ends",
            table.name.chars().take(40).collect::<String>()
        ));
        let mut create = Vec::new();
        let mut drop = Vec::new();
        for event in ["INSERT", "UPDATE", "DELETE"] {
            let name =
                format!("{schema}{}", Backend::MySql.quote(&format!("combkey_guard_{tag}_{}", event.to_lowercase())));
            create.push(format!(
                "CREATE TRIGGER IF NOT EXISTS {name} BEFORE {event} ON {t} FOR EACH ROW \
                 IF @combkey_doctor IS NULL THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = {message}; END IF"
            ));
            drop.push(format!("DROP TRIGGER IF EXISTS {name}"));
        }
        Some((create, drop))
    }

    fn not_sixteen_bytes(&self, table: &Name, column: &str) -> Option<String> {
        let c = Backend::MySql.quote(column);
        Some(format!(
            "SELECT count(*) FROM {} WHERE {c} IS NOT NULL AND length({c}) <> 16",
            table.quoted(Backend::MySql)
        ))
    }

    fn script_statement(&self, sql: &str) -> String {
        if sql.contains(';') { format!("DELIMITER //\n{sql} //\nDELIMITER ;\n") } else { format!("{sql};\n") }
    }

    fn pass_guard(&self) -> Vec<String> {
        vec!["SET @combkey_doctor = 1".into()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names() {
        assert_eq!(parse_name("orders").unwrap(), (None, "orders".into()));
        assert_eq!(parse_name("`shop`.`Or``ders`").unwrap(), (Some("shop".into()), "Or`ders".into()));
        assert_eq!(parse_name("`a.b`").unwrap(), (None, "a.b".into()));
        assert!(parse_name("a.b.c").is_err() && parse_name("").is_err() && parse_name("`open").is_err());
    }

    #[test]
    fn clauses_from_show_create_table() {
        let text = "CREATE TABLE `c` (\n  `id` int(11) NOT NULL,\n  `p_id` char(36) DEFAULT NULL COMMENT 'x',\n  \
                    PRIMARY KEY (`id`),\n  CONSTRAINT `fk_p` FOREIGN KEY (`p_id`) REFERENCES `other`.`p` (`id`) ON DELETE CASCADE\n) ENGINE=InnoDB";
        assert_eq!(
            constraint_clause(text, "fk_p").as_deref(),
            Some("CONSTRAINT `fk_p` FOREIGN KEY (`p_id`) REFERENCES `other`.`p` (`id`) ON DELETE CASCADE")
        );
        assert_eq!(column_clause(text, "p_id").as_deref(), Some("`p_id` char(36) DEFAULT NULL COMMENT 'x'"));
        assert_eq!(constraint_clause(text, "nope"), None);
    }
}
