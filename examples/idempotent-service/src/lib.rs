//! An HTTP service where clients make the entity ids (the schemes of the klokwrk article,
//! "Random UUID as a Primary Key in the Relational Database"): creation is idempotent, so a
//! client whose response got lost can retry without creating a second order.
//!
//! - `POST /orders` with `{"id": ..., "item": ..., "quantity": ...}`: the client-made id (a
//!   prefix COMB, or a short prefix COMB) is validated (version, variant, time window around
//!   the server's clock; a batch job may send its own `"clock"`, within `max_clock_skew` of
//!   the server's). Invalid: 422 with `{"error": reason}`. New: 201 and the order. The same
//!   request again: 200 and the same order, no second row. The same id with another body:
//!   409.
//! - `POST /orders` with `{"command_id": ..., "item": ..., "quantity": ...}` and no id: the
//!   server makes the id and records `(command_id, entity_id)` in `creation_identifiers` in
//!   the same transaction, so a retry returns the same order (the article's last scheme). A
//!   batch job's `"clock"` is checked here too (RFC 3339, within `max_clock_skew`; 422
//!   otherwise), and the server makes the id at that time.
//! - `GET /orders/{id}`: 200, 404 for an unknown id, 400 for a malformed one. After
//!   `combkey doctor` converted the table's keys (say RT.Comb `Sql` ids to v7, which
//!   [`Config::key_migration`] names), an id a client kept from before is not found as it is,
//!   but its new key is: 301 to `/orders/{new id}`. The same through the key map `combkey
//!   doctor` kept ([`Config::key_map`]), as after `--rekey-from created_at`.
//! - `GET /openapi.json`: the OpenAPI 3.1 document of the above (utoipa), ids described as
//!   `type: string, format: uuid` through combkey's `utoipa` feature.
//!
//! With [`Config::face_key`] (`FACE_KEY`), the table keeps its sorted COMBs and every id the
//! service shows (response bodies, `Location`, error messages) is a face, a v4-looking id that
//! does not tell when the order was made (combkey's `FaceKey`, uuidv47's scheme); the ids in
//! paths are faces too. A client that makes its own ids sends v7 COMBs and gets their faces back.
//!
//! Racing identical creations end in one row: the primary key decides, the loser answers
//! with the winner's order.

mod store;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use combkey::layouts::KeyMigration;
use combkey::{Comb, Expected, FaceKey, ShortPrefix, Timestamp, Validator};
use serde::{Deserialize, Serialize};
use store::{Created, Sql, Store};

/// An order as stored and as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Order {
    /// The public id.
    pub id: Comb,
    /// What was ordered.
    pub item: String,
    /// How many.
    pub quantity: i64,
}

/// A note on an order, which references the order by its key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Note {
    /// The note's id (made by the server).
    pub id: Comb,
    /// The order's key (its new key, where the order's key was converted).
    pub order_id: Comb,
    /// The text.
    pub body: String,
}

/// The body of `POST /orders/{id}/notes`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
struct CreateNote {
    /// The text: 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    body: String,
}

/// The body of `POST /orders`: a client-made `id`, or a `command_id` for the server to
/// make the id under.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateOrder {
    /// A prefix COMB or short prefix COMB the client made (read as text, so a malformed one
    /// is a 422 with the reason, not a parse failure of the whole body).
    #[schema(value_type = Option<Comb>)]
    id: Option<String>,
    /// The client's id of this command, when the server makes the order's id.
    #[schema(value_type = Option<Comb>)]
    command_id: Option<String>,
    /// A batch job's own clock (RFC 3339), within two days of the server's.
    #[schema(format = DateTime)]
    clock: Option<String>,
    /// What is ordered: 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    item: String,
    /// How many: at least 1.
    #[schema(minimum = 1)]
    quantity: i64,
}

/// An error's body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct ApiError {
    /// What was wrong.
    error: String,
}

/// The OpenAPI document served at `GET /openapi.json`.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "idempotent-service", description = "Orders with client-made, time-ordered ids (combkey)"),
    paths(create, read, add_note),
    components(schemas(Order, CreateOrder, Note, CreateNote, ApiError))
)]
pub struct ApiDoc;

