//! Against a real SQL Server, named by `COMBKEY_SQLSERVER_URL` (an ADO.NET string, e.g. the
//! docker-compose service: see `.env.sample`). No SQL Server runs on the project's CI
//! machines, so these tests are `#[ignore]`d (cargo reports them as ignored, with the reason)
//! and `scripts/test` runs them with `--ignored` where the variable is set. `stored_form.rs`
//! covers byte order and SQL Server's comparison everywhere.

use combkey::{Backend, sql::batches};
use combkey_tiberius::{Comb, OptionalComb};
use tiberius::{Client, Config, SortOrder, SqlBulkCopyOptions};
use tokio::net::TcpStream;
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};

type Conn = Client<Compat<TcpStream>>;

async fn connect() -> Conn {
    let url = std::env::var("COMBKEY_SQLSERVER_URL").expect(
        "COMBKEY_SQLSERVER_URL names the SQL Server to test against (`docker compose up --wait sqlserver`, .env.sample)",
    );
    let config = Config::from_ado_string(&url).expect("COMBKEY_SQLSERVER_URL is an ADO.NET connection string");
    let tcp = TcpStream::connect(config.get_addr()).await.expect("SQL Server reachable");
    tcp.set_nodelay(true).expect("nodelay");
    Client::connect(config, tcp.compat_write()).await.expect("SQL Server login")
}

fn sample_ids() -> Vec<Comb> {
    let mut ids: Vec<Comb> = ["017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "00112233-4455-6677-8899-aabbccddeeff"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    ids.extend((0..5).map(|_| Comb::new()));
    ids
}

#[tokio::test]
#[ignore = "needs a SQL Server: set COMBKEY_SQLSERVER_URL and run with --ignored (scripts/test does)"]
async fn three_legs_and_null() {
    let mut c = connect().await;
    for id in sample_ids() {
        let shown = Backend::SqlServer.stored_text(id.to_comb());
        // 1. A literal of the stored form reads as the public id.
        let row = c
            .query(format!("SELECT CAST('{shown}' AS uniqueidentifier)"), &[])
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap();
        assert_eq!(row.and_then(|r| r.get::<Comb, _>(0)), Some(id));
        // 2. The bound id equals the literal inside SQL Server.
        let row = c
            .query(format!("SELECT CASE WHEN @P1 = CAST('{shown}' AS uniqueidentifier) THEN 1 ELSE 0 END"), &[&id])
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap();
        assert_eq!(row.and_then(|r| r.get::<i32, _>(0)), Some(1));
        // 3. Round trip; and SQL Server reads the milliseconds where RT.Comb's T-SQL does.
        let row = c
            .query("SELECT @P1, CAST(0x0000 + SUBSTRING(CAST(@P1 AS BINARY(16)), 11, 6) AS BIGINT)", &[&id])
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.get::<Comb, _>(0), Some(id));
        if let Some(ms) = id.to_comb().unix_ms() {
            assert_eq!(row.get::<i64, _>(1), Some(ms));
        }
    }
    // 4. NULL both ways.
    let row = c.query("SELECT @P1", &[&OptionalComb(None)]).await.unwrap().into_row().await.unwrap().unwrap();
    assert_eq!(row.get::<Comb, _>(0), None);
    // Another column type: an error, not a panic.
    let row = c.query("SELECT 42", &[]).await.unwrap().into_row().await.unwrap().unwrap();
    assert!(row.try_get::<Comb, _>(0).is_err());
}

