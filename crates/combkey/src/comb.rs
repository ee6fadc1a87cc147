//! The public id type.

use core::fmt;

use crate::bits;
use crate::error::{Detail, Error};
use crate::time::Timestamp;

/// A COMB: a 16-byte id in the public (RFC 9562) byte order.
///
/// This is the form the application, its API, its logs and its clients see. Its bytes
/// compare in creation order, and so does its lowercase string. The form a database column
/// holds can differ (SQL Server's `uniqueidentifier`, see [`Backend`](crate::Backend)); the
/// adapter crates convert both ways.
///
/// Byte order is always named: [`as_bytes`](Self::as_bytes) and
/// [`from_bytes`](Self::from_bytes) are the public (RFC 9562) order, the order of the
/// string; SQL Server's stored form has its own names
/// ([`to_sqlserver_bytes`](Self::to_sqlserver_bytes), and `_le` for Microsoft's
/// mixed-endian bytes).
///
/// The default kind, made by [`Comb::new`], is a UUIDv7 (RFC 9562 section 5.7), laid out as
/// the [`V7Generator`](crate::V7Generator) docs draw it:
///
/// ```text
///  017f22e2-79b0-7cc3-98c4-dc0c0c07398f      (RFC 9562, appendix A.6)
///  └──────────┘ │└─┘ │└┘└────────────┘
///  unix_ms      7 ctr v ctr  random
/// ```
///
/// ```
/// use combkey::Comb;
///
/// let id: Comb = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse()?;
/// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(id.version(), 7);
/// assert_eq!(id.unix_ms(), Some(1_645_557_742_000));
/// assert_eq!(id.as_bytes()[..6], [0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0]);
/// assert!(Comb::new() > id);
/// # Ok::<(), combkey::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Comb([u8; 16]);

/// Hashes as `uuid::Uuid` does, so a map keyed by ids is looked up by either type.
impl core::hash::Hash for Comb {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        uuid::Uuid::from_bytes_ref(&self.0).hash(state);
    }
}

impl Comb {
    /// The nil id, all zeros.
    pub const NIL: Comb = Comb([0; 16]);

    /// The max id, all ones (RFC 9562 section 5.10).
    pub const MAX: Comb = Comb([0xff; 16]);

    /// A fresh UUIDv7 COMB from the process-wide default generator.
    ///
    /// Strictly greater than every id this process made before with `Comb::new()`, on any
    /// thread. See [`V7Generator`](crate::V7Generator) for the layout and guarantees.
    ///
    /// ```
    /// let a = combkey::Comb::new();
    /// let b = combkey::Comb::new();
    /// assert!(a < b);
    /// ```
    #[allow(clippy::new_without_default)]
    // `Default` is the nil id, as for `uuid::Uuid`.
    // Not `#[inline]`: compiled here, the thread-local random state is one address; inlined
    // into another crate it is reached through an accessor call.
    #[inline(always)]
    pub fn new() -> Self {
        crate::v7::default_generator().generate()
    }

