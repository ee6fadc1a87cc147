//! The conversions MySQL/MariaDB computes itself, in the write-through triggers and the
//! rounds, for keys the mapping table does not hold: keys the application writes during a
//! copy and swap (MariaDB's `UUID()`, a version 1 key, the usual one). Converted as they are
//! written, they need no conversion in place after the swap, whose batches deadlocked the
//! application's transactions (MySQL error 1213) under load.
//!
//! A layout is converted by the server only where combkey would convert its keys the same
//! way: the run asks combkey (`Source::pairs`, the plan's own classification) what probe keys
//! of the layout become, and uses the server's expression only if each is the layout's v7 form
//! (`KeyMigration`, RFC 9562 section 5.7 and combkey's `sorted` table: the millisecond, the
//! 100-ns ticks within it, the clock sequence, the node without its first octet's two flag
//! bits). Before the swap, every key converted so is checked against combkey's conversion of
//! it (`mysql::verify`); a key the server leaves as it is and combkey converts (another layout)
//! is still converted in place after the swap.

use combkey::Comb;
use combkey::layouts::{KeyMigration, Layout};

use crate::catalog::Stored;
use crate::keys::Source;
use crate::plan::Plan;

/// 100-ns ticks from 1582-10-15 (v1's epoch) to 1970-01-01.
const GREGORIAN_TO_UNIX_100NS: i64 = 0x01B2_1DD2_1381_4000;
/// The earliest time the audit reads as a key's (1995-01-01, `audit::EARLIEST_MS`).
const EARLIEST_MS: i64 = 788_918_400_000;
/// How far past now a key's time may be and still be read as one (`audit::DAY_MS`).
const DAY_MS: i64 = 86_400_000;

/// What the server's conversion reads and writes: 16 bytes or text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Form {
    #[default]
    Bytes,
    /// 32 hex digits, lowercase (what combkey writes in a column of 32 characters).
    Simple,
    /// Hyphenated, lowercase.
    Hyphenated,
}

/// The layouts the server converts for a plan (none where combkey would convert them
/// otherwise, or keep them), and the forms it reads and writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ServerKeys {
    layouts: Vec<Layout>,
    /// The key column's values as the application writes them are text (a text column that
    /// becomes `BINARY(16)`, or stays text with `--keep-type`).
    text_in: bool,
    /// The values the copy holds.
    out: Form,
}

impl ServerKeys {
    /// What the server converts for `plan`: the layouts of the v1 family it can compute that
    /// the plan converts, whose probe keys combkey converts to their v7 form.
    pub(super) fn of(plan: &Plan) -> ServerKeys {
        let ty = plan.final_type.to_ascii_lowercase();
        let out = if plan.options.keep_type {
            match ty.as_str() {
                "char(32)" | "varchar(32)" => Some(Form::Simple),
                "char(36)" | "varchar(36)" => Some(Form::Hyphenated),
                _ => None,
            }
        } else {
            (ty == "binary(16)").then_some(Form::Bytes)
        };
        let source = Source::of(plan);
        // The server's conversion is of the key alone: a source whose new keys depend on the
        // row as well has none.
        let Some(out) = out.filter(|_| {
            plan.key_map.is_some() && source.row_dependence().is_none() && plan.classifier.reads_nibble_as_is()
        }) else {
            return ServerKeys::default();
        };
        let layouts = [Layout::V1, Layout::V6]
            .into_iter()
            .filter(|&layout| {
                let Ok(migration) = KeyMigration::new(layout, Layout::V7) else { return false };
                let probes = probes(layout);
                plan.converted.contains_key(&migration.to_string())
                    && !probes.is_empty()
                    && probes.iter().all(|id| {
                        let Ok(new_id) = migration.convert(id) else { return false };
                        let Ok(expected) = crate::keys::stored_in(plan, new_id) else { return false };
                        let pairs = source.pairs(&[Stored::Bytes(id.as_bytes().to_vec())]).unwrap_or_default();
                        pairs.first().is_some_and(|(_, new)| *new == expected)
                    })
            })
            .collect();
        ServerKeys { layouts, text_in: plan.retypes() || plan.options.keep_type, out }
    }

