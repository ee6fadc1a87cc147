//! `--rekey-from COLUMN`: random v4 keys, which carry no time, become v7 keys made from the
//! row's own time column (`created_at`), so that they sort with the ids the application makes
//! next and a time range finds them through the key.
//!
//! The new key of an old one is a function of the old key and the row's time only, so a run
//! that is stopped and run again makes the very same keys:
//!
//! - its first 48 bits are the time's Unix millisecond (RFC 9562, section 5.7);
//! - its 12 `rand_a` bits are the time's fraction of that millisecond, scaled to 4,096 steps
//!   (RFC 9562, section 6.2, method 3: "Replace Leftmost Random Bits with Increased Clock
//!   Precision"), so rows of one millisecond sort by their microseconds;
//! - its last 62 bits are the old key's last 62 bits (a v4 key's random `rand_b`, after the
//!   variant), so rows of the same microsecond stay apart and keep an order.
//!
//! The old key's other 60 random bits are not in the new key: the run keeps every old and new
//! key in its key map, where an old id resolves.

use combkey::Comb;

use crate::catalog::Column;
use crate::error::Error;
use combkey::Backend;

/// A row's time as the run reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowTime {
    /// Microseconds since the Unix epoch, from 0 to now.
    At(i64),
    Null,
    Future,
    BeforeEpoch,
    Unreadable,
}

impl RowTime {
    /// The time a key-reading row carries in its last cell (the text the time expression
    /// makes), against `now_us`.
    pub(crate) fn of(cell: Option<&str>, now_us: i64) -> RowTime {
        match cell {
            None => RowTime::Null,
            Some("inf") => RowTime::Future,
            Some("-inf") => RowTime::BeforeEpoch,
            Some(t) => match t.trim().parse::<i64>() {
                Ok(us) if us < 0 => RowTime::BeforeEpoch,
                Ok(us) if us > now_us => RowTime::Future,
                Ok(us) => RowTime::At(us),
                Err(_) => RowTime::Unreadable,
            },
        }
    }

    /// The name the report gives rows of this kind.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            RowTime::At(_) => "a time",
            RowTime::Null => "NULL",
            RowTime::Future => "in the future",
            RowTime::BeforeEpoch => "before 1970",
            RowTime::Unreadable => "not a time",
        }
    }
}

/// Now, in microseconds since the Unix epoch.
pub(crate) fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// The v7 key `old` becomes for a row made at `micros` (microseconds since the Unix epoch,
/// from 0 to 2^48 ms; the caller has checked).
pub(crate) fn rekeyed(old: &Comb, micros: i64) -> Comb {
    let micros = micros.max(0);
    let ms = u64::try_from(micros / 1000).unwrap_or(0) & 0xFFFF_FFFF_FFFF;
    // The fraction of the millisecond in 4,096 steps: 0 µs -> 0, 999 µs -> 4,091.
    let [hi, lo] = u16::try_from((micros % 1000) * 4096 / 1000).unwrap_or(0).to_be_bytes();
    let old = old.into_bytes();
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    b[6] = 0x70 | hi;
    b[7] = lo;
    b[8] = 0x80 | (old[8] & 0x3f);
    b[9..].copy_from_slice(&old[9..]);
    Comb::from_bytes(b)
}

