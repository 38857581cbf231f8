//! `gpu_metrics`: one process driving 2 H100s (model parallel: one thread launches on both), with
//! nsys GPU metrics sampled every 100 µs on both GPUs. GPU 0 runs 40 back-to-back GEMMs of
//! 125 µs, GPU 1 runs 20 GEMMs of 150 µs every 250 µs. Every kernel boundary falls on a multiple
//! of 25 µs, so each sample's busy share b (percent of its 100 µs interval) is 0, 25, 50, 75 or
//! 100, and every metric is an exact integer function of b: the expected sums follow from the
//! kernel durations alone.
//!
//! Metric names and ids are those nsys uses for its recent GPU metric sets (`GPC Clock Frequency
//! [MHz]`, `SM Active [Throughput %]`...); `typeName` and the value model are ours (no real export
//! with GPU metrics is available, see ddl/GPU_METRICS.sql).

use super::sched::{Host, Lane};
use super::{builder, gemm, Scenario, H100, HOST_LEAD, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::{NvtxText, StreamKind};
use crate::synth::spec::{counts, MetricSpec, ScenarioSpec};

const PID: u32 = 60_021;
/// Sampling period (10 kHz) and number of samples per GPU.
const PERIOD: i64 = 100_000;
const SAMPLES: i64 = 60;
/// Kernels per GPU: (count, duration, start-to-start period).
const GPU_KERNELS: [(i64, i64, i64); 2] = [(40, 125_000, 125_000), (20, 150_000, 250_000)];

/// A metric: id, name, value for busy share b (percent).
type Metric = (i64, &'static str, fn(i64) -> i64);

/// The sampled metrics. The clocks are constant.
const METRICS: [Metric; 7] = [
    (0, "GPC Clock Frequency [MHz]", |_| 1980),
    (1, "SYS Clock Frequency [MHz]", |_| 1755),
    (2, "GR Active [Throughput %]", |b| b),
    (5, "SM Active [Throughput %]", |b| b * 96 / 100),
    (6, "SM Issue [Throughput %]", |b| b * 40 / 100),
    (7, "Tensor Active [Throughput %]", |b| b * 60 / 100),
    (19, "DRAM Read Bandwidth [Throughput %]", |b| b * 20 / 100),
];

/// Busy ns of `intervals` inside (lo, hi].
fn busy_in(intervals: &[(i64, i64)], lo: i64, hi: i64) -> i64 {
    intervals
        .iter()
        .map(|&(s, e)| (e.min(hi) - s.max(lo)).max(0))
        .sum()
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("gpu_metrics", seed, "dgx-m");
    b.capture_setting("CUDA_GRAPH_TRACE_OPTIONS:MODE", "Graph");
    b.capture_setting("GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY", "10000");
    b.capture_setting("PROCESS_0:COMMAND", "python3");
    let p = b.add_process(PID, "python3", None, T_INIT);
    let main = b.main_thread(p);
    let g0 = T_WORK + HOST_LEAD;
    let mut launches = Vec::new();
    let mut busy: Vec<Vec<(i64, i64)>> = Vec::new();
    let mut type_ids = Vec::new();
    for (dev, &(n, dur, period)) in GPU_KERNELS.iter().enumerate() {
        let gpu = b.add_gpu(dev as u32, H100);
        let s = b.add_stream(p, gpu, 7 + 8 * dev as u32, StreamKind::Default);
        let mut lane = Lane::new(g0);
        let mut spans = Vec::new();
        for i in 0..n {
            let at = lane.place(g0 + i * period, dur);
            spans.push((at, at + dur));
            launches.push((at, dev, s));
        }
        busy.push(spans);
        let catalogue: Vec<(i64, &str)> = METRICS.iter().map(|m| (m.0, m.1)).collect();
        type_ids.push(b.gpu_metric_catalog(gpu, "GH100", &catalogue));
    }
    // One thread launches on both GPUs in the order the kernels start.
    launches.sort_by_key(|l| (l.0, l.1));
    let h = &mut Host::new(main, T_WORK, seed);
    let start = h.pause(1_000, 2_000);
    for (i, (at, dev, s)) in launches.iter().enumerate() {
        let k = if *dev == 0 {
            gemm("tn", "128x256x64", "2x1x1", 0)
        } else {
            gemm("nt", "128x128x64", "1x1x1", 0)
        };
        let dur = GPU_KERNELS[*dev].1;
        h.launch(&mut b, *s, *at, dur, &k)?;
        if i == 0 {
            b.nvtx_mark(main, h.t + 500, NvtxText::Inline("first launch"), 0);
        }
    }
    let end = busy.iter().flatten().map(|x| x.1).max().unwrap_or(g0);
    h.blocking_call(&mut b, "cudaDeviceSynchronize_v3020", end + 3_000)?;
    b.nvtx_range(main, start, end + 5_000, "model_parallel_step")?;
    // Samples at g0 + k·PERIOD, each describing the interval before it.
    for (dev, &type_id) in type_ids.iter().enumerate() {
        for k in 1..=SAMPLES {
            let t = g0 + k * PERIOD;
            let share = busy_in(&busy[dev], t - PERIOD, t) * 100 / PERIOD;
            for (id, _, f) in METRICS {
                b.gpu_metric(type_id, t, id, f(share));
            }
        }
    }
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let kernels: u64 = GPU_KERNELS.iter().map(|k| k.0 as u64).sum();
    let busy_ns: Vec<i64> = GPU_KERNELS.iter().map(|&(n, d, _)| n * d).collect();
    let mut metrics = Vec::new();
    for (gpu, &busy) in busy_ns.iter().enumerate() {
        // Σ b over the samples is the busy time in percent of a period; each metric is linear in
        // b (or constant), and exact per sample because b is a multiple of 25.
        let sum_b = busy * 100 / PERIOD;
        for (id, name, f) in METRICS {
            let sum = if f(0) != 0 {
                SAMPLES * f(0)
            } else {
                f(100) * sum_b / 100
            };
            metrics.push(MetricSpec {
                gpu: gpu as u32,
                metric_id: id,
                name,
                samples: SAMPLES as u64,
                sum,
            });
        }
    }
    let m = METRICS.len() as u64;
    ScenarioSpec {
        name: "gpu_metrics",
        summary: "one process on 2 GPUs with GPU_METRICS samples at 10 kHz",
        counts: counts(&[
            ("kernel", kernels),
            ("cuda-api", kernels + 1),
            ("nvtx-push-pop", 1),
            ("nvtx-mark", 1),
            ("link-launch", kernels),
            // Every GPU_METRICS row is one sample record.
            ("gpu-metric", 2 * m * SAMPLES as u64),
        ]),
        task_pids: vec![PID],
        host_threads: 1,
        gpu_streams: 2,
        gpus: 2,
        nccl_kernels: 0,
        compute_kernels: kernels,
        table_rows: [
            ("TARGET_INFO_GPU", 2),
            ("TARGET_INFO_GPU_METRICS", 2 * m),
            ("GPU_METRICS", 2 * m * SAMPLES as u64),
        ]
        .into_iter()
        .collect(),
        compute_ns: vec![busy_ns.iter().sum::<i64>() as u64],
        first_compute_offset_ns: vec![0],
        metrics,
        graph_launches: 0,
        graph_node_kernels: 0,
    }
}
