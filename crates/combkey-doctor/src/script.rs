//! `--migration-sql`: the plan's statements as text, every mapping row written out. The keys
//! are read from the table a page at a time as the text is written, so memory holds one page
//! whatever the table's size.

use std::io::Write;

use crate::apply::{KeyChange, MAP_BATCH, PAGE, changes, key_map_rows, key_sources};
use crate::catalog::{Name, Stored};
use crate::db::Db;
use crate::error::Error;
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
                        let values: Vec<Stored> = rows.iter().map(|r| cat.parse_key(r)).collect::<Result<_, _>>()?;
                        let page: Vec<KeyChange> = changes(plan, &values, &crate::apply::times_of(plan, &rows))?;
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
