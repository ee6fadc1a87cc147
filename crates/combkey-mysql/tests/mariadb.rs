//! combkey-mysql through mysql_async and mysql on a real MariaDB (`COMBKEY_MYSQL_URL`, which
//! `scripts/servers.sh` sets): both protocols (text for `query`, binary for `exec`), `BINARY(16)`,
//! MariaDB's `UUID` type, text keys, `Option` and LEFT JOIN, `FromRow`, bad data, multi-row
//! `INSERT` and `LOAD DATA LOCAL INFILE`. (mysql_common and mysql_async ship no uuid test of
//! their own to port; these cover what their `Uuid` conversion does, and more.)

use combkey_mysql::{Comb, CombText};
use mysql_async::prelude::*;
use mysql_async::{Conn, Opts, OptsBuilder};

fn url() -> String {
    combkey_testutil::mysql_url()
}

async fn conn() -> Conn {
    let url = url();
    Conn::new(Opts::from_url(&url).unwrap())
        .await
        .unwrap_or_else(|e| panic!("MySQL/MariaDB at {url} (source scripts/servers.sh): {e}"))
}

#[tokio::test]
async fn both_protocols_and_order() {
    let mut c = conn().await;
    c.query_drop("CREATE TEMPORARY TABLE t (id BINARY(16) PRIMARY KEY, n INT NOT NULL)").await.unwrap();
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(500);
    // Binary protocol (prepared statements), one multi-row INSERT per 100 rows.
    for chunk in shuffled.chunks(100) {
        let sql = format!("INSERT INTO t (id, n) VALUES {}", vec!["(?, ?)"; chunk.len()].join(", "));
        let params: Vec<mysql_async::Value> =
            chunk.iter().enumerate().flat_map(|(n, id)| [(*id).into(), mysql_async::Value::from(n)]).collect();
        c.exec_drop(sql, params).await.unwrap();
    }
    // Text protocol.
    let by_query: Vec<Comb> = c.query("SELECT id FROM t ORDER BY id").await.unwrap();
    assert_eq!(by_query, generated);
    // Binary protocol.
    let by_exec: Vec<Comb> = c.exec("SELECT id FROM t WHERE n >= ? ORDER BY id", (0,)).await.unwrap();
    assert_eq!(by_exec, generated);
    // The row's id is the client's id, and WHERE id = ? finds it.
    let found: Option<Comb> = c.exec_first("SELECT id FROM t WHERE id = ?", (shuffled[3],)).await.unwrap();
    assert_eq!(found, Some(shuffled[3]));
    let hex: Option<String> = c.exec_first("SELECT HEX(id) FROM t WHERE id = ?", (generated[0],)).await.unwrap();
    assert_eq!(hex.unwrap(), combkey_testutil::hex(generated[0]));
}

#[tokio::test]
async fn mariadb_uuid_type_and_text_keys() {
    let mut c = conn().await;
    let version: String = c.query_first("SELECT VERSION()").await.unwrap().unwrap();
    assert!(version.contains("MariaDB"), "this test needs MariaDB's UUID type; the server is {version}");
    c.query_drop("CREATE TEMPORARY TABLE u (id UUID PRIMARY KEY, legacy CHAR(36) NOT NULL)").await.unwrap();
    // MariaDB's UUID type takes v7 ids in order (it compares v1-v5 ids differently).
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(100);
    for id in &shuffled {
        c.exec_drop("INSERT INTO u (id, legacy) VALUES (?, ?)", (id.to_string(), id.to_string())).await.unwrap();
    }
    let ids: Vec<Comb> = c.query("SELECT id FROM u ORDER BY id").await.unwrap();
    assert_eq!(ids, generated);
    let ids: Vec<Comb> = c.exec("SELECT legacy FROM u ORDER BY id", ()).await.unwrap();
    assert_eq!(ids, generated);
}

#[derive(Debug, PartialEq, FromRow)]
#[mysql(crate_name = "mysql_async")]
struct Order {
    id: Comb,
    parent: Option<Comb>,
    note: String,
}

