//! What the real implementations produce, committed as data: RT.Comb (C#, under Mono),
//! uuid-creator and Groupon's locality-uuid (Java), each driven with fixed inputs. Every file
//! in `tests/peers/` starts with comment lines naming the peer's version and the commands that
//! made it; the peers' code and the drivers are not part of this repository.
//!
//! What each row checks:
//!
//! - RT.Comb: the id `Create` made, byte for byte, and the time `GetTimestamp` reads back
//!   (Legacy's to the nearest millisecond, see `RtCombLayout::timestamp`).
//! - Groupon: the counter's bytes in both modes, byte for byte, and what `LocalityFields`
//!   reads back from them.
//! - The .NET generators that fill SQL Server tables (EF Core, NewId, UUIDNext, Medo.Uuid7):
//!   each id rebuilt byte for byte from the row's inputs (NewId's, UUIDNext's and Medo's
//!   sequences replayed by their generators' rules), read back to its fields, its time to the
//!   100-ns tick against the library's own read-back, and converted to v7 with the same
//!   millisecond (and back where every bit is kept).
//! - uuid-creator: v1 <-> v6 conversions byte for byte and v1 times to the tick. Its COMBs and
//!   its v1 and v7 ids carry random bits no fixed input can set, so for those the row checks
//!   what the input fixes: the time's bits in their place (writing our time into their id
//!   changes no byte), the time read back (v1: to the millisecond its clock gives; the ticks
//!   below one are the factory's own), the short COMBs' 16-bit prefix.
//!
//! Where combkey refuses an input a peer accepts (RT.Comb and uuid-creator write a time before
//! 1970 or past 2^48 ms as its low 48 bits, wrapping), the row checks that combkey says so
//! with an error rather than writing another id; where a generator of ours clamps such a time
//! instead (v7, v1), that it stamps the nearest time its layout holds.

use std::path::PathBuf;

use combkey::layouts::{
    DOTNET_TICKS_AT_UNIX_EPOCH, DotNetFields, KeyMigration, Layout, LocalityFields, RtCombLayout, V1Generator,
    variable_bytes,
};
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
            assert!(f.could_be_variable_mode(), "{count}: Groupon wrote {first} in variable mode");
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

/// 100-ns ticks from 1582-10-15 to 1970-01-01 (RFC 9562; CPython's and uuid6's constant).
const GREGORIAN_OFFSET: i128 = 0x01B2_1DD2_1381_4000;

#[test]
fn python_uuid1_uuid6_and_uuid7() {
    let (mut v1, mut v1_in_range, mut v7, mut v7_in_range) = (0, 0, 0, 0);
    for r in rows("python.tsv") {
        let ns: i128 = r[1].parse().unwrap_or_else(|e| panic!("{r:?}: {e}"));
        match (r[0].as_str(), &r[2..]) {
            ("v1", [node, seq, u1, u6_converted, u6_made]) => {
                v1 += 1;
                let what = format!("v1 at {ns} ns, node {node}, clock_seq {seq}");
                let (u1, u6_converted, u6_made) = (id(u1), id(u6_converted), id(u6_made));
                // The conversions are byte moves: byte for byte whatever the time, also where
                // CPython and uuid6 wrapped a time outside the 60-bit range.
                assert_eq!(Layout::convert(&u1, Layout::V1, Layout::V6), Ok(u6_converted), "{what}: uuid1_to_uuid6");
                assert_eq!(Layout::convert(&u6_converted, Layout::V6, Layout::V1), Ok(u1), "{what}: back to v1");
                // uuid6.uuid6 made from the same clock, node and sequence: CPython's v1, as we move it.
                assert_eq!(Layout::convert(&u1, Layout::V1, Layout::V6), Ok(u6_made), "{what}: uuid6.uuid6");
                let ticks = ns.div_euclid(100) + GREGORIAN_OFFSET;
                if !(0..1 << 60).contains(&ticks) {
                    continue;
                }
                v1_in_range += 1;
                let ticks = u64::try_from(ticks).expect("in range");
                assert_eq!(Layout::V1.gregorian_ticks(&u1), Ok(ticks), "{what}");
                assert_eq!(Layout::V6.gregorian_ticks(&u6_made), Ok(ticks), "{what}");
                let ms = i64::try_from(ns.div_euclid(1_000_000)).expect("in range");
                assert_eq!(Layout::V1.timestamp(&u1).map(|t| t.map(|t| t.unix_ms())), Ok(Some(ms)), "{what}");
                assert_eq!(Layout::V6.timestamp(&u6_made).map(|t| t.map(|t| t.unix_ms())), Ok(Some(ms)), "{what}");
            }
            ("v7", [by_uuid6, by_uuid_utils]) => {
                v7 += 1;
                let ms = i64::try_from(ns.div_euclid(1_000_000)).expect("in i64");
                let what = format!("v7 at {ns} ns");
                if !(0..1 << 48).contains(&ms) {
                    // uuid6 writes the low 48 bits of the time, uuid-utils refuses a time
                    // before 1970 and wraps one past 2^48 ms; our generator stamps the nearest
                    // time a v7 id holds, so order is kept.
                    let g = V7Generator::with_clock_and_random(
                        FixedClock::new(Timestamp::from_unix_ms(ms)),
                        SeededRandom::new(1),
                    );
                    let clamped = ms.clamp(0, (1 << 48) - 1);
                    assert_eq!(g.generate().timestamp().map(|t| t.unix_ms()), Some(clamped), "{what}");
                    assert_ne!(Layout::V7.timestamp(&id(by_uuid6)).ok().flatten().map(|t| t.unix_ms()), Some(ms));
                    continue;
                }
                v7_in_range += 1;
                for made in [by_uuid6, by_uuid_utils] {
                    let u = id(made);
                    assert_eq!(Layout::V7.check(&u), Ok(()), "{what}: {made}");
                    assert!(u.is_rfc_variant(), "{what}: {made}");
                    assert_eq!(
                        Layout::V7.timestamp(&u).map(|t| t.map(|t| t.unix_ms())),
                        Ok(Some(ms)),
                        "{what}: {made}"
                    );
                    assert_eq!(u.timestamp().map(|t| t.unix_ms()), Some(ms), "{what}: {made}");
                }
            }
            _ => panic!("python.tsv: bad row {r:?}"),
        }
    }
    assert!(v1_in_range > 300 && v1 > v1_in_range, "{v1_in_range} of {v1} v1 rows in range");
    assert!(v7_in_range > 300 && v7 > v7_in_range, "{v7_in_range} of {v7} v7 rows in range");
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect()
}

