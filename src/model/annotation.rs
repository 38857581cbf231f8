//! Records of the families that annotate a thread with events and leave its state alone: the
//! CUDA events a call recorded or waited for, the pthread calls among the OS runtime's, the GPU
//! memory a process allocated or freed, the CPU counters sampled while a thread ran, the metrics
//! of a NIC (on a thread of its own). Each may cover a call that other families convert too,
//! so it must not change what they write:
//! its call's name is interned only as it is handed out ([`Annotation::resolve`]), after the
//! record of that call, so names keep the ids (and the trace the values) they have without it.

use serde::{Deserialize, Serialize};

use super::{NameId, Names, Ns, ThreadId};

/// A CUDA event that a CUDA call recorded, synchronized or waited for
/// (CUPTI_ACTIVITY_KIND_CUDA_EVENT), on the thread of that call and over its time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CudaEventUse {
    pub event_id: u64,
    /// CUDA device id.
    pub device: u32,
    pub stream: u64,
    pub context: u64,
}

/// GPU memory allocated or freed (CUDA_GPU_MEMORY_USAGE_EVENTS, device memory), an instant on
/// a GPU stream of the process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuMemoryChange {
    /// Allocated, or freed.
    pub allocated: bool,
    pub bytes: u64,
    /// Device memory of the process on that GPU in use after it, as far as the capture shows.
    pub in_use: u64,
    /// CUDA device id.
    pub device: u32,
}

/// An OpenMP region on the thread that ran it (OMPT, as nsys records it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpenMpRegion {
    /// A parallel region; ENUM_OPENMP_EVENT_KIND id of the row (28, Parallel).
    Parallel { event_kind: u32 },
    /// The implicit task a thread runs in a parallel region.
    ImplicitTask,
    /// A barrier; ENUM_OPENMP_SYNC_REGION id (1 barrier, 2 implicit, 3 explicit, 4 implementation).
    Barrier { sync_kind: u32 },
}

/// A sampled CPU counter (PERF_EVENT_CPU_RAW_EVENT): the count of one event over a sampling
/// interval, at its midpoint on the thread that ran on that CPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuCounterSample {
    /// TARGET_INFO_PERF_METRIC id of the event.
    pub event_id: u32,
    pub count: u64,
}

/// A sampled NIC metric (NET_NIC_METRIC), on the NIC's thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicSample {
    /// TARGET_INFO_NETWORK_METRICS `metricsIdx` of the metric.
    pub metric: u32,
    pub value: u64,
}

/// What an [`Annotation`] is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AnnotationKind {
    CudaEvent(CudaEventUse),
    /// A pthread call (an OSRT_API row whose name starts with `pthread`).
    Pthread,
    GpuMemory(GpuMemoryChange),
    OpenMp(OpenMpRegion),
    CpuCounter(CpuCounterSample),
    NicMetric(NicSample),
}

/// An interval of events on one thread, with no state of its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub thread: ThreadId,
    pub start: Ns,
    pub end: Ns,
    /// The call (cudaEventRecord, pthread_mutex_lock …; CUDA calls without their `_vNNNN`
    /// suffix), or a CPU counter's or NIC metric's name, once [`resolve`](Self::resolve)d; none for GPU memory.
    pub call: Option<NameId>,
    /// The call's name until it is interned.
    #[serde(skip)]
    pub unresolved: Option<Box<str>>,
    pub kind: AnnotationKind,
}

impl Annotation {
    /// Its family's name (`-t`, the summary line, the Chrome JSON's `cat`).
    pub fn family_name(&self) -> &'static str {
        match self.kind {
            AnnotationKind::CudaEvent(_) => "cuda-event",
            AnnotationKind::Pthread => "pthread",
            AnnotationKind::GpuMemory(_) => "gpu-memory",
            AnnotationKind::OpenMp(_) => "openmp",
            AnnotationKind::CpuCounter(_) => "cpu-counters",
            AnnotationKind::NicMetric(_) => "nic",
        }
    }

    /// GPU memory changes and samples are instants; the others span their call.
    pub fn is_instant(&self) -> bool {
        matches!(
            self.kind,
            AnnotationKind::GpuMemory(_)
                | AnnotationKind::CpuCounter(_)
                | AnnotationKind::NicMetric(_)
        )
    }

    /// An OpenMP region over `[start, end]` of `thread`.
    pub fn openmp(thread: ThreadId, (start, end): (Ns, Ns), region: OpenMpRegion) -> Self {
        Annotation {
            thread,
            start,
            end,
            call: None,
            unresolved: None,
            kind: AnnotationKind::OpenMp(region),
        }
    }

    /// A GPU memory change at `time` on the stream thread `thread`.
    pub fn gpu_memory(thread: ThreadId, time: Ns, change: GpuMemoryChange) -> Self {
        Annotation {
            thread,
            start: time,
            end: time,
            call: None,
            unresolved: None,
            kind: AnnotationKind::GpuMemory(change),
        }
    }

    /// An annotation of the call named `call`, at `[start, end]` of `thread`.
    pub fn new(
        thread: ThreadId,
        (start, end): (Ns, Ns),
        call: String,
        kind: AnnotationKind,
    ) -> Self {
        Annotation {
            thread,
            start,
            end,
            call: None,
            unresolved: Some(call.into_boxed_str()),
            kind,
        }
    }

    /// Interns the call's name: done as the record is handed out, when the record of the call
    /// itself (same start, earlier rank) has interned it already where its family is converted.
    pub fn resolve(&mut self, names: &mut Names) {
        if let Some(name) = self.unresolved.take() {
            self.call = Some(names.intern(&name));
        }
    }
}
