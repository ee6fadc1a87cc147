//! The column type and its conversions.

combkey::column_newtype! {
    /// A [`combkey::Comb`] as a sqlx column type.
    ///
    /// Stored as the public bytes in every sqlx backend: PostgreSQL `uuid`, MySQL/MariaDB
    /// `BINARY(16)`, SQLite `BLOB`; so `ORDER BY id` is creation order. Converts to and from
    /// [`combkey::Comb`] for free.
    ///
    /// ```
    /// let id = combkey_sqlx::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_sqlx::Comb::from(core), id);
    /// assert_eq!(id.to_string().parse::<combkey_sqlx::Comb>()?, id);
    /// # Ok::<(), combkey::Error>(())
    /// ```
    pub struct Comb;
}