/// Every row of `dotnet.tsv`: the id each .NET generator made, rebuilt from the row's inputs.
#[test]
fn dotnet_generators() {
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    // Per run: the state the generator carried from its previous call (NewId: the last tick
    // used and the sequence; UUIDNext and Medo: the sequence or counter of the previous id).
    let mut state = std::collections::HashMap::<(String, String), (i64, i64, u32, i64)>::new();
    for r in rows("dotnet.tsv") {
        let [generator, run, case, call, ticks, unix_ms, rand, worker, pid, guid, sql_bytes, read_ticks, _extra] =
            r.as_slice()
        else {
            panic!("dotnet.tsv: bad row {r:?}");
        };
        let what = format!("{generator} run {run} ({case}) call {call}");
        let (call, ticks): (i64, i64) = (ms(call), ms(ticks));
        let guid = id(guid);
        let rand = unhex(rand);
        // SQL Server stores Guid.ToByteArray(): the display bytes with fields 1-3 byte-reversed.
        assert_eq!(unhex(sql_bytes), uuid::Uuid::from_bytes(guid.into_bytes()).to_bytes_le(), "{what}");
        let prev = state.get(&(generator.clone(), run.clone())).copied();
        let mut previous = None;
        let layout = match generator.as_str() {
            "efcore" => Layout::EfCore,
            "newid" => Layout::NewId,
            // ToSequentialGuid(): NextSequentialGuid()'s bytes but for the sequence's byte order.
            "newid-sequential" | "newid-sequential-next" => Layout::NewIdSequential,
            "uuidnext-sqlserver" => Layout::UuidNextSqlServer,
            "medo-sqlserver" => Layout::MedoSqlServer,
            other => panic!("dotnet.tsv: unknown generator {other}"),
        };
        // The id as NextSequentialGuid() writes it (display bytes 14 and 15 swapped back).
        let id_as_layout = if generator == "newid-sequential" {
            let mut b = guid.into_bytes();
            b.swap(14, 15);
            Comb::from_bytes(b)
        } else {
            guid
        };
        let fields = DotNetFields::parse(&id_as_layout, layout).unwrap_or_else(|e| panic!("{what}: {e}"));
        let expected = match layout {
            Layout::EfCore => {
                // The NewGuid stand-in: the 16 bytes in ToByteArray() order, then .NET's version
                // 4 and RFC variant.
                let mut b = uuid::Uuid::from_bytes_le(rand.clone().try_into().unwrap()).into_bytes();
                b[6] = 0x40 | (b[6] & 0x0f);
                b[8] = 0x80 | (b[8] & 0x3f);
                assert_eq!(fields.ticks, ticks, "{what}: the counter");
                DotNetFields::efcore(ticks, Comb::from_bytes(b))
            }
            Layout::NewId | Layout::NewIdSequential => {
                // NewIdGenerator: a tick later than the last one used starts it again with
                // sequence 0; another id in the same tick takes the next sequence; at 65535 the
                // tick moves on by one. Calls the file leaves out had the previous row's ticks.
                let (mut last, mut next, first, before) = match &prev {
                    Some(p) => (p.1, p.2, p.0 + 1, p.3),
                    None => (0, 0, 0, ticks),
                };
                let mut used = 0;
                for c in first..=call {
                    let t = if c == call { ticks } else { before };
                    if t > last {
                        last = t;
                        next = 0;
                    } else if next == 65535 {
                        last += 1;
                        next = 0;
                    }
                    used = next;
                    next += 1;
                }
                let mut w: [u8; 6] = unhex(worker).try_into().unwrap();
                if pid != "none" {
                    let p = unhex(pid);
                    w[4] = p[0];
                    w[5] = p[1];
                }
                previous = Some((call, last, next, ticks));
                DotNetFields::newid(last, w, u16::try_from(used).unwrap())
            }
            Layout::UuidNextSqlServer => {
                // A new timestamp draws 2 seed bytes (13 bits of sequence) and 8 random ones;
                // another id in the same millisecond draws 8 and counts the sequence up.
                let (seed, random) = rand.split_at(rand.len() - 8);
                let seq = match (seed, &prev) {
                    ([a, b], _) => (u32::from(*a & 0x1f) << 8) | u32::from(*b),
                    ([], Some(p)) if p.0 + 1 == call => p.2 + 1,
                    _ => fields.sequence,
                };
                assert_eq!(fields.sequence, seq, "{what}: the sequence");
                previous = Some((call, 0, seq, ticks));
                let base = Comb::from_bytes([
                    random[0], random[1], random[2], random[3], random[4], random[5], random[6], random[7], 0, 0, 0, 0,
                    0, 0, 0, 0,
                ]);
                DotNetFields::uuidnext_sqlserver(fields.timestamp(), u16::try_from(seq).unwrap(), base).unwrap()
            }
            Layout::MedoSqlServer => {
                // A new millisecond draws 10 bytes: b0..b5 the random part, b6..b9 the counter's
                // 25-bit seed; another id in it draws 7 and counts the counter up by one.
                let k = if rand.len() == 10 {
                    (u32::from(rand[8] & 0x1f) << 20)
                        | (u32::from(rand[9]) << 12)
                        | (u32::from(rand[6] & 0x0f) << 8)
                        | u32::from(rand[7])
                } else {
                    match &prev {
                        Some(p) if p.0 + 1 == call => (p.2 + 1) & 0x3ff_ffff,
                        _ => fields.sequence,
                    }
                };
                assert_eq!(fields.sequence, k, "{what}: the counter");
                previous = Some((call, 0, k, ticks));
                let random = u64::from_be_bytes([0, 0, rand[3], rand[2], rand[1], rand[0], rand[5], rand[4]]);
                DotNetFields::medo_sqlserver(fields.timestamp(), k, random).unwrap()
            }
            _ => unreachable!(),
        };
        if let Some(p) = previous {
            state.insert((generator.clone(), run.clone()), p);
        }
        assert_eq!(expected.to_id(layout).unwrap(), id_as_layout, "{what}: the id, byte for byte");
        assert_eq!(fields, expected, "{what}: the fields read back");
        // The time: the library's own read-back where it has one, to the tick.
        if let Ok(t) = read_ticks.parse::<i64>() {
            assert_eq!(fields.ticks, t, "{what}: the time read back");
        }
        // UUIDNext and Medo stamp the clock's millisecond (where their clock rules leave it).
        if matches!(layout, Layout::UuidNextSqlServer | Layout::MedoSqlServer) && case == "rand" {
            assert_eq!(fields.timestamp().unix_ms(), ms(unix_ms), "{what}: the millisecond");
        }
        // The v7 key a table's conversion gives it: the same millisecond; every bit back where
        // the conversion keeps them.
        let ms_of = (i128::from(fields.ticks) - i128::from(DOTNET_TICKS_AT_UNIX_EPOCH)).div_euclid(10_000);
        let m = KeyMigration::new(layout, Layout::V7).unwrap();
        match m.convert(&id_as_layout) {
            Ok(v7) => {
                assert_eq!(i128::from(v7.timestamp().unwrap().unix_ms()), ms_of, "{what}");
                if m.keeps_every_bit() {
                    assert_eq!(m.revert(&v7), Ok(id_as_layout), "{what}");
                }
            }
            Err(e) => assert!(!(0..1 << 48).contains(&ms_of), "{what}: {e}"),
        }
        *checked.entry(generator.clone()).or_default() += 1;
    }
    assert_eq!(checked.len(), 6, "{checked:?}");
    assert!(checked.values().all(|n| *n > 400), "{checked:?}");
}

