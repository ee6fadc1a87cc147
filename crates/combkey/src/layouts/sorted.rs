//! What a key of every time-carrying layout becomes when a table's keys are converted: a v7
//! id with the same millisecond, so it sorts with the ids the application makes next (a
//! `Comb::new()` of any later time sorts after it), and the rest of what the old key held in
//! the v7's other 74 bits, in an order that keeps the old keys' order:
//!
//! ```text
//!  byte   0  1  2  3  4  5   6    7    8     9 10 11 12 13 14 15
//!        ┌─────────────────┬────┬────┬─────┬────────────────────┐
//!        │ unix_ms (48, BE)│7 f │ f  │v f r│ r r r r r r r      │
//!        └─────────────────┴────┴────┴─────┴────────────────────┘
//!  f = the 14-bit field after the time (12 bits after the version, 2 after the variant):
//!      the old key's time below the millisecond, or its sequence; r = 60 bits of the rest
//! ```
//!
//! | from | f (14 bits) | r (60 bits) | every bit kept |
//! | --- | --- | --- | --- |
//! | v1, v6, lambert-v13, mysql-swap, newsequentialid | 100-ns ticks within the ms (0..9999) | clock sequence (14), node (46: without its first octet's two low bits, the multicast and local flags) | no |
//! | efcore | its counter's ticks within the ms | the base GUID's 60 random bits | yes |
//! | newid, newid-sequential | ticks within the ms | sequence (16), worker id (44: without its first byte's low 4 bits) | no |
//! | uuidnext-sqlserver | its 14-bit sequence | the 60 random bits | yes |
//! | medo-sqlserver | (its 26-bit counter, then its 48 random bits in SQL Server's order) | | yes |
//! | rtcomb-legacy | (the 74 base bits in the order RT.Comb `Sql` keys convert) | | yes |
//! | locality | (the first group, 32 bits; pid, 16; MAC fragment, 26 of 28) | | no |
//! | rtcomb-sql, rtcomb-postgres, uc-prefix, uc-suffix | the lossless conversions of [`Layout::convert`] | | yes |
//!
//! The sub-millisecond ticks are kept whole (14 bits, 0 to 9,999), not scaled to 12 bits as
//! RFC 9562's method 3 scales a fraction: two v1 keys of one millisecond keep their order and
//! stay distinct. Where bits are dropped, two old keys that differ only in them would become
//! one; `combkey doctor` finds such pairs in the table before it changes anything, and keeps
//! an old-to-new map for the keys it converts.

use crate::bits;
use crate::comb::Comb;
use crate::error::{Detail, Error};
use crate::layouts::Layout;
use crate::layouts::dotnet::{DOTNET_TICKS_AT_UNIX_EPOCH, DotNetFields};
use crate::layouts::rtcomb;
use crate::time::Timestamp;

/// 100-ns ticks in a millisecond.
const TICKS_PER_MS: u64 = 10_000;

/// A v7 id of Unix millisecond `ms` and 74 further bits `free` (their top 14 the field after
/// the time, then 60 more), version and variant set.
fn pack(ms: u64, free: u128) -> Comb {
    let mut b = [0u8; 16];
    bits::write_u48(&mut b, 0, ms);
    let byte = |shift: u32, mask: u128| -> u8 {
        // OK because the mask keeps at most 8 bits.
        #[allow(clippy::cast_possible_truncation)]
        let v = ((free >> shift) & mask) as u8;
        v
    };
    b[6] = 0x70 | byte(70, 0x0f);
    b[7] = byte(62, 0xff);
    b[8] = 0x80 | byte(56, 0x3f);
    for (i, shift) in (9..16).zip([48u32, 40, 32, 24, 16, 8, 0]) {
        b[i] = byte(shift, 0xff);
    }
    Comb::from_bytes(b)
}

/// The millisecond and the 74 further bits of a v7 id ([`pack`]'s inverse).
fn unpack(v7: &Comb) -> (u64, u128) {
    let b = v7.as_bytes();
    let mut f = u128::from(b[6] & 0x0f);
    f = (f << 8) | u128::from(b[7]);
    f = (f << 6) | u128::from(b[8] & 0x3f);
    for &x in &b[9..16] {
        f = (f << 8) | u128::from(x);
    }
    (bits::read_u48(b, 0), f)
}

