//! The metrics sink: hand-computed values on small hand-built record streams (every expected number
//! is worked out in the comments), then every real export, with invariants and independent SQL
//! checks on the two-GPU NCCL captures.

use std::path::{Path, PathBuf};

use prvsight::metrics::report::MetricsReport;
use prvsight::metrics::{Category, Group, MetricsOptions, MetricsSink, NcclAs, WindowSpec};
use prvsight::model::classify::kernel_class;
use prvsight::model::{
    Device, GpuOp, GpuOpKind, Host, Kernel, Memcpy, Names, Ns, NvtxRange, NvtxRangeKind,
    ObjectModel, Process, Record, Sink, SourceInfo, ThreadId, ThreadKind, ThreadObj, TraceInfo,
};
use prvsight::nsys::Export;
use prvsight::{Error, Options};

// ---------------------------------------------------------------------------------------------
// Hand-built streams

/// One host, one process; thread 0 is the host thread, then `streams` GPU streams per GPU.
struct Fixture {
    names: Names,
    trace: TraceInfo,
    recs: Vec<Record>,
    streams: u32,
}

impl Fixture {
    fn new(gpus: usize, streams: u32, end: Ns) -> Fixture {
        let mut threads = vec![ThreadObj {
            process: 0,
            kind: ThreadKind::Host { tid: 1, name: None },
            first_busy: None,
        }];
        for d in 0..gpus {
            for s in 0..streams {
                threads.push(ThreadObj {
                    process: 0,
                    kind: ThreadKind::GpuStream {
                        device: d,
                        context: 1,
                        stream: s + 7,
                    },
                    first_busy: None,
                });
            }
        }
        let objects = ObjectModel {
            hosts: vec![Host {
                name: "node".into(),
            }],
            processes: vec![Process {
                host: 0,
                source: 0,
                pid: 100,
                name: "app".into(),
                rank: None,
            }],
            devices: (0..gpus)
                .map(|d| Device {
                    host: 0,
                    cuda_id: d as u32,
                    name: None,
                    memory_bandwidth: None,
                })
                .collect(),
            threads,
            ..ObjectModel::default()
        };
        let trace = TraceInfo {
            objects,
            domains: vec![String::new(), "app".into()],
            end_time: end,
            sources: vec![SourceInfo {
                label: "hand-built".into(),
                product_version: None,
                schema_version: None,
                hostname: "node".into(),
                session_start_utc_ns: None,
                offset_ns: 0,
                origin_raw_ns: 0,
            }],
            date_label: String::new(),
            mpi_window: None,
        };
        Fixture {
            names: Names::new(),
            trace,
            recs: Vec::new(),
            streams,
        }
    }

    fn stream(&self, gpu: usize, s: u32) -> ThreadId {
        assert!(s < self.streams);
        ThreadId(1 + gpu as u32 * self.streams + s)
    }

    fn kernel(&mut self, gpu: usize, s: u32, start: Ns, end: Ns, short: &str) {
        let full = format!("void {short}(float*)");
        let k = Kernel {
            name: self.names.intern(&full),
            short_name: self.names.intern(short),
            class: kernel_class(&full, short),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            registers_per_thread: 32,
            static_shared_memory: 0,
            dynamic_shared_memory: 0,
            local_memory_per_thread: 0,
            local_memory_total: 0,
        };
        self.op(gpu, s, start, end, GpuOpKind::Kernel(k));
    }

    fn memcpy(&mut self, gpu: usize, s: u32, start: Ns, end: Ns, copy_kind: u32) {
        let m = Memcpy {
            copy_kind,
            bytes: 4096,
            src_kind: None,
            dst_kind: None,
        };
        self.op(gpu, s, start, end, GpuOpKind::Memcpy(m));
    }

    fn op(&mut self, gpu: usize, s: u32, start: Ns, end: Ns, kind: GpuOpKind) {
        self.recs.push(Record::Gpu(GpuOp {
            thread: self.stream(gpu, s),
            device: gpu,
            start,
            end,
            next_on_stream: None,
            correlation_id: self.recs.len() as u64,
            graph_node_id: None,
            kind,
        }));
    }

    fn range(&mut self, start: Ns, end: Ns, name: &str) {
        self.range_on(ThreadId(0), 0, start, end, name);
    }

