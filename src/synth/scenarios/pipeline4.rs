//! `pipeline4`: a GPipe pipeline over 4 H100s, one process (stage) per GPU, one step of 4
//! microbatches: all forwards, then all backwards. Activations go to the next stage and gradients
//! back with NCCL point-to-point (ncclGroupStart / ncclSend|ncclRecv / ncclGroupEnd, one
//! `ncclDevKernel_SendRecv` per operation on a p2p stream, NCCL 2.25 ABI as in the real
//! mfu_2gpu_before.sqlite). Receives are posted early and wait on the GPU, so stage s starts its
//! first microbatch s·(F + X) after stage 0: the pipeline bubble.

use super::sched::{Host, Lane};
use super::{builder, gemm, nccl_launch, Op, Scenario, H100, HOST_LEAD, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::{ExportBuilder, NvtxText, Stream, StreamKind};
use crate::synth::names::{self, NcclAbi};
use crate::synth::nccl::{self, Call};
use crate::synth::rows::KernelDef;
use crate::synth::spec::{counts, ScenarioSpec};

const STAGES: usize = 4;
const MICRO: usize = 4;
const PIDS: [u32; STAGES] = [40_101, 40_102, 40_103, 40_104];
const COMM_ID: u64 = 7_090_215_363_180_092_661;
const ACTIVATION_BYTES: u64 = 8_388_608;
/// Transfer time of one activation (or gradient) between neighbouring stages.
const XFER_NS: i64 = 50_000;

fn forward_mb() -> Vec<Op> {
    vec![
        gemm("tn", "128x256x64", "2x1x1", 300_000),
        gemm("tn", "128x128x64", "1x1x1", 300_000),
    ]
}

fn backward_mb() -> Vec<Op> {
    vec![
        gemm("nn", "128x256x64", "2x1x1", 600_000),
        gemm("nt", "128x128x64", "1x1x1", 600_000),
    ]
}

fn adam() -> Op {
    super::op(names::fused_adam(), 80_000, 528, 512)
}

fn f_ns() -> i64 {
    forward_mb().iter().map(|o| o.dur).sum()
}

/// A point-to-point transfer as both ends see it.
#[derive(Clone, Copy, Default)]
struct P2p {
    span: (i64, i64),
}

#[derive(Default)]
struct StagePlan {
    fwd: Vec<Vec<i64>>,
    bwd: Vec<Vec<i64>>,
    /// Per microbatch: receive/send in the forward pass, and in the backward pass.
    recv_act: Vec<Option<P2p>>,
    send_act: Vec<Option<P2p>>,
    recv_grad: Vec<Option<P2p>>,
    send_grad: Vec<Option<P2p>>,
    adam: i64,
    end: i64,
}

/// Pairs a send on `from` with its receive on `to`: the send starts once its stream and data are
/// ready, the receive as soon as its stream is free (it was posted early), and both end `XFER_NS`
/// after the later of the two.
fn transfer(p2p: &mut [Lane], from: usize, to: usize, data_ready: i64) -> (P2p, P2p) {
    let send = p2p[from].free.max(data_ready);
    let recv = p2p[to].free;
    let end = send.max(recv) + XFER_NS;
    p2p[from].free = end;
    p2p[to].free = end;
    (P2p { span: (send, end) }, P2p { span: (recv, end) })
}

fn plan(g: i64) -> Vec<StagePlan> {
    let (fwd, bwd) = (forward_mb(), backward_mb());
    let mut comp = [Lane::new(g); STAGES];
    let mut p2p = vec![Lane::new(g); STAGES];
    let mut p: Vec<StagePlan> = (0..STAGES)
        .map(|_| StagePlan {
            recv_act: vec![None; MICRO],
            send_act: vec![None; MICRO],
            recv_grad: vec![None; MICRO],
            send_grad: vec![None; MICRO],
            ..StagePlan::default()
        })
        .collect();
    for m in 0..MICRO {
        for s in 0..STAGES {
            let ready = p[s].recv_act[m].map_or(0, |r| r.span.1);
            let starts: Vec<i64> = fwd.iter().map(|o| comp[s].place(ready, o.dur)).collect();
            p[s].fwd.push(starts);
            if s + 1 < STAGES {
                let (send, recv) = transfer(&mut p2p, s, s + 1, comp[s].free);
                p[s].send_act[m] = Some(send);
                p[s + 1].recv_act[m] = Some(recv);
            }
        }
    }
    for m in 0..MICRO {
        for s in (0..STAGES).rev() {
            let ready = p[s].recv_grad[m].map_or(0, |r| r.span.1);
            let starts: Vec<i64> = bwd.iter().map(|o| comp[s].place(ready, o.dur)).collect();
            p[s].bwd.push(starts);
            if s > 0 {
                let (send, recv) = transfer(&mut p2p, s, s - 1, comp[s].free);
                p[s].send_grad[m] = Some(send);
                p[s - 1].recv_grad[m] = Some(recv);
            }
        }
    }
    for s in 0..STAGES {
        p[s].adam = comp[s].place(0, adam().dur);
        p[s].end = comp[s].free.max(p2p[s].free);
    }
    p
}

/// ncclGroupStart; ncclSend|ncclRecv (with payload); ncclGroupEnd, which launches the kernel.
#[allow(clippy::too_many_arguments)]
fn p2p_op(
    b: &mut ExportBuilder,
    h: &mut Host,
    s: Stream,
    k: &KernelDef,
    op: P2p,
    call: Call,
    peer: usize,
) -> Result<()> {
    let t = h.pause(500, 1_500);
    let t2 = h.pause(400, 900);
    b.nvtx_push_pop(
        h.thread,
        t,
        t2,
        NvtxText::Registered("ncclGroupStart"),
        nccl::DOMAIN_ID,
        None,
    )?;
    let t = h.pause(500, 1_500);
    let t2 = h.pause(1_500, 4_000);
    let payload = nccl::p2p_payload(COMM_ID, ACTIVATION_BYTES, peer as u32);
    b.nvtx_push_pop(
        h.thread,
        t,
        t2,
        NvtxText::Registered(call.range_name()),
        nccl::DOMAIN_ID,
        Some(payload),
    )?;
    nccl_launch(b, h, s, op.span, k, "ncclGroupEnd", None)
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("pipeline4", seed, "hgx-c");
    b.capture_setting("CUDA_GRAPH_TRACE_OPTIONS:MODE", "Graph");
    b.capture_setting("PROCESS_0:COMMAND", "torchrun");
    let k = names::nccl_kernel(NcclAbi::V2_25, "SendRecv", None, None);
    let g = T_WORK + HOST_LEAD;
    let plans = plan(g);
    let (fwd, bwd, a) = (forward_mb(), backward_mb(), adam());
    for (s, (&pid, p)) in PIDS.iter().zip(&plans).enumerate() {
        let proc = b.add_process(pid, "python3", Some(s as u32), T_INIT);
        let main = b.main_thread(proc);
        let gpu = b.add_gpu(s as u32, H100);
        let compute = b.add_stream(proc, gpu, 7 + 8 * s as u32, StreamKind::Default);
        let comm = b.add_stream(
            proc,
            gpu,
            13 + 8 * s as u32,
            StreamKind::Created { priority: 0 },
        );
        b.nvtx_domain_create(main, T_INIT + 100_000, nccl::DOMAIN_ID, "NCCL");
        for c in [Call::CommInitRankConfig, Call::Send, Call::Recv] {
            b.nvtx_payload_schema(c.schema());
        }
        let h = &mut Host::new(main, T_WORK, seed);
        let step_start = h.t;
        let fwd_start = h.pause(1_000, 2_000);
        for m in 0..MICRO {
            if let Some(r) = p.recv_act[m] {
                p2p_op(&mut b, h, comm, &k, r, Call::Recv, s - 1)?;
                h.call(&mut b, "cudaEventRecord_v3020", 2_000, 4_000);
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
            }
            for (o, &st) in fwd.iter().zip(&p.fwd[m]) {
                h.launch(&mut b, compute, st, o.dur, o)?;
            }
            if let Some(x) = p.send_act[m] {
                h.call(&mut b, "cudaEventRecord_v3020", 2_000, 4_000);
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
                p2p_op(&mut b, h, comm, &k, x, Call::Send, s + 1)?;
            }
        }
        let fwd_end = h.pause(1_000, 2_000);
        b.nvtx_range(main, fwd_start, fwd_end, "forward")?;
        let bwd_start = h.pause(1_000, 2_000);
        for m in 0..MICRO {
            if let Some(r) = p.recv_grad[m] {
                p2p_op(&mut b, h, comm, &k, r, Call::Recv, s + 1)?;
                h.call(&mut b, "cudaEventRecord_v3020", 2_000, 4_000);
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
            }
            for (o, &st) in bwd.iter().zip(&p.bwd[m]) {
                h.launch(&mut b, compute, st, o.dur, o)?;
            }
            if let Some(x) = p.send_grad[m] {
                h.call(&mut b, "cudaEventRecord_v3020", 2_000, 4_000);
                h.call(&mut b, "cudaStreamWaitEvent_v3020", 2_000, 4_000);
                p2p_op(&mut b, h, comm, &k, x, Call::Send, s - 1)?;
            }
        }
        let bwd_end = h.pause(1_000, 2_000);
        b.nvtx_range(main, bwd_start, bwd_end, "backward")?;
        h.launch(&mut b, compute, p.adam, a.dur, &a)?;
        h.blocking_call(&mut b, "cudaDeviceSynchronize_v3020", p.end + 3_000)?;
        b.nvtx_range(main, step_start, p.end + 5_000, "step")?;
    }
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let (st, m) = (STAGES as u64, MICRO as u64);
    let compute = 4 * m + 1; // per stage: 2 kernels per forward and per backward microbatch, Adam
                             // p2p operations: the end stages send or receive once per microbatch and pass, inner
                             // stages do both.
    let p2p_per_stage: Vec<u64> = (0..STAGES)
        .map(|s| {
            if s == 0 || s + 1 == STAGES {
                2 * m
            } else {
                4 * m
            }
        })
        .collect();
    let p2p: u64 = p2p_per_stage.iter().sum();
    // each p2p op: 2 event calls + GetFuncBySymbol + cuLaunchKernelEx; launches; synchronize
    let api = st * (compute + 1) + 4 * p2p;
    let per_stage =
        (MICRO as i64) * (f_ns() + backward_mb().iter().map(|o| o.dur).sum::<i64>()) + adam().dur;
    ScenarioSpec {
        name: "pipeline4",
        summary: "4-stage GPipe pipeline, NCCL SendRecv between stages, visible bubble",
        counts: counts(&[
            ("kernel", st * compute + p2p),
            ("cuda-api", api),
            // 3 NCCL ranges per p2p op; step, forward, backward per stage
            ("nvtx-push-pop", 3 * p2p + 3 * st),
            ("link-launch", st * compute + p2p),
        ]),
        task_pids: PIDS.to_vec(),
        host_threads: STAGES,
        gpu_streams: 2 * STAGES,
        gpus: STAGES,
        nccl_kernels: p2p,
        compute_kernels: st * compute,
        table_rows: [
            ("PROCESSES", st),
            ("NVTX_PAYLOAD_SCHEMAS", 3 * st),
            ("NVTX_PAYLOAD_SCHEMA_ENTRIES", 10 * st),
            ("NVTX_EVENTS", st * 2 + 3 * p2p + 3 * st),
        ]
        .into_iter()
        .collect(),
        compute_ns: vec![per_stage as u64; STAGES],
        // Stage s waits for s forward passes and s transfers before its first microbatch.
        first_compute_offset_ns: (0..STAGES as i64).map(|s| s * (f_ns() + XFER_NS)).collect(),
        metrics: Vec::new(),
        graph_launches: 0,
        graph_node_kernels: 0,
    }
}
