//! Which source each cursor reads its rows from: the engine's sort-free readers where a table
//! allows them (their surveys taken from discovery or made now), the link join fed by the host
//! calls' reader where it can be, else the SQL path's sort.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Mutex;

use super::early::EarlySurveys;
use super::{Cursor, Cursors, RowSource};
use crate::engine::partitioned::parallel::{survey_all, Job, Outcome};
use crate::engine::partitioned::{Spec, Survey};
use crate::engine::readers::{Read, Readers};
use crate::engine::Input;
use crate::error::{Error, Result};
use crate::nsys::context::SourceCx;
use crate::nsys::links::{Call, CallTap, FedLinks, LinkJoin, Operations};
use crate::nsys::query::{CursorKind, Partitioned, Query};
use crate::nsys::{cpu_counters, cuda_events, gpu_memory, nic, openmp, pthread};
use crate::nsys::{gpu, gpu_metrics, host, links, mpi_p2p, nvtx, sched, Export};
use crate::options::Family;

/// How the cursors read (the records are the same either way).
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// The sort-free readers where a table allows them, else SQL's sort for every family.
    pub sort_free: bool,
    /// The page reader where a query allows it, else SQLite for every row.
    pub page_reader: bool,
    pub threads: ReadThreads,
}

/// The threads the reading side may use besides its own.
#[derive(Clone, Copy, Debug)]
pub struct ReadThreads {
    /// Threads for the surveys discovery did not make (engine/partitioned/parallel.rs).
    pub surveys: usize,
    /// Helper threads at most for the partitioned readers that feed nothing else
    /// (engine/helper_threads.rs; native builds).
    pub helpers: usize,
    /// Whether the link joins fed by the host calls' readers are made by the sinks' thread
    /// (pipeline/sinks_links.rs): the cursors then hand out the calls their host cursors
    /// read ([`Cursors::take_calls`]) and the joins to make ([`Cursors::take_sinks_thread_joins`])
    /// instead of the links.
    pub joins_on_sinks_thread: bool,
}

impl ReadThreads {
    /// The reading thread alone.
    pub const NONE: ReadThreads = ReadThreads {
        surveys: 1,
        helpers: 0,
        joins_on_sinks_thread: false,
    };
}

/// A link join the cursors leave to the sinks' thread: input `source`'s GPU operations (`gpu`'s
/// spec, the runs `ops` surveyed), joined with the calls [`Cursors::take_calls`] hands out for
/// it, in their order.
pub struct SinksThreadJoin {
    pub source: usize,
    pub gpu: Spec,
    pub ops: Survey,
}

/// The calls read for the joins left to the sinks' thread, each with its join's index among
/// the [`SinksThreadJoin`]s handed out.
pub type CallsRead = Vec<(usize, Call)>;

