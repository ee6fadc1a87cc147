//! Microsoft SQL Server: what combkey knows about it.
//!
//! - Column type `uniqueidentifier`. SQL Server compares its display bytes in the order
//!   10 11 12 13 14 15, 8 9, 7 6, 5 4, 3 2 1 0 (`System.Data.SqlTypes.SqlGuid.CompareTo`,
//!   Microsoft's "How are GUIDs compared in SQL Server 2005"), so combkey stores the public
//!   bytes permuted ([`Comb::to_sqlserver_bytes`]): SQL Server's order of stored values is
//!   then the public order for every pair of ids, and the milliseconds sit in display
//!   bytes 10..15, where RT.Comb's T-SQL reads them.
//! - An id as a literal: the stored value's GUID string, `'8F39070C-0CDC-C498-7CC3-017F22E279B0'`.
//! - Identifiers: `[...]`, at most 128 characters.
//! - Database-side functions in `dbo` (`combkey_v7()` making the stored form for `DEFAULT`
//!   constraints, `combkey_unix_ms`, `combkey_time`, `combkey_stored`, `combkey_public`,
//!   `combkey_from_rtcomb_sql`), in batches separated by `GO` lines.
//! - Partitions: a partition function on `uniqueidentifier` with `RANGE RIGHT` boundaries in
//!   the stored form, and its scheme.
//! - A column RT.Comb's `Sql` provider filled converts in place with [`convert_rtcomb_sql`].

use core::cmp::Ordering;

use crate::backend::{Backend, Dialect, functions_text, quote_with};
use crate::comb::Comb;
use crate::error::Error;
use crate::sql::partitions::{Part, PartitionDdl, Partitioning};
use crate::time::Timestamp;

/// Where public byte `i` goes in the SQL Server stored form (display byte order).
///
/// SQL Server compares `uniqueidentifier` display bytes in the order
/// 10 11 12 13 14 15, 8 9, 7 6, 5 4, 3 2 1 0 (`SqlGuid.CompareTo`). Putting public byte `i`
/// at display byte `ORDER[i]` makes that comparison walk the public bytes 0..15.
const ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 7, 6, 5, 4, 3, 2, 1, 0];

/// SQL Server's module (see [`Backend::SqlServer`]).
pub(crate) struct SqlServer;

pub(crate) const fn to_stored(id: Comb) -> [u8; 16] {
    id.to_sqlserver_bytes()
}

pub(crate) const fn from_stored(stored: [u8; 16]) -> Comb {
    Comb::from_sqlserver_bytes(stored)
}

impl Dialect for SqlServer {
    fn names(&self) -> &'static [&'static str] {
        &["sqlserver", "mssql", "tsql"]
    }

    fn column_type(&self) -> &'static str {
        "uniqueidentifier"
    }

    fn stored_text(&self, stored: [u8; 16]) -> String {
        format!("{:X}", uuid::Uuid::from_bytes(stored).hyphenated())
    }

    fn literal(&self, stored: [u8; 16]) -> String {
        format!("'{}'", self.stored_text(stored))
    }

    fn quote(&self, name: &str) -> String {
        quote_with(name, '[', ']')
    }

    fn max_identifier_len(&self) -> usize {
        128
    }

    fn primary_key(&self, name: &str) -> String {
        format!("{name} uniqueidentifier NOT NULL PRIMARY KEY DEFAULT dbo.combkey_v7()")
    }

    fn install_functions(&self) -> &'static str {
        include_str!("sqlserver.up.sql")
    }

    fn drop_functions(&self) -> &'static str {
        include_str!("sqlserver.down.sql")
    }

    fn unix_ms_expr(&self, column: &str) -> String {
        format!("dbo.combkey_unix_ms({column})")
    }

    fn migration_notes(&self) -> String {
        let mut s = functions_text(self);
        s.push_str("\n-- Converting a column `id` of table `dbo.t` filled by RT.Comb's Sql provider:\n-- ");
        s.push_str(convert_rtcomb_sql("dbo.t", "id").trim_end());
        s.push('\n');
        s
    }

    fn partitions(&self) -> Result<&'static dyn PartitionDdl, Error> {
        Ok(&SqlServer)
    }
}

