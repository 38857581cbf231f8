//! The one pass: discover every input, build the object model and the common timeline, then merge
//! all per-family cursors of all inputs (k-way, by time) and push each record to every sink.
//! The reading side (stream.rs) runs on a second thread where the build allows it (threaded.rs);
//! the sinks always run on the caller's thread.

use std::collections::BTreeMap;

use serde::Serialize;

pub mod batch;
mod inputs;
#[cfg(not(target_family = "wasm"))]
mod links_apart;
mod stream;
mod surveys;
#[cfg(not(target_family = "wasm"))]
mod threaded;

use stream::Step;

use crate::error::{Error, Result};
use crate::model::{
    Device, Host, Names, Ns, ObjectModel, OutputCut, Process, Sink, SourceInfo, ThreadId,
    ThreadKind, ThreadObj, TraceInfo,
};
use crate::nsys::discover::{discover, Discovery};
use crate::nsys::Export;
use crate::options::{Align, Chop, Family, Options};
use crate::FastMap;

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
    /// by SQL, because its rows are not in per-resource runs (see nsys/partitioned.rs). Same
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
    /// Helper threads that read rows for the reading thread (nsys/shipped.rs; none where the
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

/// Everything known before the stream starts.
pub struct Plan {
    pub trace: TraceInfo,
    pub discoveries: Vec<Discovery>,
    pub families: Vec<std::collections::BTreeSet<Family>>,
    /// What the inputs as a set tell the user (an export given twice, a rank claimed twice:
    /// pipeline/inputs.rs); the summary begins its warnings with them.
    pub warnings: Vec<String>,
    /// Per source: globalTid → thread, stream key → (thread, device), (pid key, domainId) → domain.
    thread_maps: Vec<FastMap<i64, ThreadId>>,
    stream_maps: Vec<FastMap<crate::nsys::discover::StreamKey, (ThreadId, usize)>>,
    domain_maps: Vec<FastMap<(i64, i64), u32>>,
    metric_maps: Vec<FastMap<u32, ThreadId>>,
    shifts: Vec<i64>,
    /// Per source: the surveys discovery made in its passes over the tables (stream.rs takes
    /// them; a Mutex because the reading thread may be another).
    surveys: Vec<std::sync::Mutex<stream::EarlySurveys>>,
}

/// Discovers every export and lays out objects and time. Fails if nothing can be converted.
pub fn plan(exports: &[Export], opts: &Options) -> Result<Plan> {
    plan_with(exports, opts, false, false)
}

/// A conversion's plan made before the conversion was asked for, for one conversion of the same
/// exports: the page plans when the user picks files (their inspection shows what discovery
/// found), and a conversion that follows with options that plan alike
/// ([`Options::plans_alike`]) starts from this plan instead of discovering again. One use: the
/// conversion takes the surveys discovery made for its readers.
pub struct Planned {
    plan: Plan,
    opts: Options,
}

