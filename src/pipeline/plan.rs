//! The plan of a conversion: every input discovered, the trace's objects laid out and the inputs'
//! clocks put on one timeline, before the first record is read.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;

use super::inputs;
use crate::error::{Error, Result};
use crate::model::{
    Device, Host, Nic, Ns, ObjectModel, OutputCut, Process, SourceInfo, ThreadId, ThreadKind,
    ThreadObj, TraceInfo,
};
use crate::nsys::cursor::{early_scans, EarlyScans, EarlySurveys};
use crate::nsys::discover::{discover, Discovery, StreamKey};
use crate::nsys::Export;
use crate::options::{Align, Chop, Family, Options};
use crate::FastMap;

/// Everything known before the stream starts.
pub struct Plan {
    pub trace: TraceInfo,
    pub discoveries: Vec<Discovery>,
    pub families: Vec<std::collections::BTreeSet<Family>>,
    /// What the inputs as a set tell the user (an export given twice, a rank claimed twice:
    /// pipeline/inputs.rs); the summary begins its warnings with them.
    pub warnings: Vec<String>,
    /// Per source: globalTid → thread, stream key → (thread, device), (pid key, domainId) → domain.
    pub(super) thread_maps: Vec<FastMap<i64, ThreadId>>,
    pub(super) stream_maps: Vec<FastMap<StreamKey, (ThreadId, usize)>>,
    pub(super) domain_maps: Vec<FastMap<(i64, i64), u32>>,
    pub(super) metric_maps: Vec<FastMap<u32, ThreadId>>,
    /// Per source: NIC (`globalId`) → its thread.
    pub(super) nic_maps: Vec<FastMap<i64, ThreadId>>,
    pub(super) shifts: Vec<i64>,
    /// Per source: the surveys discovery made in its passes over the tables (the cursors take
    /// them; a Mutex because the reading thread may be another).
    pub(super) surveys: Vec<Mutex<EarlySurveys>>,
}

/// Discovers every export and lays out objects and time. Fails if nothing can be converted.
pub fn plan(exports: &[Export], opts: &Options) -> Result<Plan> {
    plan_with(exports, opts, 0..0, false)
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
            plan: plan_with(exports, opts, 0..exports.len(), range_names)?,
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
    pub(super) fn for_options(self, opts: &Options) -> Option<Plan> {
        self.fits(opts).then_some(self.plan)
    }
}

/// [`plan`]; for a conversion, discovery also makes the sort-free readers' surveys of the
/// inputs it reads (`surveyed`) in its passes over the tables, and where asked (`range_names`)
/// counts the NVTX ranges per name there.
fn plan_with(
    exports: &[Export],
    opts: &Options,
    surveyed: Range<usize>,
    range_names: bool,
) -> Result<Plan> {
    if exports.is_empty() {
        return Err(Error::Usage("no input file given".into()));
    }
    let (discoveries, early) = discover_all(exports, opts, surveyed, range_names)?;
    for (ex, d) in exports.iter().zip(&discoveries) {
        if d.min_time.is_none() {
            return Err(no_events(ex, opts));
        }
    }
    let offsets = clock_offsets(exports, &discoveries, opts.align)?;
    let clock = Clock::new(exports, &discoveries, &offsets)?;
    let to_trace = |t: i64, src: usize| clock.to_trace(t, src);
    let layout = Layout::of(&discoveries, to_trace);
    let objects = layout.objects;
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
            origin_raw_ns: i64::try_from(clock.origin - i128::from(offset_ns)).unwrap_or(i64::MIN),
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
            domains: layout.domain_names,
            end_time: clock.end_time,
            sources,
            date_label,
            mpi_window,
        },
        discoveries,
        families,
        warnings,
        thread_maps: layout.thread_maps,
        stream_maps: layout.stream_maps,
        domain_maps: layout.domain_maps,
        metric_maps: layout.metric_maps,
        nic_maps: layout.nic_maps,
        shifts: clock.shifts,
        surveys: early,
    })
}

