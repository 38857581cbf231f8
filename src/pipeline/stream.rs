//! The reading side of the pass: every family's cursor of every input, merged by time into one
//! stream of records handed to `out` (the sinks, directly or through the read-ahead thread).

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::surveys::{survey_all, Job};
use super::{record_family, Plan, FAMILY_NAMES};
use crate::error::{Error, Result};
use crate::model::{Names, Record};
use crate::nsys::cursor::{Cursor, CursorKind, OwnedRows, Partitioned, Query, RowSource, SourceCx};
use crate::nsys::discover::{Discovery, Keyed, ReaderScans};
use crate::nsys::keyed::{KeySpec, KeyedRows};
use crate::nsys::links::{Call, CallTap, FedLinks, LinkJoin, Operations};
use crate::nsys::partitioned::{OrderedRows, PartitionedRows, Spec, Survey};
#[cfg(not(target_family = "wasm"))]
use crate::nsys::shipped::Helpers;
use crate::nsys::{cuda_events, gpu_memory, openmp, pthread};
use crate::nsys::{gpu, gpu_metrics, host, links, mpi_p2p, nvtx, sched, Export, StringCache};
use crate::options::{Family, Options, ReadOrder, ReadPages};
use crate::sqlfile::Pager;
use crate::FastMap;
use std::rc::Rc;

/// What the reading side hands out, in this order: `Preparing` (any number of times), `Begin`
/// once, then every record.
pub(super) enum Step<'a> {
    /// Cursors are being opened (surveys, SQL sorts): a point where the user may cancel.
    Preparing,
    /// Every name of the trace's objects is known: the sinks can begin.
    Begin(&'a Names),
    /// The next record in time order, with the names it may refer to.
    Record(Record, &'a Names),
}

/// The surveys and sort keys discovery made (see [`early_scans`]), for the readers to take.
pub(crate) struct EarlySurveys {
    surveys: Vec<(Spec, Option<rusqlite::Result<Option<Survey>>>)>,
    keys: Option<(KeySpec, Keyed)>,
}

impl EarlySurveys {
    pub(crate) fn new(
        scans: EarlyScans,
        surveyed: Vec<rusqlite::Result<Option<Survey>>>,
        keyed: Keyed,
    ) -> Self {
        EarlySurveys {
            surveys: scans
                .specs
                .into_iter()
                .zip(surveyed.into_iter().map(Some))
                .collect(),
            keys: scans.keys.map(|spec| (spec, keyed)),
        }
    }

    /// The survey of `spec`, if discovery made it (each is taken once).
    fn take(&mut self, spec: &Spec) -> Option<rusqlite::Result<Option<Survey>>> {
        self.surveys
            .iter_mut()
            .find(|(s, outcome)| outcome.is_some() && s == spec)
            .and_then(|(_, outcome)| outcome.take())
    }

    /// Forgets what was not taken: the readers are open (a spec is ~2 KiB an input).
    fn clear(&mut self) {
        self.surveys = Vec::new();
        self.keys = None;
    }

    /// The keys of `spec`, if discovery collected them (taken once).
    fn take_keys(&mut self, spec: &KeySpec) -> Keyed {
        match &mut self.keys {
            Some((s, keyed)) if s == spec => keyed.take(),
            _ => None,
        }
    }
}

/// What the sort-free readers scan that discovery can scan in its own passes over the tables
/// (nsys/scanset.rs): the partitioned readers' specs and the NVTX reader's sort keys that depend
/// on nothing discovery finds but the families present.
pub(crate) struct EarlyScans {
    pub specs: Vec<Spec>,
    pub keys: Option<KeySpec>,
}

impl EarlyScans {
    /// Nothing to scan early: a plan for no reading (`prvsight info`), or every family read
    /// through SQL's sort.
    pub(crate) const NONE: EarlyScans = EarlyScans {
        specs: Vec::new(),
        keys: None,
    };

    pub(crate) fn as_reader_scans(&self) -> ReaderScans<'_> {
        ReaderScans {
            specs: &self.specs,
            keys: self.keys.as_ref(),
        }
    }
}

