//! `combkey doctor`: audit an existing table's keys (which layouts, whether the database's
//! order is creation order, what the index costs, who references the column) and migrate
//! them to sorted COMBs.

mod audit;
mod db;
mod migrate;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

use clap::Args;
use combkey::{Backend, Timestamp};

use audit::Audit;
use db::{Db, IndexStats, Reference};

/// `combkey doctor` arguments.
#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {
    /// The database: postgres://..., mysql://... (MySQL/MariaDB) or sqlite:...
    #[arg(long)]
    url: String,
    /// The table whose keys to audit.
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
    /// Run the migration (in one transaction where the database allows DDL in one), then
    /// audit again.
    #[arg(long, conflicts_with = "sample")]
    apply: bool,
}

/// Everything the report says.
struct Report {
    backend: Backend,
    table: String,
    column: String,
    column_type: String,
    rows: i64,
    read: usize,
    sampled: bool,
    unreadable: usize,
    audit: Audit,
    index: Option<IndexStats>,
    references: Vec<Reference>,
    seconds: f64,
}

impl Report {
    /// Whether the column is the stored form combkey uses on this database.
    fn stored_form_ok(&self) -> bool {
        match self.backend {
            Backend::Postgres => self.column_type == "uuid",
            Backend::MySql => self.column_type == "binary(16)" || self.column_type == "uuid",
            _ => self.column_type == "blob" && self.audit.kinds.len() == self.read,
        }
    }

    /// The index's size with sorted keys, estimated, and how.
    fn sorted_index_estimate(&self) -> Option<(f64, &'static str)> {
        let index = self.index?;
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

    fn recommendation(&self, plan: Option<&migrate::Plan>) -> String {
        let convertible: usize = plan.map_or(0, |p| p.converted.values().sum());
        let random = self.audit.layouts.get("v4").copied().unwrap_or(0);
        let typed = if self.stored_form_ok() {
            String::new()
        } else {
            format!(
                " and change the column from {} to {}",
                self.column_type,
                match self.backend {
                    Backend::Postgres => "uuid",
                    Backend::MySql => "BINARY(16)",
                    _ => "BLOB",
                }
            )
        };
        if convertible > 0 {
            // From a sample: the share found, applied to the table.
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
                .map(|p| p.converted.iter().map(|((f, t), n)| format!("{} {f} keys to {t}", scale(*n))).collect())
                .unwrap_or_default();
            let sampled = if self.sampled { " (an estimate from the sample)" } else { "" };
            format!(
                "Convert {}{sampled}{typed}: --migration-sql shows the SQL, --apply runs it. ORDER BY {} then follows \
                 creation time and new keys append at the index's right edge.",
                pairs.join(", "),
                self.column
            )
        } else if !typed.is_empty() {
            format!("Keys are fine as ids, but{}: --apply does it.", typed.trim_start_matches(" and"))
        } else if random == self.read && self.read > 0 {
            format!(
                "The keys are random v4 and carry no time, so none can be converted: keep them, and make new keys \
                 with combkey (v7). The new keys sort among themselves in creation order within one narrow range \
                 of the key space, so inserts stay local even beside the old keys; {} itself never sorts by time \
                 for the old rows.",
                self.column
            )
        } else if random > 0 {
            format!(
                "Nothing to convert: the time-carrying keys already sort; the {random} v4 keys carry no time and stay. \
                 Keep making new keys with combkey (v7)."
            )
        } else {
            "Nothing to do: the keys sort in creation order in the stored form combkey uses.".into()
        }
    }

    fn json(&self, plan: Option<&migrate::Plan>) -> String {
        let layouts: serde_json::Map<String, serde_json::Value> =
            self.audit.layouts.iter().map(|(k, v)| ((*k).to_string(), (*v).into())).collect();
        let index = self.index.map(|i| {
            serde_json::json!({
                "bytes": i.bytes,
                "leaf_density": i.leaf_density,
                "sorted_estimate_bytes": self.sorted_index_estimate().map(|(b, _)| b.round()),
            })
        });
        serde_json::json!({
            "backend": self.backend.name(),
            "table": self.table,
            "column": self.column,
            "column_type": self.column_type,
            "stored_form_ok": self.stored_form_ok(),
            "rows": self.rows,
            "read": self.read,
            "sampled": self.sampled,
            "unreadable": self.unreadable,
            "layouts": layouts,
            "evidence": self.audit.evidence,
            "time_order": self.audit.time_order,
            "index": index,
            "referenced_by": self.references.iter().map(|r| format!("{}.{}", r.table, r.column)).collect::<Vec<_>>(),
            "recommendation": self.recommendation(plan),
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
        })
        .to_string()
    }

    fn text(&self, plan: Option<&migrate::Plan>) -> String {
        let mut s = format!("combkey doctor: {}.{} on {}\n", self.table, self.column, self.backend.name());
        let form =
            if self.stored_form_ok() { "the stored form combkey uses" } else { "not the stored form combkey uses" };
        s.push_str(&format!("  column type     {} ({form})\n", self.column_type));
        let how = if self.sampled { "sampled evenly" } else { "all" };
        s.push_str(&format!("  rows            {} ({} read, {how}, in key order)\n", self.rows, self.read));
        if self.unreadable > 0 {
            s.push_str(&format!("  unreadable      {} values are no UUID at all\n", self.unreadable));
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
                self.column
            )),
            None => s.push_str("  time_order      none (the keys carry no time)\n"),
        }
        match (self.index, self.sorted_index_estimate()) {
            (Some(i), est) => {
                #[allow(clippy::cast_precision_loss)]
                let size = size(i.bytes as f64);
                let density = i.leaf_density.map(|d| format!(", leaf density {d:.1}%")).unwrap_or_default();
                let estimate = est
                    .map(|(b, how)| format!("; with sorted keys about {} (estimate: {how})", self::size(b)))
                    .unwrap_or_default();
                s.push_str(&format!("  primary key     {size}{density}{estimate}\n"));
            }
            (None, _) => s.push_str("  primary key     size not available on this database\n"),
        }
        let refs: Vec<String> = self.references.iter().map(|r| format!("{}.{}", r.table, r.column)).collect();
        s.push_str(&format!(
            "  referenced by   {}\n",
            if refs.is_empty() { "nothing".to_string() } else { refs.join(", ") }
        ));
        s.push_str(&format!("  recommendation  {}\n", self.recommendation(plan)));
        s.push_str(&format!("  (audit took {:.2} s)\n", self.seconds));
        s
    }
}

