//! Per-input decoding context and the time-ordered cursor type the merge pulls from.

use std::collections::BTreeMap;
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::{Rows, Statement};

use super::discover::StreamKey;
use super::partitioned::{NextRow, OrderedRows, PartitionedRows};
use super::StringCache;
use crate::error::{Error, Result};
use crate::model::{HostActivity, KernelClass, NameId, Names, Ns, Record, ThreadId};
use crate::FastMap;

/// A send's (rank, peer, tag): the group MPI's non-overtaking rule orders.
pub type SendKey = (Option<i64>, Option<i64>, Option<i64>);

/// Everything needed to turn one export's rows into model records.
pub struct SourceCx<'c> {
    pub file: String,
    /// Added to a raw timestamp to get trace time (clock offset minus origin).
    pub shift: i64,
    /// End of the trace (trace time): unterminated ranges close here.
    pub end_time: Ns,
    pub threads: FastMap<i64, ThreadId>,
    /// Stream key → (thread, device index).
    pub streams: FastMap<StreamKey, (ThreadId, usize)>,
    /// (globalPid key, domainId) → global domain index.
    pub domains: FastMap<(i64, i64), u32>,
    /// (globalPid key, category id) → category name.
    pub categories: FastMap<(i64, i64), NameId>,
    pub strings: StringCache<'c>,
    /// Per CUDA call name (indexed by its [`NameId`]): what the thread does inside the call,
    /// worked out once per name (a vector: a hash map's entry per call was 2 % of the reading
    /// thread).
    pub activity_of: Vec<Option<HostActivity>>,
    /// The same for the OS runtime's calls (a name's activity is its family's).
    pub os_activity_of: Vec<Option<HostActivity>>,
    /// Per kernel name (indexed by its [`NameId`]): its class, with the short name it was
    /// told from (a class is worked out from both names: kernel_class).
    pub kernel_classes: Vec<Option<(NameId, KernelClass)>>,
    /// GPU (CUDA device id) → its metrics thread; metric id → metric name.
    pub metric_threads: FastMap<u32, ThreadId>,
    pub metric_names: FastMap<i64, NameId>,
    /// MPI rank → index of the input that holds it (all inputs; for message matching), one
    /// map for every input (a copy each grew with the square of the ranks).
    pub rank_sources: std::sync::Arc<FastMap<u32, usize>>,
    /// Lookup of a receive in this input's receive index (see mpi_p2p), when built.
    pub recv_lookup: Option<Statement<'c>>,
    /// Sends read so far per (rank, peer, tag): the next one's number (see mpi_p2p).
    pub sends: FastMap<SendKey, i64>,
    /// Message → number of occurrences, reported once at the end.
    pub warnings: BTreeMap<String, u64>,
    /// Device memory in use per (globalPid key, CUDA device), as GPU memory usage rows come.
    pub gpu_memory_in_use: FastMap<(i64, u32), u64>,
}

