//! Hand-computed values on the small hand-built record streams of the fixture.

use super::*;
use crate::real_exports::metrics_of;

#[test]
fn overlap_idle_and_factors_by_hand() {
    let r = scenario()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    assert_eq!(r.schema_version, 2);
    assert_eq!(r.window.elapsed_ns, 1000);
    let g0 = &r.gpus[0];
    let g1 = &r.gpus[1];
    // GPU0 useful = [0,500) = 500; comm = NCCL [450,700) minus useful = [500,700) + memcpy 50 = 250.
    assert_eq!(
        (g0.useful_ns, g0.communication_ns, g0.idle_ns),
        (500, 250, 250)
    );
    // GPU1 useful = [100,300) + [400,500) = 300; comm = [300,900) minus [400,500) = 500.
    assert_eq!(
        (g1.useful_ns, g1.communication_ns, g1.idle_ns),
        (300, 500, 200)
    );
    assert_eq!(g0.useful_fraction, Some(0.5));
    assert_eq!(g1.idle_fraction, Some(0.2));

    // PE = 800/2000, LB = 800/(2·500), CommE = 500/800 (max active is GPU1's), OrchE = 800/1000.
    let e = &r.efficiency;
    assert_eq!(
        (e.gpus, e.useful_sum_ns, e.useful_max_ns, e.active_max_ns),
        (2, 800, 500, 800)
    );
    assert_eq!(e.parallel_efficiency, Some(0.4));
    assert_eq!(e.load_balance, Some(0.8));
    assert_eq!(e.communication_efficiency, Some(0.625));
    assert_eq!(e.orchestration_efficiency, Some(0.8));
    assert_pe_is_product(&r);

    assert_eq!(r.load_balance.useful.avg_ns, Some(400.0));
    assert_eq!(r.load_balance.useful.max_ns, 500);
    assert_eq!(r.load_balance.communication.max_ns, 500);
    assert_eq!(r.load_balance.idle.avg_ns, Some(225.0));

    assert_eq!(
        (g0.counts.kernels, g0.counts.nccl_kernels, g0.counts.memcpy),
        (3, 1, 1)
    );
    assert_eq!((g1.counts.kernels, g1.counts.nccl_kernels), (5, 1));
}

#[test]
fn breakdown_counts_overlapped_time_once_by_priority() {
    let r = scenario()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    let b0 = &r.gpus[0].breakdown;
    // GPU0: gemm owns [0,400) although elementwise overlaps it from 300; elementwise [400,500);
    // NCCL [500,700) (its [450,500) part lies under elementwise); DtoH 50; idle 250.
    assert_eq!(cat_ns(b0, Category::Gemm), 400);
    assert_eq!(cat_ns(b0, Category::Elementwise), 100);
    assert_eq!(cat_ns(b0, Category::Nccl), 200);
    assert_eq!(cat_ns(b0, Category::MemcpyDtoH), 50);
    assert_eq!(group_ns(b0, Group::Idle), 250);
    assert_eq!(b0.groups[0].percent, Some(40.0));
    // GPU1 [400,500): reduce+elementwise [400,420) → reduction; softmax [420,440) outranks both;
    // reduction again [440,450); elementwise alone [450,500).
    let b1 = &r.gpus[1].breakdown;
    assert_eq!(cat_ns(b1, Category::Reduction), 30);
    assert_eq!(cat_ns(b1, Category::Softmax), 20);
    assert_eq!(cat_ns(b1, Category::Elementwise), 50);
    assert_eq!(cat_ns(b1, Category::Nccl), 500);
    assert_eq!(group_ns(b1, Group::OtherCompute), 100);
    // Total over N·T = 2000 ns.
    let t = &r.breakdown;
    assert_eq!(t.total_ns, 2000);
    let groups: Vec<Ns> = t.groups.iter().map(|g| g.ns).collect();
    assert_eq!(groups, vec![600, 0, 200, 700, 50, 450]);
    assert_eq!(t.groups[3].percent, Some(35.0));
    // With NCCL as communication, compute groups are exactly the useful time and the rest the comm.
    for g in &r.gpus {
        let b = &g.breakdown;
        let compute = group_ns(b, Group::Gemm)
            + group_ns(b, Group::Attention)
            + group_ns(b, Group::OtherCompute);
        assert_eq!(compute, g.useful_ns);
        assert_eq!(
            group_ns(b, Group::Nccl) + group_ns(b, Group::Memory),
            g.communication_ns
        );
    }
}

