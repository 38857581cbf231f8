//! What the chosen exports hold, shown before converting: versions, host, ranks, processes,
//! GPUs, record families and NVTX range names. Built on `pipeline::Planned` (the same discovery
//! the conversion does, which also counts the NVTX ranges per name in its pass over the table).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::metrics::nvtx::base_name;
use crate::nsys::nvtx::RangeTexts;
use crate::nsys::Export;
use crate::options::{Family, Options};
use crate::pipeline::Planned;

use super::errors::{describe, JsError};

#[derive(Serialize)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: String,
    pub rank: Option<u32>,
}

#[derive(Serialize)]
pub struct NvtxName {
    pub name: String,
    pub count: u64,
    /// Some instance has exactly this text (not only PyTorch's `name, op_id = …` variants), so
    /// the trace can be cut to it (`Chop::NvtxRange` matches the text exactly).
    pub exact: bool,
}

#[derive(Serialize)]
pub struct FileInfo {
    pub name: String,
    pub size: u64,
    pub nsys_version: Option<String>,
    pub schema_version: Option<String>,
    /// Known only once discovery succeeded.
    pub hostname: Option<String>,
    /// When the capture started (ns since the Unix epoch), where the export says.
    pub session_start_utc_ns: Option<i64>,
    pub ranks: Vec<u32>,
    pub processes: Vec<ProcessInfo>,
    /// `GPU0 (NVIDIA H100)`.
    pub gpus: Vec<String>,
    /// Families with rows in this file.
    pub families: Vec<Family>,
    /// Push/pop and start/end range names, most frequent first (at most [`MAX_NVTX_NAMES`]).
    pub nvtx_names: Vec<NvtxName>,
}

#[derive(Serialize)]
pub struct TraceSummary {
    pub hosts: usize,
    pub processes: usize,
    pub threads: usize,
    pub gpus: Vec<String>,
    pub duration_ns: u64,
    pub nvtx_domains: Vec<String>,
    pub record_estimate: u64,
}

#[derive(Serialize)]
pub struct InspectReport {
    pub files: Vec<FileInfo>,
    /// The merged trace, when there is something to convert.
    pub trace: Option<TraceSummary>,
    /// Why there is nothing to convert (the files themselves opened fine).
    pub problem: Option<JsError>,
    /// Every family the converter knows, for the options.
    pub all_families: Vec<Family>,
    /// What the user should know before converting: an export given twice, an MPI rank claimed
    /// by two inputs.
    pub warnings: Vec<String>,
}

pub const MAX_NVTX_NAMES: usize = 200;