/// The statement that converts a `uniqueidentifier` column filled by RT.Comb's `Sql`
/// provider to combkey's stored form, so the rows read as public ids (the lossless
/// conversion of RT.Comb's `Sql` layout to v7, in T-SQL). Needs the functions of
/// [`Backend::install_functions`]. Only rows that still look like RT.Comb's (version 4 and
/// RFC variant bytes where RT.Comb has them) are converted, so running it twice changes
/// nothing the second time.
///
/// ```
/// let sql = combkey::sql::sqlserver_convert_rtcomb_sql("dbo.orders", "id");
/// assert!(sql.starts_with("UPDATE dbo.orders SET [id] = dbo.combkey_from_rtcomb_sql([id]) WHERE "));
/// ```
pub fn convert_rtcomb_sql(table: &str, column: &str) -> String {
    let c = quote_with(column, '[', ']');
    let version = format!("SUBSTRING(CAST({c} AS BINARY(16)), 8, 1)");
    let variant = format!("SUBSTRING(CAST({c} AS BINARY(16)), 9, 1)");
    format!(
        "UPDATE {table} SET {c} = dbo.combkey_from_rtcomb_sql({c}) WHERE {version} >= 0x40 AND {version} < 0x50 \
         AND {variant} >= 0x80 AND {variant} < 0xC0;\n"
    )
}

/// What an existing `uniqueidentifier` column holds, for [`sqlserver_convert_table`](crate::sql::sqlserver_convert_table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExistingKeys {
    /// Ids as `uuid::Uuid`, .NET's `Guid` and `NEWID()` write them (random or not): they keep
    /// their public ids, now in combkey's stored form (`dbo.combkey_stored`).
    Public,
    /// RT.Comb's `Sql` provider: each becomes the v7 id of the same instant and random bits
    /// (`dbo.combkey_from_rtcomb_sql`; public ids change, `layouts::KeyMigration` maps them).
    RtCombSql,
    /// `NEWSEQUENTIALID()`: each becomes the v7 id of the same millisecond, its 100-ns ticks,
    /// clock sequence and node after the time (`dbo.combkey_from_newsequentialid`; public ids
    /// change). The v7 id holds all but two bits of the node, so the script keeps each old and
    /// new key in a table, `<schema>.combkey_keymap_<table>`, where an old id resolves.
    NewSequentialId,
}

impl ExistingKeys {
    fn function(self) -> &'static str {
        match self {
            ExistingKeys::Public => "dbo.combkey_stored",
            ExistingKeys::RtCombSql => "dbo.combkey_from_rtcomb_sql",
            ExistingKeys::NewSequentialId => "dbo.combkey_from_newsequentialid",
        }
    }
}

impl Referencing {
    /// The column `column` of `table` (`dbo.items`), referencing the key through the foreign
    /// key `foreign_key`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::sql::{ExistingKeys, Referencing, sqlserver_convert_table};
    ///
    /// let lines = Referencing::new("dbo.order_lines", "order_id", "fk_order_lines_orders");
    /// assert_eq!(lines.column, "order_id");
    /// let sql = sqlserver_convert_table("dbo.orders", "id", ExistingKeys::RtCombSql, &[lines]);
    /// assert!(sql.contains("ALTER TABLE dbo.order_lines NOCHECK CONSTRAINT [fk_order_lines_orders];"));
    /// assert!(sql.contains("UPDATE dbo.order_lines SET [order_id] = dbo.combkey_from_rtcomb_sql([order_id])"));
    /// ```
    pub fn new(table: impl Into<String>, column: impl Into<String>, foreign_key: impl Into<String>) -> Self {
        Referencing { table: table.into(), column: column.into(), foreign_key: foreign_key.into() }
    }
}

impl core::str::FromStr for ExistingKeys {
    type Err = Error;

    /// `public` (also `random`, `newid`), `rtcomb-sql`, `newsequentialid`.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "public" | "random" | "newid" | "uuid" => Ok(ExistingKeys::Public),
            "rtcomb-sql" => Ok(ExistingKeys::RtCombSql),
            "newsequentialid" => Ok(ExistingKeys::NewSequentialId),
            _ => Err(Error::config("existing keys", format!("{s:?}"), "public, rtcomb-sql or newsequentialid")),
        }
    }
}

/// A name without the brackets or double quotes around it.
fn unquote(name: &str) -> &str {
    name.trim_start_matches(['[', '"']).trim_end_matches([']', '"'])
}

/// A column that references the converted key: its table, column and foreign key's name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Referencing {
    /// The referencing table (`dbo.items`).
    pub table: String,
    /// Its column holding the key.
    pub column: String,
    /// The foreign key constraint's name.
    pub foreign_key: String,
}

