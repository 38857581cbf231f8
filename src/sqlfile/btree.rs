//! A cursor over a table B-tree: rows in rowid order from a rowid on
//! (<https://www.sqlite.org/fileformat2.html#b_tree_pages>).
//!
//! Table B-tree leaves are not linked to each other, so the cursor keeps the interior pages above
//! its leaf (page, child taken) and climbs back to the next child when a leaf is read. The leaf is
//! copied into the cursor, so rows are decoded from it while other pages (overflow) are read.

use super::pager::Pager;
use super::{varint, Damaged};

/// Interior table page, leaf table page (the first byte of a page's B-tree header).
const INTERIOR: u8 = 0x05;
const LEAF: u8 = 0x0d;
/// SQLite's own bound on a B-tree's depth (BTCURSOR_MAX_DEPTH): deeper is a loop in the file.
const MAX_DEPTH: usize = 20;

/// An interior page above the cursor's leaf and the child the cursor went down into
/// (`child == cells` is the right-most child).
struct Frame {
    page: u32,
    child: u16,
    cells: u16,
}

pub struct TableCursor {
    root: u32,
    stack: Vec<Frame>,
    leaf: Vec<u8>,
    leaf_page: u32,
    /// Where the leaf's B-tree header starts (100 on page 1, after the file header).
    leaf_header: usize,
    leaf_cells: u16,
    /// Bytes of a page the B-tree may use (the page size less the reserved bytes).
    usable: usize,
    /// The leaf's next cell to read.
    next_cell: u16,
    /// No leaf loaded: positioned after the last row (or never positioned).
    at_end: bool,
    /// Leaves loaded since the last seek: a sound tree loads each at most once per pass, so more
    /// leaves than the file has pages means pages are shared (a damaged file), not a long table.
    leaves_loaded: u32,
    /// A row's payload put together from its leaf and its overflow pages.
    overflow: Vec<u8>,
}

impl TableCursor {
    /// A cursor over the table whose root page is `root`; [`seek`](Self::seek) it before reading.
    pub fn new(root: u32) -> TableCursor {
        TableCursor {
            root,
            stack: Vec::new(),
            leaf: Vec::new(),
            leaf_page: 0,
            leaf_header: 0,
            leaf_cells: 0,
            usable: 0,
            next_cell: 0,
            at_end: true,
            leaves_loaded: 0,
            overflow: Vec::new(),
        }
    }

    /// Lets go of the leaf it holds, until the next [`seek`](Self::seek) loads one: a reader
    /// that seeks for every batch keeps no page between them (one per table of every input).
    pub fn release(&mut self) {
        self.leaf = Vec::new();
        self.stack.clear();
        self.at_end = true;
    }

    /// Positions the cursor before the first row whose rowid is at least `min`.
    pub fn seek(&mut self, pager: &Pager, min: i64) -> Result<(), Damaged> {
        self.stack.clear();
        self.at_end = true;
        self.leaves_loaded = 0;
        let mut page = self.root;
        loop {
            let header = header_offset(page);
            // An interior page's child to go down into (the first cell whose key is ≥ min: its
            // left child holds the keys ≤ key), or `None` at a leaf.
            let step = pager.with_page(page, |p| {
                let p = &p[..pager.usable()];
                let (kind, cells) = page_kind(p, header)?;
                if kind != INTERIOR {
                    return Ok(None);
                }
                let (mut lo, mut hi) = (0u16, cells);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if interior_cell(p, header, mid, page)?.1 < min {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                Ok::<_, Damaged>(Some((lo, cells)))
            })??;
            match step {
                Some((child, cells)) => {
                    page = self.push(pager, page, child, cells)?;
                }
                None => {
                    self.load_leaf(pager, page)?;
                    self.next_cell = self.first_cell_at_least(0, min)?;
                    return Ok(());
                }
            }
        }
    }

    /// Moves on (never back) to before the first row whose rowid is at least `min`: within the
    /// leaf the cursor is in where that row is there (a binary search over its cells, the leaf
    /// not read again), else by a [`seek`](Self::seek) from the root.
    pub fn skip_to(&mut self, pager: &Pager, min: i64) -> Result<(), Damaged> {
        if !self.at_end
            && self.next_cell < self.leaf_cells
            && self.leaf_cell(self.leaf_cells - 1)?.rowid >= min
        {
            self.next_cell = self.first_cell_at_least(self.next_cell, min)?;
            return Ok(());
        }
        self.seek(pager, min)
    }

    /// The first cell of the leaf from `from` on whose rowid is at least `min` (the leaf's cell
    /// count if none), by a binary search: a leaf's rowids increase.
    fn first_cell_at_least(&self, from: u16, min: i64) -> Result<u16, Damaged> {
        let (mut lo, mut hi) = (from, self.leaf_cells);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.leaf_cell(mid)?.rowid < min {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The next row: its rowid and its whole record (the payload).
    pub fn next(&mut self, pager: &Pager) -> Result<Option<(i64, &[u8])>, Damaged> {
        loop {
            if self.at_end {
                return Ok(None);
            }
            if self.next_cell < self.leaf_cells {
                let cell = self.leaf_cell(self.next_cell)?;
                self.next_cell += 1;
                return match cell.overflow {
                    None => Ok(Some((
                        cell.rowid,
                        &self.leaf[cell.local_at..cell.local_at + cell.local_len],
                    ))),
                    Some(first) => {
                        self.gather_overflow(pager, &cell, first)?;
                        Ok(Some((cell.rowid, &self.overflow)))
                    }
                };
            }
            self.next_leaf(pager)?;
        }
    }

    /// Records a step down from interior page `page` into its child `child`; returns the child.
    fn push(&mut self, pager: &Pager, page: u32, child: u16, cells: u16) -> Result<u32, Damaged> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Damaged(format!(
                "the B-tree under page {} is deeper than {MAX_DEPTH} levels (pages point back up)",
                self.root
            )));
        }
        let header = header_offset(page);
        let to = pager.with_page(page, |p| {
            let p = &p[..pager.usable()];
            if child < cells {
                interior_cell(p, header, child, page).map(|(c, _)| c)
            } else {
                Ok(be32(p, header + 8))
            }
        })??;
        self.stack.push(Frame { page, child, cells });
        Ok(to)
    }

