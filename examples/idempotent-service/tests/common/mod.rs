//! What the HTTP tests share: a minimal HTTP/1.1 client and the service on a loopback port.
#![allow(dead_code)] // each test binary uses its own part of it

use std::net::SocketAddr;

use combkey::Comb;
use idempotent_service::Config;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 request with `Connection: close`; the status and the JSON body.
pub async fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect to the service");
    let body = body.unwrap_or("");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("send");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("receive");
    let text = String::from_utf8(raw).expect("utf-8 response");
    let (head, rest) = text.split_once("\r\n\r\n").expect("a header and a body");
    let status: u16 = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("a status");
    let json =
        serde_json::from_str(rest).unwrap_or_else(|e| panic!("JSON body of {method} {path} ({status}): {e}: {rest:?}"));
    (status, json)
}

pub async fn post(addr: SocketAddr, body: &Value) -> (u16, Value) {
    request(addr, "POST", "/orders", Some(&body.to_string())).await
}

/// Starts the service on 127.0.0.1 with a random table prefix; returns its address.
pub async fn start(database_url: &str, prefix: &str) -> SocketAddr {
    let config = Config { database_url: database_url.into(), table_prefix: prefix.into(), ..Config::default() };
    let app = idempotent_service::app(config).await.unwrap_or_else(|e| panic!("service on {database_url}: {e}"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    addr
}

/// A table prefix of its own for each test.
pub fn prefix() -> String {
    format!("t{}_", Comb::new().to_string().replace('-', "")[20..].to_owned())
}
