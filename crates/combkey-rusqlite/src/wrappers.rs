//! The column type.

combkey::column_newtype! {
    /// A [`combkey::Comb`] as a rusqlite column type: a 16-byte `BLOB` of the public bytes,
    /// which SQLite compares with `memcmp`, so `ORDER BY id` is creation order.
    ///
    /// ```
    /// let id = combkey_rusqlite::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_rusqlite::Comb::from(core), id);
    /// ```
    pub struct Comb;
}
