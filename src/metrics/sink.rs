//! [`MetricsSink`]: the metrics side of the single pass. It routes each record to the parts that
//! need it (sweep, windows, kernel statistics, NVTX ranges) and assembles the report at the end.
//!
//! Time discipline: pieces of GPU time are emitted by the sweep only up to the current record's
//! time, and before any NVTX range is taken into account every GPU is flushed to that range's
//! start. So a piece never starts before the last window change, which is what lets a window set
//! be a single "open until" number (see `window.rs`).

use crate::FastMap;

use super::accum::{time_class, GpuAcc, GpuTotals};
use super::assemble;
use super::category::{Category, OpCategories};
use super::gemm_activity::GemmActivity;
use super::histogram::Histogram;
use super::host::HostModel;
use super::iterations::{markers::Start, Snapshot, Tracker};
use super::kernels::KernelStats;
use super::nvtx::NvtxRanges;
use super::report::{MetricsReport, OpCounts};
use super::series::Series;
use super::sweep::{Piece, Sweep};
use super::transfers::Transfers;
use super::window::Selection;
use super::{MetricsOptions, NcclAs, MAX_BINS};
use crate::error::{Error, Result};
use crate::model::{
    GpuOp, GpuOpKind, HostCallKind, KernelClass, NameId, Names, Ns, NvtxRange, Record, Sink,
    TraceInfo,
};

/// Everything fed by pieces of GPU time.
pub(super) struct PieceSinks {
    pub nccl_as: NcclAs,
    pub sel: Selection,
    pub gpus: Vec<GpuAcc>,
    /// Per GPU, over the whole trace (what the iterations' windows are cut from).
    pub all: Vec<GpuTotals>,
    pub series: Series,
    pub nvtx: NvtxRanges,
}

impl PieceSinks {
    fn piece(&mut self, p: Piece) {
        // The series shows the whole timeline; everything else only the selected windows.
        self.series.add(&p, self.nccl_as);
        self.all[p.lane].add(p.end - p.start, time_class(p.running, self.nccl_as));
        let end = self.sel.open().clip_end(p.end);
        if end > p.start {
            self.gpus[p.lane].add(end - p.start, p.running, self.nccl_as);
            self.nvtx
                .piece(p.lane, p.start, end, time_class(p.running, self.nccl_as));
        }
    }
}

pub(super) struct State {
    pub sweep: Sweep,
    pub pieces: PieceSinks,
    pub host: HostModel,
    pub kernels: KernelStats,
    pub histograms: FastMap<NameId, Histogram>,
    pub categories: OpCategories,
    pub counts: Vec<OpCounts>,
    pub has_activity: Vec<bool>,
    /// Time of the record being processed.
    pub now: Ns,
    /// Time of the last window change (last NVTX range start).
    pub clock: Ns,
    /// NVTX ranges that started at `now`: whether they start inside the selected windows is known
    /// only once every range starting at `now` has been seen.
    pub deferred: Vec<NvtxRange>,
    pub max_end: Ns,
    pub gemm_activity: GemmActivity,
    pub iterations: Tracker,
    pub transfers: Transfers,
}

/// See [`MetricsSink::held`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// GPU operations and MPI calls started and not yet ended (GEMM kernels counted again while
    /// GPU metric samples may fall in them).
    pub in_flight: usize,
    /// NVTX range names whose window may still be open.
    pub open_range_names: usize,
    /// NVTX ranges starting at the current instant, not yet counted.
    pub deferred_ranges: usize,
}

/// Computes [`MetricsReport`] from the record stream. Feed it to `pipeline::run`, then take the
/// report with [`MetricsSink::into_report`].
pub struct MetricsSink {
    opts: MetricsOptions,
    state: Option<State>,
    report: Option<MetricsReport>,
}

impl MetricsSink {
    pub fn new(opts: MetricsOptions) -> Result<Self> {
        if opts.bins == 0 || opts.bins > MAX_BINS {
            return Err(Error::Usage(format!(
                "--bins must be between 1 and {MAX_BINS}, not {}",
                opts.bins
            )));
        }
        if opts.top == 0 {
            return Err(Error::Usage("--top must be at least 1".into()));
        }
        Ok(MetricsSink {
            opts,
            state: None,
            report: None,
        })
    }

    /// What the sink holds during the pass (None outside it): the figures that must stay bounded
    /// by the trace's concurrency, whatever its length.
    pub fn held(&self) -> Option<Held> {
        self.state.as_ref().map(|st| Held {
            in_flight: st.sweep.in_flight() + st.host.in_flight() + st.gemm_activity.running(),
            open_range_names: st.pieces.nvtx.open_names(),
            deferred_ranges: st.deferred.len(),
        })
    }

    /// The report, once the pass has finished.
    pub fn report(&self) -> Option<&MetricsReport> {
        self.report.as_ref()
    }

    pub fn into_report(self) -> Result<MetricsReport> {
        self.report
            .ok_or_else(|| Error::Usage("metrics: the pass over the records did not finish".into()))
    }
}

