//! Time order without sorting: the partitioned reader.
//!
//! Exports have no indexes, so `ORDER BY start` is a full sort, and the lookahead the writer needs
//! (the start of the next operation on the same stream or thread, SQL `LEAD … OVER (PARTITION BY
//! …)`) is a second sort: together ~10–40× the cost of reading the rows (docs/PERFORMANCE.md).
//! But nsys writes each stream's and each thread's rows almost in time order: in rowid order a
//! table is a handful of sorted runs per resource. So:
//!
//! 1. **Survey** (one plain scan of `rowid, start, <partition columns>` per table): cut every
//!    resource's rows into maximal runs that are sorted by start in rowid order, and note each
//!    run's rowid range and first start.
//! 2. **Read**: every run is a rowid-range query filtered on its resource — already in time order,
//!    fetched in small batches. A resource's runs (over all its tables) are merged by (start,
//!    family, rowid) — the SQL path's `ORDER BY` — so the row after the one handed out gives its
//!    lookahead; the resources are merged by a heap on the same key. Runs open lazily, when the
//!    merge reaches their first row, so memory holds one batch per run in progress. A sparse run
//!    (its range mostly other resources' rows) is read by the rowids the survey listed for it
//!    instead (see `SPARSE`).
//!
//! The survey declines (the caller then uses the SQL path, which gives the same rows in the same
//! order) when a start is not an integer, a resource key is not integer/NULL, there are too many
//! runs, or the resources interleave so much that the filtered range scans would cost more than
//! the sort they replace.
//!
//! The order column need not be `start`: the link join (links.rs) reads GPU operations in
//! correlation-id order the same way, and uses the optional `aux` column (checked to increase
//! along every run) to know the smallest id a resource can still deliver.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::cursor::{CursorKind, Fields, RowBlock, RowView};
use super::direct::{same_number, Plan, Row as DirectRow};
use super::scanset::{ScanSet, Sql};
use super::select::{Expr, Select};
use crate::error::{Error, Result};
use crate::sqlfile::{Pager, Record, TableCursor};
use crate::FastMap;

/// One table (or filtered part of one) of a cursor's union.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The family number the SQL path orders ties by (`ORDER BY start, fam, rid`).
    pub fam: i64,
    /// A `SELECT` that gives `rid` (the rowid), the order column, the partition columns and the
    /// columns of [`Spec::columns`]; plain (no `GROUP BY`) where it can be, so that a rowid range
    /// is a B-tree seek. A grouped member (`rid` its group's first rowid) is surveyed and fetched
    /// through SQL, each fetch grouping its table again: see [`GROUPED_FETCHES`].
    pub select: Select,
    /// Per column of [`Spec::columns`]: false where this member always gives NULL (not fetched).
    pub present: Vec<bool>,
}

impl Member {
    /// Whether the member groups its rows (see [`GROUPED_FETCHES`]).
    fn grouped(&self) -> bool {
        self.select.group_by.is_some()
    }
}

/// What the SQL path reads as one query, in the partitioned reader's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub kind: CursorKind,
    pub source: usize,
    pub what: &'static str,
    pub members: Vec<Member>,
    /// Expressions over a member's output that name the resource (the SQL path's `PARTITION BY`).
    pub partition: Vec<Expr>,
    /// The columns the decoder reads, in its order: expressions over a member's output.
    pub columns: Vec<Expr>,
    /// The column rows are ordered by (then family, then rowid): `start` for time order.
    pub order: Expr,
    /// A column that must increase strictly along each run (see [`Aux`]).
    pub aux: Option<Aux>,
}

/// A column that must increase strictly along each run, so that
/// [`PartitionedRows::aux_floor`] bounds what a resource's remaining rows hold; `rule` says what
/// the survey does where it does not.
#[derive(Clone, Debug, PartialEq)]
pub struct Aux {
    /// An expression over a member's output.
    pub column: Expr,
    pub rule: AuxRule,
}

impl Aux {
    /// The column as an expression: `NULL` where the spec has none.
    fn expr(aux: &Option<Aux>) -> Expr {
        aux.as_ref().map_or(Expr::Null, |a| a.column.clone())
    }
}

/// What a survey does where the `aux` column does not increase strictly along a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuxRule {
    /// Declines (the reader's order is useless without it): aux must be an integer on every
    /// row, increasing along each run.
    Decline,
    /// Goes on, and says so in [`Survey::aux_sound`] (the rows are read in order either way;
    /// only the floor is then unusable). NULL is allowed: members without the column give it,
    /// and a run's NULLs after its last integer do not hide anything from the floor.
    Note,
}

/// Up to four integer-or-NULL parts (stream: process, device, context, stream; thread: tid).
pub type Key = [Option<i64>; 4];

