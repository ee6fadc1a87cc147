//! The `combkey` command: make, convert, inspect and validate COMB ids.
//!
//! ```text
//! combkey new [-n N] [--layout LAYOUT] [--stored BACKEND]
//! combkey mask --key KEY [ID...]     (or COMBKEY_FACE_KEY; ids from stdin when none given)
//! combkey unmask --key KEY [FACE...]
//! combkey convert --from canonical|BACKEND|LAYOUT --to canonical|BACKEND|LAYOUT [ID...]
//!     (ids from stdin when none given)
//! combkey inspect [--json] [--as LAYOUT] [--near RFC3339] [ID...]
//! combkey validate [--now RFC3339] [--past DUR] [--future DUR] [--layout v7|short-prefix] ID...
//! combkey sql postgres|mysql|sqlite|sqlserver [--up|--down]
//! combkey sql postgres|mysql|sqlserver partitions --table NAME --interval day|week|month|year
//! combkey sql sqlserver convert --table dbo.T --from public|rtcomb-sql|newsequentialid [--ref dbo.C.col:fk]
//! combkey sql mysql shards --table NAME --servers b1,b2,b3 [--interval month] (--from D --to D | --hash | ...)
//!     (--from DATE --to DATE [--default] | --from DATE --drop-before DATE | --add N --after DATE [--default])
//! combkey doctor --url URL --table NAME [--column id] [--sample N] [--json] [--migration-sql | --apply]
//! ```
//!
//! Exit status: 0 on success; 1 when an id is malformed or invalid; 2 for a usage error.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use combkey::layouts::{DotNetFields, KeyMigration, Layout, LocalityFields};
use combkey::sql::{Interval, Partitioning, Sharding};
use combkey::{Backend, Comb, Expected, ShortPrefix, ShortPrefixGenerator, Timestamp, V7Generator, Validator};

/// A line on standard error, like `eprintln!`, that does not panic when standard error is
/// closed (`combkey doctor ... 2>&1 | head`): a progress line that cannot be shown is dropped,
/// and the run goes on to its end and its exit status.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[cfg(feature = "doctor")]
mod doctor;
mod forms;
#[cfg(feature = "doctor")]
mod login;

use forms::{Spec, json_str, parse_duration};

