//! How discovery reads the export: single queries, and the scans of the big tables made
//! together in a [`Batch`] (grouped per resource in Rust, or rows taken as they come).

use std::cell::Cell;
use std::rc::Rc;

use rusqlite::types::{FromSql, ValueRef};
use rusqlite::Params;

use crate::error::{Error, Result};
use crate::nsys::cursor::{get, Fields};
use crate::nsys::direct::{scan_step, Plan};
use crate::nsys::interleave::{scan_all, RowScan, Scan};
use crate::nsys::select::Select;
use crate::nsys::Export;
use crate::sqlfile::Pager;

pub(super) fn rows<T, P: Params>(
    ex: &Export,
    what: &str,
    sql: &str,
    params: P,
    f: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut st = ex
        .conn
        .prepare(sql)
        .map_err(|e| Error::read(&ex.label, what, e))?;
    let it = st
        .query_map(params, f)
        .map_err(|e| Error::read(&ex.label, what, e))?;
    it.collect::<rusqlite::Result<Vec<T>>>()
        .map_err(|e| Error::read(&ex.label, what, e))
}

pub(super) fn scalar<T: FromSql>(
    ex: &Export,
    what: &str,
    sql: &str,
    params: impl Params,
) -> Result<Option<T>> {
    use rusqlite::OptionalExtension;
    ex.conn
        .query_row(sql, params, |r| r.get::<_, Option<T>>(0))
        .optional()
        .map(Option::flatten)
        .map_err(|e| Error::read(&ex.label, what, e))
}

/// One group of a grouped scan: key columns, MIN(lo), MAX(hi) and COUNT(*).
pub(super) type Group = ([i64; 4], Option<i64>, Option<i64>, i64);

/// Discovery's scans of the big tables, made together (nsys/interleave.rs: in the browser they
/// then read the file about once between them, instead of once each) and their outcomes taken
/// back in the order they were added, so that an error — found before a scan (a missing column)
/// or during it — is reported where it was when the scans ran one after the other. Each scan
/// reads table pages itself where its query compiles for the direct reader (nsys/direct.rs),
/// else through SQLite.
pub(super) struct Batch<'a> {
    ex: &'a Export,
    /// The direct reader's pages of the file, unless every scan goes through SQLite.
    pager: Option<Rc<Pager<'a>>>,
    /// Set when the direct reader met a page that breaks the file format.
    damaged: Rc<Cell<bool>>,
    /// What each scan reads (for messages), and the scan or the error found before it.
    scans: Vec<(String, Result<Scan<'a>>)>,
}

/// A row handed to a scan's consumer: an SQL row or a direct one, by output index.
pub(super) type TakeRow<'a> = Box<dyn FnMut(&dyn Fields) -> rusqlite::Result<()> + 'a>;

