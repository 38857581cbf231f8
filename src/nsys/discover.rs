//! The pass before the stream: which processes, host threads, GPU streams, devices and NVTX domains
//! have activity, and the time span. Paraver needs all objects and the end time in the header, so
//! they are found first by grouping each table's rows per resource in one plain scan (memory: one
//! entry per resource, not per row); the big tables' scans are made side by side (scans.rs).

use std::collections::{BTreeMap, BTreeSet};

use super::ids::process_key;
use super::nvtx::{RangeTexts, NVTX_CATEGORY};
use super::{Export, Schema};
use crate::engine::partitioned::{Spec, Survey, SurveyScans};
use crate::engine::select::{Cond, Select, Val};
use crate::engine::sort_keys::{KeyScan, KeySpec, Keys};
use crate::error::{Error, Result};
use crate::options::{Family, Options, ReadPages};

mod annotations;
mod ranks;
mod scans;
mod tables;

use scans::{rows, scalar, Batch, Group, Grouper, Span};
use tables::TableScans;

pub use super::ids::StreamKey;

#[derive(Clone, Debug, Default)]
pub struct HostThreadInfo {
    pub name: Option<String>,
    /// Start of its first call that sets its state (CUDA API), this file's clock.
    pub first_busy: Option<i64>,
}

