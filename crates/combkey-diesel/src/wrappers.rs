//! The column type and its conversions.

combkey::column_newtype! {
    /// A [`combkey::Comb`] as a diesel column type.
    ///
    /// `ToSql`/`FromSql` for `diesel::sql_types::Uuid` on PostgreSQL and for
    /// `diesel::sql_types::Binary` on MySQL/MariaDB (`BINARY(16)`) and SQLite (`BLOB`); an
    /// `Option<Comb>` goes with `Nullable<_>`. Stored as the public bytes, so
    /// `.order(id.asc())` is creation order. Converts to and from [`combkey::Comb`] for free.
    ///
    /// ```
    /// let id = combkey_diesel::Comb::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_diesel::Comb::from(core), id);
    /// ```
    #[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
    #[cfg_attr(feature = "postgres", diesel(sql_type = diesel::sql_types::Uuid))]
    #[diesel(sql_type = diesel::sql_types::Binary)]
    pub struct Comb;
}