/// Ticks of 100 ns since the Unix epoch as (millisecond, ticks within it), or the range error
/// (a v7 holds no time before 1970).
fn split_ticks(unix_ticks: i128, layout: Layout) -> Result<(u64, u128), Error> {
    let ms = unix_ticks.div_euclid(i128::from(TICKS_PER_MS));
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    let ms = bits::unix_ms48(Timestamp::from_unix_ms(ms)).map_err(|_| {
        Error::out_of_range(
            "time of a key converted to v7",
            format!("{} ({layout})", Timestamp::from_unix_ms(ms)),
            "1970-01-01T00:00:00.000Z to +010889-08-02T05:31:50.655Z",
        )
    })?;
    // OK because rem_euclid by 10,000 is in 0..10,000.
    #[allow(clippy::cast_sign_loss)]
    let sub = unix_ticks.rem_euclid(i128::from(TICKS_PER_MS)) as u128;
    Ok((ms, sub))
}

/// Whether the v7 form of `layout`'s keys keeps every bit, so that [`from_v7`] gives the old
/// key back; `None` where the layout has no v7 form.
pub(crate) const fn keeps_every_bit(layout: Layout) -> Option<bool> {
    match layout {
        Layout::V7
        | Layout::RtCombSql
        | Layout::RtCombPostgres
        | Layout::UcPrefix
        | Layout::UcSuffix
        | Layout::RtCombLegacy
        | Layout::EfCore
        | Layout::UuidNextSqlServer
        | Layout::MedoSqlServer => Some(true),
        Layout::V1
        | Layout::V6
        | Layout::LambertV13
        | Layout::MySqlSwap
        | Layout::NewSequentialId
        | Layout::NewId
        | Layout::NewIdSequential
        | Layout::Locality => Some(false),
        Layout::ShortPrefix | Layout::UcShortPrefix | Layout::UcShortSuffix => None,
    }
}

