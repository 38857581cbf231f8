//! Classification rules kept in one place: which kernels are communication, which CUDA calls block
//! the host. Every sink uses these, so a trace and its metrics always agree.

use super::{HostActivity, KernelClass, MpiClass};

/// Name prefixes of kernels that move data between GPUs rather than compute.
const COMMUNICATION_KERNEL_PREFIXES: &[&str] = &["nccl", "rccl", "nvshmem"];

pub fn kernel_class(demangled: &str, short: &str) -> KernelClass {
    let is_comm = |n: &str| {
        // (`trim_start_matches` builds a substring searcher per call, which showed in profiles.)
        let mut n = n;
        while let Some(rest) = n.strip_prefix("void ") {
            n = rest;
        }
        COMMUNICATION_KERNEL_PREFIXES
            .iter()
            .any(|p| n.starts_with(p))
    };
    if is_comm(short) || is_comm(demangled) {
        KernelClass::Communication
    } else {
        KernelClass::Compute
    }
}

/// CUDA calls that wait for the device: the host thread is blocked, not computing.
const BLOCKING_CUDA_CALLS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaThreadSynchronize",
    "cudaStreamQuery",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cudaMemcpy3D",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemset",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuMemcpy",
    "cuMemcpyHtoD",
    "cuMemcpyDtoH",
    "cuMemcpyDtoD",
    "cuMemcpy2D",
    "cuMemcpy3D",
];

/// Activity of a host thread inside the CUDA call `name` (version suffix already removed).
pub fn cuda_call_activity(name: &str) -> HostActivity {
    if BLOCKING_CUDA_CALLS.contains(&name) {
        HostActivity::CudaSync
    } else {
        HostActivity::CudaApi
    }
}

/// nsys appends the API version to names (`cudaLaunchKernel_v7000`, `cuMemcpyDtoH_v2`); drop it.
pub fn strip_api_version(name: &str) -> &str {
    if let Some(pos) = name.rfind("_v") {
        let digits = &name[pos + 2..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return &name[..pos];
        }
    }
    name
}

/// Activity of a thread inside MPI call `name` of class `class`.
pub fn mpi_activity(name: &str, class: MpiClass) -> HostActivity {
    let n = name.to_ascii_lowercase();
    let n = n.trim_start_matches("mpi_");
    match class {
        MpiClass::Collective => HostActivity::MpiCollective,
        MpiClass::StartWait | MpiClass::Other | MpiClass::PointToPoint => {
            if n.starts_with("sendrecv") {
                HostActivity::MpiSendRecv
            } else if n.starts_with("wait") {
                HostActivity::MpiWait
            } else if n.starts_with("test") || n.contains("probe") {
                HostActivity::MpiTest
            } else if matches!(n, "isend" | "ibsend" | "issend" | "irsend") {
                HostActivity::MpiImmediateSend
            } else if n == "irecv" || n == "imrecv" {
                HostActivity::MpiImmediateRecv
            } else if n.ends_with("send") {
                HostActivity::MpiSend
            } else if n.ends_with("recv") {
                HostActivity::MpiRecv
            } else if class == MpiClass::Other && MPI_COLLECTIVE_NAMES.contains(&n) {
                HostActivity::MpiCollective
            } else {
                HostActivity::MpiOther
            }
        }
    }
}

/// Collectives by name, for MPI calls seen as NVTX ranges (nsys 2022), which carry no table class.
const MPI_COLLECTIVE_NAMES: &[&str] = &[
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
    "alltoallw",
    "gather",
    "gatherv",
    "scatter",
    "scatterv",
    "allgather",
    "allgatherv",
    "reduce_scatter",
    "reduce_scatter_block",
    "scan",
    "exscan",
    "ibarrier",
    "ibcast",
    "ireduce",
    "iallreduce",
    "ialltoall",
    "ialltoallv",
    "igather",
    "igatherv",
    "iscatter",
    "iscatterv",
    "iallgather",
    "iallgatherv",
    "ireduce_scatter",
    "iscan",
    "iexscan",
];

/// OS calls that wait for something else to happen.
const BLOCKING_OS_CALLS: &[&str] = &[
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_wait",
    "epoll_pwait",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_mutex_lock",
    "pthread_mutex_timedlock",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock",
    "pthread_spin_lock",
    "pthread_join",
    "pthread_barrier_wait",
    "sem_wait",
    "sem_timedwait",
    "futex",
    "nanosleep",
    "clock_nanosleep",
    "usleep",
    "sleep",
    "wait",
    "waitpid",
    "waitid",
    "accept",
    "accept4",
    "sigwait",
    "sigtimedwait",
    "msgrcv",
    "flock",
];

