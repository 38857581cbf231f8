//! The events of the families that annotate calls (model/annotation.rs): types and values as
//! nsys2prv 0.6 numbers them, so that its views load on our traces.

use super::events::NAME_VALUE_OFFSET;
use super::prv::ValueLabels;
use crate::model::{Annotation, AnnotationKind, OpenMpRegion};

/// CUDA event recorded or waited for: its id, device + 1, stream and context (nsys2prv 0.6
/// writes the device as it is, so device 0 reads as an end there).
pub const CUDA_EVENT_ID: u32 = 9301;
pub const CUDA_EVENT_DEVICE: u32 = 9302;
pub const CUDA_EVENT_STREAM: u32 = 9303;
pub const CUDA_EVENT_CONTEXT: u32 = 9304;
/// pthread call, valued by name.
pub const PTHREAD_CALL: u32 = 61_000_000;
/// GPU memory allocated / freed [bytes] (nsys2prv 0.6), and what the process has in use after.
pub const GPU_MEMORY_ALLOCATED: u32 = 66_500_001;
pub const GPU_MEMORY_FREED: u32 = 66_500_002;
pub const GPU_MEMORY_IN_USE: u32 = 66_500_003;

/// CPU counter samples: 66600000 + the event's TARGET_INFO_PERF_METRIC id (nsys2prv 0.6), each
/// type labelled with the event's name and unit.
pub const CPU_COUNTER_BASE: u32 = 66_600_000;

/// NIC metrics: 66700000 + the metric's `metricsIdx` (nsys2prv 0.6 writes 9500 + it, which are
/// our NCCL types), each type labelled with the metric's name and unit.
pub const NIC_METRIC_BASE: u32 = 66_700_000;

/// OpenMP parallel region (value: its event kind), implicit task (its task flag), barrier (its
/// sync region kind), as nsys2prv 0.6 numbers them; labels as nsys's ENUM_OPENMP_* tables.
pub const OPENMP_PARALLEL: u32 = 60_000_001;
pub const OPENMP_IMPLICIT_TASK: u32 = 60_000_002;
pub const OPENMP_BARRIER: u32 = 60_000_003;
pub const OPENMP_PARALLEL_KINDS: &[(u64, &str)] = &[(28, "Parallel")];
pub const OPENMP_TASK_FLAGS: &[(u64, &str)] = &[(2, "Implicit task")];
pub const OPENMP_BARRIER_KINDS: &[(u64, &str)] = &[
    (1, "Barrier"),
    (2, "Implicit barrier"),
    (3, "Explicit barrier"),
    (4, "Implementation barrier"),
];

/// The label of an OpenMP region's value, for the JSON's event names.
pub fn openmp_label(region: OpenMpRegion) -> String {
    let (table, value, what) = match region {
        OpenMpRegion::Parallel { event_kind } => (OPENMP_PARALLEL_KINDS, event_kind, "parallel"),
        OpenMpRegion::ImplicitTask => (OPENMP_TASK_FLAGS, 2, "task"),
        OpenMpRegion::Barrier { sync_kind } => (OPENMP_BARRIER_KINDS, sync_kind, "barrier"),
    };
    (table.iter())
        .find(|(v, _)| *v == u64::from(value))
        .map_or_else(
            || format!("OpenMP {what} {value}"),
            |(_, l)| (*l).to_owned(),
        )
}

/// Label of each type above.
pub fn type_label(t: u32) -> Option<&'static str> {
    Some(match t {
        CUDA_EVENT_ID => "CUDA event ID",
        CUDA_EVENT_DEVICE => "CUDA event device + 1",
        CUDA_EVENT_STREAM => "CUDA event stream",
        CUDA_EVENT_CONTEXT => "CUDA event context",
        PTHREAD_CALL => "pthread call",
        OPENMP_PARALLEL => "OpenMP parallel region",
        OPENMP_IMPLICIT_TASK => "OpenMP implicit task",
        OPENMP_BARRIER => "OpenMP barrier",
        GPU_MEMORY_ALLOCATED => "GPU memory allocated [bytes]",
        GPU_MEMORY_FREED => "GPU memory freed [bytes]",
        GPU_MEMORY_IN_USE => "GPU memory in use by the process [bytes]",
        _ => return None,
    })
}

/// The (type, value) pairs an annotation writes at its start (each back to 0 at its end unless
/// it is an instant), and where their values' labels come from.
pub fn events(a: &Annotation) -> (Vec<(u32, u64)>, Vec<ValueLabels>) {
    match &a.kind {
        AnnotationKind::CudaEvent(e) => (
            vec![
                (CUDA_EVENT_ID, e.event_id),
                (CUDA_EVENT_DEVICE, u64::from(e.device) + 1),
                (CUDA_EVENT_STREAM, e.stream),
                (CUDA_EVENT_CONTEXT, e.context),
            ],
            vec![ValueLabels::Numeric; 4],
        ),
        AnnotationKind::Pthread => (
            vec![(
                PTHREAD_CALL,
                a.call.map_or(0, |c| u64::from(c.0) + NAME_VALUE_OFFSET),
            )],
            vec![ValueLabels::Names],
        ),
        AnnotationKind::OpenMp(region) => {
            let (ty, value, labels) = match *region {
                OpenMpRegion::Parallel { event_kind } => {
                    (OPENMP_PARALLEL, event_kind, OPENMP_PARALLEL_KINDS)
                }
                OpenMpRegion::ImplicitTask => (OPENMP_IMPLICIT_TASK, 2, OPENMP_TASK_FLAGS),
                OpenMpRegion::Barrier { sync_kind } => {
                    (OPENMP_BARRIER, sync_kind, OPENMP_BARRIER_KINDS)
                }
            };
            (
                vec![(ty, u64::from(value))],
                vec![ValueLabels::Fixed(labels)],
            )
        }
        AnnotationKind::CpuCounter(c) => (
            vec![(CPU_COUNTER_BASE + c.event_id, c.count)],
            vec![ValueLabels::Numeric],
        ),
        AnnotationKind::NicMetric(n) => (
            vec![(NIC_METRIC_BASE + n.metric, n.value)],
            vec![ValueLabels::Numeric],
        ),
        AnnotationKind::GpuMemory(m) => {
            let change = match m.allocated {
                true => GPU_MEMORY_ALLOCATED,
                false => GPU_MEMORY_FREED,
            };
            (
                vec![(change, m.bytes), (GPU_MEMORY_IN_USE, m.in_use)],
                vec![ValueLabels::Numeric; 2],
            )
        }
    }
}
