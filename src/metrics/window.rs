//! Time windows made of NVTX range instances, tracked while the stream flows.
//!
//! Ranges arrive in start order, so at the current time `now` every window that can still matter
//! from `now` on is already known, and their union restricted to `[now, ∞)` is one interval
//! `[now, open_until)`. That single number is the whole state of a window set: pieces of GPU time
//! (which never start before the last window change, see `sink.rs`) are clipped with `min`.

use std::collections::HashMap;

use crate::model::{Ns, NvtxRange, ThreadId};

/// A union of windows seen from the current time: `[now, open_until)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenUntil(pub Ns);

impl OpenUntil {
    /// Adds a window that starts at or before now.
    pub fn add(&mut self, end: Ns) {
        self.0 = self.0.max(end);
    }

    /// End of `[a, b)` clipped to the windows, for `a` at or after the last window change.
    pub fn clip_end(self, b: Ns) -> Ns {
        b.min(self.0)
    }

    /// True if instant `t` (not before the last window change) lies inside a window.
    pub fn contains(self, t: Ns) -> bool {
        t < self.0
    }
}

/// `--nvtx-range NAME[:N]`: which range instances form the measured windows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WindowSpec {
    /// Range name (message) to match exactly, in any domain; PyTorch's per-call fields
    /// (`, seq = …`, `, op_id = …`) need not be given (see `nvtx::base_name`).
    pub name: String,
    /// 1-based instance number, counted per thread in start order; `None` = every instance.
    pub instance: Option<u32>,
}

impl WindowSpec {
    /// Parses `NAME` or `NAME:N`. A suffix that is not a number stays part of the name, so names
    /// with colons (`aten::mm`) work as they are.
    pub fn parse(s: &str) -> Result<WindowSpec, String> {
        if s.is_empty() {
            return Err("--nvtx-range needs a range name".into());
        }
        if let Some((name, n)) = s.rsplit_once(':') {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                let k: u32 = n
                    .parse()
                    .map_err(|_| format!("instance number '{n}' is too large"))?;
                if k == 0 {
                    return Err("range instances are numbered from 1".into());
                }
                if name.is_empty() {
                    return Err(format!("'{s}' has an instance number but no range name"));
                }
                return Ok(WindowSpec {
                    name: name.to_owned(),
                    instance: Some(k),
                });
            }
        }
        Ok(WindowSpec {
            name: s.to_owned(),
            instance: None,
        })
    }
}

/// The selected window set: the NVTX range instances asked for, inside TALP's MPI window when
/// the elapsed time is measured there; the whole trace when neither applies.
#[derive(Debug)]
pub struct Selection {
    pub spec: Option<WindowSpec>,
    /// [MPI_Init's end, MPI_Finalize's start), when measured there.
    pub bounds: Option<(Ns, Ns)>,
    /// Where the stream stands against `bounds`: 0 before, 1 inside, 2 after.
    phase: u8,
    nvtx_open: OpenUntil,
    per_thread: HashMap<ThreadId, u32>,
    /// Instances taken as windows.
    pub instances: u64,
    /// Total time of the union of the windows, integrated up to the clock.
    pub total: Ns,
    pub first_start: Option<Ns>,
    pub last_end: Ns,
}

impl Selection {
    pub fn new(spec: Option<WindowSpec>, bounds: Option<(Ns, Ns)>) -> Self {
        Selection {
            nvtx_open: OpenUntil(if spec.is_some() { 0 } else { Ns::MAX }),
            spec,
            bounds,
            phase: 0,
            per_thread: HashMap::new(),
            instances: 0,
            total: 0,
            first_start: None,
            last_end: 0,
        }
    }

    /// Whether a window narrows the measured time (else T is the whole trace).
    pub fn narrows(&self) -> bool {
        self.spec.is_some() || self.bounds.is_some()
    }

    pub fn open(&self) -> OpenUntil {
        match (self.bounds, self.phase) {
            (None, _) => self.nvtx_open,
            (Some((_, end)), 1) => OpenUntil(self.nvtx_open.0.min(end)),
            _ => OpenUntil(0),
        }
    }

    /// The next bound the stream must stop at (the window changes there), if any is left.
    pub fn next_bound(&self) -> Option<Ns> {
        match (self.bounds, self.phase) {
            (Some((start, _)), 0) => Some(start),
            (Some((_, end)), 1) => Some(end),
            _ => None,
        }
    }

    /// The stream has reached [`next_bound`](Self::next_bound) (after advancing to it).
    pub fn pass_bound(&mut self) {
        self.phase = (self.phase + 1).min(2);
    }

    /// Integrates window time over `[from, to)`, during which the window state did not change.
    pub fn advance(&mut self, from: Ns, to: Ns) {
        self.total += self.open().clip_end(to).saturating_sub(from);
    }

    /// Offers a range that starts now; takes it as a window if it is selected.
    pub fn offer(&mut self, r: &NvtxRange, name: &str) {
        let Some(spec) = &self.spec else { return };
        if spec.name != name && spec.name != super::nvtx::base_name(name) {
            return;
        }
        let k = self.per_thread.entry(r.thread).or_insert(0);
        *k += 1;
        if spec.instance.is_some_and(|want| want != *k) {
            return;
        }
        self.instances += 1;
        self.first_start.get_or_insert(r.start);
        self.last_end = self.last_end.max(r.end);
        self.nvtx_open.add(r.end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_and_instance() {
        assert_eq!(
            WindowSpec::parse("step:3").unwrap(),
            WindowSpec {
                name: "step".into(),
                instance: Some(3)
            }
        );
        assert_eq!(WindowSpec::parse("aten::mm").unwrap().name, "aten::mm");
        assert_eq!(WindowSpec::parse("aten::mm").unwrap().instance, None);
        assert_eq!(WindowSpec::parse("a:b:12").unwrap().name, "a:b");
        assert!(WindowSpec::parse("step:0").is_err());
        assert!(WindowSpec::parse(":4").is_err());
        assert!(WindowSpec::parse("").is_err());
        assert!(WindowSpec::parse("x:99999999999").is_err());
    }

    #[test]
    fn open_until_is_the_union_seen_from_now() {
        let mut o = OpenUntil::default();
        assert!(!o.contains(0));
        o.add(50);
        o.add(30);
        assert_eq!(o.clip_end(40), 40);
        assert_eq!(o.clip_end(70), 50);
        assert!(o.contains(49) && !o.contains(50));
    }
}