    /// The id with these 16 bytes, in public (RFC 9562) order.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// // RFC 9562's UUIDv7 example, as 16 bytes read from a BINARY(16) column.
    /// let id = Comb::from_bytes([
    ///     0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0, 0x7c, 0xc3, 0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f,
    /// ]);
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// ```
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Comb(bytes)
    }

    /// The id in a slice of exactly 16 bytes (a database or wire value).
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind};
    ///
    /// let err = Comb::from_slice(&[0u8; 15]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::ByteLength);
    /// assert_eq!(err.to_string(), "invalid UUID byte length: expected 16 bytes, found 15");
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Result<Self, Error> {
        <[u8; 16]>::try_from(bytes).map(Comb).map_err(|_| Error(Detail::ByteLength { found: bytes.len() }))
    }

    /// The 16 bytes in public (RFC 9562) order.
    ///
    /// # Examples
    ///
    /// ```
    /// let id: combkey::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// // The first six bytes are the Unix milliseconds, big-endian.
    /// assert_eq!(id.as_bytes()[..6], [0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0]);
    /// assert_eq!(id.as_bytes()[15], 0x8f);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The 16 bytes in public (RFC 9562) order, by value.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let id = Comb::new();
    /// let bytes: [u8; 16] = id.into_bytes(); // e.g. for a BINARY(16) or BLOB parameter
    /// assert_eq!(Comb::from_bytes(bytes), id);
    /// ```
    pub const fn into_bytes(self) -> [u8; 16] {
        self.0
    }

    /// The id read as a big-endian 128-bit integer (same order as the bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let id = Comb::from_u128(0x017f22e2_79b0_7cc3_98c4_dc0c0c07398f);
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// assert_eq!(Comb::from_u128(0), Comb::NIL);
    /// ```
    pub const fn from_u128(v: u128) -> Self {
        Comb(v.to_be_bytes())
    }

    /// The id as a big-endian 128-bit integer.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(id.as_u128(), 0x017f22e2_79b0_7cc3_98c4_dc0c0c07398f);
    /// // The number orders as the id does.
    /// assert_eq!(Comb::MAX.as_u128(), u128::MAX);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn as_u128(&self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// The version nibble (the first hex digit of the third group): 7 for the default kind,
    /// 8 for a short prefix COMB, 4 for a v4-labelled COMB.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ShortPrefix, Timestamp};
    ///
    /// assert_eq!(Comb::new().version(), 7);
    /// assert_eq!(Comb::new_v4().version(), 4);
    /// let short = ShortPrefix::default().make(Timestamp::UNIX_EPOCH, [0; 16]);
    /// assert_eq!(short.version(), 8);
    /// ```
    pub const fn version(&self) -> u8 {
        self.0[6] >> 4
    }

    /// Whether the variant bits are RFC 9562's (`10x`, the first hex digit of the fourth
    /// group is 8, 9, a or b).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert!(id.is_rfc_variant()); // the fourth group starts with 9
    /// // The nil id's variant bits are 00: not RFC 9562's.
    /// assert!(!Comb::NIL.is_rfc_variant());
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn is_rfc_variant(&self) -> bool {
        self.0[8] & 0xc0 == 0x80
    }

    /// The Unix time in milliseconds a UUIDv7 carries (bytes 0..6); `None` for other versions.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(id.unix_ms(), Some(1_645_557_742_000)); // 0x017f22e279b0
    /// // A random (v4) id carries no time.
    /// assert_eq!(Comb::new_v4().unix_ms(), None);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn unix_ms(&self) -> Option<i64> {
        match self.timestamp() {
            Some(t) => Some(t.unix_ms()),
            None => None,
        }
    }

    /// The time a UUIDv7 carries; `None` for other versions.
    ///
    /// ```
    /// let id: combkey::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(id.timestamp().unwrap().to_string(), "2022-02-22T19:22:22.000Z");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn timestamp(&self) -> Option<Timestamp> {
        if self.version() == 7 { Some(bits::read_unix_ms48(&self.0, 0)) } else { None }
    }

    /// The smallest UUIDv7 that can carry time `t`: for `WHERE id >= Comb::min_for(t)`.
    ///
    /// Fails for times before 1970 or after the 48-bit limit (year 10889).
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let t: Timestamp = "2022-02-22T19:22:22Z".parse()?;
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert!(Comb::min_for(t)? <= id && id <= Comb::max_for(t)?);
    /// assert_eq!(Comb::min_for(t)?.to_string(), "017f22e2-79b0-7000-8000-000000000000");
    /// assert_eq!(Comb::max_for(t)?.to_string(), "017f22e2-79b0-7fff-bfff-ffffffffffff");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn min_for(t: Timestamp) -> Result<Self, Error> {
        Ok(Self::from_v7_parts(bits::unix_ms48(t)?, 0, 0))
    }

    /// The largest UUIDv7 that can carry time `t`: for `WHERE id <= Comb::max_for(t)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, Timestamp};
    ///
    /// let t: Timestamp = "2022-02-22T19:22:22Z".parse()?;
    /// // Every counter and random bit set.
    /// assert_eq!(Comb::max_for(t)?.to_string(), "017f22e2-79b0-7fff-bfff-ffffffffffff");
    /// assert!(Comb::max_for(t)? < Comb::min_for(t.saturating_add_ms(1))?);
    /// // No v7 id carries a time before 1970.
    /// let err = Comb::max_for(Timestamp::from_unix_ms(-1)).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::OutOfRange);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn max_for(t: Timestamp) -> Result<Self, Error> {
        Ok(Self::from_v7_parts(bits::unix_ms48(t)?, u16::MAX, u64::MAX))
    }

    /// A UUIDv7 from its parts: the 48-bit Unix milliseconds, the 16-bit counter (12 bits in
    /// `rand_a`, 4 after the variant) and 58 bits of `rand_b` (the low 58 bits of `random`).
    ///
    /// `unix_ms` above 48 bits is truncated to its low 48 bits.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let id = Comb::from_v7_parts(1_645_557_742_000, 0, 0);
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7000-8000-000000000000");
    /// assert_eq!(Some(id), Comb::min_for(Timestamp::from_unix_ms(1_645_557_742_000)).ok());
    ///
    /// let id = Comb::from_v7_parts(1_645_557_742_000, 0xabcd, 0x2a);
    /// assert_eq!((id.version(), id.v7_counter(), id.unix_ms()), (7, 0xabcd, Some(1_645_557_742_000)));
    /// ```
    pub const fn from_v7_parts(unix_ms: u64, counter: u16, random: u64) -> Self {
        Comb::from_u128(v7_u128(unix_ms, counter, random))
    }

    /// The 16-bit counter of a UUIDv7 made by this crate (see [`Comb::from_v7_parts`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{FixedClock, Timestamp, V7Generator};
    ///
    /// // Ids made in the same millisecond count up.
    /// let generator = V7Generator::with_clock(FixedClock::new(Timestamp::from_unix_ms(1_645_557_742_000)));
    /// let a = generator.generate();
    /// let b = generator.generate();
    /// assert_eq!(a.unix_ms(), b.unix_ms());
    /// assert_eq!(b.v7_counter(), a.v7_counter() + 1);
    /// ```
    pub const fn v7_counter(&self) -> u16 {
        let b = &self.0;
        (((b[6] & 0x0f) as u16) << 12) | ((b[7] as u16) << 4) | (((b[8] >> 2) & 0x0f) as u16)
    }

    /// Sets the version nibble and the RFC variant bits, keeping every other bit.
    pub(crate) const fn with_version(mut self, version: u8) -> Self {
        self.0[6] = (self.0[6] & 0x0f) | (version << 4);
        self.0[8] = (self.0[8] & 0x3f) | 0x80;
        self
    }
}

