//! `FromStr` in all accepted forms: never panics; what parses prints and parses back.
#![no_main]

use combkey::Comb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(id) = text.parse::<Comb>() {
        assert_eq!(id.to_string().parse::<Comb>().ok(), Some(id));
        assert_eq!(format!("{id:X}").parse::<Comb>().ok(), Some(id));
        assert_eq!(format!("{{{id}}}").parse::<Comb>().ok(), Some(id));
        assert_eq!(format!("urn:uuid:{id:#}").parse::<Comb>().ok(), Some(id));
    }
});