/// The T-SQL that moves an existing `uniqueidentifier` key column, and every column that
/// references it, to combkey's stored form in one transaction (`SET XACT_ABORT ON`: any error
/// rolls it all back): the foreign keys stop being checked, every value is converted by the
/// function for `from`, the foreign keys are checked again over every row (`WITH CHECK`), and
/// a row in `dbo.combkey_converted` records the conversion, so that running the script again
/// changes nothing (a conversion applied twice would change the ids again). Needs the
/// functions of [`Backend::install_functions`].
///
/// ```
/// use combkey::sql::{ExistingKeys, Referencing, sqlserver_convert_table};
///
/// let items = Referencing::new("dbo.items", "order_id", "fk_items_orders");
/// let sql = sqlserver_convert_table("dbo.orders", "id", ExistingKeys::Public, &[items]);
/// assert!(sql.contains("UPDATE dbo.orders SET [id] = dbo.combkey_stored([id]);"));
/// assert!(sql.contains("UPDATE dbo.items SET [order_id] = dbo.combkey_stored([order_id]) WHERE [order_id] IS NOT NULL;"));
/// assert!(sql.contains("ALTER TABLE dbo.items WITH CHECK CHECK CONSTRAINT [fk_items_orders];"));
/// ```
pub fn convert_table(table: &str, column: &str, from: ExistingKeys, references: &[Referencing]) -> String {
    let c = quote_with(column, '[', ']');
    let f = from.function();
    let target = format!("{table}.{column}").replace('\'', "''");
    let mut s = format!(
        "-- combkey: convert {table}.{column} ({from:?} keys) and every column referencing it to combkey's stored form.\n\
         -- One transaction; recorded in dbo.combkey_converted, so that a second run changes nothing.\n\
         SET XACT_ABORT ON;\nBEGIN TRANSACTION;\n\
         IF OBJECT_ID(N'dbo.combkey_converted') IS NULL\n  \
         CREATE TABLE dbo.combkey_converted (target NVARCHAR(400) NOT NULL PRIMARY KEY, converted_at DATETIME2 NOT NULL DEFAULT SYSUTCDATETIME());\n\
         IF NOT EXISTS (SELECT 1 FROM dbo.combkey_converted WITH (UPDLOCK, HOLDLOCK) WHERE target = N'{target}')\nBEGIN\n"
    );
    for r in references {
        s.push_str(&format!(
            "  ALTER TABLE {} NOCHECK CONSTRAINT {};\n",
            r.table,
            quote_with(&r.foreign_key, '[', ']')
        ));
    }
    if from == ExistingKeys::NewSequentialId {
        // The new keys do not give the old ones back: the table of both, made before they change.
        let map = match table.rsplit_once('.') {
            Some((schema, name)) => {
                format!("{schema}.{}", quote_with(&format!("combkey_keymap_{}", unquote(name)), '[', ']'))
            }
            None => quote_with(&format!("combkey_keymap_{}", unquote(table)), '[', ']'),
        };
        s.push_str(&format!(
            "  IF OBJECT_ID(N'{m}') IS NULL\n    SELECT {c} AS old_key, {f}({c}) AS new_key INTO {map} FROM {table};\n  \
             ELSE\n    INSERT INTO {map} (old_key, new_key) SELECT {c}, {f}({c}) FROM {table};\n",
            m = map.replace('\'', "''")
        ));
    }
    s.push_str(&format!("  UPDATE {table} SET {c} = {f}({c});\n"));
    for r in references {
        let rc = quote_with(&r.column, '[', ']');
        s.push_str(&format!("  UPDATE {} SET {rc} = {f}({rc}) WHERE {rc} IS NOT NULL;\n", r.table));
    }
    for r in references {
        s.push_str(&format!(
            "  ALTER TABLE {} WITH CHECK CHECK CONSTRAINT {};\n",
            r.table,
            quote_with(&r.foreign_key, '[', ']')
        ));
    }
    s.push_str(&format!(
        "  INSERT INTO dbo.combkey_converted (target) VALUES (N'{target}');\nEND\nCOMMIT TRANSACTION;\n"
    ));
    s
}

