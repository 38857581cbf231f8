//! Paraver states written by prvsight. Numbers and labels follow Extrae's (so Paraver's colours and
//! the `Useful` function, state 1, mean the same), with the GPU meanings documented alongside.

use crate::model::{GpuOpKind, HostActivity, KernelClass};

pub const IDLE: u32 = 0;
/// Host: running outside traced calls. GPU stream: running a compute kernel.
pub const RUNNING: u32 = 1;
/// Host: blocked in a CUDA call that waits for the GPU.
pub const SYNCHRONIZATION: u32 = 5;
/// GPU stream: running a communication kernel (NCCL).
pub const GROUP_COMMUNICATION: u32 = 13;
/// GPU stream: memcpy/memset.
pub const MEMORY_TRANSFER: u32 = 17;
/// Host: inside a CUDA API call that does not wait (launch, malloc...).
pub const CUDA_API: u32 = 24;

/// (state, label, colour) in the order written to the .pcf.
pub const STATES: &[(u32, &str, (u8, u8, u8))] = &[
    (IDLE, "Idle", (117, 195, 255)),
    (RUNNING, "Running", (0, 0, 255)),
    (SYNCHRONIZATION, "Synchronization", (255, 0, 0)),
    (
        GROUP_COMMUNICATION,
        "Group Communication (NCCL kernel)",
        (255, 144, 26),
    ),
    (MEMORY_TRANSFER, "Memory transfer", (0, 255, 0)),
    (CUDA_API, "Inside CUDA API call", (255, 255, 0)),
];

pub fn of_gpu_op(kind: &GpuOpKind) -> u32 {
    match kind {
        GpuOpKind::Kernel(k) if k.class == KernelClass::Communication => GROUP_COMMUNICATION,
        GpuOpKind::Kernel(_) => RUNNING,
        GpuOpKind::Memcpy(_) | GpuOpKind::Memset(_) => MEMORY_TRANSFER,
    }
}

pub fn of_host(activity: HostActivity) -> u32 {
    match activity {
        HostActivity::CudaApi => CUDA_API,
        HostActivity::CudaSync => SYNCHRONIZATION,
    }
}