#[test]
fn overlap_profile_buckets_by_hand() {
    let r = scenario()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    let ns = |o: &prvsight::metrics::report::OverlapProfile| -> Vec<Ns> {
        o.buckets.iter().map(|b| b.ns).collect()
    };
    // GPU0: NCCL [450,500) under elementwise (1), [500,700) alone; DtoH alone.
    assert_eq!(ns(&r.gpus[0].overlap), vec![250, 50, 0, 0]);
    // GPU1 NCCL [300,900): alone 100 + 400; [400,420) 2 kernels; [420,440) 3; [440,450) 2; [450,500) 1.
    assert_eq!(ns(&r.gpus[1].overlap), vec![500, 50, 30, 20]);
    assert_eq!(r.gpus[1].overlap.communication_ns, 600);
    assert_eq!(ns(&r.overlap), vec![750, 100, 30, 20]);
    assert_eq!(r.overlap.communication_ns, 900);
    assert!(rel_eq(
        r.overlap.buckets[0].percent.unwrap(),
        100.0 * 750.0 / 900.0
    ));
    assert_eq!(r.overlap.buckets[3].useful_running, "3+");
}

#[test]
fn nccl_as_useful_is_talp_compatible() {
    let r = scenario().run(opts(NcclAs::Useful, None, 4)).unwrap();
    // Every kernel is useful: GPU0 [0,700) = 700, comm = DtoH 50; GPU1 [100,900) = 800, comm 0.
    let (g0, g1) = (&r.gpus[0], &r.gpus[1]);
    assert_eq!(
        (g0.useful_ns, g0.communication_ns, g0.idle_ns),
        (700, 50, 250)
    );
    assert_eq!(
        (g1.useful_ns, g1.communication_ns, g1.idle_ns),
        (800, 0, 200)
    );
    let e = &r.efficiency;
    assert_eq!(e.parallel_efficiency, Some(0.75));
    assert_eq!(e.load_balance, Some(1500.0 / 1600.0));
    assert_eq!(e.communication_efficiency, Some(1.0));
    assert_eq!(e.orchestration_efficiency, Some(0.8));
    assert_pe_is_product(&r);
    // Only the memcpy is communication now, and nothing overlaps it.
    let b: Vec<Ns> = r.overlap.buckets.iter().map(|b| b.ns).collect();
    assert_eq!(b, vec![50, 0, 0, 0]);
    // The breakdown does not depend on the option: kernels + NCCL = useful, memory = comm.
    for g in &r.gpus {
        let bd = &g.breakdown;
        let kernels = group_ns(bd, Group::Gemm)
            + group_ns(bd, Group::Attention)
            + group_ns(bd, Group::OtherCompute)
            + group_ns(bd, Group::Nccl);
        assert_eq!(kernels, g.useful_ns);
        assert_eq!(group_ns(bd, Group::Memory), g.communication_ns);
    }
}

#[test]
fn series_bins_by_hand() {
    let r = scenario()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    let s = &r.series;
    assert_eq!(s.edges_ns, vec![0, 250, 500, 750, 1000]);
    let g0 = &s.gpus[0];
    assert_eq!(g0.useful, vec![1.0, 1.0, 0.0, 0.0]);
    // [500,750): NCCL [500,700) = 200; [750,1000): DtoH 50.
    assert_eq!(g0.communication, vec![0.0, 0.0, 0.8, 0.2]);
    assert_eq!(g0.idle, vec![0.0, 0.0, 0.2, 0.8]);
    // [250,500): gemm 150 + elementwise 200 + NCCL 50 = 400 kernel·ns over 250 ns; never over 2.
    assert_eq!(g0.kernels_in_flight_mean, vec![1.0, 1.6, 0.8, 0.0]);
    assert_eq!(g0.kernels_in_flight_max, vec![1, 2, 1, 0]);
    // GPU1 [250,500): gemm [250,300) 50 useful, NCCL [300,400) 100 comm, [400,500) useful 100.
    assert_eq!(s.gpus[1].useful[1], 150.0 / 250.0);
    assert_eq!(s.gpus[1].communication[1], 100.0 / 250.0);
    assert_eq!(s.gpus[1].kernels_in_flight_max[1], 4);
}

