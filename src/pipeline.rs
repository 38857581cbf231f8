//! The one pass: discover every input, build the object model and the common timeline, then merge
//! all per-family cursors of all inputs (k-way, by time) and push each record to every sink.
//! The reading side (stream.rs) runs on a second thread where the build allows it (threaded.rs);
//! the sinks always run on the caller's thread.

use std::collections::BTreeMap;

use serde::Serialize;

pub mod batch;
mod inputs;
#[cfg(not(target_family = "wasm"))]
pub mod parts;
mod plan;
#[cfg(not(target_family = "wasm"))]
mod share;
#[cfg(not(target_family = "wasm"))]
mod sinks_links;
mod split;
mod stream;
#[cfg(not(target_family = "wasm"))]
mod threaded;

use plan::plan_and_cut;
pub use plan::{plan, resolve_chop, Plan, Planned};
#[cfg(not(target_family = "wasm"))]
pub use share::{share_range, ShareReader, ShareRecord, ShareStart, ShareSummary};
pub use split::{Header, SplitReader, SplitWriter};
use stream::Step;

use crate::error::{Error, Result};
use crate::model::{Names, Sink, TraceInfo};
use crate::nsys::Export;
use crate::options::Options;

/// Progress of a conversion, reported to the face (progress bar, worker messages).
#[derive(Clone, Debug, Serialize)]
pub struct Progress {
    pub phase: &'static str,
    pub records_done: u64,
    /// Rows of the selected tables (each row gives about one record; links add some).
    pub records_estimate: u64,
}

/// What a finished conversion tells the user besides its outputs.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Summary {
    pub trace: TraceInfo,
    pub records: u64,
    /// Records per family name.
    pub counts: BTreeMap<String, u64>,
    /// Things the user should know (data repaired, ranges closed), with how often they happened.
    pub warnings: Vec<String>,
    /// `FILE: WHAT` of every family that could have been read without SQL sorting but was sorted
    /// by SQL, because its rows are not in per-resource runs (see engine/partitioned.rs). Same
    /// output either way; only slower.
    pub sorted_by_sql: Vec<String>,
    /// The inputs whose CUDA calls were read once, for the host calls and for the links to
    /// the GPU operations (nsys/links.rs, `FedLinks`); elsewhere the link join reads them again.
    /// Same output either way.
    #[serde(default)]
    pub links_from_host_calls: Vec<String>,
    /// Whether the inputs were read on a second thread while the sinks wrote (see
    /// pipeline/threaded.rs). Same output either way.
    pub read_ahead: bool,
    /// Helper threads that read rows for the reading thread (engine/helper_threads.rs; none where the
    /// machine has no core for them). Same output either way.
    #[serde(default)]
    pub read_helpers: usize,
}

impl Summary {
    /// The summary of a conversion planned as `plan` whose reading ended with `read`; the plan's
    /// warnings come first.
    fn of(plan: Plan, read: stream::ReadSummary, read_ahead: bool) -> Summary {
        let mut warnings = plan.warnings;
        warnings.extend(read.warnings);
        Summary {
            trace: plan.trace,
            records: read.records,
            counts: read
                .counts
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            warnings,
            sorted_by_sql: read.sorted_by_sql,
            links_from_host_calls: read.links_from_host_calls,
            read_ahead,
            read_helpers: read.helpers,
        }
    }
}

/// Called between records; return `false` to cancel.
pub type ProgressFn<'a> = dyn FnMut(&Progress) -> bool + 'a;

/// Converts `exports` once, feeding every sink.
pub fn run(
    exports: &[Export],
    opts: &Options,
    sinks: &mut [&mut dyn Sink],
    progress: &mut ProgressFn,
) -> Result<Summary> {
    run_planned(exports, opts, None, sinks, progress)
}

