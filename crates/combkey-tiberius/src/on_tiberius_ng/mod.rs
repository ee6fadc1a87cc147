//! The tiberius-ng fork (feature `tiberius-ng`; its library is named `tiberius` too, so it
//! comes in under another name): src/sqlserver.rs with this driver.

use ::tiberius_ng as tds;

#[path = "../sqlserver.rs"]
#[allow(clippy::duplicate_mod, reason = "one source compiled for each driver")]
mod sqlserver;