    /// Climbs to the next child not yet read and goes down its left-most side to a leaf.
    fn next_leaf(&mut self, pager: &Pager) -> Result<(), Damaged> {
        let mut page = loop {
            let Some(f) = self.stack.pop() else {
                self.at_end = true;
                return Ok(());
            };
            if f.child < f.cells {
                break self.push(pager, f.page, f.child + 1, f.cells)?;
            }
        };
        loop {
            let header = header_offset(page);
            let (kind, cells) =
                pager.with_page(page, |p| page_kind(&p[..pager.usable()], header))??;
            if kind == LEAF {
                self.load_leaf(pager, page)?;
                self.next_cell = 0;
                return Ok(());
            }
            page = self.push(pager, page, 0, cells)?;
        }
    }

    fn load_leaf(&mut self, pager: &Pager, page: u32) -> Result<(), Damaged> {
        self.leaves_loaded += 1;
        if self.leaves_loaded > pager.page_count() {
            return Err(Damaged(format!(
                "the B-tree under page {} reaches its leaves more than once (pages are shared)",
                self.root
            )));
        }
        pager.copy_page(page, &mut self.leaf)?;
        self.leaf_page = page;
        self.leaf_header = header_offset(page);
        self.usable = pager.usable();
        let (kind, cells) = page_kind(&self.leaf[..self.usable], self.leaf_header)?;
        if kind != LEAF {
            return Err(Damaged(format!("page {page} is not a table leaf")));
        }
        self.leaf_cells = cells;
        self.at_end = false;
        Ok(())
    }

    /// Cell `i` of the loaded leaf: payload size, rowid, where its local part lies.
    fn leaf_cell(&self, i: u16) -> Result<LeafCell, Damaged> {
        let p = &self.leaf[..self.usable];
        let page = self.leaf_page;
        let bad = || Damaged(format!("cell {i} of page {page} lies outside the page"));
        let at = cell_offset(p, self.leaf_header + 8, i).ok_or_else(bad)?;
        let (size, n1) = varint(p, at).ok_or_else(bad)?;
        let (rowid, n2) = varint(p, at + n1).ok_or_else(bad)?;
        let local_at = at + n1 + n2;
        let size = usize::try_from(size)
            .ok()
            .filter(|&s| s <= MAX_PAYLOAD)
            .ok_or_else(|| {
                Damaged(format!(
                    "cell {i} of page {page} gives a payload of {size} bytes"
                ))
            })?;
        let (local_len, overflow) = local_part(size, self.usable);
        let end = local_at + local_len + if overflow { 4 } else { 0 };
        if end > p.len() {
            return Err(bad());
        }
        Ok(LeafCell {
            rowid: rowid as i64,
            size,
            local_at,
            local_len,
            overflow: overflow.then(|| be32(p, local_at + local_len)),
        })
    }

