//! `graphs` and `graph_nodes`: LLM decoding with CUDA graphs on one H100. An eager warm-up
//! (weights copy + 4 kernels), then two graphs captured by stream capture (batch sizes 8 and 16:
//! the launches inside the capture are traced API calls that run nothing), instantiated, and
//! replayed alternately; each replay is followed by a logits copy back to the host.
//!
//! CUPTI reports a replay either as one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row
//! (`--cuda-graph-trace=graph`, nsys's default) or as one kernel row per node carrying
//! `graphNodeId`/`graphId` and the correlation id of the `cudaGraphLaunch` (`=node`), never both
//! in one capture (META_DATA_CAPTURE `CUDA_GRAPH_TRACE_OPTIONS:MODE`): hence two scenarios with
//! the same program and timings.

use super::sched::{ahead, Host, Lane};
use super::{builder, gemm, op, Op, Scenario, H100, HOST_LEAD, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::{NvtxText, StreamKind};
use crate::synth::names;
use crate::synth::spec::{counts, ScenarioSpec};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Graph,
    Node,
}

const PID: u32 = 51_007;
const GRAPHS: usize = 2;
const REPLAYS: usize = 8;
const WEIGHTS_BYTES: u64 = 268_435_456;
const LOGITS_BYTES: u64 = 4_194_304;
const WEIGHTS_NS: i64 = 10_600_000;
const LOGITS_NS: i64 = 180_000;
/// Gap between consecutive nodes of a replayed graph.
const NODE_GAP_NS: i64 = 1_500;

fn warmup() -> Vec<Op> {
    vec![
        op(names::layer_norm(), 25_000, 15_600, 32),
        gemm("tn", "128x128x64", "1x1x1", 120_000),
        op(names::flash_fwd(), 150_000, 244, 128),
        op(names::elementwise_add(), 30_000, 46_800, 128),
    ]
}

/// The nodes of graph `g` (the batch-16 graph runs longer GEMMs).
fn nodes(g: usize) -> Vec<Op> {
    let x = g as i64 + 1;
    vec![
        op(names::layer_norm(), 20_000, 15_600, 32),
        gemm("tn", "64x128x64", "1x1x1", 60_000 * x),
        op(names::flash_fwd(), 80_000, 244, 128),
        gemm("tn", "64x128x64", "1x1x1", 40_000 * x),
        op(names::elementwise_add(), 15_000, 46_800, 128),
        gemm("tn", "128x128x64", "1x1x1", 90_000 * x),
    ]
}

fn graph_id(g: usize) -> i64 {
    g as i64 + 1
}
/// Executable graphs get their own ids (cudaGraphExec_t), distinct from the graphs'.
fn exec_id(g: usize) -> i64 {
    g as i64 + 1 + GRAPHS as i64
}
/// CUPTI's node ids are 64-bit handles; graph g's node k is (g << 32) + k + 1 here.
fn node_id(g: usize, k: usize) -> i64 {
    ((g as i64 + 1) << 32) + k as i64 + 1
}

