//! combkey-diesel on a real MariaDB or MySQL (`COMBKEY_MYSQL_URL`): temporary tables in a
//! transaction that is never committed (temporary tables cause no implicit commit).
#![allow(missing_docs)] // `table!` declares public items without docs.

mod common;

use combkey_diesel::{Comb, CombText};
use diesel::connection::SimpleConnection;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Binary, Integer, Nullable, Text};

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
    /// A legacy table keyed by `CHAR(36)`, the commonest starting point on MySQL.
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

fn connect() -> MysqlConnection {
    let url = common::mysql_url();
    let mut c = MysqlConnection::establish(&url)
        .unwrap_or_else(|e| panic!("MySQL/MariaDB at {url} (source scripts/servers.sh): {e}"));
    c.batch_execute(
        "CREATE TEMPORARY TABLE combkey_orders (id BINARY(16) NOT NULL PRIMARY KEY, parent BINARY(16) NULL, note TEXT NOT NULL);
         CREATE TEMPORARY TABLE combkey_items (id BINARY(16) NOT NULL PRIMARY KEY, order_id BINARY(16) NOT NULL, n INT NOT NULL);
         CREATE TEMPORARY TABLE combkey_legacy (id CHAR(36) NOT NULL PRIMARY KEY, note TEXT NOT NULL)",
    )
    .expect("temporary table");
    c.begin_test_transaction().expect("test transaction");
    c
}

common::harness!(MysqlConnection, Binary, Comb);
common::harness!(MysqlConnection, Text, CombText);
// One line per type case: the literal, the bound value inside SQL, the round trip, NULL.
combkey_testutil::test_type!(blocking binary16_column, common::Harness::<MysqlConnection, Comb>::new(connect(), "CAST(NULL AS BINARY(16))"), "MySQL BINARY(16)", |id| format!("CAST(0x{} AS BINARY(16))", common::hex(id.into())));
combkey_testutil::test_type!(blocking char36_column, common::Harness::<MysqlConnection, CombText>::new(connect(), "CAST(NULL AS CHAR(36))"), "MySQL CHAR(36)", |id| format!("CAST('{id}' AS CHAR(36))"));

#[test]
fn text_reads_as_the_id_and_bad_values_are_errors() {
    let mut c = connect();
    for id in common::sample_ids() {
        // CHAR(36) text reads as the id.
        let text: Comb =
            diesel::select(sql::<Binary>(&format!("CAST('{id}' AS CHAR(36))"))).get_result(&mut c).unwrap();
        assert_eq!(text, id);
    }
    let none: Option<Comb> = diesel::select(sql::<Nullable<Binary>>("NULL")).get_result(&mut c).unwrap();
    assert_eq!(none, None);
    // NULL into a non-Option: diesel's own UnexpectedNullError (its nullable tuples need it).
    let err = diesel::select(sql::<Binary>("NULL")).get_result::<Comb>(&mut c).unwrap_err();
    assert!(common::is_unexpected_null(&err), "{err}");
    for (expr, message) in [
        ("CAST(UNHEX('00') AS BINARY(15))", "found 15 bytes"),
        ("UNHEX('000102030405060708090a0b0c0d0e0f10')", "found 17 bytes"),
        ("CAST('' AS BINARY(0))", "found 0 bytes"),
        ("'not a uuid'", "found 10 bytes"),
        ("'017f22e2-79b0-7cc3-98c4-dc0c0c07398z'", "invalid character 'z' at position 35"),
    ] {
        let err = diesel::select(sql::<Binary>(expr)).get_result::<Comb>(&mut c).unwrap_err();
        assert!(common::chain(&err).contains(message), "{expr}: {}", common::chain(&err));
    }
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
    let mut first: Order = orders.find(ids[0]).select(Order::as_select()).first(&mut c).unwrap();
    first.parent = Some(ids[1]);
    first.note = "changed".into();
    diesel::update(&first).set(&first).execute(&mut c).unwrap();
    let again: Order = orders.filter(id.eq(ids[0])).select(Order::as_select()).first(&mut c).unwrap();
    assert_eq!(again, first);
}

#[derive(QueryableByName, Debug, PartialEq)]
struct Joined {
    #[diesel(sql_type = Binary)]
    item: Comb,
    #[diesel(sql_type = Binary)]
    parent: Comb,
    #[diesel(sql_type = Integer)]
    n: i32,
}

