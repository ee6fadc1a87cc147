//! The plan of a migration, as data: ordered steps with their SQL, what each drops (with its
//! original definition, the database's own text) and what it restores. `--migration-sql`
//! prints it, `--apply` executes exactly it, a journal keeps it (MySQL/MariaDB, where DDL
//! cannot roll back), and unit tests inspect it without a database.

use std::collections::BTreeMap;

use crate::catalog::{Catalog, ForeignKey, Name, Retype, Rewrite};
use combkey::Backend;
use serde::{Deserialize, Serialize};

use crate::audit::{Classifier, Kind, target};
use crate::error::Error;
use crate::schema::Schema;

/// A table's name, as a plan records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TableName {
    /// The schema (database), if any.
    pub schema: Option<String>,
    /// The name.
    pub name: String,
}

impl core::fmt::Display for TableName {
    /// `schema.name`, or `name` where there is no schema.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match &self.schema {
            Some(s) => write!(f, "{s}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

impl From<&Name> for TableName {
    fn from(n: &Name) -> Self {
        TableName { schema: n.schema.clone(), name: n.name.clone() }
    }
}

impl From<&TableName> for Name {
    fn from(n: &TableName) -> Self {
        Name { schema: n.schema.clone(), name: n.name.clone() }
    }
}

/// What kind of step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StepKind {
    /// Session settings (lock timeout, strict mode).
    Session,
    /// The journal is written (the plan, before anything changes).
    Journal,
    /// Triggers that refuse other sessions' writes while foreign keys are dropped.
    Guard,
    /// Foreign key checks off for this session.
    ChecksOff,
    /// A transaction starts.
    Begin,
    /// The mapping table of old to new key values is made and filled.
    Map,
    /// A foreign key is dropped.
    DropForeignKey,
    /// A column changes type.
    Retype,
    /// A temporary index is made or dropped.
    TemporaryIndex,
    /// The key values change, in the table and every referencing column.
    Rewrite,
    /// Checks: no orphan, no foreign key violation.
    Verify,
    /// The transaction commits.
    Commit,
    /// Foreign key checks back on.
    ChecksOn,
    /// A foreign key comes back, from its original definition.
    AddForeignKey,
    /// The guard triggers go.
    Unguard,
    /// Every table's definition is compared with its original.
    CompareDefinitions,
    /// The journal records the end.
    Done,
}

/// An object a step drops or restores, with its original definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Object {
    /// What it is (`foreign key`, `trigger`).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its table.
    pub table: TableName,
    /// Its definition as the database wrote it before the change.
    pub definition: String,
}

/// When a step has nothing to do (it ran before a crash): checked against the catalog before
/// it runs again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Skip {
    /// The foreign key is gone.
    ForeignKeyAbsent {
        /// The referencing table.
        table: TableName,
        /// The constraint.
        name: String,
        /// The referenced column.
        column: String,
    },
    /// The foreign key is there.
    ForeignKeyPresent {
        /// The referencing table.
        table: TableName,
        /// The constraint.
        name: String,
        /// The referenced column.
        column: String,
    },
    /// The column has this type already.
    ColumnType {
        /// The table.
        table: TableName,
        /// The column.
        column: String,
        /// The type, lower case.
        data_type: String,
    },
}

/// One step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Step {
    /// What kind.
    pub kind: StepKind,
    /// What it does, for people.
    pub what: String,
    /// Its statements (a [`StepKind::Map`] step's rows are made when it runs, from the keys).
    pub sql: Vec<String>,
    /// What it drops, with the original definition.
    pub drops: Option<Object>,
    /// What it restores, from the original definition.
    pub restores: Option<Object>,
    /// When it has nothing to do.
    pub skip: Option<Skip>,
    /// Whether it runs inside the transaction.
    pub in_transaction: bool,
}

impl Step {
    fn new(kind: StepKind, what: impl Into<String>, sql: Vec<String>) -> Self {
        Step { kind, what: what.into(), sql, drops: None, restores: None, skip: None, in_transaction: false }
    }

