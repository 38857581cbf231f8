//! An open cursor: one family's rows of one export, from whichever source the engine chose,
//! decoded into records by the family's module, its next record kept ahead for the merge.

use crate::engine::partitioned::{NextRow, OrderedRows, PartitionedRows};
use crate::engine::row::Fields;
use crate::engine::sort_keys::KeyOrderRows;
use crate::engine::sql_rows::SqlRows;
use crate::engine::block::RowView;
use crate::error::{Error, Result};
use crate::model::{Names, Record};

use super::context::SourceCx;
use super::links::{CallTap, FedLinks, LinkJoin};
use super::query::CursorKind;

/// Where a cursor's rows come from.
pub enum RowSource<'s> {
    /// One SQL query that sorts and gives the lookahead itself (`ORDER BY`, `LEAD`).
    Sql(SqlRows<'s>),
    /// Per-resource runs already in time order, merged in Rust (see engine/partitioned.rs): the host
    /// calls' reader, whose calls may feed the link join ([`Cursor::tap`]).
    Partitioned(Box<PartitionedRows<'s>>),
    /// The same for a cursor that feeds nothing else, read here or on a helper thread.
    Ordered(Box<dyn OrderedRows + 's>),
    /// The sort-free API-to-GPU link join.
    Links(Box<LinkJoin<'s>>),
    /// The same join fed with the calls the host cursor reads (the reader passes them on).
    FedLinks(Box<FedLinks<'s>>),
    /// Rows fetched by rowid in the order of their sorted keys.
    Keyed(Box<KeyOrderRows<'s>>),
}

/// An open cursor with its next record decoded ahead (the merge compares heads).
pub struct Cursor<'s> {
    pub kind: CursorKind,
    pub source: usize,
    pub what: &'static str,
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
                RowSource::Sql(rows) => {
                    let (kind, source) = (self.kind, self.source);
                    match rows.next_with(|row| decode(kind, row, source, cxs, names)) {
                        Ok(Some(rec)) => rec?,
                        Ok(None) => return Ok(()),
                        Err(e) => return Err(Error::read(&cxs[self.source].file, self.what, e)),
                    }
                }
                RowSource::Partitioned(p) => {
                    let Some(next) = p.next_row(&cxs[self.source].file)? else {
                        return Ok(());
                    };
                    if let Some(tap) = &mut self.tap {
                        tap.take(p, next.start, next.partition, next.aux);
                    }
                    decode_next(self.kind, &p.row(next.row), &next, self.source, cxs, names)?
                }
                RowSource::Ordered(p) => {
                    let Some(next) = p.next_row(&cxs[self.source].file)? else {
                        return Ok(());
                    };
                    decode_next(self.kind, &p.row(next.row), &next, self.source, cxs, names)?
                }
                RowSource::Keyed(k) => {
                    let Some(row) = k.next_row(&cxs[self.source].file)? else {
                        return Ok(());
                    };
                    let rec = decode(self.kind, &row, self.source, cxs, names)?;
                    k.recycle(row);
                    rec
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
    }
}

/// Decodes a row a partitioned reader handed out, with what the SQL path's `LEAD` gives.
#[inline]
fn decode_next(
    kind: CursorKind,
    row: &RowView,
    next: &NextRow,
    source: usize,
    cxs: &mut [SourceCx],
    names: &mut Names,
) -> Result<Option<Record>> {
    let mut rec = decode(kind, row, source, cxs, names)?;
    if let Some(r) = &mut rec {
        set_lookahead(r, next.start, next.next_start, &cxs[source]);
    }
    Ok(rec)
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