#[test]
fn top_kernels_use_welford_statistics() {
    let r = scenario()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    let k = &r.kernels;
    assert_eq!(k.distinct, 5);
    // Largest total first: NCCL 250 + 600 = 850, then the GEMM 400 + 200 = 600.
    assert_eq!(k.top[0].short_name, "ncclDevKernel_SendRecv");
    assert_eq!(k.top[0].category, Category::Nccl);
    let gemm = &k.top[1];
    assert_eq!(gemm.name, "void ampere_sgemm_128x64_nn(float*)");
    assert_eq!(gemm.category, Category::Gemm);
    assert_eq!(
        (gemm.count, gemm.total_ns, gemm.min_ns, gemm.max_ns),
        (2, 600, 200, 400)
    );
    assert_eq!(gemm.mean_ns, 300.0);
    // Sample standard deviation of {400, 200}: sqrt((100² + 100²) / 1).
    assert!(
        rel_eq(gemm.stddev_ns, 20_000f64.sqrt()),
        "{}",
        gemm.stddev_ns
    );
    // Busy time of both GPUs: 750 + 800.
    assert!(rel_eq(
        gemm.percent_of_busy.unwrap(),
        100.0 * 600.0 / 1550.0
    ));
    let g1 = &k.per_gpu[1];
    assert_eq!((g1.gpu, g1.distinct), (1, 5));
    assert_eq!(g1.top[0].total_ns, 600);
    assert_eq!(g1.top[0].percent_of_busy, Some(75.0));
    // Every duration is under 1 µs: all in the first histogram bin.
    let h = r
        .histograms
        .iter()
        .find(|h| h.short_name == "ampere_sgemm_128x64_nn")
        .unwrap();
    assert_eq!(h.bins.len(), 1);
    assert_eq!(
        (h.bins[0].lo_ns, h.bins[0].hi_ns, h.bins[0].count),
        (0, Some(1000), 2)
    );
}

/// NVTX windows over the scenario: `step` at [200,600) and [650,850), `fwd` at [200,300).
fn windowed() -> Fixture {
    let mut f = scenario();
    f.range(200, 600, "step");
    f.range(200, 300, "fwd");
    f.range(650, 850, "step");
    f
}

#[test]
fn nvtx_window_clips_every_interval() {
    let r = windowed()
        .run(opts(NcclAs::Communication, Some("step"), 4))
        .unwrap();
    assert_eq!(r.window.instances, 2);
    assert_eq!(
        (r.window.first_start_ns, r.window.last_end_ns),
        (Some(200), Some(850))
    );
    // T = 400 + 200.
    assert_eq!(r.window.elapsed_ns, 600);
    let (g0, g1) = (&r.gpus[0], &r.gpus[1]);
    // GPU0: useful [200,500) = 300; comm [500,600) + [650,700) + DtoH [800,850) = 200.
    assert_eq!(
        (g0.useful_ns, g0.communication_ns, g0.idle_ns),
        (300, 200, 100)
    );
    // GPU1: useful [200,300) + [400,500); comm [300,400) + [500,600) + [650,850).
    assert_eq!(
        (g1.useful_ns, g1.communication_ns, g1.idle_ns),
        (200, 400, 0)
    );
    let e = &r.efficiency;
    assert_eq!(e.parallel_efficiency, Some(500.0 / 1200.0));
    assert_eq!(e.load_balance, Some(500.0 / 600.0));
    assert_eq!(e.communication_efficiency, Some(0.5));
    assert_eq!(e.orchestration_efficiency, Some(1.0));
    assert_pe_is_product(&r);
    // Operations count when they start inside a window: GPU0 elementwise, NCCL, DtoH.
    assert_eq!((g0.counts.kernels, g0.counts.memcpy), (2, 1));
    assert_eq!(g1.counts.kernels, 4);
    // The overlap profile is clipped too: GPU1 NCCL inside windows = [300,600) + [650,850).
    let b: Vec<Ns> = g1.overlap.buckets.iter().map(|b| b.ns).collect();
    assert_eq!(b, vec![400, 50, 30, 20]);
    // The series always shows the whole trace.
    assert_eq!(r.series.gpus[0].useful, vec![1.0, 1.0, 0.0, 0.0]);
}

