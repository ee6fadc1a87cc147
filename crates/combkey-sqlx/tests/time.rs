//! The time is in the key: "rows created between a and b" with two binds, answered from the
//! primary key's index, on PostgreSQL, MariaDB and SQLite; and tables partitioned by time
//! through the key (`combkey::sql::Partitioning`) on PostgreSQL and MariaDB: ids land in the
//! partition of their interval, a time range prunes to its partitions, retention drops exactly
//! the old rows, an id outside every partition is the database's error (or lands in the
//! default partition when there is one).

mod common;

use combkey::sql::{Interval, Partitioning};
use combkey::{Backend, Timestamp, V7Generator};
use combkey_sqlx::Comb;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection, Row, SqliteConnection};

fn t(s: &str) -> Timestamp {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// 2,000 ids made one second apart from 2023-11-14T22:13:20Z, and the range of seconds
/// 600 to 659 with the ids it must return.
fn made() -> (Vec<Comb>, combkey::KeyRange, Vec<Comb>) {
    let t0 = Timestamp::from_unix_ms(1_700_000_000_000);
    let g = V7Generator::new();
    let ids: Vec<Comb> = (0..2_000).map(|i| Comb::from(g.generate_at(t0.saturating_add_ms(1_000 * i)))).collect();
    let range = combkey::Comb::range(t0.saturating_add_ms(600_000)..t0.saturating_add_ms(660_000)).unwrap();
    let expected = ids[600..660].to_vec();
    (ids, range, expected)
}

#[tokio::test]
async fn range_with_two_binds_postgres() {
    let mut c = PgConnection::connect(&common::pg_url()).await.unwrap();
    sqlx::query("CREATE TEMPORARY TABLE combkey_range (id uuid PRIMARY KEY, note text)").execute(&mut c).await.unwrap();
    let (ids, range, expected) = made();
    sqlx::query("INSERT INTO combkey_range (id) SELECT * FROM UNNEST($1::uuid[])")
        .bind(ids.iter().rev().copied().collect::<Vec<_>>())
        .execute(&mut c)
        .await
        .unwrap();
    let select = "SELECT id FROM combkey_range WHERE id >= $1 AND id < $2 ORDER BY id";
    let rows: Vec<Comb> = sqlx::query_scalar(select)
        .bind(Comb::from(range.start()))
        .bind(Comb::from(range.end()))
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(rows, expected);
    sqlx::query("ANALYZE combkey_range").execute(&mut c).await.unwrap();
    let plan: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!("EXPLAIN {select}")))
        .bind(Comb::from(range.start()))
        .bind(Comb::from(range.end()))
        .fetch_all(&mut c)
        .await
        .unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains("combkey_range_pkey") && !plan.contains("Seq Scan"), "{plan}");
}

