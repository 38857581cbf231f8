//! GPU efficiency metrics, computed by a sink ([`MetricsSink`]) from the same single pass over the
//! exports that writes the Paraver trace.
//!
//! # What is measured
//! Per GPU (a GPU is a (host, CUDA device) pair) over the measured time T (the whole trace, or the
//! union of the selected NVTX range instances): *useful* = length of the union of useful-operation
//! intervals over all its streams; *communication* = length of the union of communication intervals
//! (NCCL kernels under [`NcclAs::Communication`], memcpy incl. peer copies, memset) minus the part
//! overlapped by useful time; *idle* = T − useful − communication. From these, the POP/TALP device
//! factors ([`efficiency`]), the time breakdown by kernel category ([`category`]), the
//! communication/computation overlap profile, top kernels, duration histograms, per-NVTX-range
//! figures and time-binned series; for MPI traces also the host-side POP model ([`host`]).
//! docs/METRICS.md states every definition and the JSON schema.
//!
//! # Why memory stays bounded
//! The sink never stores records. GPU operations arrive in start order, so:
//! - the sweep ([`sweep`]) holds only the operations *in flight* (a count per category per GPU and
//!   one heap entry with the end of each running operation) and turns them into pieces of constant
//!   state; a communication interval is thus kept exactly as long as a compute kernel could still
//!   start inside it, and no longer;
//! - a set of time windows is one number per set ([`window::OpenUntil`]), because every window that
//!   can still matter has already started;
//! - bins ([`series`]) and histograms ([`histogram`]) have a fixed size;
//! - what grows is keyed by *distinct names* (kernel statistics, histograms, NVTX range names), like
//!   the model's name interner itself, never by the number of records.

pub mod accum;
mod assemble;
pub mod category;
pub mod compare;
pub mod efficiency;
pub mod gemm_activity;
pub mod histogram;
pub mod host;
pub mod iterations;
pub mod kernels;
pub mod nvtx;
pub mod ranks;
pub mod report;
pub mod series;
pub mod sink;
pub mod sweep;
pub mod text;
pub mod transfers;
pub mod window;

use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use category::{Category, Group};
pub use efficiency::Efficiency;
pub use report::MetricsReport;
pub use sink::MetricsSink;
pub use window::WindowSpec;

use crate::error::Result;
use crate::nsys::Export;
use crate::options::Options;

/// What communication-library kernels (NCCL, RCCL, NVSHMEM) count as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NcclAs {
    /// Data movement, like memcpy (the nsys2prv cfgs' view): NCCL time is not useful.
    #[default]
    Communication,
    /// Useful work, like any kernel (TALP's view: CUPTI does not tell NCCL kernels apart).
    Useful,
}

impl NcclAs {
    /// Whether an operation of category `c` counts as useful work (otherwise: communication).
    pub fn is_useful(self, c: Category) -> bool {
        c.is_compute() || (self == NcclAs::Useful && c == Category::Nccl)
    }

    pub fn name(self) -> &'static str {
        match self {
            NcclAs::Communication => "communication",
            NcclAs::Useful => "useful",
        }
    }
}

impl FromStr for NcclAs {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "communication" | "comm" => Ok(NcclAs::Communication),
            "useful" | "compute" => Ok(NcclAs::Useful),
            _ => Err(format!(
                "--nccl-as takes 'communication' or 'useful', not '{s}'"
            )),
        }
    }
}

/// Where the measured time T lies when the trace has MPI.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Elapsed {
    /// TALP's window: from the latest end of MPI_Init to the earliest start of MPI_Finalize
    /// (the whole trace where there is no MPI_Init/MPI_Finalize).
    #[default]
    Mpi,
    /// The whole trace, setup and teardown included.
    Trace,
}

impl FromStr for Elapsed {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mpi" => Ok(Elapsed::Mpi),
            "trace" => Ok(Elapsed::Trace),
            _ => Err(format!("--elapsed takes 'mpi' or 'trace', not '{s}'")),
        }
    }
}

/// What the user asked the metrics to be computed over and how much to report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricsOptions {
    pub nccl_as: NcclAs,
    /// T between MPI_Init and MPI_Finalize (default) or over the whole trace.
    #[serde(default)]
    pub elapsed: Elapsed,
    /// Where iterations come from (`--iterations`).
    #[serde(default)]
    pub iterations: iterations::IterationSource,
    /// Measure inside this time window of the trace, [start, end) ns (the page's "keep only this
    /// iteration"); it replaces TALP's MPI window.
    #[serde(default)]
    pub time_window: Option<(crate::model::Ns, crate::model::Ns)>,
    /// Restrict every measure to instances of an NVTX range; `None` = the whole trace.
    pub window: Option<WindowSpec>,
    /// Bins of the time series over [0, trace end].
    pub bins: usize,
    /// Rows kept in the top-kernel, histogram and NVTX range tables.
    pub top: usize,
}

impl Default for MetricsOptions {
    fn default() -> Self {
        MetricsOptions {
            nccl_as: NcclAs::Communication,
            elapsed: Elapsed::Mpi,
            iterations: iterations::IterationSource::Auto,
            time_window: None,
            window: None,
            bins: 200,
            top: 20,
        }
    }
}

/// Largest accepted `bins`: a series is for drawing, not for storing the trace again.
pub const MAX_BINS: usize = 100_000;

/// Converts `exports` once and returns their metrics.
pub fn compute(
    exports: &[Export],
    opts: &Options,
    mopts: &MetricsOptions,
) -> Result<MetricsReport> {
    let mut sink = MetricsSink::new(mopts.clone())?;
    let summary = crate::pipeline::run(exports, opts, &mut [&mut sink], &mut |_| true)?;
    let mut report = sink.into_report()?;
    report.warnings = summary.warnings;
    Ok(report)
}
