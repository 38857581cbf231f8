//! Discovery's own scans of one export's tables: which tables, what each scan fills, and what
//! they found.

use std::collections::BTreeSet;

use super::annotations;
use super::scans::{Batch, Grouper, Span};
use super::{
    categories_query, domains_query, find_nvtx_mpi, name_domains, nvtx_thread_names_query, ranks,
    read_gpu_metrics, read_host_facts, read_names, to_u32, Discovery, DomainRow,
};
use crate::engine::row::get;
use crate::engine::select::{Cond, Select, Val};
use crate::error::Result;
use crate::nsys::ids::{pid_of, process_key};
use crate::nsys::nvtx::NVTX_START_END_TYPES;
use crate::nsys::{Export, Schema};
use crate::options::{Family, Options};

/// The columns discovery reads of each host calls' family (they set the thread's state).
const HOST_COLUMNS: [(Family, &[&str]); 4] = [
    (
        Family::CudaApi,
        &["start", "end", "globalTid", "nameId", "correlationId"],
    ),
    (Family::Mpi, &["start", "end", "globalTid", "textId"]),
    (Family::Osrt, &["start", "end", "globalTid", "nameId"]),
    (
        Family::OpenAcc,
        &["start", "end", "globalTid", "nameId", "eventKind"],
    ),
];