impl SourceCx<'_> {
    /// Context of one export, before its family-specific parts are filled in.
    pub fn new<'c>(
        file: String,
        shift: i64,
        end_time: Ns,
        strings: StringCache<'c>,
    ) -> SourceCx<'c> {
        SourceCx {
            file,
            shift,
            end_time,
            threads: FastMap::default(),
            streams: FastMap::default(),
            domains: FastMap::default(),
            categories: FastMap::default(),
            strings,
            activity_of: Vec::new(),
            os_activity_of: Vec::new(),
            kernel_classes: Vec::new(),
            rank_sources: Default::default(),
            metric_threads: FastMap::default(),
            metric_names: FastMap::default(),
            recv_lookup: None,
            sends: FastMap::default(),
            warnings: BTreeMap::new(),
            gpu_memory_in_use: FastMap::default(),
        }
    }

    /// Converts a raw timestamp of this export to trace time.
    pub fn time(&self, raw: i64) -> Ns {
        (raw.saturating_add(self.shift)).clamp(0, self.end_time as i64) as Ns
    }

    /// An interval in trace time; a negative duration becomes zero (with a warning).
    pub fn interval(&mut self, table: &str, start: i64, end: Option<i64>) -> (Ns, Ns) {
        let s = self.time(start);
        match end {
            Some(e) if e >= start => (s, self.time(e)),
            Some(_) => {
                self.warn(format!(
                    "{table}: rows whose end is before their start were given zero duration"
                ));
                (s, s)
            }
            None => {
                self.warn(format!(
                    "{table}: rows without an end were given zero duration"
                ));
                (s, s)
            }
        }
    }

    pub fn warn(&mut self, msg: String) {
        *self.warnings.entry(msg).or_insert(0) += 1;
    }

    pub fn thread(&self, table: &str, global_tid: i64) -> Result<ThreadId> {
        self.threads.get(&global_tid).copied().ok_or_else(|| Error::BadData {
            file: self.file.clone(),
            why: format!("table {table}: thread {global_tid:#x} appeared after discovery (the file changed while reading?)"),
        })
    }

    pub fn bad(&self, why: String) -> Error {
        Error::BadData {
            file: self.file.clone(),
            why,
        }
    }
}

/// Slot `at` of a cache indexed by a small number (a name's id, a resource's index), the
/// cache grown to hold it: what a decoder works out once per name or per resource.
#[inline]
pub fn grown_slot<T: Clone>(cache: &mut Vec<Option<T>>, at: usize) -> &mut Option<T> {
    if cache.len() <= at {
        cache.resize(at + 1, None);
    }
    &mut cache[at]
}

/// Which family module decodes a cursor's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorKind {
    Gpu,
    Host,
    Nvtx,
    Link,
    MpiSend,
    GpuMetrics,
    Sched,
    CudaEvent,
    Pthread,
    GpuMemory,
    OpenMp,
}

/// A prepared, time-ordered query of one family in one export.
pub struct Query {
    pub kind: CursorKind,
    pub source: usize,
    pub sql: String,
    /// What is read, for messages (a table name or a short description).
    pub what: &'static str,
    /// The same records without SQL sorting, where the family can be read that way.
    pub partitioned: Option<Partitioned>,
}

/// How a family is read without SQL sorting (see partitioned.rs).
pub enum Partitioned {
    /// Per-resource sorted runs of the rows, merged.
    Rows(super::partitioned::Spec),
    /// The API-to-GPU merge join (links.rs): calls and operations.
    Links {
        api: super::partitioned::Spec,
        gpu: super::partitioned::Spec,
    },
    /// Narrow keys sorted in memory, rows fetched by rowid (keyed.rs).
    Keys(super::keyed::KeySpec),
}

