//! docs/migrating.md, "The id's other homes": in a web application the id also lives in route
//! extractors, sessions and tokens. Here an axum app written for `uuid::Uuid` with the id's
//! type changed to `combkey_sqlx::Comb` in those places (with combkey-sqlx's `serde` feature,
//! as the app's `uuid` had its own), and a function left on `uuid::Uuid` reached with
//! `.into()` at the boundary.

use std::net::SocketAddr;

use axum::extract::Path;
use axum::routing::{get, post};
use axum::{Json, Router};
use combkey_sqlx::Comb;
use serde::{Deserialize, Serialize};
use serde_json::json;

mod common;

/// What the app keeps in a session cookie or a token: serialized, so the id's type must be
/// `Serialize`/`Deserialize` (combkey-sqlx's `serde` feature).
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Session {
    user: Comb,
    orders: Vec<Comb>,
}

/// A part of the app not moved yet, still on `uuid::Uuid`.
fn audit_line(user: uuid::Uuid) -> String {
    format!("user {} (version {})", user.hyphenated(), user.get_version_num())
}

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    addr
}

#[tokio::test]
async fn route_extractors_sessions_and_the_uuid_boundary() {
    let app = Router::new()
        // Was `Path<Uuid>`.
        .route(
            "/users/{id}",
            get(|Path(id): Path<Comb>| async move { Json(json!({ "id": id, "audit": audit_line(id.into()) })) }),
        )
        // Was `Path<(Uuid, Uuid)>`.
        .route(
            "/users/{user}/orders/{order}",
            get(|Path((user, order)): Path<(Comb, Comb)>| async move { Json(json!({ "user": user, "order": order })) }),
        )
        // Was `Json<Session>` with `user: Uuid`.
        .route("/session", post(|Json(s): Json<Session>| async move { Json(s) }));
    let addr = serve(app).await;

    let id = Comb::new();
    let (status, body) = common::request(addr, "GET", &format!("/users/{id}"), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], id.to_string(), "serialized as uuid::Uuid is: the hyphenated string");
    assert_eq!(body["audit"], format!("user {id} (version 7)"));
    // The forms a `Path<Uuid>` takes, a `Path<Comb>` takes too.
    let upper = id.to_string().to_uppercase();
    let (status, body) = common::request(addr, "GET", &format!("/users/{upper}"), None).await;
    assert_eq!((status, body["id"].as_str()), (200, Some(id.to_string().as_str())));
    let simple = id.simple().to_string();
    let (status, _) = common::request(addr, "GET", &format!("/users/{simple}"), None).await;
    assert_eq!(status, 200);
    let order = Comb::new();
    let (status, body) = common::request(addr, "GET", &format!("/users/{id}/orders/{order}"), None).await;
    assert_eq!((status, body), (200, json!({ "user": id, "order": order })));

    // A session round trip: the JSON a `uuid::Uuid` session held reads as the new type.
    let before = json!({ "user": uuid::Uuid::from(id), "orders": [uuid::Uuid::from(order)] }).to_string();
    let session: Session = serde_json::from_str(&before).expect("a uuid::Uuid session reads");
    assert_eq!(session, Session { user: id, orders: vec![order] });
    let (status, body) = common::request(addr, "POST", "/session", Some(&before)).await;
    assert_eq!((status, body.to_string()), (200, before));
}

/// A malformed id in the path is refused by the extractor before the handler runs, as with
/// `Path<Uuid>` (axum answers 400 with a text body).
#[tokio::test]
async fn a_malformed_path_id_is_a_400() {
    let app = Router::new().route("/users/{id}", get(|Path(id): Path<Comb>| async move { id.to_string() }));
    let addr = serve(app).await;
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.write_all(b"GET /users/not-an-id HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").await.expect("send");
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.expect("receive");
    assert!(raw.starts_with("HTTP/1.1 400"), "{raw}");
}
