//! The database insert benchmark: how the primary key's kind changes insert time, index size,
//! leaf density and WAL volume as a table grows past the cache (as Percona's "Store UUID in an optimized way" and the klokwrk article measure it).
//!
//! ```sh
//! cargo run --release -p combkey-bench -- --own-servers insert     # throwaway servers, small caches
//! cargo run --release -p combkey-bench -- --own-servers insert --rows 5000000 --backends postgres
//! cargo run --release -p combkey-bench -- query | copy | galera | shards
//! ```
//!
//! Keys are made by the client and sent through combkey-sqlx's column type, in batches
//! (`UNNEST` arrays on PostgreSQL, multi-row `INSERT` on MariaDB), each batch timed.

mod copy;
mod doctor;
mod doctor_memory;
mod doctor_sqlite;
mod galera;
mod peers;
mod query;
mod rekey;
mod report;
mod servers;
mod shards;
mod spider;

use std::time::{Duration, Instant};

use clap::Parser;
use combkey::{ShortPrefix, ShortPrefixGenerator, V7Generator};
use combkey_sqlx::Comb;
use rand::RngExt;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection};

/// The database benchmarks (see docs/benchmarks.md).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Where to write the CSV files, summaries and SVG charts.
    #[arg(long, global = true, default_value = "target/combkey-bench")]
    out: std::path::PathBuf,
    /// Start throwaway servers (PostgreSQL shared_buffers=16MB, MariaDB
    /// innodb_buffer_pool_size=6MB) instead of using COMBKEY_PG_URL / COMBKEY_MYSQL_URL.
    #[arg(long, global = true)]
    own_servers: bool,
    #[command(subcommand)]
    bench: Bench,
}

#[derive(clap::Subcommand, Debug)]
enum Bench {
    /// Inserts as the table outgrows the cache: time per batch, index size, leaf density and
    /// WAL per key kind, on PostgreSQL and MariaDB.
    Insert(InsertArgs),
    /// "Rows of one hour" on PostgreSQL through the COMB key's range against a `created_at`
    /// index.
    Query(QueryArgs),
    /// Bulk loading on PostgreSQL with binary `COPY`, per key kind.
    Copy(CopyArgs),
    /// Three writers at once, one per node of the MariaDB Galera cluster in
    /// COMBKEY_GALERA_URLS (`scripts/galera.sh start`): AUTO_INCREMENT, v4 and the prefix COMB.
    Galera(GaleraArgs),
    /// A real sharded MariaDB: a Spider head over three backends (COMBKEY_SPIDER_URL,
    /// COMBKEY_SPIDER_BACKEND_URLS, COMBKEY_SPIDER_SERVERS: `scripts/spider.sh start`), writers
    /// through the head, per key kind under key RANGE and KEY (hash) sharding.
    Spider(SpiderArgs),
    /// The range-sharding simulation (no database): a key space split into ranges at
    /// --max-range-rows; how hot the busiest range gets per key kind and write rate.
    Shards(ShardsArgs),
    /// `combkey doctor --apply --online` on a big table while writers write, against the
    /// offline run of the same table: writer waits and throughput, times, lost rows, orphans.
    Doctor(DoctorArgs),
    /// The peak memory (RSS) of `combkey doctor`'s audit, `--apply` and `--apply --online` at
    /// several table sizes, on PostgreSQL and MariaDB: flat, whatever the table's size.
    DoctorMemory(DoctorMemoryArgs),
    /// `combkey doctor` on an SQLite file in the default rollback-journal mode beside WAL mode:
    /// the audit, a layout conversion with its key map, a re-key from a time column.
    DoctorSqlite(DoctorSqliteArgs),
    /// `combkey doctor` beside pg_repack and pt-online-schema-change on the same tables under the
    /// same open-loop writers: run time, writers' p50/p99/max and errors, the primary key after.
    Peers(PeersArgs),
    /// Random v4 keys left as they are against re-keyed from `created_at` (`combkey doctor
    /// --rekey-from`), before as many rows keyed by COMBs: index size, leaf density, insert
    /// rate, an old hour through the key, on PostgreSQL and MariaDB.
    Rekey(RekeyArgs),
}

/// `rekey`.
#[derive(clap::Args, Debug)]
struct RekeyArgs {
    /// Which backends: postgres, mysql (MariaDB), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "postgres,mysql", value_parser = parse_backend)]
    backends: Vec<combkey::Backend>,
    /// Old v4 rows, and as many new rows after them.
    #[arg(long, default_value_t = 500_000)]
    rows: usize,
}