    /// Puts a row's payload together in `self.overflow`: the local part, then each page of the
    /// chain (4 bytes: the next page, then content).
    fn gather_overflow(
        &mut self,
        pager: &Pager,
        cell: &LeafCell,
        first: u32,
    ) -> Result<(), Damaged> {
        self.overflow.clear();
        self.overflow
            .extend_from_slice(&self.leaf[cell.local_at..cell.local_at + cell.local_len]);
        let per_page = pager.usable() - 4;
        let mut next = first;
        while self.overflow.len() < cell.size {
            if next == 0 {
                return Err(Damaged(format!(
                    "the overflow chain of row {} ends before its {} bytes",
                    cell.rowid, cell.size
                )));
            }
            let want = (cell.size - self.overflow.len()).min(per_page);
            let out = &mut self.overflow;
            next = pager.with_page(next, |p| {
                out.extend_from_slice(&p[4..4 + want]);
                be32(p, 0)
            })?;
        }
        Ok(())
    }
}

/// A leaf cell's parts.
struct LeafCell {
    rowid: i64,
    size: usize,
    local_at: usize,
    local_len: usize,
    overflow: Option<u32>,
}

/// SQLite's largest record (SQLITE_MAX_LENGTH); a bigger size is damage.
const MAX_PAYLOAD: usize = 1_000_000_000;

/// Page 1 starts with the 100-byte file header; every other page with its B-tree header.
fn header_offset(page: u32) -> usize {
    if page == 1 {
        100
    } else {
        0
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// A table page's kind and cell count, checked against the page's size.
fn page_kind(p: &[u8], header: usize) -> Result<(u8, u16), Damaged> {
    let kind = p[header];
    let header_len = match kind {
        INTERIOR => 12,
        LEAF => 8,
        _ => {
            return Err(Damaged(format!(
                "a table B-tree reaches a page of kind {kind:#04x} (not a table page)"
            )))
        }
    };
    let cells = be16(p, header + 3);
    if header + header_len + 2 * usize::from(cells) > p.len() {
        return Err(Damaged(format!(
            "a table page claims {cells} cells, more than it can hold"
        )));
    }
    Ok((kind, cells))
}

/// Where cell `i` starts: the cell pointer array follows the page header.
fn cell_offset(p: &[u8], array: usize, i: u16) -> Option<usize> {
    let at = usize::from(be16(p, array + 2 * usize::from(i)));
    (at < p.len()).then_some(at)
}

/// Cell `i` of an interior table page: left child page, key.
fn interior_cell(p: &[u8], header: usize, i: u16, page: u32) -> Result<(u32, i64), Damaged> {
    let bad = || {
        Damaged(format!(
            "cell {i} of interior page {page} lies outside the page"
        ))
    };
    let at = cell_offset(p, header + 12, i).ok_or_else(bad)?;
    if at + 4 >= p.len() {
        return Err(bad());
    }
    let (key, _) = varint(p, at + 4).ok_or_else(bad)?;
    Ok((be32(p, at), key as i64))
}

/// How many leaf pages the table at `root` has, read from its interior pages (and one leaf):
/// what a pass over it costs, to share passes among threads (engine/prepass.rs). Stops counting
/// past `most_interior` interior pages, and at damage: an estimate, never an error (the pass
/// itself reports damage).
pub fn leaf_pages(pager: &Pager, root: u32, most_interior: usize) -> u64 {
    // One level of the tree at a time: every leaf is at the same depth, so the level whose
    // first page is a leaf is the leaves.
    let mut level = vec![root];
    let mut interior_read = 0usize;
    for _ in 0..MAX_DEPTH {
        let mut next = Vec::new();
        for &page in &level {
            if interior_read == most_interior {
                return level.len() as u64;
            }
            let header = header_offset(page);
            let children = pager.with_page(page, |p| {
                let p = &p[..pager.usable()];
                let (kind, cells) = page_kind(p, header)?;
                if kind == LEAF {
                    return Ok(None);
                }
                let mut children = Vec::with_capacity(usize::from(cells) + 1);
                for i in 0..cells {
                    children.push(interior_cell(p, header, i, page)?.0);
                }
                children.push(be32(p, header + 8));
                Ok::<_, Damaged>(Some(children))
            });
            match children {
                Ok(Ok(Some(children))) => next.extend(children),
                // A leaf (this level is the leaves), or damage.
                _ => return level.len() as u64,
            }
            interior_read += 1;
            // More pages than the file has: interior pages that point to the same pages.
            if next.len() > pager.page_count() as usize {
                return next.len() as u64;
            }
        }
        level = next;
    }
    level.len() as u64
}

/// How much of a payload of `size` bytes a table leaf cell holds itself, and whether the rest
/// goes to overflow pages (fileformat2.html, "Cell Payload Overflow Pages").
fn local_part(size: usize, usable: usize) -> (usize, bool) {
    let max_local = usable - 35;
    if size <= max_local {
        return (size, false);
    }
    let min_local = (usable - 12) * 32 / 255 - 23;
    let k = min_local + (size - min_local) % (usable - 4);
    (if k <= max_local { k } else { min_local }, true)
}
