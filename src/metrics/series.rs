//! Time-binned series for drawing: per GPU and per bin, the fraction of the bin that was useful,
//! communication and idle, and the kernels in flight (time-weighted mean and maximum). A fixed
//! number of bins over `[0, T]` keeps the output sized for a chart whatever the trace length.

use serde::Serialize;

use super::accum::{time_class, TimeClass};
use super::sweep::Piece;
use super::NcclAs;
use crate::model::Ns;

#[derive(Clone, Debug, Default)]
struct GpuBins {
    useful: Vec<Ns>,
    comm: Vec<Ns>,
    /// ∫ kernels running dt over the bin (ns·kernels).
    kernel_time: Vec<u128>,
    kernels_max: Vec<u32>,
}

pub struct Series {
    /// Integer bin edges: bin i is `[edges[i], edges[i+1])`.
    edges: Vec<Ns>,
    gpus: Vec<GpuBins>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuSeries {
    pub gpu: usize,
    pub useful: Vec<f64>,
    pub communication: Vec<f64>,
    pub idle: Vec<f64>,
    /// Time-weighted mean number of kernels (compute and communication) running in the bin.
    pub kernels_in_flight_mean: Vec<f64>,
    pub kernels_in_flight_max: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesReport {
    pub bins: usize,
    /// bins + 1 edges in ns; bin i covers [edges_ns[i], edges_ns[i+1]).
    pub edges_ns: Vec<Ns>,
    pub gpus: Vec<GpuSeries>,
}

impl Series {
    /// `bins` bins over `[0, end)`; fewer when the trace is shorter than `bins` ns, so that no bin
    /// is empty.
    pub fn new(gpus: usize, bins: usize, end: Ns) -> Series {
        let b = (bins as u64).min(end) as usize;
        let edges: Vec<Ns> = if b == 0 {
            vec![0]
        } else {
            (0..=b)
                .map(|i| (i as u128 * end as u128 / b as u128) as Ns)
                .collect()
        };
        let g = GpuBins {
            useful: vec![0; b],
            comm: vec![0; b],
            kernel_time: vec![0; b],
            kernels_max: vec![0; b],
        };
        Series {
            edges,
            gpus: vec![g; gpus],
        }
    }

    fn bins(&self) -> usize {
        self.edges.len() - 1
    }

    /// Bin holding instant `t` (the last bin for `t` at or past the end).
    fn bin_at(&self, t: Ns) -> usize {
        (self.edges.partition_point(|&e| e <= t).max(1) - 1).min(self.bins().saturating_sub(1))
    }

    pub fn add(&mut self, p: &Piece, nccl_as: NcclAs) {
        let nb = self.bins();
        if nb == 0 {
            return;
        }
        let class = time_class(p.running, nccl_as);
        let kernels = p.running.kernels();
        let mut i = self.bin_at(p.start);
        let g = &mut self.gpus[p.lane];
        let mut a = p.start;
        while a < p.end && i < nb {
            let b = p.end.min(self.edges[i + 1]);
            let len = b.saturating_sub(a);
            match class {
                TimeClass::Useful => g.useful[i] += len,
                TimeClass::Comm => g.comm[i] += len,
                TimeClass::Idle => {}
            }
            g.kernel_time[i] += len as u128 * kernels as u128;
            if len > 0 {
                g.kernels_max[i] = g.kernels_max[i].max(kernels);
            }
            a = b;
            i += 1;
        }
    }

    pub fn report(&self) -> SeriesReport {
        let nb = self.bins();
        let width = |i: usize| (self.edges[i + 1] - self.edges[i]) as f64;
        let gpus = self
            .gpus
            .iter()
            .enumerate()
            .map(|(gpu, g)| GpuSeries {
                gpu,
                useful: (0..nb).map(|i| g.useful[i] as f64 / width(i)).collect(),
                communication: (0..nb).map(|i| g.comm[i] as f64 / width(i)).collect(),
                idle: (0..nb)
                    .map(|i| {
                        let w = self.edges[i + 1] - self.edges[i];
                        w.saturating_sub(g.useful[i] + g.comm[i]) as f64 / w as f64
                    })
                    .collect(),
                kernels_in_flight_mean: (0..nb)
                    .map(|i| g.kernel_time[i] as f64 / width(i))
                    .collect(),
                kernels_in_flight_max: g.kernels_max.clone(),
            })
            .collect();
        SeriesReport {
            bins: nb,
            edges_ns: self.edges.clone(),
            gpus,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::category::Category;
    use crate::metrics::sweep::Running;

    #[test]
    fn pieces_split_across_bins() {
        let mut s = Series::new(1, 4, 100);
        let mut r = Running::default();
        r.n[Category::Gemm.index()] = 2;
        s.add(
            &Piece {
                lane: 0,
                start: 10,
                end: 60,
                running: &r,
            },
            NcclAs::Communication,
        );
        let mut c = Running::default();
        c.n[Category::Nccl.index()] = 1;
        s.add(
            &Piece {
                lane: 0,
                start: 60,
                end: 70,
                running: &c,
            },
            NcclAs::Communication,
        );
        let rep = s.report();
        assert_eq!(rep.edges_ns, vec![0, 25, 50, 75, 100]);
        let g = &rep.gpus[0];
        assert_eq!(g.useful, vec![15.0 / 25.0, 1.0, 10.0 / 25.0, 0.0]);
        assert_eq!(g.communication, vec![0.0, 0.0, 10.0 / 25.0, 0.0]);
        assert_eq!(g.idle, vec![10.0 / 25.0, 0.0, 5.0 / 25.0, 1.0]);
        assert_eq!(
            g.kernels_in_flight_mean,
            vec![30.0 / 25.0, 2.0, 30.0 / 25.0, 0.0]
        );
        assert_eq!(g.kernels_in_flight_max, vec![2, 2, 2, 0]);
    }

    #[test]
    fn short_traces_get_fewer_bins() {
        let s = Series::new(2, 200, 7);
        let r = s.report();
        assert_eq!(r.bins, 7);
        assert_eq!(r.edges_ns, (0..=7).collect::<Vec<_>>());
        assert_eq!(Series::new(1, 10, 0).report().bins, 0);
    }
}