/// The scans discovery can make for the readers ([`EarlyScans`]). They are built as
/// [`read_records`] builds them, so that it finds them equal; one that is not (the host calls
/// when nsys 2022's NVTX MPI ranges join them) is surveyed then.
pub(super) fn early_scans(ex: &Export, families: &BTreeSet<Family>, src: usize) -> EarlyScans {
    let nothing_found = Discovery::default();
    let queries = gpu::query(&ex.schema, families, src)
        .into_iter()
        .chain(host::query(&ex.schema, &nothing_found, families, src))
        .chain(links::query(&ex.schema, families, src))
        .chain(families.contains(&Family::Sched).then(|| sched::query(src)))
        .chain(
            families
                .contains(&Family::Nvtx)
                .then(|| nvtx::query(&ex.schema, src)),
        );
    let mut early = EarlyScans::NONE;
    for q in queries {
        match q.partitioned {
            Some(Partitioned::Rows(spec)) => early.specs.push(spec),
            // The calls' own survey only where the host calls' reader cannot feed the join
            // (Reader::open asks for it then): most often it can.
            Some(Partitioned::Links { gpu, .. }) => early.specs.push(gpu),
            Some(Partitioned::Keys(keys)) => early.keys = Some(keys),
            None => {}
        }
    }
    early
}

/// What reading found besides the records.
pub(super) struct ReadSummary {
    pub records: u64,
    /// Records per family name.
    pub counts: BTreeMap<&'static str, u64>,
    pub warnings: Vec<String>,
    pub sorted_by_sql: Vec<String>,
    pub links_from_host_calls: Vec<String>,
    /// Helper threads started (nsys/shipped.rs).
    pub helpers: usize,
}

impl ReadSummary {
    /// Counts records handed out elsewhere (the links made on the sinks' thread), per family
    /// (by index in [`FAMILY_NAMES`]).
    #[cfg(not(target_family = "wasm"))]
    pub fn add(&mut self, tally: &[u64; FAMILY_NAMES.len()]) {
        for (name, &n) in FAMILY_NAMES.into_iter().zip(tally) {
            if n > 0 {
                *self.counts.entry(name).or_insert(0) += n;
                self.records += n;
            }
        }
    }
}

/// The threads the reading side may use besides its own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadThreads {
    /// Threads for the surveys discovery did not make (surveys.rs).
    pub surveys: usize,
    /// Helper threads at most for the partitioned readers that feed nothing else
    /// (nsys/shipped.rs; native builds).
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    pub helpers: usize,
    /// Whether the link joins fed by the host calls' readers are made by the sinks' thread
    /// (pipeline/links_apart.rs): the reader then hands out the calls its host cursors read
    /// ([`Reader::take_calls`]) and the joins to make ([`Reader::take_links_apart`]) instead
    /// of the links.
    pub links_apart: bool,
}

impl ReadThreads {
    /// The reading thread alone.
    pub(crate) const NONE: ReadThreads = ReadThreads {
        surveys: 1,
        helpers: 0,
        links_apart: false,
    };
}

/// A link join the reader leaves to the sinks' thread: input `source`'s GPU operations (`gpu`'s
/// spec, the runs `ops` surveyed), joined with the calls [`Reader::take_calls`] hands out for
/// it, in their order.
#[cfg_attr(target_family = "wasm", allow(dead_code))]
pub(crate) struct LinksApart {
    pub source: usize,
    pub gpu: Spec,
    pub ops: Survey,
}

/// The calls read for the joins left to the sinks' thread, each with its join's index among
/// the [`LinksApart`] handed out.
pub(crate) type CallsRead = Vec<(usize, Call)>;

/// Where [`read_record_batches`] hands out a batch, with the calls read since the last one.
#[cfg(not(target_family = "wasm"))]
pub(super) type BatchOut<'b> = &'b mut dyn FnMut(Vec<Record>, CallsRead, &Names) -> Result<()>;