/// Make, convert, inspect and validate time-ordered UUIDs (COMBs).
#[derive(Parser, Debug)]
#[command(name = "combkey", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Make new ids, one a line.
    New {
        /// How many ids.
        #[arg(short = 'n', long = "count", default_value_t = 1)]
        count: usize,
        /// Which layout: v7 (default), short-prefix, rtcomb-sql, rtcomb-postgres,
        /// rtcomb-legacy, newsequentialid, v1, v6, lambert-v13, mysql-swap, locality, uc-prefix,
        /// uc-suffix, uc-short-prefix, uc-short-suffix, efcore, newid, newid-sequential,
        /// uuidnext-sqlserver, medo-sqlserver.
        #[arg(long, visible_alias = "kind", value_parser = parse_layout, default_value = "v7")]
        layout: Layout,
        /// Print the stored value as this backend's own client shows it (sqlserver, mysql,
        /// postgres, sqlite) instead of the public id (canonical).
        #[arg(long, alias = "storage", value_parser = Spec::parse_written, default_value = "canonical")]
        stored: Spec,
        #[command(flatten)]
        short: ShortArgs,
    },
    /// Show v7 ids as faces: v4-looking ids that hide their time (uuidv47's scheme, the same
    /// faces as its C library and PostgreSQL extension under the same key).
    Mask {
        #[command(flatten)]
        key: FaceKeyArg,
        /// Ids to mask; read from standard input, one a line, when none are given.
        ids: Vec<String>,
    },
    /// The v7 id behind each face. A face that unmasks to a time more than a day past the clock
    /// was not made with this key, and is refused.
    Unmask {
        #[command(flatten)]
        key: FaceKeyArg,
        /// Faces to unmask; read from standard input, one a line, when none are given.
        ids: Vec<String>,
    },
    /// Convert ids between the public id, its stored forms, and other systems' layouts: a layout
    /// to the public id gives its v7 form (what doctor converts keys to; a few layouts' v7 forms
    /// drop bits); between layouts, lossless conversions only.
    Convert {
        /// What the ids are: canonical (the public id), a backend (its stored value:
        /// sqlserver, mysql, ...) or a layout.
        #[arg(long, value_parser = Spec::parse)]
        from: Spec,
        /// What to print: canonical, a backend or a layout.
        #[arg(long, value_parser = Spec::parse)]
        to: Spec,
        /// Ids to convert; read from standard input, one a line, when none are given.
        ids: Vec<String>,
    },
    /// Show what an id is: layout, version, variant and the time it carries.
    Inspect {
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
        /// Read the ids as this layout (default: what the version nibble says; version 4 and
        /// unknown versions show as `uuid`).
        #[arg(long = "as", value_parser = parse_layout)]
        as_layout: Option<Layout>,
        /// For a short prefix COMB: show the interval nearest this time (default: now).
        #[arg(long, value_parser = parse_time)]
        near: Option<Timestamp>,
        #[command(flatten)]
        short: ShortArgs,
        /// Ids to inspect; read from standard input when none are given.
        ids: Vec<String>,
    },
    /// Check client-made ids: version, variant and time window. Exit 0 only if all are valid.
    Validate {
        /// The clock to validate against (default: the system clock).
        #[arg(long, value_parser = parse_time)]
        now: Option<Timestamp>,
        /// How far in the past an id's time may be (e.g. 10m, 90s, 1h30m).
        #[arg(long, value_parser = parse_duration, default_value = "10m")]
        past: Duration,
        /// How far in the future an id's time may be.
        #[arg(long, value_parser = parse_duration, default_value = "10m")]
        future: Duration,
        /// Which layout is expected: v7 or short-prefix.
        #[arg(long, visible_alias = "kind", value_parser = parse_validated_layout, default_value = "v7")]
        layout: Layout,
        #[command(flatten)]
        short: ShortArgs,
        /// Ids to check; read from standard input when none are given.
        ids: Vec<String>,
    },
    /// Print migration SQL: column DDL, database-side generator and timestamp functions,
    /// data conversions.
    Sql {
        /// postgres, mysql (MySQL 8 and MariaDB), sqlite or sqlserver (SQL Server, batches
        /// separated by GO lines).
        #[arg(value_parser = parse_backend)]
        backend: Backend,
        #[command(flatten)]
        part: SqlPart,
        #[command(subcommand)]
        what: Option<SqlCommand>,
    },
    /// Audit a table's keys (layouts, whether ORDER BY key is creation order, index cost,
    /// referencing columns) and migrate them to sorted COMBs.
    #[cfg(feature = "doctor")]
    Doctor(doctor::DoctorArgs),
}

#[derive(Subcommand, Debug)]
enum SqlCommand {
    /// Partition DDL for a table keyed by COMB ids: one partition per interval (PostgreSQL,
    /// MySQL/MariaDB, SQL Server), or the statements that drop old partitions or add new ones.
    Partitions(PartitionArgs),
    /// MariaDB Spider: the head's DDL that shards a table across backend servers by its COMB
    /// key, by time (one partition per interval, the servers in turn) or by hash (--hash);
    /// the statements that add the next intervals or drop old ones.
    Shards(ShardArgs),
    /// SQL Server: the T-SQL that moves an existing uniqueidentifier key column, and every
    /// column referencing it, to combkey's stored form in one transaction (run once: a second
    /// run changes nothing).
    Convert(ConvertArgs),
}

/// `combkey sql sqlserver convert`.
#[derive(Args, Debug)]
struct ConvertArgs {
    /// The table (`dbo.orders`), as written into the T-SQL.
    #[arg(long)]
    table: String,
    /// The key column.
    #[arg(long, default_value = "id")]
    column: String,
    /// What the column holds: public (ids as uuid::Uuid, .NET or NEWID() wrote them; they
    /// keep their ids), rtcomb-sql (RT.Comb's Sql provider; to v7), newsequentialid (to v7,
    /// keeping a table of old and new keys).
    #[arg(long, value_parser = parse_existing)]
    from: combkey::sql::ExistingKeys,
    /// A referencing column and its foreign key: TABLE.COLUMN:CONSTRAINT (dbo.items.order_id:fk_items_orders);
    /// once per referencing column.
    #[arg(long = "ref", value_parser = parse_referencing)]
    references: Vec<combkey::sql::Referencing>,
}

fn parse_existing(s: &str) -> Result<combkey::sql::ExistingKeys, String> {
    s.parse().map_err(|e: combkey::Error| e.to_string())
}

