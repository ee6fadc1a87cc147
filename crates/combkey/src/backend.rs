//! The databases: each one's column type, stored form and name. (Its SQL, the DDL and the
//! database-side functions, is in [`crate::sql`].)

use core::cmp::Ordering;
use core::fmt;
use core::str::FromStr;

use crate::comb::Comb;
use crate::error::{Detail, Error};

/// Where public byte `i` goes in the SQL Server stored form (display byte order).
///
/// SQL Server compares `uniqueidentifier` display bytes in the order
/// 10 11 12 13 14 15, 8 9, 7 6, 5 4, 3 2 1 0 (`SqlGuid.CompareTo`). Putting public byte `i`
/// at display byte `SQLSERVER_ORDER[i]` makes that comparison walk the public bytes 0..15.
const SQLSERVER_ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 7, 6, 5, 4, 3, 2, 1, 0];

/// A database: its column type, its stored form of an id, its name, and (in [`crate::sql`])
/// its DDL and database-side functions. The one list of databases in the workspace: the
/// CLI's `--storage` forms and `combkey sql DIALECT` are views over it.
///
/// | backend | name | column type | stored bytes |
/// | --- | --- | --- | --- |
/// | PostgreSQL 13+ | `postgres` | `uuid` | the public bytes |
/// | MySQL 8 / MariaDB 10.10+ | `mysql` | `BINARY(16)` (or MariaDB's `UUID` for v7 ids) | the public bytes |
/// | SQLite 3 | `sqlite` | `BLOB` | the public bytes |
/// | SQL Server 2016+ | `mssql` | `uniqueidentifier` | the public bytes permuted (see [`Comb::to_sqlserver_bytes`]) |
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
/// assert_eq!("sqlserver".parse::<Backend>()?, Backend::SqlServer);
/// assert_eq!(Backend::SqlServer.to_string(), "mssql");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// PostgreSQL, native `uuid`.
    Postgres,
    /// MySQL and MariaDB, `BINARY(16)`.
    MySql,
    /// SQLite, `BLOB`.
    Sqlite,
    /// Microsoft SQL Server, `uniqueidentifier`, in the suffix layout.
    SqlServer,
}

impl Backend {
    /// Every backend.
    pub const ALL: [Backend; 4] = [Backend::Postgres, Backend::MySql, Backend::Sqlite, Backend::SqlServer];

    /// The backend's name as the CLI spells it: `postgres`, `mysql`, `sqlite`, `mssql`.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Postgres => "postgres",
            Backend::MySql => "mysql",
            Backend::Sqlite => "sqlite",
            Backend::SqlServer => "mssql",
        }
    }

    /// The column type to declare.
    pub const fn column_type(self) -> &'static str {
        match self {
            Backend::Postgres => "uuid",
            Backend::MySql => "BINARY(16)",
            Backend::Sqlite => "BLOB",
            Backend::SqlServer => "uniqueidentifier",
        }
    }

    /// The stored form of `id`. For SQL Server: the `uniqueidentifier` in display byte order
    /// (the order `uuid::Uuid` and the GUID string use).
    pub const fn to_stored(self, id: Comb) -> [u8; 16] {
        match self {
            Backend::SqlServer => id.to_sqlserver_bytes(),
            _ => id.into_bytes(),
        }
    }

    /// The public id of a stored value.
    pub const fn from_stored(self, stored: [u8; 16]) -> Comb {
        match self {
            Backend::SqlServer => Comb::from_sqlserver_bytes(stored),
            _ => Comb::from_bytes(stored),
        }
    }

    /// The public id of a stored value read as a byte slice; an error unless it holds 16 bytes.
    pub fn from_stored_slice(self, stored: &[u8]) -> Result<Comb, Error> {
        let stored = <[u8; 16]>::try_from(stored).map_err(|_| Error(Detail::ByteLength { found: stored.len() }))?;
        Ok(self.from_stored(stored))
    }

    /// The stored value of `id` as the database's own client shows it: PostgreSQL's
    /// lowercase `uuid` text, the 32 hex digits of MySQL's `HEX(id)` and SQLite's `hex(id)`,
    /// SQL Server's uppercase `uniqueidentifier` text.
    pub fn stored_text(self, id: Comb) -> String {
        let stored = uuid::Uuid::from_bytes(self.to_stored(id));
        match self {
            Backend::Postgres => stored.hyphenated().to_string(),
            Backend::MySql | Backend::Sqlite => format!("{:X}", stored.simple()),
            Backend::SqlServer => format!("{:X}", stored.hyphenated()),
        }
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
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;

    /// `postgres` (or `postgresql`, `pg`), `mysql` (or `mariadb`), `sqlite` (or `sqlite3`),
    /// `mssql` (or `sqlserver`, `tsql`); any case.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" | "pg" => Ok(Backend::Postgres),
            "mysql" | "mariadb" => Ok(Backend::MySql),
            "sqlite" | "sqlite3" => Ok(Backend::Sqlite),
            "mssql" | "sqlserver" | "tsql" => Ok(Backend::SqlServer),
            _ => Err(Error::config("database", format!("{s:?}"), "postgres, mysql, sqlite or mssql")),
        }
    }
}

