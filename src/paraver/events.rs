//! Paraver event types and fixed value labels written by prvsight. Numbers follow nsys2prv 0.5.8
//! where it defined one (so its published cfgs load on our traces); docs/TRACE-FORMAT.md lists them.

/// CUDA runtime/driver API call; value = call name.
pub const CUDA_API: u32 = 63_000_000;
/// GPU memory operation (memcpy/memset); value = operation kind (fixed labels below).
pub const GPU_MEMORY_OP: u32 = 63_000_001;
/// Bytes moved or set by a memory operation.
pub const MEMORY_OP_BYTES: u32 = 63_000_002;
/// Memory kind of a memcpy's source / destination (ENUM_CUDA_MEM_KIND id + 1).
pub const MEMCPY_SRC_KIND: u32 = 63_000_003;
pub const MEMCPY_DST_KIND: u32 = 63_000_004;
/// Byte value a memset writes.
pub const MEMSET_VALUE: u32 = 63_000_005;
/// Compute kernel; value = demangled kernel name.
pub const KERNEL: u32 = 63_000_006;
/// Communication kernel (NCCL...); value = demangled kernel name.
pub const COMM_KERNEL: u32 = 63_000_007;
/// A whole CUDA graph replay on a stream; value = `CUDA graph G exec E`.
pub const GRAPH_EXEC: u32 = 63_000_008;
/// Graph id and executable-graph id of a replay (raw).
pub const GRAPH_ID: u32 = 63_000_100;
pub const GRAPH_EXEC_ID: u32 = 63_000_101;
/// Graph node a kernel/memcpy/memset ran as (node-level graph tracing; raw).
pub const GRAPH_NODE_ID: u32 = 63_000_102;
/// Kernel short name (function name only), for views that group template instances.
pub const KERNEL_SHORT_NAME: u32 = 63_000_010;

/// Launch parameters (raw values).
pub const GRID_X: u32 = 9101;
pub const GRID_Y: u32 = 9102;
pub const GRID_Z: u32 = 9103;
pub const BLOCK_X: u32 = 9104;
pub const BLOCK_Y: u32 = 9105;
pub const BLOCK_Z: u32 = 9106;
pub const STATIC_SHARED_MEMORY: u32 = 9107;
pub const DYNAMIC_SHARED_MEMORY: u32 = 9108;
pub const LOCAL_MEMORY_TOTAL: u32 = 9109;
pub const REGISTERS_PER_THREAD: u32 = 9110;
pub const LOCAL_MEMORY_PER_THREAD: u32 = 9111;
/// CUPTI correlation id, on API calls and the GPU work they caused.
pub const CORRELATION_ID: u32 = 9200;

/// NVTX start/end ranges (all domains); value = range name.
pub const NVTX_START_END: u32 = 9004;
/// NVTX marks (instant); value = mark name.
pub const NVTX_MARK: u32 = 9005;
/// NVTX category of a range; value = category name.
pub const NVTX_CATEGORY: u32 = 9006;
/// NVTX push/pop ranges of the `NCCL` domain.
pub const NVTX_NCCL_DOMAIN: u32 = 9500;
/// NVTX push/pop ranges of domain k: 9600 + 100·k (k = 0 default domain, then by name).
/// Type base+L (L = 1..99) holds only the ranges at nesting level L.
pub const NVTX_PUSH_POP_BASE: u32 = 9600;
pub const NVTX_MAX_LEVEL: u32 = 99;

/// OS runtime call (OSRT_API); value = call name.
pub const OS_CALL: u32 = 64_000_000;

/// NCCL kernel facts parsed from its name (fixed value tables in model::nccl).
pub const NCCL_COLLECTIVE: u32 = 63_000_020;
pub const NCCL_ALGORITHM: u32 = 63_000_021;
pub const NCCL_PROTOCOL: u32 = 63_000_022;
pub const NCCL_DATATYPE: u32 = 63_000_023;
pub const NCCL_KERNEL_OP: u32 = 63_000_024;
/// NCCL NVTX payload fields, on the NCCL range and on the kernel it launched.
pub const NCCL_MESSAGE_SIZE: u32 = 9501;
pub const NCCL_REDUCTION_OP: u32 = 9502;
pub const NCCL_PAYLOAD_DATATYPE: u32 = 9503;
pub const NCCL_PEER: u32 = 9504;
pub const NCCL_COMMUNICATOR: u32 = 9505;
pub const NCCL_RANKS: u32 = 9506;
pub const NCCL_RANK: u32 = 9507;

/// OpenACC events, per table c (0 other, 1 data, 2 launch), as nsys2prv numbers them:
/// 66000000+c event kind (ENUM_OPENACC_EVENT_KIND id + 1), 66100000+c construct `name@file:line`,
/// 66200000+c function name; 66300001 data bytes; 66400002 kernel launched.
pub const ACC_EVENT_KIND: u32 = 66_000_000;
pub const ACC_CONSTRUCT: u32 = 66_100_000;
pub const ACC_FUNCTION: u32 = 66_200_000;
pub const ACC_BYTES: u32 = 66_300_001;
pub const ACC_KERNEL: u32 = 66_400_002;

/// CPU a thread runs on (SCHED_EVENTS); value = CPU number + 1, 0 when descheduled.
pub const ON_CPU: u32 = 65_000_000;

/// Communication tags: API call → kernel launch, API call → memory operation.
pub const TAG_LAUNCH: u64 = 55001;
pub const TAG_MEMORY: u64 = 55002;

