//! Empty: the tests are combkey-rusqlite's own (tests/sqlite.rs).
