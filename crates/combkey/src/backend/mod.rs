//! The databases combkey stores ids in, one module each.
//!
//! [`Backend`] names a database and is how callers ask about it: its column type, the stored
//! form of an id and how its own client shows it, an id as an SQL literal, identifier
//! quoting, the database-side functions, partition DDL. Everything the project knows about
//! one database lives in that database's module (`postgres`, `mysql`, `sqlite`,
//! `sqlserver`), the way diesel keeps each backend in its own folder; `Backend`'s methods
//! hand each question to the module, and nothing else in the workspace branches on the
//! database.

use core::fmt;
use core::str::FromStr;

use crate::comb::Comb;
use crate::error::{Detail, Error};

pub(crate) mod mysql;
pub(crate) mod postgres;
pub(crate) mod sqlite;
pub(crate) mod sqlserver;

/// A database: its column type, its stored form of an id, its name, its SQL. The one list
/// of databases combkey knows: the `combkey` command (crate `combkey-cli`) takes the BACKEND
/// of `combkey sql BACKEND`, `--stored BACKEND` and `convert --from/--to BACKEND` from it.
///
/// | backend | name | column type | stored bytes |
/// | --- | --- | --- | --- |
/// | PostgreSQL 13+ | `postgres` | `uuid` | the public bytes |
/// | MySQL 8 / MariaDB 10.10+ | `mysql` | `BINARY(16)` (or MariaDB's `UUID` for v7 ids) | the public bytes |
/// | SQLite 3 | `sqlite` | `BLOB` | the public bytes |
/// | SQL Server 2016+ | `sqlserver` | `uniqueidentifier` | the public bytes permuted (see [`Comb::to_sqlserver_bytes`]) |
///
/// In every case `ORDER BY id` in the database returns public (creation) order.
///
/// ```
/// use combkey::{Backend, Comb};
///
/// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
/// assert_eq!(Backend::Postgres.to_stored(id), *id.as_bytes());
/// let stored = Backend::SqlServer.to_stored(id);
/// assert_eq!(Backend::SqlServer.from_stored(stored), id);
/// // What each database's own client shows for the stored value:
/// assert_eq!(Backend::SqlServer.stored_text(id), "8F39070C-0CDC-C498-7CC3-017F22E279B0");
/// assert_eq!(Backend::MySql.stored_text(id), "017F22E279B07CC398C4DC0C0C07398F");
/// // And as an SQL literal of the column type:
/// assert_eq!(Backend::MySql.literal(id), "0x017F22E279B07CC398C4DC0C0C07398F");
/// assert_eq!("mssql".parse::<Backend>()?, Backend::SqlServer);
/// assert_eq!(Backend::SqlServer.to_string(), "sqlserver");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// PostgreSQL, native `uuid` (`backend/postgres`).
    Postgres,
    /// MySQL and MariaDB, `BINARY(16)` (`backend/mysql`).
    MySql,
    /// SQLite, `BLOB` (`backend/sqlite`).
    Sqlite,
    /// Microsoft SQL Server, `uniqueidentifier`, in the suffix layout (`backend/sqlserver`).
    SqlServer,
}

/// What each database's module answers: the uniform questions [`Backend`] hands on.
pub(crate) trait Dialect: Sync {
    /// The name the CLI prints, and the other spellings it accepts (lower case).
    fn names(&self) -> &'static [&'static str];
    /// The column type to declare for an id.
    fn column_type(&self) -> &'static str;
    /// A stored value as the database's own client shows it.
    fn stored_text(&self, stored: [u8; 16]) -> String;
    /// A stored value as an SQL literal of the column type.
    fn literal(&self, stored: [u8; 16]) -> String;
    /// An identifier quoted for this database (any name, quotes inside doubled).
    fn quote(&self, name: &str) -> String;
    /// The longest identifier the database accepts, in bytes.
    fn max_identifier_len(&self) -> usize;
    /// DDL for a COMB primary key column.
    fn primary_key(&self, name: &str) -> String;
    /// A trigger standing in for a `DEFAULT` where the database allows no function there.
    fn default_trigger(&self, _table: &str, _column: &str) -> Option<String> {
        None
    }
    /// The statements that install the database-side functions.
    fn install_functions(&self) -> &'static str {
        ""
    }
    /// The statements that drop them.
    fn drop_functions(&self) -> &'static str {
        ""
    }
    /// An SQL expression for the Unix milliseconds of the v7 id in `column`.
    fn unix_ms_expr(&self, column: &str) -> String;
    /// What `combkey sql BACKEND` prints after the column type and primary key.
    fn migration_notes(&self) -> String;
    /// Partition DDL, where the database partitions tables.
    fn partitions(&self) -> Result<&'static dyn crate::sql::partitions::PartitionDdl, Error>;
}

