//! Typed records of the model stream. Every record is delivered at its [`Record::time`] (its start),
//! with its end already known (nsys writes complete intervals), so sinks schedule their own ends.

use serde::{Deserialize, Serialize};

use super::{NameId, Ns, ObjectModel, ThreadId};

/// What the whole trace is, known before the first record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceInfo {
    pub objects: ObjectModel,
    /// NVTX domains by global index; index 0 is the default (unnamed) domain.
    pub domains: Vec<String>,
    /// End of the trace: the latest end of any record (ns since origin).
    pub end_time: Ns,
    /// One entry per input file, in input order.
    pub sources: Vec<SourceInfo>,
    /// Local date/time label written in the Paraver header (`DD/MM/YYYY at HH:MM`).
    pub date_label: String,
    /// From the latest end of MPI_Init to the earliest start of MPI_Finalize (TALP's window),
    /// when every input that calls MPI has both.
    #[serde(default)]
    pub mpi_window: Option<(Ns, Ns)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SourceInfo {
    pub label: String,
    pub product_version: Option<String>,
    pub schema_version: Option<String>,
    pub hostname: String,
    /// Session start, wall clock (ns since the Unix epoch), when the export has it.
    pub session_start_utc_ns: Option<i64>,
    /// Added to this file's timestamps to put them on the merged timeline (before rebasing to 0).
    pub offset_ns: i64,
    /// Raw timestamp (this file's clock) that became time 0 of the trace, after the offset.
    pub origin_raw_ns: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KernelClass {
    /// Computation: counts as useful GPU time.
    Compute,
    /// A communication library kernel (NCCL, NVSHMEM, ...): data movement between GPUs.
    Communication,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// Demangled full name.
    pub name: NameId,
    /// Function name without arguments/templates.
    pub short_name: NameId,
    pub class: KernelClass,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers_per_thread: u32,
    pub static_shared_memory: u32,
    pub dynamic_shared_memory: u32,
    pub local_memory_per_thread: u32,
    pub local_memory_total: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memcpy {
    /// ENUM_CUDA_MEMCPY_OPER id (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, 11-13 unified memory ...).
    pub copy_kind: u32,
    pub bytes: u64,
    /// ENUM_CUDA_MEM_KIND ids, when known.
    pub src_kind: Option<u32>,
    pub dst_kind: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memset {
    pub bytes: u64,
    pub value: u64,
    pub mem_kind: Option<u32>,
}

/// A whole CUDA graph replay traced as one operation (`--cuda-graph-trace=graph`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphExec {
    /// `CUDA graph <graphId> exec <graphExecId>`.
    pub name: NameId,
    pub graph_id: u64,
    pub exec_id: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GpuOpKind {
    Kernel(Kernel),
    Memcpy(Memcpy),
    Memset(Memset),
    Graph(GraphExec),
}

/// Work executed on a GPU stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuOp {
    pub thread: ThreadId,
    /// Index into [`ObjectModel::devices`].
    pub device: usize,
    pub start: Ns,
    pub end: Ns,
    /// Start of the next operation on the same stream (lookahead, for idle gaps).
    pub next_on_stream: Option<Ns>,
    pub correlation_id: u64,
    /// Node of a CUDA graph this operation ran as (`--cuda-graph-trace=node`).
    pub graph_node_id: Option<u64>,
    pub kind: GpuOpKind,
}

/// What a host thread is doing inside a traced call (drives its Paraver state).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostActivity {
    /// Inside a CUDA runtime/driver call that does not wait for the GPU.
    CudaApi,
    /// Inside a CUDA call that blocks until GPU work completes (synchronize, blocking memcpy).
    CudaSync,
    /// MPI blocking send.
    MpiSend,
    /// MPI blocking receive.
    MpiRecv,
    /// MPI non-blocking send/receive posting.
    MpiImmediateSend,
    MpiImmediateRecv,
    /// MPI combined send-receive.
    MpiSendRecv,
    /// MPI wait for requests.
    MpiWait,
    /// MPI test/probe.
    MpiTest,
    /// MPI collective.
    MpiCollective,
    /// Other MPI calls (init, finalize, communicator management...).
    MpiOther,
    /// OS call that blocks (poll, condition wait, sleep, lock...).
    OsBlocked,
    /// OS file or socket I/O.
    OsIo,
    /// Any other OS runtime call.
    OsOther,
    /// Inside the OpenACC runtime (constructs, data, launches).
    OpenAcc,
    /// OpenACC wait (explicit or implicit): blocked until the device finishes.
    OpenAccWait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApiLayer {
    Runtime,
    Driver,
}

/// A CUDA runtime or driver API call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CudaCall {
    /// Name without nsys's `_vNNNN` version suffix.
    pub name: NameId,
    pub correlation_id: u64,
    pub layer: ApiLayer,
}

/// Which MPI table (or NVTX MPI range) a call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MpiClass {
    PointToPoint,
    Collective,
    /// MPI_Wait*/MPI_Test* on requests (MPI_START_WAIT_EVENTS).
    StartWait,
    Other,
}

