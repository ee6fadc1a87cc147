//! Migration SQL: column types, database-side generator and timestamp functions, and
//! conversions of existing data, per dialect. The one source of these texts for the whole
//! workspace: the adapter crates re-export them and `combid sql DIALECT` prints them.

use core::fmt;
use core::str::FromStr;

use crate::error::Error;

/// An SQL dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// PostgreSQL 13 or later (`gen_random_uuid()` is built in from 13).
    Postgres,
    /// MySQL 8 and MariaDB 10.10 or later (`RANDOM_BYTES()`).
    MySql,
    /// SQLite 3.
    Sqlite,
    /// Microsoft SQL Server 2016 or later (`DATEDIFF_BIG`), `uniqueidentifier` in the
    /// suffix stored form ([`Comb::to_sqlserver_bytes`](crate::Comb::to_sqlserver_bytes)).
    SqlServer,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 4] = [Dialect::Postgres, Dialect::MySql, Dialect::Sqlite, Dialect::SqlServer];

    /// The dialect's name as the CLI spells it: `postgres`, `mysql`, `sqlite`.
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::MySql => "mysql",
            Dialect::Sqlite => "sqlite",
            Dialect::SqlServer => "mssql",
        }
    }

    /// The column type that stores a [`Comb`](crate::Comb): `uuid`, `BINARY(16)`, `BLOB`.
    pub const fn column_type(self) -> &'static str {
        match self {
            Dialect::Postgres => "uuid",
            Dialect::MySql => "BINARY(16)",
            Dialect::Sqlite => "BLOB",
            Dialect::SqlServer => "uniqueidentifier",
        }
    }

    /// DDL for a COMB primary key column named `name`. On PostgreSQL the database-side
    /// generator is its default; MySQL and MariaDB do not allow a stored function in a
    /// `DEFAULT`, so there [`default_trigger`](Self::default_trigger) fills it instead.
    ///
    /// ```
    /// use combid::sql::Dialect;
    ///
    /// assert_eq!(Dialect::Postgres.primary_key("id"), "id uuid PRIMARY KEY DEFAULT combid_v7()");
    /// assert_eq!(Dialect::MySql.primary_key("id"), "id BINARY(16) NOT NULL PRIMARY KEY");
    /// assert_eq!(Dialect::Sqlite.primary_key("id"), "id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16)");
    /// ```
    pub fn primary_key(self, name: &str) -> String {
        match self {
            Dialect::Postgres => format!("{name} uuid PRIMARY KEY DEFAULT combid_v7()"),
            Dialect::MySql => format!("{name} BINARY(16) NOT NULL PRIMARY KEY"),
            Dialect::Sqlite => format!("{name} BLOB NOT NULL PRIMARY KEY CHECK (length({name}) = 16)"),
            Dialect::SqlServer => format!("{name} uniqueidentifier NOT NULL PRIMARY KEY DEFAULT dbo.combid_v7()"),
        }
    }

    /// MySQL/MariaDB: a trigger that gives `column` of `table` a `combid_v7()` id when an
    /// insert leaves it out or sets it `NULL` (the role a `DEFAULT` plays on PostgreSQL).
    /// `None` for the other dialects.
    ///
    /// ```
    /// use combid::sql::Dialect;
    ///
    /// assert_eq!(
    ///     Dialect::MySql.default_trigger("orders", "id").as_deref(),
    ///     Some("CREATE TRIGGER `orders_combid_id` BEFORE INSERT ON `orders` FOR EACH ROW SET NEW.`id` = IFNULL(NEW.`id`, combid_v7())")
    /// );
    /// ```
    pub fn default_trigger(self, table: &str, column: &str) -> Option<String> {
        match self {
            Dialect::MySql => Some(format!(
                "CREATE TRIGGER {trigger} BEFORE INSERT ON {t} FOR EACH ROW SET NEW.{c} = IFNULL(NEW.{c}, combid_v7())",
                trigger = quote_mysql(&format!("{table}_combid_{column}")),
                t = quote_mysql(table),
                c = quote_mysql(column),
            )),
            _ => None,
        }
    }

    /// The statements that install the database-side functions (empty for SQLite, which
    /// has no stored functions):
    ///
    /// - `combid_v7()`: a new UUIDv7 in this crate's layout (48-bit Unix ms, version 7,
    ///   the 12 bits after the version holding the sub-millisecond fraction of the clock
    ///   (RFC 9562 section 6.2, method 3), the rest random). Ids sort with the Rust ids of
    ///   other milliseconds by time; within one millisecond they are ordered to the
    ///   microsecond, not strictly as the Rust generator's counter orders its own.
    /// - `combid_unix_ms(id)`: the milliseconds a v7 id carries.
    /// - `combid_time(id)`: the same as a timestamp (PostgreSQL `timestamptz`; MySQL and SQL
    ///   Server a `DATETIME(3)`/`DATETIME2(3)` in UTC).
    /// - SQL Server: the functions are in `dbo` and make the stored (suffix) form; a view
    ///   `dbo.combid_random` supplies `NEWID()`, which functions may not call, and
    ///   `dbo.combid_from_rtcomb_sql(id)` converts RT.Comb `Sql` values
    ///   ([`mssql_convert_rtcomb_sql`]). Its text is in batches separated by `GO` lines
    ///   ([`batches`]).
    ///
    /// For PostgreSQL and MySQL each statement is a single SQL statement (no `DELIMITER`
    /// needed), so the text runs as it is in a `sqlx::migrate!` or `diesel migration` file, or
    /// in the `psql`/`mysql` clients.
    pub const fn install_functions(self) -> &'static str {
        match self {
            Dialect::Postgres => PG_FUNCTIONS,
            Dialect::MySql => MYSQL_FUNCTIONS,
            Dialect::Sqlite => "",
            Dialect::SqlServer => MSSQL_FUNCTIONS,
        }
    }

    /// The statements that remove what [`install_functions`](Self::install_functions) made.
    pub const fn drop_functions(self) -> &'static str {
        match self {
            Dialect::Postgres => {
                "DROP FUNCTION IF EXISTS combid_time(uuid);\nDROP FUNCTION IF EXISTS combid_unix_ms(uuid);\n\
                 DROP FUNCTION IF EXISTS combid_v7();\n"
            }
            Dialect::MySql => {
                "DROP FUNCTION IF EXISTS combid_time;\nDROP FUNCTION IF EXISTS combid_unix_ms;\n\
                 DROP FUNCTION IF EXISTS combid_v7;\nDROP FUNCTION IF EXISTS combid_v7_from;\n"
            }
            Dialect::Sqlite => "",
            Dialect::SqlServer => {
                "DROP FUNCTION IF EXISTS dbo.combid_from_rtcomb_sql;\nGO\nDROP FUNCTION IF EXISTS dbo.combid_time;\nGO\n\
                 DROP FUNCTION IF EXISTS dbo.combid_unix_ms;\nGO\nDROP FUNCTION IF EXISTS dbo.combid_v7;\nGO\n\
                 DROP VIEW IF EXISTS dbo.combid_random;\nGO\n"
            }
        }
    }

    /// The batches of an SQL text: SQL Server needs each `CREATE FUNCTION` in a batch of its
    /// own, and its texts here separate batches with `GO` lines (as `sqlcmd` does); run each
    /// batch on its own (`tiberius::Client::simple_query`). Other dialects' texts are one batch.
    ///
    /// ```
    /// use combid::sql::{Dialect, batches};
    ///
    /// assert_eq!(batches(Dialect::SqlServer.install_functions()).count(), 5);
    /// assert_eq!(batches(Dialect::Postgres.install_functions()).count(), 1);
    /// ```
    /// An SQL expression for the Unix milliseconds a v7 id in `column` carries; on SQLite,
    /// which has no stored functions, the whole computation is spelled out.
    ///
    /// ```
    /// use combid::sql::Dialect;
    ///
    /// assert_eq!(Dialect::Postgres.unix_ms_expr("o.id"), "combid_unix_ms(o.id)");
    /// assert!(Dialect::Sqlite.unix_ms_expr("id").starts_with("(((instr('0123456789ABCDEF', substr(hex(id), 1, 1)) - 1) << 44)"));
    /// ```
    pub fn unix_ms_expr(self, column: &str) -> String {
        match self {
            Dialect::Postgres | Dialect::MySql => format!("combid_unix_ms({column})"),
            Dialect::SqlServer => format!("dbo.combid_unix_ms({column})"),
            Dialect::Sqlite => {
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

    /// Everything a migration needs, as `combid sql DIALECT` prints it: the column type, the
    /// functions, and for MySQL the `CHAR(36)` conversion as a commented template.
    pub fn migration_text(self) -> String {
        let mut s = format!(
            "-- combid: migration SQL for {name}\n-- Column type for a COMB id: {ty}\n-- Primary key: {pk}\n",
            name = self.name(),
            ty = self.column_type(),
            pk = self.primary_key("id"),
        );
        match self {
            Dialect::Sqlite => s.push_str(&format!(
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
        if self == Dialect::SqlServer {
            s.push_str("\n-- Converting a column `id` of table `dbo.t` filled by RT.Comb's Sql provider:\n-- ");
            s.push_str(mssql_convert_rtcomb_sql("dbo.t", "id").trim_end());
            s.push('\n');
        }
        if self == Dialect::MySql {
            s.push_str("\n-- Converting an existing CHAR(36) UUID key column `id` of table `t` to BINARY(16):\n-- ");
            s.push_str(&mysql_char36_to_binary16("t", "id").trim_end().replace('\n', "\n-- "));
            s.push('\n');
        }
        s
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Dialect {
    type Err = Error;

    /// `postgres` (or `postgresql`, `pg`), `mysql` (or `mariadb`), `sqlite`.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" | "pg" => Ok(Dialect::Postgres),
            "mysql" | "mariadb" => Ok(Dialect::MySql),
            "sqlite" | "sqlite3" => Ok(Dialect::Sqlite),
            "mssql" | "sqlserver" | "tsql" => Ok(Dialect::SqlServer),
            _ => Err(Error::config("SQL dialect", format!("{s:?}"), "postgres, mysql, sqlite or mssql")),
        }
    }
}

const PG_FUNCTIONS: &str = r#"CREATE OR REPLACE FUNCTION combid_v7() RETURNS uuid
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $combid$
DECLARE
  us bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
  sub int := ((us % 1000) * 4096 / 1000)::int;
  b bytea := uuid_send(gen_random_uuid());
BEGIN
  b := overlay(b PLACING substring(int8send(us / 1000) FROM 3 FOR 6) FROM 1 FOR 6);
  b := set_byte(b, 6, 112 | (sub >> 8));
  b := set_byte(b, 7, sub & 255);
  RETURN encode(b, 'hex')::uuid;
END
$combid$;
CREATE OR REPLACE FUNCTION combid_unix_ms(id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
$combid$ SELECT ('x' || lpad(substr(encode(uuid_send(id), 'hex'), 1, 12), 16, '0'))::bit(64)::bigint $combid$;
CREATE OR REPLACE FUNCTION combid_time(id uuid) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
$combid$ SELECT to_timestamp(combid_unix_ms(id) / 1000.0) $combid$;
"#;

const MYSQL_FUNCTIONS: &str = "CREATE FUNCTION combid_v7_from(us BIGINT, r BINARY(10)) RETURNS BINARY(16)
  DETERMINISTIC NO SQL
  RETURN CONCAT(
    UNHEX(LPAD(HEX(us DIV 1000), 12, '0')),
    CHAR(0x70 | (((us MOD 1000) * 4096 DIV 1000) >> 8) USING binary),
    CHAR((((us MOD 1000) * 4096 DIV 1000) & 0xff) USING binary),
    CHAR(0x80 | (ASCII(r) & 0x3f) USING binary),
    SUBSTRING(r, 2, 7));
CREATE FUNCTION combid_v7() RETURNS BINARY(16)
  NOT DETERMINISTIC NO SQL
  RETURN combid_v7_from(FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000), RANDOM_BYTES(10));
CREATE FUNCTION combid_unix_ms(id BINARY(16)) RETURNS BIGINT
  DETERMINISTIC NO SQL
  RETURN CAST(CONV(HEX(LEFT(id, 6)), 16, 10) AS UNSIGNED);
CREATE FUNCTION combid_time(id BINARY(16)) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
  RETURN TIMESTAMPADD(MICROSECOND, combid_unix_ms(id) * 1000, TIMESTAMP('1970-01-01 00:00:00'));
";

/// The batches of an SQL text, split at lines that read `GO` (SQL Server); trimmed, empty
/// ones dropped.
///
/// ```
/// use combid::sql::{Dialect, batches};
///
/// assert_eq!(batches(Dialect::SqlServer.install_functions()).count(), 5);
/// assert_eq!(batches(Dialect::Postgres.install_functions()).count(), 1);
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
/// `Sql` provider to combid's stored form, so the rows read as public ids (the lossless
/// conversion of [`Kind::RtCombSql`](crate::Kind::RtCombSql) to v7, in T-SQL). Needs the
/// functions of [`Dialect::install_functions`]. Only rows that still look like RT.Comb's
/// (version 4 and RFC variant bytes where RT.Comb has them) are converted, so running it
/// twice changes nothing the second time.
///
/// ```
/// let sql = combid::sql::mssql_convert_rtcomb_sql("dbo.orders", "id");
/// assert!(sql.starts_with("UPDATE dbo.orders SET [id] = dbo.combid_from_rtcomb_sql([id]) WHERE "));
/// ```
pub fn mssql_convert_rtcomb_sql(table: &str, column: &str) -> String {
    let c = format!("[{}]", column.replace(']', "]]"));
    let version = format!("SUBSTRING(CAST({c} AS BINARY(16)), 8, 1)");
    let variant = format!("SUBSTRING(CAST({c} AS BINARY(16)), 9, 1)");
    format!(
        "UPDATE {table} SET {c} = dbo.combid_from_rtcomb_sql({c}) WHERE {version} >= 0x40 AND {version} < 0x50 \
         AND {variant} >= 0x80 AND {variant} < 0xC0;\n"
    )
}

const MSSQL_FUNCTIONS: &str = "CREATE OR ALTER VIEW dbo.combid_random AS SELECT CAST(NEWID() AS BINARY(16)) AS r;
GO
CREATE OR ALTER FUNCTION dbo.combid_v7() RETURNS uniqueidentifier AS
BEGIN
  -- NEWID() is not allowed in a function; a view over it is.
  DECLARE @r BINARY(16) = (SELECT r FROM dbo.combid_random);
  DECLARE @now DATETIME2(7) = SYSUTCDATETIME();
  DECLARE @ms BIGINT = DATEDIFF_BIG(MILLISECOND, '1970-01-01', @now);
  DECLARE @sub INT = (DATEPART(MICROSECOND, @now) % 1000) * 4096 / 1000;
  -- The stored form of the v7 id p0..p15, in SQL Server's own byte order:
  -- p12..p15, p10 p11, p8 p9, p6 p7, p0..p5 (the milliseconds, compared first).
  RETURN CAST(
      SUBSTRING(@r, 1, 6)
    + CAST(0x80 | (CAST(SUBSTRING(@r, 7, 1) AS INT) & 0x3F) AS BINARY(1))
    + SUBSTRING(@r, 8, 1)
    + CAST(0x70 | (@sub / 256) AS BINARY(1))
    + CAST(@sub % 256 AS BINARY(1))
    + CAST(@ms AS BINARY(6))
    AS uniqueidentifier);
END;
GO
CREATE OR ALTER FUNCTION dbo.combid_unix_ms(@id uniqueidentifier) RETURNS BIGINT AS
BEGIN
  RETURN CAST(0x0000 + SUBSTRING(CAST(@id AS BINARY(16)), 11, 6) AS BIGINT);
END;
GO
CREATE OR ALTER FUNCTION dbo.combid_time(@id uniqueidentifier) RETURNS DATETIME2(3) AS
BEGIN
  DECLARE @ms BIGINT = dbo.combid_unix_ms(@id);
  RETURN DATEADD(MILLISECOND, @ms % 86400000, DATEADD(DAY, @ms / 86400000, CAST('1970-01-01' AS DATETIME2(3))));
END;
GO
CREATE OR ALTER FUNCTION dbo.combid_from_rtcomb_sql(@id uniqueidentifier) RETURNS uniqueidentifier AS
BEGIN
  -- RT.Comb Sql (a v4 GUID, ms in bytes 11..16 of the BINARY(16)) to combid's stored form of
  -- the same id as v7: only bytes 7..10 change.
  DECLARE @b BINARY(16) = CAST(@id AS BINARY(16));
  DECLARE @a INT = CAST(SUBSTRING(@b, 9, 1) AS INT) & 0x3F;
  DECLARE @bb INT = CAST(SUBSTRING(@b, 10, 1) AS INT);
  DECLARE @c INT = CAST(SUBSTRING(@b, 7, 1) AS INT);
  DECLARE @d INT = CAST(SUBSTRING(@b, 8, 1) AS INT) & 0x0F;
  RETURN CAST(
      SUBSTRING(@b, 1, 6)
    + CAST(0x80 | ((@bb % 4) * 16 + @c / 16) AS BINARY(1))
    + CAST((@c % 16) * 16 + @d AS BINARY(1))
    + CAST(0x70 | (@a / 4) AS BINARY(1))
    + CAST((@a % 4) * 64 + @bb / 4 AS BINARY(1))
    + SUBSTRING(@b, 11, 6)
    AS uniqueidentifier);
END;
GO
";

/// Statements that convert a MySQL/MariaDB `CHAR(36)` (or `VARCHAR(36)`) UUID column to
/// `BINARY(16)` holding the same ids, keeping the column name and its primary key.
///
/// A new column is filled with `UNHEX(REPLACE(col, '-', ''))` and takes the old one's place.
/// Foreign keys that reference the column must be dropped first and recreated (on
/// `BINARY(16)` columns converted the same way) after. Run it in a maintenance window: the
/// `ALTER TABLE`s rebuild the table.
///
/// ```
/// let sql = combid::sql::mysql_char36_to_binary16("orders", "id");
/// assert!(sql.contains("UPDATE `orders` SET `id_combid_bin` = UNHEX(REPLACE(`id`, '-', ''))"));
/// ```
pub fn mysql_char36_to_binary16(table: &str, column: &str) -> String {
    let t = quote_mysql(table);
    let c = quote_mysql(column);
    let tmp = quote_mysql(&format!("{column}_combid_bin"));
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
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.name().parse::<Dialect>(), Ok(d));
        }
        assert_eq!("MariaDB".parse::<Dialect>(), Ok(Dialect::MySql));
        assert!("oracle".parse::<Dialect>().unwrap_err().to_string().contains("postgres, mysql, sqlite or mssql"));
    }

    #[test]
    fn identifiers_are_quoted() {
        let sql = mysql_char36_to_binary16("we`ird", "id");
        assert!(sql.contains("`we``ird`"), "{sql}");
    }

    #[test]
    fn migration_text_has_everything() {
        let pg = Dialect::Postgres.migration_text();
        assert!(
            pg.contains("CREATE OR REPLACE FUNCTION combid_v7()")
                && pg.contains("-- DROP FUNCTION IF EXISTS combid_v7();")
        );
        let my = Dialect::MySql.migration_text();
        assert!(my.contains("RANDOM_BYTES(10)") && my.contains("-- UPDATE `t` SET"));
        assert!(Dialect::Sqlite.migration_text().contains("no stored functions"));
    }
}