/// The v7 key a key of `layout` becomes (see the module's table).
pub(crate) fn to_v7(layout: Layout, id: &Comb) -> Result<Comb, Error> {
    layout.check(id)?;
    match layout {
        Layout::V7 | Layout::RtCombSql | Layout::RtCombPostgres | Layout::UcPrefix | Layout::UcSuffix => {
            Layout::convert(id, layout, Layout::V7)
        }
        Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId => {
            if !id.is_rfc_variant() {
                return Err(Error(Detail::Variant { found: id.as_bytes()[8] }));
            }
            let v1 = Layout::convert(id, layout, Layout::V1)?;
            let b = v1.as_bytes();
            let ticks = i128::from(bits::v1_ticks(b)) - i128::from(bits::GREGORIAN_TO_UNIX_100NS);
            let (ms, sub) = split_ticks(ticks, layout)?;
            let clock_seq = u128::from(u16::from_be_bytes([b[8], b[9]]) & 0x3fff);
            // The node without its first octet's two low bits (multicast, locally administered).
            let node = (u128::from(b[10] >> 2) << 40) | u128::from(bits::read_u48(b, 10) & 0xff_ffff_ffff);
            Ok(pack(ms, (sub << 60) | (clock_seq << 46) | node))
        }
        Layout::EfCore | Layout::NewId | Layout::NewIdSequential | Layout::UuidNextSqlServer => {
            let f = DotNetFields::parse(id, layout)?;
            let unix = i128::from(f.ticks) - i128::from(DOTNET_TICKS_AT_UNIX_EPOCH);
            let (ms, sub) = split_ticks(unix, layout)?;
            let rest = match layout {
                Layout::EfCore | Layout::UuidNextSqlServer => {
                    // The 60 random bits: display bytes 0..7 without the version nibble.
                    let r = u128::from(f.random);
                    ((r >> 16) << 12) | (r & 0x0fff)
                }
                _ => {
                    let w = f.worker;
                    let worker = (u128::from(w[0] >> 4) << 40)
                        | u128::from(u64::from_be_bytes([0, 0, 0, w[1], w[2], w[3], w[4], w[5]]));
                    (u128::from(f.sequence) << 44) | worker
                }
            };
            let field = if layout == Layout::UuidNextSqlServer { u128::from(f.sequence) } else { sub };
            Ok(pack(ms, (field << 60) | rest))
        }
        Layout::RtCombLegacy => {
            let t = rtcomb::RtCombLayout::Legacy.timestamp(id)?;
            let ms = bits::unix_ms48(t)?;
            let mut b = id.into_bytes();
            bits::write_u48(&mut b, 10, ms);
            Layout::convert(&Comb::from_bytes(b), Layout::RtCombSql, Layout::V7)
        }
        Layout::Locality => {
            let b = id.as_bytes();
            let ms = bits::unix_ms48(bits::read_unix_ms48(b, 10))?;
            let first = u128::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            let pid = u128::from(u16::from_be_bytes([b[4], b[5]]));
            // The MAC fragment's 28 bits without its top two.
            let mac = (u128::from(b[6] & 0x03) << 24) | u128::from(u32::from_be_bytes([0, b[7], b[8], b[9]]));
            Ok(pack(ms, (first << 42) | (pid << 26) | mac))
        }
        Layout::MedoSqlServer => {
            let f = DotNetFields::parse(id, layout)?;
            let ms = bits::unix_ms48(f.timestamp())?;
            // The random bytes in the order SQL Server compares them: display 5, 4, 3, 2, 1, 0.
            let r = f.random.to_be_bytes();
            let random = u128::from(u64::from_be_bytes([0, 0, r[7], r[6], r[5], r[4], r[3], r[2]]));
            Ok(pack(ms, (u128::from(f.sequence) << 48) | random))
        }
        Layout::ShortPrefix | Layout::UcShortPrefix | Layout::UcShortSuffix => {
            Err(Error(Detail::NoV7Form { layout: layout.name() }))
        }
    }
}

