//! The column type.

combkey::column_newtype! {
    /// A [`combkey::Comb`] as a rust-postgres column type: PostgreSQL `uuid` (and `uuid[]`
    /// as `Vec<Comb>`), the public bytes, so `ORDER BY id` is creation order.
    ///
    /// ```
    /// let id = combkey_postgres::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_postgres::Comb::from(core), id);
    /// ```
    pub struct Comb;
}
