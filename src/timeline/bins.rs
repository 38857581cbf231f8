//! Level-of-detail bins: what Paraver draws per pixel, computed once. Each (view, row) track
//! holds, per bin of a fixed grid over the timeline, the value that covered most of the bin and
//! how much of the bin was covered at all; coarser levels halve the finest one, so a frame at any
//! zoom reads about one bin per pixel.

use crate::model::Ns;

/// Coverage as a fraction of a bin, 0..=FULL.
pub const FULL: u16 = u16::MAX;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bin {
    /// The value covering most of the bin (meaningless when `busy` is 0).
    pub value: u32,
    /// How much of the bin `value` covers.
    pub cover: u16,
    /// How much of the bin anything covers.
    pub busy: u16,
}

fn add_fractions(a: u16, b: u16) -> u16 {
    a.saturating_add(b)
}

impl Bin {
    pub fn is_empty(self) -> bool {
        self.busy == 0
    }

    /// Two contributions to the same bin (overlapping records, or parts written at different
    /// times): equal values add up; otherwise the larger cover wins, the later one on a tie
    /// (the inner of nested records, as Paraver shows it).
    fn combine(self, later: Bin) -> Bin {
        if self.is_empty() {
            return later;
        }
        if later.is_empty() {
            return self;
        }
        let busy = add_fractions(self.busy, later.busy);
        if self.value == later.value {
            Bin {
                value: self.value,
                cover: add_fractions(self.cover, later.cover),
                busy,
            }
        } else if later.cover >= self.cover {
            Bin { busy, ..later }
        } else {
            Bin { busy, ..self }
        }
    }

    /// Two neighbouring bins as one twice as wide.
    pub fn halve(a: Bin, b: Bin) -> Bin {
        let busy = ((u32::from(a.busy) + u32::from(b.busy)) / 2) as u16;
        if a.is_empty() {
            return Bin {
                value: b.value,
                cover: b.cover / 2,
                busy,
            };
        }
        if b.is_empty() || a.value == b.value {
            let cover = if b.is_empty() {
                a.cover / 2
            } else {
                ((u32::from(a.cover) + u32::from(b.cover)) / 2) as u16
            };
            return Bin {
                value: a.value,
                cover,
                busy,
            };
        }
        let w = if b.cover >= a.cover { b } else { a };
        Bin {
            value: w.value,
            cover: w.cover / 2,
            busy,
        }
    }
}

/// The finest bins: `count` bins of `width` ns from `origin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub origin: Ns,
    pub width: Ns,
    pub count: usize,
}

impl Grid {
    /// The finest grid for [origin, end): `count` (a power of two) bins, each at least 1 ns.
    pub fn new(origin: Ns, end: Ns, count: usize) -> Grid {
        let span = end.saturating_sub(origin).max(1);
        let count = count.next_power_of_two().max(1);
        let width = span.div_ceil(count as u64).max(1);
        Grid {
            origin,
            width,
            count,
        }
    }

    pub fn end(&self) -> Ns {
        self.origin + self.width * self.count as u64
    }

    fn fraction(&self, ns: Ns) -> u16 {
        (u128::from(ns.min(self.width)) * u128::from(FULL) / u128::from(self.width)) as u16
    }

    /// The same span in half as many bins.
    pub fn halved(&self) -> Grid {
        Grid {
            origin: self.origin,
            width: self.width * 2,
            count: self.count / 2,
        }
    }
}

/// The bin being filled by records that cover part of it: the first few distinct values and
/// their time (exact while a bin holds at most `CANDIDATES` values, which is the common case).
#[derive(Clone, Debug, Default)]
struct OpenBin {
    index: usize,
    values: [(u32, Ns); CANDIDATES],
    len: usize,
    busy: Ns,
}

const CANDIDATES: usize = 4;

impl OpenBin {
    fn add(&mut self, value: u32, ns: Ns) {
        self.busy += ns;
        if let Some(c) = self.values[..self.len].iter_mut().find(|c| c.0 == value) {
            c.1 += ns;
        } else if self.len < CANDIDATES {
            self.values[self.len] = (value, ns);
            self.len += 1;
        } else if let Some(c) = self.values.iter_mut().min_by_key(|c| c.1) {
            // A fifth value: it replaces the smallest when it already outweighs it.
            if ns > c.1 {
                *c = (value, ns);
            }
        }
    }

    fn bin(&self, grid: &Grid) -> Bin {
        let mut best = self.values[0];
        for c in &self.values[1..self.len] {
            if c.1 >= best.1 {
                best = *c;
            }
        }
        Bin {
            value: best.0,
            cover: grid.fraction(best.1),
            busy: grid.fraction(self.busy).max(1),
        }
    }
}

/// One (view, row): its finest bins while the records come, then every level.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Level 0 is the finest; level k has bins 2^k times as wide.
    pub levels: Vec<Vec<Bin>>,
    open: Option<OpenBin>,
}

/// Coarser levels stop at this many bins (a frame is at least that wide in pixels).
const COARSEST: usize = 64;

