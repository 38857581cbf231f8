//! A conversion split in two (the browser's reader and writer workers): the reading side hands
//! out the records in batches of bytes (batch.rs), the writing side feeds them to the sinks. The
//! records and names are [`run`](super::run)'s, in its order.

use serde::Serialize;

use super::plan::{plan_and_cut, Plan, Planned};
use super::{batch, report, stream, ProgressFn, Summary};
use crate::error::Result;
use crate::model::{Names, OutputCut, Sink, TraceInfo};
use crate::nsys::Export;
use crate::options::Options;

/// What a writing side apart from the reader (the browser's writer worker) needs before the first
/// record: the trace's layout, how to cut it, and the names known then.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Header {
    pub trace: TraceInfo,
    pub cut: OutputCut,
    pub names: Vec<String>,
}

/// The reading side of a conversion whose sinks run apart (the browser's reader worker): what
/// [`run`] does up to the sinks, with the records handed out in batches of bytes
/// (pipeline/batch.rs) instead of to sinks. The records and names are [`run`]'s, in its order.
pub struct SplitReader<'c> {
    reader: stream::Reader<'c>,
    plan: Plan,
    names: Names,
    /// Names already sent (the next batch carries the rest).
    sent: usize,
    estimate: u64,
}

impl<'c> SplitReader<'c> {
    /// Plans and opens every cursor; `progress` as for [`run`] (false cancels).
    pub fn open(
        exports: &'c [Export],
        opts: &Options,
        progress: &mut ProgressFn,
    ) -> Result<(SplitReader<'c>, Header)> {
        Self::open_planned(exports, opts, None, progress)
    }

    /// [`open`](Self::open), starting from `planned` as [`run_planned`] does.
    pub fn open_planned(
        exports: &'c [Export],
        opts: &Options,
        planned: Option<Planned>,
        progress: &mut ProgressFn,
    ) -> Result<(SplitReader<'c>, Header)> {
        let (plan, cut) = plan_and_cut(exports, opts, planned)?;
        let estimate = plan.discoveries.iter().map(|d| d.record_estimate).sum();
        let mut ask = || report(progress, "sorting", 0, estimate);
        let mut names = Names::new();
        let mut reader = stream::Reader::open(
            exports,
            opts,
            &plan,
            &mut names,
            crate::nsys::cursor::ReadThreads::NONE,
            &mut ask,
        )?;
        // The sinks begin with the names known now, as the one-pass conversion's do.
        let header = Header {
            trace: plan.trace.clone(),
            cut,
            names: names.since(0).to_vec(),
        };
        reader.prime(&mut names, &mut ask)?;
        let sent = header.names.len();
        Ok((
            SplitReader {
                reader,
                plan,
                names,
                sent,
                estimate,
            },
            header,
        ))
    }

    /// Rows of the selected tables (the progress's estimate of the records).
    pub fn estimate(&self) -> u64 {
        self.estimate
    }

    /// The next batch of at most `max` records, with the names interned since the last; `None`
    /// once every record was handed out.
    pub fn next_batch(&mut self, max: usize) -> Result<Option<Vec<u8>>> {
        let mut records = Vec::with_capacity(max);
        while records.len() < max && self.reader.next_into(&mut self.names, &mut records)? {}
        if records.is_empty() {
            return Ok(None);
        }
        let names = self.names.since(self.sent);
        let bytes = batch::encode(names, &records)?;
        self.sent = self.names.len();
        Ok(Some(bytes))
    }

    /// What [`run`] returns, once every batch was taken.
    pub fn finish(self) -> Summary {
        Summary::of(self.plan, self.reader.finish(), false)
    }
}

/// The writing side of a split conversion: the sinks fed from batches of bytes.
pub struct SplitWriter {
    trace: TraceInfo,
    names: Names,
    done: u64,
}

impl SplitWriter {
    /// Begins the sinks (cut as the header says).
    pub fn begin(header: Header, sinks: &mut [&mut dyn Sink]) -> Result<SplitWriter> {
        let mut names = Names::new();
        names.extend_from(&header.names);
        for s in sinks.iter_mut() {
            s.set_output_cut(&header.cut);
        }
        for s in sinks.iter_mut() {
            s.begin(&header.trace, &names)?;
        }
        Ok(SplitWriter {
            trace: header.trace,
            names,
            done: 0,
        })
    }

    /// Delivers a batch's records to the sinks; returns how many records have been delivered.
    pub fn feed(&mut self, bytes: &[u8], sinks: &mut [&mut dyn Sink]) -> Result<u64> {
        let (names, records) = batch::decode(bytes)?;
        self.names.extend_from(&names);
        for rec in &records {
            for s in sinks.iter_mut() {
                s.record(rec, &self.names)?;
            }
        }
        self.done += records.len() as u64;
        Ok(self.done)
    }

    /// Finishes the sinks.
    pub fn finish(self, sinks: &mut [&mut dyn Sink]) -> Result<()> {
        for s in sinks.iter_mut() {
            s.finish(&self.trace, &self.names)?;
        }
        Ok(())
    }
}
