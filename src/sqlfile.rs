//! Reading SQLite's file format directly: the rows of a table, in rowid order, from a rowid on.
//!
//! Why: through SQLite, every row of a scan passes its bytecode engine and rusqlite's checked
//! accessors, which was most of the reading thread that bounds a conversion. Table B-trees and
//! records are a stable, documented format (<https://www.sqlite.org/fileformat2.html>): walking
//! them here decodes only the columns asked for, straight into the reader's rows.
//!
//! What is read: ordinary rowid tables of a UTF-8 database in rollback-journal mode, as SQLite
//! itself gives their values (integers, reals, text, blobs, NULL; the REAL affinity's integers as
//! reals; the rowid for an `INTEGER PRIMARY KEY` column; NULL for a column added after a row was
//! written). Anything else — a WAL-mode or UTF-16 database, a `WITHOUT ROWID` or virtual table,
//! generated columns, a column with a default — is declined (`None`), and the caller reads with
//! SQL instead. Pages come through the connection's own open file (`SQLITE_FCNTL_FILE_POINTER`),
//! so they are the bytes SQLite reads: a native file, an in-memory copy, or the browser's Blob
//! VFS (whose position the side-by-side scans follow, engine/prepass/lockstep.rs). A program may
//! have small native files read from a memory map instead ([`set_map_file`]), checked to start
//! with the bytes SQLite reads.
//!
//! A page that breaks the format's rules (a damaged or truncated file) gives [`Damaged`], never a
//! panic or a loop: page numbers, cell offsets, varints, payload sizes, overflow chains and the
//! tree's depth are all checked.

mod btree;
mod pager;
mod record;
mod table;

pub use btree::{leaf_pages, TableCursor};
pub use pager::Pager;
pub use record::{Affinity, Record};
pub use table::{Column, Table};

/// A file's bytes in memory, where the program maps its inputs ([`set_map_file`]).
pub trait MappedFile: Send + Sync {
    /// The file's bytes as mapped (read them, then ask [`shrank`](Self::shrank)).
    fn bytes(&self) -> &[u8];
    /// Whether bytes read since the mapping was made may be zeros instead of the file's.
    fn shrank(&self) -> bool;
    /// `Err` saying how, where the file no longer holds every byte mapped.
    fn unchanged(&self) -> Result<(), String>;
}

/// Maps the file at a path for every pager of it, or declines (`None`).
#[cfg(not(target_family = "wasm"))]
pub type MapFile = fn(&std::path::Path) -> Option<std::sync::Arc<dyn MappedFile>>;

#[cfg(not(target_family = "wasm"))]
static MAP_FILE: std::sync::OnceLock<MapFile> = std::sync::OnceLock::new();

/// Lets pagers read files through `map` (the `prvsight` CLI's small inputs: a mapping needs a
/// process-wide `SIGBUS` handler, which only a program may install). Without it every page is
/// read through the connection's file. The first call counts.
#[cfg(not(target_family = "wasm"))]
pub fn set_map_file(map: MapFile) {
    let _ = MAP_FILE.set(map);
}

/// The mapping of the file at `path`, where the program maps files.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn map_file(path: &std::path::Path) -> Option<std::sync::Arc<dyn MappedFile>> {
    MAP_FILE.get().and_then(|map| map(path))
}

/// The file breaks SQLite's format at the place named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damaged(pub String);

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (the file is damaged or truncated; `sqlite3 FILE 'PRAGMA integrity_check'` tells more)",
            self.0
        )
    }
}

impl std::error::Error for Damaged {}

impl Damaged {
    /// The error of the conversion: `file` is damaged while reading `what`.
    pub fn at(&self, file: &str, what: &str) -> crate::Error {
        crate::Error::NotSqlite {
            file: file.to_owned(),
            detail: format!("while reading {what}: {self}"),
        }
    }
}

/// Reads a big-endian varint of SQLite's format at `at` in `b`: its value and its length (1–9
/// bytes), or `None` when `b` ends first.
#[inline(always)]
pub(crate) fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let first = *b.get(at)?;
    if first < 0x80 {
        return Some((u64::from(first), 1));
    }
    let mut v: u64 = 0;
    for i in 0..8 {
        let byte = *b.get(at + i)?;
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte < 0x80 {
            return Some((v, i + 1));
        }
    }
    // The ninth byte gives all eight of its bits.
    let byte = *b.get(at + 8)?;
    Some(((v << 8) | u64::from(byte), 9))
}

#[cfg(test)]
mod tests {
    use super::varint;

    #[test]
    fn varints_of_every_length() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff, 0x7f], 0), Some((0x3fff, 2)));
        // Nine bytes: 8 × 7 bits then a full byte.
        let max = [0xff; 9];
        assert_eq!(varint(&max, 0), Some((u64::MAX, 9)));
        let minus_one_rowid = varint(&max, 0).map(|(v, _)| v as i64);
        assert_eq!(minus_one_rowid, Some(-1));
        // Cut short: none.
        assert_eq!(varint(&[0x81], 0), None);
        assert_eq!(varint(&[], 0), None);
        assert_eq!(varint(&[0x00, 0x83, 0x01], 1), Some((0x181, 2)));
    }
}