/// OS calls that read or write files, pipes or sockets.
const IO_OS_CALLS: &[&str] = &[
    "read",
    "write",
    "pread",
    "pread64",
    "pwrite",
    "pwrite64",
    "readv",
    "writev",
    "preadv",
    "pwritev",
    "open",
    "open64",
    "openat",
    "openat64",
    "close",
    "fopen",
    "fopen64",
    "fclose",
    "fread",
    "fwrite",
    "fgets",
    "fputs",
    "fflush",
    "fsync",
    "fdatasync",
    "sync",
    "stat",
    "stat64",
    "lstat",
    "fstat",
    "fstat64",
    "fstatat",
    "statx",
    "lseek",
    "lseek64",
    "recv",
    "recvfrom",
    "recvmsg",
    "send",
    "sendto",
    "sendmsg",
    "connect",
    "mmap",
    "mmap64",
    "munmap",
    "unlink",
    "mkdir",
    "getdents64",
    "ioctl",
    "fcntl",
    "dup",
    "dup2",
    "pipe",
    "pipe2",
    "socket",
    "bind",
    "listen",
    "shutdown",
];

pub fn os_call_activity(name: &str) -> HostActivity {
    if BLOCKING_OS_CALLS.contains(&name) {
        HostActivity::OsBlocked
    } else if IO_OS_CALLS.contains(&name) {
        HostActivity::OsIo
    } else {
        HostActivity::OsOther
    }
}

/// Activity inside an OpenACC event of ENUM_OPENACC_EVENT_KIND id `kind` (7 wait, 8 implicit wait).
pub fn acc_activity(kind: u32) -> HostActivity {
    if kind == 7 || kind == 8 {
        HostActivity::OpenAccWait
    } else {
        HostActivity::OpenAcc
    }
}

/// ENUM_OPENACC_EVENT_KIND labels by id, as nsys exports write them.
pub const ACC_EVENT_KINDS: &[&str] = &[
    "Invalid",
    "Device init",
    "Device shutdown",
    "Runtime shutdown",
    "Enqueue launch",
    "Enqueue upload",
    "Enqueue download",
    "Wait",
    "Implicit wait",
    "Compute construct",
    "UPDATE",
    "Enter data",
    "Exit data",
    "Create",
    "Delete",
    "Alloc",
    "Free",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_version_suffixes_only() {
        assert_eq!(
            strip_api_version("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(strip_api_version("cuMemcpyDtoH_v2"), "cuMemcpyDtoH");
        assert_eq!(strip_api_version("cudaMalloc"), "cudaMalloc");
        assert_eq!(strip_api_version("cuda_vx"), "cuda_vx");
    }

    #[test]
    fn nccl_kernels_are_communication() {
        let n =
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)";
        assert_eq!(
            kernel_class(n, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
            KernelClass::Communication
        );
        assert_eq!(
            kernel_class("void gemm<float>(int)", "gemm"),
            KernelClass::Compute
        );
    }

    #[test]
    fn mpi_calls_get_extrae_like_activities() {
        assert_eq!(
            mpi_activity("MPI_Recv", MpiClass::PointToPoint),
            HostActivity::MpiRecv
        );
        assert_eq!(
            mpi_activity("MPI_Isend", MpiClass::PointToPoint),
            HostActivity::MpiImmediateSend
        );
        assert_eq!(
            mpi_activity("MPI_Waitall", MpiClass::StartWait),
            HostActivity::MpiWait
        );
        assert_eq!(
            mpi_activity("MPI_Allreduce", MpiClass::Collective),
            HostActivity::MpiCollective
        );
        assert_eq!(
            mpi_activity("MPI_Allreduce", MpiClass::Other),
            HostActivity::MpiCollective
        );
        assert_eq!(
            mpi_activity("MPI_Init", MpiClass::Other),
            HostActivity::MpiOther
        );
        assert_eq!(
            os_call_activity("pthread_cond_wait"),
            HostActivity::OsBlocked
        );
        assert_eq!(os_call_activity("read"), HostActivity::OsIo);
    }

    #[test]
    fn synchronizing_calls_block() {
        assert_eq!(
            cuda_call_activity("cudaStreamSynchronize"),
            HostActivity::CudaSync
        );
        assert_eq!(
            cuda_call_activity("cudaLaunchKernel"),
            HostActivity::CudaApi
        );
    }
}
