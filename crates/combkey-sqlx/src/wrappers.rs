//! The column types and their conversions.

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

combkey::column_newtype! {
    /// A [`combkey::Comb`] in a text column: `CHAR(36)`, `VARCHAR`, `TEXT` (what
    /// `uuid::fmt::Hyphenated` is to sqlx's `Uuid`), for tables keyed by UUID text until
    /// they are migrated to binary keys (`combkey sql mysql` prints the conversion).
    ///
    /// Binds the canonical 36-character lowercase text, so `WHERE char36_id = ?` matches ids
    /// written the same way (on MySQL and MariaDB also uppercase ones: their default
    /// collations compare case-insensitively; SQLite and PostgreSQL compare text exactly).
    /// Reads any UUID text form (hyphenated, 32 hex digits, braced, URN; any case); bad text
    /// is a decode error that says what was found.
    ///
    /// ```
    /// let id = combkey_sqlx::CombText::new();
    /// assert_eq!(combkey_sqlx::CombText::from(id.to_comb()), id);
    /// assert_eq!(combkey_sqlx::Comb::from(id.to_comb()).to_string(), id.to_string());
    /// ```
    pub struct CombText;
}
