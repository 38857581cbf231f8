//! The reading engine: a table's rows in the order a reader asks for, whatever reads them —
//! SQLite, the page reader of the file format (src/sqlfile) or a helper thread — so that the
//! family modules (src/nsys) only decode rows and the merge (src/pipeline) only orders records.
//!
//! Time order: exports carry no indexes, so `ORDER BY start` (and the window functions that give
//! the lookahead to the next event on a stream or thread) is a full sort ([`sql_rows`]). Where a
//! table's rows come in per-resource sorted runs, as nsys writes them, [`partitioned`] reads those
//! runs by rowid range and merges them instead, and [`sort_keys`] sorts narrow keys where they do
//! not; both give exactly the SQL path's rows in its order, and decline (the family then goes to
//! the SQL path) where they cannot.
//!
//! One interface for all of them ([`readers`]): [`Readers::open`](readers::Readers::open) takes
//! a description of what to read and gives [`Rows`](readers::Rows), which hand each row, in the
//! SQL path's order and with its lookahead where a reader merged runs, to the caller's
//! [`RowSink`](readers::RowSink). Which reader, and on which thread (natively the GPU tables'
//! runs are read on helper threads), is the engine's business, not the caller's.
//!
//! Every query is described once ([`select`]) and run by SQLite or by the [`page_reader`], with
//! the same rows either way. The full-table scans made before the first record (discovery's
//! groupings, the surveys of the sort-free readers, the sort keys) are made together
//! ([`prepass`]), so that a table is read once for all of them.
//!
//! Memory: the sort-free readers hold one small batch per run in progress, and the rowids of
//! sparse runs. The SQL path's sorts spill: natively a connection sets `temp_store = FILE`
//! ([`open_read_only`]), so SQLite's external merge sort goes to temporary files.

use std::path::Path;

use rusqlite::Connection;

pub mod block;
#[cfg(not(target_family = "wasm"))]
pub mod helper_threads;
pub mod page_reader;
pub mod partitioned;
pub mod prepass;
pub mod readers;
pub mod row;
pub mod select;
pub mod sort_keys;
pub mod sql_rows;

/// An input as the engine reads it: its connection, its name in messages, and the file it was
/// opened from (helper threads open it again), if it was.
#[derive(Clone, Copy)]
pub struct Input<'c> {
    pub conn: &'c Connection,
    pub label: &'c str,
    pub path: Option<&'c Path>,
}

/// Settings every connection to an export gets.
pub fn configure(conn: &Connection) {
    use rusqlite::config::DbConfig;
    // Plans never depend on bound values (exports have no indexes), but by default SQLite
    // re-prepares a statement when a value bound to a LIMIT or range changes, and the
    // partitioned reader re-binds its statements for every batch.
    let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true);
    // Our queries quote column names (select.rs): a quoted name that is not a column must be an
    // error, not SQLite's legacy fallback to a string literal.
    let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, false);
}

/// KiB of SQLite's page cache of an input's connection (see [`share_caches`]).
const CACHE_KIB: i64 = 8192;
const LEAST_CACHE_KIB: i64 = 8;
/// The temporary tables' (an input's MPI receive index) cache holds this much at least: a
/// smaller one spills them to a file, one created per input (on ext4 ~0.5 ms each, a quarter
/// of a thousand ranks' conversion); SQLite allocates its pages only as they are used.
const LEAST_TEMP_CACHE_KIB: i64 = 64;

/// Gives this connection's page caches (its file's and its temporary tables') a share of what
/// `inputs` inputs read together keep: 8 MiB alone, 8 MiB over all of many (each then as small
/// as two pages, which SQLite does not allocate ahead: from three pages on, every cache it opens
/// allocates 20 pages at once, 87 KiB a cache with 4 KiB pages). Most pages are read by the
/// page reader (sqlfile/), with its own cache; what SQLite still reads (names, MPI receives,
/// SQL sorts) is read once or from the OS's cache.
pub fn share_caches(conn: &Connection, inputs: usize) {
    if inputs <= 1 {
        return;
    }
    let kib = (CACHE_KIB / inputs as i64).max(LEAST_CACHE_KIB);
    let temp_kib = kib.max(LEAST_TEMP_CACHE_KIB);
    let _ = conn.execute_batch(&format!(
        "PRAGMA main.cache_size = -{kib}; PRAGMA temp.cache_size = -{temp_kib};"
    ));
}

/// A read-only connection to an export file, set up as every reader of it expects.
#[cfg(not(target_family = "wasm"))]
pub fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // Sorts of big tables spill to temporary files instead of growing memory. The shared lock
    // taken by the first read is held until the connection closes, instead of being taken and
    // let go around every statement (system calls and a read each time); meanwhile a SQLite
    // writer finds the file busy rather than changing it under the conversion (other changes
    // are `Export::check_unchanged`'s to find).
    let _ = conn.execute_batch(
        "PRAGMA temp_store = FILE; PRAGMA cache_size = -8192; PRAGMA locking_mode = EXCLUSIVE;",
    );
    configure(&conn);
    Ok(conn)
}