#[test]
fn nvtx_window_nth_instance() {
    let r = windowed()
        .run(opts(NcclAs::Communication, Some("step:2"), 4))
        .unwrap();
    assert_eq!(r.window.instances, 1);
    assert_eq!(r.window.elapsed_ns, 200);
    // [650,850): GPU0 NCCL [650,700) + DtoH 50; GPU1 NCCL all along; nothing useful.
    assert_eq!((r.gpus[0].useful_ns, r.gpus[0].communication_ns), (0, 100));
    assert_eq!((r.gpus[1].useful_ns, r.gpus[1].communication_ns), (0, 200));
    let e = &r.efficiency;
    assert_eq!(e.parallel_efficiency, Some(0.0));
    assert_eq!(e.load_balance, None, "0/0 is undefined, not 0 or 1");
    assert_documented(&r);
    assert_eq!(e.communication_efficiency, Some(0.0));
    assert_eq!(e.orchestration_efficiency, Some(1.0));
}

#[test]
fn nvtx_range_table_has_per_range_efficiency() {
    let r = windowed()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    assert_eq!(r.nvtx.distinct, 2);
    let step = r.nvtx.ranges.iter().find(|n| n.name == "step").unwrap();
    assert_eq!((step.count, step.total_ns, step.mean_ns), (2, 600, 300.0));
    // The factors inside `step` are those of the run restricted to `step`.
    let restricted = windowed()
        .run(opts(NcclAs::Communication, Some("step"), 4))
        .unwrap();
    assert_eq!(step.efficiency, restricted.efficiency);
    // Inside `fwd` [200,300) both GPUs compute all the time.
    let fwd = r.nvtx.ranges.iter().find(|n| n.name == "fwd").unwrap();
    assert_eq!(fwd.efficiency.elapsed_ns, 100);
    assert_eq!(fwd.efficiency.useful_sum_ns, 200);
    assert_eq!(fwd.efficiency.parallel_efficiency, Some(1.0));
    assert_eq!(fwd.efficiency.communication_efficiency, Some(1.0));
}

#[test]
fn ranges_inside_a_window_count_even_at_its_first_instant() {
    let mut f = scenario();
    // `inner` starts at the same instant as the window and is delivered before it.
    f.range(100, 150, "outside");
    f.range_on(ThreadId(0), 1, 200, 250, "inner");
    f.range(200, 600, "step");
    f.range(300, 700, "crossing");
    let r = f.run(opts(NcclAs::Communication, Some("step"), 4)).unwrap();
    let find = |n: &str| r.nvtx.ranges.iter().find(|x| x.name == n);
    let inner = find("inner").unwrap();
    assert_eq!((inner.domain.as_str(), inner.count), ("app", 1));
    assert!(find("outside").is_none(), "starts before the window");
    // `crossing` starts inside: counted whole, but its window is clipped to [300,600).
    let c = find("crossing").unwrap();
    assert_eq!(
        (c.count, c.total_ns, c.efficiency.elapsed_ns),
        (1, 400, 300)
    );
}

