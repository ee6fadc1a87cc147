//! `combkey doctor`: the command-line front of the `combkey-doctor` library. Audit an existing
//! table's keys (which layouts, whether the database's order is creation order, what the index
//! costs, who references the column) and migrate them to sorted COMBs.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use combkey_doctor::{
    DatabaseUrl, Doctor, ErrorKind, Inherited, Method, Online, Options, Progress, RekeyInvalid, StepKind, Triggers,
};

use crate::forms::parse_duration;
use crate::login::Login;

/// `combkey doctor` arguments.
#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {
    /// The database: postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB (MySQL/MariaDB)
    /// or sqlite:PATH; left out, DATABASE_URL. Keep the password out of it (every user of the
    /// machine sees a command line): PGPASSWORD or ~/.pgpass, ~/.my.cnf or --defaults-file,
    /// or --ask-pass.
    #[arg(long)]
    url: Option<String>,
    /// Ask for the password on the terminal (not echoed) for a URL that has none: the URL and
    /// every --replica-url.
    #[arg(long)]
    ask_pass: bool,
    /// MySQL/MariaDB: read the login's user and password from this option file's [client]
    /// section instead of ~/.my.cnf's, for a URL that has no password.
    #[arg(long, value_name = "FILE")]
    defaults_file: Option<std::path::PathBuf>,
    /// How long making a connection may take (the URL's and every --replica-url's) before the
    /// run stops with a connection error: e.g. 30s (the default), 5s.
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    connect_timeout: Duration,
    /// The table whose keys to audit, as the database names it: `orders`, `shop.orders`,
    /// `'"Orders"'` (PostgreSQL folds unquoted names to lower case).
    #[arg(long)]
    table: String,
    /// The key column.
    #[arg(long, default_value = "id")]
    column: String,
    /// Read about this many keys, drawn evenly from the table, instead of all (the audit
    /// only; a migration reads every key).
    #[arg(long)]
    sample: Option<usize>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Print the SQL that migrates the keys (and the referencing columns), do not run it.
    #[arg(long, conflicts_with_all = ["apply", "sample"])]
    migration_sql: bool,
    /// Run the migration, then audit again. One transaction where the database allows it
    /// (done or nothing changed); a journaled run on MySQL/MariaDB when the column's type
    /// changes (run it again after a crash to finish).
    #[arg(long, conflicts_with = "sample")]
    apply: bool,
    /// How long any statement waits for a lock before the run gives up (changing nothing):
    /// e.g. 5s, 500ms; from 1 ms to 1 h (0, which PostgreSQL would take as "wait for ever", is
    /// refused).
    #[arg(long, value_parser = parse_lock_timeout, default_value = "5s")]
    lock_timeout: Duration,
    /// User triggers on UPDATE of the table or a referencing table: refuse (the default), or
    /// fire them for every changed row.
    #[arg(long, value_enum, default_value_t = TriggerChoice::Refuse)]
    triggers: TriggerChoice,
    /// PostgreSQL tables that inherit from the table (or partitions): refuse (the default),
    /// only (this table's own rows), include (theirs too).
    #[arg(long, value_enum, default_value_t = InheritedChoice::Refuse)]
    inherited: InheritedChoice,
    /// Also convert keys whose layout is uncertain (they look like COMBs, but random keys
    /// could be among them by chance).
    #[arg(long)]
    convert_uncertain: bool,
    /// The system that made the keys, where you know it: every key whose version nibble
    /// names no layout, with a plausible time (1995 to a day from now), is read as this
    /// layout and converted, with no clusters looked for. rtcomb-sql, rtcomb-postgres,
    /// rtcomb-legacy, uc-prefix, uc-suffix, newsequentialid, mysql-swap, efcore, newid,
    /// newid-sequential, uuidnext-sqlserver, medo-sqlserver.
    #[arg(long, value_parser = parse_assumed)]
    layout: Option<combkey::layouts::Layout>,
    /// What the keys become: v7 (the default: what combkey makes, so they sort with the
    /// application's next ids; every layout that carries a time converts), or v6 for a table
    /// whose writers make v6 (the v1 family only; it keeps every bit).
    #[arg(long, value_parser = parse_target, default_value = "v7")]
    to: combkey::layouts::Layout,
    /// The table that keeps each converted key's old and new value where the new keys cannot
    /// hold every bit of the old ones (the v1 family, NewId's, Groupon's): `name` or
    /// `schema.name`; default combkey_keymap_<table>. Given, it is kept for any conversion.
    #[arg(long)]
    key_map: Option<String>,
    /// Also make the key column's default combkey's generator (with --apply; the audit and
    /// --migration-sql show what it would do), so keys the
    /// database makes sort with the converted ones: PostgreSQL installs combkey_v7() and sets
    /// the DEFAULT; MySQL/MariaDB install it and a BEFORE INSERT trigger (a default may not call
    /// a function there) and drop the old default. Not SQLite (no functions).
    #[arg(long)]
    set_default: bool,
    /// Random v4 keys (which carry no time) become v7 keys made from this column's time, the
    /// row's creation time: `created_at`. The key map keeps every old key, where an old id
    /// resolves. Not with a column type change (change the type first).
    #[arg(long, value_name = "COLUMN")]
    rekey_from: Option<String>,
    /// With --rekey-from: rows whose time makes no v7 key (NULL, in the future, before 1970,
    /// not a time) refuse the run (the default), or keep their v4 keys.
    #[arg(long, value_enum, default_value_t = RekeyInvalidChoice::Refuse, requires = "rekey_from")]
    rekey_invalid: RekeyInvalidChoice,
    /// Text keys (CHAR(36), VARCHAR, text) stay text: the values become v7 ids as text
    /// (lowercase; 32 hex digits in a 32-character column) and the column keeps its type, for
    /// applications that bind keys as text (combkey's CombText types). Without it text keys
    /// become the stored form (uuid, BINARY(16), SQLite blobs).
    #[arg(long)]
    keep_type: bool,
    /// With --apply: convert in batches of short transactions while the application keeps
    /// reading and writing (PostgreSQL, MySQL/MariaDB; not a column type change). Resumes
    /// where a killed run stopped.
    #[arg(long, requires = "apply")]
    online: bool,
    /// With --online: how the keys change. copy-swap: the table and its referencing tables are
    /// copied with the converted keys (and the key column's new type) while triggers carry the
    /// application's changes over, then swapped in atomically, as pg_repack and
    /// pt-online-schema-change do (needs room for a second copy; the old tables are kept under
    /// new names). in-place: the keys change in batches of short transactions. auto (the
    /// default): copy-swap where the table allows it, else in-place, and it says why.
    #[arg(long, value_enum, default_value_t = MethodChoice::Auto, requires = "online")]
    method: MethodChoice,
    /// With --online: the application binds the key column's new type already (combkey's Comb
    /// types, not text), so an online run may change the column's type (text to uuid or
    /// BINARY(16)) at its swap. Without it such a run is refused: every write and lookup of an
    /// application that binds text would fail or match nothing from the swap on.
    #[arg(long, requires = "online")]
    app_ready_for_new_type: bool,
    /// With --online: drop the old tables after a copy and swap (kept by default, under the
    /// names the run gave them, until you drop them).
    #[arg(long, requires = "online")]
    drop_old: bool,
    /// With --online: how long a copy and swap's swap waits for sessions that hold its
    /// tables in an open transaction (e.g. 60s, 10m; default 5m). It names them as it waits
    /// and does not queue for their lock meanwhile, so the application's writes go on; past
    /// this the run stops with nothing swapped.
    #[arg(long, requires = "online", value_parser = parse_swap_wait, default_value = "5m")]
    swap_wait: Duration,
    /// With --online, PostgreSQL: once the swap has waited this long (e.g. 30s) for sessions
    /// that hold its tables in a long transaction, cancel their statements; once it has waited
    /// twice as long, end those sessions (pg_terminate_backend), naming each, as pg_repack's
    /// --wait-timeout does. Off by default: the swap waits up to --swap-wait and stops.
    #[arg(long, requires = "online", value_parser = parse_swap_wait)]
    kill_blockers_after: Option<Duration>,
    /// With --online: keys read per batch of the in-place method (1 to 1,000,000).
    #[arg(long, default_value_t = 1000, requires = "online", value_parser = parse_batch_size)]
    batch_size: usize,
    /// With --online: wait before a batch while this many sessions (or more) wait for a lock.
    #[arg(long, requires = "online")]
    pause_when_busy: Option<i64>,
    /// With --online: wait before a batch while a replica lags more than this, or while a
    /// replica's lag cannot be read (it fails closed and says why): the --replica-url servers,
    /// and on PostgreSQL also the primary's pg_stat_replication and its replication slots.
    #[arg(long, value_parser = parse_duration, requires = "online")]
    max_lag: Option<Duration>,
    /// With --max-lag: a replica to ask for its lag (a MariaDB/MySQL replica or a PostgreSQL
    /// standby; repeat for several), connected to once per run; a URL that is no replica is
    /// refused before anything changes.
    #[arg(long, requires = "max_lag")]
    replica_url: Vec<String>,
    /// With --online: pause this long after each batch that changed keys (e.g. 10ms).
    #[arg(long, value_parser = parse_duration, default_value = "0s", requires = "online")]
    sleep: Duration,
    /// After --apply: rebuild the primary key's index online (PostgreSQL REINDEX INDEX
    /// CONCURRENTLY, MySQL/MariaDB ALTER TABLE ... FORCE, ALGORITHM=INPLACE, LOCK=NONE) and
    /// report its size before and after. Alone: rebuild it now.
    #[arg(long, conflicts_with_all = ["migration_sql", "sample"])]
    rebuild_index: bool,
    /// Remove what a stopped --online copy-and-swap run on the table made (its copies, the
    /// triggers that fed them, its work tables) and forget the run; the table stays as it was.
    /// Refused once the run swapped the tables (run it again to finish it).
    #[arg(long, conflicts_with_all = ["apply", "migration_sql", "sample", "rebuild_index"])]
    abandon: bool,
    /// Progress on standard error: a bar (on a terminal), sparse lines, or none.
    #[arg(long, value_enum, default_value_t = ProgressChoice::Auto)]
    progress: ProgressChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ProgressChoice {
    /// A bar on a terminal, lines otherwise.
    Auto,
    Bar,
    Lines,
    None,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum MethodChoice {
    Auto,
    CopySwap,
    InPlace,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum RekeyInvalidChoice {
    Refuse,
    Keep,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TriggerChoice {
    Refuse,
    Fire,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum InheritedChoice {
    Refuse,
    Only,
    Include,
}

impl DoctorArgs {
    fn options(&self) -> Options {
        Options::default()
            .with_lock_timeout_ms(u64::try_from(self.lock_timeout.as_millis()).unwrap_or(u64::MAX))
            .with_triggers(match self.triggers {
                TriggerChoice::Refuse => Triggers::Refuse,
                TriggerChoice::Fire => Triggers::Fire,
            })
            .with_inherited(match self.inherited {
                InheritedChoice::Refuse => Inherited::Refuse,
                InheritedChoice::Only => Inherited::Only,
                InheritedChoice::Include => Inherited::Include,
            })
            .with_convert_uncertain(self.convert_uncertain)
            .with_layout(self.layout)
            .with_target(self.to)
            .with_key_map(self.key_map.clone())
            .with_set_default(self.set_default)
            .with_rekey_from(self.rekey_from.clone())
            .with_rekey_invalid(match self.rekey_invalid {
                RekeyInvalidChoice::Refuse => RekeyInvalid::Refuse,
                RekeyInvalidChoice::Keep => RekeyInvalid::Keep,
            })
            .with_keep_type(self.keep_type)
    }
}

/// Progress on standard error: sparse lines (a tenth of the work, or half a minute, apart), a
/// bar, or nothing.
struct Reporter {
    started: Instant,
    last_line: Option<Instant>,
    /// When the applied changes were said last.
    last_applied: Option<Instant>,
    last_tenth: usize,
    bar: Option<indicatif::ProgressBar>,
    lines: bool,
}

/// A terminal that is standard error whether or not it is a terminal (`--progress bar`
/// without one still draws, for logs and tests).
#[derive(Debug)]
struct Stderr;

impl indicatif::TermLike for Stderr {
    fn width(&self) -> u16 {
        100
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        writeln!(std::io::stderr(), "{s}")
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        write!(std::io::stderr(), "{s}")
    }
    fn clear_line(&self) -> std::io::Result<()> {
        write!(std::io::stderr(), "\r")
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl Reporter {
    fn new(choice: ProgressChoice) -> Self {
        use std::io::IsTerminal;
        let bar = match choice {
            ProgressChoice::Bar => Some(indicatif::ProgressDrawTarget::term_like_with_hz(Box::new(Stderr), 2)),
            ProgressChoice::Auto if std::io::stderr().is_terminal() => Some(indicatif::ProgressDrawTarget::stderr()),
            _ => None,
        }
        .map(|target| {
            let bar = indicatif::ProgressBar::with_draw_target(None, target);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:30} {human_pos}/{human_len} keys read, {msg} converted, {per_sec}, {eta} left",
            ) {
                bar.set_style(style);
            }
            bar
        });
        let lines = bar.is_none() && choice != ProgressChoice::None;
        Reporter { started: Instant::now(), last_line: None, last_applied: None, last_tenth: usize::MAX, bar, lines }
    }

    fn line(&mut self, done: usize, total: usize, what: &str, converted: Option<usize>) {
        let tenth = done * 10 / total.max(1);
        let due = self.last_line.is_none_or(|t| t.elapsed() >= Duration::from_secs(30));
        if tenth == self.last_tenth && !due && done < total {
            return;
        }
        self.last_tenth = tenth;
        self.last_line = Some(Instant::now());
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        #[allow(clippy::cast_precision_loss)]
        let rate = done as f64 / secs;
        #[allow(clippy::cast_precision_loss)]
        let left = if rate > 0.0 { (total.saturating_sub(done)) as f64 / rate } else { 0.0 };
        let converted = converted.map(|c| format!(", {c} converted")).unwrap_or_default();
        say!(
            "combkey doctor: {done} of about {total} keys {what}{converted}, {rate:.0} keys/s, about {left:.0} s left"
        );
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

impl Progress for Reporter {
    fn step(&mut self, index: usize, of: usize, what: &str) {
        if self.lines || self.bar.is_some() {
            say!("combkey doctor: step {index} of {of}: {what}");
        }
    }

    fn keys(&mut self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(u64::try_from(total).unwrap_or(u64::MAX));
            bar.set_position(u64::try_from(done).unwrap_or(u64::MAX));
        } else if self.lines {
            self.line(done, total, "mapped", None);
        }
    }

    fn batch(&mut self, scanned: usize, converted: usize, estimate: i64) {
        let total = usize::try_from(estimate).unwrap_or(0).max(scanned);
        if let Some(bar) = &self.bar {
            bar.set_length(u64::try_from(total).unwrap_or(u64::MAX));
            bar.set_position(u64::try_from(scanned).unwrap_or(u64::MAX));
            bar.set_message(converted.to_string());
        } else if self.lines {
            self.line(scanned, total, "read", Some(converted));
        }
    }

    fn swap_waits(&mut self, why: &str, so_far: Duration) {
        // Always said, whatever --progress, as a wait before a batch.
        let line = format!("combkey doctor: waiting to swap ({:.0} s so far): {why}", so_far.as_secs_f64());
        match &self.bar {
            Some(bar) => bar.println(line),
            None => say!("{line}"),
        }
    }

    fn applied(&mut self, applied: usize, left: i64) {
        // Said at most every 5 s (a round takes a fraction of a second), whatever --progress
        // but none: a step that goes on while the application writes must say how far it is.
        if self.bar.is_none() && !self.lines {
            return;
        }
        if self.last_applied.is_some_and(|t| t.elapsed() < Duration::from_secs(5)) {
            return;
        }
        self.last_applied = Some(Instant::now());
        let line = format!(
            "combkey doctor: {applied} changes made meanwhile applied, {left} in the logs still (the swap comes once \
             a few thousand are left; the application writing faster than they are applied keeps it waiting)"
        );
        match &self.bar {
            Some(bar) => bar.println(line),
            None => say!("{line}"),
        }
    }

    fn lock_waits(&mut self, why: &str, so_far: Duration) {
        // Always said, whatever --progress, as a wait before a batch.
        let line = format!("combkey doctor: waiting for a lock ({:.0} s so far): {why}", so_far.as_secs_f64());
        match &self.bar {
            Some(bar) => bar.println(line),
            None => say!("{line}"),
        }
    }

    fn waiting(&mut self, why: &str, so_far: Duration) {
        // Always said, whatever --progress: a run that waits must say why.
        let line =
            format!("combkey doctor: waiting before the next batch ({:.0} s so far): {why}", so_far.as_secs_f64());
        match &self.bar {
            Some(bar) => bar.println(line),
            None => say!("{line}"),
        }
    }
}

/// Runs `combkey doctor`: `Ok(true)` when all is well, `Ok(false)` when the table has values
/// it cannot read or the run failed (the reason on stderr; exit 1), `Err` for a usage error
/// (exit 2).
pub(crate) fn run(mut args: DoctorArgs, out: &mut impl Write) -> Result<bool, String> {
    if args.sample == Some(0) {
        return Err("--sample 0 reads nothing: give a number of keys".into());
    }
    let url = match logins(&mut args) {
        Ok(url) => url,
        Err(message) => {
            if args.json {
                let failed = serde_json::json!({ "error": "usage", "message": message });
                writeln!(out, "{failed}").map_err(crate::io_error)?;
            }
            return Err(message);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let result = runtime.block_on(doctor(&args, &url, out));
    // --json: a run that stops says so on standard output too, as one JSON object, so a
    // script reading it finds why (standard error says it as text).
    if let (true, Err(Failure::Doctor(e))) = (args.json, &result)
        && e.kind() != ErrorKind::Output
    {
        let failed = serde_json::json!({ "error": error_kind(e.kind()), "message": e.to_string() });
        writeln!(out, "{failed}").map_err(crate::io_error)?;
    }
    match result {
        Ok(ok) => Ok(ok),
        Err(Failure::Output(e)) => Err(crate::io_error(e)),
        Err(Failure::Doctor(e)) if e.kind() == ErrorKind::Output => {
            Err(crate::io_error(std::io::Error::new(e.io_kind().unwrap_or(std::io::ErrorKind::Other), e.to_string())))
        }
        Err(Failure::Doctor(e)) if e.kind() == ErrorKind::Usage => Err(e.to_string()),
        Err(Failure::Doctor(e)) => {
            let _ = out.flush();
            say!("{}", crate::error_line(&e.to_string()));
            Ok(false)
        }
    }
}

/// The name `--json` gives an error's kind.
fn error_kind(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Usage => "usage",
        ErrorKind::Connection => "connection",
        ErrorKind::Refused => "refused",
        ErrorKind::LockTimeout => "lock_timeout",
        ErrorKind::Conflict => "conflict",
        ErrorKind::Database => "database",
        ErrorKind::Verification => "verification",
        ErrorKind::Output => "output",
        ErrorKind::AfterCommit => "after_commit",
        ErrorKind::Incomplete => "incomplete",
        _ => "other",
    }
}

/// Why `doctor` stopped: the doctor's error, or writing its output failed.
enum Failure {
    Doctor(combkey_doctor::Error),
    Output(std::io::Error),
}

impl From<combkey_doctor::Error> for Failure {
    fn from(e: combkey_doctor::Error) -> Self {
        Failure::Doctor(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Output(e)
    }
}

/// The URL to connect to and the replicas', each read strictly and given its password where
/// it has none ([`Login`]); the replicas' URLs replace `args.replica_url`'s.
fn logins(args: &mut DoctorArgs) -> Result<DatabaseUrl, String> {
    let mut login = Login::new(args.ask_pass, args.defaults_file.clone());
    let url = login.database_url(args.url.as_deref())?.with_connect_timeout(args.connect_timeout);
    let mut replicas = Vec::new();
    for replica in &args.replica_url {
        replicas.push(login.url(replica)?.expose_secret().to_string());
    }
    args.replica_url = replicas;
    Ok(url)
}

async fn doctor(args: &DoctorArgs, url: &DatabaseUrl, out: &mut impl Write) -> Result<bool, Failure> {
    let options = args.options();
    let mut doctor = Doctor::connect_to(url).await?;
    if args.abandon {
        let gone = doctor.abandon(&args.table, &args.column).await?;
        writeln!(
            out,
            "{}",
            if gone {
                format!(
                    "combkey doctor: the stopped copy-and-swap run on {} is abandoned: what it made is gone",
                    args.table
                )
            } else {
                format!("combkey doctor: no stopped copy-and-swap run on {}: nothing to abandon", args.table)
            }
        )?;
        return Ok(true);
    }
    if args.rebuild_index && !args.apply {
        let (before, after) = doctor.rebuild_index(&args.table).await?;
        writeln!(out, "{}", rebuilt_text(before, after))?;
        return Ok(true);
    }
    if !(args.migration_sql || args.apply) {
        let report = doctor.audit(&args.table, &args.column, args.sample, options).await?;
        let text = if args.json { report.json() } else { report.text() };
        writeln!(out, "{}", text.trim_end())?;
        return Ok(report.unreadable().0 == 0);
    }
    let plan = doctor.plan(&args.table, &args.column, options.clone()).await?;
    let table = format!("{}.{}", plan.table, plan.column);
    if plan.is_empty() {
        let rebuilt = if args.rebuild_index { Some(doctor.rebuild_index(&args.table).await?) } else { None };
        if args.json {
            let report = doctor.audit(&args.table, &args.column, None, options).await?;
            writeln!(out, "{}", with_rebuilt(&report.json(), rebuilt))?;
            return Ok(true);
        }
        if let Some((before, after)) = rebuilt {
            writeln!(out, "-- combkey doctor: {}", rebuilt_text(before, after))?;
        }
        writeln!(out, "-- combkey doctor: nothing to do for {table}.")?;
        for (layout, (n, why)) in &plan.kept {
            writeln!(out, "-- {n} {layout} keys stay: {why}")?;
        }
        return Ok(true);
    }
    let mut header = format!("-- combkey doctor: migrate {table}");
    for (conversion, n) in &plan.converted {
        header.push_str(&format!("\n--   {n} keys: {conversion}"));
    }
    if plan.retypes() {
        header.push_str(&format!("\n--   the column type changes from {} to {}", plan.column_type, plan.final_type));
    }
    for (layout, (n, why)) in &plan.kept {
        header.push_str(&format!("\n--   {n} {layout} keys stay: {why}"));
    }
    // A journaled offline run of this table that stopped (MySQL/MariaDB): it is finished as it
    // began, whatever this command asks (its guards refuse the application's writes until then).
    let resumed = doctor.resumes(&plan).await?;
    let online = args.online && resumed.is_none();
    if online {
        let (method, _) = doctor.online_method(&plan, &online_choice(args)).await?;
        let asked = match args.method {
            MethodChoice::Auto => None,
            MethodChoice::CopySwap => Some(Method::CopySwap),
            MethodChoice::InPlace => Some(Method::InPlace),
        };
        if asked.is_some_and(|m| m != method) {
            header.push_str(&format!(
                "\n--   a stopped run of this table is in the journal: it goes on by {}, the way it began (not by \
                 --method {}); run --abandon first to start over another way, where that is still possible",
                method.name(),
                asked.map(|m| m.name()).unwrap_or_default()
            ));
        }
        match doctor.online_method(&plan, &online_choice(args)).await? {
            (Method::CopySwap, _) => header.push_str(
                "\n--   --online, copy and swap: the tables are copied with the converted keys while triggers carry \
                 the application's changes over, then swapped in at once (a lock held for milliseconds); the old \
                 tables are kept under new names. A stopped run goes on from its journal",
            ),
            (_, because) => {
                header.push_str(
                    "\n--   --online, in place: in batches, each one short transaction that commits whole (parents and \
                     their children together); the journal keeps the position, so a stopped run goes on from it",
                );
                if let Some(why) = because {
                    header.push_str(&format!("\n--   not by copy and swap: {why}"));
                }
            }
        }
    } else if plan.journaled() {
        header.push_str(
            "\n--   MySQL/MariaDB cannot roll DDL back: the journal table combkey_doctor_journal keeps the plan and the \
             step reached; after a crash, run the same command again to finish. Other sessions' writes to these tables \
             are refused (error 1644, \"retry after it ends\") from the step that puts the guards up until the foreign \
             keys are back, where on PostgreSQL they would wait: each ALTER TABLE commits on its own, so no lock \
             outlives it for the writes to wait on, and a write let in between could reference a key that no longer \
             is. It lasts as long as the ALTER TABLEs that rebuild the tables (the audit's offline estimate): run it \
             while the application is stopped, or with --online.",
        );
    } else if plan.steps.iter().any(|s| s.kind == combkey_doctor::StepKind::Begin) {
        header.push_str("\n--   one transaction: it commits whole, or nothing changes");
    }
    // PostgreSQL's index for an unindexed referencing column: built and dropped outside the
    // transaction, which a script run as one transaction (`psql -1`) cannot do.
    if plan.steps.iter().any(|s| s.kind == combkey_doctor::StepKind::TemporaryIndex && !s.in_transaction) {
        header.push_str(
            "\n--   CREATE INDEX CONCURRENTLY and DROP INDEX CONCURRENTLY run outside the transaction: run this \
             script statement by statement, stopping at the first error (psql -v ON_ERROR_STOP=1 -f), never as \
             one transaction (psql -1)",
        );
    }
    for note in &plan.notes {
        header.push_str(&format!("\n--   note: {note}"));
    }
    for s in &plan.steps {
        if let Some(d) = &s.drops {
            header.push_str(&format!("\n--   drops {} {} (re-created from: {})", d.kind, d.name, d.definition));
        }
    }
    if plan.steps.iter().any(|s| s.kind == StepKind::Rewrite)
        && doctor.backend() == combkey::Backend::Postgres
        && !(online && doctor.online_method(&plan, &online_choice(args)).await?.0 == Method::CopySwap)
    {
        header.push_str(
            "\n--   afterwards the primary key is as bloated as before; REINDEX INDEX CONCURRENTLY packs it as sorted keys fill it",
        );
    }
    if args.migration_sql {
        writeln!(out, "{header}")?;
        doctor.script(&plan, out).await?;
        return Ok(true);
    }
    if let Some(step) = resumed {
        say!("combkey doctor: resuming the journaled run of {table} at step {} of {}", step + 1, plan.steps.len());
        if args.online {
            say!(
                "combkey doctor: that run is offline (journaled) and is finished as it began: --online is for a new \
                 run (other sessions' writes to these tables are refused until this one ends)"
            );
        }
    } else {
        say!("{header}");
    }
    let mut progress = Reporter::new(args.progress);
    // What the online run did, for --json.
    let mut online_run = None;
    // A check after the offline run's commit that failed, for --json.
    let mut check_error = None;
    if online && args.max_lag.is_some() && args.replica_url.is_empty() && doctor.backend() == combkey::Backend::Postgres
    {
        // What --max-lag alone can see, said before the run (MySQL/MariaDB refuse it: their
        // primary knows no replica's lag).
        say!(
            "combkey doctor: --max-lag without --replica-url reads the lag this primary sees (pg_stat_replication, \
             its replication slots): a standby of a standby (cascading replication) is not among them, so its lag \
             does not hold the run; give each such standby as --replica-url"
        );
    }
    if online {
        let online = online_choice(args);
        let done = doctor.apply_online(&plan, &online, &mut progress).await;
        progress.finish();
        let done = done?;
        if done.resumed {
            say!("combkey doctor: went on from where an earlier run of {table} stopped (its journal)");
        }
        if let Some(why) = &done.in_place_because {
            say!("combkey doctor: changed the keys in place, not by copy and swap: {why}");
        }
        if done.method == "copy-swap" {
            say!(
                "combkey doctor: {} ({}), applied the changes made meanwhile in {}, swapped ({} retried, {:.1} s \
                 paused), {:.1} s{}",
                if done.resumed && done.scanned == 0 {
                    "the earlier run had copied the rows".to_string()
                } else {
                    format!(
                        "copied {} in {}",
                        counted(done.scanned, "row", "rows"),
                        counted(done.batches, "chunk", "chunks")
                    )
                },
                counted(done.converted, "key converted", "keys converted"),
                counted(done.passes, "round", "rounds"),
                counted(done.retries, "swap attempt", "swap attempts"),
                done.paused.as_secs_f64(),
                done.seconds,
                if done.kept.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; the old tables are kept as {} (drop them when you no longer need them)",
                        done.kept.join(", ")
                    )
                }
            );
            if !done.verified.is_empty() {
                let each: Vec<String> = done.verified.iter().map(|(t, n)| format!("{t} {n}")).collect();
                let again: Vec<String> = done.rechecked.iter().map(|(t, n)| format!("{t} {n}")).collect();
                say!(
                    "combkey doctor: verified before the swap, rows compared with their copies: {}{}",
                    each.join(", "),
                    if again.is_empty() {
                        String::new()
                    } else {
                        format!("; rows changed meanwhile, compared again once applied: {}", again.join(", "))
                    }
                );
            }
        } else {
            say!(
                "combkey doctor: {} keys converted in {} batches over {} passes ({} keys read, {} batches retried, {:.1} s paused), {:.1} s",
                done.converted,
                done.batches,
                done.passes,
                done.scanned,
                done.retries,
                done.paused.as_secs_f64(),
                done.seconds
            );
        }
        online_run = Some(serde_json::json!({
            "method": done.method,
            "in_place_because": done.in_place_because,
            "kept": done.kept,
            "verified_rows": done.verified.iter().map(|(t, n)| (t.clone(), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
            "rechecked_rows": done.rechecked.iter().map(|(t, n)| (t.clone(), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
            "converted": done.converted,
            "batches": done.batches,
            "passes": done.passes,
            "keys_read": done.scanned,
            "batches_retried": done.retries,
            "paused_seconds": done.paused.as_secs_f64(),
            "seconds": done.seconds,
            "resumed": done.resumed,
        }));
    } else {
        let done = doctor.apply(&plan, &mut progress).await;
        progress.finish();
        match done {
            // Committed: the keys are converted, and a check after the commit failed (a
            // definition another session changed meanwhile): said, and the run goes on.
            Err(e) if e.kind() == ErrorKind::AfterCommit => {
                say!("{e}");
                check_error = Some(serde_json::Value::String(e.to_string()));
            }
            other => other?,
        }
    }
    // From here on the keys are converted: a failure says so, and the audit's failure does not
    // make a finished conversion look failed.
    let rebuilt = if args.rebuild_index {
        match doctor.rebuild_index(&args.table).await {
            Ok(r) => Some(r),
            Err(e) => {
                say!("combkey doctor: the keys of {table} are converted; the rebuild of its primary key failed:");
                return Err(e.into());
            }
        }
    } else {
        None
    };
    // For tests: the audit after the run fails (COMBKEY_DOCTOR_FAIL_AUDIT_AFTER_APPLY=1), as a
    // role's statement timeout once made it.
    #[cfg(feature = "failpoints")]
    let failed_audit = std::env::var_os("COMBKEY_DOCTOR_FAIL_AUDIT_AFTER_APPLY")
        .map(|_| "stopped by COMBKEY_DOCTOR_FAIL_AUDIT_AFTER_APPLY".to_string());
    #[cfg(not(feature = "failpoints"))]
    let failed_audit: Option<String> = None;
    let audited = match failed_audit {
        Some(e) => Err(e),
        None => doctor.audit(&args.table, &args.column, None, options).await.map_err(|e| e.to_string()),
    };
    let after = match audited {
        Ok(after) => after,
        Err(e) => {
            say!(
                "combkey doctor: the keys of {table} are converted (the run finished); the audit after it failed: {e}"
            );
            if args.json {
                let done = serde_json::json!({ "applied": true, "audit_error": e });
                writeln!(out, "{}", with_extra(&done.to_string(), "online", online_run))?;
            }
            return Ok(true);
        }
    };
    if args.json {
        let report = with_extra(&with_rebuilt(&after.json(), rebuilt), "online", online_run);
        writeln!(out, "{}", with_extra(&report, "check_error", check_error))?;
    } else {
        writeln!(out, "{}", after.text().trim_end())?;
        if let Some((before, after_size)) = rebuilt {
            writeln!(out, "  {}", rebuilt_text(before, after_size))?;
        }
    }
    Ok(true)
}

/// The online run's settings from the arguments.
fn online_choice(args: &DoctorArgs) -> Online {
    Online::default()
        .with_batch_size(args.batch_size)
        .with_pause_when_busy(args.pause_when_busy)
        .with_max_lag(args.max_lag)
        .with_replica_urls(args.replica_url.clone())
        .with_sleep(args.sleep)
        .with_method(match args.method {
            MethodChoice::Auto => Method::Auto,
            MethodChoice::CopySwap => Method::CopySwap,
            MethodChoice::InPlace => Method::InPlace,
        })
        .with_drop_old(args.drop_old)
        .with_swap_wait(args.swap_wait)
        .with_kill_blockers_after(args.kill_blockers_after)
        .with_app_ready_for_new_type(args.app_ready_for_new_type)
}

fn parse_lock_timeout(s: &str) -> Result<Duration, String> {
    let d = if s.trim() == "0" { Duration::ZERO } else { parse_duration(s)? };
    if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
        return Err(format!(
            "{s}: a lock timeout from 1ms to 1h (0 would let PostgreSQL wait for a lock for ever, and a longer wait \
             would hold up every writer queued behind the tool)"
        ));
    }
    Ok(d)
}

fn parse_swap_wait(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > Duration::from_secs(24 * 3600) {
        return Err(format!("{s}: a swap wait of at most 24h"));
    }
    Ok(d)
}

fn parse_assumed(s: &str) -> Result<combkey::layouts::Layout, String> {
    let names = || combkey_doctor::ASSUMABLE.map(|l| l.name()).join(", ");
    let l: combkey::layouts::Layout = s.parse().map_err(|e| format!("{e}; --layout takes {}", names()))?;
    if combkey_doctor::ASSUMABLE.contains(&l) {
        Ok(l)
    } else {
        Err(format!("{l} keys say what they are (their version nibble); --layout takes {}", names()))
    }
}

fn parse_target(s: &str) -> Result<combkey::layouts::Layout, String> {
    use combkey::layouts::Layout;
    match s.parse::<Layout>() {
        Ok(l @ (Layout::V7 | Layout::V6)) => Ok(l),
        _ => Err(format!(
            "--to takes v7 (what combkey makes; the default) or v6 (a table whose writers make v6), not {s:?}"
        )),
    }
}

fn parse_batch_size(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n @ 1..=1_000_000) => Ok(n),
        Ok(n) => Err(format!("{n} keys per batch: give 1 to 1000000")),
        Err(e) => Err(format!("{s:?} is no number of keys: {e}")),
    }
}

fn rebuilt_text(before: Option<i64>, after: Option<i64>) -> String {
    #[allow(clippy::cast_precision_loss)]
    let mib =
        |b: Option<i64>| b.map_or_else(|| "size unknown".to_string(), |b| format!("{:.1} MiB", b as f64 / 1_048_576.0));
    format!("primary key rebuilt: {} before, {} after", mib(before), mib(after))
}

/// The report's JSON with `value` under `key` (nothing added for `None`).
fn with_extra(report: &str, key: &str, value: Option<serde_json::Value>) -> String {
    let Some(value) = value else { return report.to_string() };
    let mut json: serde_json::Value = serde_json::from_str(report).unwrap_or_default();
    if let Some(obj) = json.as_object_mut() {
        obj.insert(key.into(), value);
    }
    json.to_string()
}

/// The report's JSON with the rebuild's sizes in `rebuilt_index`.
fn with_rebuilt(report: &str, rebuilt: Option<(Option<i64>, Option<i64>)>) -> String {
    let value = rebuilt.map(|(before, after)| serde_json::json!({ "bytes_before": before, "bytes_after": after }));
    with_extra(report, "rebuilt_index", value)
}

/// `n` and what it counts, `one` where `n` is 1, `many` otherwise (`1 round`, `2 rounds`).
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn counts_take_the_plural_where_they_are_not_one() {
        assert_eq!(counted(1, "round", "rounds"), "1 round");
        assert_eq!(counted(0, "round", "rounds"), "0 rounds");
        assert_eq!(counted(3, "swap attempt", "swap attempts"), "3 swap attempts");
    }
}