/// Where a cursor's rows come from.
pub enum RowSource<'s> {
    /// One SQL query that sorts and gives the lookahead itself (`ORDER BY`, `LEAD`).
    Sql(OwnedRows<'s>),
    /// Per-resource runs already in time order, merged in Rust (see partitioned.rs): the host
    /// calls' reader, whose calls may feed the link join ([`Cursor::tap`]).
    Partitioned(Box<PartitionedRows<'s>>),
    /// The same for a cursor that feeds nothing else, read here or on a helper thread.
    Ordered(Box<dyn OrderedRows + 's>),
    /// The sort-free API-to-GPU link join.
    Links(Box<super::links::LinkJoin<'s>>),
    /// The same join fed with the calls the host cursor reads (the reader passes them on).
    FedLinks(Box<super::links::FedLinks<'s>>),
    /// Rows fetched by rowid in the order of their sorted keys.
    Keyed(Box<super::keyed::KeyedRows<'s>>),
}

/// A query's rows together with their statement. rusqlite's `Rows` borrow a statement that must
/// live elsewhere; a cursor kept between calls (the browser's reader gives its records a batch
/// at a time) has nowhere else to keep it.
pub struct OwnedRows<'c> {
    rows: std::mem::ManuallyDrop<Rows<'c>>,
    /// Owned (from `Box::into_raw`), read only through `rows`, freed after them.
    statement: std::ptr::NonNull<Statement<'c>>,
}

impl<'c> OwnedRows<'c> {
    /// Runs `statement` (no parameters).
    pub fn new(statement: Statement<'c>) -> rusqlite::Result<OwnedRows<'c>> {
        let statement = std::ptr::NonNull::from(Box::leak(Box::new(statement)));
        // SAFETY: the statement is on the heap, owned by this value from here on, never moved or
        // used but through `rows`, and freed only after `rows` (see Drop): the borrow `rows`
        // holds stays valid as long as they do.
        match unsafe { (*statement.as_ptr()).query([]) } {
            Ok(rows) => Ok(OwnedRows {
                rows: std::mem::ManuallyDrop::new(rows),
                statement,
            }),
            Err(e) => {
                // SAFETY: no rows borrow it; it came from Box::leak above.
                drop(unsafe { Box::from_raw(statement.as_ptr()) });
                Err(e)
            }
        }
    }

    /// The next row (rusqlite's `Rows::next`: a streaming iterator, not an `Iterator`).
    pub fn next_row(&mut self) -> rusqlite::Result<Option<&rusqlite::Row<'c>>> {
        self.rows.next()
    }
}

impl Drop for OwnedRows<'_> {
    fn drop(&mut self) {
        // SAFETY: the rows first (they reset the statement), then the statement they borrowed,
        // which came from Box::leak in `new` and is dropped once.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.rows);
            drop(Box::from_raw(self.statement.as_ptr()));
        }
    }
}

/// An open cursor with its next record decoded ahead (the merge compares heads).
pub struct Cursor<'s> {
    pub kind: CursorKind,
    pub source: usize,
    pub what: &'static str,
    pub rows: RowSource<'s>,
    pub head: Option<Record>,
    /// The host cursor's calls for a [`RowSource::FedLinks`] cursor, taken as rows are read.
    pub tap: Option<super::links::CallTap>,
}

impl Cursor<'_> {
    /// Decodes rows until one yields a record (some rows are skipped), or the cursor ends.
    /// (Every input's context is passed: matching an MPI send reads the receiver's input.)
    pub fn advance(&mut self, cxs: &mut [SourceCx], names: &mut Names) -> Result<()> {
        self.head = None;
        loop {
            let rec = match &mut self.rows {
                RowSource::Sql(rows) => {
                    let row = match rows.next_row() {
                        Ok(Some(r)) => r,
                        Ok(None) => return Ok(()),
                        Err(e) => return Err(Error::read(&cxs[self.source].file, self.what, e)),
                    };
                    decode(self.kind, row, self.source, cxs, names)?
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
        CursorKind::CudaEvent => super::cuda_events::decode(row, cx),
        CursorKind::Pthread => super::pthread::decode(row, cx),
        CursorKind::GpuMemory => super::gpu_memory::decode(row, cx),
        CursorKind::OpenMp => super::openmp::decode(row, cx),
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

/// A row whose columns can be read by index: a live SQLite row, or one buffered in memory.
pub trait Fields {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>>;
    fn column_name(&self, i: usize) -> &str;

    /// Values `first`, `first + 1`, … into `out`: several in one call where a row is read
    /// through `&dyn Fields` (discovery's scans, a call per value otherwise).
    fn values<'s>(&'s self, first: usize, out: &mut [ValueRef<'s>]) -> rusqlite::Result<()> {
        for (k, v) in out.iter_mut().enumerate() {
            *v = self.value(first + k)?;
        }
        Ok(())
    }
}

impl Fields for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        self.get_ref(i)
    }
    fn column_name(&self, i: usize) -> &str {
        self.as_ref().column_name(i).unwrap_or("?")
    }
}

/// Rows copied out of SQLite side by side: a run's batch (the partitioned reader), or one row
/// (the keyed reader). `width` cells a row, all in one vector, and the bytes of their text and
/// blobs in another, so that a batch is refilled in place: nothing is freed or allocated per row,
/// and a batch's rows lie in the order they are written and read. (Rows of their own, refilled
/// from a pool of spare ones, cost cache misses on memory written long before: with `Vec<Value>`
/// rows, dropping a recycled row's old values was 30 % of the row copy's samples.)
///
/// A block may hold only some of its reader's columns (see [`RowBlock::layout`]): a run's
/// rows come from one table, which gives 5 to 22 of a union's 21 to 31 columns, and a row of
/// NULL cells for the others was ~30 % of the fetch's own time (their stores).
#[derive(Default)]
pub struct RowBlock {
    cells: Vec<Cell>,
    bytes: Vec<u8>,
    /// Cells per row.
    width: usize,
    rows: usize,
    /// Per column of the reader: its cell in a row, or [`ABSENT`] (always NULL).
    slot_of: Arc<[u16]>,
}

/// A column a block does not hold ([`RowBlock::slot_of`]).
const ABSENT: u16 = u16::MAX;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    /// A range of the block's bytes.
    Text(usize, usize),
    Blob(usize, usize),
}

impl RowBlock {
    /// An empty block of rows of `width` columns, each held.
    pub fn new(width: usize) -> Self {
        let slot_of: Vec<u16> = (0..width).map(slot).collect();
        RowBlock {
            cells: Vec::new(),
            bytes: Vec::new(),
            width,
            rows: 0,
            slot_of: slot_of.into(),
        }
    }

    /// The layout of blocks that hold, of a reader's `of` columns, those in `held` (in this
    /// order: [`set_held`](Self::set_held)'s numbering), the others reading as NULL: per column,
    /// its cell in a row or [`ABSENT`]. Shared by the blocks of [`with_layout`](Self::with_layout).
    pub fn layout(of: usize, held: &[usize]) -> Arc<[u16]> {
        let mut slot_of = vec![ABSENT; of];
        for (k, &i) in held.iter().enumerate() {
            slot_of[i] = slot(k);
        }
        slot_of.into()
    }

    /// An empty block with room for `rows` rows of `width` columns (their text and blobs aside).
    pub fn with_capacity(width: usize, rows: usize) -> Self {
        RowBlock {
            cells: Vec::with_capacity(width * rows),
            ..RowBlock::new(width)
        }
    }

    /// An empty block with `layout`'s columns held (see [`layout`](Self::layout)).
    pub fn with_layout(layout: Arc<[u16]>) -> Self {
        RowBlock {
            width: layout.iter().filter(|&&s| s != ABSENT).count(),
            slot_of: layout,
            ..RowBlock::default()
        }
    }

    /// No rows (the block's buffers are kept).
    pub fn clear(&mut self) {
        self.cells.clear();
        self.bytes.clear();
        self.rows = 0;
    }

    /// Number of rows.
    pub fn row_count(&self) -> usize {
        self.rows
    }

    /// Cells per row: the columns the block holds.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Appends a row whose every column is NULL; returns its index.
    pub fn push_row(&mut self) -> usize {
        self.cells.resize(self.cells.len() + self.width, Cell::Null);
        self.rows += 1;
        self.rows - 1
    }

    /// Appends a row whose `k`th held column is a copy of `value(k)`, each written once (a
    /// row of NULLs set column by column wrote every cell twice, behind a bounds check);
    /// returns its index.
    #[inline]
    pub fn push_row_of<'v>(&mut self, mut value: impl FnMut(usize) -> ValueRef<'v>) -> usize {
        let width = self.width;
        self.cells.reserve(width);
        // Each cell written into the room made once (a `push` per cell checked the capacity).
        let bytes = &mut self.bytes;
        for (k, slot) in self.cells.spare_capacity_mut()[..width]
            .iter_mut()
            .enumerate()
        {
            slot.write(cell_in(bytes, value(k)));
        }
        // SAFETY: the `width` cells past the length were written just above.
        unsafe { self.cells.set_len(self.cells.len() + width) };
        self.rows += 1;
        self.rows - 1
    }

    /// Appends a copy of `row`, a row of a block of as many columns as this one, which holds
    /// them all.
    pub fn push_copy(&mut self, row: &RowView<'_>) {
        debug_assert_eq!(row.slot_of.len(), self.width, "rows of one width");
        for &s in row.slot_of {
            let cell = match row.cells.get(usize::from(s)).copied().unwrap_or(Cell::Null) {
                Cell::Text(a, b) => {
                    let (a, b) = append(&mut self.bytes, &row.bytes[a..b]);
                    Cell::Text(a, b)
                }
                Cell::Blob(a, b) => {
                    let (a, b) = append(&mut self.bytes, &row.bytes[a..b]);
                    Cell::Blob(a, b)
                }
                other => other,
            };
            self.cells.push(cell);
        }
        self.rows += 1;
    }

    /// Sets column `i` of row `row` (both in range, and the column held) to a copy of `v`.
    #[inline]
    pub fn set(&mut self, row: usize, i: usize, v: ValueRef<'_>) {
        let k = usize::from(self.slot_of[i]);
        debug_assert!(k < self.width, "column {i} is held");
        self.set_held(row, k, v);
    }

    /// Sets the `k`th held column of row `row` (both in range) to a copy of `v`.
    #[inline]
    pub fn set_held(&mut self, row: usize, k: usize, v: ValueRef<'_>) {
        let cell = cell_in(&mut self.bytes, v);
        self.cells[row * self.width + k] = cell;
    }

    /// Row `row` (in range), its columns named by `columns`.
    pub fn row<'a>(&'a self, row: usize, columns: &'a [String]) -> RowView<'a> {
        let at = row * self.width;
        RowView {
            cells: &self.cells[at..at + self.width],
            slot_of: &self.slot_of,
            bytes: &self.bytes,
            columns,
        }
    }
}

/// The cell of a copy of `v`, its text or blob appended to `bytes` (a block's).
#[inline]
fn cell_in(bytes: &mut Vec<u8>, v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(x) => Cell::Integer(x),
        ValueRef::Real(x) => Cell::Real(x),
        ValueRef::Text(t) => {
            let (a, b) = append(bytes, t);
            Cell::Text(a, b)
        }
        ValueRef::Blob(t) => {
            let (a, b) = append(bytes, t);
            Cell::Blob(a, b)
        }
    }
}

