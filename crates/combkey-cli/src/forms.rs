//! What an id is or how to write it (public, stored per backend, a layout), durations, and
//! JSON strings.

use std::time::Duration;

use combkey::layouts::{KeyMigration, Layout};
use combkey::{Backend, Comb};

/// What an id is, or how to write one: the public id (`canonical`), the stored value as a
/// backend's own client shows it (a [`Backend`] name: `sqlserver`, `mysql`, `postgres`,
/// `sqlite` and their aliases), or a layout of another system (`rtcomb-sql`, `v1`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    /// The public id: lowercase hyphenated (PostgreSQL shows this for a `uuid` column).
    Public,
    /// The stored value as the backend's own client shows it ([`Backend::stored_text`]):
    /// SQL Server's uppercase `uniqueidentifier`, the 32 hex digits of MySQL's `HEX(id)`.
    Stored(Backend),
    /// A layout (`v7`, `rtcomb-sql`, `mysql-swap`, ...), written canonically.
    Layout(Layout),
}

impl Spec {
    /// `canonical` (or `public`) or a backend name: how `--stored` writes new ids.
    pub fn parse_written(s: &str) -> Result<Spec, String> {
        if s == "canonical" || s == "public" {
            return Ok(Spec::Public);
        }
        s.parse()
            .map(Spec::Stored)
            .map_err(|_| format!("unknown backend {s:?}: expected canonical, sqlserver, mysql, postgres or sqlite"))
    }

    /// `canonical`, a backend name, or a layout name (what `convert --from/--to` take).
    pub fn parse(s: &str) -> Result<Spec, String> {
        if let Ok(spec) = Spec::parse_written(s) {
            return Ok(spec);
        }
        s.parse::<Layout>().map(Spec::Layout).map_err(|_| {
            format!(
                "unknown backend or layout {s:?}: expected canonical, sqlserver, mysql or a layout ({})",
                Layout::ALL.map(Layout::name).join(", ")
            )
        })
    }

    /// The public id written this way (a layout writes the public id canonically).
    pub fn format(self, id: Comb) -> String {
        match self {
            Spec::Stored(backend) => backend.stored_text(id),
            Spec::Public | Spec::Layout(_) => id.to_string(),
        }
    }

    /// Converts `text` from `from` to `to`. Between the public id and stored forms the id is
    /// only re-written; a backend or `canonical` on one side and a layout on the other means
    /// the public id, layout v7: every layout that carries a time has a v7 form (what `doctor`
    /// converts its keys to), and back where that form keeps every bit.
    pub fn convert(from: Spec, to: Spec, text: &str) -> Result<String, combkey::Error> {
        let (id, layout) = match from {
            Spec::Public => (text.parse()?, None),
            Spec::Stored(backend) => (backend.parse_stored(text)?, None),
            Spec::Layout(l) => (text.parse()?, Some(l)),
        };
        let to_v7 = |l: Layout| KeyMigration::new(l, Layout::V7).and_then(|m| m.convert(&id));
        match to {
            Spec::Public | Spec::Stored(_) => {
                let public = match layout {
                    Some(l) => to_v7(l)?,
                    None => id,
                };
                Ok(to.format(public))
            }
            Spec::Layout(l) => {
                let from = layout.unwrap_or(Layout::V7);
                let out = match Layout::convert(&id, from, l) {
                    Ok(out) => out,
                    Err(_) if l == Layout::V7 => to_v7(from)?,
                    Err(_) if from == Layout::V7 => KeyMigration::new(l, Layout::V7)?.revert(&id)?,
                    Err(e) => return Err(e),
                };
                Ok(out.to_string())
            }
        }
    }
}

/// Parses `10m`, `90s`, `1h30m`, `250ms`, `2d`: a sequence of numbers with units.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {s:?}: expected numbers with units ms, s, m, h or d, e.g. 10m or 1h30m");
    let mut total_ms: u64 = 0;
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" | "min" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total_ms = n.checked_mul(factor).and_then(|v| total_ms.checked_add(v)).ok_or_else(bad)?;
    }
    Ok(Duration::from_millis(total_ms))
}

/// `s` as a JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in ["", "10", "m", "10x", "-5m", "99999999999999999999d", "1.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn stored_forms_round_trip() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        let sqlserver = Spec::Stored(Backend::SqlServer);
        let mysql = Spec::Stored(Backend::MySql);
        assert_eq!(sqlserver.format(id), "8F39070C-0CDC-C498-7CC3-017F22E279B0");
        assert_eq!(mysql.format(id), "017F22E279B07CC398C4DC0C0C07398F");
        for f in [Spec::Public, sqlserver, mysql] {
            assert_eq!(
                Spec::convert(f, Spec::Public, &f.format(id)).as_deref(),
                Ok("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
            );
        }
    }

    #[test]
    fn specs() {
        assert_eq!(Spec::parse("mysql"), Ok(Spec::Stored(Backend::MySql)));
        assert_eq!(Spec::parse("sqlserver"), Ok(Spec::Stored(Backend::SqlServer)));
        assert_eq!(Spec::parse("mssql"), Ok(Spec::Stored(Backend::SqlServer)));
        assert_eq!(Spec::parse("canonical"), Ok(Spec::Public));
        assert_eq!(Spec::parse("lambert-v13"), Ok(Spec::Layout(Layout::LambertV13)));
        assert!(Spec::parse("bogus").unwrap_err().contains("rtcomb-sql"));
        let nsid = "B9586BD7-2062-E111-B36C-CC52AFC9F2ED";
        let v1 = Spec::convert(Spec::Layout(Layout::NewSequentialId), Spec::Layout(Layout::V1), nsid);
        assert_eq!(v1.as_deref(), Ok("d76b58b9-6220-11e1-b36c-cc52afc9f2ed"));
        let rt = "d01c25cc-63a7-47cc-b5ba-018e5f3bff48";
        let public = Spec::convert(Spec::Layout(Layout::RtCombSql), Spec::Public, rt).unwrap();
        assert_eq!(Spec::convert(Spec::Public, Spec::Layout(Layout::RtCombSql), &public).as_deref(), Ok(rt));
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