/// The scenario. Long: its processes, streams and events one after another, as a script.
pub fn build(seed: u64, mode: Mode) -> Result<Scenario> {
    let name = match mode {
        Mode::Graph => "graphs",
        Mode::Node => "graph_nodes",
    };
    let mut b = builder(name, seed, "inference-0");
    b.capture_setting(
        "CUDA_GRAPH_TRACE_OPTIONS:MODE",
        if mode == Mode::Graph { "Graph" } else { "Node" },
    );
    b.capture_setting("PROCESS_0:COMMAND", "python3");
    let p = b.add_process(PID, "python3", None, T_INIT);
    let main = b.main_thread(p);
    let gpu = b.add_gpu(0, H100);
    let s = b.add_stream(p, gpu, 7, StreamKind::Default);
    let h = &mut Host::new(main, T_WORK, seed);
    let mut lane = Lane::new(T_WORK + HOST_LEAD);

    let w_start = h.pause(1_000, 2_000);
    let c = h.call(&mut b, "cudaMemcpyAsync_v3020", 5_000, 9_000);
    let at = lane.place(0, WEIGHTS_NS);
    ahead(&b, "weights copy", c, at)?;
    b.memcpy(s, at, WEIGHTS_NS, WEIGHTS_BYTES, 1, 1, 2, c.corr)?;
    for o in warmup() {
        let at = lane.place(0, o.dur);
        h.launch(&mut b, o.api, s, at, o.dur, &o.k, o.grid, o.block)?;
    }
    h.blocking_call(&mut b, "cudaStreamSynchronize_v3020", lane.free + 3_000)?;
    b.nvtx_push_pop(
        main,
        w_start,
        h.t + 1_000,
        NvtxText::Inline("warmup"),
        0,
        None,
    )?;

    // Capture: the launches are recorded into the graph, nothing runs.
    for g in 0..GRAPHS {
        let c_start = h.pause(20_000, 40_000);
        h.call(&mut b, "cudaStreamBeginCapture_v10000", 2_000, 4_000);
        for o in nodes(g) {
            h.call(&mut b, o.api, 3_000, 9_000);
        }
        h.call(&mut b, "cudaStreamEndCapture_v10000", 5_000, 9_000);
        h.call(
            &mut b,
            "cudaGraphInstantiateWithFlags_v11040",
            200_000,
            400_000,
        );
        let label = if g == 0 {
            "capture bs=8"
        } else {
            "capture bs=16"
        };
        b.nvtx_push_pop(
            main,
            c_start,
            h.pause(1_000, 2_000),
            NvtxText::Inline(label),
            0,
            None,
        )?;
    }

    // Replays: the GPU plan starts a fixed lead after the host's deterministic restart point.
    let mut host_start = lane.free + 2_000_000;
    for i in 0..REPLAYS {
        let g = i % GRAPHS;
        h.resume_at(&b, host_start)?;
        let mut lane = Lane::new(host_start + HOST_LEAD);
        let d_start = h.pause(1_000, 2_000);
        let c = h.call(&mut b, "cudaGraphLaunch_v10000", 8_000, 14_000);
        let ns = nodes(g);
        let starts: Vec<i64> = ns
            .iter()
            .map(|o| lane.place(lane.free + NODE_GAP_NS, o.dur))
            .collect();
        ahead(&b, "graph replay", c, starts[0])?;
        match mode {
            Mode::Graph => b.graph_launch(
                s,
                starts[0],
                lane.free - starts[0],
                graph_id(g),
                exec_id(g),
                c.corr,
            )?,
            Mode::Node => {
                for (k, (o, &at)) in ns.iter().zip(&starts).enumerate() {
                    b.graph_kernel(
                        s,
                        at,
                        o.dur,
                        &o.k,
                        o.grid,
                        o.block,
                        c.corr,
                        graph_id(g),
                        node_id(g, k),
                    )?;
                }
            }
        }
        let c = h.call(&mut b, "cudaMemcpyAsync_v3020", 4_000, 8_000);
        let at = lane.place(0, LOGITS_NS);
        ahead(&b, "logits copy", c, at)?;
        b.memcpy(s, at, LOGITS_NS, LOGITS_BYTES, 2, 2, 1, c.corr)?;
        h.blocking_call(&mut b, "cudaStreamSynchronize_v3020", lane.free + 3_000)?;
        b.nvtx_push_pop(
            main,
            d_start,
            lane.free + 5_000,
            NvtxText::Inline("decode"),
            0,
            None,
        )?;
        host_start = lane.free + 40_000;
    }
    Ok(Scenario {
        spec: spec(name, mode),
        export: b,
    })
}

fn spec(name: &'static str, mode: Mode) -> ScenarioSpec {
    let (g, n, w) = (GRAPHS as u64, REPLAYS as u64, warmup().len() as u64);
    let nodes_per_graph = nodes(0).len() as u64;
    let node_kernels = if mode == Mode::Node {
        n * nodes_per_graph
    } else {
        0
    };
    let kernels = w + node_kernels;
    // warm-up: copy, launches, sync; capture: begin, captured launches, end, instantiate;
    // replay: graph launch, copy, sync
    let api = (1 + w + 1) + g * (nodes_per_graph + 3) + 3 * n;
    let warm_ns: i64 = warmup().iter().map(|o| o.dur).sum();
    let replay_ns: i64 = (0..REPLAYS)
        .map(|i| nodes(i % GRAPHS).iter().map(|o| o.dur).sum::<i64>())
        .sum();
    let compute_ns = warm_ns + if mode == Mode::Node { replay_ns } else { 0 };
    ScenarioSpec {
        name,
        summary: match mode {
            Mode::Graph => "CUDA graph replays traced per graph (CUPTI_ACTIVITY_KIND_GRAPH_TRACE)",
            Mode::Node => "CUDA graph replays traced per node (kernels with graphNodeId)",
        },
        // Graph mode: each replay is one `graph` record, linked to its cudaGraphLaunch.
        counts: counts(&[
            ("kernel", kernels),
            ("memcpy", 1 + n),
            ("cuda-api", api),
            ("nvtx-push-pop", 1 + g + n),
            (
                "link-launch",
                kernels + if mode == Mode::Graph { n } else { 0 },
            ),
            ("link-memory", 1 + n),
            ("graph", if mode == Mode::Graph { n } else { 0 }),
        ]),
        task_pids: vec![PID],
        host_threads: 1,
        gpu_streams: 1,
        gpus: 1,
        nccl_kernels: 0,
        compute_kernels: kernels,
        table_rows: [
            (
                "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                if mode == Mode::Graph { n } else { 0 },
            ),
            ("CUPTI_ACTIVITY_KIND_KERNEL", kernels),
        ]
        .into_iter()
        .collect(),
        compute_ns: vec![compute_ns as u64],
        first_compute_offset_ns: vec![0],
        metrics: Vec::new(),
        graph_launches: n,
        graph_node_kernels: node_kernels,
    }
}
