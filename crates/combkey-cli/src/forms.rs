//! Text forms of an id, durations, and JSON strings.

use std::time::Duration;

use combkey::layouts::Layout;
use combkey::{Backend, Comb};

/// How an id is written: the public id, or the stored value as a database shows it (a view
/// over [`Backend`]: `sqlserver`, `mysql`, `postgres`, `sqlite` and their aliases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The public id: lowercase hyphenated (PostgreSQL shows this for a `uuid` column).
    Canonical,
    /// The stored value as the database's own client shows it ([`Backend::stored_text`]):
    /// SQL Server's uppercase `uniqueidentifier`, the 32 hex digits of MySQL's `HEX(id)`.
    Stored(Backend),
}

impl Form {
    /// Parses `canonical` or a database name.
    pub fn parse_name(s: &str) -> Result<Form, combkey::Error> {
        if s == "canonical" { Ok(Form::Canonical) } else { s.parse().map(Form::Stored) }
    }

    /// The id written in this form.
    pub fn format(self, id: Comb) -> String {
        match self {
            Form::Canonical => id.to_string(),
            Form::Stored(backend) => backend.stored_text(id),
        }
    }

    /// The public id of text in this form (any accepted UUID text; any case).
    pub fn parse(self, text: &str) -> Result<Comb, combkey::Error> {
        match self {
            Form::Canonical => text.parse(),
            Form::Stored(backend) => backend.parse_stored(text),
        }
    }
}

/// `--storage`'s parser: `canonical` or a database name.
pub fn parse_form(s: &str) -> Result<Form, String> {
    Form::parse_name(s)
        .map_err(|_| format!("unknown form {s:?}: expected canonical, sqlserver, mysql, postgres or sqlite"))
}

/// What `convert --from/--to` take: a text form of the public id, or a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    /// A form of the public (v7) id: `canonical`, `sqlserver`, `mysql`.
    Form(Form),
    /// A layout (`v7`, `rtcomb-sql`, `mysql-swap`, ...), written canonically.
    Layout(Layout),
}

impl Spec {
    /// Parses a form name or a layout name.
    pub fn parse(s: &str) -> Result<Spec, String> {
        if let Ok(form) = Form::parse_name(s) {
            return Ok(Spec::Form(form));
        }
        s.parse::<Layout>().map(Spec::Layout).map_err(|_| {
            format!(
                "unknown form or kind {s:?}: expected canonical, sqlserver, mysql or a kind ({})",
                Layout::ALL.map(Layout::name).join(", ")
            )
        })
    }

    /// Converts `text` from `from` to `to`. Between two forms the id is only re-written; a
    /// form on one side and a kind on the other means the public id, kind v7.
    pub fn convert(from: Spec, to: Spec, text: &str) -> Result<String, combkey::Error> {
        let (id, kind) = match from {
            Spec::Form(f) => (f.parse(text)?, None),
            Spec::Layout(k) => (text.parse()?, Some(k)),
        };
        match to {
            Spec::Form(f) => {
                let public = match kind {
                    Some(k) => Layout::convert(&id, k, Layout::V7)?,
                    None => id,
                };
                Ok(f.format(public))
            }
            Spec::Layout(k) => Ok(Layout::convert(&id, kind.unwrap_or(Layout::V7), k)?.to_string()),
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
    fn forms_round_trip() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        let sqlserver = Form::Stored(Backend::SqlServer);
        let mysql = Form::Stored(Backend::MySql);
        assert_eq!(sqlserver.format(id), "8F39070C-0CDC-C498-7CC3-017F22E279B0");
        assert_eq!(mysql.format(id), "017F22E279B07CC398C4DC0C0C07398F");
        for f in [Form::Canonical, sqlserver, mysql] {
            assert_eq!(f.parse(&f.format(id)), Ok(id));
        }
    }

    #[test]
    fn specs() {
        assert_eq!(Spec::parse("mysql"), Ok(Spec::Form(Form::Stored(Backend::MySql))));
        assert_eq!(Spec::parse("sqlserver"), Ok(Spec::Form(Form::Stored(Backend::SqlServer))));
        assert_eq!(Spec::parse("lambert-v13"), Ok(Spec::Layout(Layout::LambertV13)));
        assert!(Spec::parse("bogus").unwrap_err().contains("rtcomb-sql"));
        let nsid = "B9586BD7-2062-E111-B36C-CC52AFC9F2ED";
        let v1 = Spec::convert(Spec::Layout(Layout::NewSequentialId), Spec::Layout(Layout::V1), nsid);
        assert_eq!(v1.as_deref(), Ok("d76b58b9-6220-11e1-b36c-cc52afc9f2ed"));
        let rt = "d01c25cc-63a7-47cc-b5ba-018e5f3bff48";
        let public = Spec::convert(Spec::Layout(Layout::RtCombSql), Spec::Form(Form::Canonical), rt).unwrap();
        assert_eq!(
            Spec::convert(Spec::Form(Form::Canonical), Spec::Layout(Layout::RtCombSql), &public).as_deref(),
            Ok(rt)
        );
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
