//! What the audit found, as text for people and as one JSON object.

use std::collections::BTreeMap;

use combkey::Backend;

use crate::audit::Audit;
use crate::catalog::Name;
use crate::plan::Plan;
use crate::schema::{IndexStats, Schema};

/// Everything the audit says.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Report {
    /// The backend.
    pub(crate) backend: Backend,
    /// The table's schema facts.
    pub(crate) schema: Schema,
    /// Rows in the table (PostgreSQL with a sample: the planner's estimate).
    pub(crate) rows: i64,
    /// Keys read.
    pub(crate) read: usize,
    /// Whether they were a sample.
    pub(crate) sampled: bool,
    /// Values that are no UUID at all, and the first few of them.
    pub(crate) unreadable: (usize, Vec<String>),
    /// What the keys are.
    pub(crate) audit: Audit,
    /// The primary key index.
    pub(crate) index: Option<IndexStats>,
    /// The plan the keys read would make (its counts; empty when nothing would change).
    pub(crate) plan: Option<Plan>,
    /// Why no plan could be made (a refusal), if so.
    pub(crate) refusal: Option<String>,
    /// An unfinished journaled conversion of this table: the step it reached.
    pub(crate) unfinished: Option<(usize, usize)>,
    /// An online run (`--apply --online`) of this table was stopped before its end: its
    /// journal keeps the plan and how far it got.
    pub(crate) unfinished_online: bool,
    /// Seconds the first pass over the keys took (the read rate the time estimate starts from).
    pub(crate) first_pass_seconds: f64,
    /// Keys after the next id the application makes, in the database's order.
    pub(crate) keys_after_next: i64,
    /// Seconds the audit took.
    pub(crate) seconds: f64,
}

