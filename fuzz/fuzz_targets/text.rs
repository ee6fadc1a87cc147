//! The other text parsers: RFC 3339 times, kind names, SQL dialects; serde_json of ids.
#![no_main]

use combid::{Comb, Kind, Timestamp};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(t) = text.parse::<Timestamp>() {
        let shown = t.to_string();
        // Printing is exact to the millisecond, so the printed time parses to itself.
        assert_eq!(shown.parse::<Timestamp>().ok(), Some(t), "{text:?} -> {shown}");
    }
    let _ = text.parse::<Kind>();
    let _ = text.parse::<combid::sql::Dialect>();
    let _ = Comb::parse_str(&text);
});