/// Opens every cursor of every input and merges them (k-way, by time) into `out`; `names` gets
/// every name the records refer to. An error from `out` stops the reading and is returned. The
/// reading may use `threads` besides this one.
pub(super) fn read_records(
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    names: &mut Names,
    threads: ReadThreads,
    out: &mut dyn FnMut(Step<'_>) -> Result<()>,
) -> Result<ReadSummary> {
    let mut reader = open_primed(exports, opts, plan, names, threads, out)?;
    while let Some(rec) = reader.next(names)? {
        out(Step::Record(rec, names))?;
    }
    Ok(reader.finish())
}

/// Where [`read_record_batches`] hands its records: vectors of `len` (the last one shorter)
/// to `full`, with the names they may refer to.
#[cfg(not(target_family = "wasm"))]
pub(super) struct Batches<'b> {
    pub len: usize,
    /// A batch, with the calls read since the last one for the joins left to the sinks'
    /// thread ([`ReadThreads::links_apart`]).
    pub full: BatchOut<'b>,
    /// The joins left to the sinks' thread, before the first batch (where there are any).
    pub links_apart: &'b mut dyn FnMut(Vec<LinksApart>) -> Result<()>,
}

/// [`read_records`] for the read-ahead thread: the records go out in batches, each moved once
/// from its cursor into its batch; `out` gets the steps before them.
#[cfg(not(target_family = "wasm"))]
pub(super) fn read_record_batches(
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    names: &mut Names,
    threads: ReadThreads,
    out: &mut dyn FnMut(Step<'_>) -> Result<()>,
    batches: Batches<'_>,
) -> Result<ReadSummary> {
    let len = batches.len;
    let mut reader = open_primed(exports, opts, plan, names, threads, out)?;
    let apart = reader.take_links_apart();
    if !apart.is_empty() {
        (batches.links_apart)(apart)?;
    }
    loop {
        let mut batch = Vec::with_capacity(len);
        let mut read = Ok(true);
        while batch.len() < len {
            read = reader.next_into(names, &mut batch);
            if !matches!(read, Ok(true)) {
                break;
            }
        }
        let last = batch.len() < len;
        let calls = reader.take_calls();
        // Handed out even where the reading failed: the records and calls read before the
        // failure reach the sinks as in the one-thread pass, and a link join made there (above)
        // meets what that pass's join met before the failure, whose error then comes first.
        if !batch.is_empty() || !calls.is_empty() {
            (batches.full)(batch, calls, names)?;
        }
        read?;
        if last {
            return Ok(reader.finish());
        }
    }
}

/// The reader with every cursor opened and primed, `Begin` handed to `out` in between.
fn open_primed<'c>(
    exports: &'c [Export],
    opts: &Options,
    plan: &Plan,
    names: &mut Names,
    threads: ReadThreads,
    out: &mut dyn FnMut(Step<'_>) -> Result<()>,
) -> Result<Reader<'c>> {
    let mut reader = Reader::open(exports, opts, plan, names, threads, &mut || {
        out(Step::Preparing)
    })?;
    out(Step::Begin(names))?;
    reader.prime(names, &mut || out(Step::Preparing))?;
    Ok(reader)
}

/// The reading side as a source of records: every family's cursor of every input, merged by
/// time. [`read_records`] drives it for the one-thread pass and the read-ahead thread; the
/// browser's reader worker pulls its records a batch at a time.
pub(crate) struct Reader<'c> {
    cxs: Vec<SourceCx<'c>>,
    cursors: Vec<Cursor<'c>>,
    /// (time, family rank, cursor) of every cursor with a head, the earliest on top.
    heap: BinaryHeap<Reverse<(u64, u8, usize)>>,
    /// Per cursor: the link cursor fed with the calls it reads (a host cursor's [`CallTap`]).
    fed: Vec<Option<usize>>,
    /// Per cursor: the join left to the sinks' thread that gets the calls it reads (its index
    /// among [`links_apart`](Self::links_apart)), where [`ReadThreads::links_apart`] asks so.
    apart: Vec<Option<usize>>,
    /// The joins left to the sinks' thread, until taken (native builds: the page has no
    /// read-ahead thread).
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    links_apart: Vec<LinksApart>,
    /// The calls read for those joins (join index, call) since they were last taken.
    calls: CallsRead,
    /// The cursor whose head was handed out last: it moves on at the next call (so that what
    /// it decodes follows the record handed out, as when the sinks were called in between).
    to_advance: Option<usize>,
    /// Records handed out, per family (by index in [`FAMILY_NAMES`]: a string-keyed map per
    /// record was 1–2 % of the reading thread, a search of the names met 0.5–1 %).
    tally: [u64; FAMILY_NAMES.len()],
    records: u64,
    sorted_by_sql: Vec<String>,
    links_from_host_calls: Vec<String>,
    helpers: usize,
}

