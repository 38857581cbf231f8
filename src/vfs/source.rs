//! Random-access byte sources the read-only VFS reads from: a native file, or (in wasm) a browser
//! `Blob`/`File` or a JS `Uint8Array` (see `crate::wasm::source`).

use std::io;

/// `Send` natively (a connection may move between threads there); nothing on wasm, where the
/// sources are JS objects and there is only one thread.
#[cfg(not(target_family = "wasm"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_family = "wasm"))]
impl<T: Send> MaybeSend for T {}
#[cfg(target_family = "wasm")]
pub trait MaybeSend {}
#[cfg(target_family = "wasm")]
impl<T> MaybeSend for T {}

/// A fixed-size, read-only byte source.
pub trait ReadAt: MaybeSend {
    /// Total size in bytes.
    fn size(&self) -> u64;
    /// Fills `buf` from `offset`. Callers never ask beyond [`ReadAt::size`].
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
}

/// A file on disk (native only), read with positioned reads so no seek state is shared.
#[cfg(not(target_family = "wasm"))]
pub struct FileSource {
    file: std::fs::File,
    size: u64,
}

#[cfg(not(target_family = "wasm"))]
impl FileSource {
    pub fn open(path: &std::path::Path) -> io::Result<FileSource> {
        let file = std::fs::File::open(path)?;
        let size = file.metadata()?.len();
        Ok(FileSource { file, size })
    }
}

#[cfg(not(target_family = "wasm"))]
impl ReadAt for FileSource {
    fn size(&self) -> u64 {
        self.size
    }

    #[cfg(unix)]
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }

    #[cfg(windows)]
    fn read_exact_at(&self, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.file.seek_read(buf, offset)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

/// Bytes already in memory (tests, small inputs).
impl ReadAt for Vec<u8> {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = self
            .get(start..start + buf.len())
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}