/// `peers`.
#[derive(clap::Args, Debug)]
struct PeersArgs {
    /// Which backends: postgres, mysql (MariaDB), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "postgres,mysql", value_parser = parse_backend)]
    backends: Vec<combkey::Backend>,
    /// Parent rows (a child for every fifth), comma separated for several sizes.
    #[arg(long, value_delimiter = ',', default_value = "300000")]
    parents: Vec<usize>,
    /// Writer transactions a second, in all (open loop: each on a schedule).
    #[arg(long, default_value_t = 150.0)]
    rate: f64,
    /// Writer connections.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Which runs: none, peer, copy-swap, in-place, offline, script (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "none,peer,copy-swap,in-place,offline,script")]
    runs: Vec<String>,
    /// Seconds the writers run alone (the `none` run).
    #[arg(long, default_value_t = 15.0)]
    alone: f64,
    /// Every this many writer transactions also deletes a loaded parent with its children
    /// (the children first, as an application under a `NO ACTION` key does): the lock order
    /// that deadlocks with a run's batches. 0: none.
    #[arg(long, default_value_t = 0)]
    delete_every: u32,
    /// The `combkey` binary (default: the one next to this benchmark; build it with
    /// `cargo build --release -p combkey-cli`).
    #[arg(long)]
    combkey: Option<std::path::PathBuf>,
}

/// `doctor-memory`.
#[derive(clap::Args, Debug)]
struct DoctorMemoryArgs {
    /// Which backends: postgres, mysql (MariaDB), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "postgres,mysql", value_parser = parse_backend)]
    backends: Vec<combkey::Backend>,
    /// Table sizes, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1000000,5000000")]
    rows: Vec<usize>,
    /// One referencing row for every this many keys.
    #[arg(long, default_value_t = 10)]
    child_every: usize,
    /// The `combkey` binary (default: the one next to this benchmark; build it with
    /// `cargo build --release -p combkey-cli`).
    #[arg(long)]
    combkey: Option<std::path::PathBuf>,
}

/// `doctor-sqlite`.
#[derive(clap::Args, Debug)]
struct DoctorSqliteArgs {
    /// Parent rows (each with two referencing rows), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "50000,200000")]
    rows: Vec<usize>,
    /// Where the SQLite file is made (and removed after).
    #[arg(long, default_value = "target/bench-sqlite")]
    dir: std::path::PathBuf,
    /// The `combkey` binary (default: the one next to this benchmark).
    #[arg(long)]
    combkey: Option<std::path::PathBuf>,
}

/// `doctor`.
#[derive(clap::Args, Debug)]
struct DoctorArgs {
    /// Which backends: postgres, mysql (MariaDB), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "postgres,mysql", value_parser = parse_backend)]
    backends: Vec<combkey::Backend>,
    /// Parent rows (RT.Comb `Sql` keys to convert).
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Child rows referencing them.
    #[arg(long, default_value_t = 100_000)]
    child_rows: usize,
    /// Concurrent writers.
    #[arg(long, default_value_t = 6)]
    writers: usize,
    /// Keys per online batch.
    #[arg(long, default_value_t = 1000)]
    batch_size: usize,
    /// Seconds the writers write alone first (the baseline).
    #[arg(long, default_value_t = 10)]
    baseline_seconds: u64,
}

/// `insert`.
#[derive(clap::Args, Debug)]
struct InsertArgs {
    /// Rows per strategy on PostgreSQL.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Rows per strategy on MariaDB (smaller: InnoDB with a tiny buffer pool is slow for random keys).
    #[arg(long, default_value_t = 200_000)]
    mysql_rows: usize,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
    /// Which backends: postgres, mysql (MariaDB), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "postgres,mysql", value_parser = parse_backend)]
    backends: Vec<combkey::Backend>,
    /// Which strategies: bigint, v4, comb, short, server (PostgreSQL only), uuidtype (the
    /// prefix COMB in MariaDB's UUID column type; MariaDB only).
    #[arg(long, value_delimiter = ',', default_value = "bigint,v4,comb,short,server,uuidtype")]
    strategies: Vec<String>,
    /// Also index the payload (a secondary index).
    #[arg(long)]
    secondary_index: bool,
}

