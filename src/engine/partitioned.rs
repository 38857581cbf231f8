//! Time order without sorting: the partitioned reader.
//!
//! Exports have no indexes, so `ORDER BY start` is a full sort, and the lookahead the writer needs
//! (the start of the next operation on the same stream or thread, SQL `LEAD … OVER (PARTITION BY
//! …)`) is a second sort: together many times the cost of reading the rows.
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

use std::sync::Arc;

use super::block::RowView;
use super::select::{Expr, Select};
use crate::error::Result;

pub mod parallel;
mod reader;
mod survey;
#[cfg(test)]
mod tests;

pub use reader::PartitionedRows;
pub use survey::{survey, Survey, SurveyScans};

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
    pub(super) fn grouped(&self) -> bool {
        self.select.group_by.is_some()
    }
}

/// What the SQL path reads as one query, in the partitioned reader's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
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
    pub(super) fn expr(aux: &Option<Aux>) -> Expr {
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

/// A run is sparse when its rowid range holds this many rows per row of its own, or more: the
/// survey then lists its rowids (up to [`MOST_LISTED`] over a member), and its fetches go to
/// them instead of visiting every row in between (nsys writes a thread's few calls or scheduling
/// events among the many of another).
pub(super) const SPARSE: i64 = 4;
/// Fetches a run of a grouped member takes at most. They go through SQL, which has nothing to
/// seek a group by: each groups the member's rows of its resource again, a pass over its table.
/// So a run's rows come in this many batches, not in batches of [`MAX_BATCH`] (which made G
/// groups cost G / 512 passes), and a survey with a grouped member declines (the family is
/// then read through SQL's sort, which covers every member once) where the grouped member's
/// groups times this outnumber the other members' rows. The MPI waits (one row per request)
/// are this member: a few rows in most exports, where the other host calls are then still read
/// without SQL's sort, far faster.
pub(super) const GROUPED_FETCHES: u64 = 8;
/// One sorted run: rows of one member on one resource, rowids `lo..=hi`.
#[derive(Clone)]
pub(super) struct Run {
    pub(super) member: usize,
    pub(super) partition: usize,
    pub(super) lo: i64,
    pub(super) hi: i64,
    pub(super) first_order: i64,
    pub(super) first_aux: Option<i64>,
    /// The order value of its last row (with `first_order`, how runs overlap).
    pub(super) last_order: i64,
    /// Rows the survey counted: reading must give exactly these (a damaged B-tree can answer a
    /// rowid-range seek differently from a scan).
    pub(super) rows: u64,
    /// Its rowids, where it is sparse (see [`SPARSE`]).
    pub(super) rowids: Option<Arc<[i64]>>,
}

impl Run {
    /// Whether its rowid range holds [`SPARSE`] rows or more per row of its own (so far, while
    /// the survey extends it).
    pub(super) fn is_sparse(&self) -> bool {
        self.hi - self.lo + 1 >= SPARSE * self.rows as i64
    }
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
    pub(super) block: Block,
    pub(super) index: usize,
}

#[derive(Clone, Copy)]
pub(super) enum Block {
    /// The run's last fetch, `rows`, or the one before, `before`.
    Rows(usize),
    Before(usize),
    Finished,
    /// Row `index` of a batch a helper thread sent (helper_threads.rs).
    #[cfg(not(target_family = "wasm"))]
    Helper,
}

#[cfg(not(target_family = "wasm"))]
impl RowAt {
    /// Row `index` of a helper's batch.
    pub(super) fn of_helper(index: usize) -> RowAt {
        RowAt {
            block: Block::Helper,
            index,
        }
    }

    /// Its index in a helper's batch.
    pub(super) fn helper_index(self) -> usize {
        debug_assert!(matches!(self.block, Block::Helper), "a helper's row");
        self.index
    }
}

/// Rows in a partitioned reader's order: [`PartitionedRows`] itself, or (native builds) the same
/// rows read on a helper thread (helper_threads.rs).
pub trait OrderedRows {
    /// The resources' keys, by partition index.
    fn keys(&self) -> &[Key];
    /// The next row in the SQL path's order, with its lookahead.
    fn next_row(&mut self, file: &str) -> Result<Option<NextRow>>;
    /// The values of the row handed out last.
    fn row(&self, at: RowAt) -> RowView<'_>;
}
