//! Copy and swap on PostgreSQL, in pg_repack's way: a trigger on each table logs the primary
//! key of every row the application changes; the rows are copied in one snapshot (each row
//! version once); the indexes are built on the copies afterwards; the logs are applied in
//! rounds; and one transaction takes the tables' `ACCESS EXCLUSIVE` locks in attempts (pg_repack's
//! `lock_exclusive`), applies the logs' last rows, gives the copies the names, indexes,
//! constraints, sequences and triggers of the tables, checks that every definition is as it was
//! but the key columns' type, and commits. Killed before that commit, the application never saw
//! a copy; killed after, the next run finishes what follows (foreign keys validated, the key
//! map filled, the work tables dropped).

use std::time::{Duration, Instant};

use combkey::Backend;

use super::shared::{Pace, Pacing, Swap, SwapTable, Tally, become_one, hold, phase, stop_after, unchanged};
use crate::catalog::{Name, Stored, string_literal};
use crate::db::Db;
use crate::error::{Error, ErrorKind};
use crate::keys::Source;
use crate::methods::shared::{
    Journal, LONG_HOLD_MS, OnlineOutcome, comparable, lock_in_attempts, lock_waiting_out_holders,
};
use crate::options::{Online, Progress};
use crate::plan::Plan;

const B: Backend = Backend::Postgres;

fn q(s: &str) -> String {
    B.quote(s)
}

/// `schema.name` as a text literal for `::regclass` (quoted parts).
fn regclass(n: &Name) -> String {
    string_literal(&n.quoted(B))
}

/// The name of the trigger that logs a `TRUNCATE` of a table during the run.
const TRUNCATE_TRIGGER: &str = "combkey_doctor_truncate";

/// The capture trigger's name, and its function's on `t`.
fn trigger_name(t: &SwapTable) -> (String, Name) {
    ("combkey_doctor_capture".to_string(), super::shared::derived(B, &t.name, "_", "_capture"))
}

/// Why the plan cannot run by copy and swap here.
pub(super) async fn refusal(db: &mut Db, plan: &Plan) -> Result<Option<String>, Error> {
    if let Some(why) = super::shared::plan_refusal(plan) {
        return Ok(Some(why));
    }
    let version: i64 = db.count("SELECT current_setting('server_version_num')::int").await?;
    if version < 140_000 {
        return Ok(Some(format!(
            "PostgreSQL {} reads a range of a table's pages only by scanning all of it (TID range scans came in 14)",
            version / 10_000
        )));
    }
    let swap = match Swap::of(db, plan).await {
        Ok(s) => s,
        Err(e) if e.kind() == ErrorKind::Refused => return Ok(Some(e.to_string())),
        Err(e) => return Err(e),
    };
    let why = dependants(db, &swap).await?;
    if why.is_empty() { Ok(None) } else { Ok(Some(why.join("; "))) }
}

/// What about `swap`'s tables copy and swap cannot carry to the copies (each as "table: why"):
/// their partitioning and inheritance, row security, publications, exclusion constraints,
/// column privileges, the objects that depend on them (views, rules, policies), and foreign
/// keys of other tables that reference them. Read before the run, and again under the swap's
/// lock: one made during the run (a view, a new table's foreign key, a policy, a publication)
/// would otherwise stay with the old table, the application's writes through it failing.
async fn dependants(db: &mut Db, swap: &Swap) -> Result<Vec<String>, Error> {
    let version: i64 = db.count("SELECT current_setting('server_version_num')::int").await?;
    let ours: Vec<String> = swap.tables.iter().map(|t| format!("{}::regclass", regclass(&t.name))).collect();
    let in_set = format!("ARRAY[{}]::regclass[]", ours.join(", "));
    let mut why = Vec::new();
    for t in &swap.tables {
        let oid = format!("{}::regclass", regclass(&t.name));
        let schema_pubs = if version >= 150_000 {
            format!(
                "UNION ALL SELECT 'publication ' || p.pubname || ' publishes its schema (FOR TABLES IN SCHEMA): the new \
                 table would be published, and a subscriber without it stops' FROM pg_publication_namespace pn \
                 JOIN pg_publication p ON p.oid = pn.pnpubid JOIN pg_class c ON c.relnamespace = pn.pnnspid WHERE c.oid = {oid}"
            )
        } else {
            String::new()
        };
        let sql = format!(
            "SELECT 'it is partitioned' FROM pg_class WHERE oid = {oid} AND relkind = 'p' \
             UNION ALL SELECT 'it is a partition' FROM pg_class WHERE oid = {oid} AND relispartition \
             UNION ALL SELECT 'it inherits from, or is inherited by, ' || CASE WHEN inhrelid = {oid} THEN inhparent ELSE inhrelid END::regclass::text \
               FROM pg_inherits WHERE inhrelid = {oid} OR inhparent = {oid} \
             UNION ALL SELECT 'row-level security is on for it (its policies are not copied)' FROM pg_class WHERE oid = {oid} \
               AND (relrowsecurity OR EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = {oid})) \
             UNION ALL SELECT 'publication ' || p.pubname || ' publishes it: the swapped-in table is another table to it' \
               FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.prrelid = {oid} \
             UNION ALL SELECT 'publication ' || pubname || ' is FOR ALL TABLES: the new table would be published, and a \
               subscriber without it stops' FROM pg_publication WHERE puballtables \
             {schema_pubs} \
             UNION ALL SELECT 'its exclusion constraint ' || conname || ' cannot be moved to the copy' FROM pg_constraint \
               WHERE conrelid = {oid} AND contype = 'x' \
             UNION ALL SELECT 'column ' || attname || ' has privileges of its own' FROM pg_attribute WHERE attrelid = {oid} \
               AND attnum > 0 AND attacl IS NOT NULL \
             UNION ALL SELECT DISTINCT pg_describe_object(d.classid, d.objid, 0) || ' depends on it (it would go on \
               with the old table)' FROM pg_depend d WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = {oid} \
               AND d.deptype = 'n' AND NOT (d.classid = 'pg_constraint'::regclass AND EXISTS (SELECT 1 FROM pg_constraint \
               c WHERE c.oid = d.objid AND c.conrelid = ANY ({in_set}))) AND NOT (d.classid = 'pg_class'::regclass \
               AND d.objid = ANY ({in_set})) AND NOT (d.classid = 'pg_trigger'::regclass AND EXISTS (SELECT 1 FROM \
               pg_trigger g WHERE g.oid = d.objid AND g.tgrelid = ANY ({in_set}))) AND NOT (d.classid = \
               'pg_statistic_ext'::regclass AND EXISTS (SELECT 1 FROM pg_statistic_ext x WHERE x.oid = d.objid AND \
               x.stxrelid = ANY ({in_set}))) AND NOT (d.classid = 'pg_attrdef'::regclass AND EXISTS (SELECT 1 \
               FROM pg_attrdef a WHERE a.oid = d.objid AND a.adrelid = ANY ({in_set}))) \
             UNION ALL SELECT 'foreign key ' || conname || ' of ' || conrelid::regclass::text || ' references it by \
               another column, or from a table the run does not copy' FROM pg_constraint WHERE confrelid = {oid} AND contype = 'f' AND NOT (conrelid = ANY ({in_set}))"
        );
        for row in db.rows(&sql, &[]).await? {
            if let Some(Some(w)) = row.first() {
                why.push(format!("{}: {w}", t.name));
            }
        }
    }
    Ok(why)
}

