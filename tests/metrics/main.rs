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

mod by_hand;
#[path = "../common/mod.rs"]
mod common;
mod real_exports;

// The hand-built streams the tests of `by_hand` run.

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
