//! The plan of a migration, as data: ordered steps with their SQL, what each drops (with its
//! original definition, the database's own text) and what it restores. `--migration-sql`
//! prints it, `--apply` executes exactly it, a journal keeps it (MySQL/MariaDB, where DDL
//! cannot roll back), and unit tests inspect it without a database.
//!
//! Its parts: what is refused before anything changes ([`refuse`]), the steps ([`steps`]),
//! and the checks they run ([`checks`]).

use std::collections::BTreeMap;

use crate::catalog::{Catalog, Name, Retype, Rewrite};
use combkey::Backend;
use combkey::layouts::{KeyMigration, Layout};

pub(crate) mod checks;
mod model;
pub(crate) mod refuse;
mod steps;

pub use model::*;

pub(crate) use checks::orphan_count;
pub(crate) use steps::{fnv1a, guard_tag};

use crate::audit::{Audit, Kind, target};
use crate::error::Error;
use crate::options::{Options, RekeyInvalid};
use crate::schema::Schema;

/// Refuses, before anything changes, a key map the run could not make or fill: its schema
/// missing; a table of that name that is no key map (other columns), or a key map of another
/// table's keys; a new table a publication would publish.
fn check_key_map(
    cat: &dyn Catalog,
    facts: &crate::schema::KeyMapFacts,
    schema: &Schema,
    final_type: &str,
    lossy: &[&str],
) -> Result<(), Error> {
    let map = &facts.name;
    let shown = map.quoted(cat.backend());
    let why = if lossy.is_empty() {
        "--key-map asks for it".to_string()
    } else {
        format!("the new keys cannot hold every bit of the old ones ({})", lossy.join(", "))
    };
    if !facts.schema_exists {
        return Err(Error::refused(format!(
            "the key map {shown} ({why}) would go in {}, which does not exist: give --key-map a table in a schema that \
             exists. Nothing was changed",
            map.schema.as_deref().unwrap_or("the connection's schema")
        )));
    }
    if facts.exists() {
        let names: Vec<&str> = facts.columns.iter().map(|c| c.name.as_str()).collect();
        // SQLite's key map holds blobs whatever the key column declares (`key_map_create`).
        let made = if cat.backend() == Backend::Sqlite { "blob" } else { final_type };
        let key_type = |c: &crate::catalog::Column| {
            c.data_type == made || c.data_type == final_type || c.data_type == "uuid" || c.data_type == "binary(16)"
        };
        let shape = names == ["old_key", "new_key"] && facts.columns.iter().all(key_type);
        let mine = format!(" of {}.{} it converted", schema.table, schema.column.name);
        let owned = facts.about.as_deref().is_some_and(|a| a.contains("combkey doctor: ") && a.contains(&mine));
        if !shape {
            let cols: Vec<String> = facts.columns.iter().map(|c| format!("{} {}", c.name, c.data_type)).collect();
            return Err(Error::refused(format!(
                "{shown} exists and is no key map (its columns are {}; a key map has old_key and new_key, {made}): \
                 name another table with --key-map. Nothing was changed",
                cols.join(", ")
            )));
        }
        if facts.has_rows && !owned {
            return Err(Error::refused(format!(
                "{shown} holds rows already, and not a map of {}.{}'s keys made by combkey doctor ({}): its rows would \
                 mix with this run's. Name another table with --key-map, or empty this one. Nothing was changed",
                schema.table,
                schema.column.name,
                facts.about.as_deref().map_or("it says nothing of itself".into(), |a| format!("it says {a:?}"))
            )));
        }
    } else if !schema.new_tables_published.is_empty() {
        let ddl = cat.key_map_create(map, final_type, "").first().cloned().unwrap_or_default();
        return Err(Error::refused(format!(
            "the conversion keeps the old keys in a new table, {shown} ({why}), and publication {} would publish it: a \
             subscriber without that table stops applying every change. Create it on every subscriber and here first \
             ({ddl}), then run this again. Nothing was changed",
            schema.new_tables_published.join(", ")
        )));
    }
    Ok(())
}

/// The name a plan's `converted` gives the keys `--rekey-from column` re-keys.
pub(crate) fn rekey_conversion(column: &str) -> String {
    format!("v4 -> v7 (from {column})")
}

/// The new id of a key of verdict `kind`, if it changes.
pub(crate) fn new_id(id: &combkey::Comb, kind: Kind, options: &Options) -> Option<combkey::Comb> {
    let kind = match kind {
        Kind::Uncertain(l) if options.convert_uncertain => Kind::Layout(l),
        k => k,
    };
    match (target(kind, options.to), kind) {
        (Ok(Some(to)), Kind::Layout(from)) => KeyMigration::new(from, to).and_then(|m| m.convert(id)).ok(),
        _ => None,
    }
}

