//! What each GPU operation counts as. Kernel categories come from name patterns kept in ONE table
//! ([`KERNEL_PATTERNS`]); whether a kernel is communication comes from the model's own rule
//! (`model::classify`), so the Paraver trace and the metrics never disagree on it.
//!
//! The order of [`Category::ALL`] is also the *priority* used when operations overlap: an instant
//! of GPU time is attributed to the highest-priority category running at that instant, so that the
//! %-of-GPU-time split never counts overlapped time twice.

use serde::Serialize;

use crate::model::{GpuOp, GpuOpKind, KernelClass, NameId, Names};
use crate::FastMap;

/// One row of the GPU time breakdown, in priority order (first = highest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Gemm,
    Attention,
    Convolution,
    Normalization,
    Softmax,
    Reduction,
    Optimizer,
    CopyLayout,
    Elementwise,
    OtherCompute,
    /// Communication-library kernels (NCCL, RCCL, NVSHMEM).
    Nccl,
    #[serde(rename = "memcpy_htod")]
    MemcpyHtoD,
    #[serde(rename = "memcpy_dtoh")]
    MemcpyDtoH,
    #[serde(rename = "memcpy_dtod")]
    MemcpyDtoD,
    MemcpyPeer,
    /// Unified-memory migrations (copy kinds 11-13).
    MemcpyUnified,
    MemcpyOther,
    Memset,
}

/// The coarse split of GPU time the report leads with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    Gemm,
    Attention,
    OtherCompute,
    Nccl,
    Memory,
    Idle,
}

pub const NCAT: usize = Category::ALL.len();

impl Category {
    /// Every category, in priority order; `c as usize` indexes this array.
    pub const ALL: [Category; 18] = [
        Category::Gemm,
        Category::Attention,
        Category::Convolution,
        Category::Normalization,
        Category::Softmax,
        Category::Reduction,
        Category::Optimizer,
        Category::CopyLayout,
        Category::Elementwise,
        Category::OtherCompute,
        Category::Nccl,
        Category::MemcpyHtoD,
        Category::MemcpyDtoH,
        Category::MemcpyDtoD,
        Category::MemcpyPeer,
        Category::MemcpyUnified,
        Category::MemcpyOther,
        Category::Memset,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Category::Gemm => "gemm",
            Category::Attention => "attention",
            Category::Convolution => "convolution",
            Category::Normalization => "normalization",
            Category::Softmax => "softmax",
            Category::Reduction => "reduction",
            Category::Optimizer => "optimizer",
            Category::CopyLayout => "copy_layout",
            Category::Elementwise => "elementwise",
            Category::OtherCompute => "other_compute",
            Category::Nccl => "nccl",
            Category::MemcpyHtoD => "memcpy_htod",
            Category::MemcpyDtoH => "memcpy_dtoh",
            Category::MemcpyDtoD => "memcpy_dtod",
            Category::MemcpyPeer => "memcpy_peer",
            Category::MemcpyUnified => "memcpy_unified",
            Category::MemcpyOther => "memcpy_other",
            Category::Memset => "memset",
        }
    }

    pub fn group(self) -> Group {
        match self {
            Category::Gemm => Group::Gemm,
            Category::Attention => Group::Attention,
            Category::Nccl => Group::Nccl,
            c if c.is_kernel() => Group::OtherCompute,
            _ => Group::Memory,
        }
    }

    /// A kernel of any kind (compute or communication), as opposed to a memcpy/memset.
    pub fn is_kernel(self) -> bool {
        self <= Category::Nccl
    }

    /// A compute kernel (not a communication-library kernel, not a memory operation).
    pub fn is_compute(self) -> bool {
        self < Category::Nccl
    }
}

