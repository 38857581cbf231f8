//! The device-side POP/TALP efficiency model: from per-GPU useful and active time over an elapsed
//! time T, the parallel efficiency and its three multiplicative factors.
//!
//! PE = Σuseful / (N·T) = LB × CommE × OrchE with LB = Σuseful / (N·max useful),
//! CommE = max useful / max active, OrchE = max active / T. A factor whose denominator is zero
//! (no GPU, T = 0, nothing useful, nothing active) is undefined and reported as `None`, never as a
//! made-up 0 or 1.

use serde::Serialize;

use crate::model::Ns;

/// Useful and active time of one GPU inside the measured time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuTimes {
    pub useful: Ns,
    pub active: Ns,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Efficiency {
    /// T: the measured time (whole trace, or total time of the selected windows).
    pub elapsed_ns: Ns,
    /// N: GPUs with any activity in the trace.
    pub gpus: usize,
    pub useful_sum_ns: u64,
    pub useful_max_ns: Ns,
    pub active_max_ns: Ns,
    pub parallel_efficiency: Option<f64>,
    pub load_balance: Option<f64>,
    pub communication_efficiency: Option<f64>,
    pub orchestration_efficiency: Option<f64>,
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

impl Efficiency {
    /// Factors over the GPUs given (the caller passes only GPUs with activity).
    pub fn compute(gpus: &[GpuTimes], elapsed: Ns) -> Efficiency {
        let n = gpus.len();
        // Sums stay exact integers; f64 holds them exactly below 2^53 ns (104 days × GPUs).
        let sum: u64 = gpus.iter().map(|g| g.useful).sum();
        let max_useful = gpus.iter().map(|g| g.useful).max().unwrap_or(0);
        let max_active = gpus.iter().map(|g| g.active).max().unwrap_or(0);
        let (s, nf) = (sum as f64, n as f64);
        // Without GPUs there is no device model at all: every factor is undefined.
        let t = if n == 0 { 0.0 } else { elapsed as f64 };
        Efficiency {
            elapsed_ns: elapsed,
            gpus: n,
            useful_sum_ns: sum,
            useful_max_ns: max_useful,
            active_max_ns: max_active,
            parallel_efficiency: ratio(s, nf * t),
            load_balance: ratio(s, nf * max_useful as f64),
            communication_efficiency: ratio(max_useful as f64, max_active as f64),
            orchestration_efficiency: ratio(max_active as f64, t),
        }
    }

    /// LB × CommE × OrchE, when all three are defined (equals PE up to rounding).
    pub fn product(&self) -> Option<f64> {
        Some(self.load_balance? * self.communication_efficiency? * self.orchestration_efficiency?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_multiply_to_parallel_efficiency() {
        let g = [
            GpuTimes {
                useful: 60,
                active: 80,
            },
            GpuTimes {
                useful: 40,
                active: 90,
            },
        ];
        let e = Efficiency::compute(&g, 100);
        assert_eq!(e.parallel_efficiency, Some(0.5));
        assert_eq!(e.load_balance, Some(100.0 / 120.0));
        assert_eq!(e.communication_efficiency, Some(60.0 / 90.0));
        assert_eq!(e.orchestration_efficiency, Some(0.9));
        let p = e.product().unwrap();
        assert!((p - 0.5).abs() <= 1e-12 * 0.5, "{p}");
    }

    #[test]
    fn undefined_factors_are_none() {
        let e = Efficiency::compute(&[], 100);
        assert_eq!(e.parallel_efficiency, None);
        assert_eq!(e.load_balance, None);
        assert_eq!(e.orchestration_efficiency, None);
        let idle = Efficiency::compute(&[GpuTimes::default()], 100);
        assert_eq!(idle.parallel_efficiency, Some(0.0));
        assert_eq!(idle.load_balance, None);
        assert_eq!(idle.communication_efficiency, None);
        assert_eq!(idle.orchestration_efficiency, Some(0.0));
        assert_eq!(idle.product(), None);
    }
}
