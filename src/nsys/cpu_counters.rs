//! Sampled CPU performance counters (`--cpu-core-events`, `--sample`): each row of
//! PERF_EVENT_CPU_RAW_EVENT (PERF_EVENT_SOC_OR_CPU_RAW_EVENT in newer exports) counts one event
//! of one CPU component over `[start, end]`. As nsys2prv 0.6 attributes them, the whole count
//! goes to the thread last scheduled in (SCHED_EVENTS) on that component's CPU at the interval's
//! midpoint, and only to threads the trace already has: counters decorate threads, they add none.
//!
//! A component's CPU is the `instance` of the component itself or its nearest ancestor named
//! `Core` or `CPU` (TARGET_INFO_COMPONENT). The query hands out the sched-ins of those CPUs and the
//! samples in one time order (a sched-in first at equal times), so the decoder only keeps, per
//! CPU, which thread came in last.

use super::context::{int, text, SourceCx};
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{Annotation, AnnotationKind, CpuCounterSample, Record};

/// The sample tables, newest name first.
pub const SAMPLE_TABLES: &[&str] = &[
    "PERF_EVENT_SOC_OR_CPU_RAW_EVENT",
    "PERF_EVENT_CPU_RAW_EVENT",
];
pub const COMPONENTS: &str = "TARGET_INFO_COMPONENT";
pub const EVENT_NAMES: &str = "TARGET_INFO_PERF_METRIC";
const SCHED: &str = super::sched::TABLE;
const COLUMNS: [&str; 5] = ["start", "end", "componentId", "eventId", "count"];
const WHAT: &str = "CPU counters";

/// The sample table the export has, with its columns.
fn sample_table(schema: &Schema) -> Option<&'static str> {
    (SAMPLE_TABLES.iter().copied()).find(|t| schema.has_columns(t, &COLUMNS))
}

/// `WITH` clause defining `cpus(id, cpu)`: each component that is, or sits under, a core or CPU
/// (its whole-number, non-negative `instance`: some exports write it as a real).
fn cpus_cte(schema: &Schema) -> Option<String> {
    let has = |cols: &[&str]| schema.has_columns(COMPONENTS, cols);
    let parent = ["parentComponentId", "parentId"]
        .into_iter()
        .find(|p| has(&[p]))?;
    if !has(&["componentId", "name", "instance"]) || !schema.has_columns(SCHED, &["start", "cpu"]) {
        return None;
    }
    let is_cpu = "lower(trim(c.name)) IN ('core', 'cpu')";
    // The depth bound ends a cycle of parents.
    Some(format!(
        "WITH RECURSIVE up(id, at, depth) AS (\
           SELECT componentId, componentId, 0 FROM {COMPONENTS} \
           UNION ALL SELECT up.id, c.{parent}, up.depth + 1 FROM up \
           JOIN {COMPONENTS} AS c ON c.componentId = up.at \
           WHERE NOT {is_cpu} AND up.depth < 64), \
         cpus(id, cpu) AS (SELECT up.id, MIN(CAST(c.instance AS INTEGER)) FROM up \
           JOIN {COMPONENTS} AS c ON c.componentId = up.at WHERE {is_cpu} \
           AND c.instance >= 0 AND c.instance = CAST(c.instance AS INTEGER) GROUP BY up.id) "
    ))
}

