//! Rows copied out of SQLite into memory: a batch side by side ([`RowBlock`]) or one on its own
//! ([`BufferedRow`]), read back through [`Fields`].

use std::sync::Arc;

use rusqlite::types::ValueRef;

use super::row::Fields;

/// Rows copied out of SQLite side by side: a run's batch (the partitioned reader), or one row
/// (the sort-keys reader). `width` cells a row, all in one vector, and the bytes of their text and
/// blobs in another, so that a batch is refilled in place: nothing is freed or allocated per row,
/// and a batch's rows lie in the order they are written and read (no cache misses on rows
/// recycled from long before).
///
/// A block may hold only some of its reader's columns (see [`RowBlock::layout`]): a run's
/// rows come from one table, which gives few of a union's columns, and storing NULL cells for
/// the others cost more than the fetch's own work.
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

/// A row copied out of SQLite, on its own (the sort-keys reader keeps fetched rows by rowid).
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
