//! The one public error type.

use core::fmt;

use std::borrow::Cow;

use crate::time::Timestamp;

/// What went wrong, without the details.
///
/// [`Error::kind`] returns one of these so a caller can branch on the kind of failure
/// (for example to map a validation failure to an HTTP status) while the error's
/// [`Display`](fmt::Display) text carries what was expected and what was found.
///
/// ```
/// use combkey::{Comb, ErrorKind};
///
/// let err = "not-a-uuid".parse::<Comb>().unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Parse);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A string is not a UUID in any accepted form.
    Parse,
    /// A byte slice (a database value, a wire value) does not hold exactly 16 bytes.
    ByteLength,
    /// The id's version nibble is not the one expected.
    Version,
    /// The id's variant bits are not the RFC 9562 variant (`10x`).
    Variant,
    /// The time the id carries is further in the past than the validation window allows.
    TooOld,
    /// The time the id carries is further in the future than the validation window allows.
    TooNew,
    /// A time or a setting is outside the range a layout can represent.
    OutOfRange,
    /// A generator or validator setting is not usable (a zero interval, a prefix width of 7).
    Config,
    /// No lossless conversion exists between the two layouts, or the id lacks what one needs.
    Conversion,
    /// A database `NULL` where an id is required.
    Null,
    /// A database value of a type that cannot hold an id (a number, a date).
    ColumnType,
}

/// The error type of every fallible operation in this crate.
///
/// Opaque on purpose: use [`Error::kind`] to branch and the `Display` text to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub(crate) Detail);

/// What exactly went wrong: the private detail behind an [`Error`], with the values its
/// message shows. Each maps to one public [`ErrorKind`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Length of the whole string is not one of the accepted forms.
    ParseLength {
        len: usize,
    },
    /// A character that is not a hex digit where one was expected.
    ParseChar {
        ch: char,
        index: usize,
    },
    /// A hyphen is missing or misplaced in the hyphenated form.
    ParseGroup {
        group: usize,
        expected: usize,
        found: usize,
    },
    /// `{` without `}` and the like.
    ParseBrace,
    /// 45 characters that do not start with `urn:uuid:`.
    ParseUrn,
    ByteLength {
        found: usize,
    },
    /// A binary column holding what looks like UUID text.
    BinaryHoldsText {
        found: usize,
    },
    /// Neither 16 bytes nor the length of UUID text.
    BinaryOrTextLength {
        found: usize,
    },
    /// A NULL where an id is required.
    UnexpectedNull,
    /// A database value of a type no id is stored as.
    WrongColumnType {
        found: String,
    },
    /// A text column whose value is not UTF-8.
    TextNotUtf8,
    Version {
        expected: u8,
        found: u8,
    },
    Variant {
        found: u8,
    },
    TooOld {
        found: Timestamp,
        earliest: Timestamp,
    },
    TooNew {
        found: Timestamp,
        latest: Timestamp,
    },
    PrefixTooOld {
        prefix: u32,
        behind: u64,
        allowed: u64,
        interval_ms: u64,
    },
    PrefixTooNew {
        prefix: u32,
        ahead: u64,
        allowed: u64,
        interval_ms: u64,
    },
    OutOfRange {
        what: &'static str,
        value: String,
        range: &'static str,
    },
    Config {
        what: &'static str,
        value: String,
        expected: Cow<'static, str>,
    },
    /// No lossless conversion between two layouts; `within` lists the families, built from
    /// the layout registry.
    #[cfg_attr(not(feature = "layouts"), allow(dead_code))]
    NotLossless {
        from: &'static str,
        to: &'static str,
        within: String,
    },
    #[cfg_attr(not(feature = "layouts"), allow(dead_code))]
    NotLosslessBase {
        layout: &'static str,
        version: u8,
    },
    /// A v7 id asked for the key of another layout it was converted from, where there is none.
    #[cfg_attr(not(feature = "layouts"), allow(dead_code))]
    NotConvertedFrom {
        layout: &'static str,
        id: String,
        why: &'static str,
    },
    /// A layout whose keys have no v7 form.
    #[cfg_attr(not(feature = "layouts"), allow(dead_code))]
    NoV7Form {
        layout: &'static str,
    },
    /// A face that unmasks to a time past the clock: made with another key, or no face.
    #[cfg_attr(not(feature = "face"), allow(dead_code))]
    NotThisFaceKey {
        found: Timestamp,
        latest: Timestamp,
    },
}