/// The samples with a CPU: `mid` (the interval's midpoint), cpu, eventId, count, name, rowid.
fn samples(schema: &Schema) -> Option<String> {
    let (raw, cte) = (sample_table(schema)?, cpus_cte(schema)?);
    let name = if schema.has_columns(EVENT_NAMES, &["id", "name"]) {
        let base = match schema.has_column(EVENT_NAMES, "displayName") {
            true => "COALESCE(m.displayName, m.name)",
            false => "m.name",
        };
        let unit = match schema.has_column(EVENT_NAMES, "unit") {
            true => {
                "CASE WHEN m.unit IS NULL OR m.unit = '' THEN '' ELSE ' [' || m.unit || ']' END"
            }
            false => "''",
        };
        format!("(SELECT {base} || {unit} FROM {EVENT_NAMES} AS m WHERE m.id = r.eventId LIMIT 1)")
    } else {
        "NULL".to_owned()
    };
    Some(format!(
        "{cte}SELECT r.start + (r.end - r.start) / 2 AS mid, c.cpu AS cpu, r.eventId AS event, \
         r.count AS value, {name} AS name, r.rowid AS rid FROM {raw} AS r \
         JOIN cpus AS c ON c.id = r.componentId WHERE r.start IS NOT NULL AND r.end IS NOT NULL \
         AND r.eventId IS NOT NULL AND r.count IS NOT NULL"
    ))
}

/// SQL giving a row where the export holds a sample on a known CPU (the family is present).
pub fn presence_sql(schema: &Schema) -> Option<String> {
    samples(schema).map(|q| format!("SELECT 1 FROM ({q}) LIMIT 1"))
}

/// SQL giving the first and last sample time and the count (discovery: the trace's span).
pub fn span_sql(schema: &Schema) -> Option<String> {
    samples(schema).map(|q| format!("SELECT MIN(mid), MAX(mid), COUNT(*) FROM ({q})"))
}

/// Rows: time, what (0 a sched-in, 1 a sample), cpu, globalTid, eventId, count, name.
pub fn query(schema: &Schema, source: usize) -> Option<Query> {
    let q = samples(schema)?;
    let (with, samples) = q.split_at(q.find("SELECT r.start").expect("samples' SELECT"));
    let sql = format!(
        "{with}SELECT * FROM (\
           SELECT s.start AS t, 0 AS what, s.cpu AS cpu, s.globalTid AS gtid, NULL AS event, \
           NULL AS value, NULL AS name, s.rowid AS rid FROM {SCHED} AS s \
           WHERE s.isSchedIn != 0 AND s.start IS NOT NULL AND s.cpu IN (SELECT cpu FROM cpus) \
           UNION ALL SELECT mid, 1, cpu, NULL, event, value, name, rid FROM ({samples})) \
         ORDER BY t, what, cpu, rid"
    );
    Some(Query {
        kind: CursorKind::CpuCounters,
        source,
        sql,
        what: WHAT,
        partitioned: None,
    })
}

/// Notes a sched-in, or attributes a sample to the thread its CPU runs (none: no record).
pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(time), Some(cpu)) = (g(0, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    if g(1, cx)? == Some(0) {
        cx.cpu_threads.insert(cpu, g(3, cx)?);
        return Ok(None);
    }
    let Some(&Some(gtid)) = cx.cpu_threads.get(&cpu) else {
        return Ok(None);
    };
    let Some(&thread) = cx.threads.get(&gtid) else {
        return Ok(None); // a thread no converted family has: counters add none
    };
    let (Some(event), Some(count)) = (g(4, cx)?, g(5, cx)?) else {
        return Ok(None);
    };
    let Some(event_id) = u32::try_from(event).ok().filter(|e| *e < CPU_COUNTER_IDS) else {
        cx.warn(format!(
            "{WHAT}: samples of an eventId out of range were left out"
        ));
        return Ok(None);
    };
    let name = text(row, 6, cx, WHAT)?.unwrap_or_else(|| format!("CPU counter {event_id}"));
    let sample = CpuCounterSample {
        event_id,
        count: u64::try_from(count).unwrap_or(0),
    };
    let time = cx.time(time);
    Ok(Some(Record::Annotation(Annotation::new(
        thread,
        (time, time),
        name,
        AnnotationKind::CpuCounter(sample),
    ))))
}

/// Event ids that fit under the counters' Paraver types (66600000 + id, below the NIC metrics').
const CPU_COUNTER_IDS: u32 = 100_000;
