//! The .prv lines that wait for their time (an interval's end, a state that starts later), in
//! the order the writer writes them (paraver/prv.rs).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::Ns;

/// A line waiting for its time: its place in the order (time, kind, tiebreak, sequence) and
/// where its bytes wait. Kept small (32 bytes, the bytes elsewhere): the queue moves its entries
/// on every push and pop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Pending {
    /// The time in the high 64 bits; below it the kind (0: event end, 1: state) and, among ends
    /// at the same time, the range that started later (the inner one) first: `i64::MAX - start`
    /// (trace times are at most `i64::MAX`).
    at: u128,
    seq: u64,
    /// Index of its bytes in `ParaverWriter::waiting`.
    pub slot: u32,
}

impl Pending {
    pub fn new(time: Ns, class: u8, tiebreak: Ns, seq: u64, slot: u32) -> Pending {
        let below = (u64::from(class) << 63) | (i64::MAX as u64 - tiebreak.min(i64::MAX as u64));
        Pending {
            at: (u128::from(time) << 64) | u128::from(below),
            seq,
            slot,
        }
    }

    pub fn time(&self) -> Ns {
        (self.at >> 64) as Ns
    }
}

/// Entries kept in a sorted vector at most; past this the queue is a heap until it holds fewer
/// than a quarter of it again.
const SMALL: usize = 64;

/// The pending lines, soonest first (each [`Pending`] is distinct: its sequence number is).
///
/// Usually a handful (one pending state per thread and the open intervals' ends), so they are
/// kept sorted in a small vector, the soonest last: a push looks for its place from the soonest
/// end (where a new line mostly goes) and shifts the few sooner ones, a pop takes the last,
/// which costs far fewer instructions than a binary heap's sift. A trace with many resources
/// busy at once (past [`SMALL`] lines) gets the heap, where a shift would grow with the queue.
#[derive(Default)]
pub(super) struct PendingQueue {
    /// Latest first while the queue is small.
    sorted: Vec<Pending>,
    /// Every entry while the queue is large (then `sorted` is empty).
    heap: BinaryHeap<Reverse<Pending>>,
}

impl PendingQueue {
    pub fn push(&mut self, p: Pending) {
        if !self.heap.is_empty() {
            self.heap.push(Reverse(p));
        } else if self.sorted.len() < SMALL {
            // After the last entry that comes later (the order is descending).
            let at = self
                .sorted
                .iter()
                .rposition(|q| *q > p)
                .map_or(0, |i| i + 1);
            self.sorted.insert(at, p);
        } else {
            self.heap.extend(self.sorted.drain(..).map(Reverse));
            self.heap.push(Reverse(p));
        }
    }

    /// The time of the soonest entry.
    pub fn next_time(&self) -> Option<Ns> {
        match self.heap.peek() {
            Some(Reverse(p)) => Some(p.time()),
            None => self.sorted.last().map(Pending::time),
        }
    }

    /// Takes the soonest entry.
    pub fn pop(&mut self) -> Option<Pending> {
        if self.heap.is_empty() {
            return self.sorted.pop();
        }
        let p = self.heap.pop().map(|Reverse(p)| p);
        if self.heap.len() < SMALL / 4 {
            self.sorted.extend(self.heap.drain().map(|Reverse(p)| p));
            self.sorted.sort_unstable_by(|a, b| b.cmp(a));
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_lines_come_in_time_then_kind_then_inner_first_then_fifo_order() {
        let max = i64::MAX as u64;
        // (time, class, tiebreak, seq), in no particular order.
        let lines = [
            (7, 1, 0, 1),
            (7, 0, 3, 2),
            (7, 0, 5, 3),
            (5, 1, 0, 4),
            (7, 0, 5, 5),
            (max, 0, max, 6),
            (max, 0, 0, 7),
            (0, 0, 0, 8),
            (7, 1, 0, 9),
        ];
        let mut by_key: Vec<Pending> = lines
            .iter()
            .map(|&(t, c, tb, seq)| Pending::new(t, c, tb, seq, 0))
            .collect();
        by_key.sort();
        let mut by_tuple = lines.to_vec();
        by_tuple.sort_by_key(|&(t, c, tb, seq)| (t, c, Reverse(tb), seq));
        assert_eq!(
            by_key.iter().map(|p| p.seq).collect::<Vec<_>>(),
            by_tuple.iter().map(|l| l.3).collect::<Vec<_>>()
        );
        assert_eq!(by_key[0].time(), 0);
        assert_eq!(by_key[by_key.len() - 1].time(), max);
    }

    /// The queue gives what a binary heap gives, in the same order, while it grows past
    /// [`SMALL`] and shrinks back (pushes and pops interleaved as the writer makes them).
    #[test]
    fn the_queue_pops_in_a_heaps_order_at_every_size() {
        let mut queue = PendingQueue::default();
        let mut heap = BinaryHeap::new();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rand = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let (mut seq, mut popped) = (0u64, 0usize);
        // Phases: mostly pushes (to a few hundred entries), then mostly pops, twice.
        for phase in 0..4 {
            let push_odds = if phase % 2 == 0 { 3 } else { 1 };
            for _ in 0..3000 {
                if rand(4) < push_odds {
                    seq += 1;
                    // Few distinct times, classes and tiebreaks: ties broken by the sequence.
                    let p = Pending::new(rand(50), rand(2) as u8, rand(3), seq, seq as u32);
                    queue.push(p);
                    heap.push(Reverse(p));
                } else {
                    assert_eq!(queue.next_time(), heap.peek().map(|Reverse(p)| p.time()));
                    assert_eq!(queue.pop(), heap.pop().map(|Reverse(p)| p));
                    popped += 1;
                }
            }
            // Grown past SMALL, then shrunk back under a quarter of it.
            let large = phase % 2 == 0;
            assert_eq!(
                !queue.heap.is_empty(),
                large,
                "phase {phase}: {}",
                heap.len()
            );
        }
        while let Some(Reverse(p)) = heap.pop() {
            assert_eq!(queue.pop(), Some(p));
        }
        assert_eq!(queue.pop(), None);
        assert!(popped > 3000 && seq > 4000, "{popped} {seq}");
    }
}
