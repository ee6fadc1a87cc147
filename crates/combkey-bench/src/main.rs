//! The database insert benchmark: how the primary key's kind changes insert time, index size,
//! leaf density and WAL volume as a table grows past the cache (as Percona's "Store UUID in an optimized way" and the klokwrk article measure it).
//!
//! ```sh
//! cargo run --release -p combkey-bench -- --own-servers           # throwaway servers, small caches
//! cargo run --release -p combkey-bench -- --rows 5000000 --backends postgres --own-servers
//! ```
//!
//! Keys are made by the client and sent through combkey-sqlx's column type, in batches
//! (`UNNEST` arrays on PostgreSQL, multi-row `INSERT` on MariaDB), each batch timed.

mod copy;
mod galera;
mod query;
mod report;
mod servers;
mod shards;

use std::time::{Duration, Instant};

use clap::Parser;
use combkey::{ShortPrefix, ShortPrefixGenerator, V7Generator};
use combkey_sqlx::Comb;
use rand::RngExt;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection};

/// The database insert benchmark (see README.md, "Insert benchmark").
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Rows per strategy on PostgreSQL.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Rows per strategy on MariaDB (smaller: InnoDB with a tiny buffer pool is slow for random keys).
    #[arg(long, default_value_t = 200_000)]
    mysql_rows: usize,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
    /// Which backends: postgres, mariadb (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "postgres,mariadb")]
    backends: Vec<String>,
    /// Which strategies: bigint, v4, comb, short, server (PostgreSQL only), uuidtype (the
    /// prefix COMB in MariaDB's UUID column type; MariaDB only).
    #[arg(long, value_delimiter = ',', default_value = "bigint,v4,comb,short,server,uuidtype")]
    strategies: Vec<String>,
    /// Start throwaway servers (PostgreSQL shared_buffers=16MB, MariaDB
    /// innodb_buffer_pool_size=6MB) instead of using COMBKEY_PG_URL / COMBKEY_MYSQL_URL.
    #[arg(long)]
    own_servers: bool,
    /// Also index the payload (a secondary index).
    #[arg(long)]
    secondary_index: bool,
    /// Instead of the insert benchmark: "rows of one hour" on PostgreSQL through the COMB
    /// key's range against a `created_at` index (`--rows` rows, `--rows-per-hour` an hour).
    #[arg(long)]
    query: bool,
    /// With --query: rows made per hour of the table's time span.
    #[arg(long, default_value_t = 2_000)]
    rows_per_hour: usize,
    /// With --query: how many random hours to time, each both ways.
    #[arg(long, default_value_t = 200)]
    hours: usize,
    /// Instead of the insert benchmark: three writers at once, one per node of the MariaDB
    /// Galera cluster in COMBKEY_GALERA_URLS (`scripts/galera.sh start`), AUTO_INCREMENT,
    /// v4 and the prefix COMB.
    #[arg(long)]
    galera: bool,
    /// With --galera: rows per writer.
    #[arg(long, default_value_t = 300_000)]
    galera_rows: usize,
    /// Instead of the insert benchmark: bulk loading on PostgreSQL with binary `COPY`
    /// (`--rows` rows per key kind, `--copy-chunk` rows per `COPY`).
    #[arg(long)]
    copy: bool,
    /// With --copy: rows per `COPY` statement (each one timed).
    #[arg(long, default_value_t = 100_000)]
    copy_chunk: usize,
    /// Instead of a database: the range-sharding simulation (a key space split into ranges
    /// at --max-range-rows; how hot the busiest range gets per key kind and write rate).
    #[arg(long)]
    shards: bool,
    /// With --shards: a range splits past this many rows.
    #[arg(long, default_value_t = 10_000)]
    max_range_rows: usize,
    /// With --shards: write rates (rows a second) to simulate.
    #[arg(long, value_delimiter = ',', default_value = "10,100,1000,10000")]
    rates: Vec<u64>,
    /// Where to write summary.csv, batches.csv and the SVG charts.
    #[arg(long, default_value = "target/combkey-bench")]
    out: std::path::PathBuf,
}

/// The kind of primary key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    Bigint,
    V4,
    Comb,
    Short,
    Server,
    UuidType,
}