/// Input `src`'s decoding context with what every decoder reads: its clock shift, the trace's
/// end, its strings, and its threads' and streams' objects (a link names both ends). The
/// reader adds what its other families need.
pub(super) fn input_cx<'c>(ex: &'c Export, plan: &Plan, src: usize) -> Result<SourceCx<'c>> {
    let strings = StringCache::new(&ex.conn, &ex.schema.strings_table, &ex.label)?;
    let mut cx = SourceCx::new(
        ex.label.clone(),
        plan.shifts[src],
        plan.trace.end_time,
        strings,
    );
    cx.threads = plan.thread_maps[src].clone();
    cx.streams = plan.stream_maps[src].clone();
    Ok(cx)
}

impl<'c> Reader<'c> {
    /// Opens every cursor of every input (surveys, SQL sorts); `preparing` is called between
    /// the long steps (a point where the user may cancel).
    pub(crate) fn open(
        exports: &'c [Export],
        opts: &Options,
        plan: &Plan,
        names: &mut Names,
        threads: ReadThreads,
        preparing: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Reader<'c>> {
        let mut cxs: Vec<SourceCx> = Vec::with_capacity(exports.len());
        for (src, ex) in exports.iter().enumerate() {
            let d = &plan.discoveries[src];
            let categories = d
                .categories
                .iter()
                .map(|(k, v)| (*k, names.intern(v)))
                .collect();
            let mut cx = input_cx(ex, plan, src)?;
            cx.domains = plan.domain_maps[src].clone();
            cx.categories = categories;
            cx.metric_threads = plan.metric_maps[src].clone();
            cx.metric_names = d
                .metric_names
                .iter()
                .map(|(k, v)| (*k, names.intern(v)))
                .collect();
            cxs.push(cx);
        }

        // MPI messages: every input with MPI tables gets a receive index; sends look receives up.
        let rank_sources: std::sync::Arc<FastMap<u32, usize>> = plan
            .trace
            .objects
            .processes
            .iter()
            .filter_map(|p| p.rank.map(|r| (r, p.source)))
            .collect::<FastMap<_, _>>()
            .into();
        let matching: Vec<bool> = exports
            .iter()
            .enumerate()
            .map(|(src, ex)| plan.families[src].contains(&Family::Mpi) && mpi_p2p::available(ex))
            .collect();
        for (src, ex) in exports.iter().enumerate() {
            cxs[src].rank_sources = rank_sources.clone();
            if matching[src] {
                mpi_p2p::build_receive_index(ex)?;
                let lookup = ex
                    .conn
                    .prepare(mpi_p2p::receive_lookup_sql())
                    .map_err(|e| Error::read(&ex.label, "MPI receives", e))?;
                cxs[src].recv_lookup = Some(lookup);
            }
        }

        let mut queries: Vec<Query> = Vec::new();
        for (src, ex) in exports.iter().enumerate() {
            let fams = &plan.families[src];
            queries.extend(gpu::query(&ex.schema, fams, src));
            queries.extend(host::query(&ex.schema, &plan.discoveries[src], fams, src));
            if fams.contains(&Family::Nvtx) {
                queries.push(nvtx::query(&ex.schema, src));
            }
            queries.extend(links::query(&ex.schema, fams, src));
            if matching[src] {
                queries.push(mpi_p2p::send_query(ex, src));
            }
            if fams.contains(&Family::GpuMetrics) {
                queries.push(gpu_metrics::query(src));
            }
            if fams.contains(&Family::Sched) {
                queries.push(sched::query(src));
            }
            if fams.contains(&Family::CudaEvent) {
                queries.extend(cuda_events::query(&ex.schema, src));
            }
            if fams.contains(&Family::Pthread) {
                queries.extend(pthread::query(&ex.schema, src));
            }
            if fams.contains(&Family::GpuMemory) {
                queries.extend(gpu_memory::query(&ex.schema, src));
            }
            if fams.contains(&Family::OpenMp) {
                queries.extend(openmp::query(&ex.schema, src));
            }
        }
        preparing()?;
        // Where a family can be read without SQL sorting (per-resource sorted runs), that replaces
        // its SQL query; the surveys decide, table by table. Discovery made most of them already;
        // the others are made now, in spec order.
        let mut jobs: Vec<Job> = Vec::new();
        let mut surveyed: std::collections::VecDeque<Option<rusqlite::Result<Option<Survey>>>> =
            std::collections::VecDeque::new();
        if opts.read_order == ReadOrder::Auto {
            // Per input: whether discovery's survey of its host calls can feed the link join
            // (then the join's own survey of the calls is not needed).
            let mut host_feeds = vec![false; exports.len()];
            for q in &queries {
                let source = q.source;
                // Takes discovery's survey of `spec`, or asks for one where `needed`; says
                // whether discovery's has a sound aux column.
                let mut runs = |spec, needed: bool| {
                    let early = plan.surveys[source]
                        .lock()
                        .expect("only this thread takes surveys")
                        .take(spec);
                    let sound = matches!(&early, Some(Ok(Some(s))) if s.aux_sound());
                    match early {
                        Some(early) => surveyed.push_back(Some(early)),
                        None if needed => {
                            jobs.push(Job { source, spec });
                            surveyed.push_back(None);
                        }
                        None => surveyed.push_back(Some(Ok(None))),
                    }
                    sound
                };
                match &q.partitioned {
                    Some(Partitioned::Rows(spec)) => {
                        let sound = runs(spec, true);
                        if q.kind == CursorKind::Host {
                            host_feeds[source] = sound && spec.aux.is_some();
                        }
                    }
                    Some(Partitioned::Links { api, gpu }) => {
                        runs(api, !host_feeds[source]);
                        runs(gpu, true);
                    }
                    // Discovery collected the keys: no job.
                    Some(Partitioned::Keys(_)) | None => {}
                }
            }
        }
        let direct = opts.read_pages == ReadPages::Auto;
        let mut outcomes = survey_all(exports, &jobs, threads.surveys, direct).into_iter();
        let mut places = RowPlaces {
            pagers: exports
                .iter()
                .map(|ex| Pager::shared_among(&ex.conn, direct, exports.len()))
                .collect(),
            #[cfg(not(target_family = "wasm"))]
            helpers: (threads.helpers > 0).then(|| Helpers::new(exports, threads.helpers, direct)),
        };
        let mut fast: Vec<Option<RowSource>> = Vec::with_capacity(queries.len());
        // Per query: the call tap a host cursor gets where the link join takes its calls, and
        // the link cursor that gets them.
        let mut taps: Vec<Option<CallTap>> = queries.iter().map(|_| None).collect();
        let mut fed: Vec<Option<usize>> = vec![None; queries.len()];
        let mut apart: Vec<Option<usize>> = vec![None; queries.len()];
        let mut links_apart: Vec<LinksApart> = Vec::new();
        let mut left_apart: Vec<bool> = vec![false; queries.len()];
        for (qi, q) in queries.iter().enumerate() {
            let ex = &exports[q.source];
            let read = |e| Error::read(&ex.label, q.what, e);
            let mut runs = || match surveyed.pop_front() {
                Some(Some(early)) => early.map_err(read),
                _ => outcomes
                    .next()
                    .expect("a survey per partitioned job, in order")
                    .map_err(read),
            };
            fast.push(match (&q.partitioned, opts.read_order) {
                (Some(Partitioned::Rows(spec)), ReadOrder::Auto) => runs()?.map(|s| {
                    if q.kind == CursorKind::Host {
                        RowSource::Partitioned(Box::new(places.here(ex, q.source, spec, s)))
                    } else {
                        RowSource::Ordered(places.anywhere(ex, q.source, spec, s))
                    }
                }),
                // Discovery collected the keys in its pass over the table (without them, the
                // SQL path reads the family: same rows, same order).
                (Some(Partitioned::Keys(spec)), ReadOrder::Auto) => {
                    let early = plan.surveys[q.source]
                        .lock()
                        .expect("only this thread takes surveys")
                        .take_keys(spec);
                    match early.transpose().map_err(read)? {
                        Some(Some(keys)) => Some(RowSource::Keyed(Box::new(
                            KeyedRows::from_keys(
                                &ex.conn,
                                places.pagers[q.source].clone(),
                                q.what,
                                spec,
                                keys,
                            )
                            .map_err(read)?,
                        ))),
                        _ => None,
                    }
                }
                (Some(Partitioned::Links { api, gpu }), ReadOrder::Auto) => {
                    let (calls, ops) = (runs()?, runs()?);
                    let pager = places.pagers[q.source].clone();
                    // Made only where a join reads them (a helper starts reading at once).
                    let mut operations = |ops| {
                        Operations::new(gpu, ops, &mut |spec, s| {
                            places.anywhere(ex, q.source, spec, s)
                        })
                    };
                    // The host cursor of this input, where it reads the calls in runs whose
                    // correlation ids bound what is still to come.
                    let host = (0..qi).find_map(|h| match &fast[h] {
                        Some(RowSource::Partitioned(rows))
                            if queries[h].kind == CursorKind::Host
                                && queries[h].source == q.source
                                && rows.aux_sound() =>
                        {
                            Some((h, rows.keys()))
                        }
                        _ => None,
                    });
                    match (host, calls, ops) {
                        (Some((h, host_keys)), _, Some(ops)) if threads.links_apart => {
                            taps[h] = Some(CallTap::apart(host_keys, &ops));
                            apart[h] = Some(links_apart.len());
                            links_apart.push(LinksApart {
                                source: q.source,
                                gpu: gpu.clone(),
                                ops,
                            });
                            // No cursor of its own here.
                            left_apart[qi] = true;
                            None
                        }
                        (Some((h, host_keys)), _, Some(ops)) => {
                            let (links, tap) = FedLinks::new(operations(ops), host_keys);
                            taps[h] = Some(tap);
                            fed[h] = Some(qi);
                            Some(RowSource::FedLinks(Box::new(links)))
                        }
                        (None, Some(calls), Some(ops)) => Some(RowSource::Links(Box::new(
                            LinkJoin::new(&ex.conn, api, calls, operations(ops), pager),
                        ))),
                        _ => None,
                    }
                }
                _ => None,
            });
        }
        for surveys in &plan.surveys {
            surveys
                .lock()
                .expect("only this thread takes surveys")
                .clear();
        }
        let sorted_by_sql: Vec<String> = queries
            .iter()
            .zip(&fast)
            .zip(&left_apart)
            .filter(|((q, f), &gone)| {
                q.partitioned.is_some()
                    && f.is_none()
                    && !gone
                    && opts.read_order == ReadOrder::Auto
            })
            .map(|((q, _), _)| format!("{}: {}", exports[q.source].label, q.what))
            .collect();
        let links_from_host_calls: Vec<String> = queries
            .iter()
            .zip(&fast)
            .zip(&left_apart)
            .filter(|((_, f), &gone)| gone || matches!(f, Some(RowSource::FedLinks(_))))
            .map(|((q, _), _)| exports[q.source].label.clone())
            .collect();
        // The queries left to the sinks' thread have no cursor: the others' indices close up.
        let index: Vec<usize> = left_apart
            .iter()
            .scan(0, |next, &gone| {
                let i = *next;
                *next += usize::from(!gone);
                Some(i)
            })
            .collect();
        let kept = |qi: &usize| !left_apart[*qi];
        let fed: Vec<Option<usize>> = (0..queries.len())
            .filter(kept)
            .map(|qi| fed[qi].map(|j| index[j]))
            .collect();
        let apart: Vec<Option<usize>> = (0..queries.len())
            .filter(kept)
            .map(|qi| apart[qi])
            .collect();
        let mut cursors: Vec<Cursor> = Vec::with_capacity(queries.len());
        for (((q, f), tap), gone) in queries.iter().zip(fast).zip(taps).zip(left_apart) {
            if gone {
                continue;
            }
            let ex = &exports[q.source];
            let rows = match f {
                Some(f) => f,
                None => {
                    let read = |e| Error::read(&ex.label, q.what, e);
                    RowSource::Sql(
                        OwnedRows::new(ex.conn.prepare(&q.sql).map_err(read)?).map_err(read)?,
                    )
                }
            };
            cursors.push(Cursor {
                kind: q.kind,
                source: q.source,
                what: q.what,
                rows,
                head: None,
                tap,
            });
        }
        Ok(Reader {
            helpers: places.helpers_started(),
            cxs,
            cursors,
            fed,
            apart,
            links_apart,
            calls: Vec::new(),
            heap: BinaryHeap::new(),
            to_advance: None,
            tally: [0; FAMILY_NAMES.len()],
            records: 0,
            sorted_by_sql,
            links_from_host_calls,
        })
    }