/// Whether converting a key of `kind` drops bits of it, so that only a key map could resolve
/// its old id (the v1 family, NewId's, Groupon's).
pub(crate) fn loses_bits(kind: Kind, options: &Options) -> bool {
    let kind = match kind {
        Kind::Uncertain(l) if options.convert_uncertain => Kind::Layout(l),
        k => k,
    };
    match (target(kind, options.to), kind) {
        (Ok(Some(to)), Kind::Layout(from)) => KeyMigration::new(from, to).is_ok_and(|m| !m.keeps_every_bit()),
        _ => false,
    }
}

/// The plan for the table described by `schema`, whose keys the audit classified (its
/// classifier and counts per verdict). Refuses, naming them, what it cannot keep as it was.
pub(crate) fn build(backend: Backend, schema: &Schema, audit: &Audit, options: &Options) -> Result<Plan, Error> {
    let cat: &dyn Catalog = crate::catalog::of(backend)?;
    let column = &schema.column;
    refuse::before_anything(schema, options)?;
    // `--set-default`: the key column's default becomes combkey's generator (where it makes
    // something else).
    let sets_default = options.set_default && !schema.default_makes_v7();
    if sets_default {
        if options.to == Layout::V6 {
            return Err(Error::usage(
                "--set-default makes the default combkey's v7 generator, whose keys sort before every v6 key: with --to \
                 v6 the writers make v6 keys, so give the column a v6 default of your own (or convert to v7)",
            ));
        }
        if cat.combkey_default(&schema.table, &schema.column, &schema.column.data_type).is_none() {
            return Err(Error::usage(format!(
                "--set-default: {} has no functions in SQL, so no default can make combkey's keys there; the \
                 application makes them (combkey's column types)",
                backend.name()
            )));
        }
        if schema.combkey_v7 == Some(false) {
            return Err(Error::refused(format!(
                "--set-default: a function named combkey_v7 (or combkey_v7_from) exists where {}'s default would call it, \
                 and it is not combkey's: the keys it makes would not be combkey's. Rename or drop it, or make the \
                 default yourself. Nothing was changed",
                schema.table
            )));
        }
        if schema.statement_binlog {
            return Err(Error::refused(
                "--set-default: the server writes a statement-based binary log (binlog_format = STATEMENT), and \
                 the trigger that stands in for the default calls the clock and RANDOM_BYTES: each replica would \
                 replay it and make other keys than the primary. Set binlog_format to ROW or MIXED, or leave the \
                 default to the application (run without --set-default). Nothing was changed",
            ));
        }
    }
    // `--keep-type`: a text key stays text (what reads it still reads text).
    let keep_type = options.keep_type;
    if keep_type {
        if !cat.values_change_form(column) {
            return Err(Error::usage(format!(
                "--keep-type: {}.{} is {}, which holds the ids themselves, not text: there is no text type to keep",
                schema.table, column.name, column.data_type
            )));
        }
        if options.set_default {
            return Err(Error::usage(
                "--keep-type with --set-default: combkey's database-side generator makes ids of the stored form's type, \
                 not text; give the text column a default of your own, or let the application make the keys",
            ));
        }
        if options.rekey_from.is_some() {
            return Err(Error::usage(
                "--keep-type with --rekey-from: not supported; re-key a uuid or BINARY(16) column",
            ));
        }
    }
    // Whatever reads the key column sees another type once its values change form (a text
    // key to 16 bytes: a type change, or SQLite's values rewritten in place).
    if cat.values_change_form(column) && !keep_type {
        refuse::readers(schema)?;
    }
    // The key column's type at the end, and the type changes that take it there (the
    // catalog refuses what its database's type change cannot keep: PostgreSQL's bytea, a
    // text default).
    let mut retypes: Vec<(Name, crate::catalog::Column, Retype)> = Vec::new();
    if cat.retype_needed(column) && !keep_type {
        // With --set-default the old default is dropped first (the run makes a new one), so it
        // refuses nothing.
        let mut key_column = column.clone();
        if sets_default {
            key_column.default = None;
        }
        retypes.push((
            schema.table.clone(),
            column.clone(),
            cat.retype(&schema.table, &key_column, &schema.definitions[&schema.table])?,
        ));
        for (fk, col) in schema.references.iter().zip(&schema.child_columns) {
            if retypes.iter().any(|(t, c, _)| *t == fk.child && c.name == col.name) {
                continue;
            }
            retypes.push((fk.child.clone(), col.clone(), cat.retype(&fk.child, col, &schema.definitions[&fk.child])?));
        }
    }
    let retype_needed = !retypes.is_empty();
    // What the DBA must know or do beyond this database's tables.
    let mut notes = Vec::new();
    if !schema.versioned.is_empty() {
        let names: Vec<String> = schema.versioned.iter().map(ToString::to_string).collect();
        if retype_needed {
            return Err(Error::refused(format!(
                "{} {} system-versioned: MariaDB changes no column type there unless the session sets \
                 system_versioning_alter_history = KEEP, and then the history keeps every old key as text in a column \
                 that holds 16 bytes. Keep the text keys (combkey's text-key types read them), or drop the versioning \
                 first (ALTER TABLE ... DROP SYSTEM VERSIONING, which drops the history)",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" }
            )));
        }
        notes.push(format!(
            "{} {} system-versioned: every row whose key changes adds a history row that keeps the old key, and \
             history rows of a referencing table keep old keys that no current row has (their joins through the \
             history still match the history of the parent); FOR SYSTEM_TIME queries see the old keys before the change",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" }
        ));
    }
    if !retype_needed && cat.values_change_form(column) && !keep_type {
        notes.push(format!(
            "{}.{} is declared {}: SQLite keeps the declaration, and the values become 16-byte blobs in place; code that \
             compares or binds the keys as text finds none of them afterwards (bind them as blobs: combkey's column \
             types for SQLite do)",
            schema.table, column.name, column.data_type
        ));
    }
    if retype_needed && !schema.published.is_empty() {
        let pubs: Vec<String> =
            schema.published.iter().map(|(t, p)| format!("{t} (publication {})", p.join(", "))).collect();
        notes.push(format!(
            "the column type changes here, and logical replication does not carry DDL: published are {}. The new key \
             values reach each subscriber as updates, as text; on each subscriber, change the same columns to {} \
             as well (ALTER TABLE ... ALTER COLUMN ... TYPE ... USING ...::{}) when this has run",
            pubs.join(", "),
            retypes.first().map_or("uuid", |r| r.2.final_type.as_str()),
            retypes.first().map_or("uuid", |r| r.2.final_type.as_str())
        ));
    }
    let final_type = retypes.first().map_or_else(|| column.data_type.clone(), |r| r.2.final_type.clone());
    let matviews = materialized_views(schema);

    // `--rekey-from`: its checks before anything else is counted.
    let rekey_name = options.rekey_from.as_ref().map(|c| rekey_conversion(c));
    if let Some(time_column) = &options.rekey_from {
        if options.to == Layout::V6 {
            return Err(Error::usage(
                "--rekey-from makes v7 keys (what combkey makes next, which sort after the re-keyed ones); it cannot \
                 be combined with --to v6",
            ));
        }
        if retype_needed {
            return Err(Error::refused(format!(
                "--rekey-from with a column type change ({} to {}): change the type first (the same command without \
                 --rekey-from), then re-key with it. Nothing was changed",
                column.data_type,
                retypes.first().map_or("", |r| r.2.final_type.as_str())
            )));
        }
        if !schema.unique_alone {
            let key = if schema.primary_key.len() > 1 {
                format!("unique only with the other columns of its primary key ({})", schema.primary_key.join(", "))
            } else {
                "not unique by itself (no primary key or unique index of it alone)".to_string()
            };
            return Err(Error::refused(format!(
                "--rekey-from {time_column}: {}.{} is {key}, so one id can stand for rows with different times, \
                 and every row holding an id would take one row's time (wrong keys for the others). Nothing was \
                 changed; re-key a column that is unique by itself (where its values are, add a UNIQUE constraint \
                 on {} first)",
                schema.table, column.name, column.name
            )));
        }
        if schema.rekey.as_ref().is_none_or(|(c, _)| c != time_column) {
            return Err(Error::usage(format!("--rekey-from {time_column}: the table's times were not read")));
        }
    }

    // Counts.
    let mut converted = BTreeMap::new();
    let mut kept: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut to_rekey = 0usize;
    for &(kind, n) in &audit.counts {
        if crate::rekey::rekeys_kind(kind, options) {
            to_rekey += n;
            continue;
        }
        let k = match kind {
            Kind::Uncertain(l) if options.convert_uncertain => Kind::Layout(l),
            k => k,
        };
        match (target(k, options.to), k) {
            (Ok(Some(to)), Kind::Layout(from)) => {
                *converted.entry(format!("{} -> {}", from.name(), to.name())).or_default() += n
            }
            (Ok(_), _) => {}
            (Err(why), k) => {
                let e = kept.entry(k.name().to_string()).or_insert((0, why.to_string()));
                e.0 += n;
            }
        }
    }
    if let (Some(name), Some((time_column, invalid))) = (&rekey_name, &schema.rekey) {
        if invalid.total() > 0 && options.rekey_invalid == RekeyInvalid::Refuse {
            let kinds: Vec<String> = invalid.kinds().iter().map(|(t, n)| format!("{n} {}", t.reason())).collect();
            return Err(Error::refused(format!(
                "--rekey-from {time_column}: {} rows to re-key have no time a v7 key can carry ({}; their keys: {}). \
                 Nothing was changed; fix their {time_column}, or keep their v4 keys (--rekey-invalid keep)",
                invalid.total(),
                kinds.join(", "),
                invalid.examples.join(", ")
            )));
        }
        for (t, n) in invalid.kinds() {
            kept.insert(
                format!("v4 ({time_column} {})", t.reason()),
                (n, "no time to make a v7 key from: kept as they are (--rekey-invalid keep)".to_string()),
            );
        }
        if invalid.valid > 0 {
            converted.insert(name.clone(), invalid.valid);
        }
        // Keys of those verdicts that are no version-4 key (a v7 key whose time the audit
        // finds implausible, a key of another version): they stay.
        let other = to_rekey.saturating_sub(invalid.valid + invalid.total());
        if other > 0 {
            kept.insert(
                "not v4".into(),
                (other, "no version-4 key and no known layout: --rekey-from re-keys v4 keys only".into()),
            );
        }
    }
    if retype_needed {
        let same = audit.total() - converted.values().sum::<usize>();
        if same > 0 {
            converted.insert("same id, new column type".into(), same);
        }
    }
    // Conversions that drop bits of the old keys: two old keys may become one (refused, named),
    // and the old keys cannot be computed from the new ones, so a table keeps them.
    let lossy: Vec<&str> = converted
        .keys()
        .filter(|k| k.parse::<KeyMigration>().is_ok_and(|m| !m.keeps_every_bit()) || Some(*k) == rekey_name.as_ref())
        .map(String::as_str)
        .collect();
    if schema.collisions.0 > 0 {
        return Err(Error::refused(format!(
            "{} keys of {}.{} would become the same key as another ({}): keys of a layout that differ only in bits \
             its conversion drops{}, keys of two layouts that hold the same bits (a v1 key and the v6 form of it), \
             a key and the key its conversion makes, or (--rekey-from) keys of rows of one microsecond that end in \
             the same 62 bits. Nothing was changed; change or remove one key of each pair first",
            schema.collisions.0,
            schema.table,
            column.name,
            schema.collisions.1.join("; "),
            if lossy.is_empty() { String::new() } else { format!(" ({})", lossy.join(", ")) }
        )));
    }
    let key_map = match &schema.key_map {
        Some(facts) if !lossy.is_empty() || options.key_map.is_some() => {
            check_key_map(cat, facts, schema, &final_type, &lossy)?;
            Some(TableName::from(&facts.name))
        }
        _ => None,
    };

    // What changes, per table.
    let mut rewrites: Vec<Rewrite> = vec![Rewrite {
        table: schema.table.clone(),
        columns: vec![column.name.clone()],
        keep: schema.auto_update.get(&schema.table).cloned().unwrap_or_default(),
    }];
    for (fk, col) in schema.references.iter().zip(&schema.child_columns) {
        match rewrites.iter_mut().find(|r| r.table == fk.child) {
            Some(r) if r.columns.contains(&col.name) => {}
            Some(r) => r.columns.push(col.name.clone()),
            None => rewrites.push(Rewrite {
                table: fk.child.clone(),
                columns: vec![col.name.clone()],
                keep: schema.auto_update.get(&fk.child).cloned().unwrap_or_default(),
            }),
        }
    }
    let references: Vec<Reference> = schema
        .references
        .iter()
        .map(|fk| Reference {
            name: fk.name.clone(),
            child: (&fk.child).into(),
            child_columns: fk.child_columns.clone(),
            parent_columns: fk.parent_columns.clone(),
            definition: fk.definition.clone(),
        })
        .collect();
    if !matviews.is_empty() && !converted.is_empty() {
        notes.push(format!(
            "materialized views hold the keys as they were until refreshed: {}. --apply refreshes them in its \
             transaction; after --apply --online, refresh them yourself (REFRESH MATERIALIZED VIEW CONCURRENTLY \
             where one has a unique index, which keeps its readers going)",
            matviews.join(", ")
        ));
    }
    let mut plan = Plan {
        backend: backend.name().into(),
        table: (&schema.table).into(),
        column: column.name.clone(),
        column_type: column.data_type.clone(),
        final_type,
        options: options.clone(),
        classifier: audit.classifier.clone(),
        converted,
        kept,
        rewrites: rewrites
            .iter()
            .map(|r| RewriteTarget { table: (&r.table).into(), columns: r.columns.clone(), keep: r.keep.clone() })
            .collect(),
        references,
        definitions: schema.definitions.iter().map(|(n, d)| (n.into(), d.clone())).collect(),
        unindexed: schema.unindexed.iter().map(|(n, c)| (n.into(), c.clone())).collect(),
        steps: Vec::new(),
        notes,
        key_map,
        sets_default,
        installs_functions: sets_default && !schema.combkey_functions,
    };
    if plan.is_empty() {
        // Nothing to convert, but a run stopped after its commit left the index it built for
        // its foreign key checks: dropping it is all there is to do.
        let drops = steps::leftover_drops(cat, schema);
        if !drops.is_empty() {
            let names: Vec<&str> = schema.leftover_indexes.iter().map(|(_, n)| n.as_str()).collect();
            plan.notes.push(format!(
                "a stopped run left the index it built for its foreign key checks ({}): --apply drops it",
                names.join(", ")
            ));
            let session = cat.session(options.lock_timeout_ms);
            plan.steps.push(Step::new(
                StepKind::Session,
                format!("session: waits for locks end after {} ms", options.lock_timeout_ms),
                session,
            ));
            plan.steps.extend(drops);
        }
        return Ok(plan);
    }

    plan.steps = steps::steps(cat, &plan, schema, &retypes, &rewrites, options);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::catalog::{Column, ForeignKey, Name, Trigger};
    use combkey::layouts::Layout;

    use super::*;
    use crate::audit::{Classifier, Kind};
    use crate::options::{Inherited, Triggers};

    fn name(schema: &str, t: &str) -> Name {
        Name { schema: Some(schema.into()), name: t.into() }
    }

    fn column(name: &str, ty: &str) -> Column {
        Column {
            name: name.into(),
            data_type: ty.into(),
            nullable: false,
            default: None,
            auto_update: false,
            generated: false,
        }
    }

    /// A parent keyed by `id` of type `ty`, referenced by `child.parent_id` (with `tenant`).
    fn schema(ty: &str, show_create: &str) -> Schema {
        let parent = name("shop", "orders");
        let child = name("other", "lines");
        let fk = ForeignKey {
            name: "lines_fk".into(),
            child: child.clone(),
            child_columns: vec!["parent_id".into(), "tenant".into()],
            parent: parent.clone(),
            parent_columns: vec!["id".into(), "tenant".into()],
            definition:
                "CONSTRAINT `lines_fk` FOREIGN KEY (`parent_id`, `tenant`) REFERENCES `shop`.`orders` (`id`, `tenant`)"
                    .into(),
            on_update: "NO ACTION".into(),
            comment: None,
        };
        let mut definitions = BTreeMap::new();
        definitions.insert(parent.clone(), show_create.replace("`k`", "`id`"));
        definitions.insert(child.clone(), show_create.replace("`k`", "`parent_id`"));
        Schema {
            table: parent,
            column: column("id", ty),
            primary_key: vec!["id".into()],
            unique_alone: true,
            references: vec![fk],
            child_columns: vec![column("parent_id", ty)],
            triggers: Vec::new(),
            checks: Vec::new(),
            inheritors: Vec::new(),
            auto_update: BTreeMap::new(),
            unindexed: vec![(child, vec!["parent_id".into(), "tenant".into()])],
            leftover_indexes: Vec::new(),
            definitions,
            computed: Vec::new(),
            views: Vec::new(),
            rules: Vec::new(),
            chained: Vec::new(),
            orphans: Vec::new(),
            same_id: (0, Vec::new()),
            collisions: (0, Vec::new()),
            key_map: None,
            rekey: None,
            time_columns: Vec::new(),
            new_tables_published: Vec::new(),
            statement_binlog: false,
            combkey_v7: None,
            combkey_functions: false,
            row_security: Vec::new(),
            partition_of: None,
            partitioned: false,
            versioned: Vec::new(),
            published: Vec::new(),
            subscribed: Vec::new(),
            no_replica_identity: Vec::new(),
            replica: None,
        }
    }

    /// What the audit would say of keys with these verdicts.
    fn audit_of(c: &Classifier, kinds: &[Kind]) -> Audit {
        let mut counts: Vec<(Kind, usize)> = Vec::new();
        for k in kinds {
            match counts.iter_mut().find(|(x, _)| x == k) {
                Some((_, n)) => *n += 1,
                None => counts.push((*k, 1)),
            }
        }
        Audit {
            classifier: c.clone(),
            counts,
            layouts: BTreeMap::new(),
            uncertain: 0,
            evidence: Vec::new(),
            time_order: None,
        }
    }

    fn kinds() -> (Classifier, Vec<Kind>) {
        (Classifier { now_ms: 0, rules: Vec::new(), assumed: None }, vec![Kind::Layout(Layout::RtCombSql); 10])
    }

    fn kinds_of(plan: &Plan) -> Vec<StepKind> {
        plan.steps.iter().map(|s| s.kind).collect()
    }

    #[test]
    fn postgres_values_only_is_one_transaction_that_drops_no_foreign_key() {
        let (c, k) = kinds();
        let plan = build(Backend::Postgres, &schema("uuid", ""), &audit_of(&c, &k), &Options::default()).unwrap();
        assert!(!plan.journaled() && !plan.retypes());
        assert_eq!(plan.converted.get("rtcomb-sql -> v7"), Some(&10));
        assert_eq!(
            kinds_of(&plan),
            [
                StepKind::Session,
                StepKind::TemporaryIndex,
                StepKind::Begin,
                StepKind::Lock,
                StepKind::Map,
                StepKind::NewKeysFree,
                StepKind::Rewrite,
                StepKind::Verify,
                StepKind::Commit,
                StepKind::TemporaryIndex,
                StepKind::CompareDefinitions
            ]
        );
        // Every table locked against other sessions' writes first, all in one statement (they
        // wait for the run instead of failing it): readers go on.
        assert_eq!(
            plan.steps[3].sql,
            ["LOCK TABLE \"shop\".\"orders\", \"other\".\"lines\" IN SHARE ROW EXCLUSIVE MODE"]
        );
        assert!(plan.steps[3].in_transaction);
        // The index for the unindexed referencing column: built before the transaction
        // without blocking writers, dropped after the commit.
        assert!(!plan.steps[1].in_transaction && !plan.steps[9].in_transaction);
        assert!(plan.steps[1].sql[0].starts_with("DROP INDEX CONCURRENTLY IF EXISTS \"other\".\"combkey_doctor_fk_"));
        assert!(plan.steps[1].sql[1].starts_with("CREATE INDEX CONCURRENTLY \"combkey_doctor_fk_"));
        assert!(plan.steps[1].sql[1].ends_with("ON \"other\".\"lines\" (\"parent_id\", \"tenant\")"));
        assert_eq!(plan.steps[9].sql, plan.steps[1].sql[..1]);
        assert!(plan.steps.iter().all(|s| s.drops.is_none()), "nothing dropped");
        let rewrite = &plan.steps[6].sql;
        assert_eq!(plan.steps[6].kind, StepKind::Rewrite);
        assert_eq!(rewrite.len(), 1, "parent and child in one statement: {rewrite:?}");
        assert!(rewrite[0].contains("UPDATE \"shop\".\"orders\"") && rewrite[0].contains("UPDATE \"other\".\"lines\""));
        assert!(plan.steps[0].sql[0].contains("lock_timeout = '5000ms'"));
    }

    /// An online type change breaks an application that binds text at the swap: refused
    /// without --app-ready-for-new-type, and under a sql_mode that is not strict whatever is
    /// given (its inserts would store cut keys); a plan that keeps the type is not concerned.
    #[test]
    fn an_online_type_change_needs_the_application_ready_and_a_strict_sql_mode() {
        use crate::options::Online;
        let (c, k) = kinds();
        let show = "CREATE TABLE `x` (\n  `k` char(36) NOT NULL,\n  PRIMARY KEY (`k`)\n)";
        let plan = build(Backend::MySql, &schema("char(36)", show), &audit_of(&c, &k), &Options::default()).unwrap();
        assert!(plan.retypes());
        let strict = Some("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION");
        let e = refuse::online_type_change(&plan, &Online::default(), strict).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Refused);
        for part in ["char(36) to binary(16)", "1406", "--keep-type", "--app-ready-for-new-type", "Nothing was changed"]
        {
            assert!(e.to_string().contains(part), "{part}: {e}");
        }
        let ready = Online::default().with_app_ready_for_new_type(true);
        assert!(refuse::online_type_change(&plan, &ready, strict).is_ok());
        for loose in ["NO_ENGINE_SUBSTITUTION", ""] {
            let e = refuse::online_type_change(&plan, &ready, Some(loose)).unwrap_err();
            assert!(
                e.to_string().contains("sql_mode is not strict") && e.to_string().contains("cut to 16 bytes"),
                "{e}"
            );
        }
        assert!(refuse::strict("STRICT_ALL_TABLES") && !refuse::strict("TRADITIONALX"));
        let pg = build(Backend::Postgres, &schema("text", ""), &audit_of(&c, &k), &Options::default()).unwrap();
        assert!(pg.retypes());
        let e = refuse::online_type_change(&pg, &Online::default(), None).unwrap_err();
        assert!(e.to_string().contains("uuid = text"), "{e}");
    }

    /// A stopped run goes on with its journal's plan: a command with other choices is refused
    /// naming them (they were ignored, exit 0); another lock timeout is not a choice of the plan.
    #[test]
    fn a_stopped_run_is_not_resumed_with_other_choices() {
        let (c, k) = kinds();
        let plan = build(Backend::Postgres, &schema("uuid", ""), &audit_of(&c, &k), &Options::default()).unwrap();
        assert!(refuse::resumed_with(&plan, &Options::default()).is_ok());
        assert!(refuse::resumed_with(&plan, &Options::default().with_lock_timeout_ms(100)).is_ok());
        let e = refuse::resumed_with(&plan, &Options::default().with_key_map(Some("km".into()))).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Refused);
        assert!(e.to_string().contains("no --key-map (the stopped run) against --key-map km (this command)"), "{e}");
        let e = refuse::resumed_with(&plan, &Options::default().with_set_default(true)).unwrap_err();
        assert!(e.to_string().contains("no --set-default (the stopped run) against --set-default"), "{e}");
        assert!(e.to_string().contains("Nothing was changed"), "{e}");
        assert!(e.to_string().contains("the choices it began with (none of these flags)"), "{e}");
        // The stopped run's own choices, as flags to give again.
        let with = Options::default().with_key_map(Some("km".into())).with_set_default(true);
        let plan = build(Backend::Postgres, &schema("uuid", ""), &audit_of(&c, &k), &with).unwrap();
        let e = refuse::resumed_with(&plan, &Options::default()).unwrap_err();
        assert!(e.to_string().contains("the choices it began with (--key-map km --set-default)"), "{e}");
    }

    #[test]
    fn mysql_type_change_is_journaled_guarded_and_names_what_it_drops() {
        let (c, k) = kinds();
        let show = "CREATE TABLE `x` (\n  `k` char(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the id',\n  PRIMARY KEY (`k`)\n)";
        let plan = build(Backend::MySql, &schema("char(36)", show), &audit_of(&c, &k), &Options::default()).unwrap();
        assert!(plan.journaled() && plan.retypes());
        assert_eq!(plan.final_type, "binary(16)");
        let k = kinds_of(&plan);
        let at = |kind| k.iter().position(|x| *x == kind).unwrap();
        // Guards before the foreign key goes; the key comes back before they go.
        assert!(at(StepKind::Journal) < at(StepKind::Guard));
        assert!(at(StepKind::Guard) < at(StepKind::DropForeignKey));
        assert!(at(StepKind::DropForeignKey) < at(StepKind::Rewrite));
        assert!(at(StepKind::Rewrite) < at(StepKind::AddForeignKey));
        assert!(at(StepKind::AddForeignKey) < at(StepKind::Unguard));
        let drop = plan.steps.iter().find(|s| s.kind == StepKind::DropForeignKey).unwrap();
        assert_eq!(drop.drops.as_ref().unwrap().definition, plan.references[0].definition, "the catalog's own text");
        let add = plan.steps.iter().find(|s| s.kind == StepKind::AddForeignKey).unwrap();
        assert_eq!(
            add.sql,
            [
                "ALTER TABLE `other`.`lines` ADD CONSTRAINT `lines_fk` FOREIGN KEY (`parent_id`, `tenant`) REFERENCES `shop`.`orders` (`id`, `tenant`)"
            ]
        );
        let retypes: Vec<&String> =
            plan.steps.iter().filter(|s| s.kind == StepKind::Retype).flat_map(|s| &s.sql).collect();
        assert_eq!(
            retypes[0], "ALTER TABLE `shop`.`orders` MODIFY COLUMN `id` varbinary(64) NOT NULL COMMENT 'the id'",
            "attributes kept, the text charset gone"
        );
        assert!(retypes.iter().any(|s| s.ends_with("`id` binary(16) NOT NULL COMMENT 'the id'")));
        // Every step that can be half done says how to tell it is done.
        assert!(
            plan.steps
                .iter()
                .filter(|s| matches!(s.kind, StepKind::Retype | StepKind::DropForeignKey | StepKind::AddForeignKey))
                .all(|s| s.skip.is_some())
        );
        // The plan survives the journal.
        let back: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(back, plan);
    }

    #[test]
    fn what_cannot_be_kept_is_refused_by_name() {
        let (c, k) = kinds();
        let mut s = schema("uuid", "");
        s.triggers.push(Trigger {
            table: s.table.clone(),
            name: "audit_orders".into(),
            events: "AFTER UPDATE".into(),
            definition: String::new(),
        });
        let e = build(Backend::Postgres, &s, &audit_of(&c, &k), &Options::default()).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Refused);
        assert!(e.to_string().contains("audit_orders on shop.orders (AFTER UPDATE)"), "{e}");
        let fire = Options { triggers: Triggers::Fire, ..Options::default() };
        assert!(build(Backend::Postgres, &s, &audit_of(&c, &k), &fire).is_ok());

        let mut s = schema("uuid", "");
        s.inheritors.push(name("shop", "orders_2025"));
        let e = build(Backend::Postgres, &s, &audit_of(&c, &k), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("shop.orders_2025") && e.to_string().contains("--inherited"), "{e}");
        let only = Options { inherited: Inherited::Only, ..Options::default() };
        let plan = build(Backend::Postgres, &s, &audit_of(&c, &k), &only).unwrap();
        assert!(plan.steps.iter().any(|st| st.sql.iter().any(|q| q.contains("UPDATE ONLY"))));

        let mut s = schema("text", "");
        s.column.default = Some("gen_random_uuid()::text".into());
        let e = build(Backend::Postgres, &s, &audit_of(&c, &k), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("DEFAULT gen_random_uuid()::text"), "{e}");

        // A generated column computed from a text key refuses the type change; a plan that
        // only rewrites values lets the database compute it again.
        let mut s = schema("char(36)", "CREATE TABLE `orders` (`k` char(36) NOT NULL)");
        s.computed.push((s.table.clone(), "short_id".into(), Some("left(`id`,8)".into())));
        let e = build(Backend::MySql, &s, &audit_of(&c, &k), &Options::default()).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Refused);
        assert!(e.to_string().contains("shop.orders.short_id AS (left(`id`,8))"), "{e}");
        s.column.data_type = "binary(16)".into();
        s.child_columns[0].data_type = "binary(16)".into();
        assert!(build(Backend::MySql, &s, &audit_of(&c, &k), &Options::default()).is_ok());
    }

    #[test]
    fn an_expression_names_a_column_as_a_whole_word() {
        use crate::schema::mentions;
        assert!(mentions("left(`id`,8)", "id"));
        assert!(mentions("substr(\"Id\"::text, 1, 8)", "id"));
        assert!(mentions("hex(id)", "ID"));
        assert!(!mentions("left(`order_id`,8)", "id"));
        assert!(!mentions("left(`idx`,8)", "id"));
        assert!(!mentions("tenant || 'x'", "id"));
        assert!(mentions("concat(tenant_id, id)", "id"));
    }

    #[test]
    fn uncertain_and_random_keys_stay() {
        let c = Classifier { now_ms: 0, rules: Vec::new(), assumed: None };
        let k = vec![Kind::Random, Kind::Uncertain(Layout::RtCombSql), Kind::Layout(Layout::V7)];
        let plan = build(Backend::Postgres, &schema("uuid", ""), &audit_of(&c, &k), &Options::default()).unwrap();
        assert!(plan.is_empty(), "{:?}", plan.converted);
        assert_eq!(plan.kept.get("v4").map(|k| k.0), Some(1));
        assert_eq!(plan.kept.get("rtcomb-sql").map(|k| k.0), Some(1));
        let convert = Options { convert_uncertain: true, ..Options::default() };
        let plan = build(Backend::Postgres, &schema("uuid", ""), &audit_of(&c, &k), &convert).unwrap();
        assert_eq!(plan.converted.get("rtcomb-sql -> v7"), Some(&1));
    }
}
