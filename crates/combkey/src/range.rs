//! Time ranges as key ranges: "rows created between a and b" as `start <= id < end`.

use core::fmt;
use core::ops::Range;

use crate::backend::Backend;
use crate::comb::Comb;
use crate::error::Error;
use crate::time::Timestamp;

/// The ids created in a half-open time range `[start, end)`, as a half-open key range
/// `[start, end)`: `WHERE id >= start AND id < end` returns exactly the rows whose id
/// carries a time in the range, through the primary key's index, with no `created_at`
/// column. Made by [`Comb::range`].
///
/// The bounds are UUIDv7 ids ([`Comb::min_for`] of each end), so the range covers the
/// default public id (v7) in every database, SQL Server included: its stored form keeps the
/// public order exactly, so the stored bounds ([`stored`](Self::stored)) enclose exactly the
/// stored ids of the range.
///
/// ```
/// use combkey::{Comb, Timestamp, V7Generator};
///
/// let a: Timestamp = "2026-01-01T00:00:00Z".parse()?;
/// let b: Timestamp = "2026-01-01T01:00:00Z".parse()?;
/// let hour = Comb::range(a..b)?;
/// let g = V7Generator::new();
/// assert!(hour.contains(&g.generate_at(a)));
/// assert!(hour.contains(&g.generate_at(b.saturating_add_ms(-1))));
/// assert!(!hour.contains(&g.generate_at(b)));
/// assert_eq!(hour.start().to_string(), "019b76da-a800-7000-8000-000000000000");
/// assert_eq!(hour.end().to_string(), "019b7711-9680-7000-8000-000000000000");
/// // sqlx: .bind(hour.start()).bind(hour.end()) into "WHERE id >= $1 AND id < $2".
/// # Ok::<(), combkey::Error>(())
/// ```
///
/// Only ids that carry their time in their first 48 bits fall in such a range: v7 ids,
/// RT.Comb `PostgreSql` and uuid-creator prefix COMBs (whose bits after the time differ, so
/// compare their times, not the bounds, at the very edges). A short prefix COMB carries an
/// interval counter that wraps (every 45.5 days by default), so no key range selects a time
/// range of them exactly: a range of its prefixes selects the ids made in those intervals
/// *of every cycle*, a superset to filter with another column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyRange {
    start: Comb,
    end: Comb,
}

impl Comb {
    /// The key range of the ids created in `times` (`start` inclusive, `end` exclusive).
    ///
    /// Fails for times before 1970 or past the 48-bit limit (year 10889), and for a range
    /// whose end is before its start. An empty time range gives an empty key range.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, ErrorKind, Timestamp};
    ///
    /// let a: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    /// let b: Timestamp = "2026-01-02T00:00:00Z".parse()?;
    /// let day = Comb::range(a..b)?;
    /// assert_eq!(day.start(), Comb::min_for(a)?);
    /// assert_eq!(day.end(), Comb::min_for(b)?);
    /// // The end before the start is an error, not an empty range.
    /// assert_eq!(Comb::range(b..a).unwrap_err().kind(), ErrorKind::Config);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn range(times: Range<Timestamp>) -> Result<KeyRange, Error> {
        if times.end < times.start {
            return Err(Error::config(
                "time range",
                format!("{}..{}", times.start, times.end),
                "a start at or before the end",
            ));
        }
        Ok(KeyRange { start: Comb::min_for(times.start)?, end: Comb::min_for(times.end)? })
    }
}

impl KeyRange {
    /// The smallest id in the range: `WHERE id >= start`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let a: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    /// let range = Comb::range(a..a.saturating_add_ms(3_600_000))?;
    /// // The first id of 2026-01-01T00:00:00Z: counter and random bits all zero.
    /// assert_eq!(range.start().to_string(), "019b76da-a800-7000-8000-000000000000");
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn start(&self) -> Comb {
        self.start
    }

