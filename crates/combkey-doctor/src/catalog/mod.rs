//! What a database's catalog says about a table, and how a change to it is written: one
//! module per database ([`postgres`], [`mysql`], [`sqlite`]), reached through [`of`].
//!
//! Nothing here runs a query: each database's module gives the SQL of a catalog query
//! ([`Query`]), every selected value as text, and parses the rows a caller fetched into the
//! model below ([`Column`], [`ForeignKey`], ...). The statements a tool runs to change a schema
//! come from the same module ([`Catalog`]'s statement builders). Definitions are the database's own text
//! (`pg_get_constraintdef`, `SHOW CREATE TABLE`, `sqlite_master.sql`), never reassembled by
//! hand, so what is dropped can be re-created exactly.

use combkey::Backend;

use crate::error::Error;

mod model;
mod mysql;
mod postgres;
mod sqlite;

pub(crate) use model::*;

/// The catalog queries and statements of `backend`, or an error for a database this does not
/// read yet (SQL Server).
pub(crate) fn of(backend: Backend) -> Result<&'static dyn Catalog, Error> {
    match backend {
        Backend::Postgres => Ok(&postgres::Postgres),
        Backend::MySql => Ok(&mysql::MySql),
        Backend::Sqlite => Ok(&sqlite::Sqlite),
        other => Err(Error::usage(format!(
            "{other}: combkey doctor reads PostgreSQL, MySQL/MariaDB and SQLite catalogs (SQL Server: not yet)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_database_but_sql_server_has_a_catalog() {
        let q = of(Backend::Postgres).unwrap().resolve("\"Orders\"").unwrap();
        assert!(q.sql.contains("to_regclass"));
        assert!(of(Backend::MySql).is_ok() && of(Backend::Sqlite).is_ok());
        assert_eq!(of(Backend::SqlServer).err().map(|e| e.kind()), Some(crate::ErrorKind::Usage));
    }
}
