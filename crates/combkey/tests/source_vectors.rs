//! Every vector the source documents give (Lambert's article, RT.Comb's README, Groupon's
//! locality-uuid README, Percona's post, RFC 9562, uuid-creator and the klokwrk article), and
//! round trips of every lossless conversion.

use combkey::layouts::{Layout, RtCombLayout};
use combkey::{Comb, ErrorKind, RandomSource, SeededRandom, Timestamp};

fn id(s: &str) -> Comb {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn t(s: &str) -> Timestamp {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn lambert_newsequentialid() {
    let nsid = id("B9586BD7-2062-E111-B36C-CC52AFC9F2ED");
    let v1 = Layout::convert(&nsid, Layout::NewSequentialId, Layout::V1).unwrap();
    assert_eq!(v1, id("d76b58b9-6220-11e1-b36c-cc52afc9f2ed"));
    assert_eq!(Layout::V1.gregorian_ticks(&v1), Ok(135_497_356_990_437_561));
    assert_eq!(Layout::NewSequentialId.timestamp(&nsid).unwrap(), Some(t("2012-02-28T15:28:19.043Z")));
    assert_eq!(Layout::convert(&v1, Layout::V1, Layout::NewSequentialId), Ok(nsid));
    // The manually inserted v1 value and what SQL Server showed for it.
    let manual = id("626215fe-6226-11e1-837f-1b41e62f9422");
    assert_eq!(
        Layout::convert(&manual, Layout::V1, Layout::NewSequentialId),
        Ok(id("FE156262-2662-E111-837F-1B41E62F9422"))
    );
    // The listed NEWSEQUENTIALID() values decode in increasing time.
    let listed = [
        "B8586BD7-2062-E111-B36C-CC52AFC9F2ED",
        "B9586BD7-2062-E111-B36C-CC52AFC9F2ED",
        "BA586BD7-2062-E111-B36C-CC52AFC9F2ED",
        "BB586BD7-2062-E111-B36C-CC52AFC9F2ED",
    ];
    let ticks: Vec<u64> = listed.iter().map(|s| Layout::NewSequentialId.gregorian_ticks(&id(s)).unwrap()).collect();
    assert!(ticks.windows(2).all(|w| w[0] + 1 == w[1]), "{ticks:?}");
    // SQL Server's test rows: two v1 values three seconds apart, in the NEWSEQUENTIALID order.
    let a = Layout::NewSequentialId.timestamp(&id("0001abd9-3f62-e111-b305-0fce8c655371")).unwrap().unwrap();
    let b = Layout::NewSequentialId.timestamp(&id("0001a3db-3f62-e111-b305-0fce8c655371")).unwrap().unwrap();
    assert_eq!(a.to_string()[..19], *"2012-02-28T19:10:17");
    assert_eq!(b.to_string()[..19], *"2012-02-28T19:10:20");
}

#[test]
fn lambert_version_13() {
    let inserted = [
        "1e1624e75e1fd27fa11ded65de8970f6",
        "1e1624e75e1fd280a11ded65de8970f6",
        "1e1624e75e1fd281a11ded65de8970f6",
        "1e1624e75e1fd282a11ded65de8970f6",
        "1e1624e75e1fd283a11ded65de8970f6",
        "1e1624e75e1fd284a11ded65de8970f6",
        "1e1624e75e1fd285a11ded65de8970f6",
        "1e1624e75e1fd286a11ded65de8970f6",
    ];
    let mut prev = None;
    for s in inserted {
        let v13 = id(s);
        assert_eq!(Layout::detect(&v13), Some(Layout::LambertV13));
        let v1 = Layout::convert(&v13, Layout::LambertV13, Layout::V1).unwrap();
        assert_eq!(v1.version(), 1);
        let ticks = Layout::V1.gregorian_ticks(&v1).unwrap();
        assert!(prev.is_none_or(|p| p < ticks), "{s} decodes after the previous row");
        prev = Some(ticks);
        assert_eq!(Layout::convert(&v1, Layout::V1, Layout::LambertV13), Ok(v13));
        // CombsBuilder's bit arithmetic, written out here from the comments in Lambert's code:
        // 0xHHHMMMMAAAAAVBBB from a v1 msb 0xAAAAABBB_MMMM_1HHH.
        let msb = u64::from_be_bytes(v1.as_bytes()[..8].try_into().unwrap());
        let lambert = ((msb & 0xFFFF_F000_0000_0000) >> 28)
            | ((msb & 0x0000_0FFF_0000_0000) >> 32)
            | ((msb & 0x0000_0000_FFFF_0000) << 20)
            | ((msb & 0x0000_0000_0000_0FFF) << 52)
            | 0xD000;
        assert_eq!(lambert.to_be_bytes(), v13.as_bytes()[..8]);
    }
}

#[test]
fn rtcomb_readme() {
    let legacy = id("E25AFE33-DB2D-4502-9BF0-919001862CC4");
    assert_eq!(Layout::RtCombLegacy.timestamp(&legacy).unwrap(), Some(t("2002-01-10T23:40:35.000Z")));
    let sql = id("d01c25cc-63a7-47cc-b5ba-018e5f3bff48");
    assert_eq!(Layout::RtCombSql.timestamp(&sql).unwrap(), Some(t("2024-03-21T04:19:11.304Z")));
    // The .NET id reads as a public v7 id with the same time, and goes back unchanged.
    let public = Layout::convert(&sql, Layout::RtCombSql, Layout::V7).unwrap();
    assert_eq!(public.version(), 7);
    assert_eq!(public.timestamp(), Some(t("2024-03-21T04:19:11.304Z")));
    assert_eq!(Layout::convert(&public, Layout::V7, Layout::RtCombSql), Ok(sql));
    // The legacy layout has 1/300 s resolution: no lossless conversion.
    let e = Layout::convert(&legacy, Layout::RtCombLegacy, Layout::V7).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conversion);
    assert!(e.to_string().starts_with("no lossless conversion from rtcomb-legacy to v7"), "{e}");
}

#[test]
fn percona_mysql_swap_and_rfc_v6() {
    let v1 = id("58e0a7d7-eebc-11d8-9669-0800200c9a66");
    let swapped = Layout::convert(&v1, Layout::V1, Layout::MySqlSwap).unwrap();
    assert_eq!(format!("{swapped:x}"), "11d8eebc58e0a7d796690800200c9a66");
    assert_eq!(Layout::convert(&swapped, Layout::MySqlSwap, Layout::V1), Ok(v1));
    // "the 60 bit hexadecimal value 1d8eebc58e0a7d7"
    assert_eq!(Layout::V1.gregorian_ticks(&v1), Ok(0x1d8_eebc_58e0_a7d7));
    let rfc_v1 = id("c232ab00-9414-11ec-b3c8-9f6bdeced846");
    let rfc_v6 = id("1ec9414c-232a-6b00-b3c8-9f6bdeced846");
    assert_eq!(Layout::convert(&rfc_v1, Layout::V1, Layout::V6), Ok(rfc_v6));
    assert_eq!(Layout::convert(&rfc_v6, Layout::V6, Layout::V1), Ok(rfc_v1));
    // RFC 9562 A.1/A.5: Tuesday, February 22, 2022 2:22:22.000000 PM GMT-05:00.
    assert_eq!(Layout::V6.timestamp(&rfc_v6).unwrap(), Some(t("2022-02-22T19:22:22Z")));
}

#[test]
fn groupon_locality() {
    let l = id("20be0ffc-314a-bd53-7a50-013a65ca76d2");
    assert_eq!(Layout::detect(&l), Some(Layout::Locality));
    assert_eq!(Layout::Locality.timestamp(&l).unwrap(), Some(t("2012-10-15T18:58:18.450Z")));
    assert_eq!(Layout::convert(&l, Layout::Locality, Layout::V7).unwrap_err().kind(), ErrorKind::Conversion);
}

#[test]
fn uuid_creator_kinds() {
    let at = t("2022-03-18T05:24:00Z");
    for kind in [Layout::UcPrefix, Layout::UcSuffix, Layout::UcShortPrefix, Layout::UcShortSuffix, Layout::ShortPrefix]
    {
        let g = kind.generate().unwrap();
        kind.check(&g).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    let short = combkey::ShortPrefix::default().labelled_v4().make(at, [0x11; 16]);
    assert_eq!(short.to_string(), "00641111-1111-4111-9111-111111111111");
    let suffix = Layout::convert(&short, Layout::UcShortPrefix, Layout::UcShortSuffix).unwrap();
    assert_eq!(suffix.to_string(), "11111111-1111-4111-9111-006411111111");
    let ours = Layout::convert(&suffix, Layout::UcShortSuffix, Layout::ShortPrefix).unwrap();
    assert_eq!(ours.to_string(), "00641111-1111-8111-9111-111111111111");
}

fn random_comb(r: &SeededRandom) -> Comb {
    Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64()))
}