/// Every export discovered, with the surveys discovery made for the readers (see [`plan_with`]).
fn discover_all(
    exports: &[Export],
    opts: &Options,
    surveyed: Range<usize>,
    range_names: bool,
) -> Result<(Vec<Discovery>, Vec<Mutex<EarlySurveys>>)> {
    let mut discoveries: Vec<Discovery> = Vec::with_capacity(exports.len());
    let mut early = Vec::with_capacity(exports.len());
    for ex in exports {
        ex.share_caches(exports.len());
    }
    for (src, ex) in exports.iter().enumerate() {
        let families = crate::nsys::discover::present_families(ex, opts)?;
        let scans = if surveyed.contains(&src) && opts.read_order == crate::options::ReadOrder::Auto
        {
            early_scans(ex, &families, src)
        } else {
            EarlyScans::NONE
        };
        let discovered = discover(ex, opts, families, scans.as_reader_scans(), range_names);
        // An input that shrank under discovery is the cause of whatever discovery met.
        ex.check_unchanged()?;
        // The statements discovery cached (its tables looked up, a few KiB each) go: each input
        // stays open until the end, however many there are.
        ex.conn.flush_prepared_statement_cache();
        let (d, surveyed, sort_keys) = discovered?;
        discoveries.push(d);
        early.push(Mutex::new(EarlySurveys::new(scans, surveyed, sort_keys)));
    }
    Ok((discoveries, early))
}

/// The error of an export without events of the selected families.
fn no_events(ex: &Export, opts: &Options) -> Error {
    let what: Vec<&str> = Family::ALL
        .iter()
        .filter(|f| opts.wants(**f))
        .map(|f| match f {
            // Counters only go to threads the other families have.
            Family::CpuCounters => "CPU counters (on the threads of other families)",
            _ => f.table(),
        })
        .collect();
    Error::BadData {
        file: ex.label.clone(),
        why: format!(
            "the export holds no events to convert: none of {} has rows (nsys {}). Was the capture run with --trace=cuda,nvtx?",
            what.join(", "),
            ex.schema.product_version.as_deref().unwrap_or("version unknown")
        ),
    }
}

/// The common timeline: where it starts on the aligned clocks, where it ends, and each input's
/// shift from its raw timestamps to trace time.
struct Clock {
    origin: i128,
    end_time: u64,
    shifts: Vec<i64>,
}

impl Clock {
    fn new(exports: &[Export], discoveries: &[Discovery], offsets: &[i64]) -> Result<Clock> {
        // In i128: absurd timestamps (near ±2^63) must give an error, not an overflow.
        let on_clock = |t: i64, o: i64| i128::from(t) + i128::from(o);
        let origin = discoveries
            .iter()
            .zip(offsets)
            .filter_map(|(d, o)| d.min_time.map(|t| on_clock(t, *o)))
            .min()
            .unwrap_or(0);
        let last = discoveries
            .iter()
            .zip(offsets)
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
        let shifts: Vec<i64> = offsets
            .iter()
            .map(|o| {
                i64::try_from(i128::from(*o) - origin).map_err(|_| Error::BadData {
                    file: exports[0].label.clone(),
                    why: format!(
                        "timestamps around {origin} ns are out of the range a trace can hold"
                    ),
                })
            })
            .collect::<Result<_>>()?;
        Ok(Clock {
            origin,
            end_time: span as u64,
            shifts,
        })
    }

    /// Trace time of a raw timestamp of source `src` (inside [0, end] for every discovered time).
    fn to_trace(&self, t: i64, src: usize) -> Ns {
        (i128::from(t) + i128::from(self.shifts[src])).clamp(0, i128::from(self.end_time)) as u64
    }
}

