//! Per-kernel duration statistics (count, total, mean, min, max, standard deviation), overall and
//! per GPU. Memory grows with the number of distinct kernel names, never with the number of launches.

use serde::Serialize;

use super::category::Category;
use crate::model::{NameId, Names, Ns};
use crate::FastMap;

/// Running statistics of a series of durations (Welford's online algorithm: numerically stable,
/// one pass, O(1) memory). `total` stays an exact integer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Welford {
    pub count: u64,
    pub total: u64,
    mean: f64,
    m2: f64,
    pub min: Ns,
    pub max: Ns,
}

impl Welford {
    pub fn add(&mut self, x: Ns) {
        if self.count == 0 {
            self.min = x;
            self.max = x;
        }
        self.count += 1;
        self.total += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let xf = x as f64;
        let delta = xf - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (xf - self.mean);
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample standard deviation (divides by n−1, as `nsys stats` does); 0 for a single value.
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            (self.m2 / (self.count - 1) as f64).sqrt()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelRow {
    /// Demangled name.
    pub name: String,
    pub short_name: String,
    pub category: Category,
    pub count: u64,
    pub total_ns: u64,
    pub mean_ns: f64,
    pub min_ns: Ns,
    pub max_ns: Ns,
    pub stddev_ns: f64,
    /// total_ns / busy time (time with any GPU operation running) of the same scope, in %.
    pub percent_of_busy: Option<f64>,
}

#[derive(Default)]
pub struct KernelStats {
    overall: FastMap<NameId, Welford>,
    per_gpu: FastMap<(usize, NameId), Welford>,
    info: FastMap<NameId, (NameId, Category)>,
}

impl KernelStats {
    pub fn add(&mut self, gpu: usize, name: NameId, short: NameId, cat: Category, dur: Ns) {
        self.overall.entry(name).or_default().add(dur);
        self.per_gpu.entry((gpu, name)).or_default().add(dur);
        self.info.entry(name).or_insert((short, cat));
    }

    pub fn distinct(&self) -> usize {
        self.overall.len()
    }

    /// Launches of kernels whose category is `cat` on `gpu`.
    pub fn count_on(&self, gpu: usize, cat: Category) -> u64 {
        self.per_gpu
            .iter()
            .filter(|((g, n), _)| *g == gpu && self.info[n].1 == cat)
            .map(|(_, w)| w.count)
            .sum()
    }

    fn rows<'a>(
        &self,
        it: impl Iterator<Item = (NameId, &'a Welford)>,
        busy: Ns,
        top: usize,
        names: &Names,
    ) -> Vec<KernelRow> {
        let mut v: Vec<(NameId, &Welford)> = it.collect();
        // Largest total first; ties by name so that the output is deterministic.
        v.sort_by(|a, b| {
            b.1.total
                .cmp(&a.1.total)
                .then_with(|| names.get(a.0).cmp(names.get(b.0)))
        });
        v.truncate(top);
        v.into_iter()
            .map(|(n, w)| {
                let (short, category) = self.info[&n];
                KernelRow {
                    name: names.get(n).to_owned(),
                    short_name: names.get(short).to_owned(),
                    category,
                    count: w.count,
                    total_ns: w.total,
                    mean_ns: w.mean(),
                    min_ns: w.min,
                    max_ns: w.max,
                    stddev_ns: w.stddev(),
                    percent_of_busy: (busy > 0).then(|| 100.0 * w.total as f64 / busy as f64),
                }
            })
            .collect()
    }

    /// The `top` kernels by total time over all GPUs.
    pub fn overall_rows(&self, busy: Ns, top: usize, names: &Names) -> Vec<KernelRow> {
        self.rows(self.overall.iter().map(|(k, w)| (*k, w)), busy, top, names)
    }

    /// The `top` kernels by total time on one GPU.
    pub fn gpu_rows(&self, gpu: usize, busy: Ns, top: usize, names: &Names) -> Vec<KernelRow> {
        let it = self
            .per_gpu
            .iter()
            .filter(|((g, _), _)| *g == gpu)
            .map(|((_, n), w)| (*n, w));
        self.rows(it, busy, top, names)
    }

    /// Distinct kernel names seen on one GPU.
    pub fn distinct_on(&self, gpu: usize) -> usize {
        self.per_gpu.keys().filter(|(g, _)| *g == gpu).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welford_matches_two_pass_formulas() {
        let xs = [1_000u64, 3_000, 3_000, 7_000, 11_000];
        let mut w = Welford::default();
        for x in xs {
            w.add(x);
        }
        assert_eq!((w.count, w.total, w.min, w.max), (5, 25_000, 1_000, 11_000));
        // Incremental means are not exact in binary; allow rounding only.
        assert!(
            (w.mean() - 5_000.0).abs() <= 5_000.0 * 1e-15,
            "{}",
            w.mean()
        );
        // Σ(x−mean)² = 16e6+4e6+4e6+4e6+36e6 = 64e6; sample variance = 64e6/4 = 16e6.
        assert!(
            (w.stddev() - 4_000.0).abs() <= 4_000.0 * 1e-12,
            "{}",
            w.stddev()
        );
        let mut one = Welford::default();
        one.add(42);
        assert_eq!((one.mean(), one.stddev()), (42.0, 0.0));
    }

    #[test]
    fn welford_is_stable_far_from_zero() {
        // Large offset, small spread: the naive Σx² − n·mean² formula loses every digit here.
        let base = 1u64 << 40;
        let mut w = Welford::default();
        for d in [4u64, 7, 13, 16] {
            w.add(base + d);
        }
        // deviations from the mean (10): −6, −3, 3, 6 → Σ = 90, sample var = 30.
        assert!((w.stddev() - 30f64.sqrt()).abs() < 1e-9, "{}", w.stddev());
    }

    #[test]
    fn rows_sort_by_total_and_keep_top() {
        let mut names = Names::new();
        let a = names.intern("a(int)");
        let b = names.intern("b(int)");
        let sa = names.intern("a");
        let sb = names.intern("b");
        let mut k = KernelStats::default();
        k.add(0, a, sa, Category::Gemm, 10);
        k.add(1, a, sa, Category::Gemm, 30);
        k.add(0, b, sb, Category::Elementwise, 25);
        let rows = k.overall_rows(100, 10, &names);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].short_name.as_str(), rows[0].total_ns), ("a", 40));
        assert_eq!(rows[0].percent_of_busy, Some(40.0));
        let g0 = k.gpu_rows(0, 50, 1, &names);
        assert_eq!(g0.len(), 1);
        assert_eq!(
            (g0[0].name.as_str(), g0[0].percent_of_busy),
            ("b(int)", Some(50.0))
        );
        assert_eq!(k.count_on(1, Category::Gemm), 1);
        assert_eq!(k.distinct_on(0), 2);
    }
}
