//! Time classes of one GPU, accumulated from sweep pieces: useful, communication (not overlapped by
//! useful), the exclusive split by category, and the communication/computation overlap profile.

use super::category::NCAT;
use super::sweep::Running;
use super::NcclAs;
use crate::model::Ns;

/// What an instant of one GPU counts as in the efficiency model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeClass {
    Useful,
    Comm,
    Idle,
}

pub fn time_class(r: &Running, nccl_as: NcclAs) -> TimeClass {
    if r.useful(nccl_as) > 0 {
        TimeClass::Useful
    } else if r.comm(nccl_as) > 0 {
        TimeClass::Comm
    } else {
        TimeClass::Idle
    }
}

/// Useful and communication time of one GPU, not clipped to any window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuTotals {
    pub useful: Ns,
    pub comm: Ns,
}

impl GpuTotals {
    pub fn add(&mut self, len: Ns, class: TimeClass) {
        match class {
            TimeClass::Useful => self.useful += len,
            TimeClass::Comm => self.comm += len,
            TimeClass::Idle => {}
        }
    }

    /// These totals plus `len` of `class`.
    pub fn plus(mut self, len: Ns, class: TimeClass) -> GpuTotals {
        self.add(len, class);
        self
    }

    /// The time from `earlier` to these totals.
    pub fn since(self, earlier: GpuTotals) -> GpuTotals {
        GpuTotals {
            useful: self.useful - earlier.useful,
            comm: self.comm - earlier.comm,
        }
    }
}

/// Buckets of the overlap profile: communication time with 0, 1, 2, 3+ useful kernels running.
pub const OVERLAP_BUCKETS: usize = 4;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuAcc {
    pub useful: Ns,
    /// Communication time not overlapped by useful work.
    pub comm: Ns,
    /// Time owned by each category (the highest-priority one running), in `Category::ALL` order.
    pub exclusive: [Ns; NCAT],
    /// Time with at least one communication operation running, by useful operations running:
    /// 0, 1, 2, 3 or more. Bucket 0 equals `comm`.
    pub overlap: [Ns; OVERLAP_BUCKETS],
}

impl GpuAcc {
    pub fn add(&mut self, len: Ns, r: &Running, nccl_as: NcclAs) {
        let useful = r.useful(nccl_as);
        let comm = r.comm(nccl_as);
        if useful > 0 {
            self.useful += len;
        } else if comm > 0 {
            self.comm += len;
        }
        if comm > 0 {
            self.overlap[(useful as usize).min(OVERLAP_BUCKETS - 1)] += len;
        }
        if let Some(c) = r.top() {
            self.exclusive[c.index()] += len;
        }
    }

    pub fn active(&self) -> Ns {
        self.useful + self.comm
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::category::Category;

    #[test]
    fn overlapped_communication_is_useful_time() {
        let mut r = Running::default();
        let mut a = GpuAcc::default();
        r.n[Category::Nccl.index()] = 1;
        a.add(10, &r, NcclAs::Communication);
        r.n[Category::Gemm.index()] = 1;
        r.n[Category::Elementwise.index()] = 3;
        a.add(5, &r, NcclAs::Communication);
        assert_eq!((a.useful, a.comm), (5, 10));
        assert_eq!(a.overlap, [10, 0, 0, 5]);
        assert_eq!(a.exclusive[Category::Nccl.index()], 10);
        assert_eq!(a.exclusive[Category::Gemm.index()], 5);
        let mut t = GpuAcc::default();
        t.add(7, &r, NcclAs::Useful);
        assert_eq!((t.useful, t.comm, t.overlap), (7, 0, [0; 4]));
        assert_eq!(
            time_class(&Running::default(), NcclAs::Useful),
            TimeClass::Idle
        );
    }
}