/// The statements that make the run's objects, in one transaction: the mapping table, each
/// table's copy (its columns, defaults, checks, identity, comments; no index yet), owner,
/// grants, comment and storage settings, its change log and the trigger that fills it.
async fn make(db: &mut Db, swap: &Swap, plan: &Plan) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let parent = &swap.tables[0];
    let key = q(&plan.column);
    let final_type = &plan.final_type;
    out.push(format!(
        "CREATE TABLE {map} AS SELECT {key} AS old FROM ONLY {t} WITH NO DATA",
        map = swap.map.quoted(B),
        t = parent.name.quoted(B)
    ));
    out.push(format!(
        // Its primary key comes once the parent's rows are copied (a sorted build; see `copy`).
        "ALTER TABLE {} ADD COLUMN new {final_type}, ALTER COLUMN new SET NOT NULL",
        swap.map.quoted(B)
    ));
    for t in &swap.tables {
        let oid = format!("{}::regclass", regclass(&t.name));
        // What the copy takes over from the table beyond LIKE: persistence, owner, comment,
        // storage settings, grants.
        let facts = db
            .rows(
                &format!(
                    "SELECT c.relpersistence::text, pg_get_userbyid(c.relowner)::text, obj_description(c.oid, 'pg_class'), \
                     array_to_string(c.reloptions, ', '), (SELECT string_agg(format('GRANT %s ON %s TO %s%s', \
                     a.privilege_type, '{new}', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, \
                     CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END), ';') FROM aclexplode(c.relacl) a \
                     WHERE a.grantee <> c.relowner) FROM pg_class c WHERE c.oid = {oid}",
                    new = t.new.quoted(B).replace('\'', "''")
                ),
                &[],
            )
            .await?;
        let row = rows_first(&facts, 5);
        let unlogged = if row[0].as_deref() == Some("u") { "UNLOGGED " } else { "" };
        out.push(format!(
            "CREATE {unlogged}TABLE {new} (LIKE {t} INCLUDING ALL EXCLUDING INDEXES)",
            new = t.new.quoted(B),
            t = t.name.quoted(B)
        ));
        if plan.retypes() {
            // A text default would not cast (the plan refuses one unless --set-default makes a
            // new one, below).
            if plan.sets_default && t.name == parent.name {
                out.push(format!("ALTER TABLE {} ALTER COLUMN {key} DROP DEFAULT", t.new.quoted(B)));
            }
            for k in &t.keys {
                out.push(format!(
                    "ALTER TABLE {} ALTER COLUMN {c} TYPE {final_type} USING {c}::{final_type}",
                    t.new.quoted(B),
                    c = q(k)
                ));
            }
        }
        if let Some(owner) = &row[1] {
            out.push(format!("ALTER TABLE {} OWNER TO {}", t.new.quoted(B), q(owner)));
        }
        if let Some(comment) = &row[2] {
            out.push(format!("COMMENT ON TABLE {} IS {}", t.new.quoted(B), string_literal(comment)));
        }
        if let Some(options) = row[3].as_deref().filter(|o| !o.is_empty()) {
            out.push(format!("ALTER TABLE {} SET ({options})", t.new.quoted(B)));
        }
        if let Some(grants) = &row[4] {
            out.extend(grants.split(';').map(str::to_string));
        }
        let pk: Vec<String> = t.pk.iter().map(|c| q(c)).collect();
        out.push(format!(
            "CREATE TABLE {log} AS SELECT {} FROM ONLY {t} WITH NO DATA",
            pk.join(", "),
            log = t.log.quoted(B),
            t = t.name.quoted(B)
        ));
        out.push(format!("ALTER TABLE {} ADD COLUMN combkey_seq bigserial PRIMARY KEY", t.log.quoted(B)));
        // Each applied row is checked against its copy unless a later log row names it: found
        // by this index, where a scan of the whole log per row made the rounds slower than the
        // application's writes on a busy table (a break-test's run took 187 rounds).
        out.push(format!(
            "CREATE INDEX {} ON {} ({})",
            q(&super::shared::derived(B, &t.log, "", "_key").name),
            t.log.quoted(B),
            pk.join(", ")
        ));
        let (trigger, function) = trigger_name(t);
        let cols = pk.join(", ");
        let old_values: Vec<String> = t.pk.iter().map(|c| format!("OLD.{}", q(c))).collect();
        let new_values: Vec<String> = t.pk.iter().map(|c| format!("NEW.{}", q(c))).collect();
        out.push(format!(
            "CREATE FUNCTION {f}() RETURNS trigger LANGUAGE plpgsql AS $combkey$ BEGIN \
             IF TG_OP = 'TRUNCATE' THEN INSERT INTO {log} ({cols}) VALUES ({nulls}); RETURN NULL; END IF; \
             IF TG_OP <> 'INSERT' THEN INSERT INTO {log} ({cols}) VALUES ({}); END IF; \
             IF TG_OP <> 'DELETE' THEN INSERT INTO {log} ({cols}) VALUES ({}); END IF; \
             RETURN NULL; END $combkey$",
            old_values.join(", "),
            new_values.join(", "),
            f = function.quoted(B),
            log = t.log.quoted(B),
            nulls = vec!["NULL"; t.pk.len()].join(", ")
        ));
        out.push(format!(
            "CREATE TRIGGER {} AFTER INSERT OR UPDATE OR DELETE ON {} FOR EACH ROW EXECUTE FUNCTION {}()",
            q(&trigger),
            t.name.quoted(B),
            function.quoted(B)
        ));
        // Fired in every session, as pg_repack's: a session with `session_replication_role =
        // replica` (a logical replication subscriber applying changes, pglogical, a tool that
        // sets it) fires only ALWAYS triggers, and its changes would never reach the copy (a
        // break-test lost 300 updates so, verified and swapped).
        out.push(format!("ALTER TABLE {} ENABLE ALWAYS TRIGGER {}", t.name.quoted(B), q(&trigger)));
        // A `TRUNCATE` changes no row one by one (no row trigger fires), so the copy would
        // still hold every row and the swap would bring them back: a statement trigger logs a
        // row of no key, and the run stops before its swap (apply_batch).
        out.push(format!(
            "CREATE TRIGGER {TRUNCATE_TRIGGER} AFTER TRUNCATE ON {} FOR EACH STATEMENT EXECUTE FUNCTION {}()",
            t.name.quoted(B),
            function.quoted(B)
        ));
        out.push(format!("ALTER TABLE {} ENABLE ALWAYS TRIGGER {TRUNCATE_TRIGGER}", t.name.quoted(B)));
    }
    if plan.sets_default
        && let Some(step) = plan.steps.iter().find(|s| s.kind == crate::plan::StepKind::SetDefault)
    {
        // The copy's default, in the same statements as the plan's, on the copy.
        for s in &step.sql {
            out.push(s.replace(&parent.name.quoted(B), &parent.new.quoted(B)));
        }
    }
    Ok(out)
}

/// The first row's first `n` values (`None` where there is no row or value).
fn rows_first(rows: &[Vec<Option<String>>], n: usize) -> Vec<Option<String>> {
    (0..n).map(|i| rows.first().and_then(|r| r.get(i).cloned().flatten())).collect()
}

/// The select list of a copy of `t` (from `t` aliased `t`, its key columns through the
/// mapping table aliased `m0`, `m1`, ...), its column list, and its joins.
fn copy_parts(swap: &Swap, t: &SwapTable) -> (String, String, String) {
    let cols: Vec<&crate::catalog::Column> = t.insertable();
    let names: Vec<String> = cols.iter().map(|c| q(&c.name)).collect();
    let exprs: Vec<String> = cols
        .iter()
        .map(|c| match t.key_index(&c.name) {
            Some(i) => format!("m{i}.new"),
            None => format!("t.{}", q(&c.name)),
        })
        .collect();
    let joins: Vec<String> = t
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("LEFT JOIN {} m{i} ON m{i}.old = t.{}", swap.map.quoted(B), q(k)))
        .collect();
    (exprs.join(", "), names.join(", "), joins.join(" "))
}

/// Adds to the mapping table every value of `t`'s key columns, in the rows `filter` selects
/// (on `t` aliased `t`), that it does not hold yet: converted here, by combkey, and sent as two
/// arrays (`unnest`), which the server reads as two values where a `VALUES` list of as many rows
/// is a statement to parse row by row (several times the time).
async fn map_missing(db: &mut Db, swap: &Swap, plan: &Plan, t: &SwapTable, filter: &str) -> Result<usize, Error> {
    let cat = db.catalog()?;
    let (old_type, new_type) = map_types(db, swap).await?;
    let mut added = 0;
    for k in &t.keys {
        let c = q(k);
        let rows = db
            .rows(
                &format!(
                    "SELECT DISTINCT t.{c}::text FROM ONLY {tab} t WHERE {filter} AND t.{c} IS NOT NULL \
                     AND NOT EXISTS (SELECT 1 FROM {map} m WHERE m.old = t.{c})",
                    tab = t.name.quoted(B),
                    map = swap.map.quoted(B)
                ),
                &[],
            )
            .await?;
        if rows.is_empty() {
            continue;
        }
        let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
        for chunk in Source::of(plan).pairs(&values)?.chunks(MAP_ARRAY) {
            let (old, new): (Vec<&Stored>, Vec<&Stored>) = chunk.iter().map(|(o, n)| (o, n)).unzip();
            db.exec("SAVEPOINT combkey_map_missing").await?;
            let inserted = db
                .exec(&format!(
                    // No `ON CONFLICT`: the values are distinct and none is mapped yet (only this
                    // session writes the mapping table), and a speculative insert takes twice the
                    // time. A new key mapped already fails the unique index of new keys, where
                    // there is one (after the parent's copy).
                    "INSERT INTO {} (old, new) SELECT * FROM unnest({}::{old_type}[], {}::{new_type}[])",
                    swap.map.quoted(B),
                    array_literal(&old),
                    array_literal(&new)
                ))
                .await;
            match inserted {
                Ok(_) => db.exec("RELEASE SAVEPOINT combkey_map_missing").await.map(drop)?,
                Err(e) if e.code() == Some("23505") => {
                    db.exec("ROLLBACK TO SAVEPOINT combkey_map_missing").await?;
                    let found = db
                        .rows(
                            &format!(
                                "SELECT m.old::text, m.new::text, u.old::text FROM {} m JOIN unnest({}::{old_type}[], \
                                 {}::{new_type}[]) AS u (old, new) ON u.new = m.new LIMIT 5",
                                swap.map.quoted(B),
                                array_literal(&old),
                                array_literal(&new)
                            ),
                            &[],
                        )
                        .await?;
                    let pairs: Vec<String> = found
                        .iter()
                        .map(|r| {
                            let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                            format!("{} and {} would both become {}", v(0), v(2), v(1))
                        })
                        .collect();
                    return Err(if pairs.is_empty() { e } else { become_one(&pairs.join("; ")) });
                }
                Err(e) => return Err(e),
            }
            added += chunk.len();
        }
    }
    Ok(added)
}

/// Mapping rows per statement.
const MAP_ARRAY: usize = 10_000;

/// Rows of the parent per chunk at most, where its keys come to the client and go back
/// (`copy_direct`): the keys, their conversions and the statement stay a few MiB.
const DIRECT_ROWS: usize = 10_000;

/// The mapping table's column types, `old` and `new`.
async fn map_types(db: &mut Db, swap: &Swap) -> Result<(String, String), Error> {
    let types = db
        .rows(
            &format!(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = {}::regclass \
                 AND attname IN ('old', 'new') ORDER BY attname DESC",
                regclass(&swap.map)
            ),
            &[],
        )
        .await?;
    let ty = |i: usize| types.get(i).and_then(|r| r.first().cloned().flatten()).unwrap_or_else(|| "text".into());
    Ok((ty(0), ty(1)))
}

/// Whether `t`'s rows are copied straight from their keys: the parent, whose one key column is
/// its primary key, copied first (every key in a chunk is new to the mapping table, each once).
fn copied_direct(swap: &Swap, plan: &Plan, t: &SwapTable) -> bool {
    std::ptr::eq(t, &swap.tables[0]) && t.keys == [plan.column.clone()] && t.pk == [plan.column.clone()]
}