#[test]
fn foreign_key_and_join() {
    // InnoDB keeps no foreign keys on temporary tables: real tables with a random suffix.
    let mut c = MysqlConnection::establish(&common::mysql_url()).expect("MySQL/MariaDB");
    let suffix: u32 = rand::random();
    let (o, i) = (format!("combkey_fk_orders_{suffix}"), format!("combkey_fk_items_{suffix}"));
    c.batch_execute(&format!(
        "CREATE TABLE {o} (id BINARY(16) NOT NULL PRIMARY KEY) ENGINE=InnoDB;
         CREATE TABLE {i} (id BINARY(16) NOT NULL PRIMARY KEY, order_id BINARY(16) NOT NULL, n INT NOT NULL,
           FOREIGN KEY (order_id) REFERENCES {o} (id)) ENGINE=InnoDB"
    ))
    .unwrap();
    let result = (|| -> QueryResult<(Vec<Joined>, Vec<Joined>, bool)> {
        let order = Comb::new();
        diesel::sql_query(format!("INSERT INTO {o} (id) VALUES (?)")).bind::<Binary, _>(order).execute(&mut c)?;
        let items: Vec<Joined> = (0..3).map(|n| Joined { item: Comb::new(), parent: order, n }).collect();
        for it in &items {
            diesel::sql_query(format!("INSERT INTO {i} (id, order_id, n) VALUES (?, ?, ?)"))
                .bind::<Binary, _>(it.item)
                .bind::<Binary, _>(it.parent)
                .bind::<Integer, _>(it.n)
                .execute(&mut c)?;
        }
        let joined: Vec<Joined> = diesel::sql_query(format!(
            "SELECT {i}.id AS item, {o}.id AS parent, {i}.n AS n FROM {i} JOIN {o} ON {i}.order_id = {o}.id ORDER BY {i}.id"
        ))
        .load(&mut c)?;
        let orphan = diesel::sql_query(format!("INSERT INTO {i} (id, order_id, n) VALUES (?, ?, 9)"))
            .bind::<Binary, _>(Comb::new())
            .bind::<Binary, _>(Comb::new())
            .execute(&mut c)
            .is_err();
        Ok((items, joined, orphan))
    })();
    c.batch_execute(&format!("DROP TABLE {i}; DROP TABLE {o}")).unwrap();
    let (items, joined, orphan_rejected) = result.unwrap();
    assert_eq!(joined, items);
    assert!(orphan_rejected, "the foreign key is enforced on the stored bytes");
}

/// The id column's SQL type in this backend's `table!`s, and a SQL literal of an id.
type IdSql = Binary;

fn literal(id: Comb) -> String {
    format!("X'{}'", common::hex(id))
}

/// MariaDB's query plan of `select` as JSON.
fn plan(c: &mut MysqlConnection, select: &str) -> String {
    #[derive(QueryableByName)]
    struct Plan {
        #[diesel(sql_type = Text, column_name = "EXPLAIN")]
        json: String,
    }
    let plans: Vec<Plan> = diesel::sql_query(format!("EXPLAIN FORMAT=JSON {select}")).load(c).unwrap();
    plans.into_iter().map(|p| p.json).collect()
}

/// A range read of the PRIMARY key.
fn uses_primary_key(plan: &str) -> bool {
    let compact: String = plan.split_whitespace().collect();
    compact.contains("\"key\":\"PRIMARY\"") && compact.contains("\"access_type\":\"range\"")
}

include!("shared/orm_patterns.rs");

diesel::table! {
    /// The table of `examples/partitioned-migrations`.
    events (id) {
        id -> Binary,
        kind -> Text,
        body -> Text,
    }
}

/// The example migration of a table partitioned by month through its key, run as
/// `diesel migration run` runs an `up.sql` (one `batch_execute`; MySQL's DDL is not
/// transactional, so this test commits and drops the table at the end): rows land in their
/// month's partition and `created_in` finds them; `down.sql` removes it all.
#[test]
fn example_partitioned_migration() {
    use combkey_diesel::CreatedInExpressionMethods;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/partitioned-migrations/mysql/");
    let up = std::fs::read_to_string(format!("{dir}20260101000000_create_events.up.sql")).unwrap();
    let down = std::fs::read_to_string(format!("{dir}20260101000000_create_events.down.sql")).unwrap();
    let url = common::mysql_url();
    let mut c = MysqlConnection::establish(&url).unwrap_or_else(|e| panic!("MySQL/MariaDB at {url}: {e}"));
    c.batch_execute("DROP TABLE IF EXISTS events").unwrap();
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
    let mut placed = Vec::new();
    for p in ["p_before", "p2026_01", "p2026_02", "p2026_03", "pmax"] {
        let n: i64 =
            diesel::select(sql::<diesel::sql_types::BigInt>(&format!("(SELECT COUNT(*) FROM events PARTITION ({p}))")))
                .get_result(&mut c)
                .unwrap();
        placed.push(n);
    }
    assert_eq!(placed, [0, 2, 1, 0, 1]);
    c.batch_execute(&down).unwrap();
    let left: i64 = diesel::select(sql::<diesel::sql_types::BigInt>(
        "(SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'events')",
    ))
    .get_result(&mut c)
    .unwrap();
    assert_eq!(left, 0);
}
