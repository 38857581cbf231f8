//! The spans kept one by one, for the deepest zoom and the hover: every span while they fit a
//! fixed budget; past it, only those at least `shortest` long, the bound raised until they fit
//! again. The short ones stay visible through the bins, the long ones stay exact at any zoom.

use super::span::Span;
use crate::model::Ns;

pub struct Kept {
    /// Per row, by start.
    pub rows: Vec<SpanList>,
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
            rows: (0..rows).map(|_| SpanList::default()).collect(),
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
    }

    pub fn bytes(&self) -> usize {
        self.rows.iter().map(SpanList::bytes).sum()
    }

    /// The spans of `row` that may overlap [from, to): by start, from the first that can.
    pub fn overlapping(&self, row: usize, from: Ns, to: Ns) -> impl Iterator<Item = &Span> {
        let spans = &self.rows[row];
        let earliest = from.saturating_sub(self.longest[row]);
        let first = spans.partition_point(|s| s.start < earliest);
        spans
            .iter_from(first)
            .take_while(move |s| s.start < to)
            .filter(move |s| s.end > from || (s.end == s.start && s.start >= from))
    }
}

/// One row's spans in fixed-size chunks: a long row grows a chunk at a time, never by copying
/// itself into a block twice as large (which, in wasm's memory that never shrinks, would leave
/// the timeline's peak far above what it holds); a short row's one chunk grows as a Vec does.
#[derive(Default)]
pub struct SpanList {
    chunks: Vec<Vec<Span>>,
    len: usize,
}

const CHUNK: usize = 4096;

impl SpanList {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push(&mut self, span: Span) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => {
                if last.len() == last.capacity() {
                    last.reserve_exact((last.len() * 2).clamp(16, CHUNK) - last.len());
                }
                last.push(span);
            }
            _ => {
                // Full chunks are CHUNK long: the first chunk grows to it, the later start at it.
                let capacity = if self.chunks.is_empty() { 16 } else { CHUNK };
                let mut chunk = Vec::with_capacity(capacity);
                chunk.push(span);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    fn get(&self, i: usize) -> &Span {
        &self.chunks[i / CHUNK][i % CHUNK]
    }

    /// Keeps the spans `keep` accepts, in order, and frees the chunks left empty.
    fn retain(&mut self, keep: impl Fn(&Span) -> bool) {
        let mut written = 0;
        for i in 0..self.len {
            let s = *self.get(i);
            if keep(&s) {
                self.chunks[written / CHUNK][written % CHUNK] = s;
                written += 1;
            }
        }
        let chunks = written.div_ceil(CHUNK);
        self.chunks.truncate(chunks);
        if let Some(last) = self.chunks.last_mut() {
            last.truncate(written - (chunks - 1) * CHUNK);
        }
        self.len = written;
    }

    /// The first index whose span fails `pred` (spans are in `pred`'s order, as for a slice).
    fn partition_point(&self, pred: impl Fn(&Span) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub fn iter(&self) -> impl Iterator<Item = &Span> {
        self.iter_from(0)
    }

    fn iter_from(&self, first: usize) -> impl Iterator<Item = &Span> {
        let skip = first % CHUNK;
        self.chunks
            .iter()
            .skip(first / CHUNK)
            .enumerate()
            .flat_map(move |(k, c)| c[if k == 0 { skip.min(c.len()) } else { 0 }..].iter())
    }

    fn bytes(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum::<usize>() * std::mem::size_of::<Span>()
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

    #[test]
    fn a_long_row_spans_chunks_and_is_searched_and_thinned_across_them() {
        let n = 3 * CHUNK + 17;
        let mut list = SpanList::default();
        // Every third span is long.
        for i in 0..n as u64 {
            list.push(span(i * 10, i * 10 + if i % 3 == 0 { 50 } else { 5 }));
        }
        assert_eq!(list.len(), n);
        assert_eq!(list.chunks.len(), 4);
        assert!(list.chunks[1..].iter().all(|c| c.capacity() == CHUNK));
        let at = list.partition_point(|s| s.start < 10 * (2 * CHUNK as u64 + 5));
        assert_eq!(at, 2 * CHUNK + 5);
        let from: Vec<_> = list.iter_from(at).take(2).map(|s| s.start).collect();
        assert_eq!(
            from,
            [10 * (2 * CHUNK as u64 + 5), 10 * (2 * CHUNK as u64 + 6)]
        );
        list.retain(|s| s.end - s.start == 50);
        assert_eq!(list.len(), n.div_ceil(3));
        assert_eq!(list.chunks.len(), 2);
        let starts: Vec<_> = list.iter().map(|s| s.start).collect();
        assert_eq!(
            starts,
            (0..n as u64).step_by(3).map(|i| i * 10).collect::<Vec<_>>()
        );
    }
}
