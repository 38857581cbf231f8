//! The reading side: surveyed runs fetched in small batches by rowid range (by the page reader
//! or SQLite) and merged into the SQL path's order, with each row's lookahead.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::GROUPED_FETCHES;
use super::{Aux, Block, Key, Member, NextRow, RowAt, Run, Spec, Survey};
use crate::engine::block::{RowBlock, RowView};
use crate::engine::page_reader::{same_number, PageQuery, PageRow};
use crate::engine::select::{Expr, Select};
use crate::error::{Error, Result};
use crate::sqlfile::{Pager, Record, TableCursor};

/// The batch of a grouped member's run of `rows` rows (see [`GROUPED_FETCHES`]).
fn grouped_batch(rows: u64) -> usize {
    usize::try_from(rows.div_ceil(GROUPED_FETCHES))
        .unwrap_or(usize::MAX)
        .max(FIRST_BATCH)
}
/// Rows fetched per query: the first batch of a run is small (many runs are short), then grows.
const FIRST_BATCH: usize = 16;
/// Rows of first batches over the inputs read together, as a rule: with one input per rank, a
/// run holds its last two fetches for each of its ranks' resources (48 rows of 16 and 32 held
/// ~40 KiB an input), so first batches shrink to [`LEAST_FIRST_BATCH`] past 64 inputs.
const FIRST_ROWS: usize = 1024;
const LEAST_FIRST_BATCH: usize = 4;
const MAX_BATCH: usize = 512;
/// Rows buffered over all runs at most (0.1–0.6 KiB each: 24 bytes per column its table gives,
/// and its text; a run being read holds its last two fetches): with many resources busy at once
/// (a thousand threads), batches shrink so that memory stays flat.
const ROW_BUDGET: usize = 65_536;

/// A run being read.
struct OpenRun {
    /// Next rowid to fetch.
    next_lo: i64,
    batch: usize,
    done: bool,
    /// The rows of the last fetch, handed out from `meta[next]` on, and per row its order value,
    /// rowid and aux value.
    rows: RowBlock,
    meta: Vec<Meta>,
    next: usize,
    /// The rows of the fetch before: the row handed out last may be there (see [`RowAt`]). Its
    /// buffers take the next fetch.
    before: RowBlock,
    /// Fetches so far; rows fetched so far, and the order value of the last one (a run never
    /// decreases).
    fetches: u64,
    fetched: u64,
    last_order: i64,
    /// For a run with its rowids listed: how many of them were fetched.
    listed: usize,
}

/// A fetched row's order value, rowid and aux value.
#[derive(Clone, Copy)]
struct Meta {
    order: i64,
    rid: i64,
    aux: Option<i64>,
}

impl OpenRun {
    /// A run from rowid `lo` on whose rows hold the columns of `layout` (its member's).
    fn new(lo: i64, layout: &Arc<[u16]>, batch: usize) -> OpenRun {
        OpenRun {
            next_lo: lo,
            batch,
            done: false,
            rows: RowBlock::with_layout(layout.clone()),
            meta: Vec::new(),
            next: 0,
            before: RowBlock::with_layout(layout.clone()),
            fetches: 0,
            fetched: 0,
            last_order: i64::MIN,
            listed: 0,
        }
    }

    /// The next row to hand out.
    fn head(&self) -> Option<Meta> {
        self.meta.get(self.next).copied()
    }

    /// Makes room for a fetch; the rows fetched before stay readable in `before`.
    fn start_fetch(&mut self) {
        std::mem::swap(&mut self.rows, &mut self.before);
        self.rows.clear();
        self.meta.clear();
        self.next = 0;
        self.fetches += 1;
    }

    /// Notes a row fetched into `rows`; `Err` when it is not what the survey's scan saw there
    /// (see [`Run::rows`]).
    fn take(&mut self, f: &Fetch, order: i64, rid: i64, aux: Option<i64>) -> Result<(), ()> {
        if rid < f.lo || rid > f.hi || order < self.last_order {
            return Err(());
        }
        self.last_order = order;
        self.fetched += 1;
        self.next_lo = rid.saturating_add(1);
        self.meta.push(Meta { order, rid, aux });
        Ok(())
    }
}

