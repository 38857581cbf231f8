//! The reading side of the pass: every family's cursor of every input, merged by time into one
//! stream of records handed to `out` (the sinks, directly or through the read-ahead thread).

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BinaryHeap};

use super::{record_family, Plan, FAMILY_NAMES};
use crate::error::Result;
use crate::model::{Names, Record};
use crate::nsys::context::SourceCx;
use crate::nsys::cursor::{family_queries, Cursors, ReadThreads, Tuning};
#[cfg(not(target_family = "wasm"))]
use crate::nsys::cursor::{CallsRead, SinksThreadJoin};
use crate::nsys::{mpi_p2p, Export, StringCache};
use crate::options::{Family, Options, ReadOrder, ReadPages};
use crate::FastMap;

/// What the reading side hands out, in this order: `Preparing` (any number of times), `Begin`
/// once, then every record.
pub(super) enum Step<'a> {
    /// Cursors are being opened (surveys, SQL sorts): a point where the user may cancel.
    Preparing,
    /// Every name of the trace's objects is known: the sinks can begin.
    Begin(&'a Names),
    /// The next record in time order, with the names it may refer to.
    Record(Record, &'a Names),
}

/// What reading found besides the records.
pub(super) struct ReadSummary {
    pub records: u64,
    /// Records per family name.
    pub counts: BTreeMap<&'static str, u64>,
    pub warnings: Vec<String>,
    pub sorted_by_sql: Vec<String>,
    pub links_from_host_calls: Vec<String>,
    /// Helper threads started (engine/helper_threads.rs).
    pub helpers: usize,
}

impl ReadSummary {
    /// Counts records handed out elsewhere (the links made on the sinks' thread), per family
    /// (by index in [`FAMILY_NAMES`]).
    #[cfg(not(target_family = "wasm"))]
    pub fn add(&mut self, tally: &[u64; FAMILY_NAMES.len()]) {
        for (name, &n) in FAMILY_NAMES.into_iter().zip(tally) {
            if n > 0 {
                *self.counts.entry(name).or_insert(0) += n;
                self.records += n;
            }
        }
    }
}

/// Where [`read_record_batches`] hands out a batch, with the calls read since the last one.
#[cfg(not(target_family = "wasm"))]
pub(super) type BatchOut<'b> = &'b mut dyn FnMut(Vec<Record>, CallsRead, &Names) -> Result<()>;

/// Opens every cursor of every input and merges them (k-way, by time) into `out`; `names` gets
/// every name the records refer to. An error from `out` stops the reading and is returned. The
/// reading may use `threads` besides this one.
pub(super) fn read_records(
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    names: &mut Names,
    threads: ReadThreads,
    out: &mut dyn FnMut(Step<'_>) -> Result<()>,
) -> Result<ReadSummary> {
    let mut reader = open_primed(exports, opts, plan, names, threads, out)?;
    while let Some(rec) = reader.next(names)? {
        out(Step::Record(rec, names))?;
    }
    Ok(reader.finish())
}

/// Where [`read_record_batches`] hands its records: vectors of `len` (the last one shorter)
/// to `full`, with the names they may refer to.
#[cfg(not(target_family = "wasm"))]
pub(super) struct Batches<'b> {
    pub len: usize,
    /// A batch, with the calls read since the last one for the joins left to the sinks'
    /// thread ([`ReadThreads::joins_on_sinks_thread`]).
    pub full: BatchOut<'b>,
    /// The joins left to the sinks' thread, before the first batch (where there are any).
    pub sinks_thread_joins: &'b mut dyn FnMut(Vec<SinksThreadJoin>) -> Result<()>,
}

/// [`read_records`] for the read-ahead thread: the records go out in batches, each moved once
/// from its cursor into its batch; `out` gets the steps before them.
#[cfg(not(target_family = "wasm"))]
pub(super) fn read_record_batches(
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    names: &mut Names,
    threads: ReadThreads,
    out: &mut dyn FnMut(Step<'_>) -> Result<()>,
    batches: Batches<'_>,
) -> Result<ReadSummary> {
    let len = batches.len;
    let mut reader = open_primed(exports, opts, plan, names, threads, out)?;
    let joins_asked = reader.take_sinks_thread_joins();
    if !joins_asked.is_empty() {
        (batches.sinks_thread_joins)(joins_asked)?;
    }
    loop {
        let mut batch = Vec::with_capacity(len);
        let mut read = Ok(true);
        while batch.len() < len {
            read = reader.next_into(names, &mut batch);
            if !matches!(read, Ok(true)) {
                break;
            }
        }
        let last = batch.len() < len;
        let calls = reader.take_calls();
        // Handed out even where the reading failed: the records and calls read before the
        // failure reach the sinks as in the one-thread pass, and a link join made there (above)
        // meets what that pass's join met before the failure, whose error then comes first.
        if !batch.is_empty() || !calls.is_empty() {
            (batches.full)(batch, calls, names)?;
        }
        read?;
        if last {
            return Ok(reader.finish());
        }
    }
}

/// The reader with every cursor opened and primed, `Begin` handed to `out` in between.
fn open_primed<'c>(
    exports: &'c [Export],
    opts: &Options,
    plan: &Plan,
    names: &mut Names,
    threads: ReadThreads,
    out: &mut dyn FnMut(Step<'_>) -> Result<()>,
) -> Result<Reader<'c>> {
    let mut reader = Reader::open(exports, opts, plan, names, threads, &mut || {
        out(Step::Preparing)
    })?;
    out(Step::Begin(names))?;
    reader.prime(names, &mut || out(Step::Preparing))?;
    Ok(reader)
}

/// The reading side as a source of records: every family's cursor of every input, merged by
/// time. [`read_records`] drives it for the one-thread pass and the read-ahead thread; the
/// browser's reader worker pulls its records a batch at a time.
pub(crate) struct Reader<'c> {
    cursors: Cursors<'c>,
    /// (time, family rank, cursor) of every cursor with a head, the earliest on top.
    heap: BinaryHeap<Reverse<(u64, u8, usize)>>,
    /// The cursor whose head was handed out last: it moves on at the next call (so that what
    /// it decodes follows the record handed out, as when the sinks were called in between).
    to_advance: Option<usize>,
    /// Records handed out, per family (by index in [`FAMILY_NAMES`]: a string-keyed map per
    /// record cost more).
    tally: [u64; FAMILY_NAMES.len()],
    records: u64,
}