#[test]
fn missing_window_range_is_a_usage_error() {
    let e = windowed()
        .run(opts(NcclAs::Communication, Some("nope"), 4))
        .unwrap_err();
    match e {
        Error::Usage(m) => {
            assert!(m.contains("'nope' is not in the trace"), "{m}");
            assert!(m.contains("step") && m.contains("fwd"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    let e = windowed()
        .run(opts(NcclAs::Communication, Some("step:3"), 4))
        .unwrap_err();
    assert!(matches!(e, Error::Usage(m) if m.contains("instance 3")));
}

#[test]
fn bad_streams_are_errors_not_panics() {
    // Out of time order.
    let mut f = Fixture::new(1, 1, 100);
    f.kernel(0, 0, 50, 60, "k");
    f.kernel(0, 0, 10, 20, "k");
    let mut sink = MetricsSink::new(MetricsOptions::default()).unwrap();
    sink.begin(&f.trace, &f.names).unwrap();
    sink.record(&f.recs[0], &f.names).unwrap();
    let e = sink.record(&f.recs[1], &f.names).unwrap_err();
    assert!(
        matches!(e, Error::BadData { ref why, .. } if why.contains("out of time order")),
        "{e}"
    );
    // A device the trace does not have.
    let mut f = Fixture::new(1, 1, 100);
    f.kernel(0, 0, 5, 6, "k");
    if let Record::Gpu(op) = &mut f.recs[0] {
        op.device = 3;
    }
    assert!(matches!(
        f.run(MetricsOptions::default()),
        Err(Error::BadData { .. })
    ));
    // Before begin, and options out of range.
    let mut sink = MetricsSink::new(MetricsOptions::default()).unwrap();
    assert!(sink.record(&f.recs[0], &f.names).is_err());
    for bad in [0, prvsight::metrics::MAX_BINS + 1] {
        let o = MetricsOptions {
            bins: bad,
            ..MetricsOptions::default()
        };
        assert!(matches!(MetricsSink::new(o), Err(Error::Usage(_))));
    }
}

#[test]
fn gpu_without_activity_is_not_in_n() {
    let mut f = Fixture::new(2, 1, 100);
    f.kernel(0, 0, 0, 50, "k");
    let r = f.run(MetricsOptions::default()).unwrap();
    assert_eq!(r.efficiency.gpus, 1);
    assert!(!r.gpus[1].has_activity);
    assert_eq!(r.gpus[1].idle_ns, 100);
    assert_eq!(r.efficiency.parallel_efficiency, Some(0.5));
    assert_eq!(r.efficiency.load_balance, Some(1.0));
    assert_eq!(r.breakdown.total_ns, 100);
}

#[test]
fn json_has_the_documented_top_level_fields() {
    let r = windowed()
        .run(opts(NcclAs::Communication, None, 4))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    let mut want = vec![
        "schema_version",
        "generator",
        "inputs",
        "warnings",
        "options",
        "trace_end_ns",
        "window",
        "definitions",
        "efficiency",
        "gpus",
        "load_balance",
        "breakdown",
        "overlap",
        "kernels",
        "histograms",
        "nvtx",
        "series",
        "host",
        "transfers",
        "iterations",
        "ranks",
        "gemm_activity",
    ];
    let mut got = keys.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["options"]["nccl_as"], "communication");
    assert_eq!(v["host"], serde_json::Value::Null);
    assert_eq!(v["warnings"], serde_json::json!([]));
    assert_eq!(v["gpus"][0]["breakdown"]["groups"][0]["group"], "gemm");
    assert_eq!(v["efficiency"]["load_balance"], 0.8);
    assert_documented(&r);
}

/// Every field name of the report's JSON appears (as `name`) in docs/METRICS.md.
pub(crate) fn assert_documented(r: &MetricsReport) {
    let v: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/METRICS.md")).unwrap();
    let mut missing = Vec::new();
    collect_keys(&v, &mut |k| {
        if !doc.contains(&format!("`{k}`")) {
            missing.push(k.to_owned());
        }
    });
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "fields not documented in docs/METRICS.md: {missing:?}"
    );
}

fn collect_keys(v: &serde_json::Value, f: &mut dyn FnMut(&str)) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                f(k);
                collect_keys(x, f);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_keys(x, f)),
        _ => {}
    }
}

#[test]
fn readable_output_states_the_definitions() {
    let r = windowed()
        .run(opts(NcclAs::Communication, Some("step"), 4))
        .unwrap();
    let t = prvsight::metrics::text::render(&r);
    for needle in [
        "Parallel efficiency       PE       41.67%",
        "Load balance              LB       83.33%",
        "Communication efficiency  CommE    50.00%",
        "Orchestration efficiency  OrchE   100.00%",
        "union of 2 instance(s) of NVTX range 'step'",
        "communication operations: communication-library kernels (NCCL, RCCL, NVSHMEM), memcpy",
        "load balance (LB): Σ useful / (N · max useful)",
        "Host-side POP model (MPI): no MPI calls in the trace",
    ] {
        assert!(t.contains(needle), "missing {needle:?} in\n{t}");
    }
}