/// The service's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// `sqlite::memory:` (default), `sqlite://file`, `postgres://...`, `mysql://...`.
    pub database_url: String,
    /// Prefix of the two tables' names (tests use a random one).
    pub table_prefix: String,
    /// How far before the clock a client-made id's time may be.
    pub past: Duration,
    /// How far after the clock a client-made id's time may be.
    pub future: Duration,
    /// How far a batch job's own `"clock"` may be from the server's.
    pub max_clock_skew: Duration,
    /// The short prefix COMBs clients make.
    pub short_prefix: ShortPrefix,
    /// How `combkey doctor` converted the table's keys, if it did (`rtcomb-sql -> v7`): ids
    /// clients kept from before are then redirected to their new keys.
    pub key_migration: Option<KeyMigration>,
    /// The key map `combkey doctor` kept (`combkey_keymap_orders`, the name with the table
    /// prefix), where an old id resolves: after `--rekey-from created_at` made random v4 keys
    /// v7, or any conversion whose new key cannot give the old one back.
    pub key_map: Option<String>,
    /// Show faces instead of ids (and read faces in paths): the ids stay the table's sorted
    /// keys, the outside never sees their times.
    pub face_key: Option<FaceKey>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: "sqlite::memory:".into(),
            table_prefix: String::new(),
            past: Duration::from_secs(600),
            future: Duration::from_secs(600),
            max_clock_skew: Duration::from_secs(2 * 86_400),
            short_prefix: ShortPrefix::default(),
            key_migration: None,
            key_map: None,
            face_key: None,
        }
    }
}

enum Backend {
    Pg(Store<sqlx::Postgres>),
    My(Store<sqlx::MySql>),
    Lite(Store<sqlx::Sqlite>),
}

macro_rules! on_store {
    ($backend:expr, $s:ident => $e:expr) => {
        match $backend {
            Backend::Pg($s) => $e,
            Backend::My($s) => $e,
            Backend::Lite($s) => $e,
        }
    };
}

struct AppState {
    backend: Backend,
    config: Config,
}

/// Connects, creates the tables if missing, and returns the service.
pub async fn app(config: Config) -> Result<Router, sqlx::Error> {
    let url = config.database_url.as_str();
    let prefix = config.table_prefix.as_str();
    let backend = if url.starts_with("postgres") {
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(20).connect(url).await?;
        let p = |n| format!("${n}");
        Backend::Pg(
            Store::new(pool, Sql::new(prefix, "uuid", "text", p).with_key_map(config.key_map.as_deref(), p)).await?,
        )
    } else if url.starts_with("mysql") {
        let pool = sqlx::mysql::MySqlPoolOptions::new().max_connections(20).connect(url).await?;
        let p = |_| "?".to_string();
        let sql = Sql::new(prefix, "BINARY(16)", "VARCHAR(200)", p).with_key_map(config.key_map.as_deref(), p);
        Backend::My(Store::new(pool, sql).await?)
    } else {
        // An in-memory database lives as long as its one connection.
        let max = if url.contains(":memory:") { 1 } else { 5 };
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(max)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect(url)
            .await?;
        let p = |_| "?".to_string();
        Backend::Lite(
            Store::new(pool, Sql::new(prefix, "BLOB", "TEXT", p).with_key_map(config.key_map.as_deref(), p)).await?,
        )
    };
    let face_key = config.face_key.clone();
    let state = Arc::new(AppState { backend, config });
    let router = Router::new()
        .route("/orders", post(create))
        .route("/orders/{id}", get(read))
        .route("/orders/{id}/notes", post(add_note))
        .route("/openapi.json", get(openapi))
        .with_state(state);
    Ok(match face_key {
        None => router,
        // Every request handled inside the key's scope: the JSON it writes shows faces.
        Some(key) => router.layer(axum::middleware::from_fn(move |req, next: axum::middleware::Next| {
            key.clone().scope_future(next.run(req))
        })),
    })
}

/// An id as the service shows it: its face when faces are on.
fn shown(config: &Config, id: Comb) -> String {
    match &config.face_key {
        None => id.to_string(),
        Some(key) => key.mask(id).map_or_else(|_| "(an id with no face)".into(), |f| f.to_string()),
    }
}

/// The order id a path names: the id itself, or the id behind its face when faces are on (a
/// text that is no face of the key names no order: 404).
fn path_id(config: &Config, text: &str) -> Result<Comb, (StatusCode, String)> {
    let id: Comb = text.parse().map_err(|e| (StatusCode::BAD_REQUEST, format!("id: {e}")))?;
    match &config.face_key {
        None => Ok(id),
        Some(key) => key.unmask(id.to_uuid()).map_err(|_| (StatusCode::NOT_FOUND, format!("no order {id}"))),
    }
}

/// `GET /openapi.json`.
async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(<ApiDoc as utoipa::OpenApi>::openapi())
}

/// The longest `item` accepted, in characters (the MySQL column is `VARCHAR(200)`).
pub const MAX_ITEM_CHARS: usize = 200;

/// Checks an order's body as the id is checked: a positive quantity, an item that is not
/// empty and not longer than [`MAX_ITEM_CHARS`].
fn validate_body(item: &str, quantity: i64) -> Result<(), String> {
    if quantity < 1 {
        return Err(format!("quantity: expected at least 1, found {quantity}"));
    }
    if item.trim().is_empty() {
        return Err("item: expected a name, found an empty string".into());
    }
    let chars = item.chars().count();
    if chars > MAX_ITEM_CHARS {
        return Err(format!("item: expected at most {MAX_ITEM_CHARS} characters, found {chars}"));
    }
    Ok(())
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, Json(serde_json::json!({ "error": message.to_string() }))).into_response()
}

