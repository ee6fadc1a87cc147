//! `combkey doctor`: the command-line front of the `combkey-doctor` library. Audit an existing
//! table's keys (which layouts, whether the database's order is creation order, what the index
//! costs, who references the column) and migrate them to sorted COMBs.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use combkey_doctor::{Doctor, ErrorKind, Inherited, Options, Progress, StepKind, Triggers};

use crate::forms::parse_duration;

/// `combkey doctor` arguments.
#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {
    /// The database: postgres://..., mysql://... (MySQL/MariaDB) or sqlite:...
    #[arg(long)]
    url: String,
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
    /// e.g. 5s, 500ms.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
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
        Options {
            lock_timeout_ms: u64::try_from(self.lock_timeout.as_millis()).unwrap_or(u64::MAX),
            triggers: match self.triggers {
                TriggerChoice::Refuse => Triggers::Refuse,
                TriggerChoice::Fire => Triggers::Fire,
            },
            inherited: match self.inherited {
                InheritedChoice::Refuse => Inherited::Refuse,
                InheritedChoice::Only => Inherited::Only,
                InheritedChoice::Include => Inherited::Include,
            },
            convert_uncertain: self.convert_uncertain,
        }
    }
}

/// Progress on standard error: the steps, and the keys mapped in tenths.
struct Lines {
    started: Instant,
    last_tenth: usize,
}

impl Progress for Lines {
    fn step(&mut self, index: usize, of: usize, what: &str) {
        eprintln!("combkey doctor: step {index} of {of}: {what}");
    }

    fn keys(&mut self, done: usize, total: usize) {
        let tenth = done * 10 / total.max(1);
        if tenth != self.last_tenth || done == total {
            self.last_tenth = tenth;
            #[allow(clippy::cast_precision_loss)]
            let rate = done as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
            eprintln!("combkey doctor: {done} of {total} keys mapped ({rate:.0} a second)");
        }
    }
}

/// Runs `combkey doctor`: `Ok(true)` when all is well, `Ok(false)` when the table has values
/// it cannot read or the run failed (the reason on stderr; exit 1), `Err` for a usage error
/// (exit 2).
pub(crate) fn run(args: DoctorArgs, out: &mut impl Write) -> Result<bool, String> {
    if args.sample == Some(0) {
        return Err("--sample 0 reads nothing: give a number of keys".into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let result = runtime.block_on(doctor(&args, out));
    match result {
        Ok(ok) => Ok(ok),
        Err(e) if e.kind() == ErrorKind::Usage => Err(e.to_string()),
        Err(e) => {
            let _ = out.flush();
            eprintln!("combkey: {e}");
            Ok(false)
        }
    }
}

async fn doctor(args: &DoctorArgs, out: &mut impl Write) -> Result<bool, combkey_doctor::Error> {
    let options = args.options();
    let mut doctor = Doctor::connect(&args.url).await?;
    if !(args.migration_sql || args.apply) {
        let report = doctor.audit(&args.table, &args.column, args.sample, options).await?;
        let text = if args.json { report.json() } else { report.text() };
        writeln!(out, "{}", text.trim_end())?;
        return Ok(report.unreadable.0 == 0);
    }
    let (plan, values) = doctor.plan(&args.table, &args.column, options).await?;
    let table = format!("{}.{}", combkey::backend::catalog::Name::from(&plan.table), plan.column);
    if plan.is_empty() {
        if args.json {
            let report = doctor.audit(&args.table, &args.column, None, options).await?;
            writeln!(out, "{}", report.json())?;
            return Ok(true);
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
    if plan.journaled() {
        header.push_str(
            "\n--   MySQL/MariaDB cannot roll DDL back: the journal table combkey_doctor_journal keeps the plan and the \
             step reached; after a crash, run the same command again to finish. Other sessions' writes to these tables \
             are refused while the foreign keys are dropped.",
        );
    } else {
        header.push_str("\n--   one transaction: it commits whole, or nothing changes");
    }
    for s in &plan.steps {
        if let Some(d) = &s.drops {
            header.push_str(&format!("\n--   drops {} {} (re-created from: {})", d.kind, d.name, d.definition));
        }
    }
    if plan.steps.iter().any(|s| s.kind == StepKind::Rewrite) && doctor.backend() == combkey::Backend::Postgres {
        header.push_str(
            "\n--   afterwards the primary key is as bloated as before; REINDEX INDEX CONCURRENTLY packs it as sorted keys fill it",
        );
    }
    if args.migration_sql {
        writeln!(out, "{header}")?;
        out.write_all(doctor.script(&plan, &values)?.as_bytes())?;
        return Ok(true);
    }
    if let Some(step) = doctor.resumes(&plan).await? {
        eprintln!("combkey doctor: resuming the journaled run of {table} at step {} of {}", step + 1, plan.steps.len());
    } else {
        eprintln!("{header}");
    }
    let mut progress = Lines { started: Instant::now(), last_tenth: usize::MAX };
    doctor.apply(&plan, &values, &mut progress).await?;
    let after = doctor.audit(&args.table, &args.column, None, options).await?;
    let text = if args.json { after.json() } else { after.text() };
    writeln!(out, "{}", text.trim_end())?;
    Ok(true)
}
