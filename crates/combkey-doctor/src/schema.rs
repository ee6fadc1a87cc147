//! What the catalog says about the table, its key column and every table that references it:
//! read once, in the audit's read-only transaction.

use std::collections::BTreeMap;

use combkey::backend::catalog::{Check, Column, ForeignKey, Name, Trigger};

use crate::db::Db;
use crate::error::Error;

/// The table and everything around its key column.
#[derive(Clone, Debug)]
pub struct Schema {
    /// The table, as the catalog names it.
    pub table: Name,
    /// The key column.
    pub column: Column,
    /// The table's primary key columns.
    pub primary_key: Vec<String>,
    /// Every foreign key that references the key column (with its definition filled).
    pub references: Vec<ForeignKey>,
    /// Each referencing table's column that holds key values, per foreign key.
    pub child_columns: Vec<Column>,
    /// User triggers on the table and on every referencing table.
    pub triggers: Vec<Trigger>,
    /// `CHECK` constraints on the key column and the referencing columns.
    pub checks: Vec<Check>,
    /// Tables that inherit from the table (PostgreSQL).
    pub inheritors: Vec<Name>,
    /// Per table: the columns an `UPDATE` changes by itself (MySQL `ON UPDATE CURRENT_TIMESTAMP`).
    pub auto_update: BTreeMap<Name, Vec<String>>,
    /// Referencing columns with no index that starts with them (each key change then scans
    /// the referencing table to check it).
    pub unindexed: Vec<(Name, Vec<String>)>,
    /// Each table's definition as the database writes it, before any change.
    pub definitions: BTreeMap<Name, String>,
}

impl Schema {
    /// Reads it. `Err` with [`crate::ErrorKind::Usage`] for an unknown table or column.
    pub(crate) async fn load(db: &mut Db, table: &str, column: &str) -> Result<Schema, Error> {
        let catalog = db.catalog()?;
        let name = db
            .query(catalog.resolve(table)?)
            .await?
            .ok_or_else(|| Error::usage(format!("no table {table} (names are matched as the database matches them; quote a name with capitals on PostgreSQL: '\"Orders\"')")))?;
        let columns = db.query(catalog.columns(&name)).await?;
        let column = columns
            .iter()
            .find(|c| c.name == column)
            .or_else(|| columns.iter().find(|c| c.name.eq_ignore_ascii_case(column)))
            .cloned()
            .ok_or_else(|| Error::usage(format!("no column {column} in table {name}")))?;
        let primary_key = db.query(catalog.primary_key(&name)).await?;
        let mut references = db.query(catalog.references(&name, &column.name)).await?;
        let mut definitions = BTreeMap::new();
        definitions.insert(name.clone(), db.query(catalog.definition(&name)).await?);
        let mut child_columns = Vec::new();
        let mut triggers = db.query(catalog.triggers(&name)).await?;
        let mut checks = db.query(catalog.checks(&name, &column.name)).await?;
        let mut auto_update = BTreeMap::new();
        let auto: Vec<String> = columns.iter().filter(|c| c.auto_update).map(|c| c.name.clone()).collect();
        if !auto.is_empty() {
            auto_update.insert(name.clone(), auto);
        }
        let mut unindexed = Vec::new();
        for fk in &mut references {
            // SQLite names the referenced table as the REFERENCES clause wrote it.
            if fk.parent.name.is_empty()
                || fk.parent.name.eq_ignore_ascii_case(&name.name) && fk.parent.schema == name.schema
            {
                fk.parent = name.clone();
            }
            if !definitions.contains_key(&fk.child) {
                definitions.insert(fk.child.clone(), db.query(catalog.definition(&fk.child)).await?);
            }
            catalog.complete_foreign_key(fk, &definitions[&fk.child])?;
            let child_column = fk.child_column_for(&column.name).unwrap_or_default().to_string();
            let child_cols = db.query(catalog.columns(&fk.child)).await?;
            let col =
                child_cols.iter().find(|c| c.name.eq_ignore_ascii_case(&child_column)).cloned().ok_or_else(|| {
                    Error::usage(format!("no column {child_column} in {} (foreign key {})", fk.child, fk.name))
                })?;
            child_columns.push(col);
            if fk.child != name {
                for t in db.query(catalog.triggers(&fk.child)).await? {
                    if !triggers.iter().any(|x| x.table == t.table && x.name == t.name) {
                        triggers.push(t);
                    }
                }
                let auto: Vec<String> = child_cols.iter().filter(|c| c.auto_update).map(|c| c.name.clone()).collect();
                if !auto.is_empty() {
                    auto_update.insert(fk.child.clone(), auto);
                }
            }
            for c in db.query(catalog.checks(&fk.child, &child_column)).await? {
                if !checks.contains(&c) {
                    checks.push(c);
                }
            }
            if !db.query(catalog.has_index_on(&fk.child, &fk.child_columns)).await? {
                unindexed.push((fk.child.clone(), fk.child_columns.clone()));
            }
        }
        let inheritors = db.query(catalog.inheritors(&name)).await?;
        Ok(Schema {
            table: name,
            column,
            primary_key,
            references,
            child_columns,
            triggers,
            checks,
            inheritors,
            auto_update,
            unindexed,
            definitions,
        })
    }

    /// How a reference reads in a report: `child.column`, or `child.(a, b)` for a composite
    /// key; the schema when it is not the table's.
    pub fn reference_name(&self, fk: &ForeignKey) -> String {
        let child = if fk.child.schema == self.table.schema { fk.child.name.clone() } else { fk.child.to_string() };
        match fk.child_columns.as_slice() {
            [one] => format!("{child}.{one}"),
            many => format!("{child}.({})", many.join(", ")),
        }
    }

    /// The user triggers that an `UPDATE` of the keys would fire.
    pub fn update_triggers(&self) -> Vec<&Trigger> {
        self.triggers.iter().filter(|t| t.events.contains("UPDATE")).collect()
    }
}