/// `query`.
#[derive(clap::Args, Debug)]
struct QueryArgs {
    /// Rows in the table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Rows made per hour of the table's time span.
    #[arg(long, default_value_t = 2_000)]
    rows_per_hour: usize,
    /// How many random hours to time, each both ways.
    #[arg(long, default_value_t = 200)]
    hours: usize,
}

/// `copy`.
#[derive(clap::Args, Debug)]
struct CopyArgs {
    /// Rows per key kind.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Rows per `COPY` statement (each one timed).
    #[arg(long, default_value_t = 100_000)]
    copy_chunk: usize,
}

/// `galera`.
#[derive(clap::Args, Debug)]
struct GaleraArgs {
    /// Rows per writer.
    #[arg(long, default_value_t = 300_000)]
    galera_rows: usize,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
}

/// `spider`.
#[derive(clap::Args, Debug)]
struct SpiderArgs {
    /// Rows per run (one run per key kind and sharding).
    #[arg(long, default_value_t = 40_000)]
    rows: usize,
    /// Writers through the head at once.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 100)]
    batch: usize,
}

/// `shards`.
#[derive(clap::Args, Debug)]
struct ShardsArgs {
    /// Inserts to simulate.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// A range splits past this many rows.
    #[arg(long, default_value_t = 10_000)]
    max_range_rows: usize,
    /// Write rates (rows a second) to simulate.
    #[arg(long, value_delimiter = ',', default_value = "10,100,1000,10000")]
    rates: Vec<u64>,
}

