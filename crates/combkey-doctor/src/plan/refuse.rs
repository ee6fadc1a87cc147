//! What a plan refuses before anything changes: each refusal names what it found and what to
//! do, and comes before the first statement that would change the database.

use crate::error::Error;
use crate::options::{Inherited, Online, Options, Triggers};
use crate::plan::model::Plan;
use crate::schema::Schema;

/// What the table and everything around its key column hold that a conversion cannot keep as
/// it was: user triggers on `UPDATE` (unless allowed), inheriting tables (unless chosen),
/// a generated key, rules, chains of foreign keys, the same id written twice, rows that
/// already reference nothing.
pub(crate) fn before_anything(schema: &Schema, options: &Options) -> Result<(), Error> {
    let column = &schema.column;
    if let Some(state) = &schema.replica {
        return Err(Error::refused(format!(
            "this server is a replica: it applies what its primary writes (a MySQL/MariaDB replica, or a PostgreSQL \
             standby; {state}). Keys changed here would differ from the primary's: a standby takes no writes, and a \
             replica's replication stops at the primary's next change to such a row (error 1032). Run doctor on the \
             primary; the new keys reach this replica through replication"
        )));
    }
    // A publication that carries the table but not a table that references it: each
    // subscriber gets the new keys and keeps its own copies of the children with the old
    // ones (a subscriber checks no foreign key for replicated changes), orphans no one sees.
    if let Some((_, pubs)) = schema.published.iter().find(|(t, _)| *t == schema.table) {
        let mut missing = Vec::new();
        for fk in &schema.references {
            let child_pubs = schema.published.iter().find(|(t, _)| *t == fk.child).map(|(_, p)| p);
            for p in pubs {
                if !child_pubs.is_some_and(|c| c.contains(p)) {
                    let m = format!("{} (not in publication {p})", fk.child);
                    if !missing.contains(&m) {
                        missing.push(m);
                    }
                }
            }
        }
        if !missing.is_empty() {
            return Err(Error::refused(format!(
                "{} is published and tables that reference it are not: {}. Each subscriber would get the new keys and \
                 keep its copies of those tables' rows with the old ones (a subscriber checks no foreign key for \
                 replicated changes): rows referencing no key, which nothing reports. Publish them too (ALTER \
                 PUBLICATION ... ADD TABLE ...), or drop the table from the publication for the run; nothing was \
                 changed",
                schema.table,
                missing.join(", ")
            )));
        }
    }
    if let Some(parent) = &schema.partition_of {
        return Err(Error::refused(format!(
            "{} is a partition of {parent}: the foreign keys and the application reach its rows through {parent}, so \
             its keys change with the other partitions'. Run this on {parent} with --inherited include (every \
             partition in one run)",
            schema.table
        )));
    }
    if schema.partitioned && options.inherited == Inherited::Only {
        let parts: Vec<String> = schema.inheritors.iter().map(ToString::to_string).collect();
        return Err(Error::refused(format!(
            "{} is partitioned: it holds no row of its own, every key is in its partitions ({}); give --inherited \
             include to convert them",
            schema.table,
            parts.join(", ")
        )));
    }
    if !schema.row_security.is_empty() {
        let why: Vec<String> = schema.row_security.iter().map(|(t, w)| format!("{t}: {w}")).collect();
        return Err(Error::refused(format!(
            "row-level security hides rows from this role ({}): the keys read and converted would be only the rows \
             its policies show, the others would keep their old keys, and referencing rows of hidden rows would look \
             orphaned. Run as a role that sees every row: a superuser, a role WITH BYPASSRLS, or the table's owner \
             where row security is not forced (ALTER TABLE ... NO FORCE ROW LEVEL SECURITY lifts it for the owner)",
            why.join("; ")
        )));
    }
    if !schema.subscribed.is_empty() {
        let subs: Vec<String> =
            schema.subscribed.iter().map(|(t, s)| format!("{t} (subscription {})", s.join(", "))).collect();
        return Err(Error::refused(format!(
            "logical replication writes these tables from a publisher: {}; keys changed here would differ from the \
             publisher's, and its later changes by the old keys would find no row. Convert on the publisher: the new \
             keys reach this subscriber as updates",
            subs.join(", ")
        )));
    }
    if !schema.no_replica_identity.is_empty() {
        let names: Vec<String> = schema.no_replica_identity.iter().map(ToString::to_string).collect();
        return Err(Error::refused(format!(
            "a publication publishes the updates of {}, which has no replica identity (no primary key, or REPLICA \
             IDENTITY NOTHING): PostgreSQL refuses every UPDATE of it, so the conversion's would fail. Give it one \
             first (ALTER TABLE ... REPLICA IDENTITY USING INDEX <a unique index>, or FULL)",
            names.join(", ")
        )));
    }
    if let Some(l) = options.layout
        && !crate::options::ASSUMABLE.contains(&l)
    {
        return Err(Error::usage(format!(
            "--layout {l}: {l} keys say what they are (their version nibble); --layout names a layout whose keys do not: {}",
            crate::options::ASSUMABLE.map(|l| l.name()).join(", ")
        )));
    }
    let triggers = schema.update_triggers();
    if options.triggers == Triggers::Refuse && !triggers.is_empty() {
        let names: Vec<String> = triggers.iter().map(|t| format!("{} on {} ({})", t.name, t.table, t.events)).collect();
        return Err(Error::refused(format!(
            "triggers fire on UPDATE of the rows whose keys change: {}; they would run for every changed row. \
             Give --triggers fire to let them (nothing else changes), or disable them first",
            names.join(", ")
        )));
    }
    if options.inherited == Inherited::Refuse && !schema.inheritors.is_empty() {
        let names: Vec<String> = schema.inheritors.iter().map(ToString::to_string).collect();
        if schema.partitioned {
            return Err(Error::refused(format!(
                "{} is partitioned, its keys all in its partitions ({}): give --inherited include to convert them",
                schema.table,
                names.join(", ")
            )));
        }
        return Err(Error::refused(format!(
            "tables inherit from {} (or are its partitions): {}; give --inherited only to convert this table's own \
             rows, or --inherited include to convert theirs too",
            schema.table,
            names.join(", ")
        )));
    }
    if schema.column.generated {
        return Err(Error::refused(format!("{}.{} is a generated column", schema.table, column.name)));
    }
    if !schema.rules.is_empty() {
        let names: Vec<String> = schema.rules.iter().map(|(t, r)| format!("{r} on {t}")).collect();
        return Err(Error::refused(format!(
            "rules rewrite writes to the tables whose keys change: {}; PostgreSQL runs the conversion's UPDATE \
             through them (or refuses it inside WITH); drop them first and create them again afterwards",
            names.join(", ")
        )));
    }
    if !schema.chained.is_empty() {
        let names: Vec<String> = schema
            .chained
            .iter()
            .map(|g| {
                format!(
                    "{}.({}) -> {}.({}) ({})",
                    g.child,
                    g.child_columns.join(", "),
                    g.parent,
                    g.parent_columns.join(", "),
                    g.name
                )
            })
            .collect();
        return Err(Error::refused(format!(
            "foreign keys reference a column that references {}.{}: {}; the keys would have to change along the whole \
             chain, which this tool does not do yet. Convert with the chain's foreign keys dropped by hand, or leave \
             the keys as they are",
            schema.table,
            column.name,
            names.join("; ")
        )));
    }
    if schema.same_id.0 > 0 {
        return Err(Error::refused(format!(
            "{} of the values of {}.{} repeat the id of another value, written differently ({}): one stored form would \
             make them one key; merge or remove them first",
            schema.same_id.0,
            schema.table,
            column.name,
            schema.same_id.1.join(", ")
        )));
    }
    if !schema.orphans.is_empty() {
        let names: Vec<String> =
            schema.orphans.iter().map(|(fk, t, n)| format!("{n} rows of {t} (foreign key {fk})")).collect();
        return Err(Error::refused(format!(
            "rows already reference no row of {}: {}; the foreign key is NOT VALID or they were written with checks \
             off. The check after the change would fail: fix or remove them first",
            schema.table,
            names.join(", ")
        )));
    }
    Ok(())
}

