//! Faces: a v7 id shown to the outside as a v4-looking id that does not tell when it was made.
//!
//! The scheme is uuidv47's (stateless-me/uuidv47, `uuidv47.h`, with its PostgreSQL extension
//! `uuid47` and ports in other languages): the 48 time bits of a v7 id are XORed with the low
//! 48 bits of a keyed SipHash-2-4 of the id's 74 random bits, and the version nibble becomes 4.
//! The random bits are not in the time field, so the same key undoes it. The same key gives
//! the same faces as uuidv47's C code, byte for byte (the tests read vectors its C code made).
//!
//! Where uuidv47 accepts anything and returns something, this module refuses what cannot come
//! back: [`FaceKey::mask`] takes only a v7 id with the RFC variant (a short prefix COMB, a v4 or
//! an RT.Comb id has no 48-bit time there; uuidv47 would overwrite its version nibble and
//! lose it), and [`FaceKey::unmask`] takes only a version 4 id with the RFC variant whose time
//! comes out no later than a day past the clock. A face made with another key (or a v4 id
//! that is no face) unmasks to an arbitrary 48-bit time, almost always thousands of years
//! ahead: that is how a wrong key is told, for about 99.4% of faces; the rest unmask to a
//! plausible time and cannot be told from a right one (there is no tag to check).
//!
//! What a face hides and what it does not: the creation time and the rate at which ids are
//! made are hidden; the order of ids is gone from the outside by design; the 74 random bits are
//! visible as they are (it is not encryption of the whole id), and two ids with the same random
//! bits would show the XOR of their times.

use core::fmt;
use core::str::FromStr;

use siphasher::sip::SipHasher24;

use crate::clock::{Clock, CoarseClock};
use crate::comb::Comb;
use crate::error::{Detail, Error};
use crate::time::Timestamp;

/// How far past the clock an unmasked time may be before [`FaceKey::unmask`] says the face was
/// not made with this key: a day, for clocks that disagree.
const FUTURE_ALLOWANCE_MS: i64 = 86_400_000;

/// A 128-bit face key (SipHash-2-4's standard 16-byte key).
///
/// Read it from 32 hex digits, as an environment variable holds it; `Debug` and every error
/// leave it out.
///
/// # Examples
///
/// ```
/// use combkey::{Comb, FaceKey};
///
/// // The key of uuidv47's README and demo ({k0 = 0x0123456789abcdef, k1 = 0xfedcba9876543210}).
/// let key: FaceKey = "efcdab89674523011032547698badcfe".parse()?;
/// let id: Comb = "018f2d9f-9a2a-7def-8c3f-7b1a2c4d5e6f".parse()?;
/// let face = key.mask(id)?;
/// // What uuidv47's demo prints for the same id and key.
/// assert_eq!(face.to_string(), "2463c780-7fca-4def-8c3f-7b1a2c4d5e6f");
/// assert_eq!(key.unmask(face)?, id);
/// assert_eq!(format!("{key:?}"), "FaceKey(..)");
/// # Ok::<(), combkey::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct FaceKey {
    key: [u8; 16],
}

impl fmt::Debug for FaceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FaceKey(..)")
    }
}

