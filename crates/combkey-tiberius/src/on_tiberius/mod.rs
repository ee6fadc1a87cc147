//! tiberius 0.12 or 0.13 (feature `tiberius`): src/sqlserver.rs with this driver.

use ::tiberius as tds;

#[path = "../sqlserver.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each driver")]
mod sqlserver;