    fn inside(mut self) -> Self {
        self.in_transaction = true;
        self
    }
}

/// What to do with things a key change would touch beyond the keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Triggers {
    /// Refuse while user triggers fire on `UPDATE` of the table or a referencing table.
    #[default]
    Refuse,
    /// Let them fire on every changed row.
    Fire,
}

/// What to do with tables that inherit from the table (PostgreSQL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Inherited {
    /// Refuse while there are any.
    #[default]
    Refuse,
    /// Convert this table's own rows only (`ONLY`).
    Only,
    /// Convert theirs too.
    Include,
}

/// The choices a plan depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Options {
    /// Waits for a lock are bounded by this many milliseconds.
    pub lock_timeout_ms: u64,
    /// User triggers.
    pub triggers: Triggers,
    /// Inheriting tables.
    pub inherited: Inherited,
    /// Convert keys whose layout is uncertain.
    pub convert_uncertain: bool,
}

impl Options {
    /// Waits for a lock end after `ms` milliseconds (default 5000).
    pub fn with_lock_timeout_ms(mut self, ms: u64) -> Self {
        self.lock_timeout_ms = ms;
        self
    }

    /// What to do with user triggers (default [`Triggers::Refuse`]).
    pub fn with_triggers(mut self, triggers: Triggers) -> Self {
        self.triggers = triggers;
        self
    }

    /// What to do with inheriting tables and partitions (default [`Inherited::Refuse`]).
    pub fn with_inherited(mut self, inherited: Inherited) -> Self {
        self.inherited = inherited;
        self
    }

    /// Whether keys whose layout is uncertain are converted too (default `false`).
    pub fn with_convert_uncertain(mut self, convert: bool) -> Self {
        self.convert_uncertain = convert;
        self
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lock_timeout_ms: 5000,
            triggers: Triggers::Refuse,
            inherited: Inherited::Refuse,
            convert_uncertain: false,
        }
    }
}

/// The plan of a migration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Plan {
    /// The backend's name.
    pub backend: String,
    /// The table.
    pub table: TableName,
    /// The key column.
    pub column: String,
    /// The key column's type before, lower case.
    pub column_type: String,
    /// The key column's type after.
    pub final_type: String,
    /// The choices it was made with.
    pub options: Options,
    /// How keys are classified (kept, so a resumed run converts exactly what this one would).
    pub classifier: Classifier,
    /// Keys that change, by `from -> to` layout names (a retype only: `same`).
    pub converted: BTreeMap<String, usize>,
    /// Keys left as they are, by verdict, with the reason.
    pub kept: BTreeMap<String, (usize, String)>,
    /// The columns whose values change, per table.
    pub rewrites: Vec<RewriteTarget>,
    /// The foreign keys that reference the key column.
    pub references: Vec<Reference>,
    /// Each affected table's definition before the change.
    pub definitions: Vec<(TableName, String)>,
    /// Referencing columns with no index that starts with them.
    pub unindexed: Vec<(TableName, Vec<String>)>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// A table's columns that hold key values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RewriteTarget {
    /// The table.
    pub table: TableName,
    /// Its columns holding key values.
    pub columns: Vec<String>,
    /// Columns kept as they were (`ON UPDATE CURRENT_TIMESTAMP`).
    pub keep: Vec<String>,
}

/// A foreign key that references the key column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reference {
    /// Its name.
    pub name: String,
    /// The referencing table.
    pub child: TableName,
    /// The referencing columns.
    pub child_columns: Vec<String>,
    /// The referenced columns.
    pub parent_columns: Vec<String>,
    /// Its definition as the database wrote it.
    pub definition: String,
}

impl Plan {
    /// Nothing would change.
    pub fn is_empty(&self) -> bool {
        self.converted.is_empty() && self.column_type == self.final_type
    }

    /// Whether the column's type changes.
    pub fn retypes(&self) -> bool {
        self.column_type != self.final_type
    }

