//! The pass before the stream: which processes, host threads, GPU streams, devices and NVTX domains
//! have activity, and the time span. Paraver needs all objects and the end time in the header, so
//! they are found first by grouping each table's rows per resource in one plain scan (memory: one
//! entry per resource, not per row).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::types::FromSql;
use rusqlite::Params;

use super::ids::{pid_of, process_key};
use super::nvtx::{NVTX_CATEGORY, NVTX_MARK, NVTX_RANGE_TYPES, NVTX_START_END_TYPES};
use super::Export;
use crate::error::{Error, Result};
use crate::options::{Family, Options};

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

fn rows<T, P: Params>(
    ex: &Export,
    what: &str,
    sql: &str,
    params: P,
    f: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut st = ex
        .conn
        .prepare(sql)
        .map_err(|e| Error::read(&ex.label, what, e))?;
    let it = st
        .query_map(params, f)
        .map_err(|e| Error::read(&ex.label, what, e))?;
    it.collect::<rusqlite::Result<Vec<T>>>()
        .map_err(|e| Error::read(&ex.label, what, e))
}

fn scalar<T: FromSql>(
    ex: &Export,
    what: &str,
    sql: &str,
    params: impl Params,
) -> Result<Option<T>> {
    use rusqlite::OptionalExtension;
    ex.conn
        .query_row(sql, params, |r| r.get::<_, Option<T>>(0))
        .optional()
        .map(Option::flatten)
        .map_err(|e| Error::read(&ex.label, what, e))
}

/// One group of [`grouped`]: key columns, MIN(lo), MAX(hi) and COUNT(*).
type Group = ([i64; 4], Option<i64>, Option<i64>, i64);