#[tokio::test]
#[ignore = "needs a SQL Server: set COMBKEY_SQLSERVER_URL and run with --ignored (scripts/test does)"]
async fn order_by_id_bulk_insert_and_tsql_default() {
    let mut c = connect().await;
    for batch in batches(Backend::SqlServer.install_functions()) {
        c.simple_query(batch).await.unwrap().into_results().await.unwrap();
    }
    let table = format!("combkey_order_{}", std::process::id());
    c.simple_query(format!("CREATE TABLE {table} (id uniqueidentifier NOT NULL PRIMARY KEY, n INT NULL)"))
        .await
        .unwrap()
        .into_results()
        .await
        .unwrap();
    let mut ids = vec![combkey::Comb::NIL; 10_000];
    combkey::V7Generator::new().fill(&mut ids);
    let ids: Vec<Comb> = ids.into_iter().map(Comb::from).collect();
    // Half shuffled through parameters, half in order through bulk insert with the ORDER hint.
    let mut shuffled: Vec<Comb> = ids[..5_000].to_vec();
    shuffled.reverse();
    for id in &shuffled {
        c.execute(format!("INSERT INTO {table} (id) VALUES (@P1)"), &[id]).await.unwrap();
    }
    let hints = [("id", SortOrder::Ascending)];
    let mut bulk = c.bulk_insert_with_options(&table, &["id"], SqlBulkCopyOptions::empty(), &hints).await.unwrap();
    for id in &ids[5_000..] {
        bulk.send(tiberius::IntoRow::into_row(*id)).await.unwrap();
    }
    bulk.finalize().await.unwrap();
    let rows =
        c.query(format!("SELECT id FROM {table} ORDER BY id"), &[]).await.unwrap().into_first_result().await.unwrap();
    let back: Vec<Comb> = rows.iter().filter_map(|r| r.get::<Comb, _>(0)).collect();
    // The database-side default makes ids in the same stored form, after the Rust ones.
    c.simple_query(format!("ALTER TABLE {table} ADD CONSTRAINT df_{table} DEFAULT dbo.combkey_v7() FOR id"))
        .await
        .unwrap()
        .into_results()
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    c.execute(format!("INSERT INTO {table} (n) VALUES (1)"), &[]).await.unwrap();
    let made = c
        .query(format!("SELECT id FROM {table} WHERE n = 1"), &[])
        .await
        .unwrap()
        .into_row()
        .await
        .unwrap()
        .and_then(|r| r.get::<Comb, _>(0));
    // Ad-hoc T-SQL: a public id literal finds its row through dbo.combkey_stored, and
    // dbo.combkey_public shows the public id.
    let probe = ids[1234];
    let public_text = c
        .query(
            format!(
                "SELECT CAST(dbo.combkey_public(id) AS char(36)) FROM {table} WHERE id = dbo.combkey_stored('{probe}')"
            ),
            &[],
        )
        .await
        .unwrap()
        .into_row()
        .await
        .unwrap()
        .and_then(|r| r.try_get::<&str, _>(0).ok().flatten().map(str::to_lowercase));
    c.simple_query(format!("DROP TABLE {table}")).await.unwrap().into_results().await.unwrap();
    assert_eq!(public_text, Some(probe.to_string()));
    assert_eq!(back, ids, "ORDER BY id on SQL Server is generation order");
    let made = made.expect("a defaulted id");
    assert_eq!(made.to_comb().version(), 7);
    assert!(made > *ids.last().unwrap());
}

/// An existing table written the way `uuid::Uuid` writes (public ids), with a referencing
/// table: read with `CombPublic`, converted by `combkey sql sqlserver convert --from public`,
/// then read with `Comb` as the same ids, in creation order by `ORDER BY id`; the script run
/// again changes nothing.
#[tokio::test]
#[ignore = "needs a SQL Server: set COMBKEY_SQLSERVER_URL and run with --ignored (scripts/test does)"]
async fn an_existing_table_converted_to_the_stored_form_keeps_its_ids() {
    use combkey::sql::{ExistingKeys, Referencing, sqlserver_convert_table as convert_table};
    use combkey_tiberius::CombPublic;
    let mut c = connect().await;
    for batch in batches(Backend::SqlServer.install_functions()) {
        c.simple_query(batch).await.unwrap().into_results().await.unwrap();
    }
    c.simple_query(
        "IF OBJECT_ID('dbo.conv_items') IS NOT NULL DROP TABLE dbo.conv_items;
         IF OBJECT_ID('dbo.conv_orders') IS NOT NULL DROP TABLE dbo.conv_orders;
         IF OBJECT_ID('dbo.combkey_converted') IS NOT NULL DELETE FROM dbo.combkey_converted WHERE target = N'dbo.conv_orders.id';
         CREATE TABLE dbo.conv_orders (id uniqueidentifier NOT NULL PRIMARY KEY, n int NOT NULL);
         CREATE TABLE dbo.conv_items (k int IDENTITY PRIMARY KEY, order_id uniqueidentifier NULL
           CONSTRAINT fk_conv_items FOREIGN KEY REFERENCES dbo.conv_orders (id));",
    )
    .await
    .unwrap()
    .into_results()
    .await
    .unwrap();
    let made: Vec<CombPublic> = (0..50).map(|_| CombPublic::new()).collect();
    for (n, id) in made.iter().enumerate() {
        let n = i32::try_from(n).unwrap();
        c.execute(
            "INSERT INTO dbo.conv_orders VALUES (@P1, @P2); INSERT INTO dbo.conv_items (order_id) VALUES (@P1)",
            &[id, &n],
        )
        .await
        .unwrap();
    }
    let items = Referencing::new("dbo.conv_items", "order_id", "fk_conv_items");
    let script = convert_table("dbo.conv_orders", "id", ExistingKeys::Public, &[items]);
    for _ in 0..2 {
        c.simple_query(script.clone()).await.unwrap().into_results().await.unwrap();
    }
    let rows = c
        .query("SELECT o.id, o.n, i.order_id FROM dbo.conv_orders o JOIN dbo.conv_items i ON i.order_id = o.id ORDER BY o.id", &[])
        .await
        .unwrap()
        .into_first_result()
        .await
        .unwrap();
    let ids: Vec<Comb> = rows.iter().map(|r| r.try_get::<Comb, _>(0).unwrap().unwrap()).collect();
    let expected: Vec<Comb> = made.iter().map(|id| Comb::from(id.to_comb())).collect();
    assert_eq!(ids, expected, "the same public ids, in creation order, every item still joined");
}
