//! Not a library: `tests/interop.rs` writes ids with one combkey adapter and reads, orders,
//! joins and range-queries them with the others, on PostgreSQL, MariaDB and SQLite. It needs
//! all three adapters at once, hence a crate of its own.
