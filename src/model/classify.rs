//! Classification rules kept in one place: which kernels are communication, which CUDA calls block
//! the host. Every sink uses these, so a trace and its metrics always agree.

use super::{HostActivity, KernelClass};

/// Name prefixes of kernels that move data between GPUs rather than compute.
const COMMUNICATION_KERNEL_PREFIXES: &[&str] = &["nccl", "rccl", "nvshmem"];

pub fn kernel_class(demangled: &str, short: &str) -> KernelClass {
    let is_comm = |n: &str| {
        let n = n.trim_start_matches("void ");
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
