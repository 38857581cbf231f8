//! How discovery reads the export: single queries, and the scans of the big tables made
//! together in a [`Batch`] (grouped per resource in Rust, or rows taken as they come).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rusqlite::types::{FromSql, ValueRef};
use rusqlite::Params;

use crate::engine::prepass::{Prepass, Sql};
use crate::engine::row::{convert, Fields};
use crate::engine::select::Select;
use crate::error::{Error, Result};
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

/// Discovery's scans of the big tables, made together (engine/prepass.rs: one pass per table for
/// every scan of it, side by side) and their outcomes taken back in the order they were added,
/// so that an error — found before a scan (a missing column) or during it — is reported where it
/// was when the scans ran one after the other. Other scans of the same tables (the surveys) can
/// join the same passes ([`Batch::join`]).
pub(super) struct Batch<'a> {
    ex: &'a Export,
    set: Prepass<'a>,
    /// Set when the direct reader met a page that breaks the file format.
    damaged: Arc<AtomicBool>,
    /// Per scan added: what it reads and the error found before it (then not made), or a scan
    /// added from outside.
    scans: Vec<Added>,
}

/// How a batch's own scans ended (in order, with messages), and how the joined ones did.
pub(super) type Ended = (std::vec::IntoIter<Result<()>>, Vec<rusqlite::Result<()>>);

enum Added {
    Own(String, Option<Error>),
    Other,
}

/// What a scan of the batch hands its rows to (an SQL row or a direct one, by output index);
/// not prepass/lockstep.rs's `TakeRow`, which takes SQL rows and says whether to go on.
type Consumer<'a> = Box<dyn FnMut(&dyn Fields) -> rusqlite::Result<()> + Send + 'a>;

/// Bytes of an export from which discovery shares its table passes with a second thread: below,
/// the thread and its connection (~1 ms: the schema read again) cost more than the passes
/// (a pass over 4 MiB takes ~3 ms), which counts once per input of a run of many ranks.
#[cfg(not(target_family = "wasm"))]
const TWO_THREADS_FROM: u64 = 4 << 20;

impl<'a> Batch<'a> {
    /// `direct`: read pages directly where a query allows it; `two_threads`: the table passes
    /// may be shared with a second thread where the export was opened from a file (natively)
    /// and is big enough for it ([`TWO_THREADS_FROM`]).
    pub fn new(ex: &'a Export, page_reader: bool, two_threads: bool) -> Batch<'a> {
        let set = Prepass::new(&ex.conn, page_reader);
        #[cfg(not(target_family = "wasm"))]
        let set = match (&ex.path, two_threads) {
            (Some(file), true) if ex.file_bytes() >= TWO_THREADS_FROM => set.second_thread(file),
            _ => set,
        };
        #[cfg(target_family = "wasm")]
        let _ = two_threads;
        Batch {
            ex,
            set,
            damaged: Arc::new(AtomicBool::new(false)),
            scans: Vec::new(),
        }
    }

    fn add(&mut self, what: &str, query: &Select, sql: Sql, mut take: Consumer<'a>) {
        let damaged = self.damaged.clone();
        self.set.add(
            Some(query),
            sql,
            Box::new(move |row| match row {
                Ok(row) => take(row).map(|()| true),
                Err(_) => {
                    damaged.store(true, Ordering::Relaxed);
                    Ok(false)
                }
            }),
        );
        self.scans.push(Added::Own(what.to_owned(), None));
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
        match check {
            Ok(()) => self.add(
                what,
                &query(),
                Sql::Query,
                Box::new(move |r| into.row(r, span)),
            ),
            Err(e) => self.scans.push(Added::Own(what.to_owned(), Some(e))),
        }
    }

    /// Every row of `query` handed to `row` (through SQLite, the condition is tested here:
    /// [`Sql::FilterHere`]).
    pub fn rows(
        &mut self,
        what: &str,
        query: Select,
        row: impl FnMut(&dyn Fields) -> rusqlite::Result<()> + Send + 'a,
    ) {
        self.add(what, &query, Sql::FilterHere, Box::new(row));
    }

    /// Where other scans join the batch's passes: `register` adds them to the set and says how
    /// many it added; their outcomes come back from [`run`](Self::run) apart.
    pub fn join(&mut self, register: impl FnOnce(&mut Prepass<'a>) -> usize) {
        let n = register(&mut self.set);
        self.scans.extend((0..n).map(|_| Added::Other));
    }

    /// Makes the scans; how each of the batch's own ended, in the order they were added, and
    /// how the joined ones did — or `None` when the direct reader met damage (the caller then
    /// reads through SQLite, which reads some damage without noticing, or names it).
    pub fn run(self) -> Option<Ended> {
        let label = &self.ex.label;
        let ended = self.set.run();
        if self.damaged.load(Ordering::Relaxed) {
            return None;
        }
        let mut own = Vec::new();
        let mut other = Vec::new();
        let mut ended = ended.into_iter();
        for added in self.scans {
            match added {
                Added::Own(_, Some(e)) => own.push(Err(e)),
                Added::Own(what, None) => own.push(
                    ended
                        .next()
                        .expect("an outcome per scan made")
                        .map_err(|e| Error::read(label, &what, e)),
                ),
                Added::Other => other.push(ended.next().expect("an outcome per scan made")),
            }
        }
        Some((own.into_iter(), other))
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

/// Groups looked up by a linear search rather than a hash (see [`Grouper::row`]).
const FEW_GROUPS: usize = 8;

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
        // The keys, the start and (for a span with an end) the end, read in one call.
        let with_end = matches!(span, Span::Closed | Span::Range);
        let mut v = [ValueRef::Null; 6];
        r.values(0, &mut v[..nkeys + 1 + usize::from(with_end)])?;
        let mut key = [0i64; 4];
        for (i, k) in key.iter_mut().enumerate().take(nkeys) {
            *k = convert(r, i, v[i])?;
        }
        let start: Option<i64> = convert(r, nkeys, v[nkeys])?;
        let (lo, hi) = match span {
            Span::Instant => (start, start),
            Span::StartOnly => (start, None),
            Span::Closed => {
                let end: Option<i64> = convert(r, nkeys + 1, v[nkeys + 1])?;
                (start, end.zip(start).map(|(e, s)| e.max(s)))
            }
            Span::Range => {
                let end: Option<i64> = convert(r, nkeys + 1, v[nkeys + 1])?;
                let hi = match (end, start) {
                    (Some(e), Some(s)) if e >= s => Some(e),
                    _ => start,
                };
                (start, hi)
            }
        };
        // The same group as the row before, or one of a few (rows of a few threads or streams
        // that alternate): no hash lookup.
        let g = match self.last {
            Some((k, g)) if k == key => g,
            _ => {
                let out = &mut self.out;
                let few = (out.len() <= FEW_GROUPS)
                    .then(|| out.iter().position(|group| group.0 == key))
                    .flatten();
                let g = few.unwrap_or_else(|| {
                    *self.groups.entry(key).or_insert_with(|| {
                        out.push((key, None, None, 0));
                        out.len() - 1
                    })
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
