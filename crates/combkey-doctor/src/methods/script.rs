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

#[cfg(test)]
mod tests {
    use sqlx::Connection as _;

    use crate::methods::fixture::Orders;

    #[tokio::test(flavor = "current_thread")]
    async fn the_script_run_by_hand_converts_what_the_offline_run_would() {
        let orders = Orders::new("script", 30).await;
        let (mut doctor, plan) = orders.plan().await;
        let mut text = Vec::new();
        super::write(&mut doctor.db, &plan, &mut text).await.expect("the script");
        let text = String::from_utf8(text).expect("text");
        // Writing it changed nothing.
        assert!(orders.unchanged(&orders.url).await);
        // Run as the DBA would run it (sqlite3 < script.sql), on a copy.
        let copy = orders.copy("script-run");
        let mut db = sqlx::SqliteConnection::connect(&copy).await.expect("the copy");
        sqlx::raw_sql(sqlx::AssertSqlSafe(text.clone())).execute(&mut db).await.expect("the script runs");
        drop(db);
        assert!(orders.converted(&copy).await, "the script's keys are the conversion's:\n{text}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn keys_written_since_the_script_was_made_are_mapped_on_mysql_text_columns_only() {
        let orders = Orders::new("script-since", 2).await;
        let (_, sqlite) = orders.plan().await;
        let plan = |backend: combkey::Backend, ty: &str| {
            let mut plan = sqlite.clone();
            plan.backend = backend.name().into();
            plan.column_type = ty.into();
            plan.final_type = "binary(16)".into();
            plan
        };
        let since = super::written_since(&plan(combkey::Backend::MySql, "char(36)"), combkey::Backend::MySql);
        assert_eq!(since.len(), 2, "the table's keys and its referencing column's: {since:?}");
        assert!(since[0].starts_with("INSERT IGNORE INTO combkey_doctor_map") && since[0].contains("`orders`"));
        assert!(since[1].contains("`order_lines`") && since[1].contains("`order_id`"), "{since:?}");
        assert!(super::written_since(&plan(combkey::Backend::MySql, "binary(16)"), combkey::Backend::MySql).is_empty());
        assert!(
            super::written_since(&plan(combkey::Backend::Postgres, "char(36)"), combkey::Backend::Postgres).is_empty()
        );
    }
}