impl Planned {
    /// Plans a conversion of `exports` with `opts` (surveys included), as [`run`] would;
    /// `range_names`: discovery also counts the NVTX ranges per name in its pass over the table
    /// (for [`take_range_texts`](Self::take_range_texts)).
    pub fn new(exports: &[Export], opts: &Options, range_names: bool) -> Result<Planned> {
        Ok(Planned {
            plan: plan_with(exports, opts, true, range_names)?,
            opts: opts.clone(),
        })
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The NVTX ranges per name of source `src`, where they were counted (taken: the plan
    /// does not keep them for the conversion).
    pub fn take_range_texts(&mut self, src: usize) -> Option<crate::nsys::nvtx::RangeTexts> {
        self.plan.discoveries.get_mut(src)?.range_texts.take()
    }

    /// Whether a conversion with `opts` would make this plan (and so starts from it).
    pub fn fits(&self, opts: &Options) -> bool {
        self.opts.plans_alike(opts)
    }

    /// The plan, if a conversion with `opts` would make this one.
    fn for_options(self, opts: &Options) -> Option<Plan> {
        self.fits(opts).then_some(self.plan)
    }
}

/// [`plan`]; for a conversion (`surveys`), discovery also makes the sort-free readers' surveys
/// in its passes over the tables, and where asked (`range_names`) counts the NVTX ranges per
/// name there.
fn plan_with(exports: &[Export], opts: &Options, surveys: bool, range_names: bool) -> Result<Plan> {
    if exports.is_empty() {
        return Err(Error::Usage("no input file given".into()));
    }
    let mut discoveries: Vec<Discovery> = Vec::with_capacity(exports.len());
    let mut early = Vec::with_capacity(exports.len());
    for ex in exports {
        ex.share_caches(exports.len());
    }
    for (src, ex) in exports.iter().enumerate() {
        let families = crate::nsys::discover::present_families(ex, opts)?;
        let scans = if surveys && opts.read_order == crate::options::ReadOrder::Auto {
            stream::early_scans(ex, &families, src)
        } else {
            stream::EarlyScans::NONE
        };
        let discovered = discover(ex, opts, families, scans.as_reader_scans(), range_names);
        // An input that shrank under discovery is the cause of whatever discovery met.
        ex.check_unchanged()?;
        let (d, surveyed, keyed) = discovered?;
        discoveries.push(d);
        early.push(std::sync::Mutex::new(stream::EarlySurveys::new(
            scans, surveyed, keyed,
        )));
    }
    for (ex, d) in exports.iter().zip(&discoveries) {
        if d.min_time.is_none() {
            let what: Vec<&str> = Family::ALL
                .iter()
                .filter(|f| opts.wants(**f))
                .map(|f| f.table())
                .collect();
            return Err(Error::BadData {
                file: ex.label.clone(),
                why: format!(
                    "the export holds no events to convert: none of {} has rows (nsys {}). Was the capture run with --trace=cuda,nvtx?",
                    what.join(", "),
                    ex.schema.product_version.as_deref().unwrap_or("version unknown")
                ),
            });
        }
    }

    let offsets = clock_offsets(exports, &discoveries, opts.align)?;
    // In i128: absurd timestamps (near ±2^63) must give an error, not an overflow.
    let on_clock = |t: i64, o: i64| i128::from(t) + i128::from(o);
    let origin = discoveries
        .iter()
        .zip(&offsets)
        .filter_map(|(d, o)| d.min_time.map(|t| on_clock(t, *o)))
        .min()
        .unwrap_or(0);
    let last = discoveries
        .iter()
        .zip(&offsets)
        .filter_map(|(d, o)| d.max_time.map(|t| on_clock(t, *o)))
        .max()
        .unwrap_or(origin);
    let span = last - origin;
    // Paraver reads times into a double: beyond 2^53 ns (104 days) they are no longer exact.
    if span > 1i128 << 53 {
        return Err(Error::BadData {
            file: exports[0].label.clone(),
            why: format!("events span {span} ns (over 104 days); timestamps are absurd or the reports are unrelated"),
        });
    }
    let end_time = span as u64;
    let shifts: Vec<i64> = offsets
        .iter()
        .map(|o| {
            i64::try_from(i128::from(*o) - origin).map_err(|_| Error::BadData {
                file: exports[0].label.clone(),
                why: format!("timestamps around {origin} ns are out of the range a trace can hold"),
            })
        })
        .collect::<Result<_>>()?;
    // Trace time of a raw timestamp of source `src` (inside [0, end] for every discovered time).
    let to_trace = |t: i64, src: usize| {
        (i128::from(t) + i128::from(shifts[src])).clamp(0, i128::from(end_time)) as u64
    };

    // Objects: hosts → nodes; processes in input order (by MPI rank, then pid, inside a file).
    let mut objects = ObjectModel::default();
    let mut host_index: FastMap<String, usize> = FastMap::default();
    let mut thread_maps = Vec::new();
    let mut stream_maps = Vec::new();
    let mut domain_maps = Vec::new();
    let mut metric_maps = Vec::new();
    let mut domain_names: Vec<String> = vec![String::new()];
    for d in &discoveries {
        for key in &d.used_domains {
            let name = d
                .domains
                .get(key)
                .cloned()
                .unwrap_or_else(|| format!("domain {}", key.1));
            if !domain_names.contains(&name) {
                domain_names.push(name);
            }
        }
    }
    domain_names[1..].sort();

    for (src, d) in discoveries.iter().enumerate() {
        let host = *host_index.entry(d.hostname.clone()).or_insert_with(|| {
            objects.hosts.push(Host {
                name: d.hostname.clone(),
            });
            objects.hosts.len() - 1
        });
        let mut device_index = FastMap::default();
        for (&cuda_id, name) in &d.devices {
            let existing = objects
                .devices
                .iter()
                .position(|x| x.host == host && x.cuda_id == cuda_id);
            let idx = existing.unwrap_or_else(|| {
                objects.devices.push(Device {
                    host,
                    cuda_id,
                    name: name.clone(),
                    memory_bandwidth: d.device_bandwidth.get(&cuda_id).copied(),
                });
                objects.devices.len() - 1
            });
            device_index.insert(cuda_id, idx);
        }
        // A GPU-metrics-only export has no process with activity: give its metrics one.
        let metrics_only = [(0i64, (0u32, "GPU metrics".to_owned()))];
        let mut procs: Vec<(&i64, &(u32, String))> = d.processes.iter().collect();
        if procs.is_empty() && !d.metric_gpus.is_empty() {
            procs.extend(metrics_only.iter().map(|(k, v)| (k, v)));
        }
        procs.sort_by_key(|(k, (pid, _))| (d.ranks.get(k).copied().unwrap_or(u32::MAX), *pid, **k));
        // Each GPU's metrics thread goes to the first process that uses that GPU, else the first.
        let metrics_owner: FastMap<u32, i64> = d
            .metric_gpus
            .iter()
            .map(|&gpu| {
                let user = procs
                    .iter()
                    .map(|(k, _)| **k)
                    .find(|k| d.streams.keys().any(|s| s.0 == *k && s.1 == gpu));
                (gpu, user.unwrap_or(*procs[0].0))
            })
            .collect();
        let mut mmap = FastMap::default();
        let mut tmap = FastMap::default();
        let mut smap = FastMap::default();
        for (&pkey, (pid, pname)) in procs {
            let process = objects.processes.len();
            objects.processes.push(Process {
                host,
                source: src,
                pid: *pid,
                name: pname.clone(),
                rank: d.ranks.get(&pkey).copied(),
            });
            for (&gt, info) in d.host_threads.range(pkey..=(pkey | 0xFF_FFFF)) {
                tmap.insert(gt, ThreadId(objects.threads.len() as u32));
                let tid = crate::nsys::ids::tid_of(gt);
                let first_busy = info.first_busy.map(|t| to_trace(t, src));
                objects.threads.push(ThreadObj {
                    process,
                    kind: ThreadKind::Host {
                        tid,
                        name: info.name.clone(),
                    },
                    first_busy,
                });
            }
            for (&key, &first) in d.streams.iter().filter(|(k, _)| k.0 == pkey) {
                let device = device_index[&key.1];
                smap.insert(key, (ThreadId(objects.threads.len() as u32), device));
                let first_busy = Some(to_trace(first, src));
                objects.threads.push(ThreadObj {
                    process,
                    kind: ThreadKind::GpuStream {
                        device,
                        context: key.2,
                        stream: key.3,
                    },
                    first_busy,
                });
            }
            for (&gpu, _) in metrics_owner
                .iter()
                .filter(|(_, owner)| **owner == pkey)
                .collect::<std::collections::BTreeMap<_, _>>()
            {
                mmap.insert(gpu, ThreadId(objects.threads.len() as u32));
                let device = device_index[&gpu];
                objects.threads.push(ThreadObj {
                    process,
                    kind: ThreadKind::GpuMetrics { device },
                    first_busy: None,
                });
            }
        }
        metric_maps.push(mmap);
        let dmap = d
            .used_domains
            .iter()
            .map(|key| {
                let name = d
                    .domains
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| format!("domain {}", key.1));
                (
                    *key,
                    domain_names.iter().position(|n| *n == name).unwrap_or(0) as u32,
                )
            })
            .collect();
        thread_maps.push(tmap);
        stream_maps.push(smap);
        domain_maps.push(dmap);
    }
    if objects.threads.len() > 65_535 || objects.processes.len() > 65_535 {
        return Err(Error::BadData {
            file: exports[0].label.clone(),
            why: format!(
                "{} threads in {} processes: Paraver holds at most 65535 objects per level",
                objects.threads.len(),
                objects.processes.len()
            ),
        });
    }

    let sources = exports
        .iter()
        .zip(&discoveries)
        .zip(&offsets)
        .map(|((ex, d), &offset_ns)| SourceInfo {
            label: ex.label.clone(),
            product_version: ex.schema.product_version.clone(),
            schema_version: ex.schema.schema_version.clone(),
            hostname: d.hostname.clone(),
            session_start_utc_ns: d.session_start_utc_ns,
            offset_ns,
            origin_raw_ns: i64::try_from(origin - i128::from(offset_ns)).unwrap_or(i64::MIN),
        })
        .collect();
    let date_label = date_label(
        discoveries
            .iter()
            .filter_map(|d| d.session_start_utc_ns)
            .min(),
    );
    let families = discoveries.iter().map(|d| d.families.clone()).collect();
    let warnings = inputs::warnings(exports, &discoveries);
    let mpi_window = mpi_window(exports, &discoveries, to_trace)?;
    Ok(Plan {
        trace: TraceInfo {
            objects,
            domains: domain_names,
            end_time,
            sources,
            date_label,
            mpi_window,
        },
        discoveries,
        families,
        warnings,
        thread_maps,
        stream_maps,
        domain_maps,
        metric_maps,
        shifts,
        surveys: early,
    })
}

/// Offsets that put every report on one timeline (added to its raw timestamps).
fn clock_offsets(exports: &[Export], discoveries: &[Discovery], align: Align) -> Result<Vec<i64>> {
    if exports.len() < 2 || align == Align::None {
        return Ok(vec![0; exports.len()]);
    }
    match align {
        Align::SessionStart => {
            // Each report counts from its own session start: put them on the wall clock.
            let starts: Vec<Option<i64>> =
                discoveries.iter().map(|d| d.session_start_utc_ns).collect();
            if let Some(i) = starts.iter().position(Option::is_none) {
                return Err(Error::BadData {
                    file: exports[i].label.clone(),
                    why: "no TARGET_INFO_SESSION_START_TIME to align it with the other reports; use --align none or mpi-init".into(),
                });
            }
            let min = starts.iter().flatten().min().copied().unwrap_or(0);
            starts
                .iter()
                .zip(exports)
                .map(|(s, ex)| offset(s.unwrap_or(min), min, ex))
                .collect()
        }
        Align::MpiInit => {
            let ends: Vec<i64> = exports.iter().map(mpi_init_end).collect::<Result<_>>()?;
            let max = ends.iter().copied().max().unwrap_or(0);
            ends.iter()
                .zip(exports)
                .map(|(e, ex)| offset(max, *e, ex))
                .collect()
        }
        Align::None => unreachable!(),
    }
}

/// `a - b` as a clock offset, refused when absurd clocks make it overflow.
fn offset(a: i64, b: i64, ex: &Export) -> Result<i64> {
    a.checked_sub(b).ok_or_else(|| Error::BadData {
        file: ex.label.clone(),
        why: format!("its clock ({b} ns) cannot be aligned with the other reports' ({a} ns)"),
    })
}

/// End of the first MPI_Init/MPI_Init_thread of a report (MPI tables, or NVTX `MPI` domain ranges).
fn mpi_init_end(ex: &Export) -> Result<i64> {
    crate::nsys::mpi_bounds::mpi_bounds(ex, true)?
        .init_end
        .ok_or_else(|| Error::BadData {
            file: ex.label.clone(),
            why: "no MPI_Init call to align on (--align mpi-init)".into(),
        })
}

/// TALP's window on the trace's time: from the latest end of MPI_Init to the earliest start of
/// MPI_Finalize over the inputs that call MPI; `None` without both or when they do not enclose
/// any time.
fn mpi_window(
    exports: &[Export],
    discoveries: &[Discovery],
    to_trace: impl Fn(i64, usize) -> Ns,
) -> Result<Option<(Ns, Ns)>> {
    let (mut start, mut end): (Option<Ns>, Option<Ns>) = (None, None);
    for (src, (ex, d)) in exports.iter().zip(discoveries).enumerate() {
        if !d.families.contains(&Family::Mpi) {
            continue;
        }
        let b = crate::nsys::mpi_bounds::mpi_bounds(ex, !d.nvtx_mpi_domains.is_empty())?;
        let (Some(init), Some(fin)) = (b.init_end, b.finalize_start) else {
            return Ok(None);
        };
        start = start.max(Some(to_trace(init, src)));
        end = Some(end.map_or(to_trace(fin, src), |e| e.min(to_trace(fin, src))));
    }
    Ok(match (start, end) {
        (Some(a), Some(b)) if a < b => Some((a, b)),
        _ => None,
    })
}

/// The part of the (uncut) trace timeline that `chop` keeps.
pub fn resolve_chop(exports: &[Export], plan: &Plan, chop: &Chop) -> Result<(Ns, Ns)> {
    let end = plan.trace.end_time;
    match chop {
        Chop::Window { start, end: stop } => {
            if *start >= end {
                return Err(Error::Usage(format!(
                    "window starts at {start} ns, after the end of the trace ({end} ns)"
                )));
            }
            Ok((*start, (*stop).min(end)))
        }
        Chop::NvtxRange { name, instance } => {
            let mut lo: Option<Ns> = None;
            let mut hi: Option<Ns> = None;
            for (src, ex) in exports.iter().enumerate() {
                let s = &ex.schema;
                if !s.has_columns("NVTX_EVENTS", &["start", "end", "eventType", "text"]) {
                    continue;
                }
                let text = if s.has_column("NVTX_EVENTS", "textId") {
                    format!(
                        "COALESCE(e.text, (SELECT value FROM {} WHERE id = e.textId))",
                        s.strings_table
                    )
                } else {
                    "e.text".to_owned()
                };
                let sql = format!(
                    "SELECT e.start, e.end FROM NVTX_EVENTS e WHERE e.eventType IN (59, 70, 60, 71) \
                     AND e.end IS NOT NULL AND e.end >= e.start AND {text} = ?1 ORDER BY e.start, e.rowid"
                );
                let mut st = ex
                    .conn
                    .prepare(&sql)
                    .map_err(|e| Error::read(&ex.label, "NVTX ranges", e))?;
                let rows = st
                    .query_map([name], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
                    .map_err(|e| Error::read(&ex.label, "NVTX ranges", e))?;
                for (k, row) in rows.enumerate() {
                    let (a, b) = row.map_err(|e| Error::read(&ex.label, "NVTX ranges", e))?;
                    if instance.is_some_and(|n| n as usize != k + 1) {
                        continue;
                    }
                    let to_trace = |t: i64| {
                        (i128::from(t) + i128::from(plan.shifts[src])).clamp(0, i128::from(end))
                            as Ns
                    };
                    lo = Some(lo.map_or(to_trace(a), |x| x.min(to_trace(a))));
                    hi = Some(hi.map_or(to_trace(b), |x| x.max(to_trace(b))));
                }
            }
            match (lo, hi) {
                (Some(lo), Some(hi)) if hi > lo => Ok((lo, hi)),
                _ => Err(Error::Usage(format!(
                    "no NVTX range named '{name}'{} in the inputs; `prvsight info` lists the ranges",
                    instance.map(|n| format!(" with an instance {n}")).unwrap_or_default()
                ))),
            }
        }
    }
}

/// The conversion's plan (`planned`'s where it fits `opts`, else a new one), and the part of the
/// trace its output keeps (`--window`, `--nvtx-range`, `--min-duration`).
fn plan_and_cut(
    exports: &[Export],
    opts: &Options,
    planned: Option<Planned>,
) -> Result<(Plan, OutputCut)> {
    let plan = match planned.and_then(|p| p.for_options(opts)) {
        Some(plan) => plan,
        None => plan_with(exports, opts, true, false)?,
    };
    let window = match &opts.chop {
        Some(c) => Some(resolve_chop(exports, &plan, c)?),
        None => None,
    };
    let cut = OutputCut {
        window,
        min_duration: opts.min_duration.clone(),
    };
    Ok((plan, cut))
}

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

/// What a writing side apart from the reader (the browser's writer worker) needs before the first
/// record: the trace's layout, how to cut it, and the names known then.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Header {
    pub trace: TraceInfo,
    pub cut: OutputCut,
    pub names: Vec<String>,
}

/// The reading side of a conversion whose sinks run apart (the browser's reader worker): what
/// [`run`] does up to the sinks, with the records handed out in batches of bytes
/// (pipeline/batch.rs) instead of to sinks. The records and names are [`run`]'s, in its order.
pub struct SplitReader<'c> {
    reader: stream::Reader<'c>,
    plan: Plan,
    names: Names,
    /// Names already sent (the next batch carries the rest).
    sent: usize,
    estimate: u64,
}

