//! An open cursor: one family's rows of one export, from whichever source the engine chose,
//! decoded into records by the family's module, its next record kept ahead for the merge.

use crate::engine::partitioned::{NextRow, PartitionedRows};
use crate::engine::readers::{RowSink, Rows};
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{Names, Record};

use super::context::SourceCx;
use super::links::{CallTap, FedLinks, LinkJoin};
use super::query::CursorKind;

mod early;
mod open;

pub use early::{early_scans, EarlyScans, EarlySurveys};
pub use open::{family_queries, CallsRead, ReadThreads, SinksThreadJoin, Tuning};

/// Where a cursor's rows come from.
pub enum RowSource<'s> {
    /// A table's rows in time order, from whichever reader the engine chose.
    Table(Rows<'s>),
    /// The sort-free API-to-GPU link join.
    Links(Box<LinkJoin<'s>>),
    /// The same join fed with the calls the host cursor reads (the reader passes them on).
    FedLinks(Box<FedLinks<'s>>),
}

/// An open cursor with its next record decoded ahead (the merge compares heads).
pub struct Cursor<'s> {
    pub kind: CursorKind,
    pub source: usize,
    pub rows: RowSource<'s>,
    pub head: Option<Record>,
    /// The host cursor's calls for a [`RowSource::FedLinks`] cursor, taken as rows are read.
    pub tap: Option<CallTap>,
}

impl Cursor<'_> {
    /// Decodes rows until one yields a record (some rows are skipped), or the cursor ends.
    /// (Every input's context is passed: matching an MPI send reads the receiver's input.)
    pub fn advance(&mut self, cxs: &mut [SourceCx], names: &mut Names) -> Result<()> {
        self.head = None;
        loop {
            let rec = match &mut self.rows {
                RowSource::Table(rows) => {
                    let mut decoder = Decoder {
                        kind: self.kind,
                        source: self.source,
                        cxs: &mut *cxs,
                        names: &mut *names,
                        tap: self.tap.as_mut(),
                    };
                    match rows.next_with(&mut decoder)? {
                        Some(rec) => rec?,
                        None => return Ok(()),
                    }
                }
                RowSource::Links(j) => {
                    let Some(rec) = j.next(&cxs[self.source])? else {
                        return Ok(());
                    };
                    Some(rec)
                }
                // No link now: more may come with the host cursor's next calls (the reader
                // asks again then).
                RowSource::FedLinks(j) => match j.next_link() {
                    Some(rec) => Some(rec),
                    None => return Ok(()),
                },
            };
            if rec.is_some() {
                self.head = rec;
                return Ok(());
            }
        }
    }
}

/// Decodes a cursor's rows into records, and hands a host cursor's calls to its tap.
struct Decoder<'a, 'c> {
    kind: CursorKind,
    source: usize,
    cxs: &'a mut [SourceCx<'c>],
    names: &'a mut Names,
    tap: Option<&'a mut CallTap>,
}

impl RowSink for Decoder<'_, '_> {
    type Out = Result<Option<Record>>;

    #[inline]
    fn row<R: Fields + ?Sized>(&mut self, row: &R, next: Option<&NextRow>) -> Self::Out {
        let mut rec = decode(self.kind, row, self.source, self.cxs, self.names)?;
        if let (Some(r), Some(next)) = (&mut rec, next) {
            set_lookahead(r, next.start, next.next_start, &self.cxs[self.source]);
        }
        Ok(rec)
    }

    fn placed(&mut self, runs: &mut PartitionedRows, next: &NextRow) {
        if let Some(tap) = &mut self.tap {
            tap.placed(runs, next);
        }
    }
}

/// Every cursor of a conversion, each with its input's decoding context, and what links them:
/// a host cursor's calls feed a link cursor or a join left to the sinks' thread.
pub struct Cursors<'c> {
    cxs: Vec<SourceCx<'c>>,
    list: Vec<Cursor<'c>>,
    /// Per cursor: the link cursor fed with the calls it reads (a host cursor's [`CallTap`]).
    fed: Vec<Option<usize>>,
    /// Per cursor: the join left to the sinks' thread that gets the calls it reads (its index
    /// among `sinks_thread_joins`), where [`ReadThreads::joins_on_sinks_thread`] asks so.
    to_sinks_thread: Vec<Option<usize>>,
    /// The joins left to the sinks' thread, until taken.
    sinks_thread_joins: Vec<SinksThreadJoin>,
    /// The calls read for those joins (join index, call) since they were last taken.
    calls: CallsRead,
    /// `FILE: WHAT` of every family that could have been read without SQL's sort but was not.
    pub sorted_by_sql: Vec<String>,
    /// The inputs whose link join takes the calls their host calls' reader reads.
    pub links_from_host_calls: Vec<String>,
    /// Helper threads started.
    pub helpers: usize,
}

