//! Arrows (flow events) whose target has not been written yet.
//!
//! A flow's `"f"` binds to the slice enclosing it (`"bp":"e"`), so it must come after that slice
//! in the file (Perfetto keeps the file's order at equal times). An arrow arrives at its send
//! time, before its target, so it waits here, keyed by the target's thread and start, until the
//! writer has written that operation, or drops once the stream has passed that start without it
//! (an operation left out by `--min-duration` or `-t`).

use std::collections::BTreeMap;

use crate::model::{Ns, ThreadId};

/// What an arrow is, which names its two events (`cat` and `name` pair them in Perfetto).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    Launch,
    Memory,
    Message,
}

impl FlowKind {
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Launch => "launch",
            FlowKind::Memory => "memory operation",
            FlowKind::Message => "MPI message",
        }
    }
}

/// An arrow whose start is written: the source's track and time (already cut to the window).
#[derive(Clone, Debug)]
pub struct Flow {
    pub kind: FlowKind,
    pub pid: u32,
    pub tid: u64,
    pub ts: Ns,
    /// Arguments of the `"s"` event (bytes, MPI tag).
    pub bytes: u64,
    pub tag: Option<u64>,
}

/// Arrows waiting for their target, by (target start, target thread, arrival order).
#[derive(Default)]
pub struct Waiting {
    flows: BTreeMap<(Ns, ThreadId, u64), Flow>,
    seq: u64,
    /// The most that waited at once (the tests hold it against the arrows in flight).
    pub high_water: usize,
    /// Arrows dropped because their target never came.
    pub dropped: u64,
}

impl Waiting {
    pub fn push(&mut self, target: (Ns, ThreadId), flow: Flow) {
        self.seq += 1;
        self.flows.insert((target.0, target.1, self.seq), flow);
        self.high_water = self.high_water.max(self.flows.len());
    }

    /// The first arrow waiting for the operation of `thread` starting at `start`.
    pub fn take(&mut self, start: Ns, thread: ThreadId) -> Option<Flow> {
        let key = *self
            .flows
            .range((start, thread, 0)..=(start, thread, u64::MAX))
            .next()?
            .0;
        self.flows.remove(&key)
    }

    /// Drops the arrows whose target starts before `now`: the stream is past them.
    pub fn expire(&mut self, now: Ns) {
        while let Some(entry) = self.flows.first_entry() {
            if entry.key().0 >= now {
                break;
            }
            entry.remove();
            self.dropped += 1;
        }
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }
}
