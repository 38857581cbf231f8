//! GPU memory usage (CUDA_GPU_MEMORY_USAGE_EVENTS, `--cuda-memory-usage=true`): each allocation
//! and free of device memory (`memKind` 2, as nsys2prv 0.6 keeps), an instant on a GPU stream of
//! the process: the row's stream where it has one, else the process's first stream on that GPU
//! (discovery makes one where the process has none). The memory in use per process and GPU is
//! summed as the rows come: state per (process, GPU), not per allocation.

use super::context::{int, SourceCx};
use super::ids::process_key;
use super::ids::StreamKey;
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{Annotation, GpuMemoryChange, Record, ThreadId};

pub const TABLE: &str = "CUDA_GPU_MEMORY_USAGE_EVENTS";
/// `memKind` of device memory (ENUM_CUDA_MEM_KIND).
const DEVICE_MEMORY: i64 = 2;
/// `memoryOperationType` of an allocation (ENUM_CUDA_DEV_MEM_EVENT_OPER; 1 is a free).
const ALLOCATION: i64 = 0;
const COLUMNS: [&str; 6] = [
    "start",
    "globalPid",
    "deviceId",
    "bytes",
    "memKind",
    "memoryOperationType",
];
const WHAT: &str = "GPU memory usage";

/// The rows the family converts, with `outputs` (`contextId` and `streamId` may be absent).
fn selected(schema: &Schema, outputs: &str) -> Option<String> {
    schema.has_columns(TABLE, &COLUMNS).then(|| {
        format!(
            "SELECT {outputs} FROM {TABLE} WHERE start IS NOT NULL AND globalPid IS NOT NULL \
             AND deviceId IS NOT NULL AND memKind = {DEVICE_MEMORY}"
        )
    })
}

fn column_or_null(schema: &Schema, column: &'static str) -> &'static str {
    if schema.has_column(TABLE, column) {
        column
    } else {
        "NULL"
    }
}

/// SQL giving a row where the export holds device memory usage (the family is present).
pub fn presence_sql(schema: &Schema) -> Option<String> {
    selected(schema, "1").map(|q| format!("{q} LIMIT 1"))
}

/// SQL giving, per process, GPU, context and stream (NULL: none), the first and last time and
/// the count (discovery: the streams the rows go to).
pub fn streams_sql(schema: &Schema) -> Option<String> {
    let (ctx, stream) = (
        column_or_null(schema, "contextId"),
        column_or_null(schema, "streamId"),
    );
    let outputs = format!(
        "globalPid, deviceId, COALESCE({ctx}, 0), {stream}, MIN(start), MAX(start), COUNT(*)"
    );
    selected(schema, &outputs).map(|q| format!("{q} GROUP BY 1, 2, 3, 4"))
}

pub fn query(schema: &Schema, source: usize) -> Option<Query> {
    let (ctx, stream) = (
        column_or_null(schema, "contextId"),
        column_or_null(schema, "streamId"),
    );
    let outputs =
        format!("start, globalPid, deviceId, {ctx}, {stream}, bytes, memoryOperationType");
    Some(Query {
        kind: CursorKind::GpuMemory,
        source,
        sql: format!("{} ORDER BY start, rowid", selected(schema, &outputs)?),
        what: WHAT,
        partitioned: None,
    })
}

/// The stream thread of `key`, else the process's first stream on that GPU.
fn stream_thread(cx: &SourceCx, key: StreamKey) -> Option<ThreadId> {
    if let Some(&(thread, _)) = cx.streams.get(&key) {
        return Some(thread);
    }
    (cx.streams.iter())
        .filter(|(k, _)| k.0 == key.0 && k.1 == key.1)
        .min_by_key(|(k, _)| (k.2, k.3))
        .map(|(_, &(thread, _))| thread)
}

pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(start), Some(gpid), Some(dev)) = (g(0, cx)?, g(1, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    let as_u32 = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
    let device = as_u32(Some(dev));
    let key = (
        process_key(gpid),
        device,
        as_u32(g(3, cx)?),
        g(4, cx)?.map_or(u32::MAX, |s| as_u32(Some(s))),
    );
    let Some(thread) = stream_thread(cx, key) else {
        return Err(cx.bad(format!(
            "table {TABLE}: GPU {device} of process {gpid:#x} appeared after discovery"
        )));
    };
    let bytes = g(5, cx)?.and_then(|b| u64::try_from(b).ok()).unwrap_or(0);
    let allocated = g(6, cx)? == Some(ALLOCATION);
    let in_use = cx.gpu_memory_in_use.entry((key.0, device)).or_insert(0);
    // A free of memory allocated before the capture began would go below zero: it stops at 0.
    *in_use = if allocated {
        in_use.saturating_add(bytes)
    } else {
        in_use.saturating_sub(bytes)
    };
    let change = GpuMemoryChange {
        allocated,
        bytes,
        in_use: *in_use,
        device,
    };
    Ok(Some(Record::Annotation(Annotation::gpu_memory(
        thread,
        cx.time(start),
        change,
    ))))
}