/// [`Comb::from_v7_parts`] as a big-endian number: two 64-bit words, not sixteen byte stores
/// (the generator's hot path).
#[inline]
pub(crate) const fn v7_u128(unix_ms: u64, counter: u16, random: u64) -> u128 {
    // High word: unix_ms (low 48 bits), version 7, the counter's top 12 bits.
    let high = (unix_ms << 16) | 0x7000 | (counter as u64 >> 4);
    // Low word: variant 10, the counter's low 4 bits, then 58 random bits (the low 58 bits of
    // `random`).
    let low = (0b10 << 62) | ((counter as u64 & 0x0f) << 58) | (random & 0x03ff_ffff_ffff_ffff);
    ((high as u128) << 64) | low as u128
}

impl fmt::Display for Comb {
    /// The canonical form: lowercase, hyphenated (`017f22e2-79b0-7cc3-98c4-dc0c0c07398f`).
    /// With `{:#}`, uppercase. Width and precision are ignored, as `uuid::Uuid` ignores them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        let text = uuid::Uuid::from_bytes(self.0).hyphenated();
        f.write_str(if f.alternate() { text.encode_upper(&mut buf) } else { text.encode_lower(&mut buf) })
    }
}

impl fmt::Debug for Comb {
    /// As `uuid::Uuid` prints in `Debug`: lowercase, hyphenated, also with `{:#?}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        f.write_str(uuid::Uuid::from_bytes(self.0).hyphenated().encode_lower(&mut buf))
    }
}

