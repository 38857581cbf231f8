//! The CLI's small inputs read through a memory map of their file (Linux): one mapping per file,
//! shared by every pager of the process. Why: `pread` costs a system call and a copy per page,
//! for each connection; mapped, the page cache's own pages are read in place. It lives here, not
//! in the library, because it takes over the process-wide `SIGBUS`: the program's choice
//! ([`enable`], given to the library as `prvsight::sqlfile::set_map_file`).
//!
//! Two limits make it safe:
//! * At most [`MAPPED_MAX`] bytes are mapped at once, over all inputs (mapped pages count in the
//!   resident memory, which must not grow with the inputs); other files are read with `pread`.
//! * A file truncated while mapped would kill the process with `SIGBUS`. The `SIGBUS` handler
//!   (installed with the first mapping) puts a page of zeros in place and marks the mapping,
//!   which the pager checks after every read ([`FileMap::shrank`]); as the tail of the last page
//!   reads as zeros without a fault, a conversion also checks the size when its reading is done
//!   ([`FileMap::unchanged`]). A `SIGBUS` elsewhere goes to the previous handler.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use prvsight::sqlfile::MappedFile;

/// The most bytes mapped at once, over all files (see the module doc): the peak resident memory
/// grows by at most this.
pub const MAPPED_MAX: u64 = 64 << 20;

/// Lets the library's pagers read small inputs through a memory map, with the `SIGBUS` handler
/// that the first mapping installs.
pub fn enable() {
    prvsight::sqlfile::set_map_file(|path| FileMap::of(path).map(|m| m as Arc<dyn MappedFile>));
}

/// Mappings that can be live at once (the handler looks them up without a lock).
const SLOTS: usize = 16;

/// A live mapping's address range as the `SIGBUS` handler sees it, and its mark.
struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    shrank: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    shrank: AtomicBool::new(false),
};
static LIVE: [Slot; SLOTS] = [FREE; SLOTS];

/// Which file a mapping holds: device, inode, size and modification time.
type FileId = (u64, u64, u64, i64, i64);

/// The mappings of the process, by file (weak: a mapping lives as long as a pager holds it).
static MAPS: Mutex<Vec<(FileId, Weak<FileMap>)>> = Mutex::new(Vec::new());

/// A file's bytes mapped read-only.
pub struct FileMap {
    ptr: *const u8,
    len: usize,
    slot: usize,
    /// The file, open for [`unchanged`](Self::unchanged) (a name may lead elsewhere by then).
    file: std::fs::File,
}

// SAFETY: the mapping is read-only and lives until drop; the handler only replaces pages with
// zeros (never unmaps), so a slice of it stays valid on any thread.
unsafe impl Send for FileMap {}
// SAFETY: as for Send: shared access only reads the mapping and atomics.
unsafe impl Sync for FileMap {}

impl FileMap {
    /// The mapping of the file at `path`, shared with the other pagers of the process; `None`
    /// where the file is empty, cannot be opened or mapped, or would take the bytes mapped over
    /// [`MAPPED_MAX`].
    pub fn of(path: &Path) -> Option<Arc<FileMap>> {
        let file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() == 0 || meta.len() > MAPPED_MAX {
            return None;
        }
        let id: FileId = (
            meta.dev(),
            meta.ino(),
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec(),
        );
        let mut maps = MAPS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        maps.retain(|(_, m)| m.strong_count() > 0);
        if let Some(m) = maps
            .iter()
            .find(|(i, _)| *i == id)
            .and_then(|(_, m)| m.upgrade())
        {
            return Some(m);
        }
        let live: u64 = (maps.iter())
            .filter_map(|(_, m)| m.upgrade())
            .map(|m| m.len as u64)
            .sum();
        if live + meta.len() > MAPPED_MAX {
            return None;
        }
        let map = FileMap::new(file, meta.len() as usize)?;
        maps.push((id, Arc::downgrade(&map)));
        Some(map)
    }

    fn new(file: std::fs::File, len: usize) -> Option<Arc<FileMap>> {
        use std::os::fd::AsRawFd;
        install_handler()?;
        let slot = LIVE
            .iter()
            .position(|s| s.start.load(Ordering::Acquire) == 0)?;
        // SAFETY: a fresh read-only private mapping of an open file; checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let s = &LIVE[slot];
        // Claimed by its start (the slot was free: nothing else writes it under the map lock).
        s.shrank.store(false, Ordering::Release);
        s.len.store(len, Ordering::Release);
        s.start.store(ptr as usize, Ordering::Release);
        Some(Arc::new(FileMap {
            ptr: ptr as *const u8,
            len,
            slot,
            file,
        }))
    }
}

impl MappedFile for FileMap {
    /// The file's bytes as mapped (read them, then ask [`shrank`](Self::shrank)).
    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes mapped at `ptr` until drop. As with any map of a file, another
        // program may change them while they are read (as it may between two `pread`s): the
        // readers take them as untrusted bytes, checked as they are decoded, and a page that
        // vanished is told by `shrank` and `unchanged`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Whether a page of the file vanished since it was mapped (the file shrank): bytes read
    /// from the mapping since may be zeros instead of the file's.
    fn shrank(&self) -> bool {
        LIVE[self.slot].shrank.load(Ordering::Acquire)
    }

    /// Whether the file still holds every byte mapped: `Err` with its size now where it shrank
    /// (or can no longer be asked).
    fn unchanged(&self) -> Result<(), String> {
        let now = self.file.metadata().map(|m| m.len());
        match now {
            Ok(n) if n >= self.len as u64 && !self.shrank() => Ok(()),
            Ok(n) => Err(format!(
                "the file shrank while it was read: {} bytes, now {n} (truncated by another program?)",
                self.len
            )),
            Err(e) => Err(format!("the file can no longer be asked for its size: {e}")),
        }
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        let s = &LIVE[self.slot];
        s.start.store(0, Ordering::Release);
        // SAFETY: the mapping made in `new`, no longer lent out (the last `Arc` is gone).
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// The `SIGBUS` action before ours, which takes the faults outside our mappings.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// Installs the `SIGBUS` handler once; `None` where it could not be (nothing is mapped then).
fn install_handler() -> Option<()> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    let ok = *INSTALLED.get_or_init(|| {
        // SAFETY: plain libc calls on zeroed, then filled, sigaction structs.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page <= 0 {
                return false;
            }
            PAGE.store(page as usize, Ordering::Release);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return false;
            }
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0
        }
    });
    ok.then_some(())
}

/// A page of a mapping that vanished: replaced by zeros, the mapping marked. Elsewhere: the
/// previous action restored, and the fault, met again on return, goes to it.
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Acquire);
    for s in &LIVE {
        let start = s.start.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < start + len && page > 0 {
            let at = addr & !(page - 1);
            // SAFETY: an anonymous page of zeros over a page of our own mapping (mmap is a plain
            // system call, safe in a signal handler).
            let zeros = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros != libc::MAP_FAILED {
                s.shrank.store(true, Ordering::Release);
                return;
            }
        }
    }
    if let Some(previous) = PREVIOUS.get() {
        // SAFETY: restores the action that was there before ours.
        unsafe { libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut()) };
    }
}
