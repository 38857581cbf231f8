//! Tensor-core and SM activity of GEMM kernels, from sampled GPU metrics (`--gpu-metrics-devices`):
//! every sample of a "Tensor Active" or "SM Active" metric that falls while GEMM kernels run on its
//! GPU is credited to those kernels (by name). Memory: the GEMM kernels running now per GPU and one
//! accumulator per (kernel name, metric) — never the samples themselves.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::{NameId, Names, Ns, ObjectModel, ThreadId, ThreadKind};

/// Which activity a metric measures, recognised by the names nsys gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Activity {
    Tensor,
    Sm,
}

fn activity_of(metric_name: &str) -> Option<Activity> {
    let n = metric_name.to_ascii_lowercase();
    if n.contains("tensor active") {
        Some(Activity::Tensor)
    } else if n.starts_with("sm active") {
        Some(Activity::Sm)
    } else {
        None
    }
}

#[derive(Default)]
pub struct GemmActivity {
    /// Metrics thread → GPU index.
    metric_gpu: HashMap<ThreadId, usize>,
    /// Per GPU, GEMM kernels running: (end, name).
    running: Vec<Vec<(Ns, NameId)>>,
    /// (kernel name, activity) → (sum of samples, number of samples).
    acc: BTreeMap<(NameId, Activity), (f64, u64)>,
    /// Metric name → activity (names are few; cached once each).
    kinds: HashMap<NameId, Option<Activity>>,
}

/// Average activity during one GEMM kernel name, over the samples taken while it ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GemmActivityRow {
    pub kernel: String,
    /// Mean of "Tensor Active" samples (percent), null without such samples.
    pub tensor_active_pct: Option<f64>,
    /// Mean of "SM Active" samples (percent), null without such samples.
    pub sm_active_pct: Option<f64>,
    /// Samples credited (all activities).
    pub samples: u64,
}

impl GemmActivity {
    pub fn new(objects: &ObjectModel) -> Self {
        let metric_gpu = objects
            .threads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.kind {
                ThreadKind::GpuMetrics { device } => Some((ThreadId(i as u32), device)),
                _ => None,
            })
            .collect();
        GemmActivity {
            metric_gpu,
            running: vec![Vec::new(); objects.devices.len()],
            ..Default::default()
        }
    }

    /// A GEMM kernel starting at `start` (kernels come in start order). Only kept while samples
    /// can still fall in it: never when the trace has no GPU metrics, and those that ended by
    /// `start` go (samples come in time order too), so memory follows the GEMMs running now.
    pub fn gemm_started(&mut self, gpu: usize, start: Ns, end: Ns, name: NameId) {
        if self.metric_gpu.is_empty() {
            return;
        }
        if let Some(r) = self.running.get_mut(gpu) {
            r.retain(|(e, _)| *e > start);
            r.push((end, name));
        }
    }

    /// GEMM kernels held as running, over all GPUs.
    pub fn running(&self) -> usize {
        self.running.iter().map(Vec::len).sum()
    }

    pub fn sample(
        &mut self,
        thread: ThreadId,
        time: Ns,
        metric: NameId,
        value: u64,
        names: &Names,
    ) {
        let Some(&gpu) = self.metric_gpu.get(&thread) else {
            return;
        };
        let Some(kind) = *self
            .kinds
            .entry(metric)
            .or_insert_with(|| activity_of(names.get(metric)))
        else {
            return;
        };
        let running = &mut self.running[gpu];
        running.retain(|(end, _)| *end > time);
        for (_, name) in running.iter() {
            let e = self.acc.entry((*name, kind)).or_insert((0.0, 0));
            e.0 += value as f64;
            e.1 += 1;
        }
    }

    pub fn rows(&self, names: &Names) -> Vec<GemmActivityRow> {
        let mut by_kernel: BTreeMap<NameId, GemmActivityRow> = BTreeMap::new();
        for ((name, kind), (sum, n)) in &self.acc {
            let row = by_kernel.entry(*name).or_insert_with(|| GemmActivityRow {
                kernel: names.get(*name).to_owned(),
                tensor_active_pct: None,
                sm_active_pct: None,
                samples: 0,
            });
            let mean = Some(sum / *n as f64);
            match kind {
                Activity::Tensor => row.tensor_active_pct = mean,
                Activity::Sm => row.sm_active_pct = mean,
            }
            row.samples += n;
        }
        let mut rows: Vec<GemmActivityRow> = by_kernel.into_values().collect();
        rows.sort_by(|a, b| {
            b.samples
                .cmp(&a.samples)
                .then_with(|| a.kernel.cmp(&b.kernel))
        });
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_are_recognised() {
        assert_eq!(
            activity_of("Tensor Active [Throughput %]"),
            Some(Activity::Tensor)
        );
        assert_eq!(activity_of("SM Active [Throughput %]"), Some(Activity::Sm));
        assert_eq!(activity_of("SM Issue [Throughput %]"), None);
        assert_eq!(activity_of("DRAM Read Bandwidth [Throughput %]"), None);
    }
}
