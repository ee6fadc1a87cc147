//! The key source: what each key value becomes, as the plan decided it once. A plan converts
//! keys by their layout (RFC 9562's layouts and the COMB layouts `combkey::layouts` reads), or
//! re-keys random v4 keys from each row's time column (`--rekey-from`, [`crate::rekey`]); the
//! methods read rows through [`Source::reads`], hand them to [`Source::changes_of`] and never
//! ask which of the two it is.

use combkey::Comb;
use combkey::adapter::{ColumnKind, from_column};

use crate::catalog::{Catalog, Column, Name, Stored};
use crate::error::Error;
use crate::plan::{Plan, loses_bits, new_id};
use crate::rekey::{RowTime, now_us, rekeyed, rekeys};

/// Where the new keys of a plan come from.
#[derive(Clone, Copy)]
pub(crate) struct Source<'p> {
    plan: &'p Plan,
    /// `--rekey-from`: the time column each row's new key is made from.
    from: Option<&'p str>,
}

impl<'p> Source<'p> {
    /// The source `plan` chose.
    pub(crate) fn of(plan: &'p Plan) -> Self {
        Source { plan, from: plan.options.rekey_from.as_deref() }
    }

    /// `, expr` for a key-reading `SELECT` of `table` (whose columns are `columns`): what each
    /// row's new key needs besides its key (the row's time, as [`crate::rekey::time_expr`] gives
    /// it), or nothing.
    pub(crate) fn reads(&self, table: &Name, columns: &[Column]) -> Result<String, Error> {
        crate::rekey::select_also(self.plan.backend()?, table, columns, &self.plan.options)
    }

    /// Each key-reading row (as [`Catalog::select_keys`] gives it, with what [`Source::reads`]
    /// added) as its key value and what its new key needs.
    pub(crate) fn keyed(&self, cat: &dyn Catalog, rows: &[Vec<Option<String>>]) -> Result<Vec<Keyed>, Error> {
        rows.iter()
            .map(|r| Ok((cat.parse_key(r)?, if self.from.is_some() { r.last().cloned().flatten() } else { None })))
            .collect()
    }

    /// The changes of key-reading rows: [`Source::keyed`], then [`Source::changes`].
    pub(crate) fn changes_of(&self, cat: &dyn Catalog, rows: &[Vec<Option<String>>]) -> Result<Vec<KeyChange>, Error> {
        self.changes(&self.keyed(cat, rows)?)
    }

    /// The mapping of every key value that changes, from values read in key order.
    pub(crate) fn changes(&self, keyed: &[Keyed]) -> Result<Vec<KeyChange>, Error> {
        let plan = self.plan;
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut bad = Vec::new();
        let now_us = now_us();
        for (value, time) in keyed {
            if !seen.insert(value.clone()) {
                continue;
            }
            let id = match id_of(value) {
                Ok(id) => id,
                Err(e) => {
                    if bad.len() < 5 {
                        bad.push(format!("{value:?}: {e}"));
                    }
                    continue;
                }
            };
            let kind = plan.classifier.classify(&id);
            let new = if rekeys(kind, &id, &plan.options) {
                // A row whose time makes no v7 key keeps its key (the plan refused them, unless
                // kept; rows written since may have one).
                match RowTime::of(time.as_deref(), now_us) {
                    RowTime::At(us) => rekeyed(&id, us),
                    _ => id,
                }
            } else if plan.key_map.is_none() && loses_bits(kind, &plan.options) {
                // Written after the audit (which saw none such, so the plan keeps no key map):
                // converted, its old id could no longer be resolved. It stays; the next run's
                // plan keeps a key map for it.
                id
            } else {
                new_id(&id, kind, &plan.options).unwrap_or(id)
            };
            // `--keep-type`: an id that stays keeps its text as it is (its letter case too).
            if plan.options.keep_type && new == id {
                continue;
            }
            let new_value = stored_in(plan, new)?;
            if new_value != *value {
                out.push(KeyChange { old: value.clone(), new: new_value });
            }
        }
        if !bad.is_empty() {
            return Err(Error::refused(format!(
                "values of {}.{} (or of a column referencing it) are no UUID, so nothing was changed: {}",
                Name::from(&plan.table),
                plan.column,
                bad.join("; ")
            )));
        }
        Ok(out)
    }

