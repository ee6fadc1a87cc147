//! A table sharded across servers by its COMB key: MariaDB's Spider storage engine.

use crate::Backend;
use crate::error::Error;
use crate::sql::partitions::{Interval, Partitioning, identifier};
use crate::time::Timestamp;

/// A table sharded by time through its COMB key across MariaDB Spider backends: the head
/// node's table is a Spider table `PARTITION BY RANGE COLUMNS(id)` whose partitions (one per
/// interval) live on the backend servers in turn, each backend holding a table of the same
/// name and columns (`BINARY(16)` key). New ids land on the shard of the current interval, a
/// time-range query touches only the shards that hold the range, and an old shard can be
/// dropped or archived. [`hash`](Self::hash) gives the contrast, `PARTITION BY KEY(id)`:
/// writes spread over every shard, and every time-range query visits all of them.
///
/// The servers are the head's `CREATE SERVER` names (`b1`, `b2`,
/// ...). The interval of each partition decides its server: the interval's ordinal (days,
/// weeks, months or years since 1970) modulo the number of servers, so the DDL that adds the
/// next intervals later puts each where [`range`](Self::range) would have.
///
/// ```
/// use combkey::Timestamp;
/// use combkey::sql::{Interval, Sharding};
///
/// let orders = Sharding::new("orders", Interval::Month, &["b1", "b2", "b3"])?;
/// let (from, to): (Timestamp, Timestamp) = ("2026-01-01T00:00:00Z".parse()?, "2026-04-01T00:00:00Z".parse()?);
/// let ddl = orders.range(from, to)?;
/// assert!(ddl.contains("ALTER TABLE orders ENGINE = SPIDER COMMENT = 'wrapper \"mysql\", table \"orders\"'"));
/// assert!(ddl.contains("PARTITION p2026_01 VALUES LESS THAN (0x019C167FCC00"));
/// assert!(ddl.contains("COMMENT = 'srv \"b1\", table \"orders_2026_01\"'"));
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sharding {
    partitioning: Partitioning,
    servers: Vec<String>,
}

impl Sharding {
    /// Table `table` (a plain identifier) sharded by `interval` over `servers` (at least
    /// one; plain identifiers). The key column is `id`; see [`with_key`](Self::with_key).
    pub fn new(table: &str, interval: Interval, servers: &[&str]) -> Result<Self, Error> {
        if servers.is_empty() {
            return Err(Error::config("Spider servers", "none", "at least one server name"));
        }
        let servers = servers.iter().map(|s| identifier("server name", s)).collect::<Result<_, _>>()?;
        Ok(Sharding { partitioning: Partitioning::new(table, interval)?, servers })
    }

    /// The same with the COMB key in column `key` instead of `id`.
    pub fn with_key(mut self, key: &str) -> Result<Self, Error> {
        self.partitioning = self.partitioning.with_key(key)?;
        Ok(self)
    }

    /// The server that holds the interval starting at `start`.
    pub fn server_of(&self, start: Timestamp) -> &str {
        let ordinal = self.partitioning.interval().ordinal(start);
        let n = i64::try_from(self.servers.len()).unwrap_or(1);
        let i = usize::try_from(ordinal.rem_euclid(n)).unwrap_or(0);
        &self.servers[i]
    }

    fn table(&self) -> &str {
        self.partitioning.table()
    }

    fn spider(&self) -> String {
        format!("ENGINE = SPIDER COMMENT = 'wrapper \"mysql\", table \"{}\"'", self.table())
    }

    /// A partition's place: a table of its own on its server. Spider reads a partition by
    /// asking its remote table for every row, so two partitions on one remote table would
    /// each return the other's rows too.
    fn srv(&self, server: &str, part: &str) -> String {
        format!("COMMENT = 'srv \"{server}\", table \"{}_{part}\"'", self.table())
    }

    /// The partitions from the interval holding `from` to the one before `to`, with `before`
    /// and `max` around them: (name suffix, bound, server).
    fn parts(&self, from: Timestamp, to: Timestamp) -> Result<Vec<(String, Option<Timestamp>, String)>, Error> {
        let interval = self.partitioning.interval();
        let first = interval.start_of(from);
        // Ids before and after the intervals: on the first server, in tables of their own.
        let mut out = vec![("before".to_string(), Some(first), self.servers[0].clone())];
        let mut start = first;
        while start < to {
            let end = interval.next(start);
            if end <= start {
                break;
            }
            out.push((interval.suffix(start), Some(end), self.server_of(start).to_string()));
            start = end;
        }
        if out.len() < 2 {
            return Err(Error::config("shard range", format!("{from}..{to}"), "from before to"));
        }
        out.push(("max".to_string(), None, self.servers[0].clone()));
        Ok(out)
    }

    /// The statements to run on server `server` before [`range`](Self::range) runs on the
    /// head: a table per partition it holds (`CREATE TABLE ... LIKE` the table, which the
    /// backend must have, with the same columns as on the head).
    pub fn backend(&self, server: &str, from: Timestamp, to: Timestamp) -> Result<String, Error> {
        Ok(self
            .parts(from, to)?
            .into_iter()
            .filter(|(_, _, s)| s == server)
            .map(|(part, _, _)| format!("CREATE TABLE IF NOT EXISTS {t}_{part} LIKE {t};\n", t = self.table()))
            .collect())
    }

