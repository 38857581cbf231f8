//! Memory transfers per GPU and direction (memcpy kind, memset): count, bytes, time, and the
//! bandwidth they achieved beside the device's own memory bandwidth, so that "memory 97 %"
//! becomes "97 % host-to-device copies at 11 GB/s".

use serde::Serialize;

use super::category::Category;
use crate::model::{Ns, ObjectModel};

/// The directions followed, in report order.
pub const DIRECTIONS: [Category; 7] = [
    Category::MemcpyHtoD,
    Category::MemcpyDtoH,
    Category::MemcpyDtoD,
    Category::MemcpyPeer,
    Category::MemcpyUnified,
    Category::MemcpyOther,
    Category::Memset,
];

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Acc {
    count: u64,
    bytes: u64,
    time: Ns,
}

/// Per GPU and direction, the operations starting inside the measured time.
#[derive(Default)]
pub struct Transfers {
    per_gpu: Vec<[Acc; DIRECTIONS.len()]>,
}

impl Transfers {
    pub fn new(gpus: usize) -> Transfers {
        Transfers {
            per_gpu: vec![[Acc::default(); DIRECTIONS.len()]; gpus],
        }
    }

    /// A memory operation of `category` on `gpu`: `bytes` in `time` ns.
    pub fn add(&mut self, gpu: usize, category: Category, bytes: u64, time: Ns) {
        if let Some(k) = DIRECTIONS.iter().position(|&c| c == category) {
            let a = &mut self.per_gpu[gpu][k];
            a.count += 1;
            a.bytes = a.bytes.saturating_add(bytes);
            a.time += time;
        }
    }

    /// One row per GPU and direction with operations, GPUs in object order.
    pub fn rows(&self, objects: &ObjectModel) -> Vec<TransferRow> {
        let mut out = Vec::new();
        for (g, accs) in self.per_gpu.iter().enumerate() {
            for (k, a) in accs.iter().enumerate().filter(|(_, a)| a.count > 0) {
                out.push(TransferRow {
                    gpu: g,
                    direction: DIRECTIONS[k],
                    count: a.count,
                    bytes: a.bytes,
                    time_ns: a.time,
                    bandwidth_bytes_per_s: (a.time > 0)
                        .then(|| a.bytes as f64 * 1e9 / a.time as f64),
                    device_bandwidth_bytes_per_s: objects.devices[g].memory_bandwidth,
                });
            }
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TransferRow {
    /// Index into `gpus`.
    pub gpu: usize,
    /// `memcpy_htod`, `memcpy_dtoh`, `memcpy_dtod`, `memcpy_peer`, `memcpy_unified`,
    /// `memcpy_other` or `memset`.
    pub direction: Category,
    pub count: u64,
    pub bytes: u64,
    /// Sum of the operations' durations (operations that overlap count each).
    pub time_ns: Ns,
    /// bytes / time: what the operations achieved while they ran.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// The device's memory bandwidth, when the export lists it: the bound for device-side
    /// copies; host copies are bound by the host link (PCIe, NVLink-C2C) instead.
    pub device_bandwidth_bytes_per_s: Option<u64>,
}
