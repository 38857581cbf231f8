//! A read-only SQLite VFS over any [`ReadAt`] source, with a block cache in front.
//!
//! Why: in the browser the export is a user's `File` that can be several GB, more than wasm's
//! 4 GiB address space; this VFS lets SQLite read it page by page (`Blob.slice` +
//! `FileReaderSync` in the worker) so it is never copied whole into wasm memory. The code is
//! written against `rusqlite::ffi` only, so the very same VFS runs natively over a
//! `std::fs::File`, where it is tested against normal opens (tests/vfs.rs).
//!
//! How: a source is parked in a thread-local registry under a unique file name, then SQLite is
//! asked to open that name with our VFS; `xOpen` takes the source out of the registry and the
//! open file owns it from then on. Files SQLite opens for itself (temporary sort spills, temp
//! tables) have no name of ours and are handed to the default VFS, sharing the same
//! `sqlite3_file` allocation (our `szOsFile` is the larger of both).

pub mod cache;
pub mod source;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use rusqlite::ffi;
use rusqlite::{Connection, OpenFlags};

pub use cache::{BlockCache, CacheConfig, CacheStats};
pub use source::ReadAt;

use crate::error::{Error, Result};

/// Name the VFS is registered under.
pub const VFS_NAME: &str = "prvsight-ro";
/// Every file name of ours starts with this, so other names go to the default VFS.
const PREFIX: &str = "/prvsight-ro/";

/// What `xOpen` finds under a name: the source, how to cache it, and its first block where
/// it was read already.
struct Parked {
    src: Box<dyn ReadAt>,
    config: CacheConfig,
    first_block: Option<Vec<u8>>,
}