impl Strategy {
    fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "bigint" => Strategy::Bigint,
            "v4" => Strategy::V4,
            "comb" => Strategy::Comb,
            "short" => Strategy::Short,
            "server" => Strategy::Server,
            "uuidtype" => Strategy::UuidType,
            other => {
                return Err(format!(
                    "unknown strategy {other:?}: expected bigint, v4, comb, short, server or uuidtype"
                ));
            }
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Strategy::Bigint => "bigint",
            Strategy::V4 => "uuid v4 (client)",
            Strategy::Comb => "combkey prefix COMB",
            Strategy::Short => "combkey short prefix",
            Strategy::Server => "combkey_v7() (server)",
            Strategy::UuidType => "combkey COMB (UUID type)",
        }
    }
}

/// One strategy's run on one backend.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    pub(crate) backend: &'static str,
    pub(crate) strategy: Strategy,
    pub(crate) rows: usize,
    pub(crate) batch_ms: Vec<f64>,
    pub(crate) total: Duration,
    pub(crate) index_bytes: i64,
    pub(crate) table_bytes: i64,
    pub(crate) wal_bytes: Option<i64>,
    pub(crate) leaf_density: Option<f64>,
}

struct Keys {
    v7: V7Generator,
    short: ShortPrefixGenerator,
}

impl Keys {
    fn batch(&self, strategy: Strategy, n: usize) -> Vec<Comb> {
        let mut ids = vec![combkey::Comb::NIL; n];
        match strategy {
            Strategy::Comb | Strategy::UuidType => self.v7.fill(&mut ids),
            Strategy::Short => self.short.fill(&mut ids),
            Strategy::V4 => {
                let mut rng = rand::rng();
                for id in &mut ids {
                    let mut b: [u8; 16] = rng.random();
                    b[6] = 0x40 | (b[6] & 0x0f);
                    b[8] = 0x80 | (b[8] & 0x3f);
                    *id = combkey::Comb::from_bytes(b);
                }
            }
            Strategy::Bigint | Strategy::Server => return Vec::new(),
        }
        ids.into_iter().map(Comb::from).collect()
    }
}

fn payload(n: usize) -> Vec<String> {
    // ~100 bytes a row, varied so no page compresses better than another.
    let mut rng = rand::rng();
    (0..n).map(|_| format!("{:0100}", rng.random::<u64>())).collect()
}

async fn run_postgres(url: &str, args: &Args, strategies: &[Strategy]) -> Result<Vec<Run>, Box<dyn std::error::Error>> {
    let mut c = PgConnection::connect(url).await?;
    sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pgstattuple").execute(&mut c).await?;
    sqlx::raw_sql(combkey::Backend::Postgres.install_functions()).execute(&mut c).await?;
    let keys = Keys { v7: V7Generator::new(), short: ShortPrefixGenerator::new(ShortPrefix::default()) };
    let mut runs = Vec::new();
    for &s in strategies.iter().filter(|s| **s != Strategy::UuidType) {
        let table = format!("combkey_bench_{}", format!("{s:?}").to_lowercase());
        let key = match s {
            Strategy::Bigint => "id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
            Strategy::Server => "id uuid PRIMARY KEY DEFAULT combkey_v7()",
            _ => "id uuid PRIMARY KEY",
        };
        sqlx::raw_sql(AssertSqlSafe(format!(
            "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} ({key}, payload text NOT NULL)"
        )))
        .execute(&mut c)
        .await?;
        if args.secondary_index {
            sqlx::raw_sql(AssertSqlSafe(format!("CREATE INDEX ON {table} (payload)"))).execute(&mut c).await?;
        }
        sqlx::raw_sql("CHECKPOINT").execute(&mut c).await?;
        let lsn0: String = sqlx::query_scalar("SELECT pg_current_wal_lsn()::text").fetch_one(&mut c).await?;
        let insert_ids = format!("INSERT INTO {table} (id, payload) SELECT * FROM UNNEST($1::uuid[], $2::text[])");
        let insert_payload = format!("INSERT INTO {table} (payload) SELECT * FROM UNNEST($1::text[])");
        let mut batch_ms = Vec::new();
        let started = Instant::now();
        let mut done = 0usize;
        while done < args.rows {
            let n = (args.rows - done).min(args.batch);
            let ids = keys.batch(s, n);
            let data = payload(n);
            let t = Instant::now();
            if ids.is_empty() {
                sqlx::query(AssertSqlSafe(insert_payload.clone())).bind(&data).execute(&mut c).await?;
            } else {
                sqlx::query(AssertSqlSafe(insert_ids.clone())).bind(&ids).bind(&data).execute(&mut c).await?;
            }
            batch_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            done += n;
        }
        let total = started.elapsed();
        let wal: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT (pg_current_wal_lsn() - '{lsn0}'::pg_lsn)::bigint")))
                .fetch_one(&mut c)
                .await?;
        let index = format!("{table}_pkey");
        let index_bytes: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT pg_relation_size('{index}')"))).fetch_one(&mut c).await?;
        let table_bytes: i64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT pg_table_size('{table}')"))).fetch_one(&mut c).await?;
        let density: f64 =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT avg_leaf_density FROM pgstatindex('{index}')")))
                .fetch_one(&mut c)
                .await?;
        sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await?;
        let run = Run {
            backend: "PostgreSQL",
            strategy: s,
            rows: done,
            batch_ms,
            total,
            index_bytes,
            table_bytes,
            wal_bytes: Some(wal),
            leaf_density: Some(density),
        };
        report::progress(&run);
        runs.push(run);
    }
    Ok(runs)
}