fn parse_backend(s: &str) -> Result<combkey::Backend, String> {
    s.parse().map_err(|e: combkey::Error| e.to_string())
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

async fn run_postgres(
    url: &str,
    args: &InsertArgs,
    strategies: &[Strategy],
) -> Result<Vec<Run>, Box<dyn std::error::Error>> {
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

async fn run_mariadb(
    url: &str,
    args: &InsertArgs,
    strategies: &[Strategy],
) -> Result<Vec<Run>, Box<dyn std::error::Error>> {
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
async fn postgres_for(
    own_servers: bool,
) -> Result<(Option<servers::OwnServer>, String, String), Box<dyn std::error::Error>> {
    let own = if own_servers { Some(servers::postgres(55_433).await?) } else { None };
    let url = match &own {
        Some(s) => s.url.clone(),
        None => std::env::var("COMBKEY_PG_URL")
            .map_err(|_| "COMBKEY_PG_URL is not set: give --own-servers, or `source scripts/servers.sh`")?,
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let out = &cli.out;
    match cli.bench {
        Bench::Query(args) => {
            let (_own, url, settings) = postgres_for(cli.own_servers).await?;
            let run = query::run(&url, args.rows, args.rows_per_hour, args.hours).await?;
            query::write_all(&run, &settings, out)?;
        }
        Bench::Copy(args) => {
            let (_own, url, pg) = postgres_for(cli.own_servers).await?;
            let mut c = PgConnection::connect(&url).await?;
            sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pgstattuple").execute(&mut c).await?;
            drop(c);
            let settings = format!("{pg}; {} rows per key kind, COPY chunks of {}", args.rows, args.copy_chunk);
            let runs = copy::run(&url, args.rows, args.copy_chunk).await?;
            copy::write_all(&runs, &settings, out, args.copy_chunk)?;
        }
        Bench::Shards(args) => {
            let window = (args.rows / 10).max(1);
            let mut outcomes = Vec::new();
            for kind in shards::KeyKind::ALL {
                for &rate in &args.rates {
                    outcomes.push(shards::simulate(kind, rate, args.rows, args.max_range_rows, window));
                }
            }
            let t = shards::table(&outcomes, &args.rates, args.rows, args.max_range_rows, window);
            print!("{t}");
            std::fs::create_dir_all(out)?;
            std::fs::write(out.join("shards-summary.txt"), t)?;
        }
        Bench::Galera(args) => galera_bench(&args, out).await?,
        Bench::Spider(args) => {
            let var =
                |v: &str| std::env::var(v).map_err(|_| format!("spider needs {v}: `source scripts/spider.sh start`"));
            let head = var("COMBKEY_SPIDER_URL")?;
            let backends: Vec<String> = var("COMBKEY_SPIDER_BACKEND_URLS")?.split(',').map(str::to_string).collect();
            let servers: Vec<String> = var("COMBKEY_SPIDER_SERVERS")?.split(',').map(str::to_string).collect();
            let mut c = sqlx::MySqlConnection::connect(&head).await?;
            let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut c).await?;
            let settings = format!(
                "MariaDB {version} Spider, a head and {} backends on one machine; {} rows per run from {} writers, batches of {}",
                backends.len(),
                args.rows,
                args.writers,
                args.batch
            );
            let runs = spider::run(
                &head,
                &backends,
                &servers,
                &[Strategy::Bigint, Strategy::V4, Strategy::Comb, Strategy::Short],
                args.rows,
                args.writers,
                args.batch,
            )
            .await
            .map_err(|e| e.to_string())?;
            spider::write_all(&runs, &settings, out)?;
        }
        Bench::Doctor(args) => doctor_bench(&args, cli.own_servers, out).await?,
        Bench::DoctorMemory(args) => doctor_memory_bench(&args, out).await?,
        Bench::DoctorSqlite(args) => doctor_sqlite_bench(&args, out).await?,
        Bench::Peers(args) => peers_bench(&args, out).await?,
        Bench::Rekey(args) => rekey_bench(&args, cli.own_servers, out).await?,
        Bench::Insert(args) => insert_bench(&args, cli.own_servers, out).await?,
    }
    Ok(())
}

async fn galera_bench(args: &GaleraArgs, out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let urls: Vec<String> = std::env::var("COMBKEY_GALERA_URLS")
        .map_err(|_| "galera needs COMBKEY_GALERA_URLS: `source scripts/galera.sh start` (or scripts/servers.sh)")?
        .split(',')
        .map(str::to_string)
        .collect();
    let mut c = MySqlConnection::connect(&urls[0]).await?;
    let pool: i64 = sqlx::query_scalar("SELECT CAST(@@innodb_buffer_pool_size AS SIGNED)").fetch_one(&mut c).await?;
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
    galera::write_all(&runs, &settings, out, args.batch)?;
    Ok(())
}

/// The backends the insert benchmark runs on: each one's setup and run, which returns its runs
/// and a line describing the server.
type InsertFn =
    for<'a> fn(
        &'a InsertArgs,
        bool,
        &'a [Strategy],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(Vec<Run>, String), BoxError>> + 'a>>;
type BoxError = Box<dyn std::error::Error>;
const INSERT_TARGETS: [(combkey::Backend, InsertFn); 2] = [
    (combkey::Backend::Postgres, |args, own, strategies| Box::pin(insert_postgres(args, own, strategies))),
    (combkey::Backend::MySql, |args, own, strategies| Box::pin(insert_mariadb(args, own, strategies))),
];

async fn insert_postgres(
    args: &InsertArgs,
    own_servers: bool,
    strategies: &[Strategy],
) -> Result<(Vec<Run>, String), BoxError> {
    let (_own, url, settings) = postgres_for(own_servers).await?;
    Ok((run_postgres(&url, args, strategies).await?, settings))
}

async fn insert_mariadb(
    args: &InsertArgs,
    own_servers: bool,
    strategies: &[Strategy],
) -> Result<(Vec<Run>, String), BoxError> {
    let own = if own_servers { Some(servers::mariadb(53_317).await?) } else { None };
    let url = match &own {
        Some(s) => s.url.clone(),
        None => std::env::var("COMBKEY_MYSQL_URL")
            .map_err(|_| "COMBKEY_MYSQL_URL is not set: give --own-servers, or `source scripts/servers.sh`")?,
    };
    let mut c = MySqlConnection::connect(&url).await?;
    let pool: i64 = sqlx::query_scalar("SELECT CAST(@@innodb_buffer_pool_size AS SIGNED)").fetch_one(&mut c).await?;
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut c).await?;
    let settings = format!(
        "MariaDB {version}, innodb_buffer_pool_size={} MiB{}",
        pool / 1_048_576,
        if own.is_some() { " (own server)" } else { "" }
    );
    drop(c);
    Ok((run_mariadb(&url, args, strategies).await?, settings))
}

async fn insert_bench(args: &InsertArgs, own_servers: bool, out: &std::path::Path) -> Result<(), BoxError> {
    let strategies: Vec<Strategy> = args.strategies.iter().map(|s| Strategy::parse(s)).collect::<Result<_, _>>()?;
    let mut runs = Vec::new();
    let mut settings = Vec::new();
    for &backend in &args.backends {
        let Some((_, run)) = INSERT_TARGETS.iter().find(|(b, _)| *b == backend) else {
            return Err(format!("the insert benchmark runs on postgres and mysql, not {backend}").into());
        };
        let (r, s) = run(args, own_servers, &strategies).await?;
        runs.extend(r);
        settings.push(s);
    }
    report::write_all(&runs, &settings, out, args.batch)?;
    Ok(())
}

async fn peers_bench(args: &PeersArgs, out: &std::path::Path) -> Result<(), BoxError> {
    use peers::Kind;
    let combkey = match &args.combkey {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("combkey"),
    };
    if !combkey.exists() {
        return Err(format!("{}: no combkey binary; cargo build --release -p combkey-cli", combkey.display()).into());
    }
    if args.rate.is_nan() || args.rate <= 0.0 || args.writers == 0 {
        return Err("--rate and --writers must be above 0".into());
    }
    let kinds: Vec<Kind> = args
        .runs
        .iter()
        .map(|r| match r.as_str() {
            "none" => Ok(Kind::None),
            "peer" => Ok(Kind::Peer),
            "copy-swap" => Ok(Kind::CopySwap),
            "in-place" => Ok(Kind::InPlace),
            "offline" => Ok(Kind::Offline),
            "script" => Ok(Kind::Script),
            other => Err(format!("--runs: {other}? none, peer, copy-swap, in-place, offline, script")),
        })
        .collect::<Result<_, _>>()?;
    let mut runs = Vec::new();
    std::fs::create_dir_all(out)?;
    for &backend in &args.backends {
        let var = match backend {
            combkey::Backend::Postgres => "COMBKEY_PG_URL",
            _ => "COMBKEY_MYSQL_URL",
        };
        let url = std::env::var(var).map_err(|_| format!("{var} is not set: `source scripts/servers.sh`"))?;
        for &parents in &args.parents {
            eprintln!("peers: {} with {parents} parents: the template", backend.name());
            peers::template(backend, &url, parents).await.map_err(|e| -> BoxError { e.to_string().into() })?;
            let setup = peers::Setup {
                backend,
                url: &url,
                parents,
                rate: args.rate,
                writers: args.writers,
                delete_every: args.delete_every,
                combkey: &combkey,
            };
            for &kind in &kinds {
                eprintln!("peers: {} {parents}: {}", backend.name(), kind.name(backend));
                let r = peers::run(
                    &setup,
                    kind,
                    std::time::Duration::from_secs(3),
                    std::time::Duration::from_secs_f64(args.alone),
                )
                .await
                .map_err(|e| -> BoxError { e.to_string().into() })?;
                eprintln!("{}", peers::table(std::slice::from_ref(&r)).lines().nth(2).unwrap_or_default());
                runs.push(r);
                // What is written so far, should a later run fail.
                std::fs::write(out.join("summary-peers.md"), peers::table(&runs))?;
            }
        }
    }
    let deletes = if args.delete_every > 0 {
        format!(", every {}th also deleting a parent with its children", args.delete_every)
    } else {
        String::new()
    };
    let text = format!(
        "{}\n({} writer transactions a second on {} connections{deletes}, open loop; {})\n",
        peers::table(&runs),
        args.rate,
        args.writers,
        std::env::var("COMBKEY_BENCH_NOTE").unwrap_or_default()
    );
    print!("{text}");
    std::fs::write(out.join("summary-peers.md"), text)?;
    Ok(())
}

async fn doctor_memory_bench(args: &DoctorMemoryArgs, out: &std::path::Path) -> Result<(), BoxError> {
    let combkey = match &args.combkey {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("combkey"),
    };
    if !combkey.exists() {
        return Err(format!("{}: no combkey binary; cargo build --release -p combkey-cli", combkey.display()).into());
    }
    sqlx::any::install_default_drivers();
    let mut runs = Vec::new();
    let mut settings = vec![format!("combkey: {}", combkey.display())];
    for &backend in &args.backends {
        let var = match backend {
            combkey::Backend::Postgres => "COMBKEY_PG_URL",
            _ => "COMBKEY_MYSQL_URL",
        };
        let url = std::env::var(var).map_err(|_| format!("{var} is not set: `source scripts/servers.sh`"))?;
        let mut c = sqlx::AnyConnection::connect(&url).await?;
        let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut c).await?;
        settings.push(format!(
            "{}: {}",
            backend.name(),
            version.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
        ));
        for &rows in &args.rows {
            runs.extend(
                doctor_memory::run(&url, backend, &combkey, rows, args.child_every.max(1))
                    .await
                    .map_err(|e| -> BoxError { e.to_string().into() })?,
            );
        }
    }
    settings.push(format!("one referencing row for every {} keys", args.child_every));
    let (text, _) = doctor_memory::summary(&runs, &settings);
    print!("{text}");
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("summary-doctor-memory.txt"), text)?;
    Ok(())
}