fn not_begun() -> Error {
    Error::Usage("metrics: a record arrived before the pass began".into())
}

impl State {
    fn gpu_op(&mut self, op: &GpuOp, names: &Names) -> Result<()> {
        let dev = op.device;
        if dev >= self.counts.len() {
            return Err(Error::BadData {
                file: "metrics".into(),
                why: format!(
                    "GPU operation on device index {dev}, but the trace has {} device(s)",
                    self.counts.len()
                ),
            });
        }
        let end = op.end.max(op.start);
        let pieces = &mut self.pieces;
        self.sweep.advance(op.start, &mut |p| pieces.piece(p));
        let cat = self.categories.of(op, names);
        if cat == Category::Gemm {
            if let GpuOpKind::Kernel(k) = &op.kind {
                self.gemm_activity.gemm_started(dev, op.start, end, k.name);
            }
        }
        if let GpuOpKind::Kernel(k) = &op.kind {
            if self.iterations.follows_kernels() && self.iterations.markers.wants(k.name, dev) {
                let process = self.iterations.thread_process[op.thread.0 as usize];
                let totals = self.snapshot(process, op.start, Some(dev));
                let start = Start {
                    at: op.start,
                    process,
                    totals,
                };
                self.iterations
                    .markers
                    .start(k.name, k.short_name, dev, start);
            }
        }
        self.has_activity[dev] = true;
        self.max_end = self.max_end.max(end);
        if self.pieces.sel.open().contains(op.start) {
            let c = &mut self.counts[dev];
            match &op.kind {
                GpuOpKind::Kernel(k) => {
                    c.kernels += 1;
                    if k.class == KernelClass::Communication {
                        c.nccl_kernels += 1;
                    }
                    let dur = end - op.start;
                    self.kernels.add(dev, k.name, k.short_name, cat, dur);
                    self.histograms.entry(k.name).or_default().add(dur);
                }
                GpuOpKind::Memcpy(m) => {
                    c.memcpy += 1;
                    self.transfers.add(dev, cat, m.bytes, end - op.start);
                }
                GpuOpKind::Memset(m) => {
                    c.memset += 1;
                    self.transfers.add(dev, cat, m.bytes, end - op.start);
                }
                GpuOpKind::Graph(_) => {}
            }
        }
        let pieces = &mut self.pieces;
        self.sweep
            .start(dev, op.start, end, cat.index() as u8, &mut |p| {
                pieces.piece(p)
            });
        Ok(())
    }

    /// Brings every GPU, the selected windows and the NVTX windows to time `t`.
    fn sync_to(&mut self, t: Ns) {
        let pieces = &mut self.pieces;
        self.sweep.advance(t, &mut |p| pieces.piece(p));
        self.sweep.flush(t, &mut |p| pieces.piece(p));
        let sel_before = self.pieces.sel.open();
        self.host.sync_to(t, sel_before);
        self.pieces.sel.advance(self.clock, t);
        self.pieces.nvtx.advance(self.clock, t, sel_before);
        self.clock = t;
    }

    /// Stops the stream, in time order, at each bound of the MPI window up to `t` (the measured
    /// time changes there, and no piece may straddle the change) and at each end of an
    /// iteration candidate's instance (its totals are taken there).
    fn catch_up(&mut self, t: Ns) {
        loop {
            let bound = self.pieces.sel.next_bound().filter(|&b| b <= t);
            let end = self.iterations.ranges.next_end().filter(|e| e.0 <= t);
            if let Some(b) = bound.filter(|&b| end.is_none_or(|e| b <= e.0)) {
                self.sync_to(b);
                self.pieces.sel.pass_bound();
            } else if let Some((at, (_, process, _))) = end {
                let totals = self.snapshot(process, at, None);
                self.iterations.ranges.ended(&totals);
            } else {
                return;
            }
        }
    }

    /// The running totals of `process` at `t` (its MPI time; its GPUs', or only GPU `gpu`'s),
    /// for `t` not before the current record.
    fn snapshot(&mut self, process: usize, t: Ns, gpu: Option<usize>) -> Snapshot {
        let pieces = &mut self.pieces;
        self.sweep.advance(t, &mut |p| pieces.piece(p));
        self.host.advance(t, self.pieces.sel.open());
        let nccl_as = self.pieces.nccl_as;
        let at = |g: usize| {
            let (last, running) = self.sweep.lane(g);
            self.pieces.all[g].plus(t.saturating_sub(last), time_class(running, nccl_as))
        };
        let gpus = match gpu {
            Some(g) => vec![at(g)],
            None => self.iterations.process_gpus[process]
                .iter()
                .map(|&g| at(g))
                .collect(),
        };
        Snapshot {
            mpi: self.host.mpi_until(process, t),
            gpus,
        }
    }

