//! One opened export: a read-only SQLite connection, a label for messages, and its schema.

use rusqlite::Connection;

use super::Schema;
use crate::error::{Error, Result};

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// KiB of SQLite's page cache of an input's connection (see [`Export::share_caches`]).
const CACHE_KIB: i64 = 8192;
const LEAST_CACHE_KIB: i64 = 8;

pub struct Export {
    pub conn: Connection,
    /// File name as shown in messages.
    pub label: String,
    pub schema: Schema,
    /// The file it was opened from, if it was (a second connection can then read it in parallel).
    pub path: Option<std::path::PathBuf>,
    /// The file mapped, where it is small enough (sqlfile/mapped.rs): held for as long as the
    /// export, so that every pager of its file reads the one mapping.
    #[cfg(target_os = "linux")]
    mapped: Option<std::sync::Arc<crate::sqlfile::mapped::FileMap>>,
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
        let conn = open_read_only(path).map_err(|e| Error::NotSqlite {
            file: label.clone(),
            detail: e.to_string(),
        })?;
        let mut ex = Self::from_connection(conn, label)?;
        ex.path = Some(path.to_owned());
        #[cfg(target_os = "linux")]
        {
            ex.mapped = crate::sqlfile::mapped::FileMap::of(path);
        }
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

    /// Wraps an already opened connection (e.g. over the browser's Blob VFS).
    pub fn from_connection(conn: Connection, label: String) -> Result<Export> {
        configure(&conn);
        let schema = Schema::read(&conn, &label)?;
        Ok(Export {
            conn,
            label,
            schema,
            path: None,
            #[cfg(target_os = "linux")]
            mapped: None,
        })
    }

    /// `Err` where the file changed under the reading in a way its readers may not have seen:
    /// it shrank while mapped (sqlfile/mapped.rs; the end of its last page then reads as zeros
    /// where `pread` would fail). Asked when a pass over the file ends.
    pub fn check_unchanged(&self) -> Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.mapped {
            map.unchanged().map_err(|why| Error::BadData {
                file: self.label.clone(),
                why,
            })?;
        }
        Ok(())
    }

    /// Gives this connection's page caches (its file's and its temporary tables') a share of
    /// what `inputs` inputs read together keep: 8 MiB alone, 8 MiB over all of many (each
    /// then as small as two pages, which SQLite does not allocate ahead: from three pages on,
    /// every cache it opens allocates 20 pages at once, 87 KiB a cache with 4 KiB pages).
    /// Most pages are read by the direct reader (sqlfile/), with its own cache; what SQLite
    /// still reads (names, MPI receives, SQL sorts) is read once or from the OS's cache.
    pub fn share_caches(&self, inputs: usize) {
        if inputs <= 1 {
            return;
        }
        let kib = (CACHE_KIB / inputs as i64).max(LEAST_CACHE_KIB);
        let _ = self.conn.execute_batch(&format!(
            "PRAGMA main.cache_size = -{kib}; PRAGMA temp.cache_size = -{kib};"
        ));
    }

    /// Bytes of its file (0 for an export not opened from a file, or one that cannot be read).
    pub fn file_bytes(&self) -> u64 {
        (self.path.as_ref())
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
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

/// Settings every connection to an export gets.
fn configure(conn: &Connection) {
    use rusqlite::config::DbConfig;
    // Plans never depend on bound values (exports have no indexes), but by default SQLite
    // re-prepares a statement when a value bound to a LIMIT or range changes: the partitioned
    // reader re-binds its statements for every batch, and the profile showed 4 % in re-parsing.
    let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true);
    // Our queries quote column names (nsys/select.rs): a quoted name that is not a column must be
    // an error, not SQLite's legacy fallback to a string literal.
    let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, false);
}

/// A read-only connection to an export file, set up as every reader of it expects.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn open_read_only(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // Sorts of big tables spill to temporary files instead of growing memory (see nsys/mod.rs).
    // The shared lock taken by the first read is held until the connection closes, instead of
    // being taken and let go around every statement (each time 3 `fcntl`s and a read of the
    // file's change counter: ~1 800 system calls in a 10 MB conversion, most of them the string
    // lookups of the reading thread). Meanwhile a SQLite writer finds the file busy rather than
    // changing it under the conversion; other changes are `Export::check_unchanged`'s to find.
    let _ = conn.execute_batch(
        "PRAGMA temp_store = FILE; PRAGMA cache_size = -8192; PRAGMA locking_mode = EXCLUSIVE;",
    );
    configure(&conn);
    Ok(conn)
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