#[test]
fn memory_stays_bounded_on_a_long_stream() {
    // 100 000 kernels of 25 ns, one every 10 ns, alternating GPUs and streams: at most 3 in flight.
    // Every third is a GEMM (kept for GPU metric samples only while one may fall in it; this
    // trace has none, so never: it once grew by one entry per GEMM).
    // NVTX: `iter` [100k, 100k+50) and PyTorch-style `op, op_id = k` [100k+10, 100k+20).
    const N: u64 = 100_000;
    let end = 10 * (N - 1) + 25;
    let mut f = Fixture::new(2, 4, end);
    for i in 0..N {
        f.kernel(
            (i % 2) as usize,
            (i / 2 % 4) as u32,
            10 * i,
            10 * i + 25,
            if i % 3 == 0 {
                "ampere_sgemm_128x64_nn"
            } else {
                "k"
            },
        );
    }
    for k in 0..N / 10 {
        f.range(100 * k, 100 * k + 50, "iter");
        f.range(100 * k + 10, 100 * k + 20, &format!("op, op_id = {k}"));
    }
    let mut recs: Vec<&Record> = f.recs.iter().collect();
    recs.sort_by_key(|r| (r.time(), r.family_rank()));
    let mut sink = MetricsSink::new(MetricsOptions::default()).unwrap();
    sink.begin(&f.trace, &f.names).unwrap();
    let mut most = (0, 0, 0);
    for r in recs {
        sink.record(r, &f.names).unwrap();
        let h = sink.held().unwrap();
        most = (
            most.0.max(h.in_flight),
            most.1.max(h.open_range_names),
            most.2.max(h.deferred_ranges),
        );
    }
    assert_eq!(most, (3, 2, 1));
    sink.finish(&f.trace, &f.names).unwrap();
    let r = sink.into_report().unwrap();
    // GPU0 runs [20j, 20j+25) for j < 50 000: one unbroken union from 0; GPU1 the same from 10.
    assert_eq!(r.gpus[0].useful_ns, 20 * (N / 2 - 1) + 25);
    assert_eq!(r.gpus[1].useful_ns, 20 * (N / 2 - 1) + 25);
    assert_eq!(r.gpus[0].idle_ns, end - r.gpus[0].useful_ns);
    // Every `op, op_id = k` is one range name, `op`.
    assert_eq!(r.nvtx.distinct, 2);
    let op = r.nvtx.ranges.iter().find(|n| n.name == "op").unwrap();
    assert_eq!((op.count, op.total_ns), (N / 10, 10 * (N / 10)));
    assert_eq!(op.efficiency.elapsed_ns, 10 * (N / 10));
    assert_eq!(op.efficiency.parallel_efficiency, Some(1.0));
}

#[test]
fn window_by_pytorch_op_name() {
    let mut f = scenario();
    f.range(0, 100, "aten::mm, seq = 1, op_id = 7");
    f.range(800, 900, "aten::mm, op_id = 9");
    let r = f
        .run(opts(NcclAs::Communication, Some("aten::mm"), 4))
        .unwrap();
    assert_eq!((r.window.instances, r.window.elapsed_ns), (2, 200));
    // [0,100): GPU0 gemm; GPU1 idle. [800,900): GPU0 DtoH 50; GPU1 NCCL 100.
    assert_eq!((r.gpus[0].useful_ns, r.gpus[0].communication_ns), (100, 50));
    assert_eq!((r.gpus[1].useful_ns, r.gpus[1].communication_ns), (0, 100));
    // The exact full name selects one call only.
    let one = f
        .run(opts(NcclAs::Communication, Some("aten::mm, op_id = 9"), 4))
        .unwrap();
    assert_eq!((one.window.instances, one.window.elapsed_ns), (1, 100));
}

#[test]
fn cli_prints_json_and_rejects_bad_options() {
    let exe = env!("CARGO_BIN_EXE_prvsight");
    // The sample export ships with the repository (tests/data), so this runs everywhere.
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/testcuda_report1.sqlite"
    );
    let out = std::process::Command::new(exe)
        .args([
            "metrics",
            sample,
            "--json",
            "--bins",
            "10",
            "--nccl-as",
            "useful",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["options"]["nccl_as"], "useful");
    assert_eq!(v["series"]["bins"], 10);
    // The same report as the library gives.
    let lib = metrics_of(
        &[PathBuf::from(sample)],
        &MetricsOptions {
            nccl_as: NcclAs::Useful,
            bins: 10,
            ..MetricsOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        v["efficiency"]["useful_sum_ns"],
        lib.efficiency.useful_sum_ns
    );
    // Families are selectable as for convert: without memcpy nothing is communication here.
    let out = std::process::Command::new(exe)
        .args([
            "metrics", sample, "--json", "-t", "kernel", "--align", "none",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let k: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(k["gpus"][0]["counts"]["memcpy"], 0);
    assert_ne!(
        v["gpus"][0]["communication_ns"], 0,
        "the sample has memcpy time"
    );
    assert_eq!(k["gpus"][0]["communication_ns"], 0);
    assert_eq!(k["gpus"][0]["useful_ns"], v["gpus"][0]["useful_ns"]);
    let text = std::process::Command::new(exe)
        .args(["metrics", sample])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("Device efficiency (POP/TALP model"));
    for bad in [
        &["--nccl-as", "sometimes"][..],
        &["--bins", "0"],
        &["--nvtx-range", "step:0"],
        &["--nvtx-range", "no such range"],
    ] {
        let out = std::process::Command::new(exe)
            .arg("metrics")
            .arg(sample)
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("prvsight: error: "), "{bad:?}: {err}");
    }
}
