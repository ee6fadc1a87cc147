//! The steps of a plan, in order: one transaction where the database's DDL rolls back (or only
//! values change), a journaled sequence where it does not (MySQL/MariaDB).

use crate::catalog::{Catalog, Column, ForeignKey, Name, Retype, Rewrite};
use crate::options::{Inherited, Options};
use crate::plan::checks::orphan_count;
use crate::plan::model::{Object, Plan, Skip, Step, StepKind, key_map_about, materialized_views};
use crate::schema::Schema;

/// The steps of `plan` (its counts and targets made), for the table `schema` describes.
pub(crate) fn steps(
    cat: &dyn Catalog,
    plan: &Plan,
    schema: &Schema,
    retypes: &[(Name, Column, Retype)],
    rewrites: &[Rewrite],
    options: &Options,
) -> Vec<Step> {
    let backend = cat.backend();
    let _ = &schema.definitions;
    let column = &schema.column;
    let only = options.inherited == Inherited::Only;
    let retype_needed = !retypes.is_empty();
    let mut steps = Vec::new();
    let mut session = cat.session(options.lock_timeout_ms);
    session.extend(cat.pass_guard());
    steps.push(Step::new(
        StepKind::Session,
        format!("session: waits for locks end after {} ms", options.lock_timeout_ms),
        session,
    ));
    let journaled = retype_needed && !cat.transactional_ddl();
    let tag = guard_tag(plan);
    let tables: Vec<Name> = rewrites.iter().map(|r| r.table.clone()).collect();
    let map_step =
        Step::new(StepKind::Map, "map the old key values to the new ones", cat.map_table(&column.data_type)).inside();
    let rewrite_step = Step::new(
        StepKind::Rewrite,
        format!("change the keys in {}", tables.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
        cat.rewrite_from_map(rewrites, only),
    )
    .inside();
    let mut verify: Vec<String> = plan.references.iter().map(|r| orphan_count(backend, r, &schema.table)).collect();
    // After a type change's values are rewritten, every one is 16 bytes.
    let sixteen: Vec<String> = if retype_needed {
        rewrites.iter().flat_map(|r| r.columns.iter().filter_map(|c| cat.not_sixteen_bytes(&r.table, c))).collect()
    } else {
        Vec::new()
    };
    let fk_check = cat.foreign_key_check();
    let fk_off = cat.fk_checks_off();
    // The table of old and new keys: made in the transaction where DDL rolls back with it
    // (PostgreSQL, SQLite), else before it (MySQL/MariaDB: a run stopped before its commit
    // leaves it empty, and the next run fills it).
    let key_map_step = plan.key_map.as_ref().map(|m| {
        let map = Name::from(m);
        let converted: Vec<&str> = plan.converted.keys().map(String::as_str).collect();
        let about = key_map_about(&schema.table, &column.name, &converted);
        let step = Step::new(
            StepKind::KeyMap,
            format!("keep each converted key's old and new value in {map}"),
            cat.key_map_create(&map, &plan.final_type, &about),
        );
        if cat.transactional_ddl() { step.inside() } else { step }
    });
    // `--set-default`: the key column's default becomes combkey's generator, in the run's
    // transaction where DDL rolls back with it (PostgreSQL), else after the keys changed
    // (MySQL/MariaDB: each statement is safe to run again, so a re-run finishes it).
    let set_default = plan.sets_default.then(|| {
        let sql = cat.combkey_default(&schema.table, column, &plan.final_type).unwrap_or_default();
        let step = Step::new(
            StepKind::SetDefault,
            format!("make the default of {}.{} combkey's generator (combkey_v7())", schema.table, column.name),
            sql,
        );
        if cat.transactional_ddl() { step.inside() } else { step }
    });
    let drop_default = (plan.sets_default && retype_needed && column.default.is_some() && cat.transactional_ddl())
        .then(|| {
            Step::new(
                StepKind::DropDefault,
                format!("drop the old default of {}.{} (the run makes a new one)", schema.table, column.name),
                vec![cat.drop_default(&schema.table, column)],
            )
            .inside()
        });
    let drop_fk = |fk: &ForeignKey| -> Option<Step> {
        let sql = cat.drop_foreign_key(fk)?;
        let mut s =
            Step::new(StepKind::DropForeignKey, format!("drop foreign key {} of {}", fk.name, fk.child), vec![sql]);
        s.drops = Some(Object {
            kind: "foreign key".into(),
            name: fk.name.clone(),
            table: (&fk.child).into(),
            definition: fk.definition.clone(),
        });
        s.skip = Some(Skip::ForeignKeyAbsent {
            table: (&fk.child).into(),
            name: fk.name.clone(),
            column: column.name.clone(),
        });
        Some(s)
    };
    let add_fk = |fk: &ForeignKey| -> Option<Step> {
        let child_definition = schema.definitions.get(&fk.child).map_or("", String::as_str);
        let sqls = cat.add_foreign_key(fk, child_definition)?;
        let mut s =
            Step::new(StepKind::AddForeignKey, format!("add back foreign key {} of {}", fk.name, fk.child), sqls);
        s.restores = Some(Object {
            kind: "foreign key".into(),
            name: fk.name.clone(),
            table: (&fk.child).into(),
            definition: fk.definition.clone(),
        });
        s.skip = Some(Skip::ForeignKeyPresent {
            table: (&fk.child).into(),
            name: fk.name.clone(),
            column: column.name.clone(),
        });
        Some(s)
    };
    let retype_step = |(t, c, r): &(Name, crate::catalog::Column, Retype), before: bool| -> Option<Step> {
        let (sql, ty) = if before {
            (r.before.clone()?, r.between_type.clone()?)
        } else {
            (r.after.clone()?, r.final_type.clone())
        };
        let mut s = Step::new(StepKind::Retype, format!("change {t}.{} to {ty}", c.name), vec![sql]);
        s.skip = Some(Skip::ColumnType { table: t.into(), column: c.name.clone(), data_type: ty });
        Some(s)
    };
    if journaled {
        // MySQL/MariaDB: DDL commits on its own. A journal in the database keeps the plan and the
        // step reached, so a re-run after a crash at any step finishes it; triggers refuse other
        // sessions' writes while the foreign keys are dropped, so none can orphan a row.
        // Rows that already reference no parent (loaded with foreign key checks off, say)
        // would make the foreign keys impossible to add back at the end: refuse before
        // anything changes, not half-way with the keys dropped.
        if !verify.is_empty() {
            steps.push(Step::new(StepKind::Verify, "check: no orphaned row before anything changes", verify.clone()));
        }
        // The key map first: made before anything changes (an empty table, if what follows
        // fails), and made again, where it went, when a stopped run goes on.
        steps.extend(key_map_step.clone());
        steps.push(Step::new(StepKind::Journal, "write the plan to the journal", Vec::new()));
        for t in &tables {
            if let Some((create, _)) = cat.write_guard(t, &guard_name(&tag, t)) {
                steps.push(Step::new(StepKind::Guard, format!("refuse other sessions' writes to {t}"), create));
            }
        }
        steps.extend(schema.references.iter().filter_map(drop_fk));
        steps.extend(retypes.iter().filter_map(|r| retype_step(r, true)));
        if let Some((off, _)) = &fk_off {
            steps.push(Step::new(StepKind::ChecksOff, "foreign key checks off for this session", off.clone()));
        }
        steps.push(Step::new(StepKind::Begin, "begin", vec![cat.begin()]));
        steps.push(map_step);
        steps.push(rewrite_step);
        steps.push(Step::new(StepKind::Verify, "check: every key value is 16 bytes now", sixteen.clone()).inside());
        steps.push(Step::new(StepKind::Commit, "commit", vec!["COMMIT".into()]));
        if let Some((_, on)) = &fk_off {
            steps.push(Step::new(StepKind::ChecksOn, "foreign key checks on", on.clone()));
        }
        steps.extend(retypes.iter().filter_map(|r| retype_step(r, false)));
        steps.extend(schema.references.iter().filter_map(add_fk));
        // The new default before the guards go: a writer that leaves the key to the default is
        // refused while the column has none, never failed by a missing default.
        steps.extend(set_default);
        for t in &tables {
            if let Some((_, drop)) = cat.write_guard(t, &guard_name(&tag, t)) {
                steps.push(Step::new(StepKind::Unguard, format!("writes to {t} allowed again"), drop));
            }
        }
        steps.push(Step::new(StepKind::Verify, "check: no orphaned row", verify));
        steps.push(Step::new(StepKind::CompareDefinitions, "check: every definition as it was", Vec::new()));
        steps.push(Step::new(StepKind::Done, "record the end in the journal", Vec::new()));
    } else {
        // One transaction: it commits whole or rolls back whole, DDL included (PostgreSQL,
        // SQLite), or changes values only (MySQL/MariaDB without a type change).
        if let Some((off, _)) = &fk_off {
            steps.push(Step::new(
                StepKind::ChecksOff,
                "foreign key checks off for this session (checked before commit)",
                off.clone(),
            ));
        }
        // A key of another kind that a conversion would make again (a v1 key and, beside it,
        // its own v7 form): found before anything changes, both named.
        let free = (!retype_needed).then(|| {
            Step::new(
                StepKind::NewKeysFree,
                "check: no new key is a key the table holds already",
                vec![cat.new_keys_taken(&schema.table, &column.name, only)],
            )
            .inside()
        });
        let key_map_inside = key_map_step.as_ref().is_some_and(|s| s.in_transaction);
        if !key_map_inside {
            steps.extend(key_map_step.clone());
        }
        // A referencing column without an index: the database's check of each changed key
        // would read its table whole, for every key, while the transaction holds the rows. The
        // index is built before the transaction, without blocking writers (PostgreSQL's
        // `CREATE INDEX CONCURRENTLY`; one built inside the transaction could not be used by
        // it, `indcheckxmin`), and dropped after the commit.
        let indexes: Vec<(Name, Vec<String>, String)> = if retype_needed {
            Vec::new()
        } else {
            schema
                .unindexed
                .iter()
                .filter_map(|(t, cols)| {
                    let (build, drop) = cat.concurrent_index(t, cols, &concurrent_index_name(t, cols))?;
                    Some((t.clone(), build, drop))
                })
                .collect()
        };
        for (t, build, _) in &indexes {
            steps.push(Step::new(
                StepKind::TemporaryIndex,
                format!("an index on {t} for the foreign key checks, built without blocking writes (dropped after the commit)"),
                build.clone(),
            ));
        }
        steps.push(Step::new(StepKind::Begin, "begin", vec![cat.begin()]));
        // Every table of the change locked against other sessions' writes until the commit
        // (PostgreSQL): their writes wait for the run instead of failing it (a child inserted
        // after the rewrite's statement began, referencing a key it changes, would fail the
        // foreign key check at its end). Taken first, all at once, in attempts (methods::shared::lock_in_attempts), so
        // the run never holds one table's lock while it waits for another's.
        let locked = cat.lock_tables(&tables, only, retype_needed);
        if let Some(lock) = &locked {
            let names: Vec<String> = tables.iter().map(ToString::to_string).collect();
            steps.push(
                Step::new(
                    StepKind::Lock,
                    format!(
                        "lock {} against other sessions' writes{} until the commit (they wait for the run)",
                        names.join(", "),
                        if retype_needed { " and reads" } else { "" }
                    ),
                    vec![lock.clone()],
                )
                .inside(),
            );
        }
        // `--rekey-from`: the new keys are made from the rows' times as read; no other session
        // changes a time (or a row) until the commit.
        if options.rekey_from.is_some()
            && locked.is_none()
            && let Some(lock) = cat.lock_against_writes(&schema.table, only)
        {
            steps.push(
                Step::new(
                    StepKind::Lock,
                    format!(
                        "lock {} against other sessions' writes until the commit (their times make the keys)",
                        schema.table
                    ),
                    vec![lock],
                )
                .inside(),
            );
        }
        if key_map_inside {
            steps.extend(key_map_step);
        }
        steps.push(map_step);
        steps.extend(free);
        steps.extend(drop_default);
        if retype_needed {
            let drops: Vec<Step> = schema.references.iter().filter_map(drop_fk).map(Step::inside).collect();
            steps.extend(drops);
            steps.push(rewrite_step);
            steps.extend(retypes.iter().filter_map(|r| retype_step(r, false)).map(Step::inside));
            let adds: Vec<Step> = schema.references.iter().filter_map(add_fk).map(Step::inside).collect();
            steps.extend(adds);
        } else {
            steps.push(rewrite_step);
            // Materialized views that hold the keys keep the old ones until refreshed: in the
            // same transaction, so they hold the new keys when it commits (each locked against
            // its readers while it is computed again).
            for v in materialized_views(schema) {
                steps.push(
                    Step::new(
                        StepKind::Refresh,
                        format!("refresh materialized view {v} (it holds the keys)"),
                        vec![format!("REFRESH MATERIALIZED VIEW {v}")],
                    )
                    .inside(),
                );
            }
        }
        let set_default_inside = set_default.as_ref().is_some_and(|s| s.in_transaction);
        if set_default_inside {
            steps.extend(set_default.clone());
        }
        if let Some(check) = fk_check {
            verify.insert(0, check);
        }
        verify.extend(sixteen);
        steps.push(Step::new(StepKind::Verify, "check: no orphaned row, no foreign key violation", verify).inside());
        steps.push(Step::new(StepKind::Commit, "commit", vec!["COMMIT".into()]));
        if let Some((_, on)) = &fk_off {
            steps.push(Step::new(StepKind::ChecksOn, "foreign key checks on", on.clone()));
        }
        if !set_default_inside {
            steps.extend(set_default);
        }
        for (t, _, drop) in &indexes {
            steps.push(Step::new(
                StepKind::TemporaryIndex,
                format!("drop the index built on {t} for the foreign key checks"),
                vec![drop.clone()],
            ));
        }
        let built: Vec<String> = indexes.iter().map(|(_, _, drop)| drop.clone()).collect();
        steps.extend(leftover_drops(cat, schema).into_iter().filter(|s| !built.contains(&s.sql[0])));
        steps.push(Step::new(StepKind::CompareDefinitions, "check: every definition as it was", Vec::new()));
    }
    steps
}

/// Steps that drop the indexes an earlier run built for its foreign key checks and left (it
/// was stopped after its commit): outside any transaction, without blocking writers.
pub(crate) fn leftover_drops(cat: &dyn Catalog, schema: &Schema) -> Vec<Step> {
    schema
        .leftover_indexes
        .iter()
        .filter_map(|(t, name)| {
            let drop = cat.drop_own_index(t, name)?;
            Some(Step::new(
                StepKind::TemporaryIndex,
                format!("drop the index {name} on {t} that a stopped run built for its foreign key checks"),
                vec![drop],
            ))
        })
        .collect()
}

/// The name of the index a run builds on referencing columns `cols` of `t` (the same for
/// every run, so a run finds one an earlier run left): `combkey_doctor_fk_` and a hash of the
/// table and columns.
pub(crate) fn concurrent_index_name(t: &Name, cols: &[String]) -> String {
    format!("combkey_doctor_fk_{:08x}", fnv1a(&format!("{t}({})", cols.join(","))))
}

pub(crate) fn guard_tag(plan: &Plan) -> String {
    format!("{:08x}", fnv1a(&plan.target()))
}

fn guard_name(tag: &str, t: &Name) -> String {
    format!("{tag}_{:08x}", fnv1a(&t.to_string()))
}

/// The 32-bit FNV-1a hash of `text`: short, stable names for the objects a plan makes.
pub(crate) fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(2_166_136_261, |h, b| (h ^ u32::from(b)).wrapping_mul(16_777_619))
}