impl<'c> SplitReader<'c> {
    /// Plans and opens every cursor; `progress` as for [`run`] (false cancels).
    pub fn open(
        exports: &'c [Export],
        opts: &Options,
        progress: &mut ProgressFn,
    ) -> Result<(SplitReader<'c>, Header)> {
        Self::open_planned(exports, opts, None, progress)
    }

    /// [`open`](Self::open), starting from `planned` as [`run_planned`] does.
    pub fn open_planned(
        exports: &'c [Export],
        opts: &Options,
        planned: Option<Planned>,
        progress: &mut ProgressFn,
    ) -> Result<(SplitReader<'c>, Header)> {
        let (plan, cut) = plan_and_cut(exports, opts, planned)?;
        let estimate = plan.discoveries.iter().map(|d| d.record_estimate).sum();
        let mut ask = || report(progress, "sorting", 0, estimate);
        let mut names = Names::new();
        let mut reader = stream::Reader::open(
            exports,
            opts,
            &plan,
            &mut names,
            stream::ReadThreads::NONE,
            &mut ask,
        )?;
        // The sinks begin with the names known now, as the one-pass conversion's do.
        let header = Header {
            trace: plan.trace.clone(),
            cut,
            names: names.since(0).to_vec(),
        };
        reader.prime(&mut names, &mut ask)?;
        let sent = header.names.len();
        Ok((
            SplitReader {
                reader,
                plan,
                names,
                sent,
                estimate,
            },
            header,
        ))
    }