fn parse_referencing(s: &str) -> Result<combkey::sql::Referencing, String> {
    let (column, fk) = s.rsplit_once(':').ok_or_else(|| format!("{s:?}: expected TABLE.COLUMN:CONSTRAINT"))?;
    let (table, column) = column.rsplit_once('.').ok_or_else(|| format!("{s:?}: expected TABLE.COLUMN:CONSTRAINT"))?;
    if table.is_empty() || column.is_empty() || fk.is_empty() {
        return Err(format!("{s:?}: expected TABLE.COLUMN:CONSTRAINT"));
    }
    Ok(combkey::sql::Referencing::new(table, column, fk))
}

/// `combkey sql mysql shards`.
#[derive(Args, Debug)]
struct ShardArgs {
    /// The table (a plain identifier); each backend holds a table of this name.
    #[arg(long)]
    table: String,
    /// The COMB key column (a plain identifier).
    #[arg(long, default_value = "id")]
    key: String,
    /// The head's server names for the backends (CREATE SERVER), comma separated.
    #[arg(long, value_delimiter = ',', required = true)]
    servers: Vec<String>,
    /// How long one shard's interval lasts: day, week, month or year.
    #[arg(long, value_parser = parse_interval, default_value = "month")]
    interval: Interval,
    /// Shard by a hash of the key (PARTITION BY KEY), one partition per server.
    #[arg(long, conflicts_with_all = ["from", "to", "drop_before", "add"])]
    hash: bool,
    /// The first interval: the one holding this date.
    #[arg(long, value_parser = parse_date)]
    from: Option<Timestamp>,
    /// Intervals up to the one before this date (later ids go to pmax).
    #[arg(long, value_parser = parse_date, requires = "from")]
    to: Option<Timestamp>,
    /// Retention: the statements that delete the rows of the intervals older than this date
    /// on their backends and drop their partitions on the head (of a table made --from DATE).
    #[arg(long, value_parser = parse_date, requires = "from", conflicts_with_all = ["to", "add"])]
    drop_before: Option<Timestamp>,
    /// Add this many intervals, split off pmax, from the interval holding --after.
    #[arg(long, requires = "after", conflicts_with_all = ["from", "to"])]
    add: Option<usize>,
    /// With --add: the date whose interval is the first new one.
    #[arg(long, value_parser = parse_date, requires = "add")]
    after: Option<Timestamp>,
}

/// The text `combkey sql mysql shards ...` prints.
fn shards(backend: Backend, args: &ShardArgs) -> Result<String, String> {
    if backend != Backend::MySql {
        return Err("shards are MariaDB Spider tables: use `combkey sql mysql shards`".into());
    }
    let servers: Vec<&str> = args.servers.iter().map(String::as_str).collect();
    let s = Sharding::new(&args.table, args.interval, &servers)
        .and_then(|s| s.with_key(&args.key))
        .map_err(|e| e.to_string())?;
    let text = match (args.hash, args.from, args.to, args.drop_before, args.add, args.after) {
        (true, None, None, None, None, _) => Ok(s.hash()),
        (false, Some(from), Some(to), None, None, _) => s.range(from, to),
        (false, Some(from), None, Some(before), None, _) => s.drop_before(from, before),
        (false, None, None, None, Some(count), Some(after)) => s.add(after, count),
        _ => return Err("give --hash, or --from and --to, or --from and --drop-before, or --add and --after".into()),
    };
    text.map_err(|e| e.to_string())
}

/// `combkey sql BACKEND partitions`.
#[derive(Args, Debug)]
struct PartitionArgs {
    /// The table (a plain identifier).
    #[arg(long)]
    table: String,
    /// The COMB key column (a plain identifier).
    #[arg(long, default_value = "id")]
    key: String,
    /// How long one partition lasts: day, week (ISO, from Monday), month or year.
    #[arg(long, value_parser = parse_interval)]
    interval: Interval,
    /// The first interval: the one holding this date (YYYY-MM-DD or RFC 3339, UTC).
    #[arg(long, value_parser = parse_date)]
    from: Option<Timestamp>,
    /// Partitions up to the interval before this date.
    #[arg(long, value_parser = parse_date, requires = "from")]
    to: Option<Timestamp>,
    /// Also a catch-all partition for ids outside the intervals (PostgreSQL DEFAULT, MySQL pmax).
    #[arg(long)]
    default: bool,
    /// Retention: drop the partitions older than this date (of a table made --from DATE).
    #[arg(long, value_parser = parse_date, requires = "from", conflicts_with_all = ["to", "add"])]
    drop_before: Option<Timestamp>,
    /// Add this many partitions, from the interval holding --after.
    #[arg(long, requires = "after", conflicts_with_all = ["from", "to"])]
    add: Option<usize>,
    /// With --add: the date whose interval is the first new partition.
    #[arg(long, value_parser = parse_date, requires = "add")]
    after: Option<Timestamp>,
}

