//! combkey-diesel on a real PostgreSQL (`COMBKEY_PG_URL`), every test in a transaction that is
//! never committed.
#![allow(missing_docs)] // `table!` declares public items without docs.

mod common;

use combkey_diesel::{Comb, CombText};
use diesel::connection::SimpleConnection;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text, Uuid};

diesel::table! {
    combkey_orders (id) {
        id -> Uuid,
        parent -> Nullable<Uuid>,
        note -> Text,
    }
}

diesel::table! {
    combkey_items (id) {
        id -> Uuid,
        order_id -> Uuid,
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

fn connect() -> PgConnection {
    let url = common::pg_url();
    let mut c = PgConnection::establish(&url)
        .unwrap_or_else(|e| panic!("PostgreSQL at {url} (source scripts/servers.sh): {e}"));
    c.begin_test_transaction().expect("test transaction");
    c.batch_execute(
        "CREATE TEMPORARY TABLE combkey_orders (id uuid PRIMARY KEY, parent uuid REFERENCES combkey_orders (id), note text NOT NULL);
         CREATE TEMPORARY TABLE combkey_items (id uuid PRIMARY KEY, order_id uuid NOT NULL REFERENCES combkey_orders (id), n int NOT NULL);
         CREATE TEMPORARY TABLE combkey_legacy (id text PRIMARY KEY, note text NOT NULL)",
    )
    .expect("temporary tables");
    c
}

common::harness!(PgConnection, Uuid, Comb);
common::harness!(PgConnection, Text, CombText);
// One line per type case: the literal, the bound value inside SQL, the round trip, NULL.
combkey_testutil::test_type!(blocking uuid_column, common::Harness::<PgConnection, Comb>::new(connect(), "NULL::uuid"), "PostgreSQL uuid", |id| format!("'{id}'::uuid"));
combkey_testutil::test_type!(blocking text_column, common::Harness::<PgConnection, CombText>::new(connect(), "NULL::text"), "PostgreSQL text", |id| format!("'{id}'::text"));

#[test]
fn null_and_bad_values() {
    let mut c = connect();
    // NULL into a non-Option: diesel's own UnexpectedNullError (its nullable tuples need it).
    let err = diesel::select(sql::<Uuid>("NULL::uuid")).get_result::<Comb>(&mut c).unwrap_err();
    assert!(common::is_unexpected_null(&err), "{err}");
    // A value of the wrong length (a bytea read as uuid): an error that says what it found.
    let err = diesel::select(sql::<Uuid>("'\\x0001'::bytea")).get_result::<Comb>(&mut c).unwrap_err();
    let err = common::chain(&err);
    assert!(err.contains("expected 16 bytes, found 2"), "{err}");
}

#[test]
fn model_queries_and_order() {
    use self::combkey_orders::dsl::{combkey_orders as orders, id};
    let mut c = connect();
    let (ids, shuffled) = common::generated_and_shuffled(10_000);
    let rows: Vec<Order> = shuffled.iter().map(|i| Order { id: *i, parent: None, note: "n".into() }).collect();
    for chunk in rows.chunks(1000) {
        diesel::insert_into(orders).values(chunk).execute(&mut c).unwrap();
    }
    let back: Vec<Comb> = orders.select(id).order(id.asc()).load(&mut c).unwrap();
    assert_eq!(back, ids, "ORDER BY id is generation order");
    let later: i64 = orders.filter(id.gt(ids[9_000])).count().get_result(&mut c).unwrap();
    assert_eq!(later, 999);
    let some: Vec<Comb> = orders.filter(id.eq_any(&ids[10..13])).select(id).order(id.asc()).load(&mut c).unwrap();
    assert_eq!(some, &ids[10..13]);
    // Update through AsChangeset, find through Identifiable, a nullable self-reference.
    let mut first: Order = orders.find(ids[0]).select(Order::as_select()).first(&mut c).unwrap();
    first.parent = Some(ids[1]);
    first.note = "changed".into();
    diesel::update(&first).set(&first).execute(&mut c).unwrap();
    let again: Order = orders.filter(id.eq(ids[0])).select(Order::as_select()).first(&mut c).unwrap();
    assert_eq!(again, first);
}

#[test]
fn foreign_key_and_join() {
    let mut c = connect();
    let order = Order { id: Comb::new(), parent: None, note: "o".into() };
    diesel::insert_into(combkey_orders::table).values(&order).execute(&mut c).unwrap();
    let items: Vec<Item> = (0..3).map(|n| Item { id: Comb::new(), order_id: order.id, n }).collect();
    diesel::insert_into(combkey_items::table).values(&items).execute(&mut c).unwrap();
    let joined: Vec<(Comb, Comb)> = combkey_items::table
        .inner_join(combkey_orders::table)
        .select((combkey_items::id, combkey_orders::id))
        .order(combkey_items::id.asc())
        .load(&mut c)
        .unwrap();
    assert_eq!(joined, items.iter().map(|i| (i.id, order.id)).collect::<Vec<_>>());
    let belonging: Vec<Item> =
        Item::belonging_to(&order).select(Item::as_select()).order(combkey_items::n.asc()).load(&mut c).unwrap();
    assert_eq!(belonging, items);
    // The foreign key is enforced on the stored bytes.
    let orphan = Item { id: Comb::new(), order_id: Comb::new(), n: 9 };
    assert!(diesel::insert_into(combkey_items::table).values(&orphan).execute(&mut c).is_err());
}

/// The id column's SQL type in this backend's `table!`s, and a SQL literal of an id.
type IdSql = Uuid;

fn literal(id: Comb) -> String {
    format!("'{id}'::uuid")
}

/// PostgreSQL's query plan of `select`, after ANALYZE so the planner knows the table's size.
fn plan(c: &mut PgConnection, select: &str) -> String {
    #[derive(QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
        line: String,
    }
    c.batch_execute("ANALYZE combkey_orders").unwrap();
    let lines: Vec<Line> = diesel::sql_query(format!("EXPLAIN {select}")).load(c).unwrap();
    lines.into_iter().map(|l| l.line).collect::<Vec<_>>().join("\n")
}

/// A scan of the primary key's index (`Index Scan`, `Index Only Scan` or `Bitmap Index Scan`).
fn uses_primary_key(plan: &str) -> bool {
    plan.contains("combkey_orders_pkey") && !plan.contains("Seq Scan")
}

include!("shared/orm_patterns.rs");

diesel::table! {
    /// The table of `examples/partitioned-migrations`.
    events (id) {
        id -> Uuid,
        kind -> Text,
        body -> Text,
    }
}

/// The example migration of a table partitioned by month through its key, run as
/// `diesel migration run` runs an `up.sql` (one `batch_execute`): rows land in their month's
/// partition and `created_in` finds them; `down.sql` removes it all.
#[test]
fn example_partitioned_migration() {
    use combkey_diesel::CreatedInExpressionMethods;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/partitioned-migrations/postgres/");
    let up = std::fs::read_to_string(format!("{dir}20260101000000_create_events.up.sql")).unwrap();
    let down = std::fs::read_to_string(format!("{dir}20260101000000_create_events.down.sql")).unwrap();
    let mut c = connect();
    c.batch_execute(&up).unwrap();
    let g = combkey::V7Generator::new();
    let at = |s: &str| s.parse::<combkey::Timestamp>().unwrap();
    for s in ["2026-01-01T00:00:00Z", "2026-01-31T23:59:59.999Z", "2026-02-01T00:00:00Z", "2027-01-01T00:00:00Z"] {
        let id = Comb::from(g.generate_at(at(s)));
        diesel::insert_into(events::table)
            .values((events::id.eq(id), events::kind.eq("test"), events::body.eq(s)))
            .execute(&mut c)
            .unwrap();
    }
    let january = combkey::Comb::range(at("2026-01-01T00:00:00Z")..at("2026-02-01T00:00:00Z")).unwrap();
    let found: Vec<String> = events::table
        .filter(events::id.created_in(january))
        .select(events::body)
        .order(events::id)
        .load(&mut c)
        .unwrap();
    assert_eq!(found, ["2026-01-01T00:00:00Z", "2026-01-31T23:59:59.999Z"]);
    let placed: Vec<String> =
        events::table.select(sql::<Text>("tableoid::regclass::text")).order(events::id).load(&mut c).unwrap();
    assert_eq!(placed, ["events_2026_01", "events_2026_01", "events_2026_02", "events_default"]);
    c.batch_execute(&down).unwrap();
    let gone: bool = diesel::select(sql::<Bool>("to_regclass('events_2026_01') IS NULL")).get_result(&mut c).unwrap();
    assert!(gone);
}
