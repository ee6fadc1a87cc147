//! API schemas: `schemars::JsonSchema` (feature `schemars`) and `utoipa::ToSchema` (feature
//! `utoipa`) for [`Comb`](crate::Comb), and through [`column_newtype!`](crate::adapter::column_newtype) for every
//! adapter's column type. An id is a string in the canonical hyphenated form: `type: string,
//! format: uuid`, with an example.

/// An example id for the schemas: a UUIDv7 made on 2026-01-01T00:00:00Z.
pub const EXAMPLE: &str = "019b76da-a800-7abc-8def-0123456789ab";

/// What the schemas say an id is.
pub const DESCRIPTION: &str = "A time-ordered UUID (UUIDv7 COMB), in canonical hyphenated form";

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for crate::Comb {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Comb".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "uuid",
            "description": DESCRIPTION,
            "examples": [EXAMPLE],
        })
    }
}

#[cfg(feature = "utoipa")]
impl utoipa::PartialSchema for crate::Comb {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
            .description(Some(DESCRIPTION))
            .examples([EXAMPLE])
            .into()
    }
}

#[cfg(feature = "utoipa")]
impl utoipa::ToSchema for crate::Comb {
    fn name() -> std::borrow::Cow<'static, str> {
        "Comb".into()
    }
}

/// The schema impls for a column newtype, delegating to [`Comb`](crate::Comb)'s; expands to
/// nothing without the features.
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_schemas {
    ($name:ident) => {
        $crate::__column_newtype_schemars!($name);
        $crate::__column_newtype_utoipa!($name);
    };
}

#[cfg(feature = "schemars")]
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_schemars {
    ($name:ident) => {
        #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
        impl $crate::__private::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                <$crate::Comb as $crate::__private::schemars::JsonSchema>::schema_name()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(
                g: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
                <$crate::Comb as $crate::__private::schemars::JsonSchema>::json_schema(g)
            }
        }
    };
}

#[cfg(not(feature = "schemars"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_schemars {
    ($name:ident) => {};
}

#[cfg(feature = "utoipa")]
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_utoipa {
    ($name:ident) => {
        #[cfg_attr(docsrs, doc(cfg(feature = "utoipa")))]
        impl $crate::__private::utoipa::PartialSchema for $name {
            fn schema() -> $crate::__private::utoipa::openapi::RefOr<$crate::__private::utoipa::openapi::schema::Schema>
            {
                <$crate::Comb as $crate::__private::utoipa::PartialSchema>::schema()
            }
        }
        #[cfg_attr(docsrs, doc(cfg(feature = "utoipa")))]
        impl $crate::__private::utoipa::ToSchema for $name {
            fn name() -> ::std::borrow::Cow<'static, str> {
                <$crate::Comb as $crate::__private::utoipa::ToSchema>::name()
            }
        }
    };
}

#[cfg(not(feature = "utoipa"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __column_newtype_utoipa {
    ($name:ident) => {};
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_is_a_v7_id() {
        let id: crate::Comb = super::EXAMPLE.parse().unwrap();
        assert_eq!(id.version(), 7);
        assert_eq!(id.timestamp().map(|t| t.to_string()).as_deref(), Some("2026-01-01T00:00:00.000Z"));
    }

    #[cfg(feature = "schemars")]
    #[test]
    fn json_schema_is_a_uuid_string() {
        let schema = schemars::schema_for!(crate::Comb);
        let v = schema.as_value();
        assert_eq!(v["type"], "string");
        assert_eq!(v["format"], "uuid");
        assert_eq!(v["examples"][0], super::EXAMPLE);
    }

    #[cfg(feature = "utoipa")]
    #[test]
    fn openapi_schema_is_a_uuid_string() {
        let schema = <crate::Comb as utoipa::PartialSchema>::schema();
        let v = serde_json::to_value(&schema).unwrap();
        assert_eq!(v["type"], "string");
        assert_eq!(v["format"], "uuid");
        assert_eq!(v["examples"][0], super::EXAMPLE);
        assert_eq!(<crate::Comb as utoipa::ToSchema>::name(), "Comb");
    }
}