    fn range_on(&mut self, thread: ThreadId, domain: u32, start: Ns, end: Ns, name: &str) {
        self.recs.push(Record::Nvtx(NvtxRange {
            thread,
            end_thread: thread,
            start,
            end,
            kind: NvtxRangeKind::PushPop,
            domain,
            name: self.names.intern(name),
            category: None,
            color: None,
            unterminated: false,
            payload_json: None,
        }));
    }

    /// Delivers the records as the pipeline does: by time, then family rank, then insertion order.
    fn run(&self, opts: MetricsOptions) -> Result<MetricsReport, Error> {
        let mut recs: Vec<&Record> = self.recs.iter().collect();
        recs.sort_by_key(|r| (r.time(), r.family_rank()));
        let mut sink = MetricsSink::new(opts)?;
        sink.begin(&self.trace, &self.names)?;
        for r in recs {
            sink.record(r, &self.names)?;
        }
        sink.finish(&self.trace, &self.names)?;
        sink.into_report()
    }
}

fn opts(nccl_as: NcclAs, window: Option<&str>, bins: usize) -> MetricsOptions {
    MetricsOptions {
        nccl_as,
        window: window.map(|w| WindowSpec::parse(w).unwrap()),
        bins,
        top: 20,
        ..MetricsOptions::default()
    }
}

/// The two-GPU scenario every hand-computed test uses (T = 1000 ns).
///
/// GPU0: gemm [0,400) s0 · elementwise [300,500) s1 · NCCL [450,700) s2 · memcpy DtoH [800,850) s3
/// GPU1: gemm [100,300) s0 · NCCL [300,900) s1 · elementwise [400,500) s2 · reduce [400,450) s3 ·
///       softmax [420,440) s0
fn scenario() -> Fixture {
    let mut f = Fixture::new(2, 4, 1000);
    f.kernel(0, 0, 0, 400, "ampere_sgemm_128x64_nn");
    f.kernel(1, 0, 100, 300, "ampere_sgemm_128x64_nn");
    f.kernel(0, 1, 300, 500, "vectorized_elementwise_kernel");
    f.kernel(1, 1, 300, 900, "ncclDevKernel_SendRecv");
    f.kernel(1, 2, 400, 500, "vectorized_elementwise_kernel");
    f.kernel(1, 3, 400, 450, "reduce_kernel");
    f.kernel(1, 0, 420, 440, "softmax_warp_forward");
    f.kernel(0, 2, 450, 700, "ncclDevKernel_SendRecv");
    f.memcpy(0, 3, 800, 850, 2);
    f
}

fn rel_eq(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

fn assert_pe_is_product(r: &MetricsReport) {
    let e = &r.efficiency;
    let (Some(pe), Some(p)) = (e.parallel_efficiency, e.product()) else {
        return;
    };
    assert!(rel_eq(pe, p), "PE {pe} != LB×CommE×OrchE {p}");
}

fn group_ns(b: &prvsight::metrics::report::Breakdown, g: Group) -> Ns {
    b.groups.iter().find(|r| r.group == g).unwrap().ns
}

fn cat_ns(b: &prvsight::metrics::report::Breakdown, c: Category) -> Ns {
    b.categories
        .iter()
        .find(|r| r.category == c)
        .map_or(0, |r| r.ns)
}

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
fn assert_documented(r: &MetricsReport) {
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

// ---------------------------------------------------------------------------------------------
// Real exports

fn shared_traces() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/traces"));
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!(
            "SKIP: {} is missing; real-export metric tests not run",
            p.display()
        );
        None
    }
}

/// Every export alone, plus each folder of rank files as one multi-input trace.
fn real_inputs(dir: &Path) -> Vec<Vec<PathBuf>> {
    let mut singles = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut groups = Vec::new();
    while let Some(d) = stack.pop() {
        let mut ranks = Vec::new();
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "sqlite") {
                if p.file_name().unwrap().to_string_lossy().starts_with("rank") {
                    ranks.push(p.clone());
                }
                singles.push(vec![p]);
            }
        }
        if ranks.len() > 1 {
            ranks.sort();
            groups.push(ranks);
        }
    }
    singles.sort();
    groups.sort();
    singles.extend(groups);
    singles
}

