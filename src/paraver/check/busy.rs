//! The time a row shows a GPU operation, as Paraver's *Last Evt Val* reads it: from an event
//! that gives a kernel (or memory operation) type a non-zero value to the one that sets the last
//! of them back to 0.

use crate::model::Ns;
use crate::paraver::events::{COMM_KERNEL, GPU_MEMORY_OP, GRAPH_EXEC, KERNEL};

/// The two groups of types followed: kernels, memory operations.
const GROUPS: [&[u32]; 2] = [&[KERNEL, COMM_KERNEL, GRAPH_EXEC], &[GPU_MEMORY_OP]];

#[derive(Clone, Copy, Default)]
struct Group {
    /// Bit k: type k of the group has a non-zero value now.
    nonzero: u8,
    since: Ns,
    total: Ns,
}

#[derive(Clone, Copy, Default)]
pub(super) struct RowShown {
    groups: [Group; 2],
}

impl RowShown {
    /// An event pair at `time`.
    pub fn note(&mut self, ty: u32, value: u64, time: Ns) {
        for (g, types) in self.groups.iter_mut().zip(GROUPS) {
            let Some(k) = types.iter().position(|&t| t == ty) else {
                continue;
            };
            let was = g.nonzero != 0;
            if value == 0 {
                g.nonzero &= !(1 << k);
            } else {
                g.nonzero |= 1 << k;
            }
            match (was, g.nonzero != 0) {
                (false, true) => g.since = time,
                (true, false) => g.total += time.saturating_sub(g.since),
                _ => {}
            }
        }
    }

    /// (kernel, memory) time shown, a group still shown at `end` counted up to it.
    pub fn totals(&self, end: Ns) -> (Ns, Ns) {
        let total = |g: &Group| {
            g.total
                + if g.nonzero != 0 {
                    end.saturating_sub(g.since)
                } else {
                    0
                }
        };
        (total(&self.groups[0]), total(&self.groups[1]))
    }
}