impl<'a> Batch<'a> {
    /// `direct`: read pages directly where a query allows it.
    pub fn new(ex: &'a Export, direct: bool) -> Batch<'a> {
        Batch {
            ex,
            pager: direct
                .then(|| Pager::new(&ex.conn).ok().flatten().map(Rc::new))
                .flatten(),
            damaged: Rc::new(Cell::new(false)),
            scans: Vec::new(),
        }
    }

    /// The scan of `query`, its rows to `take`: by the direct reader where the query compiles for
    /// it, else through SQLite. `filter_in_rust`: SQLite hands every row and the condition is
    /// tested here — a query that skips most of a table would otherwise scan it all in one step,
    /// alone, and not side by side.
    fn scan(&self, query: &Select, filter_in_rust: bool, mut take: TakeRow<'a>) -> Scan<'a> {
        let conn = &self.ex.conn;
        if let Some(pager) = &self.pager {
            if let Ok(Some(plan)) = Plan::compile(conn, query) {
                let damaged = self.damaged.clone();
                return Scan::Steps(scan_step(pager.clone(), plan, move |row| match row {
                    Ok(row) => take(row).map(|()| true),
                    Err(_) => {
                        damaged.set(true);
                        Ok(false)
                    }
                }));
            }
        }
        if !filter_in_rust || query.conds.is_empty() {
            return Scan::Query(RowScan {
                conn,
                sql: query.sql(),
                row: Box::new(move |r| take(r).map(|()| true)),
            });
        }
        let conds: Vec<String> = query.conds.iter().map(|c| c.sql()).collect();
        let unfiltered = Select {
            conds: Vec::new(),
            ..query.clone()
        };
        let sql = unfiltered.sql().replacen(
            "SELECT ",
            &format!("SELECT ({}) AS \"hit\", ", conds.join(" AND ")),
            1,
        );
        Scan::Query(RowScan {
            conn,
            sql,
            row: Box::new(move |r| {
                // Taken where SQL's WHERE takes it: true, neither false nor NULL.
                if r.get::<_, Option<i64>>(0)?.is_some_and(|hit| hit != 0) {
                    take(&AfterFirst(r))?;
                }
                Ok(true)
            }),
        })
    }

    /// `SELECT keys…, MIN(lo), MAX(hi), COUNT(*) … GROUP BY keys` into `into`, computed in Rust
    /// over a plain scan of `query` (which gives the key columns, then what `span` reads): exports
    /// have no indexes, so SQLite's GROUP BY sorts the whole table, while a map over the resources
    /// does not. Not made when `check` (the columns it needs) failed.
    pub fn grouped(
        &mut self,
        what: &str,
        check: Result<()>,
        query: impl FnOnce() -> Select,
        span: Span,
        into: &'a mut Grouper,
    ) {
        let scan = check.map(|()| self.scan(&query(), false, Box::new(move |r| into.row(r, span))));
        self.scans.push((what.to_owned(), scan));
    }

    /// Every row of `query` handed to `row`.
    pub fn rows(
        &mut self,
        what: &str,
        query: Select,
        row: impl FnMut(&dyn Fields) -> rusqlite::Result<()> + 'a,
    ) {
        let scan = self.scan(&query, true, Box::new(row));
        self.scans.push((what.to_owned(), Ok(scan)));
    }

    /// Makes the scans; how each ended, in the order they were added — or `None` when the direct
    /// reader met damage (the caller then reads through SQLite, which reads some damage without
    /// noticing, or names it).
    pub fn run(self) -> Option<std::vec::IntoIter<Result<()>>> {
        let label = &self.ex.label;
        let mut whats = Vec::new();
        let mut outcomes: Vec<Option<Result<()>>> = Vec::new();
        let mut ready = Vec::new();
        for (what, scan) in self.scans {
            match scan {
                Ok(scan) => {
                    ready.push(scan);
                    outcomes.push(None);
                }
                Err(e) => outcomes.push(Some(Err(e))),
            }
            whats.push(what);
        }
        let mut ended = scan_all(ready).into_iter();
        if self.damaged.get() {
            return None;
        }
        Some(
            outcomes
                .into_iter()
                .zip(whats)
                .map(|(o, what)| {
                    o.unwrap_or_else(|| {
                        ended
                            .next()
                            .expect("an outcome per scan made")
                            .map_err(|e| Error::read(label, &what, e))
                    })
                })
                .collect::<Vec<_>>()
                .into_iter(),
        )
    }
}

/// An SQL row without its first column (the condition of [`Batch::rows`]'s SQL).
struct AfterFirst<'r, 's>(&'r rusqlite::Row<'s>);

impl Fields for AfterFirst<'_, '_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        self.0.get_ref(i + 1)
    }
    fn column_name(&self, i: usize) -> &str {
        Fields::column_name(self.0, i + 1)
    }
}

/// What a grouped scan's row gives after its keys, and how a group's time span follows.
#[derive(Clone, Copy, Debug)]
pub(super) enum Span {
    /// `start, end`: from start to `MAX(end, start)` (NULL without an end).
    Closed,
    /// `start, end` of an NVTX range or mark: to its end, or its start where the end is missing
    /// or before it.
    Range,
    /// `start`: an instant.
    Instant,
    /// `start`: only the start counts.
    StartOnly,
}

/// The groups of one scan as its rows come. Groups come out in key order, as GROUP BY gives
/// them; NULL lo/hi are ignored, as MIN/MAX do.
pub(super) struct Grouper {
    nkeys: usize,
    groups: crate::FastMap<[i64; 4], usize>,
    out: Vec<Group>,
    last: Option<([i64; 4], usize)>,
}

impl Grouper {
    pub fn new(nkeys: usize) -> Grouper {
        Grouper {
            nkeys,
            groups: crate::FastMap::default(),
            out: Vec::new(),
            last: None,
        }
    }

    pub fn row(&mut self, r: &dyn Fields, span: Span) -> rusqlite::Result<()> {
        let nkeys = self.nkeys;
        let mut key = [0i64; 4];
        for (i, k) in key.iter_mut().enumerate().take(nkeys) {
            *k = get(r, i)?;
        }
        let start: Option<i64> = get(r, nkeys)?;
        let (lo, hi) = match span {
            Span::Instant => (start, start),
            Span::StartOnly => (start, None),
            Span::Closed => {
                let end: Option<i64> = get(r, nkeys + 1)?;
                (start, end.zip(start).map(|(e, s)| e.max(s)))
            }
            Span::Range => {
                let end: Option<i64> = get(r, nkeys + 1)?;
                let hi = match (end, start) {
                    (Some(e), Some(s)) if e >= s => Some(e),
                    _ => start,
                };
                (start, hi)
            }
        };
        let g = match self.last {
            Some((k, g)) if k == key => g,
            _ => {
                let out = &mut self.out;
                let g = *self.groups.entry(key).or_insert_with(|| {
                    out.push((key, None, None, 0));
                    out.len() - 1
                });
                self.last = Some((key, g));
                g
            }
        };
        let e = &mut self.out[g];
        e.1 = match (e.1, lo) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        e.2 = match (e.2, hi) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        e.3 += 1;
        Ok(())
    }

    pub fn finish(mut self) -> Vec<Group> {
        self.out.sort_unstable_by_key(|g| g.0);
        self.out
    }
}