thread_local! {
    static PARKED: RefCell<HashMap<String, Parked>> = RefCell::new(HashMap::new());
    /// Stats of the last file closed on this thread under each (sanitized) label, for tests.
    static CLOSED_STATS: RefCell<HashMap<String, CacheStats>> = RefCell::new(HashMap::new());
    /// Reads made by files of ours on this thread, and the offset of the last (see [`last_read`]).
    static LAST_READ: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// How many reads SQLite made of our files on this thread, and the offset of the latest one.
/// A scan that has just read a page is at that offset of its file: scans of the same file kept
/// near the same offset share the block cache's blocks (engine/prepass/lockstep.rs).
pub fn last_read() -> (u64, u64) {
    LAST_READ.with(Cell::get)
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Our file object: SQLite's base struct first, as the VFS contract requires.
#[repr(C)]
struct VFile {
    base: ffi::sqlite3_file,
    cache: *mut BlockCache,
    name: *mut String,
}

/// Opens `src` as a read-only SQLite database. `label` names the file in messages.
pub fn open_connection(
    label: &str,
    src: Box<dyn ReadAt>,
    config: CacheConfig,
) -> Result<Connection> {
    open_parked(
        label,
        Parked {
            src,
            config,
            first_block: None,
        },
    )
}

fn open_parked(label: &str, parked: Parked) -> Result<Connection> {
    register().map_err(|detail| Error::Unreadable {
        file: label.into(),
        detail,
    })?;
    let name = unique_name(label);
    PARKED.with(|p| p.borrow_mut().insert(name.clone(), parked));
    let conn = Connection::open_with_flags_and_vfs(
        &name,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        VFS_NAME,
    );
    // On success xOpen took the source; on failure it may still be parked.
    PARKED.with(|p| p.borrow_mut().remove(&name));
    conn.map_err(|e| Error::NotSqlite {
        file: label.into(),
        detail: e.to_string(),
    })
}

/// Opens `src` as [`open_connection`] does, once `check` accepted its first bytes (at most 16)
/// and size: a clear message for gzip/zip/empty files before SQLite gives a vaguer one. They
/// are read as the block cache's first block, which the cache then holds: in the browser each
/// read of the user's file costs a few milliseconds whatever its size, so the check costs no
/// read of its own. Sorts spill to temporary files, which go to the default VFS (wasm builds
/// keep them in memory whatever this says).
pub fn open_checked(
    label: &str,
    src: Box<dyn ReadAt>,
    config: CacheConfig,
    check: impl FnOnce(&[u8], u64) -> Result<()>,
) -> Result<Connection> {
    let size = src.size();
    let len = size.min(cache::BlockCache::block_len(config) as u64) as usize;
    let mut first_block = vec![0u8; len];
    src.read_exact_at(0, &mut first_block)
        .map_err(|e| Error::Unreadable {
            file: label.into(),
            detail: e.to_string(),
        })?;
    check(&first_block[..len.min(16)], size)?;
    let parked = Parked {
        src,
        config,
        first_block: Some(first_block),
    };
    let conn = open_parked(label, parked)?;
    let _ = conn.execute_batch("PRAGMA temp_store = FILE; PRAGMA cache_size = -8192;");
    Ok(conn)
}

/// Cache statistics of the file most recently closed on this thread under `label`.
pub fn closed_stats(label: &str) -> Option<CacheStats> {
    CLOSED_STATS.with(|s| s.borrow().get(&sanitize(label)).copied())
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn unique_name(label: &str) -> String {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    format!("{PREFIX}{id}/{}", sanitize(label))
}

/// Registers the VFS once per process. Returns a message when SQLite refuses.
fn register() -> std::result::Result<(), String> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        // SAFETY: SQLite's VFS API used as documented; the struct registered is leaked, so it
        // lives as long as the process, as SQLite requires.
        .get_or_init(|| unsafe {
            let default = ffi::sqlite3_vfs_find(ptr::null());
            if default.is_null() {
                return Err("SQLite has no default VFS".into());
            }
            let name = CString::new(VFS_NAME).expect("no NUL in the name");
            let vfs = Box::new(ffi::sqlite3_vfs {
                iVersion: 1,
                szOsFile: (std::mem::size_of::<VFile>() as c_int).max((*default).szOsFile),
                mxPathname: (*default).mxPathname.max(512),
                pNext: ptr::null_mut(),
                zName: name.into_raw(),
                pAppData: default.cast(),
                xOpen: Some(x_open),
                xDelete: Some(x_delete),
                xAccess: Some(x_access),
                xFullPathname: Some(x_full_pathname),
                xDlOpen: None,
                xDlError: None,
                xDlSym: None,
                xDlClose: None,
                xRandomness: Some(x_randomness),
                xSleep: Some(x_sleep),
                xCurrentTime: Some(x_current_time),
                xGetLastError: Some(x_get_last_error),
                xCurrentTimeInt64: None,
                xSetSystemCall: None,
                xGetSystemCall: None,
                xNextSystemCall: None,
            });
            // SQLite keeps the pointer for the life of the process.
            match ffi::sqlite3_vfs_register(Box::leak(vfs), 0) {
                ffi::SQLITE_OK => Ok(()),
                rc => Err(format!(
                    "registering the read-only VFS failed (SQLite code {rc})"
                )),
            }
        })
        .clone()
}

// SAFETY: `vfs` is ours, registered with the default VFS as its app data (`register`).
unsafe fn default_vfs(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    (*vfs).pAppData.cast()
}

// SAFETY: `name` is null or a NUL-terminated name from SQLite.
unsafe fn is_ours(name: *const c_char) -> bool {
    !name.is_null()
        && CStr::from_ptr(name)
            .to_bytes()
            .starts_with(PREFIX.as_bytes())
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(f_close),
    xRead: Some(f_read),
    xWrite: Some(f_write),
    xTruncate: Some(f_truncate),
    xSync: Some(f_sync),
    xFileSize: Some(f_file_size),
    xLock: Some(f_lock),
    xUnlock: Some(f_lock),
    xCheckReservedLock: Some(f_check_reserved_lock),
    xFileControl: Some(f_file_control),
    xSectorSize: Some(f_sector_size),
    xDeviceCharacteristics: Some(f_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

// SAFETY: SQLite's xOpen contract: `file` is szOsFile bytes (at least a VFile), `name` a
// NUL-terminated name or null, `out_flags` null or writable.
unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    if !is_ours(name) {
        // A file SQLite makes for itself (temp table, sort spill): the default VFS does it.
        let d = default_vfs(vfs);
        return match (*d).xOpen {
            Some(open) => open(d, name, file, flags, out_flags),
            None => ffi::SQLITE_CANTOPEN,
        };
    }
    (*file).pMethods = ptr::null();
    if flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
        // Journals and WAL of an immutable database are never needed.
        return ffi::SQLITE_CANTOPEN;
    }
    let key = CStr::from_ptr(name).to_string_lossy().into_owned();
    let Some(parked) = PARKED.with(|p| p.borrow_mut().remove(&key)) else {
        return ffi::SQLITE_CANTOPEN;
    };
    let f = file.cast::<VFile>();
    let mut cache = BlockCache::new(parked.src, parked.config);
    if let Some(first) = parked.first_block {
        cache.hold_first_block(first);
    }
    ptr::addr_of_mut!((*f).cache).write(Box::into_raw(Box::new(cache)));
    ptr::addr_of_mut!((*f).name).write(Box::into_raw(Box::new(key)));
    (*file).pMethods = &IO_METHODS;
    if !out_flags.is_null() {
        *out_flags = (flags & !ffi::SQLITE_OPEN_READWRITE & !ffi::SQLITE_OPEN_CREATE)
            | ffi::SQLITE_OPEN_READONLY;
    }
    ffi::SQLITE_OK
}

// SAFETY: SQLite's xDelete contract: our VFS and a NUL-terminated name.
unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync: c_int,
) -> c_int {
    if is_ours(name) {
        return ffi::SQLITE_IOERR_DELETE;
    }
    let d = default_vfs(vfs);
    match (*d).xDelete {
        Some(del) => del(d, name, sync),
        None => ffi::SQLITE_IOERR_DELETE,
    }
}

// SAFETY: SQLite's xAccess contract: a NUL-terminated name, `res` writable.
unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    res: *mut c_int,
) -> c_int {
    if is_ours(name) {
        // No journal or WAL ever exists beside our files.
        *res = 0;
        return ffi::SQLITE_OK;
    }
    let d = default_vfs(vfs);
    match (*d).xAccess {
        Some(access) => access(d, name, flags, res),
        None => {
            *res = 0;
            ffi::SQLITE_OK
        }
    }
}