impl Group {
    pub const ALL: [Group; 6] = [
        Group::Gemm,
        Group::Attention,
        Group::OtherCompute,
        Group::Nccl,
        Group::Memory,
        Group::Idle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Gemm => "gemm",
            Group::Attention => "attention",
            Group::OtherCompute => "other_compute",
            Group::Nccl => "nccl",
            Group::Memory => "memory",
            Group::Idle => "idle",
        }
    }
}

/// Lower-case substrings of kernel names, first match wins. The short name (function name without
/// arguments) is tried against the whole table first, the demangled name only if the short name
/// matches nothing: library kernels such as `cutlass::Kernel2<...gemm...>` only say what they do in
/// their template arguments, while the short name of a framework kernel is the more reliable part.
pub const KERNEL_PATTERNS: &[(&str, Category)] = &[
    // Attention first: FlashAttention and fused MHA kernels are built from CUTLASS GEMM pieces.
    ("flash_fwd", Category::Attention),
    ("flash_bwd", Category::Attention),
    ("flash", Category::Attention),
    ("fmha", Category::Attention),
    ("attention", Category::Attention),
    ("attn", Category::Attention),
    // Convolutions before GEMM: cuDNN's implicit-GEMM convolutions name both.
    ("convolution", Category::Convolution),
    ("convolve", Category::Convolution),
    ("conv1d", Category::Convolution),
    ("conv2d", Category::Convolution),
    ("conv3d", Category::Convolution),
    ("fprop", Category::Convolution),
    ("dgrad", Category::Convolution),
    ("wgrad", Category::Convolution),
    // Dense matrix products: cuBLAS/cuBLASLt (incl. Hopper `nvjet_*`, `sm90_xmma_gemm_*`,
    // `ampere_*gemm*`), CUTLASS, GEMV, split-K reduction steps of a GEMM.
    ("gemm", Category::Gemm),
    ("gemv", Category::Gemm),
    ("nvjet", Category::Gemm),
    ("xmma", Category::Gemm),
    ("cutlass", Category::Gemm),
    ("cublas", Category::Gemm),
    ("matmul", Category::Gemm),
    ("splitkreduce", Category::Gemm),
    ("layer_norm", Category::Normalization),
    ("layernorm", Category::Normalization),
    ("rms_norm", Category::Normalization),
    ("rmsnorm", Category::Normalization),
    ("batch_norm", Category::Normalization),
    ("batchnorm", Category::Normalization),
    ("group_norm", Category::Normalization),
    ("groupnorm", Category::Normalization),
    ("bn_fw", Category::Normalization),
    ("bn_bw", Category::Normalization),
    ("softmax", Category::Softmax),
    ("reduce", Category::Reduction),
    ("reduction", Category::Reduction),
    ("argmax", Category::Reduction),
    ("argmin", Category::Reduction),
    ("triton_red", Category::Reduction),
    ("triton_per", Category::Reduction),
    ("multi_tensor_apply", Category::Optimizer),
    ("adam", Category::Optimizer),
    ("copy", Category::CopyLayout),
    ("catarray", Category::CopyLayout),
    ("cat_array", Category::CopyLayout),
    ("transpose", Category::CopyLayout),
    ("permute", Category::CopyLayout),
    ("concat", Category::CopyLayout),
    ("gather", Category::CopyLayout),
    ("scatter", Category::CopyLayout),
    ("index_", Category::CopyLayout),
    ("elementwise", Category::Elementwise),
    ("vectorized", Category::Elementwise),
    ("pointwise", Category::Elementwise),
    ("triton_poi", Category::Elementwise),
    ("fill", Category::Elementwise),
];

fn match_table(name: &str) -> Option<Category> {
    let lower = name.to_ascii_lowercase();
    KERNEL_PATTERNS
        .iter()
        .find(|(p, _)| lower.contains(p))
        .map(|(_, c)| *c)
}

/// Category of a compute kernel from its names (communication kernels never reach here).
pub fn compute_kernel_category(short: &str, demangled: &str) -> Category {
    match_table(short)
        .or_else(|| match_table(demangled))
        .unwrap_or(Category::OtherCompute)
}

