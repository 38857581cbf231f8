//! CUDA events (CUPTI_ACTIVITY_KIND_CUDA_EVENT): which event a CUDA call recorded, synchronized
//! or made a stream wait for, with its device, context and stream. nsys writes the row's own
//! `timestamp` as 0 in the exports we have, so a row is placed on the call that made it (the
//! CUDA API row of the same process and correlation id), over that call's time, as nsys2prv
//! 0.6 does; a row with no such call is left out.
//!
//! The join reads the CUDA API table once, with the events looked up by correlation id (SQLite
//! indexes the small events table for it), and sorts only the joined rows.

use super::context::{int, SourceCx};
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::classify::strip_api_version;
use crate::model::{Annotation, AnnotationKind, CudaEventUse, Record};

pub const TABLE: &str = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
const CALLS: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
/// Columns of the event rows the family needs.
pub const COLUMNS: [&str; 6] = [
    "correlationId",
    "globalPid",
    "eventId",
    "deviceId",
    "streamId",
    "contextId",
];
const CALL_COLUMNS: [&str; 5] = ["start", "end", "globalTid", "nameId", "correlationId"];
const WHAT: &str = "CUDA events";

/// The rows the family converts: events joined to their calls (the process of a call is its
/// `globalTid` without the thread bits, the event's `globalPid`).
fn joined(schema: &Schema, outputs: &str) -> Option<String> {
    let usable = schema.has_columns(TABLE, &COLUMNS) && schema.has_columns(CALLS, &CALL_COLUMNS);
    usable.then(|| {
        format!(
            "SELECT {outputs} FROM {CALLS} AS r CROSS JOIN {TABLE} AS e \
             ON e.correlationId = r.correlationId AND e.globalPid = (r.globalTid >> 24) << 24 \
             WHERE r.start IS NOT NULL AND r.globalTid IS NOT NULL"
        )
    })
}

/// SQL giving a row where the export holds an event with its call (the family is present).
pub fn presence_sql(schema: &Schema) -> Option<String> {
    joined(schema, "1").map(|q| format!("{q} LIMIT 1"))
}

/// SQL giving per thread of the calls their first start, last end and count (discovery, where
/// the CUDA API family is not converted and so does not find them).
pub fn threads_sql(schema: &Schema) -> Option<String> {
    let per_thread = "r.globalTid, MIN(r.start), MAX(COALESCE(r.end, r.start)), COUNT(*)";
    joined(schema, per_thread).map(|q| format!("{q} GROUP BY r.globalTid"))
}

pub fn query(schema: &Schema, source: usize) -> Option<Query> {
    let sql = joined(
        schema,
        "r.start, r.end, r.globalTid, r.nameId, e.eventId, e.deviceId, e.streamId, e.contextId",
    )?;
    Some(Query {
        kind: CursorKind::CudaEvent,
        source,
        sql: format!("{sql} ORDER BY r.start, r.rowid, e.rowid"),
        what: WHAT,
        partitioned: None,
    })
}

/// Decodes a row; its call's name is interned as it is handed out ([`Annotation::resolve`]).
pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(start), Some(gtid)) = (g(0, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    let (start, end) = cx.interval(CALLS, start, g(1, cx)?);
    let thread = cx.thread(CALLS, gtid)?;
    let call = match g(3, cx)? {
        Some(id) => cx
            .strings
            .text(id)?
            .unwrap_or_else(|| format!("<unknown string {id}>")),
        None => "<unnamed call>".to_owned(),
    };
    let unsigned = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok()).unwrap_or(0);
    let event = CudaEventUse {
        event_id: unsigned(g(4, cx)?),
        device: u32::try_from(unsigned(g(5, cx)?)).unwrap_or(u32::MAX),
        stream: unsigned(g(6, cx)?),
        context: unsigned(g(7, cx)?),
    };
    Ok(Some(Record::Annotation(Annotation::new(
        thread,
        (start, end),
        strip_api_version(&call).to_owned(),
        AnnotationKind::CudaEvent(event),
    ))))
}