impl fmt::LowerHex for Comb {
    /// 32 lowercase hex digits, no hyphens.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; uuid::fmt::Simple::LENGTH];
        f.pad(uuid::Uuid::from_bytes(self.0).simple().encode_lower(&mut buf))
    }
}

impl fmt::UpperHex for Comb {
    /// 32 uppercase hex digits, no hyphens: what MySQL's `HEX(id)` shows for a `BINARY(16)`.
    ///
    /// ```
    /// let id: combkey::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?;
    /// assert_eq!(format!("{id:X}"), "017F22E279B07CC398C4DC0C0C07398F");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; uuid::fmt::Simple::LENGTH];
        f.pad(uuid::Uuid::from_bytes(self.0).simple().encode_upper(&mut buf))
    }
}

impl From<uuid::Uuid> for Comb {
    fn from(u: uuid::Uuid) -> Self {
        Comb(u.into_bytes())
    }
}

impl From<Comb> for uuid::Uuid {
    fn from(c: Comb) -> Self {
        uuid::Uuid::from_bytes(c.0)
    }
}

/// The id's `uuid::Uuid` view: every method of `uuid::Uuid` works on a `Comb` (and on every
/// adapter's column type, which derefs to `Comb`), so code written for `uuid::Uuid` keeps
/// compiling when only the type changes.
///
/// # Why `Deref`, and what it costs
///
/// Rust's API guidelines keep `Deref` for smart pointers (C-DEREF), and this is a decision
/// against them, made for 0.1 on purpose: combkey's promise is that an application swaps
/// `uuid::Uuid` for a combkey type and changes nothing else, and such code calls `uuid::Uuid`'s
/// methods (`as_bytes`, `hyphenated`, `get_version_num`, `simple`, `to_u128_le`, ...) on its
/// ids everywhere. Wrapping each of those by hand would be a second copy of `uuid`'s API that
/// falls behind every `uuid` release. The costs, accepted with it:
///
/// - `uuid::Uuid`'s methods are part of this type's API: a method `uuid` 1.x adds is callable
///   on a `Comb` too, and `uuid` 2 would change this type's API (a new major of `combkey`,
///   see the crate's "Versions" section).
/// - A method of `Comb` shadows `uuid::Uuid`'s of the same name. Where they mean something
///   else it is documented on the method ([`Comb::new`] makes a v7 id, where `Uuid::new`
///   does not exist; [`Comb::now_v7`] matches `Uuid::now_v7`).
/// - Generic code bounded on `Deref<Target = uuid::Uuid>` accepts a `Comb`; that is intended.
///
/// Conversions by value stay explicit (`From`/`Into` both ways, `AsRef<uuid::Uuid>`,
/// `Borrow<uuid::Uuid>`), so code that wants no `Deref` can use those alone.
///
/// ```
/// let id = combkey::Comb::new();
/// assert_eq!(id.get_version_num(), 7);
/// assert!(!id.is_nil());
/// assert_eq!(id.hyphenated().to_string(), id.to_string());
/// assert_eq!(id.as_bytes(), uuid::Uuid::from(id).as_bytes());
/// ```
impl core::ops::Deref for Comb {
    type Target = uuid::Uuid;

    fn deref(&self) -> &uuid::Uuid {
        uuid::Uuid::from_bytes_ref(&self.0)
    }
}

impl AsRef<uuid::Uuid> for Comb {
    fn as_ref(&self) -> &uuid::Uuid {
        self
    }
}

impl PartialOrd<uuid::Uuid> for Comb {
    fn partial_cmp(&self, other: &uuid::Uuid) -> Option<core::cmp::Ordering> {
        Some(self.0.cmp(other.as_bytes()))
    }
}

impl PartialOrd<Comb> for uuid::Uuid {
    fn partial_cmp(&self, other: &Comb) -> Option<core::cmp::Ordering> {
        Some(self.as_bytes().cmp(&other.0))
    }
}

/// A map keyed by `Comb` is looked up by a `uuid::Uuid` too: both hash and compare their 16
/// bytes the same way.
impl core::borrow::Borrow<uuid::Uuid> for Comb {
    fn borrow(&self) -> &uuid::Uuid {
        self
    }
}