async fn doctor_sqlite_bench(args: &DoctorSqliteArgs, out: &std::path::Path) -> Result<(), BoxError> {
    let combkey = match &args.combkey {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("combkey"),
    };
    if !combkey.exists() {
        return Err(format!("{}: no combkey binary; cargo build --release -p combkey-cli", combkey.display()).into());
    }
    let runs =
        doctor_sqlite::run(&combkey, &args.dir, &args.rows).await.map_err(|e| -> BoxError { e.to_string().into() })?;
    let settings = vec![
        format!("combkey: {}", combkey.display()),
        format!("SQLite {} (linked into combkey)", sqlite_version().await?),
        "parents keyed 1 ms apart, two referencing rows each (one indexed NOT NULL, one ON DELETE CASCADE), a view"
            .into(),
    ];
    let (text, _) = doctor_sqlite::summary(&runs, &settings);
    print!("{text}");
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("summary-doctor-sqlite.txt"), text)?;
    Ok(())
}

/// The version of the SQLite library sqlx links (the one `combkey` links too).
async fn sqlite_version() -> Result<String, BoxError> {
    let mut c = sqlx::SqliteConnection::connect("sqlite::memory:").await?;
    Ok(sqlx::query_scalar("SELECT sqlite_version()").fetch_one(&mut c).await?)
}

