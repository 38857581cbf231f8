//! A part file: one line naming the format and the prvsight that wrote it, one line of JSON
//! (the [`Preamble`]: which part of which conversion, the trace and the names known before the
//! first record), the records in frames (a little-endian u32 length and CRC-32, then postcard's
//! encoding of a list of [`Item`]s), a frame of length 0, and one line of JSON (the
//! [`Trailer`]).

use std::io::{BufRead, Read, Write};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Record;
use crate::pipeline::{Header, ShareSummary};

/// The first line's first words, then the format's number and the writer's version.
const MAGIC: &str = "prvsight part";
/// Changes with the layout of a part, whatever the version.
pub const FORMAT: u32 = 1;
/// The prvsight that writes parts here (a merge takes only its own).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Records a frame holds at most: a merge holds one frame per part.
pub const FRAME_RECORDS: usize = 256;
/// The largest frame a merge accepts (a damaged length must not allocate gigabytes).
const MOST_FRAME_BYTES: usize = 64 << 20;

/// Which part of which conversion a part is, and what its records need before the first.
#[derive(Serialize, Deserialize)]
pub struct Preamble {
    /// Hex digits of the conversion's fingerprint: its inputs (names and sizes, in order), the
    /// options that change its records, its trace and cut (see [`fingerprint`]).
    pub run: String,
    /// K of K/N, from 1.
    pub part: usize,
    pub parts: usize,
    /// Every input's name, in order, and those this part read.
    pub inputs: Vec<String>,
    pub share: Vec<String>,
    pub header: Header,
    pub plan_warnings: Vec<String>,
    pub first_names: Vec<String>,
    pub fed_names: Vec<String>,
}

/// What reading the part's inputs found besides the records.
pub type Trailer = ShareSummary;

/// A record of a frame, or the names interned before it (see pipeline/share.rs).
#[derive(Serialize, Deserialize)]
pub enum Item {
    AfterPrevious(Vec<String>),
    With(Vec<String>),
    Record(Record),
}

/// 64-bit FNV-1a: a fingerprint that is the same on every machine and build.
#[derive(Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds `bytes`, then their length (so that two pieces never read as one).
    pub fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain(&(bytes.len() as u64).to_le_bytes()) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

/// Writes the first line and the preamble.
pub fn write_preamble(out: &mut impl Write, preamble: &Preamble) -> std::io::Result<()> {
    writeln!(out, "{MAGIC} {FORMAT} {VERSION}")?;
    serde_json::to_writer(&mut *out, preamble)?;
    out.write_all(b"\n")
}

/// Writes one frame of `items` (none: the end of the records).
pub fn write_frame(out: &mut impl Write, items: &[Item]) -> Result<()> {
    let bytes = postcard::to_allocvec(items).map_err(|e| Error::Write {
        what: "a part's records".into(),
        detail: e.to_string(),
    })?;
    let io = |e| Error::write("a part", e);
    if items.is_empty() {
        return out.write_all(&[0; 4]).map_err(io);
    }
    out.write_all(&(bytes.len() as u32).to_le_bytes())
        .map_err(io)?;
    out.write_all(&crc32fast::hash(&bytes).to_le_bytes())
        .map_err(io)?;
    out.write_all(&bytes).map_err(io)
}

/// Writes the trailer, after the last frame.
pub fn write_trailer(out: &mut impl Write, trailer: &Trailer) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, trailer)?;
    out.write_all(b"\n")
}

/// The error of part `file`'s bytes that are not what a part holds.
pub fn damaged(file: &str, why: impl std::fmt::Display) -> Error {
    Error::BadData {
        file: file.to_owned(),
        why: format!("not a whole prvsight part ({why}); write it again with `prvsight convert … --part K/N`"),
    }
}

/// Reads a line of at most 1 GiB (a preamble lists every name and object of the trace).
fn read_line(input: &mut impl BufRead, file: &str) -> Result<String> {
    let mut line = String::new();
    let read = input
        .by_ref()
        .take(1 << 30)
        .read_line(&mut line)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => damaged(file, "a line that is not UTF-8"),
            _ => Error::Unreadable {
                file: file.to_owned(),
                detail: e.to_string(),
            },
        })?;
    if read == 0 || !line.ends_with('\n') {
        return Err(damaged(file, "it ends early"));
    }
    line.pop();
    Ok(line)
}

/// Reads the first line and the preamble; refuses a file that is not a part, and a part of
/// another format or prvsight version.
pub fn read_preamble(input: &mut impl BufRead, file: &str) -> Result<Preamble> {
    let mut head = [0u8; MAGIC.len()];
    let is_part = input.read_exact(&mut head).is_ok() && head == *MAGIC.as_bytes();
    if !is_part {
        return Err(Error::BadData {
            file: file.to_owned(),
            why: "not a prvsight part (`prvsight convert … --part K/N -o PART` writes them)".into(),
        });
    }
    let first = read_line(input, file)?;
    let mut words = first.split_whitespace();
    let (format, version) = (words.next(), words.next());
    if format != Some(&FORMAT.to_string()) || version != Some(VERSION) {
        return Err(Error::BadData {
            file: file.to_owned(),
            why: format!(
                "a part written by prvsight {} (part format {}); this is prvsight {VERSION} (part \
                 format {FORMAT}): write every part again with this prvsight",
                version.unwrap_or("?"),
                format.unwrap_or("?")
            ),
        });
    }
    let json = read_line(input, file)?;
    serde_json::from_str(&json).map_err(|e| damaged(file, e))
}

/// Reads the next frame's items into `items` (cleared first); `false` at the end of the
/// records (the trailer follows).
pub fn read_frame(input: &mut impl Read, file: &str, items: &mut Vec<Item>) -> Result<bool> {
    items.clear();
    let mut len = [0u8; 4];
    input
        .read_exact(&mut len)
        .map_err(|_| damaged(file, "it ends early"))?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 {
        return Ok(false);
    }
    if len > MOST_FRAME_BYTES {
        return Err(damaged(file, format!("a frame of {len} bytes")));
    }
    let mut crc = [0u8; 4];
    let mut bytes = vec![0u8; len];
    input
        .read_exact(&mut crc)
        .and_then(|()| input.read_exact(&mut bytes))
        .map_err(|_| damaged(file, "it ends early"))?;
    if crc32fast::hash(&bytes) != u32::from_le_bytes(crc) {
        return Err(damaged(file, "a frame whose bytes changed"));
    }
    *items = postcard::from_bytes(&bytes).map_err(|e| damaged(file, e))?;
    if items.is_empty() {
        return Err(damaged(file, "an empty frame"));
    }
    Ok(true)
}

/// Reads the trailer, which must end the file.
pub fn read_trailer(input: &mut impl BufRead, file: &str) -> Result<Trailer> {
    let json = read_line(input, file)?;
    let trailer = serde_json::from_str(&json).map_err(|e| damaged(file, e))?;
    let mut rest = [0u8; 1];
    match input.read(&mut rest) {
        Ok(0) => Ok(trailer),
        _ => Err(damaged(file, "bytes after its end")),
    }
}
