//! The column type and its conversions.

combid::column_newtype! {
    /// A [`combid::Comb`] as a sea-orm column type, usable as a plain field, an `Option`
    /// field and the primary key.
    ///
    /// The name ends in `Uuid` on purpose: sea-orm 2.0 marks a primary key auto-increment
    /// unless its field type's name ends in `Uuid` or `String`, so
    /// `#[sea_orm(primary_key)] pub id: CombUuid` needs no further attribute.
    ///
    /// ```
    /// let id = combid_sea_orm::CombUuid::new();
    /// let core: combid::Comb = id.into();
    /// assert_eq!(combid_sea_orm::CombUuid::from(core), id);
    /// ```
    pub struct CombUuid;
}

impl From<combid_sqlx::Comb> for CombUuid {
    fn from(id: combid_sqlx::Comb) -> Self {
        CombUuid::from(id.to_comb())
    }
}

impl From<CombUuid> for combid_sqlx::Comb {
    fn from(id: CombUuid) -> Self {
        combid_sqlx::Comb::from(id.to_comb())
    }
}
