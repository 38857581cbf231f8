//! One struct per table row the generator writes. Fields are the table's columns that carry
//! information; the writer ([`super::write`]) fills every other column the way nsys 2026.2 does
//! in the real exports (constants observed there), so each row has a value for every column.

/// A kernel as the application names it: the three StringIds of CUPTI_ACTIVITY_KIND_KERNEL and the
/// launch resources that come with the compiled function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDef {
    /// Full name with template arguments, nsys style (`(int)128`, `(bool)0`).
    pub demangled: String,
    /// Function name only.
    pub short: String,
    /// Itanium-mangled name; `None` writes NULL (the column is nullable) where we could not
    /// reproduce the compiler's mangling exactly.
    pub mangled: Option<String>,
    pub registers: u32,
    pub static_smem: u32,
    pub dynamic_smem: u32,
    pub cluster: Cluster,
    /// Shared memory the driver configured (`sharedMemoryExecuted`); `None`: the smallest H100
    /// carveout that holds the kernel's shared memory (what most real rows show).
    pub smem_executed: Option<u32>,
}

/// Thread-block cluster launch as CUPTI reports it on H100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub dims: [u32; 3],
    /// `maxPotentialClusterSize`, `maxActiveClusters`.
    pub max_potential: u32,
    pub max_active: u32,
}

impl Cluster {
    /// An ordinary launch (no cluster): all zero, as in the real rows.
    pub const NONE: Cluster = Cluster {
        dims: [0, 0, 0],
        max_potential: 0,
        max_active: 0,
    };
}

impl KernelDef {
    /// A kernel whose three names are one identifier (cuBLAS/xmma kernels are `extern "C"`).
    pub fn plain(name: &str, registers: u32, static_smem: u32, dynamic_smem: u32) -> KernelDef {
        KernelDef {
            demangled: name.to_owned(),
            short: name.to_owned(),
            mangled: Some(name.to_owned()),
            registers,
            static_smem,
            dynamic_smem,
            cluster: Cluster::NONE,
            smem_executed: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ProcessRow {
    pub pid: u32,
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct ThreadRow {
    pub global_tid: i64,
    pub name_id: i64,
}

/// Static properties of a GPU model (TARGET_INFO_GPU columns).
#[derive(Clone, Debug)]
pub struct GpuModel {
    pub chip: &'static str,
    pub l2_cache: i64,
    pub total_memory: i64,
    pub memory_bandwidth: i64,
    pub clock_rate: i64,
    pub sm_count: i64,
    pub compute: (i64, i64),
}

impl GpuModel {
    /// NVIDIA H100 80GB HBM3 (SXM5), CUDA device properties.
    pub const H100_SXM: GpuModel = GpuModel {
        chip: "GH100",
        l2_cache: 52_428_800,
        total_memory: 85_029_158_912,
        memory_bandwidth: 3_352_320_000_000,
        clock_rate: 1_980_000_000,
        sm_count: 132,
        compute: (9, 0),
    };
}

#[derive(Clone, Debug)]
pub struct GpuRow {
    pub id: u32,
    pub name: String,
    pub model: GpuModel,
}

#[derive(Clone, Debug)]
pub struct StreamRow {
    pub pid: u32,
    pub context: u32,
    pub stream: u32,
    pub priority: i64,
    /// ENUM_CUPTI_STREAM_TYPE id.
    pub flag: i64,
}

/// Columns shared by every GPU activity table.
#[derive(Clone, Copy, Debug)]
pub struct GpuPlace {
    pub start: i64,
    pub end: i64,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    pub correlation: Option<u64>,
    pub global_pid: i64,
}

#[derive(Clone, Debug)]
pub struct KernelRow {
    pub at: GpuPlace,
    pub demangled: i64,
    pub short: i64,
    pub mangled: Option<i64>,
    pub registers: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub static_smem: u32,
    pub dynamic_smem: u32,
    pub grid_id: i64,
    pub cluster: Cluster,
    pub smem_executed: Option<u32>,
    pub graph_node_id: Option<i64>,
    pub graph_id: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct MemcpyRow {
    pub at: GpuPlace,
    pub bytes: u64,
    pub copy_kind: u32,
    pub src_kind: u32,
    pub dst_kind: u32,
}

#[derive(Clone, Debug)]
pub struct MemsetRow {
    pub at: GpuPlace,
    pub bytes: u64,
    pub value: u32,
    pub mem_kind: u32,
}

#[derive(Clone, Debug)]
pub struct RuntimeRow {
    pub start: i64,
    pub end: i64,
    pub event_class: i64,
    pub global_tid: i64,
    pub correlation: u64,
    pub name_id: i64,
}

#[derive(Clone, Debug, Default)]
pub struct NvtxRow {
    pub start: i64,
    pub end: Option<i64>,
    pub event_type: i64,
    pub range_id: Option<i64>,
    pub category: Option<i64>,
    pub text: Option<String>,
    pub global_tid: i64,
    pub end_global_tid: Option<i64>,
    pub text_id: Option<i64>,
    pub domain_id: i64,
    pub json_text: Option<String>,
}

#[derive(Clone, Debug)]
pub struct GraphTraceRow {
    pub at: GpuPlace,
    pub graph_id: i64,
    pub graph_exec_id: i64,
}

#[derive(Clone, Debug)]
pub struct GpuMetricTypeRow {
    pub type_id: i64,
    pub source_id: i64,
    pub type_name: String,
    pub metric_id: i64,
    pub metric_name: String,
}

#[derive(Clone, Copy, Debug)]
pub struct GpuMetricRow {
    pub timestamp: i64,
    pub type_id: i64,
    pub metric_id: i64,
    pub value: i64,
}

/// NVTX payload schema rows (NVTX_PAYLOAD_SCHEMAS + its entries), as NCCL registers them.
#[derive(Clone, Debug)]
pub struct PayloadSchema {
    pub domain_id: i64,
    pub schema_id: i64,
    pub payload_size: i64,
    /// (entry type, name, byte offset)
    pub entries: Vec<(i64, &'static str, i64)>,
}

/// Every row of an export under construction.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    pub processes: Vec<ProcessRow>,
    pub threads: Vec<ThreadRow>,
    pub gpus: Vec<GpuRow>,
    pub streams: Vec<StreamRow>,
    pub kernels: Vec<KernelRow>,
    pub memcpys: Vec<MemcpyRow>,
    pub memsets: Vec<MemsetRow>,
    pub runtime: Vec<RuntimeRow>,
    pub nvtx: Vec<NvtxRow>,
    pub graph_traces: Vec<GraphTraceRow>,
    pub metric_types: Vec<GpuMetricTypeRow>,
    pub metrics: Vec<GpuMetricRow>,
    pub payload_schemas: Vec<PayloadSchema>,
    pub mpi: super::mpi::MpiRows,
    /// META_DATA_CAPTURE (name, value), in insertion order.
    pub capture: Vec<(String, String)>,
    /// Rows of the tables only some scenarios write ([`ExtraRows`]), by table, in order.
    pub extra: Vec<ExtraRows>,
}

/// Rows of a table the common rows above do not model (the families added for nsys2prv 0.6
/// parity): named columns, values as given; the table and its ENUM tables are created for them.
#[derive(Clone, Debug)]
pub struct ExtraRows {
    pub table: &'static str,
    pub columns: &'static str,
    pub rows: Vec<Vec<rusqlite::types::Value>>,
}
