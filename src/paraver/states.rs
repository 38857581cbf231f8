//! Paraver states written by prvsight. Numbers and labels follow Extrae's (so Paraver's colours and
//! the `Useful` function, state 1, mean the same), with the GPU meanings documented alongside.

use crate::model::{GpuOpKind, HostActivity, KernelClass};

pub const IDLE: u32 = 0;
/// Host: running outside traced calls. GPU stream: running a compute kernel.
pub const RUNNING: u32 = 1;
/// Host: blocked in a CUDA call that waits for the GPU.
pub const SYNCHRONIZATION: u32 = 5;
/// GPU stream: running a communication kernel (NCCL); host: inside an MPI collective.
pub const GROUP_COMMUNICATION: u32 = 13;
/// GPU stream: memcpy/memset.
pub const MEMORY_TRANSFER: u32 = 17;
/// Host: inside a CUDA API call that does not wait (launch, malloc...).
pub const CUDA_API: u32 = 24;
/// Host MPI and OS runtime states (Extrae's numbers).
pub const WAITING_A_MESSAGE: u32 = 3;
pub const BLOCKING_SEND: u32 = 4;
pub const TEST_PROBE: u32 = 6;
pub const WAIT_WAITALL: u32 = 8;
pub const BLOCKED: u32 = 9;
pub const IMMEDIATE_SEND: u32 = 10;
pub const IMMEDIATE_RECEIVE: u32 = 11;
pub const IO: u32 = 12;
pub const OTHERS: u32 = 15;
pub const SEND_RECEIVE: u32 = 16;
/// Host: inside an OS runtime call that neither blocks nor does I/O.
pub const SYSTEM_CALL: u32 = 25;
/// Host: inside the OpenACC runtime.
pub const OPENACC: u32 = 26;

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
    (WAITING_A_MESSAGE, "Waiting a message", (255, 0, 0)),
    (BLOCKING_SEND, "Blocking Send", (255, 0, 174)),
    (TEST_PROBE, "Test/Probe", (0, 109, 255)),
    (WAIT_WAITALL, "Wait/WaitAll", (235, 0, 0)),
    (BLOCKED, "Blocked (OS call)", (100, 100, 177)),
    (IMMEDIATE_SEND, "Immediate Send", (172, 174, 41)),
    (IMMEDIATE_RECEIVE, "Immediate Receive", (255, 102, 0)),
    (IO, "I/O", (0, 162, 0)),
    (OTHERS, "Others (MPI)", (192, 224, 0)),
    (SEND_RECEIVE, "Send Receive", (255, 170, 0)),
    (SYSTEM_CALL, "Inside OS runtime call", (180, 180, 180)),
    (OPENACC, "Inside OpenACC runtime", (200, 100, 255)),
];

pub fn of_gpu_op(kind: &GpuOpKind) -> u32 {
    match kind {
        GpuOpKind::Kernel(k) if k.class == KernelClass::Communication => GROUP_COMMUNICATION,
        GpuOpKind::Kernel(_) | GpuOpKind::Graph(_) => RUNNING,
        GpuOpKind::Memcpy(_) | GpuOpKind::Memset(_) => MEMORY_TRANSFER,
    }
}

pub fn of_host(activity: HostActivity) -> u32 {
    match activity {
        HostActivity::CudaApi => CUDA_API,
        HostActivity::CudaSync => SYNCHRONIZATION,
        HostActivity::MpiSend => BLOCKING_SEND,
        HostActivity::MpiRecv => WAITING_A_MESSAGE,
        HostActivity::MpiImmediateSend => IMMEDIATE_SEND,
        HostActivity::MpiImmediateRecv => IMMEDIATE_RECEIVE,
        HostActivity::MpiSendRecv => SEND_RECEIVE,
        HostActivity::MpiWait => WAIT_WAITALL,
        HostActivity::MpiTest => TEST_PROBE,
        HostActivity::MpiCollective => GROUP_COMMUNICATION,
        HostActivity::MpiOther => OTHERS,
        HostActivity::OsBlocked => BLOCKED,
        HostActivity::OsIo => IO,
        HostActivity::OsOther => SYSTEM_CALL,
        HostActivity::OpenAcc => OPENACC,
        HostActivity::OpenAccWait => SYNCHRONIZATION,
    }
}