/// The SQL expression, in a `SELECT` of the key table, that gives the time column's value as
/// text: microseconds since the Unix epoch, `inf` / `-inf` for PostgreSQL's infinities, `bad`
/// for a value that is no time, `NULL` for `NULL`. Refuses a column whose type holds no time.
///
/// PostgreSQL: `timestamptz` is an instant; `timestamp` and `date` are read as UTC
/// (`extract(epoch ...)` counts them so). MySQL/MariaDB: `TIMESTAMP` is an instant
/// (`UNIX_TIMESTAMP` gives its stored UTC value, whatever the session's time zone); `DATETIME`
/// and `DATE` are read as UTC; a zero date is no time. SQLite: text any of its date functions
/// read (`2026-11-27 13:04:05.123`, with `T` or a zone), to the millisecond; numbers are not
/// read (seconds or milliseconds? the column does not say).
pub(crate) fn time_expr(backend: Backend, table: &str, column: &Column) -> Result<String, Error> {
    let t = backend.quote(&column.name);
    let ty = column.data_type.as_str();
    let unsupported = || {
        Error::usage(format!(
            "--rekey-from {}: the column {table}.{} is {ty}, which holds no time; give a timestamp column ({})",
            column.name,
            column.name,
            match backend {
                Backend::Postgres => "timestamptz, timestamp or date",
                Backend::MySql => "TIMESTAMP, DATETIME or DATE",
                _ => "date text",
            }
        ))
    };
    Ok(match backend {
        Backend::Postgres => {
            if !(ty.starts_with("timestamp") || ty == "date") {
                return Err(unsupported());
            }
            format!(
                "CASE WHEN {t} IS NULL THEN NULL WHEN NOT isfinite({t}) THEN CASE WHEN {t} > now() THEN 'inf' ELSE \
                 '-inf' END ELSE floor(extract(epoch FROM {t}) * 1000000)::bigint::text END"
            )
        }
        Backend::MySql => {
            let zero = format!("CAST({t} AS CHAR) LIKE '0000-00-00%'");
            if ty.starts_with("timestamp") {
                format!(
                    "CASE WHEN {t} IS NULL THEN NULL WHEN {zero} THEN 'bad' ELSE COALESCE(CAST(FLOOR(UNIX_TIMESTAMP({t}) \
                     * 1000000) AS CHAR), 'bad') END"
                )
            } else if ty.starts_with("datetime") || ty == "date" {
                // A date with a zero month or day (`2024-00-10`) gives NULL here: no time.
                format!(
                    "CASE WHEN {t} IS NULL THEN NULL WHEN {zero} THEN 'bad' ELSE COALESCE(CAST(TIMESTAMPDIFF(MICROSECOND, \
                     '1970-01-01 00:00:00', {t}) AS CHAR), 'bad') END"
                )
            } else {
                return Err(unsupported());
            }
        }
        // Text that starts with a real date (not `now`, not a Julian day number, not
        // `2024-02-30`, which SQLite would read as 1 March), cut to the millisecond: the
        // Julian day's double is rounded to 0.1 ms first (its error is below 0.05 ms), then cut.
        Backend::Sqlite => format!(
            "CASE WHEN {t} IS NULL THEN NULL WHEN typeof({t}) = 'text' AND {t} GLOB \
             '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' AND date(substr({t}, 1, 10)) = substr({t}, 1, 10) \
             AND julianday({t}) IS NOT NULL THEN CAST(CAST(round((julianday({t}) - 2440587.5) * 864000000.0) AS \
             INTEGER) / 10 * 1000 AS TEXT) ELSE 'bad' END"
        ),
        _ => return Err(Error::usage(format!("--rekey-from is not available on {}", backend.name()))),
    })
}

/// Whether `--rekey-from` may re-key keys of verdict `kind`: random keys, and uncertain ones
/// unless `--convert-uncertain` converts them by their layout (the row's time is surer than a
/// guess at a layout). Of those, [`rekeys`] takes the version-4 ones.
pub(crate) fn rekeys_kind(kind: crate::audit::Kind, options: &crate::options::Options) -> bool {
    use crate::audit::Kind;
    options.rekey_from.is_some()
        && match kind {
            Kind::Random => true,
            Kind::Uncertain(_) => !options.convert_uncertain,
            Kind::Layout(_) => false,
        }
}

/// Whether `--rekey-from` re-keys `id` (of verdict `kind`): a version-4 key of a kind
/// [`rekeys_kind`] takes. Never a key of another version, such as a v7 key whose time the
/// audit finds implausible (before 1995): a re-key's own result is never re-keyed.
pub(crate) fn rekeys(kind: crate::audit::Kind, id: &Comb, options: &crate::options::Options) -> bool {
    rekeys_kind(kind, options) && id.version() == 4
}

