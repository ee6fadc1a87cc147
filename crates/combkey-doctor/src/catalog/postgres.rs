//! PostgreSQL's catalog (`pg_class`, `pg_attribute`, `pg_constraint`, `pg_trigger`,
//! `pg_inherits`, `pg_index`), read with every value cast to text.

use super::model::{
    Catalog, Check, Column, ForeignKey, Name, Query, ReplicaLag, Retype, Rewrite, Rows, Stored, Trigger, cell,
    first_text, flag, hex, string_literal, text, unhex,
};
use crate::error::Error;
use combkey::Backend;

/// Postgres's catalog queries and statements.
pub(crate) struct Postgres;

/// The table's oid, from its schema and name as stored.
const OID: &str = "(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2)";

fn params(t: &Name) -> Vec<String> {
    vec![t.schema.clone().unwrap_or_else(|| "public".into()), t.name.clone()]
}

fn names(rows: &[Vec<Option<String>>]) -> Result<Vec<Name>, Error> {
    rows.iter().map(|r| Ok(Name { schema: Some(text(r, 0)?), name: text(r, 1)? })).collect()
}

/// `{a,b}` (a PostgreSQL text array) as its elements; names with commas or quotes come quoted.
fn array(s: &str) -> Vec<String> {
    let inner = s.trim().trim_start_matches('{').trim_end_matches('}');
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ',' if !quoted => out.push(core::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !inner.is_empty() {
        out.push(cur);
    }
    out
}

impl Catalog for Postgres {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn retype_needed(&self, column: &Column) -> bool {
        column.data_type != "uuid"
    }

    fn same_id(&self, table: &Name, column: &Column, only: bool) -> Option<String> {
        if column.data_type == "uuid" || column.data_type == "bytea" {
            return None;
        }
        let c = Backend::Postgres.quote(&column.name);
        let only = if only { "ONLY " } else { "" };
        Some(format!(
            "SELECT k, count(*), left(string_agg(quote_literal(v), ' and ' ORDER BY v), 300) FROM (SELECT DISTINCT x.{c}::text AS v, \
             replace(replace(replace(regexp_replace(lower(x.{c}::text), '^urn:uuid:', ''), '{{', ''), '}}', ''), '-', '') AS k \
             FROM {only}{t} x WHERE x.{c} IS NOT NULL) d GROUP BY k HAVING count(*) > 1",
            t = table.quoted(Backend::Postgres)
        ))
    }

    fn resolve(&self, user_name: &str) -> Result<Query<Option<Name>>, Error> {
        // One or two parts (`table`, `schema.table`), each optionally in double quotes: three
        // parts (`db.schema.table`, or a column after the table) or an open quote would reach
        // the server as an error of its own, shown with this query's text.
        let mut parts: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        let mut chars = user_name.trim().chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    cur.push('"');
                }
                '"' => quoted = !quoted,
                '.' if !quoted => parts.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        parts.push(cur);
        if quoted || parts.len() > 2 || parts.iter().any(String::is_empty) {
            return Err(Error::config(
                "table name",
                format!("{user_name:?}"),
                "table or schema.table, parts optionally in double quotes (--column names the column)",
            ));
        }
        Ok(Query {
            sql:
                "SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                  WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p')"
                    .into(),
            params: vec![user_name.to_string()],
            parse: |rows| Ok(names(rows)?.into_iter().next()),
        })
    }

    fn columns(&self, table: &Name) -> Query<Vec<Column>> {
        Query {
            sql: format!(
                "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), (NOT a.attnotnull)::text, \
                 pg_get_expr(d.adbin, d.adrelid), (a.attgenerated <> '')::text \
                 FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                 WHERE a.attrelid = {OID} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
            ),
            params: params(table),
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        Ok(Column {
                            name: text(r, 0)?,
                            data_type: text(r, 1)?.to_lowercase(),
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
            sql: format!(
                "SELECT a.attname::text FROM pg_constraint k CROSS JOIN LATERAL unnest(k.conkey) WITH ORDINALITY AS u(attnum, i) \
                 JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum \
                 WHERE k.conrelid = {OID} AND k.contype = 'p' ORDER BY u.i"
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
                "SELECT k.conname::text, cn.nspname::text, cc.relname::text, \
                 (SELECT array_agg(a.attname::text ORDER BY u.i) FROM unnest(k.conkey) WITH ORDINALITY u(n, i) \
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n)::text, \
                 pn.nspname::text, pc.relname::text, \
                 (SELECT array_agg(a.attname::text ORDER BY u.i) FROM unnest(k.confkey) WITH ORDINALITY u(n, i) \
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n)::text, \
                 pg_get_constraintdef(k.oid), k.confupdtype::text, obj_description(k.oid, 'pg_constraint') \
                 FROM pg_constraint k \
                 JOIN pg_class cc ON cc.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = cc.relnamespace \
                 JOIN pg_class pc ON pc.oid = k.confrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace \
                 WHERE k.contype = 'f' AND k.confrelid = {OID} \
                 AND EXISTS (SELECT 1 FROM unnest(k.confkey) n JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = n \
                             WHERE a.attname = $3) \
                 ORDER BY 2, 3, 1"
            ),
            params: p,
            parse: |rows| {
                rows.iter()
                    .map(|r| {
                        let action = match text(r, 8)?.as_str() {
                            "a" => "NO ACTION",
                            "r" => "RESTRICT",
                            "c" => "CASCADE",
                            "n" => "SET NULL",
                            "d" => "SET DEFAULT",
                            _ => "NO ACTION",
                        };
                        Ok(ForeignKey {
                            name: text(r, 0)?,
                            child: Name { schema: Some(text(r, 1)?), name: text(r, 2)? },
                            child_columns: array(&text(r, 3)?),
                            parent: Name { schema: Some(text(r, 4)?), name: text(r, 5)? },
                            parent_columns: array(&text(r, 6)?),
                            definition: text(r, 7)?,
                            on_update: action.into(),
                            comment: cell(r, 9)?,
                        })
                    })
                    .collect()
            },
        }
    }

    fn triggers(&self, table: &Name) -> Query<Vec<Trigger>> {
        Query {
            sql: format!(
                "SELECT n.nspname::text, c.relname::text, t.tgname::text, \
                 concat_ws(' ', CASE WHEN t.tgtype & 2 <> 0 THEN 'BEFORE' WHEN t.tgtype & 64 <> 0 THEN 'INSTEAD OF' ELSE 'AFTER' END, \
                   CASE WHEN t.tgtype & 4 <> 0 THEN 'INSERT' END, CASE WHEN t.tgtype & 16 <> 0 THEN 'UPDATE' END, \
                   CASE WHEN t.tgtype & 8 <> 0 THEN 'DELETE' END, CASE WHEN t.tgtype & 32 <> 0 THEN 'TRUNCATE' END), \
                 pg_get_triggerdef(t.oid) \
                 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE t.tgrelid = {OID} AND NOT t.tgisinternal AND t.tgenabled <> 'D' ORDER BY 3"
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
        p.push(column.to_string());
        Query {
            sql: format!(
                "SELECT n.nspname::text, c.relname::text, k.conname::text, pg_get_constraintdef(k.oid) \
                 FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE k.conrelid = {OID} AND k.contype = 'c' \
                 AND EXISTS (SELECT 1 FROM unnest(k.conkey) x JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = x \
                             WHERE a.attname = $3) ORDER BY 3"
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

    fn inheritors(&self, table: &Name) -> Query<Vec<Name>> {
        Query {
            sql: format!(
                "SELECT n.nspname::text, c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.inhparent = {OID} ORDER BY 1, 2"
            ),
            params: params(table),
            parse: names,
        }
    }

    fn row_security(&self, table: &Name) -> Option<Query<Option<String>>> {
        Some(Query {
            sql: format!(
                "SELECT CASE WHEN c.relforcerowsecurity THEN 'FORCE ROW LEVEL SECURITY applies its policies to every role \
                 but superusers and BYPASSRLS roles, its owner too' ELSE 'row-level security is on and ' || current_user || \
                 ' is not its owner' END FROM pg_class c, pg_roles r WHERE c.oid = {OID} AND r.rolname = current_user \
                 AND c.relrowsecurity AND NOT r.rolsuper AND NOT r.rolbypassrls \
                 AND (c.relforcerowsecurity OR NOT pg_has_role(current_user, c.relowner, 'USAGE'))"
            ),
            params: params(table),
            parse: |rows| rows.first().map(|r| text(r, 0)).transpose(),
        })
    }

    fn partition_of(&self, table: &Name) -> Option<Query<Option<Name>>> {
        Some(Query {
            sql: format!(
                "SELECT n.nspname::text, p.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                 JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace \
                 WHERE i.inhrelid = {OID} AND c.relispartition"
            ),
            params: params(table),
            parse: |rows| Ok(names(rows)?.into_iter().next()),
        })
    }

    fn partitioned(&self, table: &Name) -> Option<Query<bool>> {
        Some(Query {
            sql: format!("SELECT (relkind = 'p')::text FROM pg_class WHERE oid = {OID}"),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn publications(&self, table: &Name) -> Option<Query<Vec<String>>> {
        Some(Query {
            // A partitioned table is published through its root or through its partitions
            // (`publish_via_partition_root`): either counts.
            sql: "SELECT DISTINCT pt.pubname::text FROM pg_publication_tables pt JOIN pg_namespace n ON \
                  n.nspname = pt.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename \
                  WHERE c.oid = format('%I.%I', $1::text, $2::text)::regclass \
                  OR c.oid IN (SELECT relid FROM pg_partition_tree(format('%I.%I', $1::text, $2::text)::regclass)) \
                  ORDER BY 1"
                .into(),
            params: params(table),
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        })
    }

    fn subscriptions(&self, table: &Name) -> Option<Query<Vec<String>>> {
        Some(Query {
            sql: format!(
                "SELECT s.subname::text FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid \
                 WHERE r.srrelid = {OID} ORDER BY 1"
            ),
            params: params(table),
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        })
    }

    fn unique_alone(&self, table: &Name, column: &str) -> Query<bool> {
        let mut p = params(table);
        p.push(column.to_string());
        Query {
            sql: format!(
                "SELECT (count(*) > 0)::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] \
                 WHERE i.indrelid = {OID} AND a.attname = $3 AND i.indisunique AND i.indisvalid AND i.indnkeyatts = 1 \
                 AND i.indpred IS NULL AND i.indexprs IS NULL"
            ),
            params: p,
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn has_index_on(&self, table: &Name, columns: &[String]) -> Query<bool> {
        let mut p = params(table);
        p.push(format!(
            "{{{}}}",
            columns
                .iter()
                .map(|c| format!("\"{}\"", c.replace('\\', "\\\\").replace('"', "\\\"")))
                .collect::<Vec<_>>()
                .join(",")
        ));
        Query {
            sql: format!(
                "SELECT (count(*) > 0)::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] \
                 WHERE i.indrelid = {OID} AND a.attname = ANY($3::text[]) AND i.indisvalid AND {NOT_OWN_INDEX}"
            ),
            params: p,
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn definition(&self, table: &Name) -> Query<String> {
        Query {
            sql: format!(
                "SELECT concat_ws(E'\\n', \
                   (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) \
                      || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END \
                      || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), E'\\n' ORDER BY a.attnum) \
                    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                    WHERE a.attrelid = {OID} AND a.attnum > 0 AND NOT a.attisdropped), \
                   (SELECT string_agg('CONSTRAINT ' || conname || ' ' || pg_get_constraintdef(oid), E'\\n' ORDER BY conname) \
                    FROM pg_constraint WHERE conrelid = {OID}), \
                   (SELECT string_agg(pg_get_indexdef(indexrelid), E'\\n' ORDER BY indexrelid::regclass::text) \
                    FROM pg_index WHERE indrelid = {OID} AND {NOT_OWN_INDEX}), \
                   (SELECT string_agg(pg_get_triggerdef(oid), E'\\n' ORDER BY tgname) \
                    FROM pg_trigger WHERE tgrelid = {OID} AND NOT tgisinternal), \
                   (SELECT 'COMMENT ' || description FROM pg_description WHERE objoid = {OID} AND objsubid = 0))"
            ),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(String::new()), |r| Ok(cell(r, 0)?.unwrap_or_default())),
        }
    }

    fn index_size(&self, table: &Name) -> Query<Option<i64>> {
        Query {
            sql: format!(
                "SELECT pg_relation_size(i.indexrelid)::text FROM pg_index i WHERE i.indrelid = {OID} AND i.indisprimary"
            ),
            params: params(table),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok())),
        }
    }

    fn leaf_density_available(&self) -> Query<bool> {
        Query {
            sql: "SELECT (to_regproc('pgstatindex') IS NOT NULL)::text".into(),
            params: Vec::new(),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn leaf_density(&self, table: &Name) -> Option<Query<Option<f64>>> {
        Some(Query {
            sql: format!(
                "SELECT s.avg_leaf_density::text FROM pg_index i CROSS JOIN LATERAL pgstatindex(i.indexrelid::regclass) s \
                 WHERE i.indrelid = {OID} AND i.indisprimary"
            ),
            params: params(table),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok())),
        })
    }

    fn row_estimate(&self, table: &Name) -> Query<Option<i64>> {
        Query {
            sql: format!("SELECT reltuples::bigint::text FROM pg_class WHERE oid = {OID}"),
            params: params(table),
            parse: |rows| {
                Ok(rows
                    .first()
                    .and_then(|r| cell(r, 0).ok().flatten())
                    .and_then(|n| n.parse().ok())
                    .filter(|n: &i64| *n >= 0))
            },
        }
    }

    fn transactional_ddl(&self) -> bool {
        true
    }

    fn lock_waiters(&self) -> Option<Query<i64>> {
        Some(Query {
            sql: "SELECT count(*)::text FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()".into(),
            params: Vec::new(),
            parse: |rows| {
                Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok()).unwrap_or(0))
            },
        })
    }

    fn rules(&self, table: &Name) -> Option<Query<Vec<String>>> {
        Some(Query {
            sql: format!(
                "SELECT rulename::text || ' (ON ' || CASE ev_type WHEN '2' THEN 'UPDATE' WHEN '3' THEN 'INSERT' \
                 ELSE 'DELETE' END || ')' FROM pg_rewrite WHERE ev_class = {OID} AND ev_type <> '1' ORDER BY 1"
            ),
            params: params(table),
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        })
    }

    fn views_reading(&self, table: &Name, column: &str) -> Option<Query<Vec<Name>>> {
        let mut params = params(table);
        params.push(column.to_string());
        // Views and rules (pg_rewrite), row security policies, triggers (WHEN, UPDATE OF) and
        // expression or partial indexes: what pg_depend records as reading the column, each of
        // which keeps ALTER COLUMN ... TYPE from running (or fails it).
        Some(Query {
            sql: format!(
                "WITH col AS (SELECT attnum FROM pg_attribute WHERE attrelid = {OID} AND attname = $3), \
                 dep AS (SELECT classid, objid FROM pg_depend WHERE refclassid = 'pg_class'::regclass \
                   AND refobjid = {OID} AND refobjsubid = (SELECT attnum FROM col)) \
                 SELECT DISTINCT CASE WHEN v.relkind <> 'm' THEN 'view' WHEN v.relispopulated THEN 'materialized view' \
                   ELSE 'unpopulated materialized view' END, \
                   quote_ident(vn.nspname) || '.' || quote_ident(v.relname) FROM dep d JOIN pg_rewrite r ON r.oid = d.objid \
                   JOIN pg_class v ON v.oid = r.ev_class JOIN pg_namespace vn ON vn.oid = v.relnamespace \
                   WHERE d.classid = 'pg_rewrite'::regclass AND v.oid <> {OID} \
                 UNION SELECT 'policy', p.polname || ' on ' || p.polrelid::regclass::text FROM dep d \
                   JOIN pg_policy p ON p.oid = d.objid WHERE d.classid = 'pg_policy'::regclass \
                 UNION SELECT 'trigger', t.tgname || ' on ' || t.tgrelid::regclass::text FROM dep d \
                   JOIN pg_trigger t ON t.oid = d.objid WHERE d.classid = 'pg_trigger'::regclass \
                 UNION SELECT 'index', i.indexrelid::regclass::text FROM dep d JOIN pg_index i ON i.indexrelid = d.objid \
                   WHERE d.classid = 'pg_class'::regclass AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL) \
                 ORDER BY 1, 2"
            ),
            params,
            parse: |rows| {
                rows.iter()
                    .map(|r| Ok(Name { schema: None, name: format!("{} {}", text(r, 0)?, text(r, 1)?) }))
                    .collect()
            },
        })
    }

    fn run_lock(&self, table: &Name) -> Option<Query<bool>> {
        Some(Query {
            sql: "SELECT pg_try_advisory_lock(hashtextextended('combkey_doctor:' || $1 || '.' || $2, 0))::text".into(),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn read_only(&self) -> Option<Query<Option<String>>> {
        Some(Query {
            sql: "SELECT CASE WHEN pg_is_in_recovery() THEN 'the server is a standby (in recovery), which takes no \
                  writes: connect to its primary' \
                  WHEN current_setting('transaction_read_only') = 'on' THEN 'this session starts read-only \
                  (default_transaction_read_only = on, set for the role, the database or the server): connect as a \
                  role that may write (doctor does not turn off a read-only default someone set on purpose)' END"
                .into(),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn run_lock_holder(&self, table: &Name) -> Option<Query<Option<String>>> {
        // The advisory lock of `run_lock` (a bigint key: its high and low halves in pg_locks).
        Some(Query {
            sql: "WITH k AS (SELECT hashtextextended('combkey_doctor:' || $1 || '.' || $2, 0) AS key) \
                  SELECT 'session ' || a.pid::text || ' (' || coalesce(a.application_name, '') || ', ' || \
                  coalesce(a.state, '?') || ' for ' || \
                  round(extract(epoch FROM now() - coalesce(a.query_start, a.backend_start)))::text || ' s: ' || \
                  left(regexp_replace(coalesce(a.query, ''), '\\s+', ' ', 'g'), 80) || ')' \
                  FROM k, pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 \
                  AND l.classid = ((k.key >> 32) & 4294967295)::oid AND l.objid = (k.key & 4294967295)::oid LIMIT 1"
                .into(),
            params: params(table),
            parse: first_text,
        })
    }

    fn run_unlock(&self, table: &Name) -> Option<Query<bool>> {
        Some(Query {
            sql: "SELECT pg_advisory_unlock(hashtextextended('combkey_doctor:' || $1 || '.' || $2, 0))::text".into(),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn replica_status(&self) -> &'static str {
        "SELECT pg_is_in_recovery()::text AS replica, \
         COALESCE((SELECT status FROM pg_stat_wal_receiver), 'no WAL receiver') AS receiver, \
         (CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 \
               ELSE EXTRACT(epoch FROM now() - pg_last_xact_replay_timestamp()) END)::text AS lag"
    }

    fn read_replica(&self, _names: &[String], rows: &Rows) -> ReplicaLag {
        let Some(row) = rows.first() else { return ReplicaLag::NotAReplica };
        if !flag(row, 0).unwrap_or(false) {
            return ReplicaLag::NotAReplica;
        }
        let receiver = cell(row, 1).ok().flatten().unwrap_or_default();
        // Caught up with what it received says nothing when it receives nothing.
        if receiver != "streaming" {
            return ReplicaLag::Unknown(format!("its WAL receiver is not streaming ({receiver})"));
        }
        match cell(row, 2).ok().flatten().and_then(|l| l.parse::<f64>().ok()) {
            Some(l) => ReplicaLag::Behind(l.max(0.0)),
            None => ReplicaLag::Unknown("it has replayed no transaction yet".into()),
        }
    }

    fn unread_replication(&self) -> Option<Query<Vec<String>>> {
        // A slot nobody uses, and a sender that is not streaming (a standby or subscriber
        // catching up, or restarting after an error: its replay_lag is NULL then, which says
        // nothing of how far behind it is).
        Some(Query {
            sql:
                "SELECT format('replication slot %s (%s%s) is not in use: its standby or subscriber is not connected, \
                  and it holds WAL back since %s', slot_name, slot_type, \
                  CASE WHEN database IS NOT NULL THEN ', database ' || database ELSE '' END, restart_lsn) \
                  FROM pg_replication_slots WHERE NOT active \
                  UNION ALL SELECT format('%s (%s) is %s, not streaming: how far behind it is cannot be read', \
                  application_name, COALESCE(host(client_addr), 'local'), state) \
                  FROM pg_stat_replication WHERE state <> 'streaming' \
                  UNION ALL SELECT format('%s (%s) has replayed up to %s of the %s sent to it, and reports no lag: \
                  how far behind it is cannot be read', application_name, COALESCE(host(client_addr), 'local'), \
                  replay_lsn, sent_lsn) \
                  FROM pg_stat_replication WHERE state = 'streaming' AND replay_lag IS NULL AND replay_lsn < sent_lsn \
                  ORDER BY 1"
                    .into(),
            params: Vec::new(),
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        })
    }

    fn replication_lag(&self) -> Option<Query<f64>> {
        Some(Query {
            // replay_lag is the last one a standby or subscriber reported: one that has WAL to
            // replay and has not replied since (its apply worker waits for a lock, say) counts
            // as behind by the time since its last reply.
            sql: "SELECT COALESCE(max(GREATEST(COALESCE(EXTRACT(epoch FROM replay_lag), 0), \
                  CASE WHEN replay_lsn < sent_lsn THEN EXTRACT(epoch FROM now() - reply_time) ELSE 0 END)), 0)::text \
                  FROM pg_stat_replication"
                .into(),
            params: Vec::new(),
            parse: |rows| {
                Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok()).unwrap_or(0.0))
            },
        })
    }

    fn primary_key_index(&self, table: &Name) -> Option<Query<Option<String>>> {
        Some(Query {
            sql: format!(
                "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.indrelid = {OID} AND i.indisprimary"
            ),
            params: params(table),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten())),
        })
    }

    fn rebuild_primary_key(&self, _table: &Name, index: Option<&str>) -> Vec<String> {
        index.map(|i| vec![format!("REINDEX INDEX CONCURRENTLY {i}")]).unwrap_or_default()
    }

    fn session(&self, lock_timeout_ms: u64) -> Vec<String> {
        // 0 would turn PostgreSQL's timeout off (wait for ever): at least 1 ms.
        vec![format!("SET lock_timeout = '{}ms'", lock_timeout_ms.max(1))]
    }

    fn begin_read_only(&self) -> Vec<String> {
        // One snapshot for the audit's passes over the keys.
        vec!["START TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY".into()]
    }

    fn lock_against_writes(&self, table: &Name, only: bool) -> Option<String> {
        // Conflicts with every writer (ROW EXCLUSIVE) and with itself; readers, and children
        // that take a key share lock on their parent, go on.
        let only = if only { "ONLY " } else { "" };
        Some(format!("LOCK TABLE {only}{} IN SHARE ROW EXCLUSIVE MODE", table.quoted(Backend::Postgres)))
    }

    fn lock_tables(&self, tables: &[Name], only: bool, exclusive: bool) -> Option<String> {
        // SHARE ROW EXCLUSIVE conflicts with every writer (ROW EXCLUSIVE) and with itself;
        // readers, and a child's check of its parent (ROW SHARE), go on.
        let only = if only { "ONLY " } else { "" };
        let names: Vec<String> = tables.iter().map(|t| t.quoted(Backend::Postgres)).collect();
        let mode = if exclusive { "ACCESS EXCLUSIVE" } else { "SHARE ROW EXCLUSIVE" };
        Some(format!("LOCK TABLE {only}{} IN {mode} MODE", names.join(", ")))
    }

    fn lock_attempt(&self, ms: u64) -> Option<String> {
        Some(format!("SET LOCAL lock_timeout = '{}ms'", ms.max(1)))
    }

    fn cursor(&self, name: &str, select: &str) -> Option<(String, String, String)> {
        let n = Backend::Postgres.quote(name);
        Some((
            format!("DECLARE {n} NO SCROLL CURSOR FOR {select}"),
            format!("FETCH {} FROM {n}", super::model::PAGE),
            format!("CLOSE {n}"),
        ))
    }

    fn deadlock_timeout(&self) -> Option<Query<Option<i64>>> {
        Some(Query {
            sql: "SELECT round(extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000)::bigint::text"
                .into(),
            params: Vec::new(),
            parse: |rows| Ok(rows.first().and_then(|r| cell(r, 0).ok().flatten()).and_then(|n| n.parse().ok())),
        })
    }

    fn begin_batch(&self) -> Vec<String> {
        // Index probes for the batch's keys, never a scan of the whole table: the cost model
        // (random_page_cost 4) prices a thousand probes above a sequential scan of a table of
        // a hundred thousand rows, which on a live table takes ten times as long and grows
        // with the table.
        vec![
            "BEGIN".into(),
            "SET LOCAL enable_seqscan = off".into(),
            "SET LOCAL enable_hashjoin = off".into(),
            "SET LOCAL enable_mergejoin = off".into(),
        ]
    }

    fn fk_checks_off(&self) -> Option<(Vec<String>, Vec<String>)> {
        None
    }

    fn param(&self, n: usize) -> String {
        format!("${n}")
    }

    fn key_map_create(&self, map: &Name, _final_type: &str, about: &str) -> Vec<String> {
        let m = map.quoted(Backend::Postgres);
        vec![
            format!("CREATE TABLE IF NOT EXISTS {m} (old_key uuid PRIMARY KEY, new_key uuid NOT NULL UNIQUE)"),
            format!("COMMENT ON TABLE {m} IS {}", string_literal(about)),
        ]
    }

    fn key_map_insert(&self, map: &Name, rows: &[(Stored, Stored)]) -> String {
        // A row there already with the same pair stays; one with another new key (stale) is a
        // NOT NULL violation, and the run rolls back.
        format!(
            "INSERT INTO {m} AS m (old_key, new_key) VALUES {} ON CONFLICT (old_key) DO UPDATE SET new_key = \
             CASE WHEN m.new_key = EXCLUDED.new_key THEN m.new_key END",
            super::model::value_pairs(self, rows),
            m = map.quoted(Backend::Postgres),
        )
    }

    fn key_text(&self, expr: &str) -> String {
        format!("{expr}::text")
    }

    fn table_about(&self, table: &Name) -> Query<Option<String>> {
        Query {
            sql: format!("SELECT obj_description({OID}, 'pg_class')"),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(None), |r| cell(r, 0)),
        }
    }

    fn schema_exists(&self, schema: Option<&str>) -> Query<bool> {
        Query {
            sql: "SELECT (to_regnamespace(coalesce(nullif($1, ''), current_schema())) IS NOT NULL)::text".into(),
            params: vec![schema.map(|s| Backend::Postgres.quote(s)).unwrap_or_default()],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn combkey_functions(&self, _table: &Name) -> Option<Query<Vec<(String, String)>>> {
        // Where an unqualified call resolves: the first schema of the search path that has it.
        Some(Query {
            // The others where `CREATE OR REPLACE` would make (or replace) them: the current schema.
            sql: "(SELECT p.proname::text, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                  WHERE p.proname = 'combkey_v7' AND p.pronargs = 0 AND n.nspname = ANY (current_schemas(true)) \
                  ORDER BY array_position(current_schemas(true), n.nspname) LIMIT 1) UNION ALL \
                  SELECT p.proname::text, p.prosrc FROM pg_proc p WHERE p.proname IN ('combkey_unix_ms', 'combkey_time') \
                  AND p.pronamespace = to_regnamespace(current_schema())"
                .into(),
            params: Vec::new(),
            parse: |rows| rows.iter().map(|r| Ok((text(r, 0)?, text(r, 1)?))).collect(),
        })
    }

    fn combkey_default(&self, table: &Name, column: &Column, _final_type: &str) -> Option<Vec<String>> {
        Some(vec![
            Backend::Postgres.install_functions().to_string(),
            format!(
                "ALTER TABLE {} ALTER COLUMN {} SET DEFAULT combkey_v7()",
                table.quoted(Backend::Postgres),
                Backend::Postgres.quote(&column.name)
            ),
        ])
    }

    fn publications_of_new_tables(&self, schema: Option<&str>) -> Option<Query<Vec<String>>> {
        Some(Query {
            sql: "SELECT p.pubname::text || ' (FOR ALL TABLES)' FROM pg_publication p WHERE p.puballtables \
                  UNION ALL SELECT p.pubname::text || ' (FOR TABLES IN SCHEMA ' || n.nspname || ')' \
                  FROM pg_publication p JOIN pg_publication_namespace pn ON pn.pnpubid = p.oid \
                  JOIN pg_namespace n ON n.oid = pn.pnnspid WHERE n.nspname = coalesce(nullif($1, ''), current_schema()) ORDER BY 1"
                .into(),
            params: vec![schema.unwrap_or_default().to_string()],
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        })
    }

    fn journal_table(&self, schema: Option<&str>) -> (String, String) {
        let name = Name { schema: schema.map(str::to_string), name: "combkey_doctor_journal".into() }
            .quoted(Backend::Postgres);
        (
            format!(
                // UNLOGGED: never published, never streamed (see the trait's docs).
                "CREATE UNLOGGED TABLE IF NOT EXISTS {name} (target text PRIMARY KEY, state text NOT NULL, step integer NOT NULL, \
                 plan text NOT NULL, cursor_value text, updated_at timestamptz NOT NULL DEFAULT now())"
            ),
            name,
        )
    }

    fn journal_exists(&self, schema: Option<&str>) -> Query<bool> {
        Query {
            sql: "SELECT (to_regclass($1) IS NOT NULL)::text".into(),
            params: vec![self.journal_table(schema).1],
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        }
    }

    fn missing_replica_identity(&self, table: &Name) -> Option<Query<bool>> {
        Some(Query {
            sql: format!(
                "SELECT (c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS \
                 (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)))::text \
                 FROM pg_class c WHERE c.oid = {OID}"
            ),
            params: params(table),
            parse: |rows| rows.first().map_or(Ok(false), |r| flag(r, 0)),
        })
    }

    fn select_keys(&self, table: &Name, column: &Column, only: bool, filter: &str, also: &str) -> String {
        // `ORDER BY k.c`, not `c`: the output column is named `c` too, and ordering by it would
        // sort the text instead of walking the index.
        let c = Backend::Postgres.quote(&column.name);
        let only = if only { "ONLY " } else { "" };
        format!(
            "SELECT k.{c}::text{also} FROM {only}{t} k WHERE {c} IS NOT NULL{filter} ORDER BY k.{c}",
            t = table.quoted(Backend::Postgres)
        )
    }

    fn sweep_keys(&self, table: &Name, column: &Column, only: bool, also: &str) -> String {
        let c = Backend::Postgres.quote(&column.name);
        let only = if only { "ONLY " } else { "" };
        format!("SELECT k.{c}::text{also} FROM {only}{t} k WHERE {c} IS NOT NULL", t = table.quoted(Backend::Postgres))
    }

    fn add_foreign_key(&self, fk: &ForeignKey, _child_definition: &str) -> Option<Vec<String>> {
        let mut out = vec![format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {}",
            fk.child.quoted(Backend::Postgres),
            Backend::Postgres.quote(&fk.name),
            fk.definition
        )];
        if let Some(comment) = &fk.comment {
            out.push(format!(
                "COMMENT ON CONSTRAINT {} ON {} IS {}",
                Backend::Postgres.quote(&fk.name),
                fk.child.quoted(Backend::Postgres),
                string_literal(comment)
            ));
        }
        Some(out)
    }

    fn drop_foreign_key(&self, fk: &ForeignKey) -> Option<String> {
        Some(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            fk.child.quoted(Backend::Postgres),
            Backend::Postgres.quote(&fk.name)
        ))
    }

    fn parse_key(&self, row: &[Option<String>]) -> Result<Stored, Error> {
        let t = text(row, 0)?;
        // A bytea column's text is `\x` and its bytes in hex.
        match t.strip_prefix("\\x").map(unhex) {
            Some(Ok(bytes)) => Ok(Stored::Bytes(bytes)),
            _ => Ok(Stored::Text(t)),
        }
    }

    fn key_literal(&self, value: &Stored) -> String {
        match value {
            Stored::Text(t) => string_literal(t),
            Stored::Bytes(b) => format!("'\\x{}'::bytea", hex(b)),
        }
    }

    fn map_table(&self, column_type: &str) -> Vec<String> {
        let ty = if column_type == "uuid" { "uuid" } else { "text" };
        vec![
            format!(
                "CREATE TEMPORARY TABLE IF NOT EXISTS combkey_doctor_map (old {ty} PRIMARY KEY, new {ty} NOT NULL)"
            ),
            "TRUNCATE combkey_doctor_map".into(),
        ]
    }

    fn insert_map(&self, rows: &[(Stored, Stored)]) -> String {
        let values: Vec<String> =
            rows.iter().map(|(o, n)| format!("({}, {})", self.key_literal(o), self.key_literal(n))).collect();
        // A value read twice (a referencing column's value that is also a key) maps once.
        format!("INSERT INTO combkey_doctor_map (old, new) VALUES {} ON CONFLICT (old) DO NOTHING", values.join(", "))
    }

    fn rewrite_from_map(&self, targets: &[Rewrite], only: bool) -> Vec<String> {
        vec![rewrite(targets, only, None)]
    }

    fn rewrite_batch(
        &self,
        targets: &[Rewrite],
        only: bool,
        rows: &[(Stored, Stored)],
        column_type: &str,
    ) -> Vec<String> {
        // The first row's casts type the list's columns as the key column's.
        let ty = match column_type {
            "uuid" => "uuid",
            "bytea" => "bytea",
            _ => "text",
        };
        let values: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(i, (o, n))| {
                let (o, n) = (self.key_literal(o), self.key_literal(n));
                if i == 0 && ty != "bytea" { format!("({o}::{ty}, {n}::{ty})") } else { format!("({o}, {n})") }
            })
            .collect();
        vec![rewrite(targets, only, Some(&values.join(", ")))]
    }

    fn retype(&self, table: &Name, column: &Column, _table_definition: &str) -> Result<Retype, Error> {
        let c = Backend::Postgres.quote(&column.name);
        if column.data_type == "bytea" {
            return Err(Error::refused(format!(
                "{table}.{} is bytea: change it (and every column referencing it) to uuid first, in one transaction: \
                 ALTER TABLE {} ALTER COLUMN {c} TYPE uuid USING encode({c}, 'hex')::uuid; then run this again",
                column.name,
                table.quoted(Backend::Postgres),
            )));
        }
        if let Some(d) = &column.default {
            return Err(Error::refused(format!(
                "{table}.{} has DEFAULT {d}, a text default that the uuid column would not take: give --set-default to \
                 replace it with combkey's generator in the same run, or drop it first",
                column.name
            )));
        }
        Ok(Retype {
            before: None,
            between_type: None,
            after: Some(format!(
                "ALTER TABLE {} ALTER COLUMN {c} TYPE uuid USING {c}::uuid",
                table.quoted(Backend::Postgres)
            )),
            final_type: "uuid".into(),
        })
    }

    fn write_guard(&self, _table: &Name, _tag: &str) -> Option<(Vec<String>, Vec<String>)> {
        None
    }

    fn own_indexes(&self, table: &Name) -> Option<Query<Vec<String>>> {
        Some(Query {
            sql: format!(
                "SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 WHERE i.indrelid = {OID} AND NOT ({NOT_OWN_INDEX}) ORDER BY c.relname"
            ),
            params: params(table),
            parse: |rows| rows.iter().map(|r| text(r, 0)).collect(),
        })
    }

    fn oldest_transactions(&self) -> Option<Query<Option<String>>> {
        Some(Query {
            sql: "SELECT string_agg('session ' || pid::text || ' (' || coalesce(nullif(application_name, ''), usename::text, '?') \
                  || ', ' || coalesce(state, '?') || ', its transaction open for ' || \
                  round(extract(epoch FROM clock_timestamp() - xact_start))::text || ' s)', '; ' ORDER BY xact_start) \
                  FROM (SELECT * FROM pg_stat_activity WHERE xact_start IS NOT NULL AND pid <> pg_backend_pid() \
                  AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL) ORDER BY xact_start LIMIT 3) a"
                .into(),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn yield_autovacuum(&self, tables: &[Name]) -> Option<Query<Option<String>>> {
        if tables.is_empty() {
            return None;
        }
        // Superusers only (PostgreSQL lets no one else signal an autovacuum worker before 18),
        // and never one that prevents wraparound (PostgreSQL does not cancel those either).
        // The text an autovacuum worker shows is its own ("autovacuum: VACUUM public.t"), never
        // the application's.
        Some(Query {
            sql: format!(
                "WITH {} SELECT string_agg(DISTINCT a.query, '; ') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                 WHERE l.locktype = 'relation' AND l.granted \
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND l.relation IN (SELECT r FROM touched) AND a.backend_type = 'autovacuum worker' \
                 AND a.query LIKE 'autovacuum:%' AND a.query NOT LIKE '%(to prevent wraparound)%' \
                 AND CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) \
                 THEN pg_cancel_backend(a.pid) ELSE false END",
                touched(tables)
            ),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn end_holders(&self, tables: &[Name], older_than_ms: u64, end: bool) -> Option<Query<Option<String>>> {
        if tables.is_empty() {
            return None;
        }
        let signal = if end { "pg_terminate_backend" } else { "pg_cancel_backend" };
        Some(Query {
            sql: format!(
                "WITH {} SELECT string_agg('session ' || pid::text || ' (' || coalesce(nullif(app, ''), '?') || ', user ' \
                 || coalesce(usename, '?') || ')', '; ' ORDER BY pid) FROM (\
                 SELECT DISTINCT a.pid, a.application_name AS app, a.usename::text AS usename FROM pg_locks l \
                 JOIN pg_stat_activity a ON a.pid = l.pid \
                 WHERE l.locktype = 'relation' AND l.granted \
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND l.relation IN (SELECT r FROM touched) AND l.pid <> pg_backend_pid() \
                 AND a.backend_type = 'client backend' \
                 AND a.xact_start < clock_timestamp() - interval '{older_than_ms} milliseconds') h \
                 WHERE {signal}(pid)",
                touched(tables)
            ),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn lock_holders(&self, tables: &[Name], older_than_ms: u64) -> Option<Query<Option<String>>> {
        if tables.is_empty() {
            return None;
        }
        // Granted locks only (a session that waits holds nothing yet); no query text (it may
        // hold a literal password), only who, from where, for how long, and on what.
        Some(Query {
            sql: format!(
                "WITH {} \
                 SELECT string_agg(who, '; ' ORDER BY since) FROM (\
                 SELECT min(coalesce(a.xact_start, p.prepared)) AS since, \
                 CASE WHEN min(a.pid) IS NULL THEN 'the prepared transaction ' || coalesce(quote_literal(min(p.gid)), '?') \
                 || ' (COMMIT PREPARED or ROLLBACK PREPARED ends it)' \
                 ELSE 'session ' || min(a.pid)::text || ' (' || coalesce(nullif(min(a.application_name), ''), '?') \
                 || ', user ' || coalesce(min(a.usename::text), '?') \
                 || coalesce(', from ' || host(min(a.client_addr)), '') || ', ' || coalesce(min(a.backend_type), '?') \
                 || ', ' || coalesce(min(a.state), '?') \
                 || ', its transaction open for ' || round(extract(epoch FROM clock_timestamp() - min(a.xact_start)))::text \
                 || ' s)' END || ' on ' || string_agg(DISTINCT l.relation::regclass::text, ', ') AS who \
                 FROM pg_locks l \
                 LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
                 LEFT JOIN pg_prepared_xacts p ON l.pid IS NULL AND l.virtualtransaction = '-1/' || p.transaction::text \
                 WHERE l.locktype = 'relation' AND l.granted \
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND l.relation IN (SELECT r FROM touched) \
                 AND l.pid IS DISTINCT FROM pg_backend_pid() \
                 AND coalesce(a.xact_start, p.prepared, '-infinity') < clock_timestamp() - interval '{older_than_ms} milliseconds' \
                 GROUP BY l.virtualtransaction) h",
                touched(tables)
            ),
            params: Vec::new(),
            parse: first_text,
        })
    }

    fn drop_own_index(&self, table: &Name, name: &str) -> Option<String> {
        let schema = table.schema.as_deref().map(|s| format!("{}.", Backend::Postgres.quote(s))).unwrap_or_default();
        Some(format!("DROP INDEX CONCURRENTLY IF EXISTS {schema}{}", Backend::Postgres.quote(name)))
    }

    fn concurrent_index(&self, table: &Name, columns: &[String], name: &str) -> Option<(Vec<String>, String)> {
        let cols: Vec<String> = columns.iter().map(|c| Backend::Postgres.quote(c)).collect();
        let drop = self.drop_own_index(table, name)?;
        Some((
            vec![
                // An earlier run's, stopped half-way (left INVALID by a kill or a lock timeout).
                drop.clone(),
                format!(
                    "CREATE INDEX CONCURRENTLY {} ON {} ({})",
                    Backend::Postgres.quote(name),
                    table.quoted(Backend::Postgres),
                    cols.join(", ")
                ),
            ],
            drop,
        ))
    }
}

/// An index of `pg_index` that is not one a run builds for its foreign key checks
/// (`combkey_doctor_fk_...`, dropped after the commit; one a killed run left is built again and
/// dropped by the next): neither counted as the table's index nor compared as its definition.
const NOT_OWN_INDEX: &str =
    "(SELECT relname FROM pg_class WHERE oid = indexrelid) NOT LIKE 'combkey\\_doctor\\_fk\\_%'";

/// One statement that rewrites every target from the mapping `combkey_doctor_map (old, new)`:
/// the session's temporary table, or (`values`) a `VALUES` list of that name.
fn rewrite(targets: &[Rewrite], only: bool, values: Option<&str>) -> String {
    let q = |n: &str| Backend::Postgres.quote(n);
    let only = if only { "ONLY " } else { "" };
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = values {
        parts.push(format!("combkey_doctor_map (old, new) AS (VALUES {v})"));
    }
    for (i, t) in targets.iter().enumerate() {
        let table = t.table.quoted(Backend::Postgres);
        if let [c] = t.columns.as_slice() {
            // One column: a join, which the planner can drive from the mapping through the
            // column's index.
            parts.push(format!(
                "u{i} AS (UPDATE {only}{table} t SET {c} = m.new FROM combkey_doctor_map m WHERE t.{c} = m.old RETURNING 1)",
                c = q(c)
            ));
            continue;
        }
        // Several columns of one table (a row is updated once per statement): each from the
        // map where it is there.
        let sets: Vec<String> = t
            .columns
            .iter()
            .map(|c| {
                format!("{c} = COALESCE((SELECT m.new FROM combkey_doctor_map m WHERE m.old = t.{c}), t.{c})", c = q(c))
            })
            .collect();
        // `= ANY` of the batch's old keys, computed once (an initplan): each column's index
        // finds its rows, where `IN (SELECT ...) OR IN (SELECT ...)`, no semi-join under an `OR`,
        // read the whole table for every batch (a self-referencing table: 6 to 15 times the
        // time of one without the reference).
        let wheres: Vec<String> =
            t.columns.iter().map(|c| format!("t.{} = ANY (ARRAY(SELECT old FROM combkey_doctor_map))", q(c))).collect();
        parts.push(format!(
            "u{i} AS (UPDATE {only}{table} t SET {} WHERE {} RETURNING 1)",
            sets.join(", "),
            wheres.join(" OR ")
        ));
    }
    let counts: Vec<String> = (0..targets.len()).map(|i| format!("(SELECT count(*) FROM u{i})")).collect();
    format!("WITH {} SELECT {}", parts.join(", "), counts.join(" + "))
}

/// The common table expressions `t` (`tables`' oids) and `touched`: the tables, and what a
/// swap's statements on them lock too (the tables their foreign keys reference, and their
/// sequences).
fn touched(tables: &[Name]) -> String {
    let oids: Vec<String> =
        tables.iter().map(|t| format!("to_regclass({})", string_literal(&t.quoted(Backend::Postgres)))).collect();
    format!(
        "t AS (SELECT r FROM unnest(ARRAY[{}]::oid[]) r WHERE r IS NOT NULL), \
         touched AS (SELECT r FROM t UNION SELECT confrelid FROM pg_constraint WHERE contype = 'f' AND conrelid \
         IN (SELECT r FROM t) UNION SELECT d.objid FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND \
         s.relkind = 'S' WHERE d.classid = 'pg_class'::regclass AND d.refobjid IN (SELECT r FROM t))",
        oids.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name of three parts, an open quote or an empty part is a usage error here, not the
    /// server's error with the query's text (a break-test gave `shop.orders.id`).
    #[test]
    fn a_table_name_of_more_parts_is_refused_before_the_server() {
        for bad in ["shop.orders.id", "db.shop.orders", "\"open", "a..b", ".t", "t."] {
            let e = Postgres.resolve(bad).err().unwrap_or_else(|| panic!("{bad} was taken"));
            assert_eq!(e.kind(), crate::error::ErrorKind::Usage, "{bad}");
            assert!(e.to_string().contains("table or schema.table"), "{bad}: {e}");
        }
        for good in ["orders", "shop.orders", "\"Odd.Name\"", "\"we\"\"ird\".t", " orders "] {
            assert!(Postgres.resolve(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn text_arrays() {
        assert_eq!(super::array("{a,b}"), ["a", "b"]);
        assert_eq!(super::array("{\"we,ird\",\"q\\\"uote\",x}"), ["we,ird", "q\"uote", "x"]);
        assert!(super::array("{}").is_empty());
    }
}
