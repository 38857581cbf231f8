//! The efficiency factors of any selected time range, without reading the export again: per GPU
//! and per bin, the useful and communication time from the metrics' own sweep (the same
//! classification as metrics.json), summed over the bins of the range.

use serde::Serialize;

use super::bins::Grid;
use crate::metrics::accum::{time_class, TimeClass};
use crate::metrics::category::OpCategories;
use crate::metrics::efficiency::{Efficiency, GpuTimes};
use crate::metrics::sweep::{Piece, Sweep};
use crate::metrics::NcclAs;
use crate::model::{GpuOp, Names, Ns};

pub struct FactorBins {
    grid: Grid,
    nccl_as: NcclAs,
    sweep: Sweep,
    /// Per GPU, per bin: useful and communication ns.
    useful: Vec<Vec<Ns>>,
    comm: Vec<Vec<Ns>>,
    has_activity: Vec<bool>,
    categories: OpCategories,
}

/// The factors of one range, and how exact they are.
#[derive(Clone, Debug, Serialize)]
pub struct RangeFactors {
    pub start_ns: Ns,
    pub end_ns: Ns,
    /// Bins cut by the range's ends are counted in proportion: the factors are exact to within
    /// this much time at each end.
    pub resolution_ns: Ns,
    pub efficiency: Efficiency,
}

fn add_piece(bins: &mut [Ns], grid: &Grid, start: Ns, end: Ns) {
    let (start, end) = (start.max(grid.origin), end.min(grid.end()));
    let mut t = start;
    while t < end {
        let i = ((t - grid.origin) / grid.width) as usize;
        let bin_end = grid.origin + (i as u64 + 1) * grid.width;
        let to = bin_end.min(end);
        bins[i] += to - t;
        t = to;
    }
}

impl FactorBins {
    /// `grid`: the timeline's finest grid, made coarser until `budget_bytes` holds every GPU's.
    pub fn new(gpus: usize, mut grid: Grid, nccl_as: NcclAs, budget_bytes: usize) -> FactorBins {
        while grid.count > 64 && gpus * grid.count * 16 > budget_bytes {
            grid = grid.halved();
        }
        FactorBins {
            grid,
            nccl_as,
            sweep: Sweep::new(gpus),
            useful: vec![vec![0; grid.count]; gpus],
            comm: vec![vec![0; grid.count]; gpus],
            has_activity: vec![false; gpus],
            categories: OpCategories::default(),
        }
    }

    pub fn bytes(&self) -> usize {
        self.useful.len() * self.grid.count * 16
    }

    fn piece(useful: &mut [Vec<Ns>], comm: &mut [Vec<Ns>], grid: &Grid, nccl_as: NcclAs, p: Piece) {
        match time_class(p.running, nccl_as) {
            TimeClass::Useful => add_piece(&mut useful[p.lane], grid, p.start, p.end),
            TimeClass::Comm => add_piece(&mut comm[p.lane], grid, p.start, p.end),
            TimeClass::Idle => {}
        }
    }

    pub fn gpu_op(&mut self, op: &GpuOp, names: &Names) {
        let Some(active) = self.has_activity.get_mut(op.device) else {
            return;
        };
        *active = true;
        let (grid, nccl_as) = (self.grid, self.nccl_as);
        let (useful, comm) = (&mut self.useful, &mut self.comm);
        let mut out = |p: Piece| Self::piece(useful, comm, &grid, nccl_as, p);
        self.sweep.advance(op.start, &mut out);
        let cat = self.categories.of(op, names);
        self.sweep.start(
            op.device,
            op.start,
            op.end.max(op.start),
            cat.index() as u8,
            &mut out,
        );
    }

    pub fn finish(&mut self, end: Ns) {
        let (grid, nccl_as) = (self.grid, self.nccl_as);
        let (useful, comm) = (&mut self.useful, &mut self.comm);
        let mut out = |p: Piece| Self::piece(useful, comm, &grid, nccl_as, p);
        self.sweep.advance(end, &mut out);
        self.sweep.flush(end, &mut out);
    }

    /// Time of `bins` inside [start, end), the bins cut by an end counted in proportion.
    fn sum(&self, bins: &[Ns], start: Ns, end: Ns) -> Ns {
        let g = &self.grid;
        let (start, end) = (start.max(g.origin), end.min(g.end()));
        if start >= end {
            return 0;
        }
        let first = ((start - g.origin) / g.width) as usize;
        let last = ((end - 1 - g.origin) / g.width) as usize;
        let mut total: u128 = 0;
        for (i, &v) in bins.iter().enumerate().take(last + 1).skip(first) {
            let b0 = g.origin + i as u64 * g.width;
            let inside = end.min(b0 + g.width) - start.max(b0);
            total += u128::from(v) * u128::from(inside) / u128::from(g.width);
        }
        total as Ns
    }

    /// The factors over [start, end) of the GPUs active anywhere in the trace (as metrics.json
    /// counts N).
    pub fn range(&self, start: Ns, end: Ns) -> RangeFactors {
        let gpus: Vec<GpuTimes> = (0..self.useful.len())
            .filter(|&g| self.has_activity[g])
            .map(|g| {
                let useful = self.sum(&self.useful[g], start, end);
                GpuTimes {
                    useful,
                    active: useful + self.sum(&self.comm[g], start, end),
                }
            })
            .collect();
        RangeFactors {
            start_ns: start,
            end_ns: end,
            resolution_ns: self.grid.width,
            efficiency: Efficiency::compute(&gpus, end.saturating_sub(start)),
        }
    }
}
