//! Tracks of one thread. Complete events of one track must nest or be disjoint: Perfetto drops
//! an event that starts inside another and ends after it (`slice_drop_overlapping_complete_event`)
//! and chrome://tracing draws it wrongly. Such an event goes to the thread's next track (a lane)
//! where it fits, a new one if none does. Each lane keeps the ends of its open events, so memory
//! is the nesting depth times the overlap, never the number of records.

use crate::model::Ns;

#[derive(Debug, Default)]
pub struct Lanes {
    lanes: Vec<Lane>,
}

#[derive(Debug)]
struct Lane {
    tid: u64,
    /// Ends of the events still open, outermost first (so non-increasing).
    open: Vec<Ns>,
}

/// Where an event goes: its lane's tid, and the lane's number when the event opened it.
pub struct Placed {
    pub tid: u64,
    pub new_lane: Option<usize>,
}

impl Lanes {
    /// Lanes whose first has `tid` (the thread's own track).
    pub fn with_first(tid: u64) -> Lanes {
        Lanes {
            lanes: vec![Lane {
                tid,
                open: Vec::new(),
            }],
        }
    }

    /// The tid of the first lane, if there is one.
    pub fn first(&self) -> Option<u64> {
        self.lanes.first().map(|l| l.tid)
    }

    /// Puts `[begin, end]` (events come in non-decreasing `begin`) in the first lane where it
    /// nests or follows; `new_tid` numbers a lane that has to be opened for it.
    pub fn place(&mut self, begin: Ns, end: Ns, new_tid: impl FnOnce() -> u64) -> Placed {
        for lane in &mut self.lanes {
            // Perfetto closes an event that ends where the next begins, as done here.
            while lane.open.last().is_some_and(|&e| e <= begin) {
                lane.open.pop();
            }
            if lane.open.last().is_none_or(|&e| e >= end) {
                lane.open.push(end);
                return Placed {
                    tid: lane.tid,
                    new_lane: None,
                };
            }
        }
        let tid = new_tid();
        self.lanes.push(Lane {
            tid,
            open: vec![end],
        });
        Placed {
            tid,
            new_lane: Some(self.lanes.len() - 1),
        }
    }

    /// Events of all lanes still open at `now` (ended ones leave when the next event comes).
    pub fn open_at(&self, now: Ns) -> usize {
        let open = self.lanes.iter().flat_map(|l| &l.open);
        open.filter(|&&end| end > now).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_overlaps_move_to_a_lane_of_their_own() {
        let mut l = Lanes::with_first(1);
        let mut next = 10;
        let mut tid = |b, e| {
            l.place(b, e, || {
                next += 1;
                next
            })
            .tid
        };
        assert_eq!(tid(0, 100), 1);
        assert_eq!(tid(10, 20), 1, "nested");
        assert_eq!(tid(20, 100), 1, "nested, ends with its parent");
        assert_eq!(tid(50, 150), 11, "starts inside, ends after: a new lane");
        assert_eq!(tid(100, 120), 1, "after the first ended");
        assert_eq!(tid(110, 200), 12, "overlaps both lanes' open events");
        assert_eq!(tid(200, 200), 1);
    }
}