impl FaceKey {
    /// The key from its 16 bytes, in SipHash's standard order (`k0` is the little-endian
    /// value of bytes 0 to 7, `k1` of bytes 8 to 15; uuidv47's PostgreSQL extension takes the
    /// same 16 bytes as a `bytea`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::FaceKey;
    ///
    /// let from_bytes = FaceKey::from_bytes([0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
    ///     0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe]);
    /// assert_eq!(from_bytes, FaceKey::from_hex("efcdab89674523011032547698badcfe")?);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn from_bytes(key: [u8; 16]) -> Self {
        FaceKey { key }
    }

    /// The key from hex: 32 hex digits (an optional `0x` before them), or the two halves of
    /// uuidv47's `uuid47.key` setting, 16 hex digits each, around a `:`. Spaces around it are
    /// ignored. The error never shows the text.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::FaceKey;
    ///
    /// let key = FaceKey::from_hex("00112233445566778899aabbccddeeff")?;
    /// // uuidv47's PostgreSQL setting for the same key.
    /// assert_eq!(key, FaceKey::from_hex("0011223344556677:8899aabbccddeeff")?);
    /// let err = FaceKey::from_hex("secret-but-malformed").unwrap_err();
    /// assert!(!err.to_string().contains("secret"));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn from_hex(text: &str) -> Result<Self, Error> {
        let bad = |why: &'static str| {
            Error(Detail::Config {
                what: "face key",
                value: format!("{} characters (not shown)", text.chars().count()),
                expected: why.into(),
            })
        };
        let text = text.trim();
        let (first, second) = match text.split_once(':') {
            Some((a, b)) => (strip_0x(a.trim()), strip_0x(b.trim())),
            None => (strip_0x(text), ""),
        };
        if second.is_empty() && first.len() != 32 {
            return Err(bad("32 hex digits (16 bytes), or 16:16 as uuidv47's uuid47.key setting"));
        }
        if !second.is_empty() && (first.len() != 16 || second.len() != 16) {
            return Err(bad("16 hex digits on each side of the `:`"));
        }
        let mut key = [0u8; 16];
        let digits = first.bytes().chain(second.bytes());
        let mut high = None;
        let mut i = 0;
        for c in digits {
            let v = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(bad("hex digits (0-9, a-f, A-F) only")),
            };
            match high.take() {
                None => high = Some(v),
                Some(h) => {
                    key[i] = (h << 4) | v;
                    i += 1;
                }
            }
        }
        Ok(FaceKey { key })
    }

    /// The key's 16 bytes, to store it elsewhere (a secret manager).
    pub const fn to_bytes(&self) -> [u8; 16] {
        self.key
    }

    /// The low 48 bits of SipHash-2-4 over the id's 74 random bits, as uuidv47 builds its
    /// 10-byte message: `[b6 & 0x0f, b7, b8 & 0x3f, b9 .. b15]`.
    fn mask48(&self, b: &[u8; 16]) -> u64 {
        let msg = [b[6] & 0x0f, b[7], b[8] & 0x3f, b[9], b[10], b[11], b[12], b[13], b[14], b[15]];
        SipHasher24::new_with_key(&self.key).hash(&msg) & 0xffff_ffff_ffff
    }

    fn apply(&self, b: &[u8; 16], version: u8) -> [u8; 16] {
        // The 48-bit mask big-endian: bytes 2 to 7 of the u64's.
        let mask = self.mask48(b).to_be_bytes();
        let mut out = *b;
        for (byte, m) in out.iter_mut().zip(&mask[2..]) {
            *byte ^= m;
        }
        out[6] = (b[6] & 0x0f) | (version << 4);
        out[8] = (b[8] & 0x3f) | 0x80;
        out
    }

    /// The face of a v7 id: its time bits masked, version 4.
    ///
    /// # Errors
    ///
    /// An id that is not version 7 with the RFC variant: only those have the 48-bit time the
    /// face hides and come back from [`FaceKey::unmask`] unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, FaceKey};
    ///
    /// let key = FaceKey::from_hex("000102030405060708090a0b0c0d0e0f")?;
    /// let (a, b) = (Comb::new(), Comb::new());
    /// let (fa, fb) = (key.mask(a)?, key.mask(b)?);
    /// assert_eq!(fa.get_version_num(), 4);
    /// assert_ne!(fa.as_bytes()[..6], a.as_bytes()[..6], "the time is not shown");
    /// assert_eq!(key.unmask(fb)?, b);
    /// assert_eq!(key.mask(Comb::new_v4()).unwrap_err().kind(), ErrorKind::Version);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn mask(&self, id: Comb) -> Result<uuid::Uuid, Error> {
        let b = id.as_bytes();
        if id.version() != 7 {
            return Err(Error(Detail::Version { expected: 7, found: id.version() }));
        }
        if !id.is_rfc_variant() {
            return Err(Error(Detail::Variant { found: b[8] }));
        }
        Ok(uuid::Uuid::from_bytes(self.apply(b, 4)))
    }

    /// The v7 id behind a face, checked: version 4, the RFC variant, and a time no later than
    /// a day past the system clock.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Version`](crate::ErrorKind::Version) or
    /// [`ErrorKind::Variant`](crate::ErrorKind::Variant) for an id that is no face;
    /// [`ErrorKind::TooNew`](crate::ErrorKind::TooNew) for a face that unmasks to a time ahead
    /// of the clock: made with another key, or a random v4 id.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, FaceKey};
    ///
    /// let key = FaceKey::from_hex("00112233445566778899aabbccddeeff")?;
    /// let other = FaceKey::from_hex("ffeeddccbbaa99887766554433221100")?;
    /// let id = Comb::from_v7_parts(1_700_000_000_000, 0x123, 0x0123_4567_89ab_cdef);
    /// let face = key.mask(id)?;
    /// assert_eq!(key.unmask(face)?, id);
    /// // Another key unmasks it to an arbitrary time, here thousands of years ahead.
    /// assert_eq!(other.unmask(face).unwrap_err().kind(), ErrorKind::TooNew);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn unmask(&self, face: uuid::Uuid) -> Result<Comb, Error> {
        // The coarse clock (a few ms behind at most) is plenty for a day's allowance.
        self.unmask_at(face, CoarseClock.now())
    }

    /// [`FaceKey::unmask`] against the given clock.
    ///
    /// # Errors
    ///
    /// As [`FaceKey::unmask`].
    pub fn unmask_at(&self, face: uuid::Uuid, now: Timestamp) -> Result<Comb, Error> {
        let id = self.unmask_any_time(face)?;
        let found = id.timestamp().unwrap_or(Timestamp::from_unix_ms(0));
        let latest = now.saturating_add_ms(FUTURE_ALLOWANCE_MS);
        if found.unix_ms() > latest.unix_ms() {
            return Err(Error(Detail::NotThisFaceKey { found, latest }));
        }
        Ok(id)
    }

    /// The v7 id behind a face with no check of its time: uuidv47's decode, for every face it
    /// makes (its vectors reach the year 10889). Checks version 4 and the RFC variant only.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Version`](crate::ErrorKind::Version) or
    /// [`ErrorKind::Variant`](crate::ErrorKind::Variant) for an id that is no face.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, FaceKey};
    ///
    /// let key = FaceKey::from_hex("efcdab89674523011032547698badcfe")?;
    /// // uuidv47's README example: the nil time under its demo key.
    /// let face = "22d97126-9609-4000-8000-000000000000".parse()?;
    /// let id = key.unmask_any_time(face)?;
    /// assert_eq!(id, "00000000-0000-7000-8000-000000000000".parse::<Comb>()?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unmask_any_time(&self, face: uuid::Uuid) -> Result<Comb, Error> {
        let b = face.as_bytes();
        let version = b[6] >> 4;
        if version != 4 {
            return Err(Error(Detail::Version { expected: 4, found: version }));
        }
        if b[8] & 0xc0 != 0x80 {
            return Err(Error(Detail::Variant { found: b[8] }));
        }
        Ok(Comb::from_bytes(self.apply(b, 7)))
    }
}