impl Backend {
    /// Every backend.
    pub const ALL: [Backend; 4] = [Backend::Postgres, Backend::MySql, Backend::Sqlite, Backend::SqlServer];

    /// The database's module.
    pub(crate) fn dialect(self) -> &'static dyn Dialect {
        match self {
            Backend::Postgres => &postgres::Postgres,
            Backend::MySql => &mysql::MySql,
            Backend::Sqlite => &sqlite::Sqlite,
            Backend::SqlServer => &sqlserver::SqlServer,
        }
    }

    /// The backend's name as the CLI and JSON output spell it: `postgres`, `mysql`,
    /// `sqlite`, `sqlserver`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(Backend::SqlServer.name(), "sqlserver");
    /// // Every name parses back, as do the other spellings.
    /// assert_eq!("mariadb".parse::<Backend>()?.name(), "mysql");
    /// for b in Backend::ALL {
    ///     assert_eq!(b.name().parse::<Backend>()?, b);
    /// }
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        self.dialect().names()[0]
    }

    /// The column type to declare: `uuid`, `BINARY(16)`, `BLOB`, `uniqueidentifier`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(Backend::Postgres.column_type(), "uuid");
    /// assert_eq!(Backend::MySql.column_type(), "BINARY(16)");
    /// assert_eq!(Backend::Sqlite.column_type(), "BLOB");
    /// assert_eq!(Backend::SqlServer.column_type(), "uniqueidentifier");
    /// ```
    pub fn column_type(self) -> &'static str {
        self.dialect().column_type()
    }

    /// The stored form of `id`. For SQL Server: the `uniqueidentifier` in display byte order
    /// (the order `uuid::Uuid` and the GUID string use).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Backend, Comb};
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(Backend::MySql.to_stored(id), id.into_bytes());
    /// let stored = Backend::SqlServer.to_stored(id);
    /// assert_eq!(uuid::Uuid::from_bytes(stored).to_string(), "8f39070c-0cdc-c498-7cc3-017f22e279b0");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn to_stored(self, id: Comb) -> [u8; 16] {
        match self {
            Backend::SqlServer => sqlserver::to_stored(id),
            Backend::Postgres | Backend::MySql | Backend::Sqlite => id.into_bytes(),
        }
    }

    /// The public id of a stored value.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Backend, Comb};
    ///
    /// let id = Comb::new();
    /// for backend in Backend::ALL {
    ///     assert_eq!(backend.from_stored(backend.to_stored(id)), id);
    /// }
    /// ```
    pub const fn from_stored(self, stored: [u8; 16]) -> Comb {
        match self {
            Backend::SqlServer => sqlserver::from_stored(stored),
            Backend::Postgres | Backend::MySql | Backend::Sqlite => Comb::from_bytes(stored),
        }
    }

    /// The public id of a stored value read as a byte slice; an error unless it holds 16 bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Backend, ErrorKind};
    ///
    /// // A BLOB read from SQLite.
    /// let blob: Vec<u8> = vec![0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0, 0x7c, 0xc3, 0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f];
    /// let id = Backend::Sqlite.from_stored_slice(&blob)?;
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// // UUID text stored in a binary column is 36 bytes, not 16.
    /// let err = Backend::Sqlite.from_stored_slice(id.to_string().as_bytes()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::ByteLength);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn from_stored_slice(self, stored: &[u8]) -> Result<Comb, Error> {
        let stored = <[u8; 16]>::try_from(stored).map_err(|_| Error(Detail::ByteLength { found: stored.len() }))?;
        Ok(self.from_stored(stored))
    }

    /// The stored value of `id` as the database's own client shows it: PostgreSQL's
    /// lowercase `uuid` text, the 32 hex digits of MySQL's `HEX(id)` and SQLite's `hex(id)`,
    /// SQL Server's uppercase `uniqueidentifier` text.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Backend, Comb};
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(Backend::Postgres.stored_text(id), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// assert_eq!(Backend::Sqlite.stored_text(id), "017F22E279B07CC398C4DC0C0C07398F");
    /// assert_eq!(Backend::SqlServer.stored_text(id), "8F39070C-0CDC-C498-7CC3-017F22E279B0");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn stored_text(self, id: Comb) -> String {
        self.dialect().stored_text(self.to_stored(id))
    }

    /// The public id of a stored value written as text (any UUID text form, any case; what
    /// [`stored_text`](Self::stored_text) prints, among others).
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// let id = Backend::SqlServer.parse_stored("8F39070C-0CDC-C498-7CC3-017F22E279B0")?;
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn parse_stored(self, text: &str) -> Result<Comb, Error> {
        crate::parse::parse_bytes(text).map(|stored| self.from_stored(stored))
    }

    /// The stored value of `id` as an SQL literal of the column type, to write into SQL
    /// text (partition bounds, migration scripts): `'…'` for PostgreSQL and SQL Server,
    /// `0x…` for MySQL/MariaDB `BINARY(16)`, `X'…'` for SQLite.
    ///
    /// ```
    /// use combkey::{Backend, Comb};
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(Backend::Postgres.literal(id), "'017f22e2-79b0-7cc3-98c4-dc0c0c07398f'");
    /// assert_eq!(Backend::Sqlite.literal(id), "X'017F22E279B07CC398C4DC0C0C07398F'");
    /// assert_eq!(Backend::SqlServer.literal(id), "'8F39070C-0CDC-C498-7CC3-017F22E279B0'");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn literal(self, id: Comb) -> String {
        self.dialect().literal(self.to_stored(id))
    }

    /// `name` quoted as an identifier of this database, whatever it holds (PostgreSQL and
    /// SQLite `"…"`, MySQL `` `…` ``, SQL Server `[…]`, quotes inside doubled).
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(Backend::Postgres.quote("Orders"), "\"Orders\"");
    /// assert_eq!(Backend::MySql.quote("we`ird"), "`we``ird`");
    /// assert_eq!(Backend::SqlServer.quote("a]b"), "[a]]b]");
    /// ```
    pub fn quote(self, name: &str) -> String {
        self.dialect().quote(name)
    }

    /// The longest identifier the database accepts, in bytes (PostgreSQL 63, MySQL 64,
    /// SQL Server 128; SQLite has no limit of its own, and 1024 is returned for it, a length
    /// that keeps generated names readable).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert_eq!(Backend::Postgres.max_identifier_len(), 63);
    /// assert_eq!(Backend::MySql.max_identifier_len(), 64);
    /// assert_eq!(Backend::SqlServer.max_identifier_len(), 128);
    /// ```
    pub fn max_identifier_len(self) -> usize {
        self.dialect().max_identifier_len()
    }

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
        self.dialect().primary_key(name)
    }

    /// MySQL/MariaDB: a trigger that gives `column` of `table` a `combkey_v7()` id when an
    /// insert leaves it out or sets it `NULL` (the role a `DEFAULT` plays on PostgreSQL).
    /// `None` for the other backends.
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
        self.dialect().default_trigger(table, column)
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
    ///   ([`sqlserver::convert_rtcomb_sql`]); `dbo.combkey_stored(public_id)` and
    ///   `dbo.combkey_public(stored)` convert between the forms in ad-hoc T-SQL
    ///   (`WHERE id = dbo.combkey_stored('017f22e2-...')`, `SELECT dbo.combkey_public(id)`).
    ///   Its text is in batches separated by `GO` lines ([`crate::sql::batches`]).
    ///
    /// For PostgreSQL and MySQL each statement is a single SQL statement (no `DELIMITER`
    /// needed), so the text runs as it is in a `sqlx::migrate!` or `diesel migration` file, or
    /// in the `psql`/`mysql` clients.
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert!(Backend::Postgres.install_functions().contains("CREATE OR REPLACE FUNCTION combkey_v7()"));
    /// assert_eq!(Backend::Sqlite.install_functions(), "");
    /// ```
    pub fn install_functions(self) -> &'static str {
        self.dialect().install_functions()
    }

    /// The statements that remove what [`install_functions`](Self::install_functions) made.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// assert!(Backend::Postgres.drop_functions().contains("DROP FUNCTION IF EXISTS combkey_v7();"));
    /// // SQLite installs nothing, so there is nothing to drop.
    /// assert_eq!(Backend::Sqlite.drop_functions(), "");
    /// ```
    pub fn drop_functions(self) -> &'static str {
        self.dialect().drop_functions()
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
        self.dialect().unix_ms_expr(column)
    }

    /// Everything a migration needs, as `combkey sql BACKEND` prints it: the column type,
    /// the functions, and the database's own conversions of existing keys as commented
    /// templates.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Backend;
    ///
    /// let text = Backend::MySql.migration_text();
    /// assert!(text.starts_with("-- combkey: migration SQL for mysql\n-- Column type for a COMB id: BINARY(16)\n"));
    /// assert!(text.contains(Backend::MySql.install_functions()));
    /// ```
    pub fn migration_text(self) -> String {
        let mut s = format!(
            "-- combkey: migration SQL for {name}\n-- Column type for a COMB id: {ty}\n-- Primary key: {pk}\n",
            name = self.name(),
            ty = self.column_type(),
            pk = self.primary_key("id"),
        );
        s.push_str(&self.dialect().migration_notes());
        s
    }
}

