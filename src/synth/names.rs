//! Realistic kernel names. Where a real export shows the kernel (mfu_2gpu_before.sqlite: PyTorch
//! 2.x, flash-attention 2, NCCL 2.25 on H100) its three names are copied; the others follow the
//! same library's naming scheme. NCCL kernel names are composed the way NCCL builds them
//! (`ncclDevKernel_<Coll>[_<RedOp>_<type>]_<ALGO>_<PROTO>`), for two kernel ABIs.

use super::rows::{Cluster, KernelDef};

/// cuBLAS sm90 xmma GEMM (`extern "C"`, so all three names are equal).
pub fn cublas_gemm(layout: &str, tile: &str, warpgroups: &str) -> KernelDef {
    let name = format!(
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_{layout}_n_tilesize{tile}_warpgroupsize{warpgroups}_execute_segment_k_off_kernel__5x_cublas"
    );
    KernelDef {
        // Cluster launch values of the real nvjet GEMM rows (cuBLAS on H100).
        cluster: Cluster {
            dims: [2, 1, 1],
            max_potential: 16,
            max_active: 66,
        },
        ..KernelDef::plain(&name, 168, 0, 213_196)
    }
}

/// flash-attention 2 forward (real row of mfu_2gpu_before.sqlite).
pub fn flash_fwd() -> KernelDef {
    KernelDef {
        demangled: "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)1, (bool)0, (bool)0>(flash::Flash_fwd_params)".into(),
        short: "flash_fwd_kernel".into(),
        mangled: Some("_ZN5flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi128ELi64ELi4ES3_EELb0ELb0ELb0ELb0ELb0ELb1ELb0ELb0EEEvNS_16Flash_fwd_paramsE".into()),
        registers: 255,
        static_smem: 0,
        dynamic_smem: 65_536,
        cluster: Cluster::NONE,
        // The real row shows a 132 KiB carveout (two blocks per SM).
        smem_executed: Some(135_168),
    }
}

/// flash-attention 2 backward, mangled by the same rules as the real forward kernel above.
pub fn flash_bwd() -> KernelDef {
    KernelDef {
        demangled: "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<(int)128, (int)64, (int)128, (int)8, (int)2, (int)4, (int)2, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)64, (int)128, (int)8, cutlass::bfloat16_t>>, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0>(flash::Flash_bwd_params)".into(),
        short: "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel".into(),
        mangled: Some("_ZN5flash44flash_bwd_dq_dk_dv_loop_seqk_parallel_kernelI23Flash_bwd_kernel_traitsILi128ELi64ELi128ELi8ELi2ELi4ELi2ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi64ELi128ELi8ES3_EELb0ELb0ELb0ELb0ELb0ELb0ELb0ELb0EEEvNS_16Flash_bwd_paramsE".into()),
        registers: 255,
        static_smem: 0,
        dynamic_smem: 114_688,
        cluster: Cluster::NONE,
        smem_executed: None,
    }
}

/// Elementwise add (real row).
pub fn elementwise_add() -> KernelDef {
    KernelDef {
        demangled: "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, std::array<char *, (unsigned long)3>>(int, T2, T3)".into(),
        short: "vectorized_elementwise_kernel".into(),
        mangled: Some("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_".into()),
        registers: 32,
        static_smem: 0,
        dynamic_smem: 0,
        cluster: Cluster::NONE,
        smem_executed: None,
    }
}

/// Layer norm (real row).
pub fn layer_norm() -> KernelDef {
    KernelDef {
        demangled: "void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)".into(),
        short: "vectorized_layer_norm_kernel".into(),
        mangled: Some("_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_kernelIffLb0EEEviT0_PKT_S6_S6_PS3_S7_PS4_".into()),
        registers: 39,
        static_smem: 0,
        dynamic_smem: 24,
        cluster: Cluster::NONE,
        smem_executed: None,
    }
}