/// Values of name-valued types are the interned name id plus this offset, so they never collide
/// with the fixed memory-operation values below and stay disjoint across 63000000/1/6/7.
pub const NAME_VALUE_OFFSET: u64 = 100;

/// Value of [`GPU_MEMORY_OP`] for a memcpy of ENUM_CUDA_MEMCPY_OPER id `k`: k + 1.
pub fn memcpy_value(copy_kind: u32) -> u64 {
    u64::from(copy_kind.min(MEMCPY_KIND_LABELS.len() as u32 - 1)) + 1
}
/// Value of [`GPU_MEMORY_OP`] for a memset.
pub const MEMSET_OP_VALUE: u64 = 20;

/// ENUM_CUDA_MEMCPY_OPER labels by id (ids past the end are shown as the last, "Unknown kind").
pub const MEMCPY_KIND_LABELS: &[&str] = &[
    "CUDA memcpy (unknown kind)",
    "CUDA memcpy Host-to-Device",
    "CUDA memcpy Device-to-Host",
    "CUDA memcpy Host-to-Array",
    "CUDA memcpy Array-to-Host",
    "CUDA memcpy Array-to-Array",
    "CUDA memcpy Array-to-Device",
    "CUDA memcpy Device-to-Array",
    "CUDA memcpy Device-to-Device",
    "CUDA memcpy Host-to-Host",
    "CUDA memcpy Peer-to-Peer",
    "CUDA unified memory Host-to-Device",
    "CUDA unified memory Device-to-Host",
    "CUDA unified memory Device-to-Device",
    "CUDA memcpy (other kind)",
];
pub const MEMSET_LABEL: &str = "CUDA memset";

/// ENUM_CUDA_MEM_KIND labels by id; written as id + 1.
pub const MEM_KIND_LABELS: &[&str] = &[
    "Pageable",
    "Pinned",
    "Device",
    "Array",
    "Managed",
    "Device Static",
    "Managed Static",
    "Unknown",
];

pub fn mem_kind_value(kind: u32) -> u64 {
    u64::from(kind.min(MEM_KIND_LABELS.len() as u32 - 1)) + 1
}

/// Label of every fixed (non-NVTX-domain) type.
pub fn type_label(t: u32) -> Option<&'static str> {
    Some(match t {
        CUDA_API => "CUDA API call",
        GPU_MEMORY_OP => "CUDA memory operation",
        MEMORY_OP_BYTES => "Memory operation size [bytes]",
        MEMCPY_SRC_KIND => "Memcpy source memory kind",
        MEMCPY_DST_KIND => "Memcpy destination memory kind",
        MEMSET_VALUE => "Memset value",
        KERNEL => "CUDA kernel",
        COMM_KERNEL => "NCCL kernel",
        KERNEL_SHORT_NAME => "CUDA kernel short name",
        GRID_X => "Kernel GrdX",
        GRID_Y => "Kernel GrdY",
        GRID_Z => "Kernel GrdZ",
        BLOCK_X => "Kernel BlkX",
        BLOCK_Y => "Kernel BlkY",
        BLOCK_Z => "Kernel BlkZ",
        STATIC_SHARED_MEMORY => "Kernel Static Shared Memory [bytes]",
        DYNAMIC_SHARED_MEMORY => "Kernel Dynamic Shared Memory [bytes]",
        LOCAL_MEMORY_TOTAL => "Kernel Local memory reserved for kernel [bytes]",
        REGISTERS_PER_THREAD => "Kernel Registers/Thread",
        LOCAL_MEMORY_PER_THREAD => "Kernel Local memory per thread [bytes]",
        CORRELATION_ID => "Correlation ID",
        NVTX_START_END => "NVTX start/end ranges",
        NVTX_MARK => "NVTX marks",
        NVTX_CATEGORY => "NVTX range category",
        OS_CALL => "OS runtime call",
        66_000_000 => "OpenACC other event kind",
        66_000_001 => "OpenACC data event kind",
        66_000_002 => "OpenACC launch event kind",
        66_100_000 => "OpenACC other construct",
        66_100_001 => "OpenACC data construct",
        66_100_002 => "OpenACC launch construct",
        66_200_000 => "OpenACC other function",
        66_200_001 => "OpenACC data function",
        66_200_002 => "OpenACC launch function",
        ACC_BYTES => "OpenACC data bytes",
        ACC_KERNEL => "OpenACC kernel launched",
        GRAPH_EXEC => "CUDA graph execution",
        GRAPH_ID => "CUDA Graph ID",
        GRAPH_EXEC_ID => "CUDA Graph Exec ID",
        GRAPH_NODE_ID => "Graph Node ID",
        ON_CPU => "Running on CPU",
        NCCL_COLLECTIVE => "NCCL collective",
        NCCL_ALGORITHM => "NCCL algorithm",
        NCCL_PROTOCOL => "NCCL protocol",
        NCCL_DATATYPE => "NCCL data type",
        NCCL_KERNEL_OP => "NCCL reduction operation (kernel name)",
        NCCL_MESSAGE_SIZE => "NCCL Message size [bytes]",
        NCCL_REDUCTION_OP => "NCCL Reduction operation",
        NCCL_PAYLOAD_DATATYPE => "NCCL Data type",
        NCCL_PEER => "NCCL Root or peer rank + 1",
        NCCL_COMMUNICATOR => "NCCL communicator ID",
        NCCL_RANKS => "NCCL No. of ranks",
        NCCL_RANK => "NCCL Rank + 1",
        t => return super::mpi::type_label(t).or_else(|| super::annotations::type_label(t)),
    })
}
