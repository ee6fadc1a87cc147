//! Partitioning a table by time through its COMB key: one partition per day, week, month or
//! year, bounded by [`Comb::min_for`] of each interval's first millisecond (in SQL Server's
//! stored form there), with the statements a scheduled job runs to drop old partitions and
//! add the next ones.

use core::fmt;
use core::str::FromStr;

use crate::backend::Backend;
use crate::comb::Comb;
use crate::error::Error;
use crate::time::Timestamp;

/// How long one partition lasts. Intervals start at midnight UTC; weeks on Monday (ISO 8601).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Interval {
    /// One UTC day. Partitions are named `..._2026_01_31`.
    Day,
    /// One ISO week, Monday to Sunday. Named by ISO year and week: `..._2026_w05`.
    Week,
    /// One calendar month. Named `..._2026_01`.
    Month,
    /// One calendar year. Named `..._2026`.
    Year,
}

impl Interval {
    /// The name as the CLI spells it: `day`, `week`, `month`, `year`.
    pub const fn name(self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
            Interval::Year => "year",
        }
    }

    /// The start of the interval that holds `t`.
    ///
    /// ```
    /// use combkey::Timestamp;
    /// use combkey::sql::Interval;
    ///
    /// let t: Timestamp = "2026-01-15T13:14:15Z".parse()?;
    /// assert_eq!(Interval::Month.start_of(t).to_string(), "2026-01-01T00:00:00.000Z");
    /// assert_eq!(Interval::Week.start_of(t).to_string(), "2026-01-12T00:00:00.000Z"); // a Monday
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn start_of(self, t: Timestamp) -> Timestamp {
        let (y, m, _) = t.date();
        let start = match self {
            Interval::Day => Some(Timestamp::from_days(t.days())),
            // 1970-01-01 was a Thursday: days + 3 counts from a Monday.
            Interval::Week => Some(Timestamp::from_days(t.days() - (t.days() + 3).rem_euclid(7))),
            Interval::Month => Timestamp::from_date(y, m, 1),
            Interval::Year => Timestamp::from_date(y, 1, 1),
        };
        // The first day of a month or year always exists.
        start.unwrap_or(t)
    }

    /// The start of the interval after the one starting at `start`.
    pub fn next(self, start: Timestamp) -> Timestamp {
        let (y, m, _) = start.date();
        let next = match self {
            Interval::Day => Some(Timestamp::from_days(start.days() + 1)),
            Interval::Week => Some(Timestamp::from_days(start.days() + 7)),
            Interval::Month if m == 12 => Timestamp::from_date(y + 1, 1, 1),
            Interval::Month => Timestamp::from_date(y, m + 1, 1),
            Interval::Year => Timestamp::from_date(y + 1, 1, 1),
        };
        next.unwrap_or(start)
    }

    /// The interval's number counted from 1970 (days, weeks from a Monday, months, years),
    /// for assigning intervals to servers in turn.
    pub fn ordinal(self, start: Timestamp) -> i64 {
        let (y, m, _) = start.date();
        match self {
            Interval::Day => start.days(),
            Interval::Week => (start.days() + 3).div_euclid(7),
            Interval::Month => (y - 1970) * 12 + i64::from(m) - 1,
            Interval::Year => y - 1970,
        }
    }

    /// The suffix that names the interval starting at `start`: `2026_01_31`, `2026_w05`,
    /// `2026_01`, `2026`.
    pub fn suffix(self, start: Timestamp) -> String {
        let (y, m, d) = start.date();
        match self {
            Interval::Day => format!("{y:04}_{m:02}_{d:02}"),
            Interval::Week => {
                // The ISO week belongs to the year of its Thursday.
                let thursday = Timestamp::from_days(start.days() + 3);
                let (iso_year, _, _) = thursday.date();
                let jan1 = Timestamp::from_date(iso_year, 1, 1).map_or(thursday.days(), Timestamp::days);
                format!("{iso_year:04}_w{:02}", (thursday.days() - jan1) / 7 + 1)
            }
            Interval::Month => format!("{y:04}_{m:02}"),
            Interval::Year => format!("{y:04}"),
        }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Interval {
    type Err = Error;

    /// `day`, `week`, `month`, `year`.
    fn from_str(s: &str) -> Result<Self, Error> {
        [Interval::Day, Interval::Week, Interval::Month, Interval::Year]
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| Error::config("partition interval", format!("{s:?}"), "day, week, month or year"))
    }
}