/// A resource's frontier entry: (order value, family, rowid, run).
type RunKey = (i64, i64, i64, usize);

/// Heap key: (order value, family, rowid, partition, run) — the SQL path's order, then the
/// resource (the first four are unique; the run that holds the row rides along).
type HeadKey = (i64, i64, i64, usize, usize);

/// The reading side: runs merged into the SQL path's order.
pub struct PartitionedRows<'c> {
    conn: &'c Connection,
    what: &'static str,
    survey: Survey,
    /// Number of key parts (the first bound parameters of every fetch).
    key_len: usize,
    fams: Vec<i64>,
    /// Per member: whether it groups its rows (see [`GROUPED_FETCHES`]).
    grouped: Vec<bool>,
    fetch_sql: Vec<String>,
    /// Per member: which decoder columns its fetch gives, in order (the others are NULL).
    fetched: Vec<Vec<usize>>,
    /// Per member: its runs' blocks hold the columns it gives, and no others.
    layouts: Vec<Arc<[u16]>>,
    /// The decoder's column names (for messages).
    columns: Rc<[String]>,
    open: Vec<Option<OpenRun>>,
    /// Per run: the aux value of its next row (`None` once the run is read, or without an aux
    /// column) — what tells whether an [`aux_heads`](Self::aux_heads) entry is still current.
    head_aux: Vec<Option<i64>>,
    /// Per resource: the heads of its runs not yet read, smallest first (exactly one entry per
    /// such run), so a resource's next row is found in O(log runs).
    frontier: Vec<BinaryHeap<Reverse<RunKey>>>,
    /// Per resource, when the spec has an aux column: (aux, run) of its runs' heads, smallest
    /// first; an entry is stale once its run has moved on (aux increases along a run).
    pub(super) aux_heads: Vec<BinaryHeap<Reverse<(i64, usize)>>>,
    /// One entry per resource not yet read: its frontier's smallest head.
    heap: BinaryHeap<Reverse<HeadKey>>,
    /// Largest batch of one run (see [`ROW_BUDGET`]), and the most runs read at once.
    max_batch: usize,
    overlapping: usize,
    /// A run's first batch (see [`PartitionedRows::among`]).
    first_batch: usize,
    /// The last fetch of the run that ended last: the row handed out last may be there.
    finished: RowBlock,
    /// Where the row handed out last lies.
    last: RowAt,
    /// The members fetched by the direct reader of the file format (engine/page_reader.rs).
    page_reader: Option<PageFetch<'c>>,
}

/// Fetches by the direct reader: its pager, and per member its compiled query and cursor
/// (`None`: that member is fetched through SQL).
struct PageFetch<'c> {
    pager: Rc<Pager<'c>>,
    members: Vec<Option<(PageQuery, TableCursor)>>,
    record: Record,
}

