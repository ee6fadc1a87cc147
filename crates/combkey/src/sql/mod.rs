//! Migration SQL per database: column DDL, database-side generator and timestamp functions,
//! and conversions of existing data. The one source of these texts for the whole workspace:
//! the adapter crates re-export this module and `combkey sql DIALECT` prints it.
//!
//! The methods are on [`Backend`]; the SQL itself is in `.sql` files beside this module
//! (`postgres.up.sql`, `mysql.up.sql`, `mssql.up.sql` and their `.down.sql`), to be read,
//! diffed and run by hand as SQL.
//!
//! ```
//! use combkey::Backend;
//!
//! assert!(Backend::Postgres.install_functions().contains("CREATE OR REPLACE FUNCTION combkey_v7()"));
//! assert_eq!(Backend::MySql.primary_key("id"), "id BINARY(16) NOT NULL PRIMARY KEY");
//! ```

use crate::backend::Backend;

mod partitions;

pub use partitions::{Interval, Partitioning};

impl Backend {
    /// DDL for a COMB primary key column named `name`. On PostgreSQL the database-side
    /// generator is its default; MySQL and MariaDB do not allow a stored function in a
    /// `DEFAULT`, so there [`default_trigger`](Self::default_trigger) fills it instead.
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(Backend::Postgres.primary_key("id"), "id uuid PRIMARY KEY DEFAULT combkey_v7()");
    /// assert_eq!(Backend::MySql.primary_key("id"), "id BINARY(16) NOT NULL PRIMARY KEY");
    /// assert_eq!(Backend::Sqlite.primary_key("id"), "id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16)");
    /// ```
    pub fn primary_key(self, name: &str) -> String {
        match self {
            Backend::Postgres => format!("{name} uuid PRIMARY KEY DEFAULT combkey_v7()"),
            Backend::MySql => format!("{name} BINARY(16) NOT NULL PRIMARY KEY"),
            Backend::Sqlite => format!("{name} BLOB NOT NULL PRIMARY KEY CHECK (length({name}) = 16)"),
            Backend::SqlServer => format!("{name} uniqueidentifier NOT NULL PRIMARY KEY DEFAULT dbo.combkey_v7()"),
        }
    }

    /// MySQL/MariaDB: a trigger that gives `column` of `table` a `combkey_v7()` id when an
    /// insert leaves it out or sets it `NULL` (the role a `DEFAULT` plays on PostgreSQL).
    /// `None` for the other dialects.
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(
    ///     Backend::MySql.default_trigger("orders", "id").as_deref(),
    ///     Some("CREATE TRIGGER `orders_combkey_id` BEFORE INSERT ON `orders` FOR EACH ROW SET NEW.`id` = IFNULL(NEW.`id`, combkey_v7())")
    /// );
    /// ```
    pub fn default_trigger(self, table: &str, column: &str) -> Option<String> {
        match self {
            Backend::MySql => Some(format!(
                "CREATE TRIGGER {trigger} BEFORE INSERT ON {t} FOR EACH ROW SET NEW.{c} = IFNULL(NEW.{c}, combkey_v7())",
                trigger = quote_mysql(&format!("{table}_combkey_{column}")),
                t = quote_mysql(table),
                c = quote_mysql(column),
            )),
            _ => None,
        }
    }

    /// The statements that install the database-side functions (empty for SQLite, which
    /// has no stored functions):
    ///
    /// - `combkey_v7()`: a new UUIDv7 in this crate's layout (48-bit Unix ms, version 7,
    ///   the 12 bits after the version holding the sub-millisecond fraction of the clock
    ///   (RFC 9562 section 6.2, method 3), the rest random). Ids sort with the Rust ids of
    ///   other milliseconds by time; within one millisecond they are ordered to the
    ///   microsecond, not strictly as the Rust generator's counter orders its own.
    /// - `combkey_unix_ms(id)`: the milliseconds a v7 id carries.
    /// - `combkey_time(id)`: the same as a timestamp (PostgreSQL `timestamptz`; MySQL and SQL
    ///   Server a `DATETIME(3)`/`DATETIME2(3)` in UTC).
    /// - SQL Server: the functions are in `dbo` and make the stored (suffix) form; a view
    ///   `dbo.combkey_random` supplies `NEWID()`, which functions may not call, and
    ///   `dbo.combkey_from_rtcomb_sql(id)` converts RT.Comb `Sql` values
    ///   ([`mssql_convert_rtcomb_sql`]); `dbo.combkey_stored(public_id)` and
    ///   `dbo.combkey_public(stored)` convert between the forms in ad-hoc T-SQL
    ///   (`WHERE id = dbo.combkey_stored('017f22e2-...')`, `SELECT dbo.combkey_public(id)`).
    ///   Its text is in batches separated by `GO` lines ([`batches`]).
    ///
    /// For PostgreSQL and MySQL each statement is a single SQL statement (no `DELIMITER`
    /// needed), so the text runs as it is in a `sqlx::migrate!` or `diesel migration` file, or
    /// in the `psql`/`mysql` clients.
    pub const fn install_functions(self) -> &'static str {
        match self {
            Backend::Postgres => include_str!("postgres.up.sql"),
            Backend::MySql => include_str!("mysql.up.sql"),
            Backend::Sqlite => "",
            Backend::SqlServer => include_str!("mssql.up.sql"),
        }
    }

