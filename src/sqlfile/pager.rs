//! Pages of a connection's main database, read through the connection's own open file, with a
//! small cache for the pages walked again (B-tree interior pages, a leaf a batch ended in); or,
//! where the program maps files ([`super::set_map_file`]), read in place from the mapping.

use std::cell::RefCell;
use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::{ffi, Connection};

use super::{Damaged, Table};
use crate::FastMap;

/// Bytes of pages kept per pager (one per input's readers). Each seek walks root → interior
/// pages → leaf; the interior pages the readers are in stay, leaves come and go. Its slots are
/// memory first touched as they fill, so a larger cache costs page faults for few fewer reads.
const CACHE_BYTES: usize = 512 << 10;

/// Bytes of pages kept over the pagers of many inputs (one per rank): each keeps a share, as
/// small as [`LEAST_PAGES`] (a walk's root, interior and leaf pages), so that what a run of
/// a thousand ranks keeps does not grow with them (512 KiB each held 0.5 GB).
const SHARED_BYTES: usize = 8 << 20;
const LEAST_PAGES: usize = 4;

/// The pages of one connection's main database.
pub struct Pager<'c> {
    conn: &'c Connection,
    /// The tables looked up so far (see [`Pager::table`]).
    tables: RefCell<FastMap<String, Option<Arc<Table>>>>,
    /// The connection's open file and its read method, called on it only (see `read_at`).
    file: *mut ffi::sqlite3_file,
    read: unsafe extern "C" fn(*mut ffi::sqlite3_file, *mut std::ffi::c_void, c_int, i64) -> c_int,
    page_size: usize,
    usable: usize,
    pages: u32,
    cache: RefCell<Cache>,
    /// The file mapped, where the program maps it: pages are read in place instead of through
    /// `read` and the cache.
    #[cfg(not(target_family = "wasm"))]
    map: Option<Arc<dyn super::MappedFile>>,
}

impl<'c> Pager<'c> {
    /// The pager the direct readers of `conn` share, where `direct` asks for them: `None`
    /// without it, where pages cannot be read directly, or where the file's header breaks the
    /// format (the readers then go through SQLite, which names the damage).
    pub fn shared(conn: &'c Connection, page_reader: bool) -> Option<std::rc::Rc<Pager<'c>>> {
        Self::shared_among(conn, page_reader, 1)
    }

    /// [`shared`](Self::shared) for one of `inputs` inputs read together: its cache is a
    /// share of what all keep (see [`SHARED_BYTES`]).
    pub fn shared_among(
        conn: &'c Connection,
        page_reader: bool,
        inputs: usize,
    ) -> Option<std::rc::Rc<Pager<'c>>> {
        let mut pager = page_reader
            .then(|| Pager::new(conn).ok().flatten())
            .flatten()?;
        let bytes = CACHE_BYTES.min(SHARED_BYTES / inputs.max(1));
        let page_size = pager.page_size;
        pager.cache = RefCell::new(Cache::new(page_size, bytes));
        Some(std::rc::Rc::new(pager))
    }

