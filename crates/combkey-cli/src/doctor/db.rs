//! The database side of `combkey doctor`: reading a key column, its type, the foreign keys
//! that reference it and its index, through sqlx on PostgreSQL, MySQL/MariaDB and SQLite.

use combkey::Comb;
use combkey::adapter::{ColumnKind, from_column};
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, Row, SqliteConnection};

/// A connection to one of the three databases.
pub(crate) enum Db {
    Pg(PgConnection),
    My(MySqlConnection),
    Lite(SqliteConnection),
}

/// A key as read: the id, and the value as the table holds it (to find the row again).
#[derive(Clone, Debug)]
pub(crate) struct Key {
    pub(crate) id: Comb,
    pub(crate) raw: Raw,
}

/// The value of a key column as the database holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Raw {
    /// Bytes (`uuid`, `BINARY(16)`, a `BLOB`).
    Bytes(Vec<u8>),
    /// Text (`CHAR(36)`, `text`, a SQLite `TEXT` value).
    Text(String),
}

/// A foreign key that references the audited column.
#[derive(Clone, Debug)]
pub(crate) struct Reference {
    pub(crate) table: String,
    pub(crate) column: String,
    pub(crate) constraint: String,
    /// How to create it again (PostgreSQL: `pg_get_constraintdef`; MySQL: the clause).
    pub(crate) definition: String,
    /// Whether the referencing column takes `NULL`.
    pub(crate) nullable: bool,
}

/// Size and density of the primary key's index, where the database tells.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexStats {
    pub(crate) bytes: i64,
    /// PostgreSQL's `avg_leaf_density` (pgstattuple), in percent.
    pub(crate) leaf_density: Option<f64>,
}

