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
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 3] = [Dialect::Postgres, Dialect::MySql, Dialect::Sqlite];

    /// The dialect's name as the CLI spells it: `postgres`, `mysql`, `sqlite`.
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::MySql => "mysql",
            Dialect::Sqlite => "sqlite",
        }
    }

    /// The column type that stores a [`Comb`](crate::Comb): `uuid`, `BINARY(16)`, `BLOB`.
    pub const fn column_type(self) -> &'static str {
        match self {
            Dialect::Postgres => "uuid",
            Dialect::MySql => "BINARY(16)",
            Dialect::Sqlite => "BLOB",
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
    /// - `combid_time(id)`: the same as a timestamp (PostgreSQL `timestamptz`; MySQL a
    ///   `DATETIME(3)` in UTC).
    ///
    /// Each statement is a single SQL statement (no `DELIMITER` needed), so the text runs as
    /// it is in a `sqlx::migrate!` or `diesel migration` file, or in the `psql`/`mysql`
    /// clients.
    pub const fn install_functions(self) -> &'static str {
        match self {
            Dialect::Postgres => PG_FUNCTIONS,
            Dialect::MySql => MYSQL_FUNCTIONS,
            Dialect::Sqlite => "",
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
        }
    }

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
            _ => Err(Error::config("SQL dialect", format!("{s:?}"), "postgres, mysql or sqlite")),
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
        assert!("oracle".parse::<Dialect>().unwrap_err().to_string().contains("postgres, mysql or sqlite"));
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
