//! A plan as data, the types the plan's steps and every method read: its tables, steps,
//! what each drops and restores, and what the plan says of itself.

use std::collections::BTreeMap;

use combkey::Backend;
use serde::{Deserialize, Serialize};

use crate::audit::Classifier;
use crate::catalog::Name;
use crate::error::Error;
use crate::options::Options;
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
    /// The table is locked against other sessions' writes until the commit (`--rekey-from`:
    /// the rows' times must stay what the new keys are made from).
    Lock,
    /// The mapping table of old to new key values is made and filled.
    Map,
    /// A materialized view that holds the keys is refreshed (PostgreSQL, in the transaction).
    Refresh,
    /// A foreign key is dropped.
    DropForeignKey,
    /// A column changes type.
    Retype,
    /// A temporary index is made or dropped.
    TemporaryIndex,
    /// The table of old and new keys is made (where it is not there).
    KeyMap,
    /// The key column's old default is dropped (before a type change).
    DropDefault,
    /// The key column's default becomes combkey's generator.
    SetDefault,
    /// Check: no new key is a key the table holds already.
    NewKeysFree,
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
    pub(super) fn new(kind: StepKind, what: impl Into<String>, sql: Vec<String>) -> Self {
        Step { kind, what: what.into(), sql, drops: None, restores: None, skip: None, in_transaction: false }
    }

    pub(super) fn inside(mut self) -> Self {
        self.in_transaction = true;
        self
    }
}

/// The key map's name for `table`: the one given, in the table's schema unless it names one;
/// else `combkey_keymap_<table>`, and where that is longer than the database's longest
/// identifier, cut and ended by a hash of the whole name (two long names that share a start
/// get two maps).
pub(crate) fn key_map_name(backend: Backend, table: &Name, given: Option<&str>) -> Name {
    if let Some(g) = given {
        return match g.split_once('.') {
            Some((schema, name)) => Name { schema: Some(schema.to_string()), name: name.to_string() },
            None => Name { schema: table.schema.clone(), name: g.to_string() },
        };
    }
    let mut name = format!("combkey_keymap_{}", table.name);
    let max = backend.max_identifier_len();
    if name.len() > max {
        let mut h: u32 = 2_166_136_261;
        for b in name.bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(16_777_619);
        }
        let tag = format!("_{h:08x}");
        while name.len() + tag.len() > max {
            name.pop();
        }
        name.push_str(&tag);
    }
    Name { schema: table.schema.clone(), name }
}

/// What the key map's comment says of it: the table and column whose keys it maps.
pub(crate) fn key_map_about(table: &Name, column: &str, converted: &[&str]) -> String {
    format!(
        "combkey doctor: the old and the new key of every key of {table}.{column} it converted ({})",
        converted.join(", ")
    )
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
    /// What the DBA must know or do beyond these tables (a subscriber's column type, a
    /// versioned table's history).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The table that keeps every converted key's old and new value (where the conversion
    /// drops bits of the old keys, or one was asked for).
    #[serde(default)]
    pub key_map: Option<TableName>,
    /// Whether the run makes the key column's default combkey's generator.
    #[serde(default)]
    pub sets_default: bool,
    /// Whether the run installs combkey's SQL functions (`--set-default` where none were
    /// there): a run abandoned before its swap removes them again, where nothing else calls them.
    #[serde(default)]
    pub installs_functions: bool,
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
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-is_empty-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options, Quiet};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// assert!(!plan.is_empty());
    /// doctor.apply(&plan, &mut Quiet).await?;
    /// assert!(doctor.plan("orders", "id", Options::default()).await?.is_empty());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.converted.is_empty() && self.column_type == self.final_type && !self.sets_default && self.steps.is_empty()
    }

    /// Whether the column's type changes.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-retypes-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// // The column is already a BLOB: only the values change.
    /// assert!(!plan.retypes());
    /// assert_eq!(plan.column_type, plan.final_type);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn retypes(&self) -> bool {
        self.column_type != self.final_type
    }

    /// Whether running it takes a journal (DDL that cannot roll back).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-journaled-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// // On SQLite the whole migration is one transaction: no journal.
    /// assert!(!plan.journaled());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn journaled(&self) -> bool {
        self.steps.iter().any(|s| s.kind == StepKind::Journal)
    }

    /// The backend.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-plan_backend-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey::Backend;
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// assert_eq!(plan.backend()?, Backend::Sqlite);
    /// assert_eq!(plan.backend, "sqlite");
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn backend(&self) -> Result<Backend, Error> {
        Ok(self.backend.parse()?)
    }

    /// The journal's key for this table and column.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-target-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// // Every part in double quotes, so no two tables and columns share a key.
    /// assert_eq!(plan.target(), r#""orders"."id""#);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn target(&self) -> String {
        journal_target(&(&self.table).into(), &self.column)
    }
}

/// The journal's key for a table's column: every part in double quotes (doubled inside), so
/// that no two tables and columns share one (`tt` with column `x.id` against `tt.x` with `id`).
pub(crate) fn journal_target(table: &Name, column: &str) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let schema = table.schema.as_deref().map(|s| format!("{}.", q(s))).unwrap_or_default();
    format!("{schema}{}.{}", q(&table.name), q(column))
}

/// The materialized views (PostgreSQL) that read the key column or a referencing column, as
/// SQL names them, each once.
pub(crate) fn materialized_views(schema: &Schema) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (v, _, _) in &schema.views {
        if let Some(name) = v.name.strip_prefix("materialized view ")
            && !out.iter().any(|o| o == name)
        {
            out.push(name.to_string());
        }
    }
    out
}
