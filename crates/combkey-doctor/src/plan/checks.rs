//! The checks a plan runs: queries whose answer must be zero (or no row) for the change to
//! commit, written once for every database from the catalog's quoting.

use combkey::Backend;

use crate::catalog::Name;
use crate::plan::model::Reference;

/// Rows of the referencing table of `r` whose key references no row of `parent`.
pub(crate) fn orphan_count(backend: Backend, r: &Reference, parent: &Name) -> String {
    let q = |n: &str| backend.quote(n);
    let not_null: Vec<String> = r.child_columns.iter().map(|c| format!("c.{} IS NOT NULL", q(c))).collect();
    let join: Vec<String> =
        r.child_columns.iter().zip(&r.parent_columns).map(|(c, p)| format!("p.{} = c.{}", q(p), q(c))).collect();
    format!(
        "SELECT count(*) FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {})",
        Name::from(&r.child).quoted(backend),
        not_null.join(" AND "),
        parent.quoted(backend),
        join.join(" AND ")
    )
}
