//! MySQL and MariaDB: what combkey knows about them.
//!
//! - Column type `BINARY(16)`, holding the public bytes: compared bytes 0..15 left to right,
//!   so `ORDER BY id` is creation order. MariaDB 10.7+'s `UUID` type also works for v7 ids
//!   (measured on 10.11: it stores v1-v5 values segment-swapped and rejects version 8, so
//!   only v7 ids belong there).
//! - An id as a literal: `0x017F22E279B07CC398C4DC0C0C07398F` (what `HEX(id)` shows, as a
//!   hexadecimal literal, which partition bounds require: not `UNHEX(...)`).
//! - Identifiers: backticks, at most 64 characters.
//! - Database-side functions: single-statement stored functions (`combkey_v7()`,
//!   `combkey_unix_ms(id)`, `combkey_time(id)`; no `DELIMITER` needed), and a `BEFORE INSERT`
//!   trigger in place of a `DEFAULT`, which MySQL allows no stored function in.
//! - Partitions: `PARTITION BY RANGE COLUMNS(id)` over `BINARY(16)`.
//! - An existing `CHAR(36)` key converts to `BINARY(16)` with [`text_key_to_binary16`].

use crate::backend::{Backend, Dialect, functions_text, hex_upper, quote_with};
use crate::error::Error;
use crate::sql::partitions::{Part, PartitionDdl, Partitioning};
use crate::time::Timestamp;

/// MySQL's and MariaDB's module (see [`Backend::MySql`]).
pub(crate) struct MySql;

fn quote(name: &str) -> String {
    quote_with(name, '`', '`')
}

impl Dialect for MySql {
    fn names(&self) -> &'static [&'static str] {
        &["mysql", "mariadb"]
    }

    fn column_type(&self) -> &'static str {
        "BINARY(16)"
    }

    fn stored_text(&self, stored: [u8; 16]) -> String {
        hex_upper(&stored)
    }

    fn literal(&self, stored: [u8; 16]) -> String {
        format!("0x{}", hex_upper(&stored))
    }

    fn quote(&self, name: &str) -> String {
        quote(name)
    }

    fn max_identifier_len(&self) -> usize {
        64
    }

    fn primary_key(&self, name: &str) -> String {
        format!("{name} BINARY(16) NOT NULL PRIMARY KEY")
    }

    fn default_trigger(&self, table: &str, column: &str) -> Option<String> {
        Some(format!(
            "CREATE TRIGGER {trigger} BEFORE INSERT ON {t} FOR EACH ROW SET NEW.{c} = IFNULL(NEW.{c}, combkey_v7())",
            trigger = quote(&format!("{table}_combkey_{column}")),
            t = quote(table),
            c = quote(column),
        ))
    }

    fn install_functions(&self) -> &'static str {
        include_str!("mysql.up.sql")
    }

    fn drop_functions(&self) -> &'static str {
        include_str!("mysql.down.sql")
    }

    fn unix_ms_expr(&self, column: &str) -> String {
        format!("combkey_unix_ms({column})")
    }

    fn migration_notes(&self) -> String {
        let mut s = functions_text(self);
        if let Some(trigger) = self.default_trigger("t", "id") {
            s.push_str(
                "\n-- A default id for column `id` of table `t` (MySQL allows no stored function in DEFAULT):\n-- ",
            );
            s.push_str(&trigger);
            s.push_str(";\n");
        }
        s.push_str("\n-- Converting an existing CHAR(36) UUID key column `id` of table `t` to BINARY(16):\n-- ");
        s.push_str(&text_key_to_binary16("t", "id").trim_end().replace('\n', "\n-- "));
        s.push('\n');
        s
    }

    fn partitions(&self) -> Result<&'static dyn PartitionDdl, Error> {
        Ok(&MySql)
    }
}

