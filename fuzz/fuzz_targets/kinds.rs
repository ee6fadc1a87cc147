//! Every seed kind's parser and conversion: never panics; a lossless conversion converts back.
#![no_main]

use combid::{Comb, Kind, LocalityFields, RtCombLayout, Timestamp};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((bytes, rest)) = data.split_first_chunk::<16>() else { return };
    let id = Comb::from_bytes(*bytes);
    let _ = Kind::detect(&id);
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
    for from in Kind::ALL {
        let _ = from.timestamp(&id);
        let _ = from.gregorian_ticks(&id);
        for to in Kind::ALL {
            if let Ok(out) = Kind::convert(&id, from, to) {
                assert_eq!(Kind::convert(&out, to, from).ok(), Some(id), "{from} -> {to} of {id}");
            }
        }
    }
});
