//! Byte decoders: `from_slice`, the column decoders every adapter uses, the SQL Server stored
//! form both ways: never panic; stored <-> public round trips.
#![no_main]

use combkey::adapter::{ColumnKind, from_column};
use combkey::{Backend, Comb};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Comb::from_slice(data);
    for kind in [ColumnKind::Binary, ColumnKind::Text, ColumnKind::BinaryOrText] {
        if let Ok(id) = from_column(data, kind) {
            assert!(data.len() == 16 || kind != ColumnKind::Binary);
            let _ = id.to_string();
        }
    }
    for backend in [Backend::Postgres, Backend::MySql, Backend::Sqlite, Backend::SqlServer] {
        if let Ok(id) = backend.from_stored_slice(data) {
            assert_eq!(backend.from_stored(backend.to_stored(id)), id);
        }
    }
    if let Ok(raw) = <[u8; 16]>::try_from(data) {
        let id = Comb::from_sqlserver_bytes(raw);
        assert_eq!(id.to_sqlserver_bytes(), raw);
        assert_eq!(Comb::from_sqlserver_bytes_le(id.to_sqlserver_bytes_le()), id);
    }
});