    /// Whether the server converts any key.
    pub(super) fn any(&self) -> bool {
        !self.layouts.is_empty()
    }

    /// The SQL expression of `value` (a key column's value as the application writes it)
    /// converted: its v7 form where it is a key of a layout the server converts, of a time the
    /// audit reads as one (1995 to a day from now), else `same` (the same id in the copy's
    /// form). `value` is repeated: give a column, a variable or a literal.
    pub(super) fn expr(&self, value: &str, same: &str) -> String {
        self.conversion(self.text_in, value, same)
    }

    /// [`ServerKeys::expr`] of a value already in the copy's form (a noted key).
    pub(super) fn expr_final(&self, value: &str) -> String {
        self.conversion(self.out != Form::Bytes, value, value)
    }

    fn conversion(&self, text_in: bool, value: &str, same: &str) -> String {
        if self.layouts.is_empty() {
            return same.to_string();
        }
        // The 32 hex digits, uppercase (text read as combkey reads it: braces, `urn:uuid:`
        // and hyphens taken out).
        let h = if text_in {
            format!(
                "UPPER(REPLACE(REPLACE(REPLACE(REPLACE(LOWER({value}), 'urn:uuid:', ''), '{{', ''), '}}', ''), '-', ''))"
            )
        } else {
            format!("HEX({value})")
        };
        let arms: Vec<String> = self
            .layouts
            .iter()
            .filter_map(|&l| arm(l, &h))
            .map(|(when, v7)| {
                let out = match self.out {
                    Form::Bytes => format!("UNHEX({v7})"),
                    Form::Simple => format!("LOWER({v7})"),
                    Form::Hyphenated => {
                        format!(
                            "LOWER(INSERT(INSERT(INSERT(INSERT({v7}, 21, 0, '-'), 17, 0, '-'), 13, 0, '-'), 9, 0, '-'))"
                        )
                    }
                };
                format!("WHEN {when} THEN {out}")
            })
            .collect();
        format!("CASE {} ELSE {same} END", arms.join(" "))
    }
}

/// Keys of `layout` made now, with clock sequences and nodes of every bit pattern.
fn probes(layout: Layout) -> Vec<Comb> {
    let Ok(base) = layout.generate() else { return Vec::new() };
    [[0x00u8; 8], [0xff; 8], [0xa5; 8], [0x5a; 8], [0x3c, 0xc3, 0x0f, 0xf0, 0x81, 0x18, 0x7e, 0xe7]]
        .iter()
        .map(|tail| {
            let mut b = base.into_bytes();
            b[8] = 0x80 | (tail[0] & 0x3f);
            b[9..16].copy_from_slice(&tail[1..8]);
            // The node's first octet from every pattern (its two flag bits are dropped).
            b[10] = tail[0];
            Comb::from_bytes(b)
        })
        .collect()
}

