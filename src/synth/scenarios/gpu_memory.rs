//! `gpu_memory`: one process allocating and freeing device memory around 10 GEMMs on one H100,
//! with `--cuda-memory-usage=true` (CUDA_GPU_MEMORY_USAGE_EVENTS): 4 `cudaMalloc` of device
//! memory before the kernels, one `cudaHostAlloc` of pinned host memory (not device memory: not
//! converted), and 2 `cudaFree` after them. Each row sits inside the call that made it and
//! carries its correlation id. The memory in use after each change follows from the sizes alone.

use super::sched::{Host, Lane};
use super::{builder, gemm, Scenario, H100, HOST_LEAD, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::{ExportBuilder, StreamKind, Thread};
use crate::synth::spec::{counts, ScenarioSpec};
use rusqlite::types::Value;

const PID: u32 = 60_031;
const KERNELS: i64 = 10;
const KERNEL_NS: i64 = 100_000;
const MIB: i64 = 1 << 20;
/// Device memory allocated before the kernels (MiB), in order.
const ALLOCATED: [i64; 4] = [256, 512, 64, 128];
/// Indexes into [`ALLOCATED`] of what is freed after them, in order.
const FREED: [usize; 2] = [1, 2];
/// Pinned host memory (MiB): a row of another memory kind.
const PINNED: i64 = 32;
/// `memKind` values (ENUM_CUDA_MEM_KIND) and `memoryOperationType` (ENUM_CUDA_DEV_MEM_EVENT_OPER).
const DEVICE: i64 = 2;
const PINNED_KIND: i64 = 1;
const ALLOCATION: i64 = 0;
const DEALLOCATION: i64 = 1;
const COLUMNS: &str = "start globalPid deviceId contextId address pc bytes memKind \
                       memoryOperationType name correlationId";
const TABLE: &str = "CUDA_GPU_MEMORY_USAGE_EVENTS";

/// The memory in use after each device memory change (MiB), in order: what the converter's
/// `66500003` must give.
pub fn in_use_after_each() -> Vec<i64> {
    let mut in_use = 0;
    let mut out = Vec::new();
    for a in ALLOCATED {
        in_use += a;
        out.push(in_use);
    }
    for f in FREED {
        in_use -= ALLOCATED[f];
        out.push(in_use);
    }
    out
}

/// A memory row made by call `name` of thread `t`, 500 ns before the call's end.
fn memory_call(b: &mut ExportBuilder, h: &mut Host, t: Thread, name: &str, row: [i64; 4]) {
    let [address, bytes, kind, operation] = row;
    let c = h.call(b, name, 4_000, 12_000);
    let pid = crate::synth::ids::global_pid(t.pid);
    let (pc, corr) = (0x7f00_0000_1000, c.corr as i64);
    let head = [c.end - 500, pid, 0, 1, address, pc, bytes, kind, operation];
    let mut values: Vec<Value> = head.into_iter().map(Value::Integer).collect();
    // No name, then the correlation id.
    values.extend([Value::Null, Value::Integer(corr)]);
    b.extra_row(TABLE, COLUMNS, values);
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("gpu_memory", seed, "dgx-m");
    b.capture_setting("CUDA_MEMORY_USAGE_OPTIONS:ENABLED", "true");
    b.capture_setting("PROCESS_0:COMMAND", "python3");
    let p = b.add_process(PID, "python3", None, T_INIT);
    let main = b.main_thread(p);
    let gpu = b.add_gpu(0, H100);
    let s = b.add_stream(p, gpu, 7, StreamKind::Default);
    let h = &mut Host::new(main, T_WORK, seed);
    let address = |i: usize| 0x7f80_0000_0000 + (i as i64) * 0x4000_0000;
    for (i, mib) in ALLOCATED.into_iter().enumerate() {
        let row = [address(i), mib * MIB, DEVICE, ALLOCATION];
        memory_call(&mut b, h, main, "cudaMalloc_v3020", row);
    }
    let pinned = [0x7f10_0000_0000, PINNED * MIB, PINNED_KIND, ALLOCATION];
    memory_call(&mut b, h, main, "cudaHostAlloc_v3020", pinned);
    let g0 = h.t + HOST_LEAD;
    let mut lane = Lane::new(g0);
    for i in 0..KERNELS {
        let k = gemm("tn", "128x256x64", "2x1x1", KERNEL_NS);
        let at = lane.place(g0 + i * KERNEL_NS, KERNEL_NS);
        h.launch(&mut b, s, at, KERNEL_NS, &k)?;
    }
    h.blocking_call(&mut b, "cudaDeviceSynchronize_v3020", lane.free + 2_000)?;
    for f in FREED {
        let row = [address(f), ALLOCATED[f] * MIB, DEVICE, DEALLOCATION];
        memory_call(&mut b, h, main, "cudaFree_v3020", row);
    }
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let changes = (ALLOCATED.len() + FREED.len()) as u64;
    let calls = changes + 1;
    ScenarioSpec {
        name: "gpu_memory",
        summary: "device memory allocated and freed around 10 GEMMs (CUDA_GPU_MEMORY_USAGE_EVENTS)",
        counts: counts(&[
            ("kernel", KERNELS as u64),
            ("cuda-api", KERNELS as u64 + calls + 1),
            ("link-launch", KERNELS as u64),
            ("gpu-memory", changes),
        ]),
        task_pids: vec![PID],
        host_threads: 1,
        gpu_streams: 1,
        gpus: 1,
        nccl_kernels: 0,
        compute_kernels: KERNELS as u64,
        table_rows: [(TABLE, calls)].into_iter().collect(),
        compute_ns: vec![(KERNELS * KERNEL_NS) as u64],
        first_compute_offset_ns: vec![0],
        metrics: Vec::new(),
        graph_launches: 0,
        graph_node_kernels: 0,
    }
}