    /// Decodes every cursor's first record (which waits for SQLite's sort of its table, where
    /// one is sorted: `preparing` is called after each).
    pub(crate) fn prime(
        &mut self,
        names: &mut Names,
        preparing: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        for (i, c) in self.cursors.iter_mut().enumerate() {
            c.advance(&mut self.cxs, names)?;
            preparing()?;
            if let Some(r) = &c.head {
                self.heap.push(Reverse((r.time(), r.family_rank(), i)));
            }
        }
        for i in 0..self.cursors.len() {
            self.feed(i, names)?;
        }
        Ok(())
    }

    /// Passes the calls cursor `i` read since the last time on to its link cursor, which
    /// rejoins the merge if it had no head (not in the heap) and now has one. Every link of a
    /// call goes out at the call's start, so none is due before the host cursor's head: the
    /// merge ranks host calls before links at one time.
    fn feed(&mut self, i: usize, names: &mut Names) -> Result<()> {
        if let Some(k) = self.apart[i] {
            let tap = self.cursors[i].tap.as_mut();
            let tap = tap.expect("a host cursor whose calls go apart has a tap");
            self.calls.extend(tap.drain().map(|call| (k, call)));
            return Ok(());
        }
        let Some(j) = self.fed[i] else {
            return Ok(());
        };
        let (host, links) = pair_mut(&mut self.cursors, i, j);
        let (Some(tap), RowSource::FedLinks(joined)) = (&mut host.tap, &mut links.rows) else {
            unreachable!("a fed pair is a host cursor with a tap and a fed link cursor");
        };
        let cx = &self.cxs[host.source];
        for call in tap.drain() {
            joined.take(call, cx)?;
        }
        if links.head.is_none() {
            links.advance(&mut self.cxs, names)?;
            if let Some(r) = &links.head {
                self.heap.push(Reverse((r.time(), r.family_rank(), j)));
            }
        }
        Ok(())
    }

