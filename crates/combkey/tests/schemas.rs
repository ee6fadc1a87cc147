//! The generated schema of a struct that holds an id says `format: uuid`, through schemars
//! (JSON Schema) and utoipa (OpenAPI), for the core type and for a column newtype an
//! adapter declares with `column_newtype!`.

combkey::adapter::column_newtype! {
    /// An adapter's column type.
    pub struct AdapterId;
}

#[derive(schemars::JsonSchema, utoipa::ToSchema)]
#[allow(dead_code)]
struct Order {
    id: combkey::Comb,
    parent: Option<combkey::Comb>,
    row: AdapterId,
    items: Vec<combkey::Comb>,
}

#[test]
fn json_schema_of_a_struct_with_ids() {
    let schema = schemars::schema_for!(Order);
    let v = schema.as_value();
    let props = &v["properties"];
    assert_eq!(props["id"]["type"], "string", "{v}");
    assert_eq!(props["id"]["format"], "uuid", "{v}");
    assert_eq!(props["id"]["examples"][0], combkey::adapter::SCHEMA_EXAMPLE);
    assert_eq!(props["row"]["format"], "uuid", "the adapter's type: {v}");
    assert_eq!(props["items"]["items"]["format"], "uuid", "{v}");
    // Option<Comb>: a string or null, and not required.
    assert!(props["parent"].to_string().contains("\"uuid\""), "{v}");
    let required: Vec<&str> = v["required"].as_array().unwrap().iter().filter_map(|r| r.as_str()).collect();
    assert!(required.contains(&"id") && !required.contains(&"parent"), "{v}");
}

#[test]
fn openapi_schema_of_a_struct_with_ids() {
    use utoipa::OpenApi;

    #[derive(OpenApi)]
    #[openapi(components(schemas(Order)))]
    struct Api;

    let doc = serde_json::to_value(Api::openapi()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let text = doc.to_string();
    // One `Comb` component, a uuid string; every id field, the adapter's type included, refers to it.
    let comb = &schemas["Comb"];
    assert_eq!(comb["type"], "string", "{text}");
    assert_eq!(comb["format"], "uuid", "{text}");
    assert_eq!(comb["examples"][0], combkey::adapter::SCHEMA_EXAMPLE, "{text}");
    let props = &schemas["Order"]["properties"];
    for field in ["id", "row"] {
        assert_eq!(props[field]["$ref"], "#/components/schemas/Comb", "{field}: {text}");
    }
    assert_eq!(props["items"]["items"]["$ref"], "#/components/schemas/Comb", "{text}");
}