impl From<Comb> for String {
    fn from(id: Comb) -> Self {
        id.to_string()
    }
}

impl From<Comb> for Vec<u8> {
    fn from(id: Comb) -> Self {
        id.0.to_vec()
    }
}

impl PartialEq<uuid::Uuid> for Comb {
    fn eq(&self, other: &uuid::Uuid) -> bool {
        self.0 == *other.as_bytes()
    }
}

impl PartialEq<Comb> for uuid::Uuid {
    fn eq(&self, other: &Comb) -> bool {
        *self.as_bytes() == other.0
    }
}

impl TryFrom<&str> for Comb {
    type Error = Error;

    fn try_from(s: &str) -> Result<Self, Error> {
        s.parse()
    }
}

impl TryFrom<String> for Comb {
    type Error = Error;

    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

/// The associated functions of `uuid::Uuid` that code written for it calls, so that
/// `Uuid::now_v7()` becomes `Comb::now_v7()` and nothing else changes.
impl Comb {
    /// The nil id (`uuid::Uuid::nil`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// assert_eq!(Comb::nil(), Comb::NIL);
    /// assert_eq!(Comb::nil().to_string(), "00000000-0000-0000-0000-000000000000");
    /// assert_eq!(Comb::nil(), Comb::default());
    /// ```
    pub const fn nil() -> Self {
        Comb::NIL
    }

    /// The max id, all ones (`uuid::Uuid::max`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// assert_eq!(Comb::max().to_string(), "ffffffff-ffff-ffff-ffff-ffffffffffff");
    /// assert!(Comb::new() < Comb::max());
    /// ```
    pub const fn max() -> Self {
        Comb::MAX
    }

    /// A fresh UUIDv7 COMB on the exact clock, as `uuid::Uuid::now_v7` reads it: strictly
    /// increasing among the ids this function makes in the process. [`Comb::new`] reads the
    /// kernel's coarse clock instead (faster, up to one tick, 1-10 ms, behind), so where
    /// other writers make v7 ids for the same table (a service still on `uuid::Uuid`, a
    /// database's `uuidv7()`), `now_v7` keeps `ORDER BY id` closest to their order.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let before = Timestamp::now();
    /// let a = Comb::now_v7();
    /// let b = Comb::now_v7();
    /// let after = Timestamp::now();
    /// assert!(a < b);
    /// assert_eq!(a.version(), 7);
    /// let t = a.timestamp().unwrap();
    /// assert!(before <= t && t <= after);
    /// ```
    #[inline(always)]
    pub fn now_v7() -> Self {
        crate::v7::exact_generator().generate()
    }

    /// A random (version 4) UUID, as `uuid::Uuid::new_v4` makes: 122 random bits from
    /// [`ThreadRandom`](crate::ThreadRandom), a thread-local ChaCha8 generator keyed from the
    /// operating system (and keyed again after every 64 KiB and in a forked child). It does
    /// not sort by time; for a new key use
    /// [`Comb::new`]. There for code that calls `Uuid::new_v4()` and swaps its type first.
    ///
    /// ```
    /// let id = combkey::Comb::new_v4();
    /// assert_eq!((id.version(), id.is_rfc_variant()), (4, true));
    /// ```
    pub fn new_v4() -> Self {
        let mut b = [0u8; 16];
        crate::RandomSource::fill_bytes(&crate::ThreadRandom, &mut b);
        Comb(b).with_version(4)
    }

    /// Parses any of the usual text forms (`uuid::Uuid::try_parse`).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind};
    ///
    /// let id = Comb::try_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")?;
    /// assert_eq!(Comb::try_parse("{017F22E2-79B0-7CC3-98C4-DC0C0C07398F}")?, id);
    /// assert_eq!(Comb::try_parse("urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f")?, id);
    /// assert_eq!(Comb::try_parse("017f22e2").unwrap_err().kind(), ErrorKind::Parse);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn try_parse(input: &str) -> Result<Self, Error> {
        input.parse()
    }