/// Every family's query of input `src` (`ex`), in the order the merge ranks their cursors;
/// `matching`: MPI sends are matched with receives (see mpi_p2p.rs).
pub fn family_queries(
    ex: &Export,
    src: usize,
    fams: &BTreeSet<Family>,
    nvtx_mpi_domains: &BTreeSet<i64>,
    matching: bool,
) -> Vec<Query> {
    let mut queries: Vec<Query> = Vec::new();
    queries.extend(gpu::query(&ex.schema, fams, src));
    queries.extend(host::query(&ex.schema, nvtx_mpi_domains, fams, src));
    if fams.contains(&Family::Nvtx) {
        queries.push(nvtx::query(&ex.schema, src));
    }
    queries.extend(links::query(&ex.schema, fams, src));
    if matching {
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
    if fams.contains(&Family::CpuCounters) {
        queries.extend(cpu_counters::query(&ex.schema, src));
    }
    if fams.contains(&Family::Nic) {
        queries.extend(nic::query(&ex.schema, src));
    }
    queries
}

/// What is chosen for one query.
enum Chosen<'c> {
    /// Read from this source (`None`: the SQL path).
    Rows(Option<RowSource<'c>>),
    /// Joined on the sinks' thread: no cursor here.
    OnSinksThread,
}

impl<'c> Cursors<'c> {
    /// Opens the cursors of `queries` (all inputs' in merge order) over `exports`, decoded with
    /// `cxs` (one per input): surveys that discovery made (`early`, per input) are taken, the
    /// others made now; `preparing` is called first (a point where the user may cancel).
    pub fn open(
        exports: &'c [Export],
        cxs: Vec<SourceCx<'c>>,
        queries: Vec<Query>,
        early: &[Mutex<EarlySurveys>],
        tuning: Tuning,
        preparing: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Cursors<'c>> {
        preparing()?;
        let (jobs, surveyed) = match tuning.sort_free {
            true => surveys_to_make(&queries, early, exports.len()),
            false => (Vec::new(), VecDeque::new()),
        };
        let inputs: Vec<Input> = exports.iter().map(Export::input).collect();
        let threads = tuning.threads;
        let made = survey_all(&inputs, &jobs, threads.surveys, tuning.page_reader);
        let mut surveys = Surveys {
            early: surveyed,
            made: made.into_iter(),
        };
        let mut readers = Readers::new(inputs, tuning.page_reader, threads.helpers);
        let mut open = Opening::new(queries.len());
        for qi in 0..queries.len() {
            let chosen = match tuning.sort_free {
                true => open.choose(qi, &queries, &mut surveys, early, &mut readers, threads)?,
                false => Chosen::Rows(None),
            };
            open.chosen.push(chosen);
        }
        let cursors = open.finish(exports, cxs, &queries, &mut readers, tuning.sort_free)?;
        readers.opened();
        Ok(cursors)
    }
}

/// The surveys of the sort-free readers, in query order: discovery's (taken from it) or `None`
/// where one was made now, which `made` then gives in the same order.
struct Surveys {
    early: VecDeque<Option<Outcome>>,
    made: std::vec::IntoIter<Outcome>,
}

impl Surveys {
    /// The next survey in query order.
    fn next(&mut self, label: &str, what: &str) -> Result<Option<Survey>> {
        let read = |e| Error::read(label, what, e);
        match self.early.pop_front() {
            Some(Some(early)) => early.map_err(read),
            _ => (self.made.next())
                .expect("a survey per partitioned job, in order")
                .map_err(read),
        }
    }
}

/// Which surveys the sort-free readers of `queries` need that discovery did not make, as jobs,
/// and per survey needed (in query order) discovery's outcome or `None` (a job's).
fn surveys_to_make<'q>(
    queries: &'q [Query],
    early: &[Mutex<EarlySurveys>],
    inputs: usize,
) -> (Vec<Job<'q>>, VecDeque<Option<Outcome>>) {
    let mut jobs: Vec<Job> = Vec::new();
    let mut surveyed = VecDeque::new();
    // Per input: whether discovery's survey of its host calls can feed the link join (then
    // the join's own survey of the calls is not needed).
    let mut host_feeds = vec![false; inputs];
    for q in queries {
        let source = q.source;
        // Takes discovery's survey of `spec`, or asks for one where `needed`; says whether
        // discovery's has a sound aux column.
        let mut runs = |spec, needed: bool| {
            let taken = early[source]
                .lock()
                .expect("only this thread takes surveys")
                .take(spec);
            let sound = matches!(&taken, Some(Ok(Some(s))) if s.aux_sound());
            match taken {
                Some(taken) => surveyed.push_back(Some(taken)),
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
    (jobs, surveyed)
}

/// The cursors being chosen, query by query.
struct Opening<'c> {
    chosen: Vec<Chosen<'c>>,
    /// Per query: the call tap a host cursor gets where the link join takes its calls, the
    /// link cursor that gets them, or the join on the sinks' thread that gets them.
    taps: Vec<Option<CallTap>>,
    fed: Vec<Option<usize>>,
    to_sinks_thread: Vec<Option<usize>>,
    sinks_thread_joins: Vec<SinksThreadJoin>,
}

impl<'c> Opening<'c> {
    fn new(queries: usize) -> Opening<'c> {
        Opening {
            chosen: Vec::with_capacity(queries),
            taps: (0..queries).map(|_| None).collect(),
            fed: vec![None; queries],
            to_sinks_thread: vec![None; queries],
            sinks_thread_joins: Vec::new(),
        }
    }

    /// The source of query `qi`, read without SQL's sort where its survey or keys allow.
    fn choose(
        &mut self,
        qi: usize,
        queries: &[Query],
        surveys: &mut Surveys,
        early: &[Mutex<EarlySurveys>],
        readers: &mut Readers<'c>,
        threads: ReadThreads,
    ) -> Result<Chosen<'c>> {
        let q = &queries[qi];
        let (label, source, what) = (readers.label(q.source), q.source, q.what);
        let read = |e| Error::read(label, what, e);
        let asked = match &q.partitioned {
            // The host calls' tap reads the runs' aux floors (see `links`).
            Some(Partitioned::Rows(spec)) => (surveys.next(label, what)?)
                .map(|s| Read::Runs(spec, s, q.kind == CursorKind::Host)),
            // Discovery collected the keys in its pass over the table (without them, the SQL
            // path reads the family: same rows, same order).
            Some(Partitioned::Keys(spec)) => {
                let keys = early[source]
                    .lock()
                    .expect("only this thread takes surveys")
                    .take_keys(spec);
                let keys = keys.transpose().map_err(read)?.flatten();
                keys.map(|keys| Read::SortKeys { what, spec, keys })
            }
            Some(Partitioned::Links { api, gpu }) => {
                let calls = surveys.next(label, what)?;
                let ops = surveys.next(label, what)?;
                return self.links(qi, queries, (api, gpu), (calls, ops), readers, threads);
            }
            None => None,
        };
        let opened = asked.map(|asked| readers.open(source, asked).map_err(read));
        Ok(Chosen::Rows(opened.transpose()?.map(RowSource::Table)))
    }

    /// The link join of query `qi` over the `calls` and `ops` surveyed: fed by this input's host
    /// cursor where it reads the calls in runs whose correlation ids bound what is still to come
    /// (on this thread or the sinks'), else reading the calls itself.
    fn links(
        &mut self,
        qi: usize,
        queries: &[Query],
        (api, gpu): (&Spec, &Spec),
        (calls, ops): (Option<Survey>, Option<Survey>),
        readers: &mut Readers<'c>,
        threads: ReadThreads,
    ) -> Result<Chosen<'c>> {
        let q = &queries[qi];
        let source = q.source;
        let label = readers.label(source);
        let read = |e| Error::read(label, q.what, e);
        let host = (0..qi).find_map(|h| match &self.chosen[h] {
            Chosen::Rows(Some(RowSource::Table(rows)))
                if queries[h].kind == CursorKind::Host
                    && queries[h].source == source
                    && rows.aux_floors() =>
            {
                Some((h, rows.keys()))
            }
            _ => None,
        });
        // Made only where a join reads them (a helper starts reading at once).
        let operations = |ops, readers: &mut Readers<'c>| {
            Operations::new(gpu, ops, &mut |spec, survey| {
                readers.open(source, Read::Runs(spec, survey, false))
            })
        };
        Ok(match (host, calls, ops) {
            (Some((h, host_keys)), _, Some(ops)) if threads.joins_on_sinks_thread => {
                self.taps[h] = Some(CallTap::for_sinks_thread(host_keys, &ops));
                self.to_sinks_thread[h] = Some(self.sinks_thread_joins.len());
                self.sinks_thread_joins.push(SinksThreadJoin {
                    source,
                    gpu: gpu.clone(),
                    ops,
                });
                Chosen::OnSinksThread
            }
            (Some((h, host_keys)), _, Some(ops)) => {
                let ops = operations(ops, readers).map_err(read)?;
                let (links, tap) = FedLinks::new(ops, host_keys);
                self.taps[h] = Some(tap);
                self.fed[h] = Some(qi);
                Chosen::Rows(Some(RowSource::FedLinks(Box::new(links))))
            }
            (None, Some(calls), Some(ops)) => {
                let ops = operations(ops, readers).map_err(read)?;
                let calls = readers.open(source, Read::Runs(api, calls, true));
                let join = LinkJoin::new(calls.map_err(read)?, ops);
                Chosen::Rows(Some(RowSource::Links(Box::new(join))))
            }
            _ => Chosen::Rows(None),
        })
    }

    /// The cursors as chosen, the SQL path's opened for the others.
    fn finish(
        self,
        exports: &[Export],
        cxs: Vec<SourceCx<'c>>,
        queries: &[Query],
        readers: &mut Readers<'c>,
        sort_free: bool,
    ) -> Result<Cursors<'c>> {
        let label = |q: &Query| exports[q.source].label.clone();
        let sorted_by_sql = (queries.iter().zip(&self.chosen))
            .filter(|(q, c)| {
                sort_free && q.partitioned.is_some() && matches!(c, Chosen::Rows(None))
            })
            .map(|(q, _)| format!("{}: {}", label(q), q.what))
            .collect();
        let links_from_host_calls = (queries.iter().zip(&self.chosen))
            .filter(|(_, c)| {
                matches!(
                    c,
                    Chosen::OnSinksThread | Chosen::Rows(Some(RowSource::FedLinks(_)))
                )
            })
            .map(|(q, _)| label(q))
            .collect();
        // The queries left to the sinks' thread have no cursor: the others' indices close up.
        let (mut index, mut kept) = (Vec::with_capacity(queries.len()), 0);
        for c in &self.chosen {
            index.push(kept);
            kept += usize::from(!matches!(c, Chosen::OnSinksThread));
        }
        let (mut list, mut fed, mut to_sinks_thread) = (Vec::new(), Vec::new(), Vec::new());
        let links = self.fed.iter().zip(self.to_sinks_thread).zip(self.taps);
        for ((q, chosen), ((fed_to, sinks_thread), tap)) in
            queries.iter().zip(self.chosen).zip(links)
        {
            let rows = match chosen {
                Chosen::OnSinksThread => continue,
                Chosen::Rows(Some(rows)) => rows,
                Chosen::Rows(None) => {
                    let (what, sql) = (q.what, q.sql.as_str());
                    let rows = readers.open(q.source, Read::Sql { what, sql });
                    RowSource::Table(rows.map_err(|e| Error::read(&label(q), what, e))?)
                }
            };
            fed.push(fed_to.map(|j| index[j]));
            to_sinks_thread.push(sinks_thread);
            list.push(Cursor {
                kind: q.kind,
                source: q.source,
                rows,
                head: None,
                tap,
            });
        }
        Ok(Cursors {
            cxs,
            list,
            fed,
            to_sinks_thread,
            sinks_thread_joins: self.sinks_thread_joins,
            calls: Vec::new(),
            sorted_by_sql,
            links_from_host_calls,
            helpers: readers.helpers_started(),
        })
    }
}
