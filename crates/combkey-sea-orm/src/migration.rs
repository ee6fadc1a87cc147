//! sea-orm-migration helpers: COMB columns per backend, and a migration that installs the
//! database-side functions from the workspace's one SQL source ([`combkey::sql`]).

use sea_orm::DatabaseBackend;
use sea_orm_migration::prelude::*;

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

#[sea_orm_migration::async_trait::async_trait]
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
