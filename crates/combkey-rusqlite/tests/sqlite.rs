//! combkey-rusqlite on an embedded SQLite: rusqlite's own uuid test ported, order, text
//! keys, `Option`, LEFT JOIN, transactions, and every kind of bad value.

use combkey_rusqlite::{Comb, CombText};
use rusqlite::{Connection, Error, params};

fn db() -> Connection {
    Connection::open_in_memory().expect("in-memory SQLite")
}

/// rusqlite's `src/types/to_sql.rs` `test_uuid`, with our type.
#[test]
fn rusqlite_uuid_test_ported() -> rusqlite::Result<()> {
    let db = db();
    db.execute_batch("CREATE TABLE foo (id BLOB CHECK(length(id) = 16), label TEXT);")?;
    let id = Comb::new();
    db.execute("INSERT INTO foo (id, label) VALUES (?1, ?2)", params![id, "target"])?;
    let mut stmt = db.prepare("SELECT id, label FROM foo WHERE id = ?1")?;
    let mut rows = stmt.query(params![id])?;
    let row = rows.next()?.unwrap();
    let found_id: Comb = row.get_unwrap(0);
    let found_label: String = row.get_unwrap(1);
    assert_eq!(found_id, id);
    assert_eq!(found_label, "target");
    Ok(())
}

#[test]
fn order_by_id_is_generation_order() -> rusqlite::Result<()> {
    let mut db = db();
    db.execute_batch("CREATE TABLE t (id BLOB PRIMARY KEY, n INTEGER NOT NULL)")?;
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<Comb>(1000);
    let tx = db.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO t (id, n) VALUES (?1, ?2)")?;
        for (n, id) in shuffled.iter().enumerate() {
            insert.execute(params![id, i64::try_from(n).unwrap()])?;
        }
    }
    tx.commit()?;
    let back: Vec<Comb> =
        db.prepare("SELECT id FROM t ORDER BY id")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    assert_eq!(back, generated);
    // Stored as 16 bytes, the public ones.
    let (len, hex): (i64, String) =
        db.query_row("SELECT length(id), hex(id) FROM t WHERE id = ?1", [generated[0]], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    assert_eq!(len, 16);
    assert_eq!(hex, combkey_testutil::hex(generated[0]));
    // A range of ids: BETWEEN through the primary key.
    let between: i64 = db.query_row(
        "SELECT count(*) FROM t WHERE id BETWEEN ?1 AND ?2",
        params![generated[100], generated[199]],
        |r| r.get(0),
    )?;
    assert_eq!(between, 100);
    Ok(())
}

#[test]
fn option_null_and_left_join() -> rusqlite::Result<()> {
    let db = db();
    db.execute_batch(
        "CREATE TABLE o (id BLOB PRIMARY KEY, parent BLOB);
         CREATE TABLE i (id BLOB PRIMARY KEY, order_id BLOB NOT NULL);",
    )?;
    let (with, without) = (Comb::new(), Comb::new());
    db.execute("INSERT INTO o VALUES (?1, ?2)", params![with, None::<Comb>])?;
    db.execute("INSERT INTO o VALUES (?1, ?2)", params![without, Some(with)])?;
    let item = Comb::new();
    db.execute("INSERT INTO i VALUES (?1, ?2)", params![item, with])?;
    let rows: Vec<(Comb, Option<Comb>, Option<Comb>)> = db
        .prepare("SELECT o.id, o.parent, i.id FROM o LEFT JOIN i ON i.order_id = o.id ORDER BY o.id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    assert_eq!(rows, [(with, None, Some(item)), (without, Some(with), None)]);
    // NULL into a non-Option: rusqlite's InvalidColumnType, naming the column.
    let err = db.query_row("SELECT parent FROM o WHERE id = ?1", [with], |r| r.get::<_, Comb>(0)).unwrap_err();
    assert!(matches!(err, Error::InvalidColumnType(0, _, rusqlite::types::Type::Null)), "{err:?}");
    Ok(())
}

#[test]
fn text_keys_read() -> rusqlite::Result<()> {
    let db = db();
    let id = Comb::new();
    for text in [id.to_string(), format!("{id:#}"), format!("{{{id}}}"), id.to_string().replace('-', "")] {
        let back: Comb = db.query_row("SELECT ?1", [&text], |r| r.get(0))?;
        assert_eq!(back, id, "{text}");
    }
    Ok(())
}

#[test]
fn bad_values_are_typed_errors() {
    let db = db();
    let read = |sql: &str| db.query_row(sql, [], |r| r.get::<_, Comb>(0)).unwrap_err();
    // A 15-byte BLOB.
    let err = read("SELECT zeroblob(15)");
    assert!(matches!(err, Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, _)), "{err:?}");
    assert!(err.to_string().contains("Cannot read 16 byte value out of 15 byte blob"), "{err}");
    // UUID text stored in a BLOB.
    let err = read(&format!("SELECT CAST('{}' AS BLOB)", Comb::new()));
    assert!(err.to_string().contains("looks like UUID text stored in a binary column"), "{err}");
    // Text that is not a UUID.
    let err = read("SELECT 'garbage'");
    assert!(err.to_string().contains("invalid UUID length"), "{err}");
    // A number.
    let err = read("SELECT 42");
    assert!(matches!(err, Error::InvalidColumnType(0, _, rusqlite::types::Type::Integer)), "{err:?}");
}

