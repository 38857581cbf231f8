//! The host-side POP model of MPI ranks, as TALP reports it: per rank, the measured time T splits
//! on the rank's main thread into MPI (inside MPI calls), device wait (outside MPI, inside CUDA
//! calls that block until the GPU is done: synchronize, blocking copies) and useful (the rest).
//! N = processes with MPI calls.
//!
//! - MPI parallel efficiency PE = Σ (T − MPI) / (N·T) = LB × CommE, with
//!   LB = Σ (T − MPI) / (N · max (T − MPI)) and CommE = max (T − MPI) / T;
//! - device offload efficiency = Σ useful / Σ (T − MPI): how much of the time outside MPI the
//!   host computes instead of waiting for its GPU (null without CUDA calls);
//! - host parallel efficiency = PE × device offload efficiency = Σ useful / (N·T).
//!
//! The main thread of a process is the first of its threads seen calling MPI; MPI calls of other
//! threads are counted apart (`other_thread_calls`) and do not enter the model. Times are unions
//! of the calls' intervals (nsys writes one row per request of a wait call, and nested calls
//! overlap), taken from the same sweep as the GPUs, one lane per process, so they are clipped to
//! the selected windows the same way and only the calls in flight are held.

use serde::Serialize;

use super::sweep::{LaneState, Piece, Sweep};
use super::window::OpenUntil;
use crate::model::{Ns, ObjectModel, ThreadId};

/// Tags of the calls a lane follows.
const MPI: u8 = 0;
const DEVICE_WAIT: u8 = 1;

/// MPI calls and device waits running on a lane.
#[derive(Clone, Copy, Debug, Default)]
pub struct Calls {
    mpi: u32,
    wait: u32,
}