impl Track {
    pub fn new(grid: &Grid) -> Track {
        Track {
            levels: vec![vec![Bin::default(); grid.count]],
            open: None,
        }
    }

    pub fn bytes(&self) -> usize {
        self.levels.iter().map(|l| l.len()).sum::<usize>() * std::mem::size_of::<Bin>()
    }

    /// Adds `value` over [start, end) (an instant counts as 1 ns, so it shows).
    pub fn add(&mut self, grid: &Grid, value: u32, start: Ns, end: Ns) {
        let start = start.max(grid.origin);
        let end = end.max(start + 1).min(grid.end());
        if start >= end {
            return;
        }
        let first = ((start - grid.origin) / grid.width) as usize;
        let last = ((end - 1 - grid.origin) / grid.width) as usize;
        let bin_start = |i: usize| grid.origin + i as u64 * grid.width;
        if first == last {
            self.part(grid, first, value, end - start);
            return;
        }
        self.part(grid, first, value, bin_start(first + 1) - start);
        let full = Bin {
            value,
            cover: FULL,
            busy: FULL,
        };
        let bins = &mut self.levels[0];
        for b in &mut bins[first + 1..last] {
            *b = b.combine(full);
        }
        self.part(grid, last, value, end - bin_start(last));
    }

    fn part(&mut self, grid: &Grid, index: usize, value: u32, ns: Ns) {
        match &mut self.open {
            Some(o) if o.index == index => o.add(value, ns),
            Some(o) if o.index > index => {
                // An earlier bin, reached again by a record overlapping an earlier, longer one.
                let b = OpenBin {
                    index,
                    values: [(value, ns); CANDIDATES],
                    len: 1,
                    busy: ns,
                }
                .bin(grid);
                let slot = &mut self.levels[0][index];
                *slot = slot.combine(b);
            }
            _ => {
                self.close(grid);
                let mut o = OpenBin {
                    index,
                    ..OpenBin::default()
                };
                o.add(value, ns);
                self.open = Some(o);
            }
        }
    }

    /// Writes the open bin into the finest level.
    pub fn close(&mut self, grid: &Grid) {
        if let Some(o) = self.open.take() {
            let b = o.bin(grid);
            let slot = &mut self.levels[0][o.index];
            *slot = slot.combine(b);
        }
    }

    /// Halves the finest level in place (the grid doubles its bin width), keeping what is open.
    pub fn halve(&mut self) {
        let bins = &mut self.levels[0];
        let n = bins.len() / 2;
        for i in 0..n {
            bins[i] = Bin::halve(bins[2 * i], bins[2 * i + 1]);
        }
        bins.truncate(n);
        bins.shrink_to_fit();
        if let Some(o) = &mut self.open {
            // The open bin's time is kept in ns; it lands in the wider bin it now belongs to.
            o.index /= 2;
        }
    }

    /// Closes the open bin and builds the coarser levels.
    pub fn finish(&mut self, grid: &Grid) {
        self.close(grid);
        while self.levels.last().is_some_and(|l| l.len() > COARSEST) {
            let l = self.levels.last().expect("a level");
            let next: Vec<Bin> = l.chunks(2).map(|p| Bin::halve(p[0], p[1])).collect();
            self.levels.push(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_covers_its_bins_exactly() {
        let g = Grid::new(0, 1000, 8); // 125 ns bins
        let mut t = Track::new(&g);
        t.add(&g, 7, 100, 400);
        t.finish(&g);
        let b = &t.levels[0];
        assert_eq!(b[0].value, 7);
        assert_eq!(b[0].busy, g.fraction(25));
        assert_eq!((b[1].cover, b[2].cover), (FULL, FULL));
        assert_eq!(b[3].busy, g.fraction(25));
        assert!(b[4].is_empty());
    }

    #[test]
    fn the_value_covering_most_of_a_bin_wins() {
        let g = Grid::new(0, 1000, 8);
        let mut t = Track::new(&g);
        t.add(&g, 1, 0, 10);
        t.add(&g, 2, 20, 60);
        t.add(&g, 1, 70, 80);
        t.finish(&g);
        let b = t.levels[0][0];
        assert_eq!(b.value, 2);
        assert_eq!(b.cover, g.fraction(40));
        assert_eq!(b.busy, g.fraction(60));
    }

    #[test]
    fn halving_keeps_the_open_bin_and_the_total() {
        let g = Grid::new(0, 1024, 16); // 64 ns bins
        let mut t = Track::new(&g);
        t.add(&g, 5, 0, 64);
        t.add(&g, 6, 64, 90);
        t.halve();
        let h = g.halved();
        t.add(&h, 6, 100, 120);
        t.finish(&h);
        let b = t.levels[0][0];
        // 64 ns of 5 against 46 ns of 6 in one 128 ns bin.
        assert_eq!(b.value, 5);
        assert_eq!(b.busy, FULL / 2 + h.fraction(46));
        assert_eq!(t.levels[0].len(), 8);
    }
}