impl HostThreadInfo {
    /// Notes a state-setting call starting at `start` (keeps the earliest).
    fn busy_from(&mut self, start: Option<i64>) {
        self.first_busy = match (self.first_busy, start) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

#[derive(Clone, Debug, Default)]
pub struct Discovery {
    pub hostname: String,
    pub session_start_utc_ns: Option<i64>,
    /// globalPid key → (pid, process name).
    pub processes: BTreeMap<i64, (u32, String)>,
    /// globalTid → info, only threads with activity in the selected families.
    pub host_threads: BTreeMap<i64, HostThreadInfo>,
    /// Stream → start of its first operation (this file's clock).
    pub streams: BTreeMap<StreamKey, i64>,
    /// CUDA device ordinal → memory bandwidth, bytes/s (when TARGET_INFO_GPU tells).
    pub device_bandwidth: BTreeMap<u32, u64>,
    /// CUDA device ordinal → GPU name (when TARGET_INFO_GPU tells).
    pub devices: BTreeMap<u32, Option<String>>,
    /// (globalPid key, domainId) → domain name.
    pub domains: BTreeMap<(i64, i64), String>,
    /// (globalPid key, domainId) of every non-default domain that has ranges or marks.
    pub used_domains: BTreeSet<(i64, i64)>,
    /// (globalPid key, category id) → category name (eventType 33 rows).
    pub categories: BTreeMap<(i64, i64), String>,
    /// domainIds of the NVTX `MPI` domain when MPI calls are only NVTX ranges (nsys 2022).
    pub nvtx_mpi_domains: BTreeSet<i64>,
    /// GPUs with metric samples (CUDA device id = typeId & 0xFF).
    pub metric_gpus: BTreeSet<u32>,
    /// Metric id → name (TARGET_INFO_GPU_METRICS).
    pub metric_names: BTreeMap<i64, String>,
    /// NICs with metric samples, by the samples' `globalId`.
    pub nics: BTreeMap<i64, super::nic::NicFound>,
    /// Number of rows of the selected families (for progress).
    pub record_estimate: u64,
    /// globalPid key → MPI rank: the launcher's environment's, else MPI_RANKS', else the NVTX
    /// thread name's (discover/ranks.rs).
    pub ranks: BTreeMap<i64, u32>,
    /// Earliest start and latest end of any selected record (this file's clock), if any record.
    pub min_time: Option<i64>,
    pub max_time: Option<i64>,
    /// Families present (table exists with rows) and selected.
    pub families: BTreeSet<Family>,
    /// NVTX ranges per name, where discovery was asked to count them (the page's inspection
    /// shows the names; counted in its pass over the table, they cost no reading of their own).
    pub range_texts: Option<RangeTexts>,
}

impl Discovery {
    fn widen(&mut self, lo: Option<i64>, hi: Option<i64>) {
        if let Some(lo) = lo {
            self.min_time = Some(self.min_time.map_or(lo, |m| m.min(lo)));
        }
        if let Some(hi) = hi {
            self.max_time = Some(self.max_time.map_or(hi, |m| m.max(hi)));
        }
    }
}

/// How each survey discovery was given ended (see [`discover`]).
pub type Surveyed = Vec<rusqlite::Result<Option<Survey>>>;

/// The sort keys discovery collected where it was asked to (see [`discover`]); `Ok(None)`: the
/// sort-keys reader declines (a start or end that is not an integer), the SQL path reads the family.
pub type FoundSortKeys = Option<rusqlite::Result<Option<Keys>>>;

/// The selected families whose tables hold rows.
pub fn present_families(ex: &Export, opts: &Options) -> Result<BTreeSet<Family>> {
    let s = &ex.schema;
    let mut families = BTreeSet::new();
    for f in Family::ALL {
        if !opts.wants(f) {
            continue;
        }
        if let Some(found) = annotations::present(ex, f) {
            if found? {
                families.insert(f);
            }
            continue;
        }
        for t in f.tables().iter().filter(|t| s.has_table(t)) {
            if scalar::<i64>(ex, t, &format!("SELECT 1 FROM {t} LIMIT 1"), [])?.is_some() {
                families.insert(f);
            }
        }
    }
    Ok(families)
}

/// What discovery makes besides its own findings, in its passes over the tables: the surveys of
/// the sort-free readers (engine/partitioned.rs) and the sort keys of the sort-keys reader
/// (engine/sort_keys.rs) — a table read once serves them all (engine/prepass.rs).
#[derive(Clone, Copy)]
pub struct ReaderScans<'a> {
    pub specs: &'a [Spec],
    pub keys: Option<&'a KeySpec>,
}

/// Discovers what `ex` holds of `families` (see [`present_families`]). The surveys and the keys
/// of `scans` come back with it, the surveys in their order.
pub fn discover(
    ex: &Export,
    opts: &Options,
    families: BTreeSet<Family>,
    scans: ReaderScans,
    range_names: bool,
) -> Result<(Discovery, Surveyed, FoundSortKeys)> {
    let page_reader = opts.read_pages == ReadPages::Auto;
    if let Some(found) = discover_with(ex, opts, families.clone(), scans, range_names, page_reader)?
    {
        return Ok(found);
    }
    // The direct reader met a page that breaks the file format: SQLite reads it instead.
    Ok(
        discover_with(ex, opts, families, scans, range_names, false)?
            .expect("only the direct reader gives up"),
    )
}

/// Discovery, the big tables read directly where `direct` (engine/page_reader.rs); `None` when the
/// direct reader met damage.
fn discover_with(
    ex: &Export,
    opts: &Options,
    families: BTreeSet<Family>,
    scans: ReaderScans,
    range_names: bool,
    page_reader: bool,
) -> Result<Option<(Discovery, Surveyed, FoundSortKeys)>> {
    let s = &ex.schema;
    let mut tables = TableScans::new(s, &families);
    let mut d = Discovery {
        families,
        ..Discovery::default()
    };
    let mut surveys: Vec<SurveyScans> = scans.specs.iter().map(SurveyScans::new).collect();
    let mut key_scan = scans.keys.map(|_| KeyScan::default());
    let mut range_texts = RangeTexts::default();
    let mut range_scans = 0;
    let outcomes = {
        let mut batch = Batch::new(ex, page_reader, opts.second_thread_allowed());
        tables.add(ex, &mut batch);
        for survey in surveys.iter_mut() {
            batch.join(|set| survey.register(set));
        }
        if let (Some(key_scan), Some(spec)) = (key_scan.as_mut(), scans.keys) {
            batch.join(|set| {
                key_scan.register(set, spec);
                1
            });
        }
        if range_names {
            batch.join(|set| {
                range_scans = range_texts.register(s, set);
                range_scans
            });
        }
        batch.run()
    };
    let Some((mut outcomes, mut joined)) = outcomes else {
        return Ok(None);
    };
    let mut joined = joined.drain(..);
    let surveyed: Surveyed = surveys
        .into_iter()
        .map(|survey| {
            let mine = joined.by_ref().take(survey.scan_count()).collect();
            survey.finish(mine)
        })
        .collect();
    let sort_keys: FoundSortKeys = key_scan.map(|keys| {
        let scanned = joined.next().expect("one scan for the keys");
        scanned.map(|()| keys.finish())
    });
    if range_names {
        range_texts.ended(joined.by_ref().take(range_scans));
        d.range_texts = Some(range_texts);
    }
    let mut next = || outcomes.next().expect("an outcome per scan");
    Ok(tables
        .fold(ex, opts, &mut d, &mut next, page_reader)?
        .then_some((d, surveyed, sort_keys)))
}

fn to_u32(ex: &Export, table: &str, col: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::BadData {
        file: ex.label.clone(),
        why: format!("table {table}: {col} {v} is out of range"),
    })
}

