//! The output side of the JSON writer: events appended to a buffer, one a line, handed to the
//! destination 64 KiB at a time.

use std::io::Write;

use super::json::{push_str, push_u64, push_us};
use crate::error::{Error, Result};
use crate::model::Ns;

/// Bytes gathered before a write to the destination (as the .prv writer does: a `dyn Write`
/// call per event would cost more than formatting it).
const CHUNK: usize = 64 * 1024;

/// What the file calls itself in errors.
pub const WHAT: &str = "the JSON trace";

/// An event's name: an interned name already quoted, or a fixed text to quote.
pub enum Name<'a> {
    Quoted(&'a str),
    Plain(&'a str),
}

pub struct JsonOut<'w> {
    dest: Box<dyn Write + 'w>,
    pub buf: Vec<u8>,
    /// Events written so far (the first one has no comma before it).
    pub events: u64,
}

impl<'w> JsonOut<'w> {
    pub fn new(dest: Box<dyn Write + 'w>) -> Self {
        JsonOut {
            dest,
            buf: Vec::with_capacity(CHUNK + 4096),
            events: 0,
        }
    }

    /// Starts an event: `{"ph":PH,"cat":CAT,"name":NAME,"pid":P,"tid":T,"ts":TS` (no `cat` when
    /// empty); the caller adds its other fields and closes it.
    pub fn head(&mut self, ph: &str, cat: &str, name: Name, pid: u32, tid: u64, ts: Ns) {
        if self.events > 0 {
            self.buf.extend_from_slice(b",\n");
        }
        self.events += 1;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"ph\":\"");
        b.extend_from_slice(ph.as_bytes());
        if !cat.is_empty() {
            b.extend_from_slice(b"\",\"cat\":\"");
            b.extend_from_slice(cat.as_bytes());
        }
        b.extend_from_slice(b"\",\"name\":");
        match name {
            Name::Quoted(q) => b.extend_from_slice(q.as_bytes()),
            Name::Plain(s) => push_str(b, s),
        }
        b.extend_from_slice(b",\"pid\":");
        push_u64(b, u64::from(pid));
        b.extend_from_slice(b",\"tid\":");
        push_u64(b, tid);
        b.extend_from_slice(b",\"ts\":");
        push_us(b, ts);
    }

    /// `,"KEY":` then the duration in µs.
    pub fn us_field(&mut self, key: &str, ns: Ns) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        push_us(&mut self.buf, ns);
    }

    /// A metadata event naming or ordering a process or thread (`"ph":"M"`).
    pub fn meta(&mut self, what: &str, pid: u32, tid: u64, name: Option<&str>, sort: u64) {
        match name {
            Some(n) => {
                self.head("M", "", Name::Plain(what), pid, tid, 0);
                self.buf.extend_from_slice(b",\"args\":{\"name\":");
                push_str(&mut self.buf, n);
            }
            None => {
                self.head("M", "", Name::Plain(what), pid, tid, 0);
                self.buf.extend_from_slice(b",\"args\":{\"sort_index\":");
                push_u64(&mut self.buf, sort);
            }
        }
        self.buf.extend_from_slice(b"}}");
    }

    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Hands the gathered events to the destination once there are enough of them.
    pub fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= CHUNK {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<()> {
        let written = self.dest.write_all(&self.buf);
        self.buf.clear();
        written.map_err(|e| Error::write(WHAT, e))
    }

    /// Writes everything and flushes the destination.
    pub fn finish(&mut self) -> Result<()> {
        self.flush_buf()?;
        self.dest.flush().map_err(|e| Error::write(WHAT, e))
    }
}
