//! The column type and its conversions.

combid::column_newtype! {
    /// A [`combid::Comb`] as a sqlx column type.
    ///
    /// Stored as the public bytes in every sqlx backend: PostgreSQL `uuid`, MySQL/MariaDB
    /// `BINARY(16)`, SQLite `BLOB`; so `ORDER BY id` is creation order. Converts to and from
    /// [`combid::Comb`] for free.
    ///
    /// ```
    /// let id = combid_sqlx::Comb::new();
    /// let core: combid::Comb = id.into();
    /// assert_eq!(combid_sqlx::Comb::from(core), id);
    /// assert_eq!(id.to_string().parse::<combid_sqlx::Comb>()?, id);
    /// # Ok::<(), combid::Error>(())
    /// ```
    pub struct Comb;
}