/// [`run`], starting from `planned` where it was made for these exports with options that plan
/// alike (else it is dropped and the plan made again). The output is [`run`]'s, byte for byte.
pub fn run_planned(
    exports: &[Export],
    opts: &Options,
    planned: Option<Planned>,
    sinks: &mut [&mut dyn Sink],
    progress: &mut ProgressFn,
) -> Result<Summary> {
    // Natively, many inputs are read a group at a time (parts/groups.rs).
    #[cfg(not(target_family = "wasm"))]
    if let Some(size) = parts::groups::group_size(opts, exports.len()) {
        let (plan, cut) = plan_and_cut(exports, opts, planned)?;
        return parts::groups::run(exports, opts, plan, cut, size, sinks, progress);
    }
    // Natively, the reading thread's connections open while discovery runs.
    #[cfg(not(target_family = "wasm"))]
    let reopening = threaded::Reopening::start(exports, opts);
    #[cfg(target_family = "wasm")]
    let reopening: Option<Reopening> = None;
    let (plan, cut) = plan_and_cut(exports, opts, planned)?;
    for s in sinks.iter_mut() {
        s.set_output_cut(&cut);
    }
    let mut delivery = Delivery {
        sinks,
        progress,
        trace: &plan.trace,
        estimate: plan.discoveries.iter().map(|d| d.record_estimate).sum(),
        done: 0,
    };
    let read = read_into(exports, opts, &plan, &mut delivery, reopening);
    // An input that shrank under the reading is the cause of whatever the reading met.
    unchanged(exports)?;
    let (read, names, read_ahead) = read?;
    delivery.finish(&names)?;
    Ok(Summary::of(plan, read, read_ahead))
}

/// `Err` where an input changed under a pass in a way its readers may not have seen
/// ([`Export::check_unchanged`]).
fn unchanged(exports: &[Export]) -> Result<()> {
    exports.iter().try_for_each(Export::check_unchanged)
}

/// The inputs opened again for a reading thread (threaded.rs); none in the browser, whose
/// workers read on one thread each.
#[cfg(not(target_family = "wasm"))]
type Reopening = threaded::Reopening;
#[cfg(target_family = "wasm")]
type Reopening = std::convert::Infallible;

/// Reads every input into `delivery`: on a second thread where the inputs are being opened again
/// for it (`reopening`: see threaded.rs), else on this one. Also says which it was.
fn read_into(
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    delivery: &mut Delivery,
    reopening: Option<Reopening>,
) -> Result<(stream::ReadSummary, Names, bool)> {
    #[cfg(not(target_family = "wasm"))]
    if let Some(reopening) = reopening {
        // The reading thread has connections of its own: these ones' page caches, filled by
        // discovery, would only add to them (8 MiB per input: it counts with many ranks).
        for ex in exports {
            let _ = ex.conn.execute_batch("PRAGMA shrink_memory;");
        }
        let (read, names) = threaded::read(reopening, exports, opts, plan, delivery)?;
        return Ok((read, names, true));
    }
    #[cfg(target_family = "wasm")]
    let _ = reopening;
    let mut names = Names::new();
    let read = stream::read_records(
        exports,
        opts,
        plan,
        &mut names,
        crate::nsys::cursor::ReadThreads::NONE,
        &mut |step| delivery.step(step),
    )?;
    Ok((read, names, false))
}

/// Tells `progress` where the conversion is; `Cancelled` when it answers to stop.
pub(crate) fn report(
    progress: &mut ProgressFn,
    phase: &'static str,
    done: u64,
    estimate: u64,
) -> Result<()> {
    let p = Progress {
        phase,
        records_done: done,
        records_estimate: estimate,
    };
    if progress(&p) {
        Ok(())
    } else {
        Err(Error::Cancelled)
    }
}

/// The sinks' side of the pass: records in, progress reported, cancellation asked.
struct Delivery<'d, 's, 'p> {
    sinks: &'d mut [&'s mut (dyn Sink + 's)],
    progress: &'d mut ProgressFn<'p>,
    trace: &'d TraceInfo,
    estimate: u64,
    done: u64,
}