    fn nvtx(&mut self, r: &NvtxRange, names: &Names) {
        self.sync_to(r.start);
        let it = &mut self.iterations;
        if it.follows_ranges() && it.nccl_domain != Some(r.domain) {
            let process = it.thread_process[r.thread.0 as usize];
            let name = names.get(r.name);
            if let Some(slot) = it
                .ranges
                .offer(r.thread, process, r.domain, name, r.start, r.end)
            {
                let at_start = self.snapshot(process, r.start, None);
                self.iterations.ranges.started(slot, at_start);
            }
        }
        self.pieces.sel.offer(r, names.get(r.name));
        self.pieces.nvtx.open(r, names);
        self.max_end = self.max_end.max(r.end);
        self.deferred.push(r.clone());
    }

    fn resolve_deferred(&mut self, names: &Names) {
        let open = self.pieces.sel.open();
        for r in self.deferred.drain(..) {
            if open.contains(r.start) {
                self.pieces.nvtx.count(&r, names);
            }
        }
    }
}

impl Sink for MetricsSink {
    fn begin(&mut self, trace: &TraceInfo, _names: &Names) -> Result<()> {
        let n = trace.objects.devices.len();
        self.state = Some(State {
            sweep: Sweep::new(n),
            pieces: PieceSinks {
                nccl_as: self.opts.nccl_as,
                sel: Selection::new(
                    self.opts.window.clone(),
                    // A time window asked for replaces TALP's; an NVTX range asked for is the
                    // measured time itself.
                    self.opts.time_window.or(trace.mpi_window.filter(|_| {
                        self.opts.elapsed == super::Elapsed::Mpi && self.opts.window.is_none()
                    })),
                ),
                gpus: vec![GpuAcc::default(); n],
                all: vec![GpuTotals::default(); n],
                series: Series::new(n, self.opts.bins, trace.end_time),
                nvtx: NvtxRanges::new(n),
            },
            host: HostModel::new(&trace.objects),
            kernels: KernelStats::default(),
            histograms: FastMap::default(),
            categories: OpCategories::default(),
            counts: vec![OpCounts::default(); n],
            has_activity: vec![false; n],
            now: 0,
            clock: 0,
            deferred: Vec::new(),
            max_end: 0,
            gemm_activity: GemmActivity::new(&trace.objects),
            iterations: Tracker::new(self.opts.iterations.clone(), &trace.objects, &trace.domains),
            transfers: Transfers::new(n),
        });
        self.report = None;
        Ok(())
    }

    fn record(&mut self, rec: &Record, names: &Names) -> Result<()> {
        let st = self.state.as_mut().ok_or_else(not_begun)?;
        let t = rec.time();
        if t < st.now {
            return Err(Error::BadData {
                file: "metrics".into(),
                why: format!("records out of time order: {t} ns after {} ns", st.now),
            });
        }
        if t > st.now {
            st.resolve_deferred(names);
            st.now = t;
        }
        st.catch_up(t);
        match rec {
            Record::Gpu(op) => st.gpu_op(op, names)?,
            Record::Metric(m) => st
                .gemm_activity
                .sample(m.thread, m.time, m.name, m.value, names),
            Record::Nvtx(r) => st.nvtx(r, names),
            Record::Host(h) if matches!(h.kind, HostCallKind::Mpi(_)) => {
                let sel = st.pieces.sel.open();
                st.max_end = st.max_end.max(h.end);
                st.host
                    .call(h.thread, h.start, h.end.max(h.start), sel)
                    .ok_or_else(|| Error::BadData {
                        file: "metrics".into(),
                        why: format!(
                            "MPI call on thread {}, which the trace does not have",
                            h.thread.0
                        ),
                    })?;
                if st.host.is_main(h.thread) {
                    let process = st.iterations.thread_process[h.thread.0 as usize];
                    st.iterations.ranges.mpi_call(process, h.start);
                }
            }
            Record::Host(h) if h.activity == crate::model::HostActivity::CudaSync => {
                let sel = st.pieces.sel.open();
                st.host
                    .device_wait(h.thread, h.start, h.end.max(h.start), sel);
            }
            // Host calls, marks and links do not enter the device model.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, trace: &TraceInfo, names: &Names) -> Result<()> {
        let mut st = self.state.take().ok_or_else(not_begun)?;
        let end = trace.end_time.max(st.max_end).max(st.now);
        st.catch_up(end);
        st.sync_to(end);
        st.resolve_deferred(names);
        let sel = &st.pieces.sel;
        if let Some(spec) = &sel.spec {
            if sel.instances == 0 {
                return Err(Error::Usage(range_not_found(
                    &spec.name,
                    spec.instance,
                    &st,
                )));
            }
        }
        self.report = Some(assemble::build(&self.opts, trace, names, &st, end)?);
        Ok(())
    }
}

fn range_not_found(name: &str, instance: Option<u32>, st: &State) -> String {
    let known = st.pieces.nvtx.most_frequent(15);
    let what = match instance {
        Some(k) => format!("instance {k} of NVTX range '{name}' (counted per thread)"),
        None => format!("NVTX range '{name}'"),
    };
    if known.is_empty() {
        format!("{what} is not in the trace, which has no NVTX ranges")
    } else {
        format!(
            "{what} is not in the trace; ranges present (most frequent first): {}",
            known.join(", ")
        )
    }
}
