//! The column type and its conversions.

use core::fmt;
use core::str::FromStr;

/// A [`combid::Comb`] as a sqlx column type.
///
/// Stored as the public bytes in every sqlx backend: PostgreSQL `uuid`, MySQL/MariaDB
/// `BINARY(16)`, SQLite `BLOB`; so `ORDER BY id` is creation order. Converts to and from
/// [`combid::Comb`] for free.
///
/// ```
/// let id = combid_sqlx::Comb::new();
/// let core: combid::Comb = id.into();
/// assert_eq!(combid_sqlx::Comb::from(core), id);
/// assert_eq!(id.to_string().parse::<combid_sqlx::Comb>()?, id);
/// # Ok::<(), combid::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Comb(combid::Comb);

impl Comb {
    /// A fresh id from the process-wide default generator ([`combid::Comb::new`]).
    #[allow(clippy::new_without_default)] // `Default` is the nil id, as for the core type.
    pub fn new() -> Self {
        Comb(combid::Comb::new())
    }

    /// The core id.
    pub const fn to_comb(self) -> combid::Comb {
        self.0
    }
}

impl From<combid::Comb> for Comb {
    fn from(id: combid::Comb) -> Self {
        Comb(id)
    }
}

impl From<Comb> for combid::Comb {
    fn from(id: Comb) -> Self {
        id.0
    }
}

impl fmt::Display for Comb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for Comb {
    type Err = combid::Error;

    fn from_str(s: &str) -> Result<Self, combid::Error> {
        s.parse().map(Comb)
    }
}