impl Error {
    /// The kind of failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind};
    ///
    /// // A client sent something that is no id: a 400, not a 500.
    /// let err = Comb::try_parse("42").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Parse);
    /// assert_eq!(Comb::from_slice(&[0; 4]).unwrap_err().kind(), ErrorKind::ByteLength);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self.0 {
            Detail::ParseLength { .. }
            | Detail::ParseChar { .. }
            | Detail::ParseGroup { .. }
            | Detail::ParseBrace
            | Detail::ParseUrn => ErrorKind::Parse,
            Detail::ByteLength { .. } | Detail::BinaryHoldsText { .. } | Detail::BinaryOrTextLength { .. } => {
                ErrorKind::ByteLength
            }
            Detail::TextNotUtf8 => ErrorKind::Parse,
            Detail::UnexpectedNull => ErrorKind::Null,
            Detail::WrongColumnType { .. } => ErrorKind::ColumnType,
            Detail::Version { .. } => ErrorKind::Version,
            Detail::Variant { .. } => ErrorKind::Variant,
            Detail::TooOld { .. } | Detail::PrefixTooOld { .. } => ErrorKind::TooOld,
            Detail::TooNew { .. } | Detail::PrefixTooNew { .. } | Detail::NotThisFaceKey { .. } => ErrorKind::TooNew,
            Detail::OutOfRange { .. } => ErrorKind::OutOfRange,
            Detail::Config { .. } => ErrorKind::Config,
            Detail::NotLossless { .. }
            | Detail::NotLosslessBase { .. }
            | Detail::NotConvertedFrom { .. }
            | Detail::NoV7Form { .. } => ErrorKind::Conversion,
        }
    }

    pub(crate) fn out_of_range(what: &'static str, value: impl fmt::Display, range: &'static str) -> Self {
        Error(Detail::OutOfRange { what, value: value.to_string(), range })
    }

    pub(crate) fn config(what: &'static str, value: impl fmt::Display, expected: impl Into<Cow<'static, str>>) -> Self {
        Error(Detail::Config { what, value: value.to_string(), expected: expected.into() })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Detail::ParseLength { len } => write!(
                f,
                "invalid UUID length: expected 32 hex digits, 36 (hyphenated), 38 (braced) or \
                 45 (urn:uuid:) characters, found {len}"
            ),
            Detail::ParseChar { ch, index } => {
                write!(f, "invalid character {ch:?} at position {index}: expected a hex digit (0-9, a-f, A-F)")
            }
            Detail::ParseGroup { group, expected, found } => {
                write!(f, "invalid group {group} in hyphenated UUID: expected {expected} hex digits, found {found}")
            }
            Detail::ParseBrace => f.write_str("invalid braced UUID: expected `{` and `}` around 36 characters"),
            Detail::ParseUrn => f.write_str("invalid URN: expected `urn:uuid:` followed by 36 characters"),
            Detail::ByteLength { found } => {
                write!(f, "invalid UUID byte length: expected 16 bytes, found {found}")
            }
            Detail::BinaryHoldsText { found } => write!(
                f,
                "invalid UUID byte length: expected 16 bytes in a binary column, found {found}: this looks like \
                 UUID text stored in a binary column (convert it with UNHEX(REPLACE(col, '-', '')))"
            ),
            Detail::BinaryOrTextLength { found } => write!(
                f,
                "invalid UUID value: expected 16 bytes or UUID text (32 to 45 characters), found {found} bytes"
            ),
            Detail::UnexpectedNull => {
                f.write_str("unexpected NULL: expected an id; read a nullable column into an Option of the id type")
            }
            Detail::WrongColumnType { found } => {
                write!(f, "invalid id value: expected 16 bytes (a binary column) or UUID text, found {found}")
            }
            Detail::TextNotUtf8 => f.write_str("invalid UUID text: the column value is not UTF-8"),
            Detail::Version { expected, found } => {
                write!(f, "wrong UUID version: expected version {expected:x}, found version {found:x}")
            }
            Detail::Variant { found } => write!(
                f,
                "wrong UUID variant: expected the RFC 9562 variant (top bits 10), found top bits {:02b}",
                found >> 6
            ),
            Detail::TooOld { found, earliest } => {
                write!(f, "id is too old: it carries {found}, the earliest time accepted is {earliest}")
            }
            Detail::TooNew { found, latest } => {
                write!(f, "id is too far in the future: it carries {found}, the latest time accepted is {latest}")
            }
            Detail::PrefixTooOld { prefix, behind, allowed, interval_ms } => write!(
                f,
                "id is too old: its prefix {prefix:#06x} is {behind} intervals of {interval_ms} ms \
                 behind the clock, at most {allowed} accepted"
            ),
            Detail::PrefixTooNew { prefix, ahead, allowed, interval_ms } => write!(
                f,
                "id is too far in the future: its prefix {prefix:#06x} is {ahead} intervals of \
                 {interval_ms} ms ahead of the clock, at most {allowed} accepted"
            ),
            Detail::OutOfRange { what, value, range } => {
                write!(f, "{what} out of range: expected {range}, found {value}")
            }
            Detail::Config { what, value, expected } => {
                write!(f, "invalid {what}: expected {expected}, found {value}")
            }
            Detail::NotLossless { from, to, within } => {
                write!(f, "no lossless conversion from {from} to {to}: conversions exist {within}")
            }
            Detail::NotLosslessBase { layout, version } => write!(
                f,
                "cannot convert this {layout} id without loss: expected a version 4 base GUID with the RFC variant \
                 (as Guid.NewGuid() makes), found version {version:x}"
            ),
            Detail::NotConvertedFrom { layout, id, why } => {
                write!(f, "no {layout} key converts to {id}: {why}")
            }
            Detail::NoV7Form { layout } => write!(
                f,
                "{layout} keys have no v7 form: they carry an interval that wraps, not an instant (they stay short \
                 prefix COMBs)"
            ),
            Detail::NotThisFaceKey { found, latest } => write!(
                f,
                "not a face made with this key: it unmasks to {found}, later than {latest} (a face from another \
                 key, or a v4 id that is no face, unmasks to an arbitrary time)"
            ),
        }
    }
}

impl std::error::Error for Error {}