/// `SELECT keys…, MIN(lo), MAX(hi), COUNT(*) … GROUP BY keys` computed in Rust over a plain scan
/// of `sql` (which gives the `nkeys` key columns, then lo, then hi): exports have no indexes, so
/// SQLite's GROUP BY sorts the whole table, while a map over the resources does not. Groups come
/// out in key order, as GROUP BY gives them; NULL lo/hi are ignored, as MIN/MAX do.
fn grouped(ex: &Export, what: &str, sql: &str, nkeys: usize) -> Result<Vec<Group>> {
    use crate::FastMap;
    let read = |e| Error::read(&ex.label, what, e);
    let mut st = ex.conn.prepare(sql).map_err(read)?;
    let mut q = st.query([]).map_err(read)?;
    let mut groups: FastMap<[i64; 4], usize> = FastMap::default();
    let mut out: Vec<Group> = Vec::new();
    let mut last: Option<([i64; 4], usize)> = None;
    while let Some(r) = q.next().map_err(read)? {
        let mut key = [0i64; 4];
        for (i, k) in key.iter_mut().enumerate().take(nkeys) {
            *k = r.get(i).map_err(read)?;
        }
        let lo: Option<i64> = r.get(nkeys).map_err(read)?;
        let hi: Option<i64> = r.get(nkeys + 1).map_err(read)?;
        let g = match last {
            Some((k, g)) if k == key => g,
            _ => {
                let g = *groups.entry(key).or_insert_with(|| {
                    out.push((key, None, None, 0));
                    out.len() - 1
                });
                last = Some((key, g));
                g
            }
        };
        let e = &mut out[g];
        e.1 = match (e.1, lo) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        e.2 = match (e.2, hi) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        e.3 += 1;
    }
    out.sort_unstable_by_key(|g| g.0);
    Ok(out)
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

    // GPU streams and time span of GPU work.
    for f in [
        Family::Kernel,
        Family::Memcpy,
        Family::Memset,
        Family::Graphs,
    ] {
        if !d.families.contains(&f) {
            continue;
        }
        let t = f.table();
        s.require_columns(
            &ex.label,
            t,
            &["start", "end", "deviceId", "streamId", "globalPid"],
        )?;
        let ctx = s.col_or_null(t, "contextId");
        let sql = format!(
            "SELECT globalPid, deviceId, COALESCE({ctx}, 0), streamId, start, MAX(end, start) FROM {t} WHERE start IS NOT NULL"
        );
        for ([gp, dev, c, st], lo, hi, n) in grouped(ex, t, &sql, 4)? {
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

    // Host threads: CUDA API, MPI and OS runtime calls (they set the thread's state).
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
    for (t, cols) in host_tables {
        s.require_columns(&ex.label, t, cols)?;
        let filter = if t == "OSRT_API" {
            super::host::osrt_filter(s)
        } else {
            String::new()
        };
        let sql = format!("SELECT globalTid, start, MAX(end, start) FROM {t} WHERE start IS NOT NULL AND globalTid IS NOT NULL {filter}");
        for ([gt, ..], lo, hi, n) in grouped(ex, t, &sql, 1)? {
            d.record_estimate += n as u64;
            d.host_threads.entry(gt).or_default().busy_from(lo);
            d.widen(lo, hi);
        }
    }

    // Host threads: NVTX ranges and marks (ranges may end on another thread).
    if d.families.contains(&Family::Nvtx) {
        let t = Family::Nvtx.table();
        s.require_columns(&ex.label, t, &["start", "end", "eventType", "globalTid"])?;
        let types = NVTX_RANGE_TYPES
            .iter()
            .chain([NVTX_MARK].iter())
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let domain = s.col_or_null(t, "domainId");
        let sql = format!(
            "SELECT globalTid, COALESCE({domain}, 0), start, CASE WHEN end IS NULL OR end < start THEN start ELSE end END \
             FROM {t} WHERE eventType IN ({types}) AND start IS NOT NULL AND globalTid IS NOT NULL"
        );
        for ([gt, dom, ..], lo, hi, n) in grouped(ex, t, &sql, 2)? {
            d.host_threads.entry(gt).or_default();
            if dom != 0 {
                d.used_domains.insert((process_key(gt), dom));
            }
            d.record_estimate += n as u64;
            d.widen(lo, hi);
        }
        if s.has_column(t, "endGlobalTid") {
            let se = NVTX_START_END_TYPES
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let sql = format!("SELECT DISTINCT endGlobalTid FROM {t} WHERE eventType IN ({se}) AND endGlobalTid IS NOT NULL AND start IS NOT NULL");
            for gt in rows(ex, t, &sql, [], |r| r.get::<_, i64>(0))? {
                d.host_threads.entry(gt).or_default();
            }
        }
        read_domains(ex, &mut d)?;
        read_categories(ex, &mut d)?;
        find_nvtx_mpi(ex, opts, &mut d)?;
    }
    if d.families.contains(&Family::GpuMetrics) {
        read_gpu_metrics(ex, &mut d)?;
    }
    if d.families.contains(&Family::Sched) {
        let t = super::sched::TABLE;
        s.require_columns(&ex.label, t, &["start", "cpu", "isSchedIn", "globalTid"])?;
        let sql = format!("SELECT globalTid, start, start FROM {t} WHERE start IS NOT NULL AND globalTid IS NOT NULL");
        for ([gt, ..], lo, hi, n) in grouped(ex, t, &sql, 1)? {
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

    read_names(ex, &mut d)?;
    read_host_facts(ex, &mut d)?;
    Ok(d)
}

fn to_u32(ex: &Export, table: &str, col: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::BadData {
        file: ex.label.clone(),
        why: format!("table {table}: {col} {v} is out of range"),
    })
}

/// NVTX domain names: rows of eventType 75 (NvtxDomainCreate), per process.
fn read_domains(ex: &Export, d: &mut Discovery) -> Result<()> {
    let s = &ex.schema;
    let t = "NVTX_EVENTS";
    if !s.has_columns(t, &["domainId", "text"]) {
        return Ok(());
    }
    let text = if s.has_column(t, "textId") {
        format!(
            "COALESCE(e.text, (SELECT value FROM {} WHERE id = e.textId))",
            s.strings_table
        )
    } else {
        "e.text".to_owned()
    };
    let sql = format!("SELECT e.globalTid, e.domainId, {text} FROM {t} e WHERE e.eventType = 75 AND e.domainId IS NOT NULL");
    for (gt, dom, name) in rows(ex, "NVTX domains", &sql, [], |r| {
        Ok((
            r.get::<_, Option<i64>>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, Option<String>>(2)?,
        ))
    })? {
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

/// GPUs that have metric samples, the samples' time span, and the metric names.
fn read_gpu_metrics(ex: &Export, d: &mut Discovery) -> Result<()> {
    use super::gpu_metrics::{gpu_of, NAMES_TABLE, TABLE};
    ex.schema.require_columns(
        &ex.label,
        TABLE,
        &["timestamp", "typeId", "metricId", "value"],
    )?;
    let sql = format!("SELECT typeId, timestamp, timestamp FROM {TABLE} WHERE timestamp >= 0");
    for ([type_id, ..], lo, hi, n) in grouped(ex, TABLE, &sql, 1)? {
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
fn read_categories(ex: &Export, d: &mut Discovery) -> Result<()> {
    if !ex
        .schema
        .has_columns("NVTX_EVENTS", &["category", "text", "globalTid"])
    {
        return Ok(());
    }
    let sql = format!("SELECT globalTid, category, text FROM NVTX_EVENTS WHERE eventType = {NVTX_CATEGORY} AND category IS NOT NULL AND text IS NOT NULL");
    for (gt, cat, name) in rows(ex, "NVTX categories", &sql, [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
        ))
    })? {
        d.categories.insert((process_key(gt), cat), name);
    }
    Ok(())
}

/// Thread, process and GPU names; MPI ranks.
fn read_names(ex: &Export, d: &mut Discovery) -> Result<()> {
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
    if s.has_columns("NVTX_EVENTS", &["eventType", "text", "globalTid"]) {
        let sql = "SELECT globalTid, text FROM NVTX_EVENTS WHERE eventType = 39 AND text IS NOT NULL AND globalTid IS NOT NULL";
        for (gt, name) in rows(ex, "NVTX thread names", sql, [], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })? {
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