/// A random id that is a valid member of `kind` (the version and variant it must carry).
fn random_of(kind: Layout, r: &SeededRandom) -> Comb {
    let v4 = |c: Comb| {
        let mut b = c.into_bytes();
        b[6] = 0x40 | (b[6] & 0x0f);
        b[8] = 0x80 | (b[8] & 0x3f);
        Comb::from_bytes(b)
    };
    let with = |c: Comb, v: u8| {
        let mut b = c.into_bytes();
        b[6] = (v << 4) | (b[6] & 0x0f);
        b[8] = 0x80 | (b[8] & 0x3f);
        Comb::from_bytes(b)
    };
    let c = random_comb(r);
    match kind {
        Layout::V7 => with(c, 7),
        Layout::ShortPrefix => with(c, 8),
        Layout::V1 => with(c, 1),
        Layout::V6 => with(c, 6),
        Layout::LambertV13 => with(c, 0xd),
        _ => {
            // The rest are conversions of a hub member, or v4-based.
            match kind {
                Layout::NewSequentialId | Layout::MySqlSwap => Layout::convert(&with(c, 1), Layout::V1, kind).unwrap(),
                _ => v4(c),
            }
        }
    }
}

#[test]
fn every_lossless_conversion_round_trips_on_random_ids() {
    let r = SeededRandom::new(99);
    let families: [&[Layout]; 3] = [
        &[Layout::V1, Layout::V6, Layout::LambertV13, Layout::MySqlSwap, Layout::NewSequentialId],
        &[Layout::V7, Layout::RtCombSql, Layout::RtCombPostgres, Layout::UcPrefix, Layout::UcSuffix],
        &[Layout::ShortPrefix, Layout::UcShortPrefix, Layout::UcShortSuffix],
    ];
    for family in families {
        for &from in family {
            for &to in family {
                for _ in 0..2_000 {
                    let a = random_of(from, &r);
                    let b = Layout::convert(&a, from, to).unwrap_or_else(|e| panic!("{from} -> {to} of {a}: {e}"));
                    to.check(&b).unwrap_or_else(|e| panic!("{from} -> {to}: {b} is not {to}: {e}"));
                    assert_eq!(Layout::convert(&b, to, from), Ok(a), "{from} -> {to} -> {from} of {a}");
                    // The time survives every conversion.
                    assert_eq!(from.timestamp(&a).ok(), to.timestamp(&b).ok(), "{from} -> {to} of {a}");
                }
            }
        }
        // Across families: an error, never a silent loss.
        let other = if family[0] == Layout::V1 { Layout::V7 } else { Layout::V1 };
        let e = Layout::convert(&random_of(family[0], &r), family[0], other).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conversion);
    }
    // Found by fuzzing: a non-RFC variant would not survive the round trip, so it is refused.
    let odd_variant = id("00240000-b248-4df5-f84e-b2b2b2000a0a");
    let e = Layout::convert(&odd_variant, Layout::UcShortPrefix, Layout::ShortPrefix).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Variant);
    let e = Layout::convert(&id("017f22e2-79b0-7cc3-d8c4-dc0c0c07398f"), Layout::V7, Layout::RtCombSql).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Variant);
    // A wrong version for the kind named is an error too.
    assert_eq!(Layout::convert(&Comb::new(), Layout::V1, Layout::V6).unwrap_err().kind(), ErrorKind::Version);
    let not_v4 = id("d01c25cc-63a7-77cc-b5ba-018e5f3bff48");
    let e = Layout::convert(&not_v4, Layout::RtCombSql, Layout::V7).unwrap_err();
    assert!(e.to_string().contains("expected a version 4 base GUID"), "{e}");
}

