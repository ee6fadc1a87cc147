//! Stored forms against the comparison orders of docs/design.md, with a comparator written here
//! from the document (not the library's), checked first against SQL Server's observed order.

use std::cmp::Ordering;

use combkey::{Backend, Comb, FixedClock, RandomSource, SeededRandom, V7Generator};

/// SQL Server's `uniqueidentifier` order, as docs/design.md states it: display bytes
/// 10 11 12 13 14 15, then 8 9, then 7 6, then 5 4, then 3 2 1 0.
fn sqlserver_order(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
    let groups: [&[usize]; 5] = [&[10, 11, 12, 13, 14, 15], &[8, 9], &[7, 6], &[5, 4], &[3, 2, 1, 0]];
    for group in groups {
        for &i in group {
            match a[i].cmp(&b[i]) {
                Ordering::Equal => {}
                other => return other,
            }
        }
    }
    Ordering::Equal
}

fn guid(s: &str) -> [u8; 16] {
    *s.parse::<Comb>().expect("test vector").as_bytes()
}

#[test]
fn comparator_matches_sql_server_observations() {
    // Lambert's article: SQL Server returned 0001ABD9-... before 0001A3DB-... from ORDER BY.
    let a = guid("0001ABD9-3F62-E111-B305-0FCE8C655371");
    let b = guid("0001A3DB-3F62-E111-B305-0FCE8C655371");
    assert_eq!(sqlserver_order(&a, &b), Ordering::Less);
    // Lambert's article: NEWSEQUENTIALID values in ORDER BY order differ only in the first byte.
    let seq = [
        "B8586BD7-2062-E111-B36C-CC52AFC9F2ED",
        "B9586BD7-2062-E111-B36C-CC52AFC9F2ED",
        "BA586BD7-2062-E111-B36C-CC52AFC9F2ED",
        "BB586BD7-2062-E111-B36C-CC52AFC9F2ED",
    ];
    for w in seq.windows(2) {
        assert_eq!(sqlserver_order(&guid(w[0]), &guid(w[1])), Ordering::Less, "{} < {}", w[0], w[1]);
    }
    // RT.Comb's README: SQL Server sorts by the last six bytes first.
    let early = guid("ffffffff-ffff-ffff-ffff-000000000001");
    let late = guid("00000000-0000-0000-0000-000000000002");
    assert_eq!(sqlserver_order(&early, &late), Ordering::Less);
}

fn random_comb(r: &SeededRandom) -> Comb {
    Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64()))
}

#[test]
fn stored_to_public_inverts_public_to_stored_for_every_backend() {
    let r = SeededRandom::new(2024);
    for _ in 0..100_000 {
        let id = random_comb(&r);
        for backend in [Backend::Postgres, Backend::MySql, Backend::Sqlite, Backend::SqlServer] {
            let stored = backend.to_stored(id);
            assert_eq!(backend.from_stored(stored), id, "{backend:?} {id}");
        }
        assert_eq!(Comb::from_sqlserver_bytes_le(id.to_sqlserver_bytes_le()), id);
        // And the other way: every 16-byte value read from a column maps to one public id.
        let raw = *random_comb(&r).as_bytes();
        assert_eq!(Comb::from_sqlserver_bytes(raw).to_sqlserver_bytes(), raw);
    }
}

#[test]
fn sql_server_order_of_stored_equals_public_order_for_random_pairs() {
    let r = SeededRandom::new(7);
    for _ in 0..200_000 {
        let (a, b) = (random_comb(&r), random_comb(&r));
        assert_eq!(sqlserver_order(&a.to_sqlserver_bytes(), &b.to_sqlserver_bytes()), a.cmp(&b), "{a} vs {b}");
    }
    // Pairs that differ in one byte only, at every position: each byte's weight is right.
    for pos in 0..16 {
        for _ in 0..2_000 {
            let a = random_comb(&r);
            let mut bytes = *a.as_bytes();
            bytes[pos] = bytes[pos].wrapping_add(1 + u8::try_from(r.next_u64() % 255).unwrap_or(0));
            let b = Comb::from_bytes(bytes);
            assert_eq!(
                sqlserver_order(&a.to_sqlserver_bytes(), &b.to_sqlserver_bytes()),
                a.cmp(&b),
                "byte {pos}: {a} vs {b}"
            );
        }
    }
    // The library's own comparator agrees with this one.
    for _ in 0..10_000 {
        let (a, b) = (random_comb(&r), random_comb(&r));
        assert_eq!(
            combkey::adapter::sqlserver_cmp(a.as_bytes(), b.as_bytes()),
            sqlserver_order(a.as_bytes(), b.as_bytes())
        );
    }
}

#[test]
fn same_millisecond_ids_keep_their_order_in_sql_server() {
    let g = V7Generator::with_clock_and_random(
        FixedClock::new(combkey::Timestamp::from_unix_ms(1_700_000_000_000)),
        SeededRandom::new(1),
    );
    let mut ids = vec![Comb::NIL; 50_000];
    g.fill(&mut ids);
    assert!(ids.iter().all(|id| id.unix_ms() == ids[0].unix_ms()) || ids[0].unix_ms() < ids[49_999].unix_ms());
    let mut stored: Vec<[u8; 16]> = ids.iter().map(|id| id.to_sqlserver_bytes()).collect();
    stored.reverse();
    stored.sort_by(sqlserver_order);
    let back: Vec<Comb> = stored.into_iter().map(Comb::from_sqlserver_bytes).collect();
    assert_eq!(back, ids);
}

#[test]
fn sql_server_timestamp_is_in_display_bytes_10_to_15() {
    let r = SeededRandom::new(3);
    for _ in 0..10_000 {
        let ms = r.next_u64() >> 16;
        let id = Comb::from_v7_parts(ms, 0, r.next_u64());
        let stored = id.to_sqlserver_bytes();
        let read = stored[10..16].iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        assert_eq!(read, ms);
        // SQL Server's BINARY(16) cast keeps bytes 10..15 where they are (RT.Comb's SUBSTRING(.., 11, 6)).
        assert_eq!(id.to_sqlserver_bytes_le()[10..16], stored[10..16]);
    }
}