impl<'c> PageFetch<'c> {
    /// Where at least one member compiles for the direct reader. Each member's query gives its
    /// fetched columns, then order, rid, aux and the partition (see [`fetch_query`]).
    fn new(spec: &Spec, fetched: &[Vec<usize>], pager: Rc<Pager<'c>>) -> Option<PageFetch<'c>> {
        let members: Vec<Option<(PageQuery, TableCursor)>> = (0..spec.members.len())
            .map(|m| {
                let query = fetch_query(spec, m, &fetched[m])?;
                let compiled = PageQuery::compile(&pager, &query).ok()??;
                let cursor = TableCursor::new(compiled.table.root);
                Some((compiled, cursor))
            })
            .collect();
        members.iter().any(Option::is_some).then(|| PageFetch {
            pager,
            members,
            record: Record::default(),
        })
    }
}

/// What the direct fetch of member `m` reads: its `fetched` columns, order, rid, aux, then the
/// partition, as a query of its own table.
fn fetch_query(spec: &Spec, m: usize, fetched: &[usize]) -> Option<Select> {
    let rid = Expr::out("rid");
    let aux = Aux::expr(&spec.aux);
    let exprs: Vec<&Expr> = fetched
        .iter()
        .map(|&i| &spec.columns[i])
        .chain([&spec.order, &rid, &aux])
        .chain(&spec.partition)
        .collect();
    spec.members[m].select.project(&exprs)
}

/// What a fetch of a run's next rows needs to know.
struct Fetch {
    member: usize,
    key: Key,
    /// Rowids from `lo` to `hi`, at most `batch` rows.
    lo: i64,
    hi: i64,
    batch: usize,
}

impl<'c> PartitionedRows<'c> {
    /// The reader of `spec`'s surveyed runs. With the pager of `conn`'s file, members are fetched
    /// by the direct reader of the file format where they compile for it (the same rows either
    /// way).
    pub fn new(
        conn: &'c Connection,
        spec: &Spec,
        survey: Survey,
        pager: Option<Rc<Pager<'c>>>,
    ) -> Self {
        let key_len = spec.partition.len();
        let filter: Vec<String> = spec
            .partition
            .iter()
            .enumerate()
            .map(|(i, p)| format!("({}) IS ?{}", p.sql(), i + 1))
            .collect();
        let fetched: Vec<Vec<usize>> = spec
            .members
            .iter()
            .map(|m| {
                (0..spec.columns.len())
                    .filter(|&i| m.present.get(i).copied().unwrap_or(true))
                    .collect()
            })
            .collect();
        let aux = Aux::expr(&spec.aux).sql();
        let fetch_sql = spec
            .members
            .iter()
            .zip(&fetched)
            .map(|(m, cols)| {
                let list: Vec<String> = cols
                    .iter()
                    .map(|&i| spec.columns[i].sql())
                    .chain([spec.order.sql(), "rid".into(), aux.clone()])
                    .collect();
                format!(
                    "SELECT {} FROM ({}) WHERE {} AND rid >= ?{} AND rid <= ?{} ORDER BY rid LIMIT ?{}",
                    list.join(", "),
                    m.select.sql(),
                    filter.join(" AND "),
                    key_len + 1,
                    key_len + 2,
                    key_len + 3
                )
            })
            .collect();
        // One cached statement per member, re-bound for every batch of every run.
        conn.set_prepared_statement_cache_capacity(64);
        let overlapping = most_overlapping(&survey.runs).max(1);
        let mut rows = PartitionedRows {
            conn,
            what: spec.what,
            key_len,
            fams: spec.members.iter().map(|m| m.fam).collect(),
            grouped: spec.members.iter().map(Member::grouped).collect(),
            fetch_sql,
            layouts: fetched
                .iter()
                .map(|held| RowBlock::layout(spec.columns.len(), held))
                .collect(),
            fetched,
            columns: spec.columns.iter().map(|c| c.name().to_owned()).collect(),
            open: (0..survey.runs.len()).map(|_| None).collect(),
            head_aux: survey.runs.iter().map(|run| run.first_aux).collect(),
            frontier: (0..survey.keys.len()).map(|_| BinaryHeap::new()).collect(),
            aux_heads: (0..survey.keys.len()).map(|_| BinaryHeap::new()).collect(),
            heap: BinaryHeap::new(),
            max_batch: (ROW_BUDGET / (2 * overlapping)).clamp(FIRST_BATCH, MAX_BATCH),
            overlapping,
            first_batch: FIRST_BATCH,
            finished: RowBlock::new(spec.columns.len()),
            last: RowAt {
                block: Block::Finished,
                index: 0,
            },
            page_reader: None,
            survey,
        };
        rows.page_reader = pager.and_then(|pager| PageFetch::new(spec, &rows.fetched, pager));
        for (r, run) in rows.survey.runs.iter().enumerate() {
            let p = run.partition;
            rows.frontier[p].push(Reverse((run.first_order, rows.fams[run.member], run.lo, r)));
            if let Some(a) = run.first_aux {
                rows.aux_heads[p].push(Reverse((a, r)));
            }
        }
        for (p, f) in rows.frontier.iter().enumerate() {
            if let Some(&Reverse((o, fam, rid, r))) = f.peek() {
                rows.heap.push(Reverse((o, fam, rid, p, r)));
            }
        }
        rows
    }

