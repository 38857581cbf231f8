//! The link joins fed by the host calls' readers, made on the sinks' thread (native builds,
//! two cores): the reading thread bounds the conversion there, and the join — the GPU
//! operations read a second time, in correlation id order, and matched with the calls — was
//! a large share of its work, while the sinks' thread waited for batches. The reading thread
//! hands out, with each batch, the calls its host cursors read since the batch before (as it would have fed them to its own joins); here
//! each input's join takes them, and its links go out among the batch's records where the
//! reader's merge would have put them.
//!
//! Why the order is the reader's: the merge hands out records by (time, family rank, cursor),
//! and every link goes out at its call's start, after the call (host calls rank before links).
//! A link due before a record of the batch comes from a call read before that record went out
//! (the call went out before it), so from this batch's calls or an earlier one's: each batch's
//! calls are joined before its records are delivered, and a link is delivered before the first
//! record ranked after it. Links of one input go out in the order their join makes them, as
//! from their cursor; at one time, links of several inputs by input, as their cursors were
//! ranked (an input's cursors come after the inputs' before it), and so the links the reader
//! still makes itself (a join not fed by the host calls) rank by the input of their thread.

use super::stream::input_cx;
use super::{record_family, Plan, FAMILY_NAMES};
use crate::error::Result;
use crate::model::{Record, ThreadId};
use crate::nsys::context::SourceCx;
use crate::nsys::cursor::{CallsRead, SinksThreadJoin};
use crate::nsys::links::FedLinks;
use crate::nsys::Export;
use crate::options::{Options, ReadPages};

/// The joins the reading thread left to this thread, in its order (a call names its join by
/// index), over this thread's connections to the inputs.
pub(super) struct SinksLinks<'c> {
    joins: Vec<Join<'c>>,
    /// Per thread object: the input it belongs to (ranks links of several inputs at one time).
    source_of_thread: Vec<usize>,
    /// Links handed out, per family (by index in [`FAMILY_NAMES`]).
    pub tally: [u64; FAMILY_NAMES.len()],
}

struct Join<'c> {
    source: usize,
    cx: SourceCx<'c>,
    links: FedLinks<'c>,
}

impl<'c> SinksLinks<'c> {
    /// The joins of `joins_asked`, each over its input's connection in `exports` (this thread's).
    pub fn new(
        exports: &'c [Export],
        opts: &Options,
        plan: &Plan,
        joins_asked: Vec<SinksThreadJoin>,
    ) -> Result<SinksLinks<'c>> {
        let page_reader = opts.read_pages == ReadPages::Auto;
        let mut joins = Vec::with_capacity(joins_asked.len());
        for job in joins_asked {
            let ex = &exports[job.source];
            // What a link reads of its input: the objects of its call's thread and operation's
            // stream (nsys/links.rs).
            let cx = input_cx(ex, plan, job.source);
            joins.push(Join {
                source: job.source,
                cx,
                links: FedLinks::on_sinks_thread(
                    ex.input(),
                    &job.gpu,
                    job.ops,
                    page_reader,
                    exports.len(),
                )?,
            });
        }
        let processes = &plan.trace.objects.processes;
        let source_of_thread = (plan.trace.objects.threads.iter())
            .map(|t| processes[t.process].source)
            .collect();
        Ok(SinksLinks {
            joins,
            source_of_thread,
            tally: [0; FAMILY_NAMES.len()],
        })
    }

    /// Joins the calls the reading thread handed out with a batch (before its records).
    pub fn take(&mut self, calls: CallsRead) -> Result<()> {
        for (k, call) in calls {
            let join = &mut self.joins[k];
            join.links.take(call, &join.cx)?;
        }
        Ok(())
    }

    /// The next link that goes out before `next`, a record of the batch (`None`: the end of
    /// the records, where every link left goes out).
    pub fn next_before(&mut self, next: Option<&Record>) -> Option<Record> {
        // The first link due: by time, then input (as the merge ranked their cursors).
        let (k, _) = (self.joins.iter().enumerate())
            .filter_map(|(k, j)| j.links.peek_link().map(|l| (k, (l.time(), j.source))))
            .min_by_key(|&(_, key)| key)?;
        if let Some(r) = next {
            let link = self.joins[k].links.peek_link().expect("found above");
            let link_key = (link.time(), link.family_rank(), self.joins[k].source);
            if link_key >= (r.time(), r.family_rank(), self.ranked_source(r)) {
                return None;
            }
        }
        let link = self.joins[k].links.next_link().expect("found above");
        self.tally[record_family(&link)] += 1;
        Some(link)
    }

    /// The input a record ranks by among those of its time and family: for a link (one the
    /// reader made itself), its call's thread's; for other records it never decides (links
    /// are the only family here), so any.
    fn ranked_source(&self, r: &Record) -> usize {
        match r {
            Record::Link(l) => self.thread_source(l.from),
            _ => 0,
        }
    }

    fn thread_source(&self, t: ThreadId) -> usize {
        self.source_of_thread
            .get(t.0 as usize)
            .copied()
            .unwrap_or(usize::MAX)
    }
}
