//! Cutting a trace to a time window (`--window`, `--nvtx-range`), applied to the finished body
//! lines so every record family is cut the same way, as Paraver's own cutter does: states are
//! clipped to the window; regions open at its start are re-opened at time 0 and regions still open
//! at its end are closed there; communications are kept only when both ends lie inside; times are
//! rebased so the window starts at 0. Lines arrive sorted, so one pass with the open values per
//! thread (bounded by threads × event types) suffices.

use std::collections::BTreeMap;

use super::events::NVTX_MARK;
use crate::model::Ns;

/// What to write for one input line.
pub enum Cut {
    Drop,
    Keep(String),
    /// Lines to write before this one (re-opened regions), then this one.
    OpenThenKeep(Vec<String>, String),
}

pub struct Window {
    pub start: Ns,
    pub end: Ns,
    /// (task, thread) → event type → value currently open (nonzero).
    open: BTreeMap<(u64, u64), BTreeMap<u64, u64>>,
    opened: bool,
    closed: bool,
}

fn fields(line: &str) -> Vec<u64> {
    line.split(':').map(|f| f.parse().unwrap_or(0)).collect()
}

fn join(f: &[u64]) -> String {
    f.iter().map(u64::to_string).collect::<Vec<_>>().join(":")
}

impl Window {
    pub fn new(start: Ns, end: Ns) -> Self {
        Window {
            start,
            end,
            open: BTreeMap::new(),
            opened: false,
            closed: false,
        }
    }

    /// Length of the cut trace.
    pub fn span(&self) -> Ns {
        self.end - self.start
    }

    /// Events re-opening, at time 0, every region open at the window start; `skip` = the types a
    /// line at exactly the window start sets itself on thread `key`.
    fn reopen(&mut self, key: (u64, u64), skip: &[u64]) -> Vec<String> {
        self.opened = true;
        let mut out = Vec::new();
        for ((task, thread), types) in &self.open {
            let mut f = vec![2, 0, 1, *task, *thread, 0];
            for (t, v) in types {
                if (*task, *thread) != key || !skip.contains(t) {
                    f.extend([*t, *v]);
                }
            }
            if f.len() > 6 {
                out.push(join(&f));
            }
        }
        out
    }

    /// Events closing, at the window end, every region still open there (call once, at the end).
    pub fn close(&mut self) -> Vec<String> {
        if self.closed {
            return Vec::new();
        }
        self.closed = true;
        let mut out = if self.opened {
            Vec::new()
        } else {
            self.reopen((0, 0), &[])
        };
        let span = self.span();
        for ((task, thread), types) in std::mem::take(&mut self.open) {
            let mut f = vec![2, 0, 1, task, thread, span];
            for (t, _) in types {
                f.extend([t, 0]);
            }
            if f.len() > 6 {
                out.push(join(&f));
            }
        }
        out
    }

    fn track(&mut self, f: &[u64]) {
        let key = (f[3], f[4]);
        let types = self.open.entry(key).or_default();
        for p in f[6..].chunks(2) {
            if p.len() == 2 && p[0] != u64::from(NVTX_MARK) {
                if p[1] == 0 {
                    types.remove(&p[0]);
                } else {
                    types.insert(p[0], p[1]);
                }
            }
        }
    }

    /// Re-opens regions first if this is the first line after the window start.
    fn emit(&mut self, line: String, rebased_time: Ns, key: (u64, u64), skip: &[u64]) -> Cut {
        if self.opened || rebased_time == 0 && skip.is_empty() {
            return Cut::Keep(line);
        }
        Cut::OpenThenKeep(self.reopen(key, skip), line)
    }

    /// Cuts one body line (header lines are not passed here).
    pub fn cut(&mut self, line: &str) -> Cut {
        let mut f = fields(line);
        let (lo, hi) = (self.start, self.end);
        match f.first() {
            Some(1) => {
                let (b, e) = (f[5].max(lo), f[6].min(hi));
                if e <= b {
                    return Cut::Drop;
                }
                f[5] = b - lo;
                f[6] = e - lo;
                let t = f[5];
                self.emit(join(&f), t, (0, 0), &[])
            }
            Some(2) => {
                let t = f[5];
                if t < lo {
                    self.track(&f);
                    return Cut::Drop;
                }
                if t > hi {
                    return Cut::Drop;
                }
                // A line at exactly the window start sets its own values: re-open the others only.
                let skip: Vec<u64> = if t == lo {
                    f[6..].chunks(2).map(|p| p[0]).collect()
                } else {
                    Vec::new()
                };
                let cut = if self.opened {
                    None
                } else {
                    Some(self.reopen((f[3], f[4]), &skip))
                };
                self.track(&f);
                f[5] = t - lo;
                match cut {
                    Some(pre) => Cut::OpenThenKeep(pre, join(&f)),
                    None => Cut::Keep(join(&f)),
                }
            }
            Some(3) => {
                // Every time of the message inside: an MPI receive is posted (its logical
                // time) before the send, so a send inside may have its posting before the start.
                if [5, 6, 11, 12].iter().any(|&i| f[i] < lo || f[i] > hi) {
                    return Cut::Drop;
                }
                for i in [5, 6, 11, 12] {
                    f[i] -= lo;
                }
                let t = f[5];
                self.emit(join(&f), t.max(1), (0, 0), &[])
            }
            _ => Cut::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(w: &mut Window, lines: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for l in lines {
            match w.cut(l) {
                Cut::Drop => {}
                Cut::Keep(s) => out.push(s),
                Cut::OpenThenKeep(pre, s) => {
                    out.extend(pre);
                    out.push(s)
                }
            }
        }
        out.extend(w.close());
        out
    }

    #[test]
    fn clips_states_reopens_and_closes_regions_and_keeps_inner_comms() {
        let mut w = Window::new(100, 200);
        let out = run(
            &mut w,
            &[
                "1:0:1:1:1:0:150:1",
                "2:0:1:1:1:50:63000006:7",
                "3:0:1:1:1:60:60:0:1:1:2:120:120:0:55001",
                "2:0:1:1:2:120:9600:5",
                "3:0:1:1:1:130:130:0:1:1:2:140:140:8:55002",
                // A receive posted before the window for a send inside it: left out.
                "3:0:1:1:1:135:135:0:1:1:2:90:145:8:7",
                "1:0:1:1:1:150:300:0",
                "2:0:1:1:1:160:63000006:0",
                "2:0:1:1:2:250:9600:0",
            ],
        );
        assert_eq!(
            out,
            vec![
                "1:0:1:1:1:0:50:1",
                "2:0:1:1:1:0:63000006:7",
                "2:0:1:1:2:20:9600:5",
                "3:0:1:1:1:30:30:0:1:1:2:40:40:8:55002",
                "1:0:1:1:1:50:100:0",
                "2:0:1:1:1:60:63000006:0",
                "2:0:1:1:2:100:9600:0",
            ]
        );
    }
}