/// A table partitioned by time through its COMB key: its name and interval, and the DDL for
/// each database. The key must be the table's primary key (or lead it) and a UUIDv7 COMB,
/// the default public id.
///
/// ```
/// use combkey::{Backend, Timestamp};
/// use combkey::sql::{Interval, Partitioning};
///
/// let orders = Partitioning::new("orders", Interval::Month)?;
/// let (from, to): (Timestamp, Timestamp) = ("2026-01-01T00:00:00Z".parse()?, "2026-03-01T00:00:00Z".parse()?);
/// let ddl = orders.create(Backend::Postgres, from, to, false)?;
/// assert!(ddl.contains(
///     "CREATE TABLE IF NOT EXISTS orders_2026_01 PARTITION OF orders FOR VALUES FROM ('019b76da-a800-7000-8000-000000000000') \
///      TO ('019c167f-cc00-7000-8000-000000000000');"
/// ));
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioning {
    table: String,
    key: String,
    interval: Interval,
}

/// `name` if it is a plain SQL identifier that stays one with a partition suffix.
pub(crate) fn identifier(what: &'static str, name: &str) -> Result<String, Error> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(name.to_string())
    } else {
        Err(Error::config(
            what,
            format!("{name:?}"),
            "a plain identifier: a letter or _, then letters, digits or _, at most 48 characters",
        ))
    }
}

/// One partition: its interval and name suffix.
pub(crate) struct Part {
    pub(crate) start: Timestamp,
    pub(crate) end: Timestamp,
    pub(crate) suffix: String,
}

/// A database's partition DDL (in its module of `crate::backend`), given the intervals.
pub(crate) trait PartitionDdl: Sync {
    /// The DDL that partitions the table into `parts` (and a catch-all with `default`).
    fn create(&self, p: &Partitioning, parts: &[Part], default: bool) -> Result<String, Error>;
    /// The statements that drop `parts`, all wholly before `edge` (an interval start).
    fn drop_before(&self, p: &Partitioning, parts: &[Part], edge: Timestamp) -> Result<String, Error>;
    /// The statements that add `parts` (splitting the catch-all with `default`).
    fn add(&self, p: &Partitioning, parts: &[Part], default: bool) -> Result<String, Error>;
}

impl Partitioning {
    /// A table `table` (a plain SQL identifier: letters, digits, `_`, at most 48
    /// characters, so every partition name stays an identifier) partitioned by `interval`.
    /// The key column is `id`; see [`with_key`](Self::with_key).
    pub fn new(table: &str, interval: Interval) -> Result<Self, Error> {
        Ok(Partitioning { table: identifier("table name", table)?, key: "id".into(), interval })
    }

    /// The same with the COMB key in column `key` (a plain identifier) instead of `id`.
    ///
    /// ```
    /// use combkey::{Backend, Timestamp};
    /// use combkey::sql::{Interval, Partitioning};
    ///
    /// let orders = Partitioning::new("orders", Interval::Year)?.with_key("order_id")?;
    /// let from: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    /// let ddl = orders.create(Backend::MySql, from, Interval::Year.next(from), false)?;
    /// assert!(ddl.contains("ALTER TABLE orders PARTITION BY RANGE COLUMNS(order_id) ("));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn with_key(mut self, key: &str) -> Result<Self, Error> {
        self.key = identifier("key column", key)?;
        Ok(self)
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The key column's name.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The interval of one partition.
    pub const fn interval(&self) -> Interval {
        self.interval
    }

