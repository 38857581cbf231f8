//! Per NVTX range name: instance count and durations, and the device efficiency *inside* the
//! instances (the union of all instances of the name is the window, as for `--nvtx-range`).
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

struct RangeAcc {
    domain: u32,
    name: NameId,
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
    index: HashMap<(u32, NameId), usize>,
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

    fn slot(&mut self, domain: u32, name: NameId) -> usize {
        let gpus = self.gpus;
        let ranges = &mut self.ranges;
        *self.index.entry((domain, name)).or_insert_with(|| {
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
        })
    }

    /// A range starting now opens its name's window.
    pub fn open(&mut self, r: &NvtxRange) {
        let i = self.slot(r.domain, r.name);
        let acc = &mut self.ranges[i];
        acc.seen += 1;
        let was_open = acc.open.contains(r.start);
        acc.open.add(r.end);
        if !was_open && acc.open.contains(r.start) {
            self.active.push(i);
        }
    }

    /// Counts one instance (its full duration) in the name's statistics.
    pub fn count(&mut self, r: &NvtxRange) {
        let i = self.slot(r.domain, r.name);
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
    pub fn most_frequent(&self, names: &Names, limit: usize) -> Vec<String> {
        let mut v: Vec<&RangeAcc> = self.ranges.iter().collect();
        v.sort_by(|a, b| {
            b.seen
                .cmp(&a.seen)
                .then_with(|| names.get(a.name).cmp(names.get(b.name)))
        });
        let mut out: Vec<String> = Vec::new();
        for r in v {
            let n = names.get(r.name);
            if out.len() == limit {
                break;
            }
            if !out.iter().any(|o| o == n) {
                out.push(n.to_owned());
            }
        }
        out
    }

    /// The `top` names by total time; `active_gpus` are the GPUs counted in N.
    pub fn rows(
        &self,
        active_gpus: &[usize],
        domains: &[String],
        names: &Names,
        top: usize,
    ) -> Vec<NvtxRangeRow> {
        let mut v: Vec<&RangeAcc> = self.ranges.iter().filter(|r| r.count > 0).collect();
        v.sort_by(|a, b| {
            b.total
                .cmp(&a.total)
                .then_with(|| names.get(a.name).cmp(names.get(b.name)))
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
                    name: names.get(r.name).to_owned(),
                    count: r.count,
                    total_ns: r.total,
                    mean_ns: r.total as f64 / r.count as f64,
                    efficiency: Efficiency::compute(&times, r.window),
                }
            })
            .collect()
    }
}