/// A row of [`domains_query`]: globalTid, domainId, text, textId.
type DomainRow = (Option<i64>, i64, Option<String>, Option<i64>);

/// The query of NVTX domain names: rows of eventType 75 (NvtxDomainCreate), per process; the
/// name is the text, else the string its textId names.
fn domains_query(s: &Schema) -> Option<Select> {
    let t = "NVTX_EVENTS";
    if !s.has_columns(t, &["domainId", "text"]) {
        return None;
    }
    Some(
        Select::new(t)
            .output("globalTid", s.column_or_null(t, "globalTid"))
            .output("domainId", Val::col("domainId"))
            .output("text", Val::col("text"))
            .output("textId", s.column_or_null(t, "textId"))
            .when(Cond::In("eventType".into(), vec![75]))
            .not_null("domainId"),
    )
}

/// NVTX domain names from the rows of [`domains_query`], and NCCL's domain where it has none.
fn name_domains(ex: &Export, d: &mut Discovery, rows: Vec<DomainRow>) -> Result<()> {
    let s = &ex.schema;
    for (gt, dom, text, text_id) in rows {
        let name = match (text, text_id) {
            (Some(text), _) => Some(text),
            (None, Some(id)) => scalar::<String>(
                ex,
                &s.strings_table,
                &format!("SELECT value FROM {} WHERE id = ?1", s.strings_table),
                [id],
            )?,
            (None, None) => None,
        };
        if let (Some(gt), Some(name)) = (gt, name) {
            d.domains.insert((process_key(gt), dom), name);
        }
    }
    // NCCL registers its domain in a way some exports do not keep (no eventType 75 row), but its
    // payload schemas name their fields "NCCL ...": recognise the domain by them.
    let schemas = "NVTX_PAYLOAD_SCHEMA_ENTRIES";
    if s.has_columns(schemas, &["domainId", "name"]) {
        let unnamed: Vec<(i64, i64)> = d
            .used_domains
            .iter()
            .filter(|k| !d.domains.contains_key(k))
            .copied()
            .collect();
        for key in unnamed {
            let sql = format!(
                "SELECT 1 FROM {schemas} WHERE domainId = ?1 AND name LIKE 'NCCL %' LIMIT 1"
            );
            if scalar::<i64>(ex, schemas, &sql, [key.1])?.is_some() {
                d.domains.insert(key, "NCCL".to_owned());
            }
        }
    }
    Ok(())
}

