//! The per-GPU sweep line: turns GPU operations, delivered in start order, into pieces of time over
//! which the set of running operations of a GPU does not change.
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

/// A piece of constant state of one GPU: `running` holds on `[start, end)`.
pub struct Piece<'a> {
    pub gpu: usize,
    pub start: Ns,
    pub end: Ns,
    pub running: &'a Running,
}

struct GpuState {
    /// Time up to which pieces of this GPU were emitted.
    last: Ns,
    running: Running,
}

pub struct Sweep {
    gpus: Vec<GpuState>,
    /// (end, gpu, category) of every operation in flight, earliest end first.
    ends: BinaryHeap<Reverse<(Ns, u32, u8)>>,
}

impl Sweep {
    pub fn new(gpus: usize) -> Self {
        Sweep {
            gpus: (0..gpus)
                .map(|_| GpuState {
                    last: 0,
                    running: Running::default(),
                })
                .collect(),
            ends: BinaryHeap::new(),
        }
    }

    /// Operations in flight now (the memory the sweep holds).
    pub fn in_flight(&self) -> usize {
        self.ends.len()
    }

    fn emit(g: &mut GpuState, gpu: usize, to: Ns, out: &mut impl FnMut(Piece)) {
        if to > g.last {
            out(Piece {
                gpu,
                start: g.last,
                end: to,
                running: &g.running,
            });
            g.last = to;
        }
    }

    /// Retires every operation that ends at or before `t` (an end at `t` does not overlap a start
    /// at `t`), emitting the pieces before each end.
    pub fn advance(&mut self, t: Ns, out: &mut impl FnMut(Piece)) {
        while let Some(&Reverse((end, gpu, cat))) = self.ends.peek() {
            if end > t {
                break;
            }
            self.ends.pop();
            let g = &mut self.gpus[gpu as usize];
            Self::emit(g, gpu as usize, end, out);
            g.running.n[cat as usize] -= 1;
        }
    }

    /// Starts an operation; the caller has advanced the sweep to `start` first.
    pub fn start(
        &mut self,
        gpu: usize,
        start: Ns,
        end: Ns,
        cat: Category,
        out: &mut impl FnMut(Piece),
    ) {
        let g = &mut self.gpus[gpu];
        Self::emit(g, gpu, start, out);
        g.running.n[cat.index()] += 1;
        self.ends
            .push(Reverse((end.max(start), gpu as u32, cat.index() as u8)));
    }

    /// Emits every GPU's state up to `t` (after [`Sweep::advance`] to `t`), so that all GPUs stand
    /// at the same time: done whenever a time window opens or closes, and at the end.
    pub fn flush(&mut self, t: Ns, out: &mut impl FnMut(Piece)) {
        for (i, g) in self.gpus.iter_mut().enumerate() {
            Self::emit(g, i, t, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds (gpu, start, end, category) in start order and collects the pieces.
    fn run(ops: &[(usize, Ns, Ns, Category)], end: Ns) -> Vec<(usize, Ns, Ns, u32, u32)> {
        let mut sw = Sweep::new(2);
        let mut out = Vec::new();
        let mut push = |p: Piece| {
            out.push((
                p.gpu,
                p.start,
                p.end,
                p.running.useful(NcclAs::Communication),
                p.running.comm(NcclAs::Communication),
            ))
        };
        for &(g, s, e, c) in ops {
            sw.advance(s, &mut push);
            sw.start(g, s, e, c, &mut push);
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