/// `, expr` for a key-reading `SELECT` of `table` under `options`: the row's time as
/// [`time_expr`] gives it (the time column found among `columns`), or nothing without
/// `--rekey-from`.
pub(crate) fn select_also(
    backend: Backend,
    table: &crate::catalog::Name,
    columns: &[Column],
    options: &crate::options::Options,
) -> Result<String, Error> {
    let Some(given) = &options.rekey_from else { return Ok(String::new()) };
    // Quoted as the database quotes names (`"Created At"`), or not.
    let name = &crate::catalog::unquote(given);
    let col = columns
        .iter()
        .find(|c| c.name == *name)
        .or_else(|| columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)))
        .ok_or_else(|| Error::usage(format!("--rekey-from {name}: no column {name} in {table}")))?;
    Ok(format!(", {}", time_expr(backend, &table.to_string(), col)?))
}

/// The columns of `columns` that `--rekey-from` can read, the likely creation times first
/// (`created_at`, `inserted_at`, `created`, ...; then the others, in the table's order).
pub(crate) fn time_columns(backend: Backend, table: &crate::catalog::Name, columns: &[Column]) -> Vec<String> {
    let table = table.to_string();
    let mut found: Vec<&Column> = columns
        .iter()
        .filter(|c| match backend {
            // SQLite keeps any value in any column: a declared date or time type says it.
            Backend::Sqlite => {
                let t = c.data_type.to_lowercase();
                t.contains("date") || t.contains("time")
            }
            _ => time_expr(backend, &table, c).is_ok(),
        })
        .collect();
    let rank = |c: &Column| {
        let n = c.name.to_lowercase().replace('_', "");
        if ["createdat", "insertedat", "created", "createdon", "creationdate", "createdate", "datecreated"]
            .contains(&n.as_str())
        {
            0
        } else if n.contains("creat") || n.contains("insert") {
            1
        } else {
            2
        }
    };
    found.sort_by_key(|c| rank(c));
    found.into_iter().map(|c| c.name.clone()).collect()
}

/// What a failed re-keying run adds to its error where the database refused a key twice (a
/// unique or primary key, or a MariaDB `NOT NULL` of a key map row): two rows that would get
/// one key.
pub(crate) fn collision_hint(options: &crate::options::Options, e: &Error) -> &'static str {
    // PostgreSQL's unique violation, MySQL/MariaDB's integrity class (duplicate entry, a NOT
    // NULL column), SQLite's unique and primary key constraints.
    if options.rekey_from.is_some() && matches!(e.code(), Some("23505" | "23000" | "2067" | "1555")) {
        "; with --rekey-from this is most likely two rows of the same microsecond (millisecond on SQLite) whose old \
         keys end in the same 62 bits, which would get the same new key: change one of the two old keys (or its time \
         by a microsecond) and run again (docs/doctor.md, \"Two rows that would get one key\")"
    } else {
        ""
    }
}

/// Rows whose time gives no key, by kind, with a few of their keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Invalid {
    pub(crate) null: usize,
    pub(crate) future: usize,
    pub(crate) before_epoch: usize,
    pub(crate) unreadable: usize,
    pub(crate) examples: Vec<String>,
    /// The keys to re-key whose row's time makes one (counted by the audit).
    pub(crate) valid: usize,
}

impl Invalid {
    pub(crate) fn add(&mut self, time: RowTime, key: impl FnOnce() -> String) {
        match time {
            RowTime::At(_) => {
                self.valid += 1;
                return;
            }
            RowTime::Null => self.null += 1,
            RowTime::Future => self.future += 1,
            RowTime::BeforeEpoch => self.before_epoch += 1,
            RowTime::Unreadable => self.unreadable += 1,
        }
        if self.examples.len() < 5 {
            self.examples.push(key());
        }
    }

    pub(crate) fn total(&self) -> usize {
        self.null + self.future + self.before_epoch + self.unreadable
    }

