//! The pass before the stream: which processes, host threads, GPU streams, devices and NVTX domains
//! have activity, and the time span. Paraver needs all objects and the end time in the header, so
//! they are found first by grouping each table's rows per resource in one plain scan (memory: one
//! entry per resource, not per row); the big tables' scans are made side by side (scans.rs).

use std::collections::{BTreeMap, BTreeSet};

use super::ids::{pid_of, process_key};
use super::nvtx::{NVTX_CATEGORY, NVTX_MARK, NVTX_RANGE_TYPES, NVTX_START_END_TYPES};
use super::Export;
use crate::error::{Error, Result};
use crate::options::{Family, Options};

mod scans;

use scans::{grouped, rows, scalar, Batch, Filtered, Group, Grouper};

/// A GPU stream key: (globalPid, deviceId, contextId, streamId).
pub type StreamKey = (i64, u32, u32, u32);

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
    /// Number of rows of the selected families (for progress).
    pub record_estimate: u64,
    /// NVTX ranges and marks: the rows the NVTX reader reads.
    pub nvtx_rows: u64,
    /// globalPid key → MPI rank.
    pub ranks: BTreeMap<i64, u32>,
    /// Earliest start and latest end of any selected record (this file's clock), if any record.
    pub min_time: Option<i64>,
    pub max_time: Option<i64>,
    /// Families present (table exists with rows) and selected.
    pub families: BTreeSet<Family>,
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