    /// The id as a `uuid::Uuid`.
    ///
    /// # Examples
    ///
    /// ```
    /// let id = combkey::Comb::new();
    /// let u: uuid::Uuid = id.to_uuid();
    /// assert_eq!(u.get_version_num(), 7);
    /// assert_eq!(u.to_string(), id.to_string());
    /// ```
    pub const fn to_uuid(self) -> uuid::Uuid {
        uuid::Uuid::from_bytes(self.0)
    }
}

impl From<[u8; 16]> for Comb {
    fn from(b: [u8; 16]) -> Self {
        Comb(b)
    }
}

impl From<Comb> for [u8; 16] {
    fn from(c: Comb) -> Self {
        c.0
    }
}

impl TryFrom<&[u8]> for Comb {
    type Error = Error;

    fn try_from(b: &[u8]) -> Result<Self, Error> {
        Comb::from_slice(b)
    }
}

impl AsRef<[u8]> for Comb {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9562_v7_vector() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        assert_eq!(id.version(), 7);
        assert!(id.is_rfc_variant());
        assert_eq!(id.unix_ms(), Some(1_645_557_742_000));
        assert_eq!(uuid::Uuid::from(id).get_version_num(), 7);
    }

    #[test]
    fn v7_parts_round_trip_and_order() {
        let a = Comb::from_v7_parts(1_645_557_742_000, 0xabcd, 0x0123_4567_89ab_cdef);
        assert_eq!((a.version(), a.is_rfc_variant()), (7, true));
        assert_eq!(a.unix_ms(), Some(1_645_557_742_000));
        assert_eq!(a.v7_counter(), 0xabcd);
        assert_eq!(uuid::Uuid::from(a).get_version(), Some(uuid::Version::SortRand));
        // Counter order is byte order within one millisecond, across the variant bits.
        let mut prev = Comb::from_v7_parts(7, 0, u64::MAX);
        for c in 1..=u16::MAX {
            let next = Comb::from_v7_parts(7, c, 0);
            assert!(next > prev, "counter {c}");
            prev = Comb::from_v7_parts(7, c, u64::MAX);
        }
    }

    #[test]
    fn formats() {
        let id = Comb::from_u128(0x017f22e2_79b0_7cc3_98c4_dc0c0c07398f);
        assert_eq!(format!("{id}"), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(format!("{id:#}"), "017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
        assert_eq!(format!("{id:?}"), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(format!("{id:x}"), "017f22e279b07cc398c4dc0c0c07398f");
        assert_eq!(format!("{id:X}"), "017F22E279B07CC398C4DC0C0C07398F");
        assert_eq!(id.to_string(), uuid::Uuid::from(id).to_string());
        // As uuid::Uuid: width and precision ignored, Debug lower case also with {:#?}.
        let u = uuid::Uuid::from(id);
        assert_eq!(format!("[{id:>38}] [{id:.8}] [{id:#?}]"), format!("[{u:>38}] [{u:.8}] [{u:#?}]"));
        assert_eq!(format!("{id:#?}"), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    }

    #[test]
    fn string_order_is_byte_order() {
        let r = crate::SeededRandom::new(9);
        use crate::RandomSource;
        for _ in 0..10_000 {
            let a = Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64()));
            let b = Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64()));
            assert_eq!(a.cmp(&b), a.to_string().cmp(&b.to_string()), "{a} vs {b}");
        }
    }

    #[test]
    fn min_max_for_reject_out_of_range() {
        let err = Comb::min_for(Timestamp::from_unix_ms(-1)).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::OutOfRange);
        assert!(err.to_string().contains("found -1"), "{err}");
        assert!(Comb::max_for(Timestamp::from_unix_ms(1 << 48)).is_err());
        assert!(Comb::max_for(Timestamp::from_unix_ms((1 << 48) - 1)).is_ok());
    }

    #[test]
    fn slices() {
        assert_eq!(Comb::from_slice(&[1u8; 16]), Ok(Comb::from_bytes([1; 16])));
        for n in [0usize, 15, 17, 36] {
            let e = Comb::from_slice(&vec![0u8; n]).unwrap_err();
            assert_eq!(e.to_string(), format!("invalid UUID byte length: expected 16 bytes, found {n}"));
        }
    }
}
