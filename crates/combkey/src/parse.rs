//! Text to [`Comb`].

use core::str::FromStr;

use crate::comb::Comb;
use crate::error::{Detail, Error};

impl FromStr for Comb {
    type Err = Error;

    /// Parses any of the usual UUID text forms, in any case:
    ///
    /// | form | example |
    /// | --- | --- |
    /// | hyphenated | `017f22e2-79b0-7cc3-98c4-dc0c0c07398f` |
    /// | simple (32 hex digits, MySQL's `HEX()`) | `017F22E279B07CC398C4DC0C0C07398F` |
    /// | braced | `{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}` |
    /// | URN | `urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f` |
    ///
    /// Anything else is an [`ErrorKind::Parse`](crate::ErrorKind::Parse) error saying what
    /// was wrong and where:
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// let err = "017f22e2-79b0-7cc3-98c4-dc0c0c07398g".parse::<Comb>().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid character 'g' at position 35: expected a hex digit (0-9, a-f, A-F)"
    /// );
    /// ```
    fn from_str(s: &str) -> Result<Self, Error> {
        parse_bytes(s).map(Comb::from_bytes)
    }
}

impl Comb {
    /// Parses text as [`FromStr`] does (hyphenated, simple, braced, URN; any case).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::Comb;
    ///
    /// // MySQL's HEX(id) of a BINARY(16) column: 32 hex digits, no hyphens.
    /// let id = Comb::parse_str("017F22E279B07CC398C4DC0C0C07398F")?;
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn parse_str(s: &str) -> Result<Self, Error> {
        s.parse()
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The character of `s` that contains byte `offset + index`, with its character position.
fn bad_char(s: &str, offset: usize, index: usize) -> Error {
    let pos = offset + index;
    let (index, ch) = s
        .char_indices()
        .enumerate()
        .take_while(|(_, (i, _))| *i <= pos)
        .last()
        .map_or((0, char::REPLACEMENT_CHARACTER), |(n, (_, c))| (n, c));
    Error(Detail::ParseChar { ch, index })
}

/// The 16 bytes of UUID text in any accepted form, in the order the text shows them.
pub(crate) fn parse_bytes(s: &str) -> Result<[u8; 16], Error> {
    // No accepted form has a non-ASCII character: name the first one, wherever it is.
    if let Some((index, ch)) = s.chars().enumerate().find(|(_, c)| !c.is_ascii()) {
        return Err(Error(Detail::ParseChar { ch, index }));
    }
    let b = s.as_bytes();
    let (body, offset) = match b.len() {
        32 | 36 => (b, 0),
        38 => {
            if b[0] != b'{' || b[37] != b'}' {
                return Err(Error(Detail::ParseBrace));
            }
            (&b[1..37], 1)
        }
        45 if b[..9].eq_ignore_ascii_case(b"urn:uuid:") => (&b[9..], 9),
        45 => return Err(Error(Detail::ParseUrn)),
        len => {
            return Err(Error(Detail::ParseLength { len }));
        }
    };
    let mut out = [0u8; 16];
    if body.len() == 32 {
        for (i, pair) in body.chunks_exact(2).enumerate() {
            let hi = hex_val(pair[0]).ok_or_else(|| bad_char(s, offset, 2 * i))?;
            let lo = hex_val(pair[1]).ok_or_else(|| bad_char(s, offset, 2 * i + 1))?;
            out[i] = (hi << 4) | lo;
        }
        return Ok(out);
    }
    // Hyphenated: groups of 8-4-4-4-12 hex digits.
    const GROUPS: [(usize, usize); 5] = [(0, 8), (9, 13), (14, 18), (19, 23), (24, 36)];
    let mut k = 0;
    for (g, &(start, end)) in GROUPS.iter().enumerate() {
        let mut i = start;
        while i < end {
            let c = body[i];
            if c == b'-' {
                let group_start = GROUPS[g].0;
                return Err(Error(Detail::ParseGroup { group: g + 1, expected: end - start, found: i - group_start }));
            }
            let hi = hex_val(c).ok_or_else(|| bad_char(s, offset, i))?;
            let lo = match body[i + 1] {
                b'-' => {
                    return Err(Error(Detail::ParseGroup {
                        group: g + 1,
                        expected: end - start,
                        found: i + 1 - start,
                    }));
                }
                c => hex_val(c).ok_or_else(|| bad_char(s, offset, i + 1))?,
            };
            out[k] = (hi << 4) | lo;
            k += 1;
            i += 2;
        }
        if end < 36 && body[end] != b'-' {
            return match hex_val(body[end]) {
                // A digit where the hyphen should be: the group is too long.
                Some(_) => {
                    let mut len = end - start;
                    while start + len < body.len() && body[start + len] != b'-' {
                        len += 1;
                    }
                    Err(Error(Detail::ParseGroup { group: g + 1, expected: end - start, found: len }))
                }
                None => Err(bad_char(s, offset, end)),
            };
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::{Comb, ErrorKind};

    const ID: u128 = 0x017f22e2_79b0_7cc3_98c4_dc0c0c07398f;

    #[test]
    fn accepted_forms() {
        for s in [
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
            "017f22e279b07cc398c4dc0c0c07398f",
            "017F22E279B07CC398C4DC0C0C07398F",
            "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
            "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "URN:UUID:017F22E2-79b0-7cc3-98c4-dc0c0c07398f",
        ] {
            assert_eq!(s.parse::<Comb>(), Ok(Comb::from_u128(ID)), "{s}");
        }
    }

    /// Each rejected string and the message it gets: the messages are the contract.
    #[test]
    fn rejected_strings() {
        let cases: &[(&str, &str)] = &[
            (
                "",
                "invalid UUID length: expected 32 hex digits, 36 (hyphenated), 38 (braced) or 45 (urn:uuid:) characters, found 0",
            ),
            (
                "017f22e2-79b0-7cc3-98c4",
                "invalid UUID length: expected 32 hex digits, 36 (hyphenated), 38 (braced) or 45 (urn:uuid:) characters, found 23",
            ),
            (
                "017f22e2-79b0-7cc3-98c4-dc0c0c07398f0",
                "invalid UUID length: expected 32 hex digits, 36 (hyphenated), 38 (braced) or 45 (urn:uuid:) characters, found 37",
            ),
            (
                "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",
                "invalid character 'g' at position 35: expected a hex digit (0-9, a-f, A-F)",
            ),
            (
                "017f22e279b07cc398c4dc0c0c07398z",
                "invalid character 'z' at position 31: expected a hex digit (0-9, a-f, A-F)",
            ),
            (
                "017f22e2-79b0-7cc3-98c4_dc0c0c07398f",
                "invalid character '_' at position 23: expected a hex digit (0-9, a-f, A-F)",
            ),
            (
                "017f22e279-b0-7cc3-98c4-dc0c0c07398f",
                "invalid group 1 in hyphenated UUID: expected 8 hex digits, found 10",
            ),
            (
                "017f22-e279b0-7cc3-98c4-dc0c0c07398f",
                "invalid group 1 in hyphenated UUID: expected 8 hex digits, found 6",
            ),
            (
                "017f22e2-79b-07cc3-98c4-dc0c0c07398f",
                "invalid group 2 in hyphenated UUID: expected 4 hex digits, found 3",
            ),
            (
                "(017f22e2-79b0-7cc3-98c4-dc0c0c07398f)",
                "invalid braced UUID: expected `{` and `}` around 36 characters",
            ),
            (
                "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f]",
                "invalid braced UUID: expected `{` and `}` around 36 characters",
            ),
            (
                "urn:uid:0017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
                "invalid URN: expected `urn:uuid:` followed by 36 characters",
            ),
            (
                "017f22e2-79b0-7cc3-98c4-dc0c0c07398é",
                "invalid character 'é' at position 35: expected a hex digit (0-9, a-f, A-F)",
            ),
            (
                "ü17f22e279b07cc398c4dc0c0c07398f",
                "invalid character 'ü' at position 0: expected a hex digit (0-9, a-f, A-F)",
            ),
            (
                " 017f22e2-79b0-7cc3-98c4-dc0c0c07398",
                "invalid character ' ' at position 0: expected a hex digit (0-9, a-f, A-F)",
            ),
            (
                "017f22e2+79b0+7cc3+98c4+dc0c0c07398f",
                "invalid character '+' at position 8: expected a hex digit (0-9, a-f, A-F)",
            ),
        ];
        for (input, message) in cases {
            let err = input.parse::<Comb>().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse, "{input}");
            assert_eq!(err.to_string(), *message, "{input}");
        }
    }

    #[test]
    fn never_panics_on_mangled_input() {
        // Every truncation, and every single-character replacement with an awkward character.
        let base = "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}";
        for end in 0..=base.len() {
            let _ = base[..end].parse::<Comb>();
            let _ = base[end..].parse::<Comb>();
        }
        for i in 0..base.len() {
            for c in ["-", "{", "é", "\0", "€", "g", " "] {
                let s = format!("{}{}{}", &base[..i], c, &base[i + 1..]);
                let _ = s.parse::<Comb>();
                let _ = s.get(1..).map(str::parse::<Comb>);
            }
        }
    }

    #[test]
    fn agrees_with_uuid_crate_on_random_hyphenated() {
        use crate::RandomSource;
        let r = crate::SeededRandom::new(5);
        for _ in 0..1000 {
            let v = (u128::from(r.next_u64()) << 64) | u128::from(r.next_u64());
            let u = uuid::Uuid::from_u128(v);
            for s in [u.hyphenated().to_string(), u.simple().to_string(), u.braced().to_string(), u.urn().to_string()] {
                assert_eq!(s.parse::<Comb>(), Ok(Comb::from_u128(v)));
                assert_eq!(s.to_uppercase().parse::<Comb>(), Ok(Comb::from_u128(v)));
            }
        }
    }
}
