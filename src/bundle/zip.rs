//! A minimal streaming zip writer (PKWARE APPNOTE 6.3): entries are written one after another
//! without seeking back, so it can write to a socket, a file or the browser's chunk stream.
//! Each entry has a local header with zero sizes and general-purpose bit 3 set; its CRC-32 and
//! sizes follow the data in a data descriptor and are repeated in the central directory.
//!
//! No zip64: every size and offset must stay under 4 GiB, and exceeding it is an error raised as
//! soon as it happens (not a corrupt archive). All timestamps are the same fixed time, so the
//! same content gives the same bytes on every machine.

use std::io::{self, Write};

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

/// How an entry's data is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// As is (for data already compressed, like a .prv.gz).
    Stored,
    /// Raw deflate.
    Deflate,
}

impl Method {
    fn code(self) -> u16 {
        match self {
            Method::Stored => 0,
            Method::Deflate => 8,
        }
    }
}

/// Where the bytes go. Besides writing, it is told which bytes are the verbatim data of a stored
/// entry, so a consumer that sees the stream (the browser page) can reuse them as a file of its
/// own without a second copy.
pub trait ZipSink: Write {
    /// The bytes written from now until [`ZipSink::stored_data_end`] are the content of `name`.
    fn stored_data_begin(&mut self, _name: &str) {}
    fn stored_data_end(&mut self) {}
}

impl ZipSink for Vec<u8> {}
impl ZipSink for std::fs::File {}
impl<W: Write> ZipSink for io::BufWriter<W> {}
impl<W: ZipSink + ?Sized> ZipSink for &mut W {
    fn stored_data_begin(&mut self, name: &str) {
        (**self).stored_data_begin(name)
    }
    fn stored_data_end(&mut self) {
        (**self).stored_data_end()
    }
}

/// Largest size or offset without zip64.
const LIMIT: u64 = u32::MAX as u64;
/// 1980-01-01 00:00:00, the DOS epoch, as (time, date).
const DOS_TIME: u16 = 0;
const DOS_DATE: u16 = (1 << 5) | 1;
/// Bit 3: sizes in a data descriptor; bit 11: names are UTF-8.
const FLAGS: u16 = 0x0008 | 0x0800;
/// Made by: Unix (3), spec 2.0, so extractors apply the permissions in `EXTERNAL_ATTRS`.
const MADE_BY: u16 = (3 << 8) | 20;
/// Regular file, rw-r--r--.
const EXTERNAL_ATTRS: u32 = 0o100644 << 16;

/// Counts bytes written through it (offsets and compressed sizes).
struct Counting<W> {
    inner: W,
    count: u64,
    limit: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.count + buf.len() as u64 > self.limit {
            return Err(too_large("the archive"));
        }
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn too_large(what: &str) -> io::Error {
    io::Error::other(format!(
        "{what} would exceed 4 GiB, the limit of a zip without zip64; download the trace files one by one instead"
    ))
}

enum Out<W: Write> {
    Plain(Counting<W>),
    Deflating(DeflateEncoder<Counting<W>>),
    /// Only while switching between the two (or after an error while switching).
    Gone,
}

struct Open {
    name: String,
    method: Method,
    header_offset: u64,
    data_offset: u64,
    crc: Crc,
    size: u64,
    /// The CRC-32 of data that went to the destination another way (see
    /// [`ZipWriter::finish_stored_elsewhere`]).
    elsewhere_crc: Option<u32>,
}

struct Done {
    name: String,
    method: Method,
    header_offset: u64,
    crc: u32,
    compressed: u64,
    size: u64,
}

pub struct ZipWriter<W: ZipSink> {
    out: Out<W>,
    open: Option<Open>,
    done: Vec<Done>,
    limit: u64,
}

impl<W: ZipSink> ZipWriter<W> {
    pub fn new(inner: W) -> ZipWriter<W> {
        Self::with_limit(inner, LIMIT)
    }

    /// A writer that refuses sizes and offsets above `limit` (tests use a small one).
    pub(crate) fn with_limit(inner: W, limit: u64) -> ZipWriter<W> {
        ZipWriter {
            out: Out::Plain(Counting {
                inner,
                count: 0,
                limit,
            }),
            open: None,
            done: Vec::new(),
            limit,
        }
    }

