//! One record of the stream as the timeline keeps it: an interval of one row with what ran in it,
//! small enough (40 bytes) to keep a few million of them for the deepest zoom and the hover.

use crate::model::{
    GpuOp, GpuOpKind, HostActivity, HostCall, HostCallKind, KernelClass, NameId, Names, Ns,
    NvtxRange,
};
use crate::paraver::mpi;
use crate::FastMap;

/// What ran in a [`Span`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// `config`: index into [`LaunchConfigs`] (u32::MAX: not kept).
    Kernel {
        short: NameId,
        full: NameId,
        config: u32,
        comm: bool,
    },
    Graph {
        name: NameId,
    },
    Memcpy {
        kind: u32,
        bytes: u64,
    },
    Memset {
        bytes: u64,
    },
    Cuda {
        name: NameId,
        sync: bool,
    },
    /// `value`: the call's value in the .prv (Extrae's number, or past `UNKNOWN_MPI_BASE`);
    /// `peer`: rank in the communicator, -1 when none.
    Mpi {
        name: NameId,
        value: u32,
        activity: HostActivity,
        bytes: u64,
        peer: i32,
    },
    Os {
        name: NameId,
        activity: HostActivity,
    },
    Acc {
        name: NameId,
        activity: HostActivity,
    },
    /// `level`: how many ranges of the same domain were open on the thread when it started.
    Nvtx {
        name: NameId,
        domain: u32,
        level: u8,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: Ns,
    pub end: Ns,
    pub what: What,
}

/// A kernel's launch configuration, kept once per distinct configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub shared_static: u32,
    pub shared_dynamic: u32,
}

/// Distinct launch configurations; bounded, since a generated kernel could have a new one per
/// launch (past the bound, spans say "not kept").
#[derive(Default)]
pub struct LaunchConfigs {
    pub list: Vec<LaunchConfig>,
    index: FastMap<LaunchConfig, u32>,
}

const MAX_CONFIGS: usize = 1 << 16;

impl LaunchConfigs {
    fn intern(&mut self, c: LaunchConfig) -> u32 {
        if let Some(&i) = self.index.get(&c) {
            return i;
        }
        if self.list.len() >= MAX_CONFIGS {
            return u32::MAX;
        }
        let i = self.list.len() as u32;
        self.list.push(c);
        self.index.insert(c, i);
        i
    }
}

/// Makes spans of records; keeps what that needs across records (configurations, the MPI values
/// of names, each thread's open NVTX ranges per domain).
#[derive(Default)]
pub struct SpanMaker {
    pub configs: LaunchConfigs,
    mpi_values: FastMap<NameId, u32>,
    /// Ends of the ranges open per (thread, domain), to give each new range its nesting level.
    nvtx_open: FastMap<(u32, u32), Vec<Ns>>,
}

/// Levels past this one are drawn with it (a recursion hundreds deep is not a picture).
pub const MAX_NVTX_LEVEL: u8 = 15;

impl SpanMaker {
    pub fn gpu(&mut self, op: &GpuOp) -> Span {
        let what = match &op.kind {
            GpuOpKind::Kernel(k) => What::Kernel {
                short: k.short_name,
                full: k.name,
                config: self.configs.intern(LaunchConfig {
                    grid: k.grid,
                    block: k.block,
                    registers: k.registers_per_thread,
                    shared_static: k.static_shared_memory,
                    shared_dynamic: k.dynamic_shared_memory,
                }),
                comm: k.class == KernelClass::Communication,
            },
            GpuOpKind::Graph(g) => What::Graph { name: g.name },
            GpuOpKind::Memcpy(m) => What::Memcpy {
                kind: m.copy_kind,
                bytes: m.bytes,
            },
            GpuOpKind::Memset(m) => What::Memset { bytes: m.bytes },
        };
        Span {
            start: op.start,
            end: op.end.max(op.start),
            what,
        }
    }

    pub fn host(&mut self, call: &HostCall, names: &Names) -> Span {
        let what = match &call.kind {
            HostCallKind::Cuda(c) => What::Cuda {
                name: c.name,
                sync: call.activity == HostActivity::CudaSync,
            },
            HostCallKind::Mpi(m) => What::Mpi {
                name: m.name,
                value: *self.mpi_values.entry(m.name).or_insert_with(|| {
                    mpi::extrae_value(names.get(m.name))
                        .unwrap_or(mpi::UNKNOWN_MPI_BASE + u64::from(m.name.0))
                        as u32
                }),
                activity: call.activity,
                bytes: m.bytes_sent.unwrap_or(0) + m.bytes_received.unwrap_or(0),
                peer: m
                    .peer
                    .map_or(-1, |p| p.clamp(-1, i64::from(i32::MAX)) as i32),
            },
            HostCallKind::Os(o) => What::Os {
                name: o.name,
                activity: call.activity,
            },
            HostCallKind::OpenAcc(a) => What::Acc {
                name: a.name,
                activity: call.activity,
            },
        };
        Span {
            start: call.start,
            end: call.end.max(call.start),
            what,
        }
    }

    pub fn nvtx(&mut self, r: &NvtxRange) -> Span {
        let open = self.nvtx_open.entry((r.thread.0, r.domain)).or_default();
        // Ranges arrive by start: those ended by now are closed. Start/end ranges may overlap
        // without nesting; their level is then how many were open, as for push/pop.
        open.retain(|&end| end > r.start);
        let level = open.len().min(usize::from(MAX_NVTX_LEVEL)) as u8;
        open.push(r.end.max(r.start));
        Span {
            start: r.start,
            end: r.end.max(r.start),
            what: What::Nvtx {
                name: r.name,
                domain: r.domain,
                level,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_stays_small() {
        assert!(std::mem::size_of::<Span>() <= 40);
    }
}