impl Comb {
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
            s[ORDER[i]] = p[i];
            i += 1;
        }
        s
    }

    /// The public id of a SQL Server stored value given in display byte order; the inverse
    /// of [`to_sqlserver_bytes`](Self::to_sqlserver_bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// // A value read from a uniqueidentifier column, as SQL Server shows it.
    /// let stored = *uuid::Uuid::parse_str("8f39070c-0cdc-c498-7cc3-017f22e279b0").unwrap().as_bytes();
    /// let id = Comb::from_sqlserver_bytes(stored);
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// assert_eq!(id.to_sqlserver_bytes(), stored);
    /// ```
    pub const fn from_sqlserver_bytes(stored: [u8; 16]) -> Self {
        let mut p = [0u8; 16];
        let mut i = 0;
        while i < 16 {
            p[i] = stored[ORDER[i]];
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
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let id = Comb::new();
    /// // What `CAST(id AS BINARY(16))` or .NET's Guid.ToByteArray() gives back.
    /// let raw = id.to_sqlserver_bytes_le();
    /// assert_eq!(Comb::from_sqlserver_bytes_le(raw), id);
    /// ```
    pub const fn from_sqlserver_bytes_le(stored_le: [u8; 16]) -> Self {
        Self::from_sqlserver_bytes(*uuid::Uuid::from_bytes_le(stored_le).as_bytes())
    }
}

/// Compares two `uniqueidentifier` values (display byte order) the way SQL Server does
/// (published as [`crate::adapter::sqlserver_cmp`]).
pub(crate) fn cmp(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
    ORDER.iter().map(|&i| a[i].cmp(&b[i])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
}

impl SqlServer {
    /// The partition function's name: `orders_by_month`.
    fn function(p: &Partitioning) -> String {
        format!("{}_by_{}", p.table(), p.interval())
    }
}

impl PartitionDdl for SqlServer {
    fn create(&self, p: &Partitioning, parts: &[Part], _default: bool) -> Result<String, Error> {
        let Some(last) = parts.last() else { return Ok(String::new()) };
        let (f, t, k) = (Self::function(p), p.table(), p.key());
        let mut bounds = Vec::new();
        for part in parts {
            bounds.push(Partitioning::bound(Backend::SqlServer, part.start)?);
        }
        bounds.push(Partitioning::bound(Backend::SqlServer, last.end)?);
        Ok(format!(
            "-- Boundaries: the stored form of each interval's first id, in SQL Server's order. Partition 1\n\
             -- holds older ids, partition n + 1 the n-th interval, the last one later ids.\n\
             CREATE PARTITION FUNCTION {f} (uniqueidentifier) AS RANGE RIGHT FOR VALUES (\n  {}\n);\nGO\n\
             CREATE PARTITION SCHEME {f}_scheme AS PARTITION {f} ALL TO ([PRIMARY]);\nGO\n\
             -- CREATE TABLE {t} ({k} uniqueidentifier NOT NULL, ..., CONSTRAINT pk_{t} PRIMARY KEY ({k}))\n\
             --   ON {f}_scheme ({k});\n",
            bounds.join(",\n  ")
        ))
    }

    fn drop_before(&self, p: &Partitioning, parts: &[Part], edge: Timestamp) -> Result<String, Error> {
        let (f, t) = (Self::function(p), p.table());
        let edge = Partitioning::bound(Backend::SqlServer, edge)?;
        let mut s = format!(
            "DECLARE @last int = $PARTITION.{f}({edge}) - 1;\n\
             IF @last >= 1\n\
             BEGIN\n\
             \x20 DECLARE @sql nvarchar(200) = N'TRUNCATE TABLE {t} WITH (PARTITIONS (1 TO ' + CAST(@last AS nvarchar(10)) + N'))';\n\
             \x20 EXEC sp_executesql @sql;\n\
             END;\n"
        );
        for part in parts {
            let b = Partitioning::bound(Backend::SqlServer, part.start)?;
            s.push_str(&format!(
                "IF EXISTS (SELECT 1 FROM sys.partition_range_values v JOIN sys.partition_functions f ON f.function_id = v.function_id \
                 WHERE f.name = N'{f}' AND CAST(v.value AS uniqueidentifier) = {b})\n\
                 \x20 ALTER PARTITION FUNCTION {f}() MERGE RANGE ({b});\n"
            ));
        }
        Ok(s)
    }

    fn add(&self, p: &Partitioning, parts: &[Part], _default: bool) -> Result<String, Error> {
        let f = Self::function(p);
        let mut s = String::new();
        for part in parts {
            let b = Partitioning::bound(Backend::SqlServer, part.end)?;
            s.push_str(&format!(
                "IF NOT EXISTS (SELECT 1 FROM sys.partition_range_values v JOIN sys.partition_functions f ON f.function_id = v.function_id \
                 WHERE f.name = N'{f}' AND CAST(v.value AS uniqueidentifier) = {b})\n\
                 BEGIN\n\
                 \x20 ALTER PARTITION SCHEME {f}_scheme NEXT USED [PRIMARY];\n\
                 \x20 ALTER PARTITION FUNCTION {f}() SPLIT RANGE ({b});\n\
                 END;\n"
            ));
        }
        Ok(s)
    }
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
        for &i in &ORDER {
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
    fn cmp_is_sql_servers() {
        // RT.Comb's README: SQL Server sorts by the last six bytes first.
        let early = *uuid::Uuid::parse_str("ffffffff-ffff-ffff-ffff-000000000001").unwrap().as_bytes();
        let late = *uuid::Uuid::parse_str("00000000-0000-0000-0000-000000000002").unwrap().as_bytes();
        assert_eq!(cmp(&early, &late), Ordering::Less);
    }
}
