//! `--migration-sql`: the plan's statements as text, every mapping row written out. The keys
//! are read from the table a page at a time as the text is written, so memory holds one page
//! whatever the table's size.

use std::io::Write;

use crate::catalog::PAGE;
use crate::catalog::{Name, Stored};
use crate::db::Db;
use crate::error::Error;
use crate::keys::{KeyChange, Source, key_map_rows};
use crate::methods::shared::{MAP_BATCH, key_sources};
use crate::plan::{Plan, StepKind};

/// Writes `plan`'s statements to `out`.
pub(crate) async fn write(db: &mut Db, plan: &Plan, out: &mut dyn Write) -> Result<(), Error> {
    let backend = plan.backend()?;
    let cat = crate::catalog::of(backend)?;
    let put = |out: &mut dyn Write, s: &str| out.write_all(s.as_bytes()).map_err(Error::output);
    for (i, step) in plan.steps.iter().enumerate() {
        put(out, &format!("-- step {}: {}\n", i + 1, step.what))?;
        if let Some(d) = &step.drops {
            put(
                out,
                &format!(
                    "--   drops {} {} of {}, whose definition was: {}\n",
                    d.kind,
                    d.name,
                    Name::from(&d.table),
                    d.definition
                ),
            )?;
        }
        match step.kind {
            StepKind::Journal => {
                put(out, "--   (--apply records the plan in the journal table combkey_doctor_journal)\n")?
            }
            StepKind::Map => {
                for sql in &step.sql {
                    put(out, &cat.script_statement(sql))?;
                }
                for source in key_sources(db, plan).await? {
                    db.each_page(&source, PAGE, async |rows| {
                        let page: Vec<KeyChange> = Source::of(plan).changes_of(cat, &rows)?;
                        for chunk in page.chunks(MAP_BATCH) {
                            let rows: Vec<(Stored, Stored)> =
                                chunk.iter().map(|c| (c.old.clone(), c.new.clone())).collect();
                            put(out, &cat.script_statement(&cat.insert_map(&rows)))?;
                            if let Some(map) = &plan.key_map {
                                let kept = key_map_rows(plan, chunk)?;
                                if !kept.is_empty() {
                                    put(out, &cat.script_statement(&cat.key_map_insert(&map.into(), &kept)))?;
                                }
                            }
                        }
                        Ok(())
                    })
                    .await?;
                }
                let since = written_since(plan, backend);
                if !since.is_empty() {
                    put(
                        out,
                        "--   keys written since this script was made: stored as the UUID their text spells, not converted \
                         (run `combkey doctor --apply` again afterwards to convert them)\n",
                    )?;
                }
                for sql in since {
                    put(out, &cat.script_statement(&sql))?;
                }
            }
            StepKind::Verify => {
                for sql in &step.sql {
                    put(out, &format!("-- expect no row, or a count of 0: {sql};\n"))?;
                }
            }
            StepKind::CompareDefinitions | StepKind::Done => {}
            _ => {
                for sql in &step.sql {
                    put(out, &cat.script_statement(sql))?;
                }
            }
        }
    }
    Ok(())
}

/// A MySQL/MariaDB type change from UUID text: the script's mapping holds the keys there were
/// when it was made, and the application may have written more before it runs (its guard
/// triggers refuse writes only from their step on). Those keys are mapped to the 16 bytes their
/// canonical (or 32-digit) text spells, unconverted, as PostgreSQL's `ALTER ... TYPE uuid USING
/// id::uuid` stores the text it finds; without it the `ALTER` to `BINARY(16)` fails half-way
/// ("Data too long") with the foreign keys dropped. Only text matching the UUID pattern
/// exactly is read; a key already mapped keeps its mapping (`INSERT IGNORE` on the primary key:
/// a temporary table cannot be read twice in one MySQL statement). `--apply` reads its keys
/// after the guards are up and never needs it.
fn written_since(plan: &Plan, backend: combkey::Backend) -> Vec<String> {
    let text = plan.column_type.starts_with("char") || plan.column_type.starts_with("varchar");
    if backend != combkey::Backend::MySql || !plan.retypes() || !text {
        return Vec::new();
    }
    let mut columns: Vec<(Name, String)> = vec![((&plan.table).into(), plan.column.clone())];
    for r in &plan.rewrites {
        for c in &r.columns {
            let t: Name = (&r.table).into();
            if !columns.contains(&(t.clone(), c.clone())) {
                columns.push((t, c.clone()));
            }
        }
    }
    let h = "[0-9A-Fa-f]";
    let pattern = format!("^({h}{{8}}-{h}{{4}}-{h}{{4}}-{h}{{4}}-{h}{{12}}|{h}{{32}})$");
    columns
        .into_iter()
        .map(|(t, c)| {
            let c = backend.quote(&c);
            format!(
                "INSERT IGNORE INTO combkey_doctor_map (old, new) SELECT DISTINCT t.{c}, UNHEX(REPLACE(t.{c}, '-', '')) \
                 FROM {} t WHERE t.{c} REGEXP '{pattern}'",
                t.quoted(backend)
            )
        })
        .collect()
}
