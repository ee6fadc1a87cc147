//! The methods that run a plan, each in its own module and knowing nothing of the others:
//! offline in place ([`offline`]: the plan's steps in one transaction, or journaled step by
//! step where DDL cannot roll back), online in place ([`online`]: batches of short
//! transactions), online copy and swap ([`swap`]: pg_repack's and pt-online-schema-change's
//! way) and the SQL script ([`script`]: the same steps as text). This module holds what they
//! share: the journal, the key-reading queries, the key map's writes, the comparison of
//! definitions and pg_repack-style lock attempts. The keys they write come from the plan's key
//! source ([`crate::keys`]); the online ones pace themselves with [`crate::throttle`].

use crate::db::Db;
use crate::error::Error;
use crate::options::{Online, Progress};
use crate::plan::Plan;

pub(crate) mod offline;
pub(crate) mod online;
pub(crate) mod script;
pub(crate) mod shared;
pub(crate) mod swap;

#[cfg(test)]
mod fixture;

pub use shared::OnlineOutcome;

/// The seam between the methods: the MariaDB copy and swap hands the keys the application
/// wrote through during its swap (old ids, in the live table) to the in-place method, which
/// it reaches here and knows nothing else of.
pub(crate) async fn in_place(
    db: &mut Db,
    plan: &Plan,
    online: &Online,
    progress: &mut dyn Progress,
) -> Result<OnlineOutcome, Error> {
    online::run(db, plan, online, progress).await
}
