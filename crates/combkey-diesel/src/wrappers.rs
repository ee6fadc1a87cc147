//! The column types and their conversions.

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

combkey::column_newtype! {
    /// A [`combkey::Comb`] in a text column: `CHAR(36)`, `VARCHAR`, `TEXT`
    /// (`diesel::sql_types::Text`, which `Char` and `VarChar` alias), for tables keyed by UUID
    /// text until they are migrated to binary keys (`combkey sql mysql` prints the conversion).
    ///
    /// Writes the canonical 36-character lowercase text, so `WHERE char36_id = ?` matches
    /// ids written the same way (on MySQL and MariaDB also uppercase ones: their default
    /// collations compare case-insensitively; SQLite and PostgreSQL compare text exactly).
    /// Reads any UUID text form (hyphenated, 32 hex digits, braced, URN; any case). Text
    /// keys sort in creation order as strings only while every row is written in the same
    /// case; `Comb` in a binary column is the form to migrate to.
    ///
    /// ```
    /// let id = combkey_diesel::CombText::new();
    /// assert_eq!(combkey_diesel::CombText::from(id.to_comb()), id);
    /// ```
    #[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub struct CombText;
}