async fn run_mariadb(url: &str, args: &Args, strategies: &[Strategy]) -> Result<Vec<Run>, Box<dyn std::error::Error>> {
    let mut c = MySqlConnection::connect(url).await?;
    let keys = Keys { v7: V7Generator::new(), short: ShortPrefixGenerator::new(ShortPrefix::default()) };
    let mut runs = Vec::new();
    for &s in strategies.iter().filter(|s| **s != Strategy::Server) {
        let table = format!("combkey_bench_{}", format!("{s:?}").to_lowercase());
        let key = match s {
            Strategy::Bigint => "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY",
            Strategy::UuidType => "id UUID NOT NULL PRIMARY KEY",
            _ => "id BINARY(16) NOT NULL PRIMARY KEY",
        };
        sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&mut c).await?;
        sqlx::query(AssertSqlSafe(format!(
            "CREATE TABLE {table} ({key}, payload VARCHAR(120) NOT NULL) ENGINE=InnoDB"
        )))
        .execute(&mut c)
        .await?;
        if args.secondary_index {
            sqlx::query(AssertSqlSafe(format!("CREATE INDEX payload_idx ON {table} (payload)")))
                .execute(&mut c)
                .await?;
        }
        let mut batch_ms = Vec::new();
        let started = Instant::now();
        let mut done = 0usize;
        while done < args.mysql_rows {
            let n = (args.mysql_rows - done).min(args.batch);
            let ids = keys.batch(s, n);
            let data = payload(n);
            let t = Instant::now();
            if ids.is_empty() {
                let sql = format!("INSERT INTO {table} (payload) VALUES {}", vec!["(?)"; n].join(","));
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for p in &data {
                    q = q.bind(p);
                }
                q.execute(&mut c).await?;
            } else {
                let sql = format!("INSERT INTO {table} (id, payload) VALUES {}", vec!["(?, ?)"; n].join(","));
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for (id, p) in ids.iter().zip(&data) {
                    q = q.bind(*id).bind(p);
                }
                q.execute(&mut c).await?;
            }
            batch_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            done += n;
        }
        let total = started.elapsed();
        // InnoDB: the clustered index is the table (DATA_LENGTH); INDEX_LENGTH is secondary indexes.
        let (data_len, index_len) = innodb_sizes(&mut c, &table).await?;
        sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut c).await?;
        let run = Run {
            backend: "MariaDB",
            strategy: s,
            rows: done,
            batch_ms,
            total,
            index_bytes: data_len,
            table_bytes: data_len + index_len,
            wal_bytes: None,
            leaf_density: None,
        };
        report::progress(&run);
        runs.push(run);
    }
    Ok(runs)
}