    /// Starts an entry; the data is then written through `Write`. Finishes any open entry first.
    pub fn start(&mut self, name: &str, method: Method) -> io::Result<()> {
        if self.open.is_some() {
            self.finish_entry()?;
        }
        if name.is_empty() || name.len() > u16::MAX as usize || name.starts_with('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad name for a zip entry: '{name}'"),
            ));
        }
        if self.done.len() >= u16::MAX as usize - 1 {
            return Err(io::Error::other("more than 65534 files in one zip"));
        }
        let w = self.plain()?;
        let header_offset = w.count;
        let mut h = Vec::with_capacity(30 + name.len());
        h.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        h.extend_from_slice(&20u16.to_le_bytes()); // version needed: 2.0
        h.extend_from_slice(&FLAGS.to_le_bytes());
        h.extend_from_slice(&method.code().to_le_bytes());
        h.extend_from_slice(&DOS_TIME.to_le_bytes());
        h.extend_from_slice(&DOS_DATE.to_le_bytes());
        h.extend_from_slice(&[0u8; 12]); // crc, sizes: in the data descriptor
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes()); // no extra field
        h.extend_from_slice(name.as_bytes());
        w.write_all(&h)?;
        let data_offset = w.count;
        if method == Method::Stored {
            w.inner.stored_data_begin(name);
        }
        self.open = Some(Open {
            name: name.to_owned(),
            method,
            header_offset,
            data_offset,
            crc: Crc::new(),
            size: 0,
            elsewhere_crc: None,
        });
        if method == Method::Deflate {
            let Out::Plain(w) = std::mem::replace(&mut self.out, Out::Gone) else {
                unreachable!("plain() checked the state");
            };
            self.out = Out::Deflating(DeflateEncoder::new(w, Compression::new(6)));
        }
        Ok(())
    }

    /// Writes a whole entry.
    pub fn add(&mut self, name: &str, method: Method, data: &[u8]) -> io::Result<()> {
        self.start(name, method)?;
        self.write_all(data)?;
        self.finish_entry()
    }

    /// Ends the open entry: flushes its compressor and writes its data descriptor.
    pub fn finish_entry(&mut self) -> io::Result<()> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        if let Out::Deflating(_) = self.out {
            let Out::Deflating(enc) = std::mem::replace(&mut self.out, Out::Gone) else {
                unreachable!("matched above");
            };
            self.out = Out::Plain(enc.finish()?);
        }
        let w = self.plain()?;
        if open.method == Method::Stored {
            w.inner.stored_data_end();
        }
        let compressed = w.count - open.data_offset;
        let crc = open.elsewhere_crc.unwrap_or_else(|| open.crc.sum());
        let mut d = Vec::with_capacity(16);
        d.extend_from_slice(&0x0807_4b50u32.to_le_bytes());
        d.extend_from_slice(&crc.to_le_bytes());
        d.extend_from_slice(&(compressed as u32).to_le_bytes());
        d.extend_from_slice(&(open.size as u32).to_le_bytes());
        w.write_all(&d)?;
        self.done.push(Done {
            name: open.name,
            method: open.method,
            header_offset: open.header_offset,
            crc,
            compressed,
            size: open.size,
        });
        Ok(())
    }

    /// Ends the open stored entry, whose data reached the destination another way than through
    /// this writer (in the browser, the .prv.gz made by the gzip worker and placed after the
    /// bytes written so far): `size` bytes of CRC-32 `crc`, counted as if written here, so the
    /// rest of the archive is the same as when they are.
    pub fn finish_stored_elsewhere(&mut self, crc: u32, size: u64) -> io::Result<()> {
        let limit = self.limit;
        let Some(open) = self.open.as_mut() else {
            return Err(io::Error::other("zip: no open entry to finish"));
        };
        if open.method != Method::Stored || open.size != 0 {
            return Err(io::Error::other(
                "zip: only an empty stored entry can have its data elsewhere",
            ));
        }
        if size > limit {
            return Err(too_large(&open.name));
        }
        open.size = size;
        open.elsewhere_crc = Some(crc);
        let w = self.plain()?;
        if w.count + size > w.limit {
            return Err(too_large("the archive"));
        }
        w.count += size;
        self.finish_entry()
    }

    /// Writes the central directory and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.finish_entry()?;
        let entries = std::mem::take(&mut self.done);
        let w = self.plain()?;
        let cd_start = w.count;
        for e in &entries {
            let mut c = Vec::with_capacity(46 + e.name.len());
            c.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            c.extend_from_slice(&MADE_BY.to_le_bytes());
            c.extend_from_slice(&20u16.to_le_bytes());
            c.extend_from_slice(&FLAGS.to_le_bytes());
            c.extend_from_slice(&e.method.code().to_le_bytes());
            c.extend_from_slice(&DOS_TIME.to_le_bytes());
            c.extend_from_slice(&DOS_DATE.to_le_bytes());
            c.extend_from_slice(&e.crc.to_le_bytes());
            c.extend_from_slice(&(e.compressed as u32).to_le_bytes());
            c.extend_from_slice(&(e.size as u32).to_le_bytes());
            c.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            c.extend_from_slice(&[0u8; 8]); // extra, comment, disk number, internal attributes
            c.extend_from_slice(&EXTERNAL_ATTRS.to_le_bytes());
            c.extend_from_slice(&(e.header_offset as u32).to_le_bytes());
            c.extend_from_slice(e.name.as_bytes());
            w.write_all(&c)?;
        }
        let cd_size = w.count - cd_start;
        let n = entries.len() as u16;
        let mut end = Vec::with_capacity(22);
        end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        end.extend_from_slice(&[0u8; 4]); // disk numbers
        end.extend_from_slice(&n.to_le_bytes());
        end.extend_from_slice(&n.to_le_bytes());
        end.extend_from_slice(&(cd_size as u32).to_le_bytes());
        end.extend_from_slice(&(cd_start as u32).to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes()); // no comment
        w.write_all(&end)?;
        w.flush()?;
        match std::mem::replace(&mut self.out, Out::Gone) {
            Out::Plain(c) => Ok(c.inner),
            _ => unreachable!("plain() checked the state"),
        }
    }

    /// The sink, for callers that talk to it between entries.
    pub fn get_mut(&mut self) -> &mut W {
        match &mut self.out {
            Out::Plain(c) => &mut c.inner,
            Out::Deflating(e) => &mut e.get_mut().inner,
            Out::Gone => panic!("zip writer used after a failed compressor finish"),
        }
    }

    fn plain(&mut self) -> io::Result<&mut Counting<W>> {
        match &mut self.out {
            Out::Plain(c) => Ok(c),
            _ => Err(io::Error::other(
                "zip writer is in a broken state after an error",
            )),
        }
    }
}

