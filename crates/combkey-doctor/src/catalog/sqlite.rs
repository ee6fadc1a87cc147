//! SQLite's catalog (`sqlite_master`, the `pragma_*` table-valued functions), read with every
//! value as text. Names compare without regard to ASCII case, as SQLite compares them.

use super::model::{
    Catalog, Check, Column, ForeignKey, Name, Query, ReplicaLag, Retype, Rewrite, Rows, Stored, Trigger, cell, flag,
    hex, string_literal, text, unhex,
};
use crate::error::Error;
use combkey::Backend;

/// Sqlite's catalog queries and statements.
pub(crate) struct Sqlite;

/// The schema part for SQL: `main` unless the name has one.
fn schema(t: &Name) -> String {
    t.schema.clone().unwrap_or_else(|| "main".into())
}

fn literal(s: &str) -> String {
    string_literal(s)
}

/// A user's table name: `t`, `schema.t`, with double quotes (or backticks, or brackets)
/// around either part.
fn parse_name(s: &str) -> Result<(Option<String>, String), Error> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut close: Option<char> = None;
    let mut chars = s.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match (close, c) {
            (Some(q), c) if c == q && q != ']' && chars.peek() == Some(&q) => {
                chars.next();
                cur.push(q);
            }
            (Some(q), c) if c == q => close = None,
            (None, '"') => close = Some('"'),
            (None, '`') => close = Some('`'),
            (None, '[') => close = Some(']'),
            (None, '.') => parts.push(core::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    parts.push(cur);
    match (close, parts.as_slice()) {
        (None, [t]) if !t.is_empty() => Ok((None, t.clone())),
        (None, [d, t]) if !d.is_empty() && !t.is_empty() => {
            Ok((if d.eq_ignore_ascii_case("main") { None } else { Some(d.clone()) }, t.clone()))
        }
        _ => Err(Error::config(
            "table name",
            format!("{s:?}"),
            "table or schema.table, parts optionally in double quotes",
        )),
    }
}

/// When and on what a trigger fires, from its `CREATE TRIGGER` text.
fn trigger_events(sql: &str) -> String {
    let upper = sql.to_ascii_uppercase();
    let head = upper.split(" ON ").next().unwrap_or_default();
    let mut out = Vec::new();
    for w in ["BEFORE", "AFTER", "INSTEAD OF", "INSERT", "UPDATE", "DELETE"] {
        if head.contains(w) {
            out.push(w);
        }
    }
    if !out.iter().any(|w| matches!(*w, "BEFORE" | "AFTER" | "INSTEAD OF")) {
        out.insert(0, "BEFORE");
    }
    out.join(" ")
}

/// The `CHECK (...)` clauses of a `CREATE TABLE` text that mention `column`.
fn checks_mentioning(sql: &str, column: &str) -> Vec<String> {
    let upper = sql.to_ascii_uppercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = upper[from..].find("CHECK") {
        let start = from + i;
        let Some(open) = sql[start..].find('(').map(|o| start + o) else { break };
        let mut depth = 0;
        let mut end = sql.len();
        for (k, c) in sql[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let clause = &sql[start..end];
        if clause.to_ascii_lowercase().contains(&column.to_ascii_lowercase()) {
            out.push(clause.to_string());
        }
        from = end.max(start + 5);
    }
    out
}

impl Catalog for Sqlite {
    fn replica_status(&self) -> &'static str {
        "SELECT 0"
    }

    fn read_replica(&self, _names: &[String], _rows: &Rows) -> ReplicaLag {
        ReplicaLag::NotAReplica
    }

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    fn retype_needed(&self, _column: &Column) -> bool {
        // SQLite's columns hold any type: text values become 16-byte blobs in place.
        false
    }

    fn same_id(&self, table: &Name, column: &Column, _only: bool) -> Option<String> {
        // A column holds any type here: 16-byte blobs as their hex, text normalized.
        let c = Backend::Sqlite.quote(&column.name);
        Some(format!(
            "SELECT k, count(*), substr(group_concat(v, ' and '), 1, 300) FROM (SELECT DISTINCT quote({c}) AS v, \
             CASE WHEN typeof({c}) = 'blob' AND length({c}) = 16 THEN lower(hex({c})) \
             ELSE replace(replace(replace(replace(lower(CAST({c} AS TEXT)), 'urn:uuid:', ''), '{{', ''), '}}', ''), '-', '') \
             END AS k FROM {t} WHERE {c} IS NOT NULL) d GROUP BY k HAVING count(*) > 1",
            t = table.quoted(Backend::Sqlite)
        ))
    }

    fn values_change_form(&self, column: &Column) -> bool {
        ["char", "text", "clob"].iter().any(|t| column.data_type.contains(t))
    }

    fn sample_filter(&self, p: f64) -> String {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let every = (1.0 / p).round().max(1.0) as u64;
        format!(" AND abs(random()) % {every} = 0")
    }

    fn resolve(&self, user_name: &str) -> Result<Query<Option<Name>>, Error> {
        let (schema, name) = parse_name(user_name)?;
        let s = schema.clone().unwrap_or_else(|| "main".into());
        Ok(Query {
            sql: format!(
                "SELECT {}, name FROM {}.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                schema.as_deref().map_or("NULL".into(), literal),
                Backend::Sqlite.quote(&s)
            ),
            params: vec![name],
            parse: |rows| {
                let Some(r) = rows.first() else { return Ok(None) };
                Ok(Some(Name { schema: cell(r, 0)?, name: text(r, 1)? }))
            },
        })
    }

    fn views_reading(&self, table: &Name, column: &str) -> Option<Query<Vec<Name>>> {
        // SQLite keeps each view's and trigger's text as written: those that name the table
        // and the column (a text search, so it may name more than read it).
        Some(Query {
            // And the indexes on an expression (pragma_index_xinfo's column -2) that names the
            // column: `lower(id)` computes something else once the value is 16 bytes.
            sql: "SELECT type || ' ' || name FROM sqlite_master WHERE type IN ('view', 'trigger') \
                  AND instr(lower(sql), lower(?)) > 0 AND instr(lower(sql), lower(?)) > 0 \
                  UNION ALL SELECT 'index ' || m.name FROM sqlite_master m WHERE m.type = 'index' AND m.tbl_name = ? \
                  AND m.sql IS NOT NULL AND instr(lower(m.sql), lower(?)) > 0 \
                  AND EXISTS (SELECT 1 FROM pragma_index_xinfo(m.name) x WHERE x.cid = -2) ORDER BY 1"
                .into(),
            params: vec![table.name.clone(), column.to_string(), table.name.clone(), column.to_string()],
            parse: |rows| rows.iter().map(|r| Ok(Name { schema: None, name: text(r, 0)? })).collect(),
        })
    }

    fn columns(&self, table: &Name) -> Query<Vec<Column>> {
        Query {
            sql: "SELECT name, lower(type), CAST(NOT \"notnull\" AS TEXT), dflt_value, CAST(hidden IN (2, 3) AS TEXT) \
                  FROM pragma_table_xinfo(?, ?) ORDER BY cid"
                .into(),
            params: vec![table.name.clone(), schema(table)],
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        Ok(Column {
                            name: text(r, 0)?,
                            data_type: cell(r, 1)?.unwrap_or_default(),
                            nullable: flag(r, 2)?,
                            default: cell(r, 3)?,
                            auto_update: false,
                            generated: flag(r, 4)?,
                        })
                    })
                    .collect()
            },
        }
    }

    fn primary_key(&self, table: &Name) -> Query<Vec<String>> {
        Query {
            sql: "SELECT name FROM pragma_table_info(?, ?) WHERE pk > 0 ORDER BY pk".into(),
            params: vec![table.name.clone(), schema(table)],
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        }
    }

    fn references(&self, table: &Name, column: &str) -> Query<Vec<ForeignKey>> {
        let s = schema(table);
        Query {
            sql: format!(
                "WITH fk AS (SELECT m.name AS child, p.id AS id, p.seq AS seq, p.\"from\" AS c, p.\"table\" AS parent, \
                   COALESCE(p.\"to\", (SELECT ti.name FROM pragma_table_info(p.\"table\", {sl}) ti WHERE ti.pk = p.seq + 1)) AS pc, \
                   p.on_update AS on_update, m.sql AS def \
                   FROM {sq}.sqlite_master m JOIN pragma_foreign_key_list(m.name, {sl}) p \
                   WHERE m.type = 'table' AND p.\"table\" = ?1 COLLATE NOCASE) \
                 SELECT child, CAST(id AS TEXT), c, pc, on_update, def, {schema_value} FROM fk \
                 WHERE EXISTS (SELECT 1 FROM fk k WHERE k.child = fk.child AND k.id = fk.id AND k.pc = ?2 COLLATE NOCASE) \
                 ORDER BY child, id, seq",
                sl = literal(&s),
                sq = Backend::Sqlite.quote(&s),
                schema_value = table.schema.as_deref().map_or("NULL".into(), literal),
            ),
            params: vec![table.name.clone(), column.to_string()],
            parse: |rows| {
                let mut out: Vec<(String, String, ForeignKey)> = Vec::new();
                for r in rows {
                    let (child, id) = (text(r, 0)?, text(r, 1)?);
                    let schema = cell(r, 6)?;
                    match out.last_mut() {
                        Some((c, i, fk)) if *c == child && *i == id => {
                            fk.child_columns.push(text(r, 2)?);
                            fk.parent_columns.push(cell(r, 3)?.unwrap_or_default());
                        }
                        _ => out.push((
                            child.clone(),
                            id.clone(),
                            ForeignKey {
                                name: format!("{child} foreign key {id}"),
                                child: Name { schema: schema.clone(), name: child.clone() },
                                child_columns: vec![text(r, 2)?],
                                parent: Name { schema, name: String::new() },
                                parent_columns: vec![cell(r, 3)?.unwrap_or_default()],
                                definition: cell(r, 5)?.unwrap_or_default(),
                                on_update: text(r, 4)?.to_uppercase(),
                                comment: None,
                            },
                        )),
                    }
                }
                Ok(out.into_iter().map(|(_, _, fk)| fk).collect())
            },
        }
    }

    fn triggers(&self, table: &Name) -> Query<Vec<Trigger>> {
        Query {
            sql: format!(
                "SELECT {schema_value}, tbl_name, name, sql FROM {sq}.sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE ORDER BY name",
                sq = Backend::Sqlite.quote(&schema(table)),
                schema_value = table.schema.as_deref().map_or("NULL".into(), literal),
            ),
            params: vec![table.name.clone()],
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        let sql = text(r, 3)?;
                        Ok(Trigger {
                            table: Name { schema: cell(r, 0)?, name: text(r, 1)? },
                            name: text(r, 2)?,
                            events: trigger_events(&sql),
                            definition: sql,
                        })
                    })
                    .collect()
            },
        }
    }

    fn checks(&self, table: &Name, column: &str) -> Query<Vec<Check>> {
        Query {
            sql: format!(
                "SELECT {schema_value}, name, sql, ? FROM {sq}.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                sq = Backend::Sqlite.quote(&schema(table)),
                schema_value = table.schema.as_deref().map_or("NULL".into(), literal),
            ),
            params: vec![column.to_string(), table.name.clone()],
            parse: |rows| {
                let mut out = Vec::new();
                for r in rows {
                    let (name, sql, column) = (text(r, 1)?, text(r, 2)?, text(r, 3)?);
                    for (n, clause) in checks_mentioning(&sql, &column).into_iter().enumerate() {
                        out.push(Check {
                            table: Name { schema: cell(r, 0)?, name: name.clone() },
                            name: format!("check {}", n + 1),
                            definition: clause,
                        });
                    }
                }
                Ok(out)
            },
        }
    }

    fn inheritors(&self, _table: &Name) -> Query<Vec<Name>> {
        Query { sql: "SELECT 1 WHERE 0".into(), params: Vec::new(), parse: |_| Ok(Vec::new()) }
    }

    fn unique_alone(&self, table: &Name, column: &str) -> Query<bool> {
        Query {
            sql: "SELECT CAST(count(*) > 0 AS TEXT) FROM pragma_index_list(?1, ?2) il WHERE il.\"unique\" = 1 AND il.partial = 0 \
                  AND (SELECT count(*) FROM pragma_index_info(il.name, ?2)) = 1 \
                  AND (SELECT lower(name) FROM pragma_index_info(il.name, ?2)) = lower(?3)"
                .into(),
            params: vec![table.name.clone(), schema(table), column.to_string()],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn has_index_on(&self, table: &Name, columns: &[String]) -> Query<bool> {
        let joined = format!("\u{1f}{}\u{1f}", columns.join("\u{1f}"));
        Query {
            sql: "SELECT CAST(count(*) > 0 AS TEXT) FROM pragma_index_list(?1, ?2) il JOIN pragma_index_info(il.name, ?2) ii \
                  WHERE ii.seqno = 0 AND instr(lower(?3), char(31) || lower(ii.name) || char(31)) > 0"
                .into(),
            params: vec![table.name.clone(), schema(table), joined],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn definition(&self, table: &Name) -> Query<String> {
        Query {
            sql: format!(
                "SELECT group_concat(sql, char(10)) FROM (SELECT sql FROM {sq}.sqlite_master WHERE tbl_name = ? COLLATE NOCASE \
                 AND sql IS NOT NULL ORDER BY type DESC, name)",
                sq = Backend::Sqlite.quote(&schema(table))
            ),
            params: vec![table.name.clone()],
            parse: |rows| rows.first().map_or(Ok(String::new()), |r| Ok(cell(r, 0)?.unwrap_or_default())),
        }
    }

    fn index_size(&self, _table: &Name) -> Query<Option<i64>> {
        Query { sql: "SELECT NULL".into(), params: Vec::new(), parse: |_| Ok(None) }
    }

    fn leaf_density_available(&self) -> Query<bool> {
        Query { sql: "SELECT '0'".into(), params: Vec::new(), parse: |_| Ok(false) }
    }

    fn leaf_density(&self, _table: &Name) -> Option<Query<Option<f64>>> {
        None
    }

    fn row_estimate(&self, table: &Name) -> Query<Option<i64>> {
        Query {
            sql: format!("SELECT CAST(count(*) AS TEXT) FROM {}", table.quoted(Backend::Sqlite)),
            params: Vec::new(),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok())),
        }
    }

    fn transactional_ddl(&self) -> bool {
        true
    }

    fn rebuild_primary_key(&self, table: &Name, _index: Option<&str>) -> Vec<String> {
        vec![format!("REINDEX {}", table.quoted(Backend::Sqlite))]
    }

    fn session(&self, lock_timeout_ms: u64) -> Vec<String> {
        vec![format!("PRAGMA busy_timeout = {lock_timeout_ms}")]
    }

    fn begin_read_only(&self) -> Vec<String> {
        vec!["PRAGMA query_only = ON".into(), "BEGIN".into()]
    }

    fn end_read_only(&self) -> Vec<String> {
        vec!["ROLLBACK".into(), "PRAGMA query_only = OFF".into()]
    }

    fn fk_checks_off(&self) -> Option<(Vec<String>, Vec<String>)> {
        Some((vec!["PRAGMA foreign_keys = OFF".into()], vec!["PRAGMA foreign_keys = ON".into()]))
    }

    /// `BEGIN EXCLUSIVE`: in WAL mode the write lock, as `IMMEDIATE` takes it (readers go on);
    /// in the default rollback-journal mode the whole file, which the run's changes need
    /// anyway once they outgrow its page cache and at its commit. Taken at once, an open read
    /// elsewhere (an `sqlite3` shell inside `BEGIN`) makes the run wait at most its lock
    /// timeout and stop before anything changed, instead of waiting that long on every page it
    /// spills and failing at the commit.
    fn begin(&self) -> String {
        "BEGIN EXCLUSIVE".into()
    }

    /// SQLite has no cursor that outlives a statement, and a second connection reading the
    /// table while this one writes stalls in the default rollback-journal mode: once this
    /// transaction's changes outgrow the page cache, writing them to the database file needs
    /// an exclusive lock, which waits (on the busy handler, each time a page is spilled) for
    /// the reader's shared lock. So the rows are copied once into a temporary table (in
    /// SQLite's temporary file, which takes no lock on the database) and taken from it a page
    /// at a time, on this connection; in either journal mode.
    fn cursor(&self, name: &str, select: &str) -> Option<(String, String, String)> {
        let n = format!("temp.{}", Backend::Sqlite.quote(name));
        Some((
            format!("CREATE TEMP TABLE {} AS {select}", Backend::Sqlite.quote(name)),
            format!(
                "DELETE FROM {n} WHERE rowid IN (SELECT rowid FROM {n} ORDER BY rowid LIMIT {}) RETURNING *",
                super::model::PAGE
            ),
            format!("DROP TABLE {n}"),
        ))
    }

    fn journal_table(&self, schema: Option<&str>) -> (String, String) {
        let name =
            Name { schema: schema.map(str::to_string), name: "combkey_doctor_journal".into() }.quoted(Backend::Sqlite);
        (
            format!(
                "CREATE TABLE IF NOT EXISTS {name} (target TEXT PRIMARY KEY, state TEXT NOT NULL, step INTEGER NOT NULL, \
                 plan TEXT NOT NULL, cursor_value TEXT, updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            ),
            name,
        )
    }

    fn journal_exists(&self, schema: Option<&str>) -> Query<bool> {
        let master = schema
            .map_or_else(|| "sqlite_master".to_string(), |s| format!("{}.sqlite_master", Backend::Sqlite.quote(s)));
        Query {
            sql: format!(
                "SELECT CAST(count(*) AS TEXT) FROM {master} WHERE type = 'table' AND name = 'combkey_doctor_journal'"
            ),
            params: Vec::new(),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn select_keys(&self, table: &Name, column: &Column, _only: bool, filter: &str, also: &str) -> String {
        let c = Backend::Sqlite.quote(&column.name);
        format!(
            "SELECT hex({c}), typeof({c}){also} FROM {t} WHERE {c} IS NOT NULL{filter} ORDER BY {c}",
            t = table.quoted(Backend::Sqlite)
        )
    }

    fn add_foreign_key(&self, _fk: &ForeignKey, _child_definition: &str) -> Option<Vec<String>> {
        None
    }

    fn drop_foreign_key(&self, _fk: &ForeignKey) -> Option<String> {
        None
    }

    fn parse_key(&self, row: &[Option<String>]) -> Result<Stored, Error> {
        let bytes = unhex(&text(row, 0)?)?;
        Ok(match cell(row, 1)?.as_deref() {
            Some("text") => {
                Stored::Text(String::from_utf8(bytes).map_err(|e| {
                    Error::config("SQLite text value", format!("{} bytes", e.as_bytes().len()), "UTF-8")
                })?)
            }
            _ => Stored::Bytes(bytes),
        })
    }

    fn key_map_create(&self, map: &Name, _final_type: &str, about: &str) -> Vec<String> {
        // SQLite keeps the statement's text, this comment included: what the table says it is.
        vec![format!(
            "CREATE TABLE IF NOT EXISTS {} (old_key BLOB NOT NULL PRIMARY KEY, new_key BLOB NOT NULL UNIQUE /* {} */)",
            map.quoted(Backend::Sqlite),
            about.replace("*/", "* /")
        )]
    }

    fn key_text(&self, expr: &str) -> String {
        format!("hex({expr})")
    }

    fn table_about(&self, table: &Name) -> Query<Option<String>> {
        Query {
            sql: format!(
                "SELECT sql FROM {}.sqlite_master WHERE type = 'table' AND name = ?",
                Backend::Sqlite.quote(&schema(table))
            ),
            params: vec![table.name.clone()],
            parse: |rows| rows.first().map_or(Ok(None), |r| cell(r, 0)),
        }
    }

    fn schema_exists(&self, schema: Option<&str>) -> Query<bool> {
        Query {
            sql: "SELECT CAST(COUNT(*) AS TEXT) FROM pragma_database_list WHERE name = ?".into(),
            params: vec![schema.unwrap_or("main").to_string()],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn key_map_insert(&self, map: &Name, rows: &[(Stored, Stored)]) -> String {
        // A row there already with the same pair stays; one with another new key (stale) is a
        // NOT NULL violation, and the run rolls back.
        format!(
            "INSERT INTO {} (old_key, new_key) VALUES {} ON CONFLICT (old_key) DO UPDATE SET new_key = \
             CASE WHEN new_key = excluded.new_key THEN new_key END",
            map.quoted(Backend::Sqlite),
            super::model::value_pairs(self, rows)
        )
    }

    fn key_literal(&self, value: &Stored) -> String {
        match value {
            Stored::Bytes(b) => format!("X'{}'", hex(b)),
            Stored::Text(t) => string_literal(t),
        }
    }

    fn map_table(&self, _column_type: &str) -> Vec<String> {
        vec![
            "CREATE TEMPORARY TABLE IF NOT EXISTS combkey_doctor_map (old PRIMARY KEY, new NOT NULL)".into(),
            "DELETE FROM combkey_doctor_map".into(),
        ]
    }

    fn insert_map(&self, rows: &[(Stored, Stored)]) -> String {
        let values: Vec<String> =
            rows.iter().map(|(o, n)| format!("({}, {})", self.key_literal(o), self.key_literal(n))).collect();
        // A value read twice (a referencing column's value that is also a key) maps once.
        format!("INSERT INTO combkey_doctor_map (old, new) VALUES {} ON CONFLICT (old) DO NOTHING", values.join(", "))
    }

    fn rewrite_from_map(&self, targets: &[Rewrite], _only: bool) -> Vec<String> {
        let q = |n: &str| Backend::Sqlite.quote(n);
        let mut out = Vec::new();
        for t in targets {
            let table = t.table.quoted(Backend::Sqlite);
            for c in &t.columns {
                out.push(format!(
                    "UPDATE {table} SET {c} = (SELECT new FROM combkey_doctor_map WHERE old = {table}.{c}) \
                     WHERE {c} IN (SELECT old FROM combkey_doctor_map)",
                    c = q(c)
                ));
            }
        }
        out
    }

    fn retype(&self, _table: &Name, column: &Column, _table_definition: &str) -> Result<Retype, Error> {
        // SQLite's columns hold any type: text values are rewritten as 16-byte blobs in place.
        Ok(Retype { before: None, between_type: None, after: None, final_type: column.data_type.clone() })
    }

    fn write_guard(&self, _table: &Name, _tag: &str) -> Option<(Vec<String>, Vec<String>)> {
        None
    }

    fn not_sixteen_bytes(&self, table: &Name, column: &str) -> Option<String> {
        let c = Backend::Sqlite.quote(column);
        Some(format!(
            "SELECT count(*) FROM {} WHERE {c} IS NOT NULL AND (typeof({c}) <> 'blob' OR length({c}) <> 16)",
            table.quoted(Backend::Sqlite)
        ))
    }

    fn foreign_key_check(&self) -> Option<String> {
        Some("PRAGMA foreign_key_check".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names() {
        assert_eq!(parse_name("Orders").unwrap(), (None, "Orders".into()));
        assert_eq!(parse_name("main.\"we\"\"ird\"").unwrap(), (None, "we\"ird".into()));
        assert_eq!(parse_name("aux.t").unwrap(), (Some("aux".into()), "t".into()));
        assert!(parse_name("a.b.c").is_err());
    }

    #[test]
    fn triggers_and_checks_from_their_text() {
        assert_eq!(trigger_events("CREATE TRIGGER t1 AFTER UPDATE OF id ON p BEGIN SELECT 1; END"), "AFTER UPDATE");
        assert_eq!(trigger_events("create trigger t2 delete on p begin select 1; end"), "BEFORE DELETE");
        let sql = "CREATE TABLE p (id TEXT PRIMARY KEY CHECK (length(id) = 36), n INT CHECK (n > 0))";
        assert_eq!(checks_mentioning(sql, "id"), ["CHECK (length(id) = 36)"]);
    }
}