/// Statements that convert a MySQL/MariaDB `CHAR(36)` (or `VARCHAR(36)`) UUID column to
/// `BINARY(16)` holding the same ids, keeping the column name and its primary key.
///
/// A new column is filled with `UNHEX(REPLACE(col, '-', ''))` and takes the old one's place.
/// Foreign keys that reference the column must be dropped first and recreated (on
/// `BINARY(16)` columns converted the same way) after. Run it in a maintenance window: the
/// `ALTER TABLE`s rebuild the table. `combkey doctor --apply` does the whole conversion,
/// referencing columns included, and keeps every index and constraint.
///
/// ```
/// let sql = combkey::sql::mysql_text_key_to_binary16("orders", "id");
/// assert!(sql.contains("UPDATE `orders` SET `id_combkey_bin` = UNHEX(REPLACE(`id`, '-', ''))"));
/// ```
pub fn text_key_to_binary16(table: &str, column: &str) -> String {
    let t = quote(table);
    let c = quote(column);
    let tmp = quote(&format!("{column}_combkey_bin"));
    format!(
        "ALTER TABLE {t} ADD COLUMN {tmp} BINARY(16) NULL AFTER {c};\n\
         UPDATE {t} SET {tmp} = UNHEX(REPLACE({c}, '-', ''));\n\
         ALTER TABLE {t} DROP PRIMARY KEY, DROP COLUMN {c}, CHANGE COLUMN {tmp} {c} BINARY(16) NOT NULL, \
         ADD PRIMARY KEY ({c});\n"
    )
}

impl MySql {
    /// Partitions are named within the table: `p2026_01`.
    fn name(part: &Part) -> String {
        format!("p{}", part.suffix)
    }

    fn partition(part: &Part) -> Result<String, Error> {
        Ok(format!(
            "  PARTITION {} VALUES LESS THAN ({})",
            Self::name(part),
            Partitioning::bound(Backend::MySql, part.end)?
        ))
    }
}

impl PartitionDdl for MySql {
    fn create(&self, p: &Partitioning, parts: &[Part], default: bool) -> Result<String, Error> {
        let Some(first) = parts.first() else { return Ok(String::new()) };
        let mut s = format!(
            "-- The key must be the table's primary key, BINARY(16). p_before holds ids older than {}.\n",
            first.start
        );
        let mut lines = vec![format!(
            "  PARTITION p_before VALUES LESS THAN ({})",
            Partitioning::bound(Backend::MySql, first.start)?
        )];
        for part in parts {
            lines.push(Self::partition(part)?);
        }
        if default {
            lines.push("  PARTITION pmax VALUES LESS THAN (MAXVALUE)".into());
        }
        s.push_str(&format!(
            "ALTER TABLE {} PARTITION BY RANGE COLUMNS({}) (\n{}\n);\n",
            p.table(),
            p.key(),
            lines.join(",\n")
        ));
        Ok(s)
    }

    fn drop_before(&self, p: &Partitioning, parts: &[Part], _edge: Timestamp) -> Result<String, Error> {
        let mut names = vec!["p_before".to_string()];
        names.extend(parts.iter().map(Self::name));
        Ok(names
            .into_iter()
            .map(|name| format!("ALTER TABLE {} DROP PARTITION IF EXISTS {name};\n", p.table()))
            .collect())
    }

    fn add(&self, p: &Partitioning, parts: &[Part], default: bool) -> Result<String, Error> {
        let mut lines = Vec::new();
        for part in parts {
            lines.push(Self::partition(part)?);
        }
        Ok(if default {
            lines.push("  PARTITION pmax VALUES LESS THAN (MAXVALUE)".into());
            format!("ALTER TABLE {} REORGANIZE PARTITION pmax INTO (\n{}\n);\n", p.table(), lines.join(",\n"))
        } else {
            format!("ALTER TABLE {} ADD PARTITION (\n{}\n);\n", p.table(), lines.join(",\n"))
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn identifiers_are_quoted() {
        let sql = super::text_key_to_binary16("we`ird", "id");
        assert!(sql.contains("`we``ird`"), "{sql}");
    }
}