fn open(paths: &[PathBuf]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

fn metrics_of(paths: &[PathBuf], o: &MetricsOptions) -> Result<MetricsReport, Error> {
    prvsight::metrics::compute(&open(paths), &Options::default(), o)
}

/// What must hold for any report.
fn check_invariants(r: &MetricsReport, what: &str) {
    let t = r.window.elapsed_ns;
    let active: Vec<_> = r.gpus.iter().filter(|g| g.has_activity).collect();
    for g in &r.gpus {
        assert_eq!(
            g.useful_ns + g.communication_ns + g.idle_ns,
            t,
            "{what} {}",
            g.label
        );
        assert_eq!(g.active_ns, g.useful_ns + g.communication_ns, "{what}");
        for f in [g.useful_fraction, g.communication_fraction, g.idle_fraction]
            .into_iter()
            .flatten()
        {
            assert!((0.0..=1.0).contains(&f), "{what} fraction {f}");
        }
        let groups: Ns = g.breakdown.groups.iter().map(|x| x.ns).sum();
        assert_eq!(groups, t, "{what} breakdown of {}", g.label);
        assert_eq!(group_ns(&g.breakdown, Group::Idle), g.idle_ns, "{what}");
        assert_eq!(g.overlap.buckets[0].ns, g.communication_ns, "{what}");
    }
    let groups: Ns = r.breakdown.groups.iter().map(|x| x.ns).sum();
    assert_eq!(groups, t * active.len() as Ns, "{what} total breakdown");
    let e = &r.efficiency;
    assert_eq!(e.gpus, active.len());
    assert_eq!(
        e.useful_sum_ns,
        active.iter().map(|g| g.useful_ns).sum::<Ns>()
    );
    for f in [
        e.parallel_efficiency,
        e.load_balance,
        e.communication_efficiency,
        e.orchestration_efficiency,
    ]
    .into_iter()
    .flatten()
    {
        assert!((0.0..=1.0).contains(&f), "{what} factor {f}");
    }
    assert_pe_is_product(r);
    let s = &r.series;
    assert_eq!(s.edges_ns.len(), s.bins + 1);
    assert_eq!(
        *s.edges_ns.last().unwrap(),
        if s.bins == 0 { 0 } else { r.trace_end_ns }
    );
    for g in &s.gpus {
        for i in 0..s.bins {
            for f in [g.useful[i], g.communication[i], g.idle[i]] {
                assert!((0.0..=1.0).contains(&f), "{what} series {f}");
            }
            let sum = g.useful[i] + g.communication[i] + g.idle[i];
            assert!(
                (sum - 1.0).abs() < 1e-12,
                "{what} series bin {i} sums to {sum}"
            );
        }
    }
    if r.window.nvtx_range.is_none() && r.window.mpi_start_ns.is_none() {
        assert_eq!(t, r.trace_end_ns);
        // The series and the totals are two roads to the same useful time (float sums only).
        for (g, sg) in r.gpus.iter().zip(&s.gpus) {
            let from_bins: f64 = (0..s.bins)
                .map(|i| sg.useful[i] * (s.edges_ns[i + 1] - s.edges_ns[i]) as f64)
                .sum();
            assert!(
                (from_bins - g.useful_ns as f64).abs() <= 1e-9 * t as f64,
                "{what}"
            );
        }
    }
    if let Some(h) = &r.host {
        assert_eq!(h.elapsed_ns, t, "{what}");
        for k in &h.ranks {
            assert_eq!(k.useful_ns + k.mpi_ns, t, "{what}");
        }
        for f in [
            h.parallel_efficiency,
            h.load_balance,
            h.communication_efficiency,
        ]
        .into_iter()
        .flatten()
        {
            assert!((0.0..=1.0).contains(&f), "{what} host factor {f}");
        }
        if let (Some(pe), Some(lb), Some(ce)) = (
            h.parallel_efficiency,
            h.load_balance,
            h.communication_efficiency,
        ) {
            assert!(rel_eq(pe, lb * ce), "{what} host PE");
        }
    }
    for n in &r.nvtx.ranges {
        assert!(n.count > 0 && n.mean_ns <= n.total_ns as f64, "{what}");
        assert_eq!(n.efficiency.gpus, active.len());
        if let (Some(pe), Some(p)) = (n.efficiency.parallel_efficiency, n.efficiency.product()) {
            assert!(rel_eq(pe, p), "{what} range {}", n.name);
        }
    }
}

#[test]
fn every_real_export_has_consistent_metrics() {
    let Some(dir) = shared_traces() else { return };
    let mut checked = 0;
    for paths in real_inputs(&dir) {
        let what = paths
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect::<Vec<_>>()
            .join("+");
        for nccl_as in [NcclAs::Communication, NcclAs::Useful] {
            let o = MetricsOptions {
                nccl_as,
                bins: 97,
                ..MetricsOptions::default()
            };
            match metrics_of(&paths, &o) {
                Ok(r) => {
                    check_invariants(&r, &what);
                    checked += 1;
                }
                Err(e) => {
                    // Only exports that do not convert at all may fail, with the converter's error.
                    let conv = prvsight::pipeline::run(
                        &open(&paths),
                        &Options::default(),
                        &mut [],
                        &mut |_| true,
                    );
                    assert!(
                        conv.is_err(),
                        "{what}: metrics failed ({e}) but conversion works"
                    );
                    eprintln!("SKIP {what}: does not convert: {e}");
                }
            }
        }
    }
    assert!(checked >= 16, "only {checked} reports checked");
}

#[test]
fn mpi_ranks_have_ranges_but_no_gpus() {
    let Some(dir) = shared_traces() else { return };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|i| dir.join(format!("generated/mpi4/rank{i}.sqlite")))
        .collect();
    let o = MetricsOptions {
        window: Some(WindowSpec::parse("iteration").unwrap()),
        ..MetricsOptions::default()
    };
    let r = metrics_of(&ranks, &o).unwrap();
    check_invariants(&r, "mpi4 iteration");
    assert_eq!(r.efficiency.gpus, 0);
    assert_eq!(r.efficiency.parallel_efficiency, None);
    // 20 iterations per rank, each containing one `compute` push/pop range.
    assert_eq!(r.window.instances, 80);
    let compute = r.nvtx.ranges.iter().find(|n| n.name == "compute").unwrap();
    assert_eq!(compute.count, 80);
    let sql: u64 = ranks
        .iter()
        .map(|p| {
            sql_u64(
                p,
                "SELECT sum(e.end - e.start) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                 WHERE e.eventType = 59 AND coalesce(e.text, s.value) = 'compute'",
            )
        })
        .sum();
    assert_eq!(compute.total_ns, sql);
}