    /// The pager of `conn`'s main database; `None` where pages cannot be read directly (no file
    /// pointer, a WAL-mode or non-UTF-8 database: see the module doc).
    pub fn new(conn: &'c Connection) -> Result<Option<Pager<'c>>, Damaged> {
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: `conn` is open; the file control writes one pointer into `file`.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                conn.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&mut file as *mut *mut ffi::sqlite3_file).cast(),
            )
        };
        // SAFETY: a non-null file of an open connection has its methods set (or null: not open).
        let methods = if rc == ffi::SQLITE_OK && !file.is_null() {
            unsafe { (*file).pMethods }
        } else {
            std::ptr::null()
        };
        // SAFETY: checked non-null above.
        let Some(read) = (!methods.is_null())
            .then(|| unsafe { (*methods).xRead })
            .flatten()
        else {
            return Ok(None);
        };
        // SAFETY: checked non-null above.
        let size_fn = unsafe { (*methods).xFileSize };
        let mut pager = Pager {
            conn,
            tables: RefCell::new(FastMap::default()),
            file,
            read,
            page_size: 0,
            usable: 0,
            pages: 0,
            cache: RefCell::new(Cache::default()),
            #[cfg(not(target_family = "wasm"))]
            map: None,
        };
        let mut head = [0u8; 100];
        pager.read_at(0, &mut head).map_err(|()| {
            Damaged("the database header (its first 100 bytes) cannot be read".into())
        })?;
        // Bytes 18 and 19: file format write/read versions, 1 (rollback journal) or 2 (WAL: rows
        // may still be in the -wal file, which only SQLite reads).
        if head[18] != 1 || head[19] != 1 {
            return Ok(None);
        }
        // Bytes 56–59: text encoding, 1 = UTF-8 (the readers take text as UTF-8 bytes).
        if be32(&head, 56) != 1 {
            return Ok(None);
        }
        let page_size = match u16::from_be_bytes([head[16], head[17]]) {
            1 => 65536,
            n => usize::from(n),
        };
        if !page_size.is_power_of_two() || !(512..=65536).contains(&page_size) {
            return Err(Damaged(format!(
                "the header gives a page size of {page_size} bytes"
            )));
        }
        let usable = page_size - usize::from(head[20]);
        if usable < 480 {
            return Err(Damaged(format!(
                "the header reserves {} of every page's {page_size} bytes",
                head[20]
            )));
        }
        // The page count in the header holds when the change counter (24–27) equals the
        // "version valid for" number (92–95); otherwise the file's size tells, as SQLite does.
        let in_header = be32(&head, 28);
        let pages = if in_header > 0 && be32(&head, 24) == be32(&head, 92) {
            in_header
        } else {
            let mut size: i64 = 0;
            // SAFETY: the connection's open file; writes one integer.
            let rc = match size_fn {
                Some(f) => unsafe { f(file, &mut size) },
                None => ffi::SQLITE_ERROR,
            };
            if rc != ffi::SQLITE_OK {
                return Ok(None);
            }
            u32::try_from(size / page_size as i64).unwrap_or(u32::MAX)
        };
        pager.page_size = page_size;
        pager.usable = usable;
        pager.pages = pages;
        pager.cache = RefCell::new(Cache::new(page_size, CACHE_BYTES));
        #[cfg(not(target_family = "wasm"))]
        {
            pager.map = (pages as usize)
                .checked_mul(page_size)
                .and_then(|bytes| mapping_of(conn, &head, bytes));
        }
        Ok(Some(pager))
    }

    /// The table `name` as [`Table::read`] gives it, looked up once per pager.
    pub fn table(&self, name: &str) -> rusqlite::Result<Option<Arc<Table>>> {
        if let Some(t) = self.tables.borrow().get(name) {
            return Ok(t.clone());
        }
        let t = Table::read(self.conn, name)?.map(Arc::new);
        self.tables.borrow_mut().insert(name.to_owned(), t.clone());
        Ok(t)
    }

    /// Forgets the tables looked up so far (a later [`table`](Self::table) looks again).
    pub fn forget_tables(&self) {
        *self.tables.borrow_mut() = FastMap::default();
    }

    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Bytes of a page that hold the B-tree (the page size less the reserved bytes).
    pub fn usable(&self) -> usize {
        self.usable
    }

    pub fn page_count(&self) -> u32 {
        self.pages
    }

    /// Copies page `n` (1-based) into `out` (resized to the page size), through the cache (a
    /// fetch by rowid range goes back to the leaf the previous batch ended in).
    pub fn copy_page(&self, n: u32, out: &mut Vec<u8>) -> Result<(), Damaged> {
        out.resize(self.page_size, 0);
        self.with_page(n, |p| out.copy_from_slice(p))
    }

    /// Runs `f` over page `n` (1-based): in place where the file is mapped, else read through
    /// the cache.
    pub fn with_page<R>(&self, n: u32, f: impl FnOnce(&[u8]) -> R) -> Result<R, Damaged> {
        #[cfg(not(target_family = "wasm"))]
        if let Some(map) = &self.map {
            self.check_number(n)?;
            let at = (n - 1) as usize * self.page_size;
            let r = f(&map.bytes()[at..at + self.page_size]);
            // Asked after the read: a page that vanished during it read as zeros.
            if map.shrank() {
                return Err(Damaged(format!(
                    "the file shrank while it was read (page {n} is gone: truncated by another program?)"
                )));
            }
            return Ok(r);
        }
        let mut cache = self.cache.borrow_mut();
        let page = cache.get(n, |buf| self.load(n, buf))?;
        Ok(f(page))
    }

    fn check_number(&self, n: u32) -> Result<(), Damaged> {
        if n == 0 || n > self.pages {
            return Err(Damaged(format!(
                "a B-tree points to page {n}, outside the file's {} pages",
                self.pages
            )));
        }
        Ok(())
    }

    fn load(&self, n: u32, buf: &mut [u8]) -> Result<(), Damaged> {
        self.check_number(n)?;
        let offset = u64::from(n - 1) * self.page_size as u64;
        self.read_at(offset, buf).map_err(|()| {
            Damaged(format!(
                "page {n} cannot be read: the file ends before it (truncated?)"
            ))
        })
    }

    /// Reads `buf.len()` bytes at `offset` through the file's own read method.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), ()> {
        let (Ok(len), Ok(offset)) = (c_int::try_from(buf.len()), i64::try_from(offset)) else {
            return Err(());
        };
        // SAFETY: the connection's open file (see `new`), a buffer of `len` bytes.
        let rc = unsafe { (self.read)(self.file, buf.as_mut_ptr().cast(), len, offset) };
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// The mapping of `conn`'s file, where the program maps it, holds the `bytes` the header gives
/// and starts with the `head` read through the connection (the file the name leads to now is the
/// one SQLite opened).
#[cfg(not(target_family = "wasm"))]
fn mapping_of(
    conn: &Connection,
    head: &[u8; 100],
    bytes: usize,
) -> Option<Arc<dyn super::MappedFile>> {
    let path = conn.path().filter(|p| !p.is_empty())?;
    let map = super::map_file(std::path::Path::new(path))?;
    let b = map.bytes();
    (b.len() >= bytes.max(head.len()) && b[..head.len()] == head[..] && !map.shrank())
        .then_some(map)
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Pages by number, evicted in CLOCK order; slots are allocated as they are first needed.
#[derive(Default)]
struct Cache {
    page_size: usize,
    capacity: usize,
    data: Vec<u8>,
    slot_of: FastMap<u32, usize>,
    /// Per slot: the page it holds, and whether it was used since the hand last passed.
    page_in: Vec<u32>,
    referenced: Vec<bool>,
    hand: usize,
}

impl Cache {
    fn new(page_size: usize, bytes: usize) -> Cache {
        let least = if bytes < CACHE_BYTES { LEAST_PAGES } else { 16 };
        Cache {
            page_size,
            capacity: (bytes / page_size).max(least),
            ..Cache::default()
        }
    }

    fn get(
        &mut self,
        n: u32,
        load: impl FnOnce(&mut [u8]) -> Result<(), Damaged>,
    ) -> Result<&[u8], Damaged> {
        let ps = self.page_size;
        if let Some(&s) = self.slot_of.get(&n) {
            self.referenced[s] = true;
            return Ok(&self.data[s * ps..(s + 1) * ps]);
        }
        let s = if self.page_in.len() < self.capacity {
            if self.data.is_empty() {
                // All slots at once, zeroed by the allocator: a large zeroed allocation is fresh
                // pages from the system, touched only as slots fill (growing it slot by slot
                // copied the cache at every doubling and wrote every page twice).
                self.data = vec![0; self.capacity * ps];
            }
            self.page_in.push(0);
            self.referenced.push(false);
            self.page_in.len() - 1
        } else {
            while self.referenced[self.hand] {
                self.referenced[self.hand] = false;
                self.hand = (self.hand + 1) % self.capacity;
            }
            let s = self.hand;
            self.hand = (self.hand + 1) % self.capacity;
            self.slot_of.remove(&self.page_in[s]);
            self.page_in[s] = 0;
            s
        };
        load(&mut self.data[s * ps..(s + 1) * ps])?;
        self.page_in[s] = n;
        self.referenced[s] = true;
        self.slot_of.insert(n, s);
        Ok(&self.data[s * ps..(s + 1) * ps])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_used_pages_and_evicts_in_clock_order() {
        let mut c = Cache {
            page_size: 4,
            capacity: 2,
            ..Cache::default()
        };
        let mut loads = Vec::new();
        for n in [1, 2, 1, 3, 3] {
            // 1 and 3 come back from the cache the second time; 3 evicts one of the others.
            let page = c
                .get(n, |b| {
                    loads.push(n);
                    b.fill(n as u8);
                    Ok(())
                })
                .unwrap();
            assert_eq!(page, [n as u8; 4]);
        }
        assert_eq!(c.slot_of.len(), 2);
        assert_eq!(loads, [1, 2, 3]);
        // A failed load leaves no page behind.
        let failed = c.get(9, |_| Err(Damaged("no".into())));
        assert!(failed.is_err());
        assert!(!c.slot_of.contains_key(&9));
        assert!(c.page_in.iter().all(|&p| p != 9));
    }
}
