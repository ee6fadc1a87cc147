//! The column type.

combkey::column_newtype! {
    /// A [`combkey::Comb`] as a mysql_common value: sent as the 16 public bytes (a
    /// `BINARY(16)` key, which MySQL and MariaDB compare with `memcmp`, so `ORDER BY id` is
    /// creation order); read from `BINARY(16)`, MariaDB's `UUID` type and UUID text.
    ///
    /// ```
    /// let id = combkey_mysql::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_mysql::Comb::from(core), id);
    /// ```
    pub struct Comb;
}