/// The report, and the plan a conversion with default options makes (none where discovery
/// failed; the report then says why): the inspection is that conversion's discovery, so the
/// page keeps it for the conversion that follows (`super::warm_start`). Long: one field of the
/// report after another.
pub fn inspect(exports: &[Export], sizes: &[u64]) -> Result<(InspectReport, Option<Planned>)> {
    // A file that cannot be read fails the inspection; nothing to convert is in the report.
    let mut planned = match Planned::new(exports, &Options::default(), true) {
        Err(e @ (Error::BadData { .. } | Error::Usage(_))) => Err(e),
        Err(e) => return Err(e),
        Ok(p) => Ok(p),
    };
    // Counted by discovery; where it failed, each file's own scan counts them.
    let mut range_texts: Vec<Option<RangeTexts>> = (0..exports.len())
        .map(|i| planned.as_mut().ok().and_then(|p| p.take_range_texts(i)))
        .collect();
    let plan = planned.as_ref().map(Planned::plan);
    let mut files = Vec::with_capacity(exports.len());
    for (i, ex) in exports.iter().enumerate() {
        let mut f = FileInfo {
            name: ex.label.clone(),
            size: sizes.get(i).copied().unwrap_or(0),
            nsys_version: ex.schema.product_version.clone(),
            schema_version: ex.schema.schema_version.clone(),
            hostname: None,
            session_start_utc_ns: None,
            ranks: Vec::new(),
            processes: Vec::new(),
            gpus: Vec::new(),
            families: Family::ALL
                .iter()
                .copied()
                .filter(|f| f.tables().iter().any(|t| has_rows(ex, t)))
                .collect(),
            nvtx_names: nvtx_names(ex, range_texts[i].take())?,
        };
        if let Ok(plan) = plan {
            let d = &plan.discoveries[i];
            f.hostname = Some(d.hostname.clone());
            f.session_start_utc_ns = d.session_start_utc_ns;
            f.ranks = d
                .ranks
                .values()
                .copied()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let o = &plan.trace.objects;
            f.processes = o
                .processes
                .iter()
                .filter(|p| p.source == i)
                .map(|p| ProcessInfo {
                    pid: p.pid,
                    name: p.name.clone(),
                    rank: p.rank,
                })
                .collect();
            f.gpus = d
                .devices
                .iter()
                .map(|(id, name)| match name {
                    Some(n) => format!("GPU{id} ({n})"),
                    None => format!("GPU{id}"),
                })
                .collect();
        }
        files.push(f);
    }
    let (trace, problem) = match plan {
        Ok(plan) => {
            let t = &plan.trace;
            let multi_host = t.objects.hosts.len() > 1;
            let gpus = t
                .objects
                .devices
                .iter()
                .map(|d| {
                    if multi_host {
                        format!("{} on {}", d.label(), t.objects.hosts[d.host].name)
                    } else {
                        d.label()
                    }
                })
                .collect();
            (
                Some(TraceSummary {
                    hosts: t.objects.hosts.len(),
                    processes: t.objects.processes.len(),
                    threads: t.objects.threads.len(),
                    gpus,
                    duration_ns: t.end_time,
                    nvtx_domains: t
                        .domains
                        .iter()
                        .filter(|d| !d.is_empty())
                        .cloned()
                        .collect(),
                    record_estimate: plan.discoveries.iter().map(|d| d.record_estimate).sum(),
                }),
                None,
            )
        }
        Err(e) => (None, Some(describe(e))),
    };
    let warnings = plan.map(|p| p.warnings.clone()).unwrap_or_default();
    let report = InspectReport {
        files,
        trace,
        problem,
        all_families: Family::ALL.to_vec(),
        warnings,
    };
    Ok((report, planned.ok()))
}

fn has_rows(ex: &Export, table: &str) -> bool {
    ex.schema.has_table(table)
        && ex
            .conn
            .query_row(
                &format!("SELECT EXISTS (SELECT 1 FROM \"{table}\")"),
                [],
                |r| r.get::<_, bool>(0),
            )
            .unwrap_or(false)
}

/// NVTX range names with their counts, most frequent first, grouped as the metrics group them
/// (PyTorch's per-call `, op_id = …` fields removed), so each offered name is one the metrics
/// window accepts. `counted`: the ranges per name as discovery counted them, if it did.
fn nvtx_names(ex: &Export, counted: Option<RangeTexts>) -> Result<Vec<NvtxName>> {
    // Every distinct text: grouping needs them all, not only the most frequent.
    let all = match counted {
        Some(texts) => texts.names(ex, usize::MAX)?,
        None => crate::nsys::nvtx::range_names(ex, usize::MAX)?,
    };
    let mut counts: HashMap<&str, (u64, bool)> = HashMap::new();
    for (text, n) in &all {
        let base = base_name(text);
        let e = counts.entry(base).or_insert((0, false));
        e.0 += n;
        e.1 |= base.len() == text.len();
    }
    let mut v: Vec<NvtxName> = counts
        .into_iter()
        .map(|(name, (count, exact))| NvtxName {
            name: name.to_owned(),
            count,
            exact,
        })
        .collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    v.truncate(MAX_NVTX_NAMES);
    Ok(v)
}
