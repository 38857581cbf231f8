//! CUDA runtime and driver API calls (CUPTI_ACTIVITY_KIND_RUNTIME), read straight from SQL: no
//! `nsys stats` needed. Each call knows the start of the next traced call on its thread (SQL
//! `LEAD`), which gives the host thread's state between calls without buffering.

use rusqlite::Row;

use super::cursor::{int, u64_or_0, CursorKind, Query, SourceCx};
use super::Schema;
use crate::error::Result;
use crate::model::classify::{cuda_call_activity, strip_api_version};
use crate::model::{ApiLayer, CudaCall, HostCall, HostCallKind, Names, Record};
use crate::options::Family;

/// `eventClass` of driver API calls (TRACE_PROCESS_EVENT_CUDA_DRIVER).
const EVENT_CLASS_DRIVER: i64 = 1;

pub fn query(schema: &Schema, source: usize) -> Query {
    let t = Family::CudaApi.table();
    let sql = format!(
        "SELECT start, end, globalTid, nameId, correlationId, {class}, \
         LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, rowid) \
         FROM {t} WHERE start IS NOT NULL AND globalTid IS NOT NULL ORDER BY start, rowid",
        class = schema.col_or_null(t, "eventClass"),
    );
    Query {
        kind: CursorKind::Host,
        source,
        sql,
        what: "CUDA API calls",
    }
}

const WHAT: &str = "CUDA API calls";

pub fn decode(row: &Row, cx: &mut SourceCx, names: &mut Names) -> Result<Option<Record>> {
    let table = Family::CudaApi.table();
    let Some(start) = int(row, 0, cx, WHAT)? else {
        return Ok(None);
    };
    let (start, end) = cx.interval(table, start, int(row, 1, cx, WHAT)?);
    let Some(gtid) = int(row, 2, cx, WHAT)? else {
        return Ok(None);
    };
    let thread = cx.thread(table, gtid)?;
    let name = match int(row, 3, cx, WHAT)? {
        Some(id) => cx
            .strings
            .name_with(id, names, |s| strip_api_version(s).to_owned())?,
        None => names.intern("<unnamed CUDA call>"),
    };
    let activity = *cx
        .activity_of
        .entry(name)
        .or_insert_with(|| cuda_call_activity(names.get(name)));
    let layer = if int(row, 5, cx, WHAT)? == Some(EVENT_CLASS_DRIVER) {
        ApiLayer::Driver
    } else {
        ApiLayer::Runtime
    };
    let next_on_thread = int(row, 6, cx, WHAT)?.map(|n| cx.time(n));
    Ok(Some(Record::Host(HostCall {
        thread,
        start,
        end,
        next_on_thread,
        activity,
        kind: HostCallKind::Cuda(CudaCall {
            name,
            correlation_id: u64_or_0(int(row, 4, cx, WHAT)?),
            layer,
        }),
    })))
}