impl Delivery<'_, '_, '_> {
    fn ask(&mut self, phase: &'static str) -> Result<()> {
        report(self.progress, phase, self.done, self.estimate)
    }

    fn step(&mut self, step: Step<'_>) -> Result<()> {
        match step {
            Step::Preparing => self.ask("sorting"),
            Step::Begin(names) => {
                for s in self.sinks.iter_mut() {
                    s.begin(self.trace, names)?;
                }
                Ok(())
            }
            Step::Record(rec, names) => self.record(&rec, names),
        }
    }

    /// Threads of their own the sinks keep busy ([`Sink::threads`]).
    #[cfg(not(target_family = "wasm"))]
    fn sink_threads(&self) -> usize {
        self.sinks.iter().map(|s| s.threads()).sum()
    }

    /// A record to every sink (the read-ahead thread's batches are read in place).
    fn record(&mut self, rec: &crate::model::Record, names: &Names) -> Result<()> {
        for s in self.sinks.iter_mut() {
            s.record(rec, names)?;
        }
        self.done += 1;
        if self.done % 16_384 == 0 {
            self.ask("converting")?;
        }
        Ok(())
    }

    fn finish(&mut self, names: &Names) -> Result<()> {
        // Cancelling is too late now: the answer only updates the display.
        let _ = self.ask("finishing");
        for s in self.sinks.iter_mut() {
            s.finish(self.trace, names)?;
        }
        Ok(())
    }
}

/// The families' names as a conversion's summary counts records ([`record_family`]).
pub(crate) const FAMILY_NAMES: [&str; 22] = [
    "kernel",
    "memcpy",
    "memset",
    "graph",
    "cuda-api",
    "mpi",
    "osrt",
    "openacc",
    "nvtx-push-pop",
    "nvtx-start-end",
    "nvtx-mark",
    "mpi-message",
    "gpu-metric",
    "sched",
    "link-launch",
    "link-memory",
    "cuda-event",
    "pthread",
    "gpu-memory",
    "openmp",
    "cpu-counters",
    "nic",
];

/// The family of a record: its name's index in [`FAMILY_NAMES`] (a number, so that the reader
/// counts each record in an array: finding its name among those met cost more).
pub(crate) fn record_family(r: &crate::model::Record) -> usize {
    use crate::model::{GpuOpKind, HostCallKind, LinkKind, NvtxRangeKind, Record};
    match r {
        Record::Gpu(g) => match g.kind {
            GpuOpKind::Kernel(_) => 0,
            GpuOpKind::Memcpy(_) => 1,
            GpuOpKind::Memset(_) => 2,
            GpuOpKind::Graph(_) => 3,
        },
        Record::Host(h) => match h.kind {
            HostCallKind::Cuda(_) => 4,
            HostCallKind::Mpi(_) => 5,
            HostCallKind::Os(_) => 6,
            HostCallKind::OpenAcc(_) => 7,
        },
        Record::Nvtx(n) => match n.kind {
            NvtxRangeKind::PushPop => 8,
            NvtxRangeKind::StartEnd => 9,
        },
        Record::Mark(_) => 10,
        Record::Message(_) => 11,
        Record::Metric(_) => 12,
        Record::Sched(_) => 13,
        Record::Annotation(a) => match a.kind {
            crate::model::AnnotationKind::CudaEvent(_) => 16,
            crate::model::AnnotationKind::Pthread => 17,
            crate::model::AnnotationKind::GpuMemory(_) => 18,
            crate::model::AnnotationKind::OpenMp(_) => 19,
            crate::model::AnnotationKind::CpuCounter(_) => 20,
            crate::model::AnnotationKind::NicMetric(_) => 21,
        },
        Record::Link(l) => match l.kind {
            LinkKind::Launch => 14,
            LinkKind::Memory => 15,
        },
    }
}