/// When the key whose hex digits are `h` (32, uppercase) is a key of `layout` (its version
/// nibble, the RFC variant, a time from 1995 to a day from now), and the hex digits of its v7
/// form then: the millisecond (48 bits), then 40 bits of version 7, the ticks within the
/// millisecond (12, the variant, 2 more), the clock sequence (14) and the node's first octet without
/// its two flag bits (6), then the node's other five octets.
fn arm(layout: Layout, h: &str) -> Option<(String, String)> {
    // The 60 bits of 100-ns ticks since 1582 (v1: time_hi, time_mid, time_low; v6: in that
    // order already).
    let (version, ticks) = match layout {
        Layout::V1 => ('1', format!("CONCAT(SUBSTR({h}, 14, 3), SUBSTR({h}, 9, 4), SUBSTR({h}, 1, 8))")),
        Layout::V6 => ('6', format!("CONCAT(SUBSTR({h}, 1, 8), SUBSTR({h}, 9, 4), SUBSTR({h}, 14, 3))")),
        _ => return None,
    };
    // Since 1970 (signed: a time before 1970 stays negative, never an unsigned overflow).
    let unix = format!("(CAST(CONV({ticks}, 16, 10) AS SIGNED) - {GREGORIAN_TO_UNIX_100NS})");
    let seq = format!("(CAST(CONV(SUBSTR({h}, 17, 4), 16, 10) AS UNSIGNED) & 16383)");
    let node0 = format!("CAST(CONV(SUBSTR({h}, 21, 2), 16, 10) AS UNSIGNED)");
    let sub = format!("({unix} MOD 10000)");
    let middle =
        format!("((7 << 36) | (({sub} >> 2) << 24) | (2 << 22) | (({sub} & 3) << 20) | ({seq} << 6) | ({node0} >> 2))");
    let v7 = format!("CONCAT(LPAD(HEX({unix} DIV 10000), 12, '0'), LPAD(HEX({middle}), 10, '0'), SUBSTR({h}, 23, 10))");
    Some((
        format!(
            "{h} REGEXP '^[0-9A-F]{{12}}{version}[0-9A-F]{{3}}[89AB][0-9A-F]{{15}}$' AND {unix} BETWEEN {} AND \
             (UNIX_TIMESTAMP() * 1000 + {DAY_MS}) * 10000 + 9999",
            EARLIEST_MS * 10_000
        ),
        v7,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection as _;

    /// A v1 key of Unix millisecond `ms`, `sub` ticks after it, and `rest` for the clock
    /// sequence and node (its variant bits as given).
    fn v1(ms: i64, sub: i64, rest: [u8; 8]) -> Comb {
        let ticks = u64::try_from(ms * 10_000 + sub + GREGORIAN_TO_UNIX_100NS).unwrap_or(0);
        let mut b = [0u8; 16];
        b[..4].copy_from_slice(&u32::try_from(ticks & 0xffff_ffff).unwrap_or(0).to_be_bytes());
        b[4..6].copy_from_slice(&u16::try_from((ticks >> 32) & 0xffff).unwrap_or(0).to_be_bytes());
        b[6..8].copy_from_slice(&(u16::try_from((ticks >> 48) & 0x0fff).unwrap_or(0) | 0x1000).to_be_bytes());
        b[8..].copy_from_slice(&rest);
        Comb::from_bytes(b)
    }

    /// The server's conversion of keys of every kind, against combkey's (`KeyMigration`): the
    /// v7 form for v1 and v6 keys of the RFC variant and a time from 1995 to a day from now,
    /// the key itself for every other.
    #[tokio::test]
    async fn the_servers_conversion_is_combkeys() {
        let Ok(url) = std::env::var("COMBKEY_MYSQL_URL") else {
            eprintln!("skipped: COMBKEY_MYSQL_URL is not set");
            return;
        };
        let mut db = sqlx::MySqlConnection::connect(&url).await.expect("the server");
        sqlx::raw_sql(
            "CREATE TEMPORARY TABLE combkey_server_keys_probe (n INT PRIMARY KEY, x VARBINARY(20), t VARCHAR(60))",
        )
        .execute(&mut db)
        .await
        .expect("a temporary table");
        let now = combkey::Timestamp::now().unix_ms();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for i in 0..3000u64 {
            // Times from 1985 to three days from now, and the edges: 1995's first millisecond
            // and the one before it, a minute within a day from now, two days from now.
            let span = now + 3 * DAY_MS - 473_385_600_000;
            let ms = match i % 10 {
                0 => EARLIEST_MS - i64::from(i % 20 == 0),
                1 => now + DAY_MS - 60_000,
                2 => now + 2 * DAY_MS,
                _ => 473_385_600_000 + i64::try_from(next() % u64::try_from(span).unwrap_or(1)).unwrap_or(0),
            };
            let sub = i64::try_from(next() % 10_000).unwrap_or(0);
            let mut rest = next().to_be_bytes();
            // Mostly the RFC variant; some of the others.
            if i % 7 != 0 {
                rest[0] = 0x80 | (rest[0] & 0x3f);
            }
            let id = v1(ms, sub, rest);
            let id = match i % 5 {
                0 => Layout::convert(&id, Layout::V1, Layout::V6).unwrap_or(id),
                // Another version where v1's goes.
                1 if i % 3 == 0 => {
                    let mut b = id.into_bytes();
                    b[6] = 0x40 | (b[6] & 0x0f);
                    Comb::from_bytes(b)
                }
                _ => id,
            };
            keys.push(id.as_bytes().to_vec());
        }
        // And values that are no key: too short, empty.
        keys.push(vec![0x11; 15]);
        keys.push(Vec::new());
        // Each key also as text the application may write: hyphenated or not, either case, in
        // braces or as a URN.
        let text = |i: usize, k: &[u8]| -> String {
            let Ok(b) = <[u8; 16]>::try_from(k) else { return "not a key".into() };
            let id = Comb::from_bytes(b);
            match i % 4 {
                0 => id.to_string(),
                1 => id.simple().to_string().to_uppercase(),
                2 => format!("{{{}}}", id.to_string().to_uppercase()),
                _ => format!("urn:uuid:{id}"),
            }
        };
        for (i, chunk) in keys.chunks(500).enumerate() {
            let values: Vec<String> = chunk
                .iter()
                .enumerate()
                .map(|(j, k)| {
                    let n = i * 500 + j;
                    format!("({n}, X'{}', {})", crate::catalog::hex(k), crate::catalog::string_literal(&text(n, k)))
                })
                .collect();
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "INSERT INTO combkey_server_keys_probe VALUES {}",
                values.join(", ")
            )))
            .execute(&mut db)
            .await
            .expect("the keys");
        }
        let layouts = vec![Layout::V1, Layout::V6];
        let of = |text_in, out| ServerKeys { layouts: layouts.clone(), text_in, out };
        type Converted = (i32, Option<String>, Option<String>, Option<String>, Option<String>);
        let rows: Vec<Converted> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT n, CAST(HEX({}) AS CHAR), CAST(HEX({}) AS CHAR), CAST({} AS CHAR), CAST({} AS CHAR) \
                 FROM combkey_server_keys_probe ORDER BY n",
            of(false, Form::Bytes).expr("x", "x"),
            of(true, Form::Bytes).expr("t", "x"),
            of(true, Form::Hyphenated).expr("t", "t"),
            of(true, Form::Simple).expr("t", "t"),
        )))
        .fetch_all(&mut db)
        .await
        .expect("the conversions");
        assert_eq!(rows.len(), keys.len());
        let mut converted = 0;
        for (n, ((_, bytes, from_text, hyphenated, simple), key)) in rows.iter().zip(&keys).enumerate() {
            let new = <[u8; 16]>::try_from(key.as_slice()).ok().map(Comb::from_bytes).and_then(|id| {
                let layout = Layout::detect(&id).filter(|l| matches!(l, Layout::V1 | Layout::V6))?;
                let t = layout.timestamp(&id).ok().flatten()?.unix_ms();
                (id.is_rfc_variant() && (EARLIEST_MS..=now + DAY_MS).contains(&t))
                    .then(|| KeyMigration::new(layout, Layout::V7).and_then(|m| m.convert(&id)).expect("a v7 form"))
            });
            converted += usize::from(new.is_some());
            let hex = crate::catalog::hex(new.as_ref().map_or(key.as_slice(), |c| c.as_bytes()));
            let shown = crate::catalog::hex(key);
            assert_eq!(bytes.as_deref(), Some(hex.as_str()), "the key {shown}");
            assert_eq!(from_text.as_deref(), Some(hex.as_str()), "the key {shown} as text {}", text(n, key));
            let same = text(n, key);
            assert_eq!(hyphenated.clone(), Some(new.map_or(same.clone(), |c| c.to_string())), "the key {shown}");
            assert_eq!(simple.clone(), Some(new.map_or(same, |c| c.simple().to_string())), "the key {shown}");
        }
        assert!(converted > 1500, "most of the keys convert ({converted})");
    }
}