fn intervals(p: &Path, q: &str) -> Vec<(i64, i64)> {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut st = c.prepare(q).unwrap();
    let v = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|x| x.unwrap())
        .collect();
    v
}

/// Length of the intersection of two merged unions.
fn overlap_length(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    length(a) - minus_length(a, b)
}

#[test]
fn host_pop_model_of_mpi_ranks_matches_sql() {
    let Some(dir) = shared_traces() else { return };
    for (folder, nsys2022) in [
        ("generated/mpi4", false),
        ("generated/mpi4_nsys2022.4", true),
    ] {
        let files: Vec<PathBuf> = (0..4)
            .map(|i| dir.join(format!("{folder}/rank{i}.sqlite")))
            .collect();
        // MPI calls of each rank's main thread, straight from the export.
        let mpi_sql = if nsys2022 {
            // nsys 2022: MPI calls are push/pop ranges of the NVTX domain named MPI.
            "SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59 AND domainId = \
             (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'MPI')"
        } else {
            "SELECT start, end FROM (SELECT start, end, globalTid FROM MPI_P2P_EVENTS \
             UNION ALL SELECT start, end, globalTid FROM MPI_COLLECTIVES_EVENTS \
             UNION ALL SELECT start, end, globalTid FROM MPI_START_WAIT_EVENTS \
             UNION ALL SELECT start, end, globalTid FROM MPI_OTHER_EVENTS) \
             WHERE globalTid = (SELECT globalTid FROM MPI_RANKS)"
        };
        let iter_sql =
            "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                        WHERE e.eventType = 59 AND coalesce(e.text, s.value) = 'iteration'";
        // The trace aligns the reports on their session start (wall clock).
        let starts: Vec<i64> = files
            .iter()
            .map(|f| sql_u64(f, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") as i64)
            .collect();
        let min_start = *starts.iter().min().unwrap();
        let shifted = |i: usize, q: &str| -> Vec<(i64, i64)> {
            let d = starts[i] - min_start;
            union(
                intervals(&files[i], q)
                    .into_iter()
                    .map(|(s, e)| (s + d, e + d))
                    .collect(),
            )
        };
        let mpi: Vec<Vec<(i64, i64)>> = (0..4).map(|i| shifted(i, mpi_sql)).collect();
        let windows = union((0..4).flat_map(|i| shifted(i, iter_sql)).collect());
        // TALP's window: the latest end of MPI_Init to the earliest start of MPI_Finalize.
        let call = |name: &str| {
            if nsys2022 {
                format!("SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                         WHERE e.eventType = 59 AND coalesce(e.text, s.value) = '{name}'")
            } else {
                format!("SELECT e.start, e.end FROM MPI_OTHER_EVENTS e JOIN StringIds s ON s.id = e.textId \
                         WHERE s.value = '{name}'")
            }
        };
        let talp_start = (0..4)
            .map(|i| shifted(i, &call("MPI_Init"))[0].1)
            .max()
            .unwrap();
        let talp_end = (0..4)
            .map(|i| shifted(i, &call("MPI_Finalize"))[0].0)
            .min()
            .unwrap();
        let talp = vec![(talp_start, talp_end)];

        let whole = metrics_of(&files, &MetricsOptions::default()).unwrap();
        // The same window, on the trace's time (0 = its first event) rather than the sessions'.
        let (a, b) = (
            whole.window.mpi_start_ns.unwrap(),
            whole.window.mpi_end_ns.unwrap(),
        );
        assert_eq!(a as i64 - talp_start, b as i64 - talp_end, "{folder}");
        assert_eq!(whole.window.elapsed_ns as i64, talp_end - talp_start);
        let trace = metrics_of(
            &files,
            &MetricsOptions {
                elapsed: prvsight::metrics::Elapsed::Trace,
                ..MetricsOptions::default()
            },
        )
        .unwrap();
        assert_eq!(trace.window.elapsed_ns, trace.trace_end_ns, "{folder}");
        let inside = metrics_of(
            &files,
            &MetricsOptions {
                window: Some(WindowSpec::parse("iteration").unwrap()),
                ..MetricsOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            inside.window.elapsed_ns as i64,
            length(&windows),
            "{folder}"
        );
        for (r, clip) in [
            (&whole, Some(&talp)),
            (&trace, None),
            (&inside, Some(&windows)),
        ] {
            let h = r.host.as_ref().expect("MPI ranks");
            let t = r.window.elapsed_ns;
            assert_eq!((h.ranks.len(), h.elapsed_ns), (4, t), "{folder}");
            let mut useful = Vec::new();
            for k in &h.ranks {
                let i = k.rank.expect("rank known") as usize;
                let want = match clip {
                    Some(w) => overlap_length(&mpi[i], w),
                    None => length(&mpi[i]),
                };
                assert_eq!(k.mpi_ns as i64, want, "{folder} rank {i} window={clip:?}");
                assert_eq!(k.useful_ns, t - k.mpi_ns);
                assert_eq!(k.other_thread_calls, 0);
                useful.push(k.useful_ns);
            }
            let (sum, max) = (useful.iter().sum::<u64>(), *useful.iter().max().unwrap());
            assert_eq!(
                h.load_balance,
                Some(sum as f64 / (4.0 * max as f64)),
                "{folder}"
            );
            assert_eq!(h.communication_efficiency, Some(max as f64 / t as f64));
            let pe = h.parallel_efficiency.unwrap();
            let product = h.load_balance.unwrap() * h.communication_efficiency.unwrap();
            assert!(
                rel_eq(pe, product),
                "{folder}: PE {pe} vs LB×CommE {product}"
            );
        }
        assert_documented(&inside);
        // rank 3 computes 1.5× longer (README): it waits least in MPI, so it holds max useful.
        let h = inside.host.as_ref().unwrap();
        let max_rank = h.ranks.iter().max_by_key(|k| k.useful_ns).unwrap();
        assert_eq!(max_rank.rank, Some(3), "{folder}");
    }
}

// --- the two-GPU NCCL captures, checked against SQL computed here ---

fn sql_u64(p: &Path, q: &str) -> u64 {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
        .unwrap()
        .unwrap_or(0) as u64
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Compute,
    CommKernel,
    Memory,
}

/// (deviceId, start, end, kind) of every kernel, memcpy and memset of an export.
fn gpu_rows(p: &Path) -> Vec<(i64, i64, i64, Op)> {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut out = Vec::new();
    // The model's rule, restated: a communication kernel's short or demangled name (without a
    // leading "void ") starts with nccl, rccl or nvshmem.
    let comm = |n: &str| {
        let n = n.trim_start_matches("void ");
        ["nccl", "rccl", "nvshmem"].iter().any(|x| n.starts_with(x))
    };
    let mut st = c
        .prepare(
            "SELECT k.deviceId, k.start, k.end, s.value, d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON d.id = k.demangledName",
        )
        .unwrap();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (d, s, e, short, dem) = row.unwrap();
        let kind = if comm(&short) || comm(&dem) {
            Op::CommKernel
        } else {
            Op::Compute
        };
        out.push((d, s, e, kind));
    }
    for t in ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"] {
        let mut st = c
            .prepare(&format!("SELECT deviceId, start, end FROM {t}"))
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, Op::Memory)))
            .unwrap();
        out.extend(rows.map(|r| r.unwrap()));
    }
    out
}