/// Refuses, naming them, what reads the key column or a referencing column and would break
/// or silently compute something else once the column holds 16 bytes: views, policies,
/// triggers and expression indexes, generated columns, `CHECK`s.
pub(crate) fn readers(schema: &Schema) -> Result<(), Error> {
    if !schema.views.is_empty() {
        let names: Vec<String> = schema.views.iter().map(|(v, t, c)| format!("{v} (reads {t}.{c})")).collect();
        return Err(Error::refused(format!(
            "views, policies, triggers or indexes read the key column or a column referencing it, and would fail or \
             give other results once the column holds 16 bytes: {}; drop them first and create them again afterwards",
            names.join(", ")
        )));
    }
    let columns: Vec<&str> = std::iter::once(schema.column.name.as_str())
        .chain(schema.child_columns.iter().map(|c| c.name.as_str()))
        .collect();
    let triggers: Vec<String> = schema
        .triggers
        .iter()
        .filter(|t| columns.iter().any(|c| crate::schema::mentions(&t.definition, c)))
        .map(|t| format!("{} on {} ({})", t.name, t.table, t.events))
        .collect();
    if !triggers.is_empty() {
        return Err(Error::refused(format!(
            "triggers name the key column or a column referencing it, and would write or compare text where 16 bytes \
             are held: {}; drop them first and create them again afterwards",
            triggers.join(", ")
        )));
    }
    if !schema.computed.is_empty() {
        let names: Vec<String> = schema
            .computed
            .iter()
            .map(|(t, c, e)| match e {
                Some(e) => format!("{t}.{c} AS ({e})"),
                None => format!("{t}.{c} (SQLite does not tell its expression)"),
            })
            .collect();
        return Err(Error::refused(format!(
            "generated columns are computed from the key column or a column referencing it, and would compute \
             something else once the column holds 16 bytes (or stop the type change half-way): {}; drop or rewrite \
             them first",
            names.join("; ")
        )));
    }
    if !schema.checks.is_empty() {
        let names: Vec<String> =
            schema.checks.iter().map(|c| format!("{} on {}: {}", c.name, c.table, c.definition)).collect();
        return Err(Error::refused(format!(
            "CHECK constraints mention the key column or a column referencing it, and would not hold once the \
             column holds 16 bytes: {}; drop them first",
            names.join("; ")
        )));
    }
    Ok(())
}

