//! Time order by sorting narrow keys: the sort-keys reader.
//!
//! NVTX push/pop ranges are written when they end, so an outer range comes after everything
//! nested in it: in rowid order the table is not in per-thread runs (partitioned.rs does not
//! apply). The SQL path sorts whole rows (names, JSON payloads) with `ORDER BY`; in the browser
//! SQLite's temporary files are memory, so that sort held ~90 MB for the NVTX ranges of a 1 GB
//! export. Instead: one scan reads only `start, end, rowid` of the rows, the keys are sorted in
//! memory (24 bytes a row), and the rows are then fetched in key order by rowid — a range scan
//! for the rows of the next keys when their rowids are close (ranges nested in each other are
//! written close together), else a B-tree seek.
//!
//! The order is exactly the SQL path's `ORDER BY start, (end IS NULL OR end < start) DESC, end
//! DESC, rowid`; a start or end that is not an integer (SQL then compares across types), or an
//! end of -2^63 (the key's NULL), leaves the family to the SQL path.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};
use std::rc::Rc;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Statement};

use super::block::BufferedRow;
use super::page_reader::{PageQuery, PageRow};
use super::prepass::{Prepass, Sql};
use super::row::Fields;
use super::select::Select;
use crate::error::{Error, Result};
use crate::sqlfile::{Pager, Record, TableCursor};
use crate::{FastMap, FastSet};

/// What a sort-keys reader reads.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySpec {
    /// `SELECT start, end, rowid FROM … WHERE …`: every row to read, no order (run by the
    /// direct reader of the file format where it compiles for it, else by SQLite).
    pub keys: Select,
    /// `SELECT rowid, <columns> FROM …` (plain: no condition), `start` first of the columns:
    /// the rows of a rowid range are fetched by it (by the direct reader where it compiles for
    /// it, else by SQLite with `WHERE rowid BETWEEN ?1 AND ?2`).
    pub fetch: Select,
    /// The fetched columns' names (for messages).
    pub columns: Vec<String>,
}

/// A row's sort key, in the SQL path's order (24 bytes: a 1 GB export's 777 k NVTX ranges take
/// 19 MB).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    start: i64,
    /// [`NULL_END`] for NULL, which SQL orders below every integer.
    end: i64,
    rowid: i64,
}

/// How a NULL end is stored (a real end of this value makes the reader decline).
const NULL_END: i64 = i64::MIN;