/// An MPI call. Sizes, peer and tag are known only from nsys ≥ 2023 MPI tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MpiCall {
    pub name: NameId,
    pub class: MpiClass,
    pub bytes_sent: Option<u64>,
    pub bytes_received: Option<u64>,
    /// Peer rank in the communicator (point-to-point).
    pub peer: Option<i64>,
    pub tag: Option<i64>,
    /// Root rank (rooted collectives).
    pub root: Option<i64>,
    pub communicator: Option<i64>,
    /// Number of requests a wait completed (rows nsys wrote for one call).
    pub requests: u32,
}

/// Which OpenACC table a call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AccClass {
    Data,
    Launch,
    Other,
}

/// An OpenACC runtime event (CUPTI_ACTIVITY_KIND_OPENACC_DATA/LAUNCH/OTHER).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccCall {
    pub class: AccClass,
    /// ENUM_OPENACC_EVENT_KIND id (4 enqueue launch, 5 upload, 7 wait, 9 compute construct …).
    pub event_kind: u32,
    /// Event name.
    pub name: NameId,
    /// `name@file:line` of the directive.
    pub construct: NameId,
    pub function: Option<NameId>,
    /// Bytes of a data event.
    pub bytes: Option<u64>,
    /// Kernel of a launch event.
    pub kernel: Option<NameId>,
}

/// An OS runtime call (OSRT_API).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OsCall {
    pub name: NameId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum HostCallKind {
    Cuda(CudaCall),
    Mpi(MpiCall),
    Os(OsCall),
    OpenAcc(AccCall),
}

/// A call on a host thread (CUDA API today; MPI and OS runtime share this shape).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostCall {
    pub thread: ThreadId,
    pub start: Ns,
    pub end: Ns,
    /// Start of the next traced call on the same thread (lookahead, for the state between calls).
    pub next_on_thread: Option<Ns>,
    pub activity: HostActivity,
    pub kind: HostCallKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NvtxRangeKind {
    /// nvtxRangePush/Pop: nested, same thread.
    PushPop,
    /// nvtxRangeStart/End: may overlap others and end on another thread.
    StartEnd,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NvtxRange {
    pub thread: ThreadId,
    /// Thread that ended the range (start/end ranges may end elsewhere).
    pub end_thread: ThreadId,
    pub start: Ns,
    pub end: Ns,
    pub kind: NvtxRangeKind,
    /// Index into [`TraceInfo::domains`].
    pub domain: u32,
    pub name: NameId,
    pub category: Option<NameId>,
    /// ARGB colour the application gave, if any.
    pub color: Option<u32>,
    /// The export had no end: the range was closed at the end of the trace.
    pub unterminated: bool,
    /// Extended payload as JSON (NCCL writes message size, reduction, communicator there).
    pub payload_json: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NvtxMark {
    pub thread: ThreadId,
    pub time: Ns,
    pub domain: u32,
    pub name: NameId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkKind {
    /// API call → kernel it launched.
    Launch,
    /// API call → memcpy/memset it issued.
    Memory,
}

/// A causal arrow from a host call to the GPU work it caused, delivered at its send time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub from: ThreadId,
    pub send: Ns,
    pub to: ThreadId,
    pub recv: Ns,
    pub bytes: u64,
    pub kind: LinkKind,
}

/// An MPI point-to-point message between two ranks, matched from the sender's and the receiver's
/// calls, delivered at its send time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub from: ThreadId,
    /// Start of the send call.
    pub send: Ns,
    pub to: ThreadId,
    /// Start of the receive call (when the receiver asked for the message).
    pub recv_posted: Ns,
    /// When the message was available to the receiver: end of the blocking receive or of the wait
    /// that completed the non-blocking one.
    pub recv: Ns,
    pub bytes: u64,
    pub tag: u64,
}

/// One sample of one GPU metric (GPU_METRICS), on the GPU's metrics thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSample {
    pub thread: ThreadId,
    pub time: Ns,
    /// nsys metric id (TARGET_INFO_GPU_METRICS.metricId).
    pub metric_id: u32,
    /// Metric name, e.g. "SM Active [Throughput %]".
    pub name: NameId,
    pub value: u64,
}