fn internal(e: sqlx::Error) -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, format!("database error: {e}"))
}

/// A batch job's own clock: RFC 3339, within `max_clock_skew` of the server's.
fn batch_clock(config: &Config, clock: Option<&str>) -> Result<Option<Timestamp>, String> {
    let Some(clock) = clock else { return Ok(None) };
    let at: Timestamp = clock.parse().map_err(|e| format!("clock: {e}"))?;
    let skew = at.unix_ms().abs_diff(Timestamp::now().unix_ms());
    if u128::from(skew) > config.max_clock_skew.as_millis() {
        return Err(format!(
            "clock: {at} is {} s from the server's time, at most {} s accepted",
            skew / 1000,
            config.max_clock_skew.as_secs()
        ));
    }
    Ok(Some(at))
}

/// The ids the server makes at a batch job's clock (ids at the server's own time come from
/// `Comb::new`).
static BATCH_IDS: combkey::V7Generator = combkey::V7Generator::new();

/// Checks a client-made id: a v7 prefix COMB or a short prefix COMB, in the window.
fn validate(config: &Config, id: &str, clock: Option<&str>) -> Result<Comb, String> {
    let id: Comb = id.parse().map_err(|e| format!("id: {e}"))?;
    let expected = match id.version() {
        7 => Expected::V7,
        // A face is made from a v7 id's time and random bits: nothing else has one.
        v if config.face_key.is_some() => {
            return Err(format!("id: version {v:x} is not accepted: expected a v7 prefix COMB (faces are on)"));
        }
        v if v == config.short_prefix.version() => Expected::ShortPrefix(config.short_prefix),
        v => {
            return Err(format!("id: version {v:x} is not accepted: expected a v7 prefix COMB or a short prefix COMB"));
        }
    };
    let validator = Validator::new(expected).past(config.past).future(config.future);
    // A batch job's own "now", bounded by the server's.
    let verdict = match batch_clock(config, clock)? {
        None => validator.validate(&id),
        Some(at) => validator.validate_at(&id, at),
    };
    verdict.map(|()| id).map_err(|e| format!("id: {e}"))
}

/// Creates an order, idempotently.
#[utoipa::path(
    post,
    path = "/orders",
    request_body = CreateOrder,
    responses(
        (status = 201, description = "Created", body = Order),
        (status = 200, description = "The same request again: the order it created", body = Order),
        (status = 400, description = "The body is not JSON", body = ApiError),
        (status = 409, description = "The id exists with another body", body = ApiError),
        (status = 415, description = "The body is not sent as application/json", body = ApiError),
        (status = 422, description = "Invalid id, clock or body: among them an id or clock outside the time window around the server's clock, which no schema can express", body = ApiError),
        (status = 500, description = "The database failed (after retrying what a retry can overcome)", body = ApiError),
    )
)]
async fn create(State(state): State<Arc<AppState>>, body: Result<Json<CreateOrder>, JsonRejection>) -> Response {
    let Json(req) = match body {
        Ok(b) => b,
        Err(rejection) => return error(rejection.status(), rejection.body_text()),
    };
    if let Err(reason) = validate_body(&req.item, req.quantity) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, reason);
    }
    let result = match (&req.id, &req.command_id) {
        (Some(id), _) => match validate(&state.config, id, req.clock.as_deref()) {
            Ok(id) => {
                let order = Order { id, item: req.item, quantity: req.quantity };
                on_store!(&state.backend, s => s.create_with_id(order.clone()).await).map(|c| (order, c))
            }
            Err(reason) => return error(StatusCode::UNPROCESSABLE_ENTITY, reason),
        },
        (None, Some(command_id)) => match command_id.parse::<Comb>() {
            Ok(command_id) => {
                let id = match batch_clock(&state.config, req.clock.as_deref()) {
                    Ok(None) => Comb::new(),
                    Ok(Some(at)) => BATCH_IDS.generate_at(at),
                    Err(reason) => return error(StatusCode::UNPROCESSABLE_ENTITY, reason),
                };
                let order = Order { id, item: req.item, quantity: req.quantity };
                on_store!(&state.backend, s => s.create_with_command(command_id, order.clone()).await)
                    .map(|c| (order, c))
            }
            Err(e) => return error(StatusCode::UNPROCESSABLE_ENTITY, format!("command_id: {e}")),
        },
        (None, None) => return error(StatusCode::UNPROCESSABLE_ENTITY, "an id or a command_id is required"),
    };
    match result {
        Ok((_, Created::New(order))) => (StatusCode::CREATED, Json(order)).into_response(),
        Ok((asked, Created::Existing(order))) => {
            if order.item == asked.item && order.quantity == asked.quantity {
                (StatusCode::OK, Json(order)).into_response()
            } else {
                error(
                    StatusCode::CONFLICT,
                    format!("order {} exists with a different body", shown(&state.config, order.id)),
                )
            }
        }
        Err(e) => internal(e),
    }
}