    /// Rows of the selected tables (the progress's estimate of the records).
    pub fn estimate(&self) -> u64 {
        self.estimate
    }

    /// The next batch of at most `max` records, with the names interned since the last; `None`
    /// once every record was handed out.
    pub fn next_batch(&mut self, max: usize) -> Result<Option<Vec<u8>>> {
        let mut records = Vec::with_capacity(max);
        while records.len() < max && self.reader.next_into(&mut self.names, &mut records)? {}
        if records.is_empty() {
            return Ok(None);
        }
        let names = self.names.since(self.sent);
        let bytes = batch::encode(names, &records)?;
        self.sent = self.names.len();
        Ok(Some(bytes))
    }

    /// What [`run`] returns, once every batch was taken.
    pub fn finish(self) -> Summary {
        Summary::of(self.plan, self.reader.finish(), false)
    }
}

/// The writing side of a split conversion: the sinks fed from batches of bytes.
pub struct SplitWriter {
    trace: TraceInfo,
    names: Names,
    done: u64,
}

impl SplitWriter {
    /// Begins the sinks (cut as the header says).
    pub fn begin(header: Header, sinks: &mut [&mut dyn Sink]) -> Result<SplitWriter> {
        let mut names = Names::new();
        names.extend_from(&header.names);
        for s in sinks.iter_mut() {
            s.set_output_cut(&header.cut);
        }
        for s in sinks.iter_mut() {
            s.begin(&header.trace, &names)?;
        }
        Ok(SplitWriter {
            trace: header.trace,
            names,
            done: 0,
        })
    }