#[tokio::test]
async fn range_with_two_binds_mariadb() {
    let mut c = MySqlConnection::connect(&common::mysql_url()).await.unwrap();
    sqlx::query("CREATE TEMPORARY TABLE combkey_range (id BINARY(16) NOT NULL PRIMARY KEY, note TEXT)")
        .execute(&mut c)
        .await
        .unwrap();
    let (ids, range, expected) = made();
    for chunk in ids.chunks(500).rev() {
        let mut q = sqlx::QueryBuilder::new("INSERT INTO combkey_range (id) ");
        q.push_values(chunk, |mut b, id| {
            b.push_bind(*id);
        });
        q.build().execute(&mut c).await.unwrap();
    }
    let select = "SELECT id FROM combkey_range WHERE id >= ? AND id < ? ORDER BY id";
    let rows: Vec<Comb> = sqlx::query_scalar(select)
        .bind(Comb::from(range.start()))
        .bind(Comb::from(range.end()))
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(rows, expected);
    let plan: String = sqlx::query_scalar(AssertSqlSafe(format!("EXPLAIN FORMAT=JSON {select}")))
        .bind(Comb::from(range.start()))
        .bind(Comb::from(range.end()))
        .fetch_one(&mut c)
        .await
        .unwrap();
    let compact: String = plan.split_whitespace().collect();
    assert!(compact.contains(r#""key":"PRIMARY""#) && compact.contains(r#""access_type":"range""#), "{plan}");
}

#[tokio::test]
async fn range_with_two_binds_sqlite() {
    let mut c = SqliteConnection::connect("sqlite::memory:").await.unwrap();
    sqlx::query(AssertSqlSafe(format!(
        "CREATE TABLE combkey_range ({}, note TEXT)",
        Backend::Sqlite.primary_key("id")
    )))
    .execute(&mut c)
    .await
    .unwrap();
    let (ids, range, expected) = made();
    let mut tx = c.begin().await.unwrap();
    for id in ids.iter().rev() {
        sqlx::query("INSERT INTO combkey_range (id) VALUES (?)").bind(id).execute(&mut *tx).await.unwrap();
    }
    tx.commit().await.unwrap();
    let select = "SELECT id FROM combkey_range WHERE id >= ? AND id < ? ORDER BY id";
    let rows: Vec<Comb> = sqlx::query_scalar(select)
        .bind(Comb::from(range.start()))
        .bind(Comb::from(range.end()))
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(rows, expected);
    let plan: Vec<String> = sqlx::query(AssertSqlSafe(format!("EXPLAIN QUERY PLAN {select}")))
        .bind(Comb::from(range.start()))
        .bind(Comb::from(range.end()))
        .fetch_all(&mut c)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>("detail"))
        .collect();
    let plan = plan.join("\n");
    assert!(plan.contains("SEARCH combkey_range USING") && plan.contains("(id>? AND id<?)"), "{plan}");
}

/// Ids made at given times: `(time, id)` for each.
fn ids_at(times: &[&str]) -> Vec<(Timestamp, Comb)> {
    let g = V7Generator::new();
    times.iter().map(|s| (t(s), Comb::from(g.generate_at(t(s))))).collect()
}

const IN_RANGE: [&str; 6] = [
    "2026-01-01T00:00:00Z",
    "2026-01-31T23:59:59.999Z",
    "2026-02-01T00:00:00Z",
    "2026-02-14T12:00:00Z",
    "2026-03-01T00:00:00Z",
    "2026-03-31T23:59:59.999Z",
];

fn month_suffix(at: Timestamp) -> String {
    Interval::Month.suffix(Interval::Month.start_of(at))
}

#[tokio::test]
async fn partitions_on_postgres() {
    let mut c = PgConnection::connect(&common::pg_url()).await.unwrap();
    let table = format!("combkey_part_{}", rand::random::<u32>());
    let p = Partitioning::new(&table, Interval::Month).unwrap();
    let (from, to) = (t("2026-01-01T00:00:00Z"), t("2026-04-01T00:00:00Z"));
    let result = async {
        sqlx::raw_sql(AssertSqlSafe(format!(
            "CREATE TABLE {table} (id uuid NOT NULL, note text, PRIMARY KEY (id)) PARTITION BY RANGE (id)"
        )))
        .execute(&mut c)
        .await?;
        sqlx::raw_sql(AssertSqlSafe(p.create(Backend::Postgres, from, to, false).unwrap())).execute(&mut c).await?;
        let rows = ids_at(&IN_RANGE);
        for (_, id) in &rows {
            sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES ($1)")))
                .bind(id)
                .execute(&mut c)
                .await?;
        }
        // Each id landed in the partition of its month.
        for (at, id) in &rows {
            let part: String = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT tableoid::regclass::text FROM {table} WHERE id = $1"
            )))
            .bind(id)
            .fetch_one(&mut c)
            .await?;
            assert_eq!(part, format!("{table}_{}", month_suffix(*at)), "{id} made at {at}");
        }
        // February's range prunes to February's partition.
        let feb = combkey::Comb::range(t("2026-02-01T00:00:00Z")..t("2026-03-01T00:00:00Z")).unwrap();
        let plan: Vec<String> =
            sqlx::query_scalar(AssertSqlSafe(format!("EXPLAIN SELECT * FROM {table} WHERE id >= $1 AND id < $2")))
                .bind(Comb::from(feb.start()))
                .bind(Comb::from(feb.end()))
                .fetch_all(&mut c)
                .await?;
        let plan = plan.join("\n");
        assert!(plan.contains(&format!("{table}_2026_02")), "{plan}");
        assert!(!plan.contains(&format!("{table}_2026_01")) && !plan.contains(&format!("{table}_2026_03")), "{plan}");
        // An id outside every partition: PostgreSQL's error.
        let may = ids_at(&["2026-05-10T00:00:00Z"])[0].1;
        let err = sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES ($1)")))
            .bind(may)
            .execute(&mut c)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no partition of relation"), "{err}");
        // The next two months, added ahead; then May's id fits.
        sqlx::raw_sql(AssertSqlSafe(p.add(Backend::Postgres, t("2026-04-01T00:00:00Z"), 2, false).unwrap()))
            .execute(&mut c)
            .await?;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES ($1)"))).bind(may).execute(&mut c).await?;
        let part: String =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT tableoid::regclass::text FROM {table} WHERE id = $1")))
                .bind(may)
                .fetch_one(&mut c)
                .await?;
        assert_eq!(part, format!("{table}_2026_05"));
        // Retention: dropping what is older than February removes exactly January's rows,
        // and running it again changes nothing.
        let drop = p.drop_before(Backend::Postgres, from, t("2026-02-01T00:00:00Z")).unwrap();
        sqlx::raw_sql(AssertSqlSafe(drop.clone())).execute(&mut c).await?;
        sqlx::raw_sql(AssertSqlSafe(drop)).execute(&mut c).await?;
        let left: Vec<Comb> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} ORDER BY id"))).fetch_all(&mut c).await?;
        let mut expected: Vec<Comb> = rows[2..].iter().map(|(_, id)| *id).collect();
        expected.push(may);
        assert_eq!(left, expected);
        // With a DEFAULT partition, an id outside the others lands there.
        sqlx::raw_sql(AssertSqlSafe(format!("CREATE TABLE {table}_default PARTITION OF {table} DEFAULT")))
            .execute(&mut c)
            .await?;
        let later = ids_at(&["2027-07-01T00:00:00Z"])[0].1;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES ($1)"))).bind(later).execute(&mut c).await?;
        let part: String =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT tableoid::regclass::text FROM {table} WHERE id = $1")))
                .bind(later)
                .fetch_one(&mut c)
                .await?;
        assert_eq!(part, format!("{table}_default"));
        Ok::<(), sqlx::Error>(())
    }
    .await;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&mut c).await.unwrap();
    result.unwrap();
}

