//! combkey-diesel on embedded SQLite.
#![allow(missing_docs)] // `table!` declares public items without docs.

mod common;

use combkey_diesel::{Comb, CombText};
use diesel::connection::SimpleConnection;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Binary, Nullable, Text};

diesel::table! {
    combkey_orders (id) {
        id -> Binary,
        parent -> Nullable<Binary>,
        note -> Text,
    }
}

diesel::table! {
    combkey_items (id) {
        id -> Binary,
        order_id -> Binary,
        n -> Integer,
    }
}

diesel::table! {
    /// A legacy table keyed by UUID text.
    combkey_legacy (id) {
        id -> Text,
        note -> Text,
    }
}

diesel::joinable!(combkey_items -> combkey_orders (order_id));
diesel::allow_tables_to_appear_in_same_query!(combkey_orders, combkey_items);

#[derive(Queryable, Selectable, Insertable, AsChangeset, Identifiable, Debug, Clone, PartialEq)]
#[diesel(table_name = combkey_orders)]
struct Order {
    id: Comb,
    parent: Option<Comb>,
    note: String,
}

#[derive(Queryable, Selectable, Insertable, Identifiable, Associations, Debug, PartialEq)]
#[diesel(table_name = combkey_items, belongs_to(Order, foreign_key = order_id))]
struct Item {
    id: Comb,
    order_id: Comb,
    n: i32,
}

fn connect() -> SqliteConnection {
    let mut c = SqliteConnection::establish(":memory:").expect("in-memory SQLite");
    c.batch_execute(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE combkey_orders (id BLOB NOT NULL PRIMARY KEY, parent BLOB REFERENCES combkey_orders (id), note TEXT NOT NULL);
         CREATE TABLE combkey_items (id BLOB NOT NULL PRIMARY KEY, order_id BLOB NOT NULL REFERENCES combkey_orders (id), n INTEGER NOT NULL);
         CREATE TABLE combkey_legacy (id TEXT NOT NULL PRIMARY KEY, note TEXT NOT NULL);",
    )
    .expect("tables");
    c
}

common::harness!(SqliteConnection, Binary, Comb);
common::harness!(SqliteConnection, Text, CombText);
// One line per type case: the literal, the bound value inside SQL, the round trip, NULL.
combkey_testutil::test_type!(blocking blob_column, common::Harness::<SqliteConnection, Comb>::new(connect(), "NULL"), "SQLite BLOB", |id| format!("X'{}'", common::hex(id.into())));
combkey_testutil::test_type!(blocking text_column, common::Harness::<SqliteConnection, CombText>::new(connect(), "NULL"), "SQLite TEXT", |id| format!("'{id}'"));

#[test]
fn text_reads_as_the_id_and_bad_values_are_errors() {
    let mut c = connect();
    for id in common::sample_ids() {
        let text: Comb = diesel::select(sql::<Binary>(&format!("'{id}'"))).get_result(&mut c).unwrap();
        assert_eq!(text, id, "TEXT holding the UUID string");
    }
    let none: Option<Comb> = diesel::select(sql::<Nullable<Binary>>("NULL")).get_result(&mut c).unwrap();
    assert_eq!(none, None);
    // NULL into a non-Option: diesel's own UnexpectedNullError, which its nullable tuples
    // (LEFT JOIN) rely on to produce `None`.
    let err = diesel::select(sql::<Binary>("NULL")).get_result::<Comb>(&mut c).unwrap_err();
    assert!(common::is_unexpected_null(&err), "{err}");
    for (expr, message) in [
        ("zeroblob(15)", "expected 16 bytes, found 15"),
        ("zeroblob(17)", "expected 16 bytes, found 17"),
        ("zeroblob(0)", "expected 16 bytes, found 0"),
        ("CAST('017f22e2-79b0-7cc3-98c4-dc0c0c07398f' AS BLOB)", "UUID text stored in a binary column"),
        ("'garbage'", "invalid UUID length"),
    ] {
        let err = diesel::select(sql::<Binary>(expr)).get_result::<Comb>(&mut c).unwrap_err();
        assert!(common::chain(&err).contains(message), "{expr}: {}", common::chain(&err));
    }
}

#[test]
fn model_queries_order_and_foreign_key() {
    use self::combkey_orders::dsl::{combkey_orders as orders, id};
    let mut c = connect();
    let (ids, shuffled) = common::generated_and_shuffled(10_000);
    let rows: Vec<Order> = shuffled.iter().map(|i| Order { id: *i, parent: None, note: "n".into() }).collect();
    c.transaction(|c| {
        for chunk in rows.chunks(300) {
            diesel::insert_into(orders).values(chunk).execute(c)?;
        }
        QueryResult::Ok(())
    })
    .unwrap();
    let back: Vec<Comb> = orders.select(id).order(id.asc()).load(&mut c).unwrap();
    assert_eq!(back, ids, "ORDER BY id is generation order");
    let later: i64 = orders.filter(id.gt(ids[9_000])).count().get_result(&mut c).unwrap();
    assert_eq!(later, 999);
    let some: Vec<Comb> = orders.filter(id.eq_any(&ids[10..13])).select(id).order(id.asc()).load(&mut c).unwrap();
    assert_eq!(some, &ids[10..13]);
    let mut first: Order = orders.find(ids[0]).select(Order::as_select()).first(&mut c).unwrap();
    first.parent = Some(ids[1]);
    diesel::update(&first).set(&first).execute(&mut c).unwrap();
    let again: Order = orders.filter(id.eq(ids[0])).select(Order::as_select()).first(&mut c).unwrap();
    assert_eq!(again, first);

    let items: Vec<Item> = (0..3).map(|n| Item { id: Comb::new(), order_id: first.id, n }).collect();
    diesel::insert_into(combkey_items::table).values(&items).execute(&mut c).unwrap();
    let belonging: Vec<Item> =
        Item::belonging_to(&first).select(Item::as_select()).order(combkey_items::n.asc()).load(&mut c).unwrap();
    assert_eq!(belonging, items);
    let joined: i64 = combkey_items::table.inner_join(orders).count().get_result(&mut c).unwrap();
    assert_eq!(joined, 3);
    let orphan = Item { id: Comb::new(), order_id: Comb::new(), n: 9 };
    assert!(diesel::insert_into(combkey_items::table).values(&orphan).execute(&mut c).is_err());
}

/// The id column's SQL type in this backend's `table!`s, and a SQL literal of an id.
type IdSql = Binary;

fn literal(id: Comb) -> String {
    format!("X'{}'", common::hex(id))
}

/// SQLite's query plan of `select`.
fn plan(c: &mut SqliteConnection, select: &str) -> String {
    #[derive(QueryableByName)]
    struct Step {
        #[diesel(sql_type = Text)]
        detail: String,
    }
    let steps: Vec<Step> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {select}")).load(c).unwrap();
    steps.into_iter().map(|s| s.detail).collect::<Vec<_>>().join("\n")
}

/// A search through the key's index (a `BLOB PRIMARY KEY` is an automatic unique index).
fn uses_primary_key(plan: &str) -> bool {
    plan.contains("SEARCH combkey_orders USING") && plan.contains("(id>? AND id<?)")
}

include!("shared/orm_patterns.rs");

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_diesel::Comb`, and
/// observes the same (no database needed).
mod swap_comb {
    combkey_testutil::uuid_swap_test!(combkey_diesel::Comb);
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_diesel::CombText`, and
/// observes the same (no database needed).
mod swap_comb_text {
    combkey_testutil::uuid_swap_test!(combkey_diesel::CombText);
}