/// PostgreSQL for a run: a throwaway server with `--own-servers` (kept alive by the returned
/// guard), else `COMBKEY_PG_URL`; its URL and a line describing its settings.
async fn postgres_for(args: &Args) -> Result<(Option<servers::OwnServer>, String, String), Box<dyn std::error::Error>> {
    let own = if args.own_servers { Some(servers::postgres(55_433).await?) } else { None };
    let url = match &own {
        Some(s) => s.url.clone(),
        None => std::env::var("COMBKEY_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into()),
    };
    let mut c = PgConnection::connect(&url).await?;
    let sb: String = sqlx::query_scalar("SHOW shared_buffers").fetch_one(&mut c).await?;
    let version: String = sqlx::query_scalar("SHOW server_version").fetch_one(&mut c).await?;
    let settings =
        format!("PostgreSQL {version}, shared_buffers={sb}{}", if own.is_some() { " (own server)" } else { "" });
    Ok((own, url, settings))
}

/// An InnoDB table's clustered index (`DATA_LENGTH`, the table itself) and secondary
/// indexes (`INDEX_LENGTH`), after `ANALYZE TABLE`.
pub(crate) async fn innodb_sizes(c: &mut MySqlConnection, table: &str) -> Result<(i64, i64), sqlx::Error> {
    sqlx::query(AssertSqlSafe(format!("ANALYZE TABLE {table}"))).execute(&mut *c).await?;
    sqlx::query_as(
        "SELECT CAST(DATA_LENGTH AS SIGNED), CAST(INDEX_LENGTH AS SIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
    )
    .bind(table)
    .fetch_one(c)
    .await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.query {
        let (_own, url, settings) = postgres_for(&args).await?;
        let run = query::run(&url, args.rows, args.rows_per_hour, args.hours).await?;
        query::write_all(&run, &settings, &args.out)?;
        return Ok(());
    }
    if args.copy {
        let (_own, url, pg) = postgres_for(&args).await?;
        let mut c = PgConnection::connect(&url).await?;
        sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pgstattuple").execute(&mut c).await?;
        drop(c);
        let settings = format!("{pg}; {} rows per key kind, COPY chunks of {}", args.rows, args.copy_chunk);
        let runs = copy::run(&url, args.rows, args.copy_chunk).await?;
        copy::write_all(&runs, &settings, &args.out, args.copy_chunk)?;
        return Ok(());
    }
    if args.shards {
        let window = (args.rows / 10).max(1);
        let mut outcomes = Vec::new();
        for kind in shards::KeyKind::ALL {
            for &rate in &args.rates {
                outcomes.push(shards::simulate(kind, rate, args.rows, args.max_range_rows, window));
            }
        }
        let t = shards::table(&outcomes, &args.rates, args.rows, args.max_range_rows, window);
        print!("{t}");
        std::fs::create_dir_all(&args.out)?;
        std::fs::write(args.out.join("shards-summary.txt"), t)?;
        return Ok(());
    }
    if args.galera {
        let urls: Vec<String> = std::env::var("COMBKEY_GALERA_URLS")
            .map_err(|_| "--galera needs COMBKEY_GALERA_URLS: `source scripts/galera.sh start`")?
            .split(',')
            .map(str::to_string)
            .collect();
        let mut c = MySqlConnection::connect(&urls[0]).await?;
        let pool: i64 =
            sqlx::query_scalar("SELECT CAST(@@innodb_buffer_pool_size AS SIGNED)").fetch_one(&mut c).await?;
        let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut c).await?;
        let size: (String, String) =
            sqlx::query_as("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").fetch_one(&mut c).await?;
        drop(c);
        let settings = format!(
            "MariaDB {version} Galera, {} nodes, innodb_buffer_pool_size={} MiB each; {} rows per writer, batches of {}",
            size.1,
            pool / 1_048_576,
            args.galera_rows,
            args.batch
        );
        let runs =
            galera::run(&urls, &[Strategy::Bigint, Strategy::V4, Strategy::Comb], args.galera_rows, args.batch).await?;
        galera::write_all(&runs, &settings, &args.out, args.batch)?;
        return Ok(());
    }
    let strategies: Vec<Strategy> = args.strategies.iter().map(|s| Strategy::parse(s)).collect::<Result<_, _>>()?;
    let mut runs = Vec::new();
    let mut settings = Vec::new();
    for backend in &args.backends {
        match backend.as_str() {
            "postgres" | "pg" => {
                let (_own, url, pg) = postgres_for(&args).await?;
                settings.push(pg);
                runs.extend(run_postgres(&url, &args, &strategies).await?);
            }
            "mariadb" | "mysql" => {
                let own = if args.own_servers { Some(servers::mariadb(53_317).await?) } else { None };
                let url = match &own {
                    Some(s) => s.url.clone(),
                    None => {
                        std::env::var("COMBKEY_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
                    }
                };
                let mut c = MySqlConnection::connect(&url).await?;
                let pool: i64 =
                    sqlx::query_scalar("SELECT CAST(@@innodb_buffer_pool_size AS SIGNED)").fetch_one(&mut c).await?;
                let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut c).await?;
                settings.push(format!(
                    "MariaDB {version}, innodb_buffer_pool_size={} MiB{}",
                    pool / 1_048_576,
                    if own.is_some() { " (own server)" } else { "" }
                ));
                drop(c);
                runs.extend(run_mariadb(&url, &args, &strategies).await?);
            }
            other => return Err(format!("unknown backend {other:?}: expected postgres or mariadb").into()),
        }
    }
    report::write_all(&runs, &settings, &args.out, args.batch)?;
    Ok(())
}