#[tokio::test]
async fn partitions_on_mariadb() {
    let mut c = MySqlConnection::connect(&common::mysql_url()).await.unwrap();
    let table = format!("combkey_part_{}", rand::random::<u32>());
    let p = Partitioning::new(&table, Interval::Month).unwrap();
    let (from, to) = (t("2026-01-01T00:00:00Z"), t("2026-04-01T00:00:00Z"));
    let in_partition = |name: String| format!("SELECT id FROM {table} PARTITION ({name}) ORDER BY id");
    let result = async {
        sqlx::raw_sql(AssertSqlSafe(format!(
            "CREATE TABLE {table} (id BINARY(16) NOT NULL PRIMARY KEY, note TEXT) ENGINE=InnoDB"
        )))
        .execute(&mut c)
        .await?;
        sqlx::raw_sql(AssertSqlSafe(p.create(Backend::MySql, from, to, false).unwrap())).execute(&mut c).await?;
        let mut rows = ids_at(&IN_RANGE);
        let december = ids_at(&["2025-12-24T18:00:00Z"])[0];
        rows.insert(0, december);
        for (_, id) in &rows {
            sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES (?)"))).bind(id).execute(&mut c).await?;
        }
        // Each id landed in the partition of its month (older than `from`: p_before).
        for month in ["2026_01", "2026_02", "2026_03"] {
            let held: Vec<Comb> =
                sqlx::query_scalar(AssertSqlSafe(in_partition(format!("p{month}")))).fetch_all(&mut c).await?;
            let expected: Vec<Comb> =
                rows.iter().filter(|(at, _)| month_suffix(*at) == month).map(|(_, id)| *id).collect();
            assert_eq!(held, expected, "p{month}");
        }
        let before: Vec<Comb> =
            sqlx::query_scalar(AssertSqlSafe(in_partition("p_before".into()))).fetch_all(&mut c).await?;
        assert_eq!(before, [december.1]);
        // February's range prunes to February's partition.
        let feb = combkey::Comb::range(t("2026-02-01T00:00:00Z")..t("2026-03-01T00:00:00Z")).unwrap();
        let row =
            sqlx::query(AssertSqlSafe(format!("EXPLAIN PARTITIONS SELECT * FROM {table} WHERE id >= ? AND id < ?")))
                .bind(Comb::from(feb.start()))
                .bind(Comb::from(feb.end()))
                .fetch_one(&mut c)
                .await?;
        let partitions: Option<String> = row.try_get("partitions")?;
        assert_eq!(partitions.as_deref(), Some("p2026_02"));
        // An id past the last partition: MariaDB's error.
        let may = ids_at(&["2026-05-10T00:00:00Z"])[0].1;
        let err = sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES (?)")))
            .bind(may)
            .execute(&mut c)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("Table has no partition for value"), "{err}");
        // The next two months, added ahead; then May's id fits.
        sqlx::raw_sql(AssertSqlSafe(p.add(Backend::MySql, t("2026-04-01T00:00:00Z"), 2, false).unwrap()))
            .execute(&mut c)
            .await?;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES (?)"))).bind(may).execute(&mut c).await?;
        let held: Vec<Comb> =
            sqlx::query_scalar(AssertSqlSafe(in_partition("p2026_05".into()))).fetch_all(&mut c).await?;
        assert_eq!(held, [may]);
        // Retention: older than February goes (p_before and January), exactly those rows;
        // running it again changes nothing.
        let drop = p.drop_before(Backend::MySql, from, t("2026-02-01T00:00:00Z")).unwrap();
        sqlx::raw_sql(AssertSqlSafe(drop.clone())).execute(&mut c).await?;
        sqlx::raw_sql(AssertSqlSafe(drop)).execute(&mut c).await?;
        let left: Vec<Comb> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} ORDER BY id"))).fetch_all(&mut c).await?;
        let mut expected: Vec<Comb> = rows[3..].iter().map(|(_, id)| *id).collect();
        expected.push(may);
        assert_eq!(left, expected);
        // Made with a catch-all: an id past the intervals lands in pmax.
        sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await?;
        sqlx::raw_sql(AssertSqlSafe(format!(
            "CREATE TABLE {table} (id BINARY(16) NOT NULL PRIMARY KEY) ENGINE=InnoDB"
        )))
        .execute(&mut c)
        .await?;
        sqlx::raw_sql(AssertSqlSafe(p.create(Backend::MySql, from, to, true).unwrap())).execute(&mut c).await?;
        let later = ids_at(&["2027-07-01T00:00:00Z"])[0].1;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id) VALUES (?)"))).bind(later).execute(&mut c).await?;
        let held: Vec<Comb> = sqlx::query_scalar(AssertSqlSafe(in_partition("pmax".into()))).fetch_all(&mut c).await?;
        assert_eq!(held, [later]);
        Ok::<(), sqlx::Error>(())
    }
    .await;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&mut c).await.unwrap();
    result.unwrap();
}