/// The trace's objects (hosts → nodes; processes in input order, by MPI rank, then pid, inside a
/// file), the NVTX domains' names, and per input where its resources went.
struct Layout {
    objects: ObjectModel,
    domain_names: Vec<String>,
    thread_maps: Vec<FastMap<i64, ThreadId>>,
    stream_maps: Vec<FastMap<StreamKey, (ThreadId, usize)>>,
    domain_maps: Vec<FastMap<(i64, i64), u32>>,
    metric_maps: Vec<FastMap<u32, ThreadId>>,
    nic_maps: Vec<FastMap<i64, ThreadId>>,
}

impl Layout {
    fn of(discoveries: &[Discovery], to_trace: impl Fn(i64, usize) -> Ns) -> Layout {
        let mut layout = Layout {
            objects: ObjectModel::default(),
            domain_names: domain_names(discoveries),
            thread_maps: Vec::new(),
            stream_maps: Vec::new(),
            domain_maps: Vec::new(),
            metric_maps: Vec::new(),
            nic_maps: Vec::new(),
        };
        let mut host_index: FastMap<String, usize> = FastMap::default();
        for (src, d) in discoveries.iter().enumerate() {
            layout.add_input(src, d, &mut host_index, &to_trace);
        }
        layout
    }

    /// The objects of input `src`, discovered as `d`.
    fn add_input(
        &mut self,
        src: usize,
        d: &Discovery,
        host_index: &mut FastMap<String, usize>,
        to_trace: &impl Fn(i64, usize) -> Ns,
    ) {
        let objects = &mut self.objects;
        let host = *host_index.entry(d.hostname.clone()).or_insert_with(|| {
            objects.hosts.push(Host {
                name: d.hostname.clone(),
            });
            objects.hosts.len() - 1
        });
        let device_index = add_devices(objects, host, d);
        // NICs are the host's: the first input of a host lays them out.
        let lay_out_nics = !d.nics.is_empty() && !objects.nics.iter().any(|n| n.host == host);
        // A metrics-only export has no process with activity: give its metrics one.
        let only = match d.metric_gpus.is_empty() {
            true => "NIC metrics",
            false => "GPU metrics",
        };
        let metrics_only = [(0i64, (0u32, only.to_owned()))];
        let mut procs: Vec<(&i64, &(u32, String))> = d.processes.iter().collect();
        if procs.is_empty() && (!d.metric_gpus.is_empty() || lay_out_nics) {
            procs.extend(metrics_only.iter().map(|(k, v)| (k, v)));
        }
        procs.sort_by_key(|(k, (pid, _))| (d.ranks.get(k).copied().unwrap_or(u32::MAX), *pid, **k));
        let metrics_owner = metrics_owners(d, &procs);
        let mut mmap = FastMap::default();
        let mut tmap = FastMap::default();
        let mut smap = FastMap::default();
        let mut nmap = FastMap::default();
        for (i, (&pkey, (pid, pname))) in procs.into_iter().enumerate() {
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
                .collect::<BTreeMap<_, _>>()
            {
                mmap.insert(gpu, ThreadId(objects.threads.len() as u32));
                let device = device_index[&gpu];
                objects.threads.push(ThreadObj {
                    process,
                    kind: ThreadKind::GpuMetrics { device },
                    first_busy: None,
                });
            }
            if i == 0 && lay_out_nics {
                nmap = add_nics(objects, host, process, d);
            }
        }
        let dmap = self.domain_map(d);
        self.metric_maps.push(mmap);
        self.nic_maps.push(nmap);
        self.thread_maps.push(tmap);
        self.stream_maps.push(smap);
        self.domain_maps.push(dmap);
    }

    /// Input `d`'s NVTX domains (its keys) → their index among the trace's domain names.
    fn domain_map(&self, d: &Discovery) -> FastMap<(i64, i64), u32> {
        let at = |name: &str| {
            self.domain_names
                .iter()
                .position(|n| n == name)
                .unwrap_or(0)
        };
        (d.used_domains.iter())
            .map(|key| (*key, at(&domain_name(d, key)) as u32))
            .collect()
    }
}

