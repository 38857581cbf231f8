//! Merging parts: every part of one conversion checked, then their records merged k-way by
//! (time, family rank, part) into the sinks, with the names interned in the whole conversion's
//! order (see pipeline/share.rs), one frame of each part in memory at a time.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::BufRead;

use super::format::{damaged, read_frame, read_preamble, read_trailer, Item, Preamble, Trailer};
use super::write::file_name;
use crate::error::{Error, Result};
use crate::model::{NameId, Names, Record, Sink};
use crate::pipeline::{Progress, ProgressFn, Summary};

/// A part to merge: its name in messages and its bytes.
pub struct PartInput {
    pub name: String,
    pub bytes: Box<dyn BufRead>,
}

/// One part being merged.
struct Part {
    name: String,
    bytes: Box<dyn BufRead>,
    preamble: Preamble,
    /// The rest of the frame being read.
    items: std::vec::IntoIter<Item>,
    /// Per name of the part (its id − 1): the merged trace's id.
    ids: Vec<NameId>,
    /// The next record, and the names interned as it goes out.
    head: Option<Record>,
    with: Vec<String>,
    records: u64,
    trailer: Option<Trailer>,
}

impl Part {
    /// Interns `added` (the part's next names, in its order) into `names`.
    fn intern(&mut self, names: &mut Names, added: &[String]) {
        self.ids.extend(added.iter().map(|s| names.intern(s)));
    }

    /// Reads on to the part's next record, interning the names met before it that the whole
    /// conversion interned as the record before went out; at the end, reads the trailer.
    fn advance(&mut self, names: &mut Names) -> Result<()> {
        loop {
            let Some(item) = self.items.next() else {
                let mut frame = Vec::new();
                if !read_frame(&mut self.bytes, &self.name, &mut frame)? {
                    return self.end();
                }
                self.items = frame.into_iter();
                continue;
            };
            match item {
                Item::AfterPrevious(added) => self.intern(names, &added),
                Item::With(added) => self.with.extend(added),
                Item::Record(r) => {
                    self.head = Some(r);
                    return Ok(());
                }
            }
        }
    }

    /// The end of the part's records: its trailer, whose count must be theirs.
    fn end(&mut self) -> Result<()> {
        let trailer = read_trailer(&mut self.bytes, &self.name)?;
        if trailer.records != self.records || !self.with.is_empty() {
            return Err(damaged(&self.name, "its records are not those it counts"));
        }
        self.trailer = Some(trailer);
        Ok(())
    }

    /// The head, its names given the merged trace's ids (`with` interned first).
    fn take_head(&mut self, names: &mut Names) -> Result<Record> {
        let with = std::mem::take(&mut self.with);
        self.intern(names, &with);
        let mut rec = self.head.take().expect("a part in the heap has a head");
        let ids = &self.ids;
        let known = rec.map_names(&mut |id| match id.0 {
            0 => Some(id),
            n => ids.get(n as usize - 1).copied(),
        });
        if !known {
            return Err(damaged(&self.name, "a record names a name it never gave"));
        }
        self.records += 1;
        Ok(rec)
    }
}

/// Merges `inputs`, every part of one conversion, into `sinks`: the records, names and
/// summary of the conversion the parts were cut from. Refuses parts of different conversions,
/// of other prvsight versions, a part missing or given twice.
pub fn merge(
    inputs: Vec<PartInput>,
    sinks: &mut [&mut dyn Sink],
    progress: &mut ProgressFn,
) -> Result<Summary> {
    let mut parts = open_all(inputs)?;
    let mut names = Names::new();
    let first = &parts[0].preamble.header;
    let (trace, cut) = (first.trace.clone(), first.cut.clone());
    // The names as the whole conversion interned them: each step of its start for every
    // input in turn (parts of consecutive inputs: in part order).
    for p in &mut parts {
        let added = std::mem::take(&mut p.preamble.header.names);
        p.intern(&mut names, &added);
    }
    for s in sinks.iter_mut() {
        s.set_output_cut(&cut);
    }
    for s in sinks.iter_mut() {
        s.begin(&trace, &names)?;
    }
    for p in &mut parts {
        let added = std::mem::take(&mut p.preamble.first_names);
        p.intern(&mut names, &added);
    }
    for p in &mut parts {
        let added = std::mem::take(&mut p.preamble.fed_names);
        p.intern(&mut names, &added);
    }
    let mut heap = BinaryHeap::new();
    for (k, p) in parts.iter_mut().enumerate() {
        p.advance(&mut names)?;
        if let Some(r) = &p.head {
            heap.push(Reverse((r.time(), r.family_rank(), k)));
        }
    }
    let mut done = 0u64;
    while let Some(Reverse((_, _, k))) = heap.pop() {
        let rec = parts[k].take_head(&mut names)?;
        for s in sinks.iter_mut() {
            s.record(&rec, &names)?;
        }
        parts[k].advance(&mut names)?;
        if let Some(r) = &parts[k].head {
            heap.push(Reverse((r.time(), r.family_rank(), k)));
        }
        done += 1;
        if done % 16_384 == 0 {
            ask(progress, "merging", done)?;
        }
    }
    let _ = ask(progress, "finishing", done);
    for s in sinks.iter_mut() {
        s.finish(&trace, &names)?;
    }
    Ok(summary(parts, trace))
}