/// Bytes as KiB or MiB.
fn size(bytes: f64) -> String {
    if bytes < 1_048_576.0 { format!("{:.0} KiB", bytes / 1024.0) } else { format!("{:.1} MiB", bytes / 1_048_576.0) }
}

async fn audit_table(db: &mut Db, args: &DoctorArgs, sample: Option<usize>) -> Result<(Report, Vec<db::Key>), String> {
    let started = Instant::now();
    let column_type = db.column_type(&args.table, &args.column).await?;
    let rows = db.rows(&args.table, sample.is_some()).await?;
    let (keys, unreadable) = db.keys(&args.table, &args.column, sample.map(|n| (n, rows))).await?;
    let ids: Vec<combkey::Comb> = keys.iter().map(|k| k.id).collect();
    let audit = audit::audit(&ids, Timestamp::now());
    let index = db.index_stats(&args.table).await;
    let references = db.references(&args.table, &args.column).await?;
    let report = Report {
        backend: db.backend(),
        table: args.table.clone(),
        column: args.column.clone(),
        column_type,
        rows,
        read: keys.len(),
        sampled: sample.is_some(),
        unreadable,
        audit,
        index,
        references,
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok((report, keys))
}

/// Runs `combkey doctor`; `Ok(false)` when it ran but found values it cannot read.
pub(crate) fn run(args: DoctorArgs, out: &mut impl Write) -> Result<bool, String> {
    db::identifier("table", &args.table)?;
    db::identifier("column", &args.column)?;
    if args.sample == Some(0) {
        return Err("--sample 0 reads nothing: give a number of keys".into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    runtime.block_on(async {
        let mut db = Db::connect(&args.url).await?;
        let io = |e: std::io::Error| e.to_string();
        if !(args.migration_sql || args.apply) {
            let (report, keys) = audit_table(&mut db, &args, args.sample).await?;
            let kinds = report.audit.kinds.clone();
            let plan = migrate::plan(report.backend, &report.column_type, &keys, &kinds);
            let text = if args.json { report.json(Some(&plan)) } else { report.text(Some(&plan)) };
            writeln!(out, "{}", text.trim_end()).map_err(io)?;
            return Ok(report.unreadable == 0);
        }
        let (report, keys) = audit_table(&mut db, &args, None).await?;
        if report.unreadable > 0 {
            return Err(format!(
                "{} values of {}.{} are no UUID at all: fix or remove them first",
                report.unreadable, args.table, args.column
            ));
        }
        let plan = migrate::plan(report.backend, &report.column_type, &keys, &report.audit.kinds);
        let kept: BTreeMap<&str, String> =
            plan.kept.iter().map(|(k, (n, why))| (*k, format!("{n} {k} keys stay: {why}"))).collect();
        if plan.is_empty() {
            writeln!(out, "-- combkey doctor: nothing to do for {}.{}.", args.table, args.column).map_err(io)?;
            for line in kept.values() {
                writeln!(out, "-- {line}").map_err(io)?;
            }
            return Ok(true);
        }
        let stmts =
            migrate::script(report.backend, &args.table, &args.column, &report.column_type, &report.references, &plan);
        let mut header = format!("-- combkey doctor: migrate {}.{}", args.table, args.column);
        for ((from, to), n) in &plan.converted {
            header.push_str(&format!("\n--   {n} {from} keys become {to} with the same time"));
        }
        if let Some(r) = plan.retype {
            header.push_str(&format!("\n--   the column type changes ({r:?})"));
        }
        for line in kept.values() {
            header.push_str(&format!("\n--   {line}"));
        }
        if plan.refused > 0 {
            header.push_str(&format!("\n--   {} keys stay: not of their layout's lossless form", plan.refused));
        }
        if report.backend == Backend::Postgres {
            header.push_str(&format!(
                "\n--   afterwards, REINDEX TABLE {} packs the primary key as sorted keys fill it",
                args.table
            ));
        }
        if args.migration_sql {
            writeln!(out, "{header}").map_err(io)?;
            out.write_all(migrate::to_text(report.backend, &stmts).as_bytes()).map_err(io)?;
            return Ok(true);
        }
        eprintln!("{header}");
        migrate::apply(&mut db, &stmts).await?;
        let (after, _) = audit_table(&mut db, &args, None).await?;
        let text = if args.json { after.json(None) } else { after.text(None) };
        writeln!(out, "{}", text.trim_end()).map_err(io)?;
        Ok(true)
    })
}
