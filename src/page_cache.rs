//! A large output written front to back that does not pile up in the page cache ("drop-behind"):
//! a .prv is ~3 bytes per byte of SQLite read, and fresh dirty pages are slow where the host
//! takes free memory back (virtio-balloon) and evict other users' files on a shared node.
//!
//! So, on Linux, past its first [`FIRST`] bytes, the file hands each written window of
//! [`WINDOW`] bytes to the disk as soon as it is complete (`sync_file_range` WRITE, no wait) and
//! asks the kernel to drop the pages [`LAG`] windows behind (`posix_fadvise` DONTNEED, which
//! keeps pages still dirty, so nothing waits for the disk). Both calls are advice (errors
//! ignored); a destination that is not a regular file is written as is, and the bytes written
//! are exactly the caller's.

use std::fs::File;
use std::io::{self, Write};

/// Bytes handed to the disk at a time.
pub const WINDOW: u64 = 8 << 20;
/// Windows between the one handed to the disk and the pages dropped.
pub const LAG: u64 = 2;
/// Bytes left to the page cache as in any file: a smaller output is written back after the
/// command ends, which is faster than handing it to the disk during the run.
pub const FIRST: u64 = 64 << 20;

/// A [`File`] written front to back whose written windows are sent to disk and dropped from the
/// page cache (Linux; elsewhere a plain file).
pub struct DropBehindFile {
    file: File,
    /// Whether the advice applies (a regular file on Linux).
    advise: bool,
    /// Bytes written so far.
    written: u64,
    /// Where the window not yet handed to the disk begins ([`FIRST`] at first).
    started: u64,
}

impl DropBehindFile {
    pub fn new(file: File) -> DropBehindFile {
        let advise = cfg!(target_os = "linux") && file.metadata().is_ok_and(|m| m.is_file());
        DropBehindFile {
            file,
            advise,
            written: 0,
            started: FIRST,
        }
    }

    /// Hands every completed window to the disk, and drops the pages written back behind it.
    fn advise(&mut self) {
        while self.advise && self.written >= self.started + WINDOW {
            start_write_back(&self.file, self.started, WINDOW);
            self.started += WINDOW;
            if self.started >= FIRST + LAG * WINDOW {
                // From FIRST each time: pages that were still being written at an earlier call
                // go now (the kernel skips the pages already dropped at little cost).
                drop_written(&self.file, FIRST, self.started - LAG * WINDOW - FIRST);
            }
        }
    }
}

impl Write for DropBehindFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = self.file.write(bytes)?;
        self.written += n as u64;
        self.advise();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(target_os = "linux")]
fn start_write_back(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor, plain integers; the call only advises the kernel.
    unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
}

/// Lets the kernel drop the range's pages that are written back (it keeps the others).
#[cfg(target_os = "linux")]
fn drop_written(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: a valid descriptor, plain integers; the call only advises the kernel.
    unsafe {
        libc::posix_fadvise(
            fd,
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn start_write_back(_: &File, _: u64, _: u64) {}

#[cfg(not(target_os = "linux"))]
fn drop_written(_: &File, _: u64, _: u64) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that tell their offsets apart.
    fn payload(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 251) as u8)
            .collect()
    }

    #[test]
    fn the_file_holds_exactly_what_was_written_across_windows() {
        let path =
            std::env::temp_dir().join(format!("prvsight-drop-behind-{}", std::process::id()));
        let bytes = payload((FIRST + (LAG + 3) * WINDOW) as usize + 12_345);
        let mut file = DropBehindFile::new(File::create(&path).unwrap());
        assert_eq!(file.advise, cfg!(target_os = "linux"));
        // Pieces that end inside windows and across their ends.
        for piece in bytes.chunks(WINDOW as usize / 3 + 7) {
            file.write_all(piece).unwrap();
        }
        file.flush().unwrap();
        assert_eq!(file.written, bytes.len() as u64);
        let handed_over = if file.advise { LAG + 3 } else { 0 };
        assert_eq!(
            file.started,
            FIRST + handed_over * WINDOW,
            "every complete window handed over"
        );
        drop(file);
        assert!(std::fs::read(&path).unwrap() == bytes);
        std::fs::remove_file(&path).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_destination_that_is_not_a_regular_file_is_written_as_is() {
        let mut null = DropBehindFile::new(File::options().write(true).open("/dev/null").unwrap());
        assert!(!null.advise);
        null.write_all(&payload((FIRST + 2 * WINDOW) as usize))
            .unwrap();
        assert_eq!(null.started, FIRST);
    }
}