/// Category of a memcpy by its ENUM_CUDA_MEMCPY_OPER id.
pub fn memcpy_category(copy_kind: u32) -> Category {
    match copy_kind {
        1 => Category::MemcpyHtoD,
        2 => Category::MemcpyDtoH,
        8 => Category::MemcpyDtoD,
        10 => Category::MemcpyPeer,
        11..=13 => Category::MemcpyUnified,
        _ => Category::MemcpyOther,
    }
}

/// The category of each GPU operation, each kernel name's looked up once.
#[derive(Default)]
pub struct OpCategories {
    kernels: FastMap<NameId, Category>,
}

impl OpCategories {
    pub fn of(&mut self, op: &GpuOp, names: &Names) -> Category {
        match &op.kind {
            GpuOpKind::Kernel(k) => *self
                .kernels
                .entry(k.name)
                .or_insert_with(|| op_category(op, names)),
            _ => op_category(op, names),
        }
    }
}

/// Category of any GPU operation (a graph replay's kernels are not visible one by one: it counts
/// as compute); [`OpCategories`] caches the kernels'.
pub fn op_category(op: &GpuOp, names: &Names) -> Category {
    match &op.kind {
        GpuOpKind::Kernel(k) => match k.class {
            KernelClass::Communication => Category::Nccl,
            KernelClass::Compute => {
                compute_kernel_category(names.get(k.short_name), names.get(k.name))
            }
        },
        GpuOpKind::Memcpy(m) => memcpy_category(m.copy_kind),
        GpuOpKind::Memset(_) => Category::Memset,
        GpuOpKind::Graph(_) => Category::OtherCompute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_discriminant_order() {
        for (i, c) in Category::ALL.iter().enumerate() {
            assert_eq!(c.index(), i, "{c:?}");
        }
    }

    #[test]
    fn library_kernels_fall_in_their_category() {
        let cases = [
            (
                "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN",
                "",
                Category::Gemm,
            ),
            (
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
                "",
                Category::Gemm,
            ),
            ("ampere_sgemm_128x64_nn", "", Category::Gemm),
            (
                "Kernel2",
                "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(Params)",
                Category::Gemm,
            ),
            (
                "flash_fwd_kernel",
                "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<cutlass::half_t>>()",
                Category::Attention,
            ),
            (
                "fmha_cutlassF_f16_aligned_64x64_rf_sm80",
                "",
                Category::Attention,
            ),
            (
                "sm80_xmma_fprop_implicit_gemm_indexed_f16f16",
                "",
                Category::Convolution,
            ),
            ("vectorized_layer_norm_kernel", "", Category::Normalization),
            ("reduce_kernel", "", Category::Reduction),
            ("CatArrayBatchedCopy_vectorized", "", Category::CopyLayout),
            (
                "unrolled_elementwise_kernel",
                "void at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda>",
                Category::Elementwise,
            ),
            ("vectorized_elementwise_kernel", "", Category::Elementwise),
            (
                "power_iteration_step",
                "void power_iteration_step(float*)",
                Category::OtherCompute,
            ),
        ];
        for (short, dem, want) in cases {
            assert_eq!(compute_kernel_category(short, dem), want, "{short}");
        }
    }

    #[test]
    fn groups_follow_priority() {
        assert_eq!(Category::Gemm.group(), Group::Gemm);
        assert_eq!(Category::Elementwise.group(), Group::OtherCompute);
        assert_eq!(Category::Nccl.group(), Group::Nccl);
        assert_eq!(Category::MemcpyPeer.group(), Group::Memory);
        assert!(Category::OtherCompute.is_compute() && !Category::Nccl.is_compute());
        assert!(Category::Nccl.is_kernel() && !Category::Memset.is_kernel());
        assert_eq!(memcpy_category(10), Category::MemcpyPeer);
        assert_eq!(memcpy_category(12), Category::MemcpyUnified);
    }
}