impl Key {
    /// `end IS NULL OR end < start`: these come first among equal starts.
    fn unterminated(&self) -> bool {
        self.end == NULL_END || self.end < self.start
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.start
            .cmp(&o.start)
            .then(o.unterminated().cmp(&self.unterminated()))
            .then(o.end.cmp(&self.end))
            .then(self.rowid.cmp(&o.rowid))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Keys looked ahead at when a row must be fetched: their rows are fetched together when their
/// rowids are close (nested ranges are written close together), at most this many kept.
const WINDOW: usize = 256;
/// ... in one range scan when it visits at most this many rows per row not yet fetched.
const MAX_SPREAD: i64 = 8;

/// Keys per chunk of a scan's keys (384 KiB): they grow a chunk at a time, with no copy of what
/// was found and no larger vector beside a smaller one — in the browser's linear memory, which
/// never shrinks, one growing vector's copies would stay at its peak.
const CHUNK: usize = 1 << 14;

/// The sort keys a [`KeyScan`] found, not yet sorted, in chunks of [`CHUNK`].
pub struct Keys(Vec<Vec<Key>>);

/// Keys in order: each chunk sorted, the chunks merged by a heap of their smallest keys (the
/// same order as one sort of them all: keys are unique, the rowid breaks every tie).
struct KeyOrder {
    chunks: Vec<std::vec::IntoIter<Key>>,
    heads: BinaryHeap<Reverse<(Key, usize)>>,
}

impl KeyOrder {
    fn new(chunks: Vec<Vec<Key>>) -> KeyOrder {
        let mut chunks: Vec<std::vec::IntoIter<Key>> = chunks
            .into_iter()
            .map(|mut c| {
                c.sort_unstable();
                c.into_iter()
            })
            .collect();
        let heads = (chunks.iter_mut().enumerate())
            .filter_map(|(i, c)| c.next().map(|k| Reverse((k, i))))
            .collect();
        KeyOrder { chunks, heads }
    }

    fn next(&mut self) -> Option<Key> {
        let mut top = self.heads.peek_mut()?;
        let Reverse((key, i)) = *top;
        match self.chunks[i].next() {
            Some(k) => *top = Reverse((k, i)),
            None => {
                PeekMut::pop(top);
                // A chunk read to its end gives its memory back.
                self.chunks[i] = Vec::new().into_iter();
            }
        }
        Some(key)
    }
}

/// The scan of [`KeySpec::keys`]: one plain pass that collects every row's key, made in
/// discovery's pass over the table (nsys/discover.rs). The rows are first counted there, so the
/// keys are kept in chunks of [`CHUNK`] as they come.
#[derive(Default)]
pub struct KeyScan {
    keys: Vec<Vec<Key>>,
    /// A start or end was not an integer: the family is left to the SQL path.
    declined: bool,
}

impl KeyScan {
    /// Adds the scan of the keys to `set`.
    pub fn register<'a>(&'a mut self, set: &mut Prepass<'a>, spec: &KeySpec) {
        set.add(
            Some(&spec.keys),
            Sql::Query,
            Box::new(move |row| match row {
                Ok(row) => self.row(row),
                Err(_) => {
                    self.declined = true;
                    Ok(false)
                }
            }),
        );
    }

    /// Takes one row (`start, end, rowid`); false when the reader declines.
    fn row(&mut self, row: &dyn Fields) -> rusqlite::Result<bool> {
        let (ValueRef::Integer(start), ValueRef::Integer(rowid)) = (row.value(0)?, row.value(2)?)
        else {
            self.declined = true;
            return Ok(false);
        };
        let end = match row.value(1)? {
            ValueRef::Integer(e) if e != NULL_END => e,
            ValueRef::Null => NULL_END,
            _ => {
                self.declined = true;
                return Ok(false);
            }
        };
        let key = Key { start, end, rowid };
        match self.keys.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(key),
            // The first chunk grows from nothing (a small export has a few keys), the others
            // are allocated whole.
            last => {
                let mut chunk = match last {
                    None => Vec::new(),
                    Some(_) => Vec::with_capacity(CHUNK),
                };
                chunk.push(key);
                self.keys.push(chunk);
            }
        }
        Ok(true)
    }

    /// The keys, or `None` when the reader declines (use the SQL path).
    pub fn finish(self) -> Option<Keys> {
        (!self.declined).then_some(Keys(self.keys))
    }
}

/// How a sort-keys reader fetches a rowid range.
enum Fetch<'c> {
    /// By the direct reader of the file format (engine/page_reader.rs): the compiled query of
    /// [`KeySpec::fetch`], a cursor on its table, the record parsed last.
    Pages {
        pager: Rc<Pager<'c>>,
        compiled: PageQuery,
        cursor: TableCursor,
        record: Record,
    },
    /// By SQLite: [`KeySpec::fetch`] with `WHERE rowid BETWEEN ?1 AND ?2`, prepared once.
    Sql(Statement<'c>),
}

/// Rows in key order, fetched by rowid ranges.
pub struct KeyOrderRows<'c> {
    what: &'static str,
    fetch: Fetch<'c>,
    columns: Rc<[String]>,
    keys: KeyOrder,
    /// The next keys to hand out (up to [`WINDOW`]), taken from `keys`.
    ahead: VecDeque<Key>,
    /// Rows fetched ahead of their turn (at most [`WINDOW`]), by rowid.
    fetched: FastMap<i64, BufferedRow>,
    /// Rows already decoded, reused.
    spare: Vec<BufferedRow>,
}