/// Appends `b` to a block's `bytes`; returns where it lies.
#[inline]
fn append(bytes: &mut Vec<u8>, b: &[u8]) -> (usize, usize) {
    let start = bytes.len();
    bytes.extend_from_slice(b);
    (start, bytes.len())
}

/// A column's cell number in a block's row.
fn slot(k: usize) -> u16 {
    u16::try_from(k)
        .ok()
        .filter(|&s| s != ABSENT)
        .expect("a reader's columns are a few dozen")
}

/// One row of a [`RowBlock`].
pub struct RowView<'a> {
    cells: &'a [Cell],
    slot_of: &'a [u16],
    bytes: &'a [u8],
    columns: &'a [String],
}

impl<'a> RowView<'a> {
    /// Column `i`, borrowed from the block (not from this view).
    #[inline(always)]
    fn get(&self, i: usize) -> rusqlite::Result<ValueRef<'a>> {
        let Some(&k) = self.slot_of.get(i) else {
            return Err(rusqlite::Error::InvalidColumnIndex(i));
        };
        // An absent column's slot is past the row's cells.
        Ok(match self.cells.get(usize::from(k)) {
            None => ValueRef::Null,
            Some(Cell::Null) => ValueRef::Null,
            Some(&Cell::Integer(x)) => ValueRef::Integer(x),
            Some(&Cell::Real(x)) => ValueRef::Real(x),
            Some(&Cell::Text(a, b)) => ValueRef::Text(&self.bytes[a..b]),
            Some(&Cell::Blob(a, b)) => ValueRef::Blob(&self.bytes[a..b]),
        })
    }
}

