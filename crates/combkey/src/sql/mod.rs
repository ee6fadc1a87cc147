//! Migration SQL beyond a column's type: tables partitioned by time through their COMB key
//! ([`Partitioning`]) or sharded over servers ([`Sharding`]), conversions of existing key
//! columns ([`sqlserver_convert_table`], [`sqlserver_convert_rtcomb_sql`],
//! [`mysql_text_key_to_binary16`]), and splitting a script into batches ([`batches`]).
//!
//! The column DDL and the database-side functions are asked of [`Backend`](crate::Backend)
//! ([`Backend::install_functions`](crate::Backend::install_functions), ...); the functions' SQL
//! is in `.sql` files in the crate's `src/backend/` (`postgres.up.sql`, `mysql.up.sql`,
//! `sqlserver.up.sql` and their `.down.sql`), to be read, diffed and run by hand. The adapter
//! crates re-export this module and `combkey sql BACKEND` prints it all.
//!
//! ```
//! use combkey::Backend;
//!
//! assert!(Backend::Postgres.install_functions().contains("CREATE OR REPLACE FUNCTION combkey_v7()"));
//! assert_eq!(Backend::MySql.primary_key("id"), "id BINARY(16) NOT NULL PRIMARY KEY");
//! ```

pub(crate) mod partitions;
mod shards;

pub use crate::backend::mysql::text_key_to_binary16 as mysql_text_key_to_binary16;
pub use crate::backend::sqlserver::{
    ExistingKeys, Referencing, convert_rtcomb_sql as sqlserver_convert_rtcomb_sql,
    convert_table as sqlserver_convert_table,
};
pub use partitions::{Interval, Partitioning};
pub use shards::Sharding;

/// The batches of an SQL text, split at lines that read `GO` (SQL Server); trimmed, empty
/// ones dropped. SQL Server needs each `CREATE FUNCTION` in a batch of its own, and its texts
/// here separate batches with `GO` lines (as `sqlcmd` does): run each batch on its own
/// (`tiberius::Client::simple_query`). Other backends' texts are one batch.
///
/// ```
/// use combkey::{Backend, sql::batches};
///
/// assert_eq!(batches(Backend::SqlServer.install_functions()).count(), 8);
/// assert_eq!(batches(Backend::Postgres.install_functions()).count(), 1);
/// assert_eq!(batches("SELECT 1\nGO\n\nSELECT 2\ngo\n").collect::<Vec<_>>(), ["SELECT 1", "SELECT 2"]);
/// ```
pub fn batches(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut lines = text.lines().peekable();
    core::iter::from_fn(move || {
        loop {
            let mut batch = String::new();
            let mut ended = false;
            for line in lines.by_ref() {
                if line.trim().eq_ignore_ascii_case("go") {
                    ended = true;
                    break;
                }
                batch.push_str(line);
                batch.push('\n');
            }
            let trimmed = batch.trim();
            if !trimmed.is_empty() {
                return Some(trimmed.to_string());
            }
            if !ended && lines.peek().is_none() {
                return None;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::Backend;

    #[test]
    fn migration_text_has_everything() {
        let pg = Backend::Postgres.migration_text();
        assert!(
            pg.contains("CREATE OR REPLACE FUNCTION combkey_v7()")
                && pg.contains("-- DROP FUNCTION IF EXISTS combkey_v7();")
        );
        let my = Backend::MySql.migration_text();
        assert!(my.contains("RANDOM_BYTES(10)") && my.contains("-- UPDATE `t` SET"));
        assert!(Backend::Sqlite.migration_text().contains("no stored functions"));
        assert!(
            Backend::SqlServer
                .migration_text()
                .contains("-- UPDATE dbo.t SET [id] = dbo.combkey_from_rtcomb_sql([id])")
        );
    }
}