impl<W: ZipSink> Write for ZipWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(open) = self.open.as_mut() else {
            return Err(io::Error::other("zip: data written outside an entry"));
        };
        if open.size + buf.len() as u64 > self.limit {
            return Err(too_large(&open.name));
        }
        let n = match &mut self.out {
            Out::Plain(c) => c.write(buf)?,
            Out::Deflating(e) => e.write(buf)?,
            Out::Gone => return Err(io::Error::other("zip writer is in a broken state")),
        };
        open.crc.update(&buf[..n]);
        open.size += n as u64;
        Ok(n)
    }

    /// Flushes stored data only: a deflate flush would emit a sync block and make the archive
    /// depend on when callers flush; compressed data is flushed when its entry finishes.
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Out::Plain(c) => c.flush(),
            Out::Deflating(_) | Out::Gone => Ok(()),
        }
    }
}

/// The tests' strict zip reader (shared with the integration tests).
#[cfg(test)]
#[path = "../../tests/support/zipread.rs"]
mod zipread;

#[cfg(test)]
mod tests {
    use super::*;

    /// Records which bytes the writer marked as stored data.
    #[derive(Default)]
    struct Marking {
        bytes: Vec<u8>,
        marks: Vec<(String, usize, usize)>,
        open: Option<(String, usize)>,
    }
    impl Write for Marking {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.bytes.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    impl ZipSink for Marking {
        fn stored_data_begin(&mut self, name: &str) {
            self.open = Some((name.to_owned(), self.bytes.len()));
        }
        fn stored_data_end(&mut self) {
            let (n, at) = self.open.take().unwrap();
            self.marks.push((n, at, self.bytes.len()));
        }
    }