    /// The resources' keys, by partition index.
    pub fn keys(&self) -> &[Key] {
        &self.survey.keys
    }

    /// Whether [`aux_floor`](Self::aux_floor) is right (see [`AuxRule`]).
    pub fn aux_sound(&self) -> bool {
        self.survey.aux_sound
    }

    /// The smallest aux value among a resource's rows not handed out yet (runs increase in aux,
    /// so it is the smallest of their heads); `None` when the resource is read.
    pub fn aux_floor(&mut self, p: usize) -> Option<i64> {
        let heap = &mut self.aux_heads[p];
        while let Some(&Reverse((a, r))) = heap.peek() {
            if self.head_aux[r] == Some(a) {
                return Some(a);
            }
            heap.pop(); // its run has moved past it, or is read
        }
        None
    }

    /// Adds run `r`'s new head (aux `a`) to resource `p`'s heads. The entries its runs left
    /// behind go when the floor is asked and they come to the top ([`aux_floor`]), and here
    /// once they outnumber the resource's runs: a resource whose floor is seldom asked (a
    /// process whose calls launch nothing) or whose runs overlap in time would otherwise keep
    /// one entry per row it read.
    ///
    /// [`aux_floor`]: Self::aux_floor
    fn push_aux_head(&mut self, p: usize, a: i64, r: usize) {
        let heap = &mut self.aux_heads[p];
        heap.push(Reverse((a, r)));
        if heap.len() > 2 * self.survey.by_partition[p].len() {
            let head_aux = &self.head_aux;
            heap.retain(|&Reverse((a, r))| head_aux[r] == Some(a));
        }
    }

    /// The reader as one of `inputs` inputs read together: its runs start with smaller
    /// batches where there are many (see [`FIRST_ROWS`]), and the inputs share one
    /// [`ROW_BUDGET`] (a thousand ranks' readers held 37 KiB of rows each otherwise).
    pub fn among(mut self, inputs: usize) -> Self {
        let inputs = inputs.max(1);
        self.first_batch = (FIRST_ROWS / inputs).clamp(LEAST_FIRST_BATCH, FIRST_BATCH);
        self.max_batch =
            (ROW_BUDGET / (2 * self.overlapping * inputs)).clamp(self.first_batch, self.max_batch);
        self
    }

    /// Opens a run if needed and makes sure it has a buffered row, unless it is finished.
    fn fill(&mut self, r: usize, file: &str) -> Result<()> {
        let run = &self.survey.runs[r];
        let layout = &self.layouts[run.member];
        let grouped = self.grouped[run.member];
        let o = self.open[r].get_or_insert_with(|| {
            let mut o = OpenRun::new(run.lo, layout, self.first_batch);
            if grouped {
                o.batch = grouped_batch(run.rows);
            }
            o
        });
        if o.next < o.meta.len() || o.done {
            return Ok(());
        }
        o.start_fetch();
        let fetch = Fetch {
            member: run.member,
            key: self.survey.keys[run.partition],
            lo: o.next_lo,
            hi: run.hi,
            batch: o.batch,
        };
        let expected = run.rows;
        let page_reader = self
            .page_reader
            .as_ref()
            .is_some_and(|d| d.members[fetch.member].is_some());
        let listed = self.survey.runs[r].rowids.is_some();
        let got = if page_reader && listed {
            self.fetch_listed(r, &fetch, file)?
        } else if page_reader {
            self.fetch_pages(r, &fetch, file)?
        } else {
            self.fetch_sql(r, &fetch, file)?
        };
        let o = self.open[r].as_mut().expect("opened above");
        if got < fetch.batch {
            o.done = true;
            if o.fetched != expected {
                return Err(damaged(file, self.what));
            }
        }
        if !grouped {
            o.batch = (fetch.batch * 2).min(self.max_batch);
        }
        Ok(())
    }