/// nsys 2022 writes MPI calls only as NVTX push/pop ranges of a domain named `MPI`: find its ids
/// (and the first range per thread, which sets the thread's state like any MPI call). False when
/// the direct reader met damage.
fn find_nvtx_mpi(
    ex: &Export,
    opts: &Options,
    d: &mut Discovery,
    page_reader: bool,
) -> Result<bool> {
    if !opts.wants(Family::Mpi) || Family::Mpi.tables().iter().any(|t| ex.schema.has_table(t)) {
        return Ok(true);
    }
    let ids: BTreeSet<i64> = d
        .domains
        .iter()
        .filter(|(k, name)| name.as_str() == "MPI" && d.used_domains.contains(k))
        .map(|(k, _)| k.1)
        .collect();
    if ids.is_empty() {
        return Ok(true);
    }
    let query = || {
        Select::new("NVTX_EVENTS")
            .output("globalTid", Val::col("globalTid"))
            .output("start", Val::col("start"))
            .when(Cond::In("eventType".into(), vec![59, 70]))
            .when(Cond::In("domainId".into(), ids.iter().copied().collect()))
            .not_null("start")
            .not_null("globalTid")
    };
    let mut groups = Grouper::new(1);
    let mut batch = Batch::new(ex, page_reader, false);
    batch.grouped(
        "NVTX MPI ranges",
        Ok(()),
        query,
        Span::StartOnly,
        &mut groups,
    );
    let Some((mut ended, _)) = batch.run() else {
        return Ok(false);
    };
    ended.next().expect("one scan, one outcome")?;
    for ([gt, ..], lo, _, n) in groups.finish() {
        d.host_threads.entry(gt).or_default().busy_from(lo);
        d.record_estimate += n as u64;
    }
    d.nvtx_mpi_domains = ids;
    d.families.insert(Family::Mpi);
    Ok(true)
}

/// GPUs that have metric samples and the samples' time span (from the grouped scan of the
/// samples per metric type), and the metric names.
fn read_gpu_metrics(ex: &Export, d: &mut Discovery, by_type: Vec<Group>) -> Result<()> {
    use super::gpu_metrics::{gpu_of, NAMES_TABLE};
    for ([type_id, ..], lo, hi, n) in by_type {
        let gpu = gpu_of(type_id);
        d.metric_gpus.insert(gpu);
        d.devices.entry(gpu).or_insert(None);
        d.record_estimate += n as u64;
        d.widen(lo, hi);
    }
    if ex
        .schema
        .has_columns(NAMES_TABLE, &["metricId", "metricName"])
    {
        let sql =
            format!("SELECT metricId, metricName FROM {NAMES_TABLE} ORDER BY typeId, metricId");
        for (id, name) in rows(ex, NAMES_TABLE, &sql, [], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })? {
            d.metric_names.entry(id).or_insert(name);
        }
    }
    Ok(())
}

/// User category names: rows of eventType 33 (NvtxCategory), per process.
fn categories_query(s: &Schema) -> Option<Select> {
    s.has_columns("NVTX_EVENTS", &["category", "text", "globalTid"])
        .then(|| {
            Select::new("NVTX_EVENTS")
                .output("globalTid", Val::col("globalTid"))
                .output("category", Val::col("category"))
                .output("text", Val::col("text"))
                .when(Cond::In("eventType".into(), vec![NVTX_CATEGORY]))
                .not_null("category")
                .not_null("text")
        })
}

/// The query of nvtxNameOsThread names (eventType 39).
fn nvtx_thread_names_query(s: &Schema) -> Option<Select> {
    s.has_columns("NVTX_EVENTS", &["eventType", "text", "globalTid"])
        .then(|| {
            Select::new("NVTX_EVENTS")
                .output("globalTid", Val::col("globalTid"))
                .output("text", Val::col("text"))
                .when(Cond::In("eventType".into(), vec![39]))
                .not_null("text")
                .not_null("globalTid")
        })
}

