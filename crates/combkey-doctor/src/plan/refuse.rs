//! What a plan refuses before anything changes: each refusal names what it found and what to
//! do, and comes before the first statement that would change the database.

use crate::error::Error;
use crate::options::{Inherited, Options, Triggers};
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