    /// Whether running it takes a journal (DDL that cannot roll back).
    pub fn journaled(&self) -> bool {
        self.steps.iter().any(|s| s.kind == StepKind::Journal)
    }

    /// The backend.
    pub fn backend(&self) -> Result<Backend, Error> {
        Ok(self.backend.parse()?)
    }

    /// The journal's key for this table and column.
    pub fn target(&self) -> String {
        format!("{}.{}", Name::from(&self.table), self.column)
    }
}

/// The new id of a key of verdict `kind`, if it changes.
pub(crate) fn new_id(id: &combkey::Comb, kind: Kind, convert_uncertain: bool) -> Option<combkey::Comb> {
    let kind = match kind {
        Kind::Uncertain(l) if convert_uncertain => Kind::Layout(l),
        k => k,
    };
    match (target(kind), kind) {
        (Ok(Some(to)), Kind::Layout(from)) => combkey::layouts::Layout::convert(id, from, to).ok(),
        _ => None,
    }
}

pub(crate) fn orphan_count(backend: Backend, r: &Reference, parent: &Name) -> String {
    let q = |n: &str| backend.quote(n);
    let not_null: Vec<String> = r.child_columns.iter().map(|c| format!("c.{} IS NOT NULL", q(c))).collect();
    let join: Vec<String> =
        r.child_columns.iter().zip(&r.parent_columns).map(|(c, p)| format!("p.{} = c.{}", q(p), q(c))).collect();
    format!(
        "SELECT count(*) FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {})",
        Name::from(&r.child).quoted(backend),
        not_null.join(" AND "),
        parent.quoted(backend),
        join.join(" AND ")
    )
}

