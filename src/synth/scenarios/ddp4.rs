//! `ddp4`: PyTorch DDP on 4 H100s, one process per rank (torchrun), 2 training steps of a
//! 4-layer transformer. Per step and rank: batch HtoD copy, forward (layer norm, QKV GEMM, flash
//! attention, projection GEMM, residual add per layer; mean loss), grad-bucket memset, backward
//! on the autograd thread (flash backward, dgrad/wgrad GEMMs, add per layer) with one NCCL
//! AllReduce per layer bucket on a separate stream overlapping the next layer's backward, fused
//! Adam, stream synchronize. NVTX: `step`/`forward`/`backward`/`optimizer` push/pop ranges,
//! `ncclAllReduce` ranges in the NCCL domain with jsonText payloads, an `epoch` start/end range
//! and a `train_start` mark per rank. Rank 2 runs every compute kernel 20% longer, so the other
//! ranks' AllReduce kernels wait for it.

use super::sched::{ahead, Host, Lane};
use super::{
    builder, collective, gemm, nccl_launch, op, Op, Scenario, H100, HOST_LEAD, T_INIT, T_WORK,
};
use crate::error::Result;
use crate::synth::builder::{NvtxText, StreamKind};
use crate::synth::names::{self, NcclAbi};
use crate::synth::nccl::{self, Call};
use crate::synth::spec::{counts, ScenarioSpec};

const RANKS: usize = 4;
const STEPS: usize = 2;
const LAYERS: usize = 4;
const SLOW_RANK: usize = 2;
/// Rank r runs as this pid: not in rank order, so the converter must order tasks by rank.
const PIDS: [u32; RANKS] = [31_542, 31_540, 31_543, 31_541];
const BATCH_BYTES: u64 = 8 << 20;
const BUCKET_BYTES: u64 = 26_214_400;
const GRAD_BYTES: u64 = 4 << 20;
const COMM_ID: u64 = 10_337_741_420_961_375_653;
const MEMCPY_NS: i64 = 340_000;
const MEMSET_NS: i64 = 12_000;
/// AllReduce transfer time once every rank has joined.
const ALLREDUCE_NS: i64 = 200_000;
/// User NVTX category (eventType 33 row) of the `step` ranges.
const TRAIN_CATEGORY: i64 = 1;

fn forward_layer() -> Vec<Op> {
    vec![
        op(names::layer_norm(), 25_000, 15_600, 32),
        gemm("tn", "128x128x64", "1x1x1", 180_000),
        op(names::flash_fwd(), 220_000, 244, 128),
        gemm("tn", "64x128x64", "1x1x1", 90_000),
        op(names::elementwise_add(), 40_000, 46_800, 128),
    ]
}

fn loss() -> Op {
    op(names::reduce_mean(), 60_000, 975, 32)
}

fn backward_layer() -> Vec<Op> {
    vec![
        op(names::flash_bwd(), 480_000, 488, 256),
        gemm("nn", "128x256x64", "2x1x1", 250_000),
        gemm("nt", "128x128x64", "1x1x1", 250_000),
        op(names::elementwise_add(), 45_000, 46_800, 128),
    ]
}

fn optimizer() -> Vec<Op> {
    vec![
        op(names::fused_adam(), 70_000, 528, 512),
        op(names::fused_adam(), 70_000, 528, 512),
    ]
}

/// Rank 2 is the straggler: 6/5 of every compute duration (all nominal durations are multiples
/// of 5 ns, so the scaled ones are exact).
fn scaled(rank: usize, dur: i64) -> i64 {
    if rank == SLOW_RANK {
        dur * 6 / 5
    } else {
        dur
    }
}

/// GPU times of one rank for one step.
struct StepTimes {
    memcpy: i64,
    forward: Vec<i64>,
    memset: i64,
    /// Kernel starts per layer, in backward order.
    backward: Vec<Vec<i64>>,
    /// (start, end) of the AllReduce of each bucket, in backward order.
    allreduce: Vec<(i64, i64)>,
    optimizer: Vec<i64>,
    end: i64,
}

fn plan_step(origins: &[i64; RANKS]) -> Vec<StepTimes> {
    let (fwd, bwd, opt) = (forward_layer(), backward_layer(), optimizer());
    let mut plans = Vec::new();
    let mut bucket_ready = vec![[0_i64; RANKS]; LAYERS];
    for (r, &g) in origins.iter().enumerate() {
        let mut c = Lane::new(g);
        let memcpy = c.place(g, MEMCPY_NS);
        let mut forward = Vec::new();
        for _ in 0..LAYERS {
            for o in &fwd {
                forward.push(c.place(0, scaled(r, o.dur)));
            }
        }
        forward.push(c.place(0, scaled(r, loss().dur)));
        let memset = c.place(0, MEMSET_NS);
        let mut backward = Vec::new();
        for ready in bucket_ready.iter_mut() {
            backward.push(bwd.iter().map(|o| c.place(0, scaled(r, o.dur))).collect());
            ready[r] = c.free;
        }
        plans.push((c, memcpy, forward, memset, backward));
    }
    let mut nccl: Vec<Lane> = origins.iter().map(|&g| Lane::new(g)).collect();
    let mut allreduce = vec![Vec::new(); RANKS];
    for ready in &bucket_ready {
        for (r, span) in collective(&mut nccl, ready, ALLREDUCE_NS)
            .into_iter()
            .enumerate()
        {
            allreduce[r].push(span);
        }
    }
    plans
        .into_iter()
        .zip(allreduce)
        .enumerate()
        .map(|(r, ((mut c, memcpy, forward, memset, backward), ar))| {
            let last = ar.last().map_or(0, |a| a.1);
            let optimizer = opt
                .iter()
                .map(|o| c.place(last, scaled(r, o.dur)))
                .collect();
            StepTimes {
                memcpy,
                forward,
                memset,
                backward,
                allreduce: ar,
                optimizer,
                end: c.free,
            }
        })
        .collect()
}

