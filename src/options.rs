//! What the user chose to convert.

use std::collections::{BTreeMap, BTreeSet};
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
    /// CPU scheduling: which CPU each thread ran on (SCHED_EVENTS).
    Sched,
    /// Whole CUDA graph replays (CUPTI_ACTIVITY_KIND_GRAPH_TRACE).
    Graphs,
    /// OpenACC runtime events (CUPTI_ACTIVITY_KIND_OPENACC_DATA/LAUNCH/OTHER).
    OpenAcc,
    /// CUDA events recorded or waited for (CUPTI_ACTIVITY_KIND_CUDA_EVENT), on their calls.
    CudaEvent,
    /// pthread calls among the OS runtime's (OSRT_API).
    Pthread,
    /// Device memory allocated and freed (CUDA_GPU_MEMORY_USAGE_EVENTS).
    GpuMemory,
    /// OpenMP parallel regions, implicit tasks and barriers (OPENMP_EVENT_KIND_*).
    #[serde(rename = "openmp")]
    OpenMp,
    /// Sampled CPU performance counters (PERF_EVENT_CPU_RAW_EVENT), on the threads that ran.
    CpuCounters,
    /// Sampled NIC/InfiniBand metrics (NET_NIC_METRIC), on a thread per NIC.
    Nic,
}

impl Family {
    pub const ALL: [Family; 17] = [
        Family::Kernel,
        Family::Memcpy,
        Family::Memset,
        Family::CudaApi,
        Family::Nvtx,
        Family::Mpi,
        Family::Osrt,
        Family::GpuMetrics,
        Family::Sched,
        Family::Graphs,
        Family::OpenAcc,
        Family::CudaEvent,
        Family::Pthread,
        Family::GpuMemory,
        Family::OpenMp,
        Family::CpuCounters,
        Family::Nic,
    ];

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
            Family::Sched => "sched",
            Family::Graphs => "graphs",
            Family::OpenAcc => "openacc",
            Family::CudaEvent => "cuda-event",
            Family::Pthread => "pthread",
            Family::GpuMemory => "gpu-memory",
            Family::OpenMp => "openmp",
            Family::CpuCounters => "cpu-counters",
            Family::Nic => "nic",
        }
    }

    /// The export tables the family is read from (the first is the main one).
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            Family::Mpi => &[
                "MPI_P2P_EVENTS",
                "MPI_COLLECTIVES_EVENTS",
                "MPI_START_WAIT_EVENTS",
                "MPI_OTHER_EVENTS",
            ],
            Family::Osrt | Family::Pthread => &["OSRT_API"],
            Family::CudaEvent => &["CUPTI_ACTIVITY_KIND_CUDA_EVENT"],
            Family::GpuMemory => &["CUDA_GPU_MEMORY_USAGE_EVENTS"],
            Family::OpenMp => &[
                "OPENMP_EVENT_KIND_PARALLEL",
                "OPENMP_EVENT_KIND_TASK",
                "OPENMP_EVENT_KIND_SYNC_REGION",
            ],
            Family::CpuCounters => &[
                "PERF_EVENT_SOC_OR_CPU_RAW_EVENT",
                "PERF_EVENT_CPU_RAW_EVENT",
            ],
            Family::Nic => &["NET_NIC_METRIC"],
            Family::GpuMetrics => &["GPU_METRICS"],
            Family::Sched => &["SCHED_EVENTS"],
            Family::Graphs => &["CUPTI_ACTIVITY_KIND_GRAPH_TRACE"],
            Family::OpenAcc => &[
                "CUPTI_ACTIVITY_KIND_OPENACC_DATA",
                "CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH",
                "CUPTI_ACTIVITY_KIND_OPENACC_OTHER",
            ],
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
            "sched" | "cpu-sched" | "scheduling" => Family::Sched,
            "graphs" | "graph" | "cuda-graphs" => Family::Graphs,
            // "open-acc": its serialized name, as the page sends it back.
            "openacc" | "acc" | "open-acc" => Family::OpenAcc,
            "cuda-event" | "cuda-events" => Family::CudaEvent,
            "pthread" | "pthreads" => Family::Pthread,
            "gpu-memory" | "memory-usage" | "gpu-memory-usage" => Family::GpuMemory,
            "openmp" | "omp" | "ompt" => Family::OpenMp,
            "cpu-counters" | "cpu-counter" | "cpu-raw-counters" => Family::CpuCounters,
            "nic" | "nics" | "nic-metrics" => Family::Nic,
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
    /// Keep only part of the timeline in the trace (the metrics keep the whole run).
    #[serde(default)]
    pub chop: Option<Chop>,
    /// Per family, regions shorter than this (ns) are left out of the trace's events (states and
    /// metrics still count them): a coarse overview of a huge run.
    #[serde(default)]
    pub min_duration: BTreeMap<Family, u64>,
    /// How time order is obtained (the output is the same either way; see engine/partitioned.rs).
    #[serde(default)]
    pub read_order: ReadOrder,
    /// Whether reading runs on a thread of its own (native builds only; same output either way).
    #[serde(default)]
    pub read_ahead: ReadAhead,
    /// How the sort-free readers read their tables (same output either way; see engine/page_reader.rs).
    #[serde(default)]
    pub read_pages: ReadPages,
    /// Whether the reading thread gets helper threads (same output either way; see
    /// engine/helper_threads.rs).
    #[serde(default)]
    pub read_helpers: ReadHelpers,
    /// NVTX domains whose payload fields become events (`--nvtx-config`); none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvtx_payloads: Option<crate::nvtx_config::NvtxConfig>,
    /// Whether many inputs are read a group at a time (native builds only; same output either
    /// way; see pipeline/parts/groups.rs).
    #[serde(default)]
    pub read_groups: ReadGroups,
}