    /// Fetches a run's next rows through SQLite; returns how many it got.
    fn fetch_sql(&mut self, r: usize, f: &Fetch, file: &str) -> Result<usize> {
        let (conn, what) = (self.conn, self.what);
        let read = |e| Error::read(file, what, e);
        let mut st = conn
            .prepare_cached(&self.fetch_sql[f.member])
            .map_err(read)?;
        for (i, k) in f.key.iter().take(self.key_len).enumerate() {
            st.raw_bind_parameter(i + 1, k).map_err(read)?;
        }
        st.raw_bind_parameter(self.key_len + 1, f.lo)
            .map_err(read)?;
        st.raw_bind_parameter(self.key_len + 2, f.hi)
            .map_err(read)?;
        st.raw_bind_parameter(self.key_len + 3, f.batch as i64)
            .map_err(read)?;
        let n = self.fetched[f.member].len();
        let o = self.open[r].as_mut().expect("opened by fill");
        let mut q = st.raw_query();
        let mut got = 0usize;
        while let Some(row) = q.next().map_err(read)? {
            // The run's block holds its member's fetched columns, in fetch order.
            let at = o.rows.push_row();
            for j in 0..n {
                o.rows.set_held(at, j, row.get_ref(j).map_err(read)?);
            }
            let order: i64 = row.get(n).map_err(read)?;
            let rid: i64 = row.get(n + 1).map_err(read)?;
            let aux: Option<i64> = row.get(n + 2).map_err(read)?;
            o.take(f, order, rid, aux)
                .map_err(|()| damaged(file, what))?;
            got += 1;
        }
        Ok(got)
    }

    /// Fetches a run's next rows by the direct reader: the rows of the member's table from
    /// rowid `lo` on that meet its conditions and are on the run's resource, as the SQL fetch
    /// (`… WHERE (partition) IS key AND rid BETWEEN lo AND hi ORDER BY rid LIMIT batch`).
    fn fetch_pages(&mut self, r: usize, f: &Fetch, file: &str) -> Result<usize> {
        let what = self.what;
        let n = self.fetched[f.member].len();
        let d = self.page_reader.as_mut().expect("chosen by fill");
        let (compiled, cursor) = d.members[f.member].as_mut().expect("chosen by fill");
        let bad = |e: crate::sqlfile::Damaged| e.at(file, what);
        let o = self.open[r].as_mut().expect("opened by fill");
        // A run with as many rows as rowids in its range (a table of one resource, or a stretch
        // of rows of one) has every row there: its rows are not tested for resource and
        // conditions (the survey tested each: a third of a fetched row's own work), and must
        // come with every rowid in turn.
        let run = &self.survey.runs[r];
        let every_rowid = run.hi.checked_sub(run.lo) == Some(run.rows as i64 - 1);
        cursor.seek(&d.pager, f.lo).map_err(bad)?;
        let mut got = 0usize;
        while got < f.batch {
            let Some((rowid, payload)) = cursor.next(&d.pager).map_err(bad)? else {
                break;
            };
            if rowid > f.hi {
                break;
            }
            let row = parsed(&mut d.record, compiled, rowid, payload).map_err(bad)?;
            if every_rowid {
                if rowid != f.lo + got as i64 {
                    return Err(damaged(file, what));
                }
            } else if !on_resource(compiled, &row, n, self.key_len, &f.key)
                || !compiled.admits(&row)
            {
                continue;
            }
            keep_page_row(o, compiled, &row, n, f).map_err(|()| damaged(file, what))?;
            got += 1;
        }
        // The next fetch seeks again (the leaf held would only add to what each input keeps).
        cursor.release();
        Ok(got)
    }