/// What kind of column a database value came from, for [`Comb::from_column`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// `uuid` (binary wire format), `BINARY(16)`, `BLOB`: exactly 16 bytes.
    Binary,
    /// `CHAR(36)`, `TEXT`, PostgreSQL's text format: UUID text.
    Text,
    /// A column that may hold either, and does not say which: MySQL's result metadata flags
    /// MariaDB's `UUID` type (sent as 36 characters of text) as binary, like `BINARY(16)`.
    /// 16 bytes are the id's bytes; anything else must be UUID text.
    BinaryOrText,
}

impl Comb {
    /// The public id in a database column value (PostgreSQL, MySQL/MariaDB and SQLite store
    /// the public bytes): 16 bytes from a binary column, any accepted UUID text from a text
    /// column. The shared decoding of every adapter crate, so all give the same errors.
    ///
    /// ```
    /// use combkey::{ColumnKind, Comb, ErrorKind};
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(Comb::from_column(id.as_bytes(), ColumnKind::Binary)?, id);
    /// assert_eq!(Comb::from_column(id.to_string().as_bytes(), ColumnKind::Text)?, id);
    /// let err = Comb::from_column(id.to_string().as_bytes(), ColumnKind::Binary).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::ByteLength);
    /// assert!(err.to_string().contains("looks like UUID text stored in a binary column"));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn from_column(value: &[u8], column: ColumnKind) -> Result<Comb, Error> {
        match column {
            ColumnKind::Binary => match value.len() {
                16 => Comb::from_slice(value),
                n @ (32 | 36 | 38 | 45)
                    if value.is_ascii() && core::str::from_utf8(value).is_ok_and(|s| s.parse::<Comb>().is_ok()) =>
                {
                    Err(Error(Detail::BinaryHoldsText { found: n }))
                }
                _ => Comb::from_slice(value),
            },
            ColumnKind::Text => core::str::from_utf8(value).map_err(|_| Error(Detail::TextNotUtf8))?.trim().parse(),
            ColumnKind::BinaryOrText => match value.len() {
                16 => Comb::from_slice(value),
                32 | 36 | 38 | 45 if value.is_ascii() => Comb::from_column(value, ColumnKind::Text),
                found => Err(Error(Detail::BinaryOrTextLength { found })),
            },
        }
    }

    /// The SQL Server stored form, in display byte order (the bytes of the GUID string SQL
    /// Server shows, and of the `uuid::Uuid` to hand to tiberius).
    ///
    /// The public bytes are permuted so that SQL Server's `uniqueidentifier` comparison
    /// order equals the public order for every pair of ids, and the 48-bit timestamp lands
    /// in display bytes 10..15, where RT.Comb's T-SQL
    /// (`SUBSTRING(CAST(id AS BINARY(16)), 11, 6)`) reads it:
    ///
    /// ```text
    ///  public  p0  p1  p2  p3 - p4  p5 - p6 p7 - p8 p9 - p10 p11 p12 p13 p14 p15
    ///  stored  p15 p14 p13 p12 - p11 p10 - p9 p8 - p6 p7 - p0  p1  p2  p3  p4  p5
    ///          └── compared last ───────────┘   └ 2nd ┘   └── compared first ──┘
    ///
    ///  public  017f22e2-79b0-7cc3-98c4-dc0c0c07398f
    ///  stored  8f39070c-0cdc-c498-7cc3-017f22e279b0   (as SQL Server shows it)
    /// ```
    ///
    /// ```
    /// let id: combkey::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// let stored = uuid::Uuid::from_bytes(id.to_sqlserver_bytes());
    /// assert_eq!(stored.to_string(), "8f39070c-0cdc-c498-7cc3-017f22e279b0");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn to_sqlserver_bytes(self) -> [u8; 16] {
        let p = self.into_bytes();
        let mut s = [0u8; 16];
        let mut i = 0;
        while i < 16 {
            s[SQLSERVER_ORDER[i]] = p[i];
            i += 1;
        }
        s
    }

    /// The public id of a SQL Server stored value given in display byte order; the inverse
    /// of [`to_sqlserver_bytes`](Self::to_sqlserver_bytes).
    pub const fn from_sqlserver_bytes(stored: [u8; 16]) -> Self {
        let mut p = [0u8; 16];
        let mut i = 0;
        while i < 16 {
            p[i] = stored[SQLSERVER_ORDER[i]];
            i += 1;
        }
        Comb::from_bytes(p)
    }

    /// The SQL Server stored form as SQL Server's own bytes (`CAST(id AS BINARY(16))`,
    /// .NET's `Guid.ToByteArray()`): display order with the first three groups little-endian.
    ///
    /// ```
    /// let id: combkey::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// let le = id.to_sqlserver_bytes_le();
    /// assert_eq!(le, [0x0c, 0x07, 0x39, 0x8f, 0xdc, 0x0c, 0x98, 0xc4, 0x7c, 0xc3, 0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0]);
    /// assert_eq!(combkey::Comb::from_sqlserver_bytes_le(le), id);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn to_sqlserver_bytes_le(self) -> [u8; 16] {
        uuid::Uuid::from_bytes(self.to_sqlserver_bytes()).to_bytes_le()
    }

    /// The public id of SQL Server's own bytes of a stored value; the inverse of
    /// [`to_sqlserver_bytes_le`](Self::to_sqlserver_bytes_le).
    pub const fn from_sqlserver_bytes_le(stored_le: [u8; 16]) -> Self {
        Self::from_sqlserver_bytes(*uuid::Uuid::from_bytes_le(stored_le).as_bytes())
    }
}

