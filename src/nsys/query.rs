//! What a family module gives the reader: the time-ordered query of its records in one export,
//! and how the engine can read the same rows without SQL sorting.

use crate::engine::partitioned::Spec;
use crate::engine::sort_keys::KeySpec;

/// Which family module decodes a cursor's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorKind {
    Gpu,
    Host,
    Nvtx,
    Link,
    MpiSend,
    GpuMetrics,
    Sched,
    CudaEvent,
    Pthread,
    GpuMemory,
    OpenMp,
    CpuCounters,
    Nic,
}

/// A prepared, time-ordered query of one family in one export.
pub struct Query {
    pub kind: CursorKind,
    pub source: usize,
    pub sql: String,
    /// What is read, for messages (a table name or a short description).
    pub what: &'static str,
    /// The same records without SQL sorting, where the family can be read that way.
    pub partitioned: Option<Partitioned>,
}

/// How a family is read without SQL sorting (see engine/partitioned.rs).
pub enum Partitioned {
    /// Per-resource sorted runs of the rows, merged.
    Rows(Spec),
    /// The API-to-GPU merge join (links.rs): calls and operations.
    Links { api: Spec, gpu: Spec },
    /// Narrow keys sorted in memory, rows fetched by rowid (sort_keys.rs).
    Keys(KeySpec),
}
