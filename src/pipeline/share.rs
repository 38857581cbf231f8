//! One share of a conversion's inputs read apart (the parts of `prvsight convert --part K/N`,
//! src/parts.rs): every input is discovered, so the trace's objects, clocks and names are the
//! whole conversion's, but only the share's inputs are read. Its records come in [`run`]'s
//! order, each with the names interned around it, so that a merge of every share's records
//! by (time, family rank, share) gives [`run`]'s records, names and name ids exactly.
//!
//! Why that holds: [`run`] hands out the earliest head of all cursors (by time, family rank,
//! then cursor, the cursors ranked by input), and a share's reader the earliest of its own; a
//! cursor's records depend only on its own input (and, for MPI messages, on every input's
//! receives, which every share indexes). The earliest head over all shares is the whole
//! conversion's, and shares of consecutive inputs rank as their cursors do.
//!
//! [`run`]: super::run

use std::ops::Range;

use super::plan::{plan_share_and_cut, Plan};
use super::split::Header;
use super::stream;
use crate::error::Result;
use crate::model::{Names, OutputCut, Record};
use crate::nsys::Export;
use crate::options::Options;

/// The inputs of share `k` (from 0) of `n` over `inputs` inputs: consecutive, in input order,
/// as even as they divide (a share may be empty where there are more shares than inputs).
pub fn share_range(k: usize, n: usize, inputs: usize) -> Range<usize> {
    (k * inputs / n)..((k + 1) * inputs / n)
}

/// What a share's reader knows before its first record.
pub struct ShareStart {
    /// The trace, its cut and the names known when the sinks begin: the whole conversion's.
    pub header: Header,
    /// What the plan tells the user (every share has them all).
    pub plan_warnings: Vec<String>,
    /// Names interned as the share's cursors decoded their first records, then as the links
    /// fed by them did (the whole conversion does each step for every input in turn).
    pub first_names: Vec<String>,
    pub fed_names: Vec<String>,
}

/// A record of the share, with the names interned since the one before: as the cursor of that
/// one moved on (`after_previous`), then as this one was handed out (`with`).
pub struct ShareRecord {
    pub after_previous: Vec<String>,
    pub with: Vec<String>,
    pub record: Record,
}

/// What reading the share found besides its records.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ShareSummary {
    pub records: u64,
    pub counts: std::collections::BTreeMap<String, u64>,
    pub warnings: Vec<String>,
    pub sorted_by_sql: Vec<String>,
    pub links_from_host_calls: Vec<String>,
}

/// The reading side of one share (see the module doc), on this thread.
pub struct ShareReader<'c> {
    reader: stream::Reader<'c>,
    names: Names,
    /// Names handed out so far.
    sent: usize,
}

impl<'c> ShareReader<'c> {
    /// Plans the conversion of every input and opens the cursors of the inputs of `share`.
    pub fn open(
        exports: &'c [Export],
        opts: &Options,
        share: Range<usize>,
    ) -> Result<(ShareReader<'c>, ShareStart)> {
        let (plan, cut) = plan_share_and_cut(exports, opts, share.clone())?;
        Self::open_planned(exports, opts, &plan, cut, share)
    }

    /// Opens the cursors of the inputs of `share` of a conversion planned as `plan` and cut as
    /// `cut` (the plan of every input, with the share's surveys).
    pub(crate) fn open_planned(
        exports: &'c [Export],
        opts: &Options,
        plan: &Plan,
        cut: OutputCut,
        share: Range<usize>,
    ) -> Result<(ShareReader<'c>, ShareStart)> {
        let mut names = Names::new();
        let mut ask = || Ok(());
        let mut reader = stream::Reader::open_share(
            exports,
            opts,
            plan,
            &mut names,
            crate::nsys::cursor::ReadThreads::NONE,
            &mut ask,
            share,
        )?;
        let begin = names.len();
        let fed_from = reader.prime(&mut names, &mut ask)?;
        let start = ShareStart {
            header: Header {
                trace: plan.trace.clone(),
                cut,
                names: names.since(0)[..begin].to_vec(),
            },
            plan_warnings: plan.warnings.clone(),
            first_names: names.since(begin)[..fed_from - begin].to_vec(),
            fed_names: names.since(fed_from).to_vec(),
        };
        let sent = names.len();
        Ok((
            ShareReader {
                reader,
                names,
                sent,
            },
            start,
        ))
    }

    /// The share's next record in [`run`](super::run)'s order; `None` once all were read.
    pub fn next_record(&mut self) -> Result<Option<ShareRecord>> {
        let mut one = Vec::with_capacity(1);
        let Some(moved_on) = self.reader.next_into_marked(&mut self.names, &mut one)? else {
            return Ok(None);
        };
        let after_previous = self.names.since(self.sent)[..moved_on - self.sent].to_vec();
        let with = self.names.since(moved_on).to_vec();
        self.sent = self.names.len();
        let record = one.pop().expect("a record was handed out");
        Ok(Some(ShareRecord {
            after_previous,
            with,
            record,
        }))
    }

    /// What reading the share found.
    pub fn finish(self) -> ShareSummary {
        let read = self.reader.finish();
        ShareSummary {
            records: read.records,
            counts: (read.counts.into_iter())
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            warnings: read.warnings,
            sorted_by_sql: read.sorted_by_sql,
            links_from_host_calls: read.links_from_host_calls,
        }
    }
}