    /// [`fetch_pages`](Self::fetch_pages) for a sparse run (see [`SPARSE`]): its next listed
    /// rowids, each found within the leaf the cursor is in or by a seek, instead of every row in
    /// between. A listed row must be there and be the run's, as the survey saw it.
    fn fetch_listed(&mut self, r: usize, f: &Fetch, file: &str) -> Result<usize> {
        let what = self.what;
        let n = self.fetched[f.member].len();
        let rowids = self.survey.runs[r].rowids.clone().expect("chosen by fill");
        let d = self.page_reader.as_mut().expect("chosen by fill");
        let (compiled, cursor) = d.members[f.member].as_mut().expect("chosen by fill");
        let bad = |e: crate::sqlfile::Damaged| e.at(file, what);
        let o = self.open[r].as_mut().expect("opened by fill");
        let from = o.listed;
        let upto = (from + f.batch).min(rowids.len());
        for (k, &rid) in rowids[from..upto].iter().enumerate() {
            if k == 0 {
                cursor.seek(&d.pager, rid).map_err(bad)?;
            } else {
                cursor.skip_to(&d.pager, rid).map_err(bad)?;
            }
            let Some((rowid, payload)) = cursor.next(&d.pager).map_err(bad)? else {
                return Err(damaged(file, what));
            };
            let row = parsed(&mut d.record, compiled, rowid, payload).map_err(bad)?;
            if rowid != rid
                || !on_resource(compiled, &row, n, self.key_len, &f.key)
                || !compiled.admits(&row)
            {
                return Err(damaged(file, what));
            }
            keep_page_row(o, compiled, &row, n, f).map_err(|()| damaged(file, what))?;
        }
        o.listed = upto;
        cursor.release();
        Ok(upto - from)
    }

    /// The values of the row [`next_row`](Self::next_row) handed out last.
    #[inline]
    pub fn row(&self) -> RowView<'_> {
        let block = match self.last.block {
            Block::Rows(r) => &self.open[r].as_ref().expect("a run read").rows,
            Block::Before(r) => &self.open[r].as_ref().expect("a run read").before,
            Block::Finished => &self.finished,
        };
        block.row(self.last.index, &self.columns)
    }

    /// The next row in the SQL path's order, with its lookahead.
    pub fn next_row(&mut self, file: &str) -> Result<Option<NextRow>> {
        let what = self.what;
        let changed = || Error::BadData {
            file: file.to_owned(),
            why: format!("{what}: rows changed while reading"),
        };
        // The heaps' tops are replaced in place at the end (one sift instead of a pop and a
        // push); an error on the way leaves them stale, and the reader is not used again.
        let Some(&Reverse((start, _, rid, p, r))) = self.heap.peek() else {
            return Ok(None);
        };
        self.fill(r, file)?;
        let o = self.open[r].as_mut().expect("filled above");
        let Some(b) = o.head() else {
            return Err(changed());
        };
        if (b.order, b.rid) != (start, rid) {
            return Err(changed());
        }
        let index = o.next;
        o.next += 1;
        let fetches = o.fetches;
        // The run's next row takes its place among the resource's heads. A fetch for it moves
        // this row's batch to `before`.
        self.fill(r, file)?;
        let o = self.open[r].as_mut().expect("filled above");
        let mut block = if o.fetches == fetches {
            Block::Rows(r)
        } else {
            Block::Before(r)
        };
        let fam = self.fams[self.survey.runs[r].member];
        let head = o.head().map(|n| (n.order, n.rid, n.aux));
        self.head_aux[r] = head.and_then(|(.., aux)| aux);
        if head.is_none() {
            // The run is read: its buffers go, but for the batch of the row handed out, kept
            // until the next call.
            let last = match block {
                Block::Rows(_) => std::mem::take(&mut o.rows),
                _ => std::mem::take(&mut o.before),
            };
            (o.rows, o.before, o.meta) = Default::default();
            self.finished = last;
            block = Block::Finished;
        }
        let mut top = self.frontier[p]
            .peek_mut()
            .expect("the resource's head run");
        debug_assert_eq!(top.0 .3, r, "the resource's head run");
        match head {
            Some((order, rid, aux)) => {
                *top = Reverse((order, fam, rid, r));
                drop(top);
                if let Some(a) = aux {
                    self.push_aux_head(p, a, r);
                }
            }
            None => drop(PeekMut::pop(top)),
        }
        let next = self.frontier[p].peek().map(|&Reverse(k)| k);
        let mut top = self.heap.peek_mut().expect("peeked above");
        match next {
            Some((o, fam, rid, r)) => *top = Reverse((o, fam, rid, p, r)),
            None => drop(PeekMut::pop(top)),
        }
        self.last = RowAt { block, index };
        Ok(Some(NextRow {
            start,
            next_start: next.map(|(s, ..)| s),
            rid,
            aux: b.aux,
            partition: p,
        }))
    }
}

