//! The full scans of an export's tables that come before the stream, made together: each query
//! the direct reader compiles for (engine/page_reader.rs) joins one pass over its table, which parses
//! each row once for every query of that table; the others are SQL scans. All of them go side by
//! side (prepass/lockstep.rs), so that through the browser's block cache they read the file about once.
//! Natively, where the export was opened from a file and a second core is there, the table passes
//! are shared with a second thread on a connection of its own ([`Prepass::second_thread`]): they
//! are independent, each scan's state is its own, and how each ended comes back by scan index.
//!
//! Discovery's groupings, the sort-free readers' surveys and the NVTX sort keys all read the big
//! tables whole: the CUDA API table three times over (discovery, the host calls' survey, the
//! links' survey), the GPU tables twice. On the 10 MB benchmark input the surveys alone were a
//! fifth of the browser's conversion (docs/PERFORMANCE.md); made in discovery's pass, they cost
//! what their own conditions and values cost, not another reading of the table.

use std::cell::RefCell;
use std::rc::Rc;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Statement};

use super::page_reader::{PageQuery, PageRow, QueryRow};
use super::row::Fields;
use super::select::Select;
use crate::sqlfile::{Damaged, Pager, Record, TableCursor};
use lockstep::{query_step, run_all, Step, TakeRow};

mod lockstep;

/// Takes a row of a scan (its query's outputs by index), or the damage the direct reader met
/// (the scan then ends); returns false when it needs no more rows.
/// `Send`: a table's pass may run on another thread ([`Prepass::second_thread`]).
pub type Take<'a> =
    Box<dyn FnMut(Result<&dyn Fields, Damaged>) -> rusqlite::Result<bool> + Send + 'a>;

/// How a scan reads through SQLite when the direct reader does not run its query.
pub enum Sql {
    /// The query's own SQL.
    Query,
    /// Every row of the query's table with its condition as a first column, tested here: a query
    /// that skips most of a table would otherwise scan it all in one step, alone, and not side
    /// by side with the others.
    FilterHere,
    /// This SQL, which gives the query's outputs in order.
    Given(String),
}

/// Scans of one connection's tables, made together (see the module doc).
pub struct Prepass<'a> {
    conn: &'a Connection,
    pager: Option<Rc<Pager<'a>>>,
    scans: Vec<Entry<'a>>,
    /// The connection's file, when some table passes may run on a second thread.
    #[cfg(not(target_family = "wasm"))]
    second_thread: Option<&'a std::path::Path>,
}

/// The scans of one table pass: (index among the set's scans, plan, taker).
type Pass<'a> = Vec<(usize, PageQuery, Take<'a>)>;