    /// The first id after the range: `WHERE id < end`.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let a: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    /// let b: Timestamp = "2026-02-01T00:00:00Z".parse()?;
    /// let january = Comb::range(a..b)?;
    /// // The first id of February: not in the range.
    /// assert_eq!(january.end().to_string(), "019c167f-cc00-7000-8000-000000000000");
    /// assert!(!january.contains(&january.end()));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn end(&self) -> Comb {
        self.end
    }

    /// The last id of the range, `end`'s predecessor as a 128-bit number: for
    /// `WHERE id BETWEEN start AND last`, the same rows as `id >= start AND id < end` (below
    /// `start` when the range is empty, so `BETWEEN` selects nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let a: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    /// let b: Timestamp = "2026-02-01T00:00:00Z".parse()?;
    /// let january = Comb::range(a..b)?;
    /// assert_eq!(january.last().as_u128(), january.end().as_u128() - 1);
    /// assert_eq!(january.last().to_string(), "019c167f-cc00-7000-7fff-ffffffffffff");
    /// // Every id of the range's last millisecond is at or below it.
    /// assert!(Comb::max_for(b.saturating_add_ms(-1))? <= january.last());
    /// assert!(january.contains(&january.last()));
    ///
    /// // An empty range: `last` is below `start`, so BETWEEN selects nothing.
    /// let empty = Comb::range(a..a)?;
    /// assert!(empty.last() < empty.start());
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn last(&self) -> Comb {
        // `end` is a UUIDv7 bound (version bits set), so it is never zero.
        Comb::from_u128(self.end.as_u128().wrapping_sub(1))
    }

    /// Whether `id` lies in the range, as the database's comparison of the key decides it.
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Comb, Timestamp};
    ///
    /// let a: Timestamp = "2022-02-22T19:00:00Z".parse()?;
    /// let b: Timestamp = "2022-02-22T20:00:00Z".parse()?;
    /// let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse()?; // 19:22:22
    /// assert!(Comb::range(a..b)?.contains(&id));
    /// assert!(!Comb::range(b..b.saturating_add_ms(3_600_000))?.contains(&id));
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub fn contains(&self, id: &Comb) -> bool {
        self.start <= *id && *id < self.end
    }

    /// The bounds in `backend`'s stored form (for SQL Server, the `uniqueidentifier` values
    /// to compare the stored column with; elsewhere the public bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use combkey::{Backend, Comb, Timestamp};
    ///
    /// let a: Timestamp = "2026-01-01T00:00:00Z".parse()?;
    /// let b: Timestamp = "2026-01-02T00:00:00Z".parse()?;
    /// let day = Comb::range(a..b)?;
    /// // PostgreSQL, MySQL and SQLite compare the public bytes.
    /// assert_eq!(day.stored(Backend::Postgres), (day.start().into_bytes(), day.end().into_bytes()));
    /// // SQL Server compares its stored form: bind these to its uniqueidentifier column.
    /// let (start, end) = day.stored(Backend::SqlServer);
    /// assert_eq!(start, day.start().to_sqlserver_bytes());
    /// assert_eq!(Backend::SqlServer.from_stored(end), day.end());
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub const fn stored(&self, backend: Backend) -> ([u8; 16], [u8; 16]) {
        (backend.to_stored(self.start), backend.to_stored(self.end))
    }
}

impl fmt::Display for KeyRange {
    /// `start..end`, the bounds in the canonical form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RandomSource, SeededRandom, V7Generator};

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_unix_ms(ms)
    }

    #[test]
    fn encloses_exactly_the_ids_of_the_range() {
        let (a, b) = (1_700_000_000_000, 1_700_000_003_600);
        let range = Comb::range(t(a)..t(b)).unwrap();
        let g = V7Generator::with_clock_and_random(|| t(0), SeededRandom::new(4));
        // Every millisecond around both edges, many ids each (counter and random bits vary).
        for ms in (a - 3..a + 3).chain(b - 3..b + 3) {
            for _ in 0..200 {
                let id = g.generate_at(t(ms));
                assert_eq!(range.contains(&id), (a..b).contains(&id.unix_ms().unwrap()), "{id} at {ms}");
            }
        }
        assert_eq!(range.last(), Comb::from_u128(range.end().as_u128() - 1));
        assert!(range.contains(&range.last()) && !range.contains(&range.end()));
        // The extreme ids of an edge millisecond.
        assert!(range.contains(&Comb::min_for(t(a)).unwrap()));
        assert!(range.contains(&Comb::max_for(t(b - 1)).unwrap()));
        assert!(!range.contains(&Comb::max_for(t(a - 1)).unwrap()));
        assert!(!range.contains(&Comb::min_for(t(b)).unwrap()));
        let r = SeededRandom::new(1);
        for _ in 0..10_000 {
            let id = Comb::from_v7_parts(r.next_u64() >> 16, 0, r.next_u64());
            assert_eq!(range.contains(&id), (a..b).contains(&id.unix_ms().unwrap()));
        }
    }

    #[test]
    fn bad_ranges_are_errors() {
        let e = Comb::range(t(10)..t(5)).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config);
        assert!(e.to_string().contains("a start at or before the end"), "{e}");
        assert_eq!(Comb::range(t(-1)..t(5)).unwrap_err().kind(), crate::ErrorKind::OutOfRange);
        let empty = Comb::range(t(5)..t(5)).unwrap();
        assert!(!empty.contains(&Comb::min_for(t(5)).unwrap()));
        assert!(empty.last() < empty.start(), "BETWEEN start AND last selects nothing");
    }

    #[test]
    fn stored_bounds_keep_the_order_on_sql_server() {
        let range = Comb::range(t(1_000)..t(2_000)).unwrap();
        let (lo, hi) = range.stored(Backend::SqlServer);
        let id = Comb::from_v7_parts(1_500, 7, 7);
        let s = Backend::SqlServer.to_stored(id);
        use core::cmp::Ordering::*;
        assert_eq!(crate::adapter::sqlserver_cmp(&lo, &s), Less);
        assert_eq!(crate::adapter::sqlserver_cmp(&s, &hi), Less);
        assert_eq!(range.stored(Backend::Postgres), (*range.start().as_bytes(), *range.end().as_bytes()));
    }
}