impl Fields for RowView<'_> {
    // Always inlined: a decoder reads a dozen columns of each row through `int`.
    #[inline(always)]
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        self.get(i)
    }
    fn column_name(&self, i: usize) -> &str {
        self.columns.get(i).map_or("?", |c| c.as_str())
    }
}

/// A row copied out of SQLite, on its own (the keyed reader keeps fetched rows by rowid).
pub struct BufferedRow {
    block: RowBlock,
    columns: std::rc::Rc<[String]>,
}

impl BufferedRow {
    /// An empty row of these columns; [`reset`](Self::reset) it before filling.
    pub fn new(columns: std::rc::Rc<[String]>) -> Self {
        BufferedRow {
            block: RowBlock::new(columns.len()),
            columns,
        }
    }

    /// Every column NULL (the row's buffers are kept).
    pub fn reset(&mut self) {
        self.block.clear();
        self.block.push_row();
    }

    /// Sets column `i` (in range: [`reset`](Self::reset) made every column) to a copy of `v`.
    pub fn set(&mut self, i: usize, v: ValueRef<'_>) {
        self.block.set(0, i, v);
    }
}

impl Fields for BufferedRow {
    #[inline]
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        if self.block.row_count() == 0 {
            return Err(rusqlite::Error::InvalidColumnIndex(i));
        }
        self.block.row(0, &self.columns).get(i)
    }
    fn column_name(&self, i: usize) -> &str {
        self.columns.get(i).map_or("?", |c| c.as_str())
    }
}