/// A survey gives up past this many runs (each costs ~250 bytes while reading, and a query).
const MAX_RUNS: usize = 200_000;
/// ... or when a resource has more than this many runs and they average fewer than
/// [`MIN_MEAN_RUN`] rows: a run costs a query (a few rows' worth of reading), so rows in nearly
/// random order are cheaper to sort. Long traces have many long runs (nsys writes some tables in
/// blocks: one more run per thread and block), which are read as runs.
const FEW_RUNS: usize = 64;
const MIN_MEAN_RUN: u64 = 4;
/// ... or when the filtered range scans would visit this many rows per row read.
const MAX_VISITS_PER_ROW: i64 = 48;
/// A run is sparse when its rowid range holds this many rows per row of its own, or more: the
/// survey then lists its rowids (up to [`MOST_LISTED`] over a member), and its fetches go to
/// them instead of visiting every row in between (nsys writes a thread's few calls or scheduling
/// events among the many of another: at 10 MB a run of 10 OS runtime calls spans 12 853 rows).
const SPARSE: i64 = 4;
/// Rowids listed over a member's sparse runs at most (8 bytes each); a run is no longer listed
/// once it has [`DENSE_AFTER`] rows and is not sparse so far.
const MOST_LISTED: usize = 1 << 18;
const DENSE_AFTER: usize = 64;
/// Fetches a run of a grouped member takes at most. They go through SQL, which has nothing to
/// seek a group by: each groups the member's rows of its resource again, a pass over its table.
/// So a run's rows come in this many batches, not in batches of [`MAX_BATCH`] (which made G
/// groups cost G / 512 passes), and a survey with a grouped member declines (the family is
/// then read through SQL's sort, which covers every member once) where the grouped member's
/// groups times this outnumber the other members' rows. The MPI waits (one row per request)
/// are this member: a few rows in most exports, where reading the other host calls sort-free
/// took a 10 MB export with MPI from 0.55 to 0.10 s; with 16 000 more groups (of two rows)
/// 0.45 s against the sort's 0.75 s, and (where it now declines) with 100 000 more 2.7 s
/// against 1.9 s (docs/PERFORMANCE.md item 42).
const GROUPED_FETCHES: u64 = 8;
/// Groups a grouped member's survey takes at most (a fetch then buffers up to an eighth of a
/// run: ~32 000 rows).
const GROUPED_MOST: usize = 1 << 18;

/// The batch of a grouped member's run of `rows` rows (see [`GROUPED_FETCHES`]).
fn grouped_batch(rows: u64) -> usize {
    usize::try_from(rows.div_ceil(GROUPED_FETCHES))
        .unwrap_or(usize::MAX)
        .max(FIRST_BATCH)
}
/// Rows fetched per query: the first batch of a run is small (many runs are short), then grows.
const FIRST_BATCH: usize = 16;
const MAX_BATCH: usize = 512;
/// Rows of first batches over the inputs read together, as a rule: with one input per rank, a
/// run holds its last two fetches for each of its ranks' resources (48 rows of 16 and 32 held
/// ~40 KiB an input), so first batches shrink to [`LEAST_FIRST_BATCH`] past 64 inputs.
const FIRST_ROWS: usize = 1024;
const LEAST_FIRST_BATCH: usize = 4;
/// Rows buffered over all runs at most (0.1–0.6 KiB each: 24 bytes per column its table gives,
/// and its text; a run being read holds its last two fetches): with many resources busy at once
/// (a thousand threads), batches shrink so that memory stays flat.
const ROW_BUDGET: usize = 65_536;

/// One sorted run: rows of one member on one resource, rowids `lo..=hi`.
#[derive(Clone)]
struct Run {
    member: usize,
    partition: usize,
    lo: i64,
    hi: i64,
    first_order: i64,
    first_aux: Option<i64>,
    /// The order value of its last row (with `first_order`, how runs overlap).
    last_order: i64,
    /// Rows the survey counted: reading must give exactly these (a damaged B-tree can answer a
    /// rowid-range seek differently from a scan).
    rows: u64,
    /// Its rowids, where it is sparse (see [`SPARSE`]).
    rowids: Option<Arc<[i64]>>,
}

impl Run {
    /// Whether its rowid range holds [`SPARSE`] rows or more per row of its own (so far, while
    /// the survey extends it).
    fn is_sparse(&self) -> bool {
        self.hi - self.lo + 1 >= SPARSE * self.rows as i64
    }
}

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

/// The surveyed runs of one cursor; `None` from [`survey`] means "use the SQL path".
pub struct Survey {
    runs: Vec<Run>,
    keys: Vec<Key>,
    /// Run indices of each partition.
    by_partition: Vec<Vec<usize>>,
    /// Whether [`PartitionedRows::aux_floor`] is right: the aux column increases strictly along
    /// every run, and no NULL comes before an integer in a run (always, under
    /// [`AuxRule::Decline`]).
    aux_sound: bool,
}

impl Survey {
    /// The resources' keys, by partition index.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// Whether the aux column bounds each resource's remaining rows (see [`AuxRule`]).
    pub fn aux_sound(&self) -> bool {
        self.aux_sound
    }

    /// Splits the resources into groups (e.g. per process): one survey per group, in group order.
    pub fn split_by<G: Ord>(
        self,
        group: impl Fn(&Key) -> G,
    ) -> std::collections::BTreeMap<G, Survey> {
        let mut out: std::collections::BTreeMap<G, Survey> = std::collections::BTreeMap::new();
        for (p, key) in self.keys.iter().enumerate() {
            let part = out.entry(group(key)).or_insert_with(|| Survey {
                runs: Vec::new(),
                keys: Vec::new(),
                by_partition: Vec::new(),
                aux_sound: self.aux_sound,
            });
            let np = part.keys.len();
            part.keys.push(*key);
            let mut ids = Vec::new();
            for &r in &self.by_partition[p] {
                ids.push(part.runs.len());
                part.runs.push(Run {
                    partition: np,
                    ..self.runs[r].clone()
                });
            }
            part.by_partition.push(ids);
        }
        out
    }
}

/// The survey of one spec: a scan per member, which cuts its rows into per-resource sorted runs
/// (see the module comment). The scans may go side by side with others (nsys/interleave.rs);
/// [`SurveyScans::finish`] then gives what scanning the members one after the other gives.
pub struct SurveyScans<'s> {
    spec: &'s Spec,
    /// One per member; none when the spec cannot be surveyed.
    members: Vec<MemberSurvey>,
}