enum Entry<'a> {
    Pages(PageQuery, Take<'a>),
    Sql(String, bool, Take<'a>),
}

impl<'a> Prepass<'a> {
    /// `direct`: queries run by the direct reader where they compile for it.
    pub fn new(conn: &'a Connection, page_reader: bool) -> Prepass<'a> {
        let pager = Pager::shared(conn, page_reader);
        Prepass {
            conn,
            pager,
            scans: Vec::new(),
            #[cfg(not(target_family = "wasm"))]
            second_thread: None,
        }
    }

    /// Lets [`run`](Self::run) make some of the table passes on a second thread, on a
    /// connection of its own to `file` (the file this set's connection reads), where there are
    /// two passes or more: the biggest tables are shared between the two threads.
    #[cfg(not(target_family = "wasm"))]
    pub fn second_thread(mut self, file: &'a std::path::Path) -> Prepass<'a> {
        self.second_thread = Some(file);
        self
    }

    /// A scan of `query`'s rows, handed to `take`: by the direct reader where `query` compiles
    /// for it, else through SQLite as `sql` says (`query` `None`: through SQLite only).
    pub fn add(&mut self, query: Option<&Select>, sql: Sql, take: Take<'a>) {
        let compiled = (self.pager.as_ref())
            .zip(query)
            .and_then(|(pager, q)| PageQuery::compile(pager, q).ok()?);
        let entry = match (compiled, query, sql) {
            (Some(compiled), ..) => Entry::Pages(compiled, take),
            (None, _, Sql::Given(s)) => Entry::Sql(s, false, take),
            (None, Some(q), Sql::Query) => Entry::Sql(q.sql(), false, take),
            (None, Some(q), Sql::FilterHere) => Entry::Sql(filter_here_sql(q), true, take),
            (None, None, _) => unreachable!("a scan without a query gives its SQL"),
        };
        self.scans.push(entry);
    }

    /// Makes every scan; how each ended, in the order they were added.
    pub fn run(self) -> Vec<rusqlite::Result<()>> {
        let n = self.scans.len();
        // Direct scans grouped by table, in the order of each table's first scan.
        let mut tables: Vec<(u32, Pass<'a>)> = Vec::new();
        let mut queries: Vec<(usize, rusqlite::Result<Statement<'a>>, TakeRow<'a>)> = Vec::new();
        for (i, entry) in self.scans.into_iter().enumerate() {
            match entry {
                Entry::Pages(compiled, take) => {
                    let root = compiled.table.root;
                    match tables.iter_mut().find(|(r, _)| *r == root) {
                        Some((_, group)) => group.push((i, compiled, take)),
                        None => tables.push((root, vec![(i, compiled, take)])),
                    }
                }
                Entry::Sql(text, filtered, take) => {
                    queries.push((i, self.conn.prepare(&text), sql_rows(filtered, take)));
                }
            }
        }
        #[cfg(not(target_family = "wasm"))]
        if let (Some(file), Some(pager)) = (self.second_thread, &self.pager) {
            if tables.len() > 1 {
                largest_first(pager, &mut tables);
                return on_two_threads(file, pager.clone(), tables, &mut queries, n);
            }
        }
        side_by_side(self.pager, tables, &mut queries, n)
            .into_iter()
            .map(|o| o.unwrap_or(Ok(())))
            .collect()
    }
}

/// The table passes shared between this thread and a second one, on a connection of its own
/// to `file`, and the SQL scans made on this thread (beside its first pass); how each of the
/// `n` scans ended, by index. This thread takes the largest pass, the second thread the next
/// (given out before it starts); then each takes the largest left whenever it is free. So the
/// two end about together, whatever a pass costs per row (its rows and scans more than its
/// pages) and however the machine slows either thread, which a share of leaf pages fixed
/// beforehand did not. The second thread opens its connection itself, while this one starts
/// its pass (instead of waiting for it); where it does not open, its pass comes back here.
#[cfg(not(target_family = "wasm"))]
fn on_two_threads<'a>(
    file: &std::path::Path,
    pager: Rc<Pager<'a>>,
    passes: Vec<(u32, Pass<'a>)>,
    queries: &mut [(usize, rusqlite::Result<Statement<'a>>, TakeRow<'a>)],
    n: usize,
) -> Vec<rusqlite::Result<()>> {
    let mut passes = passes.into_iter();
    // The first two given out before the second thread starts: each thread has one at once.
    let (first, second) = (passes.next(), passes.next());
    let left = std::sync::Mutex::new(passes);
    let left = &left;
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || match second_connection(file) {
            Some(conn) => {
                // Checked by `second_connection`: the same file gives a pager again.
                let pager = Pager::shared(&conn, true);
                (passes_taken(second, left, pager, &mut [], n), None)
            }
            None => ((0..n).map(|_| None).collect(), second),
        });
        let here = passes_taken(first, left, Some(pager.clone()), queries, n);
        let there = match worker.join() {
            Ok((there, None)) => there,
            // No second connection: its pass is made here, in its place (the others were
            // taken here: `left` is empty).
            Ok((_, Some(pass))) => passes_taken(Some(pass), left, Some(pager), &mut [], n),
            Err(panic) => std::panic::resume_unwind(panic),
        };
        // Each scan ended on one side only.
        here.into_iter()
            .zip(there)
            .map(|(a, b)| a.or(b).unwrap_or(Ok(())))
            .collect()
    })
}

/// `first`, then passes taken one at a time from `left` until none is left, the SQL `queries`
/// made beside the first pass (or alone, where there was none); how the scans ended, by index.
#[cfg(not(target_family = "wasm"))]
fn passes_taken<'a: 'p, 'p>(
    first: Option<(u32, Pass<'a>)>,
    left: &std::sync::Mutex<std::vec::IntoIter<(u32, Pass<'a>)>>,
    pager: Option<Rc<Pager<'p>>>,
    mut queries: &mut [(usize, rusqlite::Result<Statement<'p>>, TakeRow<'p>)],
    n: usize,
) -> Vec<Option<rusqlite::Result<()>>> {
    let mut outcomes: Vec<Option<rusqlite::Result<()>>> = (0..n).map(|_| None).collect();
    // A lock is held only to take a pass, which cannot panic; were it poisoned, the passes
    // left are still whole, and none may go untaken (its scans would seem to have ended).
    let next = || {
        let mut left = left
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        left.next()
    };
    let mut pass = first.or_else(next);
    loop {
        // A pass outlives the pager of the thread that takes it (the worker's is its own).
        let passes: Vec<(u32, Pass<'p>)> = pass.into_iter().collect();
        let ended = side_by_side(pager.clone(), passes, std::mem::take(&mut queries), n);
        for (o, e) in outcomes.iter_mut().zip(ended) {
            if e.is_some() {
                *o = e;
            }
        }
        // Without a pager (not met: `second_connection` checked) a thread takes no more: its
        // passes would all end as damage, which sends discovery to SQLite for their tables.
        pass = pager.as_ref().and_then(|_| next());
        if pass.is_none() {
            return outcomes;
        }
    }
}

/// The table passes and SQL scans made side by side on one thread; how each of the `n` scans of
/// the set ended, by index (`None`: not one of these, or a pass that took it to the table's end).
fn side_by_side<'a>(
    pager: Option<Rc<Pager<'a>>>,
    tables: Vec<(u32, Pass<'a>)>,
    queries: &mut [(usize, rusqlite::Result<Statement<'a>>, TakeRow<'a>)],
    n: usize,
) -> Vec<Option<rusqlite::Result<()>>> {
    // How each scan of a table pass ended (the passes themselves never fail).
    let outcomes: Rc<RefCell<Vec<Option<rusqlite::Result<()>>>>> =
        Rc::new(RefCell::new((0..n).map(|_| None).collect()));
    let mut steps: Vec<Step<'_, rusqlite::Error>> = Vec::new();
    for (root, group) in tables {
        match &pager {
            Some(pager) => steps.push(table_pass(pager.clone(), root, group, outcomes.clone())),
            // A second connection without a pager (not met: the file gave one to the first).
            None => {
                let mut outcomes = outcomes.borrow_mut();
                for (i, _, mut take) in group {
                    let damage =
                        Damaged("the file reads differently on a second connection".into());
                    outcomes[i] = Some(take(Err(damage)).map(|_| ()));
                }
            }
        }
    }
    let passes = steps.len();
    steps.extend(queries.iter_mut().map(|(_, st, take)| query_step(st, take)));
    let ended = run_all(steps);
    let mut outcomes = std::mem::take(&mut *outcomes.borrow_mut());
    for ((i, ..), end) in queries.iter().zip(ended.into_iter().skip(passes)) {
        outcomes[*i] = Some(end);
    }
    outcomes
}

/// A second read-only connection to `file`, if it opens and its pages can be read directly.
#[cfg(not(target_family = "wasm"))]
fn second_connection(file: &std::path::Path) -> Option<Connection> {
    let conn = super::open_read_only(file).ok()?;
    let readable = Pager::new(&conn).ok().flatten().is_some();
    readable.then_some(conn)
}

/// Orders `tables` largest first (by leaf pages), the order the two threads take them in.
#[cfg(not(target_family = "wasm"))]
fn largest_first(pager: &Pager, tables: &mut [(u32, Pass<'_>)]) {
    // Interior pages read at most per table to size it (a 1 GB table has ~800 at 4 KiB pages).
    const MOST_INTERIOR: usize = 4096;
    tables.sort_by_cached_key(|(root, _)| {
        std::cmp::Reverse(crate::sqlfile::leaf_pages(pager, *root, MOST_INTERIOR))
    });
}

/// One pass over the table at `root` for its scans: each row parsed once (as far as the scan
/// reading furthest needs), offered to every scan still taking rows whose conditions it meets.
fn table_pass<'a>(
    pager: Rc<Pager<'a>>,
    root: u32,
    scans: Pass<'a>,
    outcomes: Rc<RefCell<Vec<Option<rusqlite::Result<()>>>>>,
) -> Step<'a, rusqlite::Error> {
    let upto = scans.iter().map(|(_, p, _)| p.upto).max().unwrap_or(0);
    // Scans whose plans test the same conditions (discovery's grouping and surveys of a table
    // often do) share one test per row: per scan, the first scan with its conditions.
    let mut scans: Vec<(usize, PageQuery, Take<'a>, usize)> = {
        let first: Vec<usize> = (0..scans.len())
            .map(|k| {
                (0..k)
                    .find(|&j| scans[j].1.same_conditions(&scans[k].1))
                    .unwrap_or(k)
            })
            .collect();
        (scans.into_iter().zip(first))
            .map(|((i, compiled, take), g)| (i, compiled, take, g))
            .collect()
    };
    // Per group: the row's answer, once tested.
    let mut admitted: Vec<Option<bool>> = vec![None; scans.len()];
    let mut cursor = TableCursor::new(root);
    let mut record = Record::default();
    let mut started = false;
    Box::new(move || {
        let read = if started {
            Ok(())
        } else {
            started = true;
            cursor.seek(&pager, i64::MIN)
        };
        let next = read.and_then(|()| cursor.next(&pager));
        let row = match next {
            Ok(Some((rowid, payload))) => record.parse(payload, upto).map(|()| (rowid, payload)),
            Ok(None) => return Ok(false),
            Err(e) => Err(e),
        };
        let mut outcomes = outcomes.borrow_mut();
        match row {
            Ok((rowid, payload)) => {
                let row = PageRow {
                    rowid,
                    payload,
                    record: &record,
                };
                admitted.fill(None);
                // A plain loop: a scan ends seldom (once per scan at most), and only then is
                // one taken out.
                let mut k = 0;
                while k < scans.len() {
                    let (i, compiled, take, g) = &mut scans[k];
                    let admits = *admitted[*g].get_or_insert_with(|| compiled.admits(&row));
                    if admits {
                        let taken = take(Ok(&QueryRow { compiled, row }));
                        if !matches!(taken, Ok(true)) {
                            outcomes[*i] = Some(taken.map(|_| ()));
                            drop(scans.remove(k));
                            continue;
                        }
                    }
                    k += 1;
                }
            }
            Err(damage) => {
                for (i, _, take, _) in scans.iter_mut() {
                    outcomes[*i] = Some(take(Err(damage.clone())).map(|_| ()));
                }
                scans.clear();
            }
        }
        Ok(!scans.is_empty())
    })
}

/// `SELECT (conditions) AS hit, outputs FROM table`: see [`Sql::FilterHere`].
fn filter_here_sql(q: &Select) -> String {
    if q.conds.is_empty() {
        return q.sql();
    }
    let conds: Vec<String> = q.conds.iter().map(|c| c.sql()).collect();
    let unfiltered = Select {
        conds: Vec::new(),
        ..q.clone()
    };
    unfiltered.sql().replacen(
        "SELECT ",
        &format!("SELECT ({}) AS \"hit\", ", conds.join(" AND ")),
        1,
    )
}

/// The rows of a scan through SQLite, handed to `take` (`filtered`: the first column says
/// whether the row is one of the query's).
fn sql_rows<'a>(filtered: bool, mut take: Take<'a>) -> TakeRow<'a> {
    Box::new(move |r| {
        if !filtered {
            return take(Ok(r));
        }
        // Taken where SQL's WHERE takes it: true, neither false nor NULL.
        if r.get::<_, Option<i64>>(0)?.is_some_and(|hit| hit != 0) {
            take(Ok(&AfterFirst(r)))
        } else {
            Ok(true)
        }
    })
}

/// An SQL row without its first column (the condition of [`Sql::FilterHere`]).
struct AfterFirst<'r, 's>(&'r rusqlite::Row<'s>);

impl Fields for AfterFirst<'_, '_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        self.0.get_ref(i + 1)
    }
    fn column_name(&self, i: usize) -> &str {
        Fields::column_name(self.0, i + 1)
    }
}