/// A row a direct fetch read, its record parsed into `record` as far as `compiled` reads.
#[inline]
fn parsed<'p, 'r>(
    record: &'r mut Record,
    compiled: &PageQuery,
    rowid: i64,
    payload: &'p [u8],
) -> std::result::Result<PageRow<'p, 'r>, crate::sqlfile::Damaged> {
    record.parse(payload, compiled.upto)?;
    Ok(PageRow {
        rowid,
        payload,
        record,
    })
}

/// Whether a row a direct fetch read is on the resource `key` (its `key_len` partition columns
/// follow the `n` fetched ones, order, rid and aux: [`fetch_query`]), as SQL's `IS` tells.
#[inline]
fn on_resource(compiled: &PageQuery, row: &PageRow, n: usize, key_len: usize, key: &Key) -> bool {
    (0..key_len).all(|k| same_number(compiled.value(row, n + 3 + k), key[k]))
}

/// Keeps a row a direct fetch `f` read for its run `o` (columns as [`fetch_query`] gives them:
/// the `n` fetched, then order, rid, aux); `Err` where it is not what the survey saw there.
#[inline]
fn keep_page_row(
    o: &mut OpenRun,
    compiled: &PageQuery,
    row: &PageRow,
    n: usize,
    f: &Fetch,
) -> std::result::Result<(), ()> {
    // The run's block holds its member's `n` fetched columns, in fetch order.
    debug_assert_eq!(o.rows.width(), n, "a block of the member's fetched columns");
    o.rows.push_row_of(|j| compiled.value(row, j));
    // The survey saw integers here (it declines otherwise).
    let ValueRef::Integer(order) = compiled.value(row, n) else {
        return Err(());
    };
    let aux = match compiled.value(row, n + 2) {
        ValueRef::Integer(a) => Some(a),
        ValueRef::Null => None,
        _ => return Err(()),
    };
    o.take(f, order, row.rowid, aux)
}

/// The most runs that hold rows at one order value: the runs whose rows can be buffered at once
/// (runs open when the merge reaches their first row; a finished run's buffer is given back).
pub(super) fn most_overlapping(runs: &[Run]) -> usize {
    // (value, -1) where a run starts, (value, 1) where it ends: at equal values starts sort
    // first, so runs that touch count as overlapping.
    let mut edges: Vec<(i64, i8)> = runs
        .iter()
        .flat_map(|r| [(r.first_order, -1), (r.last_order, 1)])
        .collect();
    edges.sort_unstable();
    let (mut now, mut most) = (0usize, 0usize);
    for (_, e) in edges {
        if e < 0 {
            now += 1;
            most = most.max(now);
        } else {
            now -= 1;
        }
    }
    most
}

/// A table that answers a rowid-range seek differently from a scan: its B-tree is damaged.
fn damaged(file: &str, what: &str) -> Error {
    Error::BadData {
        file: file.to_owned(),
        why: format!("{what}: the table reads differently by rowid range than by scan (the file is damaged; `sqlite3 FILE 'PRAGMA integrity_check'` tells more)"),
    }
}