/// Seconds as people read them: `45 s`, `12 min`, `3.5 h`.
fn duration(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn size(bytes: f64) -> String {
    if bytes < 1_048_576.0 { format!("{:.0} KiB", bytes / 1024.0) } else { format!("{:.1} MiB", bytes / 1_048_576.0) }
}

/// How much longer than the audit's first pass over the keys an offline `--apply` takes per
/// key it changes: `combkey-bench doctor-memory` measured 30 to 60 (the conversion of tables
/// of 1M and 5M keys, one referencing row per ten, against the audit's read of them, on
/// PostgreSQL and MariaDB, a 2-core VM); docs/doctor.md shows the runs.
const OFFLINE_PER_KEY_READ: f64 = 45.0;

/// An offline run estimated above this many seconds is better run `--online`.
const LONG_OFFLINE_S: f64 = 300.0;

impl Report {
    /// The backend.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-report_backend-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey::Backend;
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(report.backend(), Backend::Sqlite);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Rows in the table (with a sample: the statistics' estimate where there is one).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-rows-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// // `orders` holds 20 rows.
    /// let mut doctor = Doctor::connect(&url).await?;
    /// assert_eq!(doctor.audit("orders", "id", None, Options::default()).await?.rows(), 20);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rows(&self) -> i64 {
        self.rows
    }

    /// Keys read.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-read-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let all = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(all.read(), 20);
    /// // A sample of about 5 keys, drawn at random: never more than the table holds.
    /// let sample = doctor.audit("orders", "id", Some(5), Options::default()).await?;
    /// assert!(sample.read() <= 20);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn read(&self) -> usize {
        self.read
    }

    /// Values that are no UUID at all, and the first few of them.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-unreadable-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let (count, first) = report.unreadable();
    /// assert_eq!(count, 0); // every key is a UUID
    /// assert!(first.is_empty());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn unreadable(&self) -> (usize, &[String]) {
        (self.unreadable.0, &self.unreadable.1)
    }

    /// What the keys are.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-report_audit-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey::layouts::Layout;
    /// use combkey_doctor::{Doctor, Kind, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let audit = report.audit();
    /// assert_eq!(audit.count(Kind::Layout(Layout::RtCombSql)), 20);
    /// assert_eq!(audit.total(), 20);
    /// // RT.Comb's `Sql` keys keep their time in their last bytes: SQLite does not sort them by it.
    /// assert!(audit.time_order.unwrap() < 0.9);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// The plan the keys read would make (its counts; empty when nothing would change).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-report_plan-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let plan = report.plan().expect("nothing refused");
    /// assert_eq!(plan.converted.get("rtcomb-sql -> v7"), Some(&20));
    /// assert!(!plan.retypes()); // SQLite's BLOB is already the stored form
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// Why no plan could be made (a refusal), if so.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-refusal-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// match report.refusal() {
    ///     Some(why) => println!("--apply would refuse: {why}"),
    ///     None => assert!(report.plan().is_some()),
    /// }
    /// assert_eq!(report.refusal(), None);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// How long an offline `--apply` of the plan would hold its locks, in seconds, estimated
    /// from this audit's own read rate (its first pass over the keys) and the keys that
    /// change: `None` where nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-offline_estimate-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let seconds = report.offline_estimate().expect("20 keys change");
    /// // 20 keys: well under the five minutes past which the report advises --online.
    /// assert!(seconds < 300.0, "{seconds}");
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn offline_estimate(&self) -> Option<f64> {
        let plan = self.plan.as_ref().filter(|p| !p.is_empty())?;
        #[allow(clippy::cast_precision_loss)]
        let (changed, read, rows) = (plan.converted.values().sum::<usize>() as f64, self.read as f64, self.rows as f64);
        if read == 0.0 || self.first_pass_seconds <= 0.0 {
            return None;
        }
        // A sampled audit read the whole table to draw its sample: its time is per row.
        let per_key = self.first_pass_seconds / rows.max(read);
        let changed = if self.sampled { changed / read * rows } else { changed };
        Some(changed * per_key * OFFLINE_PER_KEY_READ)
    }
    /// Whether the column is the stored form combkey uses on this database.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-stored_form_ok-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// // The keys are 16-byte blobs, combkey's stored form on SQLite, whatever their layout.
    /// let mut doctor = Doctor::connect(&url).await?;
    /// assert!(doctor.audit("orders", "id", None, Options::default()).await?.stored_form_ok());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stored_form_ok(&self) -> bool {
        let ty = self.schema.column.data_type.as_str();
        match self.backend {
            Backend::Postgres => ty == "uuid",
            Backend::MySql => ty == "binary(16)" || ty == "uuid",
            _ => ty == "blob" && self.unreadable.0 == 0,
        }
    }

    /// The index's size with sorted keys, estimated, and how.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&std::env::var("DATABASE_URL")?).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// if let Some((bytes, how)) = report.sorted_index_estimate() {
    ///     println!("with sorted keys the primary key would take about {:.0} MiB ({how})", bytes / 1_048_576.0);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn sorted_index_estimate(&self) -> Option<(f64, &'static str)> {
        let index = self.index?;
        if self.index_size_stale() {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let bytes = index.bytes as f64;
        match (self.backend, index.leaf_density) {
            // Sorted keys fill B-tree leaves to the fillfactor, 90%.
            (Backend::Postgres, Some(d)) if d > 0.0 => {
                Some((bytes * (d / 90.0).min(1.0), "leaves filled to 90% as sorted keys fill them"))
            }
            // The insert benchmark: 70.6 MiB clustered index with COMB keys, 103.8 MiB with v4.
            (Backend::MySql, _) if self.audit.time_order.is_none_or(|o| o < 0.9) => {
                Some((bytes * 70.6 / 103.8, "the insert benchmark's COMB/v4 clustered index ratio"))
            }
            (Backend::MySql, _) => Some((bytes, "already sorted")),
            _ => None,
        }
    }

    /// Whether the primary key's size is the statistics of fewer rows than the table holds
    /// (MySQL/MariaDB's `DATA_LENGTH` is InnoDB's statistics, which an unanalysed table keeps
    /// from when it was near empty): under 16 bytes a row, less than a key takes.
    fn index_size_stale(&self) -> bool {
        self.backend == Backend::MySql
            && self.index.is_some_and(|i| {
                u64::try_from(i.bytes).unwrap_or(0) < u64::try_from(self.rows).unwrap_or(0).saturating_mul(16)
            })
    }

    /// Whether the primary key's index is bloated beyond what sorted keys fill, and how it
    /// shows: PostgreSQL's leaf density under 80% (sorted keys fill leaves to 90%), or without
    /// `pgstattuple` an index more than 1.3 times the size of one of sorted `uuid` keys (28
    /// bytes an entry, pages 90% full). Keys just converted leave exactly this.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-bloat-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// if let Some(why) = report.bloat() {
    ///     println!("rebuild the primary key: {why}");
    /// }
    /// // Only told on PostgreSQL.
    /// assert_eq!(report.bloat(), None);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn bloat(&self) -> Option<String> {
        let index = self.index?;
        if self.backend != Backend::Postgres || self.schema.column.data_type != "uuid" {
            return None;
        }
        match index.leaf_density {
            Some(d) if d < 80.0 => Some(format!("its leaves are {d:.1}% full, sorted keys fill them to 90%")),
            Some(_) => None,
            None => {
                #[allow(clippy::cast_precision_loss)]
                let (bytes, packed) = (index.bytes as f64, self.rows.max(0) as f64 * 8192.0 / (8152.0 * 0.9 / 28.0));
                (bytes > 1.3 * packed + 65_536.0).then(|| {
                    format!(
                        "it is {}, about {:.1} times what sorted keys fill ({})",
                        size(bytes),
                        bytes / packed.max(1.0),
                        size(packed)
                    )
                })
            }
        }
    }

    /// Keys that sort after the next id the application makes (combkey's v7, or a v6 where the
    /// conversion's target is v6), in the database's own order: the keys that id would land
    /// in front of. 0 where new keys append at the index's right edge.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-keys_after_next-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options, Quiet};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// // RT.Comb's `Sql` keys start with random bytes: nearly all sort after a new v7 id.
    /// let before = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert!(before.keys_after_next() > 0);
    /// let plan = doctor.plan("orders", "id", Options::default()).await?;
    /// doctor.apply(&plan, &mut Quiet).await?;
    /// // Converted to v7, every key sorts before the next id.
    /// assert_eq!(doctor.audit("orders", "id", None, Options::default()).await?.keys_after_next(), 0);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn keys_after_next(&self) -> i64 {
        self.keys_after_next
    }

    /// What makes the keys the database makes itself: the key column's `DEFAULT` expression (or
    /// combkey's `BEFORE INSERT` trigger on MySQL/MariaDB), and the layout it makes where
    /// known (see [`crate::schema::default_makes`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&std::env::var("DATABASE_URL")?).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// // E.g. `id uuid DEFAULT gen_random_uuid()` on PostgreSQL: Some(("gen_random_uuid()", Some("v4"))).
    /// if let Some((expression, makes)) = report.default() {
    ///     if makes != Some("v7") {
    ///         println!("the DEFAULT {expression} makes {makes:?} keys: give --set-default");
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn default(&self) -> Option<(String, Option<&'static str>)> {
        let trigger = self.schema.triggers.iter().find(|t| {
            t.table == self.schema.table && t.events.contains("INSERT") && t.definition.contains("combkey_v7(")
        });
        // A generator named combkey_v7 that is not combkey's makes keys of a layout not known.
        let ours = self.schema.combkey_v7 != Some(false);
        match (&self.schema.column.default, trigger) {
            (_, Some(t)) => Some((format!("trigger {}", t.name), Some("v7").filter(|_| ours))),
            (Some(d), _) if !self.schema.column.generated => Some((
                d.clone(),
                crate::schema::default_makes(d).filter(|m| ours || !d.contains("combkey_v7(") || *m != "v7"),
            )),
            _ => None,
        }
    }

    /// Why keys the database makes would not sort with the converted ones, where they would
    /// not: its default makes another layout than the target.
    fn default_caveat(&self) -> Option<String> {
        let target = self.plan.as_ref().map_or(combkey::layouts::Layout::V7, |p| p.options.to);
        let (expr, makes) = self.default()?;
        if makes == Some(target.name()) || self.plan.as_ref().is_some_and(|p| p.options.set_default) {
            return None;
        }
        let what = makes.map_or_else(|| "keys of a layout combkey cannot tell".to_string(), |m| format!("{m} keys"));
        let fix = if target == combkey::layouts::Layout::V7 {
            "Give --apply --set-default to make the default combkey's generator in the same run."
        } else {
            "combkey's database-side generator makes v7 keys: make v6 keys in the application, or give the column a v6 \
             default of your own."
        };
        Some(format!(
            "The column's DEFAULT ({expr}) makes {what}: rows inserted without a key keep getting them whatever this \
             conversion does, and those do not sort with the {target} keys. {fix}"
        ))
    }

    /// The foreign keys that reference the key column, as `child.column`.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-referenced_by-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert_eq!(report.referenced_by(), ["order_lines.order_id"]);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn referenced_by(&self) -> Vec<String> {
        self.schema.references.iter().map(|fk| self.schema.reference_name(fk)).collect()
    }

    /// What to do.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-recommendation-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// assert!(report.recommendation().starts_with("Convert 20 rtcomb-sql keys to v7"));
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn recommendation(&self) -> String {
        if let Some((step, of)) = self.unfinished {
            return format!(
                "An earlier --apply stopped after step {step} of {of}; its journal keeps the plan. Run --apply again to finish \
                 it (other sessions' writes to these tables are refused until then)."
            );
        }
        if self.unfinished_online {
            return "An earlier --apply --online stopped before its end; its journal keeps the plan and how far it got. \
                    Run --apply --online again to finish it (in place, the keys converted so far stay converted; a copy \
                    and swap stopped before its swap changed none of the table's keys, and --abandon removes its copy)."
                .into();
        }
        if self.unreadable.0 > 0 {
            return format!(
                "{} values are no UUID at all ({}): fix or remove them first; --apply refuses until then.",
                self.unreadable.0,
                self.unreadable.1.join(", ")
            );
        }
        if let Some(why) = &self.refusal {
            return format!("--apply would refuse: {why}");
        }
        let column = &self.schema.column.name;
        let random = self.audit.layouts.get("v4").copied().unwrap_or(0);
        let after = self.keys_after_next;
        let default = self.default_caveat().map(|c| format!(" {c}")).unwrap_or_default();
        // Keys the next id would land in front of: said wherever there are any.
        let landing = if after > 0 {
            format!(
                " {after} {} after the next id combkey makes, so new keys land among them, not at the index's \
                 right edge.",
                if after == 1 { "key sorts" } else { "keys sort" }
            )
        } else {
            String::new()
        };
        // v4 keys and a column of creation times: they can be re-keyed from it.
        let rekey = match self.schema.time_columns.first() {
            Some(t) if random > 0 => format!(
                " Or re-key the v4 keys from the rows' creation time: --rekey-from {t} makes each a v7 key of its \
                 row's {t}, and keeps every old key in a key map where old ids resolve (docs/doctor.md, \
                 \"Random v4 keys, re-keyed from their time\")."
            ),
            _ => String::new(),
        };
        let Some(plan) = self.plan.as_ref().filter(|p| !p.is_empty()) else {
            let base = if random == self.read && self.read > 0 {
                format!(
                    "The keys are random v4 and carry no time, so none can be converted: keep them, and make new keys \
                     with combkey (v7). The new keys sort among themselves in creation order within one narrow range \
                     of the key space, so inserts stay local even beside the old keys; {column} itself never sorts by time \
                     for the old rows.{rekey}"
                )
            } else if self.audit.uncertain > 0 {
                format!(
                    "{} keys look like COMBs but could be random keys whose bytes read as a time; they stay. Give \
                     --convert-uncertain to convert them too.",
                    self.audit.uncertain
                )
            } else if let Some((name, (n, why))) = self
                .plan
                .as_ref()
                .and_then(|p| p.kept.iter().find(|(k, (_, why))| k.as_str() != "v4" && !why.starts_with("uncertain")))
            {
                // Keys that carry a time but no sorted layout holds: they stay, and they do
                // not sort by time here.
                // A time order of 1.000 (few keys, or made in an order that happens to sort) does not
                // make the layout sorted: said as such, not as keys that "do not sort".
                match self.audit.time_order {
                    Some(o) if o >= 0.9995 => format!(
                        "{n} {name} keys cannot be converted: {why}. They stay as they are (they read in creation \
                         order here: time_order {o:.3}); make new keys with combkey (v7), which sort among themselves."
                    ),
                    order => format!(
                        "{n} {name} keys do not sort by creation time in this database{} and cannot be converted: \
                         {why}. They stay as they are; make new keys with combkey (v7), which sort among themselves.",
                        order.map_or_else(String::new, |o| format!(" (time_order {o:.3})"))
                    ),
                }
            } else if random > 0 {
                format!(
                    "Nothing to convert: the time-carrying keys already sort; the {random} v4 keys carry no time and stay. \
                     Keep making new keys with combkey (v7).{rekey}"
                )
            } else if after > 0 {
                format!("Nothing converts, but the keys do not sort with the ids combkey makes next:{landing}")
            } else if let Some(bloat) = self.bloat() {
                format!(
                    "Nothing to convert, but the primary key is bloated ({bloat}): --rebuild-index rebuilds it without \
                     blocking writes (REINDEX INDEX CONCURRENTLY)."
                )
            } else if !default.is_empty() {
                "Nothing to convert: the keys sort in creation order in the stored form combkey uses.".to_string()
            } else {
                return "Nothing to do: the keys sort in creation order in the stored form combkey uses, and the next id \
                        combkey makes sorts after every one of them."
                    .into();
            };
            let landing = if random > 0 || self.audit.uncertain > 0 || after == 0 || base.contains(&landing) {
                String::new()
            } else {
                landing
            };
            return format!("{base}{landing}{default}");
        };
        let scale = |n: usize| -> String {
            if self.sampled && self.read > 0 {
                #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
                let est = (n as f64 / self.read as f64 * self.rows as f64).round() as i64;
                format!("about {est}")
            } else {
                n.to_string()
            }
        };
        let pairs: Vec<String> = plan
            .converted
            .iter()
            .map(|(k, n)| match k.split_once(" -> ") {
                Some((from, to)) => format!("{} {from} keys to {to}", scale(*n)),
                None => format!("{} keys ({k})", scale(*n)),
            })
            .collect();
        let sampled = if self.sampled {
            " (an estimate from the sample; keys that would become one are looked for only where every key is read, \
             as --apply does)"
        } else {
            ""
        };
        let typed = if plan.retypes() {
            format!(" and change the column from {} to {}", plan.column_type, self.backend.column_type())
        } else {
            String::new()
        };
        let time = match self.offline_estimate() {
            Some(t) if t > LONG_OFFLINE_S => format!(
                " Offline, --apply would hold its locks on {} and the tables referencing it for about {} (estimated \
                 from this audit's read rate): run --apply --online instead, which converts in short batches while \
                 the application writes.",
                self.schema.table,
                duration(t)
            ),
            Some(t) => {
                format!(" Offline, --apply would take about {} (estimated from this audit's read rate).", duration(t))
            }
            None => String::new(),
        };
        // What the conversion leaves that does not sort with the new keys: keys it keeps.
        let stays: Vec<String> = plan
            .kept
            .iter()
            .filter(|(k, _)| k.as_str() != plan.options.to.name())
            .map(|(k, (n, _))| format!("{} {k}", scale(*n)))
            .collect();
        let outcome = if stays.is_empty() {
            format!(
                " ORDER BY {column} then follows creation time, and the next id combkey makes ({}) sorts after every key: \
                 new keys append at the index's right edge.",
                plan.options.to
            )
        } else {
            format!(
                " The {} keys it leaves do not carry a time it can convert: they keep their places, and new keys land \
                 among them where they sort after the next id.",
                stays.join(", ")
            )
        };
        let map = plan.key_map.as_ref().map_or_else(String::new, |m| {
            format!(
                " The new keys do not hold every bit of the old ones, so no old key can be computed back from its new \
                 one: each converted key's old and new value is kept in {} (an old id from a URL or another system is \
                 one lookup: SELECT new_key FROM {} WHERE old_key = ...).",
                Name::from(m),
                Name::from(m).quoted(self.backend)
            )
        });
        if pairs.is_empty() && !plan.sets_default && plan.column_type == plan.final_type {
            // Nothing to convert: a stopped run's index is all there is (the plan's note).
            return format!(
                "Nothing to convert, but {}.",
                plan.notes
                    .iter()
                    .find(|n| n.contains("a stopped run left the index"))
                    .map_or("nothing else to do either", String::as_str)
            );
        }
        let what = if pairs.is_empty() && plan.sets_default {
            // Nothing to convert: the run only makes the default combkey's generator.
            format!("Make the default of {column} combkey's generator")
        } else if plan.sets_default {
            format!("Convert {}{sampled}{typed} and make the default of {column} combkey's generator", pairs.join(", "))
        } else {
            format!("Convert {}{sampled}{typed}", pairs.join(", "))
        };
        format!("{what}: --migration-sql shows the SQL, --apply runs it.{outcome}{map}{time}{default}")
    }

    /// The report as one JSON object.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-json-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let json: serde_json::Value = serde_json::from_str(&report.json())?;
    /// assert_eq!(json["backend"], "sqlite");
    /// assert_eq!(json["layouts"]["rtcomb-sql"], 20);
    /// assert_eq!(json["converts"]["rtcomb-sql -> v7"], 20);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn json(&self) -> String {
        let layouts: serde_json::Map<String, serde_json::Value> =
            self.audit.layouts.iter().map(|(k, v)| ((*k).to_string(), (*v).into())).collect();
        let index = self.index.map(|i| {
            serde_json::json!({
                "bytes": i.bytes,
                "leaf_density": i.leaf_density,
                "sorted_estimate_bytes": self.sorted_index_estimate().map(|(b, _)| b.round()),
                "bloated": self.bloat().is_some(),
            })
        });
        let converted: BTreeMap<String, usize> = self.plan.as_ref().map(|p| p.converted.clone()).unwrap_or_default();
        serde_json::json!({
            "backend": self.backend.name(),
            "table": self.schema.table.to_string(),
            "column": self.schema.column.name,
            "column_type": self.schema.column.data_type,
            "stored_form_ok": self.stored_form_ok(),
            "rows": self.rows,
            "read": self.read,
            "sampled": self.sampled,
            "unreadable": self.unreadable.0,
            "layouts": layouts,
            "uncertain": self.audit.uncertain,
            "evidence": self.audit.evidence,
            "time_order": self.audit.time_order,
            "index": index,
            "primary_key": self.schema.primary_key,
            "referenced_by": self.referenced_by(),
            "triggers": self.schema.triggers.iter().map(|t| format!("{} on {} ({})", t.name, t.table, t.events)).collect::<Vec<_>>(),
            "inherited_by": self.schema.inheritors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "converts": converted,
            "refusal": self.refusal,
            "unfinished_step": self.unfinished.map(|(s, _)| s),
            "unfinished_online": self.unfinished_online,
            "offline_estimate_seconds": self.offline_estimate().map(|t| t.round()),
            "keys_after_next_id": self.keys_after_next,
            "default": self.default().map(|(e, m)| serde_json::json!({"expression": e, "makes": m})),
            "key_map": self.plan.as_ref().and_then(|p| p.key_map.as_ref()).map(|m| Name::from(m).to_string()),
            "target": self.plan.as_ref().map_or("v7", |p| p.options.to.name()),
            "notes": self.plan.as_ref().map(|p| p.notes.clone()).unwrap_or_default(),
            "recommendation": self.recommendation(),
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
        })
        .to_string()
    }

    /// The report as text.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use sqlx::Connection as _;
    /// # let path = std::env::temp_dir().join(format!("combkey-doctor-doc-text-{}.db", std::process::id()));
    /// # let url = format!("sqlite://{}?mode=rwc", path.display());
    /// # let mut db = sqlx::SqliteConnection::connect(&url).await?;
    /// # sqlx::raw_sql("DROP TABLE IF EXISTS order_lines; DROP TABLE IF EXISTS orders; CREATE TABLE orders (id BLOB PRIMARY KEY); \
    /// #     CREATE TABLE order_lines (n INTEGER PRIMARY KEY, order_id BLOB REFERENCES orders (id))").execute(&mut db).await?;
    /// # let now = combkey::Timestamp::now();
    /// # for minute in 0..20 {
    /// #     let key = combkey::layouts::RtCombLayout::Sql.create(now.saturating_add_ms(-60_000 * minute), combkey::Comb::new_v4())?;
    /// #     sqlx::query("INSERT INTO orders VALUES (?1); INSERT INTO order_lines (order_id) VALUES (?1)")
    /// #         .bind(key.as_bytes().to_vec()).execute(&mut db).await?;
    /// # }
    /// use combkey_doctor::{Doctor, Options};
    ///
    /// let mut doctor = Doctor::connect(&url).await?;
    /// let report = doctor.audit("orders", "id", None, Options::default()).await?;
    /// let text = report.text();
    /// assert!(text.starts_with("combkey doctor: orders.id on sqlite\n"));
    /// println!("{text}");
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok(())
    /// # }
    /// ```
    pub fn text(&self) -> String {
        let mut s =
            format!("combkey doctor: {}.{} on {}\n", self.schema.table, self.schema.column.name, self.backend.name());
        let form =
            if self.stored_form_ok() { "the stored form combkey uses" } else { "not the stored form combkey uses" };
        s.push_str(&format!("  column type     {} ({form})\n", self.schema.column.data_type));
        let how = if self.sampled { "sampled evenly" } else { "all" };
        s.push_str(&format!("  rows            {} ({} read, {how}, in key order)\n", self.rows, self.read));
        if self.unreadable.0 > 0 {
            s.push_str(&format!(
                "  unreadable      {} values are no UUID at all: {}\n",
                self.unreadable.0,
                self.unreadable.1.join(", ")
            ));
        }
        let counts: Vec<String> = self.audit.layouts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        s.push_str(&format!("  layouts         {}\n", counts.join(", ")));
        for e in &self.audit.evidence {
            s.push_str(&format!("                  - {e}\n"));
        }
        match self.audit.time_order {
            Some(o) => s.push_str(&format!(
                "  time_order      {o:.3} (share of neighbours in ORDER BY {} whose times do not go back: 1.0 = creation \
                 order, about 0.5 = random)\n",
                self.schema.column.name
            )),
            None => s.push_str("  time_order      none (the keys carry no time)\n"),
        }
        match (self.index, self.sorted_index_estimate()) {
            (Some(i), est) => {
                #[allow(clippy::cast_precision_loss)]
                let sz = size(i.bytes as f64);
                let density = i.leaf_density.map(|d| format!(", leaf density {d:.1}%")).unwrap_or_default();
                let estimate = est
                    .map(|(b, how)| format!("; with sorted keys about {} (estimate: {how})", size(b)))
                    .unwrap_or_default();
                let stale = if self.index_size_stale() {
                    " (InnoDB's statistics of the table when it held fewer rows, not its size now: ANALYZE TABLE \
                     takes them again)"
                } else {
                    ""
                };
                s.push_str(&format!("  primary key     {sz}{density}{estimate}{stale}\n"));
            }
            (None, _) => s.push_str("  primary key     size not available on this database\n"),
        }
        let refs = self.referenced_by();
        s.push_str(&format!(
            "  referenced by   {}\n",
            if refs.is_empty() { "nothing".to_string() } else { refs.join(", ") }
        ));
        if !self.schema.triggers.is_empty() {
            let t: Vec<String> =
                self.schema.triggers.iter().map(|t| format!("{} on {} ({})", t.name, t.table, t.events)).collect();
            s.push_str(&format!("  triggers        {}\n", t.join(", ")));
        }
        if !self.schema.inheritors.is_empty() {
            let t: Vec<String> = self.schema.inheritors.iter().map(ToString::to_string).collect();
            s.push_str(&format!("  inherited by    {}\n", t.join(", ")));
        }
        s.push_str(&format!(
            "  next id         {} (in ORDER BY {}: 0 = new keys append at the index's right edge)\n",
            match self.keys_after_next {
                0 => "sorts after every key".to_string(),
                1 => "1 key sorts after the next id combkey makes".to_string(),
                n => format!("{n} keys sort after the next id combkey makes"),
            },
            self.schema.column.name
        ));
        if let Some((e, m)) = self.default() {
            s.push_str(&format!("  default         {e} (makes {})\n", m.unwrap_or("keys of an unknown layout")));
        }
        if let Some(m) = self.plan.as_ref().and_then(|p| p.key_map.as_ref()) {
            s.push_str(&format!("  key map         {} (old key -> new key, kept by --apply)\n", Name::from(m)));
        }
        for note in self.plan.iter().flat_map(|p| &p.notes) {
            s.push_str(&format!("  note            {note}\n"));
        }
        s.push_str(&format!("  recommendation  {}\n", self.recommendation()));
        s.push_str(&format!("  (audit took {:.2} s)\n", self.seconds));
        s
    }
}
