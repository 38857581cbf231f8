//! How discovery reads the export: single queries, and the scans of the big tables made
//! together in a [`Batch`] (grouped per resource in Rust, or rows taken as they come).

use rusqlite::types::FromSql;
use rusqlite::Params;

use crate::error::{Error, Result};
use crate::nsys::interleave::{scan_all, RowScan, Scan};
use crate::nsys::Export;

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
/// or during it — is reported where it was when the scans ran one after the other.
pub(super) struct Batch<'a> {
    ex: &'a Export,
    /// What each scan reads (for messages), and the scan or the error found before it.
    scans: Vec<(String, Result<RowScan<'a>>)>,
}

impl<'a> Batch<'a> {
    pub fn new(ex: &'a Export) -> Batch<'a> {
        Batch {
            ex,
            scans: Vec::new(),
        }
    }

    /// `SELECT keys…, MIN(lo), MAX(hi), COUNT(*) … GROUP BY keys` into `into`, computed in Rust
    /// over a plain scan of `sql` (which gives the key columns, then lo, then hi): exports have
    /// no indexes, so SQLite's GROUP BY sorts the whole table, while a map over the resources
    /// does not. Not made when `check` (the columns it needs) failed.
    pub fn grouped(
        &mut self,
        what: &str,
        check: Result<()>,
        sql: impl FnOnce() -> String,
        into: &'a mut Grouper,
    ) {
        let scan = check.map(|()| RowScan {
            conn: &self.ex.conn,
            sql: sql(),
            row: Box::new(move |r| into.row(r).map(|()| true)),
        });
        self.scans.push((what.to_owned(), scan));
    }

    /// Every row of `query` that meets its condition, handed to `row` (its columns from 1 on).
    /// Rows that do not meet it are passed over here, not by SQLite: a query that skips most of
    /// a table would otherwise scan it all in one step, alone, and not side by side.
    pub fn rows(
        &mut self,
        what: &str,
        query: Filtered,
        mut row: impl FnMut(&rusqlite::Row) -> rusqlite::Result<()> + 'a,
    ) {
        let scan = RowScan {
            conn: &self.ex.conn,
            sql: format!(
                "SELECT ({}), {} FROM {}",
                query.condition, query.columns, query.from
            ),
            row: Box::new(move |r| {
                // Taken where SQL's WHERE takes it: true, neither false nor NULL.
                if r.get::<_, Option<i64>>(0)?.is_some_and(|hit| hit != 0) {
                    row(r)?;
                }
                Ok(true)
            }),
        };
        self.scans.push((what.to_owned(), Ok(scan)));
    }

    /// Makes the scans; how each ended, in the order they were added.
    pub fn run(self) -> std::vec::IntoIter<Result<()>> {
        let label = &self.ex.label;
        let mut whats = Vec::new();
        let mut outcomes: Vec<Option<Result<()>>> = Vec::new();
        let mut ready = Vec::new();
        for (what, scan) in self.scans {
            match scan {
                Ok(scan) => {
                    ready.push(Scan::Query(scan));
                    outcomes.push(None);
                }
                Err(e) => outcomes.push(Some(Err(e))),
            }
            whats.push(what);
        }
        let mut ended = scan_all(ready).into_iter();
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
            .into_iter()
    }
}

/// `SELECT columns FROM from WHERE condition`, with the condition kept apart (see
/// [`Batch::rows`]). Columns that cost (subqueries) should be guarded by the condition.
pub(super) struct Filtered {
    pub columns: String,
    pub from: String,
    pub condition: String,
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

    pub fn row(&mut self, r: &rusqlite::Row) -> rusqlite::Result<()> {
        let nkeys = self.nkeys;
        let mut key = [0i64; 4];
        for (i, k) in key.iter_mut().enumerate().take(nkeys) {
            *k = r.get(i)?;
        }
        let lo: Option<i64> = r.get(nkeys)?;
        let hi: Option<i64> = r.get(nkeys + 1)?;
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

/// One grouped scan on its own (see [`Batch::grouped`]).
pub(super) fn grouped(ex: &Export, what: &str, sql: &str, nkeys: usize) -> Result<Vec<Group>> {
    let mut groups = Grouper::new(nkeys);
    let mut batch = Batch::new(ex);
    batch.grouped(what, Ok(()), || sql.to_owned(), &mut groups);
    batch.run().next().expect("one scan, one outcome")?;
    Ok(groups.finish())
}