/// Discovery's own scans of one export: which tables, and what each scan fills. They are added
/// to the batch ([`add`](Self::add)) and their outcomes taken back ([`fold`](Self::fold)) in the
/// same order.
pub(super) struct TableScans {
    gpu_families: Vec<Family>,
    host_tables: Vec<(&'static str, &'static [&'static str])>,
    nvtx: bool,
    nvtx_ends: bool,
    metrics: bool,
    sched: bool,
    domains_query: Option<Select>,
    categories_query: Option<Select>,
    nvtx_names_query: Option<Select>,
    has_domains: bool,
    has_categories: bool,
    has_nvtx_names: bool,
    gpu_groups: Vec<Grouper>,
    host_groups: Vec<Grouper>,
    nvtx_groups: Grouper,
    nvtx_end_threads: BTreeSet<i64>,
    domain_rows: Vec<DomainRow>,
    category_rows: Vec<(i64, i64, String)>,
    metric_groups: Grouper,
    sched_groups: Grouper,
    nvtx_name_rows: Vec<(i64, String)>,
}

impl TableScans {
    pub(super) fn new(s: &Schema, families: &BTreeSet<Family>) -> TableScans {
        let gpu = [
            Family::Kernel,
            Family::Memcpy,
            Family::Memset,
            Family::Graphs,
        ];
        let gpu_families: Vec<Family> = gpu.into_iter().filter(|f| families.contains(f)).collect();
        let host_tables: Vec<(&str, &[&str])> = (HOST_COLUMNS.iter())
            .filter(|(f, _)| families.contains(f))
            .flat_map(|(f, cols)| {
                (f.tables().iter())
                    .filter(|t| s.has_table(t))
                    .map(move |t| (*t, *cols))
            })
            .collect();
        let nvtx = families.contains(&Family::Nvtx);
        let domains_query = nvtx.then(|| domains_query(s)).flatten();
        let categories_query = nvtx.then(|| categories_query(s)).flatten();
        let nvtx_names_query = nvtx_thread_names_query(s);
        TableScans {
            gpu_groups: gpu_families.iter().map(|_| Grouper::new(4)).collect(),
            host_groups: host_tables.iter().map(|_| Grouper::new(1)).collect(),
            gpu_families,
            host_tables,
            nvtx,
            nvtx_ends: nvtx && s.has_column(Family::Nvtx.table(), "endGlobalTid"),
            metrics: families.contains(&Family::GpuMetrics),
            sched: families.contains(&Family::Sched),
            has_domains: domains_query.is_some(),
            has_categories: categories_query.is_some(),
            has_nvtx_names: nvtx_names_query.is_some(),
            domains_query,
            categories_query,
            nvtx_names_query,
            nvtx_groups: Grouper::new(2),
            nvtx_end_threads: BTreeSet::new(),
            domain_rows: Vec::new(),
            category_rows: Vec::new(),
            metric_groups: Grouper::new(1),
            sched_groups: Grouper::new(1),
            nvtx_name_rows: Vec::new(),
        }
    }

    /// Adds the scans to `batch`, each filling its part of `self`.
    pub(super) fn add<'a>(&'a mut self, ex: &'a Export, batch: &mut Batch<'a>) {
        let s = &ex.schema;
        // GPU streams and time span of GPU work.
        for (f, into) in self.gpu_families.iter().zip(self.gpu_groups.iter_mut()) {
            let t = f.table();
            let cols = ["start", "end", "deviceId", "streamId", "globalPid"];
            let check = s.require_columns(&ex.label, t, &cols);
            batch.grouped(t, check, || gpu_span_query(s, t), Span::Closed, into);
        }
        // Host threads: CUDA API, MPI and OS runtime calls (they set the thread's state).
        for (&(t, cols), into) in self.host_tables.iter().zip(self.host_groups.iter_mut()) {
            let check = s.require_columns(&ex.label, t, cols);
            batch.grouped(t, check, || host_span_query(s, t), Span::Closed, into);
        }
        // Host threads: NVTX ranges and marks (ranges may end on another thread).
        if self.nvtx {
            let t = Family::Nvtx.table();
            let cols = ["start", "end", "eventType", "globalTid"];
            let query = || {
                let domain = s.column_or_null(t, "domainId");
                crate::nsys::nvtx::read_rows()
                    .output("globalTid", Val::col("globalTid"))
                    .output("domainId", Val::Coalesce(Box::new(domain), 0))
                    .output("start", Val::col("start"))
                    .output("end", Val::col("end"))
            };
            let check = s.require_columns(&ex.label, t, &cols);
            batch.grouped(t, check, query, Span::Range, &mut self.nvtx_groups);
            if self.nvtx_ends {
                // The threads where start/end ranges end.
                let query = Select::new(t)
                    .output("endGlobalTid", Val::col("endGlobalTid"))
                    .when(Cond::In("eventType".into(), NVTX_START_END_TYPES.to_vec()))
                    .not_null("endGlobalTid")
                    .not_null("start");
                let ends = &mut self.nvtx_end_threads;
                batch.rows(t, query, |r| {
                    ends.insert(get(r, 0)?);
                    Ok(())
                });
            }
        }
        if let Some(query) = self.domains_query.take() {
            let domain_rows = &mut self.domain_rows;
            batch.rows("NVTX domains", query, |r| {
                let text: Option<String> = get(r, 2)?;
                // The string id only matters without a text (as COALESCE reads it).
                let text_id = if text.is_none() { get(r, 3)? } else { None };
                domain_rows.push((get(r, 0)?, get(r, 1)?, text, text_id));
                Ok(())
            });
        }
        if let Some(query) = self.categories_query.take() {
            let category_rows = &mut self.category_rows;
            batch.rows("NVTX categories", query, |r| {
                category_rows.push((get(r, 0)?, get(r, 1)?, get(r, 2)?));
                Ok(())
            });
        }
        if self.metrics {
            use crate::nsys::gpu_metrics::TABLE;
            let cols = ["timestamp", "typeId", "metricId", "value"];
            let query = || {
                Select::new(TABLE)
                    .output("typeId", Val::col("typeId"))
                    .output("timestamp", Val::col("timestamp"))
                    .when(Cond::AtLeast("timestamp".into(), 0))
            };
            let check = s.require_columns(&ex.label, TABLE, &cols);
            batch.grouped(TABLE, check, query, Span::Instant, &mut self.metric_groups);
        }
        if self.sched {
            let t = crate::nsys::sched::TABLE;
            let cols = ["start", "cpu", "isSchedIn", "globalTid"];
            let query = || {
                Select::new(t)
                    .output("globalTid", Val::col("globalTid"))
                    .output("start", Val::col("start"))
                    .not_null("start")
                    .not_null("globalTid")
            };
            let check = s.require_columns(&ex.label, t, &cols);
            batch.grouped(t, check, query, Span::Instant, &mut self.sched_groups);
        }
        if let Some(query) = self.nvtx_names_query.take() {
            let nvtx_name_rows = &mut self.nvtx_name_rows;
            batch.rows("NVTX thread names", query, |r| {
                nvtx_name_rows.push((get(r, 0)?, get(r, 1)?));
                Ok(())
            });
        }
    }

    /// What the scans found, into `d`; `next` gives each scan's outcome in the order added.
    /// False when the direct reader met damage.
    pub(super) fn fold(
        mut self,
        ex: &Export,
        opts: &Options,
        d: &mut Discovery,
        next: &mut dyn FnMut() -> Result<()>,
        page_reader: bool,
    ) -> Result<bool> {
        let linked = self.fold_activity(ex, d, next)?;
        if self.nvtx {
            next()?;
            for ([gt, dom, ..], lo, hi, n) in self.nvtx_groups.finish() {
                d.host_threads.entry(gt).or_default();
                if dom != 0 {
                    d.used_domains.insert((process_key(gt), dom));
                }
                d.record_estimate += n as u64;
                d.widen(lo, hi);
            }
            if self.nvtx_ends {
                next()?;
                for gt in self.nvtx_end_threads {
                    d.host_threads.entry(gt).or_default();
                }
            }
            if self.has_domains {
                next()?;
                name_domains(ex, d, self.domain_rows)?;
            }
            if self.has_categories {
                next()?;
                for (gt, cat, name) in self.category_rows {
                    d.categories.insert((process_key(gt), cat), name);
                }
            }
            if !find_nvtx_mpi(ex, opts, d, page_reader)? {
                return Ok(false);
            }
        }
        if self.metrics {
            next()?;
            read_gpu_metrics(ex, d, self.metric_groups.finish())?;
        }
        if self.sched {
            next()?;
            for ([gt, ..], lo, hi, n) in self.sched_groups.finish() {
                d.host_threads.entry(gt).or_default();
                d.record_estimate += n as u64 / 2;
                d.widen(lo, hi);
            }
        }
        annotations::find_threads(ex, d)?;
        annotations::find_memory_streams(ex, d)?;
        annotations::find_counter_span(ex, d)?;
        annotations::find_nics(ex, d)?;
        for &gt in d.host_threads.keys() {
            d.processes
                .entry(process_key(gt))
                .or_insert((pid_of(gt), String::new()));
        }
        let nvtx_names = self
            .has_nvtx_names
            .then(|| next().map(|()| self.nvtx_name_rows));
        read_names(ex, d, nvtx_names)?;
        ranks::apply_environment(ex, d)?;
        read_host_facts(ex, d)?;
        d.record_estimate += linked;
        Ok(true)
    }

    /// The GPU streams and the host calls' threads into `d`; returns the link records to
    /// expect: a GPU operation launched by a traced CUDA call makes one too, so at most as many
    /// as either (unified-memory migrations, for one, have no call).
    fn fold_activity(
        &mut self,
        ex: &Export,
        d: &mut Discovery,
        next: &mut dyn FnMut() -> Result<()>,
    ) -> Result<u64> {
        let mut gpu_rows = 0u64;
        let gpu_groups = std::mem::take(&mut self.gpu_groups);
        for (f, groups) in self.gpu_families.iter().zip(gpu_groups) {
            next()?;
            let t = f.table();
            for ([gp, dev, c, st], lo, hi, n) in groups.finish() {
                d.record_estimate += n as u64;
                gpu_rows += n as u64;
                let key = (
                    process_key(gp),
                    to_u32(ex, t, "deviceId", dev)?,
                    to_u32(ex, t, "contextId", c)?,
                    to_u32(ex, t, "streamId", st)?,
                );
                if let Some(lo) = lo {
                    let first = d.streams.entry(key).or_insert(lo);
                    *first = (*first).min(lo);
                }
                d.devices.entry(key.1).or_insert(None);
                d.processes
                    .entry(key.0)
                    .or_insert((pid_of(gp), String::new()));
                d.widen(lo, hi);
            }
        }
        let cuda_table = Family::CudaApi.table();
        let mut cuda_calls = 0u64;
        let host_groups = std::mem::take(&mut self.host_groups);
        for (groups, &(table, _)) in host_groups.into_iter().zip(&self.host_tables) {
            next()?;
            for ([gt, ..], lo, hi, n) in groups.finish() {
                d.record_estimate += n as u64;
                if table == cuda_table {
                    cuda_calls += n as u64;
                }
                d.host_threads.entry(gt).or_default().busy_from(lo);
                d.widen(lo, hi);
            }
        }
        Ok(gpu_rows.min(cuda_calls))
    }
}

/// A GPU table's streams and time span, as discovery scans them.
fn gpu_span_query(s: &Schema, t: &str) -> Select {
    let ctx = s.column_or_null(t, "contextId");
    Select::new(t)
        .output("globalPid", Val::col("globalPid"))
        .output("deviceId", Val::col("deviceId"))
        .output("contextId", Val::Coalesce(Box::new(ctx), 0))
        .output("streamId", Val::col("streamId"))
        .output("start", Val::col("start"))
        .output("end", Val::col("end"))
        .not_null("start")
}

/// A host calls' table's threads and time span, as discovery scans them.
fn host_span_query(s: &Schema, t: &str) -> Select {
    let mut q = Select::new(t)
        .output("globalTid", Val::col("globalTid"))
        .output("start", Val::col("start"))
        .output("end", Val::col("end"))
        .not_null("start")
        .not_null("globalTid");
    if t == "OSRT_API" {
        q.conds.extend(crate::nsys::host::osrt_filter(s));
    }
    q
}
