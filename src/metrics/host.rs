//! The host-side POP model of MPI ranks: per rank, *useful* = measured time T outside MPI calls on
//! the rank's main thread; N = processes with MPI calls; PE = Σ useful / (N·T) =
//! LB × CommE with LB = Σ useful / (N · max useful) and CommE = max useful / T.
//!
//! The main thread of a process is the first of its threads seen calling MPI; MPI calls of other
//! threads are counted apart (`other_thread_calls`) and do not enter the model. MPI time is the
//! union of the calls' intervals (nsys writes one row per request of a wait call, and nested
//! calls overlap), taken from the same sweep as the GPUs, one lane per process, so it is clipped
//! to the selected windows the same way and holds only the calls in flight.

use serde::Serialize;

use super::sweep::{LaneState, Piece, Sweep};
use super::window::OpenUntil;
use crate::model::{Ns, ObjectModel, ThreadId};

/// MPI calls running on a lane.
#[derive(Clone, Copy, Debug, Default)]
pub struct Depth(u32);

impl LaneState for Depth {
    fn enter(&mut self, _tag: u8) {
        self.0 += 1;
    }
    fn leave(&mut self, _tag: u8) {
        self.0 -= 1;
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
    pub useful_ns: Ns,
    pub mpi_ns: Ns,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostPop {
    /// T, as for the device model.
    pub elapsed_ns: Ns,
    /// N: processes with MPI calls, in process order.
    pub ranks: Vec<HostRank>,
    pub useful_sum_ns: u64,
    pub useful_max_ns: Ns,
    pub parallel_efficiency: Option<f64>,
    pub load_balance: Option<f64>,
    pub communication_efficiency: Option<f64>,
}

pub struct HostModel {
    sweep: Sweep<Depth>,
    thread_process: Vec<usize>,
    main_thread: Vec<Option<ThreadId>>,
    mpi: Vec<Ns>,
    calls: Vec<u64>,
    other_calls: Vec<u64>,
}

fn add_piece(mpi: &mut [Ns], p: Piece<Depth>, sel: OpenUntil) {
    if p.running.0 > 0 {
        mpi[p.lane] += sel.clip_end(p.end).saturating_sub(p.start);
    }
}

impl HostModel {
    pub fn new(objects: &ObjectModel) -> Self {
        let n = objects.processes.len();
        HostModel {
            sweep: Sweep::new(n),
            thread_process: objects.threads.iter().map(|t| t.process).collect(),
            main_thread: vec![None; n],
            mpi: vec![0; n],
            calls: vec![0; n],
            other_calls: vec![0; n],
        }
    }

    /// MPI calls in flight (the memory the model holds).
    pub fn in_flight(&self) -> usize {
        self.sweep.in_flight()
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
        let mpi = &mut self.mpi;
        self.sweep.advance(start, &mut |p| add_piece(mpi, p, sel));
        self.sweep
            .start(process, start, end, 0, &mut |p| add_piece(mpi, p, sel));
        Some(())
    }

    /// Brings every lane to `t` with the window set `sel` that held until `t`.
    pub fn sync_to(&mut self, t: Ns, sel: OpenUntil) {
        let mpi = &mut self.mpi;
        self.sweep.advance(t, &mut |p| add_piece(mpi, p, sel));
        self.sweep.flush(t, &mut |p| add_piece(mpi, p, sel));
    }

    /// The model, or None when no process called MPI.
    pub fn report(&self, objects: &ObjectModel, t: Ns) -> Option<HostPop> {
        let ranks: Vec<HostRank> = (0..self.mpi.len())
            .filter(|&p| self.main_thread[p].is_some())
            .map(|p| {
                let proc_ = &objects.processes[p];
                HostRank {
                    process: p,
                    rank: proc_.rank,
                    pid: proc_.pid,
                    host: objects.hosts[proc_.host].name.clone(),
                    mpi_calls: self.calls[p],
                    other_thread_calls: self.other_calls[p],
                    useful_ns: t.saturating_sub(self.mpi[p]),
                    mpi_ns: self.mpi[p],
                }
            })
            .collect();
        if ranks.is_empty() {
            return None;
        }
        let n = ranks.len() as f64;
        let sum: u64 = ranks.iter().map(|r| r.useful_ns).sum();
        let max = ranks.iter().map(|r| r.useful_ns).max().unwrap_or(0);
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        Some(HostPop {
            elapsed_ns: t,
            useful_sum_ns: sum,
            useful_max_ns: max,
            parallel_efficiency: ratio(sum as f64, n * t as f64),
            load_balance: ratio(sum as f64, n * max as f64),
            communication_efficiency: ratio(max as f64, t as f64),
            ranks,
        })
    }
}
