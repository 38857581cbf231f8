//! The normalized model every sink consumes: resources (hosts, processes, threads, GPU streams),
//! interned names, and one time-ordered stream of typed records.
//!
//! Times are nanoseconds since the trace origin (the earliest event of all inputs, after clock
//! alignment), so every sink sees the same, non-negative timeline.

pub mod annotation;
pub mod classify;
pub mod names;
pub mod nccl;
pub mod objects;
pub mod record;
pub mod sink;

pub use annotation::{
    Annotation, AnnotationKind, CpuCounterSample, CudaEventUse, GpuMemoryChange, NicSample,
    OpenMpRegion,
};
pub use names::{NameId, Names};
pub use objects::{Device, Host, Nic, ObjectModel, Process, ThreadId, ThreadKind, ThreadObj};
pub use record::*;
pub use sink::{OutputCut, Sink};

/// Nanoseconds since the trace origin.
pub type Ns = u64;