impl<'s> SurveyScans<'s> {
    pub fn new(spec: &'s Spec) -> SurveyScans<'s> {
        let members = if surveyable(spec) {
            (0..spec.members.len())
                .map(|m| MemberSurvey::new(spec, m))
                .collect()
        } else {
            Vec::new()
        };
        SurveyScans { spec, members }
    }

    /// Adds the members' scans to `set`, in member order (by the direct reader where a member
    /// compiles for it: the same rows either way); [`finish`](Self::finish) takes how they
    /// ended. Returns how many were added.
    pub fn register<'a>(&'a mut self, set: &mut ScanSet<'a>) -> usize {
        let (spec, n) = (self.spec, self.members.len());
        for scan in self.members.iter_mut() {
            let query = survey_query(spec, scan.member);
            let sql = Sql::Given(member_scan_sql(spec, scan.member));
            set.add(
                query.as_ref(),
                sql,
                Box::new(move |row| match row {
                    Ok(row) => scan.row(row),
                    // A page that breaks the format: SQLite reads the table instead (it reads
                    // some damage without noticing; the survey's own checks may then decline).
                    Err(_) => {
                        scan.declined = true;
                        Ok(false)
                    }
                }),
            );
        }
        n
    }

    /// How many scans [`register`](Self::register) adds.
    pub fn scan_count(&self) -> usize {
        self.members.len()
    }

    /// The runs, or `None` when the survey declines, from how each member's scan ended (in
    /// member order): the first decline or error decides, as when scanned one after the other.
    pub fn finish(self, ended: Vec<rusqlite::Result<()>>) -> rusqlite::Result<Option<Survey>> {
        if self.members.is_empty() {
            return Ok(None);
        }
        let mut done = Vec::with_capacity(self.members.len());
        for (end, scan) in ended.into_iter().zip(self.members) {
            end?;
            let Some(m) = scan.finish() else {
                return Ok(None);
            };
            done.push(m);
        }
        Ok(combine(done))
    }
}

/// A survey made on its own (its members' scans in one pass per table).
pub fn survey(conn: &Connection, spec: &Spec, direct: bool) -> rusqlite::Result<Option<Survey>> {
    let mut survey = SurveyScans::new(spec);
    let mut set = ScanSet::new(conn, direct);
    survey.register(&mut set);
    let ended = set.run();
    survey.finish(ended)
}

/// Whether a spec can be surveyed at all (its partition fits a [`Key`]).
fn surveyable(spec: &Spec) -> bool {
    !spec.partition.is_empty() && spec.partition.len() <= 4
}

/// The scan of member `m`: rowid, order, aux and partition columns, in rowid order.
fn member_scan_sql(spec: &Spec, m: usize) -> String {
    let partition: Vec<String> = spec.partition.iter().map(Expr::sql).collect();
    format!(
        "SELECT rid, {}, {}, {} FROM ({}) ORDER BY rid",
        spec.order.sql(),
        Aux::expr(&spec.aux).sql(),
        partition.join(", "),
        spec.members[m].select.sql()
    )
}

/// What the survey of member `m` reads, in the order of [`member_scan_sql`]'s columns (rid,
/// order, aux, partition), as a query of its own table.
fn survey_query(spec: &Spec, m: usize) -> Option<Select> {
    let rid = Expr::out("rid");
    let aux = Aux::expr(&spec.aux);
    let exprs: Vec<&Expr> = [&rid, &spec.order, &aux]
        .into_iter()
        .chain(&spec.partition)
        .collect();
    spec.members[m].select.project(&exprs)
}

/// Resources looked up by a linear search rather than a hash (see [`MemberSurvey::take`]).
const FEW_KEYS: usize = 8;

/// One member's scan in progress: its runs, over its own resource numbering (in order of first
/// appearance; [`combine`] renumbers them as one scan after the other would have).
struct MemberSurvey {
    member: usize,
    /// The spec's aux rule, where it has an aux column.
    aux: Option<AuxRule>,
    partition_len: usize,
    runs: Vec<Run>,
    keys: Vec<Key>,
    index: FastMap<Key, usize>,
    /// Per partition (by index): its open run, the order value of the run's last row, and its
    /// aux.
    open: Vec<Option<(usize, i64, RunAux)>>,
    /// Under [`AuxRule::Note`]: false once a run breaks the rule.
    aux_sound: bool,
    last: Option<(Key, usize)>,
    first_rid: Option<i64>,
    last_rid: i64,
    declined: bool,
    /// Per run: its rowids so far, while it may be sparse (see [`SPARSE`]); and how many are
    /// listed over all runs.
    listing: Vec<Option<Vec<i64>>>,
    listed: usize,
    /// Rows taken; a grouped member takes [`GROUPED_MOST`] at most.
    rows: usize,
    grouped: bool,
}

/// What one member's scan found.
struct MemberRuns {
    runs: Vec<Run>,
    keys: Vec<Key>,
    aux_sound: bool,
    /// Rowids from the member's first row to its last (0 without rows).
    span_rows: i64,
    /// Whether the member groups its rows (see [`GROUPED_FETCHES`]).
    grouped: bool,
}

impl MemberSurvey {
    fn new(spec: &Spec, member: usize) -> MemberSurvey {
        MemberSurvey {
            member,
            aux: spec.aux.as_ref().map(|a| a.rule),
            partition_len: spec.partition.len(),
            runs: Vec::new(),
            keys: Vec::new(),
            index: FastMap::default(),
            open: Vec::new(),
            aux_sound: true,
            last: None,
            first_rid: None,
            last_rid: 0,
            declined: false,
            listing: Vec::new(),
            listed: 0,
            rows: 0,
            grouped: spec.members[member].grouped(),
        }
    }

    /// Takes the next row of the scan (`rid, order, aux, partition…`); false when the survey
    /// declines (no more rows needed).
    fn row<R: Fields + ?Sized>(&mut self, row: &R) -> rusqlite::Result<bool> {
        let mut v = [ValueRef::Null; 7];
        row.values(0, &mut v[..3 + self.partition_len])?;
        let ValueRef::Integer(rid) = v[0] else {
            self.declined = true;
            return Ok(false);
        };
        let mut key = [ValueRef::Null; 4];
        key[..self.partition_len].copy_from_slice(&v[3..3 + self.partition_len]);
        Ok(self.take(rid, v[1], v[2], &key))
    }