/// Thread, process and GPU names; MPI ranks. `nvtx_names`: the rows of
/// [`nvtx_thread_names_query`], when the export has the columns (scanned with discovery's batch).
fn read_names(
    ex: &Export,
    d: &mut Discovery,
    nvtx_names: Option<Result<Vec<(i64, String)>>>,
) -> Result<()> {
    let s = &ex.schema;
    let st = &s.strings_table;
    if s.has_columns("ThreadNames", &["nameId", "globalTid"]) {
        let sql = format!(
            "SELECT n.globalTid, s.value FROM ThreadNames n JOIN {st} s ON s.id = n.nameId ORDER BY n.globalTid, {} DESC",
            s.col_or_null("ThreadNames", "priority")
        );
        for (gt, name) in rows(ex, "ThreadNames", &sql, [], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
        })? {
            if let (Some(info), Some(name)) = (d.host_threads.get_mut(&gt), name) {
                info.name.get_or_insert(name);
            }
        }
    }
    // nvtxNameOsThread names (eventType 39) fill what ThreadNames lacks, and claim MPI ranks
    // (the least trusted claim: MPI_RANKS below and the environment after it override it).
    if let Some(names) = nvtx_names {
        for (gt, name) in names? {
            if let Some(rank) = ranks::rank_of_thread_name(&name) {
                d.ranks.entry(process_key(gt)).or_insert(rank);
            }
            if let Some(info) = d.host_threads.get_mut(&gt) {
                info.name.get_or_insert(name);
            }
        }
    }
    if s.has_columns("MPI_RANKS", &["globalTid", "rank"]) {
        for (gt, rank) in rows(
            ex,
            "MPI_RANKS",
            "SELECT globalTid, rank FROM MPI_RANKS",
            [],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )? {
            if let Ok(rank) = u32::try_from(rank) {
                d.ranks.insert(process_key(gt), rank);
            }
        }
    }
    if s.has_columns("PROCESSES", &["globalPid", "name"]) {
        let keys: Vec<i64> = d.processes.keys().copied().collect();
        for gp in keys {
            let name: Option<String> = scalar(
                ex,
                "PROCESSES",
                "SELECT name FROM PROCESSES WHERE globalPid = ?1 AND name IS NOT NULL LIMIT 1",
                [gp],
            )?;
            if let (Some(name), Some(p)) = (name, d.processes.get_mut(&gp)) {
                p.1 = name;
            }
        }
    }
    if s.has_columns("TARGET_INFO_GPU", &["id", "name"]) {
        let key = if s.has_column("TARGET_INFO_GPU", "cuDevice") {
            "cuDevice"
        } else {
            "id"
        };
        let ids: Vec<u32> = d.devices.keys().copied().collect();
        for id in ids {
            let name: Option<String> = scalar(
                ex,
                "TARGET_INFO_GPU",
                &format!("SELECT name FROM TARGET_INFO_GPU WHERE {key} = ?1 LIMIT 1"),
                [id],
            )?;
            d.devices.insert(id, name);
            if s.has_column("TARGET_INFO_GPU", "memoryBandwidth") {
                let bw: Option<i64> = scalar(
                    ex,
                    "TARGET_INFO_GPU",
                    &format!("SELECT memoryBandwidth FROM TARGET_INFO_GPU WHERE {key} = ?1 AND memoryBandwidth > 0 LIMIT 1"),
                    [id],
                )?;
                if let Some(bw) = bw.and_then(|b| u64::try_from(b).ok()) {
                    d.device_bandwidth.insert(id, bw);
                }
            }
        }
    }
    Ok(())
}

/// Host name and session start (for merging reports of several ranks/hosts).
fn read_host_facts(ex: &Export, d: &mut Discovery) -> Result<()> {
    let s = &ex.schema;
    if s.has_columns("TARGET_INFO_SYSTEM_ENV", &["name", "value"]) {
        d.hostname = scalar(
            ex,
            "TARGET_INFO_SYSTEM_ENV",
            "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1",
            [],
        )?
        .unwrap_or_default();
    }
    if d.hostname.is_empty() {
        if let Some(meta) = &s.metadata_table {
            d.hostname = scalar(
                ex,
                meta,
                &format!("SELECT value FROM {meta} WHERE name = 'EXPORT_HOST'"),
                [],
            )?
            .unwrap_or_default();
        }
    }
    if d.hostname.is_empty() {
        d.hostname = "host".to_owned();
    }
    if s.has_column("TARGET_INFO_SESSION_START_TIME", "utcEpochNs") {
        d.session_start_utc_ns = scalar(
            ex,
            "TARGET_INFO_SESSION_START_TIME",
            "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
            [],
        )?;
    }
    Ok(())
}