// SAFETY: SQLite's xFullPathname contract: `out` holds `n_out` bytes.
unsafe extern "C" fn x_full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    if is_ours(name) {
        let bytes = CStr::from_ptr(name).to_bytes_with_nul();
        if bytes.len() > n_out as usize {
            return ffi::SQLITE_CANTOPEN;
        }
        ptr::copy_nonoverlapping(bytes.as_ptr().cast(), out, bytes.len());
        return ffi::SQLITE_OK;
    }
    let d = default_vfs(vfs);
    match (*d).xFullPathname {
        Some(full) => full(d, name, n_out, out),
        None => ffi::SQLITE_CANTOPEN,
    }
}

// SAFETY: SQLite's xRandomness contract, forwarded to the default VFS.
unsafe extern "C" fn x_randomness(vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let d = default_vfs(vfs);
    match (*d).xRandomness {
        Some(r) => r(d, n, out),
        None => 0,
    }
}

// SAFETY: SQLite's xSleep contract, forwarded to the default VFS.
unsafe extern "C" fn x_sleep(vfs: *mut ffi::sqlite3_vfs, us: c_int) -> c_int {
    let d = default_vfs(vfs);
    match (*d).xSleep {
        Some(s) => s(d, us),
        None => 0,
    }
}

// SAFETY: SQLite's xCurrentTime contract: `out` writable.
unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    let d = default_vfs(vfs);
    match (*d).xCurrentTime {
        Some(t) => t(d, out),
        None => {
            // Julian day of the Unix epoch: only used for SQL date functions, which we never call.
            *out = 2_440_587.5;
            ffi::SQLITE_OK
        }
    }
}