    /// Delivers a batch's records to the sinks; returns how many records have been delivered.
    pub fn feed(&mut self, bytes: &[u8], sinks: &mut [&mut dyn Sink]) -> Result<u64> {
        let (names, records) = batch::decode(bytes)?;
        self.names.extend_from(&names);
        for rec in &records {
            for s in sinks.iter_mut() {
                s.record(rec, &self.names)?;
            }
        }
        self.done += records.len() as u64;
        Ok(self.done)
    }

    /// Finishes the sinks.
    pub fn finish(self, sinks: &mut [&mut dyn Sink]) -> Result<()> {
        for s in sinks.iter_mut() {
            s.finish(&self.trace, &self.names)?;
        }
        Ok(())
    }
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
        stream::ReadThreads::NONE,
        &mut |step| delivery.step(step),
    )?;
    Ok((read, names, false))
}

/// Tells `progress` where the conversion is; `Cancelled` when it answers to stop.
fn report(progress: &mut ProgressFn, phase: &'static str, done: u64, estimate: u64) -> Result<()> {
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
pub(crate) const FAMILY_NAMES: [&str; 20] = [
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
        },
        Record::Link(l) => match l.kind {
            LinkKind::Launch => 14,
            LinkKind::Memory => 15,
        },
    }
}

/// `DD/MM/YYYY at HH:MM` (UTC) of the session start: deterministic, so the same inputs give the
/// same bytes on every machine and in the browser.
fn date_label(utc_ns: Option<i64>) -> String {
    let c = crate::civil::from_unix_ns(utc_ns.unwrap_or(0));
    format!(
        "{:02}/{:02}/{:04} at {:02}:{:02}",
        c.day, c.month, c.year, c.hour, c.minute
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn date_label_is_utc_civil_date() {
        // 2026-01-25T02:26:42Z (testcuda_report1's session start)
        assert_eq!(
            super::date_label(Some(1_769_308_002_162_486_533)),
            "25/01/2026 at 02:26"
        );
        assert_eq!(super::date_label(None), "01/01/1970 at 00:00");
    }
}