/// The migration files of `examples/partitioned-migrations/<dialect>`.
fn example_migrations(dialect: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/partitioned-migrations").join(dialect)
}

/// The example's partitions are what `Partitioning::create` prints today.
fn example_is_current(dialect: &str, backend: Backend) {
    let path = example_migrations(dialect).join("20260101000000_create_events.up.sql");
    let up = std::fs::read_to_string(&path).unwrap();
    let ddl = Partitioning::new("events", Interval::Month)
        .unwrap()
        .create(backend, t("2026-01-01T00:00:00Z"), t("2026-04-01T00:00:00Z"), true)
        .unwrap();
    assert!(up.ends_with(&ddl), "{} is not what combkey prints now:\n{ddl}", path.display());
}

/// The example rows: two in January, one in March, one after every month.
const EXAMPLE_TIMES: [&str; 4] =
    ["2026-01-01T00:00:00Z", "2026-01-31T23:59:59.999Z", "2026-03-15T12:00:00Z", "2026-07-01T00:00:00Z"];

#[tokio::test]
async fn example_migrations_with_sqlx_migrate_on_postgres() {
    example_is_current("postgres", Backend::Postgres);
    let mut admin = PgConnection::connect(&common::pg_url()).await.unwrap();
    sqlx::raw_sql("DROP SCHEMA IF EXISTS combkey_example CASCADE; CREATE SCHEMA combkey_example")
        .execute(&mut admin)
        .await
        .unwrap();
    let options: sqlx::postgres::PgConnectOptions = common::pg_url().parse().unwrap();
    let mut c = PgConnection::connect_with(&options.options([("search_path", "combkey_example")])).await.unwrap();
    let migrator = sqlx::migrate::Migrator::new(example_migrations("postgres")).await.unwrap();
    migrator.run(&mut c).await.unwrap();
    for (_, id) in ids_at(&EXAMPLE_TIMES) {
        sqlx::query("INSERT INTO events (id, kind, body) VALUES ($1, 'test', '{}')")
            .bind(id)
            .execute(&mut c)
            .await
            .unwrap();
    }
    let placed: Vec<(String, i64)> =
        sqlx::query_as("SELECT tableoid::regclass::text, COUNT(*) FROM events GROUP BY 1 ORDER BY 1")
            .fetch_all(&mut c)
            .await
            .unwrap();
    assert_eq!(
        placed,
        [("events_2026_01".to_string(), 2), ("events_2026_03".to_string(), 1), ("events_default".to_string(), 1)]
    );
    migrator.undo(&mut c, 0).await.unwrap();
    let left: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'combkey_example' AND tablename LIKE 'events%'",
    )
    .fetch_one(&mut c)
    .await
    .unwrap();
    assert_eq!(left, 0, "down removed the table and its partitions");
    sqlx::raw_sql("DROP SCHEMA combkey_example CASCADE").execute(&mut admin).await.unwrap();
}