/// Copies the rows of the parent `t` that `filter` selects in one statement: their keys read,
/// converted here and sent as two arrays, which the copy joins by hashing (the chunk's pairs,
/// not the mapping table) and the mapping table gets as they are (no index yet: appended).
async fn copy_direct(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    t: &SwapTable,
    types: &(String, String),
    filter: &str,
) -> Result<usize, Error> {
    let cat = db.catalog()?;
    let c = q(&plan.column);
    let rows =
        db.rows(&format!("SELECT t.{c}::text FROM ONLY {tab} t WHERE {filter}", tab = t.name.quoted(B)), &[]).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
    let pairs = Source::of(plan).pairs(&values)?;
    let (old, new): (Vec<&Stored>, Vec<&Stored>) = pairs.iter().map(|(o, n)| (o, n)).unzip();
    let (exprs, names, _) = copy_parts(swap, t);
    let n = db
        .exec(&format!(
            "WITH m0 AS MATERIALIZED (SELECT * FROM unnest({}::{old_type}[], {}::{new_type}[]) AS u (old, new)), \
             mapped AS (INSERT INTO {map} (old, new) SELECT old, new FROM m0) \
             INSERT INTO {new_table} ({names}) OVERRIDING SYSTEM VALUE SELECT {exprs} FROM ONLY {tab} t \
             LEFT JOIN m0 ON m0.old = t.{c} WHERE {filter}",
            array_literal(&old),
            array_literal(&new),
            old_type = types.0,
            new_type = types.1,
            map = swap.map.quoted(B),
            new_table = t.new.quoted(B),
            tab = t.name.quoted(B)
        ))
        .await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The mapping table's primary key and its unique index of new keys, where it has none yet.
/// Two keys with one new key (a key the application wrote since the audit, the new form of
/// another) fail the unique index before anything is swapped: the logs' rounds replace a copy's
/// row by its new key, and would otherwise replace one key's row by the other's.
async fn map_key(db: &mut Db, swap: &Swap) -> Result<(), Error> {
    let has = db
        .rows(
            &format!("SELECT 1 FROM pg_index WHERE indrelid = {}::regclass AND indisprimary", regclass(&swap.map)),
            &[],
        )
        .await?;
    if has.is_empty() {
        db.exec("SAVEPOINT combkey_map_key").await?;
        let built = async {
            db.exec(&format!("ALTER TABLE {} ADD PRIMARY KEY (old)", swap.map.quoted(B))).await?;
            db.exec(&format!("CREATE UNIQUE INDEX {} ON {} (new)", q(&map_new_index(swap).name), swap.map.quoted(B)))
                .await
        }
        .await;
        match built {
            Ok(_) => db.exec("RELEASE SAVEPOINT combkey_map_key").await.map(drop)?,
            Err(e) if e.code() == Some("23505") => {
                db.exec("ROLLBACK TO SAVEPOINT combkey_map_key").await?;
                let found = db
                    .rows(
                        &format!(
                            "SELECT new::text, string_agg(old::text, ' and ' ORDER BY old) FROM {} GROUP BY new \
                             HAVING count(*) > 1 LIMIT 5",
                            swap.map.quoted(B)
                        ),
                        &[],
                    )
                    .await?;
                let pairs: Vec<String> = found
                    .iter()
                    .map(|r| {
                        let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                        format!("{} would both become {}", v(1), v(0))
                    })
                    .collect();
                return Err(become_one(&pairs.join("; ")));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The mapping table's unique index of new keys (it becomes the key map's `new_key` unique
/// constraint after the swap).
fn map_new_index(swap: &Swap) -> Name {
    super::shared::derived(B, &swap.map, "", "_new")
}

/// Key values as a PostgreSQL array literal of their text, as an SQL string.
fn array_literal(values: &[&Stored]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| {
            let text = match v {
                Stored::Text(t) => t.clone(),
                Stored::Bytes(b) => format!("\\x{}", crate::catalog::hex(b)),
            };
            format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
        })
        .collect();
    string_literal(&format!("{{{}}}", items.join(",")))
}

/// Copies every table in one snapshot (a row that the application moves meanwhile is seen
/// once, at its place in the snapshot; its change is in the log), a range of pages at a time,
/// the mapping table filled as the keys come: each chunk commits nothing until the whole copy
/// does, with the journal's mark of its end.
async fn copy(db: &mut Db, swap: &Swap, plan: &Plan, journal: &Journal, pacing: &mut Pacing<'_>) -> Result<(), Error> {
    db.exec("BEGIN ISOLATION LEVEL REPEATABLE READ").await?;
    // Rows written since the snapshot are in the logs (the triggers came first): copied by the
    // rounds that follow.
    for t in &swap.tables {
        db.exec(&format!("TRUNCATE {}", t.new.quoted(B))).await?;
    }
    let total: i64 = {
        let mut n = 0;
        for t in &swap.tables {
            let cat = db.catalog()?;
            n += db.query(cat.row_estimate(&t.name)).await?.unwrap_or(0).max(0);
        }
        n
    };
    let mut chunks = 0i64;
    let mut copied = 0usize;
    let types = map_types(db, swap).await?;
    for t in &swap.tables {
        let direct = copied_direct(swap, plan, t);
        if direct {
            // The chunk's pairs hashed.
            db.exec("SET LOCAL enable_hashjoin = on").await?;
        } else {
            // The keys of the tables that follow are looked up in the mapping table's index.
            map_key(db, swap).await?;
            db.exec(&format!("ANALYZE {}", swap.map.quoted(B))).await?;
            probe_joins(db).await?;
        }
        let (exprs, names, joins) = copy_parts(swap, t);
        let (pages, per_page): (i64, f64) = {
            let rows = db
                .rows(
                    &format!(
                        "SELECT (pg_relation_size({r}::regclass) / current_setting('block_size')::int)::text, \
                         (CASE WHEN relpages > 0 THEN reltuples / relpages ELSE 100 END)::text FROM pg_class WHERE oid = {r}::regclass",
                        r = regclass(&t.name)
                    ),
                    &[],
                )
                .await?;
            let v = rows_first(&rows, 2);
            (
                v[0].as_deref().and_then(|s| s.parse().ok()).unwrap_or(0),
                v[1].as_deref().and_then(|s| s.parse().ok()).unwrap_or(100.0_f64).max(1.0),
            )
        };
        let mut pace = Pace::new();
        let mut from = 0i64;
        while from < pages {
            pacing.wait(db).await?;
            let rows = if direct { pace.rows.min(DIRECT_ROWS) } else { pace.rows };
            // OK because rows per page is at least 1 and the chunk at most 100,000 rows.
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            let span = ((rows as f64 / per_page).ceil() as i64).max(1);
            let to = from + span;
            let filter = if to >= pages {
                format!("t.ctid >= '({from},0)'::tid")
            } else {
                format!("t.ctid >= '({from},0)'::tid AND t.ctid < '({to},0)'::tid")
            };
            let started = Instant::now();
            let n = if direct {
                copy_direct(db, swap, plan, t, &types, &filter).await?
            } else {
                map_missing(db, swap, plan, t, &filter).await?;
                let n = db
                    .exec(&format!(
                        "INSERT INTO {new} ({names}) OVERRIDING SYSTEM VALUE SELECT {exprs} FROM ONLY {tab} t {joins} WHERE {filter}",
                        new = t.new.quoted(B),
                        tab = t.name.quoted(B)
                    ))
                    .await?;
                usize::try_from(n).unwrap_or(usize::MAX)
            };
            pace.took(n, started.elapsed());
            copied += n;
            pacing.tally.out.scanned += n;
            chunks += 1;
            pacing.progress.batch(copied, copied, total);
            stop_after("CHUNK", chunks);
            from = to;
        }
    }
    map_key(db, swap).await?;
    verify_copy(db, swap, &mut pacing.tally.out.verified).await?;
    journal.set_cursor(db, None, usize::try_from(phase::COPIED).unwrap_or(0)).await?;
    db.exec("COMMIT").await?;
    pacing.tally.out.batches = usize::try_from(chunks).unwrap_or(0);
    stop_after("PHASE", phase::COPIED);
    Ok(())
}

/// Joins with the mapping table by probing its index, for the rest of the transaction. The
/// planner otherwise hashes the whole mapping table for each chunk of the copy (its estimate of
/// a chunk's rows is a few thousand, and hashing the table looks cheaper than as many probes):
/// the copy of 3,000,000 keys then took 57 s, each chunk reading all the keys mapped before it,
/// where probes make it linear.
async fn probe_joins(db: &mut Db) -> Result<(), Error> {
    db.exec("SET LOCAL enable_hashjoin = off").await?;
    db.exec("SET LOCAL enable_mergejoin = off").await?;
    Ok(())
}

/// An index of a table, as the copy gets it.
struct Index {
    /// Its name on the table.
    name: String,
    /// Its name on the copy until the swap.
    temporary: String,
    /// Its name on the table kept after the swap.
    archived: String,
    /// `CREATE INDEX` of it on the copy.
    create: String,
    /// The constraint it backs: kind (`p`, `u`), name, `DEFERRABLE ...`.
    constraint: Option<(String, String, String)>,
    /// Its comment, and its constraint's.
    comments: (Option<String>, Option<String>),
}

async fn indexes(db: &mut Db, t: &SwapTable, of: &Name) -> Result<Vec<Index>, Error> {
    let rows = db
        .rows(
            &format!(
                "SELECT c.relname::text, pg_get_indexdef(i.indexrelid), quote_ident(n.nspname) || '.' || quote_ident(tc.relname), \
                 con.contype::text, con.conname::text, CASE WHEN con.condeferrable THEN ' DEFERRABLE' || \
                 CASE WHEN con.condeferred THEN ' INITIALLY DEFERRED' ELSE '' END ELSE '' END, \
                 obj_description(i.indexrelid, 'pg_class'), obj_description(con.oid, 'pg_constraint'), quote_ident(c.relname) \
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class tc ON tc.oid = i.indrelid \
                 JOIN pg_namespace n ON n.oid = tc.relnamespace LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid \
                 AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u') WHERE i.indrelid = {}::regclass ORDER BY c.relname",
                regclass(of)
            ),
            &[],
        )
        .await?;
    let mut out = Vec::new();
    for r in rows {
        let v = |i: usize| r.get(i).cloned().flatten();
        let (Some(name), Some(def), Some(on)) = (v(0), v(1), v(2)) else { continue };
        let idx = Name { schema: t.name.schema.clone(), name: name.clone() };
        let temporary = super::shared::derived(B, &idx, "", "_new").name;
        let archived = super::shared::derived(B, &idx, "", "_old").name;
        // `CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING ...`: the copy's name and table.
        let head = format!(" INDEX {} ON ", v(8).unwrap_or_default());
        let Some(at) = def.find(&head) else {
            return Err(Error::new(ErrorKind::Database, format!("an index definition that does not read: {def}")));
        };
        let rest = &def[at + head.len()..];
        let rest = rest.strip_prefix("ONLY ").unwrap_or(rest);
        let Some(after) = rest.strip_prefix(on.as_str()) else {
            return Err(Error::new(ErrorKind::Database, format!("an index definition that does not read: {def}")));
        };
        let create = format!("{} INDEX {} ON {}{after}", &def[..at], q(&temporary), t.new.quoted(B));
        let constraint = match (v(3), v(4)) {
            (Some(kind), Some(cname)) => Some((kind, cname, v(5).unwrap_or_default())),
            _ => None,
        };
        out.push(Index { name, temporary, archived, create, constraint, comments: (v(6), v(7)) });
    }
    Ok(out)
}

/// Builds each table's indexes on its copy (sorted builds: leaves filled to the fill factor)
/// and gathers the copies' statistics.
async fn index(db: &mut Db, swap: &Swap, journal: &Journal) -> Result<(), Error> {
    db.exec("BEGIN").await?;
    for t in &swap.tables {
        for i in indexes(db, t, &t.name).await? {
            db.exec(&format!(
                "DROP INDEX IF EXISTS {}",
                Name { schema: t.name.schema.clone(), name: i.temporary.clone() }.quoted(B)
            ))
            .await?;
            db.exec(&i.create).await?;
        }
    }
    journal.set_cursor(db, None, usize::try_from(phase::INDEXED).unwrap_or(0)).await?;
    db.exec("COMMIT").await?;
    for t in &swap.tables {
        db.exec(&format!("ANALYZE {}", t.new.quoted(B))).await?;
    }
    stop_after("PHASE", phase::INDEXED);
    Ok(())
}

/// Applies each log: up to `limit` of its rows, or all of them (`None`, under the swap's lock,
/// where no new ones come). Each changed row's copy is made again from the table as it is now
/// (or removed, where the row is gone), in the caller's transaction. How many log rows it
/// applied.
async fn apply(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    limit: Option<usize>,
    verified: &mut Verified,
) -> Result<usize, Error> {
    // A row of no key in a log: its table was truncated (the statement trigger's row).
    let mut truncated = Vec::new();
    for t in &swap.tables {
        let first = t.pk.first().map(|c| q(c)).unwrap_or_default();
        if db.count(&format!("SELECT count(*) FROM {} WHERE {first} IS NULL", t.log.quoted(B))).await? > 0 {
            truncated.push(t.name.to_string());
        }
    }
    if !truncated.is_empty() {
        return Err(Error::new(
            ErrorKind::Verification,
            format!(
                "{} {} truncated during the run (TRUNCATE changes no row one by one, so the copy still holds its rows): \
                 nothing was swapped; run again to copy it as it is now",
                truncated.join(", "),
                if truncated.len() == 1 { "was" } else { "were" }
            ),
        ));
    }
    let mut applied = 0;
    for t in &swap.tables {
        loop {
            let n = apply_batch(db, swap, plan, t, limit.unwrap_or(APPLY_BATCH), verified).await?;
            applied += n;
            if n == 0 || limit.is_some() {
                break;
            }
        }
    }
    Ok(applied)
}

/// Applies the first `limit` rows of `t`'s log (each row they name copied again once), compares
/// each such row with its copy, and removes every log row of those rows: the number removed.
/// Run in one snapshot (see the removal).
async fn apply_batch(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    t: &SwapTable,
    limit: usize,
    verified: &mut Verified,
) -> Result<usize, Error> {
    let seqs: Vec<String> = db
        .rows(&format!("SELECT combkey_seq::text FROM {} ORDER BY combkey_seq LIMIT {limit}", t.log.quoted(B)), &[])
        .await?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    if seqs.is_empty() {
        return Ok(0);
    }
    let these = format!("ANY ('{{{}}}'::bigint[])", seqs.join(","));
    let pk: Vec<String> = t.pk.iter().map(|c| q(c)).collect();
    let logged = format!("SELECT {} FROM {} WHERE combkey_seq = {these}", pk.join(", "), t.log.quoted(B));
    let filter = format!("({}) IN ({logged})", pk.iter().map(|c| format!("t.{c}")).collect::<Vec<_>>().join(", "));
    map_missing(db, swap, plan, t, &filter).await?;
    // The copies as they are: their primary key is the row's, its key columns mapped.
    let new_pk: Vec<String> =
        t.pk.iter()
            .map(|c| match t.key_index(c) {
                Some(i) => format!("m{i}.new AS {}", q(c)),
                None => format!("l.{} AS {}", q(c), q(c)),
            })
            .collect();
    let log_joins: Vec<String> = t
        .keys
        .iter()
        .enumerate()
        .filter(|(_, k)| t.pk.contains(k))
        .map(|(i, k)| format!("LEFT JOIN {} m{i} ON m{i}.old = l.{}", swap.map.quoted(B), q(k)))
        .collect();
    let matches: Vec<String> = pk.iter().map(|c| format!("n.{c} = d.{c}")).collect();
    db.exec(&format!(
        "DELETE FROM {new} n USING (SELECT DISTINCT {} FROM {log} l {} WHERE l.combkey_seq = {these}) d WHERE {}",
        new_pk.join(", "),
        log_joins.join(" "),
        matches.join(" AND "),
        new = t.new.quoted(B),
        log = t.log.quoted(B)
    ))
    .await?;
    let (exprs, names, joins) = copy_parts(swap, t);
    db.exec(&format!(
        "INSERT INTO {new} ({names}) OVERRIDING SYSTEM VALUE SELECT {exprs} FROM ONLY {tab} t {joins} WHERE {filter}",
        new = t.new.quoted(B),
        tab = t.name.quoted(B)
    ))
    .await?;
    #[cfg(feature = "failpoints")]
    if let Some(sql) = crate::failpoints::sql("AFTER_APPLY") {
        db.exec(&sql.replace("{copy}", &t.new.quoted(B))).await?;
    }
    // Each row the batch names, as the table has it now, against its copy: equal, or changed
    // again since (another log row names it, applied by a later batch; the last batch runs
    // under the swap's lock, where nothing changes).
    let old_pk: Vec<String> = pk.iter().enumerate().map(|(j, c)| format!("l.{c} AS o{j}")).collect();
    let new_pk_as: Vec<String> =
        t.pk.iter()
            .enumerate()
            .map(|(j, c)| match t.key_index(c) {
                Some(i) => format!("m{i}.new AS n{j}"),
                None => format!("l.{} AS n{j}", q(c)),
            })
            .collect();
    let on = |alias: &str, side: &str| -> String {
        pk.iter().enumerate().map(|(j, c)| format!("{alias}.{c} = d.{side}{j}")).collect::<Vec<_>>().join(" AND ")
    };
    let copy_joins = joins;
    let copied: Vec<String> = t.insertable().iter().map(|c| format!("n.{}", q(&c.name))).collect();
    let row = db
        .rows(
            &format!(
                "WITH d AS (SELECT DISTINCT {}, {} FROM {log} l {} WHERE l.combkey_seq = {these}) \
                 SELECT count(*)::text, (count(*) FILTER (WHERE o.h IS DISTINCT FROM c.h AND NOT EXISTS (SELECT 1 FROM \
                 {log} l WHERE {} AND NOT (l.combkey_seq = {these}))))::text FROM d \
                 LEFT JOIN LATERAL (SELECT {} AS h FROM ONLY {tab} t {copy_joins} WHERE {}) o ON true \
                 LEFT JOIN LATERAL (SELECT {} AS h FROM {new} n WHERE {}) c ON true",
                old_pk.join(", "),
                new_pk_as.join(", "),
                log_joins.join(" "),
                on("l", "o"),
                row_hash(&exprs),
                on("t", "o"),
                row_hash(&copied.join(", ")),
                on("n", "n"),
                log = t.log.quoted(B),
                tab = t.name.quoted(B),
                new = t.new.quoted(B)
            ),
            &[],
        )
        .await?;
    let v = rows_first(&row, 2);
    let n = |i: usize| v[i].as_deref().and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    if v[1].is_none() || n(1) > 0 {
        return Err(Error::new(
            ErrorKind::Verification,
            format!(
                "{} of the {} rows of {} that the application changed during the run differ from their copies once \
                 the changes were applied (checked before the swap, which did not happen)",
                n(1),
                n(0),
                t.name
            ),
        ));
    }
    add(verified, &t.name, n(0));
    // Every log row of the rows the batch copied again goes, not only the batch's own: a row
    // the application changes again and again is logged as often, and was copied once for each
    // (a break-test's update load logged 4.7M rows of 40,000 that the rounds never caught up
    // with). Safe because the batch runs in one snapshot (the rounds' `REPEATABLE READ`, or the
    // swap's lock, under which nothing is logged): a log row is there in a snapshot exactly
    // where its change is, which the batch's copy holds.
    let log_matches: Vec<String> = pk.iter().map(|c| format!("l.{c} = d.{c}")).collect();
    let cleared = db
        .exec(&format!(
            "DELETE FROM {log} l USING (SELECT DISTINCT {} FROM {log} WHERE combkey_seq = {these}) d WHERE {}",
            pk.join(", "),
            log_matches.join(" AND "),
            log = t.log.quoted(B)
        ))
        .await?;
    Ok(usize::try_from(cleared).unwrap_or(usize::MAX).max(seqs.len()))
}

/// A row's hash, for the comparison of a table's rows with their copies: the text of the row
/// of `list` (the table's columns, its key columns through the mapping table; or the copy's).
fn row_hash(list: &str) -> String {
    format!("hashtextextended(ROW({list})::text, 0)")
}

/// Rows compared with their copies, per table (the run's outcome's `verified`, or its
/// `rechecked`).
type Verified = Vec<(String, u64)>;

/// Counts `n` rows of `t` compared with their copies.
fn add(verified: &mut Verified, t: &Name, n: u64) {
    let name = t.to_string();
    match verified.iter_mut().find(|(x, _)| *x == name) {
        Some((_, k)) => *k += n,
        None => verified.push((name, n)),
    }
}

/// In the copy's snapshot, before it commits: each table's copy holds its rows, as many and
/// with the same sum of row hashes (each row's text, its key columns mapped to their new keys,
/// against the copy's row). spirit checks its copies by chunked checksums in one snapshot; here
/// the copy is one snapshot, so one pass over each table and its copy is exact. A difference
/// stops the run before the swap, nothing changed.
async fn verify_copy(db: &mut Db, swap: &Swap, verified: &mut Verified) -> Result<(), Error> {
    // Whole tables against the mapping table: hashed, not probed.
    db.exec("SET LOCAL enable_hashjoin = on").await?;
    db.exec("SET LOCAL enable_mergejoin = on").await?;
    #[cfg(feature = "failpoints")]
    if let Some(sql) = crate::failpoints::sql("BEFORE_VERIFY") {
        db.exec(&sql.replace("{copy}", &swap.tables[0].new.quoted(B))).await?;
    }
    for t in &swap.tables {
        let (exprs, _, joins) = copy_parts(swap, t);
        let copied: Vec<String> = t.insertable().iter().map(|c| format!("n.{}", q(&c.name))).collect();
        let row = db
            .rows(
                &format!(
                    "SELECT (SELECT count(*)::text || ' ' || coalesce(sum({}::numeric), 0)::text FROM ONLY {tab} t {joins}), \
                     (SELECT count(*)::text || ' ' || coalesce(sum({}::numeric), 0)::text FROM ONLY {new} n)",
                    row_hash(&exprs),
                    row_hash(&copied.join(", ")),
                    tab = t.name.quoted(B),
                    new = t.new.quoted(B)
                ),
                &[],
            )
            .await?;
        let v = rows_first(&row, 2);
        let rows = |i: usize| v[i].as_deref().unwrap_or("").split(' ').next().unwrap_or("").to_string();
        if v[0].is_none() || v[0] != v[1] {
            return Err(Error::new(
                ErrorKind::Verification,
                format!(
                    "the copy of {} is not the table: {} rows in the copy's snapshot, {} copied{} (checked before the \
                     swap, which did not happen)",
                    t.name,
                    rows(0),
                    rows(1),
                    if rows(0) == rows(1) { ", and their rows' hashes differ" } else { "" }
                ),
            ));
        }
        add(verified, &t.name, rows(0).parse().unwrap_or(0));
    }
    Ok(())
}

/// Log rows still to apply, over every table.
async fn backlog(db: &mut Db, swap: &Swap) -> Result<i64, Error> {
    let counts: Vec<String> =
        swap.tables.iter().map(|t| format!("(SELECT count(*) FROM {})", t.log.quoted(B))).collect();
    db.count(&format!("SELECT {}", counts.join(" + "))).await
}

/// Rows of a log applied per transaction before the swap.
const APPLY_BATCH: usize = 5_000;

/// A backlog small enough to apply under the swap's lock.
const SWAP_BACKLOG: i64 = 2_000;

/// How long a statement of the swap's transaction waits for a lock once the tables are locked
/// (every writer waits behind them as long).
const SWAP_STATEMENT_WAIT_MS: u64 = 200;

/// The foreign keys of a table (its own, on its columns), as re-made at the swap.
struct ForeignKey {
    name: String,
    definition: String,
    validated: bool,
    comment: Option<String>,
}

async fn foreign_keys(db: &mut Db, of: &Name) -> Result<Vec<ForeignKey>, Error> {
    let rows = db
        .rows(
            &format!(
                "SELECT conname::text, pg_get_constraintdef(oid), convalidated::text, obj_description(oid, 'pg_constraint') \
                 FROM pg_constraint WHERE conrelid = {}::regclass AND contype = 'f' ORDER BY conname",
                regclass(of)
            ),
            &[],
        )
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let v = |i: usize| r.get(i).cloned().flatten();
            Some(ForeignKey {
                name: v(0)?,
                definition: v(1)?,
                validated: v(2).as_deref() == Some("true"),
                comment: v(3),
            })
        })
        .collect())
}

/// A description of lock holders without their transactions' ages ("open for 12 s").
fn without_ages(holders: &str) -> String {
    let mut out = String::new();
    let mut rest = holders;
    while let Some(i) = rest.find("open for ") {
        out.push_str(&rest[..i + 9]);
        rest = rest[i + 9..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// What the table's definition holds beyond what the copy was made with, read from the table
/// under the swap's lock (so a change another session made to it during the copy is carried
/// too): statements for before the renames (`.0`: the kept table's extended statistics take
/// names of their own) and after them (`.1`, on the table's name, now the copy's): the
/// owner, grants, storage parameters (the TOAST table's too), each column's statistics target,
/// options (`n_distinct`) and comment, `CLUSTER ON`, and the extended statistics' names and
/// targets. An extended statistics object the copy lacks (made on the table since the run
/// began) stops the swap.
async fn carried(db: &mut Db, t: &SwapTable) -> Result<(Vec<String>, Vec<String>), Error> {
    let (old, new) = (format!("{}::regclass", regclass(&t.name)), format!("{}::regclass", regclass(&t.new)));
    let table = t.name.quoted(B);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let facts = db
        .rows(
            &format!(
                "SELECT pg_get_userbyid(o.relowner)::text, \
                 (SELECT string_agg(format('%s=%s', option_name, option_value), ', ') FROM pg_options_to_table(o.reloptions)), \
                 (SELECT string_agg(format('toast.%s=%s', option_name, option_value), ', ') FROM \
                   pg_options_to_table((SELECT reloptions FROM pg_class WHERE oid = o.reltoastrelid))), \
                 concat_ws(', ', (SELECT string_agg(option_name, ', ') FROM pg_options_to_table(n.reloptions)), \
                   (SELECT string_agg('toast.' || option_name, ', ') FROM \
                   pg_options_to_table((SELECT reloptions FROM pg_class WHERE oid = n.reltoastrelid)))), \
                 (SELECT string_agg(DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, \
                   ', ') FROM aclexplode(n.relacl) a WHERE a.grantee <> n.relowner), \
                 (SELECT string_agg(format('GRANT %s ON %s TO %s%s', a.privilege_type, {lit}, CASE WHEN a.grantee = 0 THEN \
                   'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, CASE WHEN a.is_grantable THEN \
                   ' WITH GRANT OPTION' ELSE '' END), ';' ORDER BY a.grantee, a.privilege_type) \
                   FROM aclexplode(o.relacl) a WHERE a.grantee <> o.relowner), \
                 (SELECT quote_ident(ic.relname) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid \
                   WHERE i.indrelid = o.oid AND i.indisclustered) \
                 FROM pg_class o, pg_class n WHERE o.oid = {old} AND n.oid = {new}",
                lit = string_literal(&table)
            ),
            &[],
        )
        .await?;
    let f = rows_first(&facts, 7);
    // Grants first taken off the copy (so that an owner changed since keeps what owners have).
    if let Some(grantees) = f[4].as_deref().filter(|g| !g.is_empty()) {
        after.push(format!("REVOKE ALL ON {table} FROM {grantees} CASCADE"));
    }
    if let Some(owner) = &f[0] {
        after.push(format!("ALTER TABLE {table} OWNER TO {}", q(owner)));
    }
    if let Some(grants) = f[5].as_deref().filter(|g| !g.is_empty()) {
        after.extend(grants.split(';').map(str::to_string));
    }
    if let Some(names) = f[3].as_deref().filter(|n| !n.is_empty()) {
        after.push(format!("ALTER TABLE {table} RESET ({names})"));
    }
    let options: Vec<&str> =
        [f[1].as_deref(), f[2].as_deref()].into_iter().flatten().filter(|o| !o.is_empty()).collect();
    if !options.is_empty() {
        after.push(format!("ALTER TABLE {table} SET ({})", options.join(", ")));
    }
    // Columns: statistics targets (-1, or NULL from PostgreSQL 17 on: the default), options,
    // comments, where the copy's differ.
    let columns = db
        .rows(
            &format!(
                "SELECT quote_ident(a.attname), coalesce(a.attstattarget, -1)::text, coalesce(n.attstattarget, -1)::text, \
                 (SELECT string_agg(format('%s=%s', option_name, option_value), ', ') FROM pg_options_to_table(a.attoptions)), \
                 (SELECT string_agg(option_name, ', ') FROM pg_options_to_table(n.attoptions)), \
                 array_to_string(a.attoptions, ',') IS DISTINCT FROM array_to_string(n.attoptions, ',') AS options_differ, \
                 col_description(a.attrelid, a.attnum), \
                 col_description(a.attrelid, a.attnum) IS DISTINCT FROM col_description(n.attrelid, n.attnum) \
                 FROM pg_attribute a JOIN pg_attribute n ON n.attrelid = {new} AND n.attname = a.attname AND NOT n.attisdropped \
                 WHERE a.attrelid = {old} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
            ),
            &[],
        )
        .await?;
    for r in columns {
        let v = |i: usize| r.get(i).cloned().flatten();
        let Some(column) = v(0) else { continue };
        if v(1) != v(2) {
            after.push(format!(
                "ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS {}",
                v(1).unwrap_or("-1".into())
            ));
        }
        if v(5).as_deref() == Some("true") {
            if let Some(names) = v(4) {
                after.push(format!("ALTER TABLE {table} ALTER COLUMN {column} RESET ({names})"));
            }
            if let Some(options) = v(3) {
                after.push(format!("ALTER TABLE {table} ALTER COLUMN {column} SET ({options})"));
            }
        }
        if v(7).as_deref() == Some("true") {
            let comment = v(6).map_or("NULL".to_string(), |c| string_literal(&c));
            after.push(format!("COMMENT ON COLUMN {table}.{column} IS {comment}"));
        }
    }
    if let Some(index) = &f[6] {
        after.push(format!("ALTER TABLE {table} CLUSTER ON {index}"));
    }
    // Extended statistics: the copy's (LIKE ... INCLUDING STATISTICS made them, under names
    // of their own) take the table's names, schemas and targets; the kept table's get names
    // of their own. Paired by columns and kinds.
    let stats = db
        .rows(
            &format!(
                "WITH o AS (SELECT s.oid, s.stxname::text AS name, ns.nspname::text AS schema, \
                   coalesce(s.stxstattarget, -1)::text AS target, pg_get_statisticsobjdef_columns(s.oid) AS cols, \
                   s.stxkind::text AS kinds, row_number() OVER (PARTITION BY pg_get_statisticsobjdef_columns(s.oid), \
                   s.stxkind::text ORDER BY s.oid) AS k FROM pg_statistic_ext s JOIN pg_namespace ns ON ns.oid = \
                   s.stxnamespace WHERE s.stxrelid = {old}), \
                 n AS (SELECT s.stxname::text AS name, ns.nspname::text AS schema, pg_get_statisticsobjdef_columns(s.oid) AS \
                   cols, s.stxkind::text AS kinds, row_number() OVER (PARTITION BY pg_get_statisticsobjdef_columns(s.oid), \
                   s.stxkind::text ORDER BY s.oid) AS k FROM pg_statistic_ext s JOIN pg_namespace ns ON ns.oid = \
                   s.stxnamespace WHERE s.stxrelid = {new}) \
                 SELECT o.name, o.schema, o.target, n.name, n.schema FROM o LEFT JOIN n ON n.cols = o.cols \
                   AND n.kinds = o.kinds AND n.k = o.k ORDER BY o.oid"
            ),
            &[],
        )
        .await?;
    for r in stats {
        let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
        let (name, schema, target, copy, copy_schema) = (v(0), v(1), v(2), v(3), v(4));
        let at = |schema: &str, name: &str| format!("{}.{}", q(schema), q(name));
        if copy.is_empty() {
            return Err(Error::new(
                ErrorKind::Verification,
                format!(
                    "{} was changed by another session since the run began (its extended statistics {} are not on the \
                     copy), so the copy is not the table any more (run again to copy it as it is now)",
                    t.name,
                    at(&schema, &name)
                ),
            ));
        }
        let kept = super::shared::derived(B, &Name { schema: Some(schema.clone()), name: name.clone() }, "_", "_old");
        before.push(format!("ALTER STATISTICS {} RENAME TO {}", at(&schema, &name), q(&kept.name)));
        after.push(format!("ALTER STATISTICS {} RENAME TO {}", at(&copy_schema, &copy), q(&name)));
        if copy_schema != schema {
            after.push(format!("ALTER STATISTICS {} SET SCHEMA {}", at(&copy_schema, &name), q(&schema)));
        }
        if target != "-1" {
            after.push(format!("ALTER STATISTICS {} SET STATISTICS {target}", at(&schema, &name)));
        }
    }
    Ok((before, after))
}

/// Every relation the swap's transaction locks: the tables and their copies, logs, the mapping
/// table (and, through [`lock_holders`](crate::catalog::Catalog::lock_holders)' query, the
/// tables their foreign keys reference and their sequences).
fn locked_by_swap(swap: &Swap) -> Vec<Name> {
    swap.tables.iter().flat_map(|t| [t.name.clone(), t.new.clone(), t.log.clone()]).chain([swap.map.clone()]).collect()
}

/// One attempt at the swap, in one transaction: `Ok(Some(keys to validate))` when it
/// committed, `Ok(None)` when the locks were not had in time (rolled back; nothing changed).
async fn swap_once(
    db: &mut Db,
    swap: &Swap,
    plan: &Plan,
    journal: &Journal,
    verified: &mut Verified,
) -> Result<Option<Vec<String>>, Error> {
    let cat = db.catalog()?;
    db.exec("BEGIN").await?;
    let names: Vec<String> = swap.tables.iter().map(|t| t.name.quoted(B)).collect();
    let lock = format!("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE", names.join(", "));
    let held = locked_by_swap(swap);
    match lock_in_attempts(db, &[lock], plan.options.lock_timeout_ms, &held).await {
        Ok(()) => {
            // The tables are the run's now, every writer of them waiting: what the swap's
            // statements lock besides (a referenced table, a sequence) is waited for no longer
            // than an attempt (the writers wait as long), and the swap is tried again later.
            if let Some(set) = cat.lock_attempt(SWAP_STATEMENT_WAIT_MS) {
                db.exec(&set).await?;
            }
        }
        Err(e) if e.kind() == ErrorKind::LockTimeout => {
            let _ = db.exec("ROLLBACK").await;
            return Ok(None);
        }
        Err(e) => return Err(e),
    }
    // The tables as the plan found them (another session's change since, a column added,
    // would not be in the copies: nothing is swapped then).
    for t in &swap.tables {
        let Some((_, before)) = plan.definitions.iter().find(|(n, _)| Name::from(n) == t.name) else { continue };
        let now = db.query(cat.definition(&t.name)).await?;
        let ours = ["CREATE TRIGGER combkey_doctor_capture ", "CREATE TRIGGER combkey_doctor_truncate "];
        let now: String = now.lines().filter(|l| !ours.iter().any(|o| l.starts_with(o))).collect::<Vec<_>>().join("\n");
        let (was, is) = (comparable(before, &[], B), comparable(&now, &[], B));
        if was != is {
            let _ = db.exec("ROLLBACK").await;
            return Err(Error::new(
                ErrorKind::Verification,
                format!(
                    "{} was changed by another session since the run began, so the copy is not the table any more \
                     (run again to copy it as it is now): {}",
                    t.name,
                    crate::methods::shared::definition_change(&was, &is)
                ),
            ));
        }
    }
    // What depends on them, as the run began with none (a view, a foreign key of a new table,
    // a policy, a publication made since would stay with the old table: a view reading the
    // frozen rows, the application's writes through the foreign key failing).
    let why = dependants(db, swap).await?;
    if !why.is_empty() {
        let _ = db.exec("ROLLBACK").await;
        return Err(Error::new(
            ErrorKind::Verification,
            format!(
                "the tables were changed by another session since the run began, so the copies are not the tables \
                 any more (run again to see whether copy and swap can carry them): {}",
                why.join("; ")
            ),
        ));
    }
    // Nothing writes to the tables now: the logs' last rows.
    probe_joins(db).await?;
    apply(db, swap, plan, None, verified).await?;
    let mut statements: Vec<String> = Vec::new();
    let mut validate: Vec<String> = Vec::new();
    let mut renames: Vec<String> = Vec::new();
    let mut after: Vec<String> = Vec::new();
    let mut carry: Vec<String> = Vec::new();
    for t in &swap.tables {
        let (trigger, function) = trigger_name(t);
        statements.push(format!("DROP TRIGGER {} ON {}", q(&trigger), t.name.quoted(B)));
        statements.push(format!("DROP TRIGGER IF EXISTS {TRUNCATE_TRIGGER} ON {}", t.name.quoted(B)));
        statements.push(format!("DROP FUNCTION {}()", function.quoted(B)));
        // Its foreign keys go from the table that is kept (an archive constrains nothing) and
        // come to the copy, not yet validated (that would read the table under this lock): the
        // next step validates them, without blocking writes.
        for fk in foreign_keys(db, &t.name).await? {
            statements.push(format!("ALTER TABLE {} DROP CONSTRAINT {}", t.name.quoted(B), q(&fk.name)));
            let invalid = if fk.definition.ends_with(" NOT VALID") { "" } else { " NOT VALID" };
            after.push(format!(
                "ALTER TABLE {} ADD CONSTRAINT {} {}{invalid}",
                t.name.quoted(B),
                q(&fk.name),
                fk.definition
            ));
            if let Some(c) = &fk.comment {
                after.push(format!(
                    "COMMENT ON CONSTRAINT {} ON {} IS {}",
                    q(&fk.name),
                    t.name.quoted(B),
                    string_literal(c)
                ));
            }
            if fk.validated {
                validate.push(format!("ALTER TABLE {} VALIDATE CONSTRAINT {}", t.name.quoted(B), q(&fk.name)));
            }
        }
        let schema = |n: &str| Name { schema: t.name.schema.clone(), name: n.to_string() }.quoted(B);
        for i in indexes(db, t, &t.name).await? {
            renames.push(format!("ALTER INDEX {} RENAME TO {}", schema(&i.name), q(&i.archived)));
            match &i.constraint {
                Some((kind, cname, deferrable)) => {
                    let what = if kind == "p" { "PRIMARY KEY" } else { "UNIQUE" };
                    after.push(format!(
                        "ALTER TABLE {} ADD CONSTRAINT {} {what} USING INDEX {}{deferrable}",
                        t.name.quoted(B),
                        q(cname),
                        q(&i.temporary)
                    ));
                    if let Some(c) = &i.comments.1 {
                        after.push(format!(
                            "COMMENT ON CONSTRAINT {} ON {} IS {}",
                            q(cname),
                            t.name.quoted(B),
                            string_literal(c)
                        ));
                    }
                }
                None => after.push(format!("ALTER INDEX {} RENAME TO {}", schema(&i.temporary), q(&i.name))),
            }
            if let Some(c) = &i.comments.0 {
                after.push(format!("COMMENT ON INDEX {} IS {}", schema(&i.name), string_literal(c)));
            }
        }
        // Sequences: one a column's default takes its numbers from is given to the copy's
        // column (so dropping the kept table later leaves it); an identity column's own
        // sequence goes on from where the table's stopped.
        let seqs = db
            .rows(
                &format!(
                    "SELECT a.attname::text, d.deptype::text, s.oid::regclass::text FROM pg_depend d JOIN pg_class s ON \
                     s.oid = d.objid AND s.relkind = 'S' JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = \
                     d.refobjsubid WHERE d.refobjid = {}::regclass AND d.deptype IN ('a', 'i') ORDER BY 1",
                    regclass(&t.name)
                ),
                &[],
            )
            .await?;
        for r in seqs {
            let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            let (column, kind, sequence) = (v(0), v(1), v(2));
            if kind == "a" {
                // The kept table's column no longer takes numbers from it (an archive writes
                // nothing, and its default would tie the sequence, and so the table, to it).
                renames.push(format!("ALTER TABLE {} ALTER COLUMN {} DROP DEFAULT", t.name.quoted(B), q(&column)));
                after.push(format!("ALTER SEQUENCE {sequence} OWNED BY {}.{}", t.name.quoted(B), q(&column)));
            } else {
                // The copy's own identity sequence goes on from the table's, and takes its
                // name; the kept table's gets a name of its own.
                let copy_sequence: String = db
                    .rows(
                        &format!("SELECT pg_get_serial_sequence({}, {})", regclass(&t.new), string_literal(&column)),
                        &[],
                    )
                    .await?
                    .first()
                    .and_then(|r| r.first().cloned().flatten())
                    .unwrap_or_default();
                let bare: String = db
                    .rows(
                        &format!(
                            "SELECT quote_ident(relname) FROM pg_class WHERE oid = '{}'::regclass",
                            sequence.replace('\'', "''")
                        ),
                        &[],
                    )
                    .await?
                    .first()
                    .and_then(|r| r.first().cloned().flatten())
                    .unwrap_or_default();
                let plain = bare.trim_matches('"').replace("\"\"", "\"");
                let kept =
                    super::shared::derived(B, &Name { schema: t.name.schema.clone(), name: plain.clone() }, "", "_old");
                renames.push(format!("ALTER SEQUENCE {sequence} RENAME TO {}", q(&kept.name)));
                after.push(format!(
                    "SELECT setval({}, s.last_value, s.is_called) FROM {} s",
                    string_literal(&copy_sequence),
                    kept.quoted(B)
                ));
                after.push(format!("ALTER SEQUENCE {copy_sequence} RENAME TO {}", q(&plain)));
            }
        }
        // Its user triggers (their text names the table: they go to the copy once it has the
        // name), and those of them that are disabled.
        let triggers = db
            .rows(
                &format!(
                    "SELECT pg_get_triggerdef(oid), tgname::text, tgenabled::text FROM pg_trigger WHERE tgrelid = {}::regclass \
                     AND NOT tgisinternal AND tgname NOT IN ({}, {}) ORDER BY tgname",
                    regclass(&t.name),
                    string_literal(&trigger),
                    string_literal(TRUNCATE_TRIGGER)
                ),
                &[],
            )
            .await?;
        for r in triggers {
            let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            after.push(v(0));
            // As it fired: never, in every session, or only where session_replication_role
            // is replica (a trigger is made as it fires by default: origin and local).
            let enable = match v(2).as_str() {
                "D" => "DISABLE",
                "A" => "ENABLE ALWAYS",
                "R" => "ENABLE REPLICA",
                _ => "",
            };
            if !enable.is_empty() {
                after.push(format!("ALTER TABLE {} {enable} TRIGGER {}", t.name.quoted(B), q(&v(1))));
            }
        }
        let identity = db
            .rows(
                &format!(
                    "SELECT c.relreplident::text, (SELECT quote_ident(ic.relname) FROM pg_index i JOIN pg_class ic ON ic.oid = \
                     i.indexrelid WHERE i.indrelid = c.oid AND i.indisreplident) FROM pg_class c WHERE c.oid = {}::regclass",
                    regclass(&t.name)
                ),
                &[],
            )
            .await?;
        match rows_first(&identity, 2).as_slice() {
            [Some(f), _] if f == "f" => after.push(format!("ALTER TABLE {} REPLICA IDENTITY FULL", t.name.quoted(B))),
            [Some(n), _] if n == "n" => {
                after.push(format!("ALTER TABLE {} REPLICA IDENTITY NOTHING", t.name.quoted(B)))
            }
            [Some(i), Some(index)] if i == "i" => {
                after.push(format!("ALTER TABLE {} REPLICA IDENTITY USING INDEX {index}", t.name.quoted(B)));
            }
            _ => {}
        }
        match carried(db, t).await {
            Ok((kept, copy)) => {
                renames.extend(kept);
                carry.extend(copy);
            }
            Err(e) => {
                let _ = db.exec("ROLLBACK").await;
                return Err(e);
            }
        }
        renames.push(format!("ALTER TABLE {} RENAME TO {}", t.name.quoted(B), q(&t.old.name)));
    }
    for t in &swap.tables {
        renames.push(format!("ALTER TABLE {} RENAME TO {}", t.new.quoted(B), q(&t.name.name)));
    }
    // After the indexes have their names (CLUSTER ON names one).
    after.extend(carry);
    statements.extend(renames);
    statements.extend(after);
    let result: Result<(), Error> = async {
        for s in &statements {
            db.exec(s).await?;
        }
        // Every table as it was, but the key columns' type: the catalog's own text of each,
        // compared with the plan's (a change another session made since the plan is caught
        // here too, before anything is committed).
        let mut retyped: Vec<String> =
            if plan.retypes() { swap.tables.iter().flat_map(|t| t.keys.clone()).collect() } else { Vec::new() };
        // `--set-default` changes the key column's default on purpose.
        if plan.sets_default {
            retyped.push(plan.column.clone());
        }
        for t in &swap.tables {
            let Some((_, before)) = plan.definitions.iter().find(|(n, _)| Name::from(n) == t.name) else { continue };
            let now = db.query(cat.definition(&t.name)).await?;
            // The foreign keys validated after the commit read NOT VALID until then.
            let now_valid: String = now
                .lines()
                .map(|l| if before.contains(l) { l.to_string() } else { l.strip_suffix(" NOT VALID").unwrap_or(l).to_string() })
                .collect::<Vec<_>>()
                .join("\n");
            if comparable(before, &retyped, B) != comparable(&now_valid, &retyped, B) {
                return Err(Error::new(
                    ErrorKind::Verification,
                    format!(
                        "the copy of {} would not be the table as it was beyond the key columns' type (another session \
                         changed it since the run began, or it has something the copy does not carry):\nbefore:\n{before}\n\
                         the copy:\n{now}",
                        t.name
                    ),
                ));
            }
        }
        journal.set_cursor(db, Some(&validate.join("\n")), usize::try_from(phase::SWAPPED).unwrap_or(0)).await?;
        journal.mirror(db, &swap.map).await?;
        db.exec("COMMIT").await?;
        Ok(())
    }
    .await;
    match result {
        Ok(()) => Ok(Some(validate)),
        // Another relation the swap's statements lock was held: nothing swapped, tried again.
        Err(e) if e.kind() == ErrorKind::LockTimeout => {
            let _ = db.exec("ROLLBACK").await;
            Ok(None)
        }
        Err(e) => {
            let _ = db.exec("ROLLBACK").await;
            Err(e)
        }
    }
}

/// What comes after the swap (each step safe to run again): the foreign keys validated (the
/// application's reads and writes go on), the key map filled from the mapping table, the
/// run's work tables dropped, and the kept tables too where asked.
async fn after_swap(db: &mut Db, swap: &Swap, plan: &Plan, validate: &[String], online: &Online) -> Result<(), Error> {
    let cat = db.catalog()?;
    for v in validate.iter().filter(|v| !v.is_empty()) {
        db.exec(v).await?;
    }
    let exists = async |db: &mut Db, n: &Name| -> Result<bool, Error> {
        Ok(db.count(&format!("SELECT count(*) FROM pg_class WHERE oid = to_regclass({})", regclass(n))).await? > 0)
    };
    // Once the mapping table is gone (a run stopped after it dropped it), the key map is full.
    if let Some(map) = plan.key_map.as_ref().map(Name::from)
        && exists(db, &swap.map).await?
    {
        let converted: Vec<&str> = plan.converted.keys().map(String::as_str).collect();
        let about = crate::plan::key_map_about(&swap.tables[0].name, &plan.column, &converted);
        if let Some(statements) = map_becomes_key_map(db, swap, &map).await? {
            // The mapping table holds every pair already: it becomes the key map, its second
            // index built sorted, instead of a copy of its rows inserted into two indexes
            // (1.2 s of a 3.8 s run of 300,000 keys).
            db.exec("BEGIN").await?;
            let result: Result<(), Error> = async {
                for s in statements.iter().chain(cat.key_map_create(&map, &plan.final_type, &about).iter()) {
                    db.exec(s).await?;
                }
                db.exec("COMMIT").await?;
                Ok(())
            }
            .await;
            if let Err(e) = result {
                let _ = db.exec("ROLLBACK").await;
                return Err(e);
            }
        } else {
            db.exec_all(&cat.key_map_create(&map, &plan.final_type, &about)).await?;
            db.exec(&format!(
                // In the new keys' order: one of its two indexes filled from left to right.
                "INSERT INTO {} (old_key, new_key) SELECT old::uuid, new::uuid FROM {} WHERE old::uuid <> new::uuid \
                 ORDER BY new ON CONFLICT (old_key) DO NOTHING",
                map.quoted(B),
                swap.map.quoted(B)
            ))
            .await?;
        }
    }
    // For tests: the key map is full, the work tables are still there.
    stop_after("PHASE", 6);
    let mut drops: Vec<String> = swap.tables.iter().map(|t| t.log.quoted(B)).collect();
    drops.push(swap.map.quoted(B));
    db.exec(&format!("DROP TABLE IF EXISTS {}", drops.join(", "))).await?;
    if online.drop_old {
        let kept: Vec<String> = swap.tables.iter().map(|t| t.old.quoted(B)).collect();
        db.exec(&format!("DROP TABLE IF EXISTS {}", kept.join(", "))).await?;
    }
    Ok(())
}

/// The statements that turn the mapping table into the key map `map` (the table
/// `Catalog::key_map_create` makes: `old_key uuid PRIMARY KEY, new_key uuid NOT NULL UNIQUE`,
/// with the names PostgreSQL would give its constraints), where that gives the very same table:
/// no key map there yet, both columns `uuid`, the same schema, and constraint names PostgreSQL
/// would not have had to shorten or number. `None` otherwise: its rows are copied.
async fn map_becomes_key_map(db: &mut Db, swap: &Swap, map: &Name) -> Result<Option<Vec<String>>, Error> {
    let (pkey, unique) = (format!("{}_pkey", map.name), format!("{}_new_key_key", map.name));
    if map.schema != swap.map.schema || unique.len() > 63 {
        return Ok(None);
    }
    // By the schema's name as it is (a cast of its text to regnamespace would fold it, or
    // refuse a space: a run stopped there after its swap, every time it was run again).
    let schema = map.schema.as_deref().map_or_else(|| "current_schema()".to_string(), string_literal);
    let rows = db
        .rows(
            &format!(
                "SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = {schema} \
                   AND c.relname IN ({}, {}, {}))::text, \
                 (SELECT string_agg(format_type(atttypid, atttypmod), ',' ORDER BY attnum) FROM pg_attribute \
                   WHERE attrelid = {m}::regclass AND attnum > 0 AND NOT attisdropped), \
                 (SELECT conname::text FROM pg_constraint WHERE conrelid = {m}::regclass AND contype = 'p')",
                string_literal(&map.name),
                string_literal(&pkey),
                string_literal(&unique),
                m = regclass(&swap.map)
            ),
            &[],
        )
        .await?;
    let row = rows_first(&rows, 3);
    let (taken, types, primary) = (row[0].as_deref(), row[1].as_deref(), row[2].clone());
    let (Some("0"), Some("uuid,uuid"), Some(primary)) = (taken, types, primary) else { return Ok(None) };
    let m = swap.map.quoted(B);
    Ok(Some(vec![
        format!("DELETE FROM {m} WHERE old = new"),
        format!("ALTER TABLE {m} RENAME COLUMN old TO old_key"),
        format!("ALTER TABLE {m} RENAME COLUMN new TO new_key"),
        format!("ALTER TABLE {m} RENAME CONSTRAINT {} TO {}", q(&primary), q(&pkey)),
        // The unique index of new keys made with the mapping table's primary key, if there.
        format!(
            "DO $combkey$ BEGIN IF to_regclass({idx}) IS NOT NULL THEN ALTER TABLE {m} ADD CONSTRAINT {u} UNIQUE USING \
             INDEX {i}; ELSE ALTER TABLE {m} ADD CONSTRAINT {u} UNIQUE (new_key); END IF; END $combkey$",
            idx = regclass(&map_new_index(swap)),
            u = q(&unique),
            i = q(&map_new_index(swap).name)
        ),
        format!("ALTER TABLE {m} RENAME TO {}", q(&map.name)),
    ]))
}

/// Removes what a run made before its swap: the triggers (in attempts: dropping one locks its
/// table), their functions, the copies, the logs and the mapping table. Safe to run again.
pub(super) async fn clean(
    db: &mut Db,
    swap: &Swap,
    lock_timeout_ms: u64,
    progress: &mut dyn crate::options::Progress,
) -> Result<(), Error> {
    let _ = db.exec("ROLLBACK").await;
    db.exec("BEGIN").await?;
    let result: Result<(), Error> = async {
        let mut present = Vec::new();
        for t in &swap.tables {
            if db.count(&format!("SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass({}) AND tgname = 'combkey_doctor_capture'", regclass(&t.name))).await? > 0 {
                present.push(t);
            }
        }
        if !present.is_empty() {
            let names: Vec<String> = present.iter().map(|t| t.name.quoted(B)).collect();
            let tables: Vec<Name> = present.iter().map(|t| t.name.clone()).collect();
            let lock = format!("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE", names.join(", "));
            lock_waiting_out_holders(db, &[lock], lock_timeout_ms, &tables, progress).await?;
        }
        for t in &swap.tables {
            let (trigger, function) = trigger_name(t);
            if present.iter().any(|p| p.name == t.name) {
                db.exec(&format!("DROP TRIGGER IF EXISTS {} ON {}", q(&trigger), t.name.quoted(B))).await?;
                db.exec(&format!("DROP TRIGGER IF EXISTS {TRUNCATE_TRIGGER} ON {}", t.name.quoted(B))).await?;
            }
            db.exec(&format!("DROP FUNCTION IF EXISTS {}()", function.quoted(B))).await?;
        }
        let mut drops: Vec<String> = swap.tables.iter().flat_map(|t| [t.new.quoted(B), t.log.quoted(B)]).collect();
        drops.push(swap.map.quoted(B));
        db.exec(&format!("DROP TABLE IF EXISTS {}", drops.join(", "))).await?;
        db.exec("COMMIT").await?;
        Ok(())
    }
    .await;
    if result.is_err() {
        let _ = db.exec("ROLLBACK").await;
    }
    result
}

/// Runs `plan` by copy and swap.
pub(super) async fn run(
    db: &mut Db,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<OnlineOutcome, Error> {
    let cat = db.catalog()?;
    let journal = Journal::new(cat, plan);
    journal.ensure(db, plan.table.schema.as_deref()).await?;
    // A run whose journal row a crash took (after its swap: the plan came from its copy on
    // the mapping table) goes on from its row put back.
    journal.restore_mirror(db, &super::shared::derived(B, &Name::from(&plan.table), "_", "_map")).await?;
    let state = journal.swap_state(db, plan).await?;
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
    let swap = Swap::of(db, plan).await?;
    let (mut at, cursor) = state.clone().unwrap_or((phase::START, None));
    if state.is_none() {
        let taken: Vec<String> = {
            let mut v = Vec::new();
            for n in swap.made() {
                if db.count(&format!("SELECT count(*) FROM pg_class WHERE oid = to_regclass({})", regclass(&n))).await?
                    > 0
                {
                    v.push(n.to_string());
                }
            }
            v
        };
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
    // The swap waited --swap-wait for a long transaction that holds the tables: removing what
    // the run made needs the same locks, so it stays, journaled, for the same command to go on
    // from once that transaction ends (or --abandon).
    let mut held_out = false;
    let result: Result<Vec<String>, Error> = async {
        if at < phase::MADE {
            progress.step(1, 5, "make the copies, the mapping table and the triggers that log changes");
            db.exec("BEGIN").await?;
            let names: Vec<String> = swap.tables.iter().map(|t| t.name.quoted(B)).collect();
            let tables: Vec<Name> = swap.tables.iter().map(|t| t.name.clone()).collect();
            let lock = format!("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE", names.join(", "));
            lock_waiting_out_holders(db, &[lock], plan.options.lock_timeout_ms, &tables, &mut *progress).await?;
            for s in make(db, &swap, plan).await? {
                db.exec(&s).await?;
            }
            journal.set_cursor(db, None, usize::try_from(phase::MADE).unwrap_or(0)).await?;
            journal.mirror(db, &swap.map).await?;
            db.exec("COMMIT").await?;
            stop_after("PHASE", phase::MADE);
            at = phase::MADE;
        }
        if at < phase::COPIED {
            progress.step(2, 5, &format!("copy the rows of {total} tables, keys converted"));
            copy(db, &swap, plan, &journal, &mut Pacing { throttle: &mut throttle, progress: &mut *progress, tally: &mut tally }).await?;
            at = phase::COPIED;
        }
        if at < phase::INDEXED {
            progress.step(3, 5, "build the copies' indexes");
            index(db, &swap, &journal).await?;
            at = phase::INDEXED;
        }
        if at < phase::SWAPPED {
            progress.step(4, 5, "apply the changes made meanwhile, then swap the tables");
            hold("BEFORE_SWAP").await;
            let mut tries = 0u32;
            let held = locked_by_swap(&swap);
            // Since when the swap waits for long transactions that hold its tables, what it said
            // of them last, and when.
            let mut waiting: Option<(Instant, String, Instant, bool, bool)> = None;
            let mut applied_so_far = 0usize;
            loop {
                // Rounds until what is left can be applied under the swap's lock.
                loop {
                    tally.out.paused += throttle.wait(db, progress).await?;
                    if backlog(db, &swap).await? <= SWAP_BACKLOG {
                        break;
                    }
                    // One snapshot for the round's statements (what a batch copies again and the log
                    // rows it removes are of the same moment: `apply_batch`).
                    db.exec("BEGIN ISOLATION LEVEL REPEATABLE READ").await?;
                    probe_joins(db).await?;
                    match apply(db, &swap, plan, Some(APPLY_BATCH), &mut tally.out.rechecked).await {
                        Ok(n) => applied_so_far += n,
                        Err(e) => {
                            let _ = db.exec("ROLLBACK").await;
                            return Err(e);
                        }
                    };
                    db.exec("COMMIT").await?;
                    tally.out.passes += 1;
                    progress.applied(applied_so_far, backlog(db, &swap).await?);
                }
                // A report's open transaction (or any long one) that holds a table: a lock request
                // now would wait behind it, and every write of the application behind the
                // request. The swap waits without one, and says for whom.
                if crate::methods::shared::yield_autovacuum(db, &held, &mut *progress).await? {
                    continue;
                }
                let holders = match db.catalog()?.lock_holders(&held, LONG_HOLD_MS) {
                    Some(q) => db.query(q).await?,
                    None => None,
                };
                if let Some(h) = holders {
                    let now = Instant::now();
                    let (since, said, at, said_kill, cancelled) =
                        waiting.get_or_insert_with(|| (now, String::new(), now, false, false));
                    if since.elapsed() >= online.swap_wait {
                        held_out = true;
                        break Err(Error::new(
                            ErrorKind::LockTimeout,
                            format!(
                                "the swap waited {:.0} s (--swap-wait) for {h}, in an open transaction; it never \
                                 queued for the lock, so the application's writes went on",
                                since.elapsed().as_secs_f64()
                            ),
                        )
                        .with_hint(
                            "; nothing was swapped and the application's tables are as they were; the copy is kept, \
                             its triggers still log the application's changes: run the same command again once that \
                             transaction ends (or with a longer --swap-wait) and it goes on from the copy, or \
                             --abandon to remove what the run made",
                        ));
                    }
                    // --kill-blockers-after: their statements cancelled, then (at twice the
                    // wait) their sessions ended, as pg_repack's --wait-timeout.
                    // A cancel is sent once (an idle transaction's session ignores it; the end
                    // comes at twice the wait).
                    if let Some(after) = online.kill_blockers_after
                        && since.elapsed() >= after
                        && (!*cancelled || since.elapsed() >= after * 2)
                    {
                        let end = since.elapsed() >= after * 2;
                        *cancelled = true;
                        if let Some(q) = db.catalog()?.end_holders(&held, LONG_HOLD_MS, end) {
                            let waited = since.elapsed();
                            let what = if end { "ended" } else { "cancelled the statements of" };
                            match db.query(q).await {
                                Ok(Some(who)) => progress.swap_waits(
                                    &format!(
                                        "{what} {who}, which held the tables past --kill-blockers-after {:.0} s",
                                        after.as_secs_f64()
                                    ),
                                    waited,
                                ),
                                Ok(None) => {}
                                Err(e) if !*said_kill => {
                                    *said_kill = true;
                                    progress.swap_waits(
                                        &format!("could not end the sessions that hold the tables ({e}); waiting for them"),
                                        waited,
                                    );
                                }
                                Err(_) => {}
                            }
                        }
                    }
                    // Said again when the sessions change (not their ages), and every 30 s.
                    let who = without_ages(&h);
                    if *said != who || at.elapsed() >= Duration::from_secs(30) {
                        progress.swap_waits(
                            &format!(
                                "the swap waits for {h}; it does not queue for the lock meanwhile, so the \
                                 application's writes go on (at most --swap-wait {:.0} s)",
                                online.swap_wait.as_secs_f64()
                            ),
                            since.elapsed(),
                        );
                        *said = who;
                        *at = now;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                // No long holder now: a later one is waited for (and ended) from its own start.
                waiting = None;
                match swap_once(db, &swap, plan, &journal, &mut tally.out.rechecked).await? {
                    Some(validate) => {
                        stop_after("PHASE", phase::SWAPPED);
                        break Ok(validate);
                    }
                    None if tries < online.max_retries => {
                        tries += 1;
                        tally.out.retries += 1;
                        tokio::time::sleep(Duration::from_millis(100 << tries.min(5))).await;
                    }
                    None => {
                        break Err(Error::new(
                            ErrorKind::LockTimeout,
                            format!(
                                "the swap did not get its tables' locks in {} tries (each waits at most --lock-timeout, \
                                 in attempts; other sessions held them)",
                                tries + 1
                            ),
                        ));
                    }
                }
            }
        } else {
            Ok(cursor.unwrap_or_default().lines().map(str::to_string).collect())
        }
    }
    .await;
    let validate = match result {
        Ok(v) => v,
        Err(e) if held_out => return Err(e.context("combkey doctor --online (copy and swap)")),
        Err(e) => {
            // Not swapped: the application never saw the copies. They go, with the triggers.
            let cleaned = clean(db, &swap, plan.options.lock_timeout_ms, &mut *progress).await;
            if cleaned.is_ok() {
                let _ = super::shared::drop_installed_functions(db, plan).await;
                let _ = journal.forget(db).await;
            }
            return Err(unchanged(e, cleaned));
        }
    };
    progress.step(5, 5, "validate the foreign keys, fill the key map, drop the work tables");
    after_swap(db, &swap, plan, &validate, online).await.map_err(|e| {
        e.context("combkey doctor --online (copy and swap)").with_hint(
            "; the tables are swapped (the application has the converted keys); what follows the swap did not finish: \
             run the same command again to finish it",
        )
    })?;
    journal.finish(db).await?;
    if !online.drop_old {
        tally.out.kept = swap.tables.iter().map(|t| t.old.shown(B)).collect();
    }
    tally.out.passes += 1;
    tally.out.converted = plan.converted.values().sum();
    Ok(tally.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_literals_quote_what_an_array_would_split() {
        let a = Stored::Text("017f22e2-79b0-7cc3-98c4-dc0c0c07398f".into());
        let b = Stored::Text("{A,\"b\\'}".into());
        assert_eq!(array_literal(&[&a, &b]), "'{\"017f22e2-79b0-7cc3-98c4-dc0c0c07398f\",\"{A,\\\"b\\\\''}\"}'");
    }

    #[test]
    fn copy_parts_map_every_key_column() {
        let t = SwapTable {
            name: Name { schema: Some("public".into()), name: "c".into() },
            new: Name { schema: Some("public".into()), name: "_c_new".into() },
            old: Name { schema: Some("public".into()), name: "_c_old".into() },
            log: Name { schema: Some("public".into()), name: "_c_log".into() },
            columns: ["n", "p1", "p2", "g"]
                .iter()
                .map(|c| crate::catalog::Column {
                    name: (*c).into(),
                    data_type: "uuid".into(),
                    nullable: true,
                    default: None,
                    auto_update: false,
                    generated: *c == "g",
                })
                .collect(),
            pk: vec!["n".into()],
            keys: vec!["p1".into(), "p2".into()],
        };
        let swap = Swap {
            tables: vec![t.clone()],
            map: Name { schema: Some("public".into()), name: "_p_map".into() },
            lock_wait_ms: 5000,
            server_keys: Default::default(),
        };
        let (exprs, names, joins) = copy_parts(&swap, &t);
        assert_eq!(names, "\"n\", \"p1\", \"p2\"", "a generated column is computed again");
        assert_eq!(exprs, "t.\"n\", m0.new, m1.new");
        assert_eq!(
            joins,
            "LEFT JOIN \"public\".\"_p_map\" m0 ON m0.old = t.\"p1\" LEFT JOIN \"public\".\"_p_map\" m1 ON m1.old = t.\"p2\""
        );
    }
}