    /// The head's DDL that makes its table (created first with the same columns as on every
    /// backend) a Spider table sharded by time: `p_before` for older ids, one partition per
    /// interval from the one holding `from` to the one before `to`, and `pmax` for later ids,
    /// each in a table of its own (`<table>_<interval>`) on its server; the statements each
    /// server needs first come before it, as comments to run there ([`backend`](Self::backend)).
    pub fn range(&self, from: Timestamp, to: Timestamp) -> Result<String, Error> {
        let parts = self.parts(from, to)?;
        let mut s = format!(
            "-- combkey: {table} sharded by {interval} of its COMB key {key} over the Spider servers {servers}.\n\
             -- First, on each server, the table {table} itself (the same columns, {key} BINARY(16) primary key), then:\n",
            table = self.table(),
            interval = self.partitioning.interval(),
            key = self.partitioning.key(),
            servers = self.servers.join(", "),
        );
        for server in &self.servers {
            s.push_str(&format!("-- on server {server}:\n"));
            for line in self.backend(server, from, to)?.lines() {
                s.push_str(&format!("--   {line}\n"));
            }
        }
        let lines: Vec<String> = parts
            .iter()
            .map(|(part, end, server)| {
                let bound = match end {
                    Some(t) => Partitioning::bound(Backend::MySql, *t)?,
                    None => "MAXVALUE".into(),
                };
                Ok(format!("  PARTITION {} VALUES LESS THAN ({bound}) {}", pname(part), self.srv(server, part)))
            })
            .collect::<Result<_, Error>>()?;
        s.push_str(&format!(
            "-- on the head:\nALTER TABLE {table} {spider}\nPARTITION BY RANGE COLUMNS({key}) (\n{lines}\n);\n",
            table = self.table(),
            key = self.partitioning.key(),
            spider = self.spider(),
            lines = lines.join(",\n"),
        ));
        Ok(s)
    }

    /// The head's DDL that shards the table by a hash of its key over every server, one
    /// partition each (`PARTITION BY KEY`): the contrast to [`range`](Self::range).
    pub fn hash(&self) -> String {
        let lines: Vec<String> = self
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| format!("  PARTITION p{} {}", i + 1, self.srv(s, &format!("h{}", i + 1))))
            .collect();
        let backends: Vec<String> = self
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(
                    "-- on server {s}:\n--   CREATE TABLE IF NOT EXISTS {t}_h{n} LIKE {t};\n",
                    t = self.table(),
                    n = i + 1
                )
            })
            .collect();
        format!(
            "-- combkey: {table} sharded by a hash of {key} over the Spider servers {servers}.\n{backends}\
             -- on the head:\nALTER TABLE {table} {spider}\nPARTITION BY KEY({key}) (\n{lines}\n);\n",
            backends = backends.concat(),
            table = self.table(),
            key = self.partitioning.key(),
            servers = self.servers.join(", "),
            spider = self.spider(),
            lines = lines.join(",\n"),
        )
    }

    /// The statements that add `count` intervals from the one holding `after`: on each
    /// server the tables of its new intervals (as comments to run there), then on the head the
    /// split of `pmax`.
    pub fn add(&self, after: Timestamp, count: usize) -> Result<String, Error> {
        let interval = self.partitioning.interval();
        let first = interval.start_of(after);
        let mut end = first;
        for _ in 0..count {
            end = interval.next(end);
        }
        let parts: Vec<(String, String, String)> = self
            .parts(first, end)?
            .into_iter()
            .filter(|(part, _, _)| part != "before" && part != "max")
            .map(|(part, bound, server)| {
                let bound = bound.map_or(Ok("MAXVALUE".into()), |t| Partitioning::bound(Backend::MySql, t))?;
                Ok((part, bound, server))
            })
            .collect::<Result<_, Error>>()?;
        let mut s = format!("-- combkey: add {count} {interval} shards to {} from {first}.\n", self.table());
        for server in &self.servers {
            s.push_str(&format!("-- on server {server}:\n"));
            for (part, _, _) in parts.iter().filter(|(_, _, sv)| sv == server) {
                s.push_str(&format!("--   CREATE TABLE IF NOT EXISTS {t}_{part} LIKE {t};\n", t = self.table()));
            }
        }
        let mut lines: Vec<String> = parts
            .iter()
            .map(|(part, bound, server)| {
                format!("  PARTITION p{part} VALUES LESS THAN ({bound}) {}", self.srv(server, part))
            })
            .collect();
        lines.push(format!("  PARTITION pmax VALUES LESS THAN (MAXVALUE) {}", self.srv(&self.servers[0], "max")));
        s.push_str(&format!(
            "-- on the head:\nALTER TABLE {} REORGANIZE PARTITION pmax INTO (\n{}\n);\n",
            self.table(),
            lines.join(",\n")
        ));
        Ok(s)
    }

    /// Retention: the head's `DROP PARTITION` of `p_before` and of every interval wholly
    /// before `before` (of a table made from `from`), then on each server the `DROP TABLE` of
    /// those partitions' tables (dropping a Spider partition leaves its remote table). Running
    /// them again changes nothing.
    pub fn drop_before(&self, from: Timestamp, before: Timestamp) -> Result<String, Error> {
        let interval = self.partitioning.interval();
        let edge = interval.start_of(before);
        let parts: Vec<(String, String)> = self
            .parts(from, edge.max(interval.next(interval.start_of(from))))?
            .into_iter()
            .filter(|(part, end, _)| part != "max" && end.is_some_and(|e| e <= edge))
            .map(|(part, _, server)| (part, server))
            .collect();
        let mut s = format!("-- combkey: drop the shards of {} older than {edge}.\n-- on the head:\n", self.table());
        for (part, _) in &parts {
            s.push_str(&format!("ALTER TABLE {} DROP PARTITION IF EXISTS {};\n", self.table(), pname(part)));
        }
        for server in &self.servers {
            s.push_str(&format!("-- then on server {server}:\n"));
            for (part, _) in parts.iter().filter(|(_, sv)| sv == server) {
                s.push_str(&format!("--   DROP TABLE IF EXISTS {}_{part};\n", self.table()));
            }
        }
        Ok(s)
    }
}