/// A batch that fails half way leaves nothing: the transaction rolls back.
#[test]
fn a_failed_batch_writes_nothing() -> rusqlite::Result<()> {
    let mut db = db();
    db.execute_batch("CREATE TABLE t (id BLOB PRIMARY KEY)")?;
    let ids: Vec<Comb> = (0..10).map(|_| Comb::new()).collect();
    let tx = db.transaction()?;
    let mut failed = false;
    for id in ids.iter().chain(std::iter::once(&ids[3])) {
        if tx.execute("INSERT INTO t VALUES (?1)", [id]).is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "the duplicate id is refused");
    tx.rollback()?;
    let n: i64 = db.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?;
    assert_eq!(n, 0);
    Ok(())
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_rusqlite::Comb`, and
/// observes the same (no database needed).
mod swap_comb {
    combkey_testutil::uuid_swap_test!(combkey_rusqlite::Comb);
}

/// A table keyed by UUID text: `CombText` writes the text the column holds, so a lookup by
/// key finds rows written by other code (any letter case is read; lookups match the
/// canonical lowercase text), and a foreign key and a join on text keys work.
#[test]
fn text_keys_read_and_write() -> rusqlite::Result<()> {
    let db = db();
    db.execute_batch(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE tp (id TEXT PRIMARY KEY, n INTEGER NOT NULL);
         CREATE TABLE tc (id TEXT PRIMARY KEY, parent TEXT NOT NULL REFERENCES tp (id));",
    )?;
    let (generated, shuffled) = combkey_testutil::generated_and_shuffled::<CombText>(200);
    for (n, id) in shuffled.iter().enumerate() {
        db.execute("INSERT INTO tp VALUES (?1, ?2)", params![id, i64::try_from(n).unwrap()])?;
    }
    let stored: String = db.query_row("SELECT id FROM tp WHERE id = ?1", [generated[7]], |r| r.get(0))?;
    assert_eq!(stored, generated[7].to_string(), "the canonical text");
    let (ty, len): (String, i64) =
        db.query_row("SELECT typeof(id), length(id) FROM tp LIMIT 1", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    assert_eq!((ty.as_str(), len), ("text", 36));
    let back: Vec<CombText> =
        db.prepare("SELECT id FROM tp ORDER BY id")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    assert_eq!(back, generated, "text order is creation order for v7 ids");
    // A child written with the text type, joined back.
    let child = CombText::new();
    db.execute("INSERT INTO tc VALUES (?1, ?2)", params![child, generated[3]])?;
    let parent: CombText =
        db.query_row("SELECT tp.id FROM tc JOIN tp ON tp.id = tc.parent WHERE tc.id = ?1", [child], |r| r.get(0))?;
    assert_eq!(parent, generated[3]);
    // An uppercase key written by other code reads as the id.
    let upper = CombText::new();
    db.execute("INSERT INTO tp VALUES (?1, 0)", [upper.to_string().to_uppercase()])?;
    let read: CombText =
        db.query_row("SELECT id FROM tp WHERE upper(id) = ?1", [upper.to_string().to_uppercase()], |r| r.get(0))?;
    assert_eq!(read, upper);
    // The blob type would not find the text key: the reason this type exists.
    let missed: Option<i64> =
        db.query_row("SELECT n FROM tp WHERE id = ?1", [Comb::from(generated[0].to_comb())], |r| r.get(0)).ok();
    assert_eq!(missed, None);
    // Bad text is an error, not a panic.
    db.execute("INSERT INTO tp VALUES ('not-a-uuid', 0)", [])?;
    let err = db.query_row("SELECT id FROM tp WHERE id = 'not-a-uuid'", [], |r| r.get::<_, CombText>(0)).unwrap_err();
    assert!(matches!(err, Error::FromSqlConversionFailure(..)), "{err:?}");
    Ok(())
}

/// Code written for `uuid::Uuid` compiles with only the type changed to the text type.
mod swap_comb_text {
    combkey_testutil::uuid_swap_test!(combkey_rusqlite::CombText);
}
