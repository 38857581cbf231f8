//! The regions (intervals with event values) still open on one row, so that records of one row
//! may overlap: kernels of one stream launched through a graph or stream capture, memory
//! operations beside them, a driver call inside a runtime call.
//!
//! Paraver shows one value per event type and row. At an overlap the row shows the region that
//! started last; when that one ends, the one still open shows again (a stack of values per type).
//! Each type's row is then non-zero exactly over the union of its regions, and every region's
//! value is on the row for all of its time that no later region covers. The end line of a region
//! is scheduled when it starts, so a region that starts later and covers an earlier one's end
//! rewrites that end line: the later region now decides what shows there.

use crate::model::Ns;

/// A region open on the row.
pub(super) struct Open {
    pub start: Ns,
    pub end: Ns,
    /// Where its end line waits (`ParaverWriter::waiting`).
    pub slot: u32,
    /// Its (type, value) pairs, as its begin line wrote them.
    pub pairs: Vec<(u32, u64)>,
    /// Per pair, what its end line writes for that type: the value that shows again after it
    /// (0: none), or nothing where a later region still covers its end.
    pub after: Vec<Option<u64>>,
}

/// The open regions of one row, in the order they started.
#[derive(Default)]
pub(super) struct OpenRegions {
    open: Vec<Open>,
    /// Regions already ended, kept to reuse their vectors.
    spare: Vec<Open>,
}

impl OpenRegions {
    /// Forgets the regions that ended by `now` (their end lines are written by then).
    pub fn expire(&mut self, now: Ns) {
        let mut i = 0;
        while i < self.open.len() {
            if self.open[i].end <= now {
                self.spare.push(self.open.remove(i));
            } else {
                i += 1;
            }
        }
    }

    /// Whether no region is open (after [`expire`](Self::expire)): the usual case, where a new
    /// region's end line writes 0 for all of its types.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Notes a region [`start`, `end`) that starts now, whose end line waits in `slot`; returns
    /// what its end line writes per pair, and calls `rewrite` with every open region whose end
    /// line must change and the types it no longer writes (a type of the new region covers its
    /// end: it writes nothing there).
    pub fn push(
        &mut self,
        start: Ns,
        end: Ns,
        slot: u32,
        pairs: &[(u32, u64)],
        mut rewrite: impl FnMut(&Open, &[u32]),
    ) -> &[Option<u64>] {
        let mut dropped = Vec::new();
        for x in self.open.iter_mut() {
            if x.end > end {
                continue;
            }
            dropped.clear();
            for (k, &(ty, _)) in x.pairs.iter().enumerate() {
                if x.after[k].is_some() && pairs.iter().any(|&(t, _)| t == ty) {
                    x.after[k] = None;
                    dropped.push(ty);
                }
            }
            if !dropped.is_empty() {
                rewrite(x, &dropped);
            }
        }
        let mut region = self.spare.pop().unwrap_or(Open {
            start: 0,
            end: 0,
            slot: 0,
            pairs: Vec::new(),
            after: Vec::new(),
        });
        region.start = start;
        region.end = end;
        region.slot = slot;
        region.pairs.clear();
        region.pairs.extend_from_slice(pairs);
        region.after.clear();
        // After this region, each type shows the latest-started region still open then.
        region.after.extend(pairs.iter().map(|&(ty, _)| {
            let shown = self
                .open
                .iter()
                .rev()
                .filter(|x| x.end > end)
                .find_map(|x| x.pairs.iter().find_map(|&(t, v)| (t == ty).then_some(v)));
            Some(shown.unwrap_or(0))
        }));
        self.open.push(region);
        &self.open.last().expect("just pushed").after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region: start, end, pairs.
    type Region<'a> = (Ns, Ns, &'a [(u32, u64)]);

    /// The end lines' contents after pushing `regions` in order, by region.
    fn end_lines(regions: &[Region]) -> Vec<Vec<Option<u64>>> {
        let mut row = OpenRegions::default();
        let mut lines: Vec<Vec<Option<u64>>> = Vec::new();
        for (i, &(start, end, pairs)) in regions.iter().enumerate() {
            row.expire(start);
            let mut rewritten = Vec::new();
            let after = row
                .push(start, end, i as u32, pairs, |x, _| {
                    rewritten.push((x.slot, x.after.clone()))
                })
                .to_vec();
            for (slot, after) in rewritten {
                lines[slot as usize] = after;
            }
            lines.push(after);
        }
        lines
    }

    #[test]
    fn a_region_that_outlasts_an_earlier_one_takes_over_its_end() {
        // A [0, 10), B [5, 15): A's end writes nothing for the shared type, B's writes 0.
        let lines = end_lines(&[(0, 10, &[(6, 1), (7, 11)]), (5, 15, &[(6, 2)])]);
        assert_eq!(lines, [vec![None, Some(0)], vec![Some(0)]]);
    }

    #[test]
    fn a_nested_region_shows_the_outer_one_again_when_it_ends() {
        let lines = end_lines(&[(0, 20, &[(6, 1)]), (5, 10, &[(6, 2), (8, 3)])]);
        assert_eq!(lines, [vec![Some(0)], vec![Some(1), Some(0)]]);
    }

    #[test]
    fn the_latest_started_region_still_open_shows_after_an_end() {
        // X [0, 100), B [10, 50), C [20, 40): C's end shows B, B's end shows X.
        let lines = end_lines(&[
            (0, 100, &[(6, 1)]),
            (10, 50, &[(6, 2)]),
            (20, 40, &[(6, 3)]),
        ]);
        assert_eq!(lines, [vec![Some(0)], vec![Some(1)], vec![Some(2)]]);
        // C [20, 60) instead outlasts B: B's end writes nothing, C's shows X.
        let lines = end_lines(&[
            (0, 100, &[(6, 1)]),
            (10, 50, &[(6, 2)]),
            (20, 60, &[(6, 3)]),
        ]);
        assert_eq!(lines, [vec![Some(0)], vec![None], vec![Some(1)]]);
    }

    #[test]
    fn regions_ending_together_leave_the_row_empty_once() {
        let lines = end_lines(&[(0, 10, &[(6, 1)]), (5, 10, &[(6, 2)])]);
        assert_eq!(lines, [vec![None], vec![Some(0)]]);
    }

    #[test]
    fn ended_regions_are_forgotten_and_other_types_are_left_alone() {
        let lines = end_lines(&[(0, 10, &[(6, 1)]), (10, 20, &[(6, 2)]), (12, 30, &[(9, 4)])]);
        assert_eq!(lines, [vec![Some(0)], vec![Some(0)], vec![Some(0)]]);
    }
}