/// Whether a MySQL/MariaDB `sql_mode` is strict: a write of a value too long for its column
/// fails (1406) instead of storing it cut short with a warning.
pub(crate) fn strict(sql_mode: &str) -> bool {
    sql_mode
        .split(',')
        .any(|m| m.eq_ignore_ascii_case("STRICT_TRANS_TABLES") || m.eq_ignore_ascii_case("STRICT_ALL_TABLES"))
}

/// An online run that changes the key column's type (text to `uuid`, `BINARY(16)`): from the
/// swap on, an application that binds the old form fails every insert (MySQL's strict mode:
/// 1406; PostgreSQL: a text parameter for a `uuid` column) and its updates, deletes and
/// lookups by key match no row, reported as success; under a MySQL `sql_mode` that is not
/// strict its inserts store the text cut to 16 bytes. Refused unless the application is said
/// to be ready for the new type, and on MySQL/MariaDB always under a `sql_mode` that is not
/// strict (`sql_mode`: the server's global one, which the application's sessions take).
pub(crate) fn online_type_change(plan: &Plan, online: &Online, sql_mode: Option<&str>) -> Result<(), Error> {
    let change = format!("{} to {}", plan.column_type, plan.final_type);
    if let Some(mode) = sql_mode
        && !strict(mode)
    {
        return Err(Error::refused(format!(
            "the server's sql_mode is not strict ({}): after an online type change of {}.{} ({change}) an application that still binds the key as text would store its new rows under the text cut to 16 bytes, with only a warning, and their children would reference the same garbage. Make the mode strict first (SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',STRICT_TRANS_TABLES'), and in the server's configuration), or keep the type (--keep-type), or change it offline (without --online). Nothing was changed",
            if mode.is_empty() { "empty" } else { mode },
            plan.table,
            plan.column,
        )));
    }
    if online.app_ready_for_new_type {
        return Ok(());
    }
    let fails = match plan.backend() {
        Ok(combkey::Backend::Postgres) => {
            "every statement that binds the key as a text parameter fails (column \"id\" is of type uuid but \
             expression is of type text; operator does not exist: uuid = text)"
        }
        _ => {
            "every insert that binds the key as text fails (1406 Data too long for column) and every update, delete \
             and lookup by key matches no row, reported to the application as success"
        }
    };
    Err(Error::refused(format!(
        "the key column's type changes ({change}) at the swap of this online run, and an application that binds the \
         key in the old form breaks then: {fails}. Two steps instead: now, --apply --online --keep-type (the keys \
         become v7 ids in the column's own form, the type stays, the application keeps working); then, with the \
         deploy of the application that binds the new form (combkey's Comb types), the type change: --apply --online \
         --app-ready-for-new-type, or --apply in a maintenance window. If the application binds the new form already, \
         give --app-ready-for-new-type. Nothing was changed"
    )))
}