/// Tells `progress` where the merge is; `Cancelled` when it answers to stop.
fn ask(progress: &mut ProgressFn, phase: &'static str, done: u64) -> Result<()> {
    let p = Progress {
        phase,
        records_done: done,
        records_estimate: 0,
    };
    if progress(&p) {
        Ok(())
    } else {
        Err(Error::Cancelled)
    }
}

/// The whole conversion's summary: the plan's warnings, then what each part's reading found
/// (its inputs' warnings and notes), in part order, which is input order.
fn summary(parts: Vec<Part>, trace: crate::model::TraceInfo) -> Summary {
    let mut s = Summary {
        trace,
        records: 0,
        counts: BTreeMap::new(),
        warnings: parts[0].preamble.plan_warnings.clone(),
        sorted_by_sql: Vec::new(),
        links_from_host_calls: Vec::new(),
        read_ahead: false,
        read_helpers: 0,
    };
    for p in parts {
        let t = p.trailer.expect("every part was read to its end");
        s.records += t.records;
        for (family, n) in t.counts {
            *s.counts.entry(family).or_insert(0) += n;
        }
        s.warnings.extend(t.warnings);
        s.sorted_by_sql.extend(t.sorted_by_sql);
        s.links_from_host_calls.extend(t.links_from_host_calls);
    }
    s
}

/// Reads every part's preamble and checks that they are the parts of one conversion, each
/// once; the parts in part order.
fn open_all(inputs: Vec<PartInput>) -> Result<Vec<Part>> {
    if inputs.is_empty() {
        return Err(Error::Usage("no part given to merge".into()));
    }
    let mut parts = Vec::with_capacity(inputs.len());
    for mut input in inputs {
        let preamble = read_preamble(&mut input.bytes, &input.name)?;
        parts.push(Part {
            name: input.name,
            bytes: input.bytes,
            preamble,
            items: Vec::new().into_iter(),
            ids: Vec::new(),
            head: None,
            with: Vec::new(),
            records: 0,
            trailer: None,
        });
    }
    check_set(&parts)?;
    parts.sort_by_key(|p| p.preamble.part);
    Ok(parts)
}

/// `Err` unless `parts` are every part of one conversion, each once.
fn check_set(parts: &[Part]) -> Result<()> {
    let first = &parts[0];
    let (of, n) = (&first.preamble, first.preamble.parts);
    for p in parts {
        let pre = &p.preamble;
        if pre.parts != n {
            return Err(Error::Usage(format!(
                "{} is part {}/{} but {} is part {}/{}: merge the parts of one `convert --part K/N` run",
                first.name, of.part, n, p.name, pre.part, pre.parts
            )));
        }
        if pre.run != of.run {
            let names = |v: &[String]| {
                v.iter()
                    .map(|p| file_name(p).to_owned())
                    .collect::<Vec<_>>()
            };
            let what = if names(&pre.inputs) != names(&of.inputs) {
                format!(
                    "converted from other inputs ({} against {})",
                    inputs_named(&of.inputs),
                    inputs_named(&pre.inputs)
                )
            } else {
                "converted from other inputs of the same names and sizes, or with other options"
                    .into()
            };
            return Err(Error::Usage(format!(
                "{} and {} are parts of different conversions, {what}: merge the parts of one `convert --part K/N` run",
                first.name, p.name
            )));
        }
    }
    let mut given: BTreeMap<usize, &str> = BTreeMap::new();
    for p in parts {
        if let Some(other) = given.insert(p.preamble.part, &p.name) {
            return Err(Error::Usage(format!(
                "part {}/{n} is given twice ({other} and {})",
                p.preamble.part, p.name
            )));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !given.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "part{} {} of this conversion {} missing: merge takes all {n} parts",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" }
        )));
    }
    Ok(())
}

/// `N inputs: A, B, …` (the first few names).
fn inputs_named(inputs: &[String]) -> String {
    let shown: Vec<&str> = inputs.iter().take(3).map(|p| file_name(p)).collect();
    let more = if inputs.len() > 3 { ", …" } else { "" };
    format!("{} inputs: {}{more}", inputs.len(), shown.join(", "))
}