#[cfg(feature = "serde")]
std::thread_local! {
    /// The key of the innermost [`FaceKey::scope`] on this thread.
    static SCOPE: core::cell::Cell<Option<[u8; 16]>> = const { core::cell::Cell::new(None) };
}

/// The key of the innermost scope on this thread, if any: `serde` of the key types shows faces.
#[cfg(feature = "serde")]
pub(crate) fn current() -> Option<FaceKey> {
    SCOPE.with(core::cell::Cell::get).map(FaceKey::from_bytes)
}

#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "face", feature = "serde"))))]
impl FaceKey {
    /// Runs `f` with faces on for `serde` on this thread: inside it, every `Comb` (and every
    /// adapter's key type, which serializes as a `Comb`) serializes as its face and
    /// deserializes from a face, checked as [`FaceKey::unmask`] checks it. Outside, nothing
    /// changes. Scopes nest; the previous one comes back when `f` returns or panics.
    ///
    /// Keep a scope to the edge of the service (reading a request, writing a response): a
    /// `Comb` serialized inside it for storage (a JSON column) would be stored as its face.
    ///
    /// # Errors
    ///
    /// Inside a scope, serializing an id that is not v7 fails (it has no face), and so does
    /// deserializing a text that is no face of this key.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, FaceKey};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    /// struct Order { id: Comb, parent: Option<Comb>, item: String }
    ///
    /// let key = FaceKey::from_hex("000102030405060708090a0b0c0d0e0f")?;
    /// let order = Order { id: Comb::new(), parent: Some(Comb::new()), item: "tea".into() };
    /// let json = key.scope(|| serde_json::to_string(&order))?;
    /// assert!(json.contains(&key.mask(order.id)?.to_string()));
    /// assert!(!json.contains(&order.id.to_string()));
    /// let back: Order = key.scope(|| serde_json::from_str(&json))?;
    /// assert_eq!(back, order);
    /// // Outside the scope: the ids themselves.
    /// assert!(serde_json::to_string(&order)?.contains(&order.id.to_string()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<[u8; 16]>);
        impl Drop for Restore {
            fn drop(&mut self) {
                SCOPE.with(|s| s.set(self.0));
            }
        }
        let _restore = Restore(SCOPE.with(|s| s.replace(Some(self.key))));
        f()
    }

    /// A future that runs every poll of `fut` inside [`FaceKey::scope`]: wrap a web framework's
    /// handling of a request in it, and every key type its extractors read and its responses
    /// write is a face, with no conversion at any field.
    ///
    /// With axum, a middleware of one line:
    ///
    /// ```ignore
    /// let app = Router::new()
    ///     .route("/orders/{id}", get(read))
    ///     .layer(axum::middleware::from_fn(move |req, next: axum::middleware::Next| {
    ///         key.clone().scope_future(next.run(req))
    ///     }));
    /// ```
    ///
    /// With actix-web, `App::new().wrap_fn(move |req, srv| key.clone().scope_future(srv.call(req)))`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::Future;
    /// use std::task::{Context, Poll, Waker};
    /// use combkey::{Comb, FaceKey};
    ///
    /// let key = FaceKey::from_hex("000102030405060708090a0b0c0d0e0f")?;
    /// let id = Comb::new();
    /// let mut fut = std::pin::pin!(key.clone().scope_future(async move { serde_json::to_string(&id) }));
    /// let Poll::Ready(json) = fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
    ///     unreachable!("nothing to wait for")
    /// };
    /// assert_eq!(json?, format!("\"{}\"", key.mask(id)?));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scope_future<F: core::future::Future>(self, fut: F) -> FaceScope<F> {
        FaceScope { key: self, fut: Box::pin(fut) }
    }
}

