//! One opened export: a read-only SQLite connection, a label for messages, and its schema.

use rusqlite::Connection;

use super::Schema;
use crate::error::{Error, Result};

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

pub struct Export {
    pub conn: Connection,
    /// File name as shown in messages.
    pub label: String,
    pub schema: Schema,
    /// The file it was opened from, if it was (a second connection can then read it in parallel).
    pub path: Option<std::path::PathBuf>,
    /// The file mapped, where the program maps files (`sqlfile::set_map_file`): held for as
    /// long as the export, so that every pager of its file reads the one mapping.
    #[cfg(not(target_family = "wasm"))]
    mapped: Option<std::sync::Arc<dyn crate::sqlfile::MappedFile>>,
    /// Whether its MPI receive index is built (nsys/mpi_p2p.rs): once per export, however many
    /// readers of its inputs' groups match messages with it.
    pub(crate) receive_index: std::cell::Cell<bool>,
}

impl Export {
    /// Opens a file from disk, read-only.
    #[cfg(not(target_family = "wasm"))]
    pub fn open_path(path: &std::path::Path) -> Result<Export> {
        use std::io::Read;
        let label = path.display().to_string();
        let mut f = std::fs::File::open(path).map_err(|e| Error::Unreadable {
            file: label.clone(),
            detail: e.to_string(),
        })?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut head = [0u8; 16];
        let n = f.read(&mut head).map_err(|e| Error::Unreadable {
            file: label.clone(),
            detail: e.to_string(),
        })?;
        check_magic(&label, &head[..n], len)?;
        let conn = crate::engine::open_read_only(path).map_err(|e| Error::NotSqlite {
            file: label.clone(),
            detail: e.to_string(),
        })?;
        let mut ex = Self::from_connection(conn, label)?;
        ex.path = Some(path.to_owned());
        ex.mapped = crate::sqlfile::map_file(path);
        Ok(ex)
    }

    /// Opens an export held in memory (copied into SQLite's memory; for small files and tests).
    pub fn from_bytes(bytes: &[u8], label: &str) -> Result<Export> {
        check_magic(label, bytes, bytes.len() as u64)?;
        let mut conn = Connection::open_in_memory().map_err(|e| Error::NotSqlite {
            file: label.into(),
            detail: e.to_string(),
        })?;
        conn.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true)
            .map_err(|e| Error::NotSqlite {
                file: label.into(),
                detail: e.to_string(),
            })?;
        Self::from_connection(conn, label.to_owned())
    }

    /// Opens an export from any byte source through the read-only VFS (src/vfs.rs: the
    /// browser's `File`, never copied whole into memory), with the settings of a native open.
    pub fn open_source(
        label: &str,
        src: Box<dyn crate::vfs::ReadAt>,
        config: crate::vfs::CacheConfig,
    ) -> Result<Export> {
        let check = |head: &[u8], len| check_magic(label, head, len);
        let conn = crate::vfs::open_checked(label, src, config, check)?;
        Self::from_connection(conn, label.to_owned())
    }

    /// Wraps an already opened connection (e.g. over the browser's Blob VFS).
    pub fn from_connection(conn: Connection, label: String) -> Result<Export> {
        crate::engine::configure(&conn);
        let schema = Schema::read(&conn, &label)?;
        Ok(Export {
            conn,
            label,
            schema,
            path: None,
            #[cfg(not(target_family = "wasm"))]
            mapped: None,
            receive_index: std::cell::Cell::new(false),
        })
    }

    /// `Err` where the file changed under the reading in a way its readers may not have seen:
    /// it shrank while mapped (the end of its last page then reads as zeros where `pread` would
    /// fail). Asked when a pass over the file ends.
    pub fn check_unchanged(&self) -> Result<()> {
        #[cfg(not(target_family = "wasm"))]
        if let Some(map) = &self.mapped {
            map.unchanged().map_err(|why| Error::BadData {
                file: self.label.clone(),
                why,
            })?;
        }
        Ok(())
    }

    /// Gives this connection's page caches a share of what `inputs` inputs read together keep
    /// ([`crate::engine::share_caches`]).
    pub fn share_caches(&self, inputs: usize) {
        crate::engine::share_caches(&self.conn, inputs);
    }

    /// Bytes of its file (0 for an export not opened from a file, or one that cannot be read).
    pub fn file_bytes(&self) -> u64 {
        (self.path.as_ref())
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    }

    /// The export as the reading engine reads it.
    pub fn input(&self) -> crate::engine::Input<'_> {
        crate::engine::Input {
            conn: &self.conn,
            label: &self.label,
            path: self.path.as_deref(),
        }
    }

    /// Number of rows of every non-empty table, in name order (for `prvsight info`).
    pub fn table_row_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        for t in self.schema.tables.keys() {
            let n: i64 = self
                .conn
                .query_row(
                    &format!("SELECT count(*) FROM \"{}\"", t.replace('"', "\"\"")),
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| Error::read(&self.label, format!("table {t}"), e))?;
            if n > 0 {
                out.push((t.clone(), n as u64));
            }
        }
        Ok(out)
    }
}

/// Tells "not SQLite at all" and "empty file" apart before SQLite gives a vaguer message.
pub fn check_magic(label: &str, head: &[u8], len: u64) -> Result<()> {
    if len == 0 {
        return Err(Error::NotSqlite {
            file: label.into(),
            detail: "the file is empty (0 bytes)".into(),
        });
    }
    if head.len() < SQLITE_MAGIC.len() || &head[..16] != SQLITE_MAGIC {
        let hint = if head.starts_with(b"\x1f\x8b") {
            "it is gzip-compressed; decompress it first"
        } else if head.starts_with(b"PK") {
            "it is a zip archive; extract the .sqlite first"
        } else if len < 100 {
            "it is too short to be a database"
        } else {
            "it does not start with the SQLite header; an .nsys-rep must first be exported with `nsys export --type sqlite`"
        };
        return Err(Error::NotSqlite {
            file: label.into(),
            detail: hint.into(),
        });
    }
    Ok(())
}