/// A thread running on a CPU between a context switch in and the next one out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuRun {
    pub thread: ThreadId,
    pub start: Ns,
    pub end: Ns,
    pub cpu: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Record {
    Gpu(GpuOp),
    Sched(CpuRun),
    Metric(MetricSample),
    Message(Message),
    Host(HostCall),
    Nvtx(NvtxRange),
    Mark(NvtxMark),
    Link(Link),
    /// Events on a thread that leave its state alone (model/annotation.rs).
    Annotation(super::Annotation),
}

impl Record {
    /// The time the record is delivered at: its start (a link's send time).
    pub fn time(&self) -> Ns {
        match self {
            Record::Gpu(r) => r.start,
            Record::Host(r) => r.start,
            Record::Nvtx(r) => r.start,
            Record::Mark(r) => r.time,
            Record::Link(r) => r.send,
            Record::Message(m) => m.send,
            Record::Metric(m) => m.time,
            Record::Sched(r) => r.start,
            Record::Annotation(a) => a.start,
        }
    }

    /// Gives every name of the record the id `id` maps it to; `false` where `id` maps one to
    /// none (the record is then only partly mapped). A merge of records read apart, each with
    /// names of its own, renames them so (src/parts).
    pub fn map_names(&mut self, id: &mut impl FnMut(NameId) -> Option<NameId>) -> bool {
        let mut all = true;
        let mut map = |n: &mut NameId| match id(*n) {
            Some(to) => *n = to,
            None => all = false,
        };
        match self {
            Record::Gpu(g) => match &mut g.kind {
                GpuOpKind::Kernel(k) => {
                    map(&mut k.name);
                    map(&mut k.short_name);
                }
                GpuOpKind::Graph(gr) => map(&mut gr.name),
                GpuOpKind::Memcpy(_) | GpuOpKind::Memset(_) => {}
            },
            Record::Host(h) => match &mut h.kind {
                HostCallKind::Cuda(c) => map(&mut c.name),
                HostCallKind::Mpi(m) => map(&mut m.name),
                HostCallKind::Os(o) => map(&mut o.name),
                HostCallKind::OpenAcc(a) => {
                    map(&mut a.name);
                    map(&mut a.construct);
                    a.function.iter_mut().for_each(&mut map);
                    a.kernel.iter_mut().for_each(&mut map);
                }
            },
            Record::Nvtx(n) => {
                map(&mut n.name);
                n.category.iter_mut().for_each(&mut map);
            }
            Record::Mark(m) => map(&mut m.name),
            Record::Metric(m) => map(&mut m.name),
            Record::Annotation(a) => a.call.iter_mut().for_each(&mut map),
            Record::Sched(_) | Record::Message(_) | Record::Link(_) => {}
        }
        all
    }

    /// Fixed rank among records of equal time, so output is deterministic.
    pub fn family_rank(&self) -> u8 {
        match self {
            Record::Nvtx(_) => 0,
            Record::Host(_) => 1,
            Record::Link(_) => 2,
            Record::Gpu(_) => 3,
            Record::Mark(_) => 4,
            Record::Message(_) => 5,
            Record::Metric(_) => 6,
            Record::Sched(_) => 7,
            Record::Annotation(_) => 8,
        }
    }
}