impl<'c> KeyOrderRows<'c> {
    /// The reader over keys from a [`KeyScan`] of `spec` on the same file; its rows fetched
    /// through `pager` where given and the fetch compiles for the direct reader.
    pub fn from_keys(
        conn: &'c Connection,
        pager: Option<Rc<Pager<'c>>>,
        what: &'static str,
        spec: &KeySpec,
        keys: Keys,
    ) -> rusqlite::Result<KeyOrderRows<'c>> {
        let compiled = match &pager {
            Some(pager) => PageQuery::compile(pager, &spec.fetch)?,
            None => None,
        };
        let fetch = match (pager, compiled) {
            (Some(pager), Some(compiled)) => Fetch::Pages {
                cursor: TableCursor::new(compiled.table.root),
                pager,
                compiled,
                record: Record::default(),
            },
            _ => Fetch::Sql(conn.prepare(&format!(
                "{} WHERE rowid BETWEEN ?1 AND ?2",
                spec.fetch.sql()
            ))?),
        };
        Ok(KeyOrderRows {
            what,
            fetch,
            columns: spec.columns.iter().cloned().collect(),
            keys: KeyOrder::new(keys.0),
            ahead: VecDeque::with_capacity(WINDOW),
            fetched: FastMap::default(),
            spare: Vec::new(),
        })
    }

    /// The next row in the SQL path's order.
    pub fn next_row(&mut self, file: &str) -> Result<Option<BufferedRow>> {
        while self.ahead.len() < WINDOW {
            match self.keys.next() {
                Some(key) => self.ahead.push_back(key),
                None => break,
            }
        }
        let Some(&key) = self.ahead.front() else {
            return Ok(None);
        };
        if !self.fetched.contains_key(&key.rowid) {
            self.fetch_around(file)?;
        }
        self.ahead.pop_front();
        let changed = || Error::BadData {
            file: file.to_owned(),
            why: format!(
                "{}: rows changed while reading (or the file is damaged)",
                self.what
            ),
        };
        // The row the key scan saw must still be there, with the same start.
        let row = self.fetched.remove(&key.rowid).ok_or_else(changed)?;
        if !matches!(row.value(0), Ok(ValueRef::Integer(start)) if start == key.start) {
            return Err(changed());
        }
        Ok(Some(row))
    }

    /// Fetches the row of the next key, with those of the following keys (up to [`WINDOW`]) when
    /// one range scan reaches them cheaply.
    fn fetch_around(&mut self, file: &str) -> Result<()> {
        let what = self.what;
        let read = |e| Error::read(file, what, e);
        let first = self.ahead[0].rowid;
        let room = WINDOW.saturating_sub(self.fetched.len()).max(1);
        let wanted: FastSet<i64> = (self.ahead.iter().take(room))
            .map(|k| k.rowid)
            .filter(|r| !self.fetched.contains_key(r))
            .collect();
        let (lo, hi) = wanted
            .iter()
            .fold((first, first), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        // Visits stay within MAX_SPREAD per row fetched (a damaged file's absurd rowids too).
        let (lo, hi) = if hi.saturating_sub(lo) < MAX_SPREAD.saturating_mul(wanted.len() as i64) {
            (lo, hi)
        } else {
            (first, first)
        };
        match &mut self.fetch {
            Fetch::Pages {
                pager,
                compiled,
                cursor,
                record,
            } => {
                let bad = |e: crate::sqlfile::Damaged| e.at(file, what);
                cursor.seek(pager, lo).map_err(bad)?;
                while let Some((rowid, payload)) = cursor.next(pager).map_err(bad)? {
                    if rowid > hi {
                        break;
                    }
                    if !wanted.contains(&rowid) || self.fetched.contains_key(&rowid) {
                        continue; // a row of another type, or met twice in a damaged file
                    }
                    record.parse(payload, compiled.upto).map_err(bad)?;
                    let row = PageRow {
                        rowid,
                        payload,
                        record,
                    };
                    let buffered = self.spare.pop();
                    let kept = buffer(buffered, &self.columns, |i| Ok(compiled.value(&row, i + 1)))
                        .map_err(read)?;
                    self.fetched.insert(rowid, kept);
                }
                // The next fetch seeks again: no leaf held between fetches (one per input).
                cursor.release();
            }
            Fetch::Sql(fetch) => {
                let mut q = fetch.query([lo, hi]).map_err(read)?;
                while let Some(row) = q.next().map_err(read)? {
                    let ValueRef::Integer(rowid) = row.get_ref(0).map_err(read)? else {
                        continue;
                    };
                    if !wanted.contains(&rowid) || self.fetched.contains_key(&rowid) {
                        continue; // a row of another type, or met twice in a damaged file
                    }
                    let buffered = self.spare.pop();
                    let kept =
                        buffer(buffered, &self.columns, |i| row.get_ref(i + 1)).map_err(read)?;
                    self.fetched.insert(rowid, kept);
                }
            }
        }
        Ok(())
    }

    /// Gives back a decoded row's values, so that later fetches allocate nothing.
    pub fn recycle(&mut self, row: BufferedRow) {
        if self.spare.len() < WINDOW {
            self.spare.push(row);
        }
    }
}