    /// The next record in time order; `names` gets the names it refers to.
    pub(crate) fn next(&mut self, names: &mut Names) -> Result<Option<Record>> {
        Ok(self.next_cursor(names)?.map(|i| self.take_head(i, names)))
    }

    /// Moves the next record in time order onto the end of `batch`; false when none is left.
    /// The record is moved once, from its cursor into the batch (a record is 152 bytes, and
    /// each move a call of memmove: [`next`](Self::next), then a push, cost one more).
    pub(crate) fn next_into(&mut self, names: &mut Names, batch: &mut Vec<Record>) -> Result<bool> {
        let Some(i) = self.next_cursor(names)? else {
            return Ok(false);
        };
        batch.push(self.take_head(i, names));
        Ok(true)
    }

    /// The cursor whose head is the next record (the one handed out last having moved on).
    #[inline]
    fn next_cursor(&mut self, names: &mut Names) -> Result<Option<usize>> {
        if let Some(i) = self.to_advance.take() {
            let c = &mut self.cursors[i];
            c.advance(&mut self.cxs, names)?;
            // The cursor's next record replaces it at the top (one sift, not a pop and a push).
            let mut top = self
                .heap
                .peek_mut()
                .expect("the cursor handed out was on top");
            match &c.head {
                Some(r) => {
                    *top = Reverse((r.time(), r.family_rank(), i));
                    drop(top);
                }
                None => drop(PeekMut::pop(top)),
            }
            self.feed(i, names)?;
        }
        Ok(self.heap.peek().map(|&Reverse((_, _, i))| i))
    }