impl<'c> Cursors<'c> {
    /// Number of cursors.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Cursor `i`'s next record, if any.
    #[inline]
    pub fn head(&self, i: usize) -> Option<&Record> {
        self.list[i].head.as_ref()
    }

    /// Takes cursor `i`'s next record (the cursor moves on at [`advance`](Self::advance)).
    #[inline]
    pub fn take_head(&mut self, i: usize) -> Option<Record> {
        self.list[i].head.take()
    }

    /// Decodes cursor `i`'s next record; `names` gets the names it refers to.
    #[inline]
    pub fn advance(&mut self, i: usize, names: &mut Names) -> Result<()> {
        self.list[i].advance(&mut self.cxs, names)
    }

    /// Passes the calls cursor `i` read since the last time on to its link cursor or to the
    /// join left to the sinks' thread; returns the link cursor where it had no record and now has one.
    pub fn feed(&mut self, i: usize, names: &mut Names) -> Result<Option<usize>> {
        if let Some(k) = self.to_sinks_thread[i] {
            let tap = self.list[i].tap.as_mut();
            let tap = tap.expect("a host cursor whose calls go to the sinks' thread has a tap");
            self.calls.extend(tap.drain().map(|call| (k, call)));
            return Ok(None);
        }
        let Some(j) = self.fed[i] else {
            return Ok(None);
        };
        let (host, links) = pair_mut(&mut self.list, i, j);
        let (Some(tap), RowSource::FedLinks(joined)) = (&mut host.tap, &mut links.rows) else {
            unreachable!("a fed pair is a host cursor with a tap and a fed link cursor");
        };
        let cx = &self.cxs[host.source];
        for call in tap.drain() {
            joined.take(call, cx)?;
        }
        if links.head.is_some() {
            return Ok(None);
        }
        links.advance(&mut self.cxs, names)?;
        Ok(links.head.is_some().then_some(j))
    }

    /// The link joins left to the sinks' thread ([`ReadThreads::joins_on_sinks_thread`]), taken once.
    pub fn take_sinks_thread_joins(&mut self) -> Vec<SinksThreadJoin> {
        std::mem::take(&mut self.sinks_thread_joins)
    }

    /// The calls read for the joins left to the sinks' thread since the last time, in the
    /// order read: a join must have taken them before the records handed out since, as the
    /// links they make may go out before some of them.
    pub fn take_calls(&mut self) -> CallsRead {
        std::mem::take(&mut self.calls)
    }

    /// Every input's warnings: `FILE: MESSAGE (N times)`.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for cx in &self.cxs {
            for (msg, n) in &cx.warnings {
                warnings.push(format!(
                    "{}: {msg} ({n} time{})",
                    cx.file,
                    if *n == 1 { "" } else { "s" }
                ));
            }
        }
        warnings
    }
}

/// Two distinct elements of a slice, both mutable.
fn pair_mut<T>(items: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b, "two distinct elements");
    if a < b {
        let (x, y) = items.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = items.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}

/// Decodes one row of a cursor of `kind` (every input's context is passed: matching an MPI send
/// reads the receiver's input).
fn decode<R: Fields + ?Sized>(
    kind: CursorKind,
    row: &R,
    source: usize,
    cxs: &mut [SourceCx],
    names: &mut Names,
) -> Result<Option<Record>> {
    let cx = &mut cxs[source];
    match kind {
        CursorKind::Gpu => super::gpu::decode(row, cx, names),
        CursorKind::Host => super::host::decode(row, cx, names),
        CursorKind::Nvtx => super::nvtx::decode(row, cx, names),
        CursorKind::Link => super::links::decode(row, cx),
        CursorKind::MpiSend => super::mpi_p2p::decode(row, source, cxs),
        CursorKind::GpuMetrics => super::gpu_metrics::decode(row, cx, names),
        CursorKind::Sched => super::sched::decode(row, cx),
        CursorKind::CudaEvent => super::cuda_events::decode(row, cx),
        CursorKind::Pthread => super::pthread::decode(row, cx),
        CursorKind::GpuMemory => super::gpu_memory::decode(row, cx),
        CursorKind::OpenMp => super::openmp::decode(row, cx),
        CursorKind::CpuCounters => super::cpu_counters::decode(row, cx),
        CursorKind::Nic => super::nic::decode(row, cx),
    }
}

/// Fills in what the SQL path's `LEAD` gives, for a record read from per-resource runs: the start
/// of the next row on the same stream or thread (raw export time), or `None` after the last one.
fn set_lookahead(rec: &mut Record, start_raw: i64, next_raw: Option<i64>, cx: &SourceCx) {
    match rec {
        Record::Gpu(op) => op.next_on_stream = next_raw.map(|n| cx.time(n)),
        Record::Host(call) => call.next_on_thread = next_raw.map(|n| cx.time(n)),
        Record::Sched(run) => run.end = super::sched::run_end(start_raw, next_raw, cx),
        _ => {}
    }
}
