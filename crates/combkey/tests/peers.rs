//! What the real implementations produce, committed as data: RT.Comb (C#, under Mono),
//! uuid-creator and Groupon's locality-uuid (Java), each driven with fixed inputs. Every file
//! in `tests/peers/` starts with comment lines naming the peer's version and the commands that
//! made it; the peers' code and the drivers are not part of this repository.
//!
//! Each row is checked against combkey byte for byte. Where combkey refuses an input a peer
//! accepts (RT.Comb writes a time before 1970 or past 2^48 ms as its low 48 bits, wrapping),
//! the test checks that combkey says so with an error rather than writing another id.

use std::path::PathBuf;

use combkey::layouts::{Layout, LocalityFields, RtCombLayout, V1Generator, variable_bytes};
use combkey::{Comb, FixedClock, SeededRandom, ShortPrefix, Timestamp, V7Generator};

/// The rows of `tests/peers/{name}`, split on tabs, comment lines dropped.
fn rows(name: &str) -> Vec<Vec<String>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    assert!(rows.len() > 100, "{name}: only {} rows", rows.len());
    rows
}

fn id(s: &str) -> Comb {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn ms(s: &str) -> i64 {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// The time to the nearest millisecond from 100-ns ticks since 1970 (RT.Comb's legacy layout
/// holds 1/300 s, which is a third or two thirds of a millisecond off a whole one).
fn nearest_ms(ticks: &str) -> i64 {
    let t: i64 = ticks.parse().unwrap_or_else(|e| panic!("{ticks}: {e}"));
    (t + 5_000).div_euclid(10_000)
}

#[test]
fn rtcomb_create_and_get_timestamp() {
    /// 1900-01-01T00:00:00Z, SQL Server's `datetime` epoch, in Unix milliseconds.
    const SQL_EPOCH_MS: i64 = -2_208_988_800_000;
    let mut checked = [0usize; 3];
    let mut refused = 0;
    for r in rows("rtcomb.tsv") {
        let [provider, base, unix_ms, created, _read_ms, read_ticks] = &r[..] else {
            panic!("rtcomb.tsv: bad row {r:?}");
        };
        let (layout, n) = match provider.as_str() {
            "sql" => (RtCombLayout::Sql, 0),
            "postgresql" => (RtCombLayout::PostgreSql, 1),
            "legacy" => (RtCombLayout::Legacy, 2),
            other => panic!("unknown provider {other}"),
        };
        checked[n] += 1;
        let t = Timestamp::from_unix_ms(ms(unix_ms));
        let ours = layout.create(t, id(base));
        if created.starts_with("error:") {
            assert!(ours.is_err(), "{provider} {base} {unix_ms}: RT.Comb threw, we made {ours:?}");
            continue;
        }
        let theirs = id(created);
        let in_range = match layout {
            // 1900-01-01 plus at most 65,535 days: the 16-bit day count.
            RtCombLayout::Legacy => (SQL_EPOCH_MS..SQL_EPOCH_MS + 65_536 * 86_400_000).contains(&t.unix_ms()),
            _ => (0..1 << 48).contains(&t.unix_ms()),
        };
        if !in_range {
            // RT.Comb wraps such a time (to its low 48 bits; a day count cast to `ushort`)
            // without an error; we refuse rather than write a key that sorts and reads back
            // as another time.
            let e = ours.expect_err("a time the layout cannot hold must be refused");
            assert_eq!(e.kind(), combkey::ErrorKind::OutOfRange, "{provider} {unix_ms}: {e}");
            refused += 1;
            continue;
        }
        assert_eq!(ours, Ok(theirs), "{provider} create({base}, {unix_ms})");
        let read = layout.timestamp(&theirs).unwrap_or_else(|e| panic!("{created}: {e}"));
        assert_eq!(read.unix_ms(), nearest_ms(read_ticks), "{provider} GetTimestamp({created})");
    }
    assert!(checked.iter().all(|&n| n > 100), "{checked:?}");
    assert!(refused > 10, "the edges outside each layout's range: {refused}");
}

#[test]
fn uuid_creator_combs_conversions_and_times() {
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    let short = ShortPrefix::default().labelled_v4();
    for r in rows("uuid-creator.tsv") {
        let [kind, input, output] = &r[..] else { panic!("uuid-creator.tsv: bad row {r:?}") };
        *kinds.entry(kind.trim_end_matches("-testsuite").to_string()).or_default() += 1;
        let what = format!("{kind} {input} -> {output}");
        if output.starts_with("error:") && !kind.starts_with("v1-to") && !kind.starts_with("v6-to") {
            let ok = match kind.trim_end_matches("-testsuite") {
                "v1-time" => Layout::V1.gregorian_ticks(&id(input)).is_err(),
                other => panic!("{other}: no error expected: {what}"),
            };
            assert!(ok, "{what}: uuid-creator refused, we did not");
            continue;
        }
        let out = if output.starts_with("error:") || kind.starts_with("v1-time") { Comb::NIL } else { id(output) };
        match kind.trim_end_matches("-testsuite") {
            "prefix-comb" | "suffix-comb" => {
                let (layout, rt) = if kind.starts_with("prefix") {
                    (Layout::UcPrefix, RtCombLayout::PostgreSql)
                } else {
                    (Layout::UcSuffix, RtCombLayout::Sql)
                };
                let t = Timestamp::from_unix_ms(ms(input));
                if !(0..1 << 48).contains(&ms(input)) {
                    // uuid-creator writes the low 48 bits of any time; we refuse.
                    assert!(rt.create(t, out).is_err(), "{what}");
                    continue;
                }
                assert_eq!(layout.check(&out), Ok(()), "{what}");
                assert_eq!(layout.timestamp(&out), Ok(Some(t)), "{what}");
                // Writing the time into their id changes nothing: the same 48 bits, same place.
                assert_eq!(rt.create(t, out), Ok(out), "{what}");
            }
            "short-prefix-comb" | "short-suffix-comb" => {
                let t = Timestamp::from_unix_ms(ms(input));
                let hub = if kind.starts_with("short-prefix") {
                    out
                } else {
                    Layout::convert(&out, Layout::UcShortSuffix, Layout::UcShortPrefix).expect(&what)
                };
                let m = ms(input);
                if m < 0 && m % 60_000 != 0 {
                    // Before 1970 Java's division truncates toward zero (-1 ms is interval 0);
                    // ours floors, so every interval is one minute long across 1970 too.
                    assert_eq!(short.prefix_at(t), (short.prefix_of(&hub) + 0xffff) & 0xffff, "{what}");
                    continue;
                }
                assert_eq!(short.make(t, hub.into_bytes()), hub, "{what}");
                assert_eq!(short.prefix_of(&hub), short.prefix_at(t), "{what}");
            }
            "v1-to-v6" | "v6-to-v1" => {
                let (from, to) =
                    if kind.starts_with("v1") { (Layout::V1, Layout::V6) } else { (Layout::V6, Layout::V1) };
                let ours = Layout::convert(&id(input), from, to);
                if output.starts_with("error:") {
                    // uuid-creator refuses another version or variant: so do we.
                    assert!(ours.is_err(), "{what}: we made {ours:?}");
                } else {
                    assert_eq!(ours, Ok(id(output)), "{what}");
                }
            }
            "v1-time" if id(input).version() == 2 => {
                // uuid-creator reads a time out of a DCE security (version 2) id as well; it
                // is not a v1 id, and we say so.
                assert!(Layout::V1.gregorian_ticks(&id(input)).is_err(), "{what}");
            }
            "v1-time" => {
                let ticks: u64 = output.parse().expect(&what);
                assert_eq!(Layout::V1.gregorian_ticks(&id(input)), Ok(ticks), "{what}");
            }
            "v1-at" => {
                // The factory's clock reads whole milliseconds; the ticks below one are its own.
                let since_1582 = ms(input) + 12_219_292_800_000;
                if since_1582 < 0 {
                    // uuid-creator wraps a time before 1582 modulo 2^60; our generator stamps
                    // the first tick instead.
                    let g = V1Generator::with_clock_and_random(
                        FixedClock::new(Timestamp::from_unix_ms(ms(input))),
                        SeededRandom::new(1),
                    );
                    assert_eq!(Layout::V1.gregorian_ticks(&g.generate()), Ok(0), "{what}");
                    assert_ne!(Layout::V1.gregorian_ticks(&out), Ok(0), "{what}");
                    continue;
                }
                if since_1582.saturating_mul(10_000) >= 1 << 60 {
                    // Past 2^60 ticks (the year 5236) uuid-creator wraps too; we stamp the last.
                    let g = V1Generator::with_clock_and_random(
                        FixedClock::new(Timestamp::from_unix_ms(ms(input))),
                        SeededRandom::new(1),
                    );
                    assert_eq!(Layout::V1.gregorian_ticks(&g.generate()), Ok((1 << 60) - 1), "{what}");
                    continue;
                }
                let ticks = Layout::V1.gregorian_ticks(&out).expect(&what);
                assert_eq!(i64::try_from(ticks / 10_000), Ok(since_1582), "{what}");
                assert_eq!(Layout::V1.timestamp(&out).map(|t| t.map(|t| t.unix_ms())), Ok(Some(ms(input))), "{what}");
            }
            "v7-at" => {
                if !(0..1 << 48).contains(&ms(input)) {
                    // uuid-creator writes the low 48 bits of any time; our generator clamps to
                    // the range a v7 id holds, so order is kept.
                    let g = V7Generator::with_clock_and_random(
                        FixedClock::new(Timestamp::from_unix_ms(ms(input))),
                        SeededRandom::new(1),
                    );
                    let clamped = ms(input).clamp(0, (1 << 48) - 1);
                    assert_eq!(g.generate().timestamp().map(|t| t.unix_ms()), Some(clamped), "{what}");
                    continue;
                }
                assert_eq!(Layout::V7.check(&out), Ok(()), "{what}");
                assert_eq!(Layout::V7.timestamp(&out).map(|t| t.map(|t| t.unix_ms())), Ok(Some(ms(input))), "{what}");
            }
            other => panic!("unknown kind {other}"),
        }
    }
    for k in ["prefix-comb", "suffix-comb", "short-prefix-comb", "short-suffix-comb", "v1-to-v6", "v6-to-v1", "v7-at"] {
        assert!(kinds.get(k).copied().unwrap_or(0) > 10, "too few {k}: {kinds:?}");
    }
}

#[test]
fn groupon_counter_bytes_in_both_modes() {
    let (mut variable, mut lost) = (0, 0);
    for r in rows("groupon.tsv") {
        let [mode, count, first] = &r[..] else { panic!("groupon.tsv: bad row {r:?}") };
        let c = u32::from_str_radix(count, 16).unwrap_or_else(|e| panic!("{count}: {e}"));
        let bytes = match mode.as_str() {
            "variable" => variable_bytes(c),
            "sequential" => c.to_be_bytes(),
            other => panic!("unknown mode {other}"),
        };
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(&hex, first, "{mode} count {count}");
        if mode == "variable" {
            variable += 1;
            let f = LocalityFields::parse(&id(&format!("{first}-7a7f-bd53-7a50-013e4e2afbde"))).expect(first);
            assert_eq!(f.counter_lost_bits, c >> 31 == 1, "{count}");
            if f.counter_lost_bits {
                lost += 1;
                assert_eq!(f.counter | 0x0f00_0000, c | 0x0f00_0000, "{count}");
            } else {
                assert_eq!(f.counter, c, "{count}");
            }
        } else {
            assert_eq!(
                LocalityFields::parse(&id(&format!("{first}-7a7f-bd53-7a50-013e4e2afbde")))
                    .map(|f| f.counter_sequential),
                Ok(c)
            );
        }
    }
    // About half of all counts have bit 31 set.
    assert!(variable > 1000 && lost > variable / 3 && lost < variable * 2 / 3, "{lost} of {variable}");
}