/// A fetched row's values (column `i` of the decoder's is `value(i)`), in a row given back
/// before where there is one, so that fetches allocate nothing once under way.
fn buffer<'v>(
    spare: Option<BufferedRow>,
    columns: &Rc<[String]>,
    mut value: impl FnMut(usize) -> rusqlite::Result<ValueRef<'v>>,
) -> rusqlite::Result<BufferedRow> {
    let mut row = spare.unwrap_or_else(|| BufferedRow::new(columns.clone()));
    row.reset();
    for i in 0..columns.len() {
        row.set(i, value(i)?);
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::{Key, KeyOrder};

    fn key(start: i64, end: Option<i64>, rowid: i64) -> Key {
        Key {
            start,
            end: end.unwrap_or(super::NULL_END),
            rowid,
        }
    }

    #[test]
    fn keys_sort_as_the_sql_order_by() {
        // ORDER BY start, (end IS NULL OR end < start) DESC, end DESC, rowid
        let mut keys = [
            key(10, Some(20), 1),
            key(10, Some(30), 2),
            key(10, None, 3),
            key(10, Some(5), 4),
            key(5, Some(50), 5),
            key(10, Some(30), 0),
        ];
        keys.sort();
        let order: Vec<i64> = keys.iter().map(|k| k.rowid).collect();
        // start 5 first; then at 10 the unterminated ones (end 5 above NULL, as DESC puts NULL
        // last), then the longer range first, equal ends by rowid.
        assert_eq!(order, [5, 4, 3, 0, 2, 1]);
    }

    #[test]
    fn chunks_merged_give_the_order_of_one_sort() {
        // Ranges as nsys writes them (an outer one after those nested in it), with equal
        // starts, NULL and short ends, cut into chunks of uneven length.
        let mut all = Vec::new();
        let mut x: u64 = 7;
        for rowid in 1..=5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let start = (rowid / 3 + (x >> 60) as i64) * 10;
            let end = match x >> 58 & 7 {
                0 => None,
                1 => Some(start - 1),
                d => Some(start + d as i64 * 5),
            };
            all.push(key(start, end, rowid));
        }
        let chunks: Vec<Vec<Key>> = [0, 1, 700, 2048, 2049, 4999, 5000]
            .windows(2)
            .map(|w| all[w[0]..w[1]].to_vec())
            .collect();
        let mut order = KeyOrder::new(chunks);
        let merged: Vec<Key> = std::iter::from_fn(|| order.next()).collect();
        all.sort();
        assert!(merged == all, "the merge differs from one sort");
    }
}
