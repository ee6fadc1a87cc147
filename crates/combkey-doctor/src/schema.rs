//! What the catalog says about the table, its key column and every table that references it:
//! read once, in the audit's read-only transaction.

use std::collections::BTreeMap;

use crate::catalog::{Check, Column, ForeignKey, Name, ReplicaLag, Trigger};

use crate::db::Db;
use crate::error::Error;

/// The table and everything around its key column.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Schema {
    /// The table, as the catalog names it.
    pub table: Name,
    /// The key column.
    pub column: Column,
    /// The table's primary key columns.
    pub primary_key: Vec<String>,
    /// Whether the key column is unique by itself (its primary key, or a unique index of it
    /// alone); a key unique only with other columns can hold one id in several rows.
    pub unique_alone: bool,
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
    /// Referencing columns that hold key values with no index that starts with them (each
    /// key change then scans the referencing table to find and check its rows).
    pub unindexed: Vec<(Name, Vec<String>)>,
    /// Indexes a stopped run built for its foreign key checks and left (its last step drops
    /// them; PostgreSQL): table, index name.
    pub leftover_indexes: Vec<(Name, String)>,
    /// Each table's definition as the database writes it, before any change.
    pub definitions: BTreeMap<Name, String>,
    /// Generated columns computed from the key column or a referencing column: table, column,
    /// expression (`None` where the database does not tell it, SQLite).
    pub computed: Vec<(Name, String, Option<String>)>,
    /// Views that read the key column or a referencing column (PostgreSQL, whose column type
    /// change they block): view, and the table and column it reads.
    pub views: Vec<(Name, Name, String)>,
    /// Rules that rewrite writes to the table or a referencing table (PostgreSQL): table, rule.
    pub rules: Vec<(Name, String)>,
    /// Foreign keys that reference a *referencing* column (a grandchild: `g.cpid -> c.pid`
    /// where `c.pid -> table.id`): converting would have to follow the chain.
    pub chained: Vec<ForeignKey>,
    /// Per foreign key whose referencing table already holds rows that reference no row
    /// (a `NOT VALID` key, or rows written with checks off): its name, table and how many.
    /// Counted only when every key is read (not for a sampled audit).
    pub orphans: Vec<(String, Name, i64)>,
    /// Key values that are the same id written differently (letter case, braces, `urn:uuid:`),
    /// which one stored form would make one key: how many, and a few of them.
    pub same_id: (usize, Vec<String>),
    /// The table and referencing tables whose rows the connected role cannot all see (row-level
    /// security), and why.
    pub row_security: Vec<(Name, String)>,
    /// The partitioned table this table is a partition of (PostgreSQL).
    pub partition_of: Option<Name>,
    /// Whether the table is partitioned (PostgreSQL: its rows are all in its partitions).
    pub partitioned: bool,
    /// The system-versioned tables among the table and the referencing tables (MariaDB).
    pub versioned: Vec<Name>,
    /// The table and referencing tables that publications publish, with their names
    /// (PostgreSQL logical replication).
    pub published: Vec<(Name, Vec<String>)>,
    /// The table and referencing tables that subscriptions write, with their names.
    pub subscribed: Vec<(Name, Vec<String>)>,
    /// The published tables whose `UPDATE`s their publication would refuse (no replica
    /// identity).
    pub no_replica_identity: Vec<Name>,
    /// The server applies what a primary writes (a MySQL/MariaDB replica, a PostgreSQL
    /// standby): what it says of its lag.
    pub replica: Option<String>,
    /// Old keys that would become one key (they differ only in bits the conversion to v7
    /// drops): how many would be lost, and a few pairs. Counted when every key is read.
    pub collisions: (usize, Vec<String>),
    /// The table of old and new keys the conversion would keep, and what is there by its name.
    pub key_map: Option<KeyMapFacts>,
    /// The publications that would publish a table made in the table's schema (PostgreSQL
    /// `FOR ALL TABLES`, `FOR TABLES IN SCHEMA`).
    pub new_tables_published: Vec<String>,
    /// The server writes a statement-based binary log (MySQL/MariaDB).
    pub statement_binlog: bool,
    /// Whether the functions named like combkey's generator where the table's default would
    /// call them are combkey's own (`None`: there are none).
    pub combkey_v7: Option<bool>,
    /// Whether any function named like one of combkey's is there (where its installation would
    /// make them), combkey's or not.
    pub combkey_functions: bool,
    /// `--rekey-from`: the time column, and the keys it would re-key whose row's time makes no
    /// v7 key (`NULL`, in the future, before 1970, not a time).
    pub rekey: Option<(String, crate::rekey::Invalid)>,
    /// The table's columns that hold a time `--rekey-from` reads, creation times first.
    pub time_columns: Vec<String>,
}