    /// Each kind with rows, as the report names it.
    pub(crate) fn kinds(&self) -> Vec<(RowTime, usize)> {
        [
            (RowTime::Null, self.null),
            (RowTime::Future, self.future),
            (RowTime::BeforeEpoch, self.before_epoch),
            (RowTime::Unreadable, self.unreadable),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_key_is_the_rows_time_then_the_old_keys_last_bits() {
        // A time in November 2026, to the microsecond.
        let micros = 1_795_784_645_123_456_i64;
        let old: Comb = "0f2d8c1e-7a9b-4c3d-9e8f-a1b2c3d4e5f6".parse().unwrap();
        let new = rekeyed(&old, micros);
        let s = new.to_string();
        // The millisecond, as 48 bits of hex.
        assert_eq!(&s[..8], &format!("{:012x}", 1_795_784_645_123_u64)[..8]);
        assert_eq!(&s[9..13], &format!("{:012x}", 1_795_784_645_123_u64)[8..]);
        // Version 7, then 456 µs as 456 * 4096 / 1000 = 1867 = 0x74b.
        assert_eq!(&s[14..18], "774b");
        // The variant, then the old key's last 62 bits.
        assert_eq!(&s[19..], "9e8f-a1b2c3d4e5f6");
        assert_eq!(new.version(), 7);
        assert_eq!(new.timestamp().map(|t| t.unix_ms()), Some(1_795_784_645_123));
    }

    #[test]
    fn rows_of_one_millisecond_sort_by_their_microseconds_and_runs_agree() {
        let a: Comb = "ffffffff-ffff-4fff-bfff-ffffffffffff".parse().unwrap();
        let b: Comb = "00000000-0000-4000-8000-000000000000".parse().unwrap();
        // a is made 1 µs before b: its key sorts first, whatever its random bits.
        assert!(rekeyed(&a, 1_000_000_001) < rekeyed(&b, 1_000_000_002));
        assert!(rekeyed(&a, 1_000_000_999) < rekeyed(&b, 1_000_001_000));
        assert_eq!(rekeyed(&a, 5), rekeyed(&a, 5));
        // The variant is RFC 9562's whatever the old key's was.
        let odd: Comb = "00000000-0000-4000-c000-000000000000".parse().unwrap();
        assert_eq!(rekeyed(&odd, 0).to_string(), "00000000-0000-7000-8000-000000000000");
    }

    fn column(ty: &str) -> Column {
        Column {
            name: "created_at".into(),
            data_type: ty.into(),
            nullable: true,
            default: None,
            auto_update: false,
            generated: false,
        }
    }

    #[test]
    fn a_column_that_holds_no_time_is_refused_and_each_type_is_read_its_way() {
        for (backend, ty) in
            [(Backend::Postgres, "text"), (Backend::Postgres, "bigint"), (Backend::MySql, "varchar(40)")]
        {
            let e = time_expr(backend, "orders", &column(ty)).unwrap_err();
            assert!(e.to_string().contains("holds no time"), "{e}");
        }
        let pg = time_expr(Backend::Postgres, "orders", &column("timestamp with time zone")).unwrap();
        assert!(pg.contains("extract(epoch FROM \"created_at\")") && pg.contains("isfinite"), "{pg}");
        assert!(time_expr(Backend::Postgres, "orders", &column("date")).is_ok());
        // A TIMESTAMP is an instant whatever the session's zone; a DATETIME is read as UTC.
        let ts = time_expr(Backend::MySql, "orders", &column("timestamp(6)")).unwrap();
        assert!(ts.contains("UNIX_TIMESTAMP(`created_at`)"), "{ts}");
        let dt = time_expr(Backend::MySql, "orders", &column("datetime(6)")).unwrap();
        assert!(dt.contains("TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', `created_at`)"), "{dt}");
        let lite = time_expr(Backend::Sqlite, "orders", &column("")).unwrap();
        assert!(lite.contains("typeof(\"created_at\") = 'text'"), "{lite}");
    }

    #[test]
    fn a_rows_time_is_read_from_the_expressions_text() {
        let now = 2_000_000_000_000_000;
        assert_eq!(RowTime::of(None, now), RowTime::Null);
        assert_eq!(RowTime::of(Some("inf"), now), RowTime::Future);
        assert_eq!(RowTime::of(Some("-inf"), now), RowTime::BeforeEpoch);
        assert_eq!(RowTime::of(Some("bad"), now), RowTime::Unreadable);
        assert_eq!(RowTime::of(Some("-1"), now), RowTime::BeforeEpoch);
        assert_eq!(RowTime::of(Some("0"), now), RowTime::At(0));
        assert_eq!(RowTime::of(Some("2000000000000001"), now), RowTime::Future);
        assert_eq!(RowTime::of(Some("1795784645123456"), now), RowTime::At(1_795_784_645_123_456));
    }
}