    /// Takes the next row of the scan; false when the survey declines (no more rows needed).
    fn take(&mut self, rid: i64, order: ValueRef, aux: ValueRef, parts: &[ValueRef; 4]) -> bool {
        let declined = |s: &mut MemberSurvey| {
            s.declined = true;
            false
        };
        let ValueRef::Integer(order) = order else {
            return declined(self);
        };
        let aux = match (aux, self.aux) {
            (ValueRef::Integer(v), _) => Some(v),
            (ValueRef::Null, None | Some(AuxRule::Note)) => None,
            _ => return declined(self),
        };
        let mut key: Key = [None; 4];
        for (k, part) in key.iter_mut().zip(parts).take(self.partition_len) {
            *k = match *part {
                ValueRef::Null => None,
                ValueRef::Integer(v) => Some(v),
                _ => return declined(self),
            };
        }
        // Rowids come in increasing order from a sound table B-tree; a damaged file may not
        // (runs are rowid ranges, so that would read rows twice): leave it to the SQL path.
        if self.first_rid.is_some() && rid <= self.last_rid {
            return declined(self);
        }
        self.rows += 1;
        if self.grouped && self.rows > GROUPED_MOST {
            return declined(self);
        }
        self.first_rid.get_or_insert(rid);
        self.last_rid = rid;
        // Consecutive rows are mostly on the same resource: skip the hash lookup then, and
        // while there are few resources (rows of a few threads or streams that alternate).
        let p = match self.last {
            Some((k, p)) if k == key => p,
            _ => {
                let next = self.keys.len();
                let few = (next <= FEW_KEYS)
                    .then(|| self.keys.iter().position(|k| *k == key))
                    .flatten();
                let p = few.unwrap_or_else(|| *self.index.entry(key).or_insert(next));
                if p == next {
                    self.keys.push(key);
                    self.open.push(None);
                }
                self.last = Some((key, p));
                p
            }
        };
        match &mut self.open[p] {
            Some((r, prev, run_aux)) if order >= *prev => {
                match self.aux {
                    Some(AuxRule::Decline) if aux <= run_aux.last => {
                        return declined(self); // the aux column does not increase along the run
                    }
                    Some(AuxRule::Note) if !run_aux.follows(aux) => self.aux_sound = false,
                    _ => {}
                }
                run_aux.take(aux);
                let run = &mut self.runs[*r];
                run.hi = rid;
                run.rows += 1;
                run.last_order = order;
                *prev = order;
                let r = *r;
                self.list(r, rid);
            }
            _ => {
                if self.runs.len() == MAX_RUNS {
                    return declined(self);
                }
                let mut run_aux = RunAux::default();
                run_aux.take(aux);
                self.open[p] = Some((self.runs.len(), order, run_aux));
                self.runs.push(Run {
                    member: self.member,
                    partition: p,
                    lo: rid,
                    hi: rid,
                    first_order: order,
                    first_aux: aux,
                    last_order: order,
                    rows: 1,
                    rowids: None,
                });
                self.listing.push(None);
                self.list(self.runs.len() - 1, rid);
            }
        }
        true
    }

    /// Adds row `rid` to the list of run `r` (just extended with it), while the run may be
    /// sparse and the member's lists have room.
    fn list(&mut self, r: usize, rid: i64) {
        let run = &self.runs[r];
        let listing = &mut self.listing[r];
        if run.rows == 1 && self.listed < MOST_LISTED {
            *listing = Some(vec![rid]);
            self.listed += 1;
            return;
        }
        let Some(list) = listing else {
            return;
        };
        let dense = list.len() >= DENSE_AFTER && !run.is_sparse();
        if dense || self.listed == MOST_LISTED {
            self.listed -= list.len();
            *listing = None;
        } else {
            list.push(rid);
            self.listed += 1;
        }
    }

    /// Its runs, or `None` when it declined.
    fn finish(self) -> Option<MemberRuns> {
        if self.declined {
            return None;
        }
        let span_rows = self.first_rid.map_or(0, |f| self.last_rid - f + 1);
        let mut runs = self.runs;
        for (run, list) in runs.iter_mut().zip(self.listing) {
            if let Some(list) = list.filter(|_| run.is_sparse()) {
                debug_assert_eq!(list.len() as u64, run.rows, "every row listed");
                run.rowids = Some(list.into());
            }
        }
        Some(MemberRuns {
            runs,
            keys: self.keys,
            aux_sound: self.aux_sound,
            span_rows,
            grouped: self.grouped,
        })
    }
}

/// The aux values of a run so far: its last one, and whether a NULL came.
#[derive(Clone, Copy, Default)]
struct RunAux {
    last: Option<i64>,
    null_seen: bool,
}

impl RunAux {
    fn take(&mut self, aux: Option<i64>) {
        match aux {
            Some(_) => self.last = aux,
            None => self.null_seen = true,
        }
    }

    /// Whether `aux` keeps the floor right ([`AuxRule::Note`]): a NULL always does (the run's
    /// head is then left out of the floor, and so must every later row be: only NULLs may
    /// follow); an integer only above the last one and before any NULL.
    fn follows(&self, aux: Option<i64>) -> bool {
        match aux {
            None => true,
            Some(a) => !self.null_seen && self.last.is_none_or(|l| a > l),
        }
    }
}

