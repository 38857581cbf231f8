//! Iteration candidates from the GPU, for traces without repeating NVTX ranges: a kernel (an
//! NCCL collective, say) that recurs on a GPU at a regular period marks the iterations, one
//! from each of its starts to the next. Each start keeps the totals of its GPU and of the
//! launching process's MPI time, so the iterations' figures are differences of two starts.
//!
//! Most kernels run many times per iteration at irregular gaps: a name is followed only while
//! its gaps stay regular (their coefficient of variation, measured from [`JUDGED_AFTER`]
//! starts on, at most [`DROP_CV`]) and it has run at most [`MAX_STARTS`] times on the GPU, so
//! memory holds the starts of the few regular names only.

use crate::model::{NameId, Ns};
use crate::FastMap;

use super::Snapshot;

/// Starts after which a name's regularity is judged.
pub const JUDGED_AFTER: usize = 8;
/// Gaps more variable than this (standard deviation over mean) drop a name.
pub const DROP_CV: f64 = 0.5;
/// Gaps at most this variable make a marker.
pub const REGULAR_CV: f64 = 0.25;
/// Starts of one name on one GPU beyond which it is no iteration marker.
pub const MAX_STARTS: usize = 4096;

/// One start of a marker kernel.
#[derive(Clone, Debug)]
pub struct Start {
    pub at: Ns,
    pub process: usize,
    pub totals: Snapshot,
}

/// A kernel name on one GPU.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// The kernel's function name (for messages).
    pub short: NameId,
    pub starts: Vec<Start>,
    /// Gaps between starts: count, mean and sum of squared deviations (Welford).
    gaps: u64,
    mean: f64,
    m2: f64,
    pub dropped: bool,
}

impl Track {
    /// Coefficient of variation of the gaps, from two gaps on.
    pub fn cv(&self) -> Option<f64> {
        (self.gaps >= 2 && self.mean > 0.0)
            .then(|| (self.m2 / (self.gaps - 1) as f64).sqrt() / self.mean)
    }

    pub fn mean_gap(&self) -> f64 {
        self.mean
    }

    fn gap(&mut self, g: f64) {
        self.gaps += 1;
        let d = g - self.mean;
        self.mean += d / self.gaps as f64;
        self.m2 += d * (g - self.mean);
    }
}

#[derive(Default)]
pub struct Markers {
    /// By (kernel name, GPU index).
    pub tracks: FastMap<(NameId, usize), Track>,
}

impl Markers {
    /// Whether a start of `name` on `gpu` is still followed (then call [`start`](Self::start)).
    pub fn wants(&self, name: NameId, gpu: usize) -> bool {
        self.tracks.get(&(name, gpu)).is_none_or(|t| !t.dropped)
    }

    /// A start of `name` on `gpu` at `at`, launched by `process`, with the totals then.
    pub fn start(&mut self, name: NameId, short: NameId, gpu: usize, start: Start) {
        let t = self.tracks.entry((name, gpu)).or_default();
        t.short = short;
        if let Some(last) = t.starts.last() {
            t.gap(start.at.saturating_sub(last.at) as f64);
        }
        t.starts.push(start);
        let irregular = t.starts.len() >= JUDGED_AFTER && t.cv().is_some_and(|cv| cv > DROP_CV);
        if irregular || t.starts.len() > MAX_STARTS {
            t.dropped = true;
            t.starts = Vec::new();
        }
    }
}