impl LaneState for Calls {
    fn enter(&mut self, tag: u8) {
        match tag {
            MPI => self.mpi += 1,
            _ => self.wait += 1,
        }
    }
    fn leave(&mut self, tag: u8) {
        match tag {
            MPI => self.mpi -= 1,
            _ => self.wait -= 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostRank {
    /// Index into the trace's process list.
    pub process: usize,
    pub rank: Option<u32>,
    pub pid: u32,
    pub host: String,
    /// MPI calls on the main thread starting inside T.
    pub mpi_calls: u64,
    /// MPI calls of other threads of the process (not in the model).
    pub other_thread_calls: u64,
    /// T − MPI: the time outside MPI (useful + device wait).
    pub useful_ns: Ns,
    pub mpi_ns: Ns,
    /// Outside MPI, in CUDA calls that wait for the GPU.
    pub device_wait_ns: Ns,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostPop {
    /// T, as for the device model.
    pub elapsed_ns: Ns,
    /// N: processes with MPI calls, in process order.
    pub ranks: Vec<HostRank>,
    pub useful_sum_ns: u64,
    pub useful_max_ns: Ns,
    /// MPI parallel efficiency = LB × CommE.
    pub parallel_efficiency: Option<f64>,
    pub load_balance: Option<f64>,
    pub communication_efficiency: Option<f64>,
    /// Σ (useful − device wait) / Σ useful; null when the ranks never wait for a GPU.
    pub device_offload_efficiency: Option<f64>,
    /// parallel_efficiency × device_offload_efficiency (null with the latter).
    pub host_parallel_efficiency: Option<f64>,
}

/// Per process: MPI time and device wait inside the measured time, and MPI time in all (what
/// the iterations' windows are cut from).
#[derive(Default)]
struct Times {
    mpi: Vec<Ns>,
    wait: Vec<Ns>,
    mpi_all: Vec<Ns>,
}

impl Times {
    fn add(&mut self, p: Piece<Calls>, sel: OpenUntil) {
        let inside = sel.clip_end(p.end).saturating_sub(p.start);
        if p.running.mpi > 0 {
            self.mpi[p.lane] += inside;
            self.mpi_all[p.lane] += p.end - p.start;
        } else if p.running.wait > 0 {
            self.wait[p.lane] += inside;
        }
    }
}

pub struct HostModel {
    sweep: Sweep<Calls>,
    thread_process: Vec<usize>,
    main_thread: Vec<Option<ThreadId>>,
    times: Times,
    calls: Vec<u64>,
    other_calls: Vec<u64>,
    /// Whether any main thread waited for a GPU.
    waited: bool,
}

impl HostModel {
    pub fn new(objects: &ObjectModel) -> Self {
        let n = objects.processes.len();
        HostModel {
            sweep: Sweep::new(n),
            thread_process: objects.threads.iter().map(|t| t.process).collect(),
            main_thread: vec![None; n],
            times: Times {
                mpi: vec![0; n],
                wait: vec![0; n],
                mpi_all: vec![0; n],
            },
            calls: vec![0; n],
            other_calls: vec![0; n],
            waited: false,
        }
    }

    /// Calls in flight (the memory the model holds).
    pub fn in_flight(&self) -> usize {
        self.sweep.in_flight()
    }

    fn start(&mut self, process: usize, start: Ns, end: Ns, tag: u8, sel: OpenUntil) {
        let times = &mut self.times;
        self.sweep.advance(start, &mut |p| times.add(p, sel));
        self.sweep
            .start(process, start, end, tag, &mut |p| times.add(p, sel));
    }

    /// An MPI call of `thread` starting now; `sel` is the selected window set now.
    pub fn call(&mut self, thread: ThreadId, start: Ns, end: Ns, sel: OpenUntil) -> Option<()> {
        let process = *self.thread_process.get(thread.0 as usize)?;
        let main = *self.main_thread[process].get_or_insert(thread);
        let counted = sel.contains(start);
        if main != thread {
            self.other_calls[process] += u64::from(counted);
            return Some(());
        }
        self.calls[process] += u64::from(counted);
        self.start(process, start, end, MPI, sel);
        Some(())
    }

    /// A CUDA call of `thread` that waits for the GPU, starting now: device wait where it is
    /// the main thread of an MPI rank.
    pub fn device_wait(&mut self, thread: ThreadId, start: Ns, end: Ns, sel: OpenUntil) {
        if self.is_main(thread) {
            let process = self.thread_process[thread.0 as usize];
            self.waited = true;
            self.start(process, start, end, DEVICE_WAIT, sel);
        }
    }

    /// Whether `thread` is the main thread of its process (the one the model follows), once
    /// it has called MPI.
    pub fn is_main(&self, thread: ThreadId) -> bool {
        self.thread_process
            .get(thread.0 as usize)
            .is_some_and(|&p| self.main_thread[p] == Some(thread))
    }

    /// Retires the calls that end by `t` with the window set `sel` that held until `t`.
    pub fn advance(&mut self, t: Ns, sel: OpenUntil) {
        let times = &mut self.times;
        self.sweep.advance(t, &mut |p| times.add(p, sel));
    }

    /// MPI time of `process` in [0, `t`) over the whole trace, for `t` no earlier than the
    /// last call start or end it has seen ([`advance`](Self::advance) to `t` first).
    pub fn mpi_until(&self, process: usize, t: Ns) -> Ns {
        let (last, calls) = self.sweep.lane(process);
        self.times.mpi_all[process]
            + if calls.mpi > 0 {
                t.saturating_sub(last)
            } else {
                0
            }
    }

    /// Brings every lane to `t` with the window set `sel` that held until `t`.
    pub fn sync_to(&mut self, t: Ns, sel: OpenUntil) {
        let times = &mut self.times;
        self.sweep.advance(t, &mut |p| times.add(p, sel));
        self.sweep.flush(t, &mut |p| times.add(p, sel));
    }

    /// The model, or None when no process called MPI.
    pub fn report(&self, objects: &ObjectModel, t: Ns) -> Option<HostPop> {
        let ranks: Vec<HostRank> = self
            .ranks()
            .into_iter()
            .map(|p| {
                let proc_ = &objects.processes[p];
                HostRank {
                    process: p,
                    rank: proc_.rank,
                    pid: proc_.pid,
                    host: objects.hosts[proc_.host].name.clone(),
                    mpi_calls: self.calls[p],
                    other_thread_calls: self.other_calls[p],
                    useful_ns: t.saturating_sub(self.times.mpi[p]),
                    mpi_ns: self.times.mpi[p],
                    device_wait_ns: self.times.wait[p],
                }
            })
            .collect();
        HostPop::of_ranks(ranks, t, self.waited)
    }

    /// The processes that are MPI ranks (have called MPI), in process order.
    pub fn ranks(&self) -> Vec<usize> {
        (0..self.main_thread.len())
            .filter(|&p| self.main_thread[p].is_some())
            .collect()
    }
}

impl HostPop {
    /// The model of `ranks` over elapsed time `t`; None without ranks. `waited`: whether the
    /// device wait was measured (the ranks make CUDA calls that wait).
    pub fn of_ranks(ranks: Vec<HostRank>, t: Ns, waited: bool) -> Option<HostPop> {
        if ranks.is_empty() {
            return None;
        }
        let n = ranks.len() as f64;
        let sum: u64 = ranks.iter().map(|r| r.useful_ns).sum();
        let max = ranks.iter().map(|r| r.useful_ns).max().unwrap_or(0);
        let wait: u64 = ranks.iter().map(|r| r.device_wait_ns).sum();
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let parallel_efficiency = ratio(sum as f64, n * t as f64);
        let offload = if waited {
            ratio(sum.saturating_sub(wait) as f64, sum as f64)
        } else {
            None
        };
        Some(HostPop {
            elapsed_ns: t,
            useful_sum_ns: sum,
            useful_max_ns: max,
            load_balance: ratio(sum as f64, n * max as f64),
            communication_efficiency: ratio(max as f64, t as f64),
            device_offload_efficiency: offload,
            host_parallel_efficiency: parallel_efficiency.zip(offload).map(|(a, b)| a * b),
            parallel_efficiency,
            ranks,
        })
    }
}