fn parse_interval(s: &str) -> Result<Interval, String> {
    s.parse().map_err(|e: combkey::Error| e.to_string())
}

/// A date (`YYYY-MM-DD`, midnight UTC) or an RFC 3339 time.
fn parse_date(s: &str) -> Result<Timestamp, String> {
    if s.len() == 10
        && let Ok(t) = format!("{s}T00:00:00Z").parse()
    {
        return Ok(t);
    }
    s.parse().map_err(|_| format!("invalid date {s:?}: expected YYYY-MM-DD or an RFC 3339 time"))
}

/// The text `combkey sql BACKEND partitions ...` prints.
fn partitions(backend: Backend, args: &PartitionArgs) -> Result<String, String> {
    let p =
        Partitioning::new(&args.table, args.interval).and_then(|p| p.with_key(&args.key)).map_err(|e| e.to_string())?;
    let text = match (args.from, args.to, args.drop_before, args.add, args.after) {
        (Some(from), Some(to), None, None, _) => p.create(backend, from, to, args.default),
        (Some(from), None, Some(before), None, _) => p.drop_before(backend, from, before),
        (None, None, None, Some(count), Some(after)) => p.add(backend, after, count, args.default),
        _ => return Err("give --from and --to, or --from and --drop-before, or --add and --after".into()),
    };
    text.map_err(|e| e.to_string())
}

fn parse_backend(s: &str) -> Result<Backend, String> {
    s.parse().map_err(|e: combkey::Error| e.to_string())
}

/// Which part of the migration SQL to print.
#[derive(Args, Debug, Clone, Copy)]
#[group(multiple = false)]
struct SqlPart {
    /// Only the statements that install the database-side functions.
    #[arg(long)]
    up: bool,
    /// Only the statements that drop them.
    #[arg(long)]
    down: bool,
}

/// Settings of a short prefix COMB.
#[derive(Args, Debug, Clone, Copy)]
struct ShortArgs {
    /// Short prefix: how long one prefix value lasts.
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    interval: Duration,
    /// Short prefix: prefix width in bytes (1 to 4).
    #[arg(long, default_value_t = 2)]
    width: u8,
    /// Short prefix: label ids version 4 (uuid-creator, klokwrk) instead of 8.
    #[arg(long)]
    v4: bool,
}

impl ShortArgs {
    fn config(&self) -> Result<ShortPrefix, String> {
        let interval = u64::try_from(self.interval.as_millis()).map_err(|_| "interval too long".to_string())?;
        let sp = ShortPrefix::new(interval, self.width).map_err(|e| e.to_string())?;
        Ok(if self.v4 { sp.labelled_v4() } else { sp })
    }
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    s.parse().map_err(|e: combkey::Error| e.to_string())
}

fn parse_validated_layout(s: &str) -> Result<Layout, String> {
    match parse_layout(s)? {
        l @ (Layout::V7 | Layout::ShortPrefix) => Ok(l),
        l => Err(format!("validation supports v7 and short-prefix (with --v4 for uuid-creator's), not {l}")),
    }
}

fn parse_time(s: &str) -> Result<Timestamp, String> {
    s.parse().map_err(|e: combkey::Error| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli.command, &mut out).and_then(|ok| out.flush().map(|()| ok).map_err(io_error));
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        // The reader went away (`combkey new -n 1000000 | head -1`): the rest is not wanted,
        // which is no error (as `rg` and most Unix tools end quietly).
        Err(message) if message == STDOUT_CLOSED => ExitCode::SUCCESS,
        Err(message) => {
            let _ = out.flush();
            say!("{}", error_line(&message));
            ExitCode::from(2)
        }
    }
}

/// An error's line on standard error: `combkey: ` before it, unless it names the command
/// already (`combkey doctor --online: ...`), which would read `combkey: combkey doctor`.
fn error_line(message: &str) -> String {
    if message.starts_with("combkey ") || message.starts_with("combkey:") {
        message.to_string()
    } else {
        format!("combkey: {message}")
    }
}