/// The survey of all members (in member order), or a decline (see the module comment).
fn combine(members: Vec<MemberRuns>) -> Option<Survey> {
    // A grouped member's fetches each pass over its table (see GROUPED_FETCHES).
    let rows = |grouped: bool| -> u64 {
        (members.iter().filter(|m| m.grouped == grouped))
            .flat_map(|m| &m.runs)
            .map(|r| r.rows)
            .sum()
    };
    if rows(true).saturating_mul(GROUPED_FETCHES) > rows(false) {
        return None;
    }
    let mut runs: Vec<Run> = Vec::new();
    let mut keys: Vec<Key> = Vec::new();
    let mut index: FastMap<Key, usize> = FastMap::default();
    let mut span_rows = 0i64;
    let aux_sound = members.iter().all(|m| m.aux_sound);
    for m in members {
        // The member's resources in its order of first appearance: new ones numbered next, as
        // one scan after the other numbers them.
        let renumber: Vec<usize> = m
            .keys
            .iter()
            .map(|key| {
                let next = keys.len();
                let p = *index.entry(*key).or_insert(next);
                if p == next {
                    keys.push(*key);
                }
                p
            })
            .collect();
        if runs.len() + m.runs.len() > MAX_RUNS {
            return None;
        }
        runs.extend(m.runs.into_iter().map(|r| Run {
            partition: renumber[r.partition],
            ..r
        }));
        span_rows += m.span_rows;
    }
    // A run's query visits every row of its member in lo..=hi; rowids are dense in exports.
    let visits: i64 = runs.iter().map(|r| r.hi - r.lo + 1).sum();
    if visits > MAX_VISITS_PER_ROW.saturating_mul(span_rows.max(1)) {
        return None;
    }
    let mut by_partition = vec![Vec::new(); keys.len()];
    for (i, r) in runs.iter().enumerate() {
        by_partition[r.partition].push(i);
    }
    let fragmented = |p: &Vec<usize>| {
        let rows: u64 = p.iter().map(|&r| runs[r].rows).sum();
        p.len() > FEW_RUNS && rows < MIN_MEAN_RUN * p.len() as u64
    };
    if by_partition.iter().any(fragmented) {
        return None;
    }
    Some(Survey {
        runs,
        keys,
        by_partition,
        aux_sound,
    })
}

/// The next row of a partitioned cursor, with what `LEAD` would give.
pub struct NextRow {
    /// Where its values are: [`PartitionedRows::row`] reads them, until the next row is asked.
    pub row: RowAt,
    /// This row's order value (raw start for time order) and the next one on the same resource.
    pub start: i64,
    pub next_start: Option<i64>,
    pub rid: i64,
    pub aux: Option<i64>,
    /// The resource: index into [`Survey::keys`].
    pub partition: usize,
}

/// Where a row handed out lies: row `index` of a fetch of its run, or of the last fetch of a run
/// that ended with it.
#[derive(Clone, Copy)]
pub struct RowAt {
    block: Block,
    index: usize,
}

#[derive(Clone, Copy)]
enum Block {
    /// The run's last fetch, `rows`, or the one before, `before`.
    Rows(usize),
    Before(usize),
    Finished,
    /// Row `index` of a batch a helper thread shipped (nsys/shipped.rs).
    #[cfg(not(target_family = "wasm"))]
    Shipped,
}

#[cfg(not(target_family = "wasm"))]
impl RowAt {
    /// Row `index` of a shipped batch.
    pub(super) fn shipped(index: usize) -> RowAt {
        RowAt {
            block: Block::Shipped,
            index,
        }
    }

    /// Its index in a shipped batch.
    pub(super) fn shipped_index(self) -> usize {
        debug_assert!(matches!(self.block, Block::Shipped), "a shipped row");
        self.index
    }
}

/// Rows in a partitioned reader's order: [`PartitionedRows`] itself, or (native builds) the same
/// rows read on a helper thread (nsys/shipped.rs).
pub trait OrderedRows {
    /// The resources' keys, by partition index.
    fn keys(&self) -> &[Key];
    /// The next row in the SQL path's order, with its lookahead.
    fn next_row(&mut self, file: &str) -> Result<Option<NextRow>>;
    /// The values of the row handed out last.
    fn row(&self, at: RowAt) -> RowView<'_>;
}

impl OrderedRows for PartitionedRows<'_> {
    fn keys(&self) -> &[Key] {
        PartitionedRows::keys(self)
    }
    fn next_row(&mut self, file: &str) -> Result<Option<NextRow>> {
        PartitionedRows::next_row(self, file)
    }
    fn row(&self, at: RowAt) -> RowView<'_> {
        PartitionedRows::row(self, at)
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
    aux_heads: Vec<BinaryHeap<Reverse<(i64, usize)>>>,
    /// One entry per resource not yet read: its frontier's smallest head.
    heap: BinaryHeap<Reverse<HeadKey>>,
    /// Largest batch of one run (see [`ROW_BUDGET`]), and its first one.
    max_batch: usize,
    first_batch: usize,
    /// The last fetch of the run that ended last: the row handed out last may be there.
    finished: RowBlock,
    /// The members fetched by the direct reader of the file format (nsys/direct.rs).
    direct: Option<DirectFetch<'c>>,
}

/// Fetches by the direct reader: its pager, and per member its plan and cursor (`None`: that
/// member is fetched through SQL).
struct DirectFetch<'c> {
    pager: Rc<Pager<'c>>,
    members: Vec<Option<(Plan, TableCursor)>>,
    record: Record,
}