/// What the database has where a conversion would keep its key map.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct KeyMapFacts {
    /// Its name.
    pub name: Name,
    /// Whether its schema (database) exists.
    pub schema_exists: bool,
    /// Its columns, where the table exists (none where it does not).
    pub columns: Vec<Column>,
    /// Whether it holds any row.
    pub has_rows: bool,
    /// What it says it is: its comment (PostgreSQL, MySQL/MariaDB), or its `CREATE TABLE`
    /// text (SQLite), which doctor writes naming the table and column whose keys it maps.
    pub about: Option<String>,
}

impl KeyMapFacts {
    /// Whether the table is there.
    pub fn exists(&self) -> bool {
        !self.columns.is_empty()
    }
}

/// `Err` with [`crate::ErrorKind::Usage`] for an empty table name (before any query sees it).
pub(crate) fn check_table_name(table: &str) -> Result<(), Error> {
    if table.trim().is_empty() {
        return Err(Error::usage("the table name is empty: give --table NAME"));
    }
    Ok(())
}

/// Whether `expression` names `column` (as a whole word, any letter case, quoted or not).
pub(crate) fn mentions(expression: &str, column: &str) -> bool {
    let hay = expression.to_lowercase();
    let needle = column.to_lowercase();
    if needle.is_empty() {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut from = 0;
    while let Some(at) = hay[from..].find(&needle) {
        let start = from + at;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        let after = hay[end..].chars().next();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return true;
        }
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The generated columns of `columns` (of `table`) computed from `key`.
fn computed_from(table: &Name, columns: &[Column], key: &str) -> Vec<(Name, String, Option<String>)> {
    columns
        .iter()
        .filter(|c| c.generated && c.name != key)
        .filter(|c| c.default.as_deref().is_none_or(|e| mentions(e, key)))
        .map(|c| (table.clone(), c.name.clone(), c.default.clone()))
        .collect()
}

/// The table `table` names, as the database resolves it; `None` for no such table, also for a
/// name the database cannot even read as one (PostgreSQL's `invalid name syntax` for
/// `t"; DROP TABLE x`): the name is a parameter of the query, never SQL.
pub(crate) async fn resolve(db: &mut Db, table: &str) -> Result<Option<crate::catalog::Name>, Error> {
    let catalog = db.catalog()?;
    match db.query(catalog.resolve(table)?).await {
        Err(e) if e.code() == Some("42602") => Ok(None),
        other => other,
    }
}

impl Schema {
    /// Reads it. `Err` with [`crate::ErrorKind::Usage`] for an unknown table or column.
    pub(crate) async fn load(db: &mut Db, table: &str, column: &str) -> Result<Schema, Error> {
        check_table_name(table)?;
        let column = crate::catalog::unquote(column);
        let column = column.as_str();
        if column.is_empty() {
            return Err(Error::usage("the column name is empty: give --column NAME"));
        }
        let catalog = db.catalog()?;
        let advice = match db.backend() {
            combkey::Backend::Postgres => "quote a name with capitals: '\"Orders\"'",
            combkey::Backend::MySql => "a name in backticks keeps what the unquoted name would lose: '`order-lines`'",
            _ => "a name in double quotes keeps what the unquoted name would lose",
        };
        let name = resolve(db, table).await?.ok_or_else(|| {
            Error::usage(format!("no table {table:?} (names are matched as the database matches them; {advice})"))
        })?;
        let columns = columns_of(db, &name).await?;
        let column = columns
            .iter()
            .find(|c| c.name == column)
            .or_else(|| columns.iter().find(|c| c.name.eq_ignore_ascii_case(column)))
            .cloned()
            .ok_or_else(|| Error::usage(format!("no column {column} in table {name}")))?;
        let ty = column.data_type.as_str();
        if ["int", "serial", "numeric", "decimal", "float", "double", "real"].iter().any(|n| ty.contains(n)) {
            return Err(Error::usage(format!(
                "{name}.{} is {ty}: a column of numbers holds no UUID; combkey doctor audits and converts UUID keys \
                 (uuid, binary(16), blob, or UUID text)",
                column.name
            )));
        }
        let primary_key = db.query(catalog.primary_key(&name)).await?;
        let unique_alone = db.query(catalog.unique_alone(&name, &column.name)).await?;
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
        let mut computed = computed_from(&name, &columns, &column.name);
        let mut views = Vec::new();
        let mut chained: Vec<ForeignKey> = Vec::new();
        let mut rules: Vec<(Name, String)> = Vec::new();
        if let Some(q) = catalog.rules(&name) {
            rules.extend(db.query(q).await?.into_iter().map(|r| (name.clone(), r)));
        }
        if let Some(q) = catalog.views_reading(&name, &column.name) {
            views.extend(db.query(q).await?.into_iter().map(|v| (v, name.clone(), column.name.clone())));
        }
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
            for c in computed_from(&fk.child, &child_cols, &col.name) {
                if !computed.contains(&c) {
                    computed.push(c);
                }
            }
            if fk.child != name
                && !rules.iter().any(|(t, _)| *t == fk.child)
                && let Some(q) = catalog.rules(&fk.child)
            {
                rules.extend(db.query(q).await?.into_iter().map(|r| (fk.child.clone(), r)));
            }
            for g in db.query(catalog.references(&fk.child, &col.name)).await? {
                let already = g.child == name && g.child_columns.iter().any(|c| c.eq_ignore_ascii_case(&column.name));
                if !already && !chained.contains(&g) {
                    chained.push(g);
                }
            }
            if let Some(q) = catalog.views_reading(&fk.child, &col.name) {
                for v in db.query(q).await? {
                    let seen = (v, fk.child.clone(), col.name.clone());
                    if !views.contains(&seen) {
                        views.push(seen);
                    }
                }
            }
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
            // The column that holds the key's values: the rewrite finds a batch's rows by it
            // alone (an index on a composite key's `(tenant, parent)` cannot be probed by
            // `parent`), so an index must start with it.
            let holding: Vec<String> = match fk.child_column_for(&column.name) {
                Some(c) => vec![c.to_string()],
                None => fk.child_columns.clone(),
            };
            // A partitioned referencing table holds no rows itself: each partition carries a
            // clone of its foreign key (listed among the references too) and gets its own index.
            let child_partitioned = match catalog.partitioned(&fk.child) {
                Some(q) => db.query(q).await?,
                None => false,
            };
            if !child_partitioned
                && !db.query(catalog.has_index_on(&fk.child, &holding)).await?
                && !unindexed.iter().any(|(t, c)| *t == fk.child && *c == holding)
            {
                unindexed.push((fk.child.clone(), holding));
            }
        }
        let inheritors = db.query(catalog.inheritors(&name)).await?;
        // Facts about the table and every referencing table that decide whether a change may
        // go ahead at all.
        let mut tables = vec![name.clone()];
        for fk in &references {
            if !tables.contains(&fk.child) {
                tables.push(fk.child.clone());
            }
        }
        let (mut row_security, mut versioned, mut published, mut subscribed) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut no_replica_identity = Vec::new();
        // A replica of a primary (a role without the privilege to ask cannot tell: it is not
        // taken for one).
        let replica = match db.rows_named(catalog.replica_status()).await {
            Ok((names, rows)) => match catalog.read_replica(&names, &rows) {
                ReplicaLag::NotAReplica => None,
                ReplicaLag::Behind(s) => Some(format!("{s:.0} s behind its primary")),
                ReplicaLag::Unknown(why) => Some(why),
            },
            Err(_) => None,
        };
        for t in &tables {
            if let Some(q) = catalog.row_security(t)
                && let Some(why) = db.query(q).await?
            {
                row_security.push((t.clone(), why));
            }
            if let Some(q) = catalog.versioned(t)
                && db.query(q).await?
            {
                versioned.push(t.clone());
            }
            if let Some(q) = catalog.publications(t) {
                // A publication dropped while the catalog is read fails the read ("publication
                // ... does not exist"): read again, once.
                let again = q.clone();
                let pubs = match db.query(q).await {
                    Err(e) if e.code() == Some("42704") => db.query(again).await?,
                    other => other?,
                };
                if !pubs.is_empty() {
                    if let Some(q) = catalog.missing_replica_identity(t)
                        && db.query(q).await?
                    {
                        no_replica_identity.push(t.clone());
                    }
                    published.push((t.clone(), pubs));
                }
            }
            if let Some(q) = catalog.subscriptions(t) {
                let subs = db.query(q).await?;
                if !subs.is_empty() {
                    subscribed.push((t.clone(), subs));
                }
            }
        }
        let partition_of = match catalog.partition_of(&name) {
            Some(q) => db.query(q).await?,
            None => None,
        };
        let mut leftover_indexes = Vec::new();
        for fk in &references {
            if leftover_indexes.iter().any(|(t, _): &(Name, String)| *t == fk.child) {
                continue;
            }
            if let Some(q) = catalog.own_indexes(&fk.child) {
                for index in db.query(q).await? {
                    leftover_indexes.push((fk.child.clone(), index));
                }
            }
        }
        let partitioned = match catalog.partitioned(&name) {
            Some(q) => db.query(q).await?,
            None => false,
        };
        Ok(Schema {
            table: name,
            column,
            primary_key,
            unique_alone,
            references,
            child_columns,
            triggers,
            checks,
            inheritors,
            auto_update,
            unindexed,
            leftover_indexes,
            definitions,
            computed,
            views,
            rules,
            chained,
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
            row_security,
            partition_of,
            partitioned,
            versioned,
            published,
            subscribed,
            no_replica_identity,
            replica,
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
    /// Whether the keys the database makes are combkey's v7 already: the key column's default
    /// calls a v7 generator, or combkey's `BEFORE INSERT` trigger fills it (MySQL/MariaDB).
    pub fn default_makes_v7(&self) -> bool {
        let trigger = self
            .triggers
            .iter()
            .any(|t| t.table == self.table && t.events.contains("INSERT") && t.definition.contains("combkey_v7("));
        let default = self.column.default.as_deref().filter(|_| !self.column.generated);
        let calls_ours = |d: &str| !d.contains("combkey_v7(") || self.combkey_v7 != Some(false);
        (trigger && self.combkey_v7 != Some(false))
            || default.is_some_and(|d| default_makes(d) == Some("v7") && calls_ours(d))
    }

    pub fn update_triggers(&self) -> Vec<&Trigger> {
        self.triggers.iter().filter(|t| t.events.contains("UPDATE")).collect()
    }
}

/// What a key column's default expression (or combkey's `BEFORE INSERT` trigger) makes, by
/// the generator it calls: `v7`, `v4`, `v1`, `mysql-swap`, `newsequentialid`, or `None` where
/// it is none of those known.
///
/// ```
/// use combkey_doctor::default_makes;
///
/// assert_eq!(default_makes("uuid_generate_v1mc()"), Some("v1"));
/// assert_eq!(default_makes("gen_random_uuid()"), Some("v4"));
/// assert_eq!(default_makes("uuid()"), Some("v1"));
/// assert_eq!(default_makes("uuid_to_bin(uuid(), 1)"), Some("mysql-swap"));
/// assert_eq!(default_makes("combkey_v7()"), Some("v7"));
/// assert_eq!(default_makes("'x'::text"), None);
/// ```
pub fn default_makes(expression: &str) -> Option<&'static str> {
    let e: String = expression.to_lowercase().chars().filter(|c| !c.is_whitespace()).collect();
    let has = |f: &str| e.contains(f);
    Some(if has("combkey_v7(") || has("uuidv7(") || has("uuid_v7(") {
        "v7"
    } else if has("gen_random_uuid(")
        || has("uuid_generate_v4(")
        || has("uuidv4(")
        || has("uuid_v4(")
        || has("newid(")
        || has("randomblob(")
    {
        "v4"
    } else if has("uuid_generate_v1") {
        "v1"
    } else if has("uuid_to_bin(uuid(),1)") || has("uuid_to_bin(uuid(),true)") {
        "mysql-swap"
    } else if has("newsequentialid(") {
        "newsequentialid"
    } else if has("uuid()") {
        // MySQL's and MariaDB's UUID() is a version 1 UUID, as text or through UNHEX/UUID_TO_BIN.
        "v1"
    } else {
        return None;
    })
}

/// The primary key index's size and density, where the database tells.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct IndexStats {
    /// Bytes (MySQL: the clustered index, as of the table's statistics).
    pub bytes: i64,
    /// PostgreSQL's leaf density in percent (with `pgstattuple` installed).
    pub leaf_density: Option<f64>,
}

/// The columns of `name`, a table that exists. MariaDB's `information_schema.COLUMNS` shows
/// none of a table whose metadata lock another session's DDL holds (it skips a table it cannot
/// open, with a warning): read again for a few seconds, then a lock timeout that says so, never
/// "no column" (the generated-case harness's seed 273: a DBA's `ALTER TABLE` at the moment of
/// the read).
pub(crate) async fn columns_of(db: &mut Db, name: &Name) -> Result<Vec<crate::catalog::Column>, Error> {
    let catalog = db.catalog()?;
    let started = std::time::Instant::now();
    loop {
        let columns = db.query(catalog.columns(name)).await?;
        if !columns.is_empty() || db.backend() != combkey::Backend::MySql {
            return Ok(columns);
        }
        if started.elapsed() >= std::time::Duration::from_secs(5) {
            return Err(Error::new(
                crate::error::ErrorKind::LockTimeout,
                format!(
                    "the columns of {name} could not be read for 5 s: information_schema shows none while another \
                     session's DDL holds the table's metadata lock; nothing was changed, run again once it ends"
                ),
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