/// Input `src`'s decoding context with what every decoder reads: its clock shift, the trace's
/// end, its strings, and its threads' and streams' objects (a link names both ends). The
/// reader adds what its other families need.
pub(super) fn input_cx<'c>(ex: &'c Export, plan: &Plan, src: usize) -> SourceCx<'c> {
    let strings = StringCache::new(&ex.conn, &ex.schema.strings_table, &ex.label);
    let mut cx = SourceCx::new(
        ex.label.clone(),
        plan.shifts[src],
        plan.trace.end_time,
        strings,
    );
    cx.threads = plan.thread_maps[src].clone();
    cx.streams = plan.stream_maps[src].clone();
    cx
}

impl<'c> Reader<'c> {
    /// Opens every cursor of every input (surveys, SQL sorts); `preparing` is called between
    /// the long steps (a point where the user may cancel).
    pub(crate) fn open(
        exports: &'c [Export],
        opts: &Options,
        plan: &Plan,
        names: &mut Names,
        threads: ReadThreads,
        preparing: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Reader<'c>> {
        let every = 0..exports.len();
        Self::open_share(exports, opts, plan, names, threads, preparing, every)
    }

    /// [`open`](Self::open), with the cursors of the inputs of `share` only (share.rs): every
    /// input's decoding context is made all the same (the names it interns, the MPI receives
    /// its messages are matched with).
    pub(crate) fn open_share(
        exports: &'c [Export],
        opts: &Options,
        plan: &Plan,
        names: &mut Names,
        threads: ReadThreads,
        preparing: &mut dyn FnMut() -> Result<()>,
        share: std::ops::Range<usize>,
    ) -> Result<Reader<'c>> {
        let mut cxs: Vec<SourceCx> = Vec::with_capacity(exports.len());
        for (src, ex) in exports.iter().enumerate() {
            let d = &plan.discoveries[src];
            let categories = d
                .categories
                .iter()
                .map(|(k, v)| (*k, names.intern(v)))
                .collect();
            let mut cx = input_cx(ex, plan, src);
            cx.domains = plan.domain_maps[src].clone();
            cx.categories = categories;
            cx.metric_threads = plan.metric_maps[src].clone();
            cx.nic_threads = plan.nic_maps[src].clone();
            cx.metric_names = d
                .metric_names
                .iter()
                .map(|(k, v)| (*k, names.intern(v)))
                .collect();
            cxs.push(cx);
        }
        // MPI messages: every input with MPI tables gets a receive index; sends look receives up.
        let rank_sources: std::sync::Arc<FastMap<u32, usize>> =
            (plan.trace.objects.processes.iter())
                .filter_map(|p| p.rank.map(|r| (r, p.source)))
                .collect::<FastMap<_, _>>()
                .into();
        let matching: Vec<bool> = (exports.iter().enumerate())
            .map(|(src, ex)| plan.families[src].contains(&Family::Mpi) && mpi_p2p::available(ex))
            .collect();
        for (src, ex) in exports.iter().enumerate() {
            cxs[src].rank_sources = rank_sources.clone();
            if matching[src] {
                mpi_p2p::prepare_matching(ex, &mut cxs[src])?;
            }
        }
        let queries = (exports.iter().enumerate())
            .filter(|(src, _)| share.contains(src))
            .flat_map(|(src, ex)| {
                let d = &plan.discoveries[src];
                family_queries(
                    ex,
                    src,
                    &plan.families[src],
                    &d.nvtx_mpi_domains,
                    matching[src],
                )
            })
            .collect();
        let tuning = Tuning {
            sort_free: opts.read_order == ReadOrder::Auto,
            page_reader: opts.read_pages == ReadPages::Auto,
            threads,
        };
        let cursors = Cursors::open(exports, cxs, queries, &plan.surveys, tuning, preparing)?;
        // The share's surveys are taken (those left were not needed); the other inputs' wait
        // for the readers of their own share (parts/groups.rs).
        for surveys in &plan.surveys[share] {
            surveys
                .lock()
                .expect("only this thread takes surveys")
                .clear();
        }
        Ok(Reader {
            cursors,
            heap: BinaryHeap::new(),
            to_advance: None,
            tally: [0; FAMILY_NAMES.len()],
            records: 0,
        })
    }

    /// Decodes every cursor's first record (which waits for SQLite's sort of its table, where
    /// one is sorted: `preparing` is called after each), then feeds the links; returns how many
    /// names there were between the two.
    pub(crate) fn prime(
        &mut self,
        names: &mut Names,
        preparing: &mut dyn FnMut() -> Result<()>,
    ) -> Result<usize> {
        for i in 0..self.cursors.len() {
            self.cursors.advance(i, names)?;
            preparing()?;
            if let Some(r) = self.cursors.head(i) {
                self.heap.push(Reverse((r.time(), r.family_rank(), i)));
            }
        }
        let first_records = names.len();
        for i in 0..self.cursors.len() {
            self.feed(i, names)?;
        }
        Ok(first_records)
    }

    /// Passes the calls cursor `i` read since the last time on to its link cursor, which
    /// rejoins the merge if it had no head (not in the heap) and now has one. Every link of a
    /// call goes out at the call's start, so none is due before the host cursor's head: the
    /// merge ranks host calls before links at one time.
    fn feed(&mut self, i: usize, names: &mut Names) -> Result<()> {
        if let Some(j) = self.cursors.feed(i, names)? {
            let r = self.cursors.head(j).expect("fed a record");
            self.heap.push(Reverse((r.time(), r.family_rank(), j)));
        }
        Ok(())
    }

    /// The next record in time order; `names` gets the names it refers to.
    pub(crate) fn next(&mut self, names: &mut Names) -> Result<Option<Record>> {
        Ok(self.next_cursor(names)?.map(|i| self.take_head(i, names)))
    }

    /// Moves the next record in time order onto the end of `batch`; false when none is left.
    /// The record is moved once, from its cursor into the batch (a record is 152 bytes, and
    /// each move a call of memmove: [`next`](Self::next), then a push, cost one more).
    pub(crate) fn next_into(&mut self, names: &mut Names, batch: &mut Vec<Record>) -> Result<bool> {
        let Some(i) = self.next_cursor(names)? else {
            return Ok(false);
        };
        batch.push(self.take_head(i, names));
        Ok(true)
    }

    /// [`next_into`](Self::next_into), telling how many names there were once the cursor
    /// handed out last had moved on, before the record handed out now was (share.rs); `None`
    /// when no record is left.
    #[cfg(not(target_family = "wasm"))]
    pub(crate) fn next_into_marked(
        &mut self,
        names: &mut Names,
        batch: &mut Vec<Record>,
    ) -> Result<Option<usize>> {
        let Some(i) = self.next_cursor(names)? else {
            return Ok(None);
        };
        let moved_on = names.len();
        batch.push(self.take_head(i, names));
        Ok(Some(moved_on))
    }

    /// The cursor whose head is the next record (the one handed out last having moved on).
    #[inline]
    fn next_cursor(&mut self, names: &mut Names) -> Result<Option<usize>> {
        if let Some(i) = self.to_advance.take() {
            self.cursors.advance(i, names)?;
            // The cursor's next record replaces it at the top (one sift, not a pop and a push).
            let mut top = self
                .heap
                .peek_mut()
                .expect("the cursor handed out was on top");
            match self.cursors.head(i) {
                Some(r) => {
                    *top = Reverse((r.time(), r.family_rank(), i));
                    drop(top);
                }
                None => drop(PeekMut::pop(top)),
            }
            self.feed(i, names)?;
        }
        Ok(self.heap.peek().map(|&Reverse((_, _, i))| i))
    }

    /// Hands out cursor `i`'s head (counted), the cursor to move on at the next call.
    #[inline]
    fn take_head(&mut self, i: usize, names: &mut Names) -> Record {
        let mut rec = self.cursors.take_head(i).expect("heap entries have a head");
        if let Record::Annotation(a) = &mut rec {
            a.resolve(names);
        }
        self.tally[record_family(&rec)] += 1;
        self.records += 1;
        self.to_advance = Some(i);
        rec
    }

    /// The link joins left to the sinks' thread ([`ReadThreads::joins_on_sinks_thread`]), taken once.
    #[cfg(not(target_family = "wasm"))]
    pub(crate) fn take_sinks_thread_joins(&mut self) -> Vec<SinksThreadJoin> {
        self.cursors.take_sinks_thread_joins()
    }

    /// The calls read for the joins left to the sinks' thread since the last time, in the
    /// order read: a join must have taken them before the records handed out since, as the
    /// links they make may go out before some of them.
    #[cfg(not(target_family = "wasm"))]
    pub(crate) fn take_calls(&mut self) -> CallsRead {
        self.cursors.take_calls()
    }

    /// What reading found besides the records.
    pub(crate) fn finish(self) -> ReadSummary {
        // The families met (none counted as 0).
        let counts: BTreeMap<&'static str, u64> = FAMILY_NAMES
            .into_iter()
            .zip(self.tally)
            .filter(|&(_, n)| n > 0)
            .collect();
        ReadSummary {
            records: self.records,
            counts,
            warnings: self.cursors.warnings(),
            sorted_by_sql: self.cursors.sorted_by_sql,
            links_from_host_calls: self.cursors.links_from_host_calls,
            helpers: self.cursors.helpers,
        }
    }
}