    /// The intervals from the one holding `from` up to the one before `to` (exclusive).
    fn parts(&self, from: Timestamp, to: Timestamp) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut start = self.interval.start_of(from);
        while start < to {
            let end = self.interval.next(start);
            if end <= start {
                break;
            }
            parts.push(Part { start, end, suffix: self.interval.suffix(start) });
            start = end;
        }
        parts
    }

    /// A key bound as an SQL literal in `backend`'s stored form: the first id of `t`.
    pub(crate) fn bound(backend: Backend, t: Timestamp) -> Result<String, Error> {
        Ok(backend.literal(Comb::min_for(t)?))
    }

    /// The DDL that partitions the table into one partition per interval, from the one that
    /// holds `from` through the one that holds the last instant before `to` (an interval that
    /// starts before `to` is there whole, so the partitions end at `to` only where `to` starts
    /// an interval); with `default`, a catch-all for ids outside them
    /// (without it, such an id is the database's error where it has one).
    ///
    /// - PostgreSQL: one `CREATE TABLE ... PARTITION OF ... FOR VALUES FROM ... TO ...` per
    ///   interval (and `... DEFAULT`); the parent must be declared `PARTITION BY RANGE (id)`,
    ///   which the text shows as a comment to copy. An id outside every partition is an
    ///   error ("no partition of relation ... found for row").
    /// - MySQL/MariaDB: `ALTER TABLE ... PARTITION BY RANGE COLUMNS(id) (...)` over
    ///   `BINARY(16)`, with a first partition `p_before` for ids older than `from` (range
    ///   partitions have no lower bound) and, with `default`, `pmax`; without it an id past
    ///   the last interval is an error ("Table has no partition for value ...").
    /// - SQL Server: a partition function on `uniqueidentifier` with `RANGE RIGHT`
    ///   boundaries in the stored form (one per interval start, and the last interval's end),
    ///   and its scheme.
    ///   SQL Server always keeps a partition below the first boundary and one above the
    ///   last, so `default` changes nothing there.
    /// - SQLite has no table partitioning: an error.
    pub fn create(&self, backend: Backend, from: Timestamp, to: Timestamp, default: bool) -> Result<String, Error> {
        let ddl = backend.dialect().partitions()?;
        let parts = self.parts(from, to);
        let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
            return Err(Error::config("partition range", format!("{from}..{to}"), "from before to"));
        };
        let mut s = format!(
            "-- combkey: {} partitioned by {} of its COMB key {}, {} to {}.\n",
            self.table, self.interval, self.key, first.start, last.end
        );
        s.push_str(&ddl.create(self, &parts, default)?);
        Ok(s)
    }

    /// The statements that remove the partitions wholly before `before` (their rows with
    /// them), for a table made by [`create`](Self::create) from `from`: what a scheduled
    /// retention job runs. Running them again changes nothing.
    ///
    /// PostgreSQL: `DROP TABLE IF EXISTS` of each partition (to keep the rows elsewhere,
    /// `ALTER TABLE ... DETACH PARTITION` first); MySQL/MariaDB: `DROP PARTITION IF EXISTS`
    /// (with `p_before`); SQL Server: `TRUNCATE TABLE ... WITH (PARTITIONS (1 TO n))` up to
    /// the partition of `before`, then `MERGE RANGE` of the boundaries below it.
    pub fn drop_before(&self, backend: Backend, from: Timestamp, before: Timestamp) -> Result<String, Error> {
        let ddl = backend.dialect().partitions()?;
        let parts: Vec<Part> = self.parts(from, before).into_iter().filter(|p| p.end <= before).collect();
        let mut s = format!("-- combkey: drop the partitions of {} older than {before}.\n", self.table);
        s.push_str(&ddl.drop_before(self, &parts, self.interval.start_of(before))?);
        Ok(s)
    }

    /// The statements that add `count` partitions for the intervals from the one holding
    /// `after`: what a scheduled job runs ahead of time. With `default` (the table was made
    /// with one), MySQL/MariaDB split `pmax`. Running them again changes nothing on
    /// PostgreSQL and SQL Server.
    pub fn add(&self, backend: Backend, after: Timestamp, count: usize, default: bool) -> Result<String, Error> {
        let ddl = backend.dialect().partitions()?;
        let mut parts = Vec::new();
        let mut start = self.interval.start_of(after);
        for _ in 0..count {
            let end = self.interval.next(start);
            parts.push(Part { start, end, suffix: self.interval.suffix(start) });
            start = end;
        }
        let mut s = format!(
            "-- combkey: add {count} {} partitions to {} from {}.\n",
            self.interval,
            self.table,
            self.interval.start_of(after)
        );
        s.push_str(&ddl.add(self, &parts, default)?);
        Ok(s)
    }

    /// The boundaries a SQL Server partition function made by [`create`](Self::create) has:
    /// the stored form of each interval's first id, and of the first id after the last
    /// interval (its end: `to` where `to` starts an interval), in display byte order.
    pub fn sqlserver_boundaries(&self, from: Timestamp, to: Timestamp) -> Result<Vec<[u8; 16]>, Error> {
        let parts = self.parts(from, to);
        let mut out = Vec::new();
        for p in &parts {
            out.push(Backend::SqlServer.to_stored(Comb::min_for(p.start)?));
        }
        if let Some(last) = parts.last() {
            out.push(Backend::SqlServer.to_stored(Comb::min_for(last.end)?));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn intervals_and_names() {
        let cases = [
            (
                Interval::Day,
                "2026-01-31T23:59:59.999Z",
                "2026-01-31T00:00:00.000Z",
                "2026-02-01T00:00:00.000Z",
                "2026_01_31",
            ),
            (
                Interval::Month,
                "2026-12-15T00:00:00Z",
                "2026-12-01T00:00:00.000Z",
                "2027-01-01T00:00:00.000Z",
                "2026_12",
            ),
            (Interval::Year, "2028-02-29T12:00:00Z", "2028-01-01T00:00:00.000Z", "2029-01-01T00:00:00.000Z", "2028"),
            // 2026-01-01 is a Thursday: its ISO week 1 starts on Monday 2025-12-29.
            (
                Interval::Week,
                "2026-01-01T00:00:00Z",
                "2025-12-29T00:00:00.000Z",
                "2026-01-05T00:00:00.000Z",
                "2026_w01",
            ),
            // 2027-01-01 is a Friday: it belongs to ISO week 53 of 2026.
            (
                Interval::Week,
                "2027-01-01T00:00:00Z",
                "2026-12-28T00:00:00.000Z",
                "2027-01-04T00:00:00.000Z",
                "2026_w53",
            ),
        ];
        for (interval, at, start, next, suffix) in cases {
            let s = interval.start_of(t(at));
            assert_eq!(s.to_string(), start, "{interval} {at}");
            assert_eq!(interval.next(s).to_string(), next, "{interval} {at}");
            assert_eq!(interval.suffix(s), suffix, "{interval} {at}");
        }
        assert_eq!("week".parse::<Interval>(), Ok(Interval::Week));
        assert!("fortnight".parse::<Interval>().unwrap_err().to_string().contains("day, week, month or year"));
    }

    #[test]
    fn table_names_are_plain_identifiers() {
        for bad in ["", "1orders", "orders; DROP TABLE x", "or\"ders", &"x".repeat(49)] {
            let e = Partitioning::new(bad, Interval::Day).unwrap_err();
            assert!(e.to_string().contains("a plain identifier"), "{bad}: {e}");
        }
        assert!(Partitioning::new("_orders_2", Interval::Day).is_ok());
        let e = Partitioning::new("orders", Interval::Day).unwrap().with_key("id) ; --").unwrap_err();
        assert!(e.to_string().contains("key column"), "{e}");
    }

    #[test]
    fn ddl_shapes() {
        let p = Partitioning::new("orders", Interval::Month).unwrap();
        let (from, to) = (t("2026-01-20T00:00:00Z"), t("2026-03-01T00:00:00Z"));
        let pg = p.create(Backend::Postgres, from, to, true).unwrap();
        assert_eq!(pg.matches("PARTITION OF orders FOR VALUES").count(), 2, "{pg}");
        assert!(pg.contains("-- combkey: orders partitioned by month of its COMB key id, 2026-01-01T00:00:00.000Z to 2026-03-01T00:00:00.000Z."));
        assert!(pg.contains("CREATE TABLE orders_default PARTITION OF orders DEFAULT;"));
        let my = p.create(Backend::MySql, from, to, true).unwrap();
        assert!(my.contains("ALTER TABLE orders PARTITION BY RANGE COLUMNS(id) (\n  PARTITION p_before VALUES LESS THAN (0x019B76DAA80070008000000000000000),\n"), "{my}");
        assert!(my.contains("PARTITION p2026_02 VALUES LESS THAN (0x019CA6B1DC0070008000000000000000),\n  PARTITION pmax VALUES LESS THAN (MAXVALUE)\n);"), "{my}");
        let keyed = p.clone().with_key("order_id").unwrap();
        let pg = keyed.create(Backend::Postgres, from, to, false).unwrap();
        assert!(pg.contains("PRIMARY KEY (order_id)) PARTITION BY RANGE (order_id);"), "{pg}");
        let ms = keyed.create(Backend::SqlServer, from, to, false).unwrap();
        assert!(ms.contains("--   ON orders_by_month_scheme (order_id);"), "{ms}");
        let ms = p.create(Backend::SqlServer, from, to, false).unwrap();
        assert!(
            ms.contains("CREATE PARTITION FUNCTION orders_by_month (uniqueidentifier) AS RANGE RIGHT FOR VALUES ("),
            "{ms}"
        );
        assert_eq!(p.sqlserver_boundaries(from, to).unwrap().len(), 3);
        assert!(p.create(Backend::Sqlite, from, to, false).unwrap_err().to_string().contains("no table partitioning"));
        assert!(p.create(Backend::Postgres, to, from, false).is_err());
        let add = p.add(Backend::MySql, t("2026-03-01T00:00:00Z"), 2, true).unwrap();
        assert!(add.contains("ALTER TABLE orders REORGANIZE PARTITION pmax INTO (\n  PARTITION p2026_03"), "{add}");
        let drop = p.drop_before(Backend::Postgres, from, t("2026-02-15T00:00:00Z")).unwrap();
        assert!(drop.contains("DROP TABLE IF EXISTS orders_2026_01;") && !drop.contains("orders_2026_02"), "{drop}");
    }
}