/// A stopped run goes on with the plan its journal keeps: a command that runs it again with
/// other choices (`--key-map NAME` or `--set-default` added, another `--to`) would have them
/// silently ignored (the key map stayed under the first run's name, no default was set, exit
/// 0), so such a command is refused, naming what differs; the same command as the first, or
/// with only another lock timeout, goes on.
pub(crate) fn resumed_with(journaled: &Plan, given: &Options) -> Result<(), Error> {
    let was = &journaled.options;
    let flag = |on: bool, name: &str| if on { name.to_string() } else { format!("no {name}") };
    let named = |v: &Option<String>, name: &str| match v {
        Some(v) => format!("{name} {v}"),
        None => format!("no {name}"),
    };
    let mut differs = Vec::new();
    let mut compare = |a: String, b: String| {
        if a != b {
            differs.push(format!("{a} (the stopped run) against {b} (this command)"));
        }
    };
    compare(named(&was.key_map, "--key-map"), named(&given.key_map, "--key-map"));
    compare(flag(was.set_default, "--set-default"), flag(given.set_default, "--set-default"));
    compare(flag(was.keep_type, "--keep-type"), flag(given.keep_type, "--keep-type"));
    compare(flag(was.convert_uncertain, "--convert-uncertain"), flag(given.convert_uncertain, "--convert-uncertain"));
    compare(named(&was.rekey_from, "--rekey-from"), named(&given.rekey_from, "--rekey-from"));
    compare(format!("--to {}", was.to.name()), format!("--to {}", given.to.name()));
    compare(
        format!("--layout {}", was.layout.map_or("(none)", |l| l.name())),
        format!("--layout {}", given.layout.map_or("(none)", |l| l.name())),
    );
    // As the command line names them (`--triggers refuse`).
    let cli = |flag: &str, v: &dyn std::fmt::Debug| format!("{flag} {}", format!("{v:?}").to_lowercase());
    compare(cli("--triggers", &was.triggers), cli("--triggers", &given.triggers));
    compare(cli("--inherited", &was.inherited), cli("--inherited", &given.inherited));
    compare(cli("--rekey-invalid", &was.rekey_invalid), cli("--rekey-invalid", &given.rekey_invalid));
    if differs.is_empty() {
        return Ok(());
    }
    // The stopped run's choices as flags, those that differ from the defaults.
    let defaults = Options::default();
    let mut began = Vec::new();
    if let Some(m) = &was.key_map {
        began.push(format!("--key-map {m}"));
    }
    for (on, name) in [
        (was.set_default, "--set-default"),
        (was.keep_type, "--keep-type"),
        (was.convert_uncertain, "--convert-uncertain"),
    ] {
        if on {
            began.push(name.to_string());
        }
    }
    if let Some(r) = &was.rekey_from {
        began.push(format!("--rekey-from {r}"));
    }
    if was.to != defaults.to {
        began.push(format!("--to {}", was.to.name()));
    }
    if let Some(l) = was.layout {
        began.push(format!("--layout {}", l.name()));
    }
    if was.triggers != defaults.triggers {
        began.push(cli("--triggers", &was.triggers));
    }
    if was.inherited != defaults.inherited {
        began.push(cli("--inherited", &was.inherited));
    }
    if was.rekey_invalid != defaults.rekey_invalid {
        began.push(cli("--rekey-invalid", &was.rekey_invalid));
    }
    let began = if began.is_empty() { "none of these flags".to_string() } else { began.join(" ") };
    Err(Error::refused(format!(
        "an earlier run of {}.{} stopped, and its journal keeps the plan it began with, which this command's choices \
         differ from: {}. Run it again with the choices it began with ({began}) to finish it (what it was asked to \
         do is done then), and run this command after it for the rest. Nothing was changed",
        journaled.table,
        journaled.column,
        differs.join("; ")
    )))
}