#[tokio::test]
async fn from_row_option_and_left_join() {
    let mut c = conn().await;
    c.query_drop(
        "CREATE TEMPORARY TABLE o (id BINARY(16) PRIMARY KEY, parent BINARY(16) NULL, note TEXT NOT NULL);
         CREATE TEMPORARY TABLE i (id BINARY(16) PRIMARY KEY, order_id BINARY(16) NOT NULL)",
    )
    .await
    .unwrap();
    let (a, b) = (Comb::new(), Comb::new());
    c.exec_drop("INSERT INTO o VALUES (?, ?, ?), (?, ?, ?)", (a, None::<Comb>, "a", b, Some(a), "b")).await.unwrap();
    let item = Comb::new();
    c.exec_drop("INSERT INTO i VALUES (?, ?)", (item, a)).await.unwrap();
    let orders: Vec<Order> = c.query("SELECT id, parent, note FROM o ORDER BY id").await.unwrap();
    assert_eq!(
        orders,
        [Order { id: a, parent: None, note: "a".into() }, Order { id: b, parent: Some(a), note: "b".into() }]
    );
    let joined: Vec<(Comb, Option<Comb>)> =
        c.query("SELECT o.id, i.id FROM o LEFT JOIN i ON i.order_id = o.id ORDER BY o.id").await.unwrap();
    assert_eq!(joined, [(a, Some(item)), (b, None)]);
}

#[tokio::test]
async fn bad_data_is_an_error_with_get_opt() {
    let mut c = conn().await;
    let checks = [
        ("SELECT UNHEX('00112233445566778899AABBCCDDEE')", "15"), // 15 bytes
        ("SELECT 'garbage'", "invalid UUID"),
        ("SELECT NULL", "NULL"),
        ("SELECT 42", "found"),
    ];
    for (sql, says) in checks {
        let mut row: mysql_async::Row = c.query_first(sql).await.unwrap().unwrap();
        let value = row.as_ref(0).unwrap().clone();
        let err = combkey_mysql::Comb::from_value_checked(&value).unwrap_err();
        assert!(err.to_string().contains(says), "{sql}: {err}");
        // What row access gives: an error carrying the value, never a panic with get_opt/take_opt.
        let got = row.take_opt::<Comb, _>(0).unwrap();
        assert!(got.is_err(), "{sql}");
    }
    // A transaction that fails half way leaves nothing.
    c.query_drop("CREATE TEMPORARY TABLE d (id BINARY(16) PRIMARY KEY)").await.unwrap();
    let id = Comb::new();
    let mut tx = c.start_transaction(Default::default()).await.unwrap();
    tx.exec_drop("INSERT INTO d VALUES (?)", (id,)).await.unwrap();
    assert!(tx.exec_drop("INSERT INTO d VALUES (?)", (id,)).await.is_err());
    tx.rollback().await.unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM d").await.unwrap();
    assert_eq!(n, Some(0));
}

/// Bulk loading with `LOAD DATA LOCAL INFILE`: the ids as the 32 hex digits of their stored
/// form, `UNHEX`ed into the `BINARY(16)` key.
#[tokio::test]
async fn load_data_local_infile() {
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(20_000);
    let path = std::env::temp_dir().join(format!("combkey-mysql-load-{}.tsv", std::process::id()));
    let mut text = String::new();
    for (n, id) in shuffled.iter().enumerate() {
        text.push_str(&format!("{}\trow {n}\n", combkey::Backend::MySql.stored_text(id.to_comb())));
    }
    std::fs::write(&path, text).unwrap();
    let opts = OptsBuilder::from_opts(Opts::from_url(&url()).unwrap())
        .local_infile_handler(Some(mysql_async::WhiteListFsHandler::new(&[path.clone()][..])));
    let mut c = Conn::new(opts).await.unwrap();
    c.query_drop("CREATE TEMPORARY TABLE l (id BINARY(16) PRIMARY KEY, note TEXT NOT NULL)").await.unwrap();
    c.query_drop(format!("LOAD DATA LOCAL INFILE '{}' INTO TABLE l (@id, note) SET id = UNHEX(@id)", path.display()))
        .await
        .unwrap();
    let ids: Vec<Comb> = c.query("SELECT id FROM l ORDER BY id").await.unwrap();
    assert_eq!(ids, generated);
    let note: Option<String> = c.exec_first("SELECT note FROM l WHERE id = ?", (shuffled[9],)).await.unwrap();
    assert_eq!(note.as_deref(), Some("row 9"));
    let _ = std::fs::remove_file(&path);
}