/// What a write to standard output returns when its reader has gone away.
const STDOUT_CLOSED: &str = "standard output closed";

/// A write error as a message; [`STDOUT_CLOSED`] for a closed pipe.
fn io_error(e: io::Error) -> String {
    if e.kind() == io::ErrorKind::BrokenPipe { STDOUT_CLOSED.to_string() } else { e.to_string() }
}

/// The face key: `--key`, or the environment variable `COMBKEY_FACE_KEY` (which keeps it out of
/// the process list and the shell's history).
#[derive(Args, Debug)]
struct FaceKeyArg {
    /// The key: 32 hex digits, or uuidv47's `uuid47.key` form (16 hex digits, `:`, 16 hex
    /// digits). Default: the environment variable COMBKEY_FACE_KEY.
    #[arg(long = "key", value_name = "KEY", hide_default_value = true)]
    key: Option<String>,
}

impl FaceKeyArg {
    fn key(&self) -> Result<combkey::FaceKey, String> {
        let text = match &self.key {
            Some(k) => k.clone(),
            None => std::env::var("COMBKEY_FACE_KEY").map_err(|_| {
                "a face key is needed: --key KEY, or the environment variable COMBKEY_FACE_KEY".to_string()
            })?,
        };
        text.parse().map_err(|e: combkey::Error| format!("--key: {e}"))
    }
}

/// Ids from the arguments, or from standard input (one a line, blanks skipped) when none;
/// either way without the whitespace around them (a pasted id often brings some).
fn ids_or_stdin(ids: Vec<String>) -> Result<Vec<String>, String> {
    if !ids.is_empty() {
        return Ok(ids.iter().map(|id| id.trim().to_string()).collect());
    }
    let mut lines = Vec::new();
    for line in io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("reading standard input: {e}"))?;
        let t = line.trim();
        if !t.is_empty() {
            lines.push(t.to_string());
        }
    }
    Ok(lines)
}

