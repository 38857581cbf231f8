//! What the direct reader needs to know of a table: its root page and how each column is stored.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};

use super::record::{Affinity, Record};

/// A rowid table the direct reader can walk.
#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub root: u32,
    pub columns: Vec<Column>,
}

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub affinity: Affinity,
    /// An `INTEGER PRIMARY KEY`: stored as NULL in the record, read as the rowid.
    pub rowid_alias: bool,
    /// Declared with a default: a row written before the column was added reads as the default,
    /// which only SQLite evaluates, so the direct reader does not read such a column.
    pub has_default: bool,
}

impl Table {
    /// The table `name` of `conn`'s main database, or `None` where the direct reader does not
    /// apply: not an ordinary table, `WITHOUT ROWID`, generated or hidden columns.
    pub fn read(conn: &Connection, name: &str) -> rusqlite::Result<Option<Table>> {
        // PRAGMA table_list: type is 'table' for ordinary tables, wr is 1 for WITHOUT ROWID.
        // Asked of the one table (its argument): listing every table of every schema, for
        // each table, was most of the cost of setting up a reader of a small input.
        // The three statements are prepared once per connection (each of its pagers asks for
        // each table it reads: preparing them was most of the set-up of an input).
        let listed: Option<(String, i64)> = conn
            .prepare_cached(
                "SELECT type, wr FROM pragma_table_list(?1) WHERE schema = 'main' AND name = ?1",
            )?
            .query_row([name], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if !matches!(&listed, Some((kind, 0)) if kind == "table") {
            return Ok(None);
        }
        let found: Option<(i64, Option<String>)> = conn
            .prepare_cached(
                "SELECT rootpage, sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
            )?
            .query_row([name], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((root, sql)) = found else {
            return Ok(None);
        };
        let Ok(root) = u32::try_from(root) else {
            return Ok(None);
        };
        if root == 0 {
            return Ok(None);
        }
        let mut st = conn.prepare_cached(
            "SELECT name, type, dflt_value IS NOT NULL, pk, hidden FROM pragma_table_xinfo(?1) ORDER BY cid",
        )?;
        let rows = st.query_map([name], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })?;
        let mut columns = Vec::new();
        let mut keys = 0;
        let mut integer_key = None;
        for row in rows {
            let (col, declared, has_default, pk, hidden) = row?;
            if hidden != 0 {
                return Ok(None);
            }
            if pk > 0 {
                keys += 1;
                if declared.eq_ignore_ascii_case("INTEGER") {
                    integer_key = Some(columns.len());
                }
            }
            columns.push(Column {
                name: col,
                affinity: Affinity::of_declared(&declared),
                rowid_alias: false,
                has_default,
            });
        }
        if let (1, Some(i)) = (keys, integer_key) {
            // `INTEGER PRIMARY KEY DESC` is the one spelling that is not an alias of the rowid;
            // the pragmas do not tell it apart, so any DESC in such a table's SQL declines.
            let desc = sql
                .as_deref()
                .is_some_and(|s| s.to_ascii_uppercase().contains("DESC"));
            if desc {
                return Ok(None);
            }
            columns[i].rowid_alias = true;
        }
        Ok(Some(Table {
            name: name.to_owned(),
            root,
            columns,
        }))
    }

    /// Column `i` of a row (its rowid and its record, parsed from `payload`), as SQLite reads it.
    /// (A column with a default is read as stored: callers do not ask for one, see [`Column`].)
    #[inline]
    pub fn value<'p>(&self, rec: &Record, payload: &'p [u8], rowid: i64, i: usize) -> ValueRef<'p> {
        let c = &self.columns[i];
        if c.rowid_alias {
            return ValueRef::Integer(rowid);
        }
        rec.value(payload, i, c.affinity)
    }

    /// The index of column `name` (SQL names are case-insensitive).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }
}