/// The functions and their removal, as `migration_text` shows them.
pub(crate) fn functions_text(d: &dyn Dialect) -> String {
    let mut s = String::from("\n-- Database-side generator and timestamp functions (up):\n");
    s.push_str(d.install_functions());
    s.push_str("\n-- Down:\n-- ");
    s.push_str(&d.drop_functions().trim_end().replace('\n', "\n-- "));
    s.push('\n');
    s
}

/// Uppercase hex digits of bytes.
pub(crate) fn hex_upper(bytes: &[u8]) -> String {
    use fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02X}");
        s
    })
}

/// `name` between `open` and `close`, with `close` doubled inside.
pub(crate) fn quote_with(name: &str, open: char, close: char) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push(open);
    for c in name.chars() {
        s.push(c);
        if c == close {
            s.push(close);
        }
    }
    s.push(close);
    s
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;

    /// `postgres` (or `postgresql`, `pg`), `mysql` (or `mariadb`), `sqlite` (or `sqlite3`),
    /// `sqlserver` (or `mssql`, `tsql`); any case.
    fn from_str(s: &str) -> Result<Self, Error> {
        let lower = s.to_ascii_lowercase();
        Backend::ALL
            .into_iter()
            .find(|b| b.dialect().names().contains(&lower.as_str()))
            .ok_or_else(|| Error::config("backend", format!("{s:?}"), "postgres, mysql, sqlite or sqlserver"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends() {
        let id = Comb::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        for b in Backend::ALL {
            assert_eq!(b.from_stored(b.to_stored(id)), id, "{b:?}");
            assert_eq!(b.from_stored_slice(&b.to_stored(id)), Ok(id), "{b:?}");
            assert!(b.from_stored_slice(&[0; 15]).is_err());
            assert_eq!(b.parse_stored(&b.stored_text(id)), Ok(id), "{b:?}");
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
        }
        assert_eq!(Backend::MySql.column_type(), "BINARY(16)");
        assert_eq!("MariaDB".parse::<Backend>(), Ok(Backend::MySql));
        assert_eq!("mssql".parse::<Backend>(), Ok(Backend::SqlServer));
        let e = "oracle".parse::<Backend>().unwrap_err();
        assert_eq!(e.to_string(), "invalid backend: expected postgres, mysql, sqlite or sqlserver, found \"oracle\"");
    }

    #[test]
    fn quoting_doubles_the_closing_quote() {
        assert_eq!(Backend::Postgres.quote("a\"b"), "\"a\"\"b\"");
        assert_eq!(Backend::Sqlite.quote("a\"b"), "\"a\"\"b\"");
        assert_eq!(Backend::MySql.quote("a`b"), "`a``b`");
        assert_eq!(Backend::SqlServer.quote("a]b[c"), "[a]]b[c]");
    }
}
