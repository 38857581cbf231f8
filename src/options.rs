//! What the user chose to convert.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A record family of an export, selectable with `-t/--trace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// CUDA kernels (CUPTI_ACTIVITY_KIND_KERNEL).
    Kernel,
    /// Memory copies (CUPTI_ACTIVITY_KIND_MEMCPY), unified-memory migrations included.
    Memcpy,
    /// Memory sets (CUPTI_ACTIVITY_KIND_MEMSET).
    Memset,
    /// CUDA runtime and driver API calls (CUPTI_ACTIVITY_KIND_RUNTIME).
    CudaApi,
    /// NVTX ranges and marks (NVTX_EVENTS).
    Nvtx,
    /// MPI calls (MPI_*_EVENTS since nsys 2023; the NVTX `MPI` domain in nsys 2022).
    Mpi,
    /// OS runtime calls: libc/pthread (OSRT_API).
    Osrt,
    /// Sampled GPU metrics (GPU_METRICS, named by TARGET_INFO_GPU_METRICS).
    GpuMetrics,
}

impl Family {
    pub const ALL: [Family; 8] =
        [Family::Kernel, Family::Memcpy, Family::Memset, Family::CudaApi, Family::Nvtx, Family::Mpi, Family::Osrt, Family::GpuMetrics];

    pub fn name(self) -> &'static str {
        match self {
            Family::Kernel => "kernel",
            Family::Memcpy => "memcpy",
            Family::Memset => "memset",
            Family::CudaApi => "cuda-api",
            Family::Nvtx => "nvtx",
            Family::Mpi => "mpi",
            Family::Osrt => "osrt",
            Family::GpuMetrics => "gpu-metrics",
        }
    }

    /// The export tables the family is read from (the first is the main one).
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            Family::Mpi => &["MPI_P2P_EVENTS", "MPI_COLLECTIVES_EVENTS", "MPI_START_WAIT_EVENTS", "MPI_OTHER_EVENTS"],
            Family::Osrt => &["OSRT_API"],
            Family::GpuMetrics => &["GPU_METRICS"],
            _ => std::slice::from_ref(match self {
                Family::Kernel => &"CUPTI_ACTIVITY_KIND_KERNEL",
                Family::Memcpy => &"CUPTI_ACTIVITY_KIND_MEMCPY",
                Family::Memset => &"CUPTI_ACTIVITY_KIND_MEMSET",
                Family::CudaApi => &"CUPTI_ACTIVITY_KIND_RUNTIME",
                _ => &"NVTX_EVENTS",
            }),
        }
    }

    /// The main export table the family is read from.
    pub fn table(self) -> &'static str {
        self.tables()[0]
    }

}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Family {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        let f = match norm.as_str() {
            "kernel" | "kernels" | "cuda-kernel" => Family::Kernel,
            "memcpy" | "memcpys" => Family::Memcpy,
            "memset" | "memsets" => Family::Memset,
            "cuda-api" | "api" | "cuda" | "runtime" | "cuda-api-trace" => Family::CudaApi,
            "nvtx" | "nvtx-pushpop-trace" | "nvtx-startend-trace" => Family::Nvtx,
            "mpi" | "mpi-event-trace" => Family::Mpi,
            "osrt" | "os-runtime" => Family::Osrt,
            "gpu-metrics" | "metrics" => Family::GpuMetrics,
            _ => {
                let known: Vec<_> = Family::ALL.iter().map(|f| f.name()).collect();
                return Err(format!(
                    "unknown record family '{s}' (known: {})",
                    known.join(", ")
                ));
            }
        };
        Ok(f)
    }
}

/// Conversion options shared by every face (CLI, wasm).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Options {
    /// Families to convert; `None` = every family the exports hold.
    pub families: Option<BTreeSet<Family>>,
    /// How the clocks of several reports are put on one timeline.
    #[serde(default)]
    pub align: Align,
}

/// Clock alignment of several reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Align {
    /// Each report's session start on the wall clock (TARGET_INFO_SESSION_START_TIME.utcEpochNs).
    #[default]
    SessionStart,
    /// The ends of MPI_Init coincide (every report must have MPI_Init).
    MpiInit,
    /// Raw timestamps, no alignment.
    None,
}

impl FromStr for Align {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "session-start" | "session" => Ok(Align::SessionStart),
            "mpi-init" => Ok(Align::MpiInit),
            "none" => Ok(Align::None),
            _ => Err(format!("unknown alignment '{s}' (known: session-start, mpi-init, none)")),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options { families: None, align: Align::SessionStart }
    }
}

impl Options {
    pub fn wants(&self, f: Family) -> bool {
        self.families.as_ref().is_none_or(|s| s.contains(&f))
    }

    /// Parses a comma-separated family list (`kernel,memcpy,nvtx`).
    pub fn parse_families(list: &str) -> Result<BTreeSet<Family>, String> {
        list.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(Family::from_str)
            .collect()
    }
}