/// The plan for the table described by `schema`, whose keys were classified by `classifier`
/// into `kinds` (counts per verdict). Refuses, naming them, what it cannot keep as it was.
pub(crate) fn build(
    backend: Backend,
    schema: &Schema,
    classifier: &Classifier,
    kinds: &[Kind],
    options: Options,
) -> Result<Plan, Error> {
    let cat: &dyn Catalog = crate::catalog::of(backend)?;
    let column = &schema.column;
    // What must be refused before anything changes.
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
            "{} values of {}.{} are the same id as another value, written differently ({}): one stored form would \
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
    // The key column's type at the end.
    let retype_needed = match backend {
        Backend::Postgres => column.data_type != "uuid",
        Backend::MySql => {
            column.data_type.starts_with("char")
                || column.data_type.starts_with("varchar")
                || column.data_type.contains("text")
        }
        _ => false,
    };
    let mut retypes: Vec<(Name, crate::catalog::Column, Retype)> = Vec::new();
    // SQLite changes a text key's values to 16-byte blobs in place: what reads the column
    // sees another type, as after a type change.
    if backend == Backend::Sqlite && ["char", "text", "clob"].iter().any(|t| column.data_type.contains(t)) {
        readers_refusal(schema)?;
    }
    if retype_needed {
        if column.data_type == "bytea" {
            return Err(Error::refused(format!(
                "{}.{} is bytea: change it (and every column referencing it) to uuid first, in one transaction: \
                 ALTER TABLE {} ALTER COLUMN {} TYPE uuid USING encode({}, 'hex')::uuid; then run this again",
                schema.table,
                column.name,
                schema.table.quoted(backend),
                backend.quote(&column.name),
                backend.quote(&column.name)
            )));
        }
        readers_refusal(schema)?;
        if let Some(d) = &column.default
            && backend == Backend::Postgres
        {
            return Err(Error::refused(format!(
                "{}.{} has DEFAULT {d}, a text default that the uuid column would not take; drop it first",
                schema.table, column.name
            )));
        }
        retypes.push((
            schema.table.clone(),
            column.clone(),
            cat.retype(&schema.table, column, &schema.definitions[&schema.table])?,
        ));
        for (fk, col) in schema.references.iter().zip(&schema.child_columns) {
            if retypes.iter().any(|(t, c, _)| *t == fk.child && c.name == col.name) {
                continue;
            }
            if let Some(d) = &col.default
                && backend == Backend::Postgres
            {
                return Err(Error::refused(format!(
                    "{}.{} has DEFAULT {d}, a text default that the uuid column would not take; drop it first",
                    fk.child, col.name
                )));
            }
            retypes.push((fk.child.clone(), col.clone(), cat.retype(&fk.child, col, &schema.definitions[&fk.child])?));
        }
    }
    let final_type = retypes.first().map_or_else(|| column.data_type.clone(), |r| r.2.final_type.clone());

    // Counts.
    let mut converted = BTreeMap::new();
    let mut kept: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for kind in kinds {
        let k = match *kind {
            Kind::Uncertain(l) if options.convert_uncertain => Kind::Layout(l),
            k => k,
        };
        match (target(k), k) {
            (Ok(Some(to)), Kind::Layout(from)) => {
                *converted.entry(format!("{} -> {}", from.name(), to.name())).or_default() += 1
            }
            (Ok(_), _) => {}
            (Err(why), k) => {
                let e = kept.entry(k.name().to_string()).or_insert((0, why.to_string()));
                e.0 += 1;
            }
        }
    }
    if retype_needed {
        let same = kinds.len() - converted.values().sum::<usize>();
        if same > 0 {
            converted.insert("same id, new column type".into(), same);
        }
    }

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
    let only = options.inherited == Inherited::Only;

    let mut plan = Plan {
        backend: backend.name().into(),
        table: (&schema.table).into(),
        column: column.name.clone(),
        column_type: column.data_type.clone(),
        final_type,
        options,
        classifier: classifier.clone(),
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
    };
    if plan.is_empty() {
        return Ok(plan);
    }

    // The steps.
    let mut steps = Vec::new();
    let mut session = cat.session(options.lock_timeout_ms);
    session.extend(cat.pass_guard());
    steps.push(Step::new(
        StepKind::Session,
        format!("session: waits for locks end after {} ms", options.lock_timeout_ms),
        session,
    ));
    let journaled = retype_needed && !cat.transactional_ddl();
    let tag = guard_tag(&plan);
    let tables: Vec<Name> = rewrites.iter().map(|r| r.table.clone()).collect();
    let map_step =
        Step::new(StepKind::Map, "map the old key values to the new ones", cat.map_table(&column.data_type)).inside();
    let rewrite_step = Step::new(
        StepKind::Rewrite,
        format!("change the keys in {}", tables.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
        cat.rewrite_from_map(&rewrites, only),
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
        let mut sql = cat.add_foreign_key(fk)?;
        // MariaDB replaces the index it made for a foreign key by one named after the
        // constraint when the key is added back: the index is dropped and added again by its
        // own name in the same statement, so the table ends as it was.
        if backend == Backend::MySql
            && let Some(index) = schema.definitions.get(&fk.child).and_then(|d| mysql_fk_index(d, &fk.child_columns))
        {
            sql = sql.replacen(
                " ADD CONSTRAINT ",
                &format!(" DROP INDEX {}, ADD {}, ADD CONSTRAINT ", index.0, index.1),
                1,
            );
        }
        let mut sqls = vec![sql];
        if let Some(comment) = &fk.comment
            && backend == Backend::Postgres
        {
            sqls.push(format!(
                "COMMENT ON CONSTRAINT {} ON {} IS '{}'",
                backend.quote(&fk.name),
                fk.child.quoted(backend),
                comment.replace('\'', "''")
            ));
        }
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
        steps.push(Step::new(StepKind::Begin, "begin", vec![cat.begin()]));
        steps.push(map_step);
        if retype_needed {
            let drops: Vec<Step> = schema.references.iter().filter_map(drop_fk).map(Step::inside).collect();
            steps.extend(drops);
            steps.push(rewrite_step);
            steps.extend(retypes.iter().filter_map(|r| retype_step(r, false)).map(Step::inside));
            let adds: Vec<Step> = schema.references.iter().filter_map(add_fk).map(Step::inside).collect();
            steps.extend(adds);
        } else {
            let mut temp = Vec::new();
            for (n, (t, cols)) in schema.unindexed.iter().enumerate() {
                if let Some(pair) = cat.temporary_index(t, cols, &format!("combkey_doctor_tmp_{n}")) {
                    temp.push((t.clone(), pair));
                }
            }
            for (t, (create, _)) in &temp {
                steps.push(
                    Step::new(
                        StepKind::TemporaryIndex,
                        format!("a temporary index on {t}, dropped before commit"),
                        vec![create.clone()],
                    )
                    .inside(),
                );
            }
            steps.push(rewrite_step);
            for (t, (_, drop)) in &temp {
                steps.push(
                    Step::new(StepKind::TemporaryIndex, format!("drop the temporary index on {t}"), vec![drop.clone()])
                        .inside(),
                );
            }
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
        steps.push(Step::new(StepKind::CompareDefinitions, "check: every definition as it was", Vec::new()));
    }
    plan.steps = steps;
    Ok(plan)
}

/// A short tag for this plan's guard triggers.
/// Refuses, naming them, what reads the key column or a referencing column and would break
/// or silently compute something else once the column holds 16 bytes: views, policies,
/// triggers and expression indexes, generated columns, `CHECK`s.
fn readers_refusal(schema: &Schema) -> Result<(), Error> {
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

/// The plain index of a MySQL table definition (`SHOW CREATE TABLE`) on exactly `columns`:
/// its quoted name and its definition line (`KEY `pid` (`pid`)`).
fn mysql_fk_index(definition: &str, columns: &[String]) -> Option<(String, String)> {
    let want: Vec<String> = columns.iter().map(|c| Backend::MySql.quote(c)).collect();
    let want = format!("({})", want.join(","));
    definition.lines().map(|l| l.trim().trim_end_matches(',')).find_map(|line| {
        let rest = line.strip_prefix("KEY ")?;
        let end = rest[1..].find('`')? + 2;
        let (name, after) = rest.split_at(end);
        after.trim_start().starts_with(&want).then(|| (name.to_string(), line.to_string()))
    })
}

pub(crate) fn guard_tag(plan: &Plan) -> String {
    let mut h: u32 = 2_166_136_261;
    for b in plan.target().bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(16_777_619);
    }
    format!("{h:08x}")
}

fn guard_name(tag: &str, t: &Name) -> String {
    let mut h: u32 = 2_166_136_261;
    for b in t.to_string().bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(16_777_619);
    }
    format!("{tag}_{h:08x}")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::catalog::{Column, ForeignKey, Name, Trigger};
    use combkey::layouts::Layout;

    use super::*;
    use crate::audit::{Classifier, Kind};

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
            references: vec![fk],
            child_columns: vec![column("parent_id", ty)],
            triggers: Vec::new(),
            checks: Vec::new(),
            inheritors: Vec::new(),
            auto_update: BTreeMap::new(),
            unindexed: vec![(child, vec!["parent_id".into(), "tenant".into()])],
            definitions,
            computed: Vec::new(),
            views: Vec::new(),
            rules: Vec::new(),
            chained: Vec::new(),
            orphans: Vec::new(),
            same_id: (0, Vec::new()),
        }
    }

    fn kinds() -> (Classifier, Vec<Kind>) {
        (Classifier { now_ms: 0, rules: Vec::new() }, vec![Kind::Layout(Layout::RtCombSql); 10])
    }

    fn kinds_of(plan: &Plan) -> Vec<StepKind> {
        plan.steps.iter().map(|s| s.kind).collect()
    }

    #[test]
    fn postgres_values_only_is_one_transaction_that_drops_no_foreign_key() {
        let (c, k) = kinds();
        let plan = build(Backend::Postgres, &schema("uuid", ""), &c, &k, Options::default()).unwrap();
        assert!(!plan.journaled() && !plan.retypes());
        assert_eq!(plan.converted.get("rtcomb-sql -> v7"), Some(&10));
        assert_eq!(
            kinds_of(&plan),
            [
                StepKind::Session,
                StepKind::Begin,
                StepKind::Map,
                StepKind::TemporaryIndex,
                StepKind::Rewrite,
                StepKind::TemporaryIndex,
                StepKind::Verify,
                StepKind::Commit,
                StepKind::CompareDefinitions
            ]
        );
        assert!(plan.steps.iter().all(|s| s.drops.is_none()), "nothing dropped");
        let rewrite = &plan.steps[4].sql;
        assert_eq!(rewrite.len(), 1, "parent and child in one statement: {rewrite:?}");
        assert!(rewrite[0].contains("UPDATE \"shop\".\"orders\"") && rewrite[0].contains("UPDATE \"other\".\"lines\""));
        assert!(plan.steps[0].sql[0].contains("lock_timeout = '5000ms'"));
    }

    #[test]
    fn mysql_type_change_is_journaled_guarded_and_names_what_it_drops() {
        let (c, k) = kinds();
        let show = "CREATE TABLE `x` (\n  `k` char(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the id',\n  PRIMARY KEY (`k`)\n)";
        let plan = build(Backend::MySql, &schema("char(36)", show), &c, &k, Options::default()).unwrap();
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
        let e = build(Backend::Postgres, &s, &c, &k, Options::default()).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Refused);
        assert!(e.to_string().contains("audit_orders on shop.orders (AFTER UPDATE)"), "{e}");
        let fire = Options { triggers: Triggers::Fire, ..Options::default() };
        assert!(build(Backend::Postgres, &s, &c, &k, fire).is_ok());

        let mut s = schema("uuid", "");
        s.inheritors.push(name("shop", "orders_2025"));
        let e = build(Backend::Postgres, &s, &c, &k, Options::default()).unwrap_err();
        assert!(e.to_string().contains("shop.orders_2025") && e.to_string().contains("--inherited"), "{e}");
        let only = Options { inherited: Inherited::Only, ..Options::default() };
        let plan = build(Backend::Postgres, &s, &c, &k, only).unwrap();
        assert!(plan.steps.iter().any(|st| st.sql.iter().any(|q| q.contains("UPDATE ONLY"))));

        let mut s = schema("text", "");
        s.column.default = Some("gen_random_uuid()::text".into());
        let e = build(Backend::Postgres, &s, &c, &k, Options::default()).unwrap_err();
        assert!(e.to_string().contains("DEFAULT gen_random_uuid()::text"), "{e}");

        // A generated column computed from a text key refuses the type change; a plan that
        // only rewrites values lets the database compute it again.
        let mut s = schema("char(36)", "CREATE TABLE `orders` (`k` char(36) NOT NULL)");
        s.computed.push((s.table.clone(), "short_id".into(), Some("left(`id`,8)".into())));
        let e = build(Backend::MySql, &s, &c, &k, Options::default()).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Refused);
        assert!(e.to_string().contains("shop.orders.short_id AS (left(`id`,8))"), "{e}");
        s.column.data_type = "binary(16)".into();
        s.child_columns[0].data_type = "binary(16)".into();
        assert!(build(Backend::MySql, &s, &c, &k, Options::default()).is_ok());
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
        let c = Classifier { now_ms: 0, rules: Vec::new() };
        let k = vec![Kind::Random, Kind::Uncertain(Layout::RtCombSql), Kind::Layout(Layout::V7)];
        let plan = build(Backend::Postgres, &schema("uuid", ""), &c, &k, Options::default()).unwrap();
        assert!(plan.is_empty(), "{:?}", plan.converted);
        assert_eq!(plan.kept.get("v4").map(|k| k.0), Some(1));
        assert_eq!(plan.kept.get("rtcomb-sql").map(|k| k.0), Some(1));
        let convert = Options { convert_uncertain: true, ..Options::default() };
        let plan = build(Backend::Postgres, &schema("uuid", ""), &c, &k, convert).unwrap();
        assert_eq!(plan.converted.get("rtcomb-sql -> v7"), Some(&1));
    }
}
