//! The spans kept one by one, for the deepest zoom and the hover: every span while they fit a
//! fixed budget; past it, only those at least `shortest` long, the bound raised until they fit
//! again. The short ones stay visible through the bins, the long ones stay exact at any zoom.

use super::span::Span;
use crate::model::Ns;

pub struct Kept {
    /// Per row, by start.
    pub rows: Vec<Vec<Span>>,
    /// Per row, the longest span kept (bounds the search for spans overlapping an instant).
    pub longest: Vec<Ns>,
    /// Spans shorter than this were not kept (0: every span is).
    pub shortest: Ns,
    budget: usize,
    len: usize,
}

/// The first bound once the budget is reached; each later one is four times the previous.
const FIRST_BOUND: Ns = 1_000;

impl Kept {
    /// `budget_bytes` bounds the spans kept.
    pub fn new(rows: usize, budget_bytes: usize) -> Kept {
        Kept {
            rows: vec![Vec::new(); rows],
            longest: vec![0; rows],
            shortest: 0,
            budget: (budget_bytes / std::mem::size_of::<Span>()).max(1),
            len: 0,
        }
    }

    pub fn complete(&self) -> bool {
        self.shortest == 0
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, row: usize, span: Span) {
        let len = span.end - span.start;
        if len < self.shortest {
            return;
        }
        if self.len >= self.budget {
            self.raise_bound();
            if len < self.shortest {
                return;
            }
        }
        self.rows[row].push(span);
        self.longest[row] = self.longest[row].max(len);
        self.len += 1;
    }

    /// Drops the shortest spans until at most three quarters of the budget is used.
    fn raise_bound(&mut self) {
        while self.len > self.budget / 4 * 3 {
            self.shortest = if self.shortest == 0 {
                FIRST_BOUND
            } else {
                self.shortest.saturating_mul(4)
            };
            let bound = self.shortest;
            self.len = 0;
            for r in &mut self.rows {
                r.retain(|s| s.end - s.start >= bound);
                self.len += r.len();
            }
        }
        for r in &mut self.rows {
            r.shrink_to_fit();
        }
    }

    pub fn bytes(&self) -> usize {
        self.rows.iter().map(Vec::capacity).sum::<usize>() * std::mem::size_of::<Span>()
    }

    /// The spans of `row` that may overlap [from, to): by start, from the first that can.
    pub fn overlapping(&self, row: usize, from: Ns, to: Ns) -> impl Iterator<Item = &Span> {
        let spans = &self.rows[row];
        let earliest = from.saturating_sub(self.longest[row]);
        let first = spans.partition_point(|s| s.start < earliest);
        spans[first..]
            .iter()
            .take_while(move |s| s.start < to)
            .filter(move |s| s.end > from || (s.end == s.start && s.start >= from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NameId;
    use crate::timeline::span::What;

    fn span(start: Ns, end: Ns) -> Span {
        Span {
            start,
            end,
            what: What::Graph { name: NameId(1) },
        }
    }

    #[test]
    fn past_the_budget_the_short_spans_go_first() {
        let mut k = Kept::new(1, 4 * std::mem::size_of::<Span>());
        for (s, e) in [(0, 10), (20, 5_000), (6_000, 6_010), (7_000, 9_000)] {
            k.push(0, span(s, e));
        }
        assert!(k.complete());
        k.push(0, span(10_000, 10_005));
        assert_eq!(k.shortest, FIRST_BOUND);
        let left: Vec<_> = k.rows[0].iter().map(|s| s.start).collect();
        assert_eq!(left, [20, 7_000]);
        let near: Vec<_> = k.overlapping(0, 4_000, 8_000).map(|s| s.start).collect();
        assert_eq!(near, [20, 7_000]);
    }
}