/// Reads an order.
#[utoipa::path(
    get,
    path = "/orders/{id}",
    params(("id" = Comb, Path, description = "The order's id")),
    responses(
        (status = 200, description = "The order", body = Order),
        (status = 301, description = "An id from before the keys were converted: the order's new key is in Location", body = Order),
        (status = 400, description = "A malformed id", body = ApiError),
        (status = 404, description = "No such order", body = ApiError),
        (status = 500, description = "The database failed", body = ApiError),
    )
)]
async fn read(State(state): State<Arc<AppState>>, Path(text): Path<String>) -> Response {
    let id = match path_id(&state.config, &text) {
        Ok(id) => id,
        Err((status, message)) => return error(status, message),
    };
    match on_store!(&state.backend, s => s.get(id).await) {
        Ok(Some(order)) => return Json(order).into_response(),
        Ok(None) => {}
        Err(e) => return internal(e),
    }
    // An id a client kept from before the keys were converted: its row has the new key, which
    // the conversion's rule computes or the key map holds.
    let new = match state.config.key_migration.and_then(|m| m.new_key(&id)) {
        Some(new) => Some(new),
        None => match on_store!(&state.backend, s => s.resolve(id).await) {
            Ok(new) => new,
            Err(e) => return internal(e),
        },
    };
    if let Some(new) = new {
        match on_store!(&state.backend, s => s.get(new).await) {
            Ok(Some(order)) => {
                let location = format!("/orders/{}", shown(&state.config, new));
                return (StatusCode::MOVED_PERMANENTLY, [(axum::http::header::LOCATION, location)], Json(order))
                    .into_response();
            }
            Ok(None) => {}
            Err(e) => return internal(e),
        }
    }
    error(StatusCode::NOT_FOUND, format!("no order {}", shown(&state.config, id)))
}

/// Adds a note to an order, by the key the client holds. While `combkey doctor --apply
/// --online` converts the orders' keys (and after), a key a client kept from before names no
/// order: the insert fails its foreign key (PostgreSQL 23503, MySQL/MariaDB 1452) and is tried
/// again with the order's new key ([`Config::key_migration`]), as docs/doctor.md says an
/// application does.
#[utoipa::path(
    post,
    path = "/orders/{id}/notes",
    params(("id" = Comb, Path, description = "The order's id (an id from before its key was converted works too)")),
    request_body = CreateNote,
    responses(
        (status = 201, description = "Added; `order_id` is the order's key now", body = Note),
        (status = 400, description = "A malformed id, or the body is not JSON", body = ApiError),
        (status = 404, description = "No such order", body = ApiError),
        (status = 415, description = "The body is not sent as application/json", body = ApiError),
        (status = 422, description = "The body's text is empty or too long", body = ApiError),
        (status = 500, description = "The database failed", body = ApiError),
    )
)]
async fn add_note(
    State(state): State<Arc<AppState>>,
    Path(text): Path<String>,
    body: Result<Json<CreateNote>, JsonRejection>,
) -> Response {
    let order_id = match path_id(&state.config, &text) {
        Ok(id) => id,
        Err((status, message)) => return error(status, message),
    };
    let Json(req) = match body {
        Ok(b) => b,
        Err(rejection) => return error(rejection.status(), rejection.body_text()),
    };
    let chars = req.body.chars().count();
    // As its schema says: 1 to 200 characters, whatever they are.
    if chars == 0 || chars > MAX_ITEM_CHARS {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("body: expected 1 to {MAX_ITEM_CHARS} characters of text, found {chars}"),
        );
    }
    let mut note = Note { id: Comb::new(), order_id, body: req.body };
    let mut tries = vec![order_id];
    tries.extend(state.config.key_migration.and_then(|m| m.new_key(&order_id)));
    if state.config.key_map.is_some() {
        match on_store!(&state.backend, s => s.resolve(order_id).await) {
            Ok(new) => tries.extend(new),
            Err(e) => return internal(e),
        }
    }
    for key in tries {
        note.order_id = key;
        match on_store!(&state.backend, s => s.add_note(&note).await) {
            Ok(()) => return (StatusCode::CREATED, Json(note)).into_response(),
            // No order has this key (any more): the next key, if the id is an old one.
            Err(e) if store::foreign_key_violation(&e) => {}
            Err(e) => return internal(e),
        }
    }
    error(StatusCode::NOT_FOUND, format!("no order {}", shown(&state.config, order_id)))
}
