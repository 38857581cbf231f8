//! The scenarios: each builds an export and returns the [`ScenarioSpec`] its tests assert.
//! Timelines are simulated: GPU work is planned from durations and dependencies (identical for
//! every seed), host calls are issued ahead of it with seeded jitter (see [`sched`]).

pub mod cpu_counters;
mod ddp4;
pub mod gpu_memory;
mod gpu_metrics;
mod graphs;
pub mod nic;
pub mod nvtx_payloads;
pub mod openmp;
mod pipeline4;
pub(crate) mod sched;
mod zero3;

use super::builder::{ExportBuilder, Session};
use super::spec::ScenarioSpec;
use crate::error::{Error, Result};

/// An export under construction and what converting it must give.
pub struct Scenario {
    pub spec: ScenarioSpec,
    pub export: ExportBuilder,
}

/// Every scenario, with a one-line description.
pub const SCENARIOS: &[(&str, &str)] = &[
    (
        "ddp4",
        "4-GPU DDP step: 4 ranks, NCCL AllReduce overlapping backward, rank 2 20% slower",
    ),
    (
        "zero3",
        "ZeRO-3 step on 2 GPUs: AllGather/ReduceScatter per layer interleaved with compute",
    ),
    (
        "pipeline4",
        "4-stage GPipe pipeline with NCCL SendRecv between stages and a visible bubble",
    ),
    (
        "graphs",
        "CUDA graph replays traced per graph (CUPTI_ACTIVITY_KIND_GRAPH_TRACE)",
    ),
    (
        "graph_nodes",
        "the same CUDA graph replays traced per node (kernels with graphNodeId)",
    ),
    (
        "gpu_metrics",
        "one process on 2 GPUs with GPU_METRICS samples at 10 kHz",
    ),
    (
        "gpu_memory",
        "device memory allocated and freed around 10 GEMMs (CUDA_GPU_MEMORY_USAGE_EVENTS)",
    ),
    (
        "openmp",
        "4 OpenMP threads in 3 parallel regions with imbalanced implicit barriers (OMPT)",
    ),
    (
        "cpu_counters",
        "CPU counter samples of 2 threads moving between 3 cores (PERF_EVENT_CPU_RAW_EVENT)",
    ),
    (
        "nic",
        "NIC metrics of an InfiniBand and an Ethernet NIC every ms (NET_NIC_METRIC)",
    ),
    (
        "nvtx_payloads",
        "NVTX ranges of a library's own domain with schema'd payloads (jsonText)",
    ),
];

/// Builds scenario `name`; `seed` only moves host-side timings.
pub fn build(name: &str, seed: u64) -> Result<Scenario> {
    match name {
        "ddp4" => ddp4::build(seed),
        "zero3" => zero3::build(seed),
        "pipeline4" => pipeline4::build(seed),
        "graphs" => graphs::build(seed, graphs::Mode::Graph),
        "graph_nodes" => graphs::build(seed, graphs::Mode::Node),
        "gpu_metrics" => gpu_metrics::build(seed),
        "gpu_memory" => gpu_memory::build(seed),
        "openmp" => openmp::build(seed),
        "cpu_counters" => cpu_counters::build(seed),
        "nic" => nic::build(seed),
        "nvtx_payloads" => nvtx_payloads::build(seed),
        _ => Err(Error::Usage(format!(
            "unknown scenario '{name}' (known: {})",
            SCENARIOS.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Name of every GPU in the scenarios.
pub(crate) const H100: &str = "NVIDIA H100 80GB HBM3";
/// Session clock at capture start; processes appear at [`T_INIT`], work starts at [`T_WORK`].
pub(crate) const T_SESSION: i64 = 1_000_000_000;
pub(crate) const T_INIT: i64 = 1_050_000_000;
pub(crate) const T_WORK: i64 = 1_200_000_000;
/// Time the host is given to issue a step's first calls before the GPU starts on it.
pub(crate) const HOST_LEAD: i64 = 150_000;

/// A builder with the common session facts and a provenance row naming the command.
pub(crate) fn builder(name: &str, seed: u64, host: &str) -> ExportBuilder {
    let mut b = ExportBuilder::new(
        name,
        Session {
            // 2026-05-28T20:26:40Z, a capture made with nsys 2026.2.
            utc_epoch_ns: 1_780_000_000_123_456_789,
            system_clock_ns: T_SESSION,
            hostname: host.to_owned(),
        },
    );
    b.provenance(
        "SYNTHESIZED_BY",
        &format!("prvsight synth {name} --seed {seed}"),
    );
    b
}

/// An operation of a scenario's kernel sequence: kernel, nominal duration, launching API.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    pub k: super::rows::KernelDef,
    pub dur: i64,
    pub api: &'static str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// Launch APIs as nsys names them: cuBLAS launches through the driver, PyTorch through the runtime.
pub(crate) const LAUNCH_DRIVER: &str = "cuLaunchKernelEx";
pub(crate) const LAUNCH_RUNTIME: &str = "cudaLaunchKernel_v7000";

pub(crate) fn gemm(layout: &str, tile: &str, wg: &str, dur: i64) -> Op {
    Op {
        k: super::names::cublas_gemm(layout, tile, wg),
        dur,
        api: LAUNCH_DRIVER,
        grid: [132, 1, 1],
        block: [384, 1, 1],
    }
}

pub(crate) fn op(k: super::rows::KernelDef, dur: i64, grid: u32, block: u32) -> Op {
    Op {
        k,
        dur,
        api: LAUNCH_RUNTIME,
        grid: [grid, 1, 1],
        block: [block, 1, 1],
    }
}

/// An NCCL call that launches its kernel, as NCCL ≥ 2.19 does it: inside the call's NVTX range
/// (domain NCCL), `cudaGetFuncBySymbol` then `cuLaunchKernelEx`; the kernel was planned at `span`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn nccl_launch(
    b: &mut ExportBuilder,
    h: &mut sched::Host,
    s: super::builder::Stream,
    span: (i64, i64),
    k: &super::rows::KernelDef,
    range: &str,
    payload: Option<String>,
) -> Result<()> {
    let range_start = h.pause(500, 1_500);
    h.call(b, "cudaGetFuncBySymbol_v11000", 500, 1_500);
    let c = h.call(b, LAUNCH_DRIVER, 6_000, 10_000);
    sched::ahead(b, range, c, span.0)?;
    b.kernel(
        s,
        span.0,
        span.1 - span.0,
        k,
        [32, 1, 1],
        [640, 1, 1],
        c.corr,
        None,
    )?;
    let range_end = h.pause(300, 900);
    b.nvtx_push_pop(
        h.thread,
        range_start,
        range_end,
        super::builder::NvtxText::Registered(range),
        super::nccl::DOMAIN_ID,
        payload,
    )
}

/// Plans one collective over all ranks: it starts on each rank when that rank's stream and data
/// are ready, and ends everywhere `dur` after the last rank joined.
pub(crate) fn collective(lanes: &mut [sched::Lane], ready: &[i64], dur: i64) -> Vec<(i64, i64)> {
    let starts: Vec<i64> = lanes
        .iter()
        .zip(ready)
        .map(|(l, &r)| l.free.max(r))
        .collect();
    let end = starts.iter().max().copied().unwrap_or(0) + dur;
    for l in lanes.iter_mut() {
        l.free = end;
    }
    starts.into_iter().map(|s| (s, end)).collect()
}
