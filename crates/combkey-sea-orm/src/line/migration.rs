//! sea-orm-migration helpers: COMB columns per backend, and a migration that installs the
//! database-side functions, the SQL of [`combkey::Backend::install_functions`] (which
//! `combkey sql BACKEND --up` prints too).

use super::orm::DatabaseBackend;
use super::orm_migration::prelude::*;

use combkey::Backend;

/// A COMB column: `uuid` on PostgreSQL, `binary(16)` on MySQL/MariaDB (mind that
/// sea-orm-migration's `binary()` alone means `BINARY(1)`), `blob` on SQLite. Add
/// `.not_null().primary_key()` for a key, or use [`comb_primary_key`].
///
/// ```
/// use sea_orm::DatabaseBackend;
/// use sea_orm_migration::prelude::*;
///
/// let table = Table::create()
///     .table("orders")
///     .col(combkey_sea_orm::migration::comb_primary_key("id", DatabaseBackend::MySql))
///     .col(combkey_sea_orm::migration::comb_column("parent", DatabaseBackend::MySql).null())
///     .to_string(MysqlQueryBuilder);
/// assert_eq!(table, "CREATE TABLE `orders` ( `id` binary(16) NOT NULL PRIMARY KEY, `parent` binary(16) NULL )");
/// ```
pub fn comb_column<T: IntoIden>(name: T, backend: DatabaseBackend) -> ColumnDef {
    let mut def = ColumnDef::new(name);
    match backend {
        DatabaseBackend::Postgres => def.uuid(),
        DatabaseBackend::MySql => def.binary_len(16),
        _ => def.blob(),
    };
    def
}

/// [`comb_column`] as `NOT NULL PRIMARY KEY`.
pub fn comb_primary_key<T: IntoIden>(name: T, backend: DatabaseBackend) -> ColumnDef {
    let mut def = comb_column(name, backend);
    def.not_null().primary_key();
    def
}

fn dialect(backend: DatabaseBackend) -> Option<Backend> {
    match backend {
        DatabaseBackend::Postgres => Some(Backend::Postgres),
        DatabaseBackend::MySql => Some(Backend::MySql),
        _ => None,
    }
}

/// A migration that installs `combkey_v7()`, `combkey_unix_ms(id)` and `combkey_time(id)` on
/// PostgreSQL and MySQL/MariaDB (nothing on SQLite, which has no stored functions), and
/// drops them on the way down.
///
/// ```
/// use sea_orm_migration::prelude::*;
///
/// pub struct Migrator;
///
/// impl MigratorTrait for Migrator {
///     fn migrations() -> Vec<Box<dyn MigrationTrait>> {
///         vec![Box::new(combkey_sea_orm::migration::InstallCombkeyFunctions)]
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct InstallCombkeyFunctions;

impl MigrationName for InstallCombkeyFunctions {
    fn name(&self) -> &str {
        "m00000000_000000_combkey_functions"
    }
}

#[super::orm_migration::async_trait::async_trait]
impl MigrationTrait for InstallCombkeyFunctions {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if let Some(d) = dialect(manager.get_database_backend()) {
            let db = manager.get_connection();
            if d == Backend::MySql {
                // MySQL has no CREATE OR REPLACE FUNCTION.
                db.execute_unprepared(d.drop_functions()).await?;
            }
            db.execute_unprepared(d.install_functions()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if let Some(d) = dialect(manager.get_database_backend()) {
            manager.get_connection().execute_unprepared(d.drop_functions()).await?;
        }
        Ok(())
    }
}

/// Creates `table` partitioned by time through its COMB key, one partition per interval of
/// `partitioning` from the one holding `from` to the one before `to` (with `default`, a
/// catch-all for ids outside them), the DDL of [`combkey::sql::Partitioning::create`]:
///
/// - PostgreSQL: the table is declared `PARTITION BY RANGE (key)`, then one
///   `CREATE TABLE ... PARTITION OF` per interval;
/// - MySQL/MariaDB: the table is created, then `ALTER TABLE ... PARTITION BY RANGE
///   COLUMNS(key)` over its `BINARY(16)` key;
/// - SQLite has no partitioning: an error, and no table.
///
/// The key must be the table's primary key (MySQL: every unique key must hold it;
/// PostgreSQL: every unique constraint must). Drop the table on the way down: its
/// partitions go with it. A scheduled job keeps the partitions going with
/// [`Partitioning::add`](combkey::sql::Partitioning::add) and
/// [`drop_before`](combkey::sql::Partitioning::drop_before), run with
/// `execute_unprepared`.
///
/// ```
/// use combkey::Timestamp;
/// use combkey::sql::{Interval, Partitioning};
/// use sea_orm_migration::prelude::*;
/// use combkey_sea_orm::migration::{comb_primary_key, create_partitioned_table};
///
/// pub struct CreateOrders;
///
/// impl MigrationName for CreateOrders {
///     fn name(&self) -> &str {
///         "m20260101_000001_create_orders"
///     }
/// }
///
/// #[async_trait::async_trait]
/// impl MigrationTrait for CreateOrders {
///     async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
///         let backend = manager.get_database_backend();
///         let table = Table::create()
///             .table("orders")
///             .col(comb_primary_key("id", backend))
///             .col(ColumnDef::new("note").text().not_null())
///             .to_owned();
///         let from: Timestamp = "2026-01-01T00:00:00Z".parse().map_err(|e| DbErr::Migration(format!("{e}")))?;
///         let to: Timestamp = "2027-01-01T00:00:00Z".parse().map_err(|e| DbErr::Migration(format!("{e}")))?;
///         let months = Partitioning::new("orders", Interval::Month).map_err(|e| DbErr::Migration(format!("{e}")))?;
///         create_partitioned_table(manager, table, &months, from, to, true).await
///     }
///
///     async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
///         manager.drop_table(Table::drop().table("orders").to_owned()).await
///     }
/// }
/// ```
pub async fn create_partitioned_table(
    manager: &SchemaManager<'_>,
    mut table: TableCreateStatement,
    partitioning: &combkey::sql::Partitioning,
    from: combkey::Timestamp,
    to: combkey::Timestamp,
    default: bool,
) -> Result<(), DbErr> {
    let backend = manager.get_database_backend();
    let Some(d) = dialect(backend) else {
        return Err(DbErr::Migration(format!(
            "cannot partition {}: {backend:?} has no table partitioning (PostgreSQL and MySQL/MariaDB do)",
            partitioning.table()
        )));
    };
    // All of the DDL first: a bad range creates no table.
    let ddl = partitioning.create(d, from, to, default).map_err(|e| DbErr::Migration(e.to_string()))?;
    if d == Backend::Postgres {
        table.extra(format!("PARTITION BY RANGE (\"{}\")", partitioning.key()));
    }
    manager.create_table(table).await?;
    if let Err(e) = manager.get_connection().execute_unprepared(&ddl).await {
        // Leave nothing half-made: no table without its partitions.
        let drop = Table::drop().table(Alias::new(partitioning.table())).if_exists().to_owned();
        let _ = manager.drop_table(drop).await;
        return Err(e);
    }
    Ok(())
}
