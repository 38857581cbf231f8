//! Writing one part: the records of one share of the inputs (pipeline/share.rs) into a part
//! file (format.rs), as they are read.

use std::io::Write;

use super::format::{
    write_frame, write_preamble, write_trailer, Fnv, Item, Preamble, FRAME_RECORDS,
};
use crate::error::{Error, Result};
use crate::nsys::Export;
use crate::options::Options;
use crate::pipeline::{share_range, Header, ShareReader, ShareSummary};

/// Which part: K of N, K from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartOf {
    pub part: usize,
    pub parts: usize,
}

impl std::str::FromStr for PartOf {
    type Err = String;

    /// `K/N`, 1 ≤ K ≤ N.
    fn from_str(s: &str) -> std::result::Result<PartOf, String> {
        let bad = || format!("--part takes K/N with 1 ≤ K ≤ N (the K-th of N parts), not '{s}'");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (part, parts): (usize, usize) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if part == 0 || part > parts {
            return Err(bad());
        }
        Ok(PartOf { part, parts })
    }
}

/// What writing a part found.
pub struct PartWritten {
    /// The inputs the part read.
    pub share: Vec<String>,
    pub plan_warnings: Vec<String>,
    pub read: ShareSummary,
}

/// Converts part `which` of `exports` into `out`: every input discovered, the share's inputs
/// read, their records written in the whole conversion's order.
pub fn write_part(
    exports: &[Export],
    opts: &Options,
    which: PartOf,
    out: &mut impl Write,
) -> Result<PartWritten> {
    let share = share_range(which.part - 1, which.parts, exports.len());
    let (reader, start) = ShareReader::open(exports, opts, share.clone())?;
    let labels = |r: std::ops::Range<usize>| -> Vec<String> {
        exports[r].iter().map(|ex| ex.label.clone()).collect()
    };
    let preamble = Preamble {
        run: fingerprint(exports, opts, &start.header)?,
        part: which.part,
        parts: which.parts,
        inputs: labels(0..exports.len()),
        share: labels(share),
        header: start.header,
        plan_warnings: start.plan_warnings,
        first_names: start.first_names,
        fed_names: start.fed_names,
    };
    let read = write_share(reader, &preamble, out, &mut |_| Ok(()))?;
    Ok(PartWritten {
        share: preamble.share,
        plan_warnings: preamble.plan_warnings,
        read,
    })
}

/// Writes a part: `preamble`, `reader`'s records in frames, then what reading found. `tick`
/// is told how many records were written, frame by frame (an `Err` stops the writing).
pub(super) fn write_share(
    mut reader: ShareReader,
    preamble: &Preamble,
    out: &mut impl Write,
    tick: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<ShareSummary> {
    write_preamble(out, preamble).map_err(|e| Error::write("a part", e))?;
    let mut items: Vec<Item> = Vec::with_capacity(FRAME_RECORDS + 8);
    let mut records = 0;
    while let Some(r) = reader.next_record()? {
        if !r.after_previous.is_empty() {
            items.push(Item::AfterPrevious(r.after_previous));
        }
        if !r.with.is_empty() {
            items.push(Item::With(r.with));
        }
        items.push(Item::Record(r.record));
        records += 1;
        if records % FRAME_RECORDS == 0 {
            write_frame(out, &items)?;
            items.clear();
            tick(records as u64)?;
        }
    }
    if !items.is_empty() {
        write_frame(out, &items)?;
    }
    write_frame(out, &[])?;
    let read = reader.finish();
    write_trailer(out, &read).map_err(|e| Error::write("a part", e))?;
    Ok(read)
}

/// The conversion's fingerprint, which every part of it computes alike: its inputs (file names
/// and sizes, in order), the options that change its records or their cut, and its trace. Not
/// the inputs' paths, which parts may spell differently (the trace does not hold them).
fn fingerprint(exports: &[Export], opts: &Options, header: &Header) -> Result<String> {
    // Destructured, so that a new option must be sorted in or out here.
    let Options {
        families,
        align,
        chop,
        min_duration,
        read_order: _,
        read_ahead: _,
        read_pages: _,
        read_helpers: _,
        read_groups: _,
        nvtx_payloads,
    } = opts;
    let mut hash = Fnv::default();
    hash.add(&(exports.len() as u64).to_le_bytes());
    for ex in exports {
        hash.add(file_name(&ex.label).as_bytes());
        hash.add(&ex.file_bytes().to_le_bytes());
    }
    hash.add(&json("options", &(families, align, chop, min_duration))?);
    // Hashed only where given, so that conversions without one keep their fingerprints; its
    // domains only, as parts may spell the file's path differently.
    if let Some(config) = nvtx_payloads {
        hash.add(&json("options", &config.domains)?);
    }
    let mut trace = header.trace.clone();
    for source in &mut trace.sources {
        source.label.clear();
    }
    hash.add(&json("trace", &(&trace, &header.cut))?);
    Ok(hash.hex())
}

/// The file name of an input's path.
pub fn file_name(path: &str) -> &str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

/// `v` as JSON, for the fingerprint.
fn json(what: &str, v: &impl serde::Serialize) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| Error::Write {
        what: format!("a part's {what}"),
        detail: e.to_string(),
    })
}
