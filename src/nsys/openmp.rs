//! OpenMP (OMPT) regions as nsys records them (`--trace=openmp`): parallel regions
//! (OPENMP_EVENT_KIND_PARALLEL), implicit tasks (OPENMP_EVENT_KIND_TASK with the implicit flag)
//! and barriers (OPENMP_EVENT_KIND_SYNC_REGION of a barrier kind), each on the thread that ran
//! it, as nsys2prv 0.6 converts them. A task or barrier ends at the latest with its parallel
//! region: interrupted captures leave some with an end far past the capture.

use super::context::{int, SourceCx};
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{Annotation, OpenMpRegion, Record};

pub const PARALLEL: &str = "OPENMP_EVENT_KIND_PARALLEL";
pub const TASK: &str = "OPENMP_EVENT_KIND_TASK";
pub const SYNC_REGION: &str = "OPENMP_EVENT_KIND_SYNC_REGION";
/// The implicit-task bit of `kind` (ENUM_OPENMP_TASK_FLAG `ompt_task_implicit`).
pub const IMPLICIT_TASK: i64 = 2;
/// Barrier kinds of `kind` (ENUM_OPENMP_SYNC_REGION `ompt_sync_region_barrier*`).
pub const BARRIERS: [i64; 4] = [1, 2, 3, 4];
const COLUMNS: [&str; 4] = ["start", "end", "globalTid", "parallelId"];
const WHAT: &str = "OpenMP regions";

/// One `SELECT` per table the export has: start, end (clamped to the parallel region), thread,
/// what it is (1 parallel, 2 implicit task, 3 barrier), its value and rowid.
fn parts(schema: &Schema) -> Vec<String> {
    let has = |t: &str, c: &str| schema.has_columns(t, &COLUMNS) && schema.has_column(t, c);
    let region = "(SELECT p.end FROM {PARALLEL} AS p WHERE p.parallelId = x.parallelId \
                  AND p.globalTid >> 24 = x.globalTid >> 24 LIMIT 1)"
        .replace("{PARALLEL}", PARALLEL);
    let clamped = match has(PARALLEL, "eventKind") {
        true => format!("MIN(x.end, COALESCE({region}, x.end))"),
        false => "x.end".to_owned(),
    };
    let mut out = Vec::new();
    if has(PARALLEL, "eventKind") {
        out.push(format!(
            "SELECT x.start, x.end, x.globalTid, 1 AS part, x.eventKind AS value, x.rowid AS rid \
             FROM {PARALLEL} AS x"
        ));
    }
    if has(TASK, "kind") {
        out.push(format!(
            "SELECT x.start, {clamped}, x.globalTid, 2, {IMPLICIT_TASK}, x.rowid FROM {TASK} AS x \
             WHERE x.kind & {IMPLICIT_TASK} != 0"
        ));
    }
    if has(SYNC_REGION, "kind") {
        let kinds = BARRIERS.map(|k| k.to_string()).join(", ");
        out.push(format!(
            "SELECT x.start, {clamped}, x.globalTid, 3, x.kind, x.rowid FROM {SYNC_REGION} AS x \
             WHERE x.kind IN ({kinds})"
        ));
    }
    out
}

/// The regions, rows with a start and a thread.
fn selected(schema: &Schema) -> Option<String> {
    let parts = parts(schema);
    (!parts.is_empty()).then(|| {
        format!(
            "SELECT * FROM ({}) WHERE start IS NOT NULL AND globalTid IS NOT NULL",
            parts.join(" UNION ALL ")
        )
    })
}

/// SQL giving a row where the export holds an OpenMP region (the family is present).
pub fn presence_sql(schema: &Schema) -> Option<String> {
    selected(schema).map(|q| format!("{q} LIMIT 1"))
}

/// SQL giving per thread its first start, last end and count of regions (discovery).
pub fn threads_sql(schema: &Schema) -> Option<String> {
    selected(schema).map(|q| {
        format!("SELECT globalTid, MIN(start), MAX(COALESCE(end, start)), COUNT(*) FROM ({q}) GROUP BY globalTid")
    })
}

pub fn query(schema: &Schema, source: usize) -> Option<Query> {
    Some(Query {
        kind: CursorKind::OpenMp,
        source,
        sql: format!("{} ORDER BY start, part, rid", selected(schema)?),
        what: WHAT,
        partitioned: None,
    })
}

pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(start), Some(gtid)) = (g(0, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    let table = match g(3, cx)? {
        Some(1) => PARALLEL,
        Some(2) => TASK,
        _ => SYNC_REGION,
    };
    let span = cx.interval(table, start, g(1, cx)?);
    let thread = cx.thread(table, gtid)?;
    let value = g(4, cx)?.and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
    let region = match table {
        PARALLEL => OpenMpRegion::Parallel { event_kind: value },
        TASK => OpenMpRegion::ImplicitTask,
        _ => OpenMpRegion::Barrier { sync_kind: value },
    };
    Ok(Some(Record::Annotation(Annotation::openmp(
        thread, span, region,
    ))))
}