/// Mean reduction, the loss (real row).
pub fn reduce_mean() -> KernelDef {
    KernelDef {
        demangled: "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, (int)4, (int)4>>(T3)".into(),
        short: "reduce_kernel".into(),
        mangled: Some("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_".into()),
        registers: 32,
        static_smem: 16,
        dynamic_smem: 0,
        cluster: Cluster::NONE,
        smem_executed: Some(16_384),
    }
}

/// PyTorch's fused Adam step. Its mangled name (lambdas, many template arguments) is not
/// reproduced: the nullable column is left NULL rather than filled with a wrong mangling.
pub fn fused_adam() -> KernelDef {
    KernelDef {
        demangled: "void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)4>, at::native::<unnamed>::FusedAdamMathFunctor<float, (int)4, (at::native::ADAM_MODE)1, (bool)0>, double *, double, double, double, double, double, bool, bool, float *, float *>(T1, T2, T3...)".into(),
        short: "multi_tensor_apply_kernel".into(),
        mangled: None,
        registers: 96,
        static_smem: 0,
        dynamic_smem: 0,
        cluster: Cluster::NONE,
        smem_executed: None,
    }
}

/// Generations of NCCL's device-kernel signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcclAbi {
    /// NCCL 2.19–2.20: `(ncclDevComm *, unsigned long, ncclWork *)`.
    V2_19,
    /// NCCL ≥ 2.21 (2.25 in mfu_2gpu_before.sqlite): `(ncclDevKernelArgsStorage<(unsigned long)4096>)`.
    V2_25,
}

/// An NCCL device kernel. `op_type` is `Some(("Sum", "bf16"))` for reducing collectives;
/// `algo_proto` is `Some(("RING", "LL"))` for collectives, `None` for SendRecv.
pub fn nccl_kernel(
    abi: NcclAbi,
    coll: &str,
    op_type: Option<(&str, &str)>,
    algo_proto: Option<(&str, &str)>,
) -> KernelDef {
    let mut short = format!("ncclDevKernel_{coll}");
    if let Some((op, ty)) = op_type {
        short.push_str(&format!("_{op}_{ty}"));
    }
    if let Some((algo, proto)) = algo_proto {
        short.push_str(&format!("_{algo}_{proto}"));
    }
    let (args, mangled_args) = match abi {
        NcclAbi::V2_19 => (
            "(ncclDevComm *, unsigned long, ncclWork *)",
            "P11ncclDevCommmP8ncclWork",
        ),
        NcclAbi::V2_25 => (
            "(ncclDevKernelArgsStorage<(unsigned long)4096>)",
            "24ncclDevKernelArgsStorageILm4096EE",
        ),
    };
    KernelDef {
        demangled: format!("{short}{args}"),
        mangled: Some(format!("_Z{}{short}{mangled_args}", short.len())),
        short,
        // Resources of the real ncclDevKernel_SendRecv row (H100, cluster launch).
        registers: 96,
        static_smem: 21_568,
        dynamic_smem: 82_240,
        cluster: Cluster {
            dims: [4, 1, 1],
            max_potential: 8,
            max_active: 30,
        },
        smem_executed: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_names_match_the_real_and_documented_forms() {
        // Real row of mfu_2gpu_before.sqlite.
        let k = nccl_kernel(NcclAbi::V2_25, "SendRecv", None, None);
        assert_eq!(
            k.demangled,
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)"
        );
        assert_eq!(
            k.mangled.as_deref(),
            Some("_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE")
        );
        // The form named in issue 6.
        let k = nccl_kernel(
            NcclAbi::V2_19,
            "AllReduce",
            Some(("Sum", "bf16")),
            Some(("RING", "LL")),
        );
        assert_eq!(
            k.demangled,
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)"
        );
        assert_eq!(k.short, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
        assert_eq!(
            k.mangled.as_deref(),
            Some("_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LLP11ncclDevCommmP8ncclWork")
        );
    }
}
