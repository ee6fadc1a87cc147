//! uuid-creator's four COMBs (<https://github.com/f4b6a3/uuid-creator>, the library the
//! klokwrk article uses), all labelled version 4 on a random base:
//!
//! ```text
//!  prefix COMB        tttttttt-tttt-4xxx-vxxx-xxxxxxxxxxxx   Unix ms in bytes 0..5
//!  suffix COMB        xxxxxxxx-xxxx-4xxx-vxxx-tttttttttttt   Unix ms in bytes 10..15
//!  short prefix COMB  ppppxxxx-xxxx-4xxx-vxxx-xxxxxxxxxxxx   (ms / 60 s) mod 2^16 in bytes 0..1
//!  short suffix COMB  xxxxxxxx-xxxx-4xxx-vxxx-ppppxxxxxxxx   the same in bytes 10..11
//! ```
//!
//! The prefix and suffix COMBs are RT.Comb's `PostgreSql` and `Sql` layouts on a v4 base, so
//! they share those conversions; the short ones are the short prefix COMB labelled 4, and its
//! suffix form for SQL Server, which compares bytes 10..15 first. Only the suffix swap is
//! their own.

use crate::comb::Comb;

/// Swaps bytes 0..1 and 10..11: the short suffix COMB <-> the short prefix COMB. Its own
/// inverse.
pub(crate) fn swap_short_suffix(id: &Comb) -> Comb {
    let mut b = id.into_bytes();
    b.swap(0, 10);
    b.swap(1, 11);
    Comb::from_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_moves_the_prefix_to_bytes_10_and_11_and_back() {
        let short: Comb = "0064ffff-ffff-4fff-bfff-000000000000".parse().unwrap();
        let suffix = swap_short_suffix(&short);
        assert_eq!(suffix.to_string(), "0000ffff-ffff-4fff-bfff-006400000000");
        assert_eq!(swap_short_suffix(&suffix), short);
    }
}