/// Column `i` of a row (an SQL row or one the direct reader gives) converted as rusqlite's
/// `Row::get` converts it, with the same errors.
pub fn get<T: rusqlite::types::FromSql, R: Fields + ?Sized>(
    row: &R,
    i: usize,
) -> rusqlite::Result<T> {
    convert(row, i, row.value(i)?)
}

/// `value`, column `i` of `row`, converted as [`get`] converts it.
pub fn convert<T: rusqlite::types::FromSql, R: Fields + ?Sized>(
    row: &R,
    i: usize,
    value: ValueRef,
) -> rusqlite::Result<T> {
    use rusqlite::types::FromSqlError;
    T::column_result(value).map_err(|err| match err {
        FromSqlError::InvalidType => {
            rusqlite::Error::InvalidColumnType(i, row.column_name(i).to_owned(), value.data_type())
        }
        FromSqlError::OutOfRange(v) => rusqlite::Error::IntegralValueOutOfRange(i, v),
        FromSqlError::Utf8Error(e) => rusqlite::Error::Utf8Error(i, e),
        FromSqlError::Other(e) => {
            rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), e)
        }
        other => rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), Box::new(other)),
    })
}

/// Position of `col` in `columns`, evaluated at compile time where decoders name their columns
/// (`const { column_index(..) }`): looking names up per row was 3 % of the reading thread.
pub const fn column_index(columns: &[&str], col: &str) -> usize {
    let mut i = 0;
    while i < columns.len() {
        let (a, b) = (columns[i].as_bytes(), col.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("unknown column")
}

/// Reads column `i` as an optional integer, naming the column if its type is wrong.
///
/// Inlined for the integers and NULLs that nearly every column holds (into each call site: as
/// a call, its large `Result` went back through memory, 32 instructions a column), the rest out
/// of line.
#[inline(always)]
pub fn int<R: Fields + ?Sized>(
    row: &R,
    i: usize,
    cx: &SourceCx,
    what: &str,
) -> Result<Option<i64>> {
    match row.value(i) {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Integer(v)) => Ok(Some(v)),
        other => int_otherwise(other, row, i, cx, what),
    }
}

/// [`int`] for a value that is neither an integer nor NULL (or could not be read).
#[cold]
#[inline(never)]
fn int_otherwise<R: Fields + ?Sized>(
    value: rusqlite::Result<ValueRef<'_>>,
    row: &R,
    i: usize,
    cx: &SourceCx,
    what: &str,
) -> Result<Option<i64>> {
    match value {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Integer(v)) => Ok(Some(v)),
        Ok(ValueRef::Real(v)) if v.fract() == 0.0 && v.abs() < 9.0e18 => Ok(Some(v as i64)),
        Ok(other) => Err(cx.bad(format!(
            "{what}: column {} holds {:?}, expected an integer",
            row.column_name(i),
            other.data_type()
        ))),
        Err(e) => Err(Error::read(&cx.file, what, e)),
    }
}