/// Whether the inputs are read a group at a time, each group's records kept in a temporary
/// part and the parts merged (pipeline/parts/groups.rs), instead of all at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadGroups {
    /// Where there are so many inputs that the readers of all of them at once would hold more
    /// than a group's.
    #[default]
    Auto,
    /// In groups of this many inputs (one or more; tests and benchmarks).
    Of(usize),
    /// Every input at once.
    Off,
}

/// Whether the read-ahead thread hands the readers that feed nothing else (the GPU operations'
/// cursor, the link join's operations, the CPU scheduling) to helper threads (engine/helper_threads.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadHelpers {
    /// As many as the machine has cores beyond the reading thread and the sinks' own threads
    /// ([`Sink::threads`](crate::model::sink::Sink::threads): a trace writer counts one), the
    /// helpers sharing theirs with the calling (sinks') thread, four at most; none where that
    /// is none: a helper costs some CPU of its own (its rows are copied to the reading thread),
    /// which pays only where a core would otherwise idle.
    #[default]
    Auto,
    /// One, whenever the reading runs on a thread of its own (tests; small machines).
    On,
    /// None.
    Off,
}

/// Whether the sort-free readers read table pages themselves or through SQLite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPages {
    /// The direct reader of the file format, where a table and query allow it (src/sqlfile).
    #[default]
    Auto,
    /// Every row through SQLite (the reference the direct reader is tested against).
    Sqlite,
}

/// Whether the pass reads on a second thread while the sinks write (see pipeline/threaded.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadAhead {
    /// On a second thread where the build has threads, the machine more than one core, and every
    /// input was opened from a file.
    #[default]
    Auto,
    /// Everything on the calling thread (the reading, and the .prv.gz's compression too).
    Off,
}

/// How the readers put rows in time order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadOrder {
    /// Per-resource sorted runs merged in Rust where a table allows it, else SQL.
    #[default]
    Auto,
    /// SQL `ORDER BY` and window functions only (the reference the fast path is tested against).
    Sql,
}

/// Which part of the timeline a trace keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Chop {
    /// From the start of the first to the end of the last selected instance of an NVTX range
    /// (`instance` 1-based, counted per report; `None` = every instance).
    NvtxRange { name: String, instance: Option<u32> },
    /// [start, end) in ns from the start of the (uncut) trace.
    Window { start: u64, end: u64 },
}

impl Chop {
    /// `NAME` or `NAME:N`.
    pub fn parse_nvtx(s: &str) -> Result<Chop, String> {
        match s.rsplit_once(':') {
            Some((name, n))
                if !name.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() =>
            {
                let n: u32 = n
                    .parse()
                    .map_err(|_| format!("bad instance number in '{s}'"))?;
                if n == 0 {
                    return Err("NVTX range instances count from 1".into());
                }
                Ok(Chop::NvtxRange {
                    name: name.to_owned(),
                    instance: Some(n),
                })
            }
            _ if s.is_empty() => Err("empty NVTX range name".into()),
            _ => Ok(Chop::NvtxRange {
                name: s.to_owned(),
                instance: None,
            }),
        }
    }

    /// `START..END` with units ns, us, ms, s (default ns), e.g. `1.5s..2s`.
    pub fn parse_window(s: &str) -> Result<Chop, String> {
        let (a, b) = s
            .split_once("..")
            .ok_or_else(|| format!("window '{s}' must look like START..END (e.g. 1s..2.5s)"))?;
        let (start, end) = (parse_duration(a)?, parse_duration(b)?);
        if end <= start {
            return Err(format!("window '{s}' ends before it starts"));
        }
        Ok(Chop::Window { start, end })
    }
}

/// `5us`, `1.5ms`, `2s`, `300` (ns) → nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 5us, 1.5ms, 2s)"))?;
    let scale = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        u => return Err(format!("unknown time unit '{u}' in '{s}' (ns, us, ms, s)")),
    };
    let ns = x * scale;
    if !ns.is_finite() || !(0.0..=9.0e18).contains(&ns) {
        return Err(format!("duration '{s}' is out of range"));
    }
    Ok(ns.round() as u64)
}