/// Every row of `uuidv47.tsv` (made by uuidv47's own C code, `uuidv47.h`): the same face from
/// the same v7 id and key, the same id back from the face, and what combkey refuses where the C
/// code accepts anything (an id it cannot give back unchanged).
#[cfg(feature = "face")]
#[test]
fn uuidv47_faces() {
    use combkey::{ErrorKind, FaceKey, Timestamp};
    let uuid = |s: &str| -> uuid::Uuid { s.parse().unwrap_or_else(|e| panic!("{s}: {e}")) };
    // The day the vectors were made: a face from another key, or a v4 id that is no face,
    // unmasks to a time past it in almost every case.
    let made = Timestamp::from_unix_ms(1_795_000_000_000);
    let (mut masked, mut refused_mask, mut unmasked, mut refused_unmask) = (0, 0, 0, 0);
    let (mut wrong, mut wrong_told) = (0, 0);
    for r in rows("uuidv47.tsv") {
        let [kind, source, key, input, output, back, sip_msg, sip64] = r.as_slice() else {
            panic!("uuidv47.tsv: bad row {r:?}");
        };
        let what = format!("{kind} {source} {input} key {key}");
        let key = FaceKey::from_hex(key).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (input, output, back) = (uuid(input), uuid(output), uuid(back));
        // The C code's own mask: the low 48 bits of its SipHash, XORed into bytes 0..5.
        let mask = u64::from_str_radix(sip64, 16).unwrap() & 0xffff_ffff_ffff;
        let xor = (0..6).fold(0u64, |m, i| (m << 8) | u64::from(input.as_bytes()[i] ^ output.as_bytes()[i]));
        assert_eq!(xor, mask, "{what}: the C code's mask (message {sip_msg})");
        let rfc = input.as_bytes()[8] & 0xc0 == 0x80;
        let version = input.get_version_num();
        match kind.as_str() {
            "enc" if version == 7 && rfc => {
                let face = key.mask(Comb::from(input)).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(face, output, "{what}: mask");
                assert_eq!(key.unmask_any_time(face).unwrap(), Comb::from(back), "{what}: unmask");
                assert_eq!(back, input, "{what}");
                masked += 1;
            }
            "enc" => {
                // The C code overwrites the version nibble or variant: its face does not give
                // the input back, so combkey refuses to make one.
                let err = key.mask(Comb::from(input)).unwrap_err();
                assert!(matches!(err.kind(), ErrorKind::Version | ErrorKind::Variant), "{what}: {err}");
                assert_ne!(back, input, "{what}: the C code loses it too");
                refused_mask += 1;
            }
            "dec" if version == 4 && rfc => {
                let id = key.unmask_any_time(input).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(id, Comb::from(output), "{what}: unmask");
                assert_eq!(key.mask(id).unwrap(), back, "{what}: mask of the unmasked id");
                unmasked += 1;
                if source.starts_with("lcg-wrongkey") || source == "lcg-v4" || source == "repo:tests.c-wrongkey" {
                    wrong += 1;
                    match key.unmask_at(input, made) {
                        Err(e) => {
                            assert_eq!(e.kind(), ErrorKind::TooNew, "{what}: {e}");
                            assert!(e.to_string().contains("not a face made with this key"), "{e}");
                            wrong_told += 1;
                        }
                        Ok(id) => assert!(id.unix_ms().unwrap() <= made.unix_ms() + 86_400_000),
                    }
                }
            }
            "dec" => {
                let err = key.unmask_any_time(input).unwrap_err();
                assert!(matches!(err.kind(), ErrorKind::Version | ErrorKind::Variant), "{what}: {err}");
                refused_unmask += 1;
            }
            other => panic!("uuidv47.tsv: unknown kind {other}"),
        }
    }
    assert!(
        masked > 3000 && unmasked > 200 && refused_mask > 50 && refused_unmask > 20,
        "{masked} masked, {unmasked} unmasked, {refused_mask}/{refused_unmask} refused"
    );
    // A face that is not this key's unmasks to a uniformly random 48-bit time: past the day
    // the vectors were made for about 99.4% of them.
    assert!(wrong >= 300 && wrong_told * 100 >= wrong * 97, "{wrong_told} of {wrong} wrong-key faces told");
}
