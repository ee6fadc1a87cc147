//! The `combid` command: make, convert, inspect and validate COMB ids.
//!
//! ```text
//! combid new [-n N] [--kind v7|short-prefix] [--storage canonical|sqlserver|mysql]
//! combid convert --from FORM --to FORM [ID...]        (ids from stdin when none given)
//! combid inspect [--json] [--near RFC3339] ID...
//! combid validate [--now RFC3339] [--past DUR] [--future DUR] [--kind KIND] ID...
//! ```
//!
//! Exit status: 0 on success; 1 when an id is malformed or invalid; 2 for a usage error.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use combid::{Comb, Expected, ShortPrefix, ShortPrefixGenerator, Timestamp, V7Generator, Validator};

mod forms;

use forms::{Form, json_str, parse_duration};

/// Make, convert, inspect and validate time-ordered UUIDs (COMBs).
#[derive(Parser, Debug)]
#[command(name = "combid", version, about, long_about = None)]
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
        count: u64,
        /// Which kind of id.
        #[arg(long, value_enum, default_value_t = Kind::V7)]
        kind: Kind,
        /// Print the public id or the form a database shows for the stored value.
        #[arg(long, value_enum, default_value_t = Form::Canonical)]
        storage: Form,
        #[command(flatten)]
        short: ShortArgs,
    },
    /// Convert ids between the public form and the stored forms.
    Convert {
        /// The form the ids are given in.
        #[arg(long, value_enum)]
        from: Form,
        /// The form to print.
        #[arg(long, value_enum)]
        to: Form,
        /// Ids to convert; read from standard input, one a line, when none are given.
        ids: Vec<String>,
    },
    /// Show what an id is: kind, version, variant and the time it carries.
    Inspect {
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
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
        /// Which kind of id is expected.
        #[arg(long, value_enum, default_value_t = Kind::V7)]
        kind: Kind,
        #[command(flatten)]
        short: ShortArgs,
        /// Ids to check; read from standard input when none are given.
        ids: Vec<String>,
    },
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

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Prefix COMB, UUIDv7 (the default).
    V7,
    /// Short prefix COMB: (unix_ms / interval) mod 2^(8*width) first, the rest random.
    ShortPrefix,
}

fn parse_time(s: &str) -> Result<Timestamp, String> {
    s.parse().map_err(|e: combid::Error| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli.command, &mut out).and_then(|ok| out.flush().map(|()| ok).map_err(|e| e.to_string()));
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            let _ = out.flush();
            eprintln!("combid: {message}");
            ExitCode::from(2)
        }
    }
}

/// Ids from the arguments, or from standard input (one a line, blanks skipped) when none.
fn ids_or_stdin(ids: Vec<String>) -> Result<Vec<String>, String> {
    if !ids.is_empty() {
        return Ok(ids);
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
    let io_err = |e: io::Error| e.to_string();
    match command {
        Command::New { count, kind, storage, short } => {
            match kind {
                Kind::V7 => {
                    let g = V7Generator::new();
                    let mut buf = [Comb::NIL; 256];
                    let mut left = count;
                    while left > 0 {
                        // OK because the chunk is at most 256.
                        let n = usize::try_from(left.min(256)).unwrap_or(256);
                        g.fill(&mut buf[..n]);
                        for id in &buf[..n] {
                            writeln!(out, "{}", storage.format(*id)).map_err(io_err)?;
                        }
                        left -= n as u64;
                    }
                }
                Kind::ShortPrefix => {
                    let g = ShortPrefixGenerator::new(short.config()?);
                    for _ in 0..count {
                        writeln!(out, "{}", storage.format(g.generate())).map_err(io_err)?;
                    }
                }
            }
            Ok(true)
        }
        Command::Convert { from, to, ids } => {
            let mut all_ok = true;
            for text in ids_or_stdin(ids)? {
                match from.parse(&text) {
                    Ok(id) => writeln!(out, "{}", to.format(id)).map_err(io_err)?,
                    Err(e) => {
                        all_ok = false;
                        eprintln!("combid: {text}: {e}");
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Inspect { json, near, short, ids } => {
            let sp = short.config()?;
            let near = near.unwrap_or_else(Timestamp::now);
            let mut all_ok = true;
            for text in ids_or_stdin(ids)? {
                match text.parse::<Comb>() {
                    Ok(id) => inspect(out, id, json, &sp, near).map_err(io_err)?,
                    Err(e) => {
                        all_ok = false;
                        eprintln!("combid: {text}: {e}");
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Validate { now, past, future, kind, short, ids } => {
            let expected = match kind {
                Kind::V7 => Expected::V7,
                Kind::ShortPrefix => Expected::ShortPrefix(short.config()?),
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
                    Ok(()) => writeln!(out, "{text}: valid").map_err(io_err)?,
                    Err(e) => {
                        all_ok = false;
                        writeln!(out, "{text}: invalid: {e}").map_err(io_err)?;
                    }
                }
            }
            Ok(all_ok)
        }
    }
}

fn inspect(out: &mut impl Write, id: Comb, json: bool, sp: &ShortPrefix, near: Timestamp) -> io::Result<()> {
    let version = id.version();
    let variant = if id.is_rfc_variant() { "rfc9562" } else { "other" };
    let kind = match version {
        7 => "v7",
        v if v == sp.version() && id.is_rfc_variant() => "short-prefix",
        _ => "uuid",
    };
    let time = id.timestamp();
    let interval = (kind == "short-prefix").then(|| sp.interval_near(&id, near));
    if json {
        let opt_ms = |t: Option<Timestamp>| t.map_or("null".to_string(), |t| t.unix_ms().to_string());
        let opt_time = |t: Option<Timestamp>| t.map_or("null".to_string(), |t| json_str(&t.to_string()));
        write!(
            out,
            "{{\"id\":{},\"kind\":{},\"version\":{},\"variant\":{},\"unix_ms\":{},\"time\":{},\"sqlserver\":{},\"mysql\":{}",
            json_str(&id.to_string()),
            json_str(kind),
            version,
            json_str(variant),
            opt_ms(time),
            opt_time(time),
            json_str(&Form::Sqlserver.format(id)),
            json_str(&Form::Mysql.format(id)),
        )?;
        if let Some(r) = &interval {
            write!(
                out,
                ",\"prefix\":{},\"interval_start\":{},\"interval_end\":{}",
                sp.prefix_of(&id),
                json_str(&r.start.to_string()),
                json_str(&r.end.to_string())
            )?;
        }
        if kind == "v7" {
            write!(out, ",\"counter\":{}", id.v7_counter())?;
        }
        writeln!(out, "}}")
    } else {
        writeln!(out, "{id}")?;
        writeln!(out, "  kind:      {kind}")?;
        writeln!(out, "  version:   {version:x}")?;
        writeln!(out, "  variant:   {variant}")?;
        if let Some(t) = time {
            writeln!(out, "  time:      {t} (unix_ms {})", t.unix_ms())?;
            writeln!(out, "  counter:   {}", id.v7_counter())?;
        }
        if let Some(r) = interval {
            writeln!(out, "  prefix:    {:#x}", sp.prefix_of(&id))?;
            writeln!(out, "  interval:  {} .. {} (nearest to {near})", r.start, r.end)?;
        }
        writeln!(out, "  sqlserver: {}", Form::Sqlserver.format(id))?;
        writeln!(out, "  mysql:     {}", Form::Mysql.format(id))
    }
}
