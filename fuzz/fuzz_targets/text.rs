//! The other text parsers: RFC 3339 times, layout names, database names.
#![no_main]

use combkey::layouts::Layout;
use combkey::{Backend, Comb, Timestamp};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(t) = text.parse::<Timestamp>() {
        let shown = t.to_string();
        // Printing is exact to the millisecond, so the printed time parses to itself.
        assert_eq!(shown.parse::<Timestamp>().ok(), Some(t), "{text:?} -> {shown}");
    }
    let _ = text.parse::<Layout>();
    if let Ok(b) = text.parse::<Backend>() {
        assert_eq!(b.name().parse::<Backend>().ok(), Some(b));
        let _ = b.parse_stored(&text);
    }
    let _ = Comb::parse_str(&text);
});
