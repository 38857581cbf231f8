//! Per NVTX range name: instance count and durations, and the device efficiency *inside* the
//! instances (the union of all instances of the name is the window, as for `--nvtx-range`).
//!
//! Ranges are grouped by [`base_name`]: PyTorch's `emit_nvtx` makes every call a distinct string
//! (`aten::mm, seq = 3, op_id = 17`), which would give one row per call instead of one per op.
//!
//! Each name keeps its own window state ([`OpenUntil`]) and per-GPU useful/communication time.
//! Only names whose window is open are visited per piece of GPU time (the `active` list), so the
//! cost per piece is the number of ranges open at that instant, not the number of names.

use std::collections::HashMap;

use serde::Serialize;

use super::accum::TimeClass;
use super::efficiency::{Efficiency, GpuTimes};
use super::window::OpenUntil;
use crate::model::{NameId, Names, Ns, NvtxRange};

/// Per-call fields PyTorch appends to an op name, after `", "`.
const PYTORCH_CALL_FIELDS: &[&str] = &["seq = ", "op_id = ", "sizes = ", "input_op_ids = "];

/// The name a range is grouped under: the name without PyTorch's per-call fields.
pub fn base_name(name: &str) -> &str {
    match name.find(", ") {
        Some(i)
            if PYTORCH_CALL_FIELDS
                .iter()
                .any(|f| name[i + 2..].starts_with(f)) =>
        {
            &name[..i]
        }
        _ => name,
    }
}

struct RangeAcc {
    domain: u32,
    name: String,
    /// Instances starting inside the selected windows, and their total duration.
    count: u64,
    total: u64,
    /// Instances anywhere in the trace.
    seen: u64,
    open: OpenUntil,
    /// Time of the union of instances (inside the selected windows), integrated up to the clock.
    window: Ns,
    /// Per GPU: (useful, communication) inside the instances.
    per_gpu: Vec<(Ns, Ns)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NvtxRangeRow {
    /// NVTX domain name; empty for the default domain.
    pub domain: String,
    pub name: String,
    pub count: u64,
    pub total_ns: u64,
    pub mean_ns: f64,
    /// Efficiency with T = time of the union of the instances (clipped to the selected windows).
    pub efficiency: Efficiency,
}

#[derive(Default)]
pub struct NvtxRanges {
    /// Interned name → slot, a cache in front of `by_name`.
    by_id: HashMap<(u32, NameId), usize>,
    by_name: HashMap<(u32, String), usize>,
    ranges: Vec<RangeAcc>,
    /// Indices of ranges whose window may still be open.
    active: Vec<usize>,
    gpus: usize,
}

impl NvtxRanges {
    pub fn new(gpus: usize) -> Self {
        NvtxRanges {
            gpus,
            ..Default::default()
        }
    }

    /// Names whose window may still be open (the per-piece cost).
    pub fn open_names(&self) -> usize {
        self.active.len()
    }

    pub fn distinct(&self) -> usize {
        self.ranges.len()
    }

    /// Integrates window time over `[from, to)`, during which no window changed, then forgets the
    /// windows closed by `to`. `sel` is the selected window set (whole trace when none).
    pub fn advance(&mut self, from: Ns, to: Ns, sel: OpenUntil) {
        let ranges = &mut self.ranges;
        self.active.retain(|&i| {
            let r = &mut ranges[i];
            r.window += sel.clip_end(r.open.clip_end(to)).saturating_sub(from);
            r.open.0 > to
        });
    }

    fn slot(&mut self, domain: u32, id: NameId, names: &Names) -> usize {
        if let Some(&i) = self.by_id.get(&(domain, id)) {
            return i;
        }
        let name = base_name(names.get(id)).to_owned();
        let gpus = self.gpus;
        let ranges = &mut self.ranges;
        let i = *self
            .by_name
            .entry((domain, name.clone()))
            .or_insert_with(|| {
                ranges.push(RangeAcc {
                    domain,
                    name,
                    count: 0,
                    total: 0,
                    seen: 0,
                    open: OpenUntil::default(),
                    window: 0,
                    per_gpu: vec![(0, 0); gpus],
                });
                ranges.len() - 1
            });
        self.by_id.insert((domain, id), i);
        i
    }