    /// The statements that remove what [`install_functions`](Self::install_functions) made.
    pub const fn drop_functions(self) -> &'static str {
        match self {
            Backend::Postgres => include_str!("postgres.down.sql"),
            Backend::MySql => include_str!("mysql.down.sql"),
            Backend::Sqlite => "",
            Backend::SqlServer => include_str!("mssql.down.sql"),
        }
    }

    /// An SQL expression for the Unix milliseconds a v7 id in `column` carries; on SQLite,
    /// which has no stored functions, the whole computation is spelled out.
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(Backend::Postgres.unix_ms_expr("o.id"), "combkey_unix_ms(o.id)");
    /// assert!(Backend::Sqlite.unix_ms_expr("id").starts_with("(((instr('0123456789ABCDEF', substr(hex(id), 1, 1)) - 1) << 44)"));
    /// ```
    pub fn unix_ms_expr(self, column: &str) -> String {
        match self {
            Backend::Postgres | Backend::MySql => format!("combkey_unix_ms({column})"),
            Backend::SqlServer => format!("dbo.combkey_unix_ms({column})"),
            Backend::Sqlite => {
                let digits: Vec<String> = (0..12)
                    .map(|i| {
                        format!(
                            "((instr('0123456789ABCDEF', substr(hex({column}), {}, 1)) - 1) << {})",
                            i + 1,
                            4 * (11 - i)
                        )
                    })
                    .collect();
                format!("({})", digits.join(" | "))
            }
        }
    }

    /// Everything a migration needs, as `combkey sql DIALECT` prints it: the column type, the
    /// functions, and for MySQL the `CHAR(36)` conversion as a commented template.
    pub fn migration_text(self) -> String {
        let mut s = format!(
            "-- combkey: migration SQL for {name}\n-- Column type for a COMB id: {ty}\n-- Primary key: {pk}\n",
            name = self.name(),
            ty = self.column_type(),
            pk = self.primary_key("id"),
        );
        match self {
            Backend::Sqlite => s.push_str(&format!(
                "-- SQLite has no stored functions: make ids in the application.\n\
                 -- Milliseconds of an id: {}\n",
                self.unix_ms_expr("id")
            )),
            _ => {
                s.push_str("\n-- Database-side generator and timestamp functions (up):\n");
                s.push_str(self.install_functions());
                s.push_str("\n-- Down:\n-- ");
                s.push_str(&self.drop_functions().trim_end().replace('\n', "\n-- "));
                s.push('\n');
            }
        }
        if let Some(trigger) = self.default_trigger("t", "id") {
            s.push_str(
                "\n-- A default id for column `id` of table `t` (MySQL allows no stored function in DEFAULT):\n-- ",
            );
            s.push_str(&trigger);
            s.push_str(";\n");
        }
        if self == Backend::SqlServer {
            s.push_str("\n-- Converting a column `id` of table `dbo.t` filled by RT.Comb's Sql provider:\n-- ");
            s.push_str(mssql_convert_rtcomb_sql("dbo.t", "id").trim_end());
            s.push('\n');
        }
        if self == Backend::MySql {
            s.push_str("\n-- Converting an existing CHAR(36) UUID key column `id` of table `t` to BINARY(16):\n-- ");
            s.push_str(&mysql_char36_to_binary16("t", "id").trim_end().replace('\n', "\n-- "));
            s.push('\n');
        }
        s
    }
}