/// The synchronous `mysql` crate: the same conversions.
#[test]
fn the_mysql_crate() {
    use mysql::prelude::*;
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url()).unwrap()).unwrap();
    c.query_drop("CREATE TEMPORARY TABLE s (id BINARY(16) PRIMARY KEY)").unwrap();
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(50);
    c.exec_batch("INSERT INTO s VALUES (?)", shuffled.iter().map(|id| (*id,))).unwrap();
    let back: Vec<Comb> = c.query("SELECT id FROM s ORDER BY id").unwrap();
    assert_eq!(back, generated);
    let one: Option<Comb> = c.exec_first("SELECT id FROM s WHERE id = ?", (shuffled[0],)).unwrap();
    assert_eq!(one, Some(shuffled[0]));
}

/// A table keyed by UUID text (`CHAR(36)` with a binary collation, where `WHERE id = ?`
/// compares exactly, and `VARCHAR(36)` with MariaDB's default one): `CombText` binds the text,
/// so inserts store the canonical text, lookups by key find rows, a foreign key and a join on
/// text keys work, on both protocols; `Comb` (16 bytes) would match nothing.
#[tokio::test]
async fn text_keys_read_and_write() {
    let mut c = conn().await;
    for (t, ty) in
        [("text_keys_c36", "CHAR(36) CHARACTER SET ascii COLLATE ascii_bin"), ("text_keys_v36", "VARCHAR(36)")]
    {
        c.query_drop(format!(
            "DROP TABLE IF EXISTS {t}_c; DROP TABLE IF EXISTS {t};
             CREATE TABLE {t} (id {ty} PRIMARY KEY, n INT NOT NULL);
             CREATE TABLE {t}_c (id {ty} PRIMARY KEY, parent {ty} NOT NULL, FOREIGN KEY (parent) REFERENCES {t} (id))"
        ))
        .await
        .unwrap();
        let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<CombText>(100);
        for (n, id) in shuffled.iter().enumerate() {
            c.exec_drop(format!("INSERT INTO {t} (id, n) VALUES (?, ?)"), (*id, n)).await.unwrap();
        }
        let stored: Option<String> =
            c.exec_first(format!("SELECT id FROM {t} WHERE id = ?"), (generated[5],)).await.unwrap();
        assert_eq!(stored, Some(generated[5].to_string()), "{ty}: the canonical text");
        let by_query: Vec<CombText> = c.query(format!("SELECT id FROM {t} ORDER BY id")).await.unwrap();
        assert_eq!(by_query, generated, "{ty}");
        let by_exec: Vec<CombText> =
            c.exec(format!("SELECT id FROM {t} WHERE n >= ? ORDER BY id"), (0,)).await.unwrap();
        assert_eq!(by_exec, generated, "{ty}");
        let child = CombText::new();
        c.exec_drop(format!("INSERT INTO {t}_c VALUES (?, ?)"), (child, generated[9])).await.unwrap();
        let parent: Option<CombText> = c
            .exec_first(format!("SELECT p.id FROM {t}_c c JOIN {t} p ON p.id = c.parent WHERE c.id = ?"), (child,))
            .await
            .unwrap();
        assert_eq!(parent, Some(generated[9]), "{ty}");
        // 16 bytes are not the text: no row, or (ascii column) an error.
        let missed: Result<Option<i64>, _> =
            c.exec_first(format!("SELECT n FROM {t} WHERE id = ?"), (Comb::from(generated[0].to_comb()),)).await;
        assert!(!matches!(missed, Ok(Some(_))), "{ty}: {missed:?}");
        c.query_drop(format!("DROP TABLE {t}_c; DROP TABLE {t}")).await.unwrap();
    }
}

/// Code written for `uuid::Uuid` compiles with only the type changed to the text type.
mod swap_comb_text {
    combkey_testutil::uuid_swap_test!(combkey_mysql::CombText);
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_mysql::Comb`, and
/// observes the same (no database needed).
mod swap_comb {
    combkey_testutil::uuid_swap_test!(combkey_mysql::Comb);
}