    /// A range starting now opens its name's window.
    pub fn open(&mut self, r: &NvtxRange, names: &Names) {
        let i = self.slot(r.domain, r.name, names);
        let acc = &mut self.ranges[i];
        acc.seen += 1;
        let was_open = acc.open.contains(r.start);
        acc.open.add(r.end);
        if !was_open && acc.open.contains(r.start) {
            self.active.push(i);
        }
    }

    /// Counts one instance (its full duration) in the name's statistics.
    pub fn count(&mut self, r: &NvtxRange, names: &Names) {
        let i = self.slot(r.domain, r.name, names);
        let acc = &mut self.ranges[i];
        acc.count += 1;
        acc.total += r.end.saturating_sub(r.start);
    }

    /// A piece `[a, b)` of one GPU's time (already clipped to the selected windows).
    pub fn piece(&mut self, gpu: usize, a: Ns, b: Ns, class: TimeClass) {
        if class == TimeClass::Idle {
            return;
        }
        for &i in &self.active {
            let r = &mut self.ranges[i];
            let len = r.open.clip_end(b).saturating_sub(a);
            let slot = &mut r.per_gpu[gpu];
            match class {
                TimeClass::Useful => slot.0 += len,
                _ => slot.1 += len,
            }
        }
    }

    /// Up to `limit` range names, most frequent first (to suggest a name the user may have meant).
    pub fn most_frequent(&self, limit: usize) -> Vec<String> {
        let mut v: Vec<&RangeAcc> = self.ranges.iter().collect();
        v.sort_by(|a, b| b.seen.cmp(&a.seen).then_with(|| a.name.cmp(&b.name)));
        let mut out: Vec<String> = Vec::new();
        for r in v {
            if out.len() == limit {
                break;
            }
            if !out.contains(&r.name) {
                out.push(r.name.clone());
            }
        }
        out
    }

    /// The `top` names by total time; `active_gpus` are the GPUs counted in N.
    pub fn rows(&self, active_gpus: &[usize], domains: &[String], top: usize) -> Vec<NvtxRangeRow> {
        let mut v: Vec<&RangeAcc> = self.ranges.iter().filter(|r| r.count > 0).collect();
        v.sort_by(|a, b| {
            b.total
                .cmp(&a.total)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.domain.cmp(&b.domain))
        });
        v.truncate(top);
        v.into_iter()
            .map(|r| {
                let times: Vec<GpuTimes> = active_gpus
                    .iter()
                    .map(|&g| GpuTimes {
                        useful: r.per_gpu[g].0,
                        active: r.per_gpu[g].0 + r.per_gpu[g].1,
                    })
                    .collect();
                NvtxRangeRow {
                    domain: domains.get(r.domain as usize).cloned().unwrap_or_default(),
                    name: r.name.clone(),
                    count: r.count,
                    total_ns: r.total,
                    mean_ns: r.total as f64 / r.count as f64,
                    efficiency: Efficiency::compute(&times, r.window),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::base_name;

    #[test]
    fn pytorch_call_fields_are_not_part_of_the_name() {
        assert_eq!(base_name("aten::copy_, op_id = 991065"), "aten::copy_");
        assert_eq!(
            base_name("aten::detach_, seq = 45328, op_id = 990724"),
            "aten::detach_"
        );
        assert_eq!(
            base_name("aten::mm, sizes = [[2, 3], [3, 4]], input_op_ids = [1]"),
            "aten::mm"
        );
        assert_eq!(base_name("forward, step 3"), "forward, step 3");
        assert_eq!(base_name("ncclSend"), "ncclSend");
    }
}