#[test]
fn kind_names_parse_and_detect() {
    for k in Layout::ALL {
        assert_eq!(k.name().parse::<Layout>(), Ok(k));
        let g = k.generate().unwrap();
        k.check(&g).unwrap_or_else(|e| panic!("{k} generated {g}: {e}"));
        if let Some(t) = k.timestamp(&g).unwrap() {
            let now = Timestamp::now().unix_ms();
            assert!((now - t.unix_ms()).abs() < 60_000, "{k}: {t}");
        }
    }
    let e = "v9".parse::<Layout>().unwrap_err();
    assert!(e.to_string().contains("one of v7, short-prefix"), "{e}");
}

#[test]
fn out_of_range_times_are_errors() {
    assert!(RtCombLayout::Legacy.create(t("1899-12-31T23:59:59Z"), Comb::NIL).is_err());
    assert!(RtCombLayout::Legacy.create(t("2079-06-07T00:00:00Z"), Comb::NIL).is_err());
    assert!(RtCombLayout::Sql.create(Timestamp::from_unix_ms(1 << 48), Comb::NIL).is_err());
    assert!(RtCombLayout::PostgreSql.create(Timestamp::from_unix_ms(-1), Comb::NIL).is_err());
    assert_eq!(Comb::min_for(Timestamp::from_unix_ms(1 << 48)).unwrap_err().kind(), ErrorKind::OutOfRange);
}
