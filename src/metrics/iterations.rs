//! Iterations: the structure of a run, found in the same pass as the other metrics, and the
//! efficiency factors of each iteration (the POP method's second step: from the whole run to its
//! iterations, then to the rank to blame).
//!
//! Found from NVTX first ([`ranges`]): ranges that repeat (at least [`MIN_PER_RANK`] per rank)
//! once their names are normalised, at the outermost level that repeats and covers most of the
//! measured time ([`MIN_COVERAGE`]); iteration k of every rank is that rank's k-th instance.
//! Without such ranges, from the GPU ([`markers`]): a kernel that recurs at a regular period,
//! iteration k running from its k-th start to the next on each GPU. Where nothing is regular,
//! none are reported rather than noise.
//!
//! Each rank measures iteration k inside its own instance (TALP's per-process view); the
//! iteration's elapsed time is the longest of them, its start and end the earliest and latest
//! over the ranks.

pub mod markers;
pub mod ranges;
pub mod report;

use serde::{Deserialize, Serialize};

use super::accum::GpuTotals;
use crate::model::Ns;

pub use report::{build, Arrival, Iteration, IterationTime, IterationsReport, Slowest, Spread};

/// Instances a range needs on every rank to be taken for iterations.
pub const MIN_PER_RANK: usize = 3;
/// Share of the measured time the instances must cover on every rank.
pub const MIN_COVERAGE: f64 = 0.5;
/// Instances of a range whose durations vary more than this (standard deviation over mean,
/// the first one left out as a warm-up) are no iterations.
pub const MAX_DURATION_CV: f64 = 0.5;
/// An iteration longer than this many times the median is an outlier.
pub const OUTLIER_FACTOR: f64 = 1.5;

/// Where iterations come from (`--iterations`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IterationSource {
    /// Found in the trace: NVTX ranges, else a regular GPU kernel.
    #[default]
    Auto,
    /// Not looked for.
    Off,
    /// The instances of the NVTX range of this name (as given, or normalised).
    Range(String),
}

impl IterationSource {
    /// `auto`, `none` / `off`, or a range name.
    pub fn parse(s: &str) -> Result<IterationSource, String> {
        match s.trim() {
            "" => Err("--iterations takes auto, none, or an NVTX range name".into()),
            "auto" => Ok(IterationSource::Auto),
            "none" | "off" => Ok(IterationSource::Off),
            name => Ok(IterationSource::Range(name.to_owned())),
        }
    }
}

/// What the pass keeps for finding iterations.
pub struct Tracker {
    pub source: IterationSource,
    pub ranges: ranges::Ranges,
    pub markers: markers::Markers,
    /// GPU lanes of each process, in the order of its snapshots' `gpus`.
    pub process_gpus: Vec<Vec<usize>>,
    /// Per model thread, its process.
    pub thread_process: Vec<usize>,
    /// Index of the NVTX domain `NCCL` (its ranges are library calls, never iterations).
    pub nccl_domain: Option<u32>,
}

impl Tracker {
    pub fn new(
        source: IterationSource,
        objects: &crate::model::ObjectModel,
        domains: &[String],
    ) -> Tracker {
        let mut process_gpus = vec![Vec::new(); objects.processes.len()];
        for t in &objects.threads {
            if let crate::model::ThreadKind::GpuStream { device, .. } = t.kind {
                let gpus: &mut Vec<usize> = &mut process_gpus[t.process];
                if !gpus.contains(&device) {
                    gpus.push(device);
                }
            }
        }
        for g in &mut process_gpus {
            g.sort_unstable();
        }
        Tracker {
            source,
            ranges: ranges::Ranges::default(),
            markers: markers::Markers::default(),
            process_gpus,
            thread_process: objects.threads.iter().map(|t| t.process).collect(),
            nccl_domain: domains.iter().position(|d| d == "NCCL").map(|i| i as u32),
        }
    }

    /// Whether NVTX ranges are followed.
    pub fn follows_ranges(&self) -> bool {
        self.source != IterationSource::Off
    }

    /// Whether kernels are followed as markers.
    pub fn follows_kernels(&self) -> bool {
        self.source == IterationSource::Auto
    }
}

/// Running totals of one process at an instant (or, once cut, inside an interval): its MPI time
/// and each of its GPUs' useful and communication time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub mpi: Ns,
    pub gpus: Vec<GpuTotals>,
}

impl Snapshot {
    /// What happened from `earlier` to this one.
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        Snapshot {
            mpi: self.mpi - earlier.mpi,
            gpus: self
                .gpus
                .iter()
                .zip(&earlier.gpus)
                .map(|(a, b)| a.since(*b))
                .collect(),
        }
    }
}

/// A range name with what changes between instances taken out: PyTorch's per-call fields
/// (`, seq = …`, `, op_id = …`) and every run of digits (`Step 90 to 100` → `Step N to N`,
/// `ProfilerStep#12` → `ProfilerStep#N`).
pub fn normalise(name: &str) -> String {
    let base = super::nvtx::base_name(name);
    let mut out = String::with_capacity(base.len());
    let mut in_digits = false;
    for ch in base.chars() {
        if ch.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            out.push(ch);
            in_digits = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_to_what_repeats() {
        assert_eq!(normalise("Step 90 to 100"), "Step N to N");
        assert_eq!(normalise("ProfilerStep#12"), "ProfilerStep#N");
        assert_eq!(normalise("iteration"), "iteration");
        assert_eq!(normalise("train_step, seq = 4, op_id = 9"), "train_step");
        assert_eq!(normalise("Compute & Residual 110"), "Compute & Residual N");
    }

    #[test]
    fn the_option_takes_auto_none_or_a_name() {
        assert_eq!(IterationSource::parse("auto"), Ok(IterationSource::Auto));
        assert_eq!(IterationSource::parse("none"), Ok(IterationSource::Off));
        assert_eq!(
            IterationSource::parse("train_step"),
            Ok(IterationSource::Range("train_step".into()))
        );
        assert!(IterationSource::parse(" ").is_err());
    }
}
