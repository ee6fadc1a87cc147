//! v1's 60-bit timestamp: 100-ns ticks since 1582-10-15 (RFC 9562 section 5.1).

use crate::time::Timestamp;

/// 100-ns intervals from 1582-10-15 (the Gregorian reform, v1's epoch) to 1970-01-01.
pub(crate) const GREGORIAN_TO_UNIX_100NS: u64 = 0x01B2_1DD2_1381_4000;

/// The largest 60-bit v1 tick count.
pub(crate) const TICKS_60_MAX: u64 = (1 << 60) - 1;

/// The 60-bit timestamp of a v1 id (RFC 9562 section 5.1): `time_hi` (12 bits after the
/// version), `time_mid`, `time_low`.
pub(crate) const fn v1_ticks(b: &[u8; 16]) -> u64 {
    let time_low = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
    let time_mid = u16::from_be_bytes([b[4], b[5]]) as u64;
    let time_hi = (u16::from_be_bytes([b[6], b[7]]) & 0x0fff) as u64;
    (time_hi << 48) | (time_mid << 32) | time_low
}

/// `rest` with v1's time fields set to `ticks` (low 60 bits) and version 1; bytes 8..15 kept.
pub(crate) const fn with_v1_ticks(ticks: u64, rest: [u8; 16]) -> [u8; 16] {
    let t = ticks.to_be_bytes();
    let mut b = rest;
    b[0] = t[4]; // time_low: bits 31..0
    b[1] = t[5];
    b[2] = t[6];
    b[3] = t[7];
    b[4] = t[2]; // time_mid: bits 47..32
    b[5] = t[3];
    b[6] = 0x10 | (t[0] & 0x0f); // version 1, then bits 59..56
    b[7] = t[1]; // bits 55..48
    b
}

/// The Unix milliseconds of a v1 tick count, floored (a tick count is at most 60 bits).
pub(crate) const fn ticks_to_unix_ms(ticks: u64) -> i64 {
    // Masked to 60 bits, so it keeps its value as i64.
    let since_1582 = (ticks & TICKS_60_MAX).cast_signed();
    (since_1582 - GREGORIAN_TO_UNIX_100NS.cast_signed()).div_euclid(10_000)
}

/// The v1 tick count of a Unix millisecond count, clamped into 60 bits: what a generator
/// does with a clock outside v1's range (1582 to 5236).
pub(crate) const fn unix_ms_to_ticks(t: Timestamp) -> u64 {
    let ms = t.unix_ms();
    let min_ms = -(GREGORIAN_TO_UNIX_100NS / 10_000).cast_signed();
    if ms <= min_ms {
        return 0;
    }
    let since_1582_ms = ms.abs_diff(min_ms);
    let ticks = since_1582_ms.saturating_mul(10_000);
    if ticks > TICKS_60_MAX { TICKS_60_MAX } else { ticks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gregorian_ticks() {
        // RFC 9562 appendix A.1: c232ab00-9414-11ec-b3c8-9f6bdeced846 is 2022-02-22T19:22:22Z.
        let v1: [u8; 16] = 0xc232ab00_9414_11ec_b3c8_9f6bdeced846u128.to_be_bytes();
        let ticks = v1_ticks(&v1);
        assert_eq!(ticks, 0x1ec_9414_c232_ab00);
        assert_eq!(ticks_to_unix_ms(ticks), 1_645_557_742_000);
        assert_eq!(with_v1_ticks(ticks, v1), v1);
        assert_eq!(unix_ms_to_ticks(Timestamp::from_unix_ms(1_645_557_742_000)), 0x1ec_9414_c232_ab00);
        assert_eq!(unix_ms_to_ticks(Timestamp::from_unix_ms(i64::MIN)), 0);
        assert_eq!(unix_ms_to_ticks(Timestamp::from_unix_ms(i64::MAX)), TICKS_60_MAX);
        // Floored: one tick before the Unix epoch is the millisecond before it.
        assert_eq!(ticks_to_unix_ms(GREGORIAN_TO_UNIX_100NS - 1), -1);
    }
}