/// `kernel=5us,cuda-api=20us` → per-family minimum durations.
pub fn parse_min_durations(s: &str) -> Result<BTreeMap<Family, u64>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (f, d) = p
                .split_once('=')
                .ok_or_else(|| format!("'{p}' must be FAMILY=DURATION, e.g. kernel=5us"))?;
            Ok((Family::from_str(f)?, parse_duration(d)?))
        })
        .collect()
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

/// `s` as one of the named `choices`, or a message listing the names ("'x' is not auto, on
/// or off"): the read options' values on the command line.
fn one_of<T: Copy>(s: &str, choices: &[(&str, T)]) -> Result<T, String> {
    if let Some(&(_, v)) = choices.iter().find(|(name, _)| *name == s) {
        return Ok(v);
    }
    let names: Vec<&str> = choices.iter().map(|&(name, _)| name).collect();
    let list = match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(format!("'{s}' is not {list}"))
}

impl FromStr for ReadOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        one_of(s, &[("auto", ReadOrder::Auto), ("sql", ReadOrder::Sql)])
    }
}

impl FromStr for ReadPages {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        one_of(
            s,
            &[("auto", ReadPages::Auto), ("sqlite", ReadPages::Sqlite)],
        )
    }
}

impl FromStr for ReadAhead {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        one_of(s, &[("auto", ReadAhead::Auto), ("off", ReadAhead::Off)])
    }
}

impl FromStr for ReadHelpers {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        one_of(
            s,
            &[
                ("auto", ReadHelpers::Auto),
                ("on", ReadHelpers::On),
                ("off", ReadHelpers::Off),
            ],
        )
    }
}

impl FromStr for ReadGroups {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(ReadGroups::Auto),
            "off" => Ok(ReadGroups::Off),
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(ReadGroups::Of(n)),
                _ => Err(format!(
                    "'{s}' is not auto, off or a number of inputs per group (1 or more)"
                )),
            },
        }
    }
}

impl FromStr for Align {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "session-start" | "session" => Ok(Align::SessionStart),
            "mpi-init" => Ok(Align::MpiInit),
            "none" => Ok(Align::None),
            _ => Err(format!(
                "unknown alignment '{s}' (known: session-start, mpi-init, none)"
            )),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            families: None,
            align: Align::SessionStart,
            chop: None,
            min_duration: BTreeMap::new(),
            read_order: ReadOrder::Auto,
            read_ahead: ReadAhead::Auto,
            read_pages: ReadPages::Auto,
            read_helpers: ReadHelpers::Auto,
            nvtx_payloads: None,
            read_groups: ReadGroups::Auto,
        }
    }
}

/// The cores this process may use, asked once: the standard library reads the cgroup's quota
/// files each time (three files opened, asked once per input of a run of many ranks).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Options {
    /// Whether a conversion may put work on threads beside the calling one (the read-ahead
    /// thread, the trace's gzip, discovery's second pass): not turned off (`--read-ahead off`)
    /// and a second core there. The build must have threads too; callers on wasm use none.
    pub fn second_thread_allowed(&self) -> bool {
        self.read_ahead != ReadAhead::Off && cores() > 1
    }

    /// Whether a conversion with `other` would make the same plan (`pipeline::Planned`): the
    /// options that discovery and the readers' set-up read are equal. The cut of the output
    /// (`chop`, `min_duration`) is applied after the plan, so it may differ.
    pub fn plans_alike(&self, other: &Options) -> bool {
        // Destructured, so that a new option must be sorted into one kind or the other here.
        let Options {
            families,
            align,
            chop: _,
            min_duration: _,
            read_order,
            read_ahead,
            read_pages,
            read_helpers: _,
            nvtx_payloads: _,
            read_groups: _,
        } = self;
        *families == other.families
            && *align == other.align
            && *read_order == other.read_order
            && *read_ahead == other.read_ahead
            && *read_pages == other.read_pages
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_options_parse_their_names_and_list_them_otherwise() {
        fn err<T>(why: &str) -> Result<T, String> {
            Err(why.to_owned())
        }
        assert_eq!("sql".parse(), Ok(ReadOrder::Sql));
        assert_eq!("sqlite".parse(), Ok(ReadPages::Sqlite));
        assert_eq!("off".parse(), Ok(ReadAhead::Off));
        assert_eq!("on".parse(), Ok(ReadHelpers::On));
        assert_eq!("auto".parse(), Ok(ReadHelpers::Auto));
        assert_eq!("x".parse::<ReadOrder>(), err("'x' is not auto or sql"));
        assert_eq!("x".parse::<ReadPages>(), err("'x' is not auto or sqlite"));
        assert_eq!("x".parse::<ReadAhead>(), err("'x' is not auto or off"));
        assert_eq!(
            "On".parse::<ReadHelpers>(),
            err("'On' is not auto, on or off")
        );
    }
}