#[tokio::test]
async fn example_migrations_with_sqlx_migrate_on_mariadb() {
    example_is_current("mysql", Backend::MySql);
    let mut admin = MySqlConnection::connect(&common::mysql_url()).await.unwrap();
    sqlx::raw_sql("DROP DATABASE IF EXISTS combkey_example; CREATE DATABASE combkey_example")
        .execute(&mut admin)
        .await
        .unwrap();
    let options: sqlx::mysql::MySqlConnectOptions = common::mysql_url().parse().unwrap();
    let mut c = MySqlConnection::connect_with(&options.database("combkey_example")).await.unwrap();
    let migrator = sqlx::migrate::Migrator::new(example_migrations("mysql")).await.unwrap();
    migrator.run(&mut c).await.unwrap();
    for (_, id) in ids_at(&EXAMPLE_TIMES) {
        sqlx::query("INSERT INTO events (id, kind, body) VALUES (?, 'test', '{}')")
            .bind(id)
            .execute(&mut c)
            .await
            .unwrap();
    }
    let mut placed = Vec::new();
    for p in ["p_before", "p2026_01", "p2026_02", "p2026_03", "pmax"] {
        let n: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM events PARTITION ({p})")))
            .fetch_one(&mut c)
            .await
            .unwrap();
        placed.push(n);
    }
    assert_eq!(placed, [0, 2, 0, 1, 1]);
    migrator.undo(&mut c, 0).await.unwrap();
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'combkey_example' AND table_name = 'events'")
            .fetch_one(&mut c)
            .await
            .unwrap();
    assert_eq!(left, 0, "down removed the table");
    sqlx::raw_sql("DROP DATABASE combkey_example").execute(&mut admin).await.unwrap();
}