pub fn discover(ex: &Export, opts: &Options) -> Result<Discovery> {
    let s = &ex.schema;
    let mut d = Discovery::default();
    for f in Family::ALL {
        if !opts.wants(f) {
            continue;
        }
        for t in f.tables().iter().filter(|t| s.has_table(t)) {
            if scalar::<i64>(ex, t, &format!("SELECT 1 FROM {t} LIMIT 1"), [])?.is_some() {
                d.families.insert(f);
            }
        }
    }

    let gpu_families: Vec<Family> = [
        Family::Kernel,
        Family::Memcpy,
        Family::Memset,
        Family::Graphs,
    ]
    .into_iter()
    .filter(|f| d.families.contains(f))
    .collect();
    let host_tables: Vec<(&str, &[&str])> = [
        (
            Family::CudaApi,
            &["start", "end", "globalTid", "nameId", "correlationId"][..],
        ),
        (Family::Mpi, &["start", "end", "globalTid", "textId"][..]),
        (Family::Osrt, &["start", "end", "globalTid", "nameId"][..]),
        (
            Family::OpenAcc,
            &["start", "end", "globalTid", "nameId", "eventKind"][..],
        ),
    ]
    .iter()
    .filter(|(f, _)| d.families.contains(f))
    .flat_map(|(f, cols)| {
        f.tables()
            .iter()
            .filter(|t| s.has_table(t))
            .map(move |t| (*t, *cols))
    })
    .collect();
    let nvtx = d.families.contains(&Family::Nvtx);
    let nvtx_ends = nvtx && s.has_column(Family::Nvtx.table(), "endGlobalTid");
    let domains_query = nvtx.then(|| domains_query(s)).flatten();
    let categories_query = nvtx.then(|| categories_query(s)).flatten();
    let metrics = d.families.contains(&Family::GpuMetrics);
    let sched = d.families.contains(&Family::Sched);
    let nvtx_names_query = nvtx_thread_names_query(s);
    let (has_domains, has_categories, has_nvtx_names) = (
        domains_query.is_some(),
        categories_query.is_some(),
        nvtx_names_query.is_some(),
    );

    // What the scans fill; they are used below, in the order the scans are added.
    let mut gpu_groups: Vec<Grouper> = gpu_families.iter().map(|_| Grouper::new(4)).collect();
    let mut host_groups: Vec<Grouper> = host_tables.iter().map(|_| Grouper::new(1)).collect();
    let mut nvtx_groups = Grouper::new(2);
    let mut nvtx_end_threads: BTreeSet<i64> = BTreeSet::new();
    let mut domain_rows: Vec<(Option<i64>, i64, Option<String>)> = Vec::new();
    let mut category_rows: Vec<(i64, i64, String)> = Vec::new();
    let mut metric_groups = Grouper::new(1);
    let mut sched_groups = Grouper::new(1);
    let mut nvtx_name_rows: Vec<(i64, String)> = Vec::new();
    let mut outcomes = {
        let mut batch = Batch::new(ex);
        // GPU streams and time span of GPU work.
        for (f, into) in gpu_families.iter().zip(gpu_groups.iter_mut()) {
            let t = f.table();
            let cols = ["start", "end", "deviceId", "streamId", "globalPid"];
            let sql = || {
                let ctx = s.col_or_null(t, "contextId");
                format!(
                    "SELECT globalPid, deviceId, COALESCE({ctx}, 0), streamId, start, MAX(end, start) FROM {t} WHERE start IS NOT NULL"
                )
            };
            batch.grouped(t, s.require_columns(&ex.label, t, &cols), sql, into);
        }
        // Host threads: CUDA API, MPI and OS runtime calls (they set the thread's state).
        for (&(t, cols), into) in host_tables.iter().zip(host_groups.iter_mut()) {
            let sql = || {
                let filter = match super::host::osrt_filter(s) {
                    Some(cond) if t == "OSRT_API" => format!("AND {}", cond.sql()),
                    _ => String::new(),
                };
                format!("SELECT globalTid, start, MAX(end, start) FROM {t} WHERE start IS NOT NULL AND globalTid IS NOT NULL {filter}")
            };
            batch.grouped(t, s.require_columns(&ex.label, t, cols), sql, into);
        }
        // Host threads: NVTX ranges and marks (ranges may end on another thread).
        if nvtx {
            let t = Family::Nvtx.table();
            let cols = ["start", "end", "eventType", "globalTid"];
            let sql = || {
                let types = NVTX_RANGE_TYPES
                    .iter()
                    .chain([NVTX_MARK].iter())
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                let domain = s.col_or_null(t, "domainId");
                format!(
                    "SELECT globalTid, COALESCE({domain}, 0), start, CASE WHEN end IS NULL OR end < start THEN start ELSE end END \
                     FROM {t} WHERE eventType IN ({types}) AND start IS NOT NULL AND globalTid IS NOT NULL"
                )
            };
            batch.grouped(
                t,
                s.require_columns(&ex.label, t, &cols),
                sql,
                &mut nvtx_groups,
            );
            if nvtx_ends {
                let se = NVTX_START_END_TYPES
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                // The threads where start/end ranges end.
                let query = Filtered {
                    columns: "endGlobalTid".into(),
                    from: t.into(),
                    condition: format!(
                        "eventType IN ({se}) AND endGlobalTid IS NOT NULL AND start IS NOT NULL"
                    ),
                };
                batch.rows(t, query, |r| {
                    nvtx_end_threads.insert(r.get(1)?);
                    Ok(())
                });
            }
        }
        if let Some(query) = domains_query {
            batch.rows("NVTX domains", query, |r| {
                domain_rows.push((r.get(1)?, r.get(2)?, r.get(3)?));
                Ok(())
            });
        }
        if let Some(query) = categories_query {
            batch.rows("NVTX categories", query, |r| {
                category_rows.push((r.get(1)?, r.get(2)?, r.get(3)?));
                Ok(())
            });
        }
        if metrics {
            use super::gpu_metrics::TABLE;
            let cols = ["timestamp", "typeId", "metricId", "value"];
            let sql =
                || format!("SELECT typeId, timestamp, timestamp FROM {TABLE} WHERE timestamp >= 0");
            batch.grouped(
                TABLE,
                s.require_columns(&ex.label, TABLE, &cols),
                sql,
                &mut metric_groups,
            );
        }
        if sched {
            let t = super::sched::TABLE;
            let cols = ["start", "cpu", "isSchedIn", "globalTid"];
            let sql = || {
                format!("SELECT globalTid, start, start FROM {t} WHERE start IS NOT NULL AND globalTid IS NOT NULL")
            };
            batch.grouped(
                t,
                s.require_columns(&ex.label, t, &cols),
                sql,
                &mut sched_groups,
            );
        }
        if let Some(query) = nvtx_names_query {
            batch.rows("NVTX thread names", query, |r| {
                nvtx_name_rows.push((r.get(1)?, r.get(2)?));
                Ok(())
            });
        }
        batch.run()
    };
    let mut next = || outcomes.next().expect("an outcome per scan");

    for (f, groups) in gpu_families.iter().zip(gpu_groups) {
        next()?;
        let t = f.table();
        for ([gp, dev, c, st], lo, hi, n) in groups.finish() {
            d.record_estimate += n as u64;
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
    for groups in host_groups {
        next()?;
        for ([gt, ..], lo, hi, n) in groups.finish() {
            d.record_estimate += n as u64;
            d.host_threads.entry(gt).or_default().busy_from(lo);
            d.widen(lo, hi);
        }
    }
    if nvtx {
        next()?;
        for ([gt, dom, ..], lo, hi, n) in nvtx_groups.finish() {
            d.host_threads.entry(gt).or_default();
            if dom != 0 {
                d.used_domains.insert((process_key(gt), dom));
            }
            d.record_estimate += n as u64;
            d.nvtx_rows += n as u64;
            d.widen(lo, hi);
        }
        if nvtx_ends {
            next()?;
            for gt in nvtx_end_threads {
                d.host_threads.entry(gt).or_default();
            }
        }
        if has_domains {
            next()?;
            name_domains(ex, &mut d, domain_rows)?;
        }
        if has_categories {
            next()?;
            for (gt, cat, name) in category_rows {
                d.categories.insert((process_key(gt), cat), name);
            }
        }
        find_nvtx_mpi(ex, opts, &mut d)?;
    }
    if metrics {
        next()?;
        read_gpu_metrics(ex, &mut d, metric_groups.finish())?;
    }
    if sched {
        next()?;
        for ([gt, ..], lo, hi, n) in sched_groups.finish() {
            d.host_threads.entry(gt).or_default();
            d.record_estimate += n as u64 / 2;
            d.widen(lo, hi);
        }
    }
    for &gt in d.host_threads.keys() {
        d.processes
            .entry(process_key(gt))
            .or_insert((pid_of(gt), String::new()));
    }

    let nvtx_names = has_nvtx_names.then(|| next().map(|()| nvtx_name_rows));
    read_names(ex, &mut d, nvtx_names)?;
    read_host_facts(ex, &mut d)?;
    Ok(d)
}

fn to_u32(ex: &Export, table: &str, col: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::BadData {
        file: ex.label.clone(),
        why: format!("table {table}: {col} {v} is out of range"),
    })
}

/// The query of NVTX domain names: rows of eventType 75 (NvtxDomainCreate), per process.
fn domains_query(s: &super::schema::Schema) -> Option<Filtered> {
    let t = "NVTX_EVENTS";
    if !s.has_columns(t, &["domainId", "text"]) {
        return None;
    }
    let condition = "e.eventType = 75 AND e.domainId IS NOT NULL".to_owned();
    let text = if s.has_column(t, "textId") {
        // The string lookup only for the rows taken.
        format!(
            "CASE WHEN {condition} THEN COALESCE(e.text, (SELECT value FROM {} WHERE id = e.textId)) END",
            s.strings_table
        )
    } else {
        "e.text".to_owned()
    };
    Some(Filtered {
        columns: format!("e.globalTid, e.domainId, {text}"),
        from: format!("{t} e"),
        condition,
    })
}

/// NVTX domain names from the rows of [`domains_query`], and NCCL's domain where it has none.
fn name_domains(
    ex: &Export,
    d: &mut Discovery,
    rows: Vec<(Option<i64>, i64, Option<String>)>,
) -> Result<()> {
    let s = &ex.schema;
    for (gt, dom, name) in rows {
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
/// (and the first range per thread, which sets the thread's state like any MPI call).
fn find_nvtx_mpi(ex: &Export, opts: &Options, d: &mut Discovery) -> Result<()> {
    if !opts.wants(Family::Mpi) || Family::Mpi.tables().iter().any(|t| ex.schema.has_table(t)) {
        return Ok(());
    }
    let ids: BTreeSet<i64> = d
        .domains
        .iter()
        .filter(|(k, name)| name.as_str() == "MPI" && d.used_domains.contains(k))
        .map(|(k, _)| k.1)
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let list = ids
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let sql = format!(
        "SELECT globalTid, start, NULL FROM NVTX_EVENTS WHERE eventType IN (59, 70) AND domainId IN ({list}) \
         AND start IS NOT NULL AND globalTid IS NOT NULL"
    );
    for ([gt, ..], lo, _, n) in grouped(ex, "NVTX MPI ranges", &sql, 1)? {
        d.host_threads.entry(gt).or_default().busy_from(lo);
        d.record_estimate += n as u64;
    }
    d.nvtx_mpi_domains = ids;
    d.families.insert(Family::Mpi);
    Ok(())
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
fn categories_query(s: &super::schema::Schema) -> Option<Filtered> {
    s.has_columns("NVTX_EVENTS", &["category", "text", "globalTid"])
        .then(|| Filtered {
            columns: "globalTid, category, text".into(),
            from: "NVTX_EVENTS".into(),
            condition: format!(
                "eventType = {NVTX_CATEGORY} AND category IS NOT NULL AND text IS NOT NULL"
            ),
        })
}

/// The query of nvtxNameOsThread names (eventType 39).
fn nvtx_thread_names_query(s: &super::schema::Schema) -> Option<Filtered> {
    s.has_columns("NVTX_EVENTS", &["eventType", "text", "globalTid"])
        .then(|| Filtered {
            columns: "globalTid, text".into(),
            from: "NVTX_EVENTS".into(),
            condition: "eventType = 39 AND text IS NOT NULL AND globalTid IS NOT NULL".into(),
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
    // nvtxNameOsThread names (eventType 39) fill what ThreadNames lacks, and tell MPI ranks.
    if let Some(names) = nvtx_names {
        for (gt, name) in names? {
            if let Some(rank) = name
                .strip_prefix("MPI Rank ")
                .and_then(|r| r.trim().parse::<u32>().ok())
            {
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