/// A thread per NIC of `d`, on `host`, in `process` (the host's first): `globalId` → thread.
fn add_nics(
    objects: &mut ObjectModel,
    host: usize,
    process: usize,
    d: &Discovery,
) -> FastMap<i64, ThreadId> {
    let mut threads = FastMap::default();
    for (&global_id, found) in &d.nics {
        threads.insert(global_id, ThreadId(objects.threads.len() as u32));
        objects.nics.push(Nic {
            host,
            nic_id: found.nic_id.unwrap_or(global_id),
            name: found.name.clone(),
            device: found.device.clone(),
        });
        objects.threads.push(ThreadObj {
            process,
            kind: ThreadKind::Nic {
                nic: objects.nics.len() - 1,
            },
            first_busy: None,
        });
    }
    threads
}

/// Each GPU's metrics thread goes to the first of `procs` that uses that GPU, else the first.
fn metrics_owners(d: &Discovery, procs: &[(&i64, &(u32, String))]) -> FastMap<u32, i64> {
    d.metric_gpus
        .iter()
        .map(|&gpu| {
            let user = procs
                .iter()
                .map(|(k, _)| **k)
                .find(|k| d.streams.keys().any(|s| s.0 == *k && s.1 == gpu));
            (gpu, user.unwrap_or(*procs[0].0))
        })
        .collect()
}

/// The devices of `d` on `host` (new ones added): CUDA device id → device index.
fn add_devices(objects: &mut ObjectModel, host: usize, d: &Discovery) -> FastMap<u32, usize> {
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
    device_index
}

/// The name of an NVTX domain of `d` (its number where it has none).
fn domain_name(d: &Discovery, key: &(i64, i64)) -> String {
    d.domains
        .get(key)
        .cloned()
        .unwrap_or_else(|| format!("domain {}", key.1))
}

/// Every used NVTX domain's name, the default domain's (empty) first, the others sorted.
fn domain_names(discoveries: &[Discovery]) -> Vec<String> {
    let mut domain_names: Vec<String> = vec![String::new()];
    for d in discoveries {
        for key in &d.used_domains {
            let name = domain_name(d, key);
            if !domain_names.contains(&name) {
                domain_names.push(name);
            }
        }
    }
    domain_names[1..].sort();
    domain_names
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
pub(super) fn plan_and_cut(
    exports: &[Export],
    opts: &Options,
    planned: Option<Planned>,
) -> Result<(Plan, OutputCut)> {
    let plan = match planned.and_then(|p| p.for_options(opts)) {
        Some(plan) => plan,
        None => plan_with(exports, opts, 0..exports.len(), false)?,
    };
    with_cut(exports, opts, plan)
}

/// [`plan_and_cut`] for reading the inputs of `share` only (share.rs): the others are
/// discovered, not surveyed.
#[cfg(not(target_family = "wasm"))]
pub(super) fn plan_share_and_cut(
    exports: &[Export],
    opts: &Options,
    share: Range<usize>,
) -> Result<(Plan, OutputCut)> {
    let plan = plan_with(exports, opts, share, false)?;
    with_cut(exports, opts, plan)
}

/// `plan` with the cut of its trace `opts` asks for.
fn with_cut(exports: &[Export], opts: &Options, plan: Plan) -> Result<(Plan, OutputCut)> {
    let window = match &opts.chop {
        Some(c) => Some(resolve_chop(exports, &plan, c)?),
        None => None,
    };
    if let Some(config) = opts
        .nvtx_payloads
        .as_ref()
        .filter(|_| opts.wants(Family::Nvtx))
    {
        config.check(exports, plan.discoveries.iter().map(|d| &d.domains))?;
    }
    let cut = OutputCut {
        window,
        min_duration: opts.min_duration.clone(),
        nvtx_payloads: opts.nvtx_payloads.clone(),
    };
    Ok((plan, cut))
}

/// `DD/MM/YYYY at HH:MM` (UTC) of the session start: deterministic, so the same inputs give the
/// same bytes on every machine and in the browser.
fn date_label(utc_ns: Option<i64>) -> String {
    let c = crate::dates::from_unix_ns(utc_ns.unwrap_or(0));
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