fn err(what: &str) -> impl Fn(sqlx::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// A plain SQL identifier (letters, digits, `_`, `$`), or an error: names are written into
/// the SQL, so nothing else is accepted.
pub(crate) fn identifier(what: &str, name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if ok { Ok(name.to_string()) } else { Err(format!("{what} {name:?}: expected a plain SQL identifier")) }
}

impl Db {
    pub(crate) async fn connect(url: &str) -> Result<Db, String> {
        let fail = |e: sqlx::Error| format!("connecting to {url}: {e}");
        if url.starts_with("postgres") {
            let mut opts: sqlx::postgres::PgConnectOptions = url.parse().map_err(fail)?;
            // Named in pg_stat_activity, unless the URL names it (`?application_name=...`).
            if opts.get_application_name().is_none() {
                opts = opts.application_name("combkey doctor");
            }
            Ok(Db::Pg(PgConnection::connect_with(&opts).await.map_err(fail)?))
        } else if url.starts_with("mysql") || url.starts_with("mariadb") {
            Ok(Db::My(MySqlConnection::connect(url).await.map_err(fail)?))
        } else if url.starts_with("sqlite") {
            Ok(Db::Lite(SqliteConnection::connect(url).await.map_err(fail)?))
        } else {
            Err(format!("{url}: expected a postgres://, mysql:// or sqlite: URL (SQL Server: not yet)"))
        }
    }

    pub(crate) fn backend(&self) -> combkey::Backend {
        match self {
            Db::Pg(_) => combkey::Backend::Postgres,
            Db::My(_) => combkey::Backend::MySql,
            Db::Lite(_) => combkey::Backend::Sqlite,
        }
    }

    /// The column's declared type, lower case (`uuid`, `binary(16)`, `char(36)`, `blob`).
    pub(crate) async fn column_type(&mut self, table: &str, column: &str) -> Result<String, String> {
        let found: Option<String> = match self {
            Db::Pg(c) => sqlx::query_scalar(
                "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a \
                 WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND NOT a.attisdropped",
            )
            .bind(table)
            .bind(column)
            .fetch_optional(c)
            .await
            .map_err(err("column type"))?,
            Db::My(c) => sqlx::query_scalar(
                "SELECT CAST(COLUMN_TYPE AS CHAR) FROM information_schema.COLUMNS \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?",
            )
            .bind(table)
            .bind(column)
            .fetch_optional(c)
            .await
            .map_err(err("column type"))?,
            Db::Lite(c) => sqlx::query_scalar("SELECT type FROM pragma_table_info(?) WHERE name = ?")
                .bind(table)
                .bind(column)
                .fetch_optional(c)
                .await
                .map_err(err("column type"))?,
        };
        found.map(|t| t.to_lowercase()).ok_or_else(|| format!("no column {column} in table {table}"))
    }

    /// The table's rows (PostgreSQL with a sample: the planner's estimate).
    pub(crate) async fn rows(&mut self, table: &str, estimate: bool) -> Result<i64, String> {
        match self {
            Db::Pg(c) if estimate => {
                let n: f32 = sqlx::query_scalar("SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)")
                    .bind(table)
                    .fetch_one(&mut *c)
                    .await
                    .map_err(err("row estimate"))?;
                if n >= 0.0 {
                    #[allow(clippy::cast_possible_truncation)]
                    return Ok(n as i64);
                }
                sqlx::query_scalar(AssertSqlSafe(format!("SELECT count(*) FROM \"{table}\"")))
                    .fetch_one(c)
                    .await
                    .map_err(err("row count"))
            }
            Db::Pg(c) => sqlx::query_scalar(AssertSqlSafe(format!("SELECT count(*) FROM \"{table}\"")))
                .fetch_one(c)
                .await
                .map_err(err("row count")),
            Db::My(c) => sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM `{table}`")))
                .fetch_one(c)
                .await
                .map_err(err("row count")),
            Db::Lite(c) => sqlx::query_scalar(AssertSqlSafe(format!("SELECT count(*) FROM \"{table}\"")))
                .fetch_one(c)
                .await
                .map_err(err("row count")),
        }
    }

    /// The keys in the database's `ORDER BY key` order: all of them, or about `sample` of
    /// them drawn evenly from the whole table. Values that are no id at all are counted in
    /// the second element, not returned.
    pub(crate) async fn keys(
        &mut self,
        table: &str,
        column: &str,
        sample: Option<(usize, i64)>,
    ) -> Result<(Vec<Key>, usize), String> {
        // The share of rows to draw, in percent.
        #[allow(clippy::cast_precision_loss)]
        let pct = sample.map(|(n, rows)| (n as f64 * 100.0 / rows.max(1) as f64).min(100.0));
        let raws: Vec<Raw> = match self {
            Db::Pg(c) => {
                let from = match pct {
                    Some(p) if p < 100.0 => format!("\"{table}\" TABLESAMPLE BERNOULLI ({p})"),
                    _ => format!("\"{table}\""),
                };
                let rows = sqlx::query(AssertSqlSafe(format!(
                    "SELECT \"{column}\"::text FROM {from} WHERE \"{column}\" IS NOT NULL ORDER BY \"{column}\""
                )))
                .fetch_all(c)
                .await
                .map_err(err("reading the keys"))?;
                rows.iter().map(|r| r.try_get::<String, _>(0).map(Raw::Text)).collect::<Result<_, _>>()
            }
            Db::My(c) => {
                let filter = match pct {
                    Some(p) if p < 100.0 => format!(" AND RAND() < {}", p / 100.0),
                    _ => String::new(),
                };
                let rows = sqlx::query(AssertSqlSafe(format!(
                    "SELECT `{column}` FROM `{table}` WHERE `{column}` IS NOT NULL{filter} ORDER BY `{column}`"
                )))
                .fetch_all(c)
                .await
                .map_err(err("reading the keys"))?;
                rows.iter().map(|r| r.try_get::<Vec<u8>, _>(0).map(Raw::Bytes)).collect::<Result<_, _>>()
            }
            Db::Lite(c) => {
                let filter = match pct {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    Some(p) if p < 100.0 => format!(" AND abs(random()) % {} = 0", (100.0 / p).round().max(1.0) as u64),
                    _ => String::new(),
                };
                let rows = sqlx::query(AssertSqlSafe(format!(
                    "SELECT CAST(\"{column}\" AS BLOB), typeof(\"{column}\") FROM \"{table}\" \
                     WHERE \"{column}\" IS NOT NULL{filter} ORDER BY \"{column}\""
                )))
                .fetch_all(c)
                .await
                .map_err(err("reading the keys"))?;
                rows.iter()
                    .map(|r| {
                        let bytes: Vec<u8> = r.try_get(0)?;
                        let ty: String = r.try_get(1)?;
                        Ok(if ty == "text" {
                            Raw::Text(String::from_utf8_lossy(&bytes).into_owned())
                        } else {
                            Raw::Bytes(bytes)
                        })
                    })
                    .collect::<Result<_, sqlx::Error>>()
            }
        }
        .map_err(err("reading the keys"))?;
        let mut keys = Vec::with_capacity(raws.len());
        let mut unreadable = 0;
        for raw in raws {
            let id = match &raw {
                Raw::Bytes(b) => from_column(b, ColumnKind::BinaryOrText),
                Raw::Text(t) => from_column(t.as_bytes(), ColumnKind::Text),
            };
            match id {
                Ok(id) => keys.push(Key { id, raw }),
                Err(_) => unreadable += 1,
            }
        }
        Ok((keys, unreadable))
    }

    /// The foreign keys that reference `table.column`.
    pub(crate) async fn references(&mut self, table: &str, column: &str) -> Result<Vec<Reference>, String> {
        let rows: Vec<(String, String, String, String, bool)> = match self {
            Db::Pg(c) => sqlx::query_as(
                "SELECT c.conrelid::regclass::text, a.attname::text, c.conname::text, pg_get_constraintdef(c.oid), NOT a.attnotnull \
                 FROM pg_constraint c \
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
                 JOIN pg_attribute r ON r.attrelid = c.confrelid AND r.attnum = c.confkey[1] \
                 WHERE c.contype = 'f' AND c.confrelid = to_regclass($1) AND r.attname = $2 \
                 AND cardinality(c.conkey) = 1 ORDER BY 1, 2",
            )
            .bind(table)
            .bind(column)
            .fetch_all(c)
            .await
            .map_err(err("foreign keys"))?,
            Db::My(c) => sqlx::query_as(
                "SELECT CAST(k.TABLE_NAME AS CHAR), CAST(k.COLUMN_NAME AS CHAR), CAST(k.CONSTRAINT_NAME AS CHAR), \
                 CAST(CONCAT('ON DELETE ', r.DELETE_RULE, ' ON UPDATE ', r.UPDATE_RULE) AS CHAR), \
                 col.IS_NULLABLE = 'YES' \
                 FROM information_schema.KEY_COLUMN_USAGE k \
                 JOIN information_schema.REFERENTIAL_CONSTRAINTS r \
                   ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME \
                   AND r.TABLE_NAME = k.TABLE_NAME \
                 JOIN information_schema.COLUMNS col \
                   ON col.TABLE_SCHEMA = k.TABLE_SCHEMA AND col.TABLE_NAME = k.TABLE_NAME AND col.COLUMN_NAME = k.COLUMN_NAME \
                 WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME = ? AND k.REFERENCED_COLUMN_NAME = ? \
                 ORDER BY 1, 2",
            )
            .bind(table)
            .bind(column)
            .fetch_all(c)
            .await
            .map_err(err("foreign keys"))?,
            Db::Lite(c) => sqlx::query_as(
                "SELECT m.name, p.\"from\", 'fk_' || m.name || '_' || p.\"from\", '', 1 \
                 FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) p \
                 WHERE m.type = 'table' AND p.\"table\" = ? AND p.\"to\" = ? ORDER BY 1, 2",
            )
            .bind(table)
            .bind(column)
            .fetch_all(c)
            .await
            .map_err(err("foreign keys"))?,
        };
        Ok(rows
            .into_iter()
            .map(|(table, column, constraint, definition, nullable)| Reference {
                table,
                column,
                constraint,
                definition,
                nullable,
            })
            .collect())
    }

    /// The primary key index's size (and on PostgreSQL its leaf density, with pgstattuple).
    pub(crate) async fn index_stats(&mut self, table: &str) -> Option<IndexStats> {
        match self {
            Db::Pg(c) => {
                let index: String = sqlx::query_scalar(
                    "SELECT i.indexrelid::regclass::text FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisprimary",
                )
                .bind(table)
                .fetch_optional(&mut *c)
                .await
                .ok()??;
                let bytes: i64 = sqlx::query_scalar("SELECT pg_relation_size($1::regclass)")
                    .bind(&index)
                    .fetch_one(&mut *c)
                    .await
                    .ok()?;
                let _ = sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pgstattuple").execute(&mut *c).await;
                let leaf_density: Option<f64> = sqlx::query_scalar("SELECT avg_leaf_density FROM pgstatindex($1)")
                    .bind(&index)
                    .fetch_one(&mut *c)
                    .await
                    .ok();
                Some(IndexStats { bytes, leaf_density })
            }
            Db::My(c) => {
                let _ = sqlx::raw_sql(AssertSqlSafe(format!("ANALYZE TABLE `{table}`"))).execute(&mut *c).await;
                let bytes: i64 = sqlx::query_scalar(
                    "SELECT CAST(DATA_LENGTH AS SIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                )
                .bind(table)
                .fetch_one(&mut *c)
                .await
                .ok()?;
                Some(IndexStats { bytes, leaf_density: None })
            }
            Db::Lite(_) => None,
        }
    }
}
