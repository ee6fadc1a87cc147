//! `serde` support, as the core type has it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Comb;

impl Serialize for Comb {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_comb().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Comb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        combid::Comb::deserialize(deserializer).map(Comb::from)
    }
}
