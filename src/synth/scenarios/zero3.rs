//! `zero3`: DeepSpeed ZeRO stage 3 on 2 H100s, one process per rank, 2 steps of a 4-layer model.
//! Parameters are sharded: every layer's forward and backward first all-gathers its parameters
//! (NCCL AllGather on the communication stream, prefetched: the stream runs ahead of compute),
//! and every layer's backward ends with a ReduceScatter of its gradients, which the stream must
//! wait for, so gathers and reductions interleave with compute. NCCL 2.25 kernel ABI.

use super::sched::{Host, Lane};
use super::{
    builder, collective, gemm, nccl_launch, op, Op, Scenario, H100, HOST_LEAD, T_INIT, T_WORK,
};
use crate::error::Result;
use crate::synth::builder::{NvtxText, StreamKind};
use crate::synth::names::{self, NcclAbi};
use crate::synth::nccl::{self, Call};
use crate::synth::spec::{counts, ScenarioSpec};

const RANKS: usize = 2;
const STEPS: usize = 2;
const LAYERS: usize = 4;
const PIDS: [u32; RANKS] = [20_211, 20_212];
const COMM_ID: u64 = 4_466_102_019_734_118_823;
/// Bytes of one layer's parameters (bf16), the message of its AllGather and ReduceScatter.
const LAYER_BYTES: u64 = 25_165_824;
const ALLGATHER_NS: i64 = 350_000;
const REDUCE_SCATTER_NS: i64 = 300_000;

fn forward_layer() -> Vec<Op> {
    vec![
        gemm("tn", "128x128x64", "1x1x1", 150_000),
        op(names::flash_fwd(), 200_000, 244, 128),
        gemm("tn", "128x256x64", "2x1x1", 250_000),
    ]
}

fn backward_layer() -> Vec<Op> {
    vec![
        op(names::flash_bwd(), 420_000, 488, 256),
        gemm("nn", "128x256x64", "2x1x1", 260_000),
        gemm("nt", "128x128x64", "1x1x1", 260_000),
    ]
}

fn loss() -> Op {
    op(names::reduce_mean(), 60_000, 975, 32)
}

fn adam() -> Op {
    op(names::fused_adam(), 90_000, 528, 512)
}

/// GPU times of one step for every rank (ranks are identical: no straggler here).
struct StepTimes {
    fwd_gather: Vec<(i64, i64)>,
    forward: Vec<Vec<i64>>,
    loss: i64,
    bwd_gather: Vec<(i64, i64)>,
    backward: Vec<Vec<i64>>,
    reduce_scatter: Vec<(i64, i64)>,
    adam: i64,
    end: i64,
}

fn plan_step(g: i64) -> Vec<StepTimes> {
    let (fwd, bwd) = (forward_layer(), backward_layer());
    let mut comm = vec![Lane::new(g); RANKS];
    let mut comp = [Lane::new(g); RANKS];
    let mut p: Vec<StepTimes> = (0..RANKS)
        .map(|_| StepTimes {
            fwd_gather: vec![],
            forward: vec![],
            loss: 0,
            bwd_gather: vec![(0, 0); LAYERS],
            backward: vec![vec![]; LAYERS],
            reduce_scatter: vec![(0, 0); LAYERS],
            adam: 0,
            end: 0,
        })
        .collect();
    let now = [g; RANKS];
    // Forward: the gathers queue on the communication stream; layer l computes once its own
    // gather is done (cudaStreamWaitEvent).
    for _ in 0..LAYERS {
        for (r, span) in collective(&mut comm, &now, ALLGATHER_NS)
            .into_iter()
            .enumerate()
        {
            p[r].fwd_gather.push(span);
        }
    }
    for r in 0..RANKS {
        for l in 0..LAYERS {
            let ready = p[r].fwd_gather[l].1;
            let starts = fwd.iter().map(|o| comp[r].place(ready, o.dur)).collect();
            p[r].forward.push(starts);
        }
        p[r].loss = comp[r].place(0, loss().dur);
    }
    // Backward, in the host's issue order: gather(L-1); then per layer l (last first): compute,
    // prefetch gather(l-1), reduce-scatter(l) once layer l's gradients exist.
    for (r, span) in collective(&mut comm, &now, ALLGATHER_NS)
        .into_iter()
        .enumerate()
    {
        p[r].bwd_gather[LAYERS - 1] = span;
    }
    for l in (0..LAYERS).rev() {
        let mut grads_ready = [0; RANKS];
        for r in 0..RANKS {
            let ready = p[r].bwd_gather[l].1;
            p[r].backward[l] = bwd.iter().map(|o| comp[r].place(ready, o.dur)).collect();
            grads_ready[r] = comp[r].free;
        }
        if l > 0 {
            for (r, span) in collective(&mut comm, &now, ALLGATHER_NS)
                .into_iter()
                .enumerate()
            {
                p[r].bwd_gather[l - 1] = span;
            }
        }
        for (r, span) in collective(&mut comm, &grads_ready, REDUCE_SCATTER_NS)
            .into_iter()
            .enumerate()
        {
            p[r].reduce_scatter[l] = span;
        }
    }
    for r in 0..RANKS {
        p[r].adam = comp[r].place(p[r].reduce_scatter[0].1, adam().dur);
        p[r].end = comp[r].free;
    }
    p
}