/// Sorted, merged union of intervals.
fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(v: &[(i64, i64)]) -> i64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// Length of `a` minus `b` (both merged unions).
fn minus_length(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let overlap: i64 = a
        .iter()
        .map(|&(s, e)| {
            b.iter()
                .map(|&(bs, be)| (e.min(be) - s.max(bs)).max(0))
                .sum::<i64>()
        })
        .sum();
    length(a) - overlap
}

#[test]
fn two_gpu_nccl_captures_match_sql() {
    let Some(dir) = shared_traces() else { return };
    for (file, nccl_per_gpu) in [
        ("mfu_2gpu_before.sqlite", 33),
        ("mfu_2gpu_after.sqlite", 31),
    ] {
        let p = dir.join(file);
        let rows = gpu_rows(&p);
        for nccl_as in [NcclAs::Communication, NcclAs::Useful] {
            let o = MetricsOptions {
                nccl_as,
                ..MetricsOptions::default()
            };
            let r = metrics_of(std::slice::from_ref(&p), &o).unwrap();
            check_invariants(&r, file);
            assert_eq!(r.gpus.len(), 2, "{file}: one GPU per process");
            for g in &r.gpus {
                let dev = g.cuda_id as i64;
                let sql_nccl = sql_u64(
                    &p,
                    &format!(
                        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName \
                         WHERE k.deviceId = {dev} AND s.value LIKE 'nccl%'"
                    ),
                );
                assert_eq!(g.counts.nccl_kernels, sql_nccl, "{file} GPU{dev}");
                assert_eq!(
                    g.counts.nccl_kernels, nccl_per_gpu,
                    "{file} GPU{dev} (SOURCES.md)"
                );
                let sql_kernels = sql_u64(
                    &p,
                    &format!(
                        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = {dev}"
                    ),
                );
                assert_eq!(g.counts.kernels, sql_kernels, "{file} GPU{dev}");

                let is_useful = |op: Op| match nccl_as {
                    NcclAs::Communication => op == Op::Compute,
                    NcclAs::Useful => op != Op::Memory,
                };
                let pick = |useful: bool| {
                    union(
                        rows.iter()
                            .filter(|r| r.0 == dev && is_useful(r.3) == useful)
                            .map(|r| (r.1, r.2))
                            .collect(),
                    )
                };
                let (useful, comm) = (pick(true), pick(false));
                assert_eq!(
                    g.useful_ns as i64,
                    length(&useful),
                    "{file} GPU{dev} useful ({nccl_as:?})"
                );
                assert_eq!(
                    g.communication_ns as i64,
                    minus_length(&comm, &useful),
                    "{file} GPU{dev} communication ({nccl_as:?})"
                );
            }
        }
    }
}

#[test]
fn nvtx_window_on_a_real_capture_matches_sql_union() {
    let Some(dir) = shared_traces() else { return };
    let p = dir.join("mfu_2gpu_before.sqlite");
    let o = MetricsOptions {
        window: Some(WindowSpec::parse("ncclSend").unwrap()),
        ..MetricsOptions::default()
    };
    let r = metrics_of(std::slice::from_ref(&p), &o).unwrap();
    check_invariants(&r, "mfu ncclSend window");
    let c = rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let q = "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
             WHERE e.eventType IN (59, 60) AND coalesce(e.text, s.value) = 'ncclSend'";
    let mut st = c.prepare(q).unwrap();
    let v: Vec<(i64, Option<i64>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|x| x.unwrap())
        .collect();
    assert!(
        v.iter().all(|x| x.1.is_some()),
        "every ncclSend range is closed in the export"
    );
    let windows = union(v.iter().map(|&(s, e)| (s, e.unwrap())).collect());
    assert_eq!(r.window.instances, v.len() as u64);
    assert_eq!(r.window.elapsed_ns as i64, length(&windows));
}