    #[test]
    fn an_entry_written_elsewhere_gives_the_same_archive_once_its_bytes_are_put_in() {
        let data: Vec<u8> = (0..70_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let whole = {
            let mut z = ZipWriter::new(Vec::new());
            z.add("t/trace.prv.gz", Method::Stored, &data).unwrap();
            z.add("t/a.pcf", Method::Deflate, b"labels").unwrap();
            z.finish().unwrap()
        };
        // The same archive with the stored data left out, then put back where it goes.
        let mut z = ZipWriter::new(Vec::new());
        z.start("t/trace.prv.gz", Method::Stored).unwrap();
        let head = std::mem::take(z.get_mut());
        let mut crc = Crc::new();
        crc.update(&data);
        z.finish_stored_elsewhere(crc.sum(), data.len() as u64)
            .unwrap();
        z.add("t/a.pcf", Method::Deflate, b"labels").unwrap();
        let tail = z.finish().unwrap();
        assert_eq!([head, data, tail].concat(), whole);
        // Only an empty stored entry can be finished so.
        let mut z = ZipWriter::new(Vec::new());
        z.start("x", Method::Deflate).unwrap();
        assert!(z.finish_stored_elsewhere(0, 1).is_err());
        let mut z = ZipWriter::with_limit(Vec::new(), 100);
        z.start("x", Method::Stored).unwrap();
        assert!(z.finish_stored_elsewhere(0, 101).is_err());
    }

    #[test]
    fn entries_round_trip_with_crc_and_descriptors() {
        let text: Vec<u8> = (0..50_000)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut z = ZipWriter::new(Marking::default());
        z.add("dir/a.txt", Method::Deflate, &text).unwrap();
        z.add("b.bin", Method::Stored, b"\x1f\x8bstored bytes")
            .unwrap();
        z.add("empty", Method::Deflate, b"").unwrap();
        z.add("ünï.txt", Method::Stored, b"utf8 name").unwrap();
        let m = z.finish().unwrap();
        let entries = zipread::read_zip(&m.bytes).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["dir/a.txt", "b.bin", "empty", "ünï.txt"]);
        assert_eq!(entries[0].data, text);
        assert_eq!(entries[0].method, 8);
        assert!(m.bytes.len() < text.len() / 3, "deflate compresses");
        assert_eq!(entries[1].data, b"\x1f\x8bstored bytes");
        assert_eq!(entries[2].data, b"");
        // The marked ranges are exactly the stored entries' bytes.
        assert_eq!(m.marks.len(), 2);
        let (n, a, b) = &m.marks[0];
        assert_eq!(
            (n.as_str(), &m.bytes[*a..*b]),
            ("b.bin", &b"\x1f\x8bstored bytes"[..])
        );
        assert_eq!(&m.bytes[m.marks[1].1..m.marks[1].2], b"utf8 name");
    }

    #[test]
    fn same_content_gives_same_bytes() {
        let make = || {
            let mut z = ZipWriter::new(Vec::new());
            z.add("x", Method::Deflate, b"hello hello hello").unwrap();
            z.finish().unwrap()
        };
        assert_eq!(make(), make());
    }

    #[test]
    fn refuses_to_grow_past_the_limit() {
        let mut z = ZipWriter::with_limit(Vec::new(), 1000);
        z.start("big", Method::Stored).unwrap();
        let e = z.write_all(&[0u8; 2000]).unwrap_err();
        assert!(e.to_string().contains("big would exceed 4 GiB"), "{e}");
        // The archive as a whole is limited too (headers count).
        let mut z = ZipWriter::with_limit(Vec::new(), 1000);
        z.add("a", Method::Stored, &[1u8; 600]).unwrap();
        let e = z.add("b", Method::Stored, &[1u8; 600]).unwrap_err();
        assert!(
            e.to_string().contains("the archive would exceed 4 GiB"),
            "{e}"
        );
    }

    #[test]
    fn rejects_bad_names_and_stray_data() {
        let mut z = ZipWriter::new(Vec::new());
        assert!(z.write_all(b"x").is_err());
        assert!(z.start("", Method::Stored).is_err());
        assert!(z.start("/abs", Method::Stored).is_err());
    }
}