/// The scenario. Long: its processes, streams and events one after another, as a script.
pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("zero3", seed, "hgx-b");
    b.capture_setting("CUDA_GRAPH_TRACE_OPTIONS:MODE", "Graph");
    b.capture_setting("PROCESS_0:COMMAND", "deepspeed");
    let ag = names::nccl_kernel(NcclAbi::V2_25, "AllGather", None, Some(("RING", "LL")));
    let rs = names::nccl_kernel(
        NcclAbi::V2_25,
        "ReduceScatter",
        Some(("Sum", "bf16")),
        Some(("RING", "LL")),
    );
    let mut ranks = Vec::new();
    for (r, &pid) in PIDS.iter().enumerate() {
        let p = b.add_process(pid, "python3", Some(r as u32), T_INIT);
        let main = b.main_thread(p);
        let gpu = b.add_gpu(r as u32, H100);
        let compute = b.add_stream(p, gpu, 7 + 8 * r as u32, StreamKind::Default);
        let comm = b.add_stream(
            p,
            gpu,
            13 + 8 * r as u32,
            StreamKind::Created { priority: -1 },
        );
        b.nvtx_domain_create(main, T_INIT + 100_000, nccl::DOMAIN_ID, "NCCL");
        for c in [
            Call::CommInitRankConfig,
            Call::AllGather,
            Call::ReduceScatter,
        ] {
            b.nvtx_payload_schema(c.schema());
        }
        ranks.push((Host::new(main, T_WORK, seed), compute, comm));
    }
    let (fwd, bwd) = (forward_layer(), backward_layer());
    let gather = || Some(nccl::gather_payload(COMM_ID, LAYER_BYTES));
    let reduce = || Some(nccl::reduce_payload(COMM_ID, LAYER_BYTES, "Sum"));
    let (agn, rsn) = (
        Call::AllGather.range_name(),
        Call::ReduceScatter.range_name(),
    );
    let mut host_start = T_WORK;
    for _ in 0..STEPS {
        let plans = plan_step(host_start + HOST_LEAD);
        let mut next = host_start;
        for ((h, compute, comm), p) in ranks.iter_mut().zip(&plans) {
            let (compute, comm) = (*compute, *comm);
            h.resume_at(&b, host_start)?;
            let step_start = h.t;
            let fwd_start = h.pause(1_000, 2_000);
            nccl_launch(&mut b, h, comm, p.fwd_gather[0], &ag, agn, gather())?;
            for l in 0..LAYERS {
                if l + 1 < LAYERS {
                    nccl_launch(&mut b, h, comm, p.fwd_gather[l + 1], &ag, agn, gather())?;
                }
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
                for (o, &s) in fwd.iter().zip(&p.forward[l]) {
                    h.launch(&mut b, o.api, compute, s, o.dur, &o.k, o.grid, o.block)?;
                }
            }
            let l = loss();
            h.launch(&mut b, l.api, compute, p.loss, l.dur, &l.k, l.grid, l.block)?;
            let fwd_end = h.pause(1_000, 2_000);
            b.nvtx_push_pop(
                h.thread,
                fwd_start,
                fwd_end,
                NvtxText::Inline("forward"),
                0,
                None,
            )?;

            let bwd_start = h.pause(1_000, 2_000);
            nccl_launch(
                &mut b,
                h,
                comm,
                p.bwd_gather[LAYERS - 1],
                &ag,
                agn,
                gather(),
            )?;
            for l in (0..LAYERS).rev() {
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
                for (o, &s) in bwd.iter().zip(&p.backward[l]) {
                    h.launch(&mut b, o.api, compute, s, o.dur, &o.k, o.grid, o.block)?;
                }
                if l > 0 {
                    nccl_launch(&mut b, h, comm, p.bwd_gather[l - 1], &ag, agn, gather())?;
                }
                h.call(&mut b, "cudaEventRecord_v3020", 2_000, 4_000);
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
                nccl_launch(&mut b, h, comm, p.reduce_scatter[l], &rs, rsn, reduce())?;
            }
            let bwd_end = h.pause(1_000, 2_000);
            b.nvtx_push_pop(
                h.thread,
                bwd_start,
                bwd_end,
                NvtxText::Inline("backward"),
                0,
                None,
            )?;
            h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
            let a = adam();
            h.launch(&mut b, a.api, compute, p.adam, a.dur, &a.k, a.grid, a.block)?;
            h.blocking_call(&mut b, "cudaStreamSynchronize_v3020", p.end + 3_000)?;
            let step_end = p.end + 5_000;
            b.nvtx_push_pop(
                h.thread,
                step_start,
                step_end,
                NvtxText::Inline("step"),
                0,
                None,
            )?;
            next = next.max(step_end + 20_000);
        }
        // Both ranks leave the step together (the last ReduceScatter synchronises them).
        host_start = next;
    }
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let (r, s, l) = (RANKS as u64, STEPS as u64, LAYERS as u64);
    let compute = 6 * l + 2; // 3 per forward layer, loss, 3 per backward layer, Adam
    let nccl = 3 * l; // forward and backward gather per layer, one reduce-scatter per layer
                      // launches; 2 calls per NCCL launch (+2 event calls before a reduce-scatter); one stream wait
                      // per layer and pass, before Adam; synchronize
    let api = compute + 2 * nccl + 2 * l + 2 * l + 2;
    let per_step: i64 = LAYERS as i64
        * (forward_layer().iter().map(|o| o.dur).sum::<i64>()
            + backward_layer().iter().map(|o| o.dur).sum::<i64>())
        + loss().dur
        + adam().dur;
    ScenarioSpec {
        name: "zero3",
        summary: "ZeRO-3 on 2 GPUs: per-layer AllGather/ReduceScatter interleaved with compute",
        counts: counts(&[
            ("kernel", r * s * (compute + nccl)),
            ("cuda-api", r * s * api),
            ("nvtx-push-pop", r * s * (3 + nccl)),
            ("link-launch", r * s * (compute + nccl)),
        ]),
        task_pids: PIDS.to_vec(),
        host_threads: RANKS,
        gpu_streams: 2 * RANKS,
        gpus: RANKS,
        nccl_kernels: r * s * nccl,
        compute_kernels: r * s * compute,
        table_rows: [
            ("PROCESSES", r),
            ("TARGET_INFO_CUDA_STREAM", r),
            ("NVTX_PAYLOAD_SCHEMAS", 3 * r),
            ("NVTX_PAYLOAD_SCHEMA_ENTRIES", 9 * r),
            ("NVTX_EVENTS", r * (2 + s * (3 + nccl))),
        ]
        .into_iter()
        .collect(),
        compute_ns: vec![STEPS as u64 * per_step as u64; RANKS],
        first_compute_offset_ns: vec![0; RANKS],
        metrics: Vec::new(),
        graph_launches: 0,
        graph_node_kernels: 0,
    }
}
