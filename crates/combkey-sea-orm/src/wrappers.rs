//! The column type and its conversions.

combkey::column_newtype! {
    /// A [`combkey::Comb`] as a sea-orm column type, usable as a plain field, an `Option`
    /// field and the primary key.
    ///
    /// The name ends in `Uuid` on purpose: sea-orm 2.0 marks a primary key auto-increment
    /// unless its field type's name ends in `Uuid` or `String`, so
    /// `#[sea_orm(primary_key)] pub id: CombUuid` needs no further attribute.
    ///
    /// ```
    /// let id = combkey_sea_orm::CombUuid::new();
    /// let core: combkey::Comb = id.into();
    /// assert_eq!(combkey_sea_orm::CombUuid::from(core), id);
    /// ```
    pub struct CombUuid;
}

impl From<combkey_sqlx::Comb> for CombUuid {
    fn from(id: combkey_sqlx::Comb) -> Self {
        CombUuid::from(id.to_comb())
    }
}

impl From<CombUuid> for combkey_sqlx::Comb {
    fn from(id: CombUuid) -> Self {
        combkey_sqlx::Comb::from(id.to_comb())
    }
}
