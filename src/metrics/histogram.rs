//! Duration histograms per kernel name on fixed logarithmic bins: four bins per octave from 1 µs to
//! 2^24 µs (16.8 s), plus one bin below and one above. Fixed bins keep memory per kernel name
//! constant and make histograms of different kernels, GPUs and runs comparable.

use serde::Serialize;

use crate::model::Ns;

const BINS_PER_OCTAVE: u32 = 4;
const OCTAVES: u32 = 24;
/// Lower edge of the first logarithmic bin.
const FIRST_EDGE_NS: f64 = 1_000.0;
/// Bin 0 is [0, 1 µs), the last bin is [2^24 µs, ∞).
pub const NBINS: usize = (BINS_PER_OCTAVE * OCTAVES) as usize + 2;

/// Bin edges in ns: `edges()[k]` is the lower edge of bin `k + 1`.
pub fn edges() -> &'static [Ns; NBINS - 1] {
    static EDGES: std::sync::OnceLock<[Ns; NBINS - 1]> = std::sync::OnceLock::new();
    EDGES.get_or_init(|| {
        let mut e = [0; NBINS - 1];
        for (k, v) in e.iter_mut().enumerate() {
            // Rounded once to integer ns: afterwards bin lookup is exact integer comparison.
            *v = (FIRST_EDGE_NS * 2f64.powf(k as f64 / BINS_PER_OCTAVE as f64)).round() as Ns;
        }
        e
    })
}

pub fn bin_of(d: Ns) -> usize {
    edges().partition_point(|&e| e <= d)
}

/// `[lo, hi)` of bin `k`; `hi` is None for the last, open bin.
pub fn bin_range(k: usize) -> (Ns, Option<Ns>) {
    let e = edges();
    let lo = if k == 0 { 0 } else { e[k - 1] };
    (lo, e.get(k).copied())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub counts: Box<[u64; NBINS]>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Box::new([0; NBINS]),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistBin {
    pub lo_ns: Ns,
    /// Upper edge (exclusive); null for the last, open bin.
    pub hi_ns: Option<Ns>,
    pub count: u64,
}

impl Histogram {
    pub fn add(&mut self, d: Ns) {
        self.counts[bin_of(d)] += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Non-empty bins only, in duration order.
    pub fn bins(&self) -> Vec<HistBin> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &count)| {
                let (lo_ns, hi_ns) = bin_range(k);
                HistBin {
                    lo_ns,
                    hi_ns,
                    count,
                }
            })
            .collect()
    }

    /// Bins that are separate modes of the distribution (a bimodal kernel gives two).
    ///
    /// A candidate is a local maximum (≥ the bin before, > the bin after) holding at least 10% of
    /// the samples (fewer would flag sampling noise of short series as modes). Two neighbouring candidates are separate modes only if some bin between them
    /// falls to half the smaller one or below; otherwise they are one mode and the higher stays.
    /// Returns the bin indices of the modes.
    pub fn modes(&self) -> Vec<usize> {
        let c = &self.counts[..];
        let min_count = (self.total() as f64 * 0.10).max(1.0);
        let mut modes: Vec<usize> = Vec::new();
        for k in 0..c.len() {
            let left = if k == 0 { 0 } else { c[k - 1] };
            let right = c.get(k + 1).copied().unwrap_or(0);
            if (c[k] as f64) < min_count || c[k] < left || c[k] <= right {
                continue;
            }
            if let Some(&p) = modes.last() {
                let valley = c[p..=k].iter().min().copied().unwrap_or(0);
                if valley * 2 > c[p].min(c[k]) {
                    if c[k] > c[p] {
                        *modes.last_mut().expect("checked non-empty") = k;
                    }
                    continue;
                }
            }
            modes.push(k);
        }
        modes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_double_every_four_bins() {
        let e = edges();
        assert_eq!(e[0], 1_000);
        assert_eq!(e[1], 1_189);
        assert_eq!(e[4], 2_000);
        assert_eq!(e[40], 1_024_000);
        assert_eq!(e[NBINS - 2], 16_777_216_000);
        assert!(e.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(bin_of(0), 0);
        assert_eq!(bin_of(999), 0);
        assert_eq!(bin_of(1_000), 1);
        assert_eq!(bin_of(1_188), 1);
        assert_eq!(bin_of(1_189), 2);
        assert_eq!(bin_of(u64::MAX), NBINS - 1);
        assert_eq!(bin_range(1), (1_000, Some(1_189)));
        assert_eq!(bin_range(NBINS - 1), (16_777_216_000, None));
    }

    #[test]
    fn two_clusters_are_two_modes() {
        let mut h = Histogram::default();
        for _ in 0..100 {
            h.add(10_000);
            h.add(100_000);
        }
        for _ in 0..10 {
            h.add(12_000);
        }
        let m = h.modes();
        assert_eq!(m, vec![bin_of(10_000), bin_of(100_000)]);
        assert_eq!(h.bins().len(), 3);
        assert_eq!(h.total(), 210);
    }

    #[test]
    fn one_wide_cluster_is_one_mode() {
        let mut h = Histogram::default();
        // Counts 30, 60, 50, 60, 20 in consecutive bins: the dip to 50 is not a valley.
        for (d, n) in [
            (10_000, 30),
            (12_000, 60),
            (14_000, 50),
            (16_500, 60),
            (20_000, 20),
        ] {
            for _ in 0..n {
                h.add(d);
            }
        }
        assert_eq!(h.modes().len(), 1);
    }
}
