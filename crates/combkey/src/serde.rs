//! `serde` support: the hyphenated string in human-readable formats, 16 bytes otherwise.

use core::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::comb::Comb;

impl Serialize for Comb {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Inside `FaceKey::scope`: the face, never the id.
        #[cfg(feature = "face")]
        if let Some(key) = crate::face::current() {
            let face = key.mask(*self).map_err(|e| {
                <S::Error as serde::ser::Error>::custom(format_args!("cannot show this id as a face: {e}"))
            })?;
            return Comb::from_bytes(face.into_bytes()).serialize_plain(serializer);
        }
        self.serialize_plain(serializer)
    }
}

impl Comb {
    fn serialize_plain<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
            serializer.serialize_str(uuid::Uuid::from_bytes(*self.as_bytes()).hyphenated().encode_lower(&mut buf))
        } else {
            serializer.serialize_bytes(self.as_bytes())
        }
    }
}

struct CombVisitor;

impl<'de> Visitor<'de> for CombVisitor {
    type Value = Comb;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a UUID string or 16 bytes")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Comb, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Comb, E> {
        Comb::from_slice(v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Comb, A::Error> {
        let mut bytes = [0u8; 16];
        for (i, slot) in bytes.iter_mut().enumerate() {
            *slot = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(i, &self))?;
        }
        if seq.next_element::<u8>()?.is_some() {
            return Err(de::Error::invalid_length(17, &self));
        }
        Ok(Comb::from_bytes(bytes))
    }
}

impl<'de> Deserialize<'de> for Comb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Comb, D::Error> {
        let id = if deserializer.is_human_readable() {
            deserializer.deserialize_str(CombVisitor)
        } else {
            deserializer.deserialize_bytes(CombVisitor)
        }?;
        // Inside `FaceKey::scope`: what came in is a face.
        #[cfg(feature = "face")]
        if let Some(key) = crate::face::current() {
            return key.unmask(id.to_uuid()).map_err(|e| de::Error::custom(format_args!("not a face: {e}")));
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use crate::Comb;

    #[test]
    fn json_is_the_string() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"017f22e2-79b0-7cc3-98c4-dc0c0c07398f\"");
        assert_eq!(serde_json::from_str::<Comb>(&json).unwrap(), id);
        assert_eq!(serde_json::from_str::<Comb>("\"017F22E279B07CC398C4DC0C0C07398F\"").unwrap(), id);
        let err = serde_json::from_str::<Comb>("\"017f22e2\"").unwrap_err();
        assert!(err.to_string().contains("invalid UUID length"), "{err}");
        assert!(serde_json::from_str::<Comb>("null").is_err());
    }

    #[test]
    fn binary_formats_get_16_bytes() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        let bin = bincode::serialize(&id).unwrap();
        // bincode writes a u64 length, then the bytes.
        assert_eq!(bin.len(), 8 + 16);
        assert_eq!(&bin[8..], id.as_bytes());
        assert_eq!(bincode::deserialize::<Comb>(&bin).unwrap(), id);
        let mut short = bin.clone();
        short[0] = 15;
        short.pop();
        let err = bincode::deserialize::<Comb>(&short).unwrap_err();
        assert!(err.to_string().contains("expected 16 bytes, found 15"), "{err}");
    }
}