/// The scenario. Long: its processes, streams and events one after another, as a script.
pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("ddp4", seed, "dgx-a");
    b.capture_setting("CUDA_GRAPH_TRACE_OPTIONS:MODE", "Graph");
    b.capture_setting("PROCESS_0:COMMAND", "torchrun");
    b.capture_setting("PROCESS_0:ARGUMENT_0", "--nproc_per_node=4");
    b.capture_setting("PROCESS_0:ARGUMENT_1", "train_ddp.py");
    b.add_process(31_530, "torchrun", None, T_INIT - 40_000_000);
    let ar_kernel = names::nccl_kernel(
        NcclAbi::V2_19,
        "AllReduce",
        Some(("Sum", "bf16")),
        Some(("RING", "LL")),
    );
    let mut ranks = Vec::new();
    for (r, &pid) in PIDS.iter().enumerate() {
        let p = b.add_process(pid, "python3", Some(r as u32), T_INIT + r as i64 * 1_000);
        let main = b.main_thread(p);
        let autograd = b.add_thread(p, pid + 23, "pt_autograd_0");
        b.add_thread(p, pid + 19, "pt_nccl_watchdg");
        let gpu = b.add_gpu(r as u32, H100);
        let compute = b.add_stream(p, gpu, 7 + 8 * r as u32, StreamKind::Default);
        let comm = b.add_stream(
            p,
            gpu,
            13 + 8 * r as u32,
            StreamKind::Created { priority: 0 },
        );
        b.nvtx_category(main, T_INIT + 50_000, 0, TRAIN_CATEGORY, "training");
        b.nvtx_domain_create(main, T_INIT + 100_000, nccl::DOMAIN_ID, "NCCL");
        b.nvtx_payload_schema(Call::CommInitRankConfig.schema());
        b.nvtx_payload_schema(Call::AllReduce.schema());
        ranks.push((main, autograd, compute, comm));
    }

    let mut origins = [T_WORK + HOST_LEAD; RANKS];
    let mut host_start = [T_WORK; RANKS];
    let mut mains: Vec<Host> = ranks.iter().map(|x| Host::new(x.0, T_WORK, seed)).collect();
    let mut grads: Vec<Host> = ranks.iter().map(|x| Host::new(x.1, T_WORK, seed)).collect();
    for (main, ..) in &ranks {
        b.nvtx_mark(*main, T_WORK - 50_000, NvtxText::Inline("train_start"), 0);
    }
    let (fwd, bwd, opt) = (forward_layer(), backward_layer(), optimizer());
    for _step in 0..STEPS {
        let plans = plan_step(&origins);
        for (r, plan) in plans.iter().enumerate() {
            let (_, _, compute, comm) = ranks[r];
            let (m, a) = (&mut mains[r], &mut grads[r]);
            m.resume_at(&b, host_start[r])?;
            let step_start = m.t;
            let c = m.call(&mut b, "cudaMemcpyAsync_v3020", 4_000, 9_000);
            ahead(&b, "batch copy", c, plan.memcpy)?;
            b.memcpy(
                compute,
                plan.memcpy,
                MEMCPY_NS,
                BATCH_BYTES,
                1,
                1,
                2,
                c.corr,
            )?;

            let fwd_start = m.pause(1_000, 3_000);
            let mut ops: Vec<Op> = fwd
                .iter()
                .cycle()
                .take(fwd.len() * LAYERS)
                .cloned()
                .collect();
            ops.push(loss());
            for (o, &start) in ops.iter().zip(&plan.forward) {
                m.launch(
                    &mut b,
                    o.api,
                    compute,
                    start,
                    scaled(r, o.dur),
                    &o.k,
                    o.grid,
                    o.block,
                )?;
            }
            let fwd_end = m.pause(1_000, 3_000);
            b.nvtx_push_pop(
                m.thread,
                fwd_start,
                fwd_end,
                NvtxText::Inline("forward"),
                0,
                None,
            )?;
            let c = m.call(&mut b, "cudaMemsetAsync_v3020", 3_000, 6_000);
            ahead(&b, "grad bucket memset", c, plan.memset)?;
            b.memset(compute, plan.memset, MEMSET_NS, GRAD_BYTES, 0, c.corr)?;

            // loss.backward(): the main thread waits while the autograd thread launches.
            let bwd_start = m.pause(1_000, 3_000);
            a.t = bwd_start + 8_000;
            for (layer, starts) in plan.backward.iter().enumerate() {
                for (o, &start) in bwd.iter().zip(starts) {
                    a.launch(
                        &mut b,
                        o.api,
                        compute,
                        start,
                        scaled(r, o.dur),
                        &o.k,
                        o.grid,
                        o.block,
                    )?;
                }
                // The DDP reducer: order the NCCL stream after this bucket, then all-reduce it.
                a.call(&mut b, "cudaEventRecord_v3020", 2_000, 4_000);
                a.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
                let payload = nccl::reduce_payload(COMM_ID, BUCKET_BYTES, "Sum");
                let range = Call::AllReduce.range_name();
                nccl_launch(
                    &mut b,
                    a,
                    comm,
                    plan.allreduce[layer],
                    &ar_kernel,
                    range,
                    Some(payload),
                )?;
            }
            m.t = m.t.max(a.t);
            let bwd_end = m.pause(2_000, 5_000);
            b.nvtx_push_pop(
                m.thread,
                bwd_start,
                bwd_end,
                NvtxText::Inline("backward"),
                0,
                None,
            )?;

            let opt_start = m.pause(1_000, 3_000);
            m.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
            for (o, &start) in opt.iter().zip(&plan.optimizer) {
                m.launch(
                    &mut b,
                    o.api,
                    compute,
                    start,
                    scaled(r, o.dur),
                    &o.k,
                    o.grid,
                    o.block,
                )?;
            }
            let opt_end = m.pause(1_000, 3_000);
            b.nvtx_push_pop(
                m.thread,
                opt_start,
                opt_end,
                NvtxText::Inline("optimizer"),
                0,
                None,
            )?;
            // The step ends when the GPU is done: from here on times are seed-independent.
            m.blocking_call(&mut b, "cudaStreamSynchronize_v3020", plan.end + 3_000)?;
            let step_end = plan.end + 5_000;
            b.nvtx_push_pop_in_category(
                m.thread,
                step_start,
                step_end,
                NvtxText::Inline("step"),
                0,
                TRAIN_CATEGORY,
            )?;
            host_start[r] = step_end + 20_000;
            origins[r] = host_start[r] + HOST_LEAD;
        }
    }
    for (r, (main, ..)) in ranks.iter().enumerate() {
        b.nvtx_start_end(
            *main,
            T_WORK - 100_000,
            host_start[r],
            *main,
            NvtxText::Inline("epoch 0"),
            0,
        )?;
    }
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let (r, s, l) = (RANKS as u64, STEPS as u64, LAYERS as u64);
    let compute = 9 * l + 3; // per rank and step: 5 per forward layer, loss, 4 per backward layer, 2 Adam
    let api = compute + 2 + 4 * l + 2; // + memcpy, memset, 4 calls per AllReduce, wait + synchronize
    let per_step: i64 = LAYERS as i64
        * (forward_layer().iter().map(|o| o.dur).sum::<i64>()
            + backward_layer().iter().map(|o| o.dur).sum::<i64>())
        + loss().dur
        + optimizer().iter().map(|o| o.dur).sum::<i64>();
    ScenarioSpec {
        name: "ddp4",
        summary: "4-GPU DDP, NCCL AllReduce overlapping backward, rank 2 20% slower",
        counts: counts(&[
            ("kernel", r * s * (compute + l)),
            ("memcpy", r * s),
            ("memset", r * s),
            ("cuda-api", r * s * api),
            ("nvtx-push-pop", r * s * (4 + l)),
            ("nvtx-start-end", r),
            ("nvtx-mark", r),
            ("link-launch", r * s * (compute + l)),
            ("link-memory", r * s * 2),
        ]),
        task_pids: PIDS.to_vec(),
        host_threads: 2 * RANKS,
        gpu_streams: 2 * RANKS,
        gpus: RANKS,
        nccl_kernels: r * s * l,
        compute_kernels: r * s * compute,
        table_rows: [
            ("PROCESSES", r + 1),
            ("ThreadNames", 3 * r + 1),
            ("TARGET_INFO_GPU", r),
            ("TARGET_INFO_CUDA_STREAM", r),
            ("NVTX_PAYLOAD_SCHEMAS", 2 * r),
            ("NVTX_PAYLOAD_SCHEMA_ENTRIES", 7 * r),
            // per rank: thread name, category, domain, mark, epoch, and the push/pop ranges
            ("NVTX_EVENTS", r * (5 + s * (4 + l))),
        ]
        .into_iter()
        .collect(),
        compute_ns: (0..RANKS)
            .map(|x| STEPS as u64 * scaled(x, per_step) as u64)
            .collect(),
        first_compute_offset_ns: vec![0; RANKS],
        metrics: Vec::new(),
        graph_launches: 0,
        graph_node_kernels: 0,
    }
}