/// The batches of an SQL text, split at lines that read `GO` (SQL Server); trimmed, empty
/// ones dropped. SQL Server needs each `CREATE FUNCTION` in a batch of its own, and its texts
/// here separate batches with `GO` lines (as `sqlcmd` does): run each batch on its own
/// (`tiberius::Client::simple_query`). Other databases' texts are one batch.
///
/// ```
/// use combkey::{Backend, sql::batches};
///
/// assert_eq!(batches(Backend::SqlServer.install_functions()).count(), 7);
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

/// SQL Server: the statement that converts a `uniqueidentifier` column filled by RT.Comb's
/// `Sql` provider to combkey's stored form, so the rows read as public ids (the lossless
/// conversion of RT.Comb's `Sql` layout to v7, in T-SQL). Needs the
/// functions of [`Backend::install_functions`]. Only rows that still look like RT.Comb's
/// (version 4 and RFC variant bytes where RT.Comb has them) are converted, so running it
/// twice changes nothing the second time.
///
/// ```
/// let sql = combkey::sql::mssql_convert_rtcomb_sql("dbo.orders", "id");
/// assert!(sql.starts_with("UPDATE dbo.orders SET [id] = dbo.combkey_from_rtcomb_sql([id]) WHERE "));
/// ```
pub fn mssql_convert_rtcomb_sql(table: &str, column: &str) -> String {
    let c = format!("[{}]", column.replace(']', "]]"));
    let version = format!("SUBSTRING(CAST({c} AS BINARY(16)), 8, 1)");
    let variant = format!("SUBSTRING(CAST({c} AS BINARY(16)), 9, 1)");
    format!(
        "UPDATE {table} SET {c} = dbo.combkey_from_rtcomb_sql({c}) WHERE {version} >= 0x40 AND {version} < 0x50 \
         AND {variant} >= 0x80 AND {variant} < 0xC0;\n"
    )
}

/// Statements that convert a MySQL/MariaDB `CHAR(36)` (or `VARCHAR(36)`) UUID column to
/// `BINARY(16)` holding the same ids, keeping the column name and its primary key.
///
/// A new column is filled with `UNHEX(REPLACE(col, '-', ''))` and takes the old one's place.
/// Foreign keys that reference the column must be dropped first and recreated (on
/// `BINARY(16)` columns converted the same way) after. Run it in a maintenance window: the
/// `ALTER TABLE`s rebuild the table.
///
/// ```
/// let sql = combkey::sql::mysql_char36_to_binary16("orders", "id");
/// assert!(sql.contains("UPDATE `orders` SET `id_combkey_bin` = UNHEX(REPLACE(`id`, '-', ''))"));
/// ```
pub fn mysql_char36_to_binary16(table: &str, column: &str) -> String {
    let t = quote_mysql(table);
    let c = quote_mysql(column);
    let tmp = quote_mysql(&format!("{column}_combkey_bin"));
    format!(
        "ALTER TABLE {t} ADD COLUMN {tmp} BINARY(16) NULL AFTER {c};\n\
         UPDATE {t} SET {tmp} = UNHEX(REPLACE({c}, '-', ''));\n\
         ALTER TABLE {t} DROP PRIMARY KEY, DROP COLUMN {c}, CHANGE COLUMN {tmp} {c} BINARY(16) NOT NULL, \
         ADD PRIMARY KEY ({c});\n"
    )
}

fn quote_mysql(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        let sql = mysql_char36_to_binary16("we`ird", "id");
        assert!(sql.contains("`we``ird`"), "{sql}");
    }

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
    }
}