/// Compares two `uniqueidentifier` values (display byte order) the way SQL Server does.
///
/// Display bytes 10..15 first, then 8..9, then 7, 6, 5, 4, then 3, 2, 1, 0 (Microsoft,
/// "How are GUIDs compared in SQL Server 2005"; `SqlGuid.CompareTo`). Useful to sort in
/// memory as an `ORDER BY` on SQL Server would.
///
/// ```
/// use core::cmp::Ordering;
///
/// // Lambert's "Custom UUID as primary key": SQL Server ordered these two values this way round.
/// let a = uuid::Uuid::parse_str("0001ABD9-3F62-E111-B305-0FCE8C655371").unwrap();
/// let b = uuid::Uuid::parse_str("0001A3DB-3F62-E111-B305-0FCE8C655371").unwrap();
/// assert_eq!(combkey::sqlserver_cmp(a.as_bytes(), b.as_bytes()), Ordering::Less);
/// ```
pub fn sqlserver_cmp(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
    SQLSERVER_ORDER.iter().map(|&i| a[i].cmp(&b[i])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        let s = uuid::Uuid::from_bytes(id.to_sqlserver_bytes());
        assert_eq!(s.to_string(), "8f39070c-0cdc-c498-7cc3-017f22e279b0");
        // Display bytes 10..15 hold the milliseconds.
        let ms = s.as_bytes()[10..16].iter().fold(0i64, |acc, &b| (acc << 8) | i64::from(b));
        assert_eq!(Some(ms), id.unix_ms());
    }

    #[test]
    fn permutation_is_a_bijection() {
        let mut seen = [false; 16];
        for &i in &SQLSERVER_ORDER {
            assert!(!seen[i], "display byte {i} used twice");
            seen[i] = true;
        }
        for i in 0..16u8 {
            let mut bytes = [0u8; 16];
            bytes[usize::from(i)] = 0xff;
            let id = Comb::from_bytes(bytes);
            assert_eq!(Comb::from_sqlserver_bytes(id.to_sqlserver_bytes()), id);
            assert_eq!(Comb::from_sqlserver_bytes_le(id.to_sqlserver_bytes_le()), id);
        }
    }

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
        let e = "oracle".parse::<Backend>().unwrap_err();
        assert_eq!(e.to_string(), "invalid database: expected postgres, mysql, sqlite or mssql, found \"oracle\"");
    }
}