impl<'c> DirectFetch<'c> {
    /// Where at least one member compiles for the direct reader. Each member's query gives its
    /// fetched columns, then order, rid, aux and the partition (see [`fetch_query`]).
    fn new(spec: &Spec, fetched: &[Vec<usize>], pager: Rc<Pager<'c>>) -> Option<DirectFetch<'c>> {
        let members: Vec<Option<(Plan, TableCursor)>> = (0..spec.members.len())
            .map(|m| {
                let query = fetch_query(spec, m, &fetched[m])?;
                let plan = Plan::compile(&pager, &query).ok()??;
                let cursor = TableCursor::new(plan.table.root);
                Some((plan, cursor))
            })
            .collect();
        members.iter().any(Option::is_some).then(|| DirectFetch {
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
            max_batch: (ROW_BUDGET / (2 * most_overlapping(&survey.runs).max(1)))
                .clamp(FIRST_BATCH, MAX_BATCH),
            first_batch: FIRST_BATCH,
            finished: RowBlock::new(spec.columns.len()),
            direct: None,
            survey,
        };
        rows.direct = pager.and_then(|pager| DirectFetch::new(spec, &rows.fetched, pager));
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
    /// batches where there are many (see [`FIRST_ROWS`]).
    pub fn among(mut self, inputs: usize) -> Self {
        self.first_batch = (FIRST_ROWS / inputs.max(1)).clamp(LEAST_FIRST_BATCH, FIRST_BATCH);
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
        let direct = self
            .direct
            .as_ref()
            .is_some_and(|d| d.members[fetch.member].is_some());
        let listed = self.survey.runs[r].rowids.is_some();
        let got = if direct && listed {
            self.fetch_listed(r, &fetch, file)?
        } else if direct {
            self.fetch_direct(r, &fetch, file)?
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
    fn fetch_direct(&mut self, r: usize, f: &Fetch, file: &str) -> Result<usize> {
        let what = self.what;
        let n = self.fetched[f.member].len();
        let d = self.direct.as_mut().expect("chosen by fill");
        let (plan, cursor) = d.members[f.member].as_mut().expect("chosen by fill");
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
            let row = parsed(&mut d.record, plan, rowid, payload).map_err(bad)?;
            if every_rowid {
                if rowid != f.lo + got as i64 {
                    return Err(damaged(file, what));
                }
            } else if !on_resource(plan, &row, n, self.key_len, &f.key) || !plan.admits(&row) {
                continue;
            }
            keep_direct(o, plan, &row, n, f).map_err(|()| damaged(file, what))?;
            got += 1;
        }
        // The next fetch seeks again (the leaf held would only add to what each input keeps).
        cursor.release();
        Ok(got)
    }

    /// [`fetch_direct`](Self::fetch_direct) for a sparse run (see [`SPARSE`]): its next listed
    /// rowids, each found within the leaf the cursor is in or by a seek, instead of every row in
    /// between. A listed row must be there and be the run's, as the survey saw it.
    fn fetch_listed(&mut self, r: usize, f: &Fetch, file: &str) -> Result<usize> {
        let what = self.what;
        let n = self.fetched[f.member].len();
        let rowids = self.survey.runs[r].rowids.clone().expect("chosen by fill");
        let d = self.direct.as_mut().expect("chosen by fill");
        let (plan, cursor) = d.members[f.member].as_mut().expect("chosen by fill");
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
            let row = parsed(&mut d.record, plan, rowid, payload).map_err(bad)?;
            if rowid != rid
                || !on_resource(plan, &row, n, self.key_len, &f.key)
                || !plan.admits(&row)
            {
                return Err(damaged(file, what));
            }
            keep_direct(o, plan, &row, n, f).map_err(|()| damaged(file, what))?;
        }
        o.listed = upto;
        Ok(upto - from)
    }

    /// The values of a row [`next_row`](Self::next_row) handed out (it must be the last one).
    #[inline]
    pub fn row(&self, at: RowAt) -> RowView<'_> {
        let block = match at.block {
            Block::Rows(r) => &self.open[r].as_ref().expect("a run read").rows,
            Block::Before(r) => &self.open[r].as_ref().expect("a run read").before,
            Block::Finished => &self.finished,
            #[cfg(not(target_family = "wasm"))]
            Block::Shipped => unreachable!("a shipped row is read from its batch"),
        };
        block.row(at.index, &self.columns)
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
        Ok(Some(NextRow {
            row: RowAt { block, index },
            start,
            next_start: next.map(|(s, ..)| s),
            rid,
            aux: b.aux,
            partition: p,
        }))
    }
}

/// A row a direct fetch read, its record parsed into `record` as far as `plan` reads.
#[inline]
fn parsed<'p, 'r>(
    record: &'r mut Record,
    plan: &Plan,
    rowid: i64,
    payload: &'p [u8],
) -> std::result::Result<DirectRow<'p, 'r>, crate::sqlfile::Damaged> {
    record.parse(payload, plan.upto)?;
    Ok(DirectRow {
        rowid,
        payload,
        record,
    })
}

/// Whether a row a direct fetch read is on the resource `key` (its `key_len` partition columns
/// follow the `n` fetched ones, order, rid and aux: [`fetch_query`]), as SQL's `IS` tells.
#[inline]
fn on_resource(plan: &Plan, row: &DirectRow, n: usize, key_len: usize, key: &Key) -> bool {
    (0..key_len).all(|k| same_number(plan.value(row, n + 3 + k), key[k]))
}

/// Keeps a row a direct fetch `f` read for its run `o` (columns as [`fetch_query`] gives them:
/// the `n` fetched, then order, rid, aux); `Err` where it is not what the survey saw there.
#[inline]
fn keep_direct(
    o: &mut OpenRun,
    plan: &Plan,
    row: &DirectRow,
    n: usize,
    f: &Fetch,
) -> std::result::Result<(), ()> {
    // The run's block holds its member's `n` fetched columns, in fetch order.
    debug_assert_eq!(o.rows.width(), n, "a block of the member's fetched columns");
    o.rows.push_row_of(|j| plan.value(row, j));
    // The survey saw integers here (it declines otherwise).
    let ValueRef::Integer(order) = plan.value(row, n) else {
        return Err(());
    };
    let aux = match plan.value(row, n + 2) {
        ValueRef::Integer(a) => Some(a),
        ValueRef::Null => None,
        _ => return Err(()),
    };
    o.take(f, order, row.rowid, aux)
}

/// The most runs that hold rows at one order value: the runs whose rows can be buffered at once
/// (runs open when the merge reaches their first row; a finished run's buffer is given back).
fn most_overlapping(runs: &[Run]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(first_order: i64, last_order: i64) -> Run {
        Run {
            member: 0,
            partition: 0,
            lo: 0,
            hi: 0,
            first_order,
            first_aux: None,
            last_order,
            rows: 1,
            rowids: None,
        }
    }

    /// Calls of table `T (start, tid, corr)` by thread, in time order, the correlation id
    /// their aux column under `rule`.
    fn calls_spec(rule: AuxRule) -> Spec {
        use crate::nsys::select::Val;
        Spec {
            kind: CursorKind::Host,
            source: 0,
            what: "calls",
            members: vec![Member {
                fam: 0,
                select: Select::new("T")
                    .output("rid", Val::Rowid)
                    .output("start", Val::col("start"))
                    .output("tid", Val::col("tid"))
                    .output("corr", Val::col("corr")),
                present: Vec::new(),
            }],
            partition: vec![Expr::out("tid")],
            columns: Vec::new(),
            order: Expr::out("start"),
            aux: Some(Aux {
                column: Expr::out("corr"),
                rule,
            }),
        }
    }

    /// Rows of table `T (start, tid, corr, name)` by thread, in time order, read with their
    /// correlation id and name (no aux column).
    fn named_calls_spec() -> Spec {
        let mut spec = calls_spec(AuxRule::Note);
        spec.members[0].select = spec.members[0]
            .select
            .clone()
            .output("name", crate::nsys::select::Val::col("name"));
        spec.columns = vec![Expr::out("corr"), Expr::out("name")];
        spec.aux = None;
        spec
    }

    /// Surveys rows `(thread, start, aux)` (in rowid order) of one member whose aux is the
    /// correlation id, under `rule`: the survey's outcome and, if any, whether its aux is sound.
    fn surveyed(rule: AuxRule, rows: &[(i64, i64, Option<i64>)]) -> Option<bool> {
        let spec = calls_spec(rule);
        let mut scan = MemberSurvey::new(&spec, 0);
        for (rid, &(tid, start, aux)) in rows.iter().enumerate() {
            let aux = aux.map_or(ValueRef::Null, ValueRef::Integer);
            let key = [
                ValueRef::Integer(tid),
                ValueRef::Null,
                ValueRef::Null,
                ValueRef::Null,
            ];
            if !scan.take(rid as i64 + 1, ValueRef::Integer(start), aux, &key) {
                break;
            }
        }
        combine(vec![scan.finish()?]).map(|s| s.aux_sound())
    }

    #[test]
    fn an_aux_column_that_breaks_the_rule_declines_or_is_noted() {
        use AuxRule::{Decline, Note};
        // Two threads, each increasing in start and id: sound either way.
        let good = [
            (1, 10, Some(1)),
            (2, 11, Some(2)),
            (1, 12, Some(3)),
            (2, 13, Some(5)),
        ];
        assert_eq!(surveyed(Decline, &good), Some(true));
        assert_eq!(surveyed(Note, &good), Some(true));
        // An id that falls along a thread's run.
        let falls = [(1, 10, Some(3)), (2, 11, Some(2)), (1, 12, Some(1))];
        assert_eq!(surveyed(Decline, &falls), None);
        assert_eq!(surveyed(Note, &falls), Some(false));
        // Where the start falls the thread's next run begins: its ids start afresh.
        let new_run = [(1, 10, Some(3)), (1, 5, Some(1)), (1, 6, Some(2))];
        assert_eq!(surveyed(Note, &new_run), Some(true));
        // NULL ids: Decline wants an integer on every row. Under Note, NULLs after a run's
        // last id hide nothing; a NULL before an id would hide that id from the floor.
        let null_last = [
            (1, 10, Some(1)),
            (1, 11, None),
            (2, 12, Some(2)),
            (1, 13, None),
        ];
        assert_eq!(surveyed(Decline, &null_last), None);
        assert_eq!(surveyed(Note, &null_last), Some(true));
        let null_first = [(1, 10, None), (1, 11, Some(1))];
        assert_eq!(surveyed(Note, &null_first), Some(false));
        let null_between = [(1, 10, Some(1)), (1, 11, None), (1, 12, Some(2))];
        assert_eq!(surveyed(Note, &null_between), Some(false));
        // ... but a NULL in one run does not concern the thread's next run.
        let null_then_new_run = [(1, 10, Some(1)), (1, 11, None), (1, 2, Some(2))];
        assert_eq!(surveyed(Note, &null_then_new_run), Some(true));
    }

    #[test]
    fn aux_heads_stay_small_when_no_floor_is_asked() {
        // One thread's 2 000 calls in two runs that overlap in time (the second block starts
        // over), read to the end without asking the floor (as for a process whose calls launch
        // nothing): the heads left behind as the runs move on must not pile up.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE T (start INTEGER, tid INTEGER, corr INTEGER);
             WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 999)
             INSERT INTO T SELECT 1000 + 2 * n, 1, 1 + n FROM i;
             WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 999)
             INSERT INTO T SELECT 1001 + 2 * n, 1, 2001 + n FROM i;",
        )
        .unwrap();
        let spec = calls_spec(AuxRule::Note);
        let surveyed = survey(&conn, &spec, false).unwrap().expect("runs");
        assert_eq!(surveyed.runs.len(), 2);
        let mut rows = PartitionedRows::new(&conn, &spec, surveyed, None);
        let (mut read, mut most) = (0, 0);
        while rows.next_row("test").unwrap().is_some() {
            read += 1;
            most = most.max(rows.aux_heads[0].len());
        }
        assert_eq!(read, 2000);
        assert!(most <= 2 * 2 + 1, "{most} heads kept for 2 runs");
    }

    /// A row handed out: (start, next start, rowid, thread, name).
    type Read = (i64, Option<i64>, i64, i64, String);

    /// Every row `rows` hands out.
    fn read_all(rows: &mut PartitionedRows) -> Result<Vec<Read>> {
        let mut got = Vec::new();
        while let Some(next) = rows.next_row("test")? {
            let row = rows.row(next.row);
            let ValueRef::Text(name) = row.value(1).unwrap() else {
                panic!("a name")
            };
            let tid = rows.keys()[next.partition][0].unwrap();
            let name = String::from_utf8(name.to_vec()).unwrap();
            got.push((next.start, next.next_start, next.rid, tid, name));
        }
        Ok(got)
    }

    #[test]
    fn sparse_runs_are_read_by_their_rowids() {
        // Thread 1 writes 3 000 rows; among them thread 2 has 40, one every 75 rows (sparse:
        // listed), and thread 3 100 rows in the first 200 (half the rows there: not sparse).
        let path =
            std::env::temp_dir().join(format!("prvsight-sparse-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE T (start INTEGER, tid INTEGER, corr INTEGER, name TEXT)")
            .unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..3000i64 {
            let tid = if i % 75 == 74 {
                2
            } else if i < 200 && i % 2 == 1 {
                3
            } else {
                1
            };
            let name = format!("{tid}-{}", "y".repeat((i % 5) as usize));
            tx.execute(
                "INSERT INTO T VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![10 * i, tid, i, name],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        let spec = named_calls_spec();
        let listed = |s: &Survey| -> Vec<(i64, Option<usize>)> {
            (s.runs.iter())
                .map(|r| {
                    (
                        s.keys[r.partition][0].unwrap(),
                        r.rowids.as_ref().map(|l| l.len()),
                    )
                })
                .collect()
        };
        let surveyed = survey(&conn, &spec, true).unwrap().expect("runs");
        assert_eq!(listed(&surveyed), [(1, None), (3, None), (2, Some(40))]);
        let pager = Pager::shared(&conn, true).expect("a file's pages");
        let mut direct = PartitionedRows::new(&conn, &spec, surveyed, Some(pager.clone()));
        let by_rowids = read_all(&mut direct).unwrap();
        let surveyed = survey(&conn, &spec, false).unwrap().expect("runs");
        let mut by_sql = PartitionedRows::new(&conn, &spec, surveyed, None);
        assert_eq!(by_rowids, read_all(&mut by_sql).unwrap());
        assert_eq!(by_rowids.len(), 3000);
        assert_eq!(by_rowids.iter().filter(|r| r.3 == 2).count(), 40);

        // A listed row gone, or now another thread's, after the survey: an error, not a row
        // less or a row more.
        for change in [
            "DELETE FROM T WHERE corr = 749",
            "UPDATE T SET tid = 1 WHERE corr = 1499",
        ] {
            let surveyed = survey(&conn, &spec, true).unwrap().expect("runs");
            conn.execute_batch(change).unwrap();
            // A pager of its own: the one above caches the pages it read before the change.
            let pager = Pager::shared(&conn, true).expect("a file's pages");
            let mut rows = PartitionedRows::new(&conn, &spec, surveyed, Some(pager));
            let err = match read_all(&mut rows) {
                Ok(rows) => panic!("{change}: read {} rows", rows.len()),
                Err(e) => e.to_string(),
            };
            assert!(
                err.contains("reads differently by rowid range"),
                "{change}: {err}"
            );
        }
        drop((direct, by_sql, pager));
        drop(conn);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn every_row_handed_out_reads_its_own_values() {
        // Three threads whose runs end at, just past and well past the ends of fetches (16 rows,
        // then 32, 64, …): a run of 48 rows ends exactly at its second fetch's end (its last row
        // is read from the batch before an empty fetch), one of 17 just past its first. Each row
        // handed out must read as its own, with text of varying length.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE T (start INTEGER, tid INTEGER, corr INTEGER, name TEXT)")
            .unwrap();
        let runs: [(i64, &[i64]); 3] = [(1, &[48, 1, 16]), (2, &[17, 100]), (3, &[5, 48, 48])];
        let mut want = Vec::new();
        for (tid, lengths) in runs {
            for (k, &n) in lengths.iter().enumerate() {
                for i in 0..n {
                    // Each run starts earlier than the one before: a new run.
                    let start = 1000 * (3 - k as i64) + 3 * i + tid;
                    let name = "x".repeat((start % 7) as usize) + &start.to_string();
                    conn.execute(
                        "INSERT INTO T VALUES (?1, ?2, ?3, ?4)",
                        rusqlite::params![start, tid, 10 * start + tid, name],
                    )
                    .unwrap();
                    want.push((start, conn.last_insert_rowid(), name));
                }
            }
        }
        want.sort();
        let spec = named_calls_spec();
        let surveyed = survey(&conn, &spec, false).unwrap().expect("runs");
        assert_eq!(surveyed.runs.len(), 8);
        let mut rows = PartitionedRows::new(&conn, &spec, surveyed, None);
        let mut got = Vec::new();
        while let Some(next) = rows.next_row("test").unwrap() {
            let row = rows.row(next.row);
            let tid = rows.keys()[next.partition][0].unwrap();
            assert_eq!(
                row.value(0).unwrap(),
                ValueRef::Integer(10 * next.start + tid)
            );
            let ValueRef::Text(name) = row.value(1).unwrap() else {
                panic!("a name")
            };
            got.push((
                next.start,
                next.rid,
                String::from_utf8(name.to_vec()).unwrap(),
            ));
        }
        assert_eq!(got, want);
    }

    #[test]
    fn overlapping_runs_are_counted_where_most_are_open_at_once() {
        assert_eq!(most_overlapping(&[]), 0);
        // Runs one after the other (a long trace written in blocks): one open at a time.
        let blocks: Vec<Run> = (0..100).map(|i| run(i * 10, i * 10 + 9)).collect();
        assert_eq!(most_overlapping(&blocks), 1);
        // Touching runs overlap at the shared value; nested and crossing ones too.
        assert_eq!(most_overlapping(&[run(0, 5), run(5, 9)]), 2);
        assert_eq!(
            most_overlapping(&[
                run(0, 100),
                run(10, 20),
                run(15, 30),
                run(25, 40),
                run(50, 60)
            ]),
            3
        );
    }
}
