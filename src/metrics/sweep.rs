//! The sweep line: turns operations of several lanes (GPUs; MPI ranks for the host model),
//! delivered in start order, into pieces of time over which the set of running operations of a
//! lane does not change.
//!
//! Every metric of the GPU side is a function of "what runs on GPU g at instant t" (unions,
//! overlap, priority split, kernels in flight), so one exact sweep serves them all. The sweep keeps
//! only the operations *in flight*: a count per category per GPU, plus one heap entry per running
//! operation holding its end. Memory is bounded by the concurrency of the trace, never by its length.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::category::{Category, NCAT};
use super::NcclAs;
use crate::model::Ns;

/// How many operations of each category are running on one GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Running {
    pub n: [u32; NCAT],
}

impl Running {
    /// Operations that count as useful work under `nccl_as`.
    pub fn useful(&self, nccl_as: NcclAs) -> u32 {
        Category::ALL
            .iter()
            .filter(|c| nccl_as.is_useful(**c))
            .map(|c| self.n[c.index()])
            .sum()
    }

    /// Operations that count as communication (data movement) under `nccl_as`.
    pub fn comm(&self, nccl_as: NcclAs) -> u32 {
        Category::ALL
            .iter()
            .filter(|c| !nccl_as.is_useful(**c))
            .map(|c| self.n[c.index()])
            .sum()
    }

    /// Kernels of any kind (compute and communication-library kernels).
    pub fn kernels(&self) -> u32 {
        Category::ALL
            .iter()
            .filter(|c| c.is_kernel())
            .map(|c| self.n[c.index()])
            .sum()
    }

    /// The highest-priority category running, which owns the instant in the time breakdown.
    pub fn top(&self) -> Option<Category> {
        Category::ALL
            .iter()
            .copied()
            .find(|c| self.n[c.index()] > 0)
    }

    pub fn is_empty(&self) -> bool {
        self.n.iter().all(|&k| k == 0)
    }
}

/// What a lane of the sweep tracks about its running operations; `tag` says what kind each is.
pub trait LaneState: Default {
    fn enter(&mut self, tag: u8);
    fn leave(&mut self, tag: u8);
}

impl LaneState for Running {
    fn enter(&mut self, tag: u8) {
        self.n[tag as usize] += 1;
    }
    fn leave(&mut self, tag: u8) {
        self.n[tag as usize] -= 1;
    }
}

/// A piece of constant state of one lane (a GPU, or an MPI rank's main thread): `running` holds
/// on `[start, end)`.
pub struct Piece<'a, S = Running> {
    pub lane: usize,
    pub start: Ns,
    pub end: Ns,
    pub running: &'a S,
}

struct Lane<S> {
    /// Time up to which pieces of this lane were emitted.
    last: Ns,
    running: S,
}

pub struct Sweep<S = Running> {
    lanes: Vec<Lane<S>>,
    /// (end, lane, tag) of every operation in flight, earliest end first.
    ends: BinaryHeap<Reverse<(Ns, u32, u8)>>,
}

impl<S: LaneState> Sweep<S> {
    pub fn new(lanes: usize) -> Self {
        Sweep {
            lanes: (0..lanes)
                .map(|_| Lane {
                    last: 0,
                    running: S::default(),
                })
                .collect(),
            ends: BinaryHeap::new(),
        }
    }

    /// Operations in flight now (the memory the sweep holds).
    pub fn in_flight(&self) -> usize {
        self.ends.len()
    }

    fn emit(l: &mut Lane<S>, lane: usize, to: Ns, out: &mut impl FnMut(Piece<S>)) {
        if to > l.last {
            out(Piece {
                lane,
                start: l.last,
                end: to,
                running: &l.running,
            });
            l.last = to;
        }
    }

    /// Retires every operation that ends at or before `t` (an end at `t` does not overlap a start
    /// at `t`), emitting the pieces before each end.
    pub fn advance(&mut self, t: Ns, out: &mut impl FnMut(Piece<S>)) {
        while let Some(&Reverse((end, lane, tag))) = self.ends.peek() {
            if end > t {
                break;
            }
            self.ends.pop();
            let l = &mut self.lanes[lane as usize];
            Self::emit(l, lane as usize, end, out);
            l.running.leave(tag);
        }
    }

