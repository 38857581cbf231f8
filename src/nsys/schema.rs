//! What an export holds: its tables and their columns (read with PRAGMA table_info, since NVIDIA
//! says the schema "can and will change"), and the nsys/schema versions it declares.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::error::{Error, Result};

/// Tables that identify a file as an Nsight Systems export (at least one must exist, with StringIds).
const NSYS_MARKER_TABLES: &[&str] = &[
    "META_DATA_EXPORT",
    "EXPORT_META_DATA",
    "TARGET_INFO_SESSION_START_TIME",
    "ANALYSIS_DETAILS",
];

#[derive(Clone, Debug, Default, Serialize)]
pub struct Schema {
    /// Table name → column names, in declaration order.
    pub tables: BTreeMap<String, Vec<String>>,
    /// Which table holds the export metadata (`META_DATA_EXPORT` since 2023, `EXPORT_META_DATA`
    /// in 2022.x, none before).
    pub metadata_table: Option<String>,
    /// `EXPORT_PRODUCT_VERSION`, e.g. "2026.1.1.204".
    pub product_version: Option<String>,
    /// `EXPORT_SCHEMA_VERSION`, e.g. "3.24.14".
    pub schema_version: Option<String>,
    /// Name of the string table (`StringIds`; `StringTable` in very old exports).
    pub strings_table: String,
}

impl Schema {
    pub fn read(conn: &Connection, file: &str) -> Result<Schema> {
        let names: Vec<String> = (|| {
            let mut st = conn.prepare(
                "SELECT name FROM sqlite_master WHERE type IN ('table','view') ORDER BY name",
            )?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })()
        .map_err(|e| Error::read(file, "the list of tables", e))?;
        if names.is_empty() {
            return Err(Error::NotNsysExport {
                file: file.into(),
                why: "the database is empty (no tables)".into(),
            });
        }
        let mut tables = BTreeMap::new();
        for name in names {
            let cols = (|| {
                let mut st = conn.prepare(&format!(
                    "PRAGMA table_info(\"{}\")",
                    name.replace('"', "\"\"")
                ))?;
                let rows = st.query_map([], |r| r.get::<_, String>(1))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })()
            .map_err(|e| Error::read(file, format!("the columns of {name}"), e))?;
            tables.insert(name, cols);
        }
        let strings_table = ["StringIds", "StringTable"]
            .iter()
            .find(|t| tables.contains_key(**t))
            .map(|s| s.to_string());
        let has_marker = NSYS_MARKER_TABLES.iter().any(|t| tables.contains_key(*t));
        let Some(strings_table) = strings_table.filter(|_| has_marker) else {
            let shown: Vec<_> = tables.keys().take(8).cloned().collect();
            return Err(Error::NotNsysExport {
                file: file.into(),
                why: format!(
                    "it has no StringIds table and none of {} (its tables: {}{})",
                    NSYS_MARKER_TABLES.join(", "),
                    shown.join(", "),
                    if tables.len() > 8 { ", ..." } else { "" }
                ),
            });
        };
        let mut schema = Schema {
            tables,
            strings_table,
            ..Default::default()
        };
        for meta in ["META_DATA_EXPORT", "EXPORT_META_DATA"] {
            if schema.has_columns(meta, &["name", "value"]) {
                schema.metadata_table = Some(meta.to_owned());
                let get = |key: &str| -> Option<String> {
                    conn.query_row(
                        &format!("SELECT value FROM {meta} WHERE name = ?1"),
                        [key],
                        |r| r.get::<_, String>(0),
                    )
                    .ok()
                };
                schema.product_version = get("EXPORT_PRODUCT_VERSION");
                schema.schema_version = get("EXPORT_SCHEMA_VERSION");
                break;
            }
        }
        Ok(schema)
    }

    pub fn has_table(&self, t: &str) -> bool {
        self.tables.contains_key(t)
    }

    pub fn has_column(&self, t: &str, c: &str) -> bool {
        self.tables
            .get(t)
            .is_some_and(|cols| cols.iter().any(|x| x == c))
    }

    pub fn has_columns(&self, t: &str, cs: &[&str]) -> bool {
        cs.iter().all(|c| self.has_column(t, c))
    }

    /// The column as a query's output if table `t` has it, else NULL.
    pub fn column_or_null(&self, t: &str, col: &str) -> crate::engine::select::Val {
        crate::engine::select::Val::col_if(self.has_column(t, col), col)
    }

    /// `col` if the table has it, else `NULL` — for optional columns in a SELECT list.
    pub fn col_or_null(&self, t: &str, col: &str) -> String {
        if self.has_column(t, col) {
            format!("\"{col}\"")
        } else {
            "NULL".to_owned()
        }
    }

    /// Fails with a message naming the table and the missing columns.
    pub fn require_columns(&self, file: &str, t: &str, cols: &[&str]) -> Result<()> {
        let missing: Vec<&str> = cols
            .iter()
            .copied()
            .filter(|c| !self.has_column(t, c))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Error::Schema {
                file: file.into(),
                table: t.into(),
                why: format!(
                    "missing column{} {} (export schema {}); re-export with a supported nsys version",
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", "),
                    self.schema_version.as_deref().unwrap_or("unknown")
                ),
            })
        }
    }
}
