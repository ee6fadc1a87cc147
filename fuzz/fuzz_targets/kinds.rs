//! Every layout's parser and conversion: never panics; a lossless conversion converts back.
#![no_main]

use combkey::layouts::{DotNetFields, KeyMigration, Layout, LocalityFields, RtCombLayout};
use combkey::{Comb, Timestamp};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((bytes, rest)) = data.split_first_chunk::<16>() else { return };
    let id = Comb::from_bytes(*bytes);
    let _ = Layout::detect(&id);
    let _ = LocalityFields::parse(&id);
    for layout in [RtCombLayout::Sql, RtCombLayout::PostgreSql, RtCombLayout::Legacy] {
        let _ = layout.timestamp(&id);
        if let Some(ms) = rest.first_chunk::<8>() {
            let t = Timestamp::from_unix_ms(i64::from_le_bytes(*ms));
            if let Ok(made) = layout.create(t, id) {
                let back = layout.timestamp(&made).expect("a COMB we made reads back");
                if layout != RtCombLayout::Legacy {
                    assert_eq!(back, t);
                }
            }
        }
    }
    for from in Layout::ALL {
        let _ = from.timestamp(&id);
        let _ = from.gregorian_ticks(&id);
        for to in Layout::ALL {
            if let Ok(out) = Layout::convert(&id, from, to) {
                assert_eq!(Layout::convert(&out, to, from).ok(), Some(id), "{from} -> {to} of {id}");
            }
        }
        let _ = DotNetFields::parse(&id, from);
        // The v7 form of every timed layout: a v7 of the same millisecond, and the old key back
        // where every bit is kept.
        if let Ok(m) = KeyMigration::new(from, Layout::V7)
            && let Ok(new) = m.convert(&id)
        {
            assert_eq!(new.version(), 7, "{from} of {id}");
            assert_eq!(Some(new.timestamp().unwrap()), from.timestamp(&id).unwrap(), "{from} of {id}");
            if m.keeps_every_bit() {
                assert_eq!(m.revert(&new), Ok(id), "{from} of {id} -> {new}");
            }
        }
        if let Ok(m) = KeyMigration::new(from, Layout::V7) {
            let _ = m.revert(&id);
        }
    }
});
