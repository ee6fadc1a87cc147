//! The validator with any id, clock, window and short prefix settings: never panics.
#![no_main]

use std::time::Duration;

use combkey::{Comb, Expected, ShortPrefix, Timestamp, Validator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((bytes, rest)) = data.split_first_chunk::<16>() else { return };
    let Some((now, rest)) = rest.split_first_chunk::<8>() else { return };
    let Some((past, rest)) = rest.split_first_chunk::<8>() else { return };
    let Some((future, rest)) = rest.split_first_chunk::<8>() else { return };
    let Some((interval, rest)) = rest.split_first_chunk::<8>() else { return };
    let width = rest.first().copied().unwrap_or(2);
    let id = Comb::from_bytes(*bytes);
    let now = Timestamp::from_unix_ms(i64::from_le_bytes(*now));
    let past = Duration::from_millis(u64::from_le_bytes(*past));
    let future = Duration::from_millis(u64::from_le_bytes(*future));
    let mut expected = vec![Expected::V7];
    if let Ok(sp) = ShortPrefix::new(u64::from_le_bytes(*interval), width) {
        expected.push(Expected::ShortPrefix(sp));
        expected.push(Expected::ShortPrefix(sp.labelled_v4()));
        let _ = sp.interval_near(&id, now);
        let _ = sp.prefix_at(now);
    }
    for e in expected {
        let v = Validator::new(e).past(past).future(future);
        if let Err(err) = v.validate_at(&id, now) {
            let _ = err.to_string();
        }
    }
});