/// A partition's name: `p_before`, `pmax`, `p2026_01`.
fn pname(part: &str) -> String {
    match part {
        "before" => "p_before".into(),
        "max" => "pmax".into(),
        other => format!("p{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn intervals_go_round_the_servers_and_add_agrees_with_range() {
        let s = Sharding::new("orders", Interval::Month, &["b1", "b2", "b3"]).unwrap();
        // 2026-01 is month 56 * 12 = 672 since 1970-01: 672 % 3 = 0.
        assert_eq!(s.server_of(t("2026-01-01T00:00:00Z")), "b1");
        assert_eq!(s.server_of(t("2026-02-01T00:00:00Z")), "b2");
        assert_eq!(s.server_of(t("2026-03-01T00:00:00Z")), "b3");
        assert_eq!(s.server_of(t("2026-04-01T00:00:00Z")), "b1");
        let range = s.range(t("2026-01-01T00:00:00Z"), t("2026-07-01T00:00:00Z")).unwrap();
        let added = s.add(t("2026-04-01T00:00:00Z"), 3).unwrap();
        let added_lines: Vec<&str> = added.lines().filter(|l| l.contains("PARTITION p2026")).collect();
        assert_eq!(added_lines.len(), 3, "{added}");
        for line in added_lines {
            assert!(range.contains(line.trim_end_matches(',')), "{line}\n{range}");
        }
        // Older and later ids on the first server, each partition in a table of its own.
        let before = range.lines().find(|l| l.contains("PARTITION p_before")).unwrap();
        assert!(before.starts_with("  PARTITION p_before VALUES LESS THAN (0x019B76DAA800"), "{range}");
        assert!(before.ends_with("COMMENT = 'srv \"b1\", table \"orders_before\"',"), "{range}");
        assert!(range.contains("PARTITION p2026_02 VALUES LESS THAN (0x019CA6B1DC00"), "{range}");
        assert!(range.contains("COMMENT = 'srv \"b2\", table \"orders_2026_02\"'"), "{range}");
        assert!(
            range.contains("PARTITION pmax VALUES LESS THAN (MAXVALUE) COMMENT = 'srv \"b1\", table \"orders_max\"'"),
            "{range}"
        );
        assert_eq!(
            s.backend("b2", t("2026-01-01T00:00:00Z"), t("2026-07-01T00:00:00Z")).unwrap(),
            "CREATE TABLE IF NOT EXISTS orders_2026_02 LIKE orders;\nCREATE TABLE IF NOT EXISTS orders_2026_05 LIKE orders;\n"
        );
        let dropped = s.drop_before(t("2026-01-01T00:00:00Z"), t("2026-03-15T00:00:00Z")).unwrap();
        for p in ["p_before", "p2026_01", "p2026_02"] {
            assert!(dropped.contains(&format!("DROP PARTITION IF EXISTS {p};")), "{dropped}");
        }
        assert!(!dropped.contains("p2026_03"), "{dropped}");
        assert!(dropped.contains("DROP TABLE IF EXISTS orders_2026_02;"), "{dropped}");
    }

    #[test]
    fn bad_names_and_no_servers_are_errors() {
        assert!(Sharding::new("orders", Interval::Day, &[]).is_err());
        assert!(Sharding::new("orders", Interval::Day, &["b1; DROP"]).is_err());
        assert!(Sharding::new("or ders", Interval::Day, &["b1"]).is_err());
        let s = Sharding::new("orders", Interval::Day, &["b1"]).unwrap();
        assert!(s.range(t("2026-01-02T00:00:00Z"), t("2026-01-01T00:00:00Z")).is_err());
    }
}
