//! Bit packing shared by every layout: 48-bit Unix milliseconds at a byte offset, v1's
//! 60-bit Gregorian 100-ns ticks (in `gregorian.rs`, for the layouts that use them), and
//! the one range check of each.
//!
//! Every layout in this crate is written with these helpers (as `uuid`'s `timestamp.rs`
//! serves its generators), so a time is encoded, decoded and range-checked in one place.

use crate::error::Error;
use crate::time::Timestamp;

#[cfg(feature = "layouts")]
mod gregorian;
#[cfg(feature = "layouts")]
pub(crate) use gregorian::*;

/// The largest Unix millisecond count a 48-bit field holds (+010889-08-02T05:31:50.655Z).
pub(crate) const UNIX_MS_48_MAX: i64 = (1 << 48) - 1;

/// Milliseconds in a day.
pub(crate) const MS_PER_DAY: i64 = 86_400_000;

/// The 48-bit big-endian number in bytes `at..at + 6`.
pub(crate) const fn read_u48(b: &[u8; 16], at: usize) -> u64 {
    u64::from_be_bytes([0, 0, b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5]])
}

/// Writes the low 48 bits of `v` big-endian into bytes `at..at + 6`.
#[cfg_attr(not(feature = "layouts"), allow(dead_code))] // the layouts write their time here
pub(crate) const fn write_u48(b: &mut [u8; 16], at: usize, v: u64) {
    let be = v.to_be_bytes();
    let mut i = 0;
    while i < 6 {
        b[at + i] = be[2 + i];
        i += 1;
    }
}

/// The instant a 48-bit Unix millisecond field at `at` holds.
pub(crate) const fn read_unix_ms48(b: &[u8; 16], at: usize) -> Timestamp {
    // A 48-bit value is below 2^63, so it keeps its value as i64.
    Timestamp::from_unix_ms(read_u48(b, at).cast_signed())
}

/// `t` as a 48-bit Unix millisecond field, or the range error every 48-bit layout reports.
pub(crate) fn unix_ms48(t: Timestamp) -> Result<u64, Error> {
    match t.unix_ms() {
        ms @ 0..=UNIX_MS_48_MAX => Ok(ms.cast_unsigned()),
        ms => Err(Error::out_of_range(
            "time for a 48-bit Unix millisecond field",
            format!("{ms} ms ({t})"),
            "0 to 2^48-1 ms since 1970 (1970-01-01T00:00:00.000Z to +010889-08-02T05:31:50.655Z)",
        )),
    }
}

/// `t` as a 48-bit Unix millisecond field, clamped into range: what a generator does with a
/// clock before 1970 (1970) or past the year 10889 (the last millisecond).
pub(crate) const fn clamp_unix_ms48(t: Timestamp) -> u64 {
    let ms = t.unix_ms();
    let clamped = if ms < 0 {
        0
    } else if ms > UNIX_MS_48_MAX {
        UNIX_MS_48_MAX
    } else {
        ms
    };
    clamped.cast_unsigned()
}

/// The low 32 bits of `v` (two's complement), keeping only the low `8 * width` of them:
/// `v mod 2^(8 * width)` for a width of 1 to 4 bytes, with no fallible conversion.
pub(crate) const fn low_bytes_u32(v: i128, width: u8) -> u32 {
    let b = v.to_le_bytes();
    let low = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if width >= 4 { low } else { low & ((1u32 << (8 * width as u32)) - 1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u48_round_trips_at_every_offset() {
        for at in 0..=10 {
            let mut b = [0xa5u8; 16];
            write_u48(&mut b, at, 0x0123_4567_89ab);
            assert_eq!(read_u48(&b, at), 0x0123_4567_89ab, "offset {at}");
            // Nothing outside the six bytes moved.
            assert!(b[..at].iter().chain(&b[at + 6..]).all(|&x| x == 0xa5));
        }
        let mut b = [0u8; 16];
        write_u48(&mut b, 0, u64::MAX);
        assert_eq!(read_u48(&b, 0), (1 << 48) - 1, "only the low 48 bits are written");
    }

    #[test]
    fn the_48_bit_range_check() {
        assert_eq!(unix_ms48(Timestamp::from_unix_ms(0)), Ok(0));
        assert_eq!(unix_ms48(Timestamp::from_unix_ms(UNIX_MS_48_MAX)), Ok((1 << 48) - 1));
        for bad in [-1, UNIX_MS_48_MAX + 1, i64::MIN, i64::MAX] {
            let e = unix_ms48(Timestamp::from_unix_ms(bad)).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::OutOfRange);
            assert!(e.to_string().contains("+010889-08-02T05:31:50.655Z"), "{e}");
        }
        assert_eq!(Timestamp::from_unix_ms(UNIX_MS_48_MAX).to_string(), "+010889-08-02T05:31:50.655Z");
        assert_eq!(clamp_unix_ms48(Timestamp::from_unix_ms(-5)), 0);
        assert_eq!(clamp_unix_ms48(Timestamp::from_unix_ms(i64::MAX)), (1 << 48) - 1);
    }

    #[test]
    fn low_bytes() {
        assert_eq!(low_bytes_u32(-1, 2), 0xffff);
        assert_eq!(low_bytes_u32(-1, 4), u32::MAX);
        assert_eq!(low_bytes_u32(0x1_2345_6789, 4), 0x2345_6789);
        assert_eq!(low_bytes_u32(65_536 + 7, 2), 7);
        for v in [-70_000i128, -1, 0, 1, 65_535, 1 << 40] {
            for w in 1..=4u8 {
                let m = 1i128 << (8 * u32::from(w));
                assert_eq!(i128::from(low_bytes_u32(v, w)), v.rem_euclid(m), "{v} width {w}");
            }
        }
    }
}
