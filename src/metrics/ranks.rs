//! Per rank over the measured time: who to blame. One row per process with a GPU at work or
//! MPI calls: its GPUs' useful, communication and idle time, its time outside and inside MPI,
//! and how often it was the slowest in an iteration.

use serde::Serialize;

use super::accum::GpuAcc;
use super::host::HostPop;
use super::iterations::IterationsReport;
use crate::model::{Ns, ObjectModel};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankRow {
    /// Index into the trace's process list.
    pub process: usize,
    pub rank: Option<u32>,
    pub pid: u32,
    pub host: String,
    /// Its GPUs with activity (indices into `gpus`).
    pub gpus: Vec<usize>,
    /// Summed over its GPUs; null without one.
    pub device: Option<RankDevice>,
    /// Outside MPI on its main thread (T − MPI) and in MPI; null without MPI calls.
    pub host_useful_ns: Option<Ns>,
    pub mpi_ns: Option<Ns>,
    /// Iterations in which it (one of its GPUs) was the slowest; null without iterations.
    pub slowest_iterations: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankDevice {
    pub useful_ns: Ns,
    pub communication_ns: Ns,
    pub idle_ns: Ns,
}

/// The rows, in process order.
pub fn rows(
    objects: &ObjectModel,
    process_gpus: &[Vec<usize>],
    accs: &[GpuAcc],
    active: &[bool],
    t: Ns,
    host: Option<&HostPop>,
    iterations: &IterationsReport,
) -> Vec<RankRow> {
    let mut out = Vec::new();
    for (p, proc_) in objects.processes.iter().enumerate() {
        let gpus: Vec<usize> = process_gpus[p]
            .iter()
            .copied()
            .filter(|&g| active[g])
            .collect();
        let mpi = host.and_then(|h| h.ranks.iter().find(|r| r.process == p));
        if gpus.is_empty() && mpi.is_none() {
            continue;
        }
        let device = (!gpus.is_empty()).then(|| {
            let sum = |f: &dyn Fn(&GpuAcc) -> Ns| gpus.iter().map(|&g| f(&accs[g])).sum::<Ns>();
            RankDevice {
                useful_ns: sum(&|a| a.useful),
                communication_ns: sum(&|a| a.comm),
                idle_ns: sum(&|a| t.saturating_sub(a.active())),
            }
        });
        let slowest_iterations = iterations.summary.as_ref().map(|s| {
            s.slowest
                .iter()
                .filter(|c| c.process == p)
                .map(|c| c.iterations)
                .sum()
        });
        out.push(RankRow {
            process: p,
            rank: proc_.rank,
            pid: proc_.pid,
            host: objects.hosts[proc_.host].name.clone(),
            gpus,
            device,
            host_useful_ns: mpi.map(|r| r.useful_ns),
            mpi_ns: mpi.map(|r| r.mpi_ns),
            slowest_iterations,
        });
    }
    out
}
