//! docs/migrating.md's apps (see `src/bin/`): each written for `uuid::Uuid` (feature
//! `before`) and, with only its `use` line changed, for combkey's id type. `run.sh` runs the
//! old version, then the new one on the same database: rows the old one wrote, the new one
//! reads and changes.