// SAFETY: SQLite's xGetLastError contract, forwarded to the default VFS.
unsafe extern "C" fn x_get_last_error(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let d = default_vfs(vfs);
    match (*d).xGetLastError {
        Some(g) => g(d, n, out),
        None => 0,
    }
}

// SAFETY: `file` is a VFile opened by `x_open` and not yet closed (SQLite calls its
// methods only then, one at a time), so its cache pointer is live and not aliased.
unsafe fn cache<'a>(file: *mut ffi::sqlite3_file) -> &'a mut BlockCache {
    &mut *(*file.cast::<VFile>()).cache
}

// SAFETY: SQLite closes an open VFile once: its boxes from `x_open` are freed here only.
unsafe extern "C" fn f_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file.cast::<VFile>();
    let cache = Box::from_raw((*f).cache);
    let name = Box::from_raw((*f).name);
    let label = name.rsplit('/').next().unwrap_or_default().to_owned();
    CLOSED_STATS.with(|s| s.borrow_mut().insert(label, cache.stats()));
    (*f).cache = ptr::null_mut();
    (*f).name = ptr::null_mut();
    ffi::SQLITE_OK
}

// SAFETY: SQLite's xRead contract: an open VFile, `buf` writable for `amount` bytes.
unsafe extern "C" fn f_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let (Ok(len), Ok(off)) = (usize::try_from(amount), u64::try_from(offset)) else {
        return ffi::SQLITE_IOERR_READ;
    };
    let out = std::slice::from_raw_parts_mut(buf.cast::<u8>(), len);
    LAST_READ.with(|r| r.set((r.get().0 + 1, off)));
    match cache(file).read(off, out) {
        Ok(n) if n == len => ffi::SQLITE_OK,
        Ok(n) => {
            // SQLite requires the unread tail zero-filled on a short read.
            out[n..].fill(0);
            ffi::SQLITE_IOERR_SHORT_READ
        }
        Err(_) => ffi::SQLITE_IOERR_READ,
    }
}

extern "C" fn f_write(
    _: *mut ffi::sqlite3_file,
    _: *const c_void,
    _: c_int,
    _: ffi::sqlite3_int64,
) -> c_int {
    ffi::SQLITE_READONLY
}

extern "C" fn f_truncate(_: *mut ffi::sqlite3_file, _: ffi::sqlite3_int64) -> c_int {
    ffi::SQLITE_READONLY
}

extern "C" fn f_sync(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}

// SAFETY: SQLite's xFileSize contract: an open VFile, `size` writable.
unsafe extern "C" fn f_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    *size = cache(file).size() as ffi::sqlite3_int64;
    ffi::SQLITE_OK
}

/// Locks are no-ops: the source never changes and nobody else writes it.
extern "C" fn f_lock(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}

// SAFETY: SQLite's xCheckReservedLock contract: `res` writable.
unsafe extern "C" fn f_check_reserved_lock(_: *mut ffi::sqlite3_file, res: *mut c_int) -> c_int {
    *res = 0;
    ffi::SQLITE_OK
}

extern "C" fn f_file_control(_: *mut ffi::sqlite3_file, _: c_int, _: *mut c_void) -> c_int {
    ffi::SQLITE_NOTFOUND
}

extern "C" fn f_sector_size(_: *mut ffi::sqlite3_file) -> c_int {
    4096
}

extern "C" fn f_device_characteristics(_: *mut ffi::sqlite3_file) -> c_int {
    ffi::SQLITE_IOCAP_IMMUTABLE
}