/// The server a benchmark runs on: PostgreSQL as [`postgres_for`] gives it, or MariaDB (its own
/// on `mariadb_port` with `--own-servers`, else `COMBKEY_MYSQL_URL`); the guard that keeps an
/// own server alive, its URL and a line describing it.
async fn server_for(
    backend: combkey::Backend,
    own_servers: bool,
    mariadb_port: u16,
    bench: &str,
) -> Result<(Option<servers::OwnServer>, String, String), BoxError> {
    match backend {
        combkey::Backend::Postgres => postgres_for(own_servers).await,
        combkey::Backend::MySql => {
            let own = if own_servers { Some(servers::mariadb(mariadb_port).await?) } else { None };
            let url = match &own {
                Some(s) => s.url.clone(),
                None => std::env::var("COMBKEY_MYSQL_URL")
                    .map_err(|_| "COMBKEY_MYSQL_URL is not set: give --own-servers, or `source scripts/servers.sh`")?,
            };
            let mut c = MySqlConnection::connect(&url).await?;
            let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut c).await?;
            let pool: i64 =
                sqlx::query_scalar("SELECT CAST(@@innodb_buffer_pool_size AS SIGNED)").fetch_one(&mut c).await?;
            Ok((own, url, format!("MariaDB {version}, innodb_buffer_pool_size={} MiB", pool / 1_048_576)))
        }
        other => Err(format!("the {bench} benchmark runs on postgres and mysql, not {other}").into()),
    }
}

async fn doctor_bench(args: &DoctorArgs, own_servers: bool, out: &std::path::Path) -> Result<(), BoxError> {
    let mut runs = Vec::new();
    for &backend in &args.backends {
        let (_own, url, settings) = server_for(backend, own_servers, 53_318, "doctor").await?;
        let r = doctor::run(
            &url,
            backend,
            settings,
            args.rows,
            args.child_rows,
            args.writers,
            args.batch_size,
            args.baseline_seconds,
        )
        .await
        .map_err(|e| -> BoxError { e.to_string().into() })?;
        runs.push(r);
    }
    doctor::write_all(&runs, out)?;
    Ok(())
}

async fn rekey_bench(args: &RekeyArgs, own_servers: bool, out: &std::path::Path) -> Result<(), BoxError> {
    let mut runs = Vec::new();
    let mut settings = Vec::new();
    for &backend in &args.backends {
        let (_own, url, line) = server_for(backend, own_servers, 53_319, "rekey").await?;
        runs.extend(rekey::run(&url, backend, args.rows).await?);
        settings.push(line);
    }
    rekey::write_all(&runs, &settings, out)?;
    Ok(())
}