/// Runs a command; `Ok(false)` when some id was bad (exit 1), `Err` for a usage error (exit 2).
fn run(command: Command, out: &mut impl Write) -> Result<bool, String> {
    match command {
        Command::New { count, layout, stored, short } => {
            match layout {
                Layout::V7 => {
                    let g = V7Generator::new();
                    let mut buf = [Comb::NIL; 256];
                    let mut left = count;
                    while left > 0 {
                        let n = left.min(buf.len());
                        g.fill(&mut buf[..n]);
                        for id in &buf[..n] {
                            writeln!(out, "{}", stored.format(*id)).map_err(io_error)?;
                        }
                        left -= n;
                    }
                }
                Layout::ShortPrefix => {
                    let g = ShortPrefixGenerator::new(short.config()?);
                    for _ in 0..count {
                        writeln!(out, "{}", stored.format(g.generate())).map_err(io_error)?;
                    }
                }
                other => {
                    for _ in 0..count {
                        let id = other.generate().map_err(|e| format!("{other}: {e}"))?;
                        writeln!(out, "{}", stored.format(id)).map_err(io_error)?;
                    }
                }
            }
            Ok(true)
        }
        Command::Mask { key, ids } => {
            let key = key.key()?;
            let mut all_ok = true;
            for text in ids_or_stdin(ids)? {
                match text.parse::<Comb>().and_then(|id| key.mask(id)) {
                    Ok(face) => writeln!(out, "{face}").map_err(io_error)?,
                    Err(e) => {
                        all_ok = false;
                        say!("combkey: {text}: {e}");
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Unmask { key, ids } => {
            let key = key.key()?;
            let mut all_ok = true;
            for text in ids_or_stdin(ids)? {
                match text.parse::<Comb>().and_then(|face| key.unmask(face.to_uuid())) {
                    Ok(id) => writeln!(out, "{id}").map_err(io_error)?,
                    Err(e) => {
                        all_ok = false;
                        say!("combkey: {text}: {e}");
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Convert { from, to, ids } => {
            let mut all_ok = true;
            for text in ids_or_stdin(ids)? {
                match Spec::convert(from, to, &text) {
                    Ok(converted) => writeln!(out, "{converted}").map_err(io_error)?,
                    Err(e) => {
                        all_ok = false;
                        say!("combkey: {text}: {e}");
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Inspect { json, as_layout, near, short, ids } => {
            let sp = short.config()?;
            let near = near.unwrap_or_else(Timestamp::now);
            let mut all_ok = true;
            for text in ids_or_stdin(ids)? {
                match text.parse::<Comb>().and_then(|id| describe(id, as_layout, &sp, near)) {
                    Ok(fields) => print_fields(out, &fields, json).map_err(io_error)?,
                    Err(e) => {
                        all_ok = false;
                        say!("combkey: {text}: {e}");
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Sql { backend, part, what: Some(SqlCommand::Partitions(args)) } => {
            if part.up || part.down {
                return Err("--up/--down do not go with partitions".into());
            }
            out.write_all(partitions(backend, &args)?.as_bytes()).map_err(io_error)?;
            Ok(true)
        }
        Command::Sql { backend, part, what: Some(SqlCommand::Convert(args)) } => {
            if backend != Backend::SqlServer || part.up || part.down {
                return Err("convert is `combkey sql sqlserver convert` (without --up/--down)".into());
            }
            let sql = combkey::sql::sqlserver_convert_table(&args.table, &args.column, args.from, &args.references);
            out.write_all(sql.as_bytes()).map_err(io_error)?;
            Ok(true)
        }
        Command::Sql { backend, part, what: Some(SqlCommand::Shards(args)) } => {
            if part.up || part.down {
                return Err("--up/--down do not go with shards".into());
            }
            out.write_all(shards(backend, &args)?.as_bytes()).map_err(io_error)?;
            Ok(true)
        }
        Command::Sql { backend, part, what: None } => {
            let text = if part.up {
                backend.install_functions().to_string()
            } else if part.down {
                backend.drop_functions().to_string()
            } else {
                backend.migration_text()
            };
            out.write_all(text.as_bytes()).map_err(io_error)?;
            Ok(true)
        }
        #[cfg(feature = "doctor")]
        Command::Doctor(args) => doctor::run(args, out),
        Command::Validate { now, past, future, layout, short, ids } => {
            let expected = match layout {
                Layout::ShortPrefix => Expected::ShortPrefix(short.config()?),
                _ => Expected::V7,
            };
            let validator = Validator::new(expected).past(past).future(future);
            let ids = ids_or_stdin(ids)?;
            if ids.is_empty() {
                return Err("no ids given to validate".into());
            }
            let mut all_ok = true;
            for text in ids {
                let verdict = text.parse::<Comb>().and_then(|id| match now {
                    Some(t) => validator.validate_at(&id, t),
                    None => validator.validate(&id),
                });
                match verdict {
                    Ok(()) => writeln!(out, "{text}: valid").map_err(io_error)?,
                    Err(e) => {
                        all_ok = false;
                        writeln!(out, "{text}: invalid: {e}").map_err(io_error)?;
                    }
                }
            }
            Ok(all_ok)
        }
    }
}

/// A value in `inspect`'s output.
enum Value {
    Str(String),
    /// Any integer the output holds: unsigned counters and signed times (before 1970 a time
    /// in Unix milliseconds is negative).
    Num(i128),
    Bool(bool),
    Null,
}

/// What `inspect` shows of an id, in order: `(key, value)`.
fn describe(
    id: Comb,
    as_layout: Option<Layout>,
    sp: &ShortPrefix,
    near: Timestamp,
) -> Result<Vec<(&'static str, Value)>, combkey::Error> {
    use Value::{Bool, Null, Num, Str};
    let layout = as_layout.or_else(|| Layout::detect(&id));
    let time = match layout {
        Some(k) => k.timestamp(&id)?,
        None => None,
    };
    let ms = |t: Option<Timestamp>| t.map_or(Null, |t| Num(t.unix_ms().into()));
    let mut f = vec![
        ("id", Str(id.to_string())),
        ("layout", Str(layout.map_or("uuid", Layout::name).to_string())),
        ("version", Num(id.version().into())),
        ("variant", Str(if id.is_rfc_variant() { "rfc9562" } else { "other" }.to_string())),
        ("unix_ms", ms(time)),
        ("time", time.map_or(Null, |t| Str(t.to_string()))),
    ];
    match layout {
        Some(Layout::V7) => f.push(("counter", Num(id.v7_counter().into()))),
        Some(k @ (Layout::ShortPrefix | Layout::UcShortPrefix | Layout::UcShortSuffix)) => {
            let (hub, cfg) = match k {
                Layout::ShortPrefix => (id, *sp),
                _ => (Layout::convert(&id, k, Layout::ShortPrefix)?, ShortPrefix::default()),
            };
            let r = cfg.interval_near(&hub, near);
            f.push(("prefix", Num(cfg.prefix_of(&hub).into())));
            f.push(("interval_start", Str(r.start.to_string())));
            f.push(("interval_end", Str(r.end.to_string())));
        }
        Some(k @ (Layout::V1 | Layout::V6 | Layout::LambertV13 | Layout::MySqlSwap | Layout::NewSequentialId)) => {
            let v1 = Layout::convert(&id, k, Layout::V1)?;
            let b = v1.as_bytes();
            f.push(("v1", Str(v1.to_string())));
            f.push(("gregorian_ticks", Num(k.gregorian_ticks(&id)?.into())));
            f.push(("clock_seq", Num((u16::from_be_bytes([b[8], b[9]]) & 0x3fff).into())));
            f.push(("node", Str(b[10..16].iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":"))));
        }
        Some(Layout::Locality) => {
            let l = LocalityFields::parse(&id)?;
            let m = l.mac_fragment;
            f.push(("pid", Num(l.pid.into())));
            // Where Groupon's library lost the counter's bits 24-27 (its second hex digit) no
            // one counter can be named: `counter` is null and `counter_hex` shows the digit as `?`.
            let hex = format!("{:08x}", l.counter);
            if !l.could_be_variable_mode() {
                // Only sequential mode (or another library) writes this first group.
                f.push(("counter", Null));
                f.push(("counter_hex", Null));
            } else if l.counter_lost_bits {
                f.push(("counter", Null));
                f.push(("counter_hex", Str(format!("{}?{}", &hex[..1], &hex[2..]))));
            } else {
                f.push(("counter", Num(l.counter.into())));
                f.push(("counter_hex", Str(hex)));
            }
            f.push(("counter_lost_bits", Bool(l.counter_lost_bits)));
            f.push(("counter_sequential", Num(l.counter_sequential.into())));
            f.push(("mac_fragment", Str(format!("__:__:_{:x}:{:02x}:{:02x}:{:02x}", m[2], m[3], m[4], m[5]))));
        }
        Some(
            k @ (Layout::EfCore
            | Layout::NewId
            | Layout::NewIdSequential
            | Layout::UuidNextSqlServer
            | Layout::MedoSqlServer),
        ) => {
            let d = DotNetFields::parse(&id, k)?;
            f.push(("dotnet_ticks", Num(d.ticks.into())));
            if k != Layout::EfCore {
                f.push(("sequence", Num(d.sequence.into())));
            }
            if matches!(k, Layout::NewId | Layout::NewIdSequential) {
                let w = d.worker.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":");
                f.push(("worker", Str(w)));
            }
        }
        _ => {}
    }
    // The stored forms of the public id this id stands for, as `convert --to sqlserver|mysql`
    // prints them: the id itself where it is one of combkey's own (or a plain UUID), the v7
    // id another system's layout converts to (what `doctor` makes of it), none where it has
    // no v7 form.
    let public = match layout {
        None | Some(Layout::V7 | Layout::ShortPrefix) => Some(id),
        Some(k) => KeyMigration::new(k, Layout::V7).and_then(|m| m.convert(&id)).ok(),
    };
    f.push(("sqlserver", public.map_or(Null, |p| Str(Backend::SqlServer.stored_text(p)))));
    f.push(("mysql", public.map_or(Null, |p| Str(Backend::MySql.stored_text(p)))));
    Ok(f)
}

fn print_fields(out: &mut impl Write, fields: &[(&'static str, Value)], json: bool) -> io::Result<()> {
    if json {
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::Str(s) => json_str(s),
                    Value::Num(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Null => "null".to_string(),
                };
                format!("{}:{v}", json_str(k))
            })
            .collect();
        writeln!(out, "{{{}}}", body.join(","))
    } else {
        for (k, v) in fields {
            match v {
                Value::Str(s) if *k == "id" => writeln!(out, "{s}")?,
                Value::Str(s) => writeln!(out, "  {:<19}{s}", format!("{k}:"))?,
                Value::Num(n) => writeln!(out, "  {:<19}{n}", format!("{k}:"))?,
                Value::Bool(b) => writeln!(out, "  {:<19}{}", format!("{k}:"), if *b { "yes" } else { "no" })?,
                Value::Null => {}
            }
        }
        Ok(())
    }
}