/// The key of `layout` whose v7 form is `v7`: where the v7 form keeps every bit and `v7` is
/// one ([`to_v7`] of it gives `v7` again).
pub(crate) fn from_v7(layout: Layout, v7: &Comb) -> Result<Comb, Error> {
    let why = if keeps_every_bit(layout) == Some(false) {
        "the v7 form of these keys does not hold every bit of them, so none can be computed back (combkey doctor keeps \
         each converted key's old and new value in its key map)"
    } else {
        "its fields are outside what such a key's v7 form holds"
    };
    let not_one = || Error(Detail::NotConvertedFrom { layout: layout.name(), id: v7.to_string(), why });
    Layout::V7.check(v7)?;
    let (ms, free) = unpack(v7);
    let old = match layout {
        Layout::V7 | Layout::RtCombSql | Layout::RtCombPostgres | Layout::UcPrefix | Layout::UcSuffix => {
            Layout::convert(v7, Layout::V7, layout)?
        }
        Layout::EfCore | Layout::UuidNextSqlServer => {
            let field = free >> 60;
            let r = free & ((1 << 60) - 1);
            // OK because r has 60 bits: the 64-bit head with its version nibble put back fits.
            #[allow(clippy::cast_possible_truncation)]
            let head = (((r >> 12) << 16) | (r & 0x0fff)) as u64;
            let version: u64 = if layout == Layout::EfCore { 4 } else { 8 };
            let random = head | (version << 12);
            // OK because ms < 2^48 and field < 2^14.
            #[allow(clippy::cast_possible_truncation)]
            let (ms, field) = (ms.cast_signed(), field as u16);
            let f = if layout == Layout::EfCore {
                if field >= 10_000 {
                    return Err(not_one());
                }
                let counter = ms * 10_000 + i64::from(field) + DOTNET_TICKS_AT_UNIX_EPOCH;
                DotNetFields { ticks: counter, sequence: 0, worker: [0; 6], random }
            } else {
                DotNetFields {
                    ticks: ms * 10_000 + DOTNET_TICKS_AT_UNIX_EPOCH,
                    sequence: u32::from(field),
                    worker: [0; 6],
                    random,
                }
            };
            f.to_id(layout)?
        }
        Layout::RtCombLegacy => {
            let sql = Layout::convert(v7, Layout::V7, Layout::RtCombSql)?;
            rtcomb::legacy_nearest(Timestamp::from_unix_ms(ms.cast_signed()), sql)?
        }
        Layout::MedoSqlServer => {
            // OK because `free` has 74 bits: the counter above bit 48 has 26.
            #[allow(clippy::cast_possible_truncation)]
            let (counter, r) = ((free >> 48) as u32, (free as u64).to_be_bytes());
            let random = u64::from_be_bytes([0, 0, r[7], r[6], r[5], r[4], r[3], r[2]]);
            DotNetFields::medo_sqlserver(Timestamp::from_unix_ms(ms.cast_signed()), counter, random)?.to_id(layout)?
        }
        _ => return Err(not_one()),
    };
    if to_v7(layout, &old).ok() == Some(*v7) { Ok(old) } else { Err(not_one()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{RandomSource, SeededRandom};

    /// An id of `layout` at Unix 100-ns tick `unix_ticks`, its other fields from `r`.
    fn make(layout: Layout, unix_ticks: i64, r: &SeededRandom) -> Comb {
        let mut base = [0u8; 16];
        r.fill_bytes(&mut base);
        let base = Comb::from_bytes(base).with_version(4);
        let dotnet = unix_ticks + DOTNET_TICKS_AT_UNIX_EPOCH;
        let ms = Timestamp::from_unix_ms(unix_ticks.div_euclid(10_000));
        match layout {
            Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId => {
                let g = (bits::GREGORIAN_TO_UNIX_100NS.cast_signed() + unix_ticks).cast_unsigned();
                let mut rest = base.into_bytes();
                rest[8] = 0x80 | (rest[8] & 0x3f);
                let v1 = Comb::from_bytes(bits::with_v1_ticks(g, rest));
                Layout::convert(&v1, Layout::V1, layout).unwrap()
            }
            Layout::EfCore => DotNetFields::efcore(dotnet, base).to_id(layout).unwrap(),
            Layout::NewId | Layout::NewIdSequential => {
                let w = base.as_bytes();
                let q = u16::from_be_bytes([w[14], w[15]]);
                DotNetFields::newid(dotnet, [w[0], w[1], w[2], w[3], w[4], w[5]], q).to_id(layout).unwrap()
            }
            Layout::UuidNextSqlServer => {
                let q = u16::from_be_bytes([base.as_bytes()[14], base.as_bytes()[15]]) & 0x3fff;
                DotNetFields::uuidnext_sqlserver(ms, q, base).unwrap().to_id(layout).unwrap()
            }
            Layout::RtCombLegacy => rtcomb::RtCombLayout::Legacy.create(ms, base).unwrap(),
            Layout::RtCombSql => rtcomb::RtCombLayout::Sql.create(ms, base).unwrap(),
            Layout::MedoSqlServer => {
                let k = u32::from_be_bytes([0, base.as_bytes()[5] & 3, base.as_bytes()[6], base.as_bytes()[7]]);
                DotNetFields::medo_sqlserver(ms, k, r.next_u64()).unwrap().to_id(layout).unwrap()
            }
            Layout::Locality => {
                let mut b = base.into_bytes();
                b[6] = 0xb0 | (b[6] & 0x0f);
                bits::write_u48(&mut b, 10, ms.unix_ms().cast_unsigned());
                Comb::from_bytes(b)
            }
            other => panic!("no maker for {other}"),
        }
    }

    const TIMED: [Layout; 14] = [
        Layout::V1,
        Layout::V6,
        Layout::LambertV13,
        Layout::MySqlSwap,
        Layout::NewSequentialId,
        Layout::EfCore,
        Layout::NewId,
        Layout::NewIdSequential,
        Layout::UuidNextSqlServer,
        Layout::RtCombLegacy,
        Layout::RtCombSql,
        Layout::MedoSqlServer,
        Layout::Locality,
        Layout::V7,
    ];

    /// Every layout's v7 form carries the old key's millisecond, is a v7, and converts back
    /// where every bit is kept.
    #[test]
    fn the_millisecond_is_kept_and_lossless_forms_convert_back() {
        let r = SeededRandom::new(11);
        for layout in TIMED.into_iter().filter(|l| *l != Layout::V7) {
            for i in 0..2000i64 {
                // 1995 to 2070, and within one millisecond.
                let ticks = 7_889_184_000_000_000 + (r.next_u64() % 23_668_000_000_000_000).cast_signed() + i;
                let old = make(layout, ticks, &r);
                let new = to_v7(layout, &old).unwrap_or_else(|e| panic!("{layout} {old}: {e}"));
                assert_eq!(new.version(), 7, "{layout}");
                assert!(new.is_rfc_variant(), "{layout}");
                assert_eq!(Some(new.timestamp().unwrap()), layout.timestamp(&old).unwrap(), "{layout} {old}");
                match keeps_every_bit(layout) {
                    Some(true) => assert_eq!(from_v7(layout, &new), Ok(old), "{layout} {old} -> {new}"),
                    _ => assert!(from_v7(layout, &new).is_err(), "{layout}: no way back where bits were dropped"),
                }
            }
        }
    }

    /// Keys of one layout made in time order become v7 keys in the same order; within one
    /// millisecond too, to the 100-ns tick where the layout has ticks.
    #[test]
    fn the_order_of_the_old_keys_is_kept() {
        let r = SeededRandom::new(12);
        for layout in TIMED.into_iter().filter(|l| *l != Layout::V7) {
            // Ticks 0..=1: one millisecond apart where the layout has only milliseconds.
            let step: i64 = match layout {
                Layout::UuidNextSqlServer | Layout::RtCombSql | Layout::MedoSqlServer | Layout::Locality => 10_000,
                Layout::RtCombLegacy => 40_000,
                _ => 1 + (r.next_u64() % 3).cast_signed(),
            };
            let mut t = 17_000_000_000_000_000i64;
            let mut last: Option<Comb> = None;
            for _ in 0..5000 {
                t += step;
                let new = to_v7(layout, &make(layout, t, &r)).unwrap();
                if let Some(prev) = last {
                    assert!(prev < new, "{layout}: {prev} !< {new}");
                }
                last = Some(new);
            }
        }
    }

    /// Two v1 keys of one tick differ in their clock sequence or node: their v7 forms differ
    /// too, except where only the node's multicast and local bits differ.
    #[test]
    fn v1_keys_of_one_tick_stay_distinct_but_for_the_two_dropped_bits() {
        let base: Comb = "c232ab00-9414-11ec-b3c8-9f6bdeced846".parse().unwrap();
        let with = |i: usize, x: u8| {
            let mut b = base.into_bytes();
            b[i] ^= x;
            to_v7(Layout::V1, &Comb::from_bytes(b)).unwrap()
        };
        let at = to_v7(Layout::V1, &base).unwrap();
        for (i, x) in [(9, 1), (8, 0x20), (10, 0x04), (10, 0x80), (15, 1), (11, 0x80)] {
            assert_ne!(with(i, x), at, "byte {i} bit {x:#x}");
        }
        assert_eq!(with(10, 0x01), at, "the multicast bit is dropped");
        assert_eq!(with(10, 0x02), at, "the local bit is dropped");
    }

    /// The v1 keys of the time v7 cannot hold (before 1970) are an error, not a wrapped key.
    #[test]
    fn a_time_before_1970_is_an_error() {
        let r = SeededRandom::new(13);
        let old = make(Layout::V1, -10_000, &r);
        let e = to_v7(Layout::V1, &old).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::OutOfRange);
        assert!(e.to_string().contains("1969-12-31T23:59:59.999Z (v1)"), "{e}");
        assert!(to_v7(Layout::ShortPrefix, &Comb::new()).is_err());
    }
}
