//! Iteration candidates from NVTX: ranges near the top of their thread's nesting whose names,
//! normalised, repeat. Every instance keeps what its process did inside it (MPI time, each of
//! its GPUs' useful and communication time), cut from running totals at its start and end, so
//! that whichever candidate turns out to be the iterations has its figures when the pass ends.
//!
//! Memory: one small entry per instance of a candidate, at most [`MAX_INSTANCES`] in all (past
//! that the candidate with the most instances, the least likely to be iterations, is dropped),
//! and the ends still to come; never the records.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::{normalise, Snapshot};
use crate::model::{Ns, ThreadId};

/// Deepest nesting level whose ranges can be iterations (1 = outermost).
pub const MAX_DEPTH: usize = 3;
/// Candidate names followed at once; later names are not.
pub const MAX_CANDIDATES: usize = 256;
/// Instances kept over all candidates.
pub const MAX_INSTANCES: usize = 1 << 18;

/// One instance of a candidate on one process.
#[derive(Clone, Debug)]
pub struct Instance {
    pub start: Ns,
    pub end: Ns,
    /// Start of the first MPI call of the process inside the instance, and how many started
    /// inside it.
    pub first_mpi: Option<Ns>,
    pub mpi_calls: u64,
    /// Totals at the start; once the end has passed, what happened inside.
    pub inside: Snapshot,
    pub done: bool,
}

/// A candidate's instances on one process, all from one thread (the first that had one).
#[derive(Clone, Debug)]
pub struct OnProcess {
    pub thread: ThreadId,
    pub instances: Vec<Instance>,
}

#[derive(Clone, Debug)]
pub struct Candidate {
    pub domain: u32,
    /// The normalised name; `example` is the first instance's own.
    pub name: String,
    pub example: String,
    /// Shallowest nesting level seen (1 = outermost).
    pub depth: usize,
    /// By process index.
    pub processes: BTreeMap<usize, OnProcess>,
    /// Dropped: an instance began inside the previous one of its thread (a range that nests in
    /// itself is no iteration), or memory ran short.
    pub dropped: bool,
}

impl Candidate {
    fn instances(&self) -> usize {
        self.processes.values().map(|p| p.instances.len()).sum()
    }
}

/// Where an instance's start snapshot goes: (candidate, process, instance).
pub type Slot = (usize, usize, usize);

#[derive(Default)]
pub struct Ranges {
    pub candidates: Vec<Candidate>,
    by_name: BTreeMap<(u32, String), usize>,
    /// Per (thread, domain): ends of the ranges open there (for the nesting level).
    open: BTreeMap<(ThreadId, u32), Vec<Ns>>,
    /// Instances whose end is still to come: (end, slot).
    ends: BinaryHeap<Reverse<(Ns, Slot)>>,
    kept: usize,
}

impl Ranges {
    /// A range of `thread` (of `process`) in NVTX domain `domain` starting now; gives the slot
    /// for its start snapshot where it is (still) a candidate's instance.
    pub fn offer(
        &mut self,
        thread: ThreadId,
        process: usize,
        domain: u32,
        name: &str,
        start: Ns,
        end: Ns,
    ) -> Option<Slot> {
        let open = self.open.entry((thread, domain)).or_default();
        open.retain(|&e| e > start);
        open.push(end);
        let depth = open.len();
        if depth > MAX_DEPTH {
            return None;
        }
        let key = (domain, normalise(name));
        let c = match self.by_name.get(&key) {
            Some(&c) => c,
            None if self.candidates.len() < MAX_CANDIDATES => {
                self.candidates.push(Candidate {
                    domain,
                    name: key.1.clone(),
                    example: name.to_owned(),
                    depth,
                    processes: BTreeMap::new(),
                    dropped: false,
                });
                self.by_name.insert(key, self.candidates.len() - 1);
                self.candidates.len() - 1
            }
            None => return None,
        };
        let cand = &mut self.candidates[c];
        if cand.dropped {
            return None;
        }
        cand.depth = cand.depth.min(depth);
        let on = cand.processes.entry(process).or_insert(OnProcess {
            thread,
            instances: Vec::new(),
        });
        if on.thread != thread {
            return None;
        }
        if on.instances.last().is_some_and(|i| i.end > start) {
            self.drop_candidate(c);
            return None;
        }
        on.instances.push(Instance {
            start,
            end,
            first_mpi: None,
            mpi_calls: 0,
            inside: Snapshot::default(),
            done: false,
        });
        let slot = (c, process, on.instances.len() - 1);
        self.ends.push(Reverse((end, slot)));
        self.kept += 1;
        if self.kept > MAX_INSTANCES {
            self.drop_largest();
        }
        (!self.candidates[c].dropped).then_some(slot)
    }

    fn drop_candidate(&mut self, c: usize) {
        let cand = &mut self.candidates[c];
        self.kept -= cand.instances();
        cand.dropped = true;
        cand.processes.clear();
    }

    fn drop_largest(&mut self) {
        let largest = (0..self.candidates.len()).max_by_key(|&c| self.candidates[c].instances());
        if let Some(c) = largest {
            self.drop_candidate(c);
        }
    }

    fn instance(&mut self, (c, p, i): Slot) -> Option<&mut Instance> {
        let cand = self.candidates.get_mut(c).filter(|c| !c.dropped)?;
        cand.processes.get_mut(&p)?.instances.get_mut(i)
    }

    /// The totals at an instance's start.
    pub fn started(&mut self, slot: Slot, at_start: Snapshot) {
        if let Some(i) = self.instance(slot) {
            i.inside = at_start;
        }
    }

    /// The earliest end still to come, and its slot and process.
    pub fn next_end(&self) -> Option<(Ns, Slot)> {
        self.ends.peek().map(|Reverse(e)| *e)
    }

    /// The totals at the end of the instance [`next_end`](Self::next_end) gave.
    pub fn ended(&mut self, at_end: &Snapshot) {
        let Some(Reverse((_, slot))) = self.ends.pop() else {
            return;
        };
        if let Some(i) = self.instance(slot) {
            i.inside = at_end.since(&i.inside);
            i.done = true;
        }
    }

    /// An MPI call of `process` starting at `t`: the first of each instance open there.
    pub fn mpi_call(&mut self, process: usize, t: Ns) {
        for cand in self.candidates.iter_mut().filter(|c| !c.dropped) {
            if let Some(i) = cand
                .processes
                .get_mut(&process)
                .and_then(|p| p.instances.last_mut())
            {
                if i.start <= t && t < i.end {
                    i.first_mpi.get_or_insert(t);
                    i.mpi_calls += 1;
                }
            }
        }
    }
}
