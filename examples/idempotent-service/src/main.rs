//! `cargo run -p idempotent-service` serves on 127.0.0.1:3000 (`BIND` to change) with an
//! in-memory SQLite database, or the one in `DATABASE_URL`. `KEY_MIGRATION` names how
//! `combkey doctor` converted the table's keys (`rtcomb-sql -> v7`), so ids clients kept from
//! before are redirected to the new keys; `KEY_MAP` names the key map it kept
//! (`combkey_keymap_orders`), through which they are too. `FACE_KEY` (32 hex digits) shows every id as a face.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = idempotent_service::Config::default();
    // Unset or empty (as an `.env` line `DATABASE_URL=` leaves it): the in-memory default.
    if let Some(url) = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) {
        config.database_url = url;
    }
    if let Some(m) = std::env::var("KEY_MIGRATION").ok().filter(|m| !m.is_empty()) {
        config.key_migration = Some(m.parse()?);
    }
    // The key map `combkey doctor` kept (`combkey_keymap_orders`): old ids resolve through it.
    if let Some(m) = std::env::var("KEY_MAP").ok().filter(|m| !m.is_empty()) {
        config.key_map = Some(m);
    }
    // 32 hex digits: every id the service shows is a face (see combkey's docs/faces.md).
    if let Some(k) = std::env::var("FACE_KEY").ok().filter(|k| !k.is_empty()) {
        config.face_key = Some(k.parse().map_err(|e| format!("FACE_KEY: {e}"))?);
    }
    let bind = std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let app = idempotent_service::app(config).await?;
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("listening on http://{}", listener.local_addr()?);
    println!("try: curl -s -XPOST localhost:3000/orders -H 'content-type: application/json' \\");
    println!(
        "       -d \"{{\\\"id\\\": \\\"$(cargo run -q -p combkey-cli -- new)\\\", \\\"item\\\": \\\"tea\\\", \\\"quantity\\\": 2}}\""
    );
    axum::serve(listener, app).await?;
    Ok(())
}