    /// The mapping rows of `values` (a key column's values as stored): each value and what it
    /// becomes, its stored form in the key column's final type (the same id where it stays).
    pub(crate) fn pairs(&self, values: &[Stored]) -> Result<Vec<(Stored, Stored)>, Error> {
        let plan = self.plan;
        let classifier = plan.classifier.extended_to(combkey::Timestamp::now().unix_ms());
        let mut bad = Vec::new();
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            let id = match id_of(v) {
                Ok(id) => id,
                Err(e) => {
                    if bad.len() < 5 {
                        bad.push(format!("{v:?}: {e}"));
                    }
                    continue;
                }
            };
            let kind = classifier.classify(&id);
            // As in [`Source::changes`]: a key whose conversion drops bits stays where the plan
            // keeps no key map.
            let new = if plan.key_map.is_none() && loses_bits(kind, &plan.options) {
                id
            } else {
                new_id(&id, kind, &plan.options).unwrap_or(id)
            };
            // `--keep-type`: an id that stays keeps its text as it is.
            let stored =
                if plan.options.keep_type && new == id { v.clone() } else { crate::keys::stored_in(plan, new)? };
            out.push((v.clone(), stored));
        }
        if !bad.is_empty() {
            return Err(Error::refused(format!(
                "values that are no UUID were written to {}.{} (or a column referencing it) during the run: {}",
                Name::from(&plan.table),
                plan.column,
                bad.join("; ")
            )));
        }
        Ok(out)
    }

    /// What makes each new key depend on its row besides its key, where something does: a
    /// method that cannot read the row when the key changes refuses with it.
    pub(crate) fn row_dependence(&self) -> Option<String> {
        self.from.map(|c| format!("--rekey-from {c} makes each key from its row's time when the key changes"))
    }

    /// Whether two old keys may get one new key (a re-key: two rows of the same microsecond
    /// whose old keys end in the same 62 bits); a layout conversion is one to one.
    pub(crate) fn may_collide(&self) -> bool {
        self.from.is_some()
    }

    /// Whether a key's new value depends on what its row holds besides the key (a re-key: the
    /// row's time), which may change between the read and the write: an online batch locks its
    /// rows and reads them again.
    pub(crate) fn rereads(&self) -> bool {
        self.from.is_some()
    }

    /// The refusal that names two rows, keyed `a` and `b`, that would both get `new`.
    pub(crate) fn collision(&self, a: &Stored, b: &Stored, new: &Stored) -> Error {
        let column = self.from.unwrap_or("the time column");
        let show = |v: &Stored| id_of(v).map_or_else(|_| format!("{v:?}"), |id| id.to_string());
        Error::refused(format!(
            "--rekey-from {column}: the rows keyed {} and {} would both get the key {} (their {column} is the same to \
             the microsecond, the millisecond on SQLite, and their old keys end in the same 62 bits), so nothing \
             changed: change one of the two old keys (or its {column} by a microsecond) and run again",
            show(a),
            show(b),
            show(new)
        ))
    }

    /// What a failed run adds to its error `e` about the keys it was writing.
    pub(crate) fn hint(&self, e: &Error) -> &'static str {
        crate::rekey::collision_hint(&self.plan.options, e)
    }
}

/// A key value as read, with what its new key needs (the row's time for a re-key).
pub(crate) type Keyed = (Stored, Option<String>);

/// A key value as read, its id, and the value it takes.
pub(crate) struct KeyChange {
    pub(crate) old: Stored,
    pub(crate) new: Stored,
}

/// The id a stored key value holds (16 bytes, or any UUID text, also text bytes in a binary
/// column during a type change).
pub(crate) fn id_of(value: &Stored) -> Result<Comb, combkey::Error> {
    match value {
        Stored::Bytes(b) => from_column(b, ColumnKind::BinaryOrText),
        Stored::Text(t) => from_column(t.as_bytes(), ColumnKind::Text),
    }
}

/// The value an id takes in a column ending as `final_type`.
pub(crate) fn stored_for(backend: combkey::Backend, final_type: &str, id: Comb) -> Stored {
    match (backend, final_type) {
        (combkey::Backend::Postgres, _) | (_, "uuid") => Stored::Text(id.to_string()),
        _ => Stored::Bytes(id.into_bytes().to_vec()),
    }
}

/// The value an id takes in the key column `plan` converts: its stored form, or with
/// `--keep-type` its text in the column's form (32 hex digits where the column holds 32
/// characters, else hyphenated; lowercase). On PostgreSQL a text column changes its type only
/// after its values change (`USING c::uuid` reads either form), so a column of 32 characters
/// takes the 32 hex digits until then: the hyphenated 36 would not fit.
pub(crate) fn stored_in(plan: &Plan, id: Comb) -> Result<Stored, Error> {
    let backend = plan.backend()?;
    let simple = |ty: &str| ty.contains("(32)");
    if plan.options.keep_type || (backend == combkey::Backend::Postgres && plan.retypes() && simple(&plan.column_type))
    {
        let ty = if plan.options.keep_type { &plan.final_type } else { &plan.column_type };
        return Ok(Stored::Text(if simple(ty) { id.simple().to_string() } else { id.hyphenated().to_string() }));
    }
    Ok(stored_for(backend, &plan.final_type, id))
}

/// The key map's rows for `changes`: each converted key's old and new id, as the key column
/// holds them at the end. A value whose id stays (a text key that only changes its type) has
/// none.
pub(crate) fn key_map_rows(plan: &Plan, changes: &[KeyChange]) -> Result<Vec<(Stored, Stored)>, Error> {
    let backend = plan.backend()?;
    let mut out = Vec::new();
    for c in changes {
        let (Ok(old), Ok(new)) = (id_of(&c.old), id_of(&c.new)) else { continue };
        if old != new {
            out.push((stored_for(backend, &plan.final_type, old), stored_for(backend, &plan.final_type, new)));
        }
    }
    Ok(out)
}