    /// Hands out cursor `i`'s head (counted), the cursor to move on at the next call.
    #[inline]
    fn take_head(&mut self, i: usize, names: &mut Names) -> Record {
        let mut rec = self.cursors[i]
            .head
            .take()
            .expect("heap entries have a head");
        if let Record::Annotation(a) = &mut rec {
            a.resolve(names);
        }
        self.tally[record_family(&rec)] += 1;
        self.records += 1;
        self.to_advance = Some(i);
        rec
    }

    /// The link joins left to the sinks' thread ([`ReadThreads::links_apart`]), taken once.
    #[cfg(not(target_family = "wasm"))]
    pub(crate) fn take_links_apart(&mut self) -> Vec<LinksApart> {
        std::mem::take(&mut self.links_apart)
    }

    /// The calls read for the joins left to the sinks' thread since the last time, in the
    /// order read: a join must have taken them before the records handed out since, as the
    /// links they make may go out before some of them.
    #[cfg(not(target_family = "wasm"))]
    pub(crate) fn take_calls(&mut self) -> CallsRead {
        std::mem::take(&mut self.calls)
    }

    /// What reading found besides the records.
    pub(crate) fn finish(self) -> ReadSummary {
        // The families met (none counted as 0).
        let counts: BTreeMap<&'static str, u64> = FAMILY_NAMES
            .into_iter()
            .zip(self.tally)
            .filter(|&(_, n)| n > 0)
            .collect();
        let mut warnings = Vec::new();
        for cx in &self.cxs {
            for (msg, n) in &cx.warnings {
                warnings.push(format!(
                    "{}: {msg} ({n} time{})",
                    cx.file,
                    if *n == 1 { "" } else { "s" }
                ));
            }
        }
        ReadSummary {
            records: self.records,
            counts,
            warnings,
            sorted_by_sql: self.sorted_by_sql,
            links_from_host_calls: self.links_from_host_calls,
            helpers: self.helpers,
        }
    }
}