    /// Where lane `lane` stands: the time its pieces were emitted up to, and what has been
    /// running since (until the next start or end on it).
    pub fn lane(&self, lane: usize) -> (Ns, &S) {
        let l = &self.lanes[lane];
        (l.last, &l.running)
    }

    /// Starts an operation of kind `tag`; the caller has advanced the sweep to `start` first.
    pub fn start(
        &mut self,
        lane: usize,
        start: Ns,
        end: Ns,
        tag: u8,
        out: &mut impl FnMut(Piece<S>),
    ) {
        let l = &mut self.lanes[lane];
        Self::emit(l, lane, start, out);
        l.running.enter(tag);
        self.ends.push(Reverse((end.max(start), lane as u32, tag)));
    }

    /// Emits every lane's state up to `t` (after [`Sweep::advance`] to `t`), so that all lanes
    /// stand at the same time: done whenever a time window opens or closes, and at the end.
    pub fn flush(&mut self, t: Ns, out: &mut impl FnMut(Piece<S>)) {
        for (i, l) in self.lanes.iter_mut().enumerate() {
            Self::emit(l, i, t, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds (gpu, start, end, category) in start order and collects the pieces.
    fn run(ops: &[(usize, Ns, Ns, Category)], end: Ns) -> Vec<(usize, Ns, Ns, u32, u32)> {
        let mut sw: Sweep = Sweep::new(2);
        let mut out = Vec::new();
        let mut push = |p: Piece| {
            out.push((
                p.lane,
                p.start,
                p.end,
                p.running.useful(NcclAs::Communication),
                p.running.comm(NcclAs::Communication),
            ))
        };
        for &(g, s, e, c) in ops {
            sw.advance(s, &mut push);
            sw.start(g, s, e, c.index() as u8, &mut push);
        }
        sw.advance(end, &mut push);
        sw.flush(end, &mut push);
        out
    }

    #[test]
    fn pieces_cover_each_gpu_exactly_once() {
        let p = run(
            &[
                (0, 10, 50, Category::Gemm),
                (1, 20, 30, Category::Nccl),
                (0, 30, 40, Category::Elementwise),
                (0, 40, 80, Category::Nccl),
            ],
            100,
        );
        assert_eq!(
            p,
            vec![
                (0, 0, 10, 0, 0),
                (1, 0, 20, 0, 0),
                // gpu 1's end at 30 is retired before gpu 0's start at 30 is handled
                (1, 20, 30, 0, 1),
                (0, 10, 30, 1, 0),
                (0, 30, 40, 2, 0),
                (0, 40, 50, 1, 1),
                (0, 50, 80, 0, 1),
                (0, 80, 100, 0, 0),
                (1, 30, 100, 0, 0),
            ]
        );
    }

    #[test]
    fn back_to_back_operations_do_not_overlap() {
        let p = run(
            &[(0, 0, 10, Category::Gemm), (0, 10, 20, Category::Gemm)],
            20,
        );
        assert_eq!(
            p,
            vec![(0, 0, 10, 1, 0), (0, 10, 20, 1, 0), (1, 0, 20, 0, 0)]
        );
    }

    #[test]
    fn running_counts_follow_nccl_option() {
        let mut r = Running::default();
        r.n[Category::Gemm.index()] = 2;
        r.n[Category::Nccl.index()] = 1;
        r.n[Category::MemcpyDtoD.index()] = 1;
        assert_eq!(r.useful(NcclAs::Communication), 2);
        assert_eq!(r.comm(NcclAs::Communication), 2);
        assert_eq!(r.useful(NcclAs::Useful), 3);
        assert_eq!(r.comm(NcclAs::Useful), 1);
        assert_eq!(r.kernels(), 3);
        assert_eq!(r.top(), Some(Category::Gemm));
    }
}