/// Reads column `i` as optional text.
pub fn text<R: Fields + ?Sized>(
    row: &R,
    i: usize,
    cx: &SourceCx,
    what: &str,
) -> Result<Option<String>> {
    match row.value(i) {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Text(t)) => Ok(Some(String::from_utf8_lossy(t).into_owned())),
        Ok(ValueRef::Integer(v)) => Ok(Some(v.to_string())),
        Ok(ValueRef::Real(v)) => Ok(Some(v.to_string())),
        Ok(ValueRef::Blob(_)) => Ok(None),
        Err(e) => Err(Error::read(&cx.file, what, e)),
    }
}

/// Non-negative integer that fits `u32`, else 0 (launch parameters, kinds).
pub fn u32_or_0(v: Option<i64>) -> u32 {
    v.and_then(|x| u32::try_from(x).ok()).unwrap_or(0)
}

pub fn u64_or_0(v: Option<i64>) -> u64 {
    v.and_then(|x| u64::try_from(x).ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(view: &RowView<'_>, i: usize) -> Option<String> {
        view.get(i).ok().map(|v| format!("{v:?}"))
    }

    #[test]
    fn a_block_of_some_columns_reads_the_others_as_null_and_copies_out_whole() {
        let columns: Vec<String> = (0..5).map(|i| format!("c{i}")).collect();
        // Holds columns 3 and 1, in that order.
        let layout = RowBlock::layout(5, &[3, 1]);
        assert_eq!(&*layout, &[ABSENT, 1, ABSENT, 0, ABSENT]);
        let mut some = RowBlock::with_layout(layout);
        for (x, t) in [(7i64, "a"), (-2, "bc")] {
            let at = some.push_row();
            some.set_held(at, 0, ValueRef::Integer(x));
            some.set(at, 1, ValueRef::Text(t.as_bytes()));
        }
        let mut whole = RowBlock::new(5);
        for r in 0..2 {
            let view = some.row(r, &columns);
            assert_eq!(read(&view, 0).as_deref(), Some("Null"));
            assert_eq!(read(&view, 2).as_deref(), Some("Null"));
            assert_eq!(read(&view, 4).as_deref(), Some("Null"));
            assert!(view.get(5).is_err(), "past the reader's columns");
            whole.push_copy(&view);
        }
        let second = some.row(1, &columns);
        assert_eq!(read(&second, 3).as_deref(), Some("Integer(-2)"));
        assert_eq!(read(&second, 1).as_deref(), Some("Text([98, 99])"));
        // The copy holds every column, with the same values.
        for r in 0..2 {
            let (a, b) = (some.row(r, &columns), whole.row(r, &columns));
            for i in 0..6 {
                assert_eq!(read(&a, i), read(&b, i), "row {r} column {i}");
            }
        }
        assert_eq!(whole.width, 5);
        assert_eq!(some.width, 2);
    }
}