/// A future whose every poll runs inside [`FaceKey::scope`]; made by
/// [`FaceKey::scope_future`].
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "face", feature = "serde"))))]
#[must_use = "a future does nothing unless polled"]
pub struct FaceScope<F> {
    key: FaceKey,
    fut: core::pin::Pin<Box<F>>,
}

#[cfg(feature = "serde")]
impl<F> fmt::Debug for FaceScope<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FaceScope(..)")
    }
}

#[cfg(feature = "serde")]
impl<F: core::future::Future> core::future::Future for FaceScope<F> {
    type Output = F::Output;

    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> core::task::Poll<F::Output> {
        let this = &mut *self;
        let key = this.key.clone();
        key.scope(|| this.fut.as_mut().poll(cx))
    }
}

fn strip_0x(s: &str) -> &str {
    s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s)
}

impl FromStr for FaceKey {
    type Err = Error;

    /// As [`FaceKey::from_hex`].
    fn from_str(s: &str) -> Result<Self, Error> {
        FaceKey::from_hex(s)
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::{FaceKey, current};
    use crate::Comb;

    fn key(b: u8) -> FaceKey {
        FaceKey::from_bytes([b; 16])
    }

    #[test]
    fn scopes_nest_and_come_back_after_a_panic() {
        assert!(current().is_none());
        key(1).scope(|| {
            assert_eq!(current(), Some(key(1)));
            key(2).scope(|| assert_eq!(current(), Some(key(2))));
            assert_eq!(current(), Some(key(1)));
            let r = std::panic::catch_unwind(|| key(3).scope(|| panic!("in a handler")));
            assert!(r.is_err());
            assert_eq!(current(), Some(key(1)), "the panicking scope's key is gone");
        });
        assert!(current().is_none());
        // Another thread has no scope of its own.
        let elsewhere = key(1).scope(|| std::thread::spawn(|| current().is_none()).join().unwrap());
        assert!(elsewhere);
    }

    #[test]
    fn inside_a_scope_an_id_with_no_face_does_not_serialize_and_a_plain_id_does_not_deserialize() {
        let k = key(7);
        let v4 = Comb::new_v4();
        let err = k.scope(|| serde_json::to_string(&v4)).unwrap_err();
        assert!(err.to_string().contains("cannot show this id as a face: wrong UUID version"), "{err}");
        let id = Comb::new();
        let plain = serde_json::to_string(&id).unwrap();
        let err = k.scope(|| serde_json::from_str::<Comb>(&plain)).unwrap_err();
        assert!(err.to_string().contains("not a face: wrong UUID version: expected version 4"), "{err}");
        // A face of another key: told by its time.
        let other = k.scope(|| serde_json::to_string(&id)).unwrap();
        let err = key(8).scope(|| serde_json::from_str::<Comb>(&other)).unwrap_err();
        assert!(err.to_string().contains("not a face made with this key"), "{err}");
    }

    #[test]
    fn binary_formats_carry_the_face_bytes() {
        let k = key(9);
        let id = Comb::new();
        let bin = k.scope(|| bincode::serialize(&id)).unwrap();
        assert_eq!(&bin[8..], k.mask(id).unwrap().as_bytes());
        assert_eq!(k.scope(|| bincode::deserialize::<Comb>(&bin)).unwrap(), id);
        assert_eq!(bincode::deserialize::<Comb>(&bin).unwrap().version(), 4, "outside: the face as it is");
    }
}
