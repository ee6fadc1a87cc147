//! Conversions of the column type beyond what `column_newtype!` gives.

use crate::{CombTextUuid, CombUuid};

impl From<combkey_sqlx::Comb> for CombUuid {
    fn from(id: combkey_sqlx::Comb) -> Self {
        CombUuid::from(id.to_comb())
    }
}

impl From<CombUuid> for combkey_sqlx::Comb {
    fn from(id: CombUuid) -> Self {
        combkey_sqlx::Comb::from(id.to_comb())
    }
}

impl From<CombUuid> for CombTextUuid {
    fn from(id: CombUuid) -> Self {
        CombTextUuid::from(id.to_comb())
    }
}

impl From<CombTextUuid> for CombUuid {
    fn from(id: CombTextUuid) -> Self {
        CombUuid::from(id.to_comb())
    }
}
