//! The metrics report: one serializable structure for the JSON output, the readable table and the
//! page's charts. Its JSON form is versioned (`schema_version`) and documented in docs/METRICS.md.

use serde::Serialize;

use super::accum::OVERLAP_BUCKETS;
use super::category::{Category, Group};
use super::efficiency::Efficiency;
use super::histogram::HistBin;
use super::host::HostPop;
use super::kernels::KernelRow;
use super::nvtx::NvtxRangeRow;
use super::series::SeriesReport;
use super::window::WindowSpec;
use super::{MetricsOptions, NcclAs};
use crate::model::Ns;

/// Version of the JSON layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricsReport {
    pub schema_version: u32,
    /// `prvsight <version>`.
    pub generator: String,
    /// Input labels, in input order.
    pub inputs: Vec<String>,
    /// The conversion's warnings (`Summary::warnings`: an export given twice, a rank claimed
    /// twice, data repaired), so a report read alone still says what its figures rest on.
    pub warnings: Vec<String>,
    pub options: MetricsOptions,
    /// End of the trace (ns since the trace origin).
    pub trace_end_ns: Ns,
    pub window: WindowReport,
    /// Every term of the report, defined for the options used.
    pub definitions: Vec<Definition>,
    /// Device factors over the GPUs with activity.
    pub efficiency: Efficiency,
    /// Every GPU of the trace, in object order.
    pub gpus: Vec<GpuReport>,
    pub load_balance: LoadBalance,
    /// Breakdown summed over the GPUs with activity (percent of N·T).
    pub breakdown: Breakdown,
    /// Overlap profile summed over the GPUs with activity.
    pub overlap: OverlapProfile,
    pub kernels: KernelsReport,
    pub histograms: Vec<KernelHistogram>,
    pub nvtx: NvtxReport,
    pub series: SeriesReport,
    /// Host-side POP model of MPI ranks; null when no process calls MPI.
    pub host: Option<HostPop>,
    /// Memory transfers per GPU and direction: count, bytes, achieved bandwidth.
    pub transfers: Vec<super::transfers::TransferRow>,
    /// The run's iterations and the factors of each (none found: `detected_by` is "none").
    pub iterations: super::iterations::IterationsReport,
    /// Per rank (process with a GPU at work or MPI calls): the straggler table.
    pub ranks: Vec<super::ranks::RankRow>,
    /// Tensor-core / SM activity during GEMM kernels, from sampled GPU metrics; empty without them.
    pub gemm_activity: Vec<super::gemm_activity::GemmActivityRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Definition {
    pub term: &'static str,
    pub meaning: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowReport {
    /// The selected NVTX range (`--nvtx-range`), null for the whole trace.
    pub nvtx_range: Option<WindowSpec>,
    /// Range instances taken as windows (0 for the whole trace).
    pub instances: u64,
    /// Start of the first and end of the last window (null for the whole trace).
    pub first_start_ns: Option<Ns>,
    pub last_end_ns: Option<Ns>,
    /// T: the measured time (trace end, or length of the union of the windows).
    pub elapsed_ns: Ns,
    /// TALP's window the measured time lies in: from the latest end of MPI_Init to the earliest
    /// start of MPI_Finalize (null: the whole trace, without MPI or with `--elapsed trace`).
    pub mpi_start_ns: Option<Ns>,
    pub mpi_end_ns: Option<Ns>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpCounts {
    /// Kernels of any kind, communication-library kernels included.
    pub kernels: u64,
    /// Communication-library (NCCL, RCCL, NVSHMEM) kernels.
    pub nccl_kernels: u64,
    pub memcpy: u64,
    pub memset: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuReport {
    /// Index into the trace's device list.
    pub index: usize,
    pub label: String,
    pub host: String,
    pub cuda_id: u32,
    /// Has at least one operation anywhere in the trace (counted in N).
    pub has_activity: bool,
    /// Operations starting inside the measured time.
    pub counts: OpCounts,
    pub useful_ns: Ns,
    pub communication_ns: Ns,
    pub active_ns: Ns,
    pub idle_ns: Ns,
    /// Fractions of T (null when T = 0).
    pub useful_fraction: Option<f64>,
    pub communication_fraction: Option<f64>,
    pub idle_fraction: Option<f64>,
    pub breakdown: Breakdown,
    pub overlap: OverlapProfile,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AvgMax {
    pub avg_ns: Option<f64>,
    pub max_ns: Ns,
}

/// Avg and Max over the GPUs with activity; useful Avg/Max is the load balance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoadBalance {
    pub useful: AvgMax,
    pub communication: AvgMax,
    pub idle: AvgMax,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CategoryRow {
    pub category: Category,
    pub group: Group,
    pub ns: Ns,
    pub percent: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupRow {
    pub group: Group,
    pub ns: Ns,
    pub percent: Option<f64>,
}

/// Exclusive split of GPU time: each instant goes to the highest-priority category running.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Breakdown {
    /// Denominator of the percentages (T for one GPU, N·T for the total).
    pub total_ns: Ns,
    /// Categories with time, in priority order.
    pub categories: Vec<CategoryRow>,
    /// gemm, attention, other_compute, nccl, memory, idle: always all six.
    pub groups: Vec<GroupRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverlapBucket {
    /// Useful kernels running concurrently: "0", "1", "2", "3+".
    pub useful_running: &'static str,
    pub ns: Ns,
    /// Percent of `communication_ns`.
    pub percent: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverlapProfile {
    /// Time with at least one communication operation running, overlapped or not.
    pub communication_ns: Ns,
    pub buckets: Vec<OverlapBucket>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuKernels {
    pub gpu: usize,
    pub distinct: usize,
    pub top: Vec<KernelRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelsReport {
    /// Distinct demangled kernel names.
    pub distinct: usize,
    pub top: Vec<KernelRow>,
    pub per_gpu: Vec<GpuKernels>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelHistogram {
    pub name: String,
    pub short_name: String,
    pub count: u64,
    /// Non-empty bins, shortest first.
    pub bins: Vec<HistBin>,
    /// Lower edges (ns) of the bins that are separate modes; two or more = multimodal.
    pub modes_ns: Vec<Ns>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NvtxReport {
    /// Distinct (domain, name) pairs seen.
    pub distinct: usize,
    pub ranges: Vec<NvtxRangeRow>,
}

impl MetricsReport {
    /// Pretty-printed JSON, newline-terminated.
    pub fn to_json(&self) -> crate::Result<String> {
        let mut s = serde_json::to_string_pretty(self).map_err(|e| crate::Error::Write {
            what: "metrics JSON".into(),
            detail: e.to_string(),
        })?;
        s.push('\n');
        Ok(s)
    }
}

pub fn percent(part: Ns, whole: Ns) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

pub fn fraction(part: Ns, whole: Ns) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Breakdown of `total` ns of GPU time from exclusive category times; the rest is idle.
pub fn breakdown(exclusive: &[Ns], total: Ns) -> Breakdown {
    let categories: Vec<CategoryRow> = Category::ALL
        .iter()
        .filter(|c| exclusive[c.index()] > 0)
        .map(|&c| CategoryRow {
            category: c,
            group: c.group(),
            ns: exclusive[c.index()],
            percent: percent(exclusive[c.index()], total),
        })
        .collect();
    let busy: Ns = exclusive.iter().sum();
    let groups = Group::ALL
        .iter()
        .map(|&g| {
            let ns = if g == Group::Idle {
                total.saturating_sub(busy)
            } else {
                Category::ALL
                    .iter()
                    .filter(|c| c.group() == g)
                    .map(|c| exclusive[c.index()])
                    .sum()
            };
            GroupRow {
                group: g,
                ns,
                percent: percent(ns, total),
            }
        })
        .collect();
    Breakdown {
        total_ns: total,
        categories,
        groups,
    }
}

pub fn overlap_profile(buckets: &[Ns; OVERLAP_BUCKETS]) -> OverlapProfile {
    const LABELS: [&str; OVERLAP_BUCKETS] = ["0", "1", "2", "3+"];
    let comm: Ns = buckets.iter().sum();
    OverlapProfile {
        communication_ns: comm,
        buckets: buckets
            .iter()
            .zip(LABELS)
            .map(|(&ns, l)| OverlapBucket {
                useful_running: l,
                ns,
                percent: percent(ns, comm),
            })
            .collect(),
    }
}

pub fn avg_max(values: &[Ns]) -> AvgMax {
    AvgMax {
        avg_ns: (!values.is_empty())
            .then(|| values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64),
        max_ns: values.iter().copied().max().unwrap_or(0),
    }
}

/// The definitions stated with every report, worded for the options used.
pub fn definitions(opts: &MetricsOptions, mpi_window: Option<(Ns, Ns)>) -> Vec<Definition> {
    let (useful_ops, comm_ops) = match opts.nccl_as {
        NcclAs::Communication => (
            "compute kernels (every kernel except communication-library kernels: NCCL, RCCL, NVSHMEM)",
            "communication-library kernels (NCCL, RCCL, NVSHMEM), memcpy (peer copies included) and memset",
        ),
        NcclAs::Useful => (
            "every kernel, communication-library kernels (NCCL) included (TALP-compatible, --nccl-as useful)",
            "memcpy (peer copies included) and memset",
        ),
    };
    let t = match &opts.window {
        None if opts.time_window.is_some() => "the time window of the trace asked for (every interval is clipped to it)".to_owned(),
        None if mpi_window.is_some() => "from the latest end of MPI_Init to the earliest start of MPI_Finalize over the ranks (TALP's window; `--elapsed trace` measures the whole trace)".to_owned(),
        None => "the elapsed time of the trace, from its origin (earliest event of all inputs) to its end (latest event end)".to_owned(),
        Some(w) => format!(
            "total time of the union of the instances of NVTX range '{}'{} (every interval is clipped to these windows)",
            w.name,
            match w.instance {
                Some(n) => format!(", instance {n} of each thread"),
                None => ", all instances".into(),
            }
        ),
    };
    let d = |term, meaning: &str| Definition {
        term,
        meaning: meaning.to_owned(),
    };
    vec![
        d("GPU", "one CUDA device of one host; all its streams together"),
        Definition { term: "T", meaning: t },
        d("N", "number of GPUs with at least one operation in the trace"),
        Definition { term: "useful operations", meaning: useful_ops.into() },
        Definition { term: "communication operations", meaning: comm_ops.into() },
        d("useful", "per GPU: length of the union of the intervals of its useful operations"),
        d("communication", "per GPU: length of the union of its communication operations minus the part overlapped by useful time"),
        d("active", "useful + communication"),
        d("idle", "T − active"),
        d("parallel efficiency (PE)", "Σ useful / (N · T)"),
        d("load balance (LB)", "Σ useful / (N · max useful)  (average over maximum)"),
        d("communication efficiency (CommE)", "max useful / max active"),
        d("orchestration efficiency (OrchE)", "max active / T;  PE = LB × CommE × OrchE"),
        d("n/a", "a factor whose denominator is zero (no GPU, T = 0, nothing useful or active)"),
        d("breakdown", "each instant of a GPU goes to the highest-priority category running, in the order gemm, attention, convolution, normalization, softmax, reduction, optimizer, copy_layout, elementwise, other_compute, nccl, memcpy_htod, memcpy_dtoh, memcpy_dtod, memcpy_peer, memcpy_unified, memcpy_other, memset; the rest is idle. Categories come from kernel-name patterns; percentages are of T (one GPU) or N·T (total)"),
        d("overlap profile", "time with at least one communication operation running, split by the number of useful kernels running at the same time (0, 1, 2, 3+); the 0 bucket is the communication time"),
        d("top kernels", "per demangled name: launches starting inside T; total, mean, min, max, sample standard deviation of durations; % of busy = total / time with any operation running on the same GPUs"),
        d("histograms", "kernel durations on fixed log bins (4 per octave from 1 µs); modes are local maxima holding ≥10% of launches separated by a valley of at most half their height"),
        d("NVTX ranges", "per (domain, name; PyTorch's per-call fields `, seq = …`, `, op_id = …` removed): instances starting inside T, their total and mean duration, and the device factors with T = time of the union of the instances"),
        d("host POP model", "for MPI traces, per process with MPI calls (a rank): useful = T − time inside MPI calls (union) on its main thread (the first of its threads seen calling MPI); N = such processes; MPI PE = Σ useful / (N · T) = LB × CommE, LB = Σ useful / (N · max useful), CommE = max useful / T"),
        d("device offload efficiency", "for MPI ranks that call CUDA: the share of their time outside MPI not spent in CUDA calls that wait for the GPU (synchronize, blocking copies); host parallel efficiency = MPI PE × device offload efficiency"),
        d("iterations", "instances of a repeating NVTX range (normalised name; at least 3 per rank, the outermost level that covers most of T and whose durations vary by at most 50 %), else the periods of a kernel that recurs regularly on every GPU; iteration k of each rank is its own k-th instance; factors as above with T = the longest rank's iteration; outlier = longer than 1.5 × the median; slowest = the GPU (else rank) with the most useful time; last to arrive = the rank whose first MPI call in the iteration came last"),
        d("series", "per GPU and time bin over the whole trace: fraction of the bin useful, communication and idle; mean and maximum number of kernels in flight"),
    ]
}