/// Where the partitioned readers run: per input, its pager (one for all its readers: its cache
/// holds the B-trees' interior pages), and (native builds, when allowed) its helper thread.
struct RowPlaces<'c> {
    pagers: Vec<Option<Rc<Pager<'c>>>>,
    #[cfg(not(target_family = "wasm"))]
    helpers: Option<Helpers>,
}

impl<'c> RowPlaces<'c> {
    /// The reader of `spec`'s runs in input `source`, on this thread.
    fn here(
        &self,
        ex: &'c Export,
        source: usize,
        spec: &Spec,
        runs: Survey,
    ) -> PartitionedRows<'c> {
        PartitionedRows::new(&ex.conn, spec, runs, self.pagers[source].clone())
            .among(self.pagers.len())
    }

    /// The reader of `spec`'s runs in input `source`, for rows that feed nothing but their own
    /// cursor (not the host calls, which feed the link join): on the input's helper thread
    /// where it has one (the same rows in the same order), else on this thread.
    fn anywhere(
        &mut self,
        ex: &'c Export,
        source: usize,
        spec: &Spec,
        runs: Survey,
    ) -> Box<dyn OrderedRows + 'c> {
        #[cfg(not(target_family = "wasm"))]
        let runs = match &mut self.helpers {
            Some(helpers) => match helpers.rows(source, spec, runs) {
                Ok(shipped) => return Box::new(shipped),
                Err(runs) => runs,
            },
            None => runs,
        };
        Box::new(self.here(ex, source, spec, runs))
    }

    /// Helper threads started.
    fn helpers_started(&self) -> usize {
        #[cfg(not(target_family = "wasm"))]
        if let Some(h) = &self.helpers {
            return h.started();
        }
        0
    }
}

/// Two distinct elements of a slice, both mutable.
fn pair_mut<T>(items: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b, "two distinct elements");
    if a < b {
        let (x, y) = items.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = items.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}
